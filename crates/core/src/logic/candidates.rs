//! The state a person works on, at any [`Shape`]: placed digits and, for
//! each open cell, its candidates as a mask (bit d-1 for digit d, so a side
//! of up to 64 fits one `u64`). The geometry ([`Layout`]) numbers the 3N
//! units as rows 0..N, columns N..2N and boxes 2N..3N, each its cells in
//! reading order; every technique reasons over those units, never over 9.
//!
//! Invariants kept by [`Candidates::place`]: a placed cell has mask 0, and no
//! open cell keeps a digit placed among its peers.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use super::LogicError;
pub(crate) use crate::puzzle::sized::value_mask as all_digits;
use crate::puzzle::sized::{Shape, SizedGrid, UnitKind};
use crate::puzzle::{CELLS, Grid};

/// The bit of digit `d` (1..=64).
#[inline]
pub(crate) fn bit(d: u8) -> u64 {
    1u64 << (d - 1)
}

/// Whether `m` has exactly two bits set. (`count_ones` without the
/// popcnt instruction, which a default x86-64 build lacks, is a dozen
/// operations; this is four.)
#[inline]
pub(crate) fn two_bits(m: u64) -> bool {
    let rest = m & m.wrapping_sub(1);
    rest != 0 && rest & (rest - 1) == 0
}

/// Whether `m` has more than two bits set (as [`two_bits`]).
#[inline]
pub(crate) fn over_two_bits(m: u64) -> bool {
    let rest = m & m.wrapping_sub(1);
    rest & rest.wrapping_sub(1) != 0
}

/// The digits of a mask, lowest first.
#[inline]
pub(crate) fn digits_of(mut mask: u64) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let d = mask.trailing_zeros() as u8 + 1;
            mask &= mask - 1;
            Some(d)
        }
    })
}

/// The set bits of a mask, lowest first (positions in a unit, lines...).
#[inline]
pub(crate) fn bits_of(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(i)
        }
    })
}

/// The geometry of a shape: its units and which units each cell is in.
#[derive(Debug)]
pub(crate) struct Layout {
    shape: Shape,
    n: usize,
    /// 3N units of N cells each, flattened.
    units: Vec<u16>,
    /// Each cell's row, column and box as unit indices.
    cell_units: Vec<[u16; 3]>,
    /// Each cell's position in its row, column and box.
    cell_places: Vec<[u8; 3]>,
    /// Each cell's peers in increasing order, `3N - 1 - (box overlap)` a
    /// cell; built the first time a technique asks.
    peer_table: OnceLock<(usize, Vec<u16>)>,
    /// [`Layout::meet`] of the four pairs of kinds, built when first asked.
    meets: OnceLock<Vec<u64>>,
    /// [`Layout::box_first_peers`] of every cell, built when first asked.
    box_first: OnceLock<(usize, Vec<u16>)>,
}

impl Layout {
    fn build(shape: Shape) -> Layout {
        let n = shape.side();
        let mut units = Vec::with_capacity(3 * n * n);
        for kind in [UnitKind::Row, UnitKind::Column, UnitKind::Box] {
            for i in 0..n {
                units.extend(shape.unit_cells(kind, i).map(|c| c as u16));
            }
        }
        let mut cell_units = vec![[0u16; 3]; n * n];
        let mut cell_places = vec![[0u8; 3]; n * n];
        for u in 0..3 * n {
            for (i, &c) in units[u * n..(u + 1) * n].iter().enumerate() {
                cell_units[c as usize][u / n] = u as u16;
                cell_places[c as usize][u / n] = i as u8;
            }
        }
        Layout {
            shape,
            n,
            units,
            cell_units,
            cell_places,
            peer_table: OnceLock::new(),
            meets: OnceLock::new(),
            box_first: OnceLock::new(),
        }
    }

    /// The layout of `shape`; the classic one is built once.
    pub(crate) fn of(shape: Shape) -> Arc<Layout> {
        static CLASSIC: OnceLock<Arc<Layout>> = OnceLock::new();
        if shape == Shape::CLASSIC {
            return CLASSIC
                .get_or_init(|| Arc::new(Layout::build(Shape::CLASSIC)))
                .clone();
        }
        Arc::new(Layout::build(shape))
    }

