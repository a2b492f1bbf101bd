//! What `sudoku bench` measures: each worker's latencies, errors and
//! checked answers, and a process's CPU time and memory from /proc.

use std::collections::BTreeMap;
use std::time::Instant;

use hdrhistogram::Histogram;

use sudoku_core::puzzle::Grid;
use sudoku_grpc::pb;
use sudoku_grpc::service::{AnyGrid, read_grid};

/// What one worker (a unary caller or a stream) saw.
pub(super) struct Tally {
    /// Latency in microseconds of each successful call or message round trip.
    pub(super) hist: Histogram<u64>,
    /// Latency in microseconds of each failed unary or health call: shed
    /// calls must fail fast.
    pub(super) err_hist: Histogram<u64>,
    /// Successful calls (unary/health) or messages (stream).
    pub(super) calls: u64,
    /// Puzzles answered with a solution (or health answers).
    pub(super) answered: u64,
    /// Call statuses other than OK, by code; per-item errors as "item CODE".
    pub(super) errors: BTreeMap<String, u64>,
    /// Answers that are not a checked solution, by reason.
    pub(super) bad: BTreeMap<String, u64>,
    /// Solutions checked with --verify.
    pub(super) verified: u64,
    /// Sum of the server's SolveStats.solve_time_us over the answers.
    pub(super) solve_us: u64,
    /// Sum of SolveStats.nodes over the answers.
    pub(super) nodes: u64,
}

impl Tally {
    pub(super) fn new() -> Tally {
        Tally {
            hist: Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"),
            err_hist: Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"),
            calls: 0,
            answered: 0,
            errors: BTreeMap::new(),
            bad: BTreeMap::new(),
            verified: 0,
            solve_us: 0,
            nodes: 0,
        }
    }

    pub(super) fn record(&mut self, started: Instant) {
        let us = started.elapsed().as_micros() as u64;
        self.hist.saturating_record(us.max(1));
    }

    pub(super) fn failed(&mut self, started: Instant, what: String) {
        let us = started.elapsed().as_micros() as u64;
        self.err_hist.saturating_record(us.max(1));
        self.error(what);
    }

    pub(super) fn error(&mut self, what: String) {
        *self.errors.entry(what).or_default() += 1;
    }

    pub(super) fn bad(&mut self, what: String) {
        *self.bad.entry(what).or_default() += 1;
    }

    pub(super) fn merge(&mut self, other: Tally) {
        let _ = self.hist.add(&other.hist);
        let _ = self.err_hist.add(&other.err_hist);
        self.calls += other.calls;
        self.answered += other.answered;
        self.verified += other.verified;
        self.solve_us += other.solve_us;
        self.nodes += other.nodes;
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        for (k, v) in other.bad {
            *self.bad.entry(k).or_default() += v;
        }
    }

    /// Checks one answer to `puzzle`; counts it as answered or bad.
    pub(super) fn check(&mut self, puzzle: &Grid, solution: Option<&pb::Solution>, verify: bool) {
        let Some(s) = solution else {
            self.bad("response without a solution".into());
            return;
        };
        if let Some(stats) = &s.stats {
            self.solve_us += stats.solve_time_us;
            self.nodes += stats.nodes;
        }
        if s.outcome() != pb::Outcome::Solved {
            self.bad(format!("outcome {}", s.outcome().as_str_name()));
            return;
        }
        self.answered += 1;
        if !verify {
            return;
        }
        let grid = s.grid.as_ref().map(|g| match read_grid(g)? {
            AnyGrid::Nine(g, _) => Ok(g),
            AnyGrid::Sized(g, _) => Err(format!("a {} grid, not 9x9", g.shape().describe())),
        });
        match grid {
            Some(Ok(g)) if g.is_valid_solution() && puzzle.is_kept_by(&g) => self.verified += 1,
            Some(Ok(g)) if !g.is_valid_solution() => self.bad("invalid solution".into()),
            Some(Ok(_)) => self.bad("solution does not keep the givens".into()),
            Some(Err(e)) => self.bad(format!("unreadable solution grid: {e}")),
            None => self.bad("solved without a grid".into()),
        }
    }
}

/// CPU seconds (user + system) of a process, from /proc/PID/stat.
pub(super) fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: skip past it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is fields[0]; utime is field 14, stime field 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux ABI.
    Some((utime + stime) as f64 / 100.0)
}

/// A line of /proc/PID/status, such as VmHWM, in kB.
pub(super) fn status_kb(pid: &str, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
