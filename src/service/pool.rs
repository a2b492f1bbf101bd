//! The solver threads, shared out fairly between connections.
//!
//! Searches longer than a call's inline budget run here, on threads of
//! their own at a lower OS priority (a higher nice value) than the async
//! runtime's. The runtime's threads then only do I/O and short work, and
//! when a health check or an easy call arrives while every core is solving
//! hard puzzles, the kernel runs the runtime thread that takes it at once
//! instead of sharing the cores out in multi-millisecond turns.
//!
//! A thread does not run a task to its end: a task is resumable work
//! ([`Work`]) that gets one turn of about `quantum` at a time. Each
//! connection ([`Tenant`]) has a FIFO queue of tasks, and the tenants with
//! queued tasks stand in a ring:
//!
//! ```text
//!   ring:  A -> B -> C -> (back to A)
//!   A: [a1 a2 a3 ... a500] 2 running    B: [b1] 0 running    C: [c1 c2] 0 running
//! ```
//!
//! A free thread serves the tenant with the fewest tasks on threads now,
//! the first in the ring of those (here B): it takes that tenant's head
//! task and moves the tenant to the back of the ring (or out of it when
//! its queue is now empty). A task whose turn ends unfinished goes back to
//! the head of its tenant's queue, so a tenant's tasks keep their order and
//! its oldest finish first. So while k connections have work each gets
//! 1/k of the threads (the ring shares out what does not divide evenly),
//! a newcomer gets the next thread whose turn ends, not a place behind 500
//! searches, and a connection's tasks stay on the threads they hold
//! instead of all crawling along together. A turn ends early only when
//! some task waits: a lone task runs on undisturbed.
//!
//! Every thread, solver or runtime, keeps one [`Solver`] and restarts it
//! per puzzle ([`with_thread_solver`]), so no search allocates.
//!
//! When there are as many solver threads as cores the process may run on,
//! each thread is pinned to a core of its own (`--pin-solvers`). Threads
//! asleep when work arrives are woken together by a runtime thread that
//! is still running; unpinned, the kernel often queues them all on the one
//! idle core, and the other core stays idle until a scheduler tick moves
//! one (up to 4 ms at 250 Hz) while the work waits on half the cores.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::Tenant;
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_core::solver::Solver;
use sudoku_core::solver::sized::SizedSolver;

thread_local! {
    static SOLVER: RefCell<Solver> = RefCell::new(Solver::new(&Grid::EMPTY, 1));
    static SIZED: RefCell<Option<Box<SizedSolver>>> = const { RefCell::new(None) };
}

/// A solver of the sized engine for a task of this thread: the one this
/// thread last gave back (its tables and trail reused when the shape is the
/// same), or a new one.
pub fn take_sized_solver(grid: &SizedGrid) -> Box<SizedSolver> {
    SIZED
        .with_borrow_mut(Option::take)
        .unwrap_or_else(|| Box::new(SizedSolver::new(grid, 1)))
}

/// Keeps `solver` for the next sized task of this thread, without what its
/// last search took beyond its tables (no longer charged to anyone).
pub fn give_sized_solver(mut solver: Box<SizedSolver>) {
    solver.release();
    SIZED.with_borrow_mut(|kept| *kept = Some(solver));
}

/// Runs `f` with this thread's solver (restart it before use). Not
/// reentrant: `f` must not call it again.
pub fn with_thread_solver<R>(f: impl FnOnce(&mut Solver) -> R) -> R {
    SOLVER.with_borrow_mut(f)
}

/// How a task's turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The task is over (answered, or its caller told why not).
    Done,
    /// The turn is over but the work is not: queue the task again.
    Unfinished,
}

/// Resumable work for a solver thread.
pub trait Work: Send {
    /// False once nobody waits for the result: the caller left or its
    /// deadline passed. Such a task is dropped when a thread takes it,
    /// before it runs; dropping it must tell a caller still waiting why.
    fn wanted(&self) -> bool;

