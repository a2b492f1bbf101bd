//! Where and how long work runs: a unary call's first nodes inline on the
//! runtime thread that read it, the rest of its search and every batch
//! message on a solver thread ([`super::pool`]) in turns shared out between
//! connections, all of it in slices of `slice_nodes` with the deadline, the
//! client's presence, the work budget and the end of the turn checked
//! between slices. This is where a deadline stops the solver.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tracing::Instrument as _;

use super::budget::{Charge, Purpose, Share};
use super::convert::{
    AnyGrid, GeneratePlan, Job, SizedJob, generated_to_pb, outcome, outcome_of, parse_any,
    parse_limit, sized_answer_to_pb, sized_generated_to_pb, to_pb,
};
use super::pool::{Step, Turn, Work, give_sized_solver, take_sized_solver, with_thread_solver};
use super::status::{Failure, to_rpc_status};
use super::{Shared, Sudoku, Tenant};
use crate::pb;
use crate::telemetry::metrics::{Gauges, PuzzleOutcome};
use crate::telemetry::traces;
use sudoku_core::generate::sized::{SizedMaker, SizedPuzzle};
use sudoku_core::generate::{Generated, Poll, Search, Target};
use sudoku_core::logic::Rating;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::sized::SizedSolver;
use sudoku_core::solver::{Answer, Progress, Solver};

impl Sudoku {
    /// Solves one validated puzzle of a unary call from `tenant`: up to
    /// `inline_nodes` nodes at once on this thread (most puzzles need
    /// fewer), the rest on a solver thread. Dropping the future (client
    /// reset) stops the search at its next slice.
    pub(super) async fn solve_job(
        &self,
        job: Job,
        deadline: Option<Instant>,
        tenant: Tenant,
    ) -> Result<pb::Solution, Failure> {
        let (answer, elapsed) = self.search_job(job, deadline, tenant).await?;
        Ok(to_pb(&answer, &job, elapsed))
    }

    /// [`Self::solve_job`]'s search, its answer as the engine gives it
    /// (for Hint's fallback, which needs the solution as a grid), with the
    /// solving time.
    pub(super) async fn search_job(
        &self,
        job: Job,
        deadline: Option<Instant>,
        tenant: Tenant,
    ) -> Result<(Answer, Duration), Failure> {
        let shared = &self.shared;
        let inline = shared.limits.inline_nodes;
        let first = with_thread_solver(|solver| {
            Ok::<_, Failure>(
                match search(
                    shared,
                    solver,
                    &job,
                    inline,
                    deadline,
                    &|| false,
                    &Turn::UNBOUNDED,
                )? {
                    Searched::Done(answer, elapsed) => Ok((answer, elapsed)),
                    // The search moves on as it stands: redoing its inline
                    // nodes would cost more than copying it.
                    Searched::Paused(elapsed) => Err((Box::new(solver.clone()), elapsed)),
                },
            )
        })?;
        let (answer, elapsed) = match first {
            Ok(done) => done,
            Err((solver, elapsed)) => {
                let span = traces::search_span(inline);
                let (reply, replied) = oneshot::channel();
                shared.pool.submit(
                    tenant,
                    Box::new(RestOfSearch {
                        shared: shared.clone(),
                        solver,
                        elapsed,
                        pending: Pending::new(deadline, reply),
                    }),
                );
                let (answer, elapsed) = reply_by(replied, deadline)
                    .instrument(span.clone())
                    .await??;
                if !span.is_disabled() {
                    let outcome = outcome(&answer).as_str_name();
                    let stats = &answer.stats;
                    traces::record_answer(&span, outcome, stats.nodes, stats.guesses);
                }
                (answer, elapsed)
            }
        };
        Ok((answer, elapsed))
    }

    /// Solves one validated puzzle of a size other than 9x9 for a unary
    /// call of `tenant`, all of it on a solver thread (in turns, as batch
    /// items are). Dropping the future stops the search at its next slice.
    pub(super) async fn solve_sized(
        &self,
        job: SizedJob,
        deadline: Option<Instant>,
        tenant: Tenant,
        charge: Option<Charge>,
    ) -> Result<pb::Solution, Failure> {
        let (reply, replied) = oneshot::channel();
        self.shared.pool.submit(
            tenant,
            Box::new(SizedSearch {
                shared: self.shared.clone(),
                job,
                charge,
                solver: None,
                elapsed: None,
                pending: Pending::new(deadline, reply),
            }),
        );
        reply_by(replied, deadline).await?
    }

