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

/// Whether `puzzle` (its clues at the cells set in `clues`, a subset of
/// the solution `sets` is of) has exactly one solution, as far as `solver`
/// can tell in [`CHECK_NODES`] nodes: `None` when it could not.
fn unique(solver: &mut Solver, puzzle: &Grid, clues: u128, sets: &Unavoidable) -> Option<bool> {
    if sets.missed(clues) {
        return Some(false);
    }
    solver.restart(puzzle, 2);
    solver.resume(CHECK_NODES);
    let a = solver.answer();
    a.complete.then_some(a.count == 1)
}

/// Whether `puzzle` (a unique puzzle whose only solution is `solution`,
/// with the clues at `cells` just blanked) is still unique: no solution
/// puts another digit in one of those cells. For each cell, one search for
/// a solution without the solution's digit there
/// ([`Solver::restart_without`]), which finds a second solution or rules
/// one out far faster than counting to 2, since it starts more
/// constrained, and covers all the cell's other digits at once. Before
/// any search, a set of `sets` left without a clue (`clues` has the
/// cells still given) answers no, and a cell its peers force, or a unit
/// of it leaves no other place for its digit, needs no search. `None` when a search ran out of nodes.
fn still_unique(
    solver: &mut Solver,
    puzzle: &Grid,
    clues: u128,
    sets: &Unavoidable,
    cells: &[u8],
    solution: &Grid,
) -> Option<bool> {
    if sets.missed(clues) {
        return Some(false);
    }
    for &c in cells {
        let c = c as usize;
        if forced(puzzle, c) || sets.hidden_single(clues, c, solution.0[c]) {
            continue;
        }
        solver.restart_without(puzzle, c, solution.0[c], 1);
        solver.resume(CHECK_NODES);
        let a = solver.answer();
        if !a.complete {
            return None;
        }
        if a.count > 0 {
            return Some(false);
        }
    }
    Some(true)
}

/// Whether the blank cell `c` of `puzzle` has one digit left: its row,
/// column and box hold the eight others between them, so every solution
/// puts the same digit there. A few dozen loads instead of a search.
fn forced(puzzle: &Grid, c: usize) -> bool {
    let (r, col) = (c / 9, c % 9);
    let (br, bc) = (r / 3 * 3, col / 3 * 3);
    let mut used = 0u16;
    for k in 0..9 {
        used |= 1 << puzzle.0[r * 9 + k];
        used |= 1 << puzzle.0[k * 9 + col];
        used |= 1 << puzzle.0[(br + k / 3) * 9 + bc + k % 3];
    }
    // Bit 0 (a blank) set or not, eight of the nine digits.
    (used | 1).count_ones() == 9
}

/// Every cell (bit i = cell i).
const ALL_CELLS: u128 = (1 << CELLS) - 1;

/// The row, column and box of each cell (bit i = cell i).
const UNITS: [[u128; 3]; CELLS] = {
    let mut units = [[0u128; 3]; CELLS];
    let mut c = 0;
    while c < CELLS {
        let mut k = 0;
        while k < CELLS {
            if k / 9 == c / 9 {
                units[c][0] |= 1 << k;
            }
            if k % 9 == c % 9 {
                units[c][1] |= 1 << k;
            }
            if k / 27 == c / 27 && k % 9 / 3 == c % 9 / 3 {
                units[c][2] |= 1 << k;
            }
            k += 1;
        }
        c += 1;
    }
    units
};

/// Each cell with its 20 peers (bit i = cell i).
const PEERS: [u128; CELLS] = {
    let mut peers = [0u128; CELLS];
    let mut c = 0;
    while c < CELLS {
        peers[c] = UNITS[c][0] | UNITS[c][1] | UNITS[c][2];
        c += 1;
    }
    peers
};

/// Most unavoidable sets of two digits a grid can have: 36 pairs of
/// digits, each splitting into at most 4 sets (each spans 2 rows or more).
const MAX_UNAVOIDABLE: usize = 36 * 4;

/// Rows an unavoidable set of [`Unavoidable`] spans at most: larger ones
/// cost a test per check and seldom end without a clue.
const MAX_UNAVOIDABLE_ROWS: u32 = 6;

/// The unavoidable sets of two digits of a solution grid: for digits a and
/// b, the smallest sets of their cells in which swapping a and b makes
/// another solution (the rectangles a b over b a, the hexagons of three
/// rows, and so on up to all 18 cells). A unique puzzle has a clue in each
/// of them. A row's a and b go together, and so do the rows linked by a
/// column or box where one has a and the other b, so the sets are the
/// classes of rows under those links. A random grid has about 9
/// rectangles alone; a removal pass keeps about a quarter of its clues
/// because their removal would leave one of the rectangles empty, which a
/// mask test finds without a search.
struct Unavoidable {
    /// Each set's cells (bit i = cell i).
    sets: [u128; MAX_UNAVOIDABLE],
    len: usize,
    /// The solution's cells of each digit, by digit.
    digit_cells: [u128; 10],
}

