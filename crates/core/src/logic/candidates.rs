//! The state a person works on: placed digits and, for each open cell, its
//! candidates as a 9-bit mask (bit d-1 for digit d). Cell sets are `u128`
//! bitsets over the 81 cells (bit i for cell i), so "the cells that see both
//! of these" is two ANDs.
//!
//! Invariants kept by [`Candidates::place`]: a placed cell has mask 0, and no
//! open cell keeps a digit placed among its peers.

// Unit and cell numbers are data here (they name units in steps), not just
// positions in the tables they index.
#![allow(clippy::needless_range_loop)]

use super::LogicError;
use crate::puzzle::{CELLS, Grid};

/// All nine digits as a mask.
pub(crate) const ALL_DIGITS: u16 = 0x1FF;

/// A set of cells: bit i for cell i.
pub(crate) type CellSet = u128;

/// The 27 units: rows 0-8, columns 9-17, boxes 18-26, each its cells in
/// reading order.
pub(crate) const UNITS: [[u8; 9]; 27] = build_units();

/// Each unit's cells as a set.
pub(crate) const UNIT_SETS: [CellSet; 27] = build_unit_sets();

/// Each cell's 20 peers (the cells sharing a row, column or box with it).
pub(crate) const PEERS: [CellSet; 81] = build_peers();

const fn build_units() -> [[u8; 9]; 27] {
    let mut u = [[0u8; 9]; 27];
    let mut i = 0;
    while i < 9 {
        let mut j = 0;
        while j < 9 {
            u[i][j] = (i * 9 + j) as u8;
            u[9 + i][j] = (j * 9 + i) as u8;
            let r = (i / 3) * 3 + j / 3;
            let c = (i % 3) * 3 + j % 3;
            u[18 + i][j] = (r * 9 + c) as u8;
            j += 1;
        }
        i += 1;
    }
    u
}

const fn build_unit_sets() -> [CellSet; 27] {
    let units = build_units();
    let mut s = [0u128; 27];
    let mut u = 0;
    while u < 27 {
        let mut j = 0;
        while j < 9 {
            s[u] |= 1u128 << units[u][j];
            j += 1;
        }
        u += 1;
    }
    s
}

const fn build_peers() -> [CellSet; 81] {
    let sets = build_unit_sets();
    let mut p = [0u128; 81];
    let mut c = 0;
    while c < 81 {
        let (r, k) = (c / 9, c % 9);
        let b = r / 3 * 3 + k / 3;
        p[c] = (sets[r] | sets[9 + k] | sets[18 + b]) & !(1u128 << c);
        c += 1;
    }
    p
}

/// Row 0-8 of a cell.
#[inline]
pub(crate) fn row_of(cell: usize) -> usize {
    cell / 9
}

/// Column 0-8 of a cell.
#[inline]
pub(crate) fn col_of(cell: usize) -> usize {
    cell % 9
}

/// Box 0-8 of a cell.
#[inline]
pub(crate) fn box_of(cell: usize) -> usize {
    cell / 27 * 3 + cell % 9 / 3
}

/// The cells of a set, lowest first.
#[inline]
pub(crate) fn cells_of(mut set: CellSet) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let c = set.trailing_zeros() as usize;
            set &= set - 1;
            Some(c)
        }
    })
}

/// The digits 1-9 of a mask, lowest first.
#[inline]
pub(crate) fn digits_of(mut mask: u16) -> impl Iterator<Item = u8> {
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

/// The bit of digit `d` (1-9).
#[inline]
pub(crate) fn bit(d: u8) -> u16 {
    1 << (d - 1)
}

/// Placed digits and pencil marks: 81 candidate masks and 81 values.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Candidates {
    values: [u8; CELLS],
    masks: [u16; CELLS],
}

impl Candidates {
    /// The state of a grid before any reasoning: its digits placed, and each
    /// blank cell's candidates the digits none of its peers holds. Givens that
    /// break the rules are taken as they are (check them first with
    /// [`Grid::check_givens`]); the techniques then find nothing sound to do.
    pub fn from_grid(g: &Grid) -> Candidates {
        let mut c = Candidates {
            values: [0; CELLS],
            masks: [ALL_DIGITS; CELLS],
        };
        // The digits each row, column and box holds: a blank cell's peers
        // hold the union of its three.
        let (mut rows, mut cols, mut boxes) = ([0u16; 9], [0u16; 9], [0u16; 9]);
        for (cell, &v) in g.0.iter().enumerate() {
            if (1..=9).contains(&v) {
                c.values[cell] = v;
                c.masks[cell] = 0;
                rows[row_of(cell)] |= bit(v);
                cols[col_of(cell)] |= bit(v);
                boxes[box_of(cell)] |= bit(v);
            }
        }
        for cell in 0..CELLS {
            if c.values[cell] == 0 {
                let used = rows[row_of(cell)] | cols[col_of(cell)] | boxes[box_of(cell)];
                c.masks[cell] = ALL_DIGITS & !used;
            }
        }
        c
    }

