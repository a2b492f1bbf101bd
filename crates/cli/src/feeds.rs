//! The feeds of `sudoku solve --server`: SolveBatch streams that all draw
//! request messages from the one queue the reader fills, hand the answers
//! to the writer, and when a call is lost with its server open a new one
//! that sends what the lost call left unanswered first.

use super::printer::Msg;
use super::progress::Say;
use super::resend::{Cap, Source};
use super::retry::{MAX_FAILURES, MAX_OUTAGE, backoff, items_limit, lost_server};
use super::wire::{Answers, BatchCodec, Request};
use super::words::status_words;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use sudoku_grpc::pb;

/// Solves through `streams` SolveBatch calls that all draw their request
/// messages from `outbox`, the one bounded queue the reader fills; answers
/// are matched by id, so they may come back in any order.
#[allow(clippy::too_many_arguments)]
pub(super) fn spawn_feeds(
    outbox: async_channel::Receiver<Request>,
    to_writer: async_channel::Sender<Msg>,
    client: tonic::client::Grpc<tonic::transport::Channel>,
    unique: bool,
    batch: usize,
    options: Option<pb::SolveOptions>,
    streams: usize,
    say: Option<Say>,
) -> Option<Reporter> {
    let cap = Cap::new(batch);
    let reporter = say.clone().map(Reporter::spawn);
    let losses = reporter.as_ref().map(Reporter::teller);
    for k in 0..streams {
        let feed = Feed {
            // tonic's balancer places a call on a server whose connection
            // is ready, and connects the others only once asked: calls
            // opened at the same instant would all go to the first server
            // that answers. Opened 5 ms apart, they find every server's
            // connection up and are spread at random over them.
            start_after: std::time::Duration::from_millis(5 * k as u64),
            client: client.clone(),
            outbox: outbox.clone(),
            to_writer: to_writer.clone(),
            losses: losses.clone(),
            say: say.clone(),
            unique,
            cap: cap.clone(),
            options,
        };
        tokio::spawn(feed.run());
    }
    reporter
}

/// One SolveBatch stream of the run: it draws request messages from the
/// queue all streams share, and when its call is lost with its server
/// (see [`lost_server`]) it opens a new call on the balanced
/// channel, which sends the items the lost call left unanswered first.
/// Answers the lost call gave are kept; the writer keeps the first answer
/// for each puzzle, so nothing is printed twice.
struct Feed {
    start_after: std::time::Duration,
    client: tonic::client::Grpc<tonic::transport::Channel>,
    outbox: async_channel::Receiver<Request>,
    to_writer: async_channel::Sender<Msg>,
    /// Where to say a server was lost; `None` with -q.
    losses: Option<Teller>,
    /// Where to say other news of the run; `None` with -q.
    say: Option<Say>,
    unique: bool,
    /// Items per message at most: `--batch`, or fewer when a server says so.
    cap: Cap,
    options: Option<pb::SolveOptions>,
}

/// A call lost with its server: why, and how many puzzles it left to send
/// again.
struct Loss {
    why: String,
    resent: usize,
}

impl Feed {
    /// Opens a SolveBatch call whose messages are written and read by
    /// the codec in `wire.rs`, as the generated client opens one with prost's.
    async fn solve_batch(
        &mut self,
        source: Source,
    ) -> Result<tonic::Response<tonic::codec::Streaming<Answers>>, tonic::Status> {
        self.client
            .ready()
            .await
            .map_err(|e| tonic::Status::unknown(format!("Service was not ready: {e}")))?;
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(
            "/sudoku.v1.SudokuService/SolveBatch",
        );
        let mut request = tonic::IntoStreamingRequest::into_streaming_request(source);
        request.extensions_mut().insert(tonic::GrpcMethod::new(
            "sudoku.v1.SudokuService",
            "SolveBatch",
        ));
        let codec = BatchCodec {
            unique: self.unique,
        };
        self.client.streaming(request, path, codec).await
    }

