//! One side of benches/sizes-peer.sh: `yasgs-bench ours|yasgs FILE [FROM]
//! [LIMIT_MS] [FIRST]` solves the puzzles of a data/sizes/ set from index
//! FROM on, one thread, one puzzle at a time, and prints a line per puzzle:
//! `P index microseconds ok|bad` (`bad`: no answer, or an answer that is not
//! a valid solution keeping the givens, by the check below, which shares no
//! code with either solver). Each timing covers what a caller pays: reading
//! the puzzle's text, solving (any one solution) and getting the answer.
//!
//! yasgs has no way to stop a search, so its side runs each puzzle on a
//! worker thread; past LIMIT_MS it prints `T index` and the process exits
//! (which ends the worker). The script starts it again at the next index.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::Progress;
use sudoku_core::solver::sized::SizedSolver;

/// Cell values of a text line: 0 for a blank, 1-9, then A/a = 10 on.
fn values(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| match c {
            '.' | '0' => Some(0),
            '1'..='9' => Some(c as u8 - b'0'),
            'a'..='z' => Some(c as u8 - b'a' + 10),
            'A'..='Z' => Some(c as u8 - b'A' + 10),
            _ => None,
        })
        .collect()
}

/// Every row, column and square box holds 1..=n once, and every given stays.
fn valid(givens: &[u8], answer: &[u8]) -> bool {
    let n = (givens.len() as f64).sqrt().round() as usize;
    let b = (n as f64).sqrt().round() as usize;
    if answer.len() != n * n || b * b != n {
        return false;
    }
    if givens.iter().zip(answer).any(|(&g, &a)| g != 0 && g != a) {
        return false;
    }
    let unit_ok = |cells: &mut dyn Iterator<Item = usize>| {
        let mut seen = vec![false; n + 1];
        for i in cells {
            let v = answer[i] as usize;
            if !(1..=n).contains(&v) || std::mem::replace(&mut seen[v], true) {
                return false;
            }
        }
        true
    };
    (0..n).all(|u| {
        let (br, bc) = (u / b * b, u % b * b);
        unit_ok(&mut (0..n).map(|c| u * n + c))
            && unit_ok(&mut (0..n).map(|r| r * n + u))
            && unit_ok(&mut (0..n).map(|k| (br + k / b) * n + bc + k % b))
    })
}

fn puzzles(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

fn ours(text: &str, solver: &mut Option<SizedSolver>) -> Option<Vec<u8>> {
    let n = (text.len() as f64).sqrt().round() as usize;
    let grid = SizedGrid::from_text(Shape::for_side(n)?, text).ok()?;
    let s = solver.get_or_insert_with(|| SizedSolver::new(&grid, 1));
    s.restart(&grid, 1);
    while s.resume(u64::MAX) == Progress::Paused {}
    Some(s.solution()?.values().to_vec())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (side, file) = match (args.get(1), args.get(2)) {
        (Some(s), Some(f)) if s == "ours" || s == "yasgs" => (s.as_str(), f.as_str()),
        _ => {
            eprintln!("usage: yasgs-bench ours|yasgs FILE [FROM] [LIMIT_MS] [FIRST]");
            std::process::exit(2);
        }
    };
    let num = |i: usize, d: u64| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(d);
    let from = num(3, 0) as usize;
    let limit = Duration::from_millis(num(4, 10_000));
    let first = num(5, u64::MAX) as usize;
    let all = puzzles(file);
    let mut solver = None;
    for (i, text) in all.iter().enumerate().take(first).skip(from) {
        let givens = values(text).unwrap_or_default();
        let (answer, took) = if side == "ours" {
            let t = Instant::now();
            let a = ours(text, &mut solver);
            (a, t.elapsed())
        } else {
            // yasgs reads 10..35 as lower-case letters.
            let input = text.to_ascii_lowercase();
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let t = Instant::now();
                let mut out = yasgs::solve(&input, 1);
                let took = t.elapsed();
                let _ = tx.send((out.pop(), took));
            });
            match rx.recv_timeout(limit) {
                Ok((a, took)) => (a.and_then(|a| values(&a)), took),
                Err(_) => {
                    println!("T {i}");
                    std::process::exit(0);
                }
            }
        };
        let ok = answer.is_some_and(|a| valid(&givens, &a));
        println!(
            "P {i} {:.1} {}",
            took.as_secs_f64() * 1e6,
            if ok { "ok" } else { "bad" }
        );
    }
}
