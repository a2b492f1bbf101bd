//! Solver throughput on the public data sets in data/.
//!
//! `cargo bench --bench solver` prints, for each set and mode, puzzles/s,
//! us/puzzle and guesses/puzzle as the median of several runs.
//!
//! Environment knobs:
//! - `BENCH_SET=17_clue` only sets whose file name contains this;
//! - `BENCH_MODE=one|count2|both` (default both);
//! - `BENCH_RUNS=5` runs per figure (median reported);
//! - `BENCH_MIN_SECS=0.5` each run repeats the set until this much time passed;
//! - `BENCH_ABLATION=1` also print each figure with each rule switched off
//!   (or on, for a rule off by default); these run the generic code path, so
//!   `default_generic_path` is their baseline (`benches/ablation.sh` counts
//!   the same by instructions);
//! - `BENCH_BUDGET=1` also print the cost of the node budget: one huge budget
//!   against resuming in slices of 1000 and 100 nodes;
//! - `BENCH_FIXED=1` no timing loop and no validation: one pass over each set
//!   (first `BENCH_FIRST` puzzles) per mode, for instruction counting under
//!   callgrind; `BENCH_SLICE=n` makes that pass resume in slices of n nodes;
//!   `BENCH_FIXED_CONFIG=no_box_line` (any ablation label) runs that rule set.

use std::hint::black_box;
use std::time::{Duration, Instant};

use sudoku_core::puzzle::Grid;
use sudoku_core::solver::{Progress, Rules, Solver};

struct Set {
    name: String,
    puzzles: Vec<Grid>,
}

fn load_sets(filter: &str) -> Vec<Set> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("data/ is readable")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("puzzles") && n.contains(filter))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
            let puzzles = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| Grid::from_text(l).expect("a valid puzzle line"))
                .collect();
            Set { name, puzzles }
        })
        .collect()
}

#[derive(Clone, Copy)]
enum How {
    /// One call with an unlimited budget.
    Whole,
    /// Resume in slices of this many nodes until done.
    Slices(u64),
}

/// Solves every puzzle once; returns total guesses.
#[inline(never)]
fn pass(puzzles: &[Grid], limit: u32, rules: Rules, how: How) -> u64 {
    let mut guesses = 0;
    // One solver for the pass, restarted per puzzle, as the service and the
    // CLI use it.
    let mut s = Solver::new(&Grid::EMPTY, 1);
    for p in puzzles {
        s.restart_with_rules(black_box(p), limit, rules);
        match how {
            How::Whole => {
                s.resume(u64::MAX);
            }
            How::Slices(n) => while s.resume(n) == Progress::Paused {},
        }
        let a = black_box(s.answer());
        guesses += a.stats.guesses;
    }
    guesses
}

/// Checks every answer independently (untimed).
fn validate(set: &Set, limit: u32, rules: Rules) {
    let serg = set.name.contains("serg");
    for p in &set.puzzles {
        let mut s = Solver::with_rules(p, limit, rules);
        s.resume(u64::MAX);
        let a = s.answer();
        let sol = a.solution.expect("every benchmark puzzle has a solution");
        assert!(sol.is_valid_solution() && p.is_kept_by(&sol), "{p}");
        let want = if limit == 1 {
            1
        } else if serg {
            2
        } else {
            1
        };
        assert_eq!(a.count, want, "{p}");
        assert!(a.complete);
    }
}

struct Figure {
    pps: f64,
    guesses: f64,
}

