//! Hostile clients that try to pin server memory with request bytes the
//! server must hold (tests/it/scripts/hold_requests.py speaks raw HTTP/2),
//! or with answers they never read (tests/it/scripts/unread_answers.py),
//! against the real server binary with its default settings. While one
//! attacker process pushes as much as flow control lets through, the test
//! keeps making ordinary Solve calls on a connection of its own: every one
//! must succeed, and the server's peak RSS must stay under
//! [`PEAK_RSS_BOUND_KB`].
//!
//! Needs python3 with venv and the `h2` package (tests/it/scripts/
//! requirements.txt); skips when that is missing, except under CI=true.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{BinaryServer, CLASSIC, CLASSIC_SOLVED, python_venv, repo, run, skip};
use sudoku_grpc::pb::{self, sudoku_service_client::SudokuServiceClient};

/// The bound on the server's peak resident memory (VmHWM) under attack.
const PEAK_RSS_BOUND_KB: u64 = 256 << 10;
/// How long the attacker pushes.
const ATTACK_SECS: u64 = 8;
const CONNECTIONS: u64 = 8;
/// Streams per connection: the server's default `--max-concurrent-streams`.
const STREAMS: u64 = 256;

/// What one attack run showed.
struct Siege {
    attack_line: String,
    peak_rss_kb: u64,
    legit_ok: u64,
    legit_failed: Vec<String>,
}

/// Runs hold_requests.py in `mode` with messages of `claim` bytes against a
/// fresh default server while ordinary Solve calls go on beside it.
async fn siege(test: &str, mode: &str, claim: u64) -> Option<Siege> {
    let (claim, connections, streams, seconds) = (
        claim.to_string(),
        CONNECTIONS.to_string(),
        STREAMS.to_string(),
        ATTACK_SECS.to_string(),
    );
    let args = [
        ("--mode", mode),
        ("--claim", &claim),
        ("--connections", &connections),
        ("--streams", &streams),
        ("--seconds", &seconds),
    ];
    besiege(test, &[], "hold_requests.py", &args).await
}

/// Runs the attacker `script` (in tests/it/scripts) with `args` against a
/// fresh server (default settings but `flags`) while ordinary Solve calls
/// go on beside it.
async fn besiege(test: &str, flags: &[&str], script: &str, args: &[(&str, &str)]) -> Option<Siege> {
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => {
            skip(test, &e);
            return None;
        }
    };
    let server = BinaryServer::spawn(flags).await;
    let mut client = SudokuServiceClient::new(server.channel().await);
    // One call first, so a failure below is the attack's doing.
    solve_classic(&mut client)
        .await
        .expect("a first Solve call");

    let mut cmd = Command::new(python);
    cmd.arg(repo().join("tests/it/scripts").join(script))
        .args(["--target", &server.addr.to_string()]);
    for (flag, value) in args {
        cmd.args([flag, value]);
    }
    let attack = tokio::task::spawn_blocking(move || run(cmd, Duration::from_secs(90)));

    let mut legit_ok = 0;
    let mut legit_failed = Vec::new();
    while !attack.is_finished() {
        match solve_classic(&mut client).await {
            Ok(()) => legit_ok += 1,
            Err(e) => legit_failed.push(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = attack
        .await
        .expect("the attacker's thread")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "{script} failed:\n{}", out.both());
    let attack_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("attack:"))
        .unwrap_or_else(|| panic!("no summary from {script}:\n{}", out.both()))
        .to_string();
    Some(Siege {
        attack_line,
        peak_rss_kb: server.status_kb("VmHWM"),
        legit_ok,
        legit_failed,
    })
}

