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
//! "At most one" over up to [`PAIRWISE`] variables is a clause per pair;
//! over more, a sequential counter (Sinz: a chain of auxiliary "one is set
//! at or before here" variables, three clauses a variable), which unit
//! propagation enforces as strongly with a linear count of clauses. The
//! root's propagation (singles, box-line, the look-ahead) already pruned
//! the candidates, so the formula holds only what the tree search could not
//! settle.
//!
//! Unlike the tree and repair searches, which learn nothing from a failed
//! run, the solver keeps the clauses it learned from one slice to the next:
//! that is what it brings to grids about half blank, where a conflict high
//! up recurs in every run that does not learn it.
//!
//! Memory: CaDiCaL allocates with the C++ allocator, out of sight of
//! [`heap_bytes`](Cdcl::heap_bytes), which is an estimate: bytes per
//! variable, clause and conflict, set from whole processes' resident sizes
//! on grids of data/large/ (docs/sizes.md). A caller's cap ([`Cdcl::start`]) is checked
//! against it before the formula is built and after every slice.

use crate::puzzle::sized::{Shape, UnitKind};

/// "At most one" over this many variables or fewer is a clause per pair.
const PAIRWISE: usize = 6;

/// Estimated bytes per variable (its watch lists, phases, scores and
/// links), per clause of the formula, and per conflict (the clauses it
/// learns, until the solver's reductions drop most of them; counted up to
/// [`LEARNED_CONFLICTS`] conflicts).
const VAR_BYTES: usize = 512;
const CLAUSE_BYTES: usize = 128;
const CONFLICT_BYTES: usize = 256;
const LEARNED_CONFLICTS: u64 = 1 << 20;

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
}