    /// Answers one batch request message of `tenant` on a solver thread;
    /// `None` when the stream's deadline passed on the way, as then no
    /// further results are sent. Dropping the future (the client left, or
    /// the deadline) stops the work at the current item's next slice.
    ///
    /// `first_index` is where the message's first item stands in the
    /// client's request, for the field paths of errors: 0 for a SolveBatch
    /// message, the item's index for one of a SolveStream request's items.
    /// `charge` holds the message's bytes (see `stream.rs`); a sized item
    /// whose paused search outgrows its solver's footprint grows it, or is
    /// answered OVERLOADED. It comes back with the response.
    pub(super) async fn solve_message(
        &self,
        request: pb::SolveBatchRequest,
        first_index: usize,
        deadline: Option<Instant>,
        tenant: Tenant,
        charge: Option<Charge>,
    ) -> Option<MessageAnswer> {
        let parts = parts_of(&request, self.shared.pool.threads());
        if parts <= 1 {
            let (reply, replied) = oneshot::channel();
            let message = BatchMessage::new(
                self.shared.clone(),
                request,
                first_index,
                deadline,
                charge,
                reply,
            );
            self.shared.pool.submit(tenant, Box::new(message));
            // Panics are caught per item, so the reply always comes unless
            // the deadline passed or the caller left.
            let answer = replied.await.ok().flatten();
            if answer.is_some() {
                self.shared
                    .gauges
                    .batch_messages
                    .fetch_add(1, Ordering::Relaxed);
            }
            return answer;
        }
        // Parts of consecutive items, each a task of its own: the solver
        // threads share the message out instead of one of them solving it
        // while the others wait for the next. The first part carries the
        // charge (it holds no sized item, so no part grows it). The parts
        // put their results together in a joint, and the last one done
        // sends the response: this task wakes once, not once a part.
        let options = request.options;
        let total = request.items.len();
        let size = total.div_ceil(parts);
        let (reply, replied) = oneshot::channel();
        let joint = Arc::new(Joint::new(parts, reply));
        let mut items = request.items.into_iter();
        let mut charge = charge;
        // Held while the parts run: dropped, they tell the parts to stop.
        let mut waiting = Vec::with_capacity(parts);
        let mut start = 0;
        for index in 0..parts {
            let part: Vec<pb::BatchItem> = items.by_ref().take(size).collect();
            let taken = part.len();
            let part = pb::SolveBatchRequest {
                items: part,
                options,
            };
            let (alive, waits) = oneshot::channel();
            let message = BatchMessage::new(
                self.shared.clone(),
                part,
                first_index + start,
                deadline,
                charge.take(),
                Reply::Part {
                    alive,
                    joint: joint.clone(),
                    index,
                },
            );
            self.shared.pool.submit(tenant, Box::new(message));
            waiting.push(waits);
            start += taken;
        }
        let answer = replied.await.ok().flatten();
        drop(waiting);
        if answer.is_some() {
            self.shared
                .gauges
                .batch_messages
                .fetch_add(1, Ordering::Relaxed);
        }
        answer
    }
}

/// Where a batch message's answer goes: to the task that waits for it, or,
/// for a part of a message, into the message's [`Joint`].
enum Reply {
    Whole(oneshot::Sender<Option<MessageAnswer>>),
    Part {
        /// Closed when the waiting task is gone.
        alive: oneshot::Sender<()>,
        joint: Arc<Joint>,
        index: usize,
    },
}

impl From<oneshot::Sender<Option<MessageAnswer>>> for Reply {
    fn from(reply: oneshot::Sender<Option<MessageAnswer>>) -> Reply {
        Reply::Whole(reply)
    }
}

impl ReplyTo for Reply {
    type Answer = Option<MessageAnswer>;

    fn is_closed(&self) -> bool {
        match self {
            Reply::Whole(reply) => reply.is_closed(),
            Reply::Part { alive, .. } => alive.is_closed(),
        }
    }

    fn send(self, answer: Option<MessageAnswer>) {
        match self {
            Reply::Whole(reply) => {
                let _ = reply.send(answer);
            }
            Reply::Part { joint, index, .. } => joint.put(index, answer),
        }
    }
}

/// The parts of a message solved in parts, as they are answered: the last
/// one answered puts the response together, in item order, and sends it;
/// a part ended by the deadline or the caller's leaving (`None`) ends the
/// message at once.
struct Joint {
    state: Mutex<JointState>,
}

struct JointState {
    parts: Vec<Option<MessageAnswer>>,
    left: usize,
    /// Taken when the response (or `None`) is sent.
    reply: Option<oneshot::Sender<Option<MessageAnswer>>>,
}

impl Joint {
    fn new(parts: usize, reply: oneshot::Sender<Option<MessageAnswer>>) -> Joint {
        Joint {
            state: Mutex::new(JointState {
                parts: (0..parts).map(|_| None).collect(),
                left: parts,
                reply: Some(reply),
            }),
        }
    }

    fn put(&self, index: usize, answer: Option<MessageAnswer>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(answer) = answer else {
            if let Some(reply) = state.reply.take() {
                let _ = reply.send(None);
            }
            return;
        };
        state.parts[index] = Some(answer);
        state.left -= 1;
        if state.left > 0 {
            return;
        }
        let Some(reply) = state.reply.take() else {
            return;
        };
        let parts = std::mem::take(&mut state.parts);
        drop(state);
        let mut results =
            Vec::with_capacity(parts.iter().flatten().map(|(r, _)| r.results.len()).sum());
        let mut charge = None;
        for (part, held) in parts.into_iter().flatten() {
            results.extend(part.results);
            charge = charge.or(held);
        }
        let _ = reply.send(Some((pb::SolveBatchResponse { results }, charge)));
    }
}

/// Items below which a message is not cut further: a part costs a task, a
/// hand-over to a solver thread and a lock, a few microseconds, while 8
/// easy puzzles take tens.
const PART_ITEMS: usize = 8;

/// Parts a message is cut into at most, per solver thread. At the end of a
/// stream the threads wait for the slowest part of the last messages; with
/// 4 a thread, that part is an eighth of a message on 2 threads, not a
/// half (forum hardest through a server: 0.4 ms sooner in 14 ms). The
/// parts' results meet in a [`Joint`], so more parts cost the waiting task
/// no more wake-ups (with a wake-up a part, 17-clue ran 6% slower).
const PARTS_PER_THREAD: usize = 4;

/// How many parts a batch message is solved in: up to
/// [`PARTS_PER_THREAD`] per solver thread, of at least [`PART_ITEMS`] items
/// each, when all of its items are 9x9 (a grid of another size holds a
/// solver whose footprint the whole message's charge covers, so such a
/// message stays whole).
fn parts_of(request: &pb::SolveBatchRequest, threads: usize) -> usize {
    let nine = request.items.iter().all(|item| {
        item.puzzle
            .as_ref()
            .is_none_or(|g| g.box_rows == 0 && g.box_cols == 0)
    });
    if !nine {
        return 1;
    }
    (request.items.len() / PART_ITEMS).clamp(1, threads.max(1) * PARTS_PER_THREAD)
}