fn measure(set: &Set, limit: u32, rules: Rules, how: How, runs: usize, min: Duration) -> Figure {
    let mut rates = Vec::with_capacity(runs);
    let mut guesses = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let mut solved = 0u64;
        loop {
            guesses = pass(&set.puzzles, limit, rules, how);
            solved += set.puzzles.len() as u64;
            if start.elapsed() >= min {
                break;
            }
        }
        rates.push(solved as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Figure {
        pps: rates[rates.len() / 2],
        guesses: guesses as f64 / set.puzzles.len() as f64,
    }
}

fn print(set: &Set, mode: &str, label: &str, f: &Figure) {
    println!(
        "RESULT set={} mode={} config={} n={} median_pps={:.0} us_per_puzzle={:.3} guesses_per_puzzle={:.2}",
        set.name,
        mode,
        label,
        set.puzzles.len(),
        f.pps,
        1e6 / f.pps,
        f.guesses
    );
}

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let filter = std::env::var("BENCH_SET").unwrap_or_default();
    let mode = std::env::var("BENCH_MODE").unwrap_or_else(|_| "both".into());
    let runs = env_or("BENCH_RUNS", 5usize).max(1);
    let min = Duration::from_secs_f64(env_or("BENCH_MIN_SECS", 0.5f64));
    let ablation = std::env::var("BENCH_ABLATION").is_ok_and(|v| v == "1");
    let budget = std::env::var("BENCH_BUDGET").is_ok_and(|v| v == "1");
    let fixed = std::env::var("BENCH_FIXED").is_ok_and(|v| v == "1");
    let first = env_or("BENCH_FIRST", usize::MAX);
    let slice = env_or("BENCH_SLICE", 0u64);

    let modes: Vec<(&str, u32)> = match mode.as_str() {
        "one" => vec![("one", 1)],
        "count2" => vec![("count2", 2)],
        _ => vec![("one", 1), ("count2", 2)],
    };
    let change = |f: fn(&mut Rules)| {
        let mut r = Rules::DEFAULT;
        f(&mut r);
        r
    };
    let ablations: Vec<(&str, Rules)> = vec![
        ("default_generic_path", change(|r| r.generic = true)),
        ("no_row_singles", change(|r| r.row_singles = false)),
        ("no_box_line", change(|r| r.box_line = false)),
        ("no_naked_singles", change(|r| r.naked_singles = false)),
        (
            "no_hidden_singles",
            change(|r| r.hidden_singles_after = u64::MAX),
        ),
        (
            "always_hidden_singles",
            change(|r| r.hidden_singles_after = 0),
        ),
        (
            "never_by_peers",
            change(|r| r.branch_by_peers_after = u64::MAX),
        ),
        ("always_by_peers", change(|r| r.branch_by_peers_after = 0)),
    ];

    println!(
        "INFO size_of::<Solver>()={} bytes",
        std::mem::size_of::<Solver>()
    );
    for mut set in load_sets(&filter) {
        set.puzzles.truncate(first);
        for &(mname, limit) in &modes {
            if fixed {
                let how = if slice == 0 {
                    How::Whole
                } else {
                    How::Slices(slice)
                };
                // BENCH_FIXED_CONFIG picks one rule set, so callgrind can
                // count each ablation on its own.
                let want = std::env::var("BENCH_FIXED_CONFIG").unwrap_or_else(|_| "default".into());
                let rules = if want == "default" {
                    Rules::DEFAULT
                } else {
                    ablations
                        .iter()
                        .find(|(l, _)| *l == want)
                        .expect("BENCH_FIXED_CONFIG names an ablation")
                        .1
                };
                let g = pass(&set.puzzles, limit, rules, how);
                println!(
                    "FIXED set={} mode={} config={} n={} slice={} guesses={}",
                    set.name,
                    mname,
                    want,
                    set.puzzles.len(),
                    slice,
                    g
                );
                continue;
            }
            validate(&set, limit, Rules::DEFAULT);
            let all = measure(&set, limit, Rules::DEFAULT, How::Whole, runs, min);
            print(&set, mname, "default", &all);
            if ablation {
                for &(label, rules) in &ablations {
                    validate(&set, limit, rules);
                    let f = measure(&set, limit, rules, How::Whole, runs, min);
                    print(&set, mname, label, &f);
                }
            }
            if budget {
                // Interleave so drift in machine load hits both alike.
                for n in [1000u64, 100] {
                    let mut ratios = Vec::new();
                    for _ in 0..runs {
                        let w = measure(&set, limit, Rules::DEFAULT, How::Whole, 1, min);
                        let s = measure(&set, limit, Rules::DEFAULT, How::Slices(n), 1, min);
                        ratios.push(s.pps / w.pps);
                    }
                    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
                    println!(
                        "BUDGET set={} mode={} slice_nodes={} sliced_over_whole_median={:.4} runs={:?}",
                        set.name,
                        mname,
                        n,
                        ratios[ratios.len() / 2],
                        ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}
