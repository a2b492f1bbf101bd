//! `sudoku solve`: puzzles from a file or stdin, solved through a server
//! (SolveBatch) or in this process, printed in input order in the input's
//! own format, as a stream.
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

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::connect::connect_all;
use super::progress::{Counts, Progress, Say};
use super::resend::{self, Source};
use super::sized;
use super::wire::{self, BatchCodec, Item};
use crate::pb;
use crate::puzzle::text::{Entry, Format, Reader, write_grid};
use crate::puzzle::{CELLS, Grid, GridError};
use crate::solver::Solver;

/// How to lay out solutions in text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    /// The format each puzzle was written in.
    Auto,
    /// 81-character lines.
    Line,
    /// Nine lines of nine space-separated digits.
    Grid,
}

/// What to print for each puzzle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    /// Solutions as text, failures marked with `# error: ...`.
    Text,
    /// One JSON object per puzzle: line, outcome, solution, solution count,
    /// stats and, on failure, the gRPC code name and message.
    Jsonl,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// Puzzle file; stdin when absent or "-".
    file: Option<PathBuf>,
    /// Server(s) to solve on: host:port or an http:// URL. Give it more
    /// than once, or as a comma list, to balance the streams over several.
    #[arg(
        long,
        env = "SUDOKU_SERVER",
        default_value = "http://127.0.0.1:50051",
        value_delimiter = ','
    )]
    server: Vec<String>,
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
    /// What to print for each puzzle.
    #[arg(long, value_enum, default_value = "text")]
    output: Output,
    /// Puzzles per SolveBatch request message (with --local: per work item,
    /// at most 64 with several threads). 1024, the server's default most:
    /// each message costs the client and the server a few thread wake-ups
    /// and HTTP/2 frames, which at 64 cost an easy set a third of its speed
    /// through a server on the same machine, and at 256 still 5%. The first
    /// 8 messages of a run carry 64 puzzles (a quarter of a smaller
    /// --batch), so the first answers come early.
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Messages (of --batch puzzles) in flight at once. Puzzles read but not
    /// yet printed are at most --batch x --window (4,096 by default): reading
    /// waits while that many are pending, so memory stays flat. Default: 4
    /// per server.
    #[arg(long)]
    window: Option<usize>,
    /// SolveBatch calls at once, fed from one queue of request messages. A
    /// proxy that balances per call (nginx, a mesh) may send each call to a
    /// different server. Default: 1 with one --server, 4 per server with
    /// several (tonic places each call on a server at random).
    #[arg(long)]
    streams: Option<usize>,
    /// The box of grids other than 9x9 (docs/sizes.md). Without it the
    /// first record tells the size: 9x9 runs the fast path, a side that is
    /// a perfect square (4, 16, 25...) gets its square box, said on stderr.
    /// Needed for rectangular boxes, which the side alone cannot tell:
    /// RxC (2x3 or 3x2 for 6x6), or "auto" for the squarest (6 is 2x3).
    /// Every record of a run has the first one's size. Other sizes are
    /// solved one at a time, written back in the input's shape.
    #[arg(long = "box", value_name = "RxC|auto")]
    boxx: Option<String>,
    /// Work budget per puzzle for --local, in search nodes.
    #[arg(long, default_value_t = 5_000_000)]
    max_nodes: u64,
    /// Print nothing but failures (for timing runs).
    #[arg(long, short)]
    quiet: bool,
}

impl SolveArgs {
    /// True for `--local` without `--box`: the in-process path, which needs no async runtime.
    pub(super) fn is_local(&self) -> bool {
        self.local && self.boxx.is_none()
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

/// Where a puzzle came from, kept until its answer is printed.
pub(super) struct Meta {
    line: usize,
    format: Format,
    /// Echoed when there is no solution to print.
    echo: Echo,
}

enum Echo {
    Grid(Grid),
    Raw(String),
}

/// How the search for one puzzle ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Solved,
    NotUnique,
    NoSolution,
    WorkLimit,
    /// The puzzle could not be read, or its givens break the rules.
    Invalid,
    /// The server answered the item with an error.
    Failed,
}

impl Outcome {
    pub(super) fn name(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::NotUnique => "multiple_solutions",
            Outcome::NoSolution => "no_solution",
            Outcome::WorkLimit => "work_limit_reached",
            Outcome::Invalid => "invalid",
            Outcome::Failed => "failed",
        }
    }
}

/// The answer for one puzzle (a 9x9 grid, or a grid of another size in
/// `sized.rs`).
pub(super) struct Done<G = Grid> {
    pub(super) outcome: Outcome,
    pub(super) solution: Option<G>,
    pub(super) count: u64,
    pub(super) guesses: u64,
    pub(super) nodes: u64,
    pub(super) micros: u64,
    /// gRPC code name and message, for the failures that have one.
    pub(super) error: Option<(&'static str, String)>,
}

impl<G> Done<G> {
    pub(super) fn invalid(msg: String) -> Done<G> {
        Done {
            outcome: Outcome::Invalid,
            solution: None,
            count: 0,
            guesses: 0,
            nodes: 0,
            micros: 0,
            error: Some(("INVALID_ARGUMENT", msg)),
        }
    }

    /// A puzzle the server failed with `status`, in the command's words.
    pub(super) fn of_status(status: &tonic::Status) -> Done<G> {
        let msg = for_people(status.message());
        match status.code() {
            tonic::Code::InvalidArgument => Done::invalid(msg),
            code => Done {
                outcome: Outcome::Failed,
                error: Some((code_name(code), msg)),
                ..Done::invalid(String::new())
            },
        }
    }