/// A batch message's response, with the charge it held.
type MessageAnswer = (pb::SolveBatchResponse, Option<Charge>);

/// The rest of a unary call's search, on a solver thread.
struct RestOfSearch {
    shared: Arc<Shared>,
    /// The search as the inline budget left it.
    solver: Box<Solver>,
    /// Solving time so far.
    elapsed: Duration,
    pending: Pending<oneshot::Sender<Result<(Answer, Duration), Failure>>>,
}

impl Work for RestOfSearch {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        let pending = &self.pending;
        let cancelled = || pending.cancelled();
        let searched = slices(
            &self.shared,
            &mut self.solver,
            u64::MAX,
            pending.deadline(),
            &cancelled,
            self.elapsed,
            turn,
        );
        let result = match searched {
            Ok(Searched::Paused(elapsed)) => {
                self.elapsed = elapsed;
                return Step::Unfinished;
            }
            Ok(Searched::Done(answer, elapsed)) => Ok((answer, elapsed)),
            Err(failure) => Err(failure),
        };
        self.pending.answer(result);
        Step::Done
    }
}

/// A unary call's search of a sized puzzle, on a solver thread.
struct SizedSearch {
    shared: Arc<Shared>,
    job: SizedJob,
    /// What the search holds of its connection's share, grown to its
    /// solver's heap bytes whenever it pauses (none: not charged).
    charge: Option<Charge>,
    /// The search between turns (none before the first).
    solver: Option<Box<SizedSolver>>,
    /// Solving time so far; none before the first turn.
    elapsed: Option<Duration>,
    pending: Pending<oneshot::Sender<Result<pb::Solution, Failure>>>,
}

impl Work for SizedSearch {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        let mut solver = self
            .solver
            .take()
            .unwrap_or_else(|| take_sized_solver(&self.job.grid));
        let pending = &self.pending;
        let cancelled = || pending.cancelled();
        let searched = sized_turn(
            &self.shared,
            &mut solver,
            &self.job,
            self.elapsed,
            pending.deadline(),
            &cancelled,
            turn,
        );
        // A paused solver stays in memory until its next turn: its bytes
        // must be charged, or the search ends as over-budget work does.
        let searched = match (searched, self.charge.as_mut()) {
            (ItemTurn::Paused(elapsed), Some(charge)) => {
                if charge.try_grow_to(solver.heap_bytes()) {
                    ItemTurn::Paused(elapsed)
                } else {
                    ItemTurn::Answered(Err(Failure::Overloaded))
                }
            }
            (searched, _) => searched,
        };
        match searched {
            ItemTurn::Paused(elapsed) => {
                self.elapsed = Some(elapsed);
                self.solver = Some(solver);
                Step::Unfinished
            }
            ItemTurn::Answered(result) => {
                give_sized_solver(solver);
                self.pending.answer(result);
                Step::Done
            }
        }
    }
}

/// One turn of a sized search: restarted on `job` unless `resumed` (the
/// solving time so far), to its end or the end of the turn. A panic
/// answers INTERNAL.
fn sized_turn(
    shared: &Shared,
    solver: &mut SizedSolver,
    job: &SizedJob,
    resumed: Option<Duration>,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    turn: &Turn,
) -> ItemTurn {
    let searched = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let elapsed = match resumed {
            Some(elapsed) => elapsed,
            None => {
                solver.restart(&job.grid, job.limit);
                Duration::ZERO
            }
        };
        slices_of(
            shared,
            &mut *solver,
            u64::MAX,
            deadline,
            cancelled,
            elapsed,
            turn,
        )
    }));
    match searched {
        Ok(Ok(Sliced::Done(elapsed))) => ItemTurn::Answered(Ok(sized_answer_to_pb(
            &solver.answer(),
            solver.solution().as_ref(),
            job,
            elapsed,
        ))),
        Ok(Ok(Sliced::Paused(elapsed))) => ItemTurn::Paused(elapsed),
        Ok(Err(failure)) => ItemTurn::Answered(Err(failure)),
        Err(_) => ItemTurn::Answered(Err(Failure::Panicked)),
    }
}

/// How far a search got.
enum Searched {
    /// Finished (or out of the work budget `max_nodes`, which the answer
    /// says), after this much solving time.
    Done(Answer, Duration),
    /// Unfinished when the caller's node budget ran out or its turn on a
    /// solver thread ended.
    Paused(Duration),
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
    turn: &Turn,
) -> Result<Searched, Failure> {
    #[cfg(feature = "test-hooks")]
    if shared.panic_on == Some(job.grid) {
        panic!("test hook: panic while solving {}", job.grid);
    }
    solver.restart(&job.grid, job.limit);
    slices(
        shared,
        solver,
        budget,
        deadline,
        cancelled,
        Duration::ZERO,
        turn,
    )
}

/// Decrements the solving gauge when a solve ends, however it ends.
struct SolvingGuard<'a>(&'a Gauges);

