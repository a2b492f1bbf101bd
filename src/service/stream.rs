//! SolveBatch orchestration: one reader task takes request messages off
//! the stream into a window of `stream_window` messages; `stream_workers`
//! tasks solve them (each under a server-wide permit) and send the
//! responses; when the reader stops, the stream ends with the status its
//! reason calls for. This is where a stream is windowed: a full window stops
//! the reader, and HTTP/2 flow control then pushes back on the sender.
//!
//! Each message read is charged to the connection's [`Share`] of the request
//! budget ([`Purpose::Messages`]) before it enters the window: its encoded
//! size, and at least [`MAX_RESULT_BYTES`] per item, so that the charge also
//! covers the response, which can be much larger than the request (1,024
//! one-character puzzles take 18 KB; their 1,024 errors 186 KB). Once
//! solved the charge shrinks to the response's size and travels with it
//! ([`Answers`]) until HTTP/2 has taken its bytes. A full share stops the
//! reader just as a full window does.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures::{Stream, StreamExt};
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status};
use tracing::Instrument;

use super::budget::{Charge, Purpose, Share};
use super::convert::{batch_items, batch_response};
use super::schedule::{expiry, past};
use super::status::Failure;
use super::{Sudoku, Tenant};
use crate::pb;
use crate::telemetry::traces;
use sudoku_core::solver::sized::SizedSolver;

/// The response stream of a SolveBatch call.
pub(super) type BatchStream =
    Pin<Box<dyn Stream<Item = Result<pb::SolveBatchResponse, Status>> + Send>>;

/// The most one item's result takes encoded: the largest are errors with a
/// BadRequest detail (a message and a field violation that both name the
/// item and the cells at fault) and an ErrorInfo (reason, domain, cells),
/// about 345 bytes; see the test.
pub(super) const MAX_RESULT_BYTES: usize = 384;

/// tonic's encoder yields a chunk to HTTP/2 once it holds this many bytes
/// (its default `yield_threshold`), without asking for more responses.
const TONIC_YIELD_THRESHOLD: usize = 32 << 10;

/// What an answer adds to the grid it carries back: the outcome, the count,
/// the stats and their framing (about 40 bytes at their largest).
pub(super) const ANSWER_OVER_GRID_BYTES: usize = 64;

/// What a request message is charged while it waits and is solved: enough
/// for it and for its response. A solution is as long as its puzzle (same
/// form, same cell count), so a message of large grids is covered by its own
/// size plus what each answer adds; small or malformed items by
/// [`MAX_RESULT_BYTES`] each.
///
/// A message solves its items one at a time, and a grid other than 9x9
/// holds a solver of its size for as long as its search is paused between
/// turns, so the charge also holds the largest such solver's footprint: the
/// budget then bounds how many of them the server keeps at once.
fn message_charge(msg: &pb::SolveBatchRequest) -> usize {
    let items = msg.items.len();
    let largest_sized = msg
        .items
        .iter()
        .filter_map(|item| item.puzzle.as_ref())
        .filter(|g| g.box_rows != 0 || g.box_cols != 0)
        .map(|g| {
            // The shape is checked later; a bad one never gets a solver.
            let side = (g.box_rows as usize)
                .saturating_mul(g.box_cols as usize)
                .min(64);
            side * side
        })
        .max()
        .map_or(0, SizedSolver::footprint);
    msg.encoded_len()
        .saturating_add(items.saturating_mul(ANSWER_OVER_GRID_BYTES))
        .max(items.saturating_mul(MAX_RESULT_BYTES))
        .saturating_add(largest_sized)
}

/// A response on its way to tonic, with the budget its bytes hold.
type Outgoing = (Result<pb::SolveBatchResponse, Status>, Option<Charge>);

/// How a stream's reader stopped taking requests.
enum StreamEnd {
    /// The client half-closed: finish and end with OK.
    HalfClosed,
    /// The client went away: nothing more to say.
    Broken,
    /// The request stream failed (a message over the size limit, a bad
    /// encoding): end with its status.
    BadRequestStream(Status),
    /// Too many items in one message.
    Failed(Failure),
    /// The call's deadline passed.
    Deadline,
    /// The server is draining.
    Shutdown,
}

