//! Reading puzzles from text as people and pipelines write them, and writing
//! solutions back in the same shape: one reader and one writer for grids of
//! every side (see docs/sizes.md), the 9x9 grid read the fast way.
//!
//! Accepted, mixed freely in one input, for a side N:
//! - lines of N*N cells: '1'-'9' (and 'A'-'Z' above 9), '.' or '0' for
//!   blanks; text after the cells is ignored (ratings, comments). Above
//!   side 9, a line of N*N integers separated by spaces or commas too.
//! - N-line blocks: one row per line, N cells separated by spaces or not;
//!   `|`, `-` and `+` box rulers are ignored.
//! - JSON boards, as in `[["5","3",".",...],...]` or `[[5,3,0,...],...]`,
//!   laid out in any way, one after another or in one array of boards:
//!   see [`super::json`].
//!
//! Lines starting with '#' and blank lines are skipped.
//!
//! [`Reader::new`] reads 9x9 grids into [`Grid`]s, an 81-character line
//! straight from the input buffer; [`Reader::of_side`] reads any side into
//! its values. Both are the one reader below.

use super::json::{self, Piece, Scanner};
use super::sized::{char_value, value_char};
use super::{CELLS, Grid};

/// The shape a puzzle was written in; solutions are written back in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One line of characters, one a cell (an 81-character line at 9x9).
    Line,
    /// One line of integers, separated by spaces or commas.
    Ints,
    /// N lines of N cells, separated by single spaces when `spaced`;
    /// integers when `ints`.
    Grid {
        /// Cells separated by spaces.
        spaced: bool,
        /// Cells written as integers.
        ints: bool,
    },
    /// A JSON board, cells as integers or strings as it was written; an
    /// answer is written on one line.
    Json(json::Style),
}

impl Format {
    /// A 9x9 grid of rows of digits, separated by spaces or not.
    pub const fn grid(spaced: bool) -> Format {
        Format::Grid {
            spaced,
            ints: false,
        }
    }
}

/// One puzzle read from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<P = Grid> {
    /// 1-based line number where the puzzle starts.
    pub line: usize,
    /// The shape it was written in.
    pub format: Format,
    /// The puzzle, or why it could not be read (a sentence naming the spot).
    pub puzzle: Result<P, String>,
    /// The input text of the puzzle, as read (for echoing failures). Empty
    /// for a sound puzzle ([`Entry::givens_ok`]) of a reader made
    /// [`Reader::raw_of_failures_only`].
    pub raw: String,
    /// True when the reader checked the givens while reading them and they
    /// keep the rules (no digit twice in a row, column or box), so
    /// [`Grid::check_givens`] would return `Ok`. False when they do not, or
    /// when it did not look (9-line grids, JSON boards, other sides): the
    /// caller checks those itself.
    pub givens_ok: bool,
}

/// What the reader makes of a record's cells: a 9x9 [`Grid`], or the
/// values of a grid of any side (`Vec<u32>`, N*N of them row-major, 0 a
/// blank; their range is the grid's to check, as it knows the box).
pub trait Board: Sized {
    /// The board of `values` (N*N, row-major), or why not, for the record
    /// at `line`.
    fn of_values(values: &[u32], line: usize) -> Result<Self, String>;
    /// The board of a line's N*N cell characters (all of them cells), and
    /// whether its givens keep the rules when the board looks while
    /// reading (false: not looked at).
    fn of_chars(cells: &[u8], line: usize) -> Result<(Self, bool), String> {
        let values: Vec<u32> = cells.iter().map(|&b| u32::from(cell_value(b))).collect();
        Ok((Self::of_values(&values, line)?, false))
    }
    /// Whether lines of N*N cells are taken straight from the input buffer
    /// (the 9x9 grid's fast path, see [`Reader::next`]).
    const IN_PLACE: bool = false;
}

impl Board for Grid {
    fn of_values(values: &[u32], line: usize) -> Result<Grid, String> {
        let mut cells = [0u8; CELLS];
        for (i, (&v, c)) in values.iter().zip(&mut cells).enumerate() {
            if v > 9 {
                return Err(format!(
                    "line {line}: row {}, column {}: value {v} is out of range; expected 0-9",
                    i / 9 + 1,
                    i % 9 + 1
                ));
            }
            *c = v as u8;
        }
        Ok(Grid(cells))
    }

    fn of_chars(cells: &[u8], _line: usize) -> Result<(Grid, bool), String> {
        let cells: &[u8; CELLS] = cells.try_into().map_err(|_| String::new())?;
        Grid::scan(cells).ok_or_else(String::new)
    }

    const IN_PLACE: bool = true;
}

impl Board for Vec<u32> {
    fn of_values(values: &[u32], _line: usize) -> Result<Vec<u32>, String> {
        Ok(values.to_vec())
    }

    fn of_chars(cells: &[u8], _line: usize) -> Result<(Vec<u32>, bool), String> {
        Ok((
            cells.iter().map(|&b| u32::from(cell_value(b))).collect(),
            false,
        ))
    }
}

/// The value of cell character byte `b` (a digit, a letter or '.').
fn cell_value(b: u8) -> u8 {
    char_value(char::from(b)).unwrap_or(0)
}

/// Whether `b` is a cell of a grid of side `side` written in characters:
/// a digit or '.', and above side 9 a letter.
fn is_cell_byte(b: u8, side: usize) -> bool {
    match b {
        b'0'..=b'9' | b'.' => true,
        b'A'..=b'Z' | b'a'..=b'z' => side > 9,
        _ => false,
    }
}

