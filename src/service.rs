//! The gRPC face of the engine: the only module that knows both the wire
//! types in [`crate::pb`] and the domain types in [`crate::grid`] and
//! [`crate::solver`]. Handlers are thin: validate, convert, solve, convert back.
//! Every failure is a [`Failure`], and `From<Failure> for Status` is the whole
//! status map.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::{FutureExt, Stream, StreamExt};
use prost::Message;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Request, Response, Status, Streaming};
use tonic_types::{ErrorDetails, StatusExt};
use tracing::Instrument;

use crate::config::Config;
use crate::grid::{Grid, GridError};
use crate::pb::{self, sudoku_service_server::SudokuService};
use crate::pool::{Pool, with_thread_solver};
use crate::solver::{Answer, Progress, Solver};

/// The largest `max_solutions` a caller may ask for.
pub const MAX_SOLUTIONS_LIMIT: u32 = 1_000_000;

/// Limits the service applies to every call.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Work budget per puzzle, in search nodes.
    pub max_nodes: u64,
    /// Nodes solved between deadline/cancellation checks.
    pub slice_nodes: u64,
    /// Unary calls and batch messages solved at once, server-wide.
    pub max_in_flight: usize,
    /// Request messages of one stream solved at once.
    pub stream_window: usize,
    /// Items allowed in one batch request message.
    pub max_batch_items: usize,
    /// Tasks that solve one stream's messages in parallel.
    pub stream_workers: usize,
    /// Threads that run searches longer than `inline_nodes`, and batch
    /// messages; 0 runs them on the calling thread (fuzzing hook).
    pub solver_threads: usize,
    /// Nice value added to the solver threads' (see [`crate::pool`]).
    pub solver_nice: i32,
    /// Search nodes a unary call solves on arrival, on the runtime thread
    /// that read it; a search that needs more moves to a solver thread.
    pub inline_nodes: u64,
}

impl Limits {
    /// The limits a server started with `config` applies.
    pub fn from_config(config: &Config) -> Limits {
        Limits {
            max_nodes: config.max_nodes.max(1),
            slice_nodes: config.slice_nodes.max(1),
            max_in_flight: config.max_in_flight.max(1),
            stream_window: config.stream_window.max(1),
            max_batch_items: config.max_batch_items.max(1),
            stream_workers: config.worker_threads(),
            solver_threads: config.worker_threads(),
            solver_nice: config.solver_nice,
            inline_nodes: config.inline_nodes,
        }
    }
}

/// Names of the puzzle outcomes counted in [`Gauges::puzzles`], in index order.
pub const OUTCOME_NAMES: [&str; 6] = [
    "solved",
    "no_solution",
    "multiple_solutions",
    "work_limit_reached",
    "invalid",
    "failed",
];

/// Counters and gauges of the service's own work: plain atomics, published
/// to metrics off the hot path.
#[derive(Debug, Default)]
pub struct Gauges {
    /// Puzzles being solved right now.
    pub solving: AtomicUsize,
    /// SolveBatch streams open right now.
    pub open_streams: AtomicUsize,
    /// Puzzles answered since start, by outcome (see [`OUTCOME_NAMES`]).
    pub puzzles: [AtomicU64; 6],
    /// SolveBatch request messages answered since start.
    pub batch_messages: AtomicU64,
}

impl Gauges {
    fn count(&self, kind: usize) {
        self.puzzles[kind].fetch_add(1, Ordering::Relaxed);
    }

    fn count_outcome(&self, outcome: pb::Outcome) {
        self.count(match outcome {
            pb::Outcome::Solved | pb::Outcome::Unspecified => 0,
            pb::Outcome::NoSolution => 1,
            pb::Outcome::MultipleSolutions => 2,
            pb::Outcome::WorkLimitReached => 3,
        });
    }

    fn count_failure(&self, failure: &Failure) {
        self.count(match failure {
            Failure::Invalid(_) => 4,
            _ => 5,
        });
    }
}

/// `sudoku.v1.SudokuService`: one per server, cheap to clone.
#[derive(Clone)]
pub struct Sudoku {
    shared: Arc<Shared>,
}