    /// Goes on with the work until it is done or `turn` says the turn is
    /// over. Checks `turn` only after doing some work, so every turn makes
    /// progress. A task that searches a 9x9 grid borrows this thread's
    /// solver for its turn ([`with_thread_solver`]), and moves the search
    /// into a solver of its own if it must stop mid-search.
    fn run(&mut self, turn: &Turn) -> Step;
}

/// A queued task. A task that panics is dropped with whatever it owns, so
/// a caller waiting on a channel the task held sees it closed.
pub type Task = Box<dyn Work>;

/// One turn of a task on a thread.
pub struct Turn<'a> {
    /// `None`: the turn never ends (no threads, or a test).
    ends: Option<(Instant, &'a AtomicUsize)>,
}

impl Turn<'_> {
    /// A turn that lasts until the task is done.
    pub const UNBOUNDED: Turn<'static> = Turn { ends: None };

    /// A turn that is over after each slice, as when the quantum is spent
    /// at once and work waits (for tests of resuming).
    #[cfg(test)]
    pub fn every_slice() -> Turn<'static> {
        static WAITING: AtomicUsize = AtomicUsize::new(1);
        Turn {
            ends: Some((Instant::now(), &WAITING)),
        }
    }

    /// Whether the task should stop and go back to its queue: its quantum
    /// is spent and another task is waiting for a thread. Cheap enough to
    /// ask after every slice: one relaxed load, and a clock read only
    /// while tasks wait.
    pub fn over(&self) -> bool {
        self.ends.is_some_and(|(ends, waiting)| {
            waiting.load(Ordering::Relaxed) > 0 && Instant::now() >= ends
        })
    }
}

/// Emptied tenant queues kept for reuse, at most, and the largest kept:
/// enough for the connections that usually have work at once, without
/// holding on to the memory of a burst.
const SPARE_QUEUES: usize = 64;
const SPARE_CAPACITY: usize = 64;

/// A tenant with tasks queued or running.
#[derive(Default)]
struct Tenancy {
    /// Its tasks waiting for a thread, oldest first.
    queue: VecDeque<Task>,
    /// Its tasks on a thread now.
    running: usize,
}

/// The tasks waiting for a thread.
#[derive(Default)]
struct Queues {
    /// Every tenant with a task queued or running.
    tenants: HashMap<Tenant, Tenancy>,
    /// The tenants with tasks queued, each once, in turn order.
    ring: VecDeque<Tenant>,
    /// Emptied queues kept for tenants to come, so queueing a task
    /// allocates nothing once the pool has warmed up.
    spare: Vec<VecDeque<Task>>,
    /// Threads waiting for a task.
    idle: usize,
    /// Of those, the ones woken for a task queued since and not yet back
    /// under the lock: a burst of tasks wakes each idle thread once, not
    /// one wake-up call per task.
    waking: usize,
    /// The pool is gone: threads end and tasks are dropped.
    closed: bool,
}

impl Queues {
    /// Queues `task` last (`first`: first) among `tenant`'s.
    fn push(&mut self, tenant: Tenant, task: Task, first: bool) {
        let spare = &mut self.spare;
        let tenancy = self.tenants.entry(tenant).or_insert_with(|| Tenancy {
            queue: spare.pop().unwrap_or_default(),
            running: 0,
        });
        if tenancy.queue.is_empty() {
            self.ring.push_back(tenant);
        }
        if first {
            tenancy.queue.push_front(task);
        } else {
            tenancy.queue.push_back(task);
        }
    }

    /// The head task of the tenant with the fewest tasks running, the first
    /// in the ring of those; it moves to the back of the ring. At most
    /// `threads` tenants have tasks running, so among the first
    /// `threads + 1` of the ring is one with none if any has: the search
    /// stops there, however many tenants wait.
    fn pop(&mut self, threads: usize) -> Option<(Tenant, Task)> {
        loop {
            let mut best: Option<(usize, usize)> = None;
            for (i, tenant) in self.ring.iter().take(threads + 1).enumerate() {
                let running = self.tenants.get(tenant).map_or(0, |t| t.running);
                if best.is_none_or(|(_, fewest)| running < fewest) {
                    best = Some((i, running));
                }
                if running == 0 {
                    break;
                }
            }
            let (i, _) = best?;
            let tenant = self.ring.remove(i)?;
            // Every tenant in the ring has a task queued; the loop only
            // guards that.
            let Some(tenancy) = self.tenants.get_mut(&tenant) else {
                continue;
            };
            let Some(task) = tenancy.queue.pop_front() else {
                continue;
            };
            tenancy.running += 1;
            if !tenancy.queue.is_empty() {
                self.ring.push_back(tenant);
            }
            return Some((tenant, task));
        }
    }