/// A row of a grid of side `side` (at most 9) read the quick way: `side`
/// cells written as digits of the side's values or '.', and nothing else
/// but single spaces and rulers; with whether the cells were spaced.
/// `None` for anything else, which [`cells_of`] reads (and says what is
/// wrong with).
#[inline]
fn digit_row(line: &[u8], side: usize) -> Option<([u32; 9], bool)> {
    if side > 9 || line.len() > 4 * side {
        return None;
    }
    let mut row = [0u32; 9];
    let (mut k, mut spaced) = (0usize, false);
    for &b in line {
        let v = match b {
            b'0' | b'.' => 0,
            b'1'..=b'9' => u32::from(b - b'0'),
            b' ' => {
                spaced = true;
                continue;
            }
            b'|' | b'-' | b'+' => continue,
            _ => return None,
        };
        if v as usize > side {
            return None;
        }
        *row.get_mut(k)? = v;
        k += 1;
    }
    (k == side).then_some((row, spaced))
}

/// Longest line the reader keeps at 9x9, in bytes; the rest of a longer
/// line is read and dropped, so one line without a newline (a binary file,
/// a runaway generator) costs this much memory and no more.
pub const MAX_LINE: usize = 64 * 1024;

/// Longest line kept at other sides: a 64x64 record of integers with
/// separators is about 16 KB.
pub const MAX_SIZED_LINE: usize = 1 << 20;

/// What one line holds besides its cells' values: how many tokens (cells
/// and bad characters or words), whether cells were spaced or integers,
/// and the first bad character or word with its column.
pub struct Cells {
    /// Cells and faults.
    pub tokens: usize,
    /// Cells separated by spaces.
    pub spaced: bool,
    /// Cells written as integers.
    pub ints: bool,
    /// The first fault: its 1-based column and what stands there.
    pub bad: Option<(usize, String)>,
}

/// Reads the cells of `line` (trimmed; `indent` characters were cut from
/// its start) for a grid of side `side` (0: not known yet), their values
/// into `values` (cleared first). Characters, one a cell, unless the side
/// is above 9 (or not known) and the line holds commas or words of several
/// characters: then integers. Rulers (`|`, `-`, `+`) and commas between
/// cells are skipped.
pub fn cells_of(line: &str, indent: usize, side: usize, values: &mut Vec<u32>) -> Cells {
    values.clear();
    let words = || {
        line.split(|c: char| c.is_whitespace() || matches!(c, '|' | '+' | ','))
            .filter(|w| !w.is_empty() && !w.chars().all(|c| c == '-'))
    };
    let wide = side == 0 || side > 9;
    // The largest value a cell may hold.
    let top = if side == 0 {
        super::sized::MAX_SIDE
    } else {
        side
    };
    // Integers: several words, with commas between them, or above side 35
    // (no characters there), or with words of several characters that are
    // all values ("12 3 ."); "1A3. 5C29" and "1234 5678" at 16x16 are cells
    // written in groups. A side not known yet takes any word of several
    // characters for an integer.
    let value = |w: &str| w.parse::<usize>().is_ok_and(|v| v <= top);
    let grouped = || {
        let mut long = words().filter(|w| w.len() > 1).peekable();
        long.peek().is_some() && (side == 0 || long.all(value))
    };
    let ints = wide && words().nth(1).is_some() && (side > 35 || line.contains(',') || grouped());
    let mut cells = Cells {
        tokens: 0,
        spaced: false,
        ints,
        bad: None,
    };
    if ints {
        cells.spaced = true;
        for (col, word) in word_columns(line) {
            cells.tokens += 1;
            match word {
                "." => values.push(0),
                w => match w.parse::<u32>() {
                    Ok(v) => values.push(v),
                    Err(_) => {
                        cells.bad.get_or_insert((indent + col, w.to_string()));
                    }
                },
            }
        }
        return cells;
    }
    for (col, c) in line.chars().enumerate() {
        if c.is_ascii() && is_cell_byte(c as u8, side.max(if wide { 35 } else { 9 })) {
            values.push(u32::from(cell_value(c as u8)));
            cells.tokens += 1;
        } else if c.is_whitespace() {
            cells.spaced = true;
        } else if !matches!(c, '|' | '-' | '+' | ',') {
            cells.tokens += 1;
            cells.bad.get_or_insert((indent + col + 1, c.to_string()));
        }
    }
    cells
}

