//! Puzzles of any size: a [`Shape`] (the box is `box_rows` x `box_cols`, so
//! the side is N = box_rows * box_cols, at most [`MAX_SIDE`]) and a
//! [`SizedGrid`] of N*N cells holding 0 (blank) or 1..=N.
//!
//! The text form (N <= [`MAX_TEXT_SIDE`]) writes a value as one character:
//! '1'-'9', then 'A'-'Z' for 10-35 ('a'-'z' are read the same), with '.' or
//! '0' for a blank. Larger grids have the integer form only.
//!
//! Errors are [`PuzzleError`], as the 9x9 [`super::Grid`]'s are. The 9x9
//! grid stays the fast path; this is the general one.

use std::fmt;

use super::{At, CELLS, Grid, PuzzleError, Unit};

/// The largest side supported: a candidate set is one `u64`.
pub const MAX_SIDE: usize = 64;

/// The values 1..=n as a mask (bit v-1 for value v): the candidates of an
/// open cell of a side-`n` grid before any value is placed.
pub fn value_mask(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// The largest side the text form can carry: '1'-'9' and 'A'-'Z'.
pub const MAX_TEXT_SIDE: usize = 35;

/// The box of a grid: `rows` x `cols` cells. The grid's side N is their
/// product; its N boxes stand `rows` across (stacks of `cols` columns) and
/// `cols` down (bands of `rows` rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    rows: u8,
    cols: u8,
}

impl Shape {
    /// The classic 9x9 grid of 3x3 boxes.
    pub const CLASSIC: Shape = Shape { rows: 3, cols: 3 };

    /// The shape of boxes of `box_rows` x `box_cols`, if both are at least 1
    /// and the side (their product) is at most [`MAX_SIDE`].
    pub fn new(box_rows: usize, box_cols: usize) -> Result<Shape, PuzzleError> {
        if box_rows == 0 || box_cols == 0 || box_rows.saturating_mul(box_cols) > MAX_SIDE {
            return Err(PuzzleError::BadShape { box_rows, box_cols });
        }
        Ok(Shape {
            rows: box_rows as u8,
            cols: box_cols as u8,
        })
    }

    /// The shape for a side of `n` when no box is given: the squarest box,
    /// with rows <= cols, so 6 is 2x3, 12 is 3x4 and 20 is 4x5; `None` for a
    /// prime side (its only box is a whole row) or a side above
    /// [`MAX_SIDE`].
    pub fn for_side(n: usize) -> Option<Shape> {
        if n == 0 || n > MAX_SIDE {
            return None;
        }
        let rows = (1..=n)
            .filter(|&r| n.is_multiple_of(r) && r * r <= n)
            .max()?;
        if rows == 1 && n > 1 {
            return None;
        }
        Shape::new(rows, n / rows).ok()
    }

    /// Box height in cells.
    pub fn box_rows(self) -> usize {
        usize::from(self.rows)
    }

    /// Box width in cells.
    pub fn box_cols(self) -> usize {
        usize::from(self.cols)
    }

    /// The side N: cells per row, column and box, and the largest value.
    pub fn side(self) -> usize {
        self.box_rows() * self.box_cols()
    }

    /// N*N.
    pub fn cells(self) -> usize {
        self.side() * self.side()
    }

    /// The box of (row, col), numbered row-major.
    pub fn box_of(self, row: usize, col: usize) -> usize {
        let per_band = self.side() / self.box_cols();
        row / self.box_rows() * per_band + col / self.box_cols()
    }

    /// The cells of unit `index` of `kind`, in row-major order.
    pub fn unit_cells(self, kind: UnitKind, index: usize) -> impl Iterator<Item = usize> {
        let n = self.side();
        let (br, bc) = (self.box_rows(), self.box_cols());
        let per_band = n / bc;
        (0..n).map(move |k| match kind {
            UnitKind::Row => index * n + k,
            UnitKind::Column => k * n + index,
            UnitKind::Box => {
                let (r0, c0) = (index / per_band * br, index % per_band * bc);
                (r0 + k / bc) * n + c0 + k % bc
            }
        })
    }

    /// "16x16 (4x4 boxes)".
    pub fn describe(self) -> String {
        format!(
            "{n}x{n} ({}x{} boxes)",
            self.box_rows(),
            self.box_cols(),
            n = self.side()
        )
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

/// Rows, columns and boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// A row, 0 at the top.
    Row,
    /// A column, 0 at the left.
    Column,
    /// A box, numbered row-major from the top left.
    Box,
}

impl UnitKind {
    /// The three kinds, in the order checks scan them.
    pub const ALL: [UnitKind; 3] = [UnitKind::Row, UnitKind::Column, UnitKind::Box];
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnitKind::Row => "row",
            UnitKind::Column => "column",
            UnitKind::Box => "box",
        })
    }
}