impl Sudoku {
    /// Starts answering the request stream `inbound` of `tenant` under
    /// `deadline` (which covers the whole stream) and returns the response
    /// stream. Messages are charged to `share` (none: not charged).
    ///
    /// `inbound` yields each message with the index its first item has in
    /// the client's request (see [`Sudoku::answer_message`]); `span` is the
    /// call's ([`traces::call_span`]), and each message gets its own in it.
    pub(super) fn open_batch(
        &self,
        inbound: impl Stream<Item = Result<(pb::SolveBatchRequest, usize), Status>> + Send + 'static,
        span: tracing::Span,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<Share>,
    ) -> BatchStream {
        let limits = self.shared.limits.clone();
        let (tx, rx) = mpsc::channel::<Outgoing>(limits.stream_window);
        let (work_tx, work_rx) =
            async_channel::bounded::<(pb::SolveBatchRequest, usize, Option<Charge>)>(
                limits.stream_window,
            );
        let gauges = self.shared.gauges.clone();
        gauges.open_streams.fetch_add(1, Ordering::Relaxed);

        // The workers and the reader are one task: a message goes from the
        // reader to a worker and on to the solver threads without waking
        // another task, which another runtime thread may have taken (that
        // hand-over cost the first message 0.1-0.2 ms on 2 cores). As one
        // task, the reader also ends the stream in the same turn as the
        // last worker: its last response and the trailers leave together.
        let mut workers = futures::stream::FuturesUnordered::new();
        for _ in 0..limits.stream_workers {
            let svc = self.clone();
            let work_rx = work_rx.clone();
            let tx = tx.clone();
            workers.push(
                async move {
                    // Ends with true when the deadline cut work short.
                    let work = async {
                        while let Ok((msg, first_index, charge)) = work_rx.recv().await {
                            // Streams wait for a server-wide permit rather than
                            // failing: the wait pushes back on the sender.
                            let Ok(_permit) = svc.shared.permits.acquire().await else {
                                return false;
                            };
                            let message = traces::message_span(msg.items.len());
                            let Some((response, mut charge)) = svc
                                .answer_message(msg, first_index, deadline, tenant, charge)
                                .instrument(message.clone())
                                .await
                            else {
                                return past(deadline);
                            };
                            record_message(&message, &response);
                            if let Some(charge) = &mut charge {
                                charge.shrink_to(response.encoded_len());
                            }
                            if tx.send((Ok(response), charge)).await.is_err() {
                                return false; // the client left
                            }
                        }
                        false
                    };
                    // When the client leaves or the deadline passes, the
                    // worker stops at once, wherever it is: waiting for a
                    // permit, for its message's solver task, or on a full
                    // response channel. Dropping `work` closes the task's
                    // reply, so the solver thread stops at its next slice.
                    tokio::select! {
                        expired = work => expired,
                        _ = tx.closed() => false,
                        _ = expiry(deadline) => true,
                    }
                }
                .instrument(span.clone()),
            );
        }
        drop(work_rx);

        let shutdown = self.shared.shutdown.clone();
        let max_items = limits.max_batch_items;
        tokio::spawn(
            async move {
                let sleep = expiry(deadline);
                tokio::pin!(sleep);
                tokio::pin!(inbound);
                // Whether a worker's work was cut short by the deadline.
                let mut expired = false;
                let end = {
                    let reading = async {
                        loop {
                            let msg = tokio::select! {
                                biased;
                                _ = shutdown.cancelled() => break StreamEnd::Shutdown,
                                _ = &mut sleep => break StreamEnd::Deadline,
                                _ = tx.closed() => break StreamEnd::Broken,
                                msg = inbound.next() => msg,
                            };
                            match msg {
                                None => break StreamEnd::HalfClosed,
                                Some(Err(status)) => {
                                    tracing::debug!(code = ?status.code(), message = status.message(), "request stream broke");
                                    break StreamEnd::BadRequestStream(status);
                                }
                                Some(Ok((msg, _))) if msg.items.len() > max_items => {
                                    break StreamEnd::Failed(Failure::TooManyItems {
                                        found: msg.items.len(),
                                        max: max_items,
                                    });
                                }
                                // A full window blocks here, which stops reading and
                                // lets HTTP/2 flow control push back on the sender.
                                // A message already read is queued even when the
                                // server starts draining: it is answered before the
                                // stream ends.
                                // So does a full share of the request budget.
                                Some(Ok((msg, first_index))) => tokio::select! {
                                    biased;
                                    _ = &mut sleep => break StreamEnd::Deadline,
                                    _ = tx.closed() => break StreamEnd::Broken,
                                    queued = async {
                                        let charge = match &share {
                                            Some(share) => Some(share.charge(Purpose::Messages, message_charge(&msg)).await),
                                            None => None,
                                        };
                                        work_tx.send((msg, first_index, charge)).await
                                    } => if queued.is_err() {
                                        // Every worker stopped: the deadline passed or
                                        // the client left.
                                        break if past(deadline) { StreamEnd::Deadline } else { StreamEnd::Broken };
                                    },
                                },
                            }
                        }
                    };
                    tokio::pin!(reading);
                    loop {
                        tokio::select! {
                            end = &mut reading => break end,
                            Some(cut_short) = workers.next() => expired |= cut_short,
                        }
                    }
                };
                // Items already received are answered before the stream ends.
                work_tx.close();
                while let Some(cut_short) = workers.next().await {
                    expired |= cut_short;
                }
                // Work the deadline cut short was dropped without a result,
                // so the stream must not end OK even if the client had
                // half-closed.
                let status = match end {
                    StreamEnd::Failed(f) => Some(Status::from(f)),
                    StreamEnd::BadRequestStream(status) => Some(status),
                    StreamEnd::Deadline => Some(Status::from(Failure::DeadlineExceeded)),
                    _ if expired => Some(Status::from(Failure::DeadlineExceeded)),
                    StreamEnd::HalfClosed | StreamEnd::Broken => None,
                    StreamEnd::Shutdown => Some(Status::from(Failure::ShuttingDown)),
                };
                let code = status.as_ref().map_or(Code::Ok, |s| s.code());
                traces::record_code(&tracing::Span::current(), code);
                tracing::debug!("stream done");
                if let Some(status) = status {
                    let _ = tx.send((Err(status), None)).await;
                }
                gauges.open_streams.fetch_sub(1, Ordering::Relaxed);
            }
            .instrument(span),
        );
        // A response's charge is released as tonic takes it.
        Box::pin(Answers::new(rx))
    }
}

