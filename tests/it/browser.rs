//! The web page in a real browser: web/test/browser.mjs drives the
//! system's headless Chromium (puppeteer-core) against the real server, at
//! 1280x800 and at 390x844, as a player would: a new easy puzzle
//! (Generate), arrow keys, digits and pencil marks, Hint with marks that
//! lack a digit (the correction, applied), a wrong digit that Check my
//! progress (Validate's `current`) turns red, undo and redo, then Hint and
//! Apply to a solved board, each hint a new step. The board and the result
//! stay on screen; axe-core finds no serious or critical violation in
//! light and dark mode. Then a puzzle pasted as nine lines and solved, and
//! one with a bad character, told in a player's words with the details
//! behind a toggle. Screenshots go under `<target>/web/`. When this fails
//! and `node_client::grpc_web_endpoint_from_node` passes, the page broke,
//! not the endpoint.
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
fn a_player_finishes_a_generated_puzzle_on_a_laptop_and_a_phone() {
    const TEST: &str = "a_player_finishes_a_generated_puzzle_on_a_laptop_and_a_phone";
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
    let done = run(cmd, Duration::from_secs(300)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", done.both());
    assert!(done.success, "browser.mjs failed:\n{}", done.both());
    for line in [
        "ok: laptop: New puzzle (easy) -> ",
        "ok: laptop: pencil marks sent to Hint -> Hint: Missing candidate; Apply -> ",
        "-> One digit is wrong, red",
        "each a new step -> Solved! ",
        "ok: phone: New puzzle (easy) -> ",
        "ok: phone: Backspace, undo, redo (keys and buttons) -> ",
        "ok: axe phone with a hint dark: no serious or critical violation",
        "ok: pasted 9 lines, Solve -> 534678912672195348198342567859761423426853791713924856961537284287419635345286179",
        "ok: malformed -> We can't read that puzzle: That puzzle has a character we can't read at row 2, column 2: 'x'",
        "all checks passed",
    ] {
        assert!(
            done.stdout.contains(line),
            "missing {line:?} in\n{}",
            done.both()
        );
    }
    let shots = ["new", "hint", "hint-dark", "check", "solved", "solved-dark"];
    let shots = ["laptop", "phone"]
        .iter()
        .flat_map(|size| shots.iter().map(move |s| format!("{size}-{s}.png")))
        .chain(["error.png".to_string()]);
    for shot in shots {
        let png = std::fs::read(out.join(&shot)).unwrap_or_else(|e| panic!("{shot}: {e}"));
        assert!(png.starts_with(b"\x89PNG"), "{shot} is not a PNG");
    }
}
