//! The writer of `sudoku solve`: a thread that puts the answers back in
//! input order and prints each as soon as everything before it is printed,
//! as text (each in its record's format or layout) or `--output jsonl`;
//! and what the other stages tell it ([`Msg`]).

use std::collections::VecDeque;
use std::io::Write;
use std::sync::Arc;

use clap::ValueEnum;

use super::answer::{Answer, Done, Echo, Meta, Outcome, Output, Puzzle, write_json_of};
use super::progress::{Counts, Say};
use super::sized_text::{as_asked, marked};
use super::window::Window;
use super::words::puzzles;
use sudoku_core::puzzle::CELLS;
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_core::puzzle::text::{Format, write_grid, write_values};

/// How to lay out solutions in text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum OutputFormat {
    /// The format each puzzle was written in.
    Auto,
    /// 81-character lines.
    Line,
    /// Nine lines of nine space-separated digits (N lines for other sizes).
    Grid,
}

/// What the stages tell the writer.
pub(super) enum Msg {
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

/// How the writer prints: `--format`, `--output` and `-q`.
#[derive(Clone, Copy)]
pub(super) struct Print {
    pub(super) format: OutputFormat,
    pub(super) output: Output,
    pub(super) quiet: bool,
    /// Flush when no answer is ready, so a pipeline's next stage sees each
    /// answer without delay; false for a regular file, left to the buffer.
    pub(super) flush_when_idle: bool,
}

/// The writer thread, before it starts: what the stages send it waits in
/// its channel until then.
pub(super) struct Writer {
    printer: Printer,
    from_stages: async_channel::Receiver<Msg>,
    window: Arc<Window>,
}

/// The writer's summary as it returns (closed if it panics): waited for
/// without a blocking thread in an async run, and without waiting for the
/// thread's own end (its stacks unmapped) in either.
pub(super) type Printed = tokio::sync::oneshot::Receiver<std::io::Result<Summary>>;

impl Writer {
    /// The writer of a run of `window` places, whose stages send it their
    /// news over `from_stages`.
    pub(super) fn new(
        print: Print,
        window: Arc<Window>,
        size: usize,
        from_stages: async_channel::Receiver<Msg>,
        progress: (Arc<Counts>, Say),
    ) -> Writer {
        let (counts, say) = progress;
        Writer {
            printer: Printer {
                print,
                window: size,
                counts,
                say,
            },
            from_stages,
            window,
        }
    }

    /// Starts the writer thread.
    pub(super) fn start(self) -> Printed {
        let (printed, done) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || self.printer.run(self.from_stages, &self.window, printed));
        done
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
    print: Print,
    window: usize,
    /// For the progress line.
    counts: Arc<Counts>,
    say: Say,
}

/// What the run came to.
pub(super) struct Summary {
    puzzles: u64,
    failures: u64,
    not_unique: u64,
    /// Puzzles read and sent but never answered.
    unanswered: u64,
    fatal: Option<(String, bool)>,
}

impl Summary {
    /// Says how the run went on stderr; the exit code.
    pub(super) fn report(&self, quiet: bool, source: &str) -> i32 {
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
        // The ring is freed only now: unmapping it would delay the end of
        // a short run.
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
                    if self.print.flush_when_idle {
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
            self.say.line(&at_line(meta.line, what));
        }
        if self.print.quiet {
            return Ok(());
        }
        if self.print.output == Output::Jsonl {
            return write_json_of(out, meta, done);
        }
        if let Echo::Sized { raw, .. } = &meta.echo {
            return self.print_sized(out, meta.line, meta.format, raw, done, complaint);
        }
        let fmt = match self.print.format {
            OutputFormat::Auto => meta.format,
            OutputFormat::Line => Format::Line,
            OutputFormat::Grid => Format::grid(true),
        };
        let multi_line = fmt != Format::Line;
        // The common line, a solution on one line, as bytes: no String and
        // no formatting per puzzle.
        if let (Some(Puzzle::Nine(s)), None, false) = (&done.solution, &complaint, multi_line) {
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
            (Some(Puzzle::Nine(s)), _)
                if matches!(done.outcome, Outcome::Solved | Outcome::NotUnique) =>
            {
                write_grid(s, fmt)
            }
            (_, Echo::Grid(g)) => write_grid(g, fmt),
            (_, Echo::Raw(raw) | Echo::Sized { raw, .. }) => raw.clone(),
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

    /// Prints the answer of a record of another size, written in its
    /// record's layout (or the one `--format` asks for): a solution (a
    /// second one found marked `# not unique`, as 9x9 grids are), or the
    /// record as given with `# error: line N: ...`.
    fn print_sized(
        &self,
        out: &mut impl Write,
        line: usize,
        format: Format,
        raw: &str,
        done: &Done,
        complaint: Option<String>,
    ) -> std::io::Result<()> {
        let asked = match self.print.format {
            OutputFormat::Auto => None,
            OutputFormat::Line => Some(true),
            OutputFormat::Grid => Some(false),
        };
        let solution = match (&done.solution, done.outcome) {
            (Some(Puzzle::Sized(s)), Outcome::Solved | Outcome::NotUnique) => Some(s),
            _ => None,
        };
        match (solution, complaint) {
            (Some(s), None) => {
                writeln!(out, "{}", write_sized(s, format, asked))
            }
            (Some(s), Some(what)) if done.outcome == Outcome::NotUnique => {
                let body = write_sized(s, format, asked);
                match body.contains('\n') {
                    true => writeln!(out, "{body}\n# {what}"),
                    false => writeln!(out, "{body}  # {what}"),
                }
            }
            (_, c) => {
                let why = c.unwrap_or_else(|| "no solution".to_string());
                writeln!(
                    out,
                    "{}",
                    marked(raw, &format!("# error: {}", at_line(line, &why)))
                )
            }
        }
    }
}

/// A sized solution in the format its record was written in, or the one
/// `--format` asks (`asked`, see [`as_asked`]).
fn write_sized(s: &SizedGrid, format: Format, asked: Option<bool>) -> String {
    let side = s.shape().side();
    write_values(s.values(), side, as_asked(format, asked, side))
}

/// `why` a record failed, naming its line `line` unless it already does.
fn at_line(line: usize, why: &str) -> String {
    match why.starts_with("line ") {
        true => why.to_string(),
        false => format!("line {line}: {why}"),
    }
}