    /// One of `tenant`'s tasks left its thread (done, dropped, or queued
    /// again already); a tenant with nothing queued or running is
    /// forgotten, its queue kept for reuse.
    fn release(&mut self, tenant: Tenant) {
        let Some(tenancy) = self.tenants.get_mut(&tenant) else {
            return;
        };
        tenancy.running = tenancy.running.saturating_sub(1);
        if tenancy.running == 0
            && tenancy.queue.is_empty()
            && let Some(tenancy) = self.tenants.remove(&tenant)
            && self.spare.len() < SPARE_QUEUES
            && tenancy.queue.capacity() <= SPARE_CAPACITY
        {
            self.spare.push(tenancy.queue);
        }
    }
}

/// What the pool and its threads share.
struct Inner {
    queues: Mutex<Queues>,
    /// Signalled when a task is queued while a thread is idle, and when
    /// the pool closes.
    ready: Condvar,
    /// Tasks in `queues`, readable without the lock (see [`Turn::over`]).
    waiting: AtomicUsize,
    /// How long a task runs before it yields to a waiting one.
    quantum: Duration,
    /// The solver threads started.
    threads: usize,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queues> {
        // Nothing panics while holding the lock; a poisoned lock is
        // still consistent.
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `task` for `tenant`; hands it back when the pool is closed,
    /// to be dropped by the caller outside the lock.
    fn push(&self, tenant: Tenant, task: Task) -> Option<Task> {
        let wake = {
            let mut queues = self.lock();
            if queues.closed {
                return Some(task);
            }
            queues.push(tenant, task, false);
            self.waiting.fetch_add(1, Ordering::Relaxed);
            let wake = queues.idle > queues.waking;
            if wake {
                queues.waking += 1;
            }
            wake
        };
        // Outside the lock, which the woken thread takes first.
        if wake {
            self.ready.notify_one();
        }
        None
    }

    /// Takes note that the task this thread ran for `tenant` left it,
    /// putting it back at the head of the tenant's queue when `unfinished`,
    /// then waits for the next task; `None` once the pool is closed.
    /// A task the closed pool refused is handed back in `refused`, to be
    /// dropped outside the lock: dropping a task may drop the last handle
    /// on the service, whose pool then takes this lock.
    fn next(
        &self,
        ended: Option<(Tenant, Option<Task>)>,
        refused: &mut Option<Task>,
    ) -> Option<(Tenant, Task)> {
        let mut queues = self.lock();
        if let Some((tenant, unfinished)) = ended {
            if let Some(task) = unfinished {
                if queues.closed {
                    *refused = Some(task);
                    return None;
                }
                queues.push(tenant, task, true);
                self.waiting.fetch_add(1, Ordering::Relaxed);
            }
            queues.release(tenant);
        }
        loop {
            if queues.closed {
                return None;
            }
            if let Some(next) = queues.pop(self.threads) {
                self.waiting.fetch_sub(1, Ordering::Relaxed);
                return Some(next);
            }
            queues.idle += 1;
            queues = self
                .ready
                .wait(queues)
                .unwrap_or_else(PoisonError::into_inner);
            queues.idle -= 1;
            // Woken for a task, or spuriously: either way one fewer wake
            // is on its way (a count too low only wakes a thread more).
            queues.waking = queues.waking.saturating_sub(1);
        }
    }

    /// A solver thread: takes tasks in turn until the pool closes.
    fn serve(&self) {
        let mut ended = None;
        loop {
            let mut refused = None;
            let next = self.next(ended.take(), &mut refused);
            drop(refused);
            let Some((tenant, mut task)) = next else {
                return;
            };
            // A task that is not queued again is dropped at the end of this
            // iteration, outside the lock.
            if !task.wanted() {
                ended = Some((tenant, None));
                continue;
            }
            let turn = Turn {
                ends: Some((Instant::now() + self.quantum, &self.waiting)),
            };
            let ran = std::panic::catch_unwind(AssertUnwindSafe(|| task.run(&turn)));
            ended = Some((
                tenant,
                match ran {
                    Ok(Step::Unfinished) => Some(task),
                    Ok(Step::Done) => None,
                    Err(_) => {
                        tracing::error!("a solver task panicked; its caller answers INTERNAL");
                        None
                    }
                },
            ));
        }
    }
}

/// A fixed set of solver threads that take turns at the tasks of each
/// tenant in turn.
pub struct Pool {
    /// `None`: tasks run on the thread that submits them.
    inner: Option<Arc<Inner>>,
}

impl Pool {
    /// Starts `threads` solver threads at niceness `nice` (added to the
    /// process's; 0 leaves it) that run tasks in turns of `quantum`, each
    /// on a core of its own when `pin` and there are as many cores (see
    /// [`cores_to_pin`]). With 0
    /// threads, [`Pool::submit`] runs each task to its end at once on the
    /// caller's thread (for the fuzzing hook).
    pub fn new(threads: usize, nice: i32, quantum: Duration, pin: bool) -> std::io::Result<Pool> {
        if threads == 0 {
            return Ok(Pool { inner: None });
        }
        let cores = if pin { cores_to_pin(threads) } else { None };
        match &cores {
            Some(cores) => tracing::debug!(?cores, "solver threads pinned, one a core"),
            None => tracing::debug!(threads, "solver threads placed by the kernel"),
        }
        let inner = Arc::new(Inner {
            queues: Mutex::new(Queues::default()),
            ready: Condvar::new(),
            waiting: AtomicUsize::new(0),
            quantum,
            threads,
        });
        let pool = Pool {
            inner: Some(inner.clone()),
        };
        for i in 0..threads {
            let inner = inner.clone();
            // A thread that fails to start leaves the pool to close the
            // ones started (dropping `pool` on return).
            std::thread::Builder::new()
                .name(format!("sudoku-solver-{i}"))
                .spawn({
                    let core = cores.as_ref().map(|c| c[i]);
                    move || {
                        lower_priority(nice);
                        if let Some(core) = core {
                            pin_to(core);
                        }
                        inner.serve();
                    }
                })?;
        }
        Ok(pool)
    }