    /// What to say about a failure; `None` when solved.
    pub(super) fn complaint(&self) -> Option<String> {
        match self.outcome {
            Outcome::Solved => None,
            Outcome::NotUnique => Some(format!("not unique: {}+ solutions", self.count)),
            Outcome::NoSolution => Some("no solution".into()),
            Outcome::WorkLimit => Some("work limit reached before an answer".into()),
            Outcome::Invalid | Outcome::Failed => Some(
                self.error
                    .as_ref()
                    .map_or_else(|| "failed".into(), |(_, m)| m.clone()),
            ),
        }
    }
}

/// What the stages tell the writer.
/// A puzzle's answer: its id, its `Meta` when it was not sent before,
/// and what became of it.
pub(super) type Answer = (u64, Option<Meta>, Done);

enum Msg {
    /// Puzzles sent to a server (a request message's worth, so the writer
    /// wakes once per message, not per puzzle), to be matched with their
    /// answers by id.
    Sent(Vec<(u64, Meta)>),
    /// Answers, with their puzzle's `Meta` when it was not sent before.
    Answers(Vec<Answer>),
    /// The run cannot go on: what went wrong, and whether the input
    /// (rather than a server) is at fault.
    Fatal(String, bool),
    /// The input ended after this many records: once they are all
    /// printed the writer is done, without waiting for the streams to
    /// end (their trailers come after the last answers).
    Ended(u64),
}

/// The reorder window's free places: the reader takes one per puzzle, the
/// writer gives them back as it prints. Taking a place is one atomic step
/// while places are free; the lock and the condition variable are for
/// waiting, and the writer signals only a reader that waits.
struct Window {
    free: AtomicUsize,
    closed: AtomicBool,
    /// True while the reader waits (or is about to) for a place.
    waiting: Mutex<bool>,
    cv: Condvar,
}

impl Window {
    fn new(size: usize) -> Window {
        Window {
            free: AtomicUsize::new(size),
            closed: AtomicBool::new(false),
            waiting: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Waits for a free place; false once the window is closed.
    fn acquire(&self) -> bool {
        loop {
            if self.closed.load(Ordering::Acquire) {
                return false;
            }
            let free = self.free.load(Ordering::Acquire);
            if free > 0 {
                if self
                    .free
                    .compare_exchange_weak(free, free - 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            // Looked at again under the lock: `release` and `close` change
            // the count before they take it, so neither is missed.
            if self.free.load(Ordering::Acquire) == 0 && !self.closed.load(Ordering::Acquire) {
                *waiting = true;
                drop(self.cv.wait(waiting).unwrap_or_else(|e| e.into_inner()));
            }
        }
    }

    /// True when a place is free now.
    fn has_room(&self) -> bool {
        self.free.load(Ordering::Acquire) > 0 && !self.closed.load(Ordering::Acquire)
    }

    fn release(&self, n: usize) {
        self.free.fetch_add(n, Ordering::AcqRel);
        self.wake();
    }

    /// Stops the reader: nothing more will be printed.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if std::mem::take(&mut *waiting) {
            self.cv.notify_all();
        }
    }
}

/// What the reader hands to the solving stage.
enum Work {
    Puzzle(u64, Meta, Grid),
    /// The input has nothing more buffered: send what is batched.
    Idle,
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

/// The writer thread, before it starts: what the stages send it waits in
/// its channel until then.
struct Writer {
    printer: Printer,
    from_stages: async_channel::Receiver<Msg>,
    window: Arc<Window>,
}

/// The writer's summary as it returns (closed if it panics): waited for
/// without a blocking thread in an async run, and without waiting for the
/// thread's own end (its stacks unmapped) in either.
type Printed = tokio::sync::oneshot::Receiver<std::io::Result<Summary>>;

impl Writer {
    fn start(self) -> Printed {
        let (printed, done) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || self.printer.run(self.from_stages, &self.window, printed));
        done
    }
}

/// The puzzle file, or stdin.
fn open(args: &SolveArgs) -> anyhow::Result<Box<dyn Read + Send>> {
    Ok(match &args.file {
        Some(p) if p.as_os_str() != "-" => Box::new(
            std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        _ => Box::new(std::io::stdin()),
    })
}

/// True when the input (FILE, or stdin redirected from a file) is a
/// regular file.
fn is_regular_file(args: &SolveArgs) -> bool {
    match &args.file {
        Some(p) if p.as_os_str() != "-" => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
        _ => is_regular(std::io::stdin()),
    }
}

/// True when `fd` (stdin, stdout) is open on a regular file.
fn is_regular(fd: impl std::os::fd::AsFd) -> bool {
    fd.as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

/// The input of a run without `--box`, and the sized run to make instead
/// when its first record is not 9x9.
fn sniffed(args: &SolveArgs) -> anyhow::Result<(Box<dyn Read + Send>, Option<sized::Sniffed>)> {
    let (input, s) = sized::sniff(open(args)?).context(match &args.file {
        Some(p) if p.as_os_str() != "-" => format!("cannot read {}", p.display()),
        _ => "cannot read stdin".to_string(),
    })?;
    Ok((input, (s != sized::Sniffed::Nine).then_some(s)))
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
        let writer = Writer {
            printer: Printer::new(args, window_size, progress.counts(), progress.say()),
            from_stages,
            window: window.clone(),
        };
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

/// How a run of another size writes its answers: `--output` and
/// `--format` as for 9x9 grids.
fn sized_output(args: &SolveArgs) -> sized::Written {
    sized::Written {
        jsonl: args.output == Output::Jsonl,
        line: match args.format {
            OutputFormat::Auto => None,
            OutputFormat::Line => Some(true),
            OutputFormat::Grid => Some(false),
        },
    }
}

/// `sudoku solve --local`: no runtime, no async I/O. This thread reads
/// (and with one solver thread, solves) while the writer prints.
pub fn run_local(args: SolveArgs) -> anyhow::Result<i32> {
    let (mut input, other) = sniffed(&args)?;
    if let Some(s) = other {
        // Another size: its reader is async for the server case; a runtime
        // of this thread alone runs it.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the runtime")?;
        return runtime.block_on(sized::run(
            &mut input,
            sized::Size::Sniffed(s),
            None,
            args.unique,
            args.max_nodes,
            args.quiet,
            sized_output(&args),
        ));
    }
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
        &window,
        to_writer,
        rules,
        threads,
        batch,
        args.window(),
    );
    Run::finish(done.blocking_recv(), progress, args.quiet, &source)
}

/// The input of a run, opened (and its first record looked at, without
/// `--box`) before any runtime starts: a run of 9x9 grids on one stream
/// needs no runtime thread of its own (see `client::main`).
pub struct Opened {
    input: Box<dyn Read + Send>,
    /// The grids' size when they are not 9x9.
    size: Option<sized::Size>,
    /// The input is a regular file: reading it never waits on a writer.
    regular: bool,
}

impl Opened {
    pub fn of(args: &SolveArgs) -> anyhow::Result<Opened> {
        let (input, size) = match &args.boxx {
            Some(b) if b == "auto" => (open(args)?, Some(sized::Size::Auto)),
            Some(b) => (
                open(args)?,
                Some(sized::Size::Given(super::toolkit::parse_box(b)?)),
            ),
            None => {
                let (input, other) = sniffed(args)?;
                (input, other.map(sized::Size::Sniffed))
            }
        };
        Ok(Opened {
            input,
            size,
            regular: is_regular_file(args),
        })
    }

    /// True for grids of another size than 9x9.
    pub fn is_sized(&self) -> bool {
        self.size.is_some()
    }
}

/// `sudoku solve` through servers, and any run of grids of another size.
pub async fn run(args: SolveArgs, opened: Opened) -> anyhow::Result<i32> {
    let server = (!args.local).then_some(args.server.as_slice());
    let Opened {
        mut input,
        size,
        regular,
    } = opened;
    if let Some(size) = size {
        return sized::run(
            &mut input,
            size,
            server,
            args.unique,
            args.max_nodes,
            args.quiet,
            sized_output(&args),
        )
        .await;
    }
    // The connection opens while the first message is read, and the
    // threads start only once it is on its way: the TCP and HTTP/2
    // handshakes, the starting of threads and the reading would otherwise
    // come one after another before the server had anything to solve
    // (forum hardest through a server on 2 cores: the first request left
    // 1.2 ms after the connect call). A regular file's first message is
    // read on this thread, as its reads never wait; a pipe is read on a
    // thread of its own from the start.
    let servers: Vec<String> = args.server.iter().map(|s| s.trim().to_string()).collect();
    let streams = match (args.streams, servers.len()) {
        (Some(n), _) => n.max(1),
        (None, 1) => 1,
        (None, n) => 4 * n,
    };
    let connecting = tokio::spawn(async move { connect_all(&servers).await });
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
    spawn_feeds(
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
    Run::finish(done.await, progress, args.quiet, &source)
}

/// Turns of the runtime given to the first request before the reader and
/// writer threads start (see [`run`]).
const FIRST_SEND_TURNS: usize = 8;

/// Reads `input` record by record: unreadable puzzles go straight to the
/// writer, the others to `work`, which returns false to stop the reading.
fn read_input(
    input: Box<dyn Read + Send>,
    window: &Window,
    to_writer: &async_channel::Sender<Msg>,
    work: impl FnMut(Work) -> bool,
) {
    Records::new(input).read(window, to_writer, Waits::Yes, work);
}

/// The input's records, numbered in order as they are read; reading can
/// stop and go on later (on another thread).
struct Records {
    reader: Reader<Box<dyn Read + Send>>,
    seq: u64,
}

/// Whether [`Records::read`] may wait for a place in the window.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Waits {
    Yes,
    /// No: with no place free it stops, as when `work` says so (the
    /// writer that frees places may not have started).
    No,
}

/// Why [`Records::read`] returned.
#[derive(PartialEq, Eq)]
enum ReadEnd {
    /// The input is read to its end (and `work` had its last `Idle`).
    Ended,
    /// `work` said so, a fatal read error, the window closed, or (with
    /// [`Waits::No`]) no place was free.
    Stopped,
}

impl Records {
    fn new(input: Box<dyn Read + Send>) -> Records {
        // Sound puzzles are echoed from their grid, so their lines need no copy.
        Records {
            reader: Reader::new(input).raw_of_failures_only(),
            seq: 0,
        }
    }

    fn read(
        &mut self,
        window: &Window,
        to_writer: &async_channel::Sender<Msg>,
        waits: Waits,
        mut work: impl FnMut(Work) -> bool,
    ) -> ReadEnd {
        loop {
            if !self.reader.has_buffered() && !work(Work::Idle) {
                return ReadEnd::Stopped;
            }
            // Only this thread takes places: with room now, the place
            // taken below is had without waiting.
            if waits == Waits::No && !window.has_room() {
                return ReadEnd::Stopped;
            }
            let entry = match self.reader.next() {
                None => break,
                Some(Ok(e)) => e,
                Some(Err(e)) => {
                    let _ = to_writer.send_blocking(Msg::Fatal(e.to_string(), true));
                    break;
                }
            };
            if !window.acquire() {
                return ReadEnd::Stopped;
            }
            let Entry {
                line,
                format,
                puzzle,
                raw,
                givens_ok,
            } = entry;
            let seq = self.seq;
            self.seq += 1;
            // Givens the reader checked while reading need no second look.
            let checked = puzzle.and_then(|g| match givens_ok {
                true => Ok(g),
                false => g.check_givens().map(|()| g).map_err(|e| explain(&e)),
            });
            match checked {
                Ok(g) => {
                    let meta = Meta {
                        line,
                        format,
                        echo: Echo::Grid(g),
                    };
                    if !work(Work::Puzzle(seq, meta, g)) {
                        return ReadEnd::Stopped;
                    }
                }
                Err(msg) => {
                    let meta = Meta {
                        line,
                        format,
                        echo: Echo::Raw(raw),
                    };
                    let answer = vec![(seq, Some(meta), Done::invalid(msg))];
                    if to_writer.send_blocking(Msg::Answers(answer)).is_err() {
                        return ReadEnd::Stopped;
                    }
                }
            }
        }
        work(Work::Idle);
        let _ = to_writer.send_blocking(Msg::Ended(self.seq));
        ReadEnd::Ended
    }
}

/// A givens fault in words, rows, columns and boxes numbered from 1 as in
/// every other message of the command.
fn explain(err: &GridError) -> String {
    use crate::puzzle::Unit;
    match err {
        GridError::Conflict {
            unit,
            first,
            second,
            digit,
        } => {
            let unit = match unit {
                Unit::Row(i) => format!("row {}", i + 1),
                Unit::Column(i) => format!("column {}", i + 1),
                Unit::Box(i) => format!("box {}", i + 1),
            };
            format!(
                "{digit} is given twice in {unit}: at row {}, column {} and row {}, column {}",
                first.row() + 1,
                first.col() + 1,
                second.row() + 1,
                second.col() + 1
            )
        }
        other => other.to_string(),
    }
}

/// How each puzzle is solved in-process.
#[derive(Clone, Copy)]
struct Rules {
    /// Solutions to look for: 1, or 2 for a uniqueness check.
    limit: u32,
    /// Work budget per puzzle, in search nodes.
    max_nodes: u64,
    /// Time each solve (for `--output jsonl`; text output shows no times,
    /// and two clock reads cost 2% of an easy set).
    timed: bool,
}

/// Puzzles per work item with several `--local` threads, at most.
const LOCAL_ITEM: usize = 64;

/// Solves in-process, reading on the calling thread: the reader feeds
/// `threads` solver threads work items of `batch` (at most [`LOCAL_ITEM`])
/// puzzles through a bounded channel. With one thread the reader solves
/// each puzzle itself as it reads it: no puzzle crosses threads on its way
/// in, no thread is started but the writer, and answers go to the writer
/// `batch` at a time. Returns when the input is read and solved (or
/// printing stopped).
fn solve_local(
    input: Box<dyn Read + Send>,
    window: &Window,
    to_writer: async_channel::Sender<Msg>,
    rules: Rules,
    threads: usize,
    batch: usize,
    queue: usize,
) {
    if threads <= 1 {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let mut answers = Vec::with_capacity(batch);
        read_input(input, window, &to_writer, |w| {
            match w {
                Work::Puzzle(seq, meta, g) => {
                    answers.push((seq, Some(meta), solve_one(&mut solver, &g, rules)));
                    if answers.len() < batch {
                        return true;
                    }
                }
                Work::Idle if answers.is_empty() => return true,
                Work::Idle => {}
            }
            let full = std::mem::replace(&mut answers, Vec::with_capacity(batch));
            to_writer.send_blocking(Msg::Answers(full)).is_ok()
        });
        return;
    }
    // Threads share out items of at most LOCAL_ITEM puzzles, so that a
    // small set of hard puzzles still spreads over all of them.
    let batch = batch.min(LOCAL_ITEM);
    let (jobs, todo) = async_channel::bounded::<Vec<(u64, Meta, Grid)>>(queue);
    for _ in 0..threads {
        let todo = todo.clone();
        let to_writer = to_writer.clone();
        std::thread::spawn(move || {
            // One solver per thread, restarted per puzzle: no allocation
            // in the engine.
            let mut solver = Solver::new(&Grid::EMPTY, 1);
            while let Ok(items) = todo.recv_blocking() {
                let answers = items
                    .into_iter()
                    .map(|(seq, meta, g)| (seq, Some(meta), solve_one(&mut solver, &g, rules)))
                    .collect();
                if to_writer.send_blocking(Msg::Answers(answers)).is_err() {
                    return;
                }
            }
        });
    }
    drop(todo);
    let mut items = Vec::with_capacity(batch);
    read_input(input, window, &to_writer, |w| {
        match w {
            Work::Puzzle(seq, meta, g) => {
                items.push((seq, meta, g));
                if items.len() < batch {
                    return true;
                }
            }
            Work::Idle if items.is_empty() => return true,
            Work::Idle => {}
        }
        let full = std::mem::replace(&mut items, Vec::with_capacity(batch));
        jobs.send_blocking(full).is_ok()
    });
}

fn solve_one(solver: &mut Solver, g: &Grid, rules: Rules) -> Done {
    let Rules {
        limit,
        max_nodes,
        timed,
    } = rules;
    let started = timed.then(Instant::now);
    solver.restart(g, limit);
    solver.resume(max_nodes);
    let a = solver.answer();
    let micros = started.map_or(0, |t| t.elapsed().as_micros() as u64);
    let outcome = match (a.solution, a.count, a.complete) {
        (Some(_), 1, _) if limit == 1 => Outcome::Solved,
        (Some(_), 1, true) => Outcome::Solved,
        (Some(_), n, _) if n >= 2 => Outcome::NotUnique,
        (None, 0, true) => Outcome::NoSolution,
        _ => Outcome::WorkLimit,
    };
    Done {
        outcome,
        solution: a.solution,
        count: u64::from(a.count),
        guesses: a.stats.guesses,
        nodes: a.stats.nodes,
        micros,
        error: None,
    }
}

/// The reading side of a run through servers: records read into request
/// messages of [`message_size`] puzzles, queued at most `queue` deep on
/// `outbox`, the receiver the streams draw from. Closing it stops the
/// reading.
struct Reading {
    records: Records,
    batcher: Batcher,
    window: Arc<Window>,
}

impl Reading {
    fn new(
        input: Box<dyn Read + Send>,
        window: Arc<Window>,
        to_writer: async_channel::Sender<Msg>,
        batch: usize,
        queue: usize,
        options: Option<pb::SolveOptions>,
    ) -> (Reading, async_channel::Receiver<wire::Request>) {
        let (requests, outbox) = async_channel::bounded::<wire::Request>(queue);
        let reading = Reading {
            records: Records::new(input),
            batcher: Batcher {
                // Sized for the message being filled: the first ones are
                // small, and a new thread's heap grows a system call at a
                // time.
                items: Vec::with_capacity(message_size(batch, 0)),
                sent: Vec::with_capacity(message_size(batch, 0)),
                messages: 0,
                batch,
                requests,
                to_writer,
                options,
            },
            window,
        };
        (reading, outbox)
    }

    /// Reads the first message on this thread, never waiting for a place
    /// in the window (the writer may not have started); `None` once the
    /// input is all read (the queue is closed then).
    fn first_here(mut self) -> Option<Reading> {
        let batcher = &mut self.batcher;
        let read = self
            .records
            .read(&self.window, &batcher.to_writer.clone(), Waits::No, |w| {
                batcher.take(w) && batcher.messages == 0
            });
        (read == ReadEnd::Stopped).then_some(self)
    }

    /// Reads the rest on a thread of its own.
    fn go_on(self) {
        let Reading {
            mut records,
            mut batcher,
            window,
        } = self;
        std::thread::spawn(move || {
            let to_writer = batcher.to_writer.clone();
            records.read(&window, &to_writer, Waits::Yes, |w| batcher.take(w));
        });
    }
}

/// Puts read puzzles into request messages.
struct Batcher {
    items: Vec<Item>,
    sent: Vec<(u64, Meta)>,
    /// Messages sent so far.
    messages: usize,
    batch: usize,
    requests: async_channel::Sender<wire::Request>,
    to_writer: async_channel::Sender<Msg>,
    options: Option<pb::SolveOptions>,
}

impl Batcher {
    /// Takes a puzzle, sending the message it fills (or, when the input
    /// has nothing buffered, the part filled); false once nothing more can
    /// be sent.
    fn take(&mut self, w: Work) -> bool {
        match w {
            Work::Puzzle(seq, meta, g) => {
                self.sent.push((seq, meta));
                self.items.push(Item { id: seq, grid: g });
                if self.items.len() < message_size(self.batch, self.messages) {
                    return true;
                }
            }
            Work::Idle if self.items.is_empty() => return true,
            Work::Idle => {}
        }
        self.messages += 1;
        let next = message_size(self.batch, self.messages);
        // The writer learns of the puzzles before their answers can come.
        let metas = std::mem::replace(&mut self.sent, Vec::with_capacity(next));
        if self.to_writer.send_blocking(Msg::Sent(metas)).is_err() {
            return false;
        }
        let items = std::mem::replace(&mut self.items, Vec::with_capacity(next));
        self.requests
            .send_blocking(wire::Request {
                items,
                options: self.options,
            })
            .is_ok()
    }
}

/// Solves through `streams` SolveBatch calls that all draw their request
/// messages from `outbox`, the one bounded queue the reader fills; answers
/// are matched by id, so they may come back in any order.
#[allow(clippy::too_many_arguments)]
fn spawn_feeds(
    outbox: async_channel::Receiver<wire::Request>,
    to_writer: async_channel::Sender<Msg>,
    client: tonic::client::Grpc<tonic::transport::Channel>,
    unique: bool,
    batch: usize,
    options: Option<pb::SolveOptions>,
    streams: usize,
    say: Option<Say>,
) {
    let cap = resend::Cap::new(batch);
    let losses = say.clone().map(spawn_loss_reporter);
    for k in 0..streams {
        let feed = Feed {
            // tonic's balancer places a call on a server whose connection
            // is ready, and connects the others only once asked: calls
            // opened at the same instant would all go to the first server
            // that answers. Opened 5 ms apart, they find every server's
            // connection up and are spread at random over them.
            start_after: std::time::Duration::from_millis(5 * k as u64),
            client: client.clone(),
            outbox: outbox.clone(),
            to_writer: to_writer.clone(),
            losses: losses.clone(),
            say: say.clone(),
            unique,
            cap: cap.clone(),
            options,
        };
        tokio::spawn(feed.run());
    }
}

/// Request messages at the start of a run that carry a quarter of
/// `--batch` puzzles each, at most [`SMALL_MESSAGE`].
const SMALL_MESSAGES: usize = 8;
const SMALL_MESSAGE: usize = 64;

/// Puzzles in request message number `sent` (from 0) of a run. The first
/// [`SMALL_MESSAGES`] carry 64 puzzles (or a quarter of a smaller `batch`):
/// the server starts on the first while the rest is read, the first
/// answers come back early, and a small file is several messages, which a
/// server solves side by side even where it does not share one message
/// out over its solver threads (older servers, and grids of other sizes).
/// A long run pays a few wake-ups more.
fn message_size(batch: usize, sent: usize) -> usize {
    if sent < SMALL_MESSAGES {
        (batch / 4).clamp(1, SMALL_MESSAGE)
    } else {
        batch
    }
}

/// One SolveBatch stream of the run: it draws request messages from the
/// queue all streams share, and when its call is lost with its server
/// (see [`resend::lost_server`]) it opens a new call on the balanced
/// channel, which sends the items the lost call left unanswered first.
/// Answers the lost call gave are kept; the writer keeps the first answer
/// for each puzzle, so nothing is printed twice.
struct Feed {
    start_after: std::time::Duration,
    client: tonic::client::Grpc<tonic::transport::Channel>,
    outbox: async_channel::Receiver<wire::Request>,
    to_writer: async_channel::Sender<Msg>,
    /// Where to say a server was lost; `None` with -q.
    losses: Option<tokio::sync::mpsc::UnboundedSender<Loss>>,
    /// Where to say other news of the run; `None` with -q.
    say: Option<Say>,
    unique: bool,
    /// Items per message at most: `--batch`, or fewer when a server says so.
    cap: resend::Cap,
    options: Option<pb::SolveOptions>,
}

/// A call lost with its server: why, and how many puzzles it left to send
/// again.
struct Loss {
    why: String,
    resent: usize,
}

impl Feed {
    /// Opens a SolveBatch call whose messages are written and read by
    /// [`wire`], as the generated client opens one with prost's.
    async fn solve_batch(
        &mut self,
        source: Source,
    ) -> Result<tonic::Response<tonic::codec::Streaming<wire::Answers>>, tonic::Status> {
        self.client
            .ready()
            .await
            .map_err(|e| tonic::Status::unknown(format!("Service was not ready: {e}")))?;
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(
            "/sudoku.v1.SudokuService/SolveBatch",
        );
        let mut request = tonic::IntoStreamingRequest::into_streaming_request(source);
        request.extensions_mut().insert(tonic::GrpcMethod::new(
            "sudoku.v1.SudokuService",
            "SolveBatch",
        ));
        let codec = BatchCodec {
            unique: self.unique,
        };
        self.client.streaming(request, path, codec).await
    }

    async fn run(mut self) {
        // A zero sleep still waits for the timer's next tick (a
        // millisecond), which a short run through a server would pay.
        if !self.start_after.is_zero() {
            tokio::time::sleep(self.start_after).await;
        }
        let mut again = Vec::new();
        // Calls failed one after another without an answer between them,
        // and since when.
        let mut failures = 0u32;
        let mut failing_since: Option<std::time::Instant> = None;
        loop {
            let (source, tracker) =
                Source::new(again, self.cap.clone(), self.options, self.outbox.clone());
            let mut opened = false;
            let result = async {
                let mut responses = self.solve_batch(source).await?.into_inner();
                opened = true;
                while let Some(msg) = responses.message().await? {
                    failures = 0;
                    failing_since = None;
                    tracker.answered(msg.iter().map(|a| a.0));
                    if self.to_writer.send(Msg::Answers(msg)).await.is_err() {
                        break;
                    }
                }
                Ok::<_, tonic::Status>(())
            }
            .await;
            // Whatever the end, the call's source takes nothing more.
            again = tracker.close();
            let status = match result {
                // Items a call that ended OK left unanswered are counted
                // by the writer.
                Ok(()) => return,
                Err(status) => status,
            };
            // A server that takes fewer items a message than `--batch`
            // (its --max-batch-items): the run goes on in messages it
            // takes, the refused one's items first. Counted as a failure,
            // so a server that refuses every size cannot hold the run.
            if let Some(max) = resend::items_limit(&status)
                && failures + 1 < resend::MAX_FAILURES
            {
                if self.cap.lower_to(max)
                    && let Some(say) = &self.say
                {
                    say.line(&format!(
                        "sudoku: the server takes at most {max} puzzles a message; \
                         sending {max} at a time (--batch {max} says so from the start)"
                    ));
                }
                if self.cap.get() <= max {
                    failures += 1;
                    continue;
                }
            }
            let finished = again.is_empty() && self.outbox.is_closed() && self.outbox.is_empty();
            let lost = resend::lost_server(&status);
            if lost && finished {
                return;
            }
            let failing_for = failing_since
                .get_or_insert_with(std::time::Instant::now)
                .elapsed();
            if !lost || failures + 1 >= resend::MAX_FAILURES || failing_for > resend::MAX_OUTAGE {
                self.outbox.close();
                let _ = self
                    .to_writer
                    .send(Msg::Fatal(status_words(&status), false))
                    .await;
                return;
            }
            failures += 1;
            // A call that never opened found a dead server in the
            // balancer's list: the loss was said when it happened.
            if opened && let Some(losses) = &self.losses {
                let _ = losses.send(Loss {
                    why: status.message().trim().to_string(),
                    resent: again.len(),
                });
            }
            tokio::time::sleep(resend::backoff(failures)).await;
        }
    }
}

/// Says on stderr that a server was lost, once per server: the streams a
/// server carried fail together, so losses that come within a quarter of
/// a second of the first are told as one.
fn spawn_loss_reporter(say: Say) -> tokio::sync::mpsc::UnboundedSender<Loss> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Loss>();
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            let (mut streams, mut resent) = (1, first.resent);
            while let Ok(more) = rx.try_recv() {
                streams += 1;
                resent += more.resent;
            }
            say.line(&format!(
                "sudoku: lost a server ({}) under {streams} stream{}; re-sending {resent} \
                 unanswered puzzles on new streams",
                first.why,
                if streams == 1 { "" } else { "s" }
            ));
        }
    });
    tx
}

/// A call's failure in words: the status message without gRPC's framing.
fn status_words(status: &tonic::Status) -> String {
    let msg = for_people(status.message());
    let msg = if msg.is_empty() {
        code_name(status.code()).to_ascii_lowercase()
    } else {
        msg
    };
    match status.code() {
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal => {
            format!("lost the server ({msg})")
        }
        _ => msg,
    }
}

pub(super) fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A message without the wire field path a server puts first
/// (`items[0].puzzle: `, `puzzle.text: `): people did not write fields.
pub(super) fn without_field_path(msg: &str) -> &str {
    match msg.split_once(": ") {
        Some((head, rest))
            if !head.is_empty()
                && head
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c)) =>
        {
            rest
        }
        _ => msg,
    }
}

