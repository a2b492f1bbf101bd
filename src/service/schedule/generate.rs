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
        let (reply, replied) = oneshot::channel();
        let pending = Pending::new(deadline, reply);
        let (shared, seed) = (self.shared.clone(), plan.seed);
        let work: Box<dyn Work> = match plan.shape {
            Some((shape, options)) => Box::new(GenerateWork {
                shared,
                maker: SizedMaking {
                    shape,
                    search: SizedSearch::new(shape, seed, u64::from(index), options, plan.target),
                    solver: None,
                    cap: charge.as_ref().map(|c| solver_cap(shape, c.capacity())),
                },
                index,
                charge,
                pending,
            }),
            None => Box::new(GenerateWork {
                shared,
                maker: NineMaking {
                    search: Search::new(seed, u64::from(index), plan.options),
                    target: plan.target,
                },
                index,
                charge,
                pending,
            }),
        };
        self.shared.pool.submit(tenant, work);
        reply_by(replied, deadline).await?
    }
}

/// A generated puzzle, of the 9x9 maker or the sized one.
pub(in crate::service) enum Made {
    Nine(Generated<Rating>),
    Sized(SizedFound),
}

/// How a step of a making went.
enum Stepped {
    Made(Box<Made>),
    /// Out of attempts, after this many.
    Exhausted(u64),
    /// Not yet: step again.
    Working,
}

/// A maker as the scheduler drives it, one short step at a time (an
/// attempt, or one clue tried): the 9x9 one in the solver thread's solver,
/// the sized one in a solver of its own, kept between turns.
trait Making: Send {
    /// One step of the making.
    fn step(&mut self) -> Stepped;
    /// What the making holds in memory while paused beyond what it was
    /// charged when it came (`None`: nothing more).
    fn paused_bytes(&self) -> Option<usize>;
    /// Gives back what the making borrowed; it is over.
    fn end(&mut self);
}

/// The 9x9 maker: attempts in the thread's solver, each well under a
/// millisecond, so a making never holds a solver between turns.
struct NineMaking {
    search: Search,
    target: Target,
}

impl Making for NineMaking {
    fn step(&mut self) -> Stepped {
        let target = self.target;
        let search = &mut self.search;
        match with_thread_solver(|solver| search.step(solver, &mut |c| target.accept(c))) {
            Poll::Found(made) => Stepped::Made(Box::new(Made::Nine(made))),
            Poll::Exhausted { attempts } => Stepped::Exhausted(attempts),
            Poll::Working => Stepped::Working,
        }
    }
    fn paused_bytes(&self) -> Option<usize> {
        None
    }
    fn end(&mut self) {}
}

/// The sized maker, one clue tried at a time, in a solver of its own.
struct SizedMaking {
    shape: Shape,
    /// The attempts and the puzzle in the making (its options carry the
    /// checks' budget: `--max-nodes`, the work budget of one Solve, per
    /// attempt).
    search: SizedSearch,
    /// The solver, kept between turns.
    solver: Option<Box<SizedSolver>>,
    /// What the solver may hold (its checks' SAT engine, from 25x25, does
    /// not start or is dropped rather than pass it): its part of the most
    /// one charge can hold (none: not charged, the solver's default cap).
    /// The setting, not what is free now, so that a seed names the same
    /// puzzle whatever the load (a pause that finds too little free ends
    /// the call RESOURCE_EXHAUSTED, as over-budget work does).
    cap: Option<usize>,
}

impl Making for SizedMaking {
    fn step(&mut self) -> Stepped {
        let shape = self.shape;
        let cap = self.cap;
        let solver = self.solver.get_or_insert_with(|| {
            let mut solver = take_sized_solver(&SizedGrid::empty(shape));
            if let Some(cap) = cap {
                solver.set_memory_cap(cap);
            }
            solver
        });
        match self.search.step(solver) {
            SizedPoll::Found(found) => Stepped::Made(Box::new(Made::Sized(*found))),
            SizedPoll::Exhausted { attempts } => Stepped::Exhausted(attempts),
            SizedPoll::Working => Stepped::Working,
        }
    }
    fn paused_bytes(&self) -> Option<usize> {
        let heap = self.solver.as_ref().map_or(0, |s| s.heap_bytes()) + self.search.engine_bytes();
        Some(sized_generate_bytes(self.shape.cells(), heap))
    }
    fn end(&mut self) {
        if let Some(solver) = self.solver.take() {
            give_sized_solver(solver);
        }
    }
}

/// What the solver of a sized making of `shape` may hold in a charge of
/// `capacity` bytes: the rest after the task and the maker.
fn solver_cap(shape: Shape, capacity: usize) -> usize {
    let cells = shape.cells();
    let others = sized_generate_bytes(cells, 0) - SizedSolver::footprint(cells);
    capacity.saturating_sub(others)
}

/// The making of one generated puzzle, a step at a time, with the
/// deadline, the caller's presence and the turn checked between steps.
struct GenerateWork<M> {
    shared: Arc<Shared>,
    maker: M,
    index: u32,
    /// What the task holds of its connection's share ([`generate_charge`]),
    /// grown when a paused making outgrows it (none: not charged).
    charge: Option<Charge>,
    pending: Pending<oneshot::Sender<Result<Made, Failure>>>,
}

impl<M: Making> Work for GenerateWork<M> {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        let _guard = SolvingGuard::start(&self.shared.gauges);
        let result = loop {
            if past(self.pending.deadline()) {
                break Err(Failure::DeadlineExceeded);
            }
            if self.pending.cancelled() {
                self.maker.end();
                return Step::Done;
            }
            match self.maker.step() {
                Stepped::Made(made) => break Ok(*made),
                Stepped::Exhausted(attempts) => {
                    break Err(Failure::GenerateExhausted {
                        index: self.index,
                        attempts,
                    });
                }
                Stepped::Working => {}
            }
            if turn.over() {
                // Paused, a making whose state outgrew the charge grows
                // it, or is given up as over-budget work is.
                let fits = match self.maker.paused_bytes() {
                    None => true,
                    Some(bytes) => self.charge.as_mut().is_none_or(|c| c.try_grow_to(bytes)),
                };
                if fits {
                    return Step::Unfinished;
                }
                break Err(Failure::Overloaded);
            }
        };
        self.maker.end();
        self.pending.answer(result);
        Step::Done
    }
}

/// What a puzzle in the making holds in its connection's share while it
/// exists: its task, and for a grid other than 9x9 the maker's puzzle and
/// the solver it keeps between turns. A 9x9 puzzle is made in the solver
/// thread's own solver, so its paused state is the task alone.
fn generate_charge(plan: &GeneratePlan) -> usize {
    match plan.shape {
        None => std::mem::size_of::<GenerateWork<NineMaking>>(),
        Some((shape, _)) => sized_generate_bytes(shape.cells(), 0),
    }
}

/// The bytes of a sized puzzle in the making whose solver holds
/// `solver_heap` bytes (at least its footprint).
fn sized_generate_bytes(cells: usize, solver_heap: usize) -> usize {
    std::mem::size_of::<GenerateWork<SizedMaking>>()
        .saturating_add(SizedMaker::footprint(cells))
        .saturating_add(solver_heap.max(SizedSolver::footprint(cells)))
}
