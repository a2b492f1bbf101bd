//! A batch request message on the solver threads: whole, or cut into
//! parts whose answers meet in a joint; answered item by item, over as
//! many turns as it takes, with paused searches kept only while the
//! connection's budget holds them.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::pending::{Pending, ReplyTo};
use super::search::{ItemTurn, item_turn};
use super::slices::count_failure;
use crate::pb;
use crate::service::budget::Charge;
use crate::service::convert::{AnyGrid, Job, SizedJob, parse_any, parse_limit};
use crate::service::pool::{
    Step, Turn, Work, give_sized_solver, take_sized_solver, with_thread_solver,
};
use crate::service::status::{Failure, to_rpc_status};
use crate::service::{Shared, Sudoku, Tenant};
use sudoku_core::solver::Solver;
use sudoku_core::solver::sized::SizedSolver;

impl Sudoku {
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
    pub(in crate::service) async fn solve_message(
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

/// What a batch item's turn starts from.
enum Next {
    /// A 9x9 search: new, or paused after this much solving time.
    Nine(Job, Option<(Duration, Box<Solver>)>),
    /// A sized search, in its own solver: new, or paused.
    Sized(SizedJob, Option<Duration>, Box<SizedSolver>),
    /// No search: the item is answered (a bad puzzle or options).
    Answered(Result<pb::Solution, Failure>),
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
        let mut ended = false;
        while let Some(item) = self.request.items.get(self.results.len()) {
            let i = self.results.len();
            // The item's search: the paused one, or a new one (the limit
            // and the puzzle read first: a bad one is answered at once).
            let next = match (self.paused.take(), self.paused_sized.take()) {
                (Some((job, elapsed, solver)), _) => Next::Nine(job, Some((elapsed, solver))),
                (_, Some((job, elapsed, solver))) => Next::Sized(job, Some(elapsed), solver),
                (None, None) => match (&self.limit, parse_any(item.puzzle.as_ref(), "puzzle")) {
                    (Err(e), _) => Next::Answered(Err(e.clone())),
                    (_, Err(e)) => {
                        Next::Answered(Err(e.prefixed(&format!("items[{}]", self.first_index + i))))
                    }
                    (Ok(limit), Ok(AnyGrid::Nine(grid, form))) => Next::Nine(
                        Job {
                            grid,
                            form,
                            limit: *limit,
                        },
                        None,
                    ),
                    (Ok(limit), Ok(AnyGrid::Sized(grid, form))) => {
                        let solver = take_sized_solver(&grid);
                        let job = SizedJob {
                            grid,
                            form,
                            limit: *limit,
                        };
                        Next::Sized(job, None, solver)
                    }
                },
            };
            let answered = match next {
                Next::Answered(answered) => answered,
                // A sized search has a solver of its own; paused, it stays
                // while the connection's budget holds it.
                Next::Sized(job, resumed, mut solver) => {
                    match item_turn(
                        shared,
                        &mut *solver,
                        &job,
                        resumed,
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
                }
                // A new 9x9 search runs in the message's spare solver or
                // the thread's; paused, it moves into one of the message's
                // own, as the thread's serves other tasks next.
                Next::Nine(job, resumed) => {
                    let (resumed, mut own) = match resumed {
                        Some((elapsed, solver)) => (Some(elapsed), Some(solver)),
                        None => (None, self.spare.take()),
                    };
                    let solver = match own.as_deref_mut() {
                        Some(solver) => solver,
                        None => &mut *thread_solver,
                    };
                    match item_turn(shared, solver, &job, resumed, deadline, &cancelled, turn) {
                        ItemTurn::Paused(elapsed) => {
                            let solver = own.unwrap_or_else(|| Box::new(thread_solver.clone()));
                            self.paused = Some((job, elapsed, solver));
                            return Step::Unfinished;
                        }
                        ItemTurn::Answered(answered) => {
                            self.spare = own;
                            answered
                        }
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::schedule::testing::{CLASSIC, EASTER_MONSTER, run_to_end, service};

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
