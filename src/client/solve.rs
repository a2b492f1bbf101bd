//! `sudoku solve`: puzzles from a file or stdin, solved through a server
//! (SolveBatch) or in this process, printed in input order in the input's
//! own format, as a stream.
//!
//! Three stages run at once, so memory stays flat however long the input:
//! a reader thread parses one record at a time and hands puzzles on; the
//! solvers (a pool of threads with `--local`, else SolveBatch streams fed
//! from one bounded channel) answer them; a writer puts the answers back in
//! input order and prints each as soon as everything before it is printed.
//! A reorder window of `--batch` x `--window` puzzles bounds what is read
//! but not yet printed: when it is full the reader waits (backpressure), so
//! a slow puzzle holds back only the output behind it.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::connect::connect_all;
use crate::pb;
use crate::pb::sudoku_service_client::SudokuServiceClient;
use crate::puzzle::text::{Entry, Format, Reader, write_grid};
use crate::puzzle::{Grid, GridError};
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
    /// Puzzles per SolveBatch request message (per work item with --local).
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Messages (of --batch puzzles) in flight at once. Puzzles read but not
    /// yet printed are at most --batch x --window (4096 by default): reading
    /// waits while that many are pending, so memory stays flat.
    #[arg(long, default_value_t = 64)]
    window: usize,
    /// SolveBatch calls at once, fed from one queue of request messages. A
    /// proxy that balances per call (nginx, a mesh) may send each call to a
    /// different server.
    #[arg(long, default_value_t = 1)]
    streams: usize,
    /// Work budget per puzzle for --local, in search nodes.
    #[arg(long, default_value_t = 5_000_000)]
    max_nodes: u64,
    /// Print nothing but failures (for timing runs).
    #[arg(long, short)]
    quiet: bool,
}