struct Shared {
    limits: Limits,
    permits: Semaphore,
    pool: Pool,
    shutdown: CancellationToken,
    gauges: Arc<Gauges>,
    /// Test hook: solving exactly this grid panics, to show a panic stays
    /// inside its call.
    panic_on: Option<Grid>,
}

/// The puzzle a request asked about, validated.
#[derive(Debug, Clone, Copy)]
struct Job {
    grid: Grid,
    form: Form,
    /// Solutions to look for: 1 in "any" mode.
    limit: u32,
}

/// Which wire form the puzzle came in; the solution goes back in the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Text,
    Cells,
}

/// One field of a request that is wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    field: String,
    description: String,
}

/// What an overloaded server asks retrying clients to wait, in
/// milliseconds (`grpc-retry-pushback-ms` on RESOURCE_EXHAUSTED).
pub const OVERLOAD_PUSHBACK_MS: &str = "50";

/// Why a call, or an item of a batch, failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failure {
    /// The request is malformed or its givens break the rules.
    Invalid(Vec<Violation>),
    /// A batch message carried more items than allowed.
    TooManyItems { found: usize, max: usize },
    /// The client's deadline passed.
    DeadlineExceeded,
    /// The client went away.
    Cancelled,
    /// The server is at its limit of concurrent work.
    Overloaded,
    /// The server is draining before it exits.
    ShuttingDown,
    /// A bug: the handler panicked.
    Panicked,
}

impl From<Failure> for Status {
    fn from(f: Failure) -> Status {
        match f {
            Failure::Invalid(violations) => {
                let message = violations
                    .iter()
                    .map(|v| format!("{}: {}", v.field, v.description))
                    .collect::<Vec<_>>()
                    .join("; ");
                let mut details = ErrorDetails::new();
                for v in violations {
                    details.add_bad_request_violation(v.field, v.description);
                }
                Status::with_error_details(Code::InvalidArgument, message, details)
            }
            Failure::TooManyItems { found, max } => Status::resource_exhausted(format!(
                "a SolveBatch message carries {found} items; the limit is {max}"
            )),
            Failure::DeadlineExceeded => {
                Status::deadline_exceeded("the deadline passed before the solver finished")
            }
            Failure::Cancelled => Status::cancelled("the call was cancelled"),
            Failure::Overloaded => {
                let mut status = Status::resource_exhausted(
                    "the server is at its limit of concurrent work; retry with back-off",
                );
                // gRPC retry pushback: a client whose retry policy lists
                // RESOURCE_EXHAUSTED waits this long instead of its own
                // back-off. Callers retrying at once cost the admitted calls
                // CPU (README, capacity at 2x).
                status.metadata_mut().insert(
                    "grpc-retry-pushback-ms",
                    MetadataValue::from_static(OVERLOAD_PUSHBACK_MS),
                );
                status
            }
            Failure::ShuttingDown => {
                Status::unavailable("the server is shutting down; retry on another instance")
            }
            Failure::Panicked => Status::internal("internal error while solving this puzzle"),
        }
    }
}

impl Failure {
    /// The same failure with `prefix.` before each field path, for items of a batch.
    fn prefixed(self, prefix: &str) -> Failure {
        match self {
            Failure::Invalid(vs) => Failure::Invalid(
                vs.into_iter()
                    .map(|v| Violation {
                        field: format!("{prefix}.{}", v.field),
                        description: v.description,
                    })
                    .collect(),
            ),
            other => other,
        }
    }
}

fn violation(field: impl Into<String>, description: impl Into<String>) -> Failure {
    Failure::Invalid(vec![Violation {
        field: field.into(),
        description: description.into(),
    }])
}

fn grid_failure(field: &str, err: GridError) -> Failure {
    let field = match &err {
        GridError::OutOfRange { cell, .. } => format!("{field}.cells[{}]", cell.0),
        GridError::WrongCount { .. } => format!("{field}.cells"),
        GridError::WrongLength { .. } | GridError::BadChar { .. } => format!("{field}.text"),
        GridError::Conflict { .. } => field.to_string(),
    };
    violation(field, err.to_string())
}

