//! The `sudoku` command line: `solve` puzzle files through a server or in
//! this process, check a server's `health`, `bench` a server, and
//! `validate`, `hint`, `rate` and `generate` puzzles.
//!
//! Dependencies point down this table: a file uses only files below it
//! (`python3 tools/import_cycles.py` finds no circle). The puzzle and the
//! engines come from `sudoku-core`; the contract's stubs and, for
//! `--local`, the service itself from `sudoku-grpc`.
//!
//! | file | its job |
//! |---|---|
//! | **commands** | |
//! | `main.rs` | the flags of `sudoku`, its runtime and exit code, `sudoku health` |
//! | `solve.rs` | `sudoku solve`: its flags; the stages of a run set up and joined |
//! | `generate.rs` | `sudoku generate` |
//! | `toolkit.rs` | `sudoku validate`, `hint` and `rate`, and the service they call |
//! | `bench.rs` | `sudoku bench`, the load generator: its flags, run and report |
//! | `callers.rs` | `sudoku bench`'s callers (unary, health, streams) and their corpus |
//! | **pipeline** of `sudoku solve` | |
//! | `feeds.rs` | SolveBatch streams that draw from one queue and resend what a lost call left |
//! | `batch.rs` | records read into request messages, small ones first |
//! | `local.rs` | the pool of solver threads of `--local` |
//! | `input.rs` | the puzzle file or stdin, its size sniffed, its records read in order |
//! | `sized.rs` | the grids of a run chosen; records of other sizes read into work items |
//! | `printer.rs` | the writer: answers in input order, as text or JSON |
//! | `window.rs` | the reorder window: read but not yet printed, bounded |
//! | `progress.rs` | the progress line on a terminal |
//! | **leaves** | |
//! | `resend.rs` | what a stream sent and has not had answered |
//! | `wire/` | the codec: SolveBatch messages written and read by hand (9x9), by prost (other sizes) |
//! | `retry.rs` | when to try again: lost servers, back-off, limits |
//! | `sniff.rs` | the size an input's first record tells |
//! | `tally.rs` | what `sudoku bench` counts, and a process's CPU and memory |
//! | `answer.rs` | a puzzle of any size, how its search ended, its `--output jsonl` object |
//! | `sized_text.rs` | `--box RxC`, the format `--format` asks an answer in, a failed record echoed (the reader and writer are core's `puzzle::text`) |
//! | `words.rs` | people's words: server messages, gRPC code names, faults |
//! | `connect.rs` | a channel to one server or several |

#![forbid(unsafe_code)]

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

mod answer;
mod batch;
mod bench;
mod callers;
mod connect;
mod feeds;
mod generate;
mod input;
mod local;
mod printer;
mod progress;
mod resend;
mod retry;
mod sized;
mod sized_text;
mod sniff;
mod solve;
mod tally;
mod toolkit;
mod window;
mod wire;
mod words;

use connect::connect;

fn main() {
    std::process::exit(run());
}

/// Command-line client of the Sudoku service.
#[derive(Debug, Parser)]
#[command(
    name = "sudoku",
    version,
    about = "Solve, check, rate and generate Sudoku puzzles, through a Sudoku server or in this process"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Solve puzzles from FILE (or stdin) and print the solutions in input
    /// order, in the input's own format.
    Solve(solve::SolveArgs),
    /// Check a server's health (grpc.health.v1); exits 0 when SERVING.
    Health(HealthArgs),
    /// Load a server with Solve, SolveBatch or health calls and report
    /// throughput, latency percentiles, errors and CPU.
    Bench(bench::BenchArgs),
    /// Check puzzles from FILE (or stdin): conflicts, cells without a
    /// candidate, solvable and unique; with --current, a player's wrong
    /// entries. Exits 1 unless every puzzle is unique and right.
    Validate(toolkit::ValidateArgs),
    /// The next logical step for each puzzle of FILE (or stdin).
    Hint(toolkit::FileArgs),
    /// Rate each puzzle of FILE (or stdin): label, SE rating, hardest
    /// technique; exits 1 when a puzzle could not be rated.
    Rate(toolkit::FileArgs),
    /// Generate unique puzzles, one per line (or JSON with --output
    /// jsonl): minimal clue by clue, or with --symmetry minimal for their
    /// symmetry (no symmetric set of clues can go; a single clue may).
    Generate(generate::GenerateArgs),
}