/// The words of `line` (as [`cells_of`] splits them) with their 1-based
/// columns.
fn word_columns(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut col = 0usize;
    let mut start = None;
    let mut out = Vec::new();
    for (i, c) in line.char_indices() {
        col += 1;
        let sep = c.is_whitespace() || matches!(c, '|' | '+' | ',');
        match (sep, start) {
            (false, None) => start = Some((i, col)),
            (true, Some((s, at))) => {
                out.push((at, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((s, at)) = start {
        out.push((at, &line[s..]));
    }
    out.into_iter()
        .filter(|(_, w)| !w.chars().all(|c| c == '-'))
}

/// The characters a grid of side `side` is written in, for messages.
fn expected_chars(side: usize) -> String {
    match side {
        0..=9 => format!(
            "expected '1'-'{}', '.' or '0'",
            value_char(side.max(1) as u8)
        ),
        _ => format!(
            "expected '1'-'9', 'A'-'{}', '.' or '0'",
            value_char(side.min(35) as u8)
        ),
    }
}

struct Block {
    start: usize,
    rows: usize,
    raw: String,
    format: Format,
    error: Option<String>,
}

impl Block {
    /// The block's entry, its cells' values in `values`.
    fn into_entry<P: Board>(self, side: usize, values: &[u32]) -> Entry<P> {
        let puzzle = match self.error {
            Some(e) => Err(e),
            None if self.rows < side => Err(format!(
                "line {}: incomplete grid: {} of {side} rows",
                self.start, self.rows
            )),
            None => P::of_values(values, self.start),
        };
        Entry {
            line: self.start,
            format: self.format,
            puzzle,
            raw: self.raw,
            givens_ok: false,
        }
    }

    fn push_raw(&mut self, line: &str) {
        if !self.raw.is_empty() {
            self.raw.push('\n');
        }
        self.raw.push_str(line);
    }
}

/// Reads puzzles one record at a time from a byte stream: memory stays
/// that of one line (at most [`MAX_LINE`], [`MAX_SIZED_LINE`] above 9x9)
/// and one grid, however long the input. Yields entries in input order; an
/// `Err` (a read error, or input that is not text) ends the stream.
pub struct Reader<R, P = Grid> {
    inner: std::io::BufReader<R>,
    /// N: the grids' side.
    side: usize,
    max_line: usize,
    line_no: usize,
    buf: Vec<u8>,
    /// The grid being read, its values so far in `block_values`.
    block: Option<Block>,
    block_values: Vec<u32>,
    /// The values of the line being read.
    line_values: Vec<u32>,
    ready: std::collections::VecDeque<Entry<P>>,
    done: bool,
    /// Keep `raw` of sound puzzles too (see [`Reader::raw_of_failures_only`]).
    raw_of_all: bool,
    /// JSON boards; off between them.
    json: Scanner,
}

impl<R: std::io::Read> Reader<R> {
    /// A reader of 9x9 grids over `inner`, buffered here.
    pub fn new(inner: R) -> Reader<R> {
        Reader::with(inner, 9)
    }
}

impl<R: std::io::Read> Reader<R, Vec<u32>> {
    /// A reader of grids of side `side` (4 to 64) over `inner`, buffered
    /// here: each record's N*N values.
    pub fn of_side(inner: R, side: usize) -> Reader<R, Vec<u32>> {
        Reader::with(inner, side.max(1))
    }
}

impl<R: std::io::Read, P: Board> Reader<R, P> {
    fn with(inner: R, side: usize) -> Reader<R, P> {
        Reader {
            inner: std::io::BufReader::with_capacity(64 * 1024, inner),
            side,
            max_line: if side == 9 { MAX_LINE } else { MAX_SIZED_LINE },
            line_no: 0,
            buf: Vec::with_capacity(256),
            block: None,
            block_values: Vec::with_capacity(side * side),
            line_values: Vec::with_capacity(side * side),
            ready: std::collections::VecDeque::with_capacity(2),
            done: false,
            raw_of_all: true,
            json: Scanner::new(),
        }
    }

    /// Leaves `raw` empty for puzzles read from a line whose givens keep
    /// the rules ([`Entry::givens_ok`] and `Ok`): a caller that echoes the
    /// input only for failures saves copying every line it reads.
    pub fn raw_of_failures_only(mut self) -> Reader<R, P> {
        self.raw_of_all = false;
        self
    }

    /// The common record, read in place from the buffer with no copy: an
    /// 81-character line of cells, ending (after any ASCII commentary) in a
    /// line break that is already buffered. Anything else, or an open grid
    /// (whose fault or end the line decides), is left to `advance`; the
    /// entry is the one `advance` would make.
    fn quick_line(&mut self) -> Option<Entry<P>> {
        use std::io::BufRead;
        if !P::IN_PLACE || self.block.is_some() {
            return None;
        }
        let avail = self.inner.buffer();
        let (cells, tail) = avail.split_first_chunk::<CELLS>()?;
        // What follows the cells up to the line break: nothing, a '\r', or
        // commentary starting with a byte that is not a cell. Bytes 1-127
        // only, so the line is UTF-8 and has no NUL, as `advance` checks.
        let end = match tail {
            [b'\n', ..] => 0,
            [b'\r', b'\n', ..] => 1,
            [first, ..] if !is_cell_byte(*first, 9) => {
                let end = tail.iter().position(|&b| b == b'\n')?;
                if !tail[..end].iter().all(|&b| (1..0x80).contains(&b)) {
                    return None;
                }
                end
            }
            _ => return None,
        };
        let (grid, sound) = P::of_chars(cells, self.line_no + 1).ok()?;
        let raw = if self.raw_of_all || !sound {
            // Cells are ASCII.
            cells.iter().map(|&b| char::from(b)).collect()
        } else {
            String::new()
        };
        self.inner.consume(CELLS + end + 1);
        self.line_no += 1;
        Some(Entry {
            line: self.line_no,
            format: Format::Line,
            puzzle: Ok(grid),
            raw,
            givens_ok: sound,
        })
    }

    /// True when the next entry can be had without waiting on the input:
    /// read bytes are buffered. A caller that batches entries sends what it
    /// has before asking for more when this is false, so a puzzle written
    /// to a pipe is answered before the writer sends the next one.
    pub fn has_buffered(&self) -> bool {
        !self.ready.is_empty() || !self.inner.buffer().is_empty()
    }

    fn flush_block(&mut self) {
        if let Some(b) = self.block.take() {
            let entry = b.into_entry(self.side, &self.block_values);
            self.block_values.clear();
            self.ready.push_back(entry);
        }
    }

    fn open_block(&mut self, n: usize, format: Format) -> &mut Block {
        self.block.get_or_insert_with(|| Block {
            start: n,
            rows: 0,
            raw: String::new(),
            format,
            error: None,
        })
    }

    /// A fault on line `n`: the fault of the open grid when there is one
    /// (or when the line looks like a grid's first row), else an entry of
    /// its own.
    /// `tokens` counts the line's cells and bad characters, `cells` its cells.
    ///
    /// Inside an open grid a faulty line is one of its rows however it is
    /// spoilt (a note after the cells, an extra cell, bytes that are not
    /// text), unless it holds most of a whole puzzle: splitting the grid
    /// there would make one bad row several failed records and shift every
    /// answer after it. A line of up to 2N-1 tokens, most of them cells,
    /// looks like a row.
    fn fault(&mut self, n: usize, raw: &str, msg: String, tokens: usize, cells: usize) {
        let side = self.side;
        let starts_grid = (1..2 * side).contains(&tokens) && cells * 2 >= tokens;
        let a_row = self.block.is_some() && cells * 2 < side * side;
        if a_row || starts_grid {
            let b = self.open_block(n, Format::grid(true));
            b.error.get_or_insert(msg);
            b.rows += 1;
            b.push_raw(raw);
            if b.rows == side {
                self.flush_block();
            }
            return;
        }
        self.flush_block();
        self.ready.push_back(Entry {
            line: n,
            format: Format::Line,
            puzzle: Err(msg),
            raw: raw.to_string(),
            givens_ok: false,
        });
    }

    /// The entry of a JSON board: a grid of the reader's side, or why not.
    fn json_entry(&mut self, piece: Piece) -> Entry<P> {
        let Piece { line, raw, board } = piece;
        let side = self.side;
        let (puzzle, format) = match board {
            // The JSON reader let no value above the board's side through.
            Ok(b) if b.side == side => (P::of_values(&b.values, line), Format::Json(b.style)),
            Ok(b) => (
                Err(format!(
                    "line {line}: a JSON board of side {}; expected {side} rows of {side} cells",
                    b.side
                )),
                Format::Json(b.style),
            ),
            Err(e) => (Err(e), Format::Json(NO_STYLE)),
        };
        Entry {
            line,
            format,
            puzzle,
            raw,
            givens_ok: false,
        }
    }

    /// Reads lines until at least one entry is ready or the input ends.
    fn advance(&mut self) -> std::io::Result<()> {
        while self.ready.is_empty() {
            // A JSON board is read as bytes, not lines: its layout is free.
            if self.json.is_on() || json::starts(&mut self.inner)? {
                self.flush_block();
                if let Some(p) = self.json.next(&mut self.inner, &mut self.line_no)? {
                    let e = self.json_entry(p);
                    self.ready.push_back(e);
                }
                continue;
            }
            let Some(len) = read_line(&mut self.inner, &mut self.buf, self.max_line)? else {
                self.flush_block();
                self.done = true;
                return Ok(());
            };
            self.line_no += 1;
            let n = self.line_no;
            if n == 1 && self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
            }
            if let Some(col) = self.buf.iter().position(|&b| b == 0) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "line {n}, byte {}: a NUL byte; the input is not text",
                        col + 1
                    ),
                ));
            }
            if len > self.max_line {
                let cells = self.side * self.side;
                let shown = String::from_utf8_lossy(&self.buf[..cells.min(self.buf.len())]);
                let shown = shown.into_owned();
                let takes = match self.side {
                    0..=35 => format!("{cells} characters"),
                    _ => format!("{cells} integers"),
                };
                self.flush_block();
                self.ready.push_back(Entry {
                    line: n,
                    format: Format::Line,
                    puzzle: Err(format!(
                        "line {n}: too long ({len} bytes without a line break); \
                         a puzzle takes {takes}"
                    )),
                    raw: shown + "...",
                    givens_ok: false,
                });
                continue;
            }
            let buf = std::mem::take(&mut self.buf);
            let raw_line = match std::str::from_utf8(&buf) {
                Ok(s) => s.strip_suffix('\r').unwrap_or(s),
                Err(e) => {
                    if buf.trim_ascii_start().starts_with(b"#") {
                        self.buf = buf;
                        continue; // a comment in another encoding
                    }
                    let raw = String::from_utf8_lossy(&buf).into_owned();
                    let msg = format!(
                        "line {n}, byte {}: not UTF-8 text (byte 0x{:02x})",
                        e.valid_up_to() + 1,
                        buf[e.valid_up_to()]
                    );
                    self.fault(n, &raw, msg, 2 * self.side, 0);
                    self.buf = buf;
                    continue;
                }
            };
            self.line(n, raw_line);
            self.buf = buf;
        }
        Ok(())
    }

    /// One line of text, `n` its number.
    fn line(&mut self, n: usize, raw_line: &str) {
        let line = raw_line.trim();
        if line.is_empty() {
            self.flush_block();
            return;
        }
        if line.starts_with('#') {
            return;
        }
        if line.starts_with('[') {
            // A JSON board whose start the buffer did not show whole.
            self.flush_block();
            let mut before = n - 1;
            for p in self.json.feed_line(raw_line.as_bytes(), &mut before) {
                let e = self.json_entry(p);
                self.ready.push_back(e);
            }
            return;
        }
        let side = self.side;
        let all = side * side;
        // A line of N*N cell characters; anything after it is commentary.
        // Cells are ASCII, so bytes and characters agree up to there.
        let bytes = line.as_bytes();
        if side <= 35
            && bytes.len() >= all
            && bytes[..all].iter().all(|&b| is_cell_byte(b, side))
            && bytes.get(all).is_none_or(|&b| !is_cell_byte(b, side))
            && let Ok((g, sound)) = P::of_chars(&bytes[..all], n)
        {
            self.flush_block();
            self.ready.push_back(Entry {
                line: n,
                format: Format::Line,
                puzzle: Ok(g),
                raw: if self.raw_of_all || !sound {
                    line[..all].to_string()
                } else {
                    String::new()
                },
                givens_ok: sound,
            });
            return;
        }
        // The common row of a grid: N digits (or '.'), spaced or not.
        if let Some((row, spaced)) = digit_row(bytes, side) {
            self.push_row(n, raw_line, &row[..side], Format::grid(spaced));
            return;
        }
        // Otherwise a row (or a whole line) of cells with separators, or a
        // fault. Columns are counted in the line as written, before trimming.
        let indent = raw_line.chars().count() - raw_line.trim_start().chars().count();
        let mut values = std::mem::take(&mut self.line_values);
        let cells = cells_of(line, indent, side, &mut values);
        self.row(n, raw_line, &values, cells);
        self.line_values = values;
    }

    /// Row `values` of the grid being read (one opens at line `n` if none
    /// is), written in `format`; the grid is done at its N-th row.
    fn push_row(&mut self, n: usize, raw_line: &str, values: &[u32], format: Format) {
        let side = self.side;
        self.block_values.extend_from_slice(values);
        let b = self.open_block(n, format);
        b.rows += 1;
        b.push_raw(raw_line);
        if b.rows == side {
            self.flush_block();
        }
    }

    /// A line of cells (`values`, and what else `cells` says of the line),
    /// `n` its number: a whole record, a row of a grid, a ruler, or a
    /// fault.
    fn row(&mut self, n: usize, raw_line: &str, values: &[u32], cells: Cells) {
        let Cells {
            tokens,
            spaced,
            ints,
            bad,
        } = cells;
        let (side, count) = (self.side, values.len());
        let all = side * side;
        if let Some((col, what)) = bad {
            let msg = match ints {
                false => format!(
                    "line {n}, column {col}: unexpected character {:?}; {}",
                    what.chars().next().unwrap_or(' '),
                    expected_chars(side)
                ),
                true => format!(
                    "line {n}, column {col}: unexpected {what:?}; expected a number from 0 to {side} or '.'"
                ),
            };
            self.fault(n, raw_line, msg, tokens, count);
            return;
        }
        match count {
            0 => {} // a ruler such as "------+-------+------"
            c if c == all => {
                self.flush_block();
                self.ready.push_back(Entry {
                    line: n,
                    format: if ints { Format::Ints } else { Format::Line },
                    puzzle: P::of_values(values, n),
                    raw: raw_line.to_string(),
                    givens_ok: false,
                });
            }
            c if c == side => self.push_row(n, raw_line, values, Format::Grid { spaced, ints }),
            k => {
                let msg = format!(
                    "line {n}: found {k} cells; expected {all} on one line or {side} per row of a grid"
                );
                self.fault(n, raw_line, msg, tokens, count);
            }
        }
    }
}

