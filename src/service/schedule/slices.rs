//! How a search runs: in slices of `slice_nodes`, with the deadline, the
//! caller's presence, the work budget and the end of the turn checked
//! between slices, for the 9x9 engine and the sized one alike; and how a
//! finished or failed puzzle is counted.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::pending::past;
use crate::pb;
use crate::service::Shared;
use crate::service::convert::{Job, SizedJob, outcome, outcome_of, sized_answer_to_pb, to_pb};
use crate::service::pool::{Turn, give_sized_solver, take_sized_solver};
use crate::service::status::Failure;
use crate::telemetry::metrics::{Gauges, PuzzleOutcome};
use sudoku_core::solver::sized::SizedSolver;
use sudoku_core::solver::{Answer, Progress, Solver};

/// How far a search got.
pub(super) enum Searched {
    /// Finished (or out of the work budget `max_nodes`, which the answer
    /// says), after this much solving time.
    Done(Answer, Duration),
    /// Unfinished when the caller's node budget ran out or its turn on a
    /// solver thread ended.
    Paused(Duration),
}

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

/// An engine as the scheduler drives it: restarted on a job, resumed in
/// slices, its answer read back as the wire's `Solution`. The 9x9 bitboard
/// engine and the sized one are the two; every search task is written
/// once over this.
pub(in crate::service) trait Engine {
    /// A validated puzzle of this engine's shapes, with its solution limit
    /// and the form its answer is written in.
    type Job;
    fn restart(&mut self, job: &Self::Job);
    fn resume(&mut self, nodes: u64) -> Progress;
    fn nodes(&self) -> u64;
    fn outcome(&self) -> pb::Outcome;
    /// The finished search's answer to `job`, as the wire gives it.
    fn solution(&self, job: &Self::Job, elapsed: Duration) -> pb::Solution;
    /// A solver for `job` on this thread (a kept one when there is).
    fn take(job: &Self::Job) -> Box<Self>;
    /// Gives a finished solver back to this thread for its next task.
    fn give(solver: Box<Self>);
    /// What a paused solver holds in memory, to charge.
    fn heap_bytes(&self) -> usize;
    /// The test hook that makes a search of this job panic.
    #[cfg(feature = "test-hooks")]
    fn hooked(_shared: &Shared, _job: &Self::Job) -> bool {
        false
    }
}

impl Engine for Solver {
    type Job = Job;
    fn restart(&mut self, job: &Job) {
        Solver::restart(self, &job.grid, job.limit);
    }
    fn resume(&mut self, nodes: u64) -> Progress {
        Solver::resume(self, nodes)
    }
    fn nodes(&self) -> u64 {
        self.answer().stats.nodes
    }
    fn outcome(&self) -> pb::Outcome {
        outcome(&self.answer())
    }
    fn solution(&self, job: &Job, elapsed: Duration) -> pb::Solution {
        to_pb(&self.answer(), job, elapsed)
    }
    fn take(job: &Job) -> Box<Solver> {
        Box::new(Solver::new(&job.grid, job.limit))
    }
    fn give(_: Box<Solver>) {}
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Solver>()
    }
    #[cfg(feature = "test-hooks")]
    fn hooked(shared: &Shared, job: &Job) -> bool {
        shared.panic_on == Some(job.grid)
    }
}

impl Engine for SizedSolver {
    type Job = SizedJob;
    fn restart(&mut self, job: &SizedJob) {
        SizedSolver::restart(self, &job.grid, job.limit);
    }
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
    fn solution(&self, job: &SizedJob, elapsed: Duration) -> pb::Solution {
        sized_answer_to_pb(&self.answer(), self.solution().as_ref(), job, elapsed)
    }
    fn take(job: &SizedJob) -> Box<SizedSolver> {
        take_sized_solver(&job.grid)
    }
    fn give(solver: Box<SizedSolver>) {
        give_sized_solver(solver);
    }
    fn heap_bytes(&self) -> usize {
        SizedSolver::heap_bytes(self)
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
pub(super) fn slices(
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
pub(super) fn slices_of<S: Engine>(
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
pub(in crate::service) fn count_failure(gauges: &Gauges, failure: &Failure) {
    gauges.count(match failure {
        Failure::Invalid(_) => PuzzleOutcome::Invalid,
        _ => PuzzleOutcome::Failed,
    });
}
