//! The second engine of a restarting search near the phase transition: the
//! root's board as a formula, solved by a conflict-driven clause-learning
//! SAT solver (CaDiCaL, through the `cadical` crate; the `cdcl` feature) in
//! slices of conflicts.
//!
//! ```text
//!  variable k (from 1)   "cell c holds value v", for each value v the root left to each open cell c
//!  each open cell        at least one of its variables; at most one
//!  each unit, each value it lacks
//!                        at least one of its cells there; at most one
//! ```
//!
//! "At most one" is a clause per pair. A sequential counter (Sinz: a chain
//! of auxiliary "one is set at or before here" variables) propagates as
//! strongly with a linear count of clauses, but CaDiCaL searched far worse
//! on it: on the root formulas of the ten 49x49 grids of 58% blanks in
//! data/large/, 20 s each, the counter above 6 variables solved 2, above
//! 10 two of eight, above 16 nine, and pairs everywhere all ten (median
//! 8 s); pairs cost 2.3 times the clauses there, all binary. The
//! root's propagation (singles, box-line, the look-ahead) already pruned
//! the candidates, so the formula holds only what the tree search could not
//! settle.
//!
//! Unlike the tree and repair searches, which learn nothing from a failed
//! run, the solver keeps the clauses it learned from one slice to the next:
//! that is what it brings to grids about half blank, where a conflict high
//! up recurs in every run that does not learn it.
//!
//! One solve, paused between slices: every call into CaDiCaL starts its
//! restart, rephase and inprocessing schedules again, so slices made of
//! calls (the service's slices are a few hundred nodes) never reach the
//! long runs that solve these grids. The solver therefore runs one call on
//! a thread of its own, and its termination check, which CaDiCaL asks
//! about once per conflict, counts the slice down and, when it is spent,
//! parks that thread until the next slice (or the search is dropped, which
//! ends the call). Only one of the two threads runs at a time: the search
//! still uses one core, and its budget, deadline and cancellation hold to
//! within one check (about 0.1 ms on a 36x36 grid).
//!
//! A count makes a call per model: each model found is excluded by a
//! clause (some cell holds another value) before the next call, which
//! keeps all that was learned; a call that finds none ends the count.
//!
//! Memory: CaDiCaL allocates with the C++ allocator, out of sight of
//! [`heap_bytes`](Cdcl::heap_bytes), which is an estimate: bytes per
//! variable, clause and conflict, set from whole processes' resident sizes
//! on grids of data/large/ (docs/sizes.md). A caller's cap ([`Cdcl::start`]) is checked
//! against it before the formula is built and after every slice.

use crate::puzzle::sized::{Shape, UnitKind};

/// Estimated bytes per variable (its watch lists, phases, scores and
/// links), per clause of the formula, and per conflict (the clauses it
/// learns, until the solver's reductions drop most of them; counted up to
/// [`LEARNED_CONFLICTS`] conflicts).
const VAR_BYTES: usize = 512;
const CLAUSE_BYTES: usize = 128;
const CONFLICT_BYTES: usize = 256;
/// Estimated bytes per literal of a clause added after the formula (the
/// clauses that exclude a count's models).
const LITERAL_BYTES: usize = 4;
const LEARNED_CONFLICTS: u64 = 1 << 20;

/// The thread the solver runs on needs little stack of its own (CaDiCaL
/// keeps its data on the heap).
#[cfg(feature = "cdcl")]
const STACK_BYTES: usize = 4 << 20;

/// How a slice ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "cdcl"), allow(dead_code))]
pub(super) enum Sat {
    /// The formula has a model: [`Cdcl::fill`] writes it.
    Solved,
    /// The formula has none: neither has the root's board.
    NoSolution,
    /// The slice's conflicts ran out.
    Paused,
    /// The call ended without an answer (its thread panicked): the engine
    /// is gone, and the other searches go on alone.
    Lost,
}

