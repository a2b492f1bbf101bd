//! The sized engine's figures: `cargo bench --bench sizes` prints
//! - the cost of generality: the sized engine against the fast 9x9 one on
//!   every 9x9 set in data/, single thread, as a ratio (fast / sized
//!   puzzles per second, so 5.0 means the sized engine takes 5x as long);
//! - median and p99 time per puzzle on each set of data/sizes/.
//!
//! Knobs: `BENCH_FIRST=n` only the first n puzzles of each set.

use std::time::{Duration, Instant};

use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::sized::SizedSolver;
use sudoku_core::solver::{Progress, Solver};

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

fn main() {
    let first = std::env::var("BENCH_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let mut names: Vec<_> = std::fs::read_dir(&root)
        .expect("data/ is readable")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("puzzles"))
        .collect();
    names.sort();
    println!("9x9: fast engine against the sized one, any solution, one thread");
    let mut sized = SizedSolver::new(&SizedGrid::empty(Shape::CLASSIC), 1);
    for name in names {
        let puzzles: Vec<Grid> = lines(&root.join(&name))
            .iter()
            .take(first)
            .filter_map(|l| Grid::from_text(l.get(..81)?).ok())
            .collect();
        let mut fast = Solver::new(&Grid::EMPTY, 1);
        let t = Instant::now();
        for p in &puzzles {
            fast.restart(p, 1);
            fast.resume(u64::MAX);
            assert!(fast.answer().solution.is_some());
        }
        let fast_time = t.elapsed();
        let sized_grids: Vec<SizedGrid> = puzzles.iter().map(SizedGrid::from_grid).collect();
        let t = Instant::now();
        for p in &sized_grids {
            sized.restart(p, 1);
            while sized.resume(u64::MAX) == Progress::Paused {}
            assert_eq!(sized.answer().count, 1);
        }
        let sized_time = t.elapsed();
        let us = |d: Duration| d.as_secs_f64() * 1e6 / puzzles.len().max(1) as f64;
        println!(
            "  {name:32} {:6} puzzles  fast {:9.1} us/puzzle  sized {:9.1} us/puzzle  ratio {:5.1}x",
            puzzles.len(),
            us(fast_time),
            us(sized_time),
            sized_time.as_secs_f64() / fast_time.as_secs_f64().max(1e-9)
        );
    }
    println!("sized sets: time per puzzle, any solution, one thread");
    let dir = root.join("sizes");
    let mut sets: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    sets.sort();
    for name in sets {
        let mut times = Vec::new();
        let mut shape = None;
        for l in lines(&dir.join(&name)).iter().take(first) {
            let n = (l.chars().count() as f64).sqrt() as usize;
            let Some(s) = Shape::for_side(n) else {
                continue;
            };
            let Ok(g) = SizedGrid::from_text(s, l) else {
                continue;
            };
            shape = Some(s);
            let t = Instant::now();
            sized.restart(&g, 1);
            while sized.resume(u64::MAX) == Progress::Paused {}
            times.push(t.elapsed());
            let sol = sized.solution().expect("a solution");
            assert!(sol.is_valid_solution() && g.is_kept_by(&sol), "{name}");
        }
        times.sort();
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        if let Some(s) = shape {
            println!(
                "  {name:24} {:14} {:4} puzzles  median {:>10.3?}  p99 {:>10.3?}",
                s.describe(),
                times.len(),
                at(0.5),
                at(0.99)
            );
        }
    }
}
