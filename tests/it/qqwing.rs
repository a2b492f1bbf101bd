//! The logical solver against QQwing's levels. QQwing defines them by the
//! techniques its own solver needed: "simple" naked singles alone, "easy"
//! hidden singles too, "intermediate" also pointing, box/line reduction and
//! naked or hidden pairs, "expert" it had to guess. Our techniques include
//! all of those, so on puzzles QQwing generated at each level:
//! - simple and easy finish with singles (label easy);
//! - intermediate needs more than singles and no more than hidden pair
//!   (ER 1.7 to 3.4, as Sudoku Explainer rates them);
//! - expert used a technique QQwing lacks (X-Wing, a direct hidden triple,
//!   or anything from naked triple up), or SE cannot rate it.
//!
//! Needs qqwing (Debian package). Skips when missing, except under CI=true,
//! where it fails. .ci/setup-qqwing.sh installs it.

use std::process::Command;
use std::time::Duration;

use sudoku_core::logic::{self, Label, Technique};
use sudoku_core::puzzle::Grid;

use crate::support::{have, run, skip_until};

fn generate(level: &str, n: usize) -> Vec<Grid> {
    let mut cmd = Command::new("qqwing");
    cmd.args([
        "--generate",
        &n.to_string(),
        "--difficulty",
        level,
        "--one-line",
    ]);
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "qqwing {level}: {}", out.both());
    let puzzles: Vec<Grid> = out
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.len() == 81)
        .map(|l| Grid::from_text(l).unwrap_or_else(|e| panic!("qqwing printed {l:?}: {e}")))
        .collect();
    assert_eq!(puzzles.len(), n, "qqwing {level}: {}", out.stdout);
    puzzles
}

/// Techniques QQwing's solver does not have.
/// A technique QQwing's solver lacks: anything but singles, pointing,
/// claiming and pairs (SE's direct forms of those included).
fn beyond_qqwing(t: Technique) -> bool {
    use Technique as T;
    !matches!(
        t,
        T::FullHouse
            | T::HiddenSingle
            | T::NakedSingle
            | T::DirectPointing
            | T::DirectClaiming
            | T::DirectHiddenPair
            | T::Pointing
            | T::Claiming
            | T::NakedPair
            | T::HiddenPair
    )
}

#[test]
fn ratings_agree_with_qqwing_levels() {
    if !have("qqwing") {
        skip_until(
            "ratings_agree_with_qqwing_levels",
            "qqwing is not installed",
            ".ci/setup-qqwing.sh",
        );
        return;
    }
    for level in ["simple", "easy", "intermediate", "expert"] {
        for g in generate(level, 20) {
            let r = logic::rate(&g).unwrap_or_else(|e| panic!("{level} {g:?}: {e}"));
            let why = format!("qqwing {level} {g:?}: {r:?}");
            match level {
                "simple" | "easy" => {
                    assert!(r.solved && r.label == Label::Easy, "{why}");
                }
                "intermediate" => {
                    // More than singles (SE's least such step is a direct
                    // pointing, 1.7), nothing beyond hidden pair (3.4): SE
                    // may take a direct hidden triple (2.5) or an X-Wing
                    // (3.2) on the way, where QQwing took a pair.
                    assert!(r.solved && r.label <= Label::Medium, "{why}");
                    assert!((1.7..=3.4).contains(&r.se_rating), "{why}");
                }
                _ => {
                    let used_more = r.counts.iter().any(|&(t, _)| beyond_qqwing(t));
                    assert!(!r.solved || used_more, "{why}");
                }
            }
        }
    }
}

/// `sudoku generate --min-level hard` is the match for QQwing's expert:
/// every puzzle it makes needs more than singles, intersections and pairs,
/// so QQwing's solver has to guess on each.
#[test]
fn qqwing_rates_every_puzzle_of_hard_or_harder_expert() {
    if !have("qqwing") {
        skip_until(
            "qqwing_rates_every_puzzle_of_hard_or_harder_expert",
            "qqwing is not installed",
            ".ci/setup-qqwing.sh",
        );
        return;
    }
    let mut cmd = Command::new(crate::support::sudoku_cli());
    cmd.args(["generate", "--local", "-n", "40", "--seed", "9"])
        .args(["--min-level", "hard"]);
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "{}", out.both());
    let puzzles: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(puzzles.len(), 40, "{}", out.stdout);
    let path = std::env::temp_dir().join(format!("hard-plus-{}.txt", std::process::id()));
    std::fs::write(&path, out.stdout.as_bytes()).unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("qqwing --solve --stats < \"$0\"")
        .arg(&path);
    let rated = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_file(&path);
    assert!(rated.success, "{}", rated.both());
    let levels: Vec<&str> = rated
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Difficulty: "))
        .collect();
    assert_eq!(levels.len(), 40, "{}", rated.stdout);
    for (p, level) in puzzles.iter().zip(&levels) {
        assert_eq!(*level, "Expert", "qqwing rates {p} {level}");
    }
}