    /// The side N.
    #[inline]
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// The number of units, 3N.
    #[inline]
    pub(crate) fn unit_count(&self) -> usize {
        3 * self.n
    }

    /// The cells of unit `u`, in reading order.
    #[inline]
    pub(crate) fn unit(&self, u: usize) -> &[u16] {
        &self.units[u * self.n..(u + 1) * self.n]
    }

    /// The row, column and box (unit indices) of `cell`.
    #[inline]
    pub(crate) fn units_of(&self, cell: usize) -> [u16; 3] {
        self.cell_units[cell]
    }

    /// The position of `cell` in its row, column and box.
    #[inline]
    pub(crate) fn places_of(&self, cell: usize) -> [u8; 3] {
        self.cell_places[cell]
    }

    /// True when `a` and `b` are different cells sharing a unit.
    #[inline]
    pub(crate) fn sees(&self, a: usize, b: usize) -> bool {
        let (x, y) = (self.cell_units[a], self.cell_units[b]);
        a != b && (x[0] == y[0] || x[1] == y[1] || x[2] == y[2])
    }

    /// The peers of `cell` (row, then column, then the rest of its box);
    /// each once.
    pub(crate) fn peers(&self, cell: usize) -> impl Iterator<Item = usize> + '_ {
        let [r, c, b] = self.cell_units[cell];
        let row = self.unit(r as usize).iter().map(|&x| x as usize);
        let col = self.unit(c as usize).iter().map(|&x| x as usize);
        let boxx = self.unit(b as usize).iter().map(|&x| x as usize);
        row.filter(move |&x| x != cell)
            .chain(col.filter(move |&x| x != cell))
            .chain(boxx.filter(move |&x| {
                let u = self.cell_units[x];
                u[0] != r && u[1] != c
            }))
    }

    /// Where the units of kind `k1` meet those of kind `k2` (0 rows, 1
    /// columns, 2 boxes; a box and a line, either way round): `[i * n + j]`
    /// has bit p when the p-th cell of the i-th unit of kind `k1` lies in
    /// the j-th unit of kind `k2` (0: they do not meet).
    pub(crate) fn meet(&self, k1: usize, k2: usize) -> &[u64] {
        const PAIRS: [(usize, usize); 4] = [(2, 1), (2, 0), (1, 2), (0, 2)];
        let n = self.n;
        let all = self.meets.get_or_init(|| {
            let mut all = vec![0u64; 4 * n * n];
            for (k, &(k1, k2)) in PAIRS.iter().enumerate() {
                let meet = &mut all[k * n * n..(k + 1) * n * n];
                for i in 0..n {
                    for (pos, &x) in self.unit(k1 * n + i).iter().enumerate() {
                        let j = self.units_of(x as usize)[k2] as usize - k2 * n;
                        meet[i * n + j] |= 1 << pos;
                    }
                }
            }
            all
        });
        let k = match (k1, k2) {
            (2, 1) => 0,
            (2, 0) => 1,
            (1, 2) => 2,
            (0, 2) => 3,
            _ => panic!("units meet only as a box and a line"),
        };
        &all[k * n * n..(k + 1) * n * n]
    }

    /// Takes candidate `d` of `cell` out of a table of places (where each
    /// digit can go in each unit, `[u * n + d - 1]`, bit i for the unit's
    /// i-th cell): the bit of its position in each of its three units.
    #[inline]
    pub(crate) fn unplace(&self, places: &mut [u64], cell: usize, d: u8) {
        let (units, at) = (self.cell_units[cell], self.cell_places[cell]);
        for k in 0..3 {
            places[units[k] as usize * self.n + d as usize - 1] &= !(1 << at[k]);
        }
    }

    /// Undoes [`Layout::unplace`]: `d` is a place in `cell`'s units again.
    pub(crate) fn replace(&self, places: &mut [u64], cell: usize, d: u8) {
        let (units, at) = (self.cell_units[cell], self.cell_places[cell]);
        for k in 0..3 {
            places[units[k] as usize * self.n + d as usize - 1] |= 1 << at[k];
        }
    }

    /// The peers of `cell` in SE's order for aligned exclusion: its box,
    /// then its row and its column outside the box, each in reading order.
    pub(crate) fn box_first_peers(&self, cell: usize) -> Cow<'_, [u16]> {
        self.peer_list(&self.box_first, cell, |x, out| {
            let [r, col, b] = self.units_of(x);
            for u in [b, r, col] {
                for &y in self.unit(u as usize) {
                    if y as usize != x && (u == b || self.units_of(y as usize)[2] != b) {
                        out.push(y);
                    }
                }
            }
        })
    }

    /// The peers of `cell` in increasing order.
    pub(crate) fn sorted_peers(&self, cell: usize) -> Cow<'_, [u16]> {
        self.peer_list(&self.peer_table, cell, |x, out| {
            let from = out.len();
            out.extend(self.peers(x).map(|p| p as u16));
            out[from..].sort_unstable();
        })
    }

    /// `cell`'s peers as `list` writes them: from a table of every cell's,
    /// built the first time, up to [`PEER_TABLE_CELLS`] cells; beyond, made
    /// on each call (a 64x64 layout's table would take 1.5 MB, and a
    /// layout lives as long as the state of one request).
    fn peer_list<'a>(
        &'a self,
        table: &'a OnceLock<(usize, Vec<u16>)>,
        cell: usize,
        list: impl Fn(usize, &mut Vec<u16>),
    ) -> Cow<'a, [u16]> {
        let cells = self.n * self.n;
        if cells > PEER_TABLE_CELLS {
            let mut out = Vec::new();
            list(cell, &mut out);
            return Cow::Owned(out);
        }
        let (count, table) = table.get_or_init(|| {
            let count = self.peers(0).count();
            let mut table = Vec::with_capacity(cells * count);
            for x in 0..cells {
                list(x, &mut table);
            }
            (count, table)
        });
        Cow::Borrowed(&table[cell * count..(cell + 1) * count])
    }
}