impl Drop for SolvingGuard<'_> {
    fn drop(&mut self) {
        self.0.solving.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A search that runs in slices: the 9x9 engine and the sized one.
trait Resumable {
    fn resume(&mut self, nodes: u64) -> Progress;
    fn nodes(&self) -> u64;
    fn outcome(&self) -> pb::Outcome;
}

impl Resumable for Solver {
    fn resume(&mut self, nodes: u64) -> Progress {
        Solver::resume(self, nodes)
    }
    fn nodes(&self) -> u64 {
        self.answer().stats.nodes
    }
    fn outcome(&self) -> pb::Outcome {
        outcome(&self.answer())
    }
}

impl Resumable for SizedSolver {
    fn resume(&mut self, nodes: u64) -> Progress {
        SizedSolver::resume(self, nodes)
    }
    fn nodes(&self) -> u64 {
        self.answer().stats.nodes
    }
    fn outcome(&self) -> pb::Outcome {
        let a = self.answer();
        outcome_of(a.complete, a.count)
    }
}

/// How far a search of either engine got: finished (the answer is in the
/// solver) or paused, after this much solving time.
enum Sliced {
    Done(Duration),
    Paused(Duration),
}

/// Goes on with the search in `solver` in slices of `slice_nodes` until it
/// is done, has run `budget` nodes in all, the work budget is spent, or
/// `turn` is over (asked after each slice, so a turn always makes
/// progress), checking the deadline and `cancelled` before each slice.
/// `elapsed` is the solving time so far.
fn slices(
    shared: &Shared,
    solver: &mut Solver,
    budget: u64,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    elapsed: Duration,
    turn: &Turn,
) -> Result<Searched, Failure> {
    Ok(
        match slices_of(shared, solver, budget, deadline, cancelled, elapsed, turn)? {
            Sliced::Done(elapsed) => Searched::Done(solver.answer(), elapsed),
            Sliced::Paused(elapsed) => Searched::Paused(elapsed),
        },
    )
}

/// [`slices`] for either engine.
fn slices_of<S: Resumable>(
    shared: &Shared,
    solver: &mut S,
    budget: u64,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    mut elapsed: Duration,
    turn: &Turn,
) -> Result<Sliced, Failure> {
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
        let nodes = solver.nodes();
        if nodes >= limits.max_nodes {
            return Ok(done(shared, solver.outcome(), elapsed));
        }
        if nodes >= budget {
            return Ok(Sliced::Paused(elapsed));
        }
        let step = (limits.max_nodes - nodes)
            .min(budget - nodes)
            .min(limits.slice_nodes);
        let started = Instant::now();
        let progress = solver.resume(step);
        elapsed += started.elapsed();
        if progress != Progress::Paused {
            return Ok(done(shared, solver.outcome(), elapsed));
        }
        if turn.over() {
            return Ok(Sliced::Paused(elapsed));
        }
    }
}

/// A finished search, counted by outcome while it still counts as solving,
/// so a puzzle is never counted after the solving gauge says it stopped.
fn done(shared: &Shared, outcome: pb::Outcome, elapsed: Duration) -> Sliced {
    shared.gauges.count(match outcome {
        pb::Outcome::Solved | pb::Outcome::Unspecified => PuzzleOutcome::Solved,
        pb::Outcome::NoSolution => PuzzleOutcome::NoSolution,
        pb::Outcome::MultipleSolutions => PuzzleOutcome::MultipleSolutions,
        pb::Outcome::WorkLimitReached => PuzzleOutcome::WorkLimitReached,
    });
    Sliced::Done(elapsed)
}

/// Counts a puzzle that failed instead of getting an answer.
pub(super) fn count_failure(gauges: &Gauges, failure: &Failure) {
    gauges.count(match failure {
        Failure::Invalid(_) => PuzzleOutcome::Invalid,
        _ => PuzzleOutcome::Failed,
    });
}

/// One batch request message, answered item by item in order on solver
/// threads, over as many turns as it takes. An item can span turns: its
/// search then moves out of the thread's solver into one of the message's
/// own, made the first time and kept for its later items.
struct BatchMessage {
    shared: Arc<Shared>,
    request: pb::SolveBatchRequest,
    /// The index of `request.items[0]` in the client's request.
    first_index: usize,
    /// The message's options, read once for all its items.
    limit: Result<u32, Failure>,
    /// The results of the items answered so far: the next item to answer
    /// is `request.items[results.len()]`.
    results: Vec<pb::BatchResult>,
    /// The item a turn ended in the middle of: its job, solving time so
    /// far and search.
    paused: Option<(Job, Duration, Box<Solver>)>,
    /// The same for a sized item.
    paused_sized: Option<(SizedJob, Duration, Box<SizedSolver>)>,
    /// The message's own solver while no item is paused in it.
    spare: Option<Box<Solver>>,
    /// What the message holds of the connection's budget, and what it held
    /// when it came (one sized solver's footprint included).
    charge: Option<Charge>,
    charged: usize,
    /// Where the response goes (or `None`, the stream's end).
    pending: Pending<Reply>,
}

/// Whether a paused sized search may stay in memory: its solver's bytes
/// beyond the footprint the message was charged for are charged too, when
/// the budget has them (a deep search's trail grows past the footprint).
fn keep_paused(
    charge: &mut Option<Charge>,
    charged: usize,
    solver: &SizedSolver,
    job: &SizedJob,
) -> bool {
    let over = solver
        .heap_bytes()
        .saturating_sub(SizedSolver::footprint(job.grid.shape().cells()));
    charge
        .as_mut()
        .is_none_or(|c| c.try_grow_to(charged.saturating_add(over)))
}

/// How an item's turn ended.
enum ItemTurn {
    /// With the item's answer (a failure answers this item only, except a
    /// deadline or cancellation, which end the stream).
    Answered(Result<pb::Solution, Failure>),
    /// Mid-search, after this much solving time.
    Paused(Duration),
}

