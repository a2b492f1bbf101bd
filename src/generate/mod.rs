//! Makes new puzzles: each has exactly one solution and is minimal, and the
//! same seed and options make the same puzzles on any machine and in any
//! order. Knows nothing of gRPC. Which candidates to keep is the caller's
//! choice, a closure; [`Target`] is the usual one, which rates each with
//! [`crate::logic`] and keeps those of a label or rating range.
//!
//! One attempt at a puzzle:
//! 1. a random solution grid: the three diagonal boxes (which share no
//!    unit) filled with random permutations, the engine completing the
//!    rest, then a random relabelling of digits, permutation of rows in
//!    bands, of bands, of columns in stacks, of stacks, and a transposition
//!    half the time, each a symmetry of the rules;
//! 2. clue removal: the orbits of the symmetry ([`Orbits`]), in random
//!    order, each removed when the puzzle stays unique (the engine counts
//!    solutions up to 2 in the one solver it is given, restarted each
//!    time: nothing is allocated per removal). One pass is enough for
//!    minimality: an orbit that could not be removed from a puzzle cannot
//!    be removed from any puzzle with fewer clues, which has all of that
//!    one's solutions and maybe more;
//! 3. the clue range: below `min_clues` at a removal that would have kept
//!    the puzzle unique, or above `max_clues` at the end, the attempt is
//!    dropped (keeping a removable clue would break minimality).
//!
//! A symmetric puzzle is minimal with respect to its orbits: no orbit can
//! be removed without losing uniqueness. It may still have a single clue
//! that could go (breaking the symmetry); [`Candidate::minimal`] says
//! whether it is also minimal clue by clue.
//!
//! Attempt `k` of puzzle `i` draws from its own random stream
//! ([`Rng::for_attempt`]), so puzzle `i` is the same whether puzzles are
//! made one after the other or on many threads.

mod rng;
pub mod sized;
mod symmetry;
mod target;

pub use rng::Rng;
pub use symmetry::{Orbits, Symmetry};
pub use target::Target;

use crate::puzzle::{CELLS, Grid};
use crate::solver::Solver;

/// The default work budget: attempts per puzzle before giving up.
pub const DEFAULT_MAX_ATTEMPTS: u64 = 20_000;

/// Search nodes one uniqueness check may take; a check that needs more
/// drops the attempt (never seen: minimal puzzles take a few hundred at
/// most).
const CHECK_NODES: u64 = 200_000;

/// What kind of puzzles to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Symmetry of the clues.
    pub symmetry: Symmetry,
    /// Fewest clues, inclusive (0: no bound).
    pub min_clues: u8,
    /// Most clues, inclusive (81: no bound).
    pub max_clues: u8,
    /// Attempts per puzzle before [`Search::step`] gives up.
    pub max_attempts: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            symmetry: Symmetry::None,
            min_clues: 0,
            max_clues: CELLS as u8,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}

/// A puzzle made by one attempt: unique and minimal (for its symmetry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The puzzle.
    pub puzzle: Grid,
    /// Its only solution.
    pub solution: Grid,
    /// Number of clues.
    pub clues: u8,
    /// No single clue can be removed without losing uniqueness (always
    /// true without symmetry).
    pub minimal: bool,
}

/// A puzzle the caller accepted, with what it made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated<T> {
    /// The puzzle.
    pub candidate: Candidate,
    /// What the caller's `accept` returned for it (its rating).
    pub extra: T,
    /// Attempts dropped before this one (clue range, or not accepted).
    pub attempts: u64,
}

/// How a step of a [`Search`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Poll<T> {
    /// The puzzle is made.
    Found(Generated<T>),
    /// This attempt was dropped; step again.
    Working,
    /// The attempts budget is spent without a puzzle.
    Exhausted {
        /// Attempts made.
        attempts: u64,
    },
}

/// The making of puzzle `index` of the puzzles from `seed`, one attempt per
/// [`Search::step`], so a caller can check a deadline between attempts.
#[derive(Debug, Clone)]
pub struct Search {
    seed: u64,
    index: u64,
    attempt: u64,
    options: Options,
    orbits: Orbits,
}