    /// A state given as pencil marks only: every cell open, its mask the
    /// digits still possible there (bit d-1 for digit d). A cell with one
    /// candidate is open; a single places it. A mask of 0 means no marks
    /// yet: the cell keeps every digit.
    pub fn from_masks(masks: &[u16; CELLS]) -> Result<Candidates, LogicError> {
        Candidates::with_marks(&Grid::EMPTY, masks)
    }

    /// A grid's placed digits with a player's pencil marks for its blank
    /// cells: each blank cell keeps the marked digits that none of its peers
    /// holds; a mask of 0 (not pencilled yet) keeps all of those. The masks
    /// of placed cells are ignored.
    pub fn with_marks(grid: &Grid, masks: &[u16; CELLS]) -> Result<Candidates, LogicError> {
        let mut c = Candidates::from_grid(grid);
        for (cell, &m) in masks.iter().enumerate() {
            if c.values[cell] != 0 {
                continue;
            }
            if m & !ALL_DIGITS != 0 {
                return Err(LogicError::BadMask {
                    cell: cell as u8,
                    mask: m,
                });
            }
            // No marks at all is a cell the player has not pencilled yet,
            // not a cell with no candidate.
            if m != 0 {
                c.masks[cell] &= m;
            }
        }
        Ok(c)
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

    /// Places digit `d` (1-9) in `cell`.
    #[inline]
    pub fn place(&mut self, cell: usize, d: u8) {
        self.values[cell] = d;
        self.masks[cell] = 0;
        let b = !bit(d);
        for p in cells_of(PEERS[cell]) {
            self.masks[p] &= b;
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
        loop {
            let mut placed = false;
            for cell in 0..CELLS {
                let m = self.masks[cell];
                if m != 0 && m & (m - 1) == 0 {
                    self.place(cell, m.trailing_zeros() as u8 + 1);
                    placed = true;
                }
            }
            for unit in &UNITS {
                let (mut once, mut twice) = (0u16, 0u16);
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

    /// Removes candidate `d` (1-9) from `cell`.
    #[inline]
    pub fn eliminate(&mut self, cell: usize, d: u8) {
        self.masks[cell] &= !bit(d);
    }

    /// The placed digits as a grid (0 for an open cell).
    pub fn grid(&self) -> Grid {
        Grid(self.values)
    }

    /// The digit placed in `cell`, 0 when open.
    pub fn value(&self, cell: usize) -> u8 {
        self.values[cell]
    }

    /// The candidates of `cell` (bit d-1 for digit d; 0 for a placed cell).
    pub fn mask(&self, cell: usize) -> u16 {
        self.masks[cell]
    }

    /// All 81 candidate masks.
    pub fn masks(&self) -> &[u16; CELLS] {
        &self.masks
    }

    /// True when every cell holds a digit.
    pub fn is_solved(&self) -> bool {
        self.values.iter().all(|&v| v != 0)
    }

    /// The first open cell left with no candidate, if any: the state has
    /// gone wrong and no technique applies soundly.
    pub fn dead_cell(&self) -> Option<usize> {
        (0..CELLS).find(|&c| self.values[c] == 0 && self.masks[c] == 0)
    }

    /// The digits placed in unit `u` (0-26) as a mask.
    #[inline]
    pub(crate) fn placed_in(&self, u: usize) -> u16 {
        let mut m = 0;
        for &cell in &UNITS[u] {
            let v = self.values[cell as usize];
            if v != 0 {
                m |= bit(v);
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_peers_have_the_right_shape() {
        for u in 0..27 {
            assert_eq!(UNIT_SETS[u].count_ones(), 9);
        }
        for c in 0..81 {
            assert_eq!(PEERS[c].count_ones(), 20, "cell {c}");
            assert!(UNIT_SETS[box_of(c) + 18] & (1 << c) != 0);
            assert!(UNIT_SETS[row_of(c)] & (1 << c) != 0);
            assert!(UNIT_SETS[col_of(c) + 9] & (1 << c) != 0);
        }
    }

    #[test]
    fn marks_narrow_a_grid_and_no_marks_keep_its_candidates() {
        let mut g = Grid::EMPTY;
        g.0[0] = 5;
        let mut masks = [0u16; 81];
        masks[1] = bit(5) | bit(6); // 5 is taken by r1c1: only 6 is left
        let c = Candidates::with_marks(&g, &masks).unwrap();
        assert_eq!(c.mask(1), bit(6));
        assert_eq!(c.mask(2), ALL_DIGITS & !bit(5));
        assert_eq!(c.mask(80), ALL_DIGITS);
        assert_eq!(c.value(0), 5);
        assert_eq!(c.dead_cell(), None);
    }

    #[test]
    fn marks_outside_the_nine_digits_are_refused() {
        let mut masks = [ALL_DIGITS; 81];
        masks[10] = 0x200;
        assert_eq!(
            Candidates::from_masks(&masks),
            Err(LogicError::BadMask {
                cell: 10,
                mask: 0x200
            })
        );
    }
}
