//! The handlers of `sudoku.v1.SudokuService`, thin: validate and convert
//! the request ([`super::convert`]), hand the work to the scheduler
//! ([`super::schedule`], [`super::stream`]), convert the answer back, and
//! map a failure through the one status map ([`super::status`]).

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use super::budget::{Charge, Purpose, Share};
use super::convert::{
    AnyGrid, Form, Job, SizedJob, cells_to_pb, conflicts_to_pb, deadline_of, parse_any,
    parse_candidates, parse_generate, parse_grid, parse_limit, rating_to_pb, read_any, read_grid,
    sized_conflicts_to_pb, sized_stuck_cells, step_to_pb,
};
use super::generate::GenerateStream;
use super::schedule::count_failure;
use super::status::{Failure, Wrong, violation, violation_of};
use super::stream::{BatchStream, SolveStream};
use super::{Sudoku, Tenant};
use crate::logic::{self, Candidates};
use crate::pb::{self, sudoku_service_server::SudokuService};
use crate::puzzle::sized::SizedGrid;
use crate::puzzle::validate;
use crate::telemetry::traces;

impl Sudoku {
    /// Answers one Solve request: refuses it while draining, validates it,
    /// takes a permit (or sheds the call) and solves it; a grid other than
    /// 9x9 also takes its solver's footprint from `share`.
    pub(super) async fn solve_unary(
        &self,
        request: &pb::SolveRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<pb::Solution, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let parsed = parse_any(request.puzzle.as_ref(), "puzzle")?;
        let limit = parse_limit(request.options.as_ref(), "options")?;
        let _permit = self
            .shared
            .permits
            .try_acquire()
            .map_err(|_| Failure::Overloaded)?;
        match parsed {
            AnyGrid::Nine(grid, form) => {
                self.solve_job(Job { grid, form, limit }, deadline, tenant)
                    .await
            }
            AnyGrid::Sized(grid, form) => {
                let charge = sized_charge(share, &grid)?;
                let job = SizedJob { grid, form, limit };
                self.solve_sized(job, deadline, tenant, charge).await
            }
        }
    }