/// A server's message in the words this command uses everywhere else: no
/// wire field path, rows, columns and boxes numbered from 1 (the wire
/// counts from 0, and names a cell by its index too), and a clash of givens
/// said as `--local` says it. So `--local` and `--server` give the same
/// words for the same fault.
pub(super) fn for_people(msg: &str) -> String {
    let msg = renumbered(without_field_path(msg).trim());
    // "A and B both hold D in U" is the server's clash; the command says
    // "D is given twice in U: at A and B".
    if let Some((cells, rest)) = msg.split_once(" both hold ")
        && let Some((first, second)) = cells.split_once(" and ")
        && let Some((digit, unit)) = rest.split_once(" in ")
        && !digit.is_empty()
        && digit.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return format!("{digit} is given twice in {unit}: at {first} and {second}");
    }
    msg
}

/// `msg` with each `row N`, `column N` and `box N` counted from 1, and
/// `cell I (row R, column C)` said as `row R+1, column C+1`.
fn renumbered(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len() + 8);
    let mut rest = msg;
    // Inside "cell I (...)": its closing parenthesis is dropped.
    let mut in_cell = false;
    'next: while let Some(c) = rest.chars().next() {
        let at_word = !out.ends_with(|p: char| p.is_ascii_alphanumeric());
        if at_word {
            if let Some(after) = rest.strip_prefix("cell ")
                && let digits = after.bytes().take_while(u8::is_ascii_digit).count()
                && digits > 0
                && let Some(inner) = after[digits..].strip_prefix(" (")
            {
                in_cell = true;
                rest = inner;
                continue;
            }
            for word in ["row ", "column ", "box "] {
                if let Some(after) = rest.strip_prefix(word)
                    && let digits = after.bytes().take_while(u8::is_ascii_digit).count()
                    && (1..=4).contains(&digits)
                    && let Ok(n) = after[..digits].parse::<u32>()
                {
                    out.push_str(word);
                    out.push_str(&(n + 1).to_string());
                    rest = &after[digits..];
                    continue 'next;
                }
            }
        }
        rest = &rest[c.len_utf8()..];
        if c == ')' && in_cell {
            in_cell = false;
            continue;
        }
        out.push(c);
    }
    out
}