/// Where a puzzle came from, kept until its answer is printed.
struct Meta {
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
enum Outcome {
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
    fn name(self) -> &'static str {
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

/// The answer for one puzzle.
struct Done {
    outcome: Outcome,
    solution: Option<Grid>,
    count: u64,
    guesses: u64,
    nodes: u64,
    micros: u64,
    /// gRPC code name and message, for the failures that have one.
    error: Option<(&'static str, String)>,
}

impl Done {
    fn invalid(msg: String) -> Done {
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

    /// What to say about a failure; `None` when solved.
    fn complaint(&self) -> Option<String> {
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
enum Msg {
    /// A puzzle sent to a server, to be matched with its answer by id.
    Sent(u64, Meta),
    /// Answers, with their puzzle's `Meta` when it was not sent before.
    Answers(Vec<(u64, Option<Meta>, Done)>),
    /// The run cannot go on: what went wrong, and whether the input
    /// (rather than a server) is at fault.
    Fatal(String, bool),
}

/// The reorder window's free places: the reader takes one per puzzle, the
/// writer gives them back as it prints.
struct Window {
    state: Mutex<(usize, bool)>,
    cv: Condvar,
}

impl Window {
    fn new(size: usize) -> Window {
        Window {
            state: Mutex::new((size, false)),
            cv: Condvar::new(),
        }
    }

    /// Waits for a free place; false once the window is closed.
    fn acquire(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 == 0 && !s.1 {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.1 {
            return false;
        }
        s.0 -= 1;
        true
    }

    fn release(&self, n: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += n;
        self.cv.notify_one();
    }

    /// Stops the reader: nothing more will be printed.
    fn close(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 = true;
        self.cv.notify_all();
    }
}

/// What the reader hands to the solving stage.
enum Work {
    Puzzle(u64, Meta, Grid),
    /// The input has nothing more buffered: send what is batched.
    Idle,
}

pub async fn run(args: SolveArgs) -> anyhow::Result<i32> {
    let input: Box<dyn Read + Send> = match &args.file {
        Some(p) if p.as_os_str() != "-" => Box::new(
            std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        _ => Box::new(std::io::stdin()),
    };
    let source = match &args.file {
        Some(p) if p.as_os_str() != "-" => p.display().to_string(),
        _ => "stdin".to_string(),
    };
    let batch = args.batch.max(1);
    let window_size = batch.saturating_mul(args.window.max(1));
    let window = Arc::new(Window::new(window_size));
    let (to_writer, from_stages) = async_channel::unbounded::<Msg>();
    let printer = Printer::new(&args, window_size);
    let writer = {
        let window = window.clone();
        std::thread::spawn(move || printer.run(from_stages, &window))
    };
    let limit = if args.unique { 2 } else { 1 };
    if args.local {
        let threads = if args.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            args.threads
        };
        solve_local(
            input,
            &window,
            to_writer,
            limit,
            args.max_nodes,
            threads,
            batch,
            args.window.max(1),
        );
    } else {
        let servers: Vec<String> = args.server.iter().map(|s| s.trim().to_string()).collect();
        let channel = match connect_all(&servers).await {
            Ok(c) => c,
            Err(e) => {
                window.close();
                return Err(e);
            }
        };
        let client = SudokuServiceClient::new(channel).max_decoding_message_size(64 << 20);
        solve_remote(
            input,
            window.clone(),
            to_writer,
            client,
            limit,
            batch,
            args.window.max(1),
            args.streams.max(1),
        );
    }
    let summary = tokio::task::spawn_blocking(move || writer.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the output thread failed"))??;
    Ok(summary.report(args.quiet, &source))
}

/// Reads `input` record by record: unreadable puzzles go straight to the
/// writer, the others to `work`, which returns false to stop the reading.
fn read_input(
    input: Box<dyn Read + Send>,
    window: &Window,
    to_writer: &async_channel::Sender<Msg>,
    mut work: impl FnMut(Work) -> bool,
) {
    let mut reader = Reader::new(input);
    let mut seq = 0u64;
    loop {
        if !reader.has_buffered() && !work(Work::Idle) {
            return;
        }
        let entry = match reader.next() {
            None => break,
            Some(Ok(e)) => e,
            Some(Err(e)) => {
                let _ = to_writer.send_blocking(Msg::Fatal(e.to_string(), true));
                break;
            }
        };
        if !window.acquire() {
            return;
        }
        let Entry {
            line,
            format,
            puzzle,
            raw,
        } = entry;
        match puzzle.and_then(|g| g.check_givens().map(|()| g).map_err(|e| explain(&e))) {
            Ok(g) => {
                let meta = Meta {
                    line,
                    format,
                    echo: Echo::Grid(g),
                };
                if !work(Work::Puzzle(seq, meta, g)) {
                    return;
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
                    return;
                }
            }
        }
        seq += 1;
    }
    work(Work::Idle);
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

/// Solves in-process: the reader feeds `threads` solver threads work items
/// of `batch` puzzles through a bounded channel.
#[allow(clippy::too_many_arguments)]
fn solve_local(
    input: Box<dyn Read + Send>,
    window: &Arc<Window>,
    to_writer: async_channel::Sender<Msg>,
    limit: u32,
    max_nodes: u64,
    threads: usize,
    batch: usize,
    queue: usize,
) {
    let (jobs, todo) = async_channel::bounded::<Vec<(u64, Meta, Grid)>>(queue);
    for _ in 0..threads.max(1) {
        let todo = todo.clone();
        let to_writer = to_writer.clone();
        std::thread::spawn(move || {
            // One solver per thread, restarted per puzzle: no allocation
            // in the engine.
            let mut solver = Solver::new(&Grid::EMPTY, 1);
            while let Ok(items) = todo.recv_blocking() {
                let answers = items
                    .into_iter()
                    .map(|(seq, meta, g)| {
                        (
                            seq,
                            Some(meta),
                            solve_one(&mut solver, &g, limit, max_nodes),
                        )
                    })
                    .collect();
                if to_writer.send_blocking(Msg::Answers(answers)).is_err() {
                    return;
                }
            }
        });
    }
    drop(todo);
    let window = window.clone();
    std::thread::spawn(move || {
        let mut items = Vec::with_capacity(batch);
        read_input(input, &window, &to_writer, |w| {
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
    });
}

fn solve_one(solver: &mut Solver, g: &Grid, limit: u32, max_nodes: u64) -> Done {
    let started = Instant::now();
    solver.restart(g, limit);
    solver.resume(max_nodes);
    let a = solver.answer();
    let micros = started.elapsed().as_micros() as u64;
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

/// Solves through `streams` SolveBatch calls that all draw their request
/// messages from one bounded queue the reader fills; answers are matched
/// by id, so they may come back in any order.
#[allow(clippy::too_many_arguments)]
fn solve_remote(
    input: Box<dyn Read + Send>,
    window: Arc<Window>,
    to_writer: async_channel::Sender<Msg>,
    client: SudokuServiceClient<tonic::transport::Channel>,
    limit: u32,
    batch: usize,
    queue: usize,
    streams: usize,
) {
    let options = Some(pb::SolveOptions {
        mode: if limit > 1 {
            pb::SolveMode::Count as i32
        } else {
            pb::SolveMode::Any as i32
        },
        max_solutions: limit,
    });
    let (requests, outbox) = async_channel::bounded::<pb::SolveBatchRequest>(queue);
    for _ in 0..streams {
        let mut client = client.clone();
        let outbox = outbox.clone();
        let to_writer = to_writer.clone();
        tokio::spawn(async move {
            let result = async {
                let mut responses = client.solve_batch(outbox.clone()).await?.into_inner();
                while let Some(msg) = responses.message().await? {
                    let answers = msg
                        .results
                        .into_iter()
                        .map(|r| (r.id, None, done_of(r, limit > 1)))
                        .collect();
                    if to_writer.send(Msg::Answers(answers)).await.is_err() {
                        break;
                    }
                }
                Ok::<_, tonic::Status>(())
            }
            .await;
            if let Err(status) = result {
                outbox.close();
                let _ = to_writer
                    .send(Msg::Fatal(status_words(&status), false))
                    .await;
            }
        });
    }
    drop(outbox);
    std::thread::spawn(move || {
        let mut items = Vec::with_capacity(batch);
        read_input(input, &window, &to_writer, |w| {
            match w {
                Work::Puzzle(seq, meta, g) => {
                    if to_writer.send_blocking(Msg::Sent(seq, meta)).is_err() {
                        return false;
                    }
                    items.push(pb::BatchItem {
                        id: seq,
                        puzzle: Some(pb::Grid {
                            text: g.to_text(),
                            cells: Vec::new(),
                        }),
                    });
                    if items.len() < batch {
                        return true;
                    }
                }
                Work::Idle if items.is_empty() => return true,
                Work::Idle => {}
            }
            let items = std::mem::replace(&mut items, Vec::with_capacity(batch));
            requests
                .send_blocking(pb::SolveBatchRequest { items, options })
                .is_ok()
        });
    });
}

/// A call's failure in words: the status message without gRPC's framing.
fn status_words(status: &tonic::Status) -> String {
    let msg = status.message().trim();
    let msg = if msg.is_empty() {
        code_name(status.code()).to_ascii_lowercase()
    } else {
        msg.to_string()
    };
    match status.code() {
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal => {
            format!("lost the server ({msg})")
        }
        _ => msg,
    }
}

fn code_name(code: tonic::Code) -> &'static str {
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
fn without_field_path(msg: &str) -> &str {
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

fn done_of(r: pb::BatchResult, unique: bool) -> Done {
    let mut done = Done {
        outcome: Outcome::Failed,
        solution: None,
        count: 0,
        guesses: 0,
        nodes: 0,
        micros: 0,
        error: None,
    };
    match r.result {
        Some(pb::batch_result::Result::Solution(s)) => {
            done.solution = s.grid.as_ref().and_then(|g| {
                if g.text.is_empty() {
                    Grid::from_cells(&g.cells).ok()
                } else {
                    Grid::from_text(&g.text).ok()
                }
            });
            done.count = s.solution_count;
            if let Some(st) = s.stats {
                (done.guesses, done.nodes, done.micros) = (st.guesses, st.nodes, st.solve_time_us);
            }
            done.outcome = match (s.outcome(), done.solution.is_some()) {
                (pb::Outcome::Solved, true) => Outcome::Solved,
                (pb::Outcome::MultipleSolutions, true) if unique => Outcome::NotUnique,
                (pb::Outcome::MultipleSolutions, true) => Outcome::Solved,
                (pb::Outcome::NoSolution, _) => Outcome::NoSolution,
                (pb::Outcome::WorkLimitReached, _) => Outcome::WorkLimit,
                (o, _) => {
                    done.error =
                        Some(("UNKNOWN", format!("unexpected answer {}", o.as_str_name())));
                    Outcome::Failed
                }
            };
        }
        Some(pb::batch_result::Result::Error(status)) => {
            let code = code_name(tonic::Code::from_i32(status.code));
            done.outcome = if code == "INVALID_ARGUMENT" {
                Outcome::Invalid
            } else {
                Outcome::Failed
            };
            done.error = Some((code, without_field_path(&status.message).to_string()));
        }
        None => done.error = Some(("UNKNOWN", "the server sent an empty result".into())),
    }
    done
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
                    "sudoku: {why}; {} puzzles answered before that",
                    self.puzzles
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
    fn new(args: &SolveArgs, window: usize) -> Printer {
        use std::os::fd::AsFd;
        let to_file = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.is_file());
        Printer {
            format: args.format,
            output: args.output,
            quiet: args.quiet,
            window,
            flush_when_idle: !to_file,
        }
    }

    fn run(self, rx: async_channel::Receiver<Msg>, window: &Window) -> std::io::Result<Summary> {
        let result = self.print(rx, window);
        // Printing is over (done, or stdout closed): the reader must not
        // wait for room any more.
        window.close();
        result
    }

    fn print(&self, rx: async_channel::Receiver<Msg>, window: &Window) -> std::io::Result<Summary> {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        let mut ring: VecDeque<Slot> = VecDeque::with_capacity(self.window);
        let mut base = 0u64;
        let mut summary = Summary {
            puzzles: 0,
            failures: 0,
            not_unique: 0,
            unanswered: 0,
            fatal: None,
        };
        let mut first = true;
        loop {
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
                Msg::Sent(seq, meta) => {
                    if let Some(s) = place(&mut ring, base, self.window, seq) {
                        s.meta = Some(meta);
                    }
                }
                Msg::Answers(answers) => {
                    for (seq, meta, done) in answers {
                        if let Some(s) = place(&mut ring, base, self.window, seq) {
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
            }
            let mut printed = 0;
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
            if summary.fatal.is_some() && rx.is_empty() {
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
        summary.puzzles += 1;
        let complaint = done.complaint();
        if let Some(what) = &complaint {
            summary.failures += 1;
            if done.outcome == Outcome::NotUnique {
                summary.not_unique += 1;
            }
            if what.starts_with("line ") {
                eprintln!("{what}");
            } else {
                eprintln!("line {}: {what}", meta.line);
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
    let mut s = String::with_capacity(200);
    s.push_str(&format!(
        "{{\"line\":{},\"outcome\":\"{}\"",
        meta.line,
        done.outcome.name()
    ));
    if let Some(g) = &done.solution {
        s.push_str(",\"solution\":\"");
        g.write_text(&mut s);
        s.push('"');
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
}