impl BatchMessage {
    fn new(
        shared: Arc<Shared>,
        request: pb::SolveBatchRequest,
        first_index: usize,
        deadline: Option<Instant>,
        charge: Option<Charge>,
        reply: impl Into<Reply>,
    ) -> BatchMessage {
        BatchMessage {
            charged: charge.as_ref().map_or(0, Charge::bytes),
            charge,
            first_index,
            limit: parse_limit(request.options.as_ref(), "options"),
            results: Vec::with_capacity(request.items.len()),
            shared,
            request,
            paused: None,
            paused_sized: None,
            spare: None,
            pending: Pending::new(deadline, reply.into()),
        }
    }

    /// Sends `response` (and the charge) to the caller; the message is
    /// done.
    fn answer(&mut self, response: Option<pb::SolveBatchResponse>) -> Step {
        self.pending
            .answer(response.map(|r| (r, self.charge.take())));
        Step::Done
    }
}

impl Work for BatchMessage {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        with_thread_solver(|solver| self.items(solver, turn))
    }
}

impl BatchMessage {
    /// Answers items in order until all are (then the response goes to the
    /// caller) or the turn is over, at an item's end or in its search. A
    /// new 9x9 item is searched in `thread_solver`, the thread's. A panic
    /// while solving an item answers that item INTERNAL.
    fn items(&mut self, thread_solver: &mut Solver, turn: &Turn) -> Step {
        let pending = &self.pending;
        let cancelled = || pending.cancelled();
        let (shared, deadline) = (&*self.shared, pending.deadline());
        let item_turn = |solver: &mut Solver, job: &Job, resumed: Option<Duration>| {
            let searched = std::panic::catch_unwind(AssertUnwindSafe(|| match resumed {
                None => search(shared, solver, job, u64::MAX, deadline, &cancelled, turn),
                Some(elapsed) => slices(
                    shared,
                    solver,
                    u64::MAX,
                    deadline,
                    &cancelled,
                    elapsed,
                    turn,
                ),
            }));
            match searched {
                Ok(Ok(Searched::Done(answer, elapsed))) => {
                    ItemTurn::Answered(Ok(to_pb(&answer, job, elapsed)))
                }
                Ok(Ok(Searched::Paused(elapsed))) => ItemTurn::Paused(elapsed),
                Ok(Err(failure)) => ItemTurn::Answered(Err(failure)),
                Err(_) => ItemTurn::Answered(Err(Failure::Panicked)),
            }
        };
        let mut ended = false;
        while let Some(item) = self.request.items.get(self.results.len()) {
            let i = self.results.len();
            let answered = if let Some((job, elapsed, mut solver)) = self.paused_sized.take() {
                match sized_turn(
                    shared,
                    &mut solver,
                    &job,
                    Some(elapsed),
                    deadline,
                    &cancelled,
                    turn,
                ) {
                    ItemTurn::Paused(elapsed)
                        if keep_paused(&mut self.charge, self.charged, &solver, &job) =>
                    {
                        self.paused_sized = Some((job, elapsed, solver));
                        return Step::Unfinished;
                    }
                    ItemTurn::Paused(_) => {
                        give_sized_solver(solver);
                        Err(Failure::Overloaded)
                    }
                    ItemTurn::Answered(answered) => {
                        give_sized_solver(solver);
                        answered
                    }
                }
            } else {
                match self.paused.take() {
                    Some((job, elapsed, mut solver)) => {
                        match item_turn(&mut solver, &job, Some(elapsed)) {
                            ItemTurn::Paused(elapsed) => {
                                self.paused = Some((job, elapsed, solver));
                                return Step::Unfinished;
                            }
                            ItemTurn::Answered(answered) => {
                                self.spare = Some(solver);
                                answered
                            }
                        }
                    }
                    None => match (&self.limit, parse_any(item.puzzle.as_ref(), "puzzle")) {
                        (Err(e), _) => Err(e.clone()),
                        (_, Err(e)) => Err(e.prefixed(&format!("items[{}]", self.first_index + i))),
                        (Ok(limit), Ok(AnyGrid::Sized(grid, form))) => {
                            let job = SizedJob {
                                grid,
                                form,
                                limit: *limit,
                            };
                            let mut solver = take_sized_solver(&job.grid);
                            match sized_turn(
                                shared,
                                &mut solver,
                                &job,
                                None,
                                deadline,
                                &cancelled,
                                turn,
                            ) {
                                ItemTurn::Paused(elapsed)
                                    if keep_paused(
                                        &mut self.charge,
                                        self.charged,
                                        &solver,
                                        &job,
                                    ) =>
                                {
                                    self.paused_sized = Some((job, elapsed, solver));
                                    return Step::Unfinished;
                                }
                                ItemTurn::Paused(_) => {
                                    give_sized_solver(solver);
                                    Err(Failure::Overloaded)
                                }
                                ItemTurn::Answered(answered) => {
                                    give_sized_solver(solver);
                                    answered
                                }
                            }
                        }
                        (Ok(limit), Ok(AnyGrid::Nine(grid, form))) => {
                            let job = Job {
                                grid,
                                form,
                                limit: *limit,
                            };
                            let mut own = self.spare.take();
                            let solver = match own.as_deref_mut() {
                                Some(solver) => solver,
                                None => &mut *thread_solver,
                            };
                            match item_turn(solver, &job, None) {
                                ItemTurn::Paused(elapsed) => {
                                    // The thread's solver serves other tasks
                                    // next: the search moves out as it stands.
                                    let solver =
                                        own.unwrap_or_else(|| Box::new(thread_solver.clone()));
                                    self.paused = Some((job, elapsed, solver));
                                    return Step::Unfinished;
                                }
                                ItemTurn::Answered(answered) => {
                                    self.spare = own;
                                    answered
                                }
                            }
                        }
                    },
                }
            };
            let result = match answered {
                // Stream-level ends: the reader task reports them as the
                // stream's status.
                Err(Failure::DeadlineExceeded | Failure::Cancelled) => {
                    ended = true;
                    break;
                }
                Ok(solution) => pb::batch_result::Result::Solution(solution),
                Err(failure) => {
                    count_failure(&shared.gauges, &failure);
                    if failure == Failure::Panicked {
                        tracing::error!(id = item.id, "solver panicked on a batch item");
                    }
                    pb::batch_result::Result::Error(to_rpc_status(failure.into()))
                }
            };
            self.results.push(pb::BatchResult {
                id: item.id,
                result: Some(result),
            });
            if self.results.len() < self.request.items.len() && turn.over() {
                return Step::Unfinished;
            }
        }
        if ended {
            return self.answer(None);
        }
        let results = std::mem::take(&mut self.results);
        self.answer(Some(pb::SolveBatchResponse { results }))
    }
}