impl Search {
    /// Starts on puzzle `index` of the puzzles from `seed`.
    pub fn new(seed: u64, index: u64, options: Options) -> Search {
        Search {
            seed,
            index,
            attempt: 0,
            orbits: Orbits::of(options.symmetry),
            options,
        }
    }

    /// Attempts made so far.
    pub fn attempts(&self) -> u64 {
        self.attempt
    }

    /// Makes one attempt, in `solver`, and offers its puzzle (if it is in
    /// the clue range) to `accept`, which keeps it by returning `Some`.
    pub fn step<T>(
        &mut self,
        solver: &mut Solver,
        accept: &mut dyn FnMut(&Candidate) -> Option<T>,
    ) -> Poll<T> {
        if self.attempt >= self.options.max_attempts {
            return Poll::Exhausted {
                attempts: self.attempt,
            };
        }
        let mut rng = Rng::for_attempt(self.seed, self.index, self.attempt);
        self.attempt += 1;
        let Some(candidate) = attempt(solver, &self.orbits, &self.options, &mut rng) else {
            return Poll::Working;
        };
        match accept(&candidate) {
            Some(extra) => Poll::Found(Generated {
                candidate,
                extra,
                attempts: self.attempt - 1,
            }),
            None => Poll::Working,
        }
    }

    /// Steps until the puzzle is made or the budget is spent.
    pub fn run<T>(
        &mut self,
        solver: &mut Solver,
        accept: &mut dyn FnMut(&Candidate) -> Option<T>,
    ) -> Result<Generated<T>, u64> {
        loop {
            match self.step(solver, accept) {
                Poll::Found(g) => return Ok(g),
                Poll::Working => {}
                Poll::Exhausted { attempts } => return Err(attempts),
            }
        }
    }
}

/// Whether `puzzle` has exactly one solution, as far as `solver` can tell in
/// [`CHECK_NODES`] nodes: `None` when it could not.
fn unique(solver: &mut Solver, puzzle: &Grid) -> Option<bool> {
    solver.restart(puzzle, 2);
    solver.resume(CHECK_NODES);
    let a = solver.answer();
    a.complete.then_some(a.count == 1)
}

/// Whether `puzzle` (a unique puzzle whose only solution is `solution`,
/// with the clues at `cells` just blanked) is still unique: no solution
/// puts another digit in one of those cells. Each other digit its peers
/// allow is tried there with a search for one solution, which is how a
/// second solution is found or ruled out far faster than by counting to 2,
/// since every try starts more constrained. `None` when a search ran out
/// of nodes.
fn still_unique(
    solver: &mut Solver,
    puzzle: &mut Grid,
    cells: &[u8],
    solution: &Grid,
) -> Option<bool> {
    for &c in cells {
        let c = c as usize;
        let (r, col) = (c / 9, c % 9);
        let (br, bc) = (r / 3 * 3, col / 3 * 3);
        let mut used = 0u16;
        for k in 0..9 {
            used |= 1 << puzzle.0[r * 9 + k];
            used |= 1 << puzzle.0[k * 9 + col];
            used |= 1 << puzzle.0[(br + k / 3) * 9 + bc + k % 3];
        }
        for w in 1..=9u8 {
            if w == solution.0[c] || used & (1 << w) != 0 {
                continue;
            }
            puzzle.0[c] = w;
            solver.restart(puzzle, 1);
            solver.resume(CHECK_NODES);
            puzzle.0[c] = 0;
            let a = solver.answer();
            if !a.complete {
                return None;
            }
            if a.count > 0 {
                return Some(false);
            }
        }
    }
    Some(true)
}

/// Clues a puzzle keeps before its removals are checked one by one: the
/// orbits removed first, down to this many clues, go without a check, and
/// one check of the result stands for all of theirs (a superset of a unique
/// puzzle is unique, so each of those checks would have passed). Nearly
/// every 45-clue subset of a solution is unique; when one is not, the
/// attempt goes back and checks every removal, so the puzzle made is the
/// same either way.
const UNCHECKED_DOWN_TO: u8 = 45;