/// One ordinary Solve call, with a generous deadline of its own.
async fn solve_classic(
    client: &mut SudokuServiceClient<tonic::transport::Channel>,
) -> Result<(), String> {
    let started = Instant::now();
    let call = client.solve(crate::support::solve_request(CLASSIC));
    match tokio::time::timeout(Duration::from_secs(5), call).await {
        Err(_) => Err(format!("no answer in {:?}", started.elapsed())),
        Ok(Err(status)) => Err(format!("{:?}: {}", status.code(), status.message())),
        Ok(Ok(response)) => {
            let text = response
                .into_inner()
                .solution
                .and_then(|s| s.grid)
                .map(|g| g.text);
            if text.as_deref() == Some(CLASSIC_SOLVED) {
                Ok(())
            } else {
                Err(format!("wrong answer {text:?}"))
            }
        }
    }
}

/// Number `key=N` in the attacker's summary line.
fn figure(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

fn report(test: &str, s: &Siege) {
    println!(
        "{test}: {}; server peak RSS {} MiB (bound {} MiB); legit Solve calls ok {}, failed {}",
        s.attack_line,
        s.peak_rss_kb >> 10,
        PEAK_RSS_BOUND_KB >> 10,
        s.legit_ok,
        s.legit_failed.len(),
    );
}

fn assert_held(test: &str, s: &Siege) {
    assert!(
        s.legit_failed.is_empty(),
        "{test}: ordinary calls failed during the attack: {:?}",
        s.legit_failed
    );
    assert!(s.legit_ok > 0, "{test}: no ordinary call was made");
    assert!(
        s.peak_rss_kb < PEAK_RSS_BOUND_KB,
        "{test}: server peak RSS {} MiB, over the {} MiB bound ({})",
        s.peak_rss_kb >> 10,
        PEAK_RSS_BOUND_KB >> 10,
        s.attack_line
    );
}

/// 8 connections x 256 Solve streams, each claiming a 1 MiB message and
/// never completing it: 2 GiB offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incomplete_solve_messages_do_not_pin_server_memory() {
    let test = "incomplete_solve_messages_do_not_pin_server_memory";
    let Some(s) = siege(test, "solve", 1 << 20).await else {
        return;
    };
    report(test, &s);
    assert_eq!(
        figure(&s.attack_line, "streams"),
        CONNECTIONS * STREAMS,
        "the attacker opened fewer streams than planned"
    );
    assert_held(test, &s);
}

/// 8 connections x 256 SolveBatch streams, each sending 1 MiB messages
/// (1,024 junk items) as fast as flow control allows and never reading a
/// response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_solve_batch_streams_do_not_pin_server_memory() {
    let test = "unread_solve_batch_streams_do_not_pin_server_memory";
    let Some(s) = siege(test, "batch", 1 << 20).await else {
        return;
    };
    report(test, &s);
    assert_held(test, &s);
}

/// The same with messages of 1,024 junk items of 16 characters (34 KB),
/// whose answers (1,024 errors with details, 188 KB) are more than five
/// times their size: the charge of a message must cover its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_answers_larger_than_their_requests_do_not_pin_server_memory() {
    let test = "unread_answers_larger_than_their_requests_do_not_pin_server_memory";
    let Some(s) = siege(test, "batch", 16 << 10).await else {
        return;
    };
    report(test, &s);
    assert_held(test, &s);
}

/// Validate calls of a 64x64 grid of ones (as the puzzle and as the
/// player's grid: 8 KB), whose conflicts, listed in full, made a 12 MB
/// answer each: `calls` of them on each of `connections` connections in
/// `mode` (see unread_answers.py), answered and never read. Every call must
/// be answered (the server is not merely slow), and the answers must not
/// pin server memory.
async fn unread_answers(test: &str, mode: &str, connections: u32, calls: u32) {
    // The attacker and this test's own client share 127.0.0.1: the
    // per-peer limit (tests/it/slots.rs) would close one of 256 unread
    // connections to make room, and this test is about memory.
    let flags = ["--max-connections-per-peer", "1024"];
    let Some(s) = unread_answers_on(test, &flags, mode, connections, calls, 40).await else {
        return;
    };
    report(test, &s);
    assert_eq!(
        figure(&s.attack_line, "answered"),
        figure(&s.attack_line, "calls"),
        "not every call was answered"
    );
    assert_eq!(figure(&s.attack_line, "shed"), 0, "calls were shed");
    assert_held(test, &s);
}

