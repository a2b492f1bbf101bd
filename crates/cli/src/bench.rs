//! `sudoku bench`: a load generator for a running server, through the same
//! tonic client stack real callers use.
//!
//! Modes:
//! - `unary`: `Solve` calls, `--concurrency` in flight over `--connections`
//!   HTTP/2 connections; latency per call.
//! - `stream`: `--streams` `SolveBatch` calls of `--batch` puzzles per message,
//!   the file repeated `--repeat` times; messages are built lazily as the
//!   transport asks for them (memory is bounded by the messages in flight, not
//!   the repeated input); latency per message round trip; every id must come
//!   back exactly once, in a response that answers exactly its message.
//! - `health`: `grpc.health.v1.Health/Check` at the same concurrency: the
//!   no-op baseline for Solve.
//!
//! With `--server-pid` it reads the server's CPU time (/proc/PID/stat,
//! utime+stime) before and after, its lifetime peak RSS (/proc/PID/status
//! VmHWM), and the peak of its RSS during this run (VmRSS sampled every
//! 10 ms); the client's own CPU and peak RSS are always printed. The last line of the
//! report is `BENCH key=value ...` for scripts.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::{Args, ValueEnum};

use super::callers::{Bound, Corpus, StreamPlan, health_worker, stream_worker, unary_worker};
use super::connect::{TlsArgs, connect};
use super::tally::{Tally, cpu_seconds, status_kb};

/// What to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Solve calls at --concurrency over --connections.
    Unary,
    /// SolveBatch streams (--streams) of --batch puzzles per message.
    Stream,
    /// grpc.health.v1 Check at --concurrency: the no-op baseline.
    Health,
}

/// Arguments of `sudoku bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Puzzle file (any format `sudoku solve` reads); not used by --mode health.
    file: Option<PathBuf>,
    /// Server to load: host:port, or an http:// or https:// URL (only
    /// 127.0.0.1 in the benchmark script).
    #[arg(long, env = "SUDOKU_SERVER", default_value = "http://127.0.0.1:50051")]
    server: String,
    #[command(flatten)]
    tls: TlsArgs,
    /// What to drive.
    #[arg(long, value_enum, default_value = "unary")]
    mode: Mode,
    /// Calls in flight at once (unary, health).
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// HTTP/2 connections; calls and streams are spread over them round-robin.
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Stop starting calls (or sending messages) after this many seconds.
    #[arg(long)]
    duration: Option<f64>,
    /// Stop after this many calls (unary, health). Without --duration or
    /// --requests: one pass over the file times --repeat (unary), 5 s (health).
    #[arg(long)]
    requests: Option<u64>,
    /// SolveBatch streams at once (stream).
    #[arg(long, default_value_t = 1)]
    streams: usize,
    /// Puzzles per SolveBatch request message (stream).
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Send the file this many times over (stream; unary default count).
    #[arg(long, default_value_t = 1)]
    repeat: u64,
    /// Check that every solution is valid and keeps the puzzle's givens.
    #[arg(long)]
    verify: bool,
    /// The server's process id, to report its CPU time and peak RSS.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Send grids as 81 integers (Grid.cells) instead of text.
    #[arg(long)]
    cells: bool,
    /// After a failed unary call, wait this long before the next one, as a
    /// client backing off from RESOURCE_EXHAUSTED would (0: retry at once).
    #[arg(long, default_value_t = 0)]
    backoff_ms: u64,
}

/// Hard ceiling on a run, whatever the flags say.
const MAX_RUN: Duration = Duration::from_secs(3600);

