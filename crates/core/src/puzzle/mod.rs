//! The puzzle as a value: parsing the two wire forms, formatting, and checking
//! that the givens keep the rules. Errors ([`PuzzleError`], one type for
//! every shape) say where: the cell (its index, and its row and column,
//! printed from 1) and the offending character or value. The text formats
//! people write puzzles in, several to a file, are in [`text`].
//!
//! Imports nothing from the rest of the crate.

use std::fmt;

pub mod error;
pub mod json;
pub mod sized;
pub mod text;
pub mod validate;

pub use error::{At, PuzzleError};
use sized::{Shape, UnitKind};

/// Number of cells in a grid.
pub const CELLS: usize = 81;

/// A 9x9 grid in row-major order: 1-9 for a digit, 0 for a blank.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Grid(pub [u8; CELLS]);

/// A cell of the 9x9 grid by its index, 0-80; it prints as people count,
/// from 1 ("row 1, column 1").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell(pub usize);

impl Cell {
    /// Row 0-8.
    pub fn row(self) -> usize {
        self.0 / 9
    }
    /// Column 0-8.
    pub fn col(self) -> usize {
        self.0 % 9
    }
    /// Box 0-8, row-major.
    pub fn boxx(self) -> usize {
        self.row() / 3 * 3 + self.col() / 3
    }
}

impl From<Cell> for At {
    fn from(cell: Cell) -> At {
        At::of(Shape::CLASSIC, cell.0)
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        At::from(*self).fmt(f)
    }
}

/// A row, column or box, numbered from 0; it prints as people count, from
/// 1 ("row 1", "box 1").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A row, 0 at the top.
    Row(usize),
    /// A column, 0 at the left.
    Column(usize),
    /// A box, numbered row-major from the top left.
    Box(usize),
}

impl Unit {
    /// Unit `index` of `kind`.
    pub fn new(kind: UnitKind, index: usize) -> Unit {
        match kind {
            UnitKind::Row => Unit::Row(index),
            UnitKind::Column => Unit::Column(index),
            UnitKind::Box => Unit::Box(index),
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Row(i) => write!(f, "row {}", i + 1),
            Unit::Column(i) => write!(f, "column {}", i + 1),
            Unit::Box(i) => write!(f, "box {}", i + 1),
        }
    }
}

impl Grid {
    /// The grid with every cell blank.
    pub const EMPTY: Grid = Grid([0; CELLS]);

    /// Reads the 81-character form: '1'-'9' for digits, '.' or '0' for blanks.
    pub fn from_text(text: &str) -> Result<Grid, PuzzleError> {
        if let Ok(bytes) = <&[u8; CELLS]>::try_from(text.as_bytes())
            && let Some(grid) = Grid::cells_of(bytes)
        {
            return Ok(grid);
        }
        let bytes = text.as_bytes();
        // Any non-ASCII text takes the character path: 81 bytes can hold
        // fewer than 81 characters, and a byte of a multi-byte character is
        // not a character the user typed.
        if bytes.len() != CELLS || !text.is_ascii() {
            // Count characters, not bytes, so the message matches what the user typed.
            let found = text.chars().count();
            if found != CELLS {
                return Err(PuzzleError::WrongLength {
                    shape: Shape::CLASSIC,
                    found,
                });
            }
            // 81 characters but some of them multi-byte: report the first
            // character that is not a cell (there is one: a non-ASCII one).
            let (index, ch) = text
                .chars()
                .enumerate()
                .find(|(_, c)| !matches!(c, '0'..='9' | '.'))
                .unwrap_or((0, '?'));
            return Err(PuzzleError::BadChar {
                shape: Shape::CLASSIC,
                at: Cell(index).into(),
                ch,
            });
        }
        let mut cells = [0u8; CELLS];
        for (i, &b) in bytes.iter().enumerate() {
            cells[i] = match b {
                b'1'..=b'9' => b - b'0',
                b'.' | b'0' => 0,
                _ => {
                    return Err(PuzzleError::BadChar {
                        shape: Shape::CLASSIC,
                        at: Cell(i).into(),
                        ch: b as char,
                    });
                }
            };
        }
        Ok(Grid(cells))
    }

