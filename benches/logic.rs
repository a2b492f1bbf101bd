//! The logical solver: rating speed, and agreement with QQwing's levels.
//!
//! `cargo bench --bench logic -- rate FILE...` rates every puzzle of each file
//! (one puzzle per line, 81 characters, '.' or '0' for blanks; lines starting
//! with '#' skipped) `BENCH_RUNS` times (default 3) and prints
//! `RESULT file=... puzzles=... median_pps=... us_per_puzzle=...` and the
//! label and hardest-technique counts. `BENCH_RUNS=1 BENCH_QUIET=1` rates
//! each file once and prints one line: what benches/rate.sh times against
//! `qqwing --solve --stats`.
//!
//! `cargo bench --bench logic -- agree LEVEL=FILE...` rates the puzzles QQwing
//! generated at each level and prints a table of QQwing level against label
//! and against hardest technique (benches/agree.sh makes the files).
//!
//! `cargo bench --bench logic -- serate [FILE]` rates the puzzles of the
//! Sudoku Explainer reference set (default data/se_reference.txt: puzzle,
//! serate's ER, EP and ED, group, index) and prints, per group, how often
//! SE's techniques finish, how often ER, and EP with ED, equal serate's, and
//! the median and p99 time to rate a puzzle (`BENCH_VERBOSE=1` lists the
//! puzzles whose ER differs).

use std::collections::BTreeMap;
use std::time::Instant;

use sudoku_core::logic::{self, Label, Rating, Technique};
use sudoku_core::puzzle::Grid;

fn load(path: &str) -> Vec<Grid> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| Grid::from_text(l).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rate_all(puzzles: &[Grid]) -> Vec<Rating> {
    puzzles
        .iter()
        .map(|g| logic::rate(g).unwrap_or_else(|e| panic!("{g:?}: {e}")))
        .collect()
}

fn rate_files(files: &[String]) {
    let runs = env_usize("BENCH_RUNS", 3).max(1);
    let quiet = std::env::var_os("BENCH_QUIET").is_some();
    for path in files {
        let puzzles = load(path);
        let mut pps = Vec::new();
        let mut ratings = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            ratings = rate_all(&puzzles);
            pps.push(puzzles.len() as f64 / t.elapsed().as_secs_f64());
        }
        pps.sort_by(f64::total_cmp);
        let median = pps[pps.len() / 2];
        let name = path.rsplit('/').next().unwrap_or(path);
        let extreme = ratings.iter().filter(|r| !r.solved).count();
        println!(
            "RESULT file={name} puzzles={} median_pps={median:.0} us_per_puzzle={:.1} unfinished={extreme}",
            puzzles.len(),
            1e6 / median
        );
        if quiet {
            continue;
        }
        let mut labels = BTreeMap::new();
        let mut hardest = BTreeMap::new();
        for r in &ratings {
            *labels.entry(r.label).or_insert(0) += 1;
            *hardest.entry(r.hardest).or_insert(0) += 1;
        }
        for (l, n) in labels {
            println!("  label {l}: {n}");
        }
        for (t, n) in hardest {
            println!("  hardest {}: {n}", t.map_or("NONE", Technique::name));
        }
    }
}

