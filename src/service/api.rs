//! The handlers of `sudoku.v1.SudokuService`, thin: validate and convert
//! the request ([`super::convert`]), hand the work to the scheduler
//! ([`super::schedule`], [`super::stream`]), convert the answer back, and
//! map a failure through the one status map ([`super::status`]).

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use super::budget::Share;
use super::convert::{Job, deadline_of, parse_grid, parse_limit};
use super::schedule::count_failure;
use super::status::Failure;
use super::stream::{BatchStream, SolveStream};
use super::{Sudoku, Tenant};
use crate::pb::{self, sudoku_service_server::SudokuService};
use crate::telemetry::metrics;

impl Sudoku {
    /// Answers one Solve request: refuses it while draining, validates it,
    /// takes a permit (or sheds the call) and solves it.
    pub(super) async fn solve_unary(
        &self,
        request: &pb::SolveRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
    ) -> Result<pb::Solution, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let (grid, form) = parse_grid(request.puzzle.as_ref(), "puzzle")?;
        let limit = parse_limit(request.options.as_ref(), "options")?;
        let _permit = self
            .shared
            .permits
            .try_acquire()
            .map_err(|_| Failure::Overloaded)?;
        self.solve_job(Job { grid, form, limit }, deadline, tenant)
            .await
    }
}

#[tonic::async_trait]
impl SudokuService for Sudoku {
    async fn solve(
        &self,
        request: Request<pb::SolveRequest>,
    ) -> Result<Response<pb::SolveResponse>, Status> {
        let deadline = deadline_of(request.metadata());
        let tenant = tenant_of(&request);
        let span = tracing::debug_span!("call", method = "Solve", code = tracing::field::Empty);
        let started = Instant::now();
        let result = AssertUnwindSafe(self.solve_unary(request.get_ref(), deadline, tenant))
            .catch_unwind()
            .instrument(span.clone())
            .await
            .unwrap_or(Err(Failure::Panicked));
        let _enter = span.enter();
        match result {
            Ok(solution) => {
                span.record("code", "OK");
                tracing::debug!(
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "call done"
                );
                Ok(Response::new(pb::SolveResponse {
                    solution: Some(solution),
                }))
            }
            Err(failure) => {
                count_failure(&self.shared.gauges, &failure);
                let status = Status::from(failure.clone());
                span.record("code", metrics::code_name(status.code()));
                if failure == Failure::Panicked {
                    tracing::error!("handler panicked; answered INTERNAL");
                } else {
                    tracing::debug!(message = status.message(), "call failed");
                }
                Err(status)
            }
        }
    }

    type SolveBatchStream = BatchStream;

    async fn solve_batch(
        &self,
        request: Request<Streaming<pb::SolveBatchRequest>>,
    ) -> Result<Response<Self::SolveBatchStream>, Status> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown.into());
        }
        let deadline = deadline_of(request.metadata());
        let tenant = tenant_of(&request);
        let share = request.extensions().get::<Share>().cloned();
        let inbound = request.into_inner().map(|msg| msg.map(|msg| (msg, 0)));
        Ok(Response::new(self.open_batch(
            inbound,
            "SolveBatch",
            deadline,
            tenant,
            share,
        )))
    }

    // --- SolveStream -----------------------------------------------------

    type SolveStreamStream = SolveStream;

    async fn solve_stream(
        &self,
        request: Request<pb::SolveStreamRequest>,
    ) -> Result<Response<Self::SolveStreamStream>, Status> {
        let deadline = deadline_of(request.metadata());
        let tenant = tenant_of(&request);
        let share = request.extensions().get::<Share>().cloned();
        match self.open_stream(request.into_inner(), deadline, tenant, share) {
            Ok(stream) => Ok(Response::new(stream)),
            Err(failure) => {
                count_failure(&self.shared.gauges, &failure);
                Err(failure.into())
            }
        }
    }

    // --- end of SolveStream ----------------------------------------------
}

/// The connection a request came on, as the server tagged it; untagged
/// requests share the default tenant.
fn tenant_of<T>(request: &Request<T>) -> Tenant {
    request
        .extensions()
        .get::<Tenant>()
        .copied()
        .unwrap_or_default()
}
