//! The web page in a real browser: web/test/browser.mjs drives the
//! system's headless Chromium (puppeteer-core) against the real server on
//! a phone-sized screen: loads `/`, pastes a puzzle as nine lines, presses
//! Solve and checks the board it shows (the rules and the givens), asks for
//! a hint and validates, types a digit on the board; pastes a
//! puzzle with a bad character and checks the error and the highlighted
//! cell; saves screenshots under `<target>/web/`. When this fails and
//! `node_client::grpc_web_endpoint_from_node` passes, the page broke, not
//! the endpoint.
//!
//! Needs node, npm (web/'s packages, from the npm registry on the first
//! run) and Chromium (`$SUDOKU_CHROMIUM`, or chromium on the PATH or in
//! /usr/bin). Skips when one is missing, except under CI=true, where it
//! fails. .ci/setup-web.sh installs them.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::support::{TestServer, have, npm_ci, repo, run, skip_until, target_dir};

/// What installs node, npm and chromium for this test.
const SETUP: &str = ".ci/setup-web.sh";

/// The Chromium to drive, if there is one.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SUDOKU_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    ["chromium", "chromium-browser"]
        .iter()
        .flat_map(|name| {
            on_path
                .iter()
                .map(move |dir| dir.join(name))
                .chain([PathBuf::from("/usr/bin").join(name)])
        })
        .find(|p| p.is_file())
}

#[test]
fn the_page_solves_a_pasted_puzzle_and_highlights_a_bad_cell() {
    const TEST: &str = "the_page_solves_a_pasted_puzzle_and_highlights_a_bad_cell";
    if !have("node") || !have("npm") {
        return skip_until(TEST, "node and npm are not installed", SETUP);
    }
    let Some(chromium) = chromium() else {
        return skip_until(TEST, "chromium is not installed", SETUP);
    };
    let dir = repo().join("web");
    if let Err(e) = npm_ci(&dir) {
        return skip_until(TEST, &e, SETUP);
    }
    let out = target_dir().join("web");
    let server = TestServer::start_detached();
    let mut cmd = Command::new("node");
    cmd.arg("test/browser.mjs")
        .arg(server.url())
        .arg(&out)
        .env("CHROMIUM", &chromium)
        .current_dir(&dir);
    let done = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", done.both());
    assert!(done.success, "browser.mjs failed:\n{}", done.both());
    for line in [
        "ok: page loaded (81 cells, fits 390px)",
        "ok: pasted 9 lines, Solve -> 534678912672195348198342567859761423426853791713924856961537284287419635345286179",
        "ok: Hint: ",
        "Validate -> Valid: one solution",
        "ok: typed 4 into row 0, column 2 from the keyboard",
        "ok: malformed -> Error: INVALID_ARGUMENT; highlighted [10]",
        "all checks passed",
    ] {
        assert!(
            done.stdout.contains(line),
            "missing {line:?} in\n{}",
            done.both()
        );
    }
    for shot in ["solved.png", "hint.png", "error.png"] {
        let png = std::fs::read(out.join(shot)).unwrap_or_else(|e| panic!("{shot}: {e}"));
        assert!(png.starts_with(b"\x89PNG"), "{shot} is not a PNG");
    }
}
