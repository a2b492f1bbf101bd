//! The solver threads. Searches longer than a call's inline budget run
//! here, on threads of their own at a lower OS priority (a higher nice
//! value) than the async runtime's. The runtime's threads then only do I/O
//! and short work, and when a health check or an easy call arrives while
//! every core is solving hard puzzles, the kernel runs the runtime thread
//! that takes it at once instead of sharing the cores out in
//! multi-millisecond turns.
//!
//! Every thread, solver or runtime, keeps one [`Solver`] and restarts it
//! per puzzle ([`with_thread_solver`]), so no search allocates.

use std::cell::RefCell;
use std::panic::AssertUnwindSafe;

use crate::puzzle::Grid;
use crate::solver::Solver;

thread_local! {
    static SOLVER: RefCell<Solver> = RefCell::new(Solver::new(&Grid::EMPTY, 1));
}

/// Runs `f` with this thread's solver (restart it before use).
pub fn with_thread_solver<R>(f: impl FnOnce(&mut Solver) -> R) -> R {
    SOLVER.with_borrow_mut(f)
}

/// Work for a solver thread. A task that panics is dropped with whatever
/// it owns, so a caller waiting on a channel the task held sees it closed.
pub type Task = Box<dyn FnOnce(&mut Solver) + Send>;

/// A fixed set of solver threads taking tasks in arrival order.
pub struct Pool {
    /// `None`: tasks run on the thread that submits them.
    queue: Option<async_channel::Sender<Task>>,
}

impl Pool {
    /// Starts `threads` solver threads at niceness `nice` (added to the
    /// process's; 0 leaves it). With 0 threads, [`Pool::submit`] runs each
    /// task at once on the caller's thread (for the fuzzing hook).
    pub fn new(threads: usize, nice: i32) -> std::io::Result<Pool> {
        if threads == 0 {
            return Ok(Pool { queue: None });
        }
        let (tx, rx) = async_channel::unbounded::<Task>();
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("sudoku-solver-{i}"))
                .spawn(move || {
                    lower_priority(nice);
                    // Ends when the service, which holds the sender, is gone.
                    while let Ok(task) = rx.recv_blocking() {
                        let ran =
                            std::panic::catch_unwind(AssertUnwindSafe(|| with_thread_solver(task)));
                        if ran.is_err() {
                            tracing::error!("a solver task panicked; its caller answers INTERNAL");
                        }
                    }
                })?;
        }
        Ok(Pool { queue: Some(tx) })
    }

    /// Queues `task` behind those already waiting (or runs it now, with no
    /// threads). The queue's length is bounded by the service's in-flight
    /// limit, not here.
    pub fn submit(&self, task: Task) {
        match &self.queue {
            // Sending fails only once the receivers are gone, which happens
            // only after every thread ended; the task is then dropped and
            // its caller sees its reply channel closed.
            Some(tx) => {
                let _ = tx.try_send(task);
            }
            None => with_thread_solver(task),
        }
    }
}

/// Raises this thread's nice value by `nice` (Linux applies it to the
/// calling thread only). Lowering priority needs no privilege; a failure is
/// logged and the thread runs at normal priority.
fn lower_priority(nice: i32) {
    if nice == 0 {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        let tid = rustix::thread::gettid();
        let set = getpriority_process(Some(tid))
            .and_then(|current| setpriority_process(Some(tid), (current + nice).min(19)));
        if let Err(e) = set {
            tracing::warn!(error = %e, nice, "could not lower the solver thread's priority");
        }
    }
    #[cfg(not(target_os = "linux"))]
    tracing::warn!(nice, "solver thread priority is only set on Linux");
}