/// The most cells a layout keeps tables of peers for: up to 16x16, where
/// the chains run and the producers are called most.
const PEER_TABLE_CELLS: usize = 256;

/// Placed digits and pencil marks of a grid of any shape.
#[derive(Clone, Debug)]
pub struct Candidates {
    layout: Arc<Layout>,
    values: Vec<u8>,
    masks: Vec<u64>,
    /// Cells without a digit.
    open: usize,
    /// The digits placed in each unit.
    placed: Vec<u64>,
    /// Where each digit can go in each unit: `places[u * n + d - 1]` has
    /// bit i when the unit's i-th cell has candidate d. Kept with `masks`.
    places: Vec<u64>,
}

impl PartialEq for Candidates {
    fn eq(&self, other: &Candidates) -> bool {
        self.layout.shape == other.layout.shape
            && self.values == other.values
            && self.masks == other.masks
    }
}

impl Eq for Candidates {}

impl Candidates {
    /// The state of a grid before any reasoning: its digits placed, and each
    /// blank cell's candidates the digits none of its peers holds. Givens that
    /// break the rules are taken as they are (check them first with
    /// [`SizedGrid::check_givens`]); the techniques then find nothing sound
    /// to do.
    pub fn new(puzzle: &SizedGrid) -> Candidates {
        Candidates::from_values(puzzle.shape(), puzzle.values())
    }

    /// [`Candidates::new`] of a 9x9 grid.
    pub fn from_grid(g: &Grid) -> Candidates {
        Candidates::from_values(Shape::CLASSIC, &g.0)
    }

