//! The grids of a run chosen before it starts (`--box RxC`, `--box auto`,
//! or the size of the input's first record), and the records of a run of
//! another size than 9x9 read into the pipeline's work items: each a
//! [`Puzzle::Sized`], with the layout its solution is written back in.
//! A 9x9 grid of 3x3 boxes always takes the 9x9 reader and engine.

use std::io::Read;
use std::sync::Arc;

use anyhow::anyhow;

use super::answer::{Echo, Meta, Puzzle};
use super::sniff::{Sniffed, needs_box};
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::puzzle::text::Reader;

/// The grids of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grids {
    /// 9x9 with 3x3 boxes: the fast reader, engine and codec.
    Nine,
    /// Another size (or 9x9 with other boxes): the generic ones.
    Sized(Shape),
    /// A side whose box the first record cannot tell (6, 12, 7...): every
    /// record is answered with an error that asks for `--box`.
    NeedsBox(usize),
}

impl Grids {
    /// The grids of `--box RxC`.
    pub(super) fn given(shape: Shape) -> Grids {
        match shape == Shape::CLASSIC {
            true => Grids::Nine,
            false => Grids::Sized(shape),
        }
    }

    /// The grids the first record tells (`sniffed`, `None` for 9x9), with
    /// `--box auto` (`auto`) or without `--box`. What box was taken is
    /// said on stderr unless `quiet`.
    pub(super) fn sniffed(
        sniffed: Option<Sniffed>,
        auto: bool,
        quiet: bool,
    ) -> anyhow::Result<Grids> {
        let say = |s: Shape, how: &str| {
            if !quiet {
                eprintln!("sudoku: {} puzzles, {how}", s.describe());
            }
        };
        Ok(match (sniffed, auto) {
            (None | Some(Sniffed::Nine), _) => Grids::Nine,
            (Some(Sniffed::Square(s)), false) => {
                say(s, "the size of the first record");
                Grids::Sized(s)
            }
            (Some(Sniffed::NeedsBox(n)), false) => Grids::NeedsBox(n),
            (Some(Sniffed::Square(s)), true) => {
                say(s, &format!("boxes {s} (--box to choose)"));
                Grids::Sized(s)
            }
            (Some(Sniffed::NeedsBox(n)), true) => {
                let s = Shape::for_side(n)
                    .ok_or_else(|| anyhow!("no box fits a side of {n}; give --box RxC"))?;
                say(s, &format!("boxes {s} (--box to choose)"));
                Grids::Sized(s)
            }
        })
    }
}

/// The records of a run of another size, read one at a time as the
/// pipeline takes them.
pub(super) struct SizedRecords {
    records: Reader<Box<dyn Read + Send>, Vec<u32>>,
    /// The run's box; `None` when it needs `--box`.
    shape: Option<Shape>,
    side: usize,
}

/// A record read: where it came from, and its puzzle or why there is none.
pub(super) type ReadRecord = (Meta, Result<Puzzle, String>);

impl SizedRecords {
    /// The records of `input` for a run of `grids` (not [`Grids::Nine`]).
    pub(super) fn new(input: Box<dyn Read + Send>, grids: Grids) -> SizedRecords {
        let (shape, side) = match grids {
            Grids::Sized(s) => (Some(s), s.side()),
            Grids::NeedsBox(n) => (None, n),
            Grids::Nine => (Some(Shape::CLASSIC), 9),
        };
        SizedRecords {
            records: Reader::of_side(input, side),
            shape,
            side,
        }
    }

    /// True when a record can be read without waiting for the input.
    pub(super) fn has_buffered(&self) -> bool {
        self.records.has_buffered()
    }

    /// The next record; `None` at the end of the input, `Err` when it
    /// cannot be read on.
    pub(super) fn next_record(&mut self) -> Option<std::io::Result<ReadRecord>> {
        let r = match self.records.next()? {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let puzzle = match (r.puzzle, self.shape) {
            (_, None) => Err(needs_box(self.side)),
            // The reader's errors name the line (and column).
            (Err(e), _) => Err(e),
            (Ok(c), Some(shape)) => SizedGrid::from_cells(shape, &c)
                .and_then(|g| g.check_givens().map(|()| g))
                .map(|g| Puzzle::Sized(Arc::new(g)))
                .map_err(|e| e.to_string()),
        };
        let meta = Meta {
            line: r.line,
            format: r.format,
            echo: Echo::Sized {
                shape: self.shape,
                raw: r.raw,
            },
        };
        Some(Ok((meta, puzzle)))
    }
}