impl Unavoidable {
    /// The unavoidable sets of two digits of `solution`, a valid solution
    /// grid.
    fn of(solution: &Grid) -> Unavoidable {
        // The column of each digit in each row, the row of each digit in
        // each column and in each box.
        let mut col_of = [[0u8; 10]; 9];
        let mut row_in_col = [[0u8; 10]; 9];
        let mut row_in_box = [[0u8; 10]; 9];
        for (i, &d) in solution.0.iter().enumerate() {
            let (r, c, d) = (i / 9, i % 9, usize::from(d) % 10);
            col_of[r][d] = c as u8;
            row_in_col[c][d] = r as u8;
            row_in_box[r / 3 * 3 + c / 3][d] = r as u8;
        }
        let mut found = Unavoidable {
            sets: [0; MAX_UNAVOIDABLE],
            len: 0,
            digit_cells: [0; 10],
        };
        for (i, &d) in solution.0.iter().enumerate() {
            found.digit_cells[usize::from(d) % 10] |= 1 << i;
        }
        for a in 1..=9usize {
            for b in a + 1..=9usize {
                // Each row linked to the row with b in the column, and in
                // the box, of its a: both links are permutations of the
                // rows, so following them forward reaches the whole class.
                let mut link = [0u16; 9];
                for (r, l) in link.iter_mut().enumerate() {
                    let c = usize::from(col_of[r][a]);
                    *l = 1 << row_in_col[c][b] | 1 << row_in_box[r / 3 * 3 + c / 3][b];
                }
                let mut left = 0x1ffu16;
                while left != 0 {
                    let mut rows = left & left.wrapping_neg();
                    loop {
                        let mut next = rows;
                        let mut m = rows;
                        while m != 0 {
                            next |= link[m.trailing_zeros() as usize];
                            m &= m - 1;
                        }
                        if next == rows {
                            break;
                        }
                        rows = next;
                    }
                    left &= !rows;
                    // Larger sets are seldom left without a clue.
                    if rows.count_ones() > MAX_UNAVOIDABLE_ROWS || found.len == MAX_UNAVOIDABLE {
                        continue;
                    }
                    let mut set = 0u128;
                    let mut m = rows;
                    while m != 0 {
                        let r = m.trailing_zeros() as usize;
                        m &= m - 1;
                        set |= 1 << (r * 9 + usize::from(col_of[r][a]))
                            | 1 << (r * 9 + usize::from(col_of[r][b]));
                    }
                    found.sets[found.len] = set;
                    found.len += 1;
                }
            }
        }
        found
    }

    /// Whether some set has none of the cells set in `clues`.
    #[inline]
    fn missed(&self, clues: u128) -> bool {
        self.sets[..self.len].iter().any(|&u| u & clues == 0)
    }

    /// Whether the blank cell `c`, whose digit in the solution is `d`, is
    /// the only cell of its row, column or box where `d` can go, given the
    /// clues set in `clues`: then every solution puts `d` there.
    #[inline]
    fn hidden_single(&self, clues: u128, c: usize, d: u8) -> bool {
        let mut seen = 0u128;
        let mut givens = self.digit_cells[usize::from(d) % 10] & clues;
        while givens != 0 {
            seen |= PEERS[givens.trailing_zeros() as usize];
            givens &= givens - 1;
        }
        let open = ALL_CELLS & !clues & !seen;
        let [row, col, bx] = UNITS[c];
        open & row == 1 << c || open & col == 1 << c || open & bx == 1 << c
    }
}