/// "1 puzzle", "2 puzzles".
pub(super) fn puzzles(n: impl Into<u64>) -> String {
    match n.into() {
        1 => "1 puzzle".to_string(),
        n => format!("{n} puzzles"),
    }
}

/// The slot of puzzle `seq` in the reorder window `ring` that starts at
/// `base`; `None` for ids outside the window, which were never sent (or
/// are printed already).
fn place(ring: &mut VecDeque<Slot>, base: u64, window: usize, seq: u64) -> Option<&mut Slot> {
    let at = usize::try_from(seq.checked_sub(base)?).ok()?;
    if at >= window {
        return None;
    }
    while ring.len() <= at {
        ring.push_back(Slot::default());
    }
    ring.get_mut(at)
}

/// A place in the reorder window.
#[derive(Default)]
struct Slot {
    meta: Option<Meta>,
    done: Option<Done>,
}

/// The writer: answers in input order, printed as soon as they can be.
struct Printer {
    format: OutputFormat,
    output: Output,
    quiet: bool,
    window: usize,
    /// Flush when no answer is ready, so a pipeline's next stage sees each
    /// answer without delay; a regular file is left to the buffer.
    flush_when_idle: bool,
    /// For the progress line.
    counts: Arc<Counts>,
    say: Say,
}