/// Two cells of one unit holding the same value: the unit's kind and
/// index, the earlier cell, the later one, and the value.
pub type SizedConflict = (UnitKind, usize, At, At, u8);

/// The character of value `v` in the text form: '1'-'9', 'A'-'Z', '.' for
/// a blank, '?' for a value the form cannot carry.
pub fn value_char(v: u8) -> char {
    match v {
        0 => '.',
        1..=9 => (b'0' + v) as char,
        10..=35 => (b'A' + v - 10) as char,
        _ => '?',
    }
}

/// The value of text character `c`: `Some(0)` for a blank, `None` for a
/// character of no value.
pub fn char_value(c: char) -> Option<u8> {
    match c {
        '.' | '0' => Some(0),
        '1'..='9' => Some(c as u8 - b'0'),
        'A'..='Z' => Some(c as u8 - b'A' + 10),
        'a'..='z' => Some(c as u8 - b'a' + 10),
        _ => None,
    }
}

/// A grid of any [`Shape`], row-major: 0 for a blank, 1..=N for a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SizedGrid {
    shape: Shape,
    cells: Vec<u8>,
}

impl SizedGrid {
    /// The blank grid of `shape`.
    pub fn empty(shape: Shape) -> SizedGrid {
        SizedGrid {
            shape,
            cells: vec![0; shape.cells()],
        }
    }

    /// A grid of `shape` from its cell values; an error names the first
    /// value above N.
    pub fn from_values(shape: Shape, values: Vec<u8>) -> Result<SizedGrid, PuzzleError> {
        if values.len() != shape.cells() {
            return Err(PuzzleError::WrongCount {
                shape,
                found: values.len(),
            });
        }
        if let Some(i) = values.iter().position(|&v| usize::from(v) > shape.side()) {
            return Err(PuzzleError::OutOfRange {
                shape,
                at: At::of(shape, i),
                value: u32::from(values[i]),
            });
        }
        Ok(SizedGrid {
            shape,
            cells: values,
        })
    }

    /// Reads the text form of `shape`: N*N characters (see the module).
    pub fn from_text(shape: Shape, text: &str) -> Result<SizedGrid, PuzzleError> {
        let n = shape.side();
        if n > MAX_TEXT_SIDE {
            return Err(PuzzleError::TextTooLarge { shape });
        }
        let found = text.chars().count();
        if found != shape.cells() {
            return Err(PuzzleError::WrongLength { shape, found });
        }
        let mut cells = Vec::with_capacity(shape.cells());
        for (i, ch) in text.chars().enumerate() {
            match char_value(ch) {
                Some(v) if usize::from(v) <= n => cells.push(v),
                _ => {
                    return Err(PuzzleError::BadChar {
                        shape,
                        at: At::of(shape, i),
                        ch,
                    });
                }
            }
        }
        Ok(SizedGrid { shape, cells })
    }

    /// Reads the integer form of `shape`: N*N values 0..=N.
    pub fn from_cells(shape: Shape, values: &[u32]) -> Result<SizedGrid, PuzzleError> {
        if values.len() != shape.cells() {
            return Err(PuzzleError::WrongCount {
                shape,
                found: values.len(),
            });
        }
        let mut cells = Vec::with_capacity(values.len());
        for (i, &v) in values.iter().enumerate() {
            if v as usize > shape.side() {
                return Err(PuzzleError::OutOfRange {
                    shape,
                    at: At::of(shape, i),
                    value: v,
                });
            }
            cells.push(v as u8);
        }
        Ok(SizedGrid { shape, cells })
    }

    /// The 9x9 grid as a sized one.
    pub fn from_grid(grid: &Grid) -> SizedGrid {
        SizedGrid {
            shape: Shape::CLASSIC,
            cells: grid.0.to_vec(),
        }
    }

    /// The grid as a 9x9 [`Grid`], if it is one.
    pub fn to_grid(&self) -> Option<Grid> {
        if self.shape != Shape::CLASSIC {
            return None;
        }
        let cells: [u8; CELLS] = self.cells.as_slice().try_into().ok()?;
        Some(Grid(cells))
    }

    /// Its shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The cell values, row-major.
    pub fn values(&self) -> &[u8] {
        &self.cells
    }

    /// The cell values, to change (values above N make a grid the checks
    /// reject).
    pub fn values_mut(&mut self) -> &mut [u8] {
        &mut self.cells
    }

    /// Number of given (non-blank) cells.
    pub fn givens(&self) -> usize {
        self.cells.iter().filter(|&&v| v != 0).count()
    }