    /// The grid of 81 cell bytes, or `None` when one is not a cell; and
    /// whether its givens keep the rules, found in the same pass.
    ///
    /// Each row, column and box counts its digits in nibbles of a `u64`
    /// (nibble d: how many cells hold d; a blank counts in nibble 0), so a
    /// cell costs a table load and three adds, with no branch and no
    /// popcount (which baseline x86-64 lacks). A unit holds 9 cells, so no
    /// nibble overflows; a digit given twice makes its nibble 2 or more, and
    /// one OR over every unit's counts finds it.
    pub(crate) fn scan(bytes: &[u8; CELLS]) -> Option<(Grid, bool)> {
        const ONE: [u64; 16] = {
            let mut t = [0u64; 16];
            let mut d = 0;
            while d < 16 {
                t[d] = 1 << (4 * d);
                d += 1;
            }
            t
        };
        /// Bits 1-3 of the nibbles of digits 1-9: a count of 2 or more.
        const TWICE: u64 = 0x0000_00ee_eeee_eee0;
        let cells = Grid::cells_of(bytes)?.0;
        let mut cols = [0u64; 9];
        let mut seen = 0u64;
        for band in cells.chunks_exact(27) {
            let mut boxes = [0u64; 3];
            for row in band.chunks_exact(9) {
                let mut counts = 0u64;
                for (c, &d) in row.iter().enumerate() {
                    let one = ONE[usize::from(d & 15)];
                    counts += one;
                    cols[c] += one;
                    boxes[c / 3] += one;
                }
                seen |= counts;
            }
            seen |= boxes[0] | boxes[1] | boxes[2];
        }
        seen |= cols.iter().fold(0, |a, &c| a | c);
        Some((Grid(cells), seen & TWICE == 0))
    }

    /// The grid of 81 cell bytes, or `None` when one is not a cell: one
    /// pass with no branch per byte (the compiler vectorises it).
    fn cells_of(bytes: &[u8; CELLS]) -> Option<Grid> {
        let mut cells = [0u8; CELLS];
        let mut bad = false;
        for (cell, &b) in cells.iter_mut().zip(bytes) {
            // '.' wraps past 9 like every byte that is not a digit.
            let v = b.wrapping_sub(b'0');
            bad |= v > 9 && b != b'.';
            *cell = if v <= 9 { v } else { 0 };
        }
        (!bad).then_some(Grid(cells))
    }

    /// [`Grid::from_text`] and then [`Grid::check_givens`], with the same
    /// errors, in one pass over the bytes for the common puzzle (81 cells
    /// whose givens keep the rules).
    pub fn from_text_checked(text: &str) -> Result<Grid, PuzzleError> {
        if let Ok(bytes) = <&[u8; CELLS]>::try_from(text.as_bytes())
            && let Some((grid, true)) = Grid::scan(bytes)
        {
            return Ok(grid);
        }
        let grid = Grid::from_text(text)?;
        grid.check_givens()?;
        Ok(grid)
    }

    /// Reads the integer form: 81 values, 1-9 for digits, 0 for blanks.
    pub fn from_cells(values: &[u32]) -> Result<Grid, PuzzleError> {
        if values.len() != CELLS {
            return Err(PuzzleError::WrongCount {
                shape: Shape::CLASSIC,
                found: values.len(),
            });
        }
        let mut cells = [0u8; CELLS];
        for (i, &v) in values.iter().enumerate() {
            if v > 9 {
                return Err(PuzzleError::OutOfRange {
                    shape: Shape::CLASSIC,
                    at: Cell(i).into(),
                    value: v,
                });
            }
            cells[i] = v as u8;
        }
        Ok(Grid(cells))
    }

    /// One pass with a used-digit mask per row, column and box: whether
    /// every given is a digit that none of its units holds already. Most
    /// puzzles pass; only the others are scanned unit by unit for the
    /// first clash to name.
    fn givens_are_consistent(&self) -> bool {
        let (mut rows, mut cols, mut boxes) = ([0u16; 9], [0u16; 9], [0u16; 9]);
        for (i, &d) in self.0.iter().enumerate() {
            if d == 0 {
                continue;
            }
            if d > 9 {
                return false;
            }
            let bit = 1u16 << d;
            let (r, c) = (i / 9, i % 9);
            let b = r / 3 * 3 + c / 3;
            if (rows[r] | cols[c] | boxes[b]) & bit != 0 {
                return false;
            }
            rows[r] |= bit;
            cols[c] |= bit;
            boxes[b] |= bit;
        }
        true
    }

