//! The solver on arbitrary grids under a node budget: answers keep the rules
//! and the givens, counts stay within the limit, resuming in slices gives the
//! same answer as one run, and count(k) == min(count(k + 1), k).
//!
//! Input: byte 0 picks the limit (1-8) and whether cell bytes are used raw
//! (any u8, as the public `Grid` field allows) or mapped to 0-9; byte 1 the
//! slice size; then up to 81 cell bytes (missing cells are blank).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sudoku_core::puzzle::{CELLS, Grid};
use sudoku_core::solver::{Progress, Solver, run};
use sudoku_grpc_fuzz::{check_answer, conflict_free};

const BUDGET: u64 = 20_000;

fuzz_target!(|data: &[u8]| {
    let (&mode, rest) = data.split_first().unwrap_or((&0, &[]));
    let (&slice, cells) = rest.split_first().unwrap_or((&1, &[]));
    let limit = u32::from(mode & 7) + 1;
    let raw = mode & 8 != 0;
    let mut p = Grid::EMPTY;
    for (c, &b) in p.0.iter_mut().zip(cells.iter().take(CELLS)) {
        *c = if raw {
            b
        } else {
            // Mostly blanks, so that many grids keep the rules.
            match b {
                0..=149 => 0,
                _ => (b - 150) % 9 + 1,
            }
        };
    }
    // The grid's own check agrees with an independent one, on any values.
    let independent = p.0.iter().all(|&d| d <= 9) && conflict_free(&p);
    assert_eq!(p.check_givens().is_ok(), independent, "{:?}", p.0);
    let whole = run(&p, limit, BUDGET);
    check_answer(&p, &whole, limit, BUDGET);

    // Slices of any size add up to the same search.
    let mut s = Solver::new(&p, limit);
    let slice = u64::from(slice % 64) + 1;
    while s.answer().stats.nodes < BUDGET {
        let left = BUDGET - s.answer().stats.nodes;
        if s.resume(left.min(slice)) == Progress::Done {
            break;
        }
    }
    assert_eq!(s.answer(), whole, "sliced search differs from one run");

    // count(k) == min(count(k + 1), k) when both searches finish.
    let more = run(&p, limit + 1, BUDGET);
    check_answer(&p, &more, limit + 1, BUDGET);
    if whole.complete && more.complete {
        assert_eq!(whole.count, more.count.min(limit), "{whole:?} vs {more:?}");
    }
    if more.complete && more.count <= limit {
        assert!(whole.complete && whole.count == more.count);
    }
    if let Some(sol) = whole.solution {
        // A solution, given back as the puzzle, is its own unique answer.
        assert_eq!(run(&sol, 2, 10).count, 1);
    }
});