impl Sudoku {
    /// Answers one batch request message of `tenant`: its items read into
    /// jobs, solved on the solver threads ([`Sudoku::solve_message`]) and
    /// their answers put on the wire; `None` when the stream's deadline
    /// passed on the way. `first_index` is where the message's first item
    /// stands in the client's request, for the field paths of errors: 0
    /// for a SolveBatch message, the item's index for one of a SolveStream
    /// request's items. `charge` comes back with the response.
    pub(super) async fn answer_message(
        &self,
        msg: pb::SolveBatchRequest,
        first_index: usize,
        deadline: Option<Instant>,
        tenant: Tenant,
        charge: Option<Charge>,
    ) -> Option<(pb::SolveBatchResponse, Option<Charge>)> {
        let items = batch_items(msg, first_index);
        let (answers, charge) = self.solve_message(items, deadline, tenant, charge).await?;
        Some((batch_response(answers), charge))
    }
}

/// Records on a message's `span` how its items went: answered or failed,
/// and the search nodes and guesses of the answered ones.
fn record_message(span: &tracing::Span, response: &pb::SolveBatchResponse) {
    if span.is_disabled() {
        return;
    }
    let (mut solved, mut failed, mut nodes, mut guesses) = (0, 0, 0, 0);
    for result in &response.results {
        match &result.result {
            Some(pb::batch_result::Result::Solution(solution)) => {
                solved += 1;
                let stats = solution.stats.unwrap_or_default();
                nodes += stats.nodes;
                guesses += stats.guesses;
            }
            Some(pb::batch_result::Result::Error(_)) | None => failed += 1,
        }
    }
    traces::record_work(span, solved, failed, nodes, guesses);
}