    /// Validate for a grid of a size other than 9x9: the same answer,
    /// from the sized grid's own scans and the sized engine.
    async fn validate_sized(
        &self,
        puzzle: SizedGrid,
        form: Form,
        current: Option<&pb::Grid>,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<pb::ValidateResponse, Failure> {
        let current = match current {
            None => None,
            Some(c) => match read_any(Some(c), "current")? {
                AnyGrid::Sized(current, _) if current.shape() == puzzle.shape() => {
                    let changed = puzzle
                        .values()
                        .iter()
                        .zip(current.values())
                        .position(|(&g, &v)| g != 0 && g != v);
                    if let Some(i) = changed {
                        let n = puzzle.shape().side();
                        let found = match current.values()[i] {
                            0 => "a blank".to_string(),
                            v => v.to_string(),
                        };
                        return Err(violation(
                            "current",
                            format!(
                                "the current grid changes a given: cell {i} (row {}, column {}) \
                                 holds {found} where the puzzle \
                                 gives {}",
                                i / n,
                                i % n,
                                puzzle.values()[i]
                            ),
                        ));
                    }
                    Some(current)
                }
                _ => {
                    return Err(violation(
                        "current.box_rows",
                        format!(
                            "current must have the puzzle's shape, {}",
                            puzzle.shape().describe()
                        ),
                    ));
                }
            },
        };
        let conflicts = sized_conflicts_to_pb(&puzzle);
        let stuck = sized_stuck_cells(&puzzle);
        let mut response = pb::ValidateResponse {
            no_candidate_cells: stuck.clone(),
            search_complete: true,
            ..Default::default()
        };
        let mut solution = None;
        if conflicts.is_empty() && stuck.is_empty() {
            let _permit = self
                .shared
                .permits
                .try_acquire()
                .map_err(|_| Failure::Overloaded)?;
            let charge = sized_charge(share, &puzzle)?;
            let job = SizedJob {
                grid: puzzle,
                form,
                limit: 2,
            };
            let answer = self.solve_sized(job, deadline, tenant, charge).await?;
            response.solvable = answer.solution_count > 0;
            match pb::Outcome::try_from(answer.outcome) {
                Ok(pb::Outcome::Solved) => {
                    response.unique = true;
                    solution = match answer.grid.as_ref().map(|g| read_any(Some(g), "")) {
                        Some(Ok(AnyGrid::Sized(g, _))) => Some(g),
                        _ => None,
                    };
                    response.solution = answer.grid;
                }
                Ok(pb::Outcome::WorkLimitReached) => response.search_complete = false,
                _ => {}
            }
        }
        response.conflicts = conflicts;
        if let Some(current) = current {
            response.current_conflicts = sized_conflicts_to_pb(&current);
            response.current_no_candidate_cells = sized_stuck_cells(&current);
            if let Some(solution) = solution {
                response.wrong_cells = current
                    .values()
                    .iter()
                    .zip(solution.values())
                    .enumerate()
                    .filter(|&(_, (&v, &s))| v != 0 && v != s)
                    .map(|(i, _)| i as u32)
                    .collect();
            }
        }
        Ok(response)
    }

    /// Answers one Validate request. Conflicts and cells without a
    /// candidate are found here (a scan of the grid); the solutions are
    /// counted, up to 2, as Solve counts them, unless the givens already
    /// rule a solution out.
    async fn validate_unary(
        &self,
        request: &pb::ValidateRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<pb::ValidateResponse, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let (puzzle, form) = match read_any(request.puzzle.as_ref(), "puzzle")? {
            AnyGrid::Nine(puzzle, form) => (puzzle, form),
            AnyGrid::Sized(puzzle, form) => {
                return self
                    .validate_sized(
                        puzzle,
                        form,
                        request.current.as_ref(),
                        deadline,
                        tenant,
                        share,
                    )
                    .await;
            }
        };
        let current = match request.current.as_ref() {
            None => None,
            Some(c) => {
                let (current, _) = read_grid(Some(c), "current")?;
                if let Some((cell, given, found)) = validate::changed_given(&puzzle, &current) {
                    let found = match found {
                        0 => "a blank".to_string(),
                        d => d.to_string(),
                    };
                    return Err(violation_of(
                        Wrong::ChangedGiven,
                        "current",
                        format!(
                            "the current grid changes a given: {cell} holds {found} where the \
                             puzzle gives {given}"
                        ),
                        vec![cell.0],
                    ));
                }
                Some(current)
            }
        };
        let conflicts = validate::conflicts(&puzzle);
        let stuck = validate::cells_without_candidates(&puzzle);
        let mut response = pb::ValidateResponse {
            conflicts: conflicts_to_pb(&conflicts),
            no_candidate_cells: cells_to_pb(&stuck),
            search_complete: true,
            ..Default::default()
        };
        let mut solution = None;
        if conflicts.is_empty() && stuck.is_empty() {
            let _permit = self
                .shared
                .permits
                .try_acquire()
                .map_err(|_| Failure::Overloaded)?;
            let job = Job {
                grid: puzzle,
                form,
                limit: 2,
            };
            let answer = self.solve_job(job, deadline, tenant).await?;
            response.solvable = answer.solution_count > 0;
            match pb::Outcome::try_from(answer.outcome) {
                Ok(pb::Outcome::Solved) => {
                    response.unique = true;
                    solution = answer
                        .grid
                        .as_ref()
                        .and_then(|g| read_grid(Some(g), "").ok());
                    response.solution = answer.grid;
                }
                Ok(pb::Outcome::WorkLimitReached) => response.search_complete = false,
                _ => {}
            }
        }
        if let Some(current) = current {
            response.current_conflicts = conflicts_to_pb(&validate::conflicts(&current));
            response.current_no_candidate_cells =
                cells_to_pb(&validate::cells_without_candidates(&current));
            if let Some((solution, _)) = solution {
                response.wrong_cells = cells_to_pb(&validate::wrong_cells(&current, &solution));
            }
        }
        Ok(response)
    }

    /// Answers one Hint request: the easiest step from the grid (and its
    /// pencil marks), found on a solver thread, or else the fallback step
    /// from the solution of the placed digits, searched as Solve searches.
    async fn hint_unary(
        &self,
        request: &pb::HintRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
    ) -> Result<pb::HintResponse, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let (grid, form) = parse_grid(request.puzzle.as_ref(), "puzzle")?;
        let marks = parse_candidates(request.candidates.as_ref(), "candidates")?;
        let state = match marks {
            None => Candidates::from_grid(&grid),
            Some(masks) => Candidates::with_marks(&grid, &masks)
                .map_err(|e| violation("candidates", e.to_string()))?,
        };
        if state.is_solved() {
            return Ok(pb::HintResponse {
                step: None,
                solved: true,
                search_complete: true,
            });
        }
        let step = self
            .on_pool(tenant, deadline, move || logic::hint(&state))
            .await?;
        if let Some(step) = step {
            return Ok(pb::HintResponse {
                step: Some(step_to_pb(&step)),
                solved: false,
                search_complete: true,
            });
        }
        // No listed technique applies. The fallback's search can be as long
        // as any Solve's, so it runs as one: within the work budget, in
        // slices that stop at the deadline or when the caller leaves, in
        // turns on the solver threads.
        let answer = {
            let _permit = self
                .shared
                .permits
                .try_acquire()
                .map_err(|_| Failure::Overloaded)?;
            let job = Job {
                grid: state.grid(),
                form,
                limit: 1,
            };
            self.search_job(job, deadline, tenant).await?.0
        };
        let step = answer
            .solution
            .and_then(|solution| logic::search_step_from(&state, &solution));
        Ok(pb::HintResponse {
            step: step.as_ref().map(step_to_pb),
            solved: false,
            search_complete: answer.complete,
        })
    }

