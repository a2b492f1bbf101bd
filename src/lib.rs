//! The Sudoku gRPC service: the contract of proto/ served by tonic over the
//! engines of [`sudoku_core`]. This crate is the only bridge between the two:
//! the core knows nothing of gRPC, and the generated types in [`pb`] never
//! reach it. The `sudoku-server` binary is a thin main over [`server`]; the
//! `sudoku` command (crates/cli) calls the service through [`pb`]'s client.
//!
//! | module | its job |
//! |---|---|
//! | [`service`] | the gRPC service: handlers, conversion, the status map, streams, scheduling |
//! | [`server`] | the server's assembly: settings, listener and drain, HTTP/2, TLS, health, reflection |
//! | [`telemetry`] | logs, metrics and traces |
//! | [`pb`] | the code generated from proto/ |
//! | [`StartError`] | why the server could not start |
//!
//! A service in this process, called as a client would call a server:
//!
//! ```
//! use sudoku_grpc::pb::{self, sudoku_service_server::SudokuService};
//! use sudoku_grpc::{server::Config, service::Sudoku};
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let service = Sudoku::new(Config::default().limits(), CancellationToken::new())?;
//! let request = pb::SolveRequest {
//!     puzzle: Some(pb::Grid {
//!         text: "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79".into(),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let answer = service.solve(tonic::Request::new(request)).await?.into_inner();
//! assert!(answer.solution.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

// Denied, not forbidden: one call into glibc, malloc_trim in
// service/trim.rs, is allowed where it is made.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod server;
pub mod service;
pub mod telemetry;

pub use error::StartError;

/// Code generated from proto/ by build.rs.
pub mod pb {
    #![allow(missing_docs, clippy::all, rustdoc::broken_intra_doc_links)]
    tonic::include_proto!("sudoku.v1");

    /// The encoded descriptor set of the contract, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("sudoku_descriptor");
}
