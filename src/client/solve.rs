//! `sudoku solve`: puzzles from a file or stdin, solved through a server
//! (SolveBatch) or in this process, printed in input order in the input's
//! own format.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use tokio_stream::StreamExt;

use super::connect::connect;
use crate::pb;
use crate::pb::sudoku_service_client::SudokuServiceClient;
use crate::puzzle::Grid;
use crate::puzzle::text::{Entry, Format, read_puzzles, write_grid};
use crate::solver::Solver;

/// How to print solutions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    /// The format each puzzle was written in.
    Auto,
    /// 81-character lines.
    Line,
    /// Nine lines of nine space-separated digits.
    Grid,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// Puzzle file; stdin when absent or "-".
    file: Option<PathBuf>,
    /// Server to solve on.
    #[arg(long, env = "SUDOKU_SERVER", default_value = "http://127.0.0.1:50051")]
    server: String,
    /// Solve in this process with the same engine, no server.
    #[arg(long)]
    local: bool,
    /// Threads for --local (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Check uniqueness: puzzles without exactly one solution are reported and marked.
    #[arg(long)]
    unique: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "auto")]
    format: OutputFormat,
    /// Puzzles per SolveBatch request message.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// SolveBatch calls at once on the connection, request messages dealt
    /// among them in turn. A proxy that balances per call (nginx, a mesh)
    /// may send each call to a different server.
    #[arg(long, default_value_t = 1)]
    streams: usize,
    /// Work budget per puzzle for --local, in search nodes.
    #[arg(long, default_value_t = 5_000_000)]
    max_nodes: u64,
    /// Print nothing but failures (for timing runs).
    #[arg(long, short)]
    quiet: bool,
}

/// What became of one input puzzle.
enum Verdict {
    Solved(Grid),
    NotUnique(Grid, u64),
    Failed(String),
}

fn read_input(file: &Option<PathBuf>) -> anyhow::Result<String> {
    let mut text = String::new();
    match file {
        Some(p) if p.as_os_str() != "-" => {
            text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?
        }
        _ => {
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read stdin")?;
        }
    }
    Ok(text)
}

pub async fn run(args: SolveArgs) -> anyhow::Result<i32> {
    let text = read_input(&args.file)?;
    let entries = read_puzzles(&text);
    let limit = if args.unique { 2 } else { 1 };
    let verdicts = if args.local {
        let threads = if args.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            args.threads
        };
        let max_nodes = args.max_nodes;
        tokio::task::spawn_blocking(move || {
            let v = solve_local(&entries, limit, max_nodes, threads);
            (entries, v)
        })
        .await?
    } else {
        let v = solve_remote(
            &entries,
            &args.server,
            limit,
            args.batch.max(1),
            args.streams.max(1),
        )
        .await?;
        (entries, v)
    };
    let (entries, verdicts) = verdicts;
    print_verdicts(&entries, &verdicts, args.format, args.quiet)
}

fn verdict_of(solution: &pb::Solution, unique: bool) -> Verdict {
    let grid = solution.grid.as_ref().and_then(|g| {
        if g.text.is_empty() {
            Grid::from_cells(&g.cells).ok()
        } else {
            Grid::from_text(&g.text).ok()
        }
    });
    match (solution.outcome(), grid) {
        (pb::Outcome::Solved, Some(g)) => Verdict::Solved(g),
        (pb::Outcome::MultipleSolutions, Some(g)) if unique => {
            Verdict::NotUnique(g, solution.solution_count)
        }
        (pb::Outcome::NoSolution, _) => Verdict::Failed("no solution".into()),
        (pb::Outcome::WorkLimitReached, _) => {
            Verdict::Failed("work limit reached before an answer".into())
        }
        (o, _) => Verdict::Failed(format!("unexpected answer {}", o.as_str_name())),
    }
}

