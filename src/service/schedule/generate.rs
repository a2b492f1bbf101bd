//! Generated puzzles on the solver threads: made attempt by attempt (or,
//! for other sizes, clue by clue), their state charged to the connection
//! while they are in the making.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::oneshot;

use super::pending::{Pending, past, reply_by};
use super::slices::SolvingGuard;
use crate::service::budget::{Charge, Purpose, Share};
use crate::service::convert::GeneratePlan;
use crate::service::pool::{
    Step, Turn, Work, give_sized_solver, take_sized_solver, with_thread_solver,
};
use crate::service::status::Failure;
use crate::service::{Shared, Sudoku, Tenant};
use sudoku_core::generate::sized::{SizedFound, SizedMaker, SizedPoll, SizedSearch};
use sudoku_core::generate::{Generated, Poll, Search, Target};
use sudoku_core::logic::Rating;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::Solver;
use sudoku_core::solver::sized::SizedSolver;

impl Sudoku {
    /// Makes puzzle `index` of `plan` on a solver thread for `tenant`,
    /// attempt by attempt (or clue by clue), waiting for its state's bytes
    /// in the connection's `share` ([`generate_charge`]) and then for a
    /// permit. Dropping the future (the client left) stops the work at its
    /// next attempt.
    pub(in crate::service) async fn generate_one(
        &self,
        plan: GeneratePlan,
        index: u32,
        deadline: Option<Instant>,
        tenant: Tenant,
        share: Option<&Share>,
    ) -> Result<Made, Failure> {
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
        if let Some((shape, options)) = plan.shape {
            let (reply, replied) = oneshot::channel();
            self.shared.pool.submit(
                tenant,
                Box::new(SizedGenerateWork {
                    shared: self.shared.clone(),
                    shape,
                    index,
                    search: SizedSearch::new(
                        shape,
                        plan.seed,
                        u64::from(index),
                        options,
                        plan.target,
                    ),
                    solver: None,
                    charge,
                    pending: Pending::new(deadline, reply),
                }),
            );
            return Ok(Made::Sized(reply_by(replied, deadline).await??));
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
        Ok(Made::Nine(reply_by(replied, deadline).await??))
    }
}

/// A generated puzzle, of the 9x9 maker or the sized one.
pub(in crate::service) enum Made {
    Nine(Generated<Rating>),
    Sized(SizedFound),
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
        let _guard = SolvingGuard::start(&self.shared.gauges);
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

/// The making of one sized puzzle, attempt by attempt and one clue tried
/// at a time, with the deadline, the caller's presence and the turn
/// checked between tries.
struct SizedGenerateWork {
    shared: Arc<Shared>,
    shape: Shape,
    index: u32,
    /// The attempts and the puzzle in the making (its options carry the
    /// checks' budget: `--max-nodes`, the work budget of one Solve, per
    /// attempt).
    search: SizedSearch,
    /// The solver, kept between turns.
    solver: Option<Box<SizedSolver>>,
    /// What the task holds of its connection's share: the maker's and its
    /// solver's footprints ([`generate_charge`]), grown when the paused
    /// solver outgrows them (none: not charged).
    charge: Option<Charge>,
    pending: Pending<oneshot::Sender<Result<SizedFound, Failure>>>,
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
        let _guard = SolvingGuard::start(&self.shared.gauges);
        let mut solver = match self.solver.take() {
            Some(kept) => kept,
            None => take_sized_solver(&SizedGrid::empty(self.shape)),
        };
        let made = loop {
            if !self.pending.wanted() {
                give_sized_solver(solver);
                return Step::Done;
            }
            match self.search.step(&mut solver) {
                SizedPoll::Found(found) => break Ok(*found),
                SizedPoll::Exhausted { attempts } => {
                    break Err(Failure::GenerateExhausted {
                        index: self.index,
                        attempts,
                    });
                }
                SizedPoll::Working => {}
            }
            if turn.over() {
                // Paused, the maker and its solver stay in memory: a
                // solver whose trail outgrew the charge grows it, or the
                // puzzle is given up as over-budget work is.
                let bytes = sized_generate_bytes(self.shape.cells(), solver.heap_bytes());
                if self.charge.as_mut().is_none_or(|c| c.try_grow_to(bytes)) {
                    self.solver = Some(solver);
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
