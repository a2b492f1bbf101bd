//! Runs examples/node/client.js (@grpc/grpc-js) against the real server: one
//! Solve, one SolveBatch stream of two messages matched by id, and two
//! INVALID_ARGUMENTs whose google.rpc.BadRequest details the client decodes
//! (protobufjs, with the vendored google/rpc/error_details.proto). The client
//! checks every answer and exits non-zero on the first wrong one.
//!
//! Needs node and npm, and the npm registry for the first run (packages go
//! to examples/node/node_modules). Skips when that is missing, except under
//! CI=true, where it fails. .ci/setup-clients.sh installs it all.
//!
//! Also web/test/endpoint.mjs: the gRPC-Web endpoint called from Node the
//! way the web page calls it (Connect's gRPC-Web transport), without a
//! browser, so a failure of `browser::` says whether the page or the
//! endpoint broke.

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
        "ok: SolveBatch -> 4 solved; item 99: items[0].puzzle: 5 is given twice in row 1: at row 1, column 1 and row 1, column 9",
        "ok: Solve(clashing) -> INVALID_ARGUMENT",
        "ok: INVALID_ARGUMENT BadRequest: puzzle: 5 is given twice in row 1: at row 1, column 1 and row 1, column 9",
        "ok: INVALID_ARGUMENT ErrorInfo: CONFLICTING_GIVENS sudoku.v1 cells=0,8",
        "ok: INVALID_ARGUMENT BadRequest: puzzle.text: row 2, column 2: unexpected character 'x'",
        "ok: INVALID_ARGUMENT ErrorInfo: MALFORMED_GRID sudoku.v1 cells=10",
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

#[test]
fn grpc_web_endpoint_from_node() {
    const TEST: &str = "grpc_web_endpoint_from_node";
    if !have("node") || !have("npm") {
        return skip(TEST, "node and npm are not installed");
    }
    let dir = repo().join("web");
    if let Err(e) = npm_ci(&dir) {
        return skip(TEST, &e);
    }
    // The code generated from the proto, as the page's build makes it
    // (buf and protoc-gen-es from web/'s packages), always afresh: the
    // test speaks the proto of this tree.
    let mut generate = Command::new("npm");
    generate.args(["run", "--silent", "gen"]).current_dir(&dir);
    let generated = run(generate, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        generated.success,
        "npm run gen failed:\n{}",
        generated.both()
    );
    let server = TestServer::start_detached();
    let mut cmd = Command::new("node");
    cmd.arg("test/endpoint.mjs")
        .arg(server.url())
        .current_dir(&dir);
    let out = run(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", out.both());
    assert!(out.success, "endpoint.mjs failed:\n{}", out.both());
    for line in [
        "ok: Solve -> 534678912672195348198342567859761423426853791713924856961537284287419635345286179",
        "ok: grpc-accept-encoding: gzip,zstd,identity",
        "ok: malformed -> INVALID_ARGUMENT puzzle.text: row 2, column 2: unexpected character 'x'",
        "[MALFORMED_GRID cells=10]",
        "[CONFLICTING_GIVENS cells=0,8]",
        "all checks passed",
    ] {
        assert!(
            out.stdout.contains(line),
            "missing {line:?} in\n{}",
            out.both()
        );
    }
}
