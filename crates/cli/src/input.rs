//! The input of `sudoku solve`: the puzzle file or stdin, its first record
//! looked at for the grids' size, and its records (9x9 by the fast reader,
//! other sizes by `sized.rs`) read one at a time, numbered in input order
//! and handed on as [`Work`], each taking a place in the reorder window.

use std::io::Read;
use std::path::Path;

use anyhow::Context;

use super::answer::{Done, Echo, Meta, Puzzle};
use super::printer::Msg;
use super::sized::{Grids, ReadRecord, SizedRecords};
use super::sniff::{Sniffed, sniff};
use super::window::Window;
use sudoku_core::puzzle::text::{Entry, Reader};

/// The puzzle file, or stdin for none or "-".
pub(super) fn open(file: Option<&Path>) -> anyhow::Result<Box<dyn Read + Send>> {
    Ok(match file {
        Some(p) if p.as_os_str() != "-" => Box::new(
            std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        _ => Box::new(std::io::stdin()),
    })
}

/// True when the input (FILE, or stdin redirected from a file) is a
/// regular file.
pub(super) fn is_regular_file(file: Option<&Path>) -> bool {
    match file {
        Some(p) if p.as_os_str() != "-" => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
        _ => is_regular(std::io::stdin()),
    }
}

/// True when `fd` (stdin, stdout) is open on a regular file.
pub(super) fn is_regular(fd: impl std::os::fd::AsFd) -> bool {
    fd.as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

/// The input of a run without `--box`, and the size of its grids when
/// its first record is not 9x9.
pub(super) fn sniffed(
    file: Option<&Path>,
) -> anyhow::Result<(Box<dyn Read + Send>, Option<Sniffed>)> {
    let (input, s) = sniff(open(file)?).context(match file {
        Some(p) if p.as_os_str() != "-" => format!("cannot read {}", p.display()),
        _ => "cannot read stdin".to_string(),
    })?;
    Ok((input, (s != Sniffed::Nine).then_some(s)))
}

/// What the reader hands to the solving stage.
pub(super) enum Work {
    Puzzle(u64, Meta, Puzzle),
    /// The input has nothing more buffered: send what is batched.
    Idle,
}

/// Reads `input` record by record: unreadable puzzles go straight to the
/// writer, the others to `work`, which returns false to stop the reading.
pub(super) fn read_input(
    input: Box<dyn Read + Send>,
    grids: Grids,
    window: &Window,
    to_writer: &async_channel::Sender<Msg>,
    work: impl FnMut(Work) -> bool,
) {
    Records::new(input, grids).read(window, to_writer, Waits::Yes, work);
}

/// The input's records, numbered in order as they are read; reading can
/// stop and go on later (on another thread).
pub(super) struct Records {
    source: Source,
    seq: u64,
}

/// The reader of a run's records: 9x9, or another size.
enum Source {
    Nine(Reader<Box<dyn Read + Send>>),
    Sized(SizedRecords),
}

/// Whether [`Records::read`] may wait for a place in the window.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Waits {
    Yes,
    /// No: with no place free it stops, as when `work` says so (the
    /// writer that frees places may not have started).
    No,
}

/// Why [`Records::read`] returned.
#[derive(PartialEq, Eq)]
pub(super) enum ReadEnd {
    /// The input is read to its end (and `work` had its last `Idle`).
    Ended,
    /// `work` said so, a fatal read error, the window closed, or (with
    /// [`Waits::No`]) no place was free.
    Stopped,
}

impl Records {
    /// The records of `input`, from its first, for a run of `grids`.
    pub(super) fn new(input: Box<dyn Read + Send>, grids: Grids) -> Records {
        let source = match grids {
            // Sound puzzles are echoed from their grid, so their lines
            // need no copy.
            Grids::Nine => Source::Nine(Reader::new(input).raw_of_failures_only()),
            other => Source::Sized(SizedRecords::new(input, other)),
        };
        Records { source, seq: 0 }
    }

    /// True when a record can be read without waiting for the input.
    fn has_buffered(&self) -> bool {
        match &self.source {
            Source::Nine(r) => r.has_buffered(),
            Source::Sized(r) => r.has_buffered(),
        }
    }

    /// The next record: where it came from, and its puzzle or why there is
    /// none; `None` at the end, `Err` when the input cannot be read on.
    fn next_record(&mut self) -> Option<Result<ReadRecord, String>> {
        let entry = match &mut self.source {
            Source::Nine(reader) => match reader.next()? {
                Ok(e) => e,
                Err(e) => return Some(Err(e.to_string())),
            },
            Source::Sized(records) => {
                return Some(records.next_record()?.map_err(|e| e.to_string()));
            }
        };
        let Entry {
            line,
            format,
            puzzle,
            raw,
            givens_ok,
        } = entry;
        // Givens the reader checked while reading need no second look.
        let checked = puzzle.and_then(|g| match givens_ok {
            true => Ok(g),
            false => g.check_givens().map(|()| g).map_err(|e| e.to_string()),
        });
        Some(Ok(match checked {
            Ok(g) => {
                let echo = Echo::Grid(g);
                (Meta { line, format, echo }, Ok(Puzzle::Nine(g)))
            }
            Err(msg) => {
                let echo = Echo::Raw(raw);
                (Meta { line, format, echo }, Err(msg))
            }
        }))
    }

    /// Reads records, handing each to `work` (see [`read_input`]), until
    /// the input ends or the reading stops.
    pub(super) fn read(
        &mut self,
        window: &Window,
        to_writer: &async_channel::Sender<Msg>,
        waits: Waits,
        mut work: impl FnMut(Work) -> bool,
    ) -> ReadEnd {
        loop {
            if !self.has_buffered() && !work(Work::Idle) {
                return ReadEnd::Stopped;
            }
            // Only this thread takes places: with room now, the place
            // taken below is had without waiting.
            if waits == Waits::No && !window.has_room() {
                return ReadEnd::Stopped;
            }
            let (meta, puzzle) = match self.next_record() {
                None => break,
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    let _ = to_writer.send_blocking(Msg::Fatal(e, true));
                    break;
                }
            };
            if !window.acquire() {
                return ReadEnd::Stopped;
            }
            let seq = self.seq;
            self.seq += 1;
            match puzzle {
                Ok(g) => {
                    if !work(Work::Puzzle(seq, meta, g)) {
                        return ReadEnd::Stopped;
                    }
                }
                Err(msg) => {
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
