//! Reading puzzles from text as people and pipelines write them, and writing
//! solutions back in the same shape.
//!
//! Accepted, mixed freely in one input:
//! - 81-character lines: '1'-'9', '.' or '0' for blanks; text after the 81
//!   characters is ignored (ratings, comments).
//! - 9-line blocks: one row per line, 9 cells separated by spaces or not,
//!   '.' or '0' for blanks; `|`, `-` and `+` box rulers are ignored.
//! - JSON boards, as in `[["5","3",".",...],...]` or `[[5,3,0,...],...]`,
//!   laid out in any way, one after another or in one array of boards:
//!   see [`super::json`].
//!
//! Lines starting with '#' and blank lines are skipped.

use super::json::{self, Piece, Scanner};
use super::{CELLS, Grid};

/// The shape a puzzle was written in; solutions are written back in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One 81-character line.
    Line,
    /// Nine lines of nine cells, separated by single spaces when `spaced`.
    Grid {
        /// Cells separated by spaces.
        spaced: bool,
    },
    /// A JSON board, cells as integers or strings as it was written; an
    /// answer is written on one line.
    Json(json::Style),
}

/// One puzzle read from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line number where the puzzle starts.
    pub line: usize,
    /// The shape it was written in.
    pub format: Format,
    /// The puzzle, or why it could not be read (a sentence naming the spot).
    pub puzzle: Result<Grid, String>,
    /// The input text of the puzzle, as read (for echoing failures). Empty
    /// for a sound puzzle ([`Entry::givens_ok`]) of a reader made
    /// [`Reader::raw_of_failures_only`].
    pub raw: String,
    /// True when the reader checked the givens while reading them and they
    /// keep the rules (no digit twice in a row, column or box), so
    /// [`Grid::check_givens`] would return `Ok`. False when they do not, or
    /// when it did not look (9-line grids and JSON boards): the caller
    /// checks those itself.
    pub givens_ok: bool,
}

fn is_cell(c: char) -> bool {
    matches!(c, '0'..='9' | '.')
}

fn cell_value(c: char) -> u8 {
    match c {
        '1'..='9' => c as u8 - b'0',
        _ => 0,
    }
}

/// Longest line the reader keeps, in bytes; the rest of a longer line is
/// read and dropped, so one line without a newline (a binary file, a
/// runaway generator) costs this much memory and no more.
pub const MAX_LINE: usize = 64 * 1024;

/// Lines with this many cells (or bad characters) or fewer look like one
/// row of a grid: a fault in one is reported as the fault of the grid it
/// belongs to, so the grid's other rows do not become puzzles of their own.
const ROW_LIKE: usize = 17;

struct Block {
    start: usize,
    rows: usize,
    cells: [u8; CELLS],
    raw: String,
    format: Format,
    error: Option<String>,
}