/// The SAT engine of one search; empty until [`Cdcl::start`].
#[derive(Default)]
pub(super) struct Cdcl {
    #[cfg(feature = "cdcl")]
    sat: Option<worker::Worker>,
    /// The (cell, value) of each problem variable, from variable 1.
    vars: Vec<(u16, u8)>,
    /// The formula's clauses.
    clauses: usize,
    /// Literals of the clauses that exclude models (a count's), each
    /// as long as the open cells.
    excluded: usize,
    /// Conflicts allowed so far.
    conflicts: u64,
}

/// A copy starts without the SAT solver's state (CaDiCaL cannot be
/// copied): its next turn builds the formula again.
impl Clone for Cdcl {
    fn clone(&self) -> Cdcl {
        Cdcl::default()
    }
}

impl Cdcl {
    /// Whether this build has the engine (the `cdcl` feature).
    pub(super) const AVAILABLE: bool = cfg!(feature = "cdcl");

    /// Whether a formula is loaded.
    pub(super) fn ready(&self) -> bool {
        #[cfg(feature = "cdcl")]
        return self.sat.is_some();
        #[cfg(not(feature = "cdcl"))]
        false
    }

    /// Drops the formula and what was learned.
    pub(super) fn clear(&mut self) {
        #[cfg(feature = "cdcl")]
        {
            // Dropping the worker ends its call and joins its thread.
            self.sat = None;
        }
        self.vars = Vec::new();
        self.clauses = 0;
        self.excluded = 0;
        self.conflicts = 0;
    }

    /// The estimated bytes this engine holds (see the module's header).
    pub(super) fn heap_bytes(&self) -> usize {
        if !self.ready() {
            return 0;
        }
        self.formula_bytes() + self.conflicts.min(LEARNED_CONFLICTS) as usize * CONFLICT_BYTES
    }

    /// Loads the board `placed` (0: open) / `candidates` (of the open
    /// cells) of `shape` as a formula, unless its estimated bytes would pass
    /// `cap`: then (or without the `cdcl` feature) returns false and stays
    /// empty.
    pub(super) fn start(
        &mut self,
        shape: Shape,
        placed: impl Fn(usize) -> u8,
        candidates: impl Fn(usize) -> u64,
        cap: usize,
    ) -> bool {
        self.clear();
        if !Self::AVAILABLE {
            return false;
        }
        let n = shape.side();
        // Sizes first, allocating nothing, so that a formula over the cap
        // costs no memory (a count of a blank 64x64 grid meets one).
        let open = |c: usize, v: usize| placed(c) == 0 && candidates(c) >> v & 1 == 1;
        // The values a unit's placed cells hold.
        let used = |kind, u| {
            shape
                .unit_cells(kind, u)
                .filter(|&c| placed(c) != 0)
                .fold(0u64, |m, c| m | 1 << (placed(c) - 1))
        };
        let mut clauses = 0usize;
        let mut count = |k: usize| clauses += 1 + k * k.saturating_sub(1) / 2;
        let mut vars = 0usize;
        for c in (0..shape.cells()).filter(|&c| placed(c) == 0) {
            let k = candidates(c).count_ones() as usize;
            vars += k;
            count(k);
        }
        for kind in UnitKind::ALL {
            for u in 0..n {
                let done = used(kind, u);
                for v in (0..n).filter(|v| done >> v & 1 == 0) {
                    count(shape.unit_cells(kind, u).filter(|&c| open(c, v)).count());
                }
            }
        }
        if Self::bytes(vars, vars, clauses) > cap {
            return false;
        }
        let mut ids = vec![0u32; shape.cells() * n];
        self.vars = Vec::with_capacity(vars);
        for c in (0..shape.cells()).filter(|&c| placed(c) == 0) {
            for v in (0..n).filter(|&v| candidates(c) >> v & 1 == 1) {
                self.vars.push((c as u16, v as u8 + 1));
                ids[c * n + v] = self.vars.len() as u32;
            }
        }
        self.clauses = clauses;
        #[cfg(feature = "cdcl")]
        {
            // "sat": tuned for formulas that have a model, as these grids
            // (nearly) always do; it keeps the solver in its stable mode
            // from one call to the next.
            let Ok(mut sat) = cadical::Solver::<worker::Meter>::with_config("sat") else {
                self.clear();
                return false;
            };
            let mut lits: Vec<i32> = Vec::with_capacity(n);
            for c in (0..shape.cells()).filter(|&c| placed(c) == 0) {
                lits.clear();
                lits.extend((0..n).map(|v| ids[c * n + v] as i32).filter(|&id| id != 0));
                exactly_one(&mut sat, &lits);
            }
            // Each value a unit lacks: one of its cells that may take it.
            for kind in UnitKind::ALL {
                for u in 0..n {
                    let done = used(kind, u);
                    for v in (0..n).filter(|v| done >> v & 1 == 0) {
                        lits.clear();
                        lits.extend(
                            shape
                                .unit_cells(kind, u)
                                .map(|c| ids[c * n + v] as i32)
                                .filter(|&id| id != 0),
                        );
                        exactly_one(&mut sat, &lits);
                    }
                }
            }
            match worker::Worker::spawn(sat, self.vars.len()) {
                Some(mut w) => {
                    w.call(None, Vec::new());
                    self.sat = Some(w);
                }
                None => {
                    self.clear();
                    return false;
                }
            }
        }
        true
    }

