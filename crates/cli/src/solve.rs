//! `sudoku solve`, the command: its flags, and the stages of a run set up
//! and joined. Puzzles of any size from a file or stdin are solved through
//! servers (SolveBatch) or in this process, and printed in input order in
//! the input's own format, as a stream. Every size takes the same stages;
//! 9x9 grids the fast reader, engine and codec, other sizes the generic
//! ones (`sized.rs`).
//!
//! Three stages run at once, so memory stays flat however long the input:
//! a reader parses one record at a time and hands puzzles on (with
//! `--local` on the main thread, which with one solver thread also solves
//! them; else on a thread of its own); the solvers (a pool of threads with
//! `--local`, else SolveBatch streams fed from one bounded channel) answer
//! them; a writer thread puts the answers back in
//! input order and prints each as soon as everything before it is printed.
//! A reorder window of `--batch` x `--window` puzzles bounds what is read
//! but not yet printed: when it is full the reader waits (backpressure), so
//! a slow puzzle holds back only the output behind it.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use super::answer::Output;
use super::batch::Reading;
use super::connect::{TlsArgs, connect_all};
use super::feeds::spawn_feeds;
use super::input::{self, is_regular, is_regular_file};
use super::local::{Rules, solve_local};
use super::printer::{Msg, OutputFormat, Print, Summary, Writer};
use super::progress::Progress;
use super::sized::Grids;
use super::sized_text::parse_box;
use super::window::Window;
use sudoku_grpc::pb;

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// Puzzle file; stdin when absent or "-".
    file: Option<PathBuf>,
    /// Server(s) to solve on: host:port, or an http:// or https:// URL.
    /// Give it more than once, or as a comma list, to balance the streams
    /// over several.
    #[arg(
        long,
        env = "SUDOKU_SERVER",
        default_value = "http://127.0.0.1:50051",
        value_delimiter = ','
    )]
    server: Vec<String>,
    #[command(flatten)]
    tls: TlsArgs,
    /// Solve in this process with the same engine, no server.
    #[arg(long)]
    local: bool,
    /// Solver threads for --local (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Check uniqueness: puzzles without exactly one solution are reported and marked.
    #[arg(long)]
    unique: bool,
    /// Layout of text output.
    #[arg(long, value_enum, default_value = "auto")]
    format: OutputFormat,
    /// What to print for each puzzle: text (the solutions, failures marked
    /// `# error: ...`), or jsonl (one object per puzzle: line, outcome,
    /// solution, solution count, stats and, on failure, the gRPC code name
    /// and message).
    #[arg(long, value_enum, default_value = "text")]
    output: Output,
    /// Puzzles per request message (with --local: per work item, at most
    /// 64 with several threads). The default is the most a server takes by
    /// default; smaller messages cost more per puzzle. The first few
    /// messages of a run carry 64 puzzles (a quarter of a smaller --batch),
    /// so the first answers come early.
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Messages (of --batch puzzles) in flight at once. Puzzles read but not
    /// yet printed are at most --batch x --window: reading waits while that
    /// many are pending, so memory stays flat. Default: 4 per server.
    #[arg(long)]
    window: Option<usize>,
    /// Streams (SolveBatch calls) at once, fed from one queue of request
    /// messages. A proxy that balances per call (nginx, a mesh) may send
    /// each to a different server. Default: 1 with one --server, 4 per
    /// server with several, each placed on a server at random.
    #[arg(long)]
    streams: Option<usize>,
    /// The box of grids other than 9x9 (docs/sizes.md). Without it the
    /// first record tells the size: 9x9 runs the fast path, a side that is
    /// a perfect square (4, 16, 25...) gets its square box, said on stderr.
    /// Needed for rectangular boxes, which the side alone cannot tell:
    /// RxC (2x3 or 3x2 for 6x6), or "auto" for the squarest (6 is 2x3).
    /// Every record of a run has the first one's size. Every size is
    /// solved alike (--threads, --batch, --window, --streams, --unique),
    /// written back in the input's shape; a 9x9 grid of 3x3 boxes always
    /// takes the fast 9x9 engine.
    #[arg(long = "box", value_name = "RxC|auto")]
    boxx: Option<String>,
    /// Work budget per puzzle for --local, in search nodes.
    #[arg(long, default_value_t = 5_000_000)]
    max_nodes: u64,
    /// Print nothing but failures.
    #[arg(long, short)]
    quiet: bool,
}

