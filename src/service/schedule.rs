//! Where and how long work runs: a unary call's first nodes inline on the
//! runtime thread that read it, the rest of its search and every batch
//! message on a solver thread ([`super::pool`]), all of it in slices of
//! `slice_nodes` with the deadline, the client's presence and the work
//! budget checked between slices. This is where a deadline stops the solver.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::convert::{Job, outcome, parse_grid, parse_limit, to_pb};
use super::pool::with_thread_solver;
use super::status::{Failure, to_rpc_status};
use super::{Shared, Sudoku};
use crate::pb;
use crate::solver::{Answer, Progress, Solver};
use crate::telemetry::metrics::{Gauges, PuzzleOutcome};

impl Sudoku {
    /// Solves one validated puzzle of a unary call: up to `inline_nodes`
    /// nodes at once on this thread (most puzzles need fewer), the rest on
    /// a solver thread. Dropping the future (client reset) stops the search
    /// at its next slice.
    pub(super) async fn solve_job(
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

    /// Answers one batch request message on a solver thread; `None` when
    /// the stream's deadline passed on the way, as then no further results
    /// are sent. Dropping the future (the client left, or the deadline)
    /// stops the work at the current item's next slice.
    pub(super) async fn solve_message(
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
    #[cfg(feature = "test-hooks")]
    if shared.panic_on == Some(job.grid) {
        panic!("test hook: panic while solving {}", job.grid);
    }
    solver.restart(&job.grid, job.limit);
    slices(shared, solver, budget, deadline, cancelled, Duration::ZERO)
}

/// Decrements the solving gauge when a solve ends, however it ends.
struct SolvingGuard<'a>(&'a Gauges);

impl Drop for SolvingGuard<'_> {
    fn drop(&mut self) {
        self.0.solving.fetch_sub(1, Ordering::Relaxed);
    }
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
    shared.gauges.count(match outcome(&answer) {
        pb::Outcome::Solved | pb::Outcome::Unspecified => PuzzleOutcome::Solved,
        pb::Outcome::NoSolution => PuzzleOutcome::NoSolution,
        pb::Outcome::MultipleSolutions => PuzzleOutcome::MultipleSolutions,
        pb::Outcome::WorkLimitReached => PuzzleOutcome::WorkLimitReached,
    });
    Searched::Done(answer, elapsed)
}

/// Counts a puzzle that failed instead of getting an answer.
pub(super) fn count_failure(gauges: &Gauges, failure: &Failure) {
    gauges.count(match failure {
        Failure::Invalid(_) => PuzzleOutcome::Invalid,
        _ => PuzzleOutcome::Failed,
    });
}

/// Answers the items of one batch message in order, on the calling
/// (solver) thread; `None` when the deadline passed or `cancelled` said so
/// on the way. A panic while solving an item answers that item INTERNAL.
pub(super) fn answer_items(
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
                count_failure(&shared.gauges, &failure);
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