    /// Answers one Rate request: the solutions counted up to 2 under the
    /// work budget, as Solve counts them, and a puzzle with exactly one
    /// rated by the logical solver on a solver thread.
    async fn rate_unary(
        &self,
        request: &pb::RateRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
    ) -> Result<pb::RateResponse, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let (grid, form) = parse_grid(request.puzzle.as_ref(), "puzzle")?;
        let counted = {
            let _permit = self
                .shared
                .permits
                .try_acquire()
                .map_err(|_| Failure::Overloaded)?;
            let job = Job {
                grid,
                form,
                limit: 2,
            };
            self.solve_job(job, deadline, tenant).await?
        };
        let outcome = pb::Outcome::try_from(counted.outcome).unwrap_or(pb::Outcome::Unspecified);
        if outcome != pb::Outcome::Solved {
            return Ok(pb::RateResponse {
                rating: None,
                outcome: outcome as i32,
            });
        }
        // The count above is the engine's own count to two (same rules,
        // same search), so its guesses are the rating's and the puzzle is
        // known unique: only the logical part is left to do.
        let guesses = counted.stats.map_or(0, |s| s.guesses);
        let rating = self
            .on_pool(tenant, deadline, move || logic::rating_of(&grid, guesses))
            .await?;
        Ok(pb::RateResponse {
            rating: Some(rating_to_pb(&rating)),
            outcome: pb::Outcome::Solved as i32,
        })
    }

    /// The deadline a call works under: the client's, or, when it set
    /// none, `--max-call-seconds` from now (the default work bound of a
    /// call).
    fn bounded(&self, deadline: Option<Instant>) -> Option<Instant> {
        deadline.or_else(|| Instant::now().checked_add(self.shared.limits.max_call?))
    }

    /// Answers a unary call with `answer` in its `span` ([`traces::call_span`]):
    /// its log line, a panic kept inside the call, and the failure's status.
    async fn unary<T>(
        &self,
        span: tracing::Span,
        answer: impl std::future::Future<Output = Result<T, Failure>>,
    ) -> Result<Response<T>, Status> {
        self.unary_counted(span, answer, |_| ()).await
    }

    /// [`Self::unary`], with `on_failure` told of a failure (a panic
    /// included) before it becomes the call's status.
    async fn unary_counted<T>(
        &self,
        span: tracing::Span,
        answer: impl std::future::Future<Output = Result<T, Failure>>,
        on_failure: impl FnOnce(&Failure),
    ) -> Result<Response<T>, Status> {
        let started = Instant::now();
        let result = AssertUnwindSafe(answer)
            .catch_unwind()
            .instrument(span.clone())
            .await
            .unwrap_or(Err(Failure::Panicked));
        let _enter = span.enter();
        match result {
            Ok(reply) => {
                traces::record_code(&span, tonic::Code::Ok);
                tracing::debug!(
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "call done"
                );
                Ok(Response::new(reply))
            }
            Err(failure) => {
                on_failure(&failure);
                let status = Status::from(failure.clone());
                traces::record_code(&span, status.code());
                if failure == Failure::Panicked {
                    tracing::error!("handler panicked; answered INTERNAL");
                } else {
                    tracing::debug!(message = status.message(), "call failed");
                }
                Err(status)
            }
        }
    }
}

#[tonic::async_trait]
impl SudokuService for Sudoku {
    async fn solve(
        &self,
        request: Request<pb::SolveRequest>,
    ) -> Result<Response<pb::SolveResponse>, Status> {
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let span = traces::call_span("Solve", request.metadata());
        let share = request.extensions().get::<Share>();
        let answer = async {
            let solution = self
                .solve_unary(request.get_ref(), deadline, tenant, share)
                .await?;
            record_solution(&tracing::Span::current(), &solution);
            Ok(pb::SolveResponse {
                solution: Some(solution),
            })
        };
        self.unary_counted(span, answer, |failure| {
            count_failure(&self.shared.gauges, failure)
        })
        .await
    }