/// A random solution grid.
pub fn solution_grid(solver: &mut Solver, rng: &mut Rng) -> Grid {
    let mut seedgrid = Grid::EMPTY;
    for b in [0, 4, 8] {
        let mut digits = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        rng.shuffle(&mut digits);
        for (k, &d) in digits.iter().enumerate() {
            seedgrid.0[(b / 3 * 3 + k / 3) * 9 + b % 3 * 3 + k % 3] = d;
        }
    }
    solver.restart(&seedgrid, 1);
    solver.resume(u64::MAX);
    // Three boxes that share no unit always complete; the fallback keeps
    // this total should the engine ever say otherwise.
    let full = solver.answer().solution.unwrap_or(seedgrid);
    let mut relabel = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    rng.shuffle(&mut relabel[1..]);
    let mut bands = [0usize, 1, 2];
    let mut stacks = [0usize, 1, 2];
    rng.shuffle(&mut bands);
    rng.shuffle(&mut stacks);
    let mut rows = [0usize; 9];
    let mut cols = [0usize; 9];
    for i in 0..3 {
        let mut r = [0usize, 1, 2];
        let mut c = [0usize, 1, 2];
        rng.shuffle(&mut r);
        rng.shuffle(&mut c);
        for k in 0..3 {
            rows[i * 3 + k] = bands[i] * 3 + r[k];
            cols[i * 3 + k] = stacks[i] * 3 + c[k];
        }
    }
    let transpose = rng.next_u64() & 1 == 1;
    let mut out = Grid::EMPTY;
    for (i, cell) in out.0.iter_mut().enumerate() {
        let (r, c) = (rows[i / 9], cols[i % 9]);
        let (sr, sc) = if transpose { (c, r) } else { (r, c) };
        *cell = relabel[full.0[sr * 9 + sc] as usize];
    }
    out
}

/// One attempt: a solution grid, then its clues removed orbit by orbit
/// while the puzzle stays unique. `None` when it ends outside the clue
/// range or a check ran out of nodes.
pub fn attempt(
    solver: &mut Solver,
    orbits: &Orbits,
    options: &Options,
    rng: &mut Rng,
) -> Option<Candidate> {
    let solution = solution_grid(solver, rng);
    let mut puzzle = solution;
    let mut clues = CELLS as u8;
    let mut order = [0u8; CELLS];
    let n = orbits.len();
    for (i, o) in order.iter_mut().enumerate().take(n) {
        *o = i as u8;
    }
    rng.shuffle(&mut order[..n]);
    // The unchecked prefix (see UNCHECKED_DOWN_TO).
    let floor = UNCHECKED_DOWN_TO.max(options.min_clues);
    let mut start = 0;
    while start < n {
        let cells = orbits.cells(order[start] as usize);
        if clues < floor + cells.len() as u8 {
            break;
        }
        for &c in cells {
            puzzle.0[c as usize] = 0;
        }
        clues -= cells.len() as u8;
        start += 1;
    }
    if start > 0 && !unique(solver, &puzzle)? {
        (puzzle, clues, start) = (solution, CELLS as u8, 0);
    }
    for &o in &order[start..n] {
        let cells = orbits.cells(o as usize);
        for &c in cells {
            puzzle.0[c as usize] = 0;
        }
        match still_unique(solver, &mut puzzle, cells, &solution)? {
            true => {
                clues -= cells.len() as u8;
                if clues < options.min_clues {
                    return None;
                }
            }
            false => {
                for &c in cells {
                    puzzle.0[c as usize] = solution.0[c as usize];
                }
            }
        }
    }
    if clues > options.max_clues {
        return None;
    }
    let minimal =
        options.symmetry == Symmetry::None || single_clue_minimal(solver, &puzzle, &solution)?;
    Some(Candidate {
        puzzle,
        solution,
        clues,
        minimal,
    })
}

