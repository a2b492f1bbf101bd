//! One error vocabulary for every shape: why a grid could not be read, or
//! breaks the rules as given, or was changed where the puzzle gives a value.
//! The 9x9 [`super::Grid`] and the general [`super::sized::SizedGrid`] both
//! answer with [`PuzzleError`], so a caller maps one type, whatever the size.
//!
//! Messages are for people and count from 1, as players do: "row 2,
//! column 5", "box 1" (boxes in reading order). The fields count from 0, as
//! the wire's cell indices do: [`At::index`] is the row-major index.

use std::fmt;

use super::Unit;
use super::sized::{MAX_SIDE, Shape};

/// Where a cell is: its row-major index, row and column, all from 0. It
/// prints as people count, from 1: "row 1, column 1".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    /// Row-major index: row * N + column.
    pub index: usize,
    /// Row, 0 at the top.
    pub row: usize,
    /// Column, 0 at the left.
    pub col: usize,
}

impl At {
    /// Cell `index` of a grid of `shape`.
    pub fn of(shape: Shape, index: usize) -> At {
        At {
            index,
            row: index / shape.side(),
            col: index % shape.side(),
        }
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "row {}, column {}", self.row + 1, self.col + 1)
    }
}

/// Why a grid of any shape could not be read, breaks the rules as given, or
/// does not keep a puzzle's givens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PuzzleError {
    /// Occurs when a box shape is empty or makes a side above 64.
    #[error(
        "box {box_rows}x{box_cols} is not supported: each side at least 1 and their product \
         (the grid's side) at most {MAX_SIDE}"
    )]
    BadShape {
        /// Box height asked for.
        box_rows: usize,
        /// Box width asked for.
        box_cols: usize,
    },
    /// Occurs when the text form is asked of a grid above 35x35.
    #[error(
        "{}: the text form carries sides up to 35 ('1'-'9', 'A'-'Z'); send cells instead",
        shape.describe()
    )]
    TextTooLarge {
        /// The grid's shape.
        shape: Shape,
    },
    /// Occurs when the text form does not have N*N characters.
    #[error("expected {} characters for {}, found {found}", shape.cells(), shape.describe())]
    WrongLength {
        /// The grid's shape.
        shape: Shape,
        /// Characters found.
        found: usize,
    },
    /// Occurs when the text form has a character that is not a value of
    /// this shape or a blank.
    #[error("{at}: unexpected character {ch:?}; expected {}, '.' or '0'", alphabet(shape.side()))]
    BadChar {
        /// The grid's shape.
        shape: Shape,
        /// Where.
        at: At,
        /// The character found.
        ch: char,
    },
    /// Occurs when the integer form does not have N*N values.
    #[error("expected {} cells for {}, found {found}", shape.cells(), shape.describe())]
    WrongCount {
        /// The grid's shape.
        shape: Shape,
        /// Values found.
        found: usize,
    },
    /// Occurs when a value is above N.
    #[error("{at}: value {value} is out of range; expected 0-{}", shape.side())]
    OutOfRange {
        /// The grid's shape.
        shape: Shape,
        /// Where.
        at: At,
        /// The value found.
        value: u32,
    },
    /// Occurs when one value is given twice in a row, column or box.
    #[error("{value} is given twice in {unit}: at {first} and {second}")]
    Conflict {
        /// The unit that holds the value twice.
        unit: Unit,
        /// The earlier cell.
        first: At,
        /// The later cell.
        second: At,
        /// The value.
        value: u8,
    },
    /// Occurs when a player's grid does not keep a value the puzzle gives.
    #[error(
        "the current grid changes a given: {at} holds {} where the puzzle gives {given}",
        held(*found)
    )]
    ChangedGiven {
        /// Where.
        at: At,
        /// The puzzle's value there.
        given: u8,
        /// The player's value there: 0 for a blank.
        found: u8,
    },
}

/// "a blank" or the value.
fn held(value: u8) -> String {
    match value {
        0 => "a blank".to_string(),
        v => v.to_string(),
    }
}

/// The characters of values 1..=n, as a message names them.
fn alphabet(n: usize) -> String {
    let last = super::sized::value_char(n.min(35) as u8);
    match n {
        0 => "nothing".to_string(),
        1..=9 => format!("'1'-'{last}'"),
        _ => format!("'1'-'9', 'A'-'{last}'"),
    }
}

/// The first cell where `current` does not keep a value `puzzle` gives, as
/// [`PuzzleError::ChangedGiven`]: both are the row-major values of grids of
/// `shape`.
pub fn check_kept(shape: Shape, puzzle: &[u8], current: &[u8]) -> Result<(), PuzzleError> {
    match puzzle
        .iter()
        .zip(current)
        .position(|(&g, &v)| g != 0 && g != v)
    {
        None => Ok(()),
        Some(i) => Err(PuzzleError::ChangedGiven {
            at: At::of(shape, i),
            given: puzzle[i],
            found: current[i],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_count_from_1_and_fields_from_0() {
        let shape = Shape::new(2, 3).unwrap();
        let at = At::of(shape, 7);
        assert_eq!((at.index, at.row, at.col), (7, 1, 1));
        let e = PuzzleError::Conflict {
            unit: Unit::Box(0),
            first: At::of(shape, 0),
            second: at,
            value: 4,
        };
        assert_eq!(
            e.to_string(),
            "4 is given twice in box 1: at row 1, column 1 and row 2, column 2"
        );
        assert_eq!(
            check_kept(shape, &[0, 3, 0], &[1, 2, 0])
                .unwrap_err()
                .to_string(),
            "the current grid changes a given: row 1, column 2 holds 2 where the puzzle gives 3"
        );
        assert_eq!(check_kept(shape, &[0, 3], &[1, 3]), Ok(()));
        let big = Shape::new(6, 6).unwrap();
        assert_eq!(
            PuzzleError::BadChar {
                shape: big,
                at: At::of(big, 36),
                ch: '?'
            }
            .to_string(),
            "row 2, column 1: unexpected character '?'; expected '1'-'9', 'A'-'Z', '.' or '0'"
        );
    }
}