impl Sudoku {
    /// Runs `work` on a solver thread for `tenant`, under a server-wide
    /// permit (or sheds the call): the Hint and Rate work that is not a
    /// search, bounded in time by its nature (a logical solve of one grid).
    /// A search never runs here: it would hold the thread past the deadline
    /// and the work budget (see [`Self::search_job`]).
    /// It starts only if the deadline has not passed and the caller still
    /// waits.
    pub(super) async fn on_pool<R: Send + 'static>(
        &self,
        tenant: Tenant,
        deadline: Option<Instant>,
        work: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, Failure> {
        let _permit = self
            .shared
            .permits
            .try_acquire()
            .map_err(|_| Failure::Overloaded)?;
        let (reply, replied) = oneshot::channel();
        self.shared.pool.submit(
            tenant,
            Box::new(OneShot {
                work: Some(work),
                pending: Pending::new(deadline, reply),
            }),
        );
        reply_by(replied, deadline).await
    }

    /// Makes puzzle `index` of `plan` on a solver thread for `tenant`,
    /// attempt by attempt (or clue by clue), waiting for its state's bytes
    /// in the connection's `share` ([`generate_charge`]) and then for a
    /// permit. Dropping the future (the client left) stops the work at its
    /// next attempt.
    pub(super) async fn generate_one(
        &self,
        plan: GeneratePlan,
        index: u32,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<pb::GenerateResponse, Failure> {
        // A puzzle in the making stays in memory between its turns, so it
        // waits here, as a SolveBatch message waits to be read, until the
        // connection and the server can hold it.
        let charge = match share {
            Some(share) => Some(
                share
                    .charge(Purpose::Messages, generate_charge(&plan))
                    .await,
            ),
            None => None,
        };
        let Ok(_permit) = self.shared.permits.acquire().await else {
            return Err(Failure::ShuttingDown);
        };
        if let Some((shape, min_clues)) = plan.shape {
            let (reply, replied) = oneshot::channel();
            self.shared.pool.submit(
                tenant,
                Box::new(SizedGenerateWork {
                    shared: self.shared.clone(),
                    shape,
                    seed: plan.seed,
                    index,
                    min_clues: min_clues as usize,
                    budget: self.shared.limits.max_nodes,
                    maker: None,
                    charge,
                    pending: Pending::new(deadline, reply),
                }),
            );
            let made = reply_by(replied, deadline).await??;
            return Ok(sized_generated_to_pb(index, &plan, &made));
        }
        let (reply, replied) = oneshot::channel();
        self.shared.pool.submit(
            tenant,
            Box::new(GenerateWork {
                shared: self.shared.clone(),
                search: Search::new(plan.seed, u64::from(index), plan.options),
                target: plan.target,
                index,
                _charge: charge,
                pending: Pending::new(deadline, reply),
            }),
        );
        let made = reply_by(replied, deadline).await??;
        Ok(generated_to_pb(index, &plan, &made))
    }
}

/// Waits for a solver thread's reply until `deadline`. A closed reply: the
/// pool dropped the task unrun because its deadline passed (the timer may
/// fire a little after the solver thread saw it pass), or it panicked (and
/// was logged).
async fn reply_by<T>(
    replied: oneshot::Receiver<T>,
    deadline: Option<Instant>,
) -> Result<T, Failure> {
    let replied = match deadline {
        None => replied.await,
        Some(d) => tokio::time::timeout_at(d.into(), replied)
            .await
            .map_err(|_| Failure::DeadlineExceeded)?,
    };
    replied.map_err(|_| {
        if past(deadline) {
            Failure::DeadlineExceeded
        } else {
            Failure::Panicked
        }
    })
}

/// Work done at once on a solver thread, its result sent back.
struct OneShot<F, R> {
    work: Option<F>,
    pending: Pending<oneshot::Sender<R>>,
}

impl<F: FnOnce() -> R + Send, R: Send> Work for OneShot<F, R> {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, _: &Turn) -> Step {
        if let Some(work) = self.work.take() {
            self.pending.answer(work());
        }
        Step::Done
    }
}

/// The making of one generated puzzle, one attempt at a time, with the
/// deadline, the caller's presence and the turn checked between attempts
/// (an attempt takes well under a millisecond).
struct GenerateWork {
    shared: Arc<Shared>,
    search: Search,
    target: Target,
    index: u32,
    /// This task's bytes in its connection's share (none: not charged).
    _charge: Option<Charge>,
    pending: Pending<oneshot::Sender<Result<Generated<Rating>, Failure>>>,
}

impl Work for GenerateWork {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        with_thread_solver(|solver| self.attempts(solver, turn))
    }
}