/// Reads a wire grid (exactly one form set) and checks its givens.
fn parse_grid(grid: Option<&pb::Grid>, field: &str) -> Result<(Grid, Form), Failure> {
    let Some(g) = grid else {
        return Err(violation(
            field,
            "required: set text (81 characters) or cells (81 integers)",
        ));
    };
    let (parsed, form) = match (g.text.is_empty(), g.cells.is_empty()) {
        (false, true) => (Grid::from_text(&g.text), Form::Text),
        (true, false) => (Grid::from_cells(&g.cells), Form::Cells),
        (false, false) => {
            return Err(violation(field, "set only one of text and cells, not both"));
        }
        (true, true) => {
            return Err(violation(
                field,
                "empty: set text (81 characters) or cells (81 integers)",
            ));
        }
    };
    let grid = parsed.map_err(|e| grid_failure(field, e))?;
    grid.check_givens().map_err(|e| grid_failure(field, e))?;
    Ok((grid, form))
}

/// Reads the options into the number of solutions to look for.
fn parse_limit(options: Option<&pb::SolveOptions>, field: &str) -> Result<u32, Failure> {
    let Some(o) = options else { return Ok(1) };
    match pb::SolveMode::try_from(o.mode) {
        Ok(pb::SolveMode::Unspecified | pb::SolveMode::Any) => Ok(1),
        Ok(pb::SolveMode::Count) => match o.max_solutions {
            0 => Ok(2),
            n if n <= MAX_SOLUTIONS_LIMIT => Ok(n),
            n => Err(violation(
                format!("{field}.max_solutions"),
                format!("{n} is out of range; expected 0 (default 2) to {MAX_SOLUTIONS_LIMIT}"),
            )),
        },
        Err(_) => Err(violation(
            format!("{field}.mode"),
            format!("unknown mode {}", o.mode),
        )),
    }
}

/// The deadline the client set with `grpc-timeout`, if any.
fn deadline_of(metadata: &MetadataMap) -> Option<Instant> {
    let raw = metadata.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = raw.split_at(raw.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    let d = match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    };
    Instant::now().checked_add(d)
}

fn outcome(answer: &Answer) -> pb::Outcome {
    match (answer.complete, answer.count) {
        (false, _) => pb::Outcome::WorkLimitReached,
        (true, 0) => pb::Outcome::NoSolution,
        (true, 1) => pb::Outcome::Solved,
        (true, _) => pb::Outcome::MultipleSolutions,
    }
}

fn to_pb(answer: &Answer, job: &Job, elapsed: Duration) -> pb::Solution {
    let grid = answer.solution.map(|s| match job.form {
        Form::Text => pb::Grid {
            text: s.to_text(),
            cells: Vec::new(),
        },
        Form::Cells => pb::Grid {
            text: String::new(),
            cells: s.to_cells(),
        },
    });
    pb::Solution {
        outcome: outcome(answer) as i32,
        grid,
        solution_count: u64::from(answer.count),
        stats: Some(pb::SolveStats {
            guesses: answer.stats.guesses,
            nodes: answer.stats.nodes,
            solve_time_us: elapsed.as_micros() as u64,
        }),
    }
}

/// Decrements the solving gauge when a solve ends, however it ends.
struct SolvingGuard<'a>(&'a Gauges);

impl Drop for SolvingGuard<'_> {
    fn drop(&mut self) {
        self.0.solving.fetch_sub(1, Ordering::Relaxed);
    }
}

type SolveBatchStream = Pin<Box<dyn Stream<Item = Result<pb::SolveBatchResponse, Status>> + Send>>;

impl Sudoku {
    /// A service with `limits`; `shutdown` is cancelled when the server
    /// starts draining.
    pub fn new(limits: Limits, shutdown: CancellationToken) -> std::io::Result<Sudoku> {
        Ok(Sudoku {
            shared: Arc::new(Shared {
                permits: Semaphore::new(limits.max_in_flight),
                pool: Pool::new(limits.solver_threads, limits.solver_nice)?,
                limits,
                shutdown,
                gauges: Arc::new(Gauges::default()),
                panic_on: None,
            }),
        })
    }

