//! Every puzzle of the public benchmark sets in data/, solved and counted,
//! each answer checked independently of the solver: the solution must keep
//! the rules (`Grid::is_valid_solution`) and the givens (`Grid::is_kept_by`).
//! Counts with limit 2: 2 for every serg puzzle (all have several
//! solutions), 1 for every puzzle of the other sets.

use sudoku_core::puzzle::Grid;
use sudoku_core::solver::{self, Progress, Rules, Solver};

fn load(name: &str) -> Vec<Grid> {
    let path = format!("{}/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let puzzles: Vec<Grid> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| Grid::from_text(l).unwrap_or_else(|e| panic!("{path}: {l}: {e}")))
        .collect();
    assert!(!puzzles.is_empty(), "{path} has no puzzles");
    puzzles
}

fn check_set(name: &str, expected_count: u32) {
    let puzzles = load(name);
    for (line, p) in puzzles.iter().enumerate() {
        let one = solver::run(p, 1, u64::MAX);
        assert!(one.complete, "{name} #{line}: not complete");
        assert_eq!(one.count, 1, "{name} #{line}: {p}");
        let sol = one.solution.unwrap();
        assert!(sol.is_valid_solution(), "{name} #{line}: invalid {sol}");
        assert!(p.is_kept_by(&sol), "{name} #{line}: givens lost in {sol}");

        let two = solver::run(p, 2, u64::MAX);
        assert!(two.complete, "{name} #{line}: not complete");
        assert_eq!(two.count, expected_count, "{name} #{line}: {p}");
        let sol2 = two.solution.unwrap();
        assert!(sol2.is_valid_solution() && p.is_kept_by(&sol2));
        if expected_count == 1 {
            // One solution: both modes must find it.
            assert_eq!(sol2, sol, "{name} #{line}");
            // The same tree, explored whole when counting, as long as the
            // rules do not depend on the search so far. By default two
            // switch on after a number of guesses, and the two modes try
            // digits in different orders, so they reach that number at
            // different points: pin the switches to compare trees.
            for after in [0, u64::MAX] {
                let rules = Rules {
                    branch_by_peers_after: after,
                    hidden_singles_after: after,
                    ..Rules::DEFAULT
                };
                let nodes = |limit| {
                    let mut s = Solver::with_rules(p, limit, rules);
                    s.resume(u64::MAX);
                    s.answer().stats.nodes
                };
                assert!(nodes(2) >= nodes(1), "{name} #{line}: {rules:?}");
            }
        }
    }
    eprintln!("{name}: {} puzzles ok", puzzles.len());
}

#[test]
fn seventeen_clue() {
    check_set("puzzles2_17_clue", 1);
}

#[test]
fn magictour_top1465() {
    check_set("puzzles3_magictour_top1465", 1);
}

#[test]
fn forum_hardest() {
    check_set("puzzles6_forum_hardest_1106", 1);
}

#[test]
fn serg_benchmark_all_have_two_solutions() {
    check_set("puzzles7_serg_benchmark", 2);
}

/// A solver paused every few nodes gives the same answer (stats included)
/// as one uninterrupted run, and reports `complete = false` while paused.
#[test]
fn sliced_runs_match_whole_runs_on_hard_puzzles() {
    for p in load("puzzles6_forum_hardest_1106").iter().take(60) {
        for limit in [1, 2] {
            let whole = solver::run(p, limit, u64::MAX);
            let mut s = Solver::new(p, limit);
            let mut slices = 0u32;
            while s.resume(7) == Progress::Paused {
                slices += 1;
                let partial = s.answer();
                assert!(!partial.complete);
            }
            assert_eq!(s.answer(), whole, "{p}");
            assert!(slices as u64 >= (whole.stats.nodes - 1) / 7);
        }
    }
}

#[test]
fn budget_is_respected() {
    for p in load("puzzles6_forum_hardest_1106").iter().take(40) {
        let whole = solver::run(p, 2, u64::MAX);
        if whole.stats.nodes < 10 {
            continue;
        }
        let cut = solver::run(p, 2, whole.stats.nodes / 2);
        assert!(!cut.complete);
        assert_eq!(cut.stats.nodes, whole.stats.nodes / 2);
    }
}
