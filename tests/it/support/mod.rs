//! What the tests share: real servers to test against ([`server`]), the
//! tools to drive other programs ([`tools`]), and puzzles.

#![allow(dead_code)]

pub mod server;
pub mod tools;

pub use server::{BinaryServer, TestServer, bare_client};
pub use tools::{
    free_port, free_ports, have, http_get, npm_ci, python_venv, repo, run, skip, skip_until,
    target_dir,
};

/// Puzzles of a data set committed in data/, skipping '#' lines.
pub fn data_set(name: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#') && l.len() >= 81)
        .map(|l| l[..81].to_string())
        .collect()
}

/// How long the tests give an event they wait for (a counter stopping, a
/// status arriving) before calling it missing. The event is the assertion;
/// this bound only keeps a regression from hanging, so it is generous
/// enough for a loaded 2-core machine. Times that matter are printed here
/// and measured in benches/.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(10);

pub const CLASSIC: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
pub const CLASSIC_SOLVED: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

/// A near-empty grid (12 givens) with no solution, where the search finds
/// the contradiction only after about 1.55 million nodes (0.34 s on the
/// development machine; 2.76 million before the search learned to branch
/// on the bivalue cell with most unsolved peers): found by a random search
/// over few-given grids.
pub const DEEP_CONTRADICTION: &str =
    "......3.......2...........4...5..83....83.5..7..........1.........4..............";
