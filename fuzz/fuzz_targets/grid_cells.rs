//! `Grid::from_cells` on arbitrary u32 slices (4 little-endian bytes each);
//! `to_cells` round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sudoku_core::puzzle::{CELLS, Grid, PuzzleError};
use sudoku_grpc_fuzz::conflict_free;

fuzz_target!(|data: &[u8]| {
    // A byte below 0xF0 is a value 0-9 (more readable corpus); 0xF0-0xFF
    // starts a raw little-endian u32.
    let mut values = Vec::new();
    let mut i = 0;
    while i < data.len() {
        if data[i] >= 0xF0 && i + 4 < data.len() {
            values.push(u32::from_le_bytes(data[i + 1..i + 5].try_into().unwrap()));
            i += 5;
        } else {
            values.push(u32::from(data[i] % 10));
            i += 1;
        }
    }
    match Grid::from_cells(&values) {
        Ok(g) => {
            assert_eq!(values.len(), CELLS);
            assert_eq!(g.to_cells(), values);
            assert_eq!(Grid::from_text(&g.to_text()), Ok(g));
            assert_eq!(g.check_givens().is_ok(), conflict_free(&g));
            assert_eq!(g.givens(), values.iter().filter(|&&v| v != 0).count());
        }
        Err(PuzzleError::WrongCount { found, .. }) => {
            assert_eq!(found, values.len());
            assert_ne!(found, CELLS);
        }
        Err(PuzzleError::OutOfRange { at, value, .. }) => {
            assert_eq!(values.len(), CELLS);
            assert_eq!(values[at.index], value);
            assert!(value > 9);
            assert!(values[..at.index].iter().all(|&v| v <= 9));
        }
        Err(e) => panic!("from_cells gave {e:?}"),
    }
});