/// What the run came to.
struct Summary {
    puzzles: u64,
    failures: u64,
    not_unique: u64,
    /// Puzzles read and sent but never answered.
    unanswered: u64,
    fatal: Option<(String, bool)>,
}

impl Summary {
    /// Says how the run went on stderr; the exit code.
    fn report(&self, quiet: bool, source: &str) -> i32 {
        if let Some((why, input)) = &self.fatal {
            if *input {
                eprintln!("sudoku: {source}: {why}");
            } else {
                eprintln!(
                    "sudoku: {why}; {} answered before that",
                    puzzles(self.puzzles)
                );
            }
            return 2;
        }
        if self.unanswered > 0 {
            eprintln!(
                "sudoku: the server ended the streams with {} puzzles unanswered; {} answered",
                self.unanswered, self.puzzles
            );
            return 2;
        }
        if self.failures > 0 {
            eprintln!(
                "{} of {} puzzles not solved{}",
                self.failures,
                self.puzzles,
                if self.not_unique > 0 {
                    format!(" ({} not unique)", self.not_unique)
                } else {
                    String::new()
                }
            );
            return 1;
        }
        if self.puzzles == 0 && !quiet {
            eprintln!("0 puzzles");
        }
        0
    }
}

impl Printer {
    fn new(args: &SolveArgs, window: usize, counts: Arc<Counts>, say: Say) -> Printer {
        let to_file = is_regular(std::io::stdout());
        Printer {
            format: args.format,
            output: args.output,
            quiet: args.quiet,
            window,
            flush_when_idle: !to_file,
            counts,
            say,
        }
    }