fn agree(args: &[String]) {
    let mut rows = Vec::new();
    for arg in args {
        let (level, path) = arg.split_once('=').expect("LEVEL=FILE");
        let ratings = rate_all(&load(path));
        rows.push((level.to_owned(), ratings));
    }
    print!("| QQwing level | puzzles |");
    for l in Label::ALL {
        print!(" {l} |");
    }
    println!();
    print!("|---|---|");
    for _ in Label::ALL {
        print!("---|");
    }
    println!();
    for (level, ratings) in &rows {
        print!("| {level} | {} |", ratings.len());
        for &l in Label::ALL {
            print!(" {} |", ratings.iter().filter(|r| r.label == l).count());
        }
        println!();
    }
    println!();
    let used: Vec<Option<Technique>> = {
        let mut v: Vec<_> = rows
            .iter()
            .flat_map(|(_, rs)| rs.iter().map(|r| r.hardest))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    print!("| QQwing level | hardest: |");
    for t in &used {
        print!(" {} |", t.map_or("NONE", Technique::name));
    }
    println!();
    print!("|---|---|");
    for _ in &used {
        print!("---|");
    }
    println!();
    for (level, ratings) in &rows {
        print!("| {level} | |");
        for &t in &used {
            let n = ratings.iter().filter(|r| r.hardest == t).count();
            let unfinished = ratings
                .iter()
                .filter(|r| r.hardest == t && !r.solved)
                .count();
            if unfinished > 0 {
                print!(" {n} ({unfinished} unfinished) |");
            } else {
                print!(" {n} |");
            }
        }
        println!();
    }
}

/// Agreement with serate on the reference set, per group: ER, and EP with
/// ED, and the time to rate each puzzle (uniqueness check and SE's path).
fn serate(args: &[String]) {
    let path = args.first().cloned().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/data/se_reference.txt").to_owned()
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    /// serate's ER, EP and ED, our rating, and its time in microseconds.
    type Row = ([f32; 3], Rating, f64);
    let mut groups: Vec<(String, Vec<Row>)> = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f[i].parse::<f32>().expect("a rating");
        let (puzzle, se, group) = (f[0], [num(1), num(2), num(3)], f[4]);
        let g = Grid::from_text(puzzle).unwrap_or_else(|e| panic!("{path}: {e}"));
        let start = Instant::now();
        let r = logic::rate(&g).unwrap_or_else(|e| panic!("{puzzle}: {e}"));
        let us = start.elapsed().as_secs_f64() * 1e6;
        if std::env::var_os("BENCH_VERBOSE").is_some() && (r.se_rating - se[0]).abs() > 0.05 {
            eprintln!(
                "{puzzle} {group}: serate {} ours {} ({:?})",
                se[0], r.se_rating, r.hardest
            );
        }
        match groups.iter_mut().find(|(name, _)| name == group) {
            Some((_, rows)) => rows.push((se, r, us)),
            None => groups.push((group.to_owned(), vec![(se, r, us)])),
        }
    }
    println!("reference: {path}");
    println!(
        "| group | puzzles | serate ER (range, median) | rated (ER < 20) | ER equal | within 0.1 | EP and ED equal | ms a puzzle (median, p99) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut all = [0usize; 5];
    let pct = |k: usize, n: usize| 100.0 * k as f64 / n.max(1) as f64;
    for (group, rows) in &groups {
        let mut ers: Vec<f32> = rows.iter().map(|(se, _, _)| se[0]).collect();
        ers.sort_by(f32::total_cmp);
        let mut times: Vec<f64> = rows.iter().map(|&(_, _, us)| us).collect();
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize] / 1000.0;
        let near = |a: f32, b: f32, tol: f32| (a - b).abs() <= tol + 1e-4;
        let rated = rows.iter().filter(|(_, r, _)| r.solved).count();
        let equal = rows
            .iter()
            .filter(|(se, r, _)| near(r.se_rating, se[0], 0.0))
            .count();
        let within = rows
            .iter()
            .filter(|(se, r, _)| near(r.se_rating, se[0], 0.1))
            .count();
        let pd = rows
            .iter()
            .filter(|(se, r, _)| near(r.ep, se[1], 0.0) && near(r.ed, se[2], 0.0))
            .count();
        println!(
            "| {group} | {} | {:.1}-{:.1}, {:.1} | {rated} | {equal} | {within} | {pd} | {:.2}, {:.2} |",
            rows.len(),
            ers[0],
            ers[ers.len() - 1],
            ers[(ers.len() - 1) / 2],
            at(0.5),
            at(0.99)
        );
        for (k, v) in [rows.len(), rated, equal, within, pd]
            .into_iter()
            .enumerate()
        {
            all[k] += v;
        }
    }
    println!(
        "| all | {} | | {} | {} ({:.1}%) | {} ({:.1}%) | {} ({:.1}%) | |",
        all[0],
        all[1],
        all[2],
        pct(all[2], all[0]),
        all[3],
        pct(all[3], all[0]),
        all[4],
        pct(all[4], all[0])
    );
}

fn main() {
    // cargo bench passes --bench; the rest are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.first().map(String::as_str) {
        Some("rate") => rate_files(&args[1..]),
        Some("agree") => agree(&args[1..]),
        Some("serate") => serate(&args[1..]),
        _ => {
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data");
            rate_files(&[
                format!("{dir}/puzzles2_17_clue"),
                format!("{dir}/puzzles3_magictour_top1465"),
            ]);
        }
    }
}
