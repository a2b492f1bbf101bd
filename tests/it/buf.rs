//! The contract passes `buf lint` (STANDARD, see buf.yaml) and `buf breaking`
//! against the released contract, contract/released.binpb (refreshed only on
//! a deliberate release; see contract/README.md).
//!
//! buf comes from npm (@bufbuild/buf, pinned in tools/buf/package-lock.json).
//! Skips when node/npm are missing or the install fails, except under
//! CI=true, where it fails. .ci/setup-clients.sh installs it.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::support::{have, npm_ci, repo, run, skip};

fn buf(test: &str) -> Option<PathBuf> {
    if !have("npm") {
        skip(test, "npm is not installed");
        return None;
    }
    let dir = repo().join("tools/buf");
    if let Err(e) = npm_ci(&dir) {
        skip(test, &e);
        return None;
    }
    Some(dir.join("node_modules/.bin/buf"))
}

fn buf_ok(buf: PathBuf, args: &[&str]) {
    let mut cmd = Command::new(buf);
    cmd.args(args).current_dir(repo());
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "buf {args:?} found problems:\n{}", out.both());
}

#[test]
fn buf_lint_passes() {
    if let Some(buf) = buf("buf_lint_passes") {
        buf_ok(buf, &["lint"]);
    }
}

#[test]
fn buf_breaking_against_the_released_contract_passes() {
    if let Some(buf) = buf("buf_breaking_against_the_released_contract_passes") {
        buf_ok(buf, &["breaking", "--against", "contract/released.binpb"]);
    }
}
