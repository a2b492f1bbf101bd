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
use crate::service::budget::Charge;
use crate::service::pool::{
    Step, Turn, Work, give_sized_solver, take_sized_solver, with_thread_solver,
};
use crate::service::status::Failure;
use crate::service::work::{Answered, AnyJob, Item, Job};
use crate::service::{Shared, Sudoku, Tenant};
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_core::solver::Solver;
use sudoku_core::solver::sized::SizedSolver;

impl Sudoku {
    /// Answers the items of one batch request message of `tenant` on a
    /// solver thread, in order; `None` when the stream's deadline passed
    /// on the way, as then no further results are sent. Dropping the
    /// future (the client left, or the deadline) stops the work at the
    /// current item's next slice.
    ///
    /// `charge` holds the message's bytes (see `stream.rs`); a sized item
    /// whose paused search outgrows its solver's footprint grows it, or is
    /// answered OVERLOADED. It comes back with the answers.
    pub(in crate::service) async fn solve_message(
        &self,
        items: Vec<Item>,
        deadline: Option<Instant>,
        tenant: Tenant,
        charge: Option<Charge>,
    ) -> Option<MessageAnswer> {
        let parts = parts_of(&items, self.shared.pool.threads());
        if parts <= 1 {
            let (reply, replied) = oneshot::channel();
            let message = BatchMessage::new(self.shared.clone(), items, deadline, charge, reply);
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
        let size = items.len().div_ceil(parts);
        let (reply, replied) = oneshot::channel();
        let joint = Arc::new(Joint::new(parts, reply));
        let mut items = items.into_iter();
        let mut charge = charge;
        // Held while the parts run: dropped, they tell the parts to stop.
        let mut waiting = Vec::with_capacity(parts);
        for index in 0..parts {
            let part: Vec<Item> = items.by_ref().take(size).collect();
            let (alive, waits) = oneshot::channel();
            let message = BatchMessage::new(
                self.shared.clone(),
                part,
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
        let mut answers = Vec::with_capacity(parts.iter().flatten().map(|(a, _)| a.len()).sum());
        let mut charge = None;
        for (part, held) in parts.into_iter().flatten() {
            answers.extend(part);
            charge = charge.or(held);
        }
        let _ = reply.send(Some((answers, charge)));
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
fn parts_of(items: &[Item], threads: usize) -> usize {
    if items
        .iter()
        .any(|item| matches!(item.job, Ok(AnyJob::Sized(_))))
    {
        return 1;
    }
    (items.len() / PART_ITEMS).clamp(1, threads.max(1) * PARTS_PER_THREAD)
}

/// A batch message's answers in item order, with the charge it held.
type MessageAnswer = (Vec<Answered>, Option<Charge>);

/// One batch request message, answered item by item in order on solver
/// threads, over as many turns as it takes. An item can span turns: its
/// search then moves out of the thread's solver into one of the message's
/// own, made the first time and kept for its later items.
struct BatchMessage {
    shared: Arc<Shared>,
    /// The items not yet started.
    items: std::vec::IntoIter<Item>,
    /// The answers of the items answered so far, in order.
    answers: Vec<Answered>,
    /// The item a turn ended in the middle of: its id, and its search
    /// with the solving time so far.
    paused: Option<(u64, Next)>,
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
    Sized(Job<SizedGrid>, Option<Duration>, Box<SizedSolver>),
    /// No search: the item is answered (a bad puzzle or options).
    Refused(Failure),
}

/// Whether a paused sized search may stay in memory: its solver's bytes
/// beyond the footprint the message was charged for are charged too, when
/// the budget has them (a deep search's trail grows past the footprint).
fn keep_paused(
    charge: &mut Option<Charge>,
    charged: usize,
    solver: &SizedSolver,
    job: &Job<SizedGrid>,
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
        items: Vec<Item>,
        deadline: Option<Instant>,
        charge: Option<Charge>,
        reply: impl Into<Reply>,
    ) -> BatchMessage {
        BatchMessage {
            charged: charge.as_ref().map_or(0, Charge::bytes),
            charge,
            answers: Vec::with_capacity(items.len()),
            items: items.into_iter(),
            shared,
            paused: None,
            spare: None,
            pending: Pending::new(deadline, reply.into()),
        }
    }

    /// Sends `response` (and the charge) to the caller; the message is
    /// done.
    fn answer(&mut self, response: Option<Vec<Answered>>) -> Step {
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
        loop {
            // The item's search: the paused one, or the next item's (a bad
            // one is answered at once).
            let (id, next) = match self.paused.take() {
                Some(paused) => paused,
                None => match self.items.next() {
                    None => break,
                    Some(Item { id, job }) => (
                        id,
                        match job {
                            Err(failure) => Next::Refused(failure),
                            Ok(AnyJob::Nine(job)) => Next::Nine(job, None),
                            Ok(AnyJob::Sized(job)) => {
                                let solver = take_sized_solver(&job.grid);
                                Next::Sized(job, None, solver)
                            }
                        },
                    ),
                },
            };
            let answered = match next {
                Next::Refused(failure) => Err(failure),
                // A sized search has a solver of its own; paused, it stays
                // while the connection's budget holds it.
                Next::Sized(job, resumed, mut solver) => {
                    // Its footprint is in the message's charge; what it
                    // takes beyond is charged when it pauses (see
                    // keep_paused), so a turn holds no more than that
                    // could grow to.
                    if let Some(charge) = self.charge.as_ref() {
                        let footprint = SizedSolver::footprint(job.grid.shape().cells());
                        let beyond = charge.room().saturating_sub(self.charged);
                        solver.set_memory_cap(footprint.saturating_add(beyond));
                    }
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
                            self.paused = Some((id, Next::Sized(job, Some(elapsed), solver)));
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
                            self.paused = Some((id, Next::Nine(job, Some((elapsed, solver)))));
                            return Step::Unfinished;
                        }
                        ItemTurn::Answered(answered) => {
                            self.spare = own;
                            answered
                        }
                    }
                }
            };
            match &answered {
                // Stream-level ends: the reader task reports them as the
                // stream's status.
                Err(Failure::DeadlineExceeded | Failure::Cancelled) => {
                    ended = true;
                    break;
                }
                Ok(_) => {}
                Err(failure) => {
                    count_failure(&shared.gauges, failure);
                    if *failure == Failure::Panicked {
                        tracing::error!(id, "solver panicked on a batch item");
                    }
                }
            }
            self.answers.push((id, answered));
            if self.items.len() > 0 && turn.over() {
                return Step::Unfinished;
            }
        }
        if ended {
            return self.answer(None);
        }
        let answers = std::mem::take(&mut self.answers);
        self.answer(Some(answers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb;
    use crate::service::convert::{batch_items, batch_response};
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
            let items = batch_items(request.clone(), 0);
            let mut message = BatchMessage::new(svc.shared.clone(), items, None, None, reply);
            let turns = run_to_end(&mut message, sliced);
            let (answered, _) = replied.try_recv().unwrap().expect("a response");
            answers.push((turns, timeless(batch_response(answered))));
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
        let items = || batch_items(request.clone(), 0);
        let message = BatchMessage::new(svc.shared.clone(), items(), None, None, reply);
        assert!(message.wanted());
        drop(replied);
        assert!(!message.wanted(), "the caller left");
        let (reply, _replied) = oneshot::channel();
        let expired = Some(Instant::now() - Duration::from_millis(1));
        let message = BatchMessage::new(svc.shared.clone(), items(), expired, None, reply);
        assert!(!message.wanted(), "the deadline passed");
    }
}