/// Runs unread_answers.py against a server with `flags`, waiting up to
/// `seconds` for the answers.
async fn unread_answers_on(
    test: &str,
    flags: &[&str],
    mode: &str,
    connections: u32,
    calls: u32,
    seconds: u32,
) -> Option<Siege> {
    let (connections, calls, seconds) = (
        connections.to_string(),
        calls.to_string(),
        seconds.to_string(),
    );
    let args = [
        ("--mode", mode),
        ("--connections", connections.as_str()),
        ("--calls", calls.as_str()),
        ("--seconds", seconds.as_str()),
        ("--hold", "1"),
    ];
    besiege(test, flags, "unread_answers.py", &args).await
}

/// A connection whose answers wait unread stalls itself, and only itself:
/// with a share whose answer half holds 32 KB, a 64x64 Validate (charged
/// its bound of about 31 KB until answered, then its 2 KB answer until
/// read) finds no room after the first answers, and waits; meanwhile the
/// ordinary Solve calls of another connection are all answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_answers_stall_only_their_own_connection() {
    let test = "unread_answers_stall_only_their_own_connection";
    let flags = [
        "--max-message-bytes",
        "16384",
        "--connection-buffer-bytes",
        "65536",
    ];
    let Some(s) = unread_answers_on(test, &flags, "h2", 1, 32, 3).await else {
        return;
    };
    report(test, &s);
    let answered = figure(&s.attack_line, "answered");
    assert!(
        (1..32).contains(&answered),
        "the unread answers did not stall their connection ({answered} of 32 answered)"
    );
    assert_held(test, &s);
}

/// 256 unread 64x64 Validate answers on one HTTP/2 connection whose
/// streams have a receive window of 0. Before answers were bounded and
/// charged, they held 3 GiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_validate_answers_do_not_pin_server_memory() {
    let test = "unread_validate_answers_do_not_pin_server_memory";
    unread_answers(test, "h2", 1, 256).await;
}

/// The same as gRPC-Web text (base64) over HTTP/2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_grpc_web_validate_answers_do_not_pin_server_memory() {
    let test = "unread_grpc_web_validate_answers_do_not_pin_server_memory";
    unread_answers(test, "web-h2", 1, 256).await;
}

/// gRPC-Web text over HTTP/1.1: one unread call on each of 256
/// connections with a small receive buffer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_grpc_web_answers_over_http1_do_not_pin_server_memory() {
    let test = "unread_grpc_web_answers_over_http1_do_not_pin_server_memory";
    unread_answers(test, "web-h1", 256, 1).await;
}

/// Solve calls of a blank 64x64 grid, counting to a million, on
/// `SIEGE_CONNECTIONS` connections of `SIEGE_CALLS` calls each, all at
/// once, each with a deadline of `SIEGE_SECS`: searches that run for many
/// turns and go as deep as the grid, so that each paused solver, with its
/// trail, holds about 4.4 MB (in slices of 2,000 nodes, after its first).
/// The budget bounds them: a call whose solver the connection's share
/// cannot hold is shed (RESOURCE_EXHAUSTED), and so is one whose paused
/// solver outgrows its charge. Meanwhile ordinary 9x9 Solve calls on
/// another connection must all succeed, and the server's peak RSS must stay
/// under [`PAUSED_RSS_BOUND_KB`] (unbounded, the 64 solvers would hold
/// over 280 MB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_large_grid_searches_do_not_pin_server_memory() {
    large_grid_siege("paused_large_grid_searches_do_not_pin_server_memory", false).await;
}

/// The same siege through SolveBatch: each call one message of one blank
/// 64x64 item. The message is charged one solver's footprint when it comes;
/// its paused search must grow that charge as its trail grows, or the item
/// is answered RESOURCE_EXHAUSTED (OVERLOADED) and the stream goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_large_grid_batches_do_not_pin_server_memory() {
    large_grid_siege("paused_large_grid_batches_do_not_pin_server_memory", true).await;
}

