//! The server binary as an orchestrator runs it: started with flags, stopped
//! with SIGTERM, exiting 0 after the drain.

use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{BinaryServer, TestServer, data_set, free_port, scrape};
use sudoku_grpc::pb::{self, sudoku_service_client::SudokuServiceClient};
use tonic::Code;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

#[test]
fn sigterm_drains_and_exits_zero() {
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_sudoku-server"))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--log-format",
            "json",
        ])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let healthy = loop {
        let out = Command::new(crate::support::sudoku_cli())
            .args(["health", "--server", &url])
            .output()
            .unwrap();
        if out.status.success() {
            break true;
        }
        if started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(healthy, "the server answered health checks");
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server exits after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let mut logs = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut logs).unwrap();
    assert!(logs.contains("shutdown requested"), "{logs}");
    assert!(
        logs.lines().all(|l| l.trim_start().starts_with('{')),
        "JSON logs: {logs}"
    );
}

/// Search nodes of the long unary calls (the server's `--max-nodes`): the
/// deep contradiction needs 1.55 million, so they run into the budget after
/// about 0.55 s of solving each on the development machine (longer here, two
/// of them beside the streams on 2 workers) and answer WORK_LIMIT_REACHED.
const LONG_NODES: &str = "1450000";
/// The drain deadline: far above what the drain takes (a few seconds), so
/// that a loaded machine never cuts the long calls.
const DRAIN_MS: u64 = 60_000;
/// Items per message on the busy streams.
const BATCH: u64 = 32;

fn text(puzzle: &str) -> Option<pb::Grid> {
    Some(pb::Grid {
        text: puzzle.to_string(),
        cells: vec![],
        ..Default::default()
    })
}

/// A call the draining server refused: UNAVAILABLE, or, from tonic, the
/// CANCELLED "connection closed" it reports for a request it queued on a
/// connection the server closed after its last call: hyper hands such a
/// request back unsent (never written to the wire), but tonic's channel
/// does not retry it and maps it to CANCELLED. On a loaded machine the
/// client may also write a new stream in the instant the server, its last
/// call answered, closes the socket: the write fails with a broken pipe or
/// a reset. That stream's id is above the last one the server's GOAWAY
/// named, so the server never processed it (RFC 9113, 6.8). Either way the
/// server never saw the call and it is safe to retry.
fn refused_unsent(status: &tonic::Status) -> bool {
    let debug = format!("{status:?}");
    status.code() == Code::Unavailable
        || (status.code() == Code::Cancelled && debug.contains("Canceled, \"connection closed\""))
        || ["BrokenPipe", "ConnectionReset"]
            .iter()
            .any(|kind| debug.contains(kind))
}

/// One SolveBatch stream's accounting: the ids its sender handed to the
/// transport and the ids its answers carried, in order.
#[derive(Default)]
struct Ledger {
    sent: Mutex<Vec<u64>>,
    answered: Mutex<Vec<u64>>,
}

/// Opens a stream on `channel` that keeps sending messages of `BATCH`
/// puzzles (ids from `base`) and never half-closes, and a task that reads
/// its answers into the ledger; the task returns how the stream ended.
async fn busy_stream(
    channel: Channel,
    puzzles: Arc<Vec<String>>,
    base: u64,
    ledger: Arc<Ledger>,
) -> tokio::task::JoinHandle<Result<(), tonic::Status>> {
    let outbound = {
        let ledger = ledger.clone();
        futures::stream::unfold(0u64, move |k| {
            let ledger = ledger.clone();
            let puzzles = puzzles.clone();
            async move {
                let ids: Vec<u64> = (base + k * BATCH..base + (k + 1) * BATCH).collect();
                ledger.sent.lock().unwrap().extend(&ids);
                let items = ids
                    .iter()
                    .map(|&id| pb::BatchItem {
                        id,
                        puzzle: text(&puzzles[(id % puzzles.len() as u64) as usize]),
                    })
                    .collect();
                Some((
                    pb::SolveBatchRequest {
                        items,
                        options: None,
                    },
                    k + 1,
                ))
            }
        })
    };
    let mut out = SudokuServiceClient::new(channel)
        .solve_batch(outbound)
        .await
        .unwrap()
        .into_inner();
    tokio::spawn(async move {
        loop {
            match out.message().await {
                Ok(Some(msg)) => ledger
                    .answered
                    .lock()
                    .unwrap()
                    .extend(msg.results.iter().map(|r| r.id)),
                Ok(None) => return Ok(()),
                Err(status) => return Err(status),
            }
        }
    })
}