    /// The estimated bytes of the formula alone, before any conflict.
    fn formula_bytes(&self) -> usize {
        Self::bytes(self.vars.capacity(), self.vars.len(), self.clauses)
            .saturating_add(self.excluded.saturating_mul(LITERAL_BYTES))
    }

    /// The estimated bytes of a formula of `vars` variables (a table of
    /// `room` entries for them) and `clauses` clauses.
    fn bytes(room: usize, vars: usize, clauses: usize) -> usize {
        room.saturating_mul(std::mem::size_of::<(u16, u8)>())
            .saturating_add(vars.saturating_mul(VAR_BYTES))
            .saturating_add(clauses.saturating_mul(CLAUSE_BYTES))
    }

    /// Searches on from where the last slice paused, for `conflicts`
    /// conflicts at most (counted as CaDiCaL's termination checks, which
    /// come about once a conflict): how it ended, and the conflicts it
    /// took (all of them unless it ended the search).
    pub(super) fn run(&mut self, conflicts: u64) -> (Sat, u64) {
        #[cfg(feature = "cdcl")]
        if let Some(sat) = self.sat.as_mut() {
            let (answer, made) = sat.run(conflicts);
            self.conflicts = self.conflicts.saturating_add(made);
            return (answer, made);
        }
        (Sat::Paused, conflicts)
    }

    /// After [`Sat::Solved`]: adds the clause that excludes the model, so
    /// that the next slices search for another (a count goes on).
    pub(super) fn exclude_model(&mut self) {
        #[cfg(feature = "cdcl")]
        if let Some(sat) = self.sat.as_mut() {
            let clause = sat.model_excluded();
            self.clauses += 1;
            self.excluded += clause.len();
            sat.call(Some(clause), Vec::new());
        }
    }

    /// Writes the model's values into `values` (the open cells' entries),
    /// after [`Sat::Solved`].
    pub(super) fn fill(&self, values: &mut [u8]) {
        #[cfg(feature = "cdcl")]
        if let Some(sat) = self.sat.as_ref() {
            sat.with_model(|model| {
                for (&(cell, v), &on) in self.vars.iter().zip(model) {
                    if on {
                        values[usize::from(cell)] = v;
                    }
                }
            });
        }
        let _ = values;
    }
}

/// The solver's thread, and the gate between it and the search.
#[cfg(feature = "cdcl")]
pub(super) mod worker {
    use std::panic::AssertUnwindSafe;
    use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    use std::thread::JoinHandle;

    use super::{STACK_BYTES, Sat};

    /// The next call the solver's thread makes: a clause to add first (a
    /// model excluded), if any, and the literals it assumes.
    struct Call {
        clause: Option<Vec<i32>>,
        assume: Vec<i32>,
    }

