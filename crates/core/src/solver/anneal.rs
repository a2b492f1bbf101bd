//! Local search for one solution of a large grid with many solutions: the
//! part of a restarting search (see `RESTART_SIDE` in [`super::sized`])
//! that takes over between its tree runs.
//!
//! Near the end of filling a sparse 64x64 grid, a tree search meets a
//! tangle of a few hundred cells that no order of its last choices
//! completes, and going back far enough to undo the first choice that
//! caused it costs more than the budget. A repair search does not need to
//! go back: it keeps a full grid that breaks some rules and mends it.
//!
//! ```text
//!  every box holds each of its values once (its free cells hold a
//!  permutation of the values the root left it; a cell holds only a value
//!  the root left it)
//!  cost = the repeats in rows and columns (a row with a value twice: 1)
//!  a move swaps two free cells of one box, one of them repeated in its row
//!  or column, the other one of those that may take its value and give it
//!  theirs; it is kept when the cost does not grow, and otherwise with
//!  probability exp(-growth / T)  (Metropolis; T cycles, see TEMPERATURES)
//! ```
//!
//! A grid of cost 0 is a solution. Each move is a few counter updates, so
//! the search makes millions a second and allocates nothing once started;
//! its tables (about 16 bytes a cell) are allocated with the solver.

use super::xorshift::XorShift;
use crate::puzzle::sized::Shape;

/// Moves made for one node of the work budget: about what one node of
/// the tree search costs at these sizes.
pub(super) const MOVES_PER_NODE: u64 = 64;

/// Bytes the search's tables take for a grid of `cells` cells (see
/// [`Anneal::heap_bytes`]).
pub(super) const BYTES_PER_CELL: usize = 16;

/// The state of a repair search over one grid.
#[derive(Clone, Default)]
pub(super) struct Anneal {
    n: usize,
    box_rows: usize,
    box_cols: usize,
    /// The value in each cell: fixed by the root or the search's current
    /// guess.
    value: Vec<u8>,
    /// The values the root left each free cell (0 for a fixed cell).
    cands: Vec<u64>,
    /// The free cells, box by box: box b's are `free[start[b]..start[b+1]]`.
    free: Vec<u16>,
    start: Vec<u32>,
    /// How often each value stands in each line: rows, then columns;
    /// `count[line * (n + 1) + v]`.
    count: Vec<u16>,
    /// The repeats of each line (a value k times there counts k - 1).
    repeats: Vec<u16>,
    /// The lines with a repeat, in no order, and each line's place there
    /// (`u16::MAX` when it has none).
    hot: Vec<u16>,
    hot_at: Vec<u16>,
    cost: u64,
    /// Random state (xorshift64*).
    rng: XorShift,
    /// Whether `start` filled the grid (false before, and for a grid whose
    /// root leaves some box no way to hold its values).
    ready: bool,
    /// Moves made since the start (the temperature follows them).
    moves: u64,
}

/// What one call of [`Anneal::run`] ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Every row and column holds each value once.
    Solved,
    /// The moves asked for were made.
    Going,
}

/// The temperatures the search cycles through, one per [`STRETCH`] moves:
/// a move that adds one repeat is kept with probability exp(-1/T). One
/// fixed temperature suits one density: on the 64x64 grids of data/large/
/// (ten at 65% and 80% blanks, tried while a partner was any cell of the
/// box), 0.2 froze grids of 65% at a few repeats (up to 11 s), 0.26 let
/// those of 80% hover above none (up to 8.5 s), and 0.23 solved both but
/// sits on a narrow ridge; cycling through 0.21, 0.24 and 0.27 solved each
/// in 0.2-0.9 s. The cool stretches mend, the warm ones shake a grid out of
/// a corner. Figures with today's moves: docs/sizes.md.
const TEMPERATURES: [f64; 3] = [0.21, 0.24, 0.27];

/// Moves at one temperature.
const STRETCH: u64 = 1 << 16;

/// For each of [`TEMPERATURES`], the thresholds a random word must fall
/// below to keep a move that adds 1..=4 repeats: exp(-d/T) of 2^64,
/// `KEEP[t][d]`. Worked out once, not on each call of [`Anneal::run`].
static KEEP: std::sync::LazyLock<[[u64; 5]; 3]> = std::sync::LazyLock::new(|| {
    TEMPERATURES.map(|t| {
        let mut keep = [0u64; 5];
        for (d, k) in keep.iter_mut().enumerate().skip(1) {
            *k = ((-(d as f64) / t).exp() * u64::MAX as f64) as u64;
        }
        keep
    })
});