    /// Checks that no digit is given twice in a row, column or box; names the
    /// first clash found, scanning rows, then columns, then boxes. A value
    /// above 9 (the field is public, so a `Grid` can hold one) is reported as
    /// [`PuzzleError::OutOfRange`].
    pub fn check_givens(&self) -> Result<(), PuzzleError> {
        if self.givens_are_consistent() {
            return Ok(());
        }
        if let Some(i) = self.0.iter().position(|&d| d > 9) {
            return Err(PuzzleError::OutOfRange {
                shape: Shape::CLASSIC,
                at: Cell(i).into(),
                value: u32::from(self.0[i]),
            });
        }
        for kind in 0..3 {
            for unit in 0..9 {
                let mut seen = [usize::MAX; 10];
                for k in 0..9 {
                    let idx = match kind {
                        0 => unit * 9 + k,
                        1 => k * 9 + unit,
                        _ => (unit / 3 * 3 + k / 3) * 9 + unit % 3 * 3 + k % 3,
                    };
                    let d = self.0[idx] as usize;
                    if d == 0 {
                        continue;
                    }
                    if seen[d] != usize::MAX {
                        let unit = match kind {
                            0 => Unit::Row(unit),
                            1 => Unit::Column(unit),
                            _ => Unit::Box(unit),
                        };
                        let (first, second) = (seen[d].min(idx), seen[d].max(idx));
                        return Err(PuzzleError::Conflict {
                            unit,
                            first: Cell(first).into(),
                            second: Cell(second).into(),
                            value: d as u8,
                        });
                    }
                    seen[d] = idx;
                }
            }
        }
        Ok(())
    }

    /// Number of given (non-blank) cells.
    pub fn givens(&self) -> usize {
        self.0.iter().filter(|&&d| d != 0).count()
    }

    /// True when every cell holds a digit and every row, column and box holds
    /// each digit once. Independent of the solver: used to check its answers.
    pub fn is_valid_solution(&self) -> bool {
        self.0.iter().all(|&d| (1..=9).contains(&d)) && self.check_givens().is_ok()
    }

    /// True when `solution` keeps every given of `self`.
    pub fn is_kept_by(&self, solution: &Grid) -> bool {
        self.0
            .iter()
            .zip(solution.0.iter())
            .all(|(&g, &s)| g == 0 || g == s)
    }

    /// The 81-character form, '.' for blanks.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(CELLS);
        self.write_text(&mut s);
        s
    }

    /// Appends the 81-character form, '.' for blanks, to `out`.
    pub fn write_text(&self, out: &mut String) {
        let bytes = self.text_bytes();
        // ASCII, so always UTF-8; the fallback is never taken.
        out.push_str(std::str::from_utf8(&bytes).unwrap_or_default());
    }

    /// The 81-character form as ASCII bytes, '.' for blanks (and '?' for a
    /// value above 9, as [`digit_char`]): for writers that print many grids
    /// and want no `String` per grid.
    pub fn text_bytes(&self) -> [u8; CELLS] {
        self.0.map(|d| match d {
            0 => b'.',
            1..=9 => b'0' + d,
            _ => b'?',
        })
    }

    /// The integer form.
    pub fn to_cells(&self) -> Vec<u32> {
        self.0.iter().map(|&d| u32::from(d)).collect()
    }
}