/// Solves in-process on `threads` threads; verdicts in input order.
fn solve_local(entries: &[Entry], limit: u32, max_nodes: u64, threads: usize) -> Vec<Verdict> {
    const CHUNK: usize = 256;
    let next = AtomicUsize::new(0);
    let mut parts: Vec<(usize, Vec<Verdict>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    // One solver per thread, restarted per puzzle.
                    let mut solver = Solver::new(&Grid::EMPTY, 1);
                    loop {
                        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                        let Some(chunk) = entries.get(start..(start + CHUNK).min(entries.len()))
                        else {
                            break;
                        };
                        if chunk.is_empty() {
                            break;
                        }
                        let verdicts = chunk
                            .iter()
                            .map(|e| solve_entry(&mut solver, e, limit, max_nodes));
                        done.push((start, verdicts.collect()));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    parts.sort_unstable_by_key(|(start, _)| *start);
    parts.into_iter().flat_map(|(_, v)| v).collect()
}

fn solve_entry(solver: &mut Solver, e: &Entry, limit: u32, max_nodes: u64) -> Verdict {
    let g = match &e.puzzle {
        Err(msg) => return Verdict::Failed(msg.clone()),
        Ok(g) => g,
    };
    if let Err(err) = g.check_givens() {
        return Verdict::Failed(err.to_string());
    }
    solver.restart(g, limit);
    solver.resume(max_nodes);
    let a = solver.answer();
    match (a.solution, a.count, a.complete) {
        (Some(s), 1, _) if limit == 1 => Verdict::Solved(s),
        (Some(s), 1, true) => Verdict::Solved(s),
        (Some(s), n, _) if n >= 2 => Verdict::NotUnique(s, u64::from(n)),
        (None, 0, true) => Verdict::Failed("no solution".into()),
        _ => Verdict::Failed("work limit reached before an answer".into()),
    }
}

/// Streams the puzzles through `streams` SolveBatch calls on one connection;
/// verdicts in input order.
async fn solve_remote(
    entries: &[Entry],
    server: &str,
    limit: u32,
    batch: usize,
    streams: usize,
) -> anyhow::Result<Vec<Verdict>> {
    let client =
        SudokuServiceClient::new(connect(server).await?).max_decoding_message_size(64 << 20);
    let options = Some(pb::SolveOptions {
        mode: if limit > 1 {
            pb::SolveMode::Count as i32
        } else {
            pb::SolveMode::Any as i32
        },
        max_solutions: limit,
    });
    let mut messages = Vec::new();
    let mut items = Vec::with_capacity(batch);
    for (i, e) in entries.iter().enumerate() {
        if let Ok(g) = &e.puzzle {
            items.push(pb::BatchItem {
                id: i as u64,
                puzzle: Some(pb::Grid {
                    text: g.to_text(),
                    cells: Vec::new(),
                }),
            });
            if items.len() == batch {
                messages.push(pb::SolveBatchRequest {
                    items: std::mem::replace(&mut items, Vec::with_capacity(batch)),
                    options,
                });
            }
        }
    }
    if !items.is_empty() {
        messages.push(pb::SolveBatchRequest { items, options });
    }
    let mut verdicts: Vec<Option<Verdict>> = entries
        .iter()
        .map(|e| e.puzzle.as_ref().err().map(|m| Verdict::Failed(m.clone())))
        .collect();
    let mut pending = verdicts.iter().filter(|v| v.is_none()).count();
    // Message k goes to call k mod n, so every call carries a share even
    // when the messages are fewer than a multiple of n.
    let n = streams.min(messages.len()).max(1);
    let mut shares: Vec<Vec<pb::SolveBatchRequest>> = (0..n).map(|_| Vec::new()).collect();
    for (k, message) in messages.into_iter().enumerate() {
        shares[k % n].push(message);
    }
    let calls = shares.into_iter().map(|share| {
        let mut client = client.clone();
        async move { client.solve_batch(tokio_stream::iter(share)).await }
    });
    let opened = futures::future::try_join_all(calls)
        .await
        .context("SolveBatch call failed")?;
    // Results are matched by id, so the calls' answers can be read in
    // whatever order they arrive.
    let mut responses = futures::stream::select_all(opened.into_iter().map(|r| r.into_inner()));
    while let Some(msg) = responses.next().await {
        let msg = msg.context("SolveBatch stream ended with an error")?;
        for r in msg.results {
            let Some(slot) = verdicts.get_mut(r.id as usize) else {
                bail!("server answered unknown id {}", r.id);
            };
            let v = match r.result {
                Some(pb::batch_result::Result::Solution(s)) => verdict_of(&s, limit > 1),
                Some(pb::batch_result::Result::Error(status)) => Verdict::Failed(status.message),
                None => Verdict::Failed("empty result".into()),
            };
            if slot.replace(v).is_none() {
                pending -= 1;
            }
        }
    }
    if pending > 0 {
        bail!("the streams ended with {pending} puzzles unanswered");
    }
    Ok(verdicts
        .into_iter()
        .map(|v| v.unwrap_or_else(|| Verdict::Failed("not answered".into())))
        .collect())
}

fn print_verdicts(
    entries: &[Entry],
    verdicts: &[Verdict],
    format: OutputFormat,
    quiet: bool,
) -> anyhow::Result<i32> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failures = 0usize;
    let mut first = true;
    let mut not_unique = 0usize;
    for (e, v) in entries.iter().zip(verdicts) {
        let fmt = match format {
            OutputFormat::Auto => e.format,
            OutputFormat::Line => Format::Line,
            OutputFormat::Grid => Format::Grid { spaced: true },
        };
        let multi_line = fmt != Format::Line;
        if multi_line && !first && !quiet {
            writeln!(out)?;
        }
        first = false;
        let (body, mark) = match v {
            Verdict::Solved(g) => (write_grid(g, fmt), None),
            Verdict::NotUnique(g, n) => {
                failures += 1;
                not_unique += 1;
                let what = format!("not unique: {n}+ solutions");
                eprintln!("line {}: {what}", e.line);
                (write_grid(g, fmt), Some(what))
            }
            Verdict::Failed(msg) => {
                failures += 1;
                eprintln!(
                    "{}",
                    if msg.starts_with("line ") {
                        msg.clone()
                    } else {
                        format!("line {}: {msg}", e.line)
                    }
                );
                let body = match &e.puzzle {
                    Ok(g) => write_grid(g, fmt),
                    Err(_) => e.raw.clone(),
                };
                (body, Some(format!("error: {msg}")))
            }
        };
        if quiet {
            continue;
        }
        match mark {
            None => writeln!(out, "{body}")?,
            Some(m) if multi_line => writeln!(out, "{body}\n# {m}")?,
            Some(m) => writeln!(out, "{body}  # {m}")?,
        }
    }
    out.flush()?;
    if failures > 0 {
        eprintln!(
            "{failures} of {} puzzles not solved{}",
            entries.len(),
            if not_unique > 0 {
                format!(" ({not_unique} not unique)")
            } else {
                String::new()
            }
        );
        return Ok(1);
    }
    Ok(0)
}