impl GenerateWork {
    /// Attempts in `solver` (the thread's: an attempt never spans turns)
    /// until one is found, none can be, or the turn is over.
    fn attempts(&mut self, solver: &mut Solver, turn: &Turn) -> Step {
        self.shared.gauges.solving.fetch_add(1, Ordering::Relaxed);
        let _guard = SolvingGuard(&self.shared.gauges);
        let target = self.target;
        let result = loop {
            if past(self.pending.deadline()) {
                break Err(Failure::DeadlineExceeded);
            }
            if self.pending.cancelled() {
                return Step::Done;
            }
            match self.search.step(solver, &mut |c| target.accept(c)) {
                Poll::Found(made) => break Ok(made),
                Poll::Exhausted { attempts } => {
                    break Err(Failure::GenerateExhausted {
                        index: self.index,
                        attempts,
                    });
                }
                Poll::Working if turn.over() => return Step::Unfinished,
                Poll::Working => {}
            }
        };
        self.pending.answer(result);
        Step::Done
    }
}

/// The making of one sized puzzle, one clue tried at a time, with the
/// deadline, the caller's presence and the turn checked between tries.
struct SizedGenerateWork {
    shared: Arc<Shared>,
    shape: Shape,
    seed: u64,
    index: u32,
    min_clues: usize,
    /// Search nodes the maker's checks may take: `--max-nodes`, the work
    /// budget of one Solve. A node costs in proportion to the grid, so the
    /// time this allows grows with the size; a puzzle that spends it comes
    /// with the clues it has left, unique and not minimal.
    budget: u64,
    /// The puzzle in the making and its solver, between turns.
    maker: Option<(SizedMaker, Box<SizedSolver>)>,
    /// What the task holds of its connection's share: the maker's and its
    /// solver's footprints ([`generate_charge`]), grown when the paused
    /// solver outgrows them (none: not charged).
    charge: Option<Charge>,
    pending: Pending<oneshot::Sender<Result<SizedPuzzle, Failure>>>,
}

/// What a puzzle in the making holds in its connection's share while it
/// exists: its task, and for a grid other than 9x9 the maker's puzzle and
/// the solver it keeps between turns. A 9x9 puzzle is made in the solver
/// thread's own solver, so its paused state is the task alone.
fn generate_charge(plan: &GeneratePlan) -> usize {
    match plan.shape {
        None => std::mem::size_of::<GenerateWork>(),
        Some((shape, _)) => sized_generate_bytes(shape.cells(), 0),
    }
}

/// The bytes of a sized puzzle in the making whose solver holds
/// `solver_heap` bytes (at least its footprint).
fn sized_generate_bytes(cells: usize, solver_heap: usize) -> usize {
    std::mem::size_of::<SizedGenerateWork>()
        .saturating_add(SizedMaker::footprint(cells))
        .saturating_add(solver_heap.max(SizedSolver::footprint(cells)))
}

impl Work for SizedGenerateWork {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        self.shared.gauges.solving.fetch_add(1, Ordering::Relaxed);
        let _guard = SolvingGuard(&self.shared.gauges);
        let (mut maker, mut solver) = match self.maker.take() {
            Some(kept) => kept,
            None => {
                let mut solver = take_sized_solver(&SizedGrid::empty(self.shape));
                let maker = SizedMaker::new(
                    &mut solver,
                    self.shape,
                    self.seed,
                    u64::from(self.index),
                    self.min_clues,
                )
                .with_budget(self.budget);
                (maker, solver)
            }
        };
        let made = loop {
            if !self.pending.wanted() {
                give_sized_solver(solver);
                return Step::Done;
            }
            if let Some(made) = maker.step(&mut solver) {
                break Ok(made);
            }
            if turn.over() {
                // Paused, the maker and its solver stay in memory: a
                // solver whose trail outgrew the charge grows it, or the
                // puzzle is given up as over-budget work is.
                let bytes = sized_generate_bytes(self.shape.cells(), solver.heap_bytes());
                if self.charge.as_mut().is_none_or(|c| c.try_grow_to(bytes)) {
                    self.maker = Some((maker, solver));
                    return Step::Unfinished;
                }
                break Err(Failure::Overloaded);
            }
        };
        give_sized_solver(solver);
        self.pending.answer(made);
        Step::Done
    }
}

/// Where a queued task's answer goes: a channel to the task that waits
/// for it, or a part of a batch message's [`Joint`].
trait ReplyTo {
    type Answer;

    /// Nobody waits for the answer any more.
    fn is_closed(&self) -> bool;

    fn send(self, answer: Self::Answer);
}

impl<T> ReplyTo for oneshot::Sender<T> {
    type Answer = T;

    fn is_closed(&self) -> bool {
        oneshot::Sender::is_closed(self)
    }

    fn send(self, answer: T) {
        // A failed send: the caller left, and the answer has nobody to go to.
        let _ = oneshot::Sender::send(self, answer);
    }
}

/// What every queued task shares: when its caller stops waiting for it
/// and where its answer goes. The task is wanted until the deadline
/// passes or it is cancelled: its caller left (the client reset the call
/// or ended the stream), or it answered already.
struct Pending<R> {
    deadline: Option<Instant>,
    /// Taken when the answer is sent.
    reply: Option<R>,
}