impl SolveArgs {
    /// True for `--local`: the in-process path, which needs no async runtime.
    pub(super) fn is_local(&self) -> bool {
        self.local
    }

    /// True for one stream to one server (see the runtime in `main`).
    /// Messages in flight: --window, or 4 per server (with --local, 4).
    fn window(&self) -> usize {
        let servers = if self.local { 1 } else { self.server.len() };
        self.window.unwrap_or(4 * servers.max(1)).max(1)
    }

    pub(super) fn is_one_stream(&self) -> bool {
        self.server.len() == 1 && self.streams.unwrap_or(1) <= 1
    }
}

/// What every run sets up before solving: the input, the reorder window,
/// the progress line and the writer (see [`Writer`]).
struct Run {
    input: Box<dyn Read + Send>,
    source: String,
    batch: usize,
    window: Arc<Window>,
    to_writer: async_channel::Sender<Msg>,
    progress: Progress,
    writer: Writer,
    limit: u32,
}

impl Run {
    fn new(args: &SolveArgs, input: Box<dyn Read + Send>) -> anyhow::Result<Run> {
        let source = match &args.file {
            Some(p) if p.as_os_str() != "-" => p.display().to_string(),
            _ => "stdin".to_string(),
        };
        let batch = args.batch.max(1);
        let window_size = batch.saturating_mul(args.window());
        let window = Arc::new(Window::new(window_size));
        let (to_writer, from_stages) = async_channel::unbounded::<Msg>();
        let progress = Progress::start(args.quiet);
        let print = Print {
            format: args.format,
            output: args.output,
            quiet: args.quiet,
            flush_when_idle: !is_regular(std::io::stdout()),
        };
        let writer = Writer::new(
            print,
            window.clone(),
            window_size,
            from_stages,
            (progress.counts(), progress.say()),
        );
        Ok(Run {
            input,
            source,
            batch,
            window,
            to_writer,
            progress,
            writer,
            limit: if args.unique { 2 } else { 1 },
        })
    }

    /// Waits for the writer to print the last answer; the exit code.
    fn finish(
        printed: Result<std::io::Result<Summary>, tokio::sync::oneshot::error::RecvError>,
        progress: Progress,
        quiet: bool,
        source: &str,
    ) -> anyhow::Result<i32> {
        let summary = printed.map_err(|_| anyhow::anyhow!("the output thread failed"))??;
        progress.finish();
        Ok(summary.report(quiet, source))
    }
}

/// `sudoku solve --local`: no runtime, no async I/O. This thread reads
/// (and with one solver thread, solves) while the writer prints.
pub fn run_local(args: SolveArgs) -> anyhow::Result<i32> {
    let opened = Opened::of(&args)?;
    local(args, opened)
}

/// The in-process run of `opened`.
fn local(args: SolveArgs, opened: Opened) -> anyhow::Result<i32> {
    let Opened { input, grids, .. } = opened;
    let Run {
        input,
        source,
        batch,
        window,
        to_writer,
        progress,
        writer,
        limit,
    } = Run::new(&args, input)?;
    let done = writer.start();
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let rules = Rules {
        limit,
        max_nodes: args.max_nodes,
        timed: args.output == Output::Jsonl,
    };
    solve_local(
        input,
        grids,
        &window,
        to_writer,
        rules,
        threads,
        batch,
        args.window(),
    );
    Run::finish(done.blocking_recv(), progress, args.quiet, &source)
}

/// The input of a run, opened (and its first record looked at, unless
/// `--box RxC` says the size) before any runtime starts: a run on one
/// stream needs no runtime thread of its own (see `client::main`).
pub struct Opened {
    input: Box<dyn Read + Send>,
    /// The grids of the run.
    grids: Grids,
    /// The input is a regular file: reading it never waits on a writer.
    regular: bool,
}