// --- SolveStream ---------------------------------------------------------

/// The response stream of a SolveStream call.
pub(super) type SolveStream =
    Pin<Box<dyn Stream<Item = Result<pb::SolveStreamResponse, Status>> + Send>>;

impl Sudoku {
    /// Answers a SolveStream request as a SolveBatch stream of one-item
    /// messages, so that its items are windowed, scheduled in turns on the
    /// solver threads, charged to `share`, cut by the deadline, the client's
    /// leaving and shutdown, exactly as a SolveBatch stream's are; each
    /// result leaves as soon as its item is solved. Items travel under
    /// their index as id, which maps their results back to the client's
    /// ids and indices.
    pub(super) fn open_stream(
        &self,
        request: pb::SolveStreamRequest,
        span: tracing::Span,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<Share>,
    ) -> Result<SolveStream, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let max = self.shared.limits.max_batch_items;
        let pb::SolveStreamRequest { items, options } = request;
        if items.len() > max {
            return Err(Failure::TooManyItems {
                found: items.len(),
                max,
            });
        }
        let ids: Vec<u64> = items.iter().map(|item| item.id).collect();
        let messages = items.into_iter().enumerate().map(move |(index, item)| {
            let msg = pb::SolveBatchRequest {
                items: vec![pb::BatchItem {
                    id: index as u64,
                    puzzle: item.puzzle,
                }],
                options,
            };
            Ok((msg, index))
        });
        let answers = self.open_batch(
            futures::stream::iter(messages),
            span,
            deadline,
            tenant,
            share,
        );
        Ok(Box::pin(answers.flat_map(move |answer| {
            let results: Vec<Result<pb::SolveStreamResponse, Status>> = match answer {
                Err(status) => vec![Err(status)],
                Ok(response) => response
                    .results
                    .into_iter()
                    .filter_map(|mut result| {
                        let index = usize::try_from(result.id).ok()?;
                        result.id = *ids.get(index)?;
                        Some(Ok(pb::SolveStreamResponse {
                            index: index as u32,
                            result: Some(result),
                        }))
                    })
                    .collect(),
            };
            futures::stream::iter(results)
        })))
    }
}

// --- end of SolveStream ---------------------------------------------------

/// The response stream of a SolveBatch (or Generate) call: the responses
/// the workers send, each with its charge, which is held until HTTP/2 has
/// taken the response's bytes.
///
/// tonic takes a response and encodes it, then asks for more until there
/// is none (Pending) or its buffer reaches its yield threshold, and hands
/// the chunk to hyper. hyper asks for the next chunk only when the stream
/// has room in its send buffer again (less than `--http2-send-buffer`
/// queued), so a poll that comes after a Pending, or after a threshold's
/// worth of responses, means the responses taken before it have left the
/// send buffer (all but the send buffer's size): their charges are
/// released then. For a client that does not read, that poll never comes,
/// the charges stay, and the share they fill stops the reader.
pub(super) struct Answers<T> {
    rx: ReceiverStream<(Result<T, Status>, Option<Charge>)>,
    /// The charges of the responses taken since the last release.
    held: Option<Charge>,
    /// Response bytes taken since tonic's last Pending.
    since_pending: usize,
    /// The last poll answered Pending: tonic has yielded its chunk.
    pended: bool,
}