impl<R: ReplyTo> Pending<R> {
    fn new(deadline: Option<Instant>, reply: R) -> Pending<R> {
        Pending {
            deadline,
            reply: Some(reply),
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Nobody waits for the answer any more: the work is to stop.
    fn cancelled(&self) -> bool {
        self.reply.as_ref().is_none_or(R::is_closed)
    }

    /// The task is worth running: its deadline has not passed and it is
    /// not cancelled ([`Work::wanted`] of every task).
    fn wanted(&self) -> bool {
        !past(self.deadline) && !self.cancelled()
    }

    /// Sends `answer` to the caller, if it is still there; once.
    fn answer(&mut self, answer: R::Answer) {
        if let Some(reply) = self.reply.take() {
            reply.send(answer);
        }
    }
}

/// Whether `deadline` has passed.
pub(super) fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Resolves when `deadline` passes; never without one.
pub(super) async fn expiry(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Limits;
    use sudoku_core::puzzle::Grid;
    use tokio_util::sync::CancellationToken;

    const CLASSIC: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    /// 84 nodes: many 8-node slices.
    const EASTER_MONSTER: &str =
        "1.......2.9.4...5...6...7...5.9.3.......7.......85..4.7.....6...3...9.8...2.....1";

    /// A service without solver threads, solving in slices of 8 nodes.
    fn service() -> Sudoku {
        let limits = Limits {
            slice_nodes: 8,
            max_in_flight: 16,
            inline_nodes: 8,
            quantum: Duration::ZERO,
            ..Limits::on_the_calling_thread(1_000_000)
        };
        Sudoku::new(limits, CancellationToken::new()).unwrap()
    }

    fn item(id: u64, puzzle: &str) -> pb::BatchItem {
        pb::BatchItem {
            id,
            puzzle: Some(pb::Grid {
                text: puzzle.to_string(),
                cells: vec![],
                ..Default::default()
            }),
        }
    }

    /// Runs `work` to its end, in turns over after each slice when
    /// `sliced`, with another search on the thread's solver between turns;
    /// the number of turns it took.
    fn run_to_end(work: &mut dyn Work, sliced: bool) -> usize {
        let mut turns = 1;
        loop {
            let turn = if sliced {
                Turn::every_slice()
            } else {
                Turn::UNBOUNDED
            };
            if work.run(&turn) == Step::Done {
                return turns;
            }
            with_thread_solver(|solver| {
                solver.restart(&Grid::from_text(CLASSIC).unwrap(), 1);
                solver.resume(5);
            });
            turns += 1;
        }
    }

    /// `response` without its solving times, which differ between runs.
    fn timeless(mut response: pb::SolveBatchResponse) -> pb::SolveBatchResponse {
        for r in &mut response.results {
            if let Some(pb::batch_result::Result::Solution(s)) = &mut r.result
                && let Some(stats) = &mut s.stats
            {
                stats.solve_time_us = 0;
            }
        }
        response
    }

    #[test]
    fn a_batch_message_answered_in_turns_matches_one_answered_at_once() {
        let svc = service();
        let request = pb::SolveBatchRequest {
            items: vec![
                item(1, EASTER_MONSTER),
                item(2, "not a puzzle"),
                item(3, CLASSIC),
                item(4, EASTER_MONSTER),
            ],
            options: None,
        };
        let mut answers = Vec::new();
        for sliced in [false, true] {
            let (reply, mut replied) = oneshot::channel();
            let mut message =
                BatchMessage::new(svc.shared.clone(), request.clone(), 0, None, None, reply);
            let turns = run_to_end(&mut message, sliced);
            let (response, _) = replied.try_recv().unwrap().expect("a response");
            answers.push((turns, timeless(response)));
        }
        let (once, sliced) = (&answers[0], &answers[1]);
        assert_eq!(once.0, 1);
        assert!(sliced.0 > 20, "{} turns", sliced.0);
        assert_eq!(once.1, sliced.1);
        assert_eq!(once.1.results.len(), 4);
        let nodes = |i: usize| match &sliced.1.results[i].result {
            Some(pb::batch_result::Result::Solution(s)) => s.stats.unwrap().nodes,
            other => panic!("item {i}: {other:?}"),
        };
        assert_eq!(nodes(0), 84);
        assert!(matches!(
            &sliced.1.results[1].result,
            Some(pb::batch_result::Result::Error(_))
        ));
    }

    #[test]
    fn the_rest_of_a_search_answered_in_turns_matches_one_answered_at_once() {
        let svc = service();
        let job = Job {
            grid: Grid::from_text(EASTER_MONSTER).unwrap(),
            form: super::super::convert::Form::Text,
            limit: 2,
        };
        let mut answers = Vec::new();
        for sliced in [false, true] {
            let mut solver = Box::new(Solver::new(&job.grid, job.limit));
            solver.resume(8);
            let (reply, mut replied) = oneshot::channel();
            let mut rest = RestOfSearch {
                shared: svc.shared.clone(),
                solver,
                elapsed: Duration::ZERO,
                pending: Pending::new(None, reply),
            };
            let turns = run_to_end(&mut rest, sliced);
            let (answer, _) = replied.try_recv().unwrap().unwrap();
            answers.push((turns, answer));
        }
        assert_eq!(answers[0].0, 1);
        assert!(answers[1].0 > 5, "{} turns", answers[1].0);
        assert_eq!(answers[0].1, answers[1].1);
        assert!(answers[1].1.complete);
    }

    #[test]
    fn work_past_its_deadline_or_left_by_its_caller_is_unwanted() {
        let svc = service();
        let request = pb::SolveBatchRequest {
            items: vec![item(1, CLASSIC)],
            options: None,
        };
        let (reply, replied) = oneshot::channel();
        let message = BatchMessage::new(svc.shared.clone(), request.clone(), 0, None, None, reply);
        assert!(message.wanted());
        drop(replied);
        assert!(!message.wanted(), "the caller left");
        let (reply, _replied) = oneshot::channel();
        let expired = Some(Instant::now() - Duration::from_millis(1));
        let message = BatchMessage::new(svc.shared.clone(), request, 0, expired, None, reply);
        assert!(!message.wanted(), "the deadline passed");
    }
}
