//! A unary call's search: its first nodes inline on the runtime thread
//! that read it, the rest (and every search of a size other than 9x9) as
//! a task on a solver thread; and the search turns batch items share.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tracing::Instrument as _;

use super::pending::{Pending, reply_by};
use super::slices::{Engine, Sliced, found, slices};
use crate::service::budget::Charge;
use crate::service::convert::outcome_to_pb;
use crate::service::pool::{Step, Turn, Work, with_thread_solver};
use crate::service::status::Failure;
use crate::service::work::{Found, Job};
use crate::service::{Shared, Sudoku, Tenant};
use crate::telemetry::traces;
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_core::solver::sized::SizedSolver;

impl Sudoku {
    /// Solves one validated 9x9 puzzle of a unary call from `tenant`: up
    /// to `inline_nodes` nodes at once on this thread (most puzzles need
    /// fewer), the rest on a solver thread as a [`UnarySearch`]. Dropping
    /// the future (client reset) stops the search at its next slice.
    pub(in crate::service) async fn solve_job(
        &self,
        job: Job,
        deadline: Option<Instant>,
        tenant: Tenant,
    ) -> Result<Found, Failure> {
        let shared = &self.shared;
        let inline = shared.limits.inline_nodes;
        let first = with_thread_solver(|solver| {
            restart(shared, solver, &job);
            Ok::<_, Failure>(
                match slices(
                    shared,
                    solver,
                    inline,
                    deadline,
                    &|| false,
                    Duration::ZERO,
                    &Turn::UNBOUNDED,
                )? {
                    Sliced::Done(elapsed) => Ok(found(solver, &job, elapsed)),
                    // The search moves on as it stands: redoing its inline
                    // nodes would cost more than copying it.
                    Sliced::Paused(elapsed) => Err((Box::new(solver.clone()), elapsed)),
                },
            )
        })?;
        let (solver, elapsed) = match first {
            Ok(done) => return Ok(done),
            Err(paused) => paused,
        };
        let span = traces::search_span(inline);
        let solution = self
            .unary_search(job, Some((solver, elapsed)), deadline, tenant, None)
            .instrument(span.clone())
            .await?;
        if !span.is_disabled() {
            let outcome = outcome_to_pb(solution.verdict).as_str_name();
            let stats = solution.stats;
            traces::record_answer(&span, outcome, stats.nodes, stats.guesses);
        }
        Ok(solution)
    }

    /// Solves one validated puzzle of a size other than 9x9 for a unary
    /// call of `tenant`, all of it on a solver thread (in turns, as batch
    /// items are). Dropping the future stops the search at its next slice.
    pub(in crate::service) async fn solve_sized(
        &self,
        job: Job<SizedGrid>,
        deadline: Option<Instant>,
        tenant: Tenant,
        charge: Option<Charge>,
    ) -> Result<Found, Failure> {
        self.unary_search::<SizedSolver>(job, None, deadline, tenant, charge)
            .await
    }

    /// A unary call's search on a solver thread, in either engine: from
    /// the start, or from where `resumed` (a solver and its solving time)
    /// left it.
    async fn unary_search<E: Engine + Send + 'static>(
        &self,
        job: Job<E::Puzzle>,
        resumed: Option<(Box<E>, Duration)>,
        deadline: Option<Instant>,
        tenant: Tenant,
        charge: Option<Charge>,
    ) -> Result<Found, Failure>
    where
        E::Puzzle: Send,
    {
        let (solver, elapsed) = match resumed {
            Some((solver, elapsed)) => (Some(solver), Some(elapsed)),
            None => (None, None),
        };
        let (reply, replied) = oneshot::channel();
        self.shared.pool.submit(
            tenant,
            Box::new(UnarySearch {
                shared: self.shared.clone(),
                job,
                charge,
                solver,
                elapsed,
                pending: Pending::new(deadline, reply),
            }),
        );
        reply_by(replied, deadline).await?
    }
}

