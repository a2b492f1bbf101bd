//! Generate orchestration: puzzles are made on the solver threads, a few at
//! once (one per solver thread), and sent in index order through a bounded
//! channel. Each puzzle sent is charged to the connection's share until
//! HTTP/2 has taken its bytes ([`Answers`]), so a client that does not read
//! stalls only its own streams. The stream ends when the last is sent, at the first failure
//! (its status), or as soon as the client leaves: the task stops, dropping
//! the puzzles in the making, whose work sees its caller gone at its next
//! attempt.

use std::pin::Pin;
use std::time::Instant;

use futures::stream::FuturesOrdered;
use futures::{FutureExt, Stream, StreamExt};
use prost::Message as _;
use tokio::sync::mpsc;
use tonic::Status;
use tracing::Instrument;

use super::budget::{Charge, Purpose, Share};
use super::convert::{GeneratePlan, generated_to_pb, sized_generated_to_pb};
use super::schedule::{Made, expiry};
use super::status::Failure;
use super::stream::Answers;
use super::{Sudoku, Tenant};
use crate::pb;

/// A response sent on a Generate stream, with its charge.
type Outgoing = (Result<pb::GenerateResponse, Status>, Option<Charge>);

/// The response stream of a Generate call.
pub(super) type GenerateStream =
    Pin<Box<dyn Stream<Item = Result<pb::GenerateResponse, Status>> + Send>>;

impl Sudoku {
    /// Starts generating `plan` for `tenant` under `deadline` (which covers
    /// the whole stream) and returns the response stream. Puzzles in the
    /// making are charged to `share` (none: not charged).
    pub(super) fn open_generate(
        &self,
        plan: GeneratePlan,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<Share>,
    ) -> GenerateStream {
        let (tx, rx) = mpsc::channel::<Outgoing>(2);
        let svc = self.clone();
        let span = tracing::debug_span!("generate", count = plan.count, seed = plan.seed);
        tokio::spawn(
            async move { svc.generate_all(plan, deadline, tenant, share, tx).await }
                .instrument(span),
        );
        Box::pin(Answers::new(rx))
    }

    /// Makes the puzzles of `plan` and sends them in order on `tx`.
    async fn generate_all(
        &self,
        plan: GeneratePlan,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<Share>,
        tx: mpsc::Sender<Outgoing>,
    ) {
        let limits = &self.shared.limits;
        let window = limits.solver_threads.clamp(1, limits.stream_window.max(1));
        let mut making = FuturesOrdered::new();
        let mut next = 0u32;
        loop {
            while next < plan.count && making.len() < window {
                let index = next;
                let made = self.generate_one(plan, index, deadline, tenant, share.as_ref());
                making.push_back(made.map(move |made| made.map(|m| response_of(index, &plan, &m))));
                next += 1;
            }
            let made = tokio::select! {
                biased;
                _ = tx.closed() => return,
                _ = self.shared.shutdown.cancelled() => Some(Err(Failure::ShuttingDown)),
                // A puzzle may still wait for its memory or a permit.
                _ = expiry(deadline) => Some(Err(Failure::DeadlineExceeded)),
                made = making.next() => made,
            };
            let sent = match made {
                None => return,
                Some(Ok(response)) => {
                    // Waits while this connection's unread answers fill
                    // its share (bounded by the deadline, which every call
                    // has by default); ends if the client leaves meanwhile.
                    let charge = match &share {
                        None => None,
                        Some(share) => tokio::select! {
                            biased;
                            _ = tx.closed() => return,
                            _ = expiry(deadline) => {
                                let _ = tx.send((Err(Failure::DeadlineExceeded.into()), None)).await;
                                return;
                            }
                            charge = share.charge(Purpose::Messages, response.encoded_len()) => Some(charge),
                        },
                    };
                    tx.send((Ok(response), charge)).await
                }
                Some(Err(failure)) => {
                    tracing::debug!(?failure, "generate stream ends");
                    let _ = tx.send((Err(failure.into()), None)).await;
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        }
    }
}

/// Puzzle `index` of `plan` on the wire.
fn response_of(index: u32, plan: &GeneratePlan, made: &Made) -> pb::GenerateResponse {
    match made {
        Made::Nine(made) => generated_to_pb(index, plan, made),
        Made::Sized(found) => sized_generated_to_pb(index, plan, found),
    }
}