/// Whether no single clue of `puzzle` (unique) can be removed keeping it
/// unique; `None` when a check ran out of nodes.
fn single_clue_minimal(solver: &mut Solver, puzzle: &Grid, solution: &Grid) -> Option<bool> {
    let mut p = *puzzle;
    for c in 0..CELLS {
        let d = p.0[c];
        if d == 0 {
            continue;
        }
        p.0[c] = 0;
        let still = still_unique(solver, &mut p, &[c as u8], solution)?;
        p.0[c] = d;
        if still {
            return Some(false);
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::count_solutions_up_to;

    fn make(seed: u64, index: u64, options: Options) -> Generated<()> {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        Search::new(seed, index, options)
            .run(&mut solver, &mut |_| Some(()))
            .expect("a puzzle")
    }

    /// Counted independently: a new solver per count.
    fn assert_unique_and_minimal(puzzle: &Grid, solution: &Grid) {
        assert_eq!(count_solutions_up_to(puzzle, 2), 1, "{puzzle}");
        assert!(puzzle.is_kept_by(solution) && solution.is_valid_solution());
        for c in 0..CELLS {
            if puzzle.0[c] != 0 {
                let mut p = *puzzle;
                p.0[c] = 0;
                assert_eq!(count_solutions_up_to(&p, 2), 2, "{puzzle} without cell {c}");
            }
        }
    }

    #[test]
    fn solution_grids_are_valid_and_differ() {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let mut seen = std::collections::HashSet::new();
        for i in 0..200 {
            let g = solution_grid(&mut solver, &mut Rng::for_attempt(9, i, 0));
            assert!(g.is_valid_solution(), "{g}");
            seen.insert(g);
        }
        assert_eq!(seen.len(), 200);
    }

    #[test]
    fn puzzles_are_unique_and_minimal() {
        for i in 0..30 {
            let g = make(42, i, Options::default());
            assert!(g.candidate.minimal);
            assert_eq!(g.candidate.clues as usize, g.candidate.puzzle.givens());
            assert_unique_and_minimal(&g.candidate.puzzle, &g.candidate.solution);
        }
    }

    #[test]
    fn the_same_seed_makes_the_same_puzzles_in_any_order() {
        let forward: Vec<_> = (0..10).map(|i| make(7, i, Options::default())).collect();
        let backward: Vec<_> = (0..10)
            .rev()
            .map(|i| make(7, i, Options::default()))
            .collect();
        for (a, b) in forward.iter().zip(backward.iter().rev()) {
            assert_eq!(a, b);
        }
        assert_ne!(forward[0], make(8, 0, Options::default()));
    }

    #[test]
    fn symmetric_puzzles_keep_their_symmetry_and_are_orbit_minimal() {
        for sym in Symmetry::ALL {
            let orbits = Orbits::of(sym);
            let options = Options {
                symmetry: sym,
                ..Options::default()
            };
            for i in 0..4 {
                let g = make(3, i, options).candidate;
                assert!(orbits.respected_by(&g.puzzle.0), "{sym:?} {}", g.puzzle);
                assert_eq!(count_solutions_up_to(&g.puzzle, 2), 1);
                for o in 0..orbits.len() {
                    let mut p = g.puzzle;
                    if p.0[orbits.cells(o)[0] as usize] == 0 {
                        continue;
                    }
                    for &c in orbits.cells(o) {
                        p.0[c as usize] = 0;
                    }
                    assert_eq!(count_solutions_up_to(&p, 2), 2, "{sym:?} orbit {o}");
                }
                if g.minimal {
                    assert_unique_and_minimal(&g.puzzle, &g.solution);
                }
            }
        }
    }

    #[test]
    fn the_clue_range_is_honoured() {
        let options = Options {
            min_clues: 24,
            max_clues: 25,
            ..Options::default()
        };
        for i in 0..5 {
            let g = make(11, i, options);
            assert!(
                (24..=25).contains(&g.candidate.clues),
                "{}",
                g.candidate.clues
            );
        }
    }

    #[test]
    fn an_impossible_request_runs_out_of_attempts() {
        let options = Options {
            max_clues: 17,
            max_attempts: 20,
            ..Options::default()
        };
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let got = Search::new(1, 0, options).run(&mut solver, &mut |_| Some(()));
        assert_eq!(got, Err(20));
    }

    #[test]
    fn a_refused_candidate_costs_an_attempt() {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let mut offered = 0;
        let got = Search::new(5, 0, Options::default())
            .run(&mut solver, &mut |c| {
                offered += 1;
                (offered == 3).then_some(c.clues)
            })
            .unwrap();
        assert_eq!(got.attempts, 2);
        assert_eq!(got.extra, got.candidate.clues);
    }
}
