//! What the scheduler's unit tests share: puzzles, a service without
//! solver threads, and a task run to its end in turns.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::service::pool::{Step, Turn, Work, with_thread_solver};
use crate::service::{Limits, Sudoku};
use sudoku_core::puzzle::Grid;

pub(super) const CLASSIC: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
/// 84 nodes: many 8-node slices.
pub(super) const EASTER_MONSTER: &str =
    "1.......2.9.4...5...6...7...5.9.3.......7.......85..4.7.....6...3...9.8...2.....1";

/// A service without solver threads, solving in slices of 8 nodes.
pub(super) fn service() -> Sudoku {
    let limits = Limits {
        slice_nodes: 8,
        max_in_flight: 16,
        inline_nodes: 8,
        quantum: Duration::ZERO,
        ..Limits::on_the_calling_thread(1_000_000)
    };
    Sudoku::new(limits, CancellationToken::new()).unwrap()
}

/// Runs `work` to its end, in turns over after each slice when
/// `sliced`, with another search on the thread's solver between turns;
/// the number of turns it took.
pub(super) fn run_to_end(work: &mut dyn Work, sliced: bool) -> usize {
    let mut turns = 1;
    loop {
        let turn = if sliced {
            Turn::every_slice()
        } else {
            Turn::UNBOUNDED
        };
        if work.run(&turn) == Step::Done {
            return turns;
        }
        with_thread_solver(|solver| {
            solver.restart(&Grid::from_text(CLASSIC).unwrap(), 1);
            solver.resume(5);
        });
        turns += 1;
    }
}