impl Anneal {
    /// Tables for grids of `shape`, allocated once: [`Anneal::start`] and
    /// [`Anneal::run`] allocate nothing.
    pub(super) fn new(shape: Shape) -> Anneal {
        let n = shape.side();
        let cells = shape.cells();
        Anneal {
            n,
            box_rows: shape.box_rows(),
            box_cols: shape.box_cols(),
            value: vec![0; cells],
            cands: vec![0; cells],
            free: Vec::with_capacity(cells),
            start: vec![0; n + 1],
            count: vec![0; 2 * n * (n + 1)],
            repeats: vec![0; 2 * n],
            hot: Vec::with_capacity(2 * n),
            hot_at: vec![u16::MAX; 2 * n],
            cost: 0,
            rng: XorShift::default(),
            ready: false,
            moves: 0,
        }
    }

    /// The bytes these tables hold.
    pub(super) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.value.capacity()
            + self.cands.capacity() * size_of::<u64>()
            + self.free.capacity() * size_of::<u16>()
            + self.start.capacity() * size_of::<u32>()
            + (self.count.capacity()
                + self.repeats.capacity()
                + self.hot.capacity()
                + self.hot_at.capacity())
                * size_of::<u16>()
    }

    /// Forgets any search: the next [`Anneal::start`] begins one.
    pub(super) fn clear(&mut self) {
        self.ready = false;
    }

    /// Whether a search is under way.
    pub(super) fn ready(&self) -> bool {
        self.ready
    }

    /// The grid as it stands (a solution after [`Outcome::Solved`]).
    pub(super) fn values(&self) -> &[u8] {
        &self.value
    }

    /// Starts a search from the root's board: `placed(cell)` the value the
    /// root placed there (0 if none) and `cands(cell)` the values it left
    /// an open cell. Each box's free cells get its missing values, each a
    /// value it may hold (a matching, found in a random order). False when
    /// some box has none: the board has no solution.
    pub(super) fn start(
        &mut self,
        placed: impl Fn(usize) -> u8,
        cands: impl Fn(usize) -> u64,
        seed: u64,
    ) -> bool {
        let n = self.n;
        self.rng = XorShift::new(seed | 1);
        self.ready = false;
        self.moves = 0;
        self.free.clear();
        self.count.fill(0);
        for cell in 0..n * n {
            let v = placed(cell);
            self.value[cell] = v;
            self.cands[cell] = if v == 0 { cands(cell) } else { 0 };
        }
        let stacks = n / self.box_cols;
        for b in 0..n {
            self.start[b] = self.free.len() as u32;
            let (r0, c0) = (b / stacks * self.box_rows, b % stacks * self.box_cols);
            let mut missing = crate::puzzle::sized::value_mask(n);
            for r in r0..r0 + self.box_rows {
                for c in c0..c0 + self.box_cols {
                    let cell = r * n + c;
                    match self.value[cell] {
                        0 => self.free.push(cell as u16),
                        v => missing &= !(1u64 << (v - 1)),
                    }
                }
            }
            if !self.fill_box(b, missing) {
                return false;
            }
        }
        self.start[n] = self.free.len() as u32;
        for line in 0..2 * n {
            self.repeats[line] = 0;
            self.hot_at[line] = u16::MAX;
        }
        self.hot.clear();
        self.cost = 0;
        for cell in 0..n * n {
            let v = usize::from(self.value[cell]);
            self.add(cell / n, v);
            self.add(n + cell % n, v);
        }
        self.ready = true;
        true
    }

    /// Gives box `b`'s free cells the values of `missing`, one each, each
    /// a value the cell may hold: augmenting paths over at most 64 cells.
    fn fill_box(&mut self, b: usize, missing: u64) -> bool {
        let cells = self.start[b] as usize..self.free.len();
        if cells.len() != missing.count_ones() as usize {
            return false;
        }
        // owner[v]: the index (in the box's free cells) holding value v+1.
        let mut owner = [u8::MAX; 64];
        let rotate = (self.rng.next() % 64) as u32;
        for i in 0..cells.len() {
            let mut seen = 0u64;
            if !self.augment(b, i, missing, rotate, &mut owner, &mut seen) {
                return false;
            }
        }
        for (v, &i) in owner.iter().enumerate() {
            if i != u8::MAX {
                let cell = usize::from(self.free[cells.start + usize::from(i)]);
                self.value[cell] = v as u8 + 1;
            }
        }
        true
    }

    /// Kuhn's step: finds a value for the box's free cell `i`, moving
    /// others along an alternating path (depth at most 64).
    fn augment(
        &self,
        b: usize,
        i: usize,
        missing: u64,
        rotate: u32,
        owner: &mut [u8; 64],
        seen: &mut u64,
    ) -> bool {
        let cell = usize::from(self.free[self.start[b] as usize + i]);
        let mut options = self.cands[cell] & missing & !*seen;
        // Try the values from a random point, so the fill varies.
        options = options.rotate_right(rotate);
        while options != 0 {
            let k = (options.trailing_zeros() + rotate) % 64;
            options &= options - 1;
            let bit = 1u64 << k;
            if *seen & bit != 0 {
                continue;
            }
            *seen |= bit;
            let holder = owner[k as usize];
            if holder == u8::MAX
                || self.augment(b, usize::from(holder), missing, rotate, owner, seen)
            {
                owner[k as usize] = i as u8;
                return true;
            }
        }
        false
    }

    /// One more `v` in `line`.
    #[inline(always)]
    fn add(&mut self, line: usize, v: usize) {
        let at = line * (self.n + 1) + v;
        self.count[at] += 1;
        if self.count[at] >= 2 {
            self.repeats[line] += 1;
            self.cost += 1;
            if self.repeats[line] == 1 {
                self.hot_at[line] = self.hot.len() as u16;
                self.hot.push(line as u16);
            }
        }
    }

    /// One `v` fewer in `line`.
    #[inline(always)]
    fn remove(&mut self, line: usize, v: usize) {
        let at = line * (self.n + 1) + v;
        if self.count[at] >= 2 {
            self.repeats[line] -= 1;
            self.cost -= 1;
            if self.repeats[line] == 0 {
                let k = usize::from(self.hot_at[line]);
                let last = self.hot.pop().expect("a hot line");
                if usize::from(last) != line {
                    self.hot[k] = last;
                    self.hot_at[usize::from(last)] = k as u16;
                }
                self.hot_at[line] = u16::MAX;
            }
        }
        self.count[at] -= 1;
    }

    /// What moving value `from` out of and `to` into `line` adds to the
    /// cost.
    #[inline(always)]
    fn change(&self, line: usize, from: usize, to: usize) -> i64 {
        let base = line * (self.n + 1);
        i64::from(self.count[base + to] >= 1) - i64::from(self.count[base + from] >= 2)
    }

    /// Makes up to `moves` moves; stops early when the grid is solved.
    pub(super) fn run(&mut self, moves: u64) -> Outcome {
        let n = self.n;
        let keep = KEEP[(self.moves / STRETCH) as usize % TEMPERATURES.len()];
        self.moves += moves;
        let stacks = n / self.box_cols;
        for _ in 0..moves {
            if self.cost == 0 {
                return Outcome::Solved;
            }
            // A line with a repeat, and in it a free cell whose value repeats.
            let pick = self.rng.below(self.hot.len());
            let line = usize::from(self.hot[pick]);
            let (is_row, index) = (line < n, line % n);
            let base = line * (n + 1);
            let mut found = [0u16; 64];
            let mut seen = 0;
            let (first, step) = if is_row { (index * n, 1) } else { (index, n) };
            for k in 0..n {
                let cell = first + k * step;
                if self.count[base + usize::from(self.value[cell])] >= 2 && self.cands[cell] != 0 {
                    found[seen] = cell as u16;
                    seen += 1;
                }
            }
            if seen == 0 {
                // Only fixed cells repeat here: the root's board breaks a
                // rule, which its propagation would have found.
                continue;
            }
            let a = usize::from(found[self.rng.below(seen)]);
            // A partner in its box: a free cell that may take a's value
            // and whose value a may take.
            let (ra, ca) = (a / n, a % n);
            let b = ra / self.box_rows * stacks + ca / self.box_cols;
            let va = usize::from(self.value[a]);
            let (abit, acands) = (1u64 << (va - 1), self.cands[a]);
            let mut partners = [0u16; 64];
            let mut count = 0;
            for &cell in &self.free[self.start[b] as usize..self.start[b + 1] as usize] {
                let c = usize::from(cell);
                let v = self.value[c];
                if self.cands[c] & abit != 0 && acands & (1u64 << (v - 1)) != 0 && c != a {
                    partners[count] = cell;
                    count += 1;
                }
            }
            if count == 0 {
                continue;
            }
            let other = usize::from(partners[self.rng.below(count)]);
            let vb = usize::from(self.value[other]);
            let (rb, cb) = (other / n, other % n);
            let mut d = 0i64;
            if ra != rb {
                d += self.change(ra, va, vb) + self.change(rb, vb, va);
            }
            if ca != cb {
                d += self.change(n + ca, va, vb) + self.change(n + cb, vb, va);
            }
            if d > 0 && self.rng.next() >= keep[d as usize] {
                continue;
            }
            if ra != rb {
                self.remove(ra, va);
                self.remove(rb, vb);
                self.add(ra, vb);
                self.add(rb, va);
            }
            if ca != cb {
                self.remove(n + ca, va);
                self.remove(n + cb, vb);
                self.add(n + ca, vb);
                self.add(n + cb, va);
            }
            self.value[a] = vb as u8;
            self.value[other] = va as u8;
        }
        if self.cost == 0 {
            Outcome::Solved
        } else {
            Outcome::Going
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::sized::SizedGrid;
    use crate::solver::Progress;
    use crate::solver::sized::{SizedSolver, blanked_grids};

    /// The root's board of `grid`: what one node of a search leaves.
    fn root(grid: &SizedGrid) -> SizedSolver {
        let mut s = SizedSolver::new(grid, 1);
        assert_eq!(s.resume(1), Progress::Paused);
        s
    }

    #[test]
    fn repairs_sparse_grids_into_solutions_that_keep_their_givens() {
        let shape = Shape::new(6, 6).unwrap();
        let all = blanked_grids(include_str!("../../../../data/large/36x36.txt"), shape, 65);
        assert!(all.len() >= 4);
        for grid in all.iter().take(4) {
            let s = root(grid);
            let mut a = Anneal::new(shape);
            assert!(a.start(|c| s.placed(c), |c| s.candidates(c), 7));
            // Every box holds each value once from the start.
            assert_eq!(
                a.cost,
                (0..2 * 36).map(|l| u64::from(a.repeats[l])).sum::<u64>()
            );
            let mut rounds = 0;
            while a.run(1 << 16) == Outcome::Going {
                rounds += 1;
                assert!(rounds < 2_000, "no solution after {rounds} rounds");
            }
            let solution = SizedGrid::from_values(shape, a.values().to_vec()).unwrap();
            assert!(solution.is_valid_solution());
            assert!(grid.is_kept_by(&solution));
        }
    }

    #[test]
    fn repairs_rectangular_boxes() {
        // (A prime side's box is a whole row: a Latin square, which this
        // search did not finish from blank in 2,000 rounds; such shapes
        // keep the tree search alone.)
        for (r, c) in [(6, 7), (7, 6)] {
            let shape = Shape::new(r, c).unwrap();
            let full = crate::puzzle::sized::value_mask(shape.side());
            let mut a = Anneal::new(shape);
            assert!(a.start(|_| 0, |_| full, 3));
            let mut rounds = 0;
            while a.run(1 << 16) == Outcome::Going {
                rounds += 1;
                assert!(rounds < 2_000, "{shape}: no solution after {rounds} rounds");
            }
            let solution = SizedGrid::from_values(shape, a.values().to_vec()).unwrap();
            assert!(solution.is_valid_solution(), "{shape}");
        }
    }

    #[test]
    fn a_box_that_cannot_hold_its_values_has_no_start() {
        // A 36x36 grid whose first box's cells may not hold value 1 (each
        // of its rows has a 1 elsewhere), though the box lacks it.
        let shape = Shape::new(6, 6).unwrap();
        let mut values = vec![0u8; 36 * 36];
        for r in 0..6 {
            values[r * 36 + 6 + r] = 1;
        }
        let grid = SizedGrid::from_values(shape, values).unwrap();
        let mut a = Anneal::new(shape);
        // Cells as the grid's givens leave them (no propagation).
        let cands = |c: usize| {
            if c / 36 < 6 && c % 36 < 6 {
                crate::puzzle::sized::value_mask(36) & !1
            } else {
                crate::puzzle::sized::value_mask(36)
            }
        };
        assert!(!a.start(|c| grid.values()[c], cands, 7));
        assert!(!a.ready());
    }

    #[test]
    fn its_tables_are_what_the_footprint_counts() {
        for b in [6, 7, 8] {
            let shape = Shape::new(b, b).unwrap();
            let a = Anneal::new(shape);
            assert!(a.heap_bytes() <= BYTES_PER_CELL * shape.cells());
        }
    }
}