    /// The solver threads (0 with none: tasks then run on the caller's).
    pub fn threads(&self) -> usize {
        self.inner.as_ref().map_or(0, |inner| inner.threads)
    }

    /// Queues `task` behind `tenant`'s others (or runs it now, with no
    /// threads). The queues' lengths are bounded by the service's in-flight
    /// limit, not here.
    pub fn submit(&self, tenant: Tenant, mut task: Task) {
        match &self.inner {
            // Refused only once the pool closed: the task is then dropped,
            // which tells its caller.
            Some(inner) => drop(inner.push(tenant, task)),
            None => while task.wanted() && task.run(&Turn::UNBOUNDED) == Step::Unfinished {},
        }
    }
}

impl Drop for Pool {
    /// Ends the threads (each after its current turn) and drops the tasks
    /// still queued, outside the lock.
    fn drop(&mut self) {
        let Some(inner) = &self.inner else {
            return;
        };
        let tenants = {
            let mut queues = inner.lock();
            queues.closed = true;
            queues.ring.clear();
            std::mem::take(&mut queues.tenants)
        };
        inner.ready.notify_all();
        drop(tenants);
    }
}

/// The cores of this process's CPU affinity, one for each of `threads`
/// solver threads, when there are exactly as many: the threads then cover
/// every core the process may run on, one each, and a pinned thread waits
/// only while the server's I/O threads or another process use its core.
/// With fewer threads than cores (`--workers`, or a CPU quota below the
/// affinity in a container) pinning would keep threads off idle cores.
#[cfg(target_os = "linux")]
fn cores_to_pin(threads: usize) -> Option<Vec<usize>> {
    let set = rustix::thread::sched_getaffinity(None).ok()?;
    let cores: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .collect();
    pin_plan(&cores, threads)
}

#[cfg(not(target_os = "linux"))]
fn cores_to_pin(_threads: usize) -> Option<Vec<usize>> {
    None
}

/// `cores` when they are as many as `threads`.
fn pin_plan(cores: &[usize], threads: usize) -> Option<Vec<usize>> {
    (threads > 1 && cores.len() == threads).then(|| cores.to_vec())
}

/// Pins this thread to `core`; a failure is logged and the thread stays
/// where the kernel puts it.
fn pin_to(core: usize) {
    #[cfg(target_os = "linux")]
    {
        let mut set = rustix::thread::CpuSet::new();
        set.set(core);
        if let Err(e) = rustix::thread::sched_setaffinity(None, &set) {
            tracing::warn!(error = %e, core, "could not pin a solver thread to its core");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = core;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// What the test tasks did, in order: (name, turn).
    type Log = Arc<Mutex<Vec<(&'static str, u32)>>>;

    /// A task that needs `turns` turns, logs each, and signals `dropped`
    /// when it is dropped.
    struct Scripted {
        name: &'static str,
        turns: u32,
        done: u32,
        wanted: bool,
        log: Log,
        dropped: Option<mpsc::Sender<&'static str>>,
    }

    impl Scripted {
        fn new(name: &'static str, turns: u32, log: &Log) -> Box<Scripted> {
            Box::new(Scripted {
                name,
                turns,
                done: 0,
                wanted: true,
                log: log.clone(),
                dropped: None,
            })
        }
    }

    impl Work for Scripted {
        fn wanted(&self) -> bool {
            self.wanted
        }

        fn run(&mut self, _: &Turn) -> Step {
            self.done += 1;
            self.log.lock().unwrap().push((self.name, self.done));
            if self.done < self.turns {
                Step::Unfinished
            } else {
                Step::Done
            }
        }
    }

    impl Drop for Scripted {
        fn drop(&mut self) {
            if let Some(tx) = &self.dropped {
                let _ = tx.send(self.name);
            }
        }
    }

    /// A task that holds its thread until released, then does `then`.
    struct Gate {
        open: mpsc::Receiver<()>,
        entered: mpsc::Sender<()>,
        then: Step,
    }

    impl Work for Gate {
        fn wanted(&self) -> bool {
            true
        }

        fn run(&mut self, _: &Turn) -> Step {
            let _ = self.entered.send(());
            let _ = self.open.recv();
            self.then
        }
    }

    /// Submits a gate on `pool` and waits until a thread holds it; sending
    /// on the returned channel lets the thread go.
    fn hold_a_thread(pool: &Pool, then: Step) -> mpsc::Sender<()> {
        hold_a_thread_for(pool, Tenant(99), then)
    }

    /// [`hold_a_thread`] with a task of `tenant`.
    fn hold_a_thread_for(pool: &Pool, tenant: Tenant, then: Step) -> mpsc::Sender<()> {
        let (open_tx, open) = mpsc::channel();
        let (entered, entered_rx) = mpsc::channel();
        pool.submit(
            tenant,
            Box::new(Gate {
                open,
                entered,
                then,
            }),
        );
        entered_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("a thread took the gate");
        open_tx
    }

    /// Waits until `log` has `n` entries.
    fn wait_for(log: &Log, n: usize) -> Vec<(&'static str, u32)> {
        within_5s(|| {
            let seen = log.lock().unwrap().clone();
            match seen.len() >= n {
                true => Ok(seen),
                false => Err(format!("only {seen:?} ran")),
            }
        })
    }

    /// What `check` gives once it gives it, checked every millisecond;
    /// after 5 s the test fails with its last complaint.
    fn within_5s<T>(mut check: impl FnMut() -> Result<T, String>) -> T {
        let started = Instant::now();
        loop {
            let complaint = match check() {
                Ok(value) => return value,
                Err(complaint) => complaint,
            };
            assert!(started.elapsed() < Duration::from_secs(5), "{complaint}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn tenants_take_turns_and_a_resumed_task_keeps_its_place() {
        let pool = Pool::new(1, 0, Duration::from_millis(2), false).unwrap();
        let log = Log::default();
        let open = hold_a_thread(&pool, Step::Done);
        // Tenant 1 queues three tasks of two turns, tenant 2 one, tenant 3
        // one of three turns.
        for name in ["a1", "a2", "a3"] {
            pool.submit(Tenant(1), Scripted::new(name, 2, &log));
        }
        pool.submit(Tenant(2), Scripted::new("b1", 2, &log));
        pool.submit(Tenant(3), Scripted::new("c1", 3, &log));
        open.send(()).unwrap();
        let order = wait_for(&log, 11);
        assert_eq!(
            order,
            [
                ("a1", 1),
                ("b1", 1),
                ("c1", 1),
                // a1 goes on before a2: it went back to the head of its
                // tenant's queue.
                ("a1", 2),
                ("b1", 2),
                ("c1", 2),
                ("a2", 1),
                ("c1", 3),
                // Only tenant 1 has work left.
                ("a2", 2),
                ("a3", 1),
                ("a3", 2),
            ]
        );
    }

    #[test]
    fn a_newcomer_waits_for_one_turn_not_for_a_queue() {
        let pool = Pool::new(1, 0, Duration::from_millis(2), false).unwrap();
        let log = Log::default();
        let open = hold_a_thread(&pool, Step::Done);
        for name in ["a1", "a2", "a3", "a4", "a5"] {
            pool.submit(Tenant(1), Scripted::new(name, 1, &log));
        }
        pool.submit(Tenant(2), Scripted::new("b1", 1, &log));
        open.send(()).unwrap();
        let order = wait_for(&log, 6);
        assert_eq!(order[1], ("b1", 1), "{order:?}");
    }

    #[test]
    fn a_tenant_without_a_running_task_goes_first() {
        let pool = Pool::new(2, 0, Duration::from_millis(2), false).unwrap();
        let log = Log::default();
        // Tenant 1 holds one thread and has more queued; tenant 2 comes
        // later, behind it in the ring.
        let busy = hold_a_thread_for(&pool, Tenant(1), Step::Done);
        let open = hold_a_thread(&pool, Step::Done);
        for name in ["a1", "a2"] {
            pool.submit(Tenant(1), Scripted::new(name, 1, &log));
        }
        pool.submit(Tenant(2), Scripted::new("b1", 1, &log));
        open.send(()).unwrap();
        let order = wait_for(&log, 3);
        assert_eq!(order, [("b1", 1), ("a1", 1), ("a2", 1)]);
        busy.send(()).unwrap();
    }

    #[test]
    fn the_fewest_running_wins_and_ties_go_in_ring_order() {
        let log = Log::default();
        let mut queues = Queues::default();
        for (tenant, name) in [
            (1, "a1"),
            (1, "a2"),
            (1, "a3"),
            (2, "b1"),
            (2, "b2"),
            (3, "c1"),
        ] {
            queues.push(Tenant(tenant), Scripted::new(name, 1, &log), false);
        }
        let mut pop = || queues.pop(2).map(|(t, _)| t.0);
        // Nothing runs: ring order. Then tenant 3, running none, beats 1
        // and 2 with one each; then 1 and 2 tie at one and take turns.
        assert_eq!(pop(), Some(1));
        assert_eq!(pop(), Some(2));
        assert_eq!(pop(), Some(3));
        assert_eq!(pop(), Some(1));
        assert_eq!(pop(), Some(2));
        assert_eq!(pop(), Some(1));
        assert_eq!(pop(), None);
        // Tenants are forgotten once nothing of theirs queues or runs.
        for (tenant, running) in [(1, 3), (2, 2), (3, 1)] {
            for _ in 0..running {
                assert!(queues.tenants.contains_key(&Tenant(tenant)));
                queues.release(Tenant(tenant));
            }
        }
        assert!(queues.tenants.is_empty() && queues.ring.is_empty());
        assert_eq!(queues.spare.len(), 3, "their queues are kept for reuse");
    }

    #[test]
    fn unwanted_tasks_are_dropped_unrun() {
        let pool = Pool::new(1, 0, Duration::from_millis(2), false).unwrap();
        let log = Log::default();
        let (dropped_tx, dropped) = mpsc::channel();
        let open = hold_a_thread(&pool, Step::Done);
        let mut stale = Scripted::new("stale", 1, &log);
        stale.wanted = false;
        stale.dropped = Some(dropped_tx);
        pool.submit(Tenant(1), stale);
        pool.submit(Tenant(1), Scripted::new("fresh", 1, &log));
        open.send(()).unwrap();
        assert_eq!(wait_for(&log, 1), [("fresh", 1)]);
        assert_eq!(dropped.recv_timeout(Duration::from_secs(5)), Ok("stale"));
    }

    #[test]
    fn a_panicking_task_is_dropped_and_the_thread_goes_on() {
        struct Boom;
        impl Work for Boom {
            fn wanted(&self) -> bool {
                true
            }
            fn run(&mut self, _: &Turn) -> Step {
                panic!("test: a task panics");
            }
        }
        let pool = Pool::new(1, 0, Duration::from_millis(2), false).unwrap();
        let log = Log::default();
        pool.submit(Tenant(1), Box::new(Boom));
        pool.submit(Tenant(1), Scripted::new("after", 1, &log));
        assert_eq!(wait_for(&log, 1), [("after", 1)]);
    }

    /// A task that waits at `barrier` with the others, then records the
    /// cores its thread may run on.
    struct Meet {
        barrier: Arc<std::sync::Barrier>,
        cores: mpsc::Sender<Vec<usize>>,
    }

    impl Work for Meet {
        fn wanted(&self) -> bool {
            true
        }

        fn run(&mut self, _: &Turn) -> Step {
            self.barrier.wait();
            #[cfg(target_os = "linux")]
            let cores = rustix::thread::sched_getaffinity(None).map_or_else(
                |_| Vec::new(),
                |set| {
                    (0..rustix::thread::CpuSet::MAX_CPU)
                        .filter(|&c| set.is_set(c))
                        .collect()
                },
            );
            #[cfg(not(target_os = "linux"))]
            let cores = Vec::new();
            let _ = self.cores.send(cores);
            Step::Done
        }
    }

    /// Submits one [`Meet`] a thread of `pool` (`threads` of them), all
    /// at once; the cores each thread may run on. Each task holds its
    /// thread until all have one, so every thread must have been woken.
    fn meet_on_every_thread(pool: &Pool, threads: usize) -> Vec<Vec<usize>> {
        let barrier = Arc::new(std::sync::Barrier::new(threads));
        let (cores, seen) = mpsc::channel();
        for _ in 0..threads {
            pool.submit(
                Tenant(1),
                Box::new(Meet {
                    barrier: barrier.clone(),
                    cores: cores.clone(),
                }),
            );
        }
        (0..threads)
            .map(|_| {
                seen.recv_timeout(Duration::from_secs(5))
                    .expect("every idle thread was woken for the burst")
            })
            .collect()
    }

    /// Waits until `threads` threads of `pool` wait for a task.
    fn wait_until_idle(pool: &Pool, threads: usize) {
        within_5s(
            || match pool.inner.as_ref().unwrap().lock().idle >= threads {
                true => Ok(()),
                false => Err("the threads did not go idle".to_string()),
            },
        );
    }

    #[test]
    fn a_burst_of_tasks_wakes_every_idle_thread() {
        let pool = Pool::new(3, 0, Duration::from_millis(2), false).unwrap();
        // Twice: the second burst finds the count of threads being woken
        // back at 0.
        for _ in 0..2 {
            wait_until_idle(&pool, 3);
            assert_eq!(meet_on_every_thread(&pool, 3).len(), 3);
        }
    }

    #[test]
    fn the_plan_pins_only_as_many_threads_as_cores() {
        assert_eq!(pin_plan(&[0, 1], 2), Some(vec![0, 1]));
        assert_eq!(pin_plan(&[2, 5, 7], 3), Some(vec![2, 5, 7]));
        // Fewer threads than cores (a quota, or --workers): left free.
        assert_eq!(pin_plan(&[0, 1, 2, 3], 2), None);
        assert_eq!(pin_plan(&[0, 1], 3), None);
        // One thread on one core is pinned by the affinity already.
        assert_eq!(pin_plan(&[0], 1), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn as_many_threads_as_cores_are_pinned_one_a_core() {
        let Some(mut cores) =
            cores_to_pin(std::thread::available_parallelism().map_or(1, |n| n.get()))
        else {
            eprintln!("skipped: this process may run on one core, or fewer than it has");
            return;
        };
        let pool = Pool::new(cores.len(), 0, Duration::from_millis(2), true).unwrap();
        let mut seen: Vec<usize> = meet_on_every_thread(&pool, cores.len())
            .into_iter()
            .map(|c| {
                assert_eq!(c.len(), 1, "a solver thread may run on {c:?}");
                c[0]
            })
            .collect();
        seen.sort_unstable();
        cores.sort_unstable();
        assert_eq!(seen, cores, "each thread on a core of its own");
        // Unpinned, every thread may run on every core.
        let pool = Pool::new(cores.len(), 0, Duration::from_millis(2), false).unwrap();
        for c in meet_on_every_thread(&pool, cores.len()) {
            assert_eq!(c, cores);
        }
    }

    #[test]
    fn dropping_the_pool_drops_queued_tasks_and_ends_the_threads() {
        let pool = Pool::new(2, 0, Duration::from_millis(2), false).unwrap();
        let inner = Arc::downgrade(pool.inner.as_ref().unwrap());
        let log = Log::default();
        // Both threads busy with tasks that want another turn.
        let gates = [
            hold_a_thread(&pool, Step::Unfinished),
            hold_a_thread(&pool, Step::Unfinished),
        ];
        let (dropped_tx, dropped) = mpsc::channel();
        for name in ["q1", "q2"] {
            let mut task = Scripted::new(name, 1, &log);
            task.dropped = Some(dropped_tx.clone());
            pool.submit(Tenant(1), task);
        }
        drop(pool);
        let mut gone = vec![
            dropped.recv_timeout(Duration::from_secs(5)).unwrap(),
            dropped.recv_timeout(Duration::from_secs(5)).unwrap(),
        ];
        gone.sort();
        assert_eq!(gone, ["q1", "q2"]);
        for gate in gates {
            gate.send(()).unwrap();
        }
        within_5s(|| match inner.upgrade() {
            None => Ok(()),
            Some(_) => Err("the threads did not end".to_string()),
        });
        assert!(log.lock().unwrap().is_empty(), "queued tasks never ran");
    }

    #[test]
    fn without_threads_a_task_runs_to_its_end_at_once() {
        let pool = Pool::new(0, 0, Duration::from_millis(2), false).unwrap();
        let log = Log::default();
        pool.submit(Tenant(1), Scripted::new("inline", 3, &log));
        assert_eq!(
            *log.lock().unwrap(),
            [("inline", 1), ("inline", 2), ("inline", 3)]
        );
    }

    #[test]
    fn a_turn_ends_only_when_its_quantum_is_spent_and_work_waits() {
        let waiting = AtomicUsize::new(0);
        let spent = Turn {
            ends: Some((Instant::now(), &waiting)),
        };
        assert!(!spent.over(), "nothing waits");
        waiting.store(1, Ordering::Relaxed);
        assert!(spent.over());
        let fresh = Turn {
            ends: Some((Instant::now() + Duration::from_secs(60), &waiting)),
        };
        assert!(!fresh.over(), "quantum not spent");
        assert!(!Turn::UNBOUNDED.over());
    }
}