impl<T> Answers<T> {
    /// The responses sent on the channel of `rx`, with their charges.
    pub(super) fn new(rx: mpsc::Receiver<(Result<T, Status>, Option<Charge>)>) -> Answers<T> {
        Answers {
            rx: ReceiverStream::new(rx),
            held: None,
            since_pending: 0,
            pended: false,
        }
    }
}

impl<T> Stream for Answers<T> {
    type Item = Result<T, Status>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.pended || this.since_pending >= TONIC_YIELD_THRESHOLD {
            this.held = None;
            this.since_pending = 0;
            this.pended = false;
        }
        match this.rx.poll_next_unpin(cx) {
            Poll::Pending => {
                this.pended = true;
                Poll::Pending
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some((response, charge))) => {
                if let Some(charge) = charge {
                    this.since_pending += charge.bytes();
                    match &mut this.held {
                        Some(held) => held.absorb(charge),
                        None => this.held = Some(charge),
                    }
                }
                Poll::Ready(Some(response))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Limits;
    use tokio_util::sync::CancellationToken;

    fn service() -> Sudoku {
        let limits = Limits::on_the_calling_thread(1000);
        Sudoku::new(limits, CancellationToken::new()).unwrap()
    }

    #[tokio::test]
    async fn results_stay_within_max_result_bytes() {
        let svc = service();
        let odd = format!("{}{}", '\u{10348}', ".".repeat(80));
        let texts = [
            "x".to_string(),
            "x".repeat(1000),
            "1".repeat(81),
            odd,
            format!("5{}", ".".repeat(80)),
        ];
        for text in texts {
            let msg = pb::SolveBatchRequest {
                items: (0..1024u64)
                    .map(|i| pb::BatchItem {
                        id: u64::MAX - i,
                        puzzle: Some(pb::Grid {
                            text: text.clone(),
                            cells: vec![],
                            ..Default::default()
                        }),
                    })
                    .collect(),
                options: None,
            };
            let charge = message_charge(&msg);
            let response = svc
                .answer_message(msg, 0, None, Tenant::default(), None)
                .await
                .unwrap()
                .0;
            for result in &response.results {
                assert!(
                    result.encoded_len() + 3 <= MAX_RESULT_BYTES,
                    "{} bytes: {result:?}",
                    result.encoded_len()
                );
            }
            assert!(response.encoded_len() <= charge);
        }
    }

    /// A large grid's answer carries the whole solution plus outcome, count
    /// and stats, so it outgrows its request: the charge must still cover it.
    #[tokio::test]
    async fn the_charge_covers_the_answers_of_large_grids() {
        let svc = service();
        for (r, c, blanks) in [(8u32, 8u32, 3usize), (5, 7, 2), (2, 3, 1)] {
            let n = r * c;
            // The usual pattern grid: a valid solution for r x c boxes.
            let mut cells: Vec<u32> = (0..n * n)
                .map(|i| {
                    let (row, col) = (i / n, i % n);
                    (c * (row % r) + row / r + col) % n + 1
                })
                .collect();
            for k in 0..blanks {
                cells[k * (n as usize + 1)] = 0;
            }
            let msg = pb::SolveBatchRequest {
                items: (0..16u64)
                    .map(|i| pb::BatchItem {
                        id: u64::MAX - i,
                        puzzle: Some(pb::Grid {
                            cells: cells.clone(),
                            box_rows: r,
                            box_cols: c,
                            ..Default::default()
                        }),
                    })
                    .collect(),
                options: None,
            };
            let charge = message_charge(&msg);
            let side = (r * c) as usize;
            assert!(charge >= SizedSolver::footprint(side * side));
            let response = svc
                .answer_message(msg, 0, None, Tenant::default(), None)
                .await
                .unwrap()
                .0;
            assert!(
                response
                    .results
                    .iter()
                    .all(|x| matches!(x.result, Some(pb::batch_result::Result::Solution(_)))),
                "{r}x{c}: {:?}",
                response.results.first()
            );
            assert!(
                response.encoded_len() <= charge,
                "{r}x{c}: answer {} bytes, charge {charge}",
                response.encoded_len()
            );
        }
    }
}
