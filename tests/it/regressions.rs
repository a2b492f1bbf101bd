//! Inputs found while fuzzing (fuzz/) that broke a property, each pinned by
//! a test named after the bug.

use sudoku_core::puzzle::sized::Shape;
use sudoku_core::puzzle::text::read_puzzles;
use sudoku_core::puzzle::{Cell, Grid, PuzzleError};

/// fuzz target grid_text: 73 characters that take 81 bytes in UTF-8 (the
/// fuzzer's invalid bytes became U+FFFD). `from_text` took the 81-byte
/// fast path and reported a UTF-8 lead byte as a Latin-1 character
/// ("unexpected character 'ï'") at a byte index, instead of the length.
#[test]
fn from_text_81_bytes_of_fewer_characters_is_wrong_length() {
    let fuzzed = String::from_utf8_lossy(
        b"5300700006001950000980000608000600034008030017000200060\xca\xcf\xcf53467891\xd9026722",
    );
    assert_eq!(fuzzed.len(), 81);
    assert_eq!(
        Grid::from_text(&fuzzed),
        Err(PuzzleError::WrongLength {
            shape: Shape::CLASSIC,
            found: 73
        })
    );
    // The same with a character people type: 'é' is two bytes.
    let accented = format!("é{}", ".".repeat(79));
    assert_eq!(accented.len(), 81);
    assert_eq!(
        Grid::from_text(&accented),
        Err(PuzzleError::WrongLength {
            shape: Shape::CLASSIC,
            found: 80
        })
    );
}

/// Same code path: with 81 characters, the error names the first character
/// that is not a cell, not the first non-ASCII one.
#[test]
fn from_text_bad_char_is_the_first_bad_character() {
    let text = format!("x{}é", ".".repeat(79));
    assert_eq!(
        Grid::from_text(&text),
        Err(PuzzleError::BadChar {
            shape: Shape::CLASSIC,
            at: Cell(0).into(),
            ch: 'x'
        })
    );
}

/// fuzz target read_puzzles (on an indented seed): the column of an
/// unexpected character was counted after trimming the line, so indented
/// input got a column that points at another character.
#[test]
fn read_puzzles_bad_char_column_counts_indentation() {
    let line = "53..7....6..195....98....6.8...6...34..8x3..17...2...6.6....28....419..5....8..79";
    let e = read_puzzles(&format!("  {line}\n"));
    assert_eq!(e.len(), 1);
    let msg = e[0].puzzle.as_ref().unwrap_err();
    assert!(
        msg.starts_with("line 1, column 43: unexpected character 'x'"),
        "{msg}"
    );
    let e = read_puzzles(&format!("\t{line}\n"));
    assert!(
        e[0].puzzle
            .as_ref()
            .unwrap_err()
            .starts_with("line 1, column 42:")
    );
}

/// fuzz target solver (raw cell bytes): `check_givens` indexed a 10-entry
/// table with the cell value and panicked on a value above 9, which the
/// public `Grid` field allows (the solver itself treats such a grid as
/// having no solution).
#[test]
fn check_givens_value_above_9_is_out_of_range_not_a_panic() {
    let fuzzed: &[u8] = &[
        0x05, 0x03, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x01, 0x09, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x09, 0x08, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x08, 0x00, 0x00,
        0x00, 0x06, 0x00, 0x00, 0x00, 0x03, 0x04, 0x00, 0x00, 0x08, 0x00, 0x03, 0x00, 0x00, 0x01,
        0x07, 0xff, 0xfb, 0x00, 0x02, 0x00, 0x00, 0x00, 0x06, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00,
        0x02, 0x08, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x09, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x00, 0x08, 0x00, 0x00, 0x07, 0x09,
    ];
    let g = Grid(fuzzed.try_into().unwrap());
    assert_eq!(
        g.check_givens(),
        Err(PuzzleError::OutOfRange {
            shape: Shape::CLASSIC,
            at: Cell(46).into(),
            value: 255
        })
    );
    let mut g = Grid::EMPTY;
    g.0[80] = 10;
    assert!(matches!(
        g.check_givens(),
        Err(PuzzleError::OutOfRange { value: 10, .. })
    ));
    let a = sudoku_core::solver::run(&g, 2, 1_000);
    assert_eq!((a.count, a.complete), (0, true));
}