impl Opened {
    pub fn of(args: &SolveArgs) -> anyhow::Result<Opened> {
        let file = args.file.as_deref();
        let (input, grids) = match args.boxx.as_deref() {
            Some(b) if b != "auto" => {
                let grids = Grids::given(parse_box(b)?);
                (input::open(file)?, grids)
            }
            b => {
                let (input, sniffed) = input::sniffed(file)?;
                (input, Grids::sniffed(sniffed, b.is_some(), args.quiet)?)
            }
        };
        Ok(Opened {
            input,
            grids,
            regular: is_regular_file(file),
        })
    }
}

/// `sudoku solve` through servers.
pub async fn run(args: SolveArgs, opened: Opened) -> anyhow::Result<i32> {
    if let Grids::NeedsBox(_) = opened.grids {
        // Every record is an error that asks for `--box`: nothing to send,
        // so no server is asked (or needed).
        return tokio::task::spawn_blocking(move || local(args, opened))
            .await
            .context("the run failed")?;
    }
    let Opened {
        input,
        grids,
        regular,
    } = opened;
    // The connection opens while the first message is read, and the
    // threads start only once it is on its way: the TCP and HTTP/2
    // handshakes, the starting of threads and the reading would otherwise
    // come one after another before the server had anything to solve
    // (docs/performance.md, "The first request"). A regular file's first
    // message is
    // read on this thread, as its reads never wait; a pipe is read on a
    // thread of its own from the start.
    let servers: Vec<String> = args.server.iter().map(|s| s.trim().to_string()).collect();
    let streams = match (args.streams, servers.len()) {
        (Some(n), _) => n.max(1),
        (None, 1) => 1,
        (None, n) => 4 * n,
    };
    let tls = args.tls.clone();
    let connecting = tokio::spawn(async move { connect_all(&servers, &tls).await });
    // On this thread's runtime the task starts only when this one waits:
    // let it send its SYN first.
    tokio::task::yield_now().await;
    let Run {
        input,
        source,
        batch,
        window,
        to_writer,
        progress,
        writer,
        limit,
    } = Run::new(&args, input)?;
    let options = Some(pb::SolveOptions {
        mode: if limit > 1 {
            pb::SolveMode::Count as i32
        } else {
            pb::SolveMode::Any as i32
        },
        max_solutions: limit,
    });
    let (reading, outbox) = Reading::new(
        input,
        grids,
        window.clone(),
        to_writer.clone(),
        batch,
        args.window(),
        options,
    );
    let reading = match regular {
        true => reading.first_here(),
        false => {
            reading.go_on();
            None
        }
    };
    let channel = match connecting.await? {
        Ok(c) => c,
        Err(e) => {
            outbox.close();
            window.close();
            progress.finish();
            return Err(e);
        }
    };
    let client = tonic::client::Grpc::new(channel).max_decoding_message_size(64 << 20);
    // Held to the end: the connection then closes as the process exits,
    // with no GOAWAY, shutdown and close for this thread (and the server)
    // to go through first while the last answers are printed.
    let _open = client.clone();
    let reporter = spawn_feeds(
        outbox,
        to_writer,
        client,
        limit > 1,
        batch,
        options,
        streams,
        (!args.quiet).then(|| progress.say()),
    );
    // The feed's call, the channel's buffer, the connection and the
    // request body are tasks of this thread: a few turns of the runtime
    // send the first request before this thread starts the reader's and
    // the writer's.
    for _ in 0..FIRST_SEND_TURNS {
        tokio::task::yield_now().await;
    }
    if let Some(reading) = reading {
        reading.go_on();
    }
    let done = writer.start();
    let ended = done.await;
    // A server lost near the end: its notice is said before the run ends.
    if let Some(reporter) = &reporter {
        reporter.settle().await;
    }
    Run::finish(ended, progress, args.quiet, &source)
}

/// Turns of the runtime given to the first request before the reader and
/// writer threads start (see [`run`]).
const FIRST_SEND_TURNS: usize = 8;