    async fn validate(
        &self,
        request: Request<pb::ValidateRequest>,
    ) -> Result<Response<pb::ValidateResponse>, Status> {
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let share = request.extensions().get::<Share>();
        self.unary(
            traces::call_span("Validate", request.metadata()),
            self.validate_unary(request.get_ref(), deadline, tenant, share),
        )
        .await
    }

    async fn hint(
        &self,
        request: Request<pb::HintRequest>,
    ) -> Result<Response<pb::HintResponse>, Status> {
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let span = traces::call_span("Hint", request.metadata());
        self.unary(span, self.hint_unary(request.get_ref(), deadline, tenant))
            .await
    }

    async fn rate(
        &self,
        request: Request<pb::RateRequest>,
    ) -> Result<Response<pb::RateResponse>, Status> {
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let span = traces::call_span("Rate", request.metadata());
        self.unary(span, self.rate_unary(request.get_ref(), deadline, tenant))
            .await
    }

    type GenerateStream = GenerateStream;

    async fn generate(
        &self,
        request: Request<pb::GenerateRequest>,
    ) -> Result<Response<Self::GenerateStream>, Status> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown.into());
        }
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let plan = parse_generate(request.get_ref(), fresh_seed)?;
        let share = request.extensions().get::<Share>().cloned();
        Ok(Response::new(
            self.open_generate(plan, deadline, tenant, share),
        ))
    }

    type SolveBatchStream = BatchStream;

    async fn solve_batch(
        &self,
        request: Request<Streaming<pb::SolveBatchRequest>>,
    ) -> Result<Response<Self::SolveBatchStream>, Status> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown.into());
        }
        // No default bound: the client feeds the stream message by message,
        // and each item's work is bounded by the node budget.
        let deadline = deadline_of(request.metadata());
        let tenant = tenant_of(&request);
        let span = traces::call_span("SolveBatch", request.metadata());
        let share = request.extensions().get::<Share>().cloned();
        let inbound = request.into_inner().map(|msg| msg.map(|msg| (msg, 0)));
        Ok(Response::new(
            self.open_batch(inbound, span, deadline, tenant, share),
        ))
    }

    // --- SolveStream -----------------------------------------------------

    type SolveStreamStream = SolveStream;

    async fn solve_stream(
        &self,
        request: Request<pb::SolveStreamRequest>,
    ) -> Result<Response<Self::SolveStreamStream>, Status> {
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let span = traces::call_span("SolveStream", request.metadata());
        let share = request.extensions().get::<Share>().cloned();
        match self.open_stream(request.into_inner(), span.clone(), deadline, tenant, share) {
            Ok(stream) => Ok(Response::new(stream)),
            Err(failure) => {
                count_failure(&self.shared.gauges, &failure);
                let status = Status::from(failure);
                traces::record_code(&span, status.code());
                Err(status)
            }
        }
    }

    // --- end of SolveStream ----------------------------------------------
}

/// What a unary search of a grid other than 9x9 holds in the connection's
/// `share` of the request budget (its `Messages` pool, as SolveBatch
/// messages): its solver's footprint, taken now or the call is shed as
/// over-budget work is (RESOURCE_EXHAUSTED, OVERLOADED). The search grows it
/// when its solver outgrows it (see `SizedSearch`). No share (a service
/// without the server's connections): nothing to charge.
fn sized_charge(share: Option<&Share>, grid: &SizedGrid) -> Result<Option<Charge>, Failure> {
    let Some(share) = share else {
        return Ok(None);
    };
    let bytes = crate::solver::sized::SizedSolver::footprint(grid.shape().cells());
    share
        .try_charge(Purpose::Messages, bytes)
        .map(Some)
        .ok_or(Failure::Overloaded)
}

/// Records a unary search's answer on `span`: its outcome and the work it
/// took.
pub(super) fn record_solution(span: &tracing::Span, solution: &pb::Solution) {
    if span.is_disabled() {
        return;
    }
    let outcome = pb::Outcome::try_from(solution.outcome).unwrap_or(pb::Outcome::Unspecified);
    let stats = solution.stats.unwrap_or_default();
    traces::record_answer(span, outcome.as_str_name(), stats.nodes, stats.guesses);
}

/// A seed for a Generate call that sets none: from the clock and the
/// process's hasher keys, different for every call.
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
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