    fn from_values(shape: Shape, values: &[u8]) -> Candidates {
        let layout = Layout::of(shape);
        let n = layout.n;
        let all = all_digits(n);
        let mut c = Candidates {
            values: vec![0; n * n],
            masks: vec![all; n * n],
            open: n * n,
            placed: vec![0; 3 * n],
            places: Vec::new(),
            layout,
        };
        // The digits each unit holds: a blank cell's peers hold the union
        // of its three units'.
        let mut used = vec![0u64; 3 * n];
        for (cell, &v) in values.iter().enumerate() {
            if v != 0 && usize::from(v) <= n {
                c.values[cell] = v;
                c.masks[cell] = 0;
                c.open -= 1;
                for u in c.layout.units_of(cell) {
                    used[u as usize] |= bit(v);
                }
            }
        }
        for cell in 0..n * n {
            if c.values[cell] == 0 {
                let [r, k, b] = c.layout.units_of(cell);
                c.masks[cell] = all & !(used[r as usize] | used[k as usize] | used[b as usize]);
            }
        }
        c.placed = used;
        c.count_places();
        c
    }

    /// `places` again from `masks`.
    fn count_places(&mut self) {
        let l = &*self.layout;
        let n = l.n;
        self.places.clear();
        self.places.resize(3 * n * n, 0);
        for u in 0..3 * n {
            let row = &mut self.places[u * n..(u + 1) * n];
            for (i, &x) in l.unit(u).iter().enumerate() {
                let mut m = self.masks[x as usize];
                while m != 0 {
                    row[m.trailing_zeros() as usize] |= 1 << i;
                    m &= m - 1;
                }
            }
        }
    }

    /// A grid's placed digits with a player's pencil marks for its blank
    /// cells (one mask a cell, bit d-1 for digit d): each blank cell keeps
    /// the marked digits that none of its peers holds; a mask of 0 (not
    /// pencilled yet) keeps all of those. The masks of placed cells are
    /// ignored.
    pub fn with_marks(puzzle: &SizedGrid, masks: &[u64]) -> Result<Candidates, LogicError> {
        let mut c = Candidates::new(puzzle);
        let n = c.layout.n;
        if masks.len() != n * n {
            return Err(LogicError::MarkCount {
                expected: n * n,
                found: masks.len(),
            });
        }
        let all = all_digits(n);
        for (cell, &m) in masks.iter().enumerate() {
            if c.values[cell] != 0 {
                continue;
            }
            if m & !all != 0 {
                return Err(LogicError::BadMask {
                    row: (cell / n) as u8,
                    col: (cell % n) as u8,
                    side: n as u8,
                    mask: m,
                });
            }
            // No marks at all is a cell the player has not pencilled yet,
            // not a cell with no candidate.
            if m != 0 {
                c.masks[cell] &= m;
            }
        }
        c.count_places();
        Ok(c)
    }