    /// Prints until the stages are done (or stdout closes), then sends
    /// the summary over `printed`.
    fn run(
        self,
        rx: async_channel::Receiver<Msg>,
        window: &Window,
        printed: tokio::sync::oneshot::Sender<std::io::Result<Summary>>,
    ) {
        let mut ring = VecDeque::with_capacity(self.window);
        let result = self.print(rx, window, &mut ring);
        // Printing is over (done, or stdout closed): the reader must not
        // wait for room any more.
        window.close();
        let _ = printed.send(result);
        // The ring is freed only now: unmapping it cost the end of a short
        // run 50 us.
        drop(ring);
    }

    fn print(
        &self,
        rx: async_channel::Receiver<Msg>,
        window: &Window,
        ring: &mut VecDeque<Slot>,
    ) -> std::io::Result<Summary> {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        let mut base = 0u64;
        let mut summary = Summary {
            puzzles: 0,
            failures: 0,
            not_unique: 0,
            unanswered: 0,
            fatal: None,
        };
        let mut first = true;
        // Records in the input, once it has ended.
        let mut ended = None;
        loop {
            let mut printed = 0;
            let msg = match rx.try_recv() {
                Ok(m) => m,
                Err(async_channel::TryRecvError::Empty) => {
                    if self.flush_when_idle {
                        out.flush()?;
                    }
                    match rx.recv_blocking() {
                        Ok(m) => m,
                        Err(_) => break,
                    }
                }
                Err(async_channel::TryRecvError::Closed) => break,
            };
            match msg {
                Msg::Sent(sent) => {
                    for (seq, meta) in sent {
                        if let Some(s) = place(ring, base, self.window, seq) {
                            s.meta = Some(meta);
                        }
                    }
                }
                Msg::Answers(answers) => {
                    for (seq, meta, done) in answers {
                        // Next in line with nothing waiting (answers of one
                        // local thread come in order): printed at once, not
                        // moved through the ring.
                        if let (true, Some(meta)) = (seq == base && ring.is_empty(), &meta) {
                            base += 1;
                            printed += 1;
                            self.print_one(&mut out, meta, &done, &mut first, &mut summary)?;
                            continue;
                        }
                        if let Some(s) = place(ring, base, self.window, seq) {
                            if meta.is_some() {
                                s.meta = meta;
                            }
                            // The first answer counts: nothing is printed twice.
                            s.done.get_or_insert(done);
                        }
                    }
                }
                Msg::Fatal(why, input) => {
                    summary.fatal.get_or_insert((why, input));
                    window.close();
                }
                Msg::Ended(records) => ended = Some(records),
            }
            while ring
                .front()
                .is_some_and(|s| s.meta.is_some() && s.done.is_some())
            {
                let Some(Slot {
                    meta: Some(meta),
                    done: Some(done),
                }) = ring.pop_front()
                else {
                    break;
                };
                base += 1;
                printed += 1;
                self.print_one(&mut out, &meta, &done, &mut first, &mut summary)?;
            }
            if printed > 0 {
                window.release(printed);
            }
            if summary.fatal.is_some() && rx.is_empty() || ended == Some(base) {
                break;
            }
        }
        summary.unanswered = ring.iter().filter(|s| s.meta.is_some()).count() as u64;
        out.flush()?;
        Ok(summary)
    }

