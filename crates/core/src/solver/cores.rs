//! Which clues leave a solution the only one: the whole grid of a shape as
//! one formula for the SAT engine (CaDiCaL, the `cdcl` feature), asked
//! under a set of clues as assumptions.
//!
//! ```text
//!  variable c*n + v + 1  "cell c holds value v + 1", every cell and value
//!  each cell             at least one value; at most one
//!  each unit, each value at least one of its cells; at most one
//!  one clause            some cell differs from the solution
//! ```
//!
//! Assume each clue's variable: the formula then has a model exactly when
//! the puzzle of those clues has another solution. When it has none, the
//! clues the refutation used (CaDiCaL's failed assumptions, [`Cores::core`])
//! leave the solution unique on their own: a clue implied by the others
//! before it in the assumptions is not among them. Generate from 25x25
//! (generate/sized.rs) asks one such solver every check of a making, so
//! what it learns about the grid serves them all, and takes away at once
//! every clue a core left out.
//!
//! "At most one" is a clause per pair where that fits the memory cap, as
//! in the search's engine (cdcl.rs); otherwise the product encoding (Chen):
//! the k literals laid on a p x q grid, each implying its row's and its
//! column's auxiliary variable, with at most one row and one column set,
//! 2k + p(p-1)/2 + q(q-1)/2 clauses instead of k(k-1)/2. On a 36x36
//! solution (data/large/, making a minimal puzzle, one thread, CaDiCaL's
//! default configuration): pairs 3.3 million clauses, 510 MB resident,
//! 18-22 s; product 0.53 million, 120 MB, 43-49 s (34 s in "plain", which
//! this module uses). At 25x25: 76 MB and 2.4 s; 36 MB and 6.1 s.
//!
//! A call runs on the SAT worker's thread in slices of termination checks, paused
//! between them (see cdcl.rs): budgets, deadlines and cancellation hold as
//! for the search's engine.

use crate::puzzle::sized::{SizedGrid, UnitKind};

use super::cdcl::Sat;
#[cfg(feature = "cdcl")]
use super::cdcl::worker::{Meter, Worker};

/// Estimated bytes per variable and per clause of the formula, set above
/// the resident sizes of whole processes on 25x25 and 36x36 grids (both
/// encodings; the figures above).
const VAR_BYTES: usize = 512;
const CLAUSE_BYTES: usize = 160;
/// Estimated bytes per termination check (at most one conflict each), for
/// the clauses learned, counted up to [`LEARNED_CONFLICTS`] checks
/// (CaDiCaL's reductions drop most).
const CONFLICT_BYTES: usize = 256;
const LEARNED_CONFLICTS: u64 = 1 << 20;

/// The search nodes one of CaDiCaL's termination checks (about one per
/// decision or conflict) counts for in budgets: about the time of that
/// many tree nodes. A check costs 0.12 ms making a minimal 25x25 puzzle
/// and 0.31 ms at 36x36 (the whole formula is watched and every
/// assumption assigned again after each restart), where the tree search
/// runs 150,000-200,000 nodes a second on 36x36 grids of 58% blanks.
pub const CHECK_NODES: u64 = 40;

/// The answer to one question ([`Cores::ask`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uniqueness {
    /// The clues leave the solution the only one; [`Cores::core`] names
    /// the clues the proof used.
    Unique,
    /// The clues leave another solution.
    Another,
    /// The slice's termination checks ran out; [`Cores::run`] goes on.
    Paused,
    /// The engine is gone (its thread failed): ask some other way.
    Lost,
}

/// The whole-grid formula of one solution, loaded in a SAT solver.
pub struct Cores {
    #[cfg(feature = "cdcl")]
    worker: Worker,
    /// The grid's side.
    side: usize,
    vars: usize,
    clauses: usize,
    /// Termination checks made.
    checks: u64,
}

/// How "at most one" is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amo {
    Pairs,
    Product,
}

impl Amo {
    /// Auxiliary variables and clauses of "exactly one" of `k` literals.
    fn cost(self, k: usize) -> (usize, usize) {
        match self {
            Amo::Product if k > 6 => {
                let (p, q) = product_grid(k);
                (p + q, 1 + 2 * k + p * (p - 1) / 2 + q * (q - 1) / 2)
            }
            _ => (0, 1 + k * k.saturating_sub(1) / 2),
        }
    }
}

/// The rows and columns the product encoding lays `k` literals on.
fn product_grid(k: usize) -> (usize, usize) {
    let p = (k as f64).sqrt().ceil() as usize;
    (p, k.div_ceil(p))
}

impl Cores {
    /// Whether this build has the engine (the `cdcl` feature).
    pub const AVAILABLE: bool = cfg!(feature = "cdcl");