    /// Test hook: solving exactly `grid` panics inside the solver path.
    #[doc(hidden)]
    pub fn with_panic_on(mut self, grid: Grid) -> Sudoku {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.panic_on = Some(grid);
        }
        self
    }

    /// The service's gauges, for metrics and tests.
    pub fn gauges(&self) -> Arc<Gauges> {
        self.shared.gauges.clone()
    }

    /// Solves one validated puzzle of a unary call: up to `inline_nodes`
    /// nodes at once on this thread (most puzzles need fewer), the rest on
    /// a solver thread. Dropping the future (client reset) stops the search
    /// at its next slice.
    async fn solve_job(
        &self,
        job: Job,
        deadline: Option<Instant>,
    ) -> Result<pb::Solution, Failure> {
        let shared = &self.shared;
        let inline = shared.limits.inline_nodes;
        let first = with_thread_solver(|solver| {
            Ok::<_, Failure>(
                match search(shared, solver, &job, inline, deadline, &|| false)? {
                    Searched::Done(answer, elapsed) => Ok((answer, elapsed)),
                    // The search moves on as it stands: redoing its inline
                    // nodes would cost more than copying it.
                    Searched::Paused(elapsed) => Err((Box::new(solver.clone()), elapsed)),
                },
            )
        })?;
        let (answer, elapsed) = match first {
            Ok(done) => done,
            Err((mut solver, elapsed)) => {
                let (reply, replied) = oneshot::channel();
                let task_shared = shared.clone();
                shared.pool.submit(Box::new(move |_| {
                    let cancelled = || reply.is_closed();
                    let result = slices(
                        &task_shared,
                        &mut solver,
                        u64::MAX,
                        deadline,
                        &cancelled,
                        elapsed,
                    )
                    .map(Searched::finished);
                    let _ = reply.send(result);
                }));
                let replied = match deadline {
                    None => replied.await,
                    Some(d) => tokio::time::timeout_at(d.into(), replied)
                        .await
                        .map_err(|_| Failure::DeadlineExceeded)?,
                };
                // A closed reply: the task panicked (and was logged).
                replied.map_err(|_| Failure::Panicked)??
            }
        };
        Ok(to_pb(&answer, &job, elapsed))
    }

    async fn solve_unary(
        &self,
        request: &pb::SolveRequest,
        deadline: Option<Instant>,
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
        self.solve_job(Job { grid, form, limit }, deadline).await
    }

    /// Answers one batch request message on a solver thread; `None` when
    /// the stream's deadline passed on the way, as then no further results
    /// are sent. Dropping the future (the client left, or the deadline)
    /// stops the work at the current item's next slice.
    async fn solve_message(
        &self,
        request: pb::SolveBatchRequest,
        deadline: Option<Instant>,
    ) -> Option<pb::SolveBatchResponse> {
        let (reply, replied) = oneshot::channel();
        let shared = self.shared.clone();
        self.shared.pool.submit(Box::new(move |solver| {
            let response = answer_items(&shared, solver, &request, deadline, &|| reply.is_closed());
            let _ = reply.send(response);
        }));
        // Panics are caught per item, so the reply always comes.
        replied.await.ok().flatten()
    }
}

/// How far a search got.
enum Searched {
    /// Finished (or out of the work budget `max_nodes`, which the answer
    /// says), after this much solving time.
    Done(Answer, Duration),
    /// Unfinished when the caller's node budget ran out.
    Paused(Duration),
}

impl Searched {
    /// The answer and solving time of a search run without a node budget,
    /// which always finishes.
    fn finished(self) -> (Answer, Duration) {
        match self {
            Searched::Done(answer, elapsed) => (answer, elapsed),
            Searched::Paused(_) => unreachable!("a search without a node budget finishes"),
        }
    }
}

