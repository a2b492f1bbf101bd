//! Runs examples/node/client.js (@grpc/grpc-js) against the real server: one
//! Solve, one SolveBatch stream of two messages matched by id, and two
//! INVALID_ARGUMENTs whose google.rpc.BadRequest details the client decodes
//! (protobufjs, with the vendored google/rpc/error_details.proto). The client
//! checks every answer and exits non-zero on the first wrong one.
//!
//! Needs node and npm, and the npm registry for the first run (packages go
//! to examples/node/node_modules). Skips when that is missing, except under
//! CI=true, where it fails. .ci/setup-clients.sh installs it all.

use std::process::Command;
use std::time::Duration;

use crate::support::{TestServer, have, npm_ci, repo, run, skip};

#[test]
fn node_client_talks_to_the_real_server() {
    const TEST: &str = "node_client_talks_to_the_real_server";
    if !have("node") || !have("npm") {
        return skip(TEST, "node and npm are not installed");
    }
    let dir = repo().join("examples/node");
    if let Err(e) = npm_ci(&dir) {
        return skip(TEST, &e);
    }
    let server = TestServer::start_detached();
    let mut cmd = Command::new("node");
    cmd.arg("client.js")
        .arg(server.target())
        .env("SUDOKU_PROTO_DIR", repo().join("proto"))
        .current_dir(&dir);
    let out = run(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", out.both());
    assert!(out.success, "client.js failed:\n{}", out.both());
    for line in [
        "ok: Solve -> ",
        "ok: Solve (16x16, 4x4 boxes) -> solved",
        "ok: SolveBatch -> 4 solved; item 99: items[0].puzzle: cell 0 (row 0, column 0) and cell 8 (row 0, column 8) both hold 5 in row 0",
        "ok: Solve(clashing) -> INVALID_ARGUMENT",
        "ok: INVALID_ARGUMENT BadRequest: puzzle: cell 0 (row 0, column 0) and cell 8 (row 0, column 8) both hold 5 in row 0",
        "ok: INVALID_ARGUMENT BadRequest: puzzle.text: cell 10 (row 1, column 1): unexpected character 'x'",
        "ok: Validate(clashing) -> conflict 0/8 in UNIT_KIND_ROW 0",
        "ok: Hint -> ",
        "ok: Generate -> 3 easy puzzles, same for seed 7",
        "all checks passed",
    ] {
        assert!(
            out.stdout.contains(line),
            "missing {line:?} in\n{}",
            out.both()
        );
    }
    assert!(!out.stdout.contains("FAIL"), "{}", out.both());
}