    /// Loads the formula of `solution`'s shape and the clause that some
    /// cell differs from it, in the encoding that fits `cap` bytes with a
    /// quarter to spare for what it learns; None when neither fits, or
    /// without the `cdcl` feature.
    pub fn start(solution: &SizedGrid, cap: usize) -> Option<Cores> {
        let shape = solution.shape();
        let n = shape.side();
        let groups = 4 * shape.cells();
        let cells = shape.cells();
        let fits = |amo: Amo| {
            let (aux, clauses) = amo.cost(n);
            let (vars, clauses) = (cells * n + groups * aux, groups * clauses + 1);
            let bytes = vars
                .saturating_mul(VAR_BYTES)
                .saturating_add(clauses.saturating_mul(CLAUSE_BYTES));
            (bytes.saturating_add(bytes / 4) <= cap).then_some((amo, vars, clauses))
        };
        let (amo, vars, clauses) = fits(Amo::Pairs).or_else(|| fits(Amo::Product))?;
        if !Self::AVAILABLE || solution.values().contains(&0) {
            return None;
        }
        #[cfg(feature = "cdcl")]
        {
            // "plain": no preprocessing or inprocessing. Those run between
            // two conflicts, out of reach of the slices, and here they cost
            // more than they saved: 25x25 1.7 s against 2.0, 36x36 (product)
            // 34 s against 44, and the longest pause between two
            // termination checks shorter (the module's figures, one solution).
            let Ok(mut sat) = cadical::Solver::<Meter>::with_config("plain") else {
                return None;
            };
            let var = |c: usize, v: usize| (c * n + v + 1) as i32;
            let mut next = (cells * n) as i32;
            let mut lits: Vec<i32> = Vec::with_capacity(n);
            let mut one = |sat: &mut cadical::Solver<Meter>, lits: &[i32]| {
                sat.add_clause(lits.iter().copied());
                match amo {
                    Amo::Product if lits.len() > 6 => {
                        let (p, q) = product_grid(lits.len());
                        let rows: Vec<i32> = (1..=p as i32).map(|i| next + i).collect();
                        let cols: Vec<i32> = (1..=q as i32).map(|i| next + p as i32 + i).collect();
                        next += (p + q) as i32;
                        for (t, &x) in lits.iter().enumerate() {
                            sat.add_clause([-x, rows[t / q]]);
                            sat.add_clause([-x, cols[t % q]]);
                        }
                        pairs(sat, &rows);
                        pairs(sat, &cols);
                    }
                    _ => pairs(sat, lits),
                }
            };
            for c in 0..cells {
                lits.clear();
                lits.extend((0..n).map(|v| var(c, v)));
                one(&mut sat, &lits);
            }
            for kind in UnitKind::ALL {
                for u in 0..n {
                    for v in 0..n {
                        lits.clear();
                        lits.extend(shape.unit_cells(kind, u).map(|c| var(c, v)));
                        one(&mut sat, &lits);
                    }
                }
            }
            let values = solution.values();
            sat.add_clause((0..cells).map(|c| -var(c, usize::from(values[c]) - 1)));
            debug_assert_eq!(next as usize, vars);
            let worker = Worker::spawn(sat, 0)?;
            Some(Cores {
                worker,
                side: n,
                vars,
                clauses,
                checks: 0,
            })
        }
        #[cfg(not(feature = "cdcl"))]
        {
            let _ = (amo, vars, clauses, UnitKind::ALL);
            None
        }
    }

    /// The estimated bytes the engine holds (see the constants).
    pub fn heap_bytes(&self) -> usize {
        self.vars
            .saturating_mul(VAR_BYTES)
            .saturating_add(self.clauses.saturating_mul(CLAUSE_BYTES))
            .saturating_add(self.checks.min(LEARNED_CONFLICTS) as usize * CONFLICT_BYTES)
    }

    /// Asks whether the `clues` (cell, value from 1: the solution's value
    /// there) leave the solution unique, ending the question under way.
    /// Clues implied by those before them are left out of the core, so the
    /// order says which go first when clues can go together.
    pub fn ask(&mut self, clues: impl IntoIterator<Item = (usize, u8)>) {
        let n = self.side;
        let assume: Vec<i32> = clues
            .into_iter()
            .map(|(c, v)| (c * n + usize::from(v)) as i32)
            .collect();
        #[cfg(feature = "cdcl")]
        self.worker.call(None, assume);
        #[cfg(not(feature = "cdcl"))]
        let _ = assume;
    }

    /// Goes on with the question for at most `checks` of CaDiCaL's
    /// termination checks: the answer so far, and the checks made.
    pub fn run(&mut self, checks: u64) -> (Uniqueness, u64) {
        #[cfg(feature = "cdcl")]
        {
            let (sat, made) = self.worker.run(checks);
            self.checks = self.checks.saturating_add(made);
            let answer = match sat {
                Sat::NoSolution => Uniqueness::Unique,
                Sat::Solved => Uniqueness::Another,
                Sat::Paused => Uniqueness::Paused,
                Sat::Lost => Uniqueness::Lost,
            };
            (answer, made)
        }
        #[cfg(not(feature = "cdcl"))]
        {
            let _ = (checks, Sat::Lost);
            (Uniqueness::Lost, 0)
        }
    }

    /// After [`Uniqueness::Unique`]: marks in `used` (a flag per cell) the
    /// clues the proof used.
    pub fn core(&self, used: &mut [bool]) {
        let n = self.side;
        #[cfg(feature = "cdcl")]
        self.worker.with_failed(|failed| {
            for &lit in failed {
                used[(lit as usize - 1) / n] = true;
            }
        });
        #[cfg(not(feature = "cdcl"))]
        let _ = (used, n);
    }
}

/// "At most one of `lits`": a clause per pair.
#[cfg(feature = "cdcl")]
fn pairs(sat: &mut cadical::Solver<Meter>, lits: &[i32]) {
    for (i, &a) in lits.iter().enumerate() {
        for &b in &lits[i + 1..] {
            sat.add_clause([-a, -b]);
        }
    }
}
