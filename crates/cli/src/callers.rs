//! The callers of `sudoku bench`: unary Solve callers, health checkers and
//! SolveBatch streams, each loading the server until its bound and
//! keeping a [`Tally`] of what it saw; and the corpus they send.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio_stream::StreamExt;
use tonic::Code;
use tonic::transport::Channel;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use super::tally::Tally;
use super::words::code_name;
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::text::read_puzzles;
use sudoku_grpc::pb;
use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;

/// The puzzles of the file, as wire grids, with their parsed form.
pub(super) struct Corpus {
    grids: Vec<Grid>,
    wire: Vec<pb::Grid>,
}

impl Corpus {
    /// The puzzles of `file`, sent as text or, with `cells`, as cells.
    pub(super) fn load(file: &Option<PathBuf>, cells: bool) -> anyhow::Result<Corpus> {
        let Some(path) = file else {
            bail!("this mode needs a puzzle file");
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let entries = read_puzzles(&text);
        let mut grids = Vec::with_capacity(entries.len());
        for e in &entries {
            match &e.puzzle {
                Ok(g) => grids.push(*g),
                Err(msg) => eprintln!("skipping unreadable puzzle: {msg}"),
            }
        }
        if grids.is_empty() {
            bail!("no puzzles in {}", path.display());
        }
        let wire = grids
            .iter()
            .map(|g| {
                if cells {
                    pb::Grid {
                        text: String::new(),
                        cells: g.to_cells(),
                        ..Default::default()
                    }
                } else {
                    pb::Grid {
                        text: g.to_text(),
                        cells: Vec::new(),
                        ..Default::default()
                    }
                }
            })
            .collect();
        Ok(Corpus { grids, wire })
    }

    /// Puzzles in the corpus.
    pub(super) fn len(&self) -> u64 {
        self.grids.len() as u64
    }
}

/// When to stop: after `limit` calls (or puzzles) or at `end`.
#[derive(Clone, Copy)]
pub(super) struct Bound {
    pub(super) limit: u64,
    pub(super) end: Instant,
}

impl Bound {
    /// True once `n` calls (or puzzles) are past the bound.
    pub(super) fn over(&self, n: u64) -> bool {
        n >= self.limit || Instant::now() >= self.end
    }
}

/// Solve calls one after another until the bound, each with the next
/// puzzle of the corpus; after a failed call, a wait of `backoff`.
pub(super) async fn unary_worker(
    channel: Channel,
    corpus: Arc<Corpus>,
    next: Arc<AtomicU64>,
    bound: Bound,
    verify: bool,
    backoff: Duration,
) -> Tally {
    let mut client = SudokuServiceClient::new(channel);
    let mut tally = Tally::new();
    loop {
        let n = next.fetch_add(1, Ordering::Relaxed);
        if bound.over(n) {
            break;
        }
        let i = (n % corpus.len()) as usize;
        let request = pb::SolveRequest {
            puzzle: Some(corpus.wire[i].clone()),
            options: None,
        };
        let t = Instant::now();
        match client.solve(request).await {
            Ok(reply) => {
                tally.record(t);
                tally.calls += 1;
                let reply = reply.into_inner();
                tally.check(&corpus.grids[i], reply.solution.as_ref(), verify);
            }
            Err(status) => {
                tally.failed(t, code_name(status.code()).to_string());
                if !backoff.is_zero() {
                    tokio::time::sleep(backoff).await;
                }
            }
        }
    }
    tally
}

/// Health checks one after another until the bound.
pub(super) async fn health_worker(channel: Channel, next: Arc<AtomicU64>, bound: Bound) -> Tally {
    let mut client = HealthClient::new(channel);
    let mut tally = Tally::new();
    loop {
        let n = next.fetch_add(1, Ordering::Relaxed);
        if bound.over(n) {
            break;
        }
        let t = Instant::now();
        match client
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
        {
            Ok(_) => {
                tally.record(t);
                tally.calls += 1;
                tally.answered += 1;
            }
            Err(status) => tally.failed(t, code_name(status.code()).to_string()),
        }
    }
    tally
}

/// Which messages one stream sends: message k (ids k*batch ..) for every
/// k = index + j*streams until the bound.
#[derive(Clone, Copy)]
pub(super) struct StreamPlan {
    pub(super) index: u64,
    pub(super) streams: u64,
    pub(super) batch: u64,
    pub(super) bound: Bound,
}

/// Messages sent and not yet answered: message number to (send time, items).
type InFlight = Arc<Mutex<HashMap<u64, (Instant, u64)>>>;

pub(super) async fn stream_worker(
    channel: Channel,
    corpus: Arc<Corpus>,
    plan: StreamPlan,
    sent: Arc<AtomicU64>,
    verify: bool,
) -> Tally {
    let mut tally = Tally::new();
    let mut client = SudokuServiceClient::new(channel).max_decoding_message_size(64 << 20);
    let in_flight: InFlight = Arc::new(Mutex::new(HashMap::new()));
    // Built one message at a time when the transport polls for it; the
    // send time is taken then, so the round trip includes any wait for
    // HTTP/2 flow control and the server's window.
    let outbound = {
        let in_flight = in_flight.clone();
        let corpus = corpus.clone();
        futures::stream::unfold(plan.index, move |k| {
            let in_flight = in_flight.clone();
            let corpus = corpus.clone();
            let sent = sent.clone();
            async move {
                let first = k.checked_mul(plan.batch)?;
                if plan.bound.over(first) {
                    return None;
                }
                let last = (first + plan.batch).min(plan.bound.limit);
                let items = (first..last)
                    .map(|id| pb::BatchItem {
                        id,
                        puzzle: Some(corpus.wire[(id % corpus.len()) as usize].clone()),
                    })
                    .collect();
                sent.fetch_add(last - first, Ordering::Relaxed);
                in_flight
                    .lock()
                    .expect("not poisoned")
                    .insert(k, (Instant::now(), last - first));
                Some((
                    pb::SolveBatchRequest {
                        items,
                        options: None,
                    },
                    k + plan.streams,
                ))
            }
        })
    };
    let mut responses = match client.solve_batch(outbound).await {
        Ok(r) => r.into_inner(),
        Err(status) => {
            tally.error(code_name(status.code()).to_string());
            return tally;
        }
    };
    loop {
        let msg = match responses.next().await {
            None => break,
            Some(Err(status)) => {
                tally.error(code_name(status.code()).to_string());
                break;
            }
            Some(Ok(msg)) => msg,
        };
        let Some(first) = msg.results.first() else {
            tally.bad("empty response message".into());
            continue;
        };
        let k = first.id / plan.batch;
        let Some((sent_at, items)) = in_flight.lock().expect("not poisoned").remove(&k) else {
            tally.bad("response for no message in flight (duplicate or unknown ids)".into());
            continue;
        };
        tally.record(sent_at);
        tally.calls += 1;
        let ids_match = msg.results.len() as u64 == items
            && msg
                .results
                .iter()
                .zip(k * plan.batch..)
                .all(|(r, id)| r.id == id);
        if !ids_match {
            tally.bad("response ids do not match its request message".into());
            continue;
        }
        for r in &msg.results {
            let puzzle = &corpus.grids[(r.id % corpus.len()) as usize];
            match &r.result {
                Some(pb::batch_result::Result::Solution(s)) => tally.check(puzzle, Some(s), verify),
                Some(pb::batch_result::Result::Error(e)) => {
                    tally.error(format!("item {}", code_name(Code::from_i32(e.code))))
                }
                None => tally.bad("result without a solution or an error".into()),
            }
        }
    }
    let left = in_flight.lock().expect("not poisoned").len();
    if left > 0 {
        tally.bad(format!("{left} messages never answered"));
    }
    tally
}