/// The character for a cell value: '1'-'9', '.' for a blank, and '?' for a
/// value no parser produces (the field is public, so printing must not panic).
pub fn digit_char(d: u8) -> char {
    match d {
        0 => '.',
        1..=9 => (b'0' + d) as char,
        _ => '?',
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Grid({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUZZLE: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

    #[test]
    fn printing_a_grid_with_a_bad_value_does_not_panic() {
        let mut g = Grid::EMPTY;
        g.0[0] = 250;
        g.0[1] = 7;
        assert!(g.to_text().starts_with("?7."));
        assert_eq!(g.text_bytes().as_slice(), g.to_text().as_bytes());
    }

    #[test]
    fn reads_text_with_dots_and_zeros() {
        let a = Grid::from_text(PUZZLE).unwrap();
        let b = Grid::from_text(&PUZZLE.replace('.', "0")).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.0[0], 5);
        assert_eq!(a.0[2], 0);
        assert_eq!(a.to_text(), PUZZLE);
    }

    #[test]
    fn wrong_length_is_counted_in_characters() {
        assert_eq!(
            Grid::from_text(&PUZZLE[..80]),
            Err(PuzzleError::WrongLength {
                shape: Shape::CLASSIC,
                found: 80
            })
        );
        let accented = format!("é{}", &PUZZLE[1..]);
        assert_eq!(
            Grid::from_text(&accented),
            Err(PuzzleError::BadChar {
                shape: Shape::CLASSIC,
                at: Cell(0).into(),
                ch: 'é'
            })
        );
    }

    #[test]
    fn bad_char_says_where() {
        let mut s = PUZZLE.to_string();
        s.replace_range(10..11, "x");
        let err = Grid::from_text(&s).unwrap_err();
        assert_eq!(
            err.to_string(),
            "row 2, column 2: unexpected character 'x'; expected '1'-'9', '.' or '0'"
        );
    }

    #[test]
    fn cells_out_of_range() {
        let mut v = vec![0u32; 81];
        v[80] = 10;
        assert_eq!(
            Grid::from_cells(&v),
            Err(PuzzleError::OutOfRange {
                shape: Shape::CLASSIC,
                at: Cell(80).into(),
                value: 10
            })
        );
        assert_eq!(
            Grid::from_cells(&v[..3]),
            Err(PuzzleError::WrongCount {
                shape: Shape::CLASSIC,
                found: 3
            })
        );
    }

    #[test]
    fn conflicts_name_unit_and_cells() {
        let mut g = Grid::EMPTY;
        g.0[0] = 4;
        g.0[8] = 4;
        assert_eq!(
            g.check_givens(),
            Err(PuzzleError::Conflict {
                unit: Unit::Row(0),
                first: Cell(0).into(),
                second: Cell(8).into(),
                value: 4
            })
        );
        let mut g = Grid::EMPTY;
        g.0[4] = 7;
        g.0[76] = 7;
        assert!(matches!(
            g.check_givens(),
            Err(PuzzleError::Conflict {
                unit: Unit::Column(4),
                ..
            })
        ));
        let mut g = Grid::EMPTY;
        g.0[30] = 2;
        g.0[50] = 2;
        let err = g.check_givens().unwrap_err();
        assert_eq!(
            err.to_string(),
            "2 is given twice in box 5: at row 4, column 4 and row 6, column 6"
        );
    }

    #[test]
    fn from_text_checked_is_from_text_then_check_givens() {
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let (mut ok, mut clash, mut unread) = (0, 0, 0);
        for round in 0..3000 {
            let mut text: Vec<char> = PUZZLE.chars().collect();
            for _ in 0..(round % 5) {
                let at = (next() % 81) as usize;
                text[at] = ['.', '0', '5', '9', 'x', 'é'][(next() % 6) as usize];
            }
            if round % 97 == 0 {
                text.pop();
            }
            let text: String = text.into_iter().collect();
            let want = Grid::from_text(&text).and_then(|g| g.check_givens().map(|()| g));
            let got = Grid::from_text_checked(&text);
            assert_eq!(got, want, "{text}");
            match want {
                Ok(_) => ok += 1,
                Err(PuzzleError::Conflict { .. }) => clash += 1,
                Err(_) => unread += 1,
            }
        }
        assert!(
            ok > 300 && clash > 300 && unread > 300,
            "{ok} {clash} {unread}"
        );
    }

    #[test]
    fn check_givens_agrees_with_a_pairwise_scan() {
        // Every pair of cells that share a row, column or box, compared.
        let clashes = |g: &Grid| {
            (0..CELLS).any(|a| {
                (a + 1..CELLS).any(|b| {
                    let (ra, ca, rb, cb) = (a / 9, a % 9, b / 9, b % 9);
                    let shared = ra == rb || ca == cb || (ra / 3 == rb / 3 && ca / 3 == cb / 3);
                    shared && g.0[a] != 0 && g.0[a] == g.0[b]
                })
            })
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut ok, mut bad) = (0, 0);
        for round in 0..4000 {
            let mut g = Grid::EMPTY;
            for _ in 0..(round % 24) {
                g.0[(next() % 81) as usize] = (next() % 10) as u8;
            }
            let clash = clashes(&g);
            assert_eq!(g.check_givens().is_err(), clash, "{g}");
            if clash { bad += 1 } else { ok += 1 }
        }
        assert!(ok > 500 && bad > 500, "{ok} consistent, {bad} clashing");
    }
}