impl<R: std::io::Read, P: Board> Iterator for Reader<R, P> {
    type Item = std::io::Result<Entry<P>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ready.is_empty()
            && !self.done
            && let Some(e) = self.quick_line()
        {
            return Some(Ok(e));
        }
        if self.ready.is_empty()
            && !self.done
            && let Err(e) = self.advance()
        {
            self.done = true;
            self.block = None;
            return Some(Err(e));
        }
        self.ready.pop_front().map(Ok)
    }
}

/// The style of a board that could not be read.
const NO_STYLE: json::Style = json::Style {
    ints: false,
    flat: false,
    blank: json::Blank::Dot,
};

/// The UTF-8 byte-order mark some editors write before a file's first
/// line: no character of any puzzle, so readers drop it there.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads the next line of `input` into `buf` (without its end), keeping at
/// most `max` bytes of it, so a line without a break cannot grow memory.
/// Returns the line's full length in bytes, or `None` at the end of the
/// input.
pub fn read_line(
    input: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<usize>> {
    buf.clear();
    let mut total = 0usize;
    let mut any = false;
    loop {
        let avail = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(any.then_some(total));
        }
        any = true;
        let (chunk, used, end) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], i + 1, true),
            None => (avail, avail.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        total += chunk.len();
        input.consume(used);
        if end {
            return Ok(Some(total));
        }
    }
}

