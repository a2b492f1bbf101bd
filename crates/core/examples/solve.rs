//! The core library alone: reads puzzles (any 9x9 format the readers take,
//! one per record) from stdin, and prints each one's solution, whether it
//! is unique, and its rating.
//!
//! ```sh
//! echo 53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79 \
//!   | cargo run -p sudoku-core --example solve
//! ```

use std::io::Read;

use sudoku_core::puzzle::text::read_puzzles;
use sudoku_core::{logic, solver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    for entry in read_puzzles(&text) {
        let puzzle = match entry.puzzle {
            Ok(puzzle) => puzzle,
            Err(e) => {
                println!("error: {e}");
                continue;
            }
        };
        let Some(solution) = solver::solve(&puzzle) else {
            println!("no solution");
            continue;
        };
        let unique = solver::is_unique(&puzzle);
        let rating = match logic::rate(&puzzle) {
            Ok(r) => format!("{:?}, SE {:.1}", r.label, r.se_rating),
            Err(e) => format!("not rated: {e}"),
        };
        println!(
            "{}  {}  {rating}",
            solution.to_text(),
            if unique {
                "unique"
            } else {
                "several solutions"
            }
        );
    }
    Ok(())
}
