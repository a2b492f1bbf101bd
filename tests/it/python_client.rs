//! Runs examples/python against the real server: the example client checks
//! Solve, SolveBatch, BadRequest details, health, reflection (v1 and v1alpha)
//! and compression itself and exits non-zero on the first wrong answer.
//!
//! Needs python3 with venv, and PyPI for the first run (the virtualenv is
//! kept in `<target>/py-venv`). Skips when that is missing, except under
//! CI=true, where it fails. .ci/setup-clients.sh installs it all.

use std::process::Command;
use std::time::Duration;

use crate::support::{TestServer, python_venv, repo, run, skip};

fn example_dir() -> std::path::PathBuf {
    repo().join("examples/python")
}

#[test]
fn python_client_talks_to_the_real_server() {
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip("python_client_talks_to_the_real_server", &e),
    };
    let server = TestServer::start_detached();
    let mut cmd = Command::new(&python);
    cmd.arg("client.py")
        .args(["--target", &server.target()])
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .current_dir(example_dir());
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", out.both());
    assert!(out.success, "client.py failed:\n{}", out.both());
    for line in [
        "ok: Solve (gzip)",
        "ok: Solve (cells, count mode)",
        "ok: SolveBatch -> 4 solved, item 201 rejected: items[1].puzzle: cell 0 (row 0, column 0)",
        "ok: INVALID_ARGUMENT BadRequest: puzzle: cell 0 (row 0, column 0) and cell 8 (row 0, column 8) both hold 5 in row 0",
        "ok: INVALID_ARGUMENT BadRequest: puzzle.text: cell 10 (row 1, column 1): unexpected character 'x'",
        "ok: health Check ('' and sudoku.v1.SudokuService) and Watch -> SERVING",
        "ok: reflection v1 lists",
        "resolved sudoku.v1.SudokuService (Solve, SolveBatch, SolveStream)",
        "ok: reflection v1alpha lists",
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
fn python_retry_policy_retries_unavailable() {
    // No real server here: retry_check.py runs its own flaky stand-in on
    // 127.0.0.1 to prove the example's retry policy retries UNAVAILABLE.
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip("python_retry_policy_retries_unavailable", &e),
    };
    let mut cmd = Command::new(&python);
    cmd.arg("retry_check.py")
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .current_dir(example_dir());
    let out = run(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", out.both());
    assert!(out.success, "retry_check.py failed:\n{}", out.both());
    assert!(
        out.stdout
            .contains("ok: retry policy: UNAVAILABLE twice, then OK on attempt 3"),
        "{}",
        out.both()
    );
}