/// Reads every 9x9 puzzle in `text`, stopping at a NUL byte (not text).
pub fn read_puzzles(text: &str) -> Vec<Entry> {
    Reader::new(text.as_bytes()).map_while(Result::ok).collect()
}

/// Writes `grid` in `format` (no trailing newline).
pub fn write_grid(grid: &Grid, format: Format) -> String {
    match format {
        Format::Line => grid.to_text(),
        other => write_values(&grid.0, 9, other),
    }
}

/// Writes the `values` of a grid of side `side` (row-major, 0 a blank) in
/// `format` (no trailing newline): characters up to side 35, integers
/// where the format has them or the side is above 35.
pub fn write_values(values: &[u8], side: usize, format: Format) -> String {
    let chars = side <= 35;
    let cell = |v: u8, ints: bool| match ints || !chars {
        true => v.to_string(),
        false => value_char(v).to_string(),
    };
    match format {
        Format::Json(style) => json::write_board(values, side, style),
        Format::Line if chars => values.iter().map(|&v| value_char(v)).collect(),
        Format::Line | Format::Ints => values
            .iter()
            .map(|&v| v.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        Format::Grid { ints, spaced } => values
            .chunks(side.max(1))
            .map(|row| {
                let parts: Vec<String> = row.iter().map(|&v| cell(v, ints)).collect();
                parts.join(if spaced || ints || !chars { " " } else { "" })
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPACED: &str = "\
5 3 0 0 7 0 0 0 0
6 0 0 1 9 5 0 0 0
0 9 8 0 0 0 0 6 0
8 0 0 0 6 0 0 0 3
4 0 0 8 0 3 0 0 1
7 0 0 0 2 0 0 0 6
0 6 0 0 0 0 2 8 0
0 0 0 4 1 9 0 0 5
0 0 0 0 8 0 0 7 9
";
    const LINE: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

    #[test]
    fn spaced_grid_round_trips() {
        let e = read_puzzles(SPACED);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].format, Format::grid(true));
        let g = e[0].puzzle.clone().unwrap();
        assert_eq!(g.to_text(), LINE);
        assert_eq!(
            write_grid(&g, Format::grid(true)).replace('.', "0") + "\n",
            SPACED
        );
    }

    #[test]
    fn lines_with_comments_and_trailing_text() {
        let text = format!(
            "# source\n{LINE}  rating 3.4\n\n{}\n",
            LINE.replace('.', "0")
        );
        let e = read_puzzles(&text);
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].line, e[1].line), (2, 4));
        assert!(
            e.iter()
                .all(|x| x.format == Format::Line && x.puzzle.is_ok())
        );
    }

    /// The rows of LINE as JSON arrays, cells written by `cell`.
    fn json_rows(cell: impl Fn(char) -> String) -> Vec<String> {
        (0..9)
            .map(|r| {
                let cells: Vec<String> = LINE[r * 9..r * 9 + 9].chars().map(&cell).collect();
                format!("[{}]", cells.join(","))
            })
            .collect()
    }

    #[test]
    fn bracketed_board() {
        let rows = json_rows(|c| format!("\"{c}\""));
        let one_line = format!("[{}]", rows.join(","));
        let e = read_puzzles(&one_line);
        assert!(matches!(e[0].format, Format::Json(s) if !s.ints && !s.flat));
        let g = e[0].puzzle.clone().unwrap();
        assert_eq!(g.to_text(), LINE);
        assert_eq!(write_grid(&g, e[0].format), one_line);
        let multi = read_puzzles(&format!("[\n{}\n]", rows.join(",\n")));
        assert_eq!(multi.len(), 1);
        assert_eq!(multi[0].puzzle.clone().unwrap().to_text(), LINE);
    }

    /// `json.dumps(board, indent=2)`: one cell per line. It read as nine
    /// errors, one per row, before boards went to a JSON parser.
    #[test]
    fn a_pretty_printed_json_board_is_one_puzzle() {
        let rows: Vec<String> = (0..9)
            .map(|r| {
                let cells: Vec<String> = LINE[r * 9..r * 9 + 9]
                    .chars()
                    .map(|c| format!("    \"{c}\""))
                    .collect();
                format!("  [\n{}\n  ]", cells.join(",\n"))
            })
            .collect();
        let pretty = format!("[\n{}\n]", rows.join(",\n"));
        let e = read_puzzles(&format!("# pretty\n{pretty}\n{pretty}\n{LINE}\n"));
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!((e[0].line, e[1].line, e[2].line), (2, 103, 204));
        for x in &e[..2] {
            assert_eq!(x.puzzle.as_ref().map(Grid::to_text), Ok(LINE.to_string()));
            assert_eq!(x.raw, pretty);
        }
        assert_eq!(e[2].format, Format::Line);
    }

    /// `[[5,3,0,...]]` came back as `[["5","3",...]]`.
    #[test]
    fn an_integer_board_is_written_back_in_integers() {
        let rows = json_rows(|c| if c == '.' { "0".into() } else { c.into() });
        let board = format!("[{}]", rows.join(", "));
        let e = read_puzzles(&board);
        assert_eq!(e.len(), 1);
        let Format::Json(style) = e[0].format else {
            panic!("{e:?}")
        };
        assert!(style.ints);
        let g = e[0].puzzle.clone().unwrap();
        assert_eq!(g.to_text(), LINE);
        assert_eq!(write_grid(&g, e[0].format), board.replace(' ', ""));
        // Strings with "0" or "." blanks keep their blank; Python's quotes
        // read as JSON's.
        for (blank, quote) in [('0', '"'), ('.', '"'), ('0', '\'')] {
            let rows = json_rows(|c| format!("{quote}{}{quote}", if c == '.' { blank } else { c }));
            let board = format!("[{}]", rows.join(","));
            let e = read_puzzles(&board);
            let g = e[0].puzzle.clone().unwrap();
            assert_eq!(
                write_grid(&g, e[0].format),
                board.replace('\'', "\""),
                "{board}"
            );
        }
    }

    #[test]
    fn an_array_of_boards_and_faults_in_json() {
        let rows = json_rows(|c| if c == '.' { "0".into() } else { c.into() });
        let board = format!("[{}]", rows.join(","));
        let text = format!(
            "[{board}, {board}]\n{LINE}\n[\n  {board},\n  {board}\n]\n[[1,2,3,4],[1,2,3,4],[1,2,3,4],[1,2,3,4]]\n{}\n",
            board.replacen('5', "10", 1)
        );
        let e = read_puzzles(&text);
        assert_eq!(e.len(), 7, "{e:?}");
        assert_eq!(
            e.iter().map(|x| x.line).collect::<Vec<_>>(),
            [1, 1, 2, 4, 5, 7, 8]
        );
        assert!(e[..5].iter().all(|x| x.puzzle.is_ok()), "{e:?}");
        assert_eq!(
            e[5].puzzle,
            Err("line 7: a JSON board of side 4; expected 9 rows of 9 cells".into())
        );
        assert_eq!(
            e[6].puzzle,
            Err("line 8: row 1, column 1: 10 is not a value of a 9x9 board".into())
        );
        assert_eq!(e[6].raw, board.replacen('5', "10", 1));
    }

    #[test]
    fn errors_name_the_line() {
        let e = read_puzzles(&format!("{LINE}\n1 2 3\n{}x{}\n", &LINE[..40], &LINE[41..]));
        assert_eq!(e.len(), 3);
        assert!(e[0].puzzle.is_ok());
        assert_eq!(
            e[1].puzzle,
            Err("line 2: found 3 cells; expected 81 on one line or 9 per row of a grid".into())
        );
        assert!(
            e[2].puzzle
                .as_ref()
                .unwrap_err()
                .starts_with("line 3, column 41")
        );
    }

    #[test]
    fn incomplete_grid_is_reported() {
        let partial: String = SPACED.lines().take(4).collect::<Vec<_>>().join("\n");
        let e = read_puzzles(&format!("{partial}\n\n{LINE}\n"));
        assert_eq!(e.len(), 2);
        assert_eq!(
            e[0].puzzle,
            Err("line 1: incomplete grid: 4 of 9 rows".into())
        );
        assert!(e[1].puzzle.is_ok());
    }

    #[test]
    fn unspaced_rows_with_rulers() {
        let text = "53..7....\n6..195...\n.98....6.\n------\n8...6...3\n4..8.3..1\n7...2...6\n.6....28.\n...419..5\n....8..79\n";
        let e = read_puzzles(text);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].format, Format::grid(false));
        assert_eq!(e[0].puzzle.clone().unwrap().to_text(), LINE);
    }

    #[test]
    fn a_bad_row_is_one_fault_of_its_grid_and_the_reader_resynchronises() {
        let mut rows: Vec<String> = SPACED.lines().map(String::from).collect();
        rows[6] = "0 6 0 0 x 0 2 8 0".into();
        let text = format!("not a puzzle\n{}\n\n{SPACED}{LINE}\n", rows.join("\n"));
        let e = read_puzzles(&text);
        assert_eq!(e.len(), 4, "{e:?}");
        assert_eq!(e[0].line, 1);
        assert!(
            e[0].puzzle
                .as_ref()
                .unwrap_err()
                .starts_with("line 1, column 1")
        );
        assert_eq!(e[1].line, 2);
        assert_eq!(
            e[1].puzzle,
            Err("line 8, column 9: unexpected character 'x'; expected '1'-'9', '.' or '0'".into())
        );
        assert_eq!(e[1].raw.lines().count(), 9);
        assert_eq!(e[2].line, 12);
        assert_eq!(e[2].puzzle.clone().unwrap().to_text(), LINE);
        assert!(e[3].puzzle.is_ok());
        // The same grid with no blank line after it: the rows still count.
        let e = read_puzzles(&format!("{}\n{LINE}\n", rows.join("\n")));
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[1].puzzle.is_ok());
    }

    #[test]
    fn a_byte_order_mark_before_the_first_line_is_dropped() {
        let e = read_puzzles(&format!("\u{feff}{LINE}\n{LINE}\n"));
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e.iter().all(|e| e.puzzle.is_ok()), "{e:?}");
        let e = read_puzzles(&format!("\u{feff}{SPACED}"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].puzzle.clone().unwrap().to_text(), LINE);
        // Anywhere else it is a character that is not a cell.
        let e = read_puzzles(&format!("{LINE}\n\u{feff}{LINE}\n"));
        assert!(e[1].puzzle.is_err(), "{e:?}");
    }

    #[test]
    fn a_spoilt_row_of_any_length_is_one_fault_of_its_grid() {
        for spoilt in [
            "4 0 0 8 0 3 0 0 1   <- check this row",
            "4 0 0 8 0 3 0 0 1 7 7 7 7 7 7 7 7 7",
            "4 0 0 8 0 3 0 0 1 0",
            "4 0 0 8",
        ] {
            let mut rows: Vec<String> = SPACED.lines().map(String::from).collect();
            rows[4] = spoilt.into();
            let e = read_puzzles(&format!("{}\n\n{LINE}\n", rows.join("\n")));
            assert_eq!(e.len(), 2, "{spoilt}: {e:?}");
            assert_eq!(e[0].line, 1, "{spoilt}");
            let msg = e[0].puzzle.as_ref().unwrap_err();
            assert!(msg.starts_with("line 5"), "{spoilt}: {msg}");
            assert_eq!(e[0].raw.lines().count(), 9, "{spoilt}");
            assert_eq!(e[1].line, 11);
            assert!(e[1].puzzle.is_ok(), "{spoilt}");
        }
    }

    #[test]
    fn an_over_long_line_is_reported_and_skipped() {
        let text = format!("{LINE}\n{}\n{LINE}\n", "7".repeat(MAX_LINE * 3));
        let e = read_puzzles(&text);
        assert_eq!(e.len(), 3);
        assert_eq!(
            e[1].puzzle,
            Err(format!(
                "line 2: too long ({} bytes without a line break); a puzzle takes 81 characters",
                MAX_LINE * 3
            ))
        );
        assert!(e[1].raw.len() < 100);
        assert!(e[2].puzzle.is_ok());
    }

    /// A reader that hands out one byte per read, so no line is ever whole
    /// in the buffer and every line takes the copying path.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let Some((&b, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            if out.is_empty() {
                return Ok(0);
            }
            out[0] = b;
            self.0 = rest;
            Ok(1)
        }
    }

    fn entries(r: impl std::io::Read) -> Vec<Result<Entry, String>> {
        Reader::new(r)
            .map(|e| e.map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn lines_read_in_place_match_lines_read_by_copy() {
        let clash = format!("55{}", &LINE[2..]);
        let mut text =
            format!("{LINE}\n{LINE}\r\n{LINE} rating 3.4\r\n{LINE}7\n{clash}\n{LINE}\tx\n\n")
                .into_bytes();
        text.extend_from_slice(LINE.as_bytes());
        text.extend_from_slice(b" caf\xc3\xa9\n");
        text.extend_from_slice(LINE.as_bytes());
        text.extend_from_slice(b"\xff\n");
        text.extend_from_slice(SPACED.as_bytes());
        text.extend_from_slice(LINE.as_bytes());
        text.extend_from_slice(b"\n");
        text.extend_from_slice(LINE.as_bytes());
        text.extend_from_slice(b" \x00\n");
        let quick = entries(&text[..]);
        assert_eq!(quick, entries(Trickle(&text)));
        assert_eq!(quick.len(), 11, "{quick:?}");
        let e: Vec<&Entry> = quick.iter().map_while(|e| e.as_ref().ok()).collect();
        let sound = [
            true, true, true, false, false, true, true, false, false, true,
        ];
        for (e, sound) in e.iter().zip(sound) {
            assert_eq!(e.givens_ok, sound, "{e:?}");
            if let Ok(g) = &e.puzzle {
                assert_eq!(g.check_givens().is_ok() && e.format == Format::Line, sound);
            }
        }
        assert!(e[3].puzzle.is_err(), "82 cells");
        assert_eq!(e[4].puzzle.as_ref().map(Grid::to_text), Ok(clash.clone()));
        assert!(e[7].puzzle.is_err(), "not UTF-8");
        assert_eq!(e[8].format, Format::grid(true));
        assert!(quick[10].is_err(), "a NUL byte");
        // Without raw for sound puzzles: the same entries, raw kept only
        // where something can fail.
        let lean: Vec<Entry> = Reader::new(&text[..])
            .raw_of_failures_only()
            .map_while(Result::ok)
            .collect();
        assert_eq!(lean.len(), 10);
        for (a, b) in lean.iter().zip(&e) {
            assert_eq!((a.line, a.format, &a.puzzle), (b.line, b.format, &b.puzzle));
            if a.givens_ok {
                assert!(a.raw.is_empty());
            } else {
                assert_eq!(a.raw, b.raw);
            }
        }
        assert_eq!(lean[4].raw, clash);
    }

    #[test]
    fn sound_givens_are_found_in_the_reading_pass() {
        // Every kind of unit with a digit twice, and puzzles without.
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let (mut ok, mut bad) = (0, 0);
        for round in 0..3000 {
            let mut cells = [b'.'; CELLS];
            for _ in 0..(round % 30) {
                cells[(next() % 81) as usize] = b"0123456789."[(next() % 11) as usize];
            }
            let text = format!("{}\n", String::from_utf8(cells.to_vec()).unwrap());
            let e = read_puzzles(&text);
            let g = e[0].puzzle.clone().unwrap();
            assert_eq!(e[0].givens_ok, g.check_givens().is_ok(), "{text}");
            if e[0].givens_ok { ok += 1 } else { bad += 1 }
        }
        assert!(ok > 500 && bad > 500, "{ok} sound, {bad} clashing");
    }

    #[test]
    fn input_that_is_not_text() {
        let mut bytes = format!("{LINE}\n").into_bytes();
        bytes.extend_from_slice(b"\xff\xfe1 2\n# caf\xe9\n");
        bytes.extend_from_slice(LINE.as_bytes());
        let e: Vec<_> = Reader::new(&bytes[..]).collect::<Result<_, _>>().unwrap();
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!(
            e[1].puzzle,
            Err("line 2, byte 1: not UTF-8 text (byte 0xff)".into())
        );
        let mut r = Reader::new(&b"\x7fELF\x02\x01\x01\x00\x00"[..]);
        let err = r.next().unwrap().unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1, byte 8: a NUL byte; the input is not text"
        );
        assert!(r.next().is_none());
        assert!(Reader::new(&b""[..]).next().is_none());
    }

    /// Every entry of `text` for grids of side `side`.
    fn of_side(text: &str, side: usize) -> Vec<Entry<Vec<u32>>> {
        Reader::of_side(text.as_bytes(), side)
            .collect::<std::io::Result<_>>()
            .unwrap()
    }

    #[test]
    fn other_sides_are_read_by_the_same_rules() {
        // 16x16: a line of characters with commentary after it, the same
        // grid as 16 rows with rulers, and as integers.
        let values: Vec<u32> = (0..256).map(|i| (i * 7 % 17) as u32).collect();
        let chars: String = values.iter().map(|&v| value_char(v as u8)).collect();
        let rows: Vec<String> = chars
            .as_bytes()
            .chunks(16)
            .map(|r| {
                let r = std::str::from_utf8(r).unwrap();
                format!("{} | {}", &r[..8], &r[8..])
            })
            .collect();
        let ints: Vec<String> = values.iter().map(u32::to_string).collect();
        let text = format!(
            "{chars}  rated 4.2\n\n{}\n\n{}\n",
            rows.join("\n"),
            ints.join(",")
        );
        let e = of_side(&text, 16);
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e.iter().all(|x| x.puzzle.as_ref() == Ok(&values)));
        assert_eq!(
            e.iter().map(|x| (x.line, x.format)).collect::<Vec<_>>(),
            [
                (1, Format::Line),
                (3, Format::grid(true)),
                (20, Format::Ints)
            ]
        );
        assert_eq!(
            write_values(
                &values.iter().map(|&v| v as u8).collect::<Vec<_>>(),
                16,
                Format::Line
            ),
            chars
        );
        // 36x36 takes integers; a bad word is named by line and column.
        let big: Vec<String> = (0..36 * 36).map(|i| (i % 37).to_string()).collect();
        let mut bad = big.clone();
        bad[1] = "x7".into();
        let e = of_side(&format!("{}\n{}\n", big.join(" "), bad.join(" ")), 36);
        assert_eq!(e[0].puzzle.as_ref().map(Vec::len), Ok(36 * 36));
        assert_eq!(
            e[1].puzzle,
            Err(
                "line 2, column 3: unexpected \"x7\"; expected a number from 0 to 36 or '.'".into()
            )
        );
        // A letter above the side, and a row one cell short inside a grid:
        // each one fault of its own grid, the next record in its place.
        let four = "1 . . 4\n. . G .\n. 1 . .\n4 . . 1\n\n1 . . 4\n. . .\n. 1 . .\n4 . . 1\n1234341221434321\n";
        let e = of_side(four, 4);
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!(
            e[0].puzzle,
            Err("line 2, column 5: unexpected character 'G'; expected '1'-'4', '.' or '0'".into())
        );
        assert_eq!(
            e[1].puzzle,
            Err("line 7: found 3 cells; expected 16 on one line or 4 per row of a grid".into())
        );
        assert_eq!(e[2].line, 10);
        assert!(e[2].puzzle.is_ok());
    }
}