/// The SAT engine of one search; empty until [`Cdcl::start`].
#[derive(Default)]
pub(super) struct Cdcl {
    #[cfg(feature = "cdcl")]
    sat: Option<Box<cadical::Solver>>,
    /// The (cell, value) of each problem variable, from variable 1.
    vars: Vec<(u16, u8)>,
    /// The formula's variables (auxiliary ones included) and clauses.
    all_vars: usize,
    clauses: usize,
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
            self.sat = None;
        }
        self.vars = Vec::new();
        self.all_vars = 0;
        self.clauses = 0;
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
        // Sizes first, so a formula over the cap is never built.
        let (mut all_vars, mut clauses) = (0usize, 0usize);
        let mut count = |k: usize| {
            clauses += 1 + amo_clauses(k);
            all_vars += amo_aux(k);
        };
        let mut ids = vec![0u32; shape.cells() * n];
        let mut vars = Vec::new();
        for c in 0..shape.cells() {
            if placed(c) != 0 {
                continue;
            }
            let m = candidates(c);
            count(m.count_ones() as usize);
            for v in 0..n {
                if m >> v & 1 == 1 {
                    vars.push((c as u16, v as u8 + 1));
                    ids[c * n + v] = vars.len() as u32;
                }
            }
        }
        // Each value a unit lacks, and how many of its cells may take it.
        let mut places = Vec::new();
        for kind in UnitKind::ALL {
            for u in 0..n {
                let done = shape
                    .unit_cells(kind, u)
                    .filter(|&c| placed(c) != 0)
                    .fold(0u64, |m, c| m | 1 << (placed(c) - 1));
                for v in (0..n).filter(|v| done >> v & 1 == 0) {
                    places.push((kind, u, v));
                    count(
                        shape
                            .unit_cells(kind, u)
                            .filter(|&c| ids[c * n + v] != 0)
                            .count(),
                    );
                }
            }
        }
        all_vars += vars.len();
        self.vars = vars;
        self.all_vars = all_vars;
        self.clauses = clauses;
        if self.formula_bytes() > cap {
            self.clear();
            return false;
        }
        #[cfg(feature = "cdcl")]
        {
            // "sat": tuned for formulas that have a model, as these grids
            // (nearly) always do; it keeps the solver in its stable mode
            // from one call to the next.
            let Ok(sat) = cadical::Solver::with_config("sat") else {
                self.clear();
                return false;
            };
            let mut sat = Box::new(sat);
            let mut next = self.vars.len() as i32 + 1;
            let mut lits: Vec<i32> = Vec::with_capacity(n);
            for c in (0..shape.cells()).filter(|&c| placed(c) == 0) {
                lits.clear();
                lits.extend((0..n).map(|v| ids[c * n + v] as i32).filter(|&id| id != 0));
                exactly_one(&mut sat, &lits, &mut next);
            }
            for &(kind, u, v) in &places {
                lits.clear();
                lits.extend(
                    shape
                        .unit_cells(kind, u)
                        .map(|c| ids[c * n + v] as i32)
                        .filter(|&id| id != 0),
                );
                exactly_one(&mut sat, &lits, &mut next);
            }
            debug_assert_eq!(next as usize - 1, self.all_vars);
            self.sat = Some(sat);
        }
        true
    }

    /// The estimated bytes of the formula alone, before any conflict.
    fn formula_bytes(&self) -> usize {
        self.vars.capacity() * std::mem::size_of::<(u16, u8)>()
            + self.all_vars * VAR_BYTES
            + self.clauses * CLAUSE_BYTES
    }

    /// Searches on for at most `conflicts` conflicts.
    pub(super) fn run(&mut self, conflicts: u64) -> Sat {
        #[cfg(feature = "cdcl")]
        if let Some(sat) = self.sat.as_mut() {
            let slice = conflicts.clamp(1, i32::MAX as u64);
            self.conflicts = self.conflicts.saturating_add(slice);
            // Only a name the solver does not know fails here.
            let _ = sat.set_limit("conflicts", slice as i32);
            return match sat.solve() {
                Some(true) => Sat::Solved,
                Some(false) => Sat::NoSolution,
                None => Sat::Paused,
            };
        }
        let _ = conflicts;
        Sat::Paused
    }

    /// Writes the model's values into `values` (the open cells' entries),
    /// after [`Sat::Solved`].
    pub(super) fn fill(&self, values: &mut [u8]) {
        #[cfg(feature = "cdcl")]
        if let Some(sat) = self.sat.as_ref() {
            for (k, &(cell, v)) in self.vars.iter().enumerate() {
                if sat.value(k as i32 + 1) == Some(true) {
                    values[usize::from(cell)] = v;
                }
            }
        }
        let _ = values;
    }
}

/// The clauses of "at most one" over `k` variables (see [`PAIRWISE`]).
fn amo_clauses(k: usize) -> usize {
    if k <= PAIRWISE {
        k * k.saturating_sub(1) / 2
    } else {
        3 * k - 4
    }
}

/// The auxiliary variables of "at most one" over `k` variables.
fn amo_aux(k: usize) -> usize {
    if k <= PAIRWISE { 0 } else { k - 1 }
}

/// Adds "exactly one of `lits`": an empty `lits` is the empty clause (the
/// board has no solution). Auxiliary variables are numbered from `next`.
#[cfg(feature = "cdcl")]
fn exactly_one(sat: &mut cadical::Solver, lits: &[i32], next: &mut i32) {
    sat.add_clause(lits.iter().copied());
    let k = lits.len();
    if k <= PAIRWISE {
        for (i, &a) in lits.iter().enumerate() {
            for &b in &lits[i + 1..] {
                sat.add_clause([-a, -b]);
            }
        }
        return;
    }
    // s(i): one of lits[..=i] is set.
    let s0 = *next;
    *next += k as i32 - 1;
    let s = |i: usize| s0 + i as i32;
    sat.add_clause([-lits[0], s(0)]);
    for (i, &x) in lits.iter().enumerate().take(k - 1).skip(1) {
        sat.add_clause([-x, s(i)]);
        sat.add_clause([-s(i - 1), s(i)]);
        sat.add_clause([-x, -s(i - 1)]);
    }
    sat.add_clause([-lits[k - 1], -s(k - 2)]);
}