    /// The first value given twice in a unit (rows, then columns, then
    /// boxes), or a value above N.
    pub fn check_givens(&self) -> Result<(), PuzzleError> {
        let n = self.shape.side();
        if let Some(i) = self.cells.iter().position(|&v| usize::from(v) > n) {
            return Err(PuzzleError::OutOfRange {
                shape: self.shape,
                at: At::of(self.shape, i),
                value: u32::from(self.cells[i]),
            });
        }
        let mut seen = vec![usize::MAX; n + 1];
        for kind in UnitKind::ALL {
            for unit in 0..n {
                seen.fill(usize::MAX);
                for idx in self.shape.unit_cells(kind, unit) {
                    let v = usize::from(self.cells[idx]);
                    if v == 0 {
                        continue;
                    }
                    if seen[v] != usize::MAX {
                        return Err(PuzzleError::Conflict {
                            unit: Unit::new(kind, unit),
                            first: At::of(self.shape, seen[v]),
                            second: At::of(self.shape, idx),
                            value: v as u8,
                        });
                    }
                    seen[v] = idx;
                }
            }
        }
        Ok(())
    }

    /// The pairs of cells of one unit holding the same value: the first
    /// `max` listed (rows, then columns, then boxes, each by unit and then by
    /// cell) as (kind, unit, first, second, value), and all of them counted.
    /// The count comes from each unit's tally of values (k cells of one value
    /// make k(k-1)/2 pairs) and the listing stops at `max`, so the work is a
    /// few scans of the grid however many pairs it holds (a 64x64 grid of one
    /// value everywhere has 387,072).
    pub fn conflicts(&self, max: usize) -> (Vec<SizedConflict>, u32) {
        let n = self.shape.side();
        let mut found = Vec::new();
        let mut total = 0u32;
        let mut cells = Vec::with_capacity(n);
        let mut tally = vec![0u32; n + 1];
        for kind in UnitKind::ALL {
            for unit in 0..n {
                cells.clear();
                cells.extend(self.shape.unit_cells(kind, unit));
                tally.fill(0);
                for &i in &cells {
                    if let Some(t) = tally.get_mut(usize::from(self.cells[i])) {
                        *t += 1;
                    }
                }
                let pairs: u32 = tally[1..]
                    .iter()
                    .map(|&k| k * k.saturating_sub(1) / 2)
                    .sum();
                total += pairs;
                if pairs == 0 || found.len() >= max {
                    continue;
                }
                'unit: for (a, &i) in cells.iter().enumerate() {
                    let v = self.cells[i];
                    if v == 0 || usize::from(v) > n {
                        continue;
                    }
                    for &j in &cells[a + 1..] {
                        if self.cells[j] != v {
                            continue;
                        }
                        if found.len() == max {
                            break 'unit;
                        }
                        found.push((kind, unit, At::of(self.shape, i), At::of(self.shape, j), v));
                    }
                }
            }
        }
        (found, total)
    }

    /// The blank cells whose row, column and box hold every value between
    /// them, in cell order (row-major indices). Only the values in the grid
    /// count, so the answer is the same whoever asks.
    pub fn cells_without_candidates(&self) -> Vec<usize> {
        let shape = self.shape;
        let n = shape.side();
        let bit = |v: u8| {
            if v == 0 || usize::from(v) > n {
                0
            } else {
                1u64 << (v - 1)
            }
        };
        let mut used = vec![0u64; 3 * n];
        for (i, &v) in self.cells.iter().enumerate() {
            let (r, c) = (i / n, i % n);
            used[r] |= bit(v);
            used[n + c] |= bit(v);
            used[2 * n + shape.box_of(r, c)] |= bit(v);
        }
        let full = value_mask(n);
        (0..self.cells.len())
            .filter(|&i| {
                let (r, c) = (i / n, i % n);
                let seen = used[r] | used[n + c] | used[2 * n + shape.box_of(r, c)];
                self.cells[i] == 0 && seen == full
            })
            .collect()
    }

    /// True when every row, column and box holds each of 1..=N exactly
    /// once. A plain count per unit, independent of the solver: the check
    /// of its answers.
    pub fn is_valid_solution(&self) -> bool {
        let n = self.shape.side();
        if self.cells.len() != n * n {
            return false;
        }
        let mut count = vec![0u32; n + 1];
        for kind in UnitKind::ALL {
            for unit in 0..n {
                count.fill(0);
                for idx in self.shape.unit_cells(kind, unit) {
                    let v = usize::from(self.cells[idx]);
                    if v == 0 || v > n {
                        return false;
                    }
                    count[v] += 1;
                }
                if count[1..].iter().any(|&c| c != 1) {
                    return false;
                }
            }
        }
        true
    }

    /// True when `solution` has this shape and keeps every given.
    pub fn is_kept_by(&self, solution: &SizedGrid) -> bool {
        self.shape == solution.shape
            && self
                .cells
                .iter()
                .zip(&solution.cells)
                .all(|(&g, &s)| g == 0 || g == s)
    }

    /// The text form ('.' for blanks), or an error above 35x35.
    pub fn to_text(&self) -> Result<String, PuzzleError> {
        if self.shape.side() > MAX_TEXT_SIDE {
            return Err(PuzzleError::TextTooLarge { shape: self.shape });
        }
        Ok(self.cells.iter().map(|&v| value_char(v)).collect())
    }

    /// The integer form.
    pub fn to_cells(&self) -> Vec<u32> {
        self.cells.iter().map(|&v| u32::from(v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_their_boxes() {
        let s = Shape::new(2, 3).unwrap();
        assert_eq!((s.side(), s.cells()), (6, 36));
        // Boxes of 2 rows by 3 columns: two across, three down.
        assert_eq!(s.box_of(0, 0), 0);
        assert_eq!(s.box_of(0, 3), 1);
        assert_eq!(s.box_of(2, 0), 2);
        assert_eq!(s.box_of(5, 5), 5);
        let cells: Vec<usize> = s.unit_cells(UnitKind::Box, 3).collect();
        assert_eq!(cells, [15, 16, 17, 21, 22, 23]);
        for kind in UnitKind::ALL {
            for u in 0..6 {
                for c in s.unit_cells(kind, u) {
                    if kind == UnitKind::Box {
                        assert_eq!(s.box_of(c / 6, c % 6), u);
                    }
                }
            }
        }
        assert!(Shape::new(8, 9).is_err());
        assert!(Shape::new(0, 4).is_err());
        assert!(Shape::new(8, 8).is_ok());
    }

    #[test]
    fn default_shapes_for_a_side() {
        let s = |n| Shape::for_side(n).map(|s| (s.box_rows(), s.box_cols()));
        assert_eq!(s(4), Some((2, 2)));
        assert_eq!(s(6), Some((2, 3)));
        assert_eq!(s(9), Some((3, 3)));
        assert_eq!(s(12), Some((3, 4)));
        assert_eq!(s(20), Some((4, 5)));
        assert_eq!(s(64), Some((8, 8)));
        assert_eq!(s(7), None);
        assert_eq!(s(65), None);
    }

    #[test]
    fn the_text_alphabet_round_trips() {
        let shape = Shape::new(4, 4).unwrap();
        let text: String = (0..256).map(|i| value_char((i % 17) as u8)).collect();
        let g = SizedGrid::from_text(shape, &text).unwrap();
        assert_eq!(g.values()[10], 10);
        assert_eq!(g.values()[16], 16);
        assert_eq!(g.to_text().unwrap(), text);
        assert_eq!(char_value('g'), Some(16));
    }

    #[test]
    fn errors_name_the_row_and_column() {
        let shape = Shape::new(2, 2).unwrap();
        let e = SizedGrid::from_text(shape, "1234341221434.5.").unwrap_err();
        assert_eq!(
            e.to_string(),
            "row 4, column 3: unexpected character '5'; expected '1'-'4', '.' or '0'"
        );
        let e = SizedGrid::from_cells(Shape::new(4, 4).unwrap(), &[17; 256]).unwrap_err();
        assert!(e.to_string().starts_with("row 1, column 1: value 17"));
        let e = SizedGrid::from_text(shape, "123").unwrap_err();
        assert!(e.to_string().contains("expected 16 characters"), "{e}");
        let big = Shape::new(6, 6).unwrap();
        assert!(matches!(
            SizedGrid::from_text(big, ""),
            Err(PuzzleError::TextTooLarge { .. })
        ));
    }

    #[test]
    fn conflicts_and_solutions_are_checked() {
        let shape = Shape::new(2, 2).unwrap();
        let solved = SizedGrid::from_text(shape, "1234341221434321").unwrap();
        assert!(solved.is_valid_solution());
        assert!(solved.check_givens().is_ok());
        let mut bad = solved.clone();
        bad.values_mut()[0] = 2;
        assert!(!bad.is_valid_solution());
        let e = bad.check_givens().unwrap_err();
        assert!(e.to_string().contains("in row 1:"), "{e}");
        let (listed, total) = bad.conflicts(usize::MAX);
        assert!(!listed.is_empty());
        assert_eq!(total as usize, listed.len());
        let ones = SizedGrid::from_cells(Shape::new(8, 8).unwrap(), &[1; 64 * 64]).unwrap();
        let (first, total) = ones.conflicts(64);
        // 192 units of 64 cells: 2,016 pairs each.
        assert_eq!((first.len(), total), (64, 192 * 2016));
        assert_eq!(first[..], ones.conflicts(usize::MAX).0[..64]);
        let blank = SizedGrid::empty(shape);
        assert!(blank.is_kept_by(&solved));
        assert!(!blank.is_valid_solution());
    }
}