/// Searches `job` in `solver` (restarted) for up to `budget` nodes; see
/// [`slices`].
fn search(
    shared: &Shared,
    solver: &mut Solver,
    job: &Job,
    budget: u64,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Searched, Failure> {
    if shared.panic_on == Some(job.grid) {
        panic!("test hook: panic while solving {}", job.grid);
    }
    solver.restart(&job.grid, job.limit);
    slices(shared, solver, budget, deadline, cancelled, Duration::ZERO)
}

/// Goes on with the search in `solver` in slices of `slice_nodes` until it
/// is done, has run `budget` nodes in all, or the work budget is spent,
/// checking the deadline and `cancelled` before each slice. `elapsed` is
/// the solving time so far.
fn slices(
    shared: &Shared,
    solver: &mut Solver,
    budget: u64,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    mut elapsed: Duration,
) -> Result<Searched, Failure> {
    let limits = &shared.limits;
    shared.gauges.solving.fetch_add(1, Ordering::Relaxed);
    let _guard = SolvingGuard(&shared.gauges);
    loop {
        if past(deadline) {
            return Err(Failure::DeadlineExceeded);
        }
        if cancelled() {
            return Err(Failure::Cancelled);
        }
        let nodes = solver.answer().stats.nodes;
        if nodes >= limits.max_nodes {
            return Ok(done(shared, solver.answer(), elapsed));
        }
        if nodes >= budget {
            return Ok(Searched::Paused(elapsed));
        }
        let step = (limits.max_nodes - nodes)
            .min(budget - nodes)
            .min(limits.slice_nodes);
        let started = Instant::now();
        let progress = solver.resume(step);
        elapsed += started.elapsed();
        if progress != Progress::Paused {
            return Ok(done(shared, solver.answer(), elapsed));
        }
    }
}

/// A finished search, counted by outcome while it still counts as solving,
/// so a puzzle is never counted after the solving gauge says it stopped.
fn done(shared: &Shared, answer: Answer, elapsed: Duration) -> Searched {
    shared.gauges.count_outcome(outcome(&answer));
    Searched::Done(answer, elapsed)
}

/// Answers the items of one batch message in order, on the calling
/// (solver) thread; `None` when the deadline passed or `cancelled` said so
/// on the way. A panic while solving an item answers that item INTERNAL.
fn answer_items(
    shared: &Shared,
    solver: &mut Solver,
    request: &pb::SolveBatchRequest,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
) -> Option<pb::SolveBatchResponse> {
    let limit = parse_limit(request.options.as_ref(), "options");
    let mut results = Vec::with_capacity(request.items.len());
    for (i, item) in request.items.iter().enumerate() {
        let outcome = match (&limit, parse_grid(item.puzzle.as_ref(), "puzzle")) {
            (Err(e), _) => Err(e.clone()),
            (_, Err(e)) => Err(e.prefixed(&format!("items[{i}]"))),
            (Ok(limit), Ok((grid, form))) => {
                let job = Job {
                    grid,
                    form,
                    limit: *limit,
                };
                let searched = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    search(shared, solver, &job, u64::MAX, deadline, cancelled)
                }));
                match searched {
                    Ok(Ok(searched)) => {
                        let (answer, elapsed) = searched.finished();
                        Ok(to_pb(&answer, &job, elapsed))
                    }
                    Ok(Err(failure)) => Err(failure),
                    Err(_) => Err(Failure::Panicked),
                }
            }
        };
        let result = match outcome {
            // Stream-level ends: the reader task reports them as the
            // stream's status.
            Err(Failure::DeadlineExceeded | Failure::Cancelled) => return None,
            Ok(solution) => pb::batch_result::Result::Solution(solution),
            Err(failure) => {
                shared.gauges.count_failure(&failure);
                if failure == Failure::Panicked {
                    tracing::error!(id = item.id, "solver panicked on a batch item");
                }
                pb::batch_result::Result::Error(to_rpc_status(failure.into()))
            }
        };
        results.push(pb::BatchResult {
            id: item.id,
            result: Some(result),
        });
    }
    shared.gauges.batch_messages.fetch_add(1, Ordering::Relaxed);
    Some(pb::SolveBatchResponse { results })
}