    async fn run(mut self) {
        // A zero sleep still waits for the timer's next tick (a
        // millisecond), which a short run through a server would pay.
        if !self.start_after.is_zero() {
            tokio::time::sleep(self.start_after).await;
        }
        let mut again = Vec::new();
        // Calls failed one after another without an answer between them,
        // and since when.
        let mut failures = 0u32;
        let mut failing_since: Option<std::time::Instant> = None;
        loop {
            let (source, tracker) =
                Source::new(again, self.cap.clone(), self.options, self.outbox.clone());
            let mut opened = false;
            let result = async {
                let mut responses = self.solve_batch(source).await?.into_inner();
                opened = true;
                while let Some(msg) = responses.message().await? {
                    failures = 0;
                    failing_since = None;
                    tracker.answered(msg.iter().map(|a| a.0));
                    if self.to_writer.send(Msg::Answers(msg)).await.is_err() {
                        break;
                    }
                }
                Ok::<_, tonic::Status>(())
            }
            .await;
            // Whatever the end, the call's source takes nothing more.
            again = tracker.close();
            let status = match result {
                // Items a call that ended OK left unanswered are counted
                // by the writer.
                Ok(()) => return,
                Err(status) => status,
            };
            // A server that takes fewer items a message than `--batch`
            // (its --max-batch-items): the run goes on in messages it
            // takes, the refused one's items first. Counted as a failure,
            // so a server that refuses every size cannot hold the run.
            if let Some(max) = items_limit(&status)
                && failures + 1 < MAX_FAILURES
            {
                if self.cap.lower_to(max)
                    && let Some(say) = &self.say
                {
                    say.line(&format!(
                        "sudoku: the server takes at most {max} puzzles a message; \
                         sending {max} at a time (--batch {max} says so from the start)"
                    ));
                }
                if self.cap.get() <= max {
                    failures += 1;
                    continue;
                }
            }
            let finished = again.is_empty() && self.outbox.is_closed() && self.outbox.is_empty();
            let lost = lost_server(&status);
            if lost && finished {
                return;
            }
            let failing_for = failing_since
                .get_or_insert_with(std::time::Instant::now)
                .elapsed();
            if !lost || failures + 1 >= MAX_FAILURES || failing_for > MAX_OUTAGE {
                self.outbox.close();
                let _ = self
                    .to_writer
                    .send(Msg::Fatal(status_words(&status), false))
                    .await;
                return;
            }
            failures += 1;
            // A call that never opened found a dead server in the
            // balancer's list: the loss was said when it happened.
            if opened && let Some(losses) = &self.losses {
                losses.tell(Loss {
                    why: status.message().trim().to_string(),
                    resent: again.len(),
                });
            }
            tokio::time::sleep(backoff(failures)).await;
        }
    }
}

/// Says on stderr that a server was lost, once per server: the streams a
/// server carried fail together, so losses that come within a quarter of
/// a second of the first are told as one. The run waits for losses sent
/// and not yet told before it ends ([`Reporter::settle`]), so a loss near
/// the end of a run is said too.
pub(super) struct Reporter {
    teller: Teller,
    told: Arc<tokio::sync::Notify>,
}

/// Where a feed sends a loss: counted as untold from the moment it is sent
/// until the reporter has said it.
#[derive(Clone)]
struct Teller {
    tx: tokio::sync::mpsc::UnboundedSender<Loss>,
    untold: Arc<AtomicUsize>,
}

impl Teller {
    fn tell(&self, loss: Loss) {
        self.untold.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(loss).is_err() {
            self.untold.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Reporter {
    fn spawn(say: Say) -> Reporter {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Loss>();
        let untold = Arc::new(AtomicUsize::new(0));
        let told = Arc::new(tokio::sync::Notify::new());
        let (count, done) = (untold.clone(), told.clone());
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                let (mut streams, mut resent) = (1, first.resent);
                while let Ok(more) = rx.try_recv() {
                    streams += 1;
                    resent += more.resent;
                }
                say.line(&format!(
                    "sudoku: lost a server ({}) under {streams} stream{}; re-sending {resent} \
                     unanswered puzzles on new streams",
                    first.why,
                    if streams == 1 { "" } else { "s" }
                ));
                count.fetch_sub(streams, Ordering::SeqCst);
                done.notify_waiters();
            }
        });
        Reporter {
            teller: Teller { tx, untold },
            told,
        }
    }

    fn teller(&self) -> Teller {
        self.teller.clone()
    }

    /// Waits (half a second at most) until every loss sent has been told.
    pub(super) async fn settle(&self) {
        let wait = async {
            loop {
                let told = self.told.notified();
                tokio::pin!(told);
                told.as_mut().enable();
                if self.teller.untold.load(Ordering::SeqCst) == 0 {
                    return;
                }
                told.await;
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), wait).await;
    }
}