/// Under load, SIGTERM drains: health flips at once, new calls get
/// UNAVAILABLE, unary calls in flight finish OK, streams end UNAVAILABLE
/// after answering what the server read, and the process exits 0 before
/// the drain deadline. Each item a stream sent is answered exactly once or
/// left unanswered, and the client can tell which: sent minus answered,
/// all retryable because the stream ended UNAVAILABLE. A fresh server
/// answers the retried ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_answers_each_item_once_or_leaves_it_retryable() {
    let metrics_addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut server = BinaryServer::spawn(&[
        "--metrics-listen",
        &metrics_addr.to_string(),
        "--workers",
        "2",
        "--max-nodes",
        LONG_NODES,
        "--drain-timeout-ms",
        &DRAIN_MS.to_string(),
    ])
    .await;
    let puzzles = Arc::new(data_set("puzzles3_magictour_top1465"));
    let (conn_a, conn_b) = (server.channel().await, server.channel().await);

    // Three streams sending continuously, on two connections.
    let mut streams = Vec::new();
    for (i, conn) in [&conn_a, &conn_a, &conn_b].into_iter().enumerate() {
        let ledger = Arc::new(Ledger::default());
        let base = (i as u64 + 1) * 1_000_000_000;
        let task = busy_stream(conn.clone(), puzzles.clone(), base, ledger.clone()).await;
        streams.push((ledger, task));
    }
    // A stream that sends one puzzle, gets its answer and then idles,
    // never half-closing.
    let (idle_tx, idle_rx) = tokio::sync::mpsc::channel(1);
    let mut idle = SudokuServiceClient::new(conn_b.clone())
        .solve_batch(tokio_stream::wrappers::ReceiverStream::new(idle_rx))
        .await
        .unwrap()
        .into_inner();
    idle_tx
        .send(pb::SolveBatchRequest {
            items: vec![pb::BatchItem {
                id: 7,
                puzzle: text(crate::support::CLASSIC),
            }],
            options: None,
        })
        .await
        .unwrap();
    assert_eq!(idle.message().await.unwrap().unwrap().results[0].id, 7);
    let started = Instant::now();
    while streams
        .iter()
        .any(|(l, _)| l.answered.lock().unwrap().len() < 4 * BATCH as usize)
    {
        assert!(started.elapsed() < Duration::from_secs(30), "streams run");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Unary calls in flight: two long ones, and a caller of hard puzzles
    // that goes on until it is refused.
    let conn_c = server.channel().await;
    let mut long_calls = Vec::new();
    for _ in 0..2 {
        let mut client = SudokuServiceClient::new(conn_c.clone());
        long_calls.push(tokio::spawn(async move {
            let r = client
                .solve(pb::SolveRequest {
                    puzzle: text(crate::support::DEEP_CONTRADICTION),
                    options: None,
                })
                .await;
            (r, Instant::now())
        }));
    }
    let hard_caller = {
        let mut client = SudokuServiceClient::new(conn_c.clone());
        let hard = data_set("puzzles6_forum_hardest_1106");
        tokio::spawn(async move {
            let mut ok = 0;
            for p in hard.iter().cycle() {
                let r = client
                    .solve(pb::SolveRequest {
                        puzzle: text(p),
                        options: None,
                    })
                    .await;
                match r {
                    Ok(_) => ok += 1,
                    Err(status) => return (ok, status),
                }
            }
            unreachable!("cycle never ends")
        })
    };
    let mut watch = HealthClient::new(server.channel().await)
        .watch(HealthCheckRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        watch.message().await.unwrap().unwrap().status(),
        ServingStatus::Serving
    );
    // The two long calls and the hard caller's are in flight when the
    // server's own counters say so (Solve calls started less handled),
    // however slow a loaded machine is to send them.
    let in_flight = |text: &str| {
        let solve = |metric: &str| -> f64 {
            text.lines()
                .filter(|l| l.starts_with(metric) && l.contains("grpc_method=\"Solve\""))
                .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
                .sum()
        };
        solve("grpc_server_started_total{") - solve("grpc_server_handled_total{")
    };
    let waiting = Instant::now();
    loop {
        let text = scrape(metrics_addr).await;
        if in_flight(&text) >= 3.0 {
            break;
        }
        assert!(
            waiting.elapsed() < crate::support::SETTLE,
            "the long calls never reached the server:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    server.sigterm();
    let sigterm = Instant::now();
    let flipped = tokio::time::timeout(Duration::from_secs(5), watch.message()).await;
    let flipped_after = sigterm.elapsed();
    assert_eq!(
        flipped.expect("health answers").unwrap().unwrap().status(),
        ServingStatus::NotServing
    );

    // New calls, on a new connection and on one the server already has.
    let fresh = Channel::from_shared(server.url()).unwrap().connect_lazy();
    let refused = SudokuServiceClient::new(fresh)
        .solve(pb::SolveRequest {
            puzzle: text(crate::support::CLASSIC),
            options: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    let (hard_ok, hard_end) = hard_caller.await.unwrap();
    assert!(refused_unsent(&hard_end), "{hard_end:?}");

    for call in long_calls {
        let (r, finished) = call.await.unwrap();
        let solution = r
            .expect("a call in flight finishes OK")
            .into_inner()
            .solution;
        assert_eq!(
            solution.unwrap().outcome(),
            pb::Outcome::WorkLimitReached,
            "the long call ran its whole budget"
        );
        assert!(
            finished > sigterm,
            "the long call was still in flight at SIGTERM"
        );
    }

    let end = idle.message().await.unwrap_err();
    assert_eq!(end.code(), Code::Unavailable, "idle stream: {end:?}");
    drop(idle_tx);

    let mut unanswered = Vec::new();
    for (i, (ledger, task)) in streams.into_iter().enumerate() {
        let end = task.await.unwrap().unwrap_err();
        assert_eq!(end.code(), Code::Unavailable, "stream {i}: {end:?}");
        let sent: HashSet<u64> = ledger.sent.lock().unwrap().iter().copied().collect();
        let answered = ledger.answered.lock().unwrap().clone();
        let mut once = HashSet::new();
        for id in &answered {
            assert!(once.insert(*id), "stream {i}: id {id} answered twice");
            assert!(sent.contains(id), "stream {i}: id {id} never sent");
        }
        let mut left: Vec<u64> = sent.difference(&once).copied().collect();
        left.sort();
        eprintln!(
            "stream {i}: {} sent, {} answered once, {} unanswered (retryable)",
            sent.len(),
            once.len(),
            left.len()
        );
        unanswered.extend(left);
    }

    let status = server
        .wait_exit(Duration::from_millis(DRAIN_MS + 5_000))
        .await
        .expect("the server exits");
    let exited_after = sigterm.elapsed();
    eprintln!(
        "SIGTERM: NOT_SERVING after {flipped_after:?}, exit after {exited_after:?}; \
         hard-puzzle caller got {hard_ok} OK before UNAVAILABLE"
    );
    assert_eq!(status.code(), Some(0), "{}", server.logs());
    assert!(
        exited_after < Duration::from_millis(DRAIN_MS),
        "drained before the deadline"
    );

    // The client retries exactly the unanswered ids elsewhere.
    let fresh = TestServer::start().await;
    let retry: Vec<pb::SolveBatchRequest> = unanswered
        .chunks(256)
        .map(|ids| pb::SolveBatchRequest {
            items: ids
                .iter()
                .map(|&id| pb::BatchItem {
                    id,
                    puzzle: text(&puzzles[(id % puzzles.len() as u64) as usize]),
                })
                .collect(),
            options: None,
        })
        .collect();
    let mut out = fresh
        .client()
        .await
        .solve_batch(tokio_stream::iter(retry))
        .await
        .unwrap()
        .into_inner();
    let mut retried = HashSet::new();
    while let Some(msg) = out.message().await.unwrap() {
        for r in msg.results {
            assert!(
                matches!(&r.result, Some(pb::batch_result::Result::Solution(s)) if s.outcome() == pb::Outcome::Solved),
                "id {}: {:?}",
                r.id,
                r.result
            );
            assert!(retried.insert(r.id), "id {} answered twice", r.id);
        }
    }
    assert_eq!(retried.len(), unanswered.len(), "every retried id answered");
}

/// Callers that open a new connection for every call while the server
/// stops: each call is answered OK or refused in a way that is safe to
/// retry, never failed with a reset. Connections that reached the kernel's
/// backlog but were not accepted yet when the listener closed used to be
/// reset, which tonic reports as UNKNOWN "transport error".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_callers_see_only_retryable_refusals_at_sigterm() {
    const CALLERS: usize = 8;
    let mut server = BinaryServer::spawn(&[]).await;
    let url = server.url();
    let stop_calling = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut callers = Vec::new();
    for _ in 0..CALLERS {
        let url = url.clone();
        let stop_calling = stop_calling.clone();
        callers.push(tokio::spawn(async move {
            let (mut ok, mut refused) = (0u32, Vec::new());
            while !stop_calling.load(std::sync::atomic::Ordering::Relaxed) {
                let channel = Channel::from_shared(url.clone()).unwrap().connect_lazy();
                let r = SudokuServiceClient::new(channel)
                    .solve(pb::SolveRequest {
                        puzzle: text(crate::support::CLASSIC),
                        options: None,
                    })
                    .await;
                match r {
                    Ok(_) => ok += 1,
                    Err(status) => refused.push(status),
                }
            }
            (ok, refused)
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.sigterm();
    let status = server.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{}", server.logs());
    // Go on calling the stopped server for a moment: connections refused.
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop_calling.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut ok, mut refused) = (0, 0);
    for caller in callers {
        let (n, errors) = caller.await.unwrap();
        ok += n;
        refused += errors.len();
        for status in errors {
            assert!(refused_unsent(&status), "not retryable: {status:?}");
        }
    }
    eprintln!("{ok} calls OK, {refused} refused, all retryable");
    assert!(ok > 0 && refused > 0, "{ok} OK, {refused} refused");
}