    fn print_one(
        &self,
        out: &mut impl Write,
        meta: &Meta,
        done: &Done,
        first: &mut bool,
        summary: &mut Summary,
    ) -> std::io::Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        summary.puzzles += 1;
        self.counts.done.fetch_add(1, Relaxed);
        let complaint = done.complaint();
        if let Some(what) = &complaint {
            summary.failures += 1;
            self.counts.failed.fetch_add(1, Relaxed);
            if done.outcome == Outcome::NotUnique {
                summary.not_unique += 1;
            }
            if what.starts_with("line ") {
                self.say.line(what);
            } else {
                self.say.line(&format!("line {}: {what}", meta.line));
            }
        }
        if self.quiet {
            return Ok(());
        }
        if self.output == Output::Jsonl {
            return writeln!(out, "{}", json_line(meta, done));
        }
        let fmt = match self.format {
            OutputFormat::Auto => meta.format,
            OutputFormat::Line => Format::Line,
            OutputFormat::Grid => Format::Grid { spaced: true },
        };
        let multi_line = fmt != Format::Line;
        // The common line, a solution on one line, as bytes: no String and
        // no formatting per puzzle.
        if let (Some(s), None, false) = (&done.solution, &complaint, multi_line) {
            *first = false;
            let mut line = [b'\n'; CELLS + 1];
            line[..CELLS].copy_from_slice(&s.text_bytes());
            return out.write_all(&line);
        }
        if multi_line && !*first {
            writeln!(out)?;
        }
        *first = false;
        let body = match (&done.solution, &meta.echo) {
            (Some(s), _) if matches!(done.outcome, Outcome::Solved | Outcome::NotUnique) => {
                write_grid(s, fmt)
            }
            (_, Echo::Grid(g)) => write_grid(g, fmt),
            (_, Echo::Raw(raw)) => raw.clone(),
        };
        let mark = match (done.outcome, complaint) {
            (_, None) => None,
            (Outcome::NotUnique, Some(what)) => Some(what),
            (_, Some(what)) => Some(format!("error: {what}")),
        };
        match mark {
            None => writeln!(out, "{body}"),
            Some(m) if multi_line => writeln!(out, "{body}\n# {m}"),
            Some(m) => writeln!(out, "{body}  # {m}"),
        }
    }
}