    /// A 9x9 state given as pencil marks only: every cell open.
    pub fn from_masks(masks: &[u16; CELLS]) -> Result<Candidates, LogicError> {
        let wide: Vec<u64> = masks.iter().map(|&m| u64::from(m)).collect();
        Candidates::with_marks(&SizedGrid::empty(Shape::CLASSIC), &wide)
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The shape of the grid.
    pub fn shape(&self) -> Shape {
        self.layout.shape
    }

    /// The side N.
    pub fn side(&self) -> usize {
        self.layout.n
    }

    /// Makes a step's placements and eliminations. A placement also removes
    /// its digit from the candidates of the cell's peers.
    pub fn apply(&mut self, step: &super::Step) {
        for &(cell, d) in &step.placements {
            self.place(cell as usize, d);
        }
        for &(cell, d) in &step.eliminations {
            self.eliminate(cell as usize, d);
        }
    }

    /// Places digit `d` in `cell`.
    #[inline]
    pub fn place(&mut self, cell: usize, d: u8) {
        let layout = &*self.layout;
        let units = layout.units_of(cell);
        match self.values[cell] {
            0 => self.open -= 1,
            old => {
                for u in units {
                    self.placed[u as usize] &= !bit(old);
                }
            }
        }
        self.values[cell] = d;
        let mut own = self.masks[cell];
        while own != 0 {
            layout.unplace(&mut self.places, cell, own.trailing_zeros() as u8 + 1);
            own &= own - 1;
        }
        self.masks[cell] = 0;
        let b = !bit(d);
        for u in units {
            self.placed[u as usize] |= bit(d);
            for &p in layout.unit(u as usize) {
                if self.masks[p as usize] & !b != 0 {
                    layout.unplace(&mut self.places, p as usize, d);
                }
                self.masks[p as usize] &= b;
            }
        }
    }

    /// Places naked and hidden singles until none is left. On a state that
    /// keeps its solution (every step so far sound) the result does not
    /// depend on the order: a single stays a single, or gets placed, as
    /// other digits go in. So it is the state the step-by-step loop of
    /// [`super::rate`] reaches before it needs anything harder (a full
    /// house is a naked single too), at a fraction of the cost: no unit is
    /// rescanned from the top after each placement.
    pub(crate) fn place_singles(&mut self) {
        let layout = self.layout.clone();
        loop {
            let mut placed = false;
            for cell in 0..self.masks.len() {
                let m = self.masks[cell];
                if m != 0 && m & (m - 1) == 0 {
                    self.place(cell, m.trailing_zeros() as u8 + 1);
                    placed = true;
                }
            }
            for u in 0..layout.unit_count() {
                let unit = layout.unit(u);
                let (mut once, mut twice) = (0u64, 0u64);
                for &x in unit {
                    let m = self.masks[x as usize];
                    twice |= once & m;
                    once |= m;
                }
                let mut single = once & !twice;
                while single != 0 {
                    let b = single & single.wrapping_neg();
                    single &= single - 1;
                    if let Some(&x) = unit.iter().find(|&&x| self.masks[x as usize] & b != 0) {
                        self.place(x as usize, b.trailing_zeros() as u8 + 1);
                        placed = true;
                    }
                }
            }
            if !placed {
                return;
            }
        }
    }

    /// Removes candidate `d` from `cell`.
    #[inline]
    pub fn eliminate(&mut self, cell: usize, d: u8) {
        if self.masks[cell] & bit(d) == 0 {
            return;
        }
        self.masks[cell] &= !bit(d);
        self.layout.unplace(&mut self.places, cell, d);
    }

    /// Where each digit can go in each unit: `[u * n + d - 1]` has bit i
    /// when the unit's i-th cell (in [`Layout::unit`]'s order) has
    /// candidate d.
    pub(crate) fn places(&self) -> &[u64] {
        &self.places
    }

    /// The placed digits as a grid of the state's shape (0 for an open cell).
    pub fn puzzle(&self) -> SizedGrid {
        SizedGrid::from_values(self.layout.shape, self.values.clone())
            .expect("placed digits are within the side")
    }

    /// The placed digits, row-major (0 for an open cell).
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// The digit placed in `cell`, 0 when open.
    #[inline]
    pub fn value(&self, cell: usize) -> u8 {
        self.values[cell]
    }

    /// The candidates of `cell` (bit d-1 for digit d; 0 for a placed cell).
    #[inline]
    pub fn mask(&self, cell: usize) -> u64 {
        self.masks[cell]
    }

    /// Every cell's candidate mask, row-major.
    pub fn masks(&self) -> &[u64] {
        &self.masks
    }

    /// True when every cell holds a digit.
    pub fn is_solved(&self) -> bool {
        self.open == 0
    }

    /// The first open cell left with no candidate, if any: the state has
    /// gone wrong and no technique applies soundly.
    pub fn dead_cell(&self) -> Option<usize> {
        (0..self.values.len()).find(|&c| self.values[c] == 0 && self.masks[c] == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_places_follow_every_placement_and_elimination() {
        for shape in [
            Shape::CLASSIC,
            Shape::new(2, 3).unwrap(),
            Shape::new(4, 4).unwrap(),
        ] {
            let n = shape.side();
            let mut c = Candidates::new(&SizedGrid::empty(shape));
            let mut x = 12345u64;
            let mut next = |m: usize| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) as usize % m
            };
            for _ in 0..3 * n {
                let cell = next(n * n);
                let d = next(n) as u8 + 1;
                if next(3) == 0 {
                    if c.mask(cell) & bit(d) != 0 {
                        c.place(cell, d);
                    }
                } else {
                    c.eliminate(cell, d);
                }
                let mut again = c.clone();
                again.count_places();
                assert_eq!(c.places(), again.places(), "{shape:?}");
            }
        }
    }

    #[test]
    fn peer_lists_are_the_same_from_a_table_and_made_on_each_call() {
        // Up to 256 cells the lists come from a table; above, made each
        // time: both must be the peers, sorted or box first.
        for (r, c) in [(3, 3), (2, 3), (4, 4), (5, 5), (3, 6)] {
            let l = Layout::build(Shape::new(r, c).unwrap());
            for cell in 0..l.n * l.n {
                let mut want: Vec<u16> = l.peers(cell).map(|p| p as u16).collect();
                want.sort_unstable();
                assert_eq!(&*l.sorted_peers(cell), &want[..], "{r}x{c} cell {cell}");
                let first = l.box_first_peers(cell);
                let b = l.units_of(cell)[2];
                let in_box = first
                    .iter()
                    .take_while(|&&p| l.units_of(p as usize)[2] == b);
                assert_eq!(in_box.count(), r * c - 1, "{r}x{c} cell {cell}");
                let mut got = first.to_vec();
                got.sort_unstable();
                assert_eq!(got, want, "{r}x{c} cell {cell}");
            }
        }
    }

    #[test]
    fn units_and_peers_have_the_right_shape() {
        for (r, c) in [(3, 3), (2, 3), (3, 2), (4, 4), (1, 4), (5, 5)] {
            let shape = Shape::new(r, c).unwrap();
            let l = Layout::build(shape);
            let n = shape.side();
            for cell in 0..n * n {
                let peers: Vec<usize> = l.peers(cell).collect();
                let mut sorted = peers.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(
                    sorted.len(),
                    peers.len(),
                    "{shape} cell {cell}: a peer twice"
                );
                // Row and column of n-1 each, plus the box's cells in
                // neither (none when the box is one line).
                let box_only = if r == 1 || c == 1 { 0 } else { n + 1 - r - c };
                assert_eq!(peers.len(), 2 * (n - 1) + box_only, "{shape} cell {cell}");
                for other in 0..n * n {
                    assert_eq!(l.sees(cell, other), peers.contains(&other));
                }
                let [ru, cu, bu] = l.units_of(cell);
                assert!(l.unit(ru as usize).contains(&(cell as u16)));
                assert!(l.unit(cu as usize).contains(&(cell as u16)));
                assert!(l.unit(bu as usize).contains(&(cell as u16)));
            }
        }
    }

    #[test]
    fn marks_narrow_a_grid_and_no_marks_keep_its_candidates() {
        let mut g = Grid::EMPTY;
        g.0[0] = 5;
        let mut masks = [0u64; 81];
        masks[1] = bit(5) | bit(6); // 5 is taken by r1c1: only 6 is left
        let c = Candidates::with_marks(&SizedGrid::from_grid(&g), &masks).unwrap();
        assert_eq!(c.mask(1), bit(6));
        assert_eq!(c.mask(2), all_digits(9) & !bit(5));
        assert_eq!(c.mask(80), all_digits(9));
        assert_eq!(c.value(0), 5);
        assert_eq!(c.dead_cell(), None);
    }

    #[test]
    fn marks_outside_the_digits_are_refused() {
        let mut masks = [0x1FFu16; 81];
        masks[10] = 0x200;
        assert_eq!(
            Candidates::from_masks(&masks),
            Err(LogicError::BadMask {
                row: 1,
                col: 1,
                side: 9,
                mask: 0x200
            })
        );
        let shape = Shape::new(2, 2).unwrap();
        let err = Candidates::with_marks(&SizedGrid::empty(shape), &[0xF; 15]).unwrap_err();
        assert_eq!(
            err,
            LogicError::MarkCount {
                expected: 16,
                found: 15
            }
        );
        let mut four = [0xFu64; 16];
        four[5] = 0x10;
        let err = Candidates::with_marks(&SizedGrid::empty(shape), &four).unwrap_err();
        assert_eq!(
            err.to_string(),
            "row 2, column 2: candidate mask 0x10 has bits beyond the 4 digits"
        );
    }
}
