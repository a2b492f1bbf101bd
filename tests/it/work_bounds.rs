//! The bounds on a call's work, against the real server binary: Generate's
//! puzzles in the making are charged to the memory budget and their memory
//! is given back when their clients leave; a call that sets no deadline
//! ends at `--max-call-seconds`.

use std::time::{Duration, Instant};

use crate::support::{BinaryServer, CLASSIC, CLASSIC_SOLVED};
use crate::support::{solve_request, text_grid};
use sudoku_grpc::pb::{self, sudoku_service_client::SudokuServiceClient};
use tonic::transport::Channel;

/// The bound on the server's peak resident memory (VmHWM) while Generate
/// streams of 64x64 puzzles are held open.
const PEAK_RSS_BOUND_KB: u64 = 256 << 10;

/// What the server may still hold, over what it held before the streams
/// opened, once their clients have left: half of what the budget lets
/// puzzles in the making hold (32 MiB by default), for the solver threads'
/// kept solvers, the runtime's pages still in use and the allocator's
/// slack.
const RETURNED_SLACK_KB: u64 = 16 << 10;

/// How soon after the clients leave the memory must be back.
const RETURN_WITHIN: Duration = Duration::from_secs(5);

/// A Generate request of one 64x64 puzzle with no clue floor: each takes
/// minutes of CPU, so every puzzle of the siege stays in the making.
fn generate_64(count: u32) -> pb::GenerateRequest {
    pb::GenerateRequest {
        count,
        box_rows: 8,
        box_cols: 8,
        cells: true,
        ..Default::default()
    }
}

/// One ordinary Solve call, with a deadline of its own.
async fn solve_classic(client: &mut SudokuServiceClient<Channel>) -> Result<(), String> {
    let mut request = tonic::Request::new(solve_request(CLASSIC));
    request.set_timeout(Duration::from_secs(10));
    match tokio::time::timeout(Duration::from_secs(15), client.solve(request)).await {
        Err(_) => Err("no answer in 15 s".to_string()),
        Ok(Err(status)) => Err(format!("{:?}: {}", status.code(), status.message())),
        Ok(Ok(response)) => {
            let text = response
                .into_inner()
                .solution
                .and_then(|s| s.grid)
                .map(|g| g.text);
            match text.as_deref() {
                Some(CLASSIC_SOLVED) => Ok(()),
                _ => Err(format!("wrong answer {text:?}")),
            }
        }
    }
}