/// One JSON object for one puzzle.
fn json_line(meta: &Meta, done: &Done) -> String {
    json_answer(meta.line, None, done, |g, s| {
        s.push('"');
        g.write_text(s);
        s.push('"');
    })
}

/// The `--output jsonl` object of every size: `boxed` names a box other
/// than 3x3, and `solution` writes the solution's JSON value.
pub(super) fn json_answer<G>(
    line: usize,
    boxed: Option<&dyn std::fmt::Display>,
    done: &Done<G>,
    solution: impl FnOnce(&G, &mut String),
) -> String {
    let mut s = String::with_capacity(200);
    s.push_str(&format!("{{\"line\":{line}"));
    if let Some(b) = boxed {
        s.push_str(&format!(",\"box\":\"{b}\""));
    }
    s.push_str(&format!(",\"outcome\":\"{}\"", done.outcome.name()));
    if let Some(g) = &done.solution {
        s.push_str(",\"solution\":");
        solution(g, &mut s);
    }
    s.push_str(&format!(
        ",\"solution_count\":{},\"stats\":{{\"guesses\":{},\"nodes\":{},\"solve_time_us\":{}}}",
        done.count, done.guesses, done.nodes, done.micros
    ));
    if let Some((code, msg)) = &done.error {
        s.push_str(&format!(",\"error\":{{\"code\":\"{code}\",\"message\":"));
        json_string(&mut s, msg);
        s.push('}');
    }
    s.push('}');
    s
}

/// `text` as a JSON string literal.
pub(super) fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        let mut s = String::new();
        json_string(&mut s, "a \"b\"\\\n\u{1}é");
        assert_eq!(s, r#""a \"b\"\\\n\u0001é""#);
    }

    #[test]
    fn field_paths_are_dropped() {
        assert_eq!(
            without_field_path("items[0].puzzle: cell 0 (row 0, column 0)"),
            "cell 0 (row 0, column 0)"
        );
        assert_eq!(without_field_path("no solution: here"), "no solution: here");
    }

    #[test]
    fn server_words_are_the_commands_words() {
        assert_eq!(
            for_people(
                "items[3].puzzle: cell 0 (row 0, column 0) and cell 8 (row 0, column 8) \
                 both hold 5 in row 0"
            ),
            "5 is given twice in row 1: at row 1, column 1 and row 1, column 9"
        );
        assert_eq!(
            for_people(
                "puzzle.text: cell 13 (row 1, column 4): unexpected character 'x'; \
                 expected '1'-'9', '.' or '0'"
            ),
            "row 2, column 5: unexpected character 'x'; expected '1'-'9', '.' or '0'"
        );
        assert_eq!(
            for_people(
                "current: the current grid changes a given: cell 80 (row 8, column 8) holds a \
                 blank where the puzzle gives 4"
            ),
            "the current grid changes a given: row 9, column 9 holds a blank where the puzzle \
             gives 4"
        );
        assert_eq!(
            for_people(
                "cell 30 (row 3, column 3) and cell 50 (row 5, column 5) both hold 2 in box 4"
            ),
            "2 is given twice in box 5: at row 4, column 4 and row 6, column 6"
        );
        // Nothing else is touched.
        for plain in [
            "expected 81 characters, found 80",
            "the work budget of 100000 nodes ran out",
            "narrow 3 columns",
        ] {
            assert_eq!(for_people(plain), plain);
        }
    }
}
