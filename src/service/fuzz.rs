//! (Feature `fuzzing`.) A request answered without a server, for the
//! fuzz targets in fuzz/: the bytes are decoded as tonic would and
//! answered by the handlers' own code on the calling thread.

use prost::Message;
use tokio_util::sync::CancellationToken;
use tonic::Status;

use super::status::{Failure, to_rpc_status};
use super::{Limits, Sudoku, Tenant};
use crate::pb;

/// Decodes `bytes` as a `SolveRequest` (or, when
/// `batch`, one `SolveBatchRequest` message) with prost, as tonic would, and
/// answers it through the handlers' own code (`solve_unary`,
/// `answer_message`) on the calling thread, with no deadline and a budget of
/// `max_nodes` search nodes solved in small slices (so pausing and resuming
/// are exercised). Solver panics are not caught on the unary path, so the
/// fuzzer sees them; on the batch path the handler turns them into INTERNAL
/// item errors, as in production. A unary answer comes back as a one-item
/// response with id 0. `Err` is what the call itself would end with: a
/// decode error (INTERNAL, as tonic reports it) or too many items.
pub fn fuzz_request(
    bytes: &[u8],
    batch: bool,
    max_nodes: u64,
) -> Result<pb::SolveBatchResponse, Status> {
    let limits = Limits::on_the_calling_thread(max_nodes.max(1));
    let svc = Sudoku::new(limits, CancellationToken::new()).expect("no threads to start");
    let decode_error = |e: prost::DecodeError| Status::internal(e.to_string());
    futures::executor::block_on(async {
        if batch {
            let msg = pb::SolveBatchRequest::decode(bytes).map_err(decode_error)?;
            let max = svc.shared.limits.max_batch_items;
            if msg.items.len() > max {
                let found = msg.items.len();
                return Err(Failure::TooManyItems { found, max }.into());
            }
            // Without a deadline every item is answered.
            svc.answer_message(msg, 0, None, Tenant::default(), None)
                .await
                .map(|(response, _)| response)
                .ok_or_else(|| Status::internal("a batch without a deadline was cut short"))
        } else {
            let req = pb::SolveRequest::decode(bytes).map_err(decode_error)?;
            let result = match svc.solve_unary(&req, None, Tenant::default(), None).await {
                Ok(s) => pb::batch_result::Result::Solution(s),
                Err(f) => pb::batch_result::Result::Error(to_rpc_status(f.into())),
            };
            Ok(pb::SolveBatchResponse {
                results: vec![pb::BatchResult {
                    id: 0,
                    result: Some(result),
                }],
            })
        }
    })
}