/// 1,000 Generate streams of 64x64 puzzles, each on a connection of its
/// own (so that each gets turns on the solver threads), opened and never
/// read, held for `HOLD`: each puzzle in the making keeps a solver of its
/// size (half a megabyte) between its turns, so unbounded they held over
/// 500 MiB, as many as the connection cap allowed. Charged to the budget, at most as many as its
/// half for held work (32 MiB by default) are made at once and the rest
/// wait. The server's peak RSS must stay under [`PEAK_RSS_BOUND_KB`] while
/// ordinary Solve calls on another connection all succeed, and once the
/// clients leave its RSS must come back within [`RETURN_WITHIN`] to what it
/// held before, give or take [`RETURNED_SLACK_KB`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_large_grid_generate_streams_are_charged_and_given_back() {
    const CONNECTIONS: usize = 1_000;
    const CALLS: usize = 1;
    const HOLD: Duration = Duration::from_secs(10);
    // Every connection comes from 127.0.0.1: the per-peer limit would
    // close the older ones for the newer (tests/it/slots.rs), and this test
    // is about memory.
    let server = BinaryServer::spawn(&["--max-connections-per-peer", "1024"]).await;
    let mut client = SudokuServiceClient::new(server.channel().await);
    solve_classic(&mut client)
        .await
        .expect("a first Solve call");
    let before_kb = server.status_kb("VmRSS");

    let mut opening = tokio::task::JoinSet::new();
    let mut channels = Vec::with_capacity(CONNECTIONS);
    for _ in 0..CONNECTIONS {
        let channel = server.channel().await;
        for _ in 0..CALLS {
            let mut attacker = SudokuServiceClient::new(channel.clone());
            opening.spawn(async move {
                let call = attacker.generate(generate_64(1));
                match tokio::time::timeout(Duration::from_secs(30), call).await {
                    Ok(Ok(streaming)) => Ok(streaming.into_inner()),
                    Ok(Err(status)) => Err(format!("{:?}: {}", status.code(), status.message())),
                    Err(_) => Err("no response headers in 30 s".to_string()),
                }
            });
        }
        channels.push(channel);
    }
    // On a loaded machine a few of the thousand connections may lose the
    // race against the server's own deadlines (its handshake and header
    // timeouts close a client too slow to speak): they are attackers, and
    // the bounds below hold for the streams that did open, as long as
    // nearly all did.
    let mut unread = Vec::with_capacity(CONNECTIONS * CALLS);
    let mut not_opened = Vec::new();
    while let Some(opened) = opening.join_next().await {
        match opened.expect("an opening task") {
            Ok(stream) => unread.push(stream),
            Err(e) => not_opened.push(e),
        }
    }
    assert!(
        unread.len() * 10 >= CONNECTIONS * CALLS * 9,
        "only {} of {} Generate streams opened: {:?}",
        unread.len(),
        CONNECTIONS * CALLS,
        &not_opened[..not_opened.len().min(5)]
    );
    let opened_at = Instant::now();
    let (mut legit_ok, mut legit_failed) = (0, Vec::new());
    while opened_at.elapsed() < HOLD {
        match solve_classic(&mut client).await {
            Ok(()) => legit_ok += 1,
            Err(e) => legit_failed.push(e),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let peak_kb = server.status_kb("VmHWM");
    let held_kb = server.status_kb("VmRSS");

    // The clients leave: every stream is reset and every connection closed.
    drop(unread);
    drop(channels);
    let left = Instant::now();
    let mut after_kb = server.status_kb("VmRSS");
    while after_kb > before_kb + RETURNED_SLACK_KB && left.elapsed() < RETURN_WITHIN {
        tokio::time::sleep(Duration::from_millis(100)).await;
        after_kb = server.status_kb("VmRSS");
    }
    let returned_in = left.elapsed();
    println!(
        "{} unread 64x64 Generate streams ({} did not open): server RSS before {} MiB, peak {} MiB (bound {} MiB), \
         held {} MiB after {HOLD:?}, {} MiB {returned_in:.1?} after the clients left; \
         legit Solve calls ok {legit_ok}, failed {}",
        CONNECTIONS * CALLS,
        not_opened.len(),
        before_kb >> 10,
        peak_kb >> 10,
        PEAK_RSS_BOUND_KB >> 10,
        held_kb >> 10,
        after_kb >> 10,
        legit_failed.len(),
    );
    assert!(
        legit_failed.is_empty(),
        "ordinary calls failed beside the streams: {legit_failed:?}"
    );
    assert!(legit_ok > 0, "no ordinary call was made");
    assert!(
        peak_kb < PEAK_RSS_BOUND_KB,
        "server peak RSS {} MiB, over the {} MiB bound",
        peak_kb >> 10,
        PEAK_RSS_BOUND_KB >> 10
    );
    assert!(
        after_kb <= before_kb + RETURNED_SLACK_KB,
        "server RSS {} MiB {RETURN_WITHIN:?} after the clients left, {} MiB before they came",
        after_kb >> 10,
        before_kb >> 10
    );
    // The server still answers.
    solve_classic(&mut client)
        .await
        .expect("a Solve call after the siege");
}

/// A server whose calls without a deadline get `--max-call-seconds 2`.
async fn bounded_server() -> BinaryServer {
    BinaryServer::spawn(&["--max-call-seconds", "2", "--max-nodes", "1000000000"]).await
}

/// How a Generate stream ended, with the puzzles it sent first.
async fn generate_end(
    client: &mut SudokuServiceClient<Channel>,
    request: tonic::Request<pb::GenerateRequest>,
) -> (usize, tonic::Code) {
    let read = async {
        let mut stream = match client.generate(request).await {
            Ok(s) => s.into_inner(),
            Err(status) => return (0, status.code()),
        };
        let mut sent = 0;
        loop {
            match stream.message().await {
                Ok(Some(_)) => sent += 1,
                Ok(None) => return (sent, tonic::Code::Ok),
                Err(status) => return (sent, status.code()),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the stream ended within 60 s")
}

/// Calls that set no deadline end DEADLINE_EXCEEDED at the server's
/// `--max-call-seconds`: a Generate stream of 64x64 puzzles (minutes of
/// work each), and a Solve counting the solutions of a blank 64x64 grid
/// to a million under a node budget too large to end it first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_without_a_deadline_ends_at_the_servers_work_bound() {
    let server = bounded_server().await;
    let mut client = SudokuServiceClient::new(server.channel().await);

    let (sent, code) = generate_end(&mut client, tonic::Request::new(generate_64(10))).await;
    assert_eq!(
        (sent, code),
        (0, tonic::Code::DeadlineExceeded),
        "Generate without a deadline"
    );

    let blank = crate::support::blank_64_count();
    let solved = tokio::time::timeout(Duration::from_secs(60), client.solve(blank))
        .await
        .expect("Solve ended within 60 s");
    let status = solved.expect_err("a count to a million of a blank 64x64 grid");
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");

    // A deadline the client sets is its own, longer or not: 9x9 puzzles
    // are made in milliseconds, so all of them come.
    let mut request = tonic::Request::new(pb::GenerateRequest {
        count: 5,
        seed: Some(7),
        ..Default::default()
    });
    request.set_timeout(Duration::from_secs(30));
    assert_eq!(
        generate_end(&mut client, request).await,
        (5, tonic::Code::Ok)
    );
}

/// A SolveBatch stream is not cut at `--max-call-seconds`: its client
/// feeds it message by message, each bounded by the node budget, so a
/// stream open for longer still has every message answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_solve_batch_stream_outlives_the_work_bound_of_a_call() {
    let server = bounded_server().await;
    let mut client = SudokuServiceClient::new(server.channel().await);
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let message = |id| pb::SolveBatchRequest {
        items: vec![pb::BatchItem {
            id,
            puzzle: text_grid(CLASSIC),
        }],
        options: None,
    };
    tx.send(message(1)).await.unwrap();
    let call = client.solve_batch(tokio_stream::wrappers::ReceiverStream::new(rx));
    let mut answers = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("SolveBatch answered within 30 s")
        .expect("a SolveBatch stream")
        .into_inner();
    let first = next_answer(&mut answers).await.expect("the first answer");
    assert_eq!(first.map(|m| m.results[0].id), Some(1));
    // Past the work bound of a call, the stream still answers.
    tokio::time::sleep(Duration::from_secs(3)).await;
    tx.send(message(2)).await.unwrap();
    let second = next_answer(&mut answers).await.expect("the second answer");
    assert_eq!(second.map(|m| m.results[0].id), Some(2));
    drop(tx);
    assert_eq!(next_answer(&mut answers).await.expect("a clean end"), None);
}

/// The next message of a SolveBatch stream, within 30 s.
async fn next_answer(
    answers: &mut tonic::Streaming<pb::SolveBatchResponse>,
) -> Result<Option<pb::SolveBatchResponse>, tonic::Status> {
    tokio::time::timeout(Duration::from_secs(30), answers.message())
        .await
        .expect("an answer within 30 s")
}
