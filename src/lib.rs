//! A gRPC service that solves Sudoku.
//!
//! The crate is a library with two thin binaries: `sudoku-server` (the gRPC
//! server) and `sudoku` (the command-line client, which can also solve
//! in-process). Its parts, each a folder:
//!
//! | module | its job |
//! |---|---|
//! | [`puzzle`] | the puzzle as a value, and the text formats people write it in |
//! | [`solver`] | the engine: bitmask state, propagation, MRV search; knows nothing of gRPC |
//! | [`generate`] | new puzzles: unique, minimal, symmetric on request, the same for the same seed |
//! | [`logic`] | the logical solver behind Hint and Rate: techniques a person uses, easiest first |
//! | [`service`] | the gRPC service: handlers, conversion, the status map, streams, scheduling |
//! | [`server`] | the server's assembly: settings, listener and drain, HTTP/2, TLS, health, reflection |
//! | [`client`] | the `sudoku` command: connect, solve, bench |
//! | [`telemetry`] | logs and metrics |
//! | [`pb`] | the code generated from proto/ |
//!
//! The engine and the puzzle import nothing from the others; [`service`] is
//! the only bridge between the wire types in [`pb`] and the domain types.
//!
//! ```
//! use sudoku_grpc::{puzzle::Grid, solver};
//!
//! let puzzle = Grid::from_text(
//!     "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79",
//! )?;
//! let solution = solver::solve(&puzzle).expect("this puzzle has a solution");
//! assert!(solution.is_valid_solution() && puzzle.is_kept_by(&solution));
//! assert!(solver::is_unique(&puzzle));
//! # Ok::<(), sudoku_grpc::puzzle::GridError>(())
//! ```

// Denied, not forbidden: one call into glibc, malloc_trim in
// service/trim.rs, is allowed where it is made.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod generate;
pub mod logic;
pub mod puzzle;
pub mod server;
pub mod service;
pub mod solver;
pub mod telemetry;

/// Code generated from proto/ by build.rs.
pub mod pb {
    #![allow(missing_docs, clippy::all)]
    tonic::include_proto!("sudoku.v1");

    /// The encoded descriptor set of the contract, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("sudoku_descriptor");
}