/// Whether `deadline` has passed.
fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Resolves when `deadline` passes; never without one.
async fn expiry(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

/// The google.rpc.Status a per-item failure travels as: the same code,
/// message and details the unary call would have returned.
fn to_rpc_status(status: Status) -> tonic_types::pb::Status {
    if !status.details().is_empty()
        && let Ok(decoded) = tonic_types::pb::Status::decode(status.details())
    {
        return decoded;
    }
    tonic_types::pb::Status {
        code: status.code() as i32,
        message: status.message().to_string(),
        details: Vec::new(),
    }
}

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

#[tonic::async_trait]
impl SudokuService for Sudoku {
    async fn solve(
        &self,
        request: Request<pb::SolveRequest>,
    ) -> Result<Response<pb::SolveResponse>, Status> {
        let deadline = deadline_of(request.metadata());
        let span = tracing::debug_span!("call", method = "Solve", code = tracing::field::Empty);
        let started = Instant::now();
        crate::metrics::call_started("Solve");
        let result = AssertUnwindSafe(self.solve_unary(request.get_ref(), deadline))
            .catch_unwind()
            .instrument(span.clone())
            .await
            .unwrap_or(Err(Failure::Panicked));
        let _enter = span.enter();
        match result {
            Ok(solution) => {
                span.record("code", "OK");
                crate::metrics::call_handled("Solve", Code::Ok, started.elapsed());
                tracing::debug!(
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "call done"
                );
                Ok(Response::new(pb::SolveResponse {
                    solution: Some(solution),
                }))
            }
            Err(failure) => {
                self.shared.gauges.count_failure(&failure);
                let status = Status::from(failure.clone());
                span.record("code", crate::metrics::code_name(status.code()));
                crate::metrics::call_handled("Solve", status.code(), started.elapsed());
                if failure == Failure::Panicked {
                    tracing::error!("handler panicked; answered INTERNAL");
                } else {
                    tracing::debug!(message = status.message(), "call failed");
                }
                Err(status)
            }
        }
    }

    type SolveBatchStream = SolveBatchStream;

    async fn solve_batch(
        &self,
        request: Request<Streaming<pb::SolveBatchRequest>>,
    ) -> Result<Response<Self::SolveBatchStream>, Status> {
        if self.shared.shutdown.is_cancelled() {
            return Err(Failure::ShuttingDown.into());
        }
        let deadline = deadline_of(request.metadata());
        let mut inbound = request.into_inner();
        let limits = self.shared.limits.clone();
        let (tx, rx) = mpsc::channel(limits.stream_window);
        let (work_tx, work_rx) =
            async_channel::bounded::<pb::SolveBatchRequest>(limits.stream_window);
        let span =
            tracing::debug_span!("call", method = "SolveBatch", code = tracing::field::Empty);
        let gauges = self.shared.gauges.clone();
        gauges.open_streams.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        crate::metrics::call_started("SolveBatch");

        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..limits.stream_workers {
            let svc = self.clone();
            let work_rx = work_rx.clone();
            let tx = tx.clone();
            workers.spawn(
                async move {
                    // Ends with true when the deadline cut work short.
                    let work = async {
                        while let Ok(msg) = work_rx.recv().await {
                            // Streams wait for a server-wide permit rather than
                            // failing: the wait pushes back on the sender.
                            let Ok(_permit) = svc.shared.permits.acquire().await else {
                                return false;
                            };
                            let Some(response) = svc.solve_message(msg, deadline).await else {
                                return past(deadline);
                            };
                            if tx.send(Ok(response)).await.is_err() {
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
                let end = loop {
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
                        Some(Ok(msg)) if msg.items.len() > max_items => {
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
                        Some(Ok(msg)) => tokio::select! {
                            biased;
                            _ = &mut sleep => break StreamEnd::Deadline,
                            _ = tx.closed() => break StreamEnd::Broken,
                            queued = work_tx.send(msg) => if queued.is_err() {
                                // Every worker stopped: the deadline passed or
                                // the client left.
                                break if past(deadline) { StreamEnd::Deadline } else { StreamEnd::Broken };
                            },
                        },
                    }
                };
                // Items already received are answered before the stream ends.
                work_tx.close();
                let mut expired = false;
                while let Some(joined) = workers.join_next().await {
                    expired |= joined.unwrap_or(false);
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
                tracing::Span::current().record("code", crate::metrics::code_name(code));
                crate::metrics::call_handled("SolveBatch", code, started.elapsed());
                tracing::debug!("stream done");
                if let Some(status) = status {
                    let _ = tx.send(Err(status)).await;
                }
                gauges.open_streams.fetch_sub(1, Ordering::Relaxed);
            }
            .instrument(span),
        );
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// Fuzzing hook, not an API: decodes `bytes` as a `SolveRequest` (or, when
/// `batch`, one `SolveBatchRequest` message) with prost, as tonic would, and
/// answers it through the handlers' own code (`solve_unary`,
/// `solve_message`) on the calling thread, with no deadline and a budget of
/// `max_nodes` search nodes solved in small slices (so pausing and resuming
/// are exercised). Solver panics are not caught on the unary path, so the
/// fuzzer sees them; on the batch path the handler turns them into INTERNAL
/// item errors, as in production. A unary answer comes back as a one-item
/// response with id 0. `Err` is what the call itself would end with: a
/// decode error (INTERNAL, as tonic reports it) or too many items.
#[doc(hidden)]
pub fn fuzz_request(
    bytes: &[u8],
    batch: bool,
    max_nodes: u64,
) -> Result<pb::SolveBatchResponse, Status> {
    let limits = Limits {
        max_nodes: max_nodes.max(1),
        slice_nodes: 64,
        max_in_flight: 1,
        stream_window: 1,
        max_batch_items: 1_024,
        stream_workers: 1,
        solver_threads: 0,
        solver_nice: 0,
        inline_nodes: 64,
    };
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
            svc.solve_message(msg, None)
                .await
                .ok_or_else(|| Status::internal("a batch without a deadline was cut short"))
        } else {
            let req = pb::SolveRequest::decode(bytes).map_err(decode_error)?;
            let result = match svc.solve_unary(&req, None).await {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_units() {
        let mut m = MetadataMap::new();
        m.insert("grpc-timeout", "5m".parse().unwrap());
        let d = deadline_of(&m).unwrap();
        assert!(d > Instant::now() && d <= Instant::now() + Duration::from_millis(5));
        m.insert("grpc-timeout", "bogus".parse().unwrap());
        assert!(deadline_of(&m).is_none());
        m.insert("grpc-timeout", "1H".parse().unwrap());
        assert!(deadline_of(&m).unwrap() > Instant::now() + Duration::from_secs(3500));
    }

    #[test]
    fn outcomes() {
        let a = |count, complete| Answer {
            solution: None,
            count,
            complete,
            stats: Default::default(),
        };
        assert_eq!(outcome(&a(0, true)), pb::Outcome::NoSolution);
        assert_eq!(outcome(&a(0, false)), pb::Outcome::WorkLimitReached);
        assert_eq!(outcome(&a(1, true)), pb::Outcome::Solved);
        assert_eq!(outcome(&a(1, false)), pb::Outcome::WorkLimitReached);
        assert_eq!(outcome(&a(2, true)), pb::Outcome::MultipleSolutions);
        assert_eq!(outcome(&a(5, false)), pb::Outcome::WorkLimitReached);
    }

    #[test]
    fn both_forms_and_neither_are_rejected() {
        let both = pb::Grid {
            text: ".".repeat(81),
            cells: vec![0; 81],
        };
        assert!(matches!(
            parse_grid(Some(&both), "puzzle"),
            Err(Failure::Invalid(_))
        ));
        assert!(matches!(
            parse_grid(Some(&pb::Grid::default()), "puzzle"),
            Err(Failure::Invalid(_))
        ));
        assert!(matches!(
            parse_grid(None, "puzzle"),
            Err(Failure::Invalid(_))
        ));
    }

    #[test]
    fn limits_are_checked() {
        let count = |n| pb::SolveOptions {
            mode: pb::SolveMode::Count as i32,
            max_solutions: n,
        };
        assert_eq!(parse_limit(Some(&count(0)), "options"), Ok(2));
        assert_eq!(parse_limit(Some(&count(7)), "options"), Ok(7));
        assert!(parse_limit(Some(&count(MAX_SOLUTIONS_LIMIT + 1)), "options").is_err());
        let bad_mode = pb::SolveOptions {
            mode: 99,
            max_solutions: 0,
        };
        assert!(parse_limit(Some(&bad_mode), "options").is_err());
    }
}