impl Block {
    fn into_entry(self) -> Entry {
        let puzzle = match self.error {
            Some(e) => Err(e),
            None if self.rows < 9 => Err(format!(
                "line {}: incomplete grid: {} of 9 rows",
                self.start, self.rows
            )),
            None => Ok(Grid(self.cells)),
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
/// that of one line (at most [`MAX_LINE`]) and one grid, however long the
/// input. Yields entries in input order; an `Err` (a read error, or input
/// that is not text) ends the stream.
pub struct Reader<R> {
    inner: std::io::BufReader<R>,
    line_no: usize,
    buf: Vec<u8>,
    block: Option<Block>,
    ready: std::collections::VecDeque<Entry>,
    done: bool,
    /// Keep `raw` of sound puzzles too (see [`Reader::raw_of_failures_only`]).
    raw_of_all: bool,
    /// JSON boards; off between them.
    json: Scanner,
}

impl<R: std::io::Read> Reader<R> {
    /// A reader over `inner`, buffered here.
    pub fn new(inner: R) -> Reader<R> {
        Reader {
            inner: std::io::BufReader::with_capacity(64 * 1024, inner),
            line_no: 0,
            buf: Vec::with_capacity(256),
            block: None,
            ready: std::collections::VecDeque::with_capacity(2),
            done: false,
            raw_of_all: true,
            json: Scanner::new(),
        }
    }

    /// Leaves `raw` empty for puzzles read from a line whose givens keep
    /// the rules ([`Entry::givens_ok`] and `Ok`): a caller that echoes the
    /// input only for failures saves copying every line it reads.
    pub fn raw_of_failures_only(mut self) -> Reader<R> {
        self.raw_of_all = false;
        self
    }

    /// The common record, read in place from the buffer with no copy: an
    /// 81-character line of cells, ending (after any ASCII commentary) in a
    /// line break that is already buffered. Anything else, or an open grid
    /// (whose fault or end the line decides), is left to `advance`; the
    /// entry is the one `advance` would make.
    fn quick_line(&mut self) -> Option<Entry> {
        use std::io::BufRead;
        if self.block.is_some() {
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
            [first, ..] if !is_cell_byte(*first) => {
                let end = tail.iter().position(|&b| b == b'\n')?;
                if !tail[..end].iter().all(|&b| (1..0x80).contains(&b)) {
                    return None;
                }
                end
            }
            _ => return None,
        };
        let (grid, sound) = Grid::scan(cells)?;
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
            self.ready.push_back(b.into_entry());
        }
    }

    /// A fault on line `n`: the fault of the open grid when there is one
    /// (or when the line looks like a grid's first row), else an entry of
    /// its own.
    /// `tokens` counts the line's cells and bad characters, `cells` its cells.
    ///
    /// Inside an open grid a faulty line is one of its rows however it is
    /// spoilt (a note after the cells, a tenth digit, bytes that are not
    /// text), unless it holds most of a whole puzzle: splitting the grid
    /// there would make one bad row three failed records and shift every
    /// answer after it.
    fn fault(&mut self, n: usize, raw: &str, msg: String, tokens: usize, cells: usize) {
        // Only a line that is mostly cells starts a grid of its own.
        let starts_grid = (1..=ROW_LIKE).contains(&tokens) && cells * 2 >= tokens;
        let a_row = self.block.is_some() && cells * 2 < CELLS;
        if a_row || starts_grid {
            let b = self.block.get_or_insert_with(|| Block {
                start: n,
                rows: 0,
                cells: [0; CELLS],
                raw: String::new(),
                format: Format::Grid { spaced: true },
                error: None,
            });
            b.error.get_or_insert(msg);
            b.rows += 1;
            b.push_raw(raw);
            if b.rows == 9 {
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

    /// The entry of a JSON board: a 9x9 grid, or why not.
    fn json_entry(&mut self, piece: Piece) -> Entry {
        let Piece { line, raw, board } = piece;
        let (puzzle, format) = match board {
            Ok(b) => (
                grid_of_board(&b.values, b.side, line),
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
            let Some(len) = read_line(&mut self.inner, &mut self.buf, MAX_LINE)? else {
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
            if len > MAX_LINE {
                let shown = String::from_utf8_lossy(&self.buf[..CELLS]).into_owned();
                self.flush_block();
                self.ready.push_back(Entry {
                    line: n,
                    format: Format::Line,
                    puzzle: Err(format!(
                        "line {n}: too long ({len} bytes without a line break); \
                         a puzzle takes 81 characters"
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
                    self.fault(n, &raw, msg, ROW_LIKE + 1, 0);
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
        // An 81-character line; anything after it is commentary. Cells are
        // ASCII, so bytes and characters agree up to the 82nd.
        let bytes = line.as_bytes();
        if let Some((cells, rest)) = bytes.split_first_chunk::<CELLS>()
            && rest.first().is_none_or(|&b| !is_cell_byte(b))
            && let Some((g, sound)) = Grid::scan(cells)
        {
            self.flush_block();
            self.ready.push_back(Entry {
                line: n,
                format: Format::Line,
                puzzle: Ok(g),
                raw: if self.raw_of_all || !sound {
                    line[..CELLS].to_string()
                } else {
                    String::new()
                },
                givens_ok: sound,
            });
            return;
        }
        // Otherwise a row (or a whole line) of cells with separators.
        let mut cells = [0u8; CELLS];
        let mut count = 0usize;
        let mut tokens = 0usize;
        let mut spaced = false;
        let mut bad = None;
        // Columns are counted in the line as written, before trimming.
        let indent = raw_line.chars().count() - raw_line.trim_start().chars().count();
        for (col, c) in line.chars().enumerate() {
            if is_cell(c) {
                if count < CELLS {
                    cells[count] = cell_value(c);
                }
                count += 1;
                tokens += 1;
            } else if c.is_whitespace() {
                spaced = true;
            } else if !matches!(c, '|' | '-' | '+' | ',') {
                tokens += 1;
                bad.get_or_insert((indent + col + 1, c));
            }
        }
        if let Some((col, c)) = bad {
            let msg = format!(
                "line {n}, column {col}: unexpected character {c:?}; expected '1'-'9', '.' or '0'"
            );
            self.fault(n, raw_line, msg, tokens, count);
            return;
        }
        match count {
            0 => {} // a ruler such as "------+-------+------"
            CELLS => {
                self.flush_block();
                self.ready.push_back(Entry {
                    line: n,
                    format: Format::Line,
                    puzzle: Ok(Grid(cells)),
                    raw: raw_line.to_string(),
                    givens_ok: false,
                });
            }
            9 => {
                let b = self.block.get_or_insert_with(|| Block {
                    start: n,
                    rows: 0,
                    cells: [0; CELLS],
                    raw: String::new(),
                    format: Format::Grid { spaced },
                    error: None,
                });
                let r = b.rows;
                b.cells[r * 9..r * 9 + 9].copy_from_slice(&cells[..9]);
                b.rows += 1;
                b.push_raw(raw_line);
                if b.rows == 9 {
                    self.flush_block();
                }
            }
            k => {
                let msg = format!(
                    "line {n}: found {k} cells; expected 81 on one line or 9 per row of a grid"
                );
                self.fault(n, raw_line, msg, tokens, count);
            }
        }
    }
}

impl<R: std::io::Read> Iterator for Reader<R> {
    type Item = std::io::Result<Entry>;

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

/// The 9x9 grid of a JSON board's `values`, read from line `line`.
fn grid_of_board(values: &[u32], side: usize, line: usize) -> Result<Grid, String> {
    if side != 9 {
        return Err(format!(
            "line {line}: a JSON board of side {side}; expected 9 rows of 9 cells"
        ));
    }
    // The JSON reader let no value above the side through.
    let mut cells = [0u8; CELLS];
    for (&v, c) in values.iter().zip(&mut cells) {
        *c = v as u8;
    }
    Ok(Grid(cells))
}

fn is_cell_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'.')
}

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

/// Reads every puzzle in `text`, stopping at a NUL byte (not text).
pub fn read_puzzles(text: &str) -> Vec<Entry> {
    Reader::new(text.as_bytes()).map_while(Result::ok).collect()
}

/// Writes `grid` in `format` (no trailing newline).
pub fn write_grid(grid: &Grid, format: Format) -> String {
    let digit = super::digit_char;
    match format {
        Format::Line => grid.to_text(),
        Format::Grid { spaced } => {
            let mut s = String::with_capacity(if spaced { 162 } else { 90 });
            for r in 0..9 {
                if r > 0 {
                    s.push('\n');
                }
                for c in 0..9 {
                    if spaced && c > 0 {
                        s.push(' ');
                    }
                    s.push(digit(grid.0[r * 9 + c]));
                }
            }
            s
        }
        Format::Json(style) => json::write_board(&grid.0, 9, style),
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
        assert_eq!(e[0].format, Format::Grid { spaced: true });
        let g = e[0].puzzle.clone().unwrap();
        assert_eq!(g.to_text(), LINE);
        assert_eq!(
            write_grid(&g, Format::Grid { spaced: true }).replace('.', "0") + "\n",
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
        assert_eq!(e[0].format, Format::Grid { spaced: false });
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
        assert_eq!(e[8].format, Format::Grid { spaced: true });
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
}