/// A unary call's search on a solver thread, written once for both
/// engines: the rest of a 9x9 search the inline budget left, or all of a
/// search of another size.
struct UnarySearch<E: Engine> {
    shared: Arc<Shared>,
    job: Job<E::Puzzle>,
    /// What the search holds of its connection's share, grown to its
    /// solver's heap bytes whenever it pauses (none: not charged).
    charge: Option<Charge>,
    /// The search between turns (none before the first).
    solver: Option<Box<E>>,
    /// Solving time so far; none before the first turn.
    elapsed: Option<Duration>,
    pending: Pending<oneshot::Sender<Result<Found, Failure>>>,
}

impl<E: Engine + Send> Work for UnarySearch<E>
where
    E::Puzzle: Send,
{
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, turn: &Turn) -> Step {
        let mut solver = self.solver.take().unwrap_or_else(|| E::take(&self.job));
        let pending = &self.pending;
        let cancelled = || pending.cancelled();
        // A turn holds no more than its charge could grow to, so pausing
        // never finds it over budget (a large grid's SAT engine stays
        // within it).
        if let Some(charge) = self.charge.as_ref() {
            solver.cap_memory(charge.room());
        }
        let searched = item_turn(
            &self.shared,
            &mut *solver,
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
                E::give(solver);
                self.pending.answer(result);
                Step::Done
            }
        }
    }
}

/// One turn of an item's search, in either engine: restarted on `job`
/// unless `resumed` (the solving time so far), to its end or the end of
/// the turn. A panic answers INTERNAL.
pub(super) fn item_turn<E: Engine>(
    shared: &Shared,
    solver: &mut E,
    job: &Job<E::Puzzle>,
    resumed: Option<Duration>,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    turn: &Turn,
) -> ItemTurn {
    let searched = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let elapsed = match resumed {
            Some(elapsed) => elapsed,
            None => {
                restart(shared, solver, job);
                Duration::ZERO
            }
        };
        slices(shared, solver, u64::MAX, deadline, cancelled, elapsed, turn)
    }));
    match searched {
        Ok(Ok(Sliced::Done(elapsed))) => ItemTurn::Answered(Ok(found(solver, job, elapsed))),
        Ok(Ok(Sliced::Paused(elapsed))) => ItemTurn::Paused(elapsed),
        Ok(Err(failure)) => ItemTurn::Answered(Err(failure)),
        Err(_) => ItemTurn::Answered(Err(Failure::Panicked)),
    }
}

/// Restarts `solver` on `job` (where the test hook asks, a panic).
fn restart<E: Engine>(_shared: &Shared, solver: &mut E, job: &Job<E::Puzzle>) {
    #[cfg(feature = "test-hooks")]
    if E::hooked(_shared, job) {
        panic!("test hook: panic while solving");
    }
    solver.start(&job.grid, job.limit);
}

/// How an item's turn ended.
pub(super) enum ItemTurn {
    /// With the item's answer (a failure answers this item only, except a
    /// deadline or cancellation, which end the stream).
    Answered(Result<Found, Failure>),
    /// Mid-search, after this much solving time.
    Paused(Duration),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::schedule::testing::{EASTER_MONSTER, run_to_end, service};
    use crate::service::work::Form;
    use sudoku_core::puzzle::Grid;
    use sudoku_core::solver::{Solver, Verdict};

    #[test]
    fn the_rest_of_a_search_answered_in_turns_matches_one_answered_at_once() {
        let svc = service();
        let job = Job {
            grid: Grid::from_text(EASTER_MONSTER).unwrap(),
            form: Form::Text,
            limit: 2,
        };
        let mut answers = Vec::new();
        for sliced in [false, true] {
            let mut solver = Box::new(Solver::new(&job.grid, job.limit));
            solver.resume(8);
            let (reply, mut replied) = oneshot::channel();
            let mut rest = UnarySearch {
                shared: svc.shared.clone(),
                job,
                charge: None,
                solver: Some(solver),
                elapsed: Some(Duration::ZERO),
                pending: Pending::new(None, reply),
            };
            let turns = run_to_end(&mut rest, sliced);
            let mut answer = replied.try_recv().unwrap().unwrap();
            // The time differs from run to run; the rest must not.
            answer.elapsed = Duration::ZERO;
            answers.push((turns, answer));
        }
        assert_eq!(answers[0].0, 1);
        assert!(answers[1].0 > 5, "{} turns", answers[1].0);
        assert_eq!(answers[0].1, answers[1].1);
        assert_eq!(answers[1].1.verdict, Verdict::Solved);
    }
}
