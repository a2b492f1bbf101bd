//! The handlers of `sudoku.v1.SudokuService`, thin: validate and convert
//! the request ([`super::convert`]), hand the work to the scheduler
//! ([`super::schedule`], [`super::stream`]), convert the answer back, and
//! map a failure through the one status map ([`super::status`]).

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use prost::Message as _;
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use super::budget::{AnswerCharge, Charge, Purpose, Share};
use super::convert::{
    HINT_ANSWER_BYTES, RATE_ANSWER_BYTES, any_to_pb, conflicts_to_pb, deadline_of, found_to_pb,
    outcome_to_pb, parse_any, parse_candidates, parse_generate, parse_limit, rating_to_pb,
    read_any, step_to_pb, validate_answer_bound,
};
use super::generate::GenerateStream;
use super::schedule::count_failure;
use super::status::{Failure, violation};
use super::stream::{ANSWER_OVER_GRID_BYTES, BatchStream, SolveStream};
use super::work::{AnyGrid, AnyJob, Form, Found};
use super::{Sudoku, Tenant};
use crate::pb::{self, sudoku_service_server::SudokuService};
use crate::telemetry::traces;
use sudoku_core::logic::{self, Candidates};
use sudoku_core::puzzle::error::check_kept;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::Verdict;

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
        let found = self
            .solve_any(parsed, limit, deadline, tenant, share)
            .await?;
        Ok(found_to_pb(&found))
    }

    /// The search behind Solve, Validate and Rate: `puzzle` solved up to
    /// `limit` solutions under a permit (or the call is shed), on the
    /// engine of its shape; a grid other than 9x9 also takes its solver's
    /// footprint from `share`.
    async fn solve_any(
        &self,
        puzzle: AnyGrid,
        limit: u32,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<Found, Failure> {
        let _permit = self
            .shared
            .permits
            .try_acquire()
            .map_err(|_| Failure::Overloaded)?;
        match AnyJob::of(puzzle, limit) {
            AnyJob::Nine(job) => self.solve_job(job, deadline, tenant).await,
            AnyJob::Sized(job) => {
                let charge = sized_charge(share, &job.grid)?;
                self.solve_sized(job, deadline, tenant, charge).await
            }
        }
    }

    /// Answers one Validate request, at any shape. Conflicts and cells
    /// without a candidate are found by scans of the grid; the solutions
    /// are counted, up to 2, as Solve counts them, unless the givens
    /// already rule a solution out. A current grid must have the puzzle's
    /// shape and keep its givens.
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
        let puzzle = read_any(request.puzzle.as_ref(), "puzzle")?;
        let current = match request.current.as_ref() {
            None => None,
            Some(c) => {
                let current = read_any(Some(c), "current")?;
                let shape = puzzle.shape();
                if current.shape() != shape {
                    return Err(other_shape(shape));
                }
                check_kept(shape, puzzle.values(), current.values())
                    .map_err(|e| Failure::from(e).prefixed("current"))?;
                Some(current)
            }
        };
        // A 9x9 grid's scans cost what the parse did, here on the thread
        // that read the request; a grid of up to 4,096 cells is worth a
        // solver thread: its scans run there, under a permit and in the
        // connection's turn, as the search after them does.
        let (puzzle, current, mut response) = if puzzle.shape() == Shape::CLASSIC {
            let scanned = scan(&puzzle, current.as_ref());
            (puzzle, current, scanned)
        } else {
            self.on_pool(tenant, deadline, move |_| {
                let scanned = scan(&puzzle, current.as_ref());
                (puzzle, current, scanned)
            })
            .await?
        };
        let mut solution = None;
        if response.conflict_count == 0 && response.no_candidate_cells.is_empty() {
            let answer = self.solve_any(puzzle, 2, deadline, tenant, share).await?;
            response.solvable = answer.count > 0;
            match answer.verdict {
                Verdict::Solved => {
                    response.unique = true;
                    response.solution = answer.solution.as_ref().map(any_to_pb);
                    solution = answer.solution;
                }
                Verdict::WorkLimit => response.search_complete = false,
                Verdict::NoSolution | Verdict::NotUnique => {}
            }
        }
        if let (Some(current), Some(solution)) = (current, solution) {
            response.wrong_cells = current
                .values()
                .iter()
                .zip(solution.values())
                .enumerate()
                .filter(|&(_, (&v, &s))| v != 0 && v != s)
                .map(|(i, _)| i as u32)
                .collect();
        }
        Ok(response)
    }

    /// Answers one Hint request: the easiest step from the grid (and its
    /// pencil marks), found on a solver thread, or else the fallback step
    /// from the solution of the placed digits, searched as Solve searches.
    /// Pencil marks are first checked against that solution: a mark that
    /// removed the solution's digit is the step ("r3c4 must keep 7"), since
    /// any technique reasoning from it could place or remove wrongly.
    async fn hint_unary(
        &self,
        request: &pb::HintRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<pb::HintResponse, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let puzzle = parse_any(request.puzzle.as_ref(), "puzzle")?;
        let form = puzzle.form();
        let puzzle = puzzle.into_sized();
        let marks = parse_candidates(request.candidates.as_ref(), "candidates", puzzle.shape())?;
        let state = match &marks {
            None => Candidates::new(&puzzle),
            Some(masks) => Candidates::with_marks(&puzzle, masks)
                .map_err(|e| violation("candidates", e.to_string()))?,
        };
        if state.is_solved() {
            return Ok(pb::HintResponse {
                step: None,
                solved: true,
                search_complete: true,
            });
        }
        // The candidates the grid alone leaves hold every solution's digits;
        // a player's marks need not, so they are checked first (an N*N
        // scan, once the search has found the solution).
        let mut known = None;
        if marks.is_some() {
            let (solution, complete, _) = self
                .hint_search(&state, form, deadline, tenant, share)
                .await?;
            let Some(solution) = solution.filter(|_| complete) else {
                // Past the work budget the marks cannot be checked; without
                // a solution there is nothing to check them against.
                return Ok(pb::HintResponse {
                    step: None,
                    solved: false,
                    search_complete: complete,
                });
            };
            if let Some(step) = logic::missing_candidate(&state, &solution) {
                return Ok(pb::HintResponse {
                    step: Some(step_to_pb(&step)),
                    solved: false,
                    search_complete: true,
                });
            }
            known = Some(solution);
        }
        // SE's ladder up to its chains: bounded by the grid.
        let (state, step) = self
            .on_pool(tenant, deadline, move |wanted| {
                let step = logic::hint_before_chains(&state, wanted);
                (state, step)
            })
            .await?;
        let step = step.map_err(|_| Failure::DeadlineExceeded)?;
        let found = |step: &logic::Step| pb::HintResponse {
            step: Some(step_to_pb(step)),
            solved: false,
            search_complete: true,
        };
        if let Some(step) = step {
            return Ok(found(&step));
        }
        // The chains, on placed digits with exactly one solution (what SE
        // rates): they would search a grid with many solutions, the empty
        // one say, for minutes without a contradiction to find. Counting
        // to two also gives the fallback's solution.
        let (solution, complete, unique) = self
            .hint_search(&state, form, deadline, tenant, share)
            .await?;
        let solution = known.or(solution);
        if unique {
            let budget = logic_budget(self.shared.limits.max_nodes);
            let (state_back, step, over) = self
                .on_pool(tenant, deadline, move |wanted| {
                    let mut asked = 0u64;
                    let step = logic::hint_while(&state, within(budget, &mut asked, wanted));
                    (state, step, asked > budget)
                })
                .await?;
            // Past the chains' budget the fallback answers, as when no
            // technique applies.
            if !over && let Some(step) = step.map_err(|_| Failure::DeadlineExceeded)? {
                return Ok(found(&step));
            }
            let step = solution.and_then(|s| logic::search_step_from(&state_back, &s));
            return Ok(pb::HintResponse {
                step: step.as_ref().map(step_to_pb),
                solved: false,
                search_complete: complete,
            });
        }
        // No technique applies: the fallback step is the solution's digit
        // for one cell.
        let step = solution.and_then(|solution| logic::search_step_from(&state, &solution));
        Ok(pb::HintResponse {
            step: step.as_ref().map(step_to_pb),
            solved: false,
            search_complete: complete,
        })
    }

    /// The search behind Hint: the placed digits' solutions, counted to
    /// two. It can be as long as any Solve's, so it runs as one: under a
    /// permit (or the call is shed), within the work budget, in slices that
    /// stop at the deadline or when the caller leaves, in turns on the
    /// solver threads.
    ///
    /// The answer: the first solution's values (row-major) if one was
    /// found, whether the search finished, and whether it found exactly
    /// one. The engine is the shape's: the 9x9 one for 9x9, the sized one
    /// (its footprint charged to `share`) else.
    async fn hint_search(
        &self,
        state: &Candidates,
        form: Form,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<(Option<Vec<u8>>, bool, bool), Failure> {
        let placed = state.puzzle();
        let placed = match placed.to_grid() {
            Some(grid) => AnyGrid::Nine(grid, form),
            None => AnyGrid::Sized(placed, form),
        };
        let answer = self.solve_any(placed, 2, deadline, tenant, share).await?;
        let complete = answer.verdict != Verdict::WorkLimit;
        let unique = answer.verdict == Verdict::Solved;
        let solution = answer.solution.map(|g| g.values().to_vec());
        Ok((solution, complete, unique))
    }

    /// Answers one Rate request: the solutions counted up to 2 under the
    /// work budget, as Solve counts them, and a puzzle with exactly one
    /// rated by the logical solver on a solver thread.
    async fn rate_unary(
        &self,
        request: &pb::RateRequest,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<pb::RateResponse, Failure> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown);
        }
        let puzzle = parse_any(request.puzzle.as_ref(), "puzzle")?;
        let state = Candidates::new(&puzzle.clone().into_sized());
        let counted = self.solve_any(puzzle, 2, deadline, tenant, share).await?;
        if counted.verdict != Verdict::Solved {
            return Ok(pb::RateResponse {
                rating: None,
                outcome: outcome_to_pb(counted.verdict) as i32,
            });
        }
        // The count above is the engine's own count to two (same rules,
        // same search), so its guesses are the rating's and the puzzle is
        // known unique: only the logical part is left to do.
        let guesses = counted.stats.guesses;
        let budget = logic_budget(self.shared.limits.max_nodes);
        let (rating, over) = self
            .on_pool(tenant, deadline, move |wanted| {
                let mut asked = 0u64;
                let rating =
                    logic::rating_while(state, guesses, within(budget, &mut asked, wanted));
                (rating, asked > budget)
            })
            .await?;
        if over {
            return Ok(pb::RateResponse {
                rating: None,
                outcome: pb::Outcome::WorkLimitReached as i32,
            });
        }
        let rating = rating.ok_or(Failure::DeadlineExceeded)?;
        Ok(pb::RateResponse {
            rating: Some(rating_to_pb(&rating)),
            outcome: pb::Outcome::Solved as i32,
        })
    }

    /// The deadline a call works under: the client's, or, when it set
    /// none, `--max-call-seconds` from now (the default work bound of a
    /// call).
    fn bounded(
        &self,
        deadline: Result<Option<Instant>, Failure>,
    ) -> Result<Option<Instant>, Failure> {
        deadline.map(|d| d.or_else(|| Instant::now().checked_add(self.shared.limits.max_call?)))
    }

    /// Answers a unary call with `answer` in its `span` ([`traces::call_span`]):
    /// its log line, a panic kept inside the call, the failure's status, and
    /// the answer's bytes charged to its connection (see [`Room`]).
    async fn unary<T: prost::Message>(
        &self,
        span: tracing::Span,
        room: Room<'_>,
        answer: impl std::future::Future<Output = Result<T, Failure>>,
    ) -> Result<Response<T>, Status> {
        self.unary_counted(span, room, answer, |_| ()).await
    }

    /// [`Self::unary`], with `on_failure` told of a failure (a panic
    /// included) before it becomes the call's status.
    async fn unary_counted<T: prost::Message>(
        &self,
        span: tracing::Span,
        room: Room<'_>,
        answer: impl std::future::Future<Output = Result<T, Failure>>,
        on_failure: impl FnOnce(&Failure),
    ) -> Result<Response<T>, Status> {
        let started = Instant::now();
        let charged = async {
            // Before the work: a connection whose answers wait unread makes
            // no more of them until the client reads.
            let charge = room.charge().await?;
            Ok((answer.await?, charge))
        };
        let result = AssertUnwindSafe(charged)
            .catch_unwind()
            .instrument(span.clone())
            .await
            .unwrap_or(Err(Failure::Panicked));
        let _enter = span.enter();
        match result {
            Ok((reply, charge)) => {
                traces::record_code(&span, tonic::Code::Ok);
                tracing::debug!(
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "call done"
                );
                let mut response = Response::new(reply);
                if let Some(mut charge) = charge {
                    let bytes = response.get_ref().encoded_len();
                    charge.shrink_to(bytes);
                    // The bound is meant to hold (the tests check it); past
                    // it, the answer holds what it can get.
                    let _ = charge.try_grow_to(bytes);
                    response.extensions_mut().insert(AnswerCharge::new(charge));
                }
                Ok(response)
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

/// Where a unary answer's bytes are charged: the connection's `share`
/// (none: not charged), `bound` bytes from before the answer is made, until
/// the server has handed it to HTTP/2 ([`AnswerCharge`]). The charge waits
/// for the connection's own share, up to the call's `deadline`; a server
/// budget without the bytes sheds the call.
struct Room<'a> {
    share: Option<&'a Share>,
    bound: usize,
    deadline: Option<Instant>,
}

impl<'a> Room<'a> {
    /// The room of a call whose deadline parsed as `deadline` (a malformed
    /// one fails the call itself; its answer then waits for nothing).
    fn new(
        share: Option<&'a Share>,
        bound: usize,
        deadline: &Result<Option<Instant>, Failure>,
    ) -> Room<'a> {
        Room {
            share,
            bound,
            deadline: deadline.as_ref().ok().copied().flatten(),
        }
    }

    async fn charge(&self) -> Result<Option<Charge>, Failure> {
        let Some(share) = self.share else {
            return Ok(None);
        };
        let charge = share.charge_or_shed(Purpose::Answers, self.bound);
        let charge = match self.deadline {
            None => charge.await,
            Some(d) => tokio::time::timeout_at(d.into(), charge)
                .await
                .map_err(|_| Failure::DeadlineExceeded)?,
        };
        charge.map(Some).ok_or(Failure::Overloaded)
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
        let room = Room::new(
            share,
            request.get_ref().encoded_len() + ANSWER_OVER_GRID_BYTES,
            &deadline,
        );
        let answer = async {
            let solution = self
                .solve_unary(request.get_ref(), deadline?, tenant, share)
                .await?;
            record_solution(&tracing::Span::current(), &solution);
            Ok(pb::SolveResponse {
                solution: Some(solution),
            })
        };
        self.unary_counted(span, room, answer, |failure| {
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
        let room = Room::new(share, validate_answer_bound(request.get_ref()), &deadline);
        self.unary(
            traces::call_span("Validate", request.metadata()),
            room,
            async {
                self.validate_unary(request.get_ref(), deadline?, tenant, share)
                    .await
            },
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
        let room = Room::new(
            request.extensions().get::<Share>(),
            HINT_ANSWER_BYTES,
            &deadline,
        );
        let share = request.extensions().get::<Share>();
        let answer = async {
            self.hint_unary(request.get_ref(), deadline?, tenant, share)
                .await
        };
        self.unary(span, room, answer).await
    }

    async fn rate(
        &self,
        request: Request<pb::RateRequest>,
    ) -> Result<Response<pb::RateResponse>, Status> {
        let deadline = self.bounded(deadline_of(request.metadata()));
        let tenant = tenant_of(&request);
        let span = traces::call_span("Rate", request.metadata());
        let room = Room::new(
            request.extensions().get::<Share>(),
            RATE_ANSWER_BYTES,
            &deadline,
        );
        let share = request.extensions().get::<Share>();
        let answer = async {
            self.rate_unary(request.get_ref(), deadline?, tenant, share)
                .await
        };
        self.unary(span, room, answer).await
    }

    type GenerateStream = GenerateStream;

    async fn generate(
        &self,
        request: Request<pb::GenerateRequest>,
    ) -> Result<Response<Self::GenerateStream>, Status> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown.into());
        }
        let deadline = self.bounded(deadline_of(request.metadata()))?;
        let tenant = tenant_of(&request);
        let plan = parse_generate(request.get_ref(), fresh_seed, self.shared.limits.max_nodes)?;
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
        let deadline = deadline_of(request.metadata())?;
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
        let opened = deadline.and_then(|deadline| {
            self.open_stream(request.into_inner(), span.clone(), deadline, tenant, share)
        });
        match opened {
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
/// when its solver outgrows it (see `UnarySearch`). No share (a service
/// without the server's connections): nothing to charge.
fn sized_charge(share: Option<&Share>, grid: &SizedGrid) -> Result<Option<Charge>, Failure> {
    let Some(share) = share else {
        return Ok(None);
    };
    let bytes = sudoku_core::solver::sized::SizedSolver::footprint(grid.shape().cells());
    share
        .try_charge(Purpose::Messages, bytes)
        .map(Some)
        .ok_or(Failure::Overloaded)
}

/// Validate's scans of `puzzle` (and the player's `current` grid): the
/// first conflicts and their count, and the blank cells left without a
/// candidate; the search's fields are left for the caller.
fn scan(puzzle: &AnyGrid, current: Option<&AnyGrid>) -> pb::ValidateResponse {
    // One scan for every shape (a 9x9 grid read as the sized model).
    let scanned = |g: &AnyGrid| {
        let g = match g {
            AnyGrid::Nine(g, _) => SizedGrid::from_grid(g),
            AnyGrid::Sized(g, _) => g.clone(),
        };
        let (conflicts, total) = conflicts_to_pb(&g);
        let stuck = g.cells_without_candidates().into_iter();
        (conflicts, total, stuck.map(|i| i as u32).collect())
    };
    let (conflicts, conflict_count, no_candidate_cells) = scanned(puzzle);
    let mut response = pb::ValidateResponse {
        conflicts,
        conflict_count,
        no_candidate_cells,
        search_complete: true,
        ..Default::default()
    };
    if let Some(current) = current {
        let (conflicts, count, stuck) = scanned(current);
        response.current_conflicts = conflicts;
        response.current_conflict_count = count;
        response.current_no_candidate_cells = stuck;
    }
    response
}

/// The logical solver's share of the work budget: how often it may ask
/// whether to go on. It asks before each technique of SE's ladder and each
/// chain a chain search starts, about a microsecond of work apart, an
/// engine's search node a tenth of that: ten asks to a node. At the
/// default budget (5,000,000 nodes) that is 50,000,000 asks, more than the
/// 27,600,000 the slowest of the forum's hardest puzzles in
/// data/se_reference.txt needs (about 30 s of work).
fn logic_budget(max_nodes: u64) -> u64 {
    max_nodes.saturating_mul(10)
}

/// The logical solver's check: go on while the caller still wants the
/// answer and `asked` (counted here) is within `budget`; past the budget
/// `asked` says so.
fn within<'a>(
    budget: u64,
    asked: &'a mut u64,
    wanted: &'a dyn Fn() -> bool,
) -> impl FnMut() -> bool + 'a {
    move || {
        *asked += 1;
        *asked <= budget && wanted()
    }
}

/// Validate's refusal of a current grid whose shape is not the puzzle's.
fn other_shape(shape: Shape) -> Failure {
    violation(
        "current.box_rows",
        format!("current must have the puzzle's shape, {}", shape.describe()),
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::convert::MAX_LISTED_CONFLICTS;
    use crate::service::{Budget, Limits};
    use tokio_util::sync::CancellationToken;

    const CLASSIC: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

    fn service() -> Sudoku {
        let limits = Limits::on_the_calling_thread(1_000_000);
        Sudoku::new(limits, CancellationToken::new()).unwrap()
    }

    /// Validates `msg` on a connection of `share`: the answer, and what it
    /// holds of the share.
    async fn validate(msg: pb::ValidateRequest, share: &Share) -> (pb::ValidateResponse, usize) {
        let bound = validate_answer_bound(&msg);
        let mut request = Request::new(msg);
        request.extensions_mut().insert(share.clone());
        let response = service().validate(request).await.unwrap();
        let held = response.extensions().get::<AnswerCharge>().unwrap().bytes();
        let answer = response.into_inner();
        assert!(
            answer.encoded_len() <= bound,
            "{} > {bound}",
            answer.encoded_len()
        );
        (answer, held)
    }

    #[tokio::test]
    async fn a_grid_of_ones_lists_64_conflicts_and_counts_them_all() {
        let share = Budget::new(64 << 20, 16 << 20).share();
        let pool = share.available(Purpose::Messages);
        for (side, boxes) in [(9, 0), (16, 4), (64, 8)] {
            let grid = pb::Grid {
                cells: vec![1; side * side],
                box_rows: boxes,
                box_cols: boxes,
                ..Default::default()
            };
            let msg = pb::ValidateRequest {
                puzzle: Some(grid.clone()),
                current: Some(grid),
            };
            let asked = msg.encoded_len();
            let (answer, held) = validate(msg, &share).await;
            eprintln!("{side}x{side} ones: {asked} bytes asked, {held} answered");
            let pairs = (3 * side * side * (side - 1) / 2) as u32;
            assert_eq!(answer.conflict_count, pairs, "{side}x{side}");
            assert_eq!(answer.current_conflict_count, pairs, "{side}x{side}");
            assert_eq!(answer.conflicts.len(), MAX_LISTED_CONFLICTS);
            assert_eq!(answer.current_conflicts.len(), MAX_LISTED_CONFLICTS);
            assert!(!answer.solvable);
            // The answer held its encoded size until it was dropped (with
            // the response's extensions).
            assert_eq!(held, answer.encoded_len());
            assert!(held < 3 << 10, "{side}x{side}: {held} bytes");
            assert_eq!(share.available(Purpose::Messages), pool);
        }
    }

    #[tokio::test]
    async fn a_player_grid_answer_stays_within_its_bound() {
        let share = Budget::new(64 << 20, 16 << 20).share();
        let mut current = CLASSIC.as_bytes().to_vec();
        // Wrong digits in every blank of the first rows.
        for (i, c) in current.iter_mut().enumerate().take(27) {
            if *c == b'.' {
                *c = b'1' + (i % 9) as u8;
            }
        }
        let text = |t: &[u8]| pb::Grid {
            text: String::from_utf8(t.to_vec()).unwrap(),
            ..Default::default()
        };
        let msg = pb::ValidateRequest {
            puzzle: Some(text(CLASSIC.as_bytes())),
            current: Some(text(&current)),
        };
        let (answer, held) = validate(msg, &share).await;
        assert!(answer.unique);
        assert!(answer.current_conflict_count > 0);
        assert!(!answer.wrong_cells.is_empty());
        assert_eq!(held, answer.encoded_len());
    }

    #[tokio::test]
    async fn an_answer_waits_for_the_connections_unread_answers() {
        // One pool of the share holds 16 KB: less than two 64x64 bounds.
        let share = Budget::new(1 << 20, 32 << 10).share();
        let hog = share.try_charge(Purpose::Messages, 12 << 10).unwrap();
        let msg = pb::ValidateRequest {
            puzzle: Some(pb::Grid {
                cells: vec![0; 64 * 64],
                box_rows: 8,
                box_cols: 8,
                ..Default::default()
            }),
            current: None,
        };
        let mut request = Request::new(msg.clone());
        request.extensions_mut().insert(share.clone());
        request.set_timeout(std::time::Duration::from_millis(100));
        let deadline = deadline_of(request.metadata()).unwrap();
        let svc = service();
        let room = Room {
            share: Some(&share),
            bound: validate_answer_bound(&msg),
            deadline,
        };
        let answer = svc.validate_unary(&msg, deadline, Tenant::default(), Some(&share));
        let status = svc.unary(tracing::Span::none(), room, answer).await;
        assert_eq!(status.unwrap_err().code(), tonic::Code::DeadlineExceeded);
        drop(hog);
        assert_eq!(share.available(Purpose::Messages), 16 << 10);
    }
}