#[derive(Debug, Args)]
struct HealthArgs {
    /// Server to ask: host:port, or an http:// or https:// URL.
    #[arg(long, env = "SUDOKU_SERVER", default_value = "http://127.0.0.1:50051")]
    server: String,
    #[command(flatten)]
    tls: connect::TlsArgs,
    /// Service to ask about ("" = the whole server).
    #[arg(long, default_value = "")]
    service: String,
}

/// Runs the command line; returns the process exit code.
fn run() -> i32 {
    let command = match Cli::parse().command {
        // `solve --local` does no async I/O: it starts no runtime, whose
        // threads, epoll and timer cost a short run more than it solves in.
        Command::Solve(args) if args.is_local() => return exit_code(solve::run_local(args)),
        other => other,
    };
    // The input is opened (and its first record read) before the runtime
    // starts, so that the runtime can be chosen for it.
    let mut opened = match &command {
        Command::Solve(args) => match solve::Opened::of(args) {
            Ok(opened) => Some(opened),
            Err(e) => return exit_code(Err(e)),
        },
        _ => None,
    };
    // `sudoku solve` on one stream to one server (grids of any size) is a
    // reader thread, a writer thread and one call, all of whose async
    // work this thread does: a runtime worker would only add a thread to
    // start and wake-ups across threads (docs/performance.md has the
    // figures). Several streams keep a worker per core: on one worker the
    // first stream to open took every message before the others (behind a
    // per-call balancer, one backend got all the work).
    let mut builder = match &command {
        Command::Solve(args) if args.is_one_stream() => {
            tokio::runtime::Builder::new_current_thread()
        }
        // `validate`, `hint` and `rate` with --local: the service's solver
        // threads do the work; this thread only hands puzzles to them and
        // prints, and workers would only add threads to start.
        Command::Validate(args) if args.is_local() => tokio::runtime::Builder::new_current_thread(),
        Command::Hint(args) | Command::Rate(args) if args.is_local() => {
            tokio::runtime::Builder::new_current_thread()
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sudoku: cannot start the runtime: {e}");
            return 2;
        }
    };
    let result = runtime.block_on(async move {
        match command {
            Command::Solve(args) => {
                match opened.take().map_or_else(|| solve::Opened::of(&args), Ok) {
                    Ok(opened) => solve::run(args, opened).await,
                    Err(e) => Err(e),
                }
            }
            Command::Health(args) => health(args).await,
            Command::Bench(args) => bench::run(args).await,
            Command::Validate(args) => toolkit::validate(args).await,
            Command::Hint(args) => toolkit::hint(args).await,
            Command::Rate(args) => toolkit::rate(args).await,
            Command::Generate(args) => generate::generate(args).await,
        }
    });
    // The process ends now: waiting for the runtime's threads to stop
    // would only delay the exit (the output is written and flushed).
    runtime.shutdown_background();
    exit_code(result)
}

/// The exit code of a command's result; errors are said on stderr.
fn exit_code(result: anyhow::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        // A reader that stopped early (`| head`) is not a failure of ours.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            0
        }
        Err(e) => {
            eprintln!("sudoku: {e:#}");
            2
        }
    }
}

async fn health(args: HealthArgs) -> anyhow::Result<i32> {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let mut client = HealthClient::new(connect(&args.server, &args.tls).await?);
    let reply = client
        .check(HealthCheckRequest {
            service: args.service.clone(),
        })
        .await
        .with_context(|| format!("health check of {:?} failed", args.service))?;
    let status = reply.into_inner().status();
    println!("{}", status.as_str_name());
    Ok(
        if status == tonic_health::pb::health_check_response::ServingStatus::Serving {
            0
        } else {
            1
        },
    )
}
