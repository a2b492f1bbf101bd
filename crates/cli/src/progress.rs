//! The progress line of `sudoku solve` on a terminal: puzzles done,
//! puzzles per second, failures so far and the elapsed time.
//!
//! Counting costs the writer one relaxed atomic add per puzzle; a thread of
//! its own turns the counts into the line ten times a second, and indicatif
//! draws it (at most ten times a second too). When stderr is not a
//! terminal, or with -q, there is no line and no thread.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// What the writer counts.
#[derive(Default)]
pub struct Counts {
    pub done: AtomicU64,
    pub failed: AtomicU64,
    stop: AtomicBool,
}

/// Writes lines to stderr, around the progress line when there is one.
#[derive(Clone, Default)]
pub struct Say(Option<ProgressBar>);

impl Say {
    /// Writes `line` to stderr; the progress line is drawn again below it.
    pub fn line(&self, line: &str) {
        match &self.0 {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

/// The progress line, while it runs.
pub struct Progress {
    counts: Arc<Counts>,
    ticker: Option<std::thread::JoinHandle<()>>,
    say: Say,
}

impl Progress {
    /// Starts the line when stderr is a terminal and `quiet` is off.
    pub fn start(quiet: bool) -> Progress {
        let counts = Arc::new(Counts::default());
        if quiet || !std::io::stderr().is_terminal() {
            return Progress {
                counts,
                ticker: None,
                say: Say(None),
            };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
        bar.set_style(
            ProgressStyle::with_template("{msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        let ticker = {
            let (bar, counts) = (bar.clone(), counts.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                loop {
                    let stop = counts.stop.load(Ordering::Relaxed);
                    bar.set_message(line(&counts, started.elapsed()));
                    if stop {
                        bar.finish();
                        return;
                    }
                    std::thread::park_timeout(Duration::from_millis(100));
                }
            })
        };
        Progress {
            counts,
            ticker: Some(ticker),
            say: Say(Some(bar)),
        }
    }

    /// The counters the writer adds to.
    pub fn counts(&self) -> Arc<Counts> {
        self.counts.clone()
    }

    /// How to write to stderr without breaking the line.
    pub fn say(&self) -> Say {
        self.say.clone()
    }

    /// Draws the final figures and leaves them on the terminal.
    pub fn finish(mut self) {
        self.counts.stop.store(true, Ordering::Relaxed);
        if let Some(ticker) = self.ticker.take() {
            ticker.thread().unpark();
            let _ = ticker.join();
        }
    }
}

/// `12,345 puzzles  4,567/s  0 failed  00:00:03`
fn line(counts: &Counts, elapsed: Duration) -> String {
    let done = counts.done.load(Ordering::Relaxed);
    let failed = counts.failed.load(Ordering::Relaxed);
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let s = elapsed.as_secs();
    format!(
        "{} puzzles  {}/s  {} failed  {:02}:{:02}:{:02}",
        grouped(done),
        grouped(rate as u64),
        grouped(failed),
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// `n` with thousands separated by commas.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_done_rate_failures_and_time() {
        let counts = Counts::default();
        counts.done.store(12_345, Ordering::Relaxed);
        counts.failed.store(3, Ordering::Relaxed);
        assert_eq!(
            line(&counts, Duration::from_millis(3_725_500)),
            "12,345 puzzles  3/s  3 failed  01:02:05"
        );
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000_000), "1,000,000");
    }
}