    /// What the two threads share, under the mutex.
    #[derive(Default)]
    struct Gate {
        /// Termination checks granted so far, and passed so far.
        granted: u64,
        made: u64,
        /// The search is dropped: the call ends, and the thread.
        abort: bool,
        /// The current call is to end without an answer (the solver stays).
        stop: bool,
        /// The solver's thread is parked: its slice spent, or between calls.
        parked: bool,
        /// The call the thread makes next.
        next: Option<Call>,
        /// A call is under way (parked or not).
        running: bool,
        /// The last call's answer, once it returned: Some(true) a model (in
        /// `model`), Some(false) none exists, None stopped; None while a
        /// call is under way.
        done: Option<Option<bool>>,
        /// Calls ended so far.
        calls: u64,
        /// A call panicked: the thread is gone.
        lost: bool,
        /// The value of each problem variable (from variable 1) in the model.
        model: Vec<bool>,
        /// After a call that found none: the assumed literals the proof
        /// used (CaDiCaL's failed assumptions).
        failed: Vec<i32>,
    }

    struct Shared {
        gate: Mutex<Gate>,
        turn: Condvar,
    }

    impl Shared {
        fn lock(&self) -> MutexGuard<'_, Gate> {
            // A panic on the other thread leaves nothing half-written here
            // that matters: the gate's fields are each whole.
            self.gate.lock().unwrap_or_else(|e| e.into_inner())
        }
        fn wait<'a>(&self, g: MutexGuard<'a, Gate>) -> MutexGuard<'a, Gate> {
            self.turn.wait(g).unwrap_or_else(|e| e.into_inner())
        }
    }

    /// CaDiCaL's termination check: counts the slice down, and parks the
    /// solver's thread while the search has the core.
    pub(crate) struct Meter(Arc<Shared>);

    impl cadical::Callbacks for Meter {
        fn terminate(&mut self) -> bool {
            let shared = &self.0;
            let mut g = shared.lock();
            while !g.abort && !g.stop && g.made >= g.granted {
                g.parked = true;
                shared.turn.notify_all();
                g = shared.wait(g);
            }
            g.parked = false;
            if g.abort || g.stop {
                return true;
            }
            g.made += 1;
            false
        }
    }

    /// The solver on its own thread, making one call at a time.
    pub(crate) struct Worker {
        shared: Arc<Shared>,
        thread: Option<JoinHandle<()>>,
    }

    impl Worker {
        /// Starts the thread of `sat`, whose problem variables are 1 to
        /// `vars`, waiting for its first call ([`Worker::call`]). None when
        /// no thread could be made.
        pub(crate) fn spawn(mut sat: cadical::Solver<Meter>, vars: usize) -> Option<Worker> {
            let shared = Arc::new(Shared {
                gate: Mutex::new(Gate {
                    parked: true,
                    ..Gate::default()
                }),
                turn: Condvar::new(),
            });
            sat.set_callbacks(Some(Meter(Arc::clone(&shared))));
            let theirs = Arc::clone(&shared);
            let thread = std::thread::Builder::new()
                .name("sudoku-sat".into())
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    loop {
                        let mut g = theirs.lock();
                        while !g.abort && g.next.is_none() {
                            g.parked = true;
                            theirs.turn.notify_all();
                            g = theirs.wait(g);
                        }
                        let Some(call) = g.next.take().filter(|_| !g.abort) else {
                            break;
                        };
                        g.done = None;
                        g.stop = false;
                        g.parked = false;
                        g.running = true;
                        drop(g);
                        // Whatever happens, the search hears that the call
                        // ended.
                        let ended = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            if let Some(clause) = call.clause {
                                sat.add_clause(clause);
                            }
                            let answer = sat.solve_with(call.assume.iter().copied());
                            let model = if answer == Some(true) {
                                (1..=vars as i32)
                                    .map(|v| sat.value(v) == Some(true))
                                    .collect()
                            } else {
                                Vec::new()
                            };
                            let failed = if answer == Some(false) {
                                call.assume
                                    .iter()
                                    .copied()
                                    .filter(|&l| sat.failed(l))
                                    .collect()
                            } else {
                                Vec::new()
                            };
                            (answer, model, failed)
                        }));
                        let mut g = theirs.lock();
                        g.calls += 1;
                        g.running = false;
                        g.parked = true;
                        theirs.turn.notify_all();
                        match ended {
                            Ok((answer, model, failed)) => {
                                g.done = Some(answer);
                                g.model = model;
                                g.failed = failed;
                            }
                            Err(_) => {
                                g.done = Some(None);
                                g.lost = true;
                                theirs.turn.notify_all();
                                break;
                            }
                        }
                    }
                    // The solver's memory goes back before the search goes
                    // on (dropped here, on its thread).
                    drop(sat);
                })
                .ok()?;
            Some(Worker {
                shared,
                thread: Some(thread),
            })
        }

        /// Ends the call under way, if any, and starts the next, `clause`
        /// added first, under the literals `assume`. Waits until it parks
        /// at its first check or ends: until then the solver reads its
        /// formula, and that is this thread's time too.
        pub(crate) fn call(&mut self, clause: Option<Vec<i32>>, assume: Vec<i32>) {
            self.stop();
            let mut g = self.shared.lock();
            if g.lost {
                return;
            }
            let calls = g.calls;
            // What the last call left of its slice is not the next call's:
            // it parks at its first check.
            g.granted = g.made;
            g.next = Some(Call { clause, assume });
            g.parked = false;
            self.shared.turn.notify_all();
            while g.next.is_some() || !(g.parked && (g.running || g.calls > calls)) {
                g = self.shared.wait(g);
            }
        }

        /// Ends the call under way, if any, without an answer; the solver
        /// stays for the next.
        pub(crate) fn stop(&mut self) {
            let mut g = self.shared.lock();
            if !g.running {
                return;
            }
            g.stop = true;
            self.shared.turn.notify_all();
            while g.running {
                g = self.shared.wait(g);
            }
        }

        /// Lets the call go on for `checks` more termination checks, and
        /// waits until it parks again or ends: how, and the checks made.
        pub(crate) fn run(&mut self, checks: u64) -> (Sat, u64) {
            let mut g = self.shared.lock();
            let from = g.made;
            if g.running {
                g.granted = g.made.saturating_add(checks);
                g.parked = false;
                self.shared.turn.notify_all();
                while !g.parked {
                    g = self.shared.wait(g);
                }
            }
            let made = g.made - from;
            let answer = match g.done {
                _ if g.lost => Sat::Lost,
                Some(Some(true)) => Sat::Solved,
                Some(Some(false)) => Sat::NoSolution,
                // Stopped, or no call yet: nothing to go on with.
                Some(None) => Sat::Lost,
                None => Sat::Paused,
            };
            (answer, made)
        }

        /// Reads the assumed literals the last call's proof used, after
        /// [`Sat::NoSolution`].
        pub(crate) fn with_failed(&self, read: impl FnOnce(&[i32])) {
            read(&self.shared.lock().failed);
        }

        /// Reads the model, after [`Sat::Solved`].
        pub(super) fn with_model(&self, read: impl FnOnce(&[bool])) {
            read(&self.shared.lock().model);
        }

        /// The clause that excludes the model, after [`Sat::Solved`]
        /// (empty when the formula has no variables: the empty clause).
        pub(super) fn model_excluded(&self) -> Vec<i32> {
            (1..)
                .zip(&self.shared.lock().model)
                .filter(|&(_, &on)| on)
                .map(|(v, _)| -v)
                .collect()
        }
    }

    impl Drop for Worker {
        fn drop(&mut self) {
            self.shared.lock().abort = true;
            self.shared.turn.notify_all();
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Adds "exactly one of `lits`": at least one, and a clause per pair (see
/// the module's notes); an empty `lits` is the empty clause (the board has
/// no solution).
#[cfg(feature = "cdcl")]
fn exactly_one<C: cadical::Callbacks>(sat: &mut cadical::Solver<C>, lits: &[i32]) {
    sat.add_clause(lits.iter().copied());
    for (i, &a) in lits.iter().enumerate() {
        for &b in &lits[i + 1..] {
            sat.add_clause([-a, -b]);
        }
    }
}