/// Runs `sudoku bench`; returns the exit code (1 when any call or answer went wrong).
pub async fn run(args: BenchArgs) -> anyhow::Result<i32> {
    if args.connections == 0 || args.concurrency == 0 || args.streams == 0 || args.batch == 0 {
        bail!("--connections, --concurrency, --streams and --batch must be at least 1");
    }
    let corpus = match args.mode {
        Mode::Health => None,
        _ => Some(Arc::new(Corpus::load(&args.file, args.cells)?)),
    };
    let mut channels = Vec::with_capacity(args.connections);
    for _ in 0..args.connections {
        channels.push(connect(&args.server, &args.tls).await?);
    }
    let duration = match args.duration {
        Some(d) if d.is_finite() && d > 0.0 => Duration::from_secs_f64(d).min(MAX_RUN),
        Some(d) => bail!("--duration must be a positive number of seconds, not {d}"),
        None => MAX_RUN,
    };
    let default_limit = match (&corpus, args.duration) {
        (_, Some(_)) => u64::MAX,
        (Some(c), None) => c.len().saturating_mul(args.repeat.max(1)),
        (None, None) => u64::MAX,
    };
    let duration =
        if args.mode == Mode::Health && args.duration.is_none() && args.requests.is_none() {
            Duration::from_secs(5)
        } else {
            duration
        };

    let server_pid = args.server_pid.map(|p| p.to_string());
    let server_cpu0 = server_pid.as_deref().and_then(cpu_seconds);
    // VmHWM is the peak over the server's whole life; this is the peak
    // during this run, so runs on one server can be compared.
    let rss_peak = Arc::new(AtomicU64::new(0));
    let sampler = server_pid.clone().map(|pid| {
        let peak = rss_peak.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            loop {
                tick.tick().await;
                if let Some(kb) = status_kb(&pid, "VmRSS") {
                    peak.fetch_max(kb, Ordering::Relaxed);
                }
            }
        })
    });
    let client_cpu0 = cpu_seconds("self");
    let started = Instant::now();
    let bound = Bound {
        limit: match args.mode {
            Mode::Stream => corpus
                .as_ref()
                .map_or(0, |c| c.len().saturating_mul(args.repeat.max(1))),
            _ => args.requests.unwrap_or(default_limit),
        },
        end: started + duration,
    };

    let (tally, extra) = match args.mode {
        Mode::Unary | Mode::Health => {
            let next = Arc::new(AtomicU64::new(0));
            let mut tasks = tokio::task::JoinSet::new();
            for w in 0..args.concurrency {
                let channel = channels[w % channels.len()].clone();
                let next = next.clone();
                let corpus = corpus.clone();
                let verify = args.verify;
                match args.mode {
                    Mode::Unary => tasks.spawn(unary_worker(
                        channel,
                        corpus.expect("unary has a corpus"),
                        next,
                        bound,
                        verify,
                        Duration::from_millis(args.backoff_ms),
                    )),
                    _ => tasks.spawn(health_worker(channel, next, bound)),
                };
            }
            let mut tally = Tally::new();
            while let Some(t) = tasks.join_next().await {
                tally.merge(t?);
            }
            (tally, String::new())
        }
        Mode::Stream => {
            let corpus = corpus.expect("stream has a corpus");
            let sent = Arc::new(AtomicU64::new(0));
            let mut tasks = tokio::task::JoinSet::new();
            for s in 0..args.streams {
                let channel = channels[s % channels.len()].clone();
                tasks.spawn(stream_worker(
                    channel,
                    corpus.clone(),
                    StreamPlan {
                        index: s as u64,
                        streams: args.streams as u64,
                        batch: args.batch as u64,
                        bound,
                    },
                    sent.clone(),
                    args.verify,
                ));
            }
            let mut tally = Tally::new();
            while let Some(t) = tasks.join_next().await {
                tally.merge(t?);
            }
            let sent = sent.load(Ordering::Relaxed);
            let answered_once = tally.answered
                + tally.bad.values().sum::<u64>()
                + tally
                    .errors
                    .iter()
                    .filter(|(k, _)| k.starts_with("item "))
                    .map(|(_, v)| v)
                    .sum::<u64>();
            if answered_once != sent {
                tally.bad(format!(
                    "ids sent {sent} but answered {answered_once}: not exactly once"
                ));
            }
            (tally, format!(" sent_puzzles={sent}"))
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let server_cpu1 = server_pid.as_deref().and_then(cpu_seconds);
    if let Some(sampler) = sampler {
        sampler.abort();
    }
    if let Some(kb) = server_pid.as_deref().and_then(|p| status_kb(p, "VmRSS")) {
        rss_peak.fetch_max(kb, Ordering::Relaxed);
    }
    let client_cpu1 = cpu_seconds("self");

    // The report.
    let what = match args.mode {
        Mode::Unary => "Solve calls",
        Mode::Stream => "SolveBatch puzzles",
        Mode::Health => "Health/Check calls",
    };
    let units = if args.mode == Mode::Stream {
        tally.answered
    } else {
        tally.calls
    };
    let rate = units as f64 / wall;
    let q = |p: f64| tally.hist.value_at_quantile(p);
    println!(
        "mode {:?} | {} | connections {} | {}",
        args.mode,
        args.file
            .as_ref()
            .map_or("(no file)".to_string(), |p| p.display().to_string()),
        args.connections,
        match args.mode {
            Mode::Stream => format!(
                "streams {} batch {} repeat {}",
                args.streams, args.batch, args.repeat
            ),
            _ => format!("concurrency {}", args.concurrency),
        }
    );
    println!("  {what}: {units} in {wall:.3} s = {rate:.0}/s");
    println!(
        "  latency per {} (us): p50 {} p99 {} p999 {} max {} (n={})",
        if args.mode == Mode::Stream {
            "message round trip"
        } else {
            "call"
        },
        q(0.5),
        q(0.99),
        q(0.999),
        tally.hist.max(),
        tally.hist.len()
    );
    if tally.errors.is_empty() {
        println!("  errors: none");
    } else {
        let list: Vec<String> = tally
            .errors
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!("  errors: {}", list.join(", "));
    }
    if !tally.err_hist.is_empty() {
        let e = |p: f64| tally.err_hist.value_at_quantile(p);
        println!(
            "  latency per failed call (us): p50 {} p99 {} max {} (n={})",
            e(0.5),
            e(0.99),
            tally.err_hist.max(),
            tally.err_hist.len()
        );
    }
    if !tally.bad.is_empty() {
        let list: Vec<String> = tally.bad.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        println!("  bad answers: {}", list.join(", "));
    }
    if args.verify {
        println!("  verified solutions: {}", tally.verified);
    }
    if args.mode != Mode::Health {
        // Solver time as the server reports it: server CPU per puzzle minus
        // this is what the RPC path costs.
        let per = |x: u64| x as f64 / units.max(1) as f64;
        println!(
            "  server solve time (SolveStats): {:.1} us per puzzle, {:.0} nodes per puzzle",
            per(tally.solve_us),
            per(tally.nodes)
        );
    }
    let mode = format!("{:?}", args.mode).to_lowercase();
    let mut kv = format!(
        "BENCH mode={mode} rate={rate:.1} units={units} wall_s={wall:.3} p50_us={} p99_us={} p999_us={} max_us={} errors={} bad={}{extra}",
        q(0.5),
        q(0.99),
        q(0.999),
        tally.hist.max(),
        tally.errors.values().sum::<u64>(),
        tally.bad.values().sum::<u64>(),
    );
    if !tally.err_hist.is_empty() {
        kv += &format!(
            " err_p50_us={} err_p99_us={}",
            tally.err_hist.value_at_quantile(0.5),
            tally.err_hist.value_at_quantile(0.99)
        );
    }
    if args.mode != Mode::Health {
        kv += &format!(
            " solve_us_per_unit={:.1} nodes_per_unit={:.0}",
            tally.solve_us as f64 / units.max(1) as f64,
            tally.nodes as f64 / units.max(1) as f64
        );
    }
    if let (Some(a), Some(b)) = (server_cpu0, server_cpu1) {
        let cpu = b - a;
        let pid = server_pid.as_deref().unwrap_or_default();
        let hwm = status_kb(pid, "VmHWM").unwrap_or(0);
        let run_peak = rss_peak.load(Ordering::Relaxed);
        println!(
            "  server cpu: {cpu:.2} s = {:.0}% of a core, {:.1} us per unit; peak RSS during the run {run_peak} kB, lifetime (VmHWM) {hwm} kB",
            100.0 * cpu / wall,
            1e6 * cpu / units.max(1) as f64,
        );
        kv += &format!(
            " server_cpu_pct={:.0} server_us_per_unit={:.1} server_rss_peak_kb={run_peak} server_hwm_kb={hwm}",
            100.0 * cpu / wall,
            1e6 * cpu / units.max(1) as f64
        );
    } else if server_pid.is_some() {
        println!(
            "  server cpu: cannot read /proc/{}/stat",
            server_pid.unwrap_or_default()
        );
    }
    if let (Some(a), Some(b)) = (client_cpu0, client_cpu1) {
        let cpu = b - a;
        let hwm = status_kb("self", "VmHWM").unwrap_or(0);
        println!(
            "  client cpu: {cpu:.2} s = {:.0}% of a core, {:.1} us per unit; own peak RSS {} kB",
            100.0 * cpu / wall,
            1e6 * cpu / units.max(1) as f64,
            hwm
        );
        kv += &format!(
            " client_cpu_pct={:.0} client_us_per_unit={:.1} client_hwm_kb={hwm}",
            100.0 * cpu / wall,
            1e6 * cpu / units.max(1) as f64
        );
    }
    println!("{kv}");
    Ok(if tally.errors.is_empty() && tally.bad.is_empty() {
        0
    } else {
        1
    })
}
