//! Sudoku of every size, as a plain Rust library: no async runtime, no
//! gRPC, no command-line crate. It is the engine behind the `sudoku-server`
//! gRPC service and the `sudoku` command, and can be used alone.
//!
//! | module | its job |
//! |---|---|
//! | [`puzzle`] | the puzzle as a value, its shapes, and the text formats people write it in |
//! | [`solver`] | the engines: a 9x9 bitboard and one for every other shape; propagation, MRV search, counting, cancelling |
//! | [`logic`] | the logical solver behind hints and ratings: techniques a person uses, easiest first |
//! | [`generate`] | new puzzles: unique, minimal (for their symmetry, when symmetric), the same for the same seed |
//!
//! Solve a puzzle, and check it has exactly one solution:
//!
//! ```
//! use sudoku_core::{puzzle::Grid, solver};
//!
//! let puzzle = Grid::from_text(
//!     "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79",
//! )?;
//! let solution = solver::solve(&puzzle).expect("this puzzle has a solution");
//! assert!(solution.is_valid_solution() && puzzle.is_kept_by(&solution));
//! assert!(solver::is_unique(&puzzle));
//! # Ok::<(), sudoku_core::puzzle::PuzzleError>(())
//! ```
//!
//! Make a new puzzle (the same one for the same seed and index), and rate
//! it as a person would solve it:
//!
//! ```
//! use sudoku_core::{generate, logic, puzzle::Grid, solver::Solver};
//!
//! let mut solver = Solver::new(&Grid::EMPTY, 1);
//! let made = generate::Search::new(7, 0, generate::Options::default())
//!     .run(&mut solver, &mut |candidate| Some(candidate.clues))
//!     .expect("a puzzle within the default attempts");
//! let puzzle = made.candidate.puzzle;
//! assert!(sudoku_core::solver::is_unique(&puzzle));
//! let rating = logic::rate(&puzzle)?;
//! assert!(rating.solved);
//! println!("{} clues, {:?} ({})", made.extra, rating.label, rating.se_rating);
//! # Ok::<(), sudoku_core::logic::LogicError>(())
//! ```

// The engines run on client-controlled input inside a server: no unsafe.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod generate;
pub mod logic;
pub mod puzzle;
pub mod solver;