async fn large_grid_siege(test: &str, batch: bool) {
    const SIEGE_CONNECTIONS: usize = 8;
    const SIEGE_CALLS: usize = 8;
    const SIEGE_SECS: u64 = 10;
    /// The budget's half for held messages and solvers (32 MiB by
    /// default), the solvers running and kept on the two solver threads
    /// (4.4 MB each) and the server itself.
    const PAUSED_RSS_BOUND_KB: u64 = 96 << 10;
    let server = BinaryServer::spawn(&["--slice-nodes", "2000", "--workers", "2"]).await;
    let mut client = SudokuServiceClient::new(server.channel().await);
    solve_classic(&mut client)
        .await
        .expect("a first Solve call");
    let blank = crate::support::blank_64_count();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..SIEGE_CONNECTIONS {
        let attacker = SudokuServiceClient::new(server.channel().await);
        for _ in 0..SIEGE_CALLS {
            let (mut attacker, blank) = (attacker.clone(), blank.clone());
            calls.spawn(async move {
                let call = async {
                    if !batch {
                        let mut request = tonic::Request::new(blank);
                        request.set_timeout(Duration::from_secs(SIEGE_SECS));
                        return attacker.solve(request).await.map(|_| tonic::Code::Ok);
                    }
                    let message = pb::SolveBatchRequest {
                        items: vec![pb::BatchItem {
                            id: 1,
                            puzzle: blank.puzzle,
                        }],
                        options: blank.options,
                    };
                    let mut request = tonic::Request::new(tokio_stream::iter([message]));
                    request.set_timeout(Duration::from_secs(SIEGE_SECS));
                    let mut answers = attacker.solve_batch(request).await?.into_inner();
                    let mut code = tonic::Code::Ok;
                    while let Some(msg) = answers.message().await? {
                        for r in msg.results {
                            if let Some(pb::batch_result::Result::Error(e)) = r.result {
                                code = tonic::Code::from_i32(e.code);
                            }
                        }
                    }
                    Ok(code)
                };
                match tokio::time::timeout(Duration::from_secs(SIEGE_SECS + 5), call).await {
                    Err(_) => None,
                    Ok(Ok(code)) => Some(code),
                    Ok(Err(status)) => Some(status.code()),
                }
            });
        }
    }
    let (mut legit_ok, mut legit_failed) = (0, Vec::new());
    let mut codes = std::collections::BTreeMap::new();
    let mut count = |joined: Result<Option<tonic::Code>, _>| {
        *codes
            .entry(format!("{:?}", joined.expect("an attack call")))
            .or_insert(0) += 1;
    };
    while !calls.is_empty() {
        match solve_classic(&mut client).await {
            Ok(()) => legit_ok += 1,
            Err(e) => legit_failed.push(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        while let Some(joined) = calls.try_join_next() {
            count(joined);
        }
    }
    let peak = server.status_kb("VmHWM");
    println!(
        "{test}: {} calls, answers {codes:?}; \
         server peak RSS {} MiB (bound {} MiB); legit Solve calls ok {legit_ok}, failed {}",
        SIEGE_CONNECTIONS * SIEGE_CALLS,
        peak >> 10,
        PAUSED_RSS_BOUND_KB >> 10,
        legit_failed.len()
    );
    assert!(
        legit_failed.is_empty(),
        "ordinary calls failed during the siege: {legit_failed:?}"
    );
    assert!(legit_ok > 0, "no ordinary call was made");
    assert!(
        codes.contains_key("Some(ResourceExhausted)"),
        "the budget never pushed back: {codes:?}"
    );
    assert!(
        peak < PAUSED_RSS_BOUND_KB,
        "server peak RSS {} MiB, over the {} MiB bound ({codes:?})",
        peak >> 10,
        PAUSED_RSS_BOUND_KB >> 10
    );
}
