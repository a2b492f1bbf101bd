//! Which levels Generate reaches at each size, and what one puzzle costs:
//! for each shape and label, three puzzles (seed 7, indices 0-2, clues
//! symmetric under the half turn), at most 300 attempts each, one thread.
//!
//! `cargo run --release -p sudoku-core --example levels` prints, per shape
//! and label, how many of the three were found, their clues and hardest
//! techniques, the attempts they took and the time. docs/sizes.md quotes it.

use std::time::Instant;

use sudoku_core::generate::sized::{SizedOptions, SizedPoll, SizedSearch};
use sudoku_core::generate::{Symmetry, Target};
use sudoku_core::logic::Label;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::sized::SizedSolver;

fn main() {
    for (r, c) in [(2, 2), (2, 3), (3, 2), (2, 4), (3, 3), (3, 4), (4, 4)] {
        let shape = Shape::new(r, c).expect("a shape");
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        for &label in Label::ALL {
            let options = SizedOptions {
                symmetry: Symmetry::Rotate180,
                min_clues: 0,
                max_clues: usize::MAX,
                max_attempts: 300,
                budget: 5_000_000,
            };
            let started = Instant::now();
            let (mut found, mut attempts) = (Vec::new(), 0);
            for index in 0..3 {
                let mut search = SizedSearch::new(shape, 7, index, options, Target::Label(label));
                loop {
                    match search.step(&mut solver) {
                        SizedPoll::Found(f) => {
                            attempts += f.attempts + 1;
                            let hardest = f.rating.hardest.map_or("-", |t| t.name());
                            found.push(format!("{} clues {hardest}", f.made.clues));
                            break;
                        }
                        SizedPoll::Exhausted { attempts: a } => {
                            attempts += a;
                            break;
                        }
                        SizedPoll::Working => {}
                    }
                }
            }
            println!(
                "{} {label:<8} found {}/3 in {attempts} attempts, {:.0} ms: {}",
                shape.describe(),
                found.len(),
                started.elapsed().as_secs_f64() * 1e3,
                found.join("; ")
            );
        }
    }
}
