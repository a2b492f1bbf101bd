//! How a search runs: in slices of `slice_nodes`, with the deadline, the
//! caller's presence, the work budget and the end of the turn checked
//! between slices, for the 9x9 engine and the sized one alike; and how a
//! finished or failed puzzle is counted.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::pending::past;
use crate::service::Shared;
use crate::service::pool::{Turn, give_sized_solver, take_sized_solver};
use crate::service::status::Failure;
use crate::service::work::{AnyGrid, Found, Job};
use crate::telemetry::metrics::{Gauges, PuzzleOutcome};
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_core::solver::sized::SizedSolver;
use sudoku_core::solver::{self, Progress, Solver, Verdict};

/// A solve counted in the solving gauge: from [`SolvingGuard::start`]
/// until it is dropped, however the solve ends.
pub(super) struct SolvingGuard<'a>(&'a Gauges);

impl<'a> SolvingGuard<'a> {
    pub(super) fn start(gauges: &'a Gauges) -> SolvingGuard<'a> {
        gauges.solving.fetch_add(1, Ordering::Relaxed);
        SolvingGuard(gauges)
    }
}

impl Drop for SolvingGuard<'_> {
    fn drop(&mut self) {
        self.0.solving.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An engine as the scheduler drives it: the core's [`solver::Engine`]
/// restarted on a job, resumed in slices, its answer read back as a
/// [`Found`], with the memory it holds and a solver kept per thread. The
/// 9x9 bitboard engine and the sized one are the two; every search task
/// is written once over this.
pub(in crate::service) trait Engine: solver::Engine {
    /// A solver for `job` on this thread (a kept one when there is).
    fn take(job: &Job<Self::Puzzle>) -> Box<Self>;
    /// Gives a finished solver back to this thread for its next task.
    fn give(solver: Box<Self>);
    /// What a paused solver holds in memory, to charge.
    fn heap_bytes(&self) -> usize;
    /// Keeps what the solver holds within `bytes` where it can (its next
    /// turn's charge); a 9x9 solver holds a fixed size.
    fn cap_memory(&mut self, _bytes: usize) {}
    /// The puzzle as the one grid of every shape, in `form`.
    fn any(puzzle: Self::Puzzle, form: crate::service::work::Form) -> AnyGrid;
    /// The test hook that makes a search of this job panic.
    #[cfg(feature = "test-hooks")]
    fn hooked(_shared: &Shared, _job: &Job<Self::Puzzle>) -> bool {
        false
    }
}

/// Nodes searched so far.
fn nodes_of<E: solver::Engine>(solver: &E) -> u64 {
    solver.report().2.nodes
}

/// The finished search's answer to `job`, after `elapsed` solving time.
pub(super) fn found<E: Engine>(solver: &E, job: &Job<E::Puzzle>, elapsed: Duration) -> Found {
    let (count, complete, stats) = solver.report();
    Found {
        verdict: Verdict::of(complete, count),
        solution: solver.first_solution().map(|s| E::any(s, job.form)),
        count,
        stats,
        elapsed,
    }
}

impl Engine for Solver {
    fn take(job: &Job<Grid>) -> Box<Solver> {
        Box::new(Solver::new(&job.grid, job.limit))
    }
    fn give(_: Box<Solver>) {}
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Solver>()
    }
    fn any(puzzle: Grid, form: crate::service::work::Form) -> AnyGrid {
        AnyGrid::Nine(puzzle, form)
    }
    #[cfg(feature = "test-hooks")]
    fn hooked(shared: &Shared, job: &Job<Grid>) -> bool {
        shared.panic_on == Some(job.grid)
    }
}

impl Engine for SizedSolver {
    fn take(job: &Job<SizedGrid>) -> Box<SizedSolver> {
        take_sized_solver(&job.grid)
    }
    fn give(solver: Box<SizedSolver>) {
        give_sized_solver(solver);
    }
    fn heap_bytes(&self) -> usize {
        SizedSolver::heap_bytes(self)
    }
    fn cap_memory(&mut self, bytes: usize) {
        self.set_memory_cap(bytes);
    }
    fn any(puzzle: SizedGrid, form: crate::service::work::Form) -> AnyGrid {
        AnyGrid::Sized(puzzle, form)
    }
}

/// How far a search of either engine got: finished (the answer is in the
/// solver) or paused, after this much solving time.
pub(super) enum Sliced {
    Done(Duration),
    Paused(Duration),
}

/// Goes on with the search in `solver` in slices of `slice_nodes` until it
/// is done, has run `budget` nodes in all, the work budget is spent, or
/// `turn` is over (asked after each slice, so a turn always makes
/// progress), checking the deadline and `cancelled` before each slice.
/// `elapsed` is the solving time so far.
pub(super) fn slices<S: Engine>(
    shared: &Shared,
    solver: &mut S,
    budget: u64,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    mut elapsed: Duration,
    turn: &Turn,
) -> Result<Sliced, Failure> {
    let limits = &shared.limits;
    let _guard = SolvingGuard::start(&shared.gauges);
    loop {
        if past(deadline) {
            return Err(Failure::DeadlineExceeded);
        }
        if cancelled() {
            return Err(Failure::Cancelled);
        }
        let nodes = nodes_of(solver);
        if nodes >= limits.max_nodes {
            return Ok(done(shared, solver.verdict(), elapsed));
        }
        if nodes >= budget {
            return Ok(Sliced::Paused(elapsed));
        }
        let step = (limits.max_nodes - nodes)
            .min(budget - nodes)
            .min(limits.slice_nodes);
        let started = Instant::now();
        let progress = solver.go_on(step);
        elapsed += started.elapsed();
        if progress != Progress::Paused {
            return Ok(done(shared, solver.verdict(), elapsed));
        }
        if turn.over() {
            return Ok(Sliced::Paused(elapsed));
        }
    }
}

/// A finished search, counted by outcome while it still counts as solving,
/// so a puzzle is never counted after the solving gauge says it stopped.
fn done(shared: &Shared, verdict: Verdict, elapsed: Duration) -> Sliced {
    shared.gauges.count(match verdict {
        Verdict::Solved => PuzzleOutcome::Solved,
        Verdict::NoSolution => PuzzleOutcome::NoSolution,
        Verdict::NotUnique => PuzzleOutcome::MultipleSolutions,
        Verdict::WorkLimit => PuzzleOutcome::WorkLimitReached,
    });
    Sliced::Done(elapsed)
}

/// Counts a puzzle that failed instead of getting an answer.
pub(in crate::service) fn count_failure(gauges: &Gauges, failure: &Failure) {
    gauges.count(match failure {
        Failure::Invalid(_) => PuzzleOutcome::Invalid,
        _ => PuzzleOutcome::Failed,
    });
}
