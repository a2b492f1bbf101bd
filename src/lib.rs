//! A gRPC service that solves Sudoku.
//!
//! The crate is a library with two thin binaries: `sudoku-server` (the gRPC
//! server) and `sudoku` (the command-line client, which can also solve
//! in-process). The engine in [`solver`] knows nothing of gRPC; [`service`]
//! is the only bridge between the wire types in [`pb`] and the domain types.
//!
//! ```
//! use sudoku_grpc::{grid::Grid, solver};
//!
//! let puzzle = Grid::from_text(
//!     "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79",
//! )?;
//! let solution = solver::solve(&puzzle).expect("this puzzle has a solution");
//! assert!(solution.is_valid_solution() && puzzle.is_kept_by(&solution));
//! assert!(solver::is_unique(&puzzle));
//! # Ok::<(), sudoku_grpc::grid::GridError>(())
//! ```

#![forbid(unsafe_code)]

pub mod bench;
pub mod cli;
pub mod config;
pub mod grid;
pub mod input;
pub mod metrics;
pub mod pool;
pub mod server;
pub mod service;
pub mod solver;

/// Code generated from proto/ by build.rs.
pub mod pb {
    #![allow(missing_docs, clippy::all)]
    tonic::include_proto!("sudoku.v1");

    /// The encoded descriptor set of the contract, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("sudoku_descriptor");
}