/// Clues a puzzle keeps before its removals are checked one by one: the
/// orbits removed first, down to this many clues, go without a check, and
/// one check of the result stands for all of theirs (a superset of a unique
/// puzzle is unique, so each of those checks would have passed). About 40%
/// of the 45-clue subsets of a solution are not unique; then halving finds
/// the orbit whose removal lost uniqueness (5 or 6 counts of an easy
/// puzzle, where checking the 36 removals one by one cost 36 searches), so
/// the puzzle made is the same either way.
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
    let sets = Unavoidable::of(&solution);
    let mut puzzle = solution;
    // Bit i: cell i is a clue.
    let mut mask = ALL_CELLS;
    let mut clues = CELLS as u8;
    let mut order = [0u8; CELLS];
    let n = orbits.len();
    for (i, o) in order.iter_mut().enumerate().take(n) {
        *o = i as u8;
    }
    rng.shuffle(&mut order[..n]);
    // Unchecked runs (see UNCHECKED_DOWN_TO): the orbits from `start` that
    // fit above the floor, removed together and checked once; when the
    // result is not unique, halving finds the first of them whose removal
    // lost uniqueness (the removals before it kept the puzzle unique, and
    // removing fewer clues cannot lose it), which one by one would have
    // been kept, and the next run starts after it.
    let floor = UNCHECKED_DOWN_TO.max(options.min_clues);
    let blank = |p: &mut Grid, m: &mut u128, run: &[u8]| {
        for &o in run {
            for &c in orbits.cells(o as usize) {
                p.0[c as usize] = 0;
                *m &= !(1 << c);
            }
        }
    };
    let mut start = 0;
    loop {
        let (mut end, mut left) = (start, clues);
        while end < n {
            let k = orbits.cells(order[end] as usize).len() as u8;
            if left < floor + k {
                break;
            }
            left -= k;
            end += 1;
        }
        if end == start {
            break;
        }
        let (mut trial, mut trial_mask) = (puzzle, mask);
        blank(&mut trial, &mut trial_mask, &order[start..end]);
        if unique(solver, &trial, trial_mask, &sets)? {
            (puzzle, mask, clues, start) = (trial, trial_mask, left, end);
            continue;
        }
        // Removing order[start..lo] keeps the puzzle unique,
        // order[start..hi] does not.
        let (mut lo, mut hi) = (start, end);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let (mut trial, mut trial_mask) = (puzzle, mask);
            blank(&mut trial, &mut trial_mask, &order[start..mid]);
            if unique(solver, &trial, trial_mask, &sets)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        blank(&mut puzzle, &mut mask, &order[start..lo]);
        for &o in &order[start..lo] {
            clues -= orbits.cells(o as usize).len() as u8;
        }
        start = hi;
    }
    for &o in &order[start..n] {
        let cells = orbits.cells(o as usize);
        let mut without = mask;
        for &c in cells {
            puzzle.0[c as usize] = 0;
            without &= !(1 << c);
        }
        match still_unique(solver, &puzzle, without, &sets, cells, &solution)? {
            true => {
                mask = without;
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
    let minimal = options.symmetry == Symmetry::None
        || single_clue_minimal(solver, &puzzle, mask, &sets, &solution)?;
    Some(Candidate {
        puzzle,
        solution,
        clues,
        minimal,
    })
}

/// Whether no single clue of `puzzle` (unique) can be removed keeping it
/// unique; `None` when a check ran out of nodes.
fn single_clue_minimal(
    solver: &mut Solver,
    puzzle: &Grid,
    clues: u128,
    sets: &Unavoidable,
    solution: &Grid,
) -> Option<bool> {
    let mut p = *puzzle;
    for c in 0..CELLS {
        let d = p.0[c];
        if d == 0 {
            continue;
        }
        p.0[c] = 0;
        let without = clues & !(1 << c);
        let still = still_unique(solver, &p, without, sets, &[c as u8], solution)?;
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
    fn unavoidable_sets_are_swaps_to_other_solutions_and_hold_every_rectangle() {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let mut seen = 0;
        for i in 0..40 {
            let g = solution_grid(&mut solver, &mut Rng::for_attempt(5, i, 0));
            let found = Unavoidable::of(&g);
            let sets = &found.sets[..found.len];
            for &set in sets {
                let cells: Vec<usize> = (0..CELLS).filter(|&c| set >> c & 1 == 1).collect();
                let mut digits: Vec<u8> = cells.iter().map(|&c| g.0[c]).collect();
                digits.sort_unstable();
                digits.dedup();
                assert_eq!(digits.len(), 2, "{g} {set:#x}");
                assert!(cells.len() <= 2 * MAX_UNAVOIDABLE_ROWS as usize);
                let mut other = g;
                for &c in &cells {
                    other.0[c] = if g.0[c] == digits[0] {
                        digits[1]
                    } else {
                        digits[0]
                    };
                }
                assert!(other.is_valid_solution(), "{g} {set:#x}");
            }
            // Every rectangle, by brute force.
            for r1 in 0..9 {
                for r2 in r1 + 1..9 {
                    for c1 in 0..9 {
                        for c2 in c1 + 1..9 {
                            let at = |r: usize, c: usize| g.0[r * 9 + c];
                            let two_boxes = r1 / 3 == r2 / 3 || c1 / 3 == c2 / 3;
                            if two_boxes && at(r1, c1) == at(r2, c2) && at(r1, c2) == at(r2, c1) {
                                let rect: u128 = 1 << (r1 * 9 + c1)
                                    | 1 << (r1 * 9 + c2)
                                    | 1 << (r2 * 9 + c1)
                                    | 1 << (r2 * 9 + c2);
                                assert!(sets.contains(&rect), "{g} r{r1} r{r2} c{c1} c{c2}");
                                seen += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(seen > 100, "{seen} rectangles");
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
