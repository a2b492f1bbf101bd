//! A slow consumer of SolveBatch against the real server binary: while the
//! client stops reading, the stream window and HTTP/2 flow control stop the
//! client's sender, and the server's memory stays bounded; when it reads
//! again, every puzzle is answered exactly once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::support::{BinaryServer, data_set};
use prost::Message;
use sudoku_grpc::pb::{self, sudoku_service_client::SudokuServiceClient};

const TOTAL: u64 = 100_000;
/// Items per request message.
const BATCH: u64 = 100;
/// `--workers`: also the tasks that solve one stream's messages.
const WORKERS: u64 = 2;
/// `--stream-window` (the default).
const WINDOW: u64 = 16;

/// HTTP/2 buffers on the way, at hyper's defaults (the server serves with
/// hyper's; tonic's channel keeps hyper's client ones): the client's send
/// buffer per stream and the server's stream receive window carry request
/// bytes; the server's send buffer per stream and the client's stream
/// receive window carry response bytes.
const CLIENT_SEND_BUFFER: u64 = 1 << 20;
const SERVER_RECEIVE_WINDOW: u64 = 1 << 20;
const SERVER_SEND_BUFFER: u64 = 400 << 10;
const CLIENT_RECEIVE_WINDOW: u64 = 2 << 20;
/// tonic's encoder and decoder each hold up to a message plus a chunk.
const CODEC_SLACK: u64 = 64 << 10;

/// Server memory growth allowed over its warmed-up RSS while a stream of
/// `TOTAL` puzzles is stalled and then drained. Holding every item and
/// result at once would take about 35 MB (100k x ~350 bytes).
const MEMORY_BOUND_KB: u64 = 8 << 10;

fn message(puzzles: &[String], k: u64) -> pb::SolveBatchRequest {
    let first = k * BATCH;
    pb::SolveBatchRequest {
        items: (first..(first + BATCH).min(TOTAL))
            .map(|id| pb::BatchItem {
                id,
                puzzle: Some(pb::Grid {
                    text: puzzles[(id % puzzles.len() as u64) as usize].clone(),
                    cells: vec![],
                    ..Default::default()
                }),
            })
            .collect(),
        options: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_reader_stops_the_sender_and_server_memory_stays_bounded() {
    let server = BinaryServer::spawn(&["--workers", &WORKERS.to_string()]).await;
    let puzzles = Arc::new(data_set("puzzles2_17_clue"));
    let mut client = SudokuServiceClient::new(server.channel().await);

    // Warm up the server's threads and allocator with a short stream, so
    // the baseline includes what any stream costs once.
    let warm: Vec<_> = (0..20).map(|k| message(&puzzles, k)).collect();
    let mut out = client
        .solve_batch(tokio_stream::iter(warm))
        .await
        .unwrap()
        .into_inner();
    while out.message().await.unwrap().is_some() {}
    let baseline_kb = server.status_kb("VmRSS");

    // Items the transport has taken from the sender: the sender's "send"
    // completed for each of them.
    let taken = Arc::new(AtomicU64::new(0));
    let outbound = {
        let taken = taken.clone();
        let puzzles = puzzles.clone();
        futures::stream::unfold(0u64, move |k| {
            let taken = taken.clone();
            let puzzles = puzzles.clone();
            async move {
                if k * BATCH >= TOTAL {
                    return None;
                }
                let msg = message(&puzzles, k);
                taken.fetch_add(msg.items.len() as u64, Ordering::SeqCst);
                Some((msg, k + 1))
            }
        })
    };
    let started = Instant::now();
    let mut out = client.solve_batch(outbound).await.unwrap().into_inner();
    let mut seen = vec![false; TOTAL as usize];
    let mut read = 0u64;
    let mut take = |msg: pb::SolveBatchResponse, read: &mut u64| {
        for r in msg.results {
            assert!(!seen[r.id as usize], "id {} answered twice", r.id);
            seen[r.id as usize] = true;
            assert!(
                matches!(&r.result, Some(pb::batch_result::Result::Solution(s)) if s.outcome() == pb::Outcome::Solved),
                "id {}: {:?}",
                r.id,
                r.result
            );
            *read += 1;
        }
    };
    let first = out.message().await.unwrap().unwrap();
    let response_bytes_per_item = first.encoded_len() as u64 / first.results.len() as u64 + 1;
    take(first, &mut read);

    // The bound on items taken from the sender but not yet read back: the
    // server's own queues (the message being read, the window of messages
    // waiting for a worker, one per worker, the window of responses waiting
    // for the transport) plus what the HTTP/2 buffers hold.
    let request_bytes_per_item = message(&puzzles, 0).encoded_len() as u64 / BATCH + 1;
    let queued = (2 * WINDOW + WORKERS + 1) * BATCH;
    let request_buffers =
        (CLIENT_SEND_BUFFER + SERVER_RECEIVE_WINDOW + CODEC_SLACK) / request_bytes_per_item;
    let response_buffers =
        (SERVER_SEND_BUFFER + CLIENT_RECEIVE_WINDOW + CODEC_SLACK) / response_bytes_per_item;
    let bound = queued + request_buffers + response_buffers;
    eprintln!(
        "bound on items sent but unread: {bound} = {queued} queued in the server \
         + {request_buffers} in request buffers ({request_bytes_per_item} B/item) \
         + {response_buffers} in response buffers ({response_bytes_per_item} B/item)"
    );

    // Stall: read nothing until the sender has made no progress for a second.
    let mut last = taken.load(Ordering::SeqCst);
    let mut still_since = Instant::now();
    while still_since.elapsed() < Duration::from_secs(1) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the sender never stalled: {last} items taken"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = taken.load(Ordering::SeqCst);
        if now != last {
            last = now;
            still_since = Instant::now();
        }
    }
    let stalled = last;
    let stalled_rss_kb = server.status_kb("VmRSS");
    eprintln!(
        "stalled after {:?}: {stalled} of {TOTAL} items taken from the sender, {read} read; \
         server VmRSS {stalled_rss_kb} kB (baseline {baseline_kb} kB)",
        started.elapsed()
    );
    assert!(stalled < TOTAL, "flow control never pushed back");
    assert!(
        stalled - read <= bound,
        "{stalled} taken, {read} read, bound {bound}"
    );

    // A slow reader: one message per 100 ms. The sender moves only as far as
    // reading frees room.
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let msg = out.message().await.unwrap().unwrap();
        take(msg, &mut read);
        let now = taken.load(Ordering::SeqCst);
        assert!(
            now - read <= bound,
            "{now} taken, {read} read, bound {bound}"
        );
    }
    eprintln!(
        "after 20 slow reads: {} taken, {read} read",
        taken.load(Ordering::SeqCst)
    );

    // Then read to the end: every puzzle answered exactly once, stream OK.
    while let Some(msg) = out.message().await.unwrap() {
        take(msg, &mut read);
    }
    assert_eq!(read, TOTAL);
    assert!(seen.iter().all(|s| *s), "every id answered");
    let hwm_kb = server.status_kb("VmHWM");
    eprintln!(
        "all {TOTAL} answered once after {:?}; server peak RSS (VmHWM) {hwm_kb} kB, \
         {} kB over the warmed-up baseline (bound {MEMORY_BOUND_KB} kB)",
        started.elapsed(),
        hwm_kb.saturating_sub(baseline_kb)
    );
    assert!(
        hwm_kb.saturating_sub(baseline_kb) <= MEMORY_BOUND_KB,
        "server memory grew by {} kB",
        hwm_kb - baseline_kb
    );
}
