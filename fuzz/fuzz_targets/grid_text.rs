//! `Grid::from_text` on arbitrary strings; `to_text` round trip;
//! `check_givens` against an independent rule check.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sudoku_core::puzzle::{CELLS, Grid, PuzzleError};
use sudoku_grpc_fuzz::conflict_free;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let chars: Vec<char> = text.chars().collect();
    let ok_chars = |c: &char| matches!(c, '0'..='9' | '.');
    match Grid::from_text(&text) {
        Ok(g) => {
            assert_eq!(chars.len(), CELLS);
            assert!(chars.iter().all(ok_chars));
            assert!(g.0.iter().all(|&d| d <= 9));
            let t = g.to_text();
            assert_eq!(t.len(), CELLS);
            assert_eq!(Grid::from_text(&t), Ok(g));
            assert_eq!(Grid::from_cells(&g.to_cells()), Ok(g));
            assert_eq!(t, g.to_string());
            match g.check_givens() {
                Ok(()) => assert!(conflict_free(&g)),
                Err(PuzzleError::Conflict {
                    first,
                    second,
                    value,
                    ..
                }) => {
                    assert!(!conflict_free(&g));
                    assert!(first.index < second.index && second.index < CELLS);
                    assert_eq!((g.0[first.index], g.0[second.index]), (value, value));
                }
                Err(e) => panic!("check_givens gave {e:?}"),
            }
        }
        Err(PuzzleError::WrongLength { found, .. }) => {
            assert_eq!(found, chars.len());
            assert_ne!(found, CELLS);
        }
        Err(e @ PuzzleError::BadChar { at, ch, .. }) => {
            assert_eq!(chars.len(), CELLS);
            assert_eq!(chars[at.index], ch, "BadChar points at the wrong cell");
            assert!(!ok_chars(&ch));
            assert!(
                chars[..at.index].iter().all(ok_chars),
                "not the first bad char"
            );
            let _ = e.to_string();
        }
        Err(e) => panic!("from_text gave {e:?}"),
    }
});
