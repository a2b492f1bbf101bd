//! Grids of any size as text (see docs/sizes.md): the records of an input,
//! read one at a time; a solution written back in its record's layout; and
//! `--box RxC`. The size an input's first record tells is `sniff`'s.
//!
//! Records, mixed freely; '#' lines and blank lines are skipped:
//! - a line of N*N cell characters ('1'-'9', 'A'-'Z', '.' or '0'), for N up
//!   to 35;
//! - a line of N*N integers separated by spaces or commas (any N);
//! - N lines of N cells each, characters or space-separated integers,
//!   `|`, `-` and `+` rulers ignored;
//! - a JSON board of N rows of N cells (or one array of N*N), integers or
//!   strings, laid out in any way (see `sudoku_core::puzzle::json`).

use std::collections::VecDeque;

use sudoku_core::puzzle::json::{self, Piece, Scanner};
use sudoku_core::puzzle::sized::{Shape, SizedGrid, char_value, value_char};
use sudoku_core::puzzle::text::{BOM, read_line};

/// How a record was written; its solution is written the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// One line of characters.
    Chars,
    /// One line of integers.
    Ints,
    /// N lines; integers (or characters) separated by spaces when `spaced`.
    Block { ints: bool, spaced: bool },
    /// A JSON board, written back on one line.
    Json(json::Style),
}

/// The cells of one row or record: values, or `None` for a token that is
/// not a cell.
pub(super) fn cells_of(line: &str) -> (Vec<Option<u32>>, bool, bool) {
    let cleaned: String = line
        .chars()
        .map(|c| if matches!(c, '|' | '+' | ',') { ' ' } else { c })
        .collect();
    let tokens: Vec<&str> = cleaned
        .split_whitespace()
        .filter(|t| !t.chars().all(|c| c == '-'))
        .collect();
    let ints = tokens.len() > 1 && (line.contains(',') || tokens.iter().any(|t| t.len() > 1));
    if ints || (tokens.len() > 1 && tokens.iter().all(|t| t.len() == 1)) {
        let spaced = true;
        if ints {
            return (
                tokens
                    .iter()
                    .map(|t| if *t == "." { Some(0) } else { t.parse().ok() })
                    .collect(),
                true,
                spaced,
            );
        }
        return (
            tokens
                .iter()
                .map(|t| t.chars().next().and_then(char_value).map(u32::from))
                .collect(),
            false,
            spaced,
        );
    }
    (
        cleaned
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| char_value(c).map(u32::from))
            .collect(),
        false,
        false,
    )
}

/// The side of the grids of a file whose first record starts with a line
/// of `cells`. A line of N*N cells is one record of side N (N >= 4); a row
/// of N cells starts a block of side N (so 4 cells are a 4x4 row, not a
/// 2x2 grid). 16 cells are a 4x4 line unless a value above 4 says they are
/// a 16x16 row.
pub(super) fn side_for(cells: &[Option<u32>]) -> usize {
    let k = cells.len();
    let root = k.isqrt();
    let max = cells.iter().flatten().copied().max().unwrap_or(0) as usize;
    if root * root == k && root >= 4 && max <= root {
        root
    } else {
        k
    }
}

/// One record: its first line, layout and cell values (or why not), and
/// its text as given (rows only, rulers and comments left out; empty for
/// a line that is not text or too long to hold), echoed when it fails.
pub(super) struct Record {
    pub(super) line: usize,
    pub(super) layout: Layout,
    pub(super) cells: Result<Vec<u32>, String>,
    pub(super) raw: String,
}

/// A record as given (`raw`, see [`Record`]) followed by `mark` ("#
/// error: ..."), as 9x9 records are answered: on the same line after a
/// one-line record, on a line of its own after a block.
pub(super) fn marked(raw: &str, mark: &str) -> String {
    match (raw.is_empty(), raw.contains('\n')) {
        (true, _) => mark.to_string(),
        (false, false) => format!("{raw}  {mark}"),
        (false, true) => format!("{raw}\n{mark}"),
    }
}

impl Layout {
    /// The layout a solution of side `side` is written in, for a record
    /// written in this one: its own (`line` `None`, `--format auto`), one
    /// line (`Some(true)`, `--format line`) or a block of spaced rows
    /// (`Some(false)`, `--format grid`). Integers above 35x35, where
    /// characters stop.
    pub(super) fn as_asked(self, line: Option<bool>, side: usize) -> Layout {
        let big = side > 35;
        match (line, self) {
            (None, l) => l,
            (Some(true), Layout::Json(s)) if s.ints || big => Layout::Ints,
            (Some(true), Layout::Json(_)) => Layout::Chars,
            (Some(false), Layout::Json(s)) => Layout::Block {
                ints: s.ints || big,
                spaced: true,
            },
            (Some(true), Layout::Block { ints, .. }) if ints || big => Layout::Ints,
            (Some(true), Layout::Block { .. }) => Layout::Chars,
            (Some(false), l @ Layout::Block { .. }) => l,
            (Some(true), l) => l,
            (Some(false), l) => Layout::Block {
                ints: l == Layout::Ints || big,
                spaced: true,
            },
        }
    }
}

/// The longest line read, in bytes: a 64x64 record of integers with
/// separators is about 16 KB. A longer line is one record in error, and
/// only this much of it is held.
const MAX_LINE: usize = 1 << 20;

/// One line of input, trimmed, or why it cannot be read.
enum Line {
    Text(String),
    /// Longer than [`MAX_LINE`]: its length in bytes.
    TooLong(usize),
    NotText,
}

/// The records of an input of side `n` (or, when `n` is 0, of the first
/// record's side), read as they come: one line and one record at a time.
pub(super) struct Records<R> {
    input: R,
    n: usize,
    /// Lines read so far: the number of the last one.
    line: usize,
    buf: Vec<u8>,
    /// JSON boards; off between them.
    json: Scanner,
    /// Boards read from one line, not yet handed out.
    ready: VecDeque<Record>,
}

impl<R> Records<R> {
    /// The input underneath, as far as it is read.
    pub(super) fn input(&self) -> &R {
        &self.input
    }

    /// True when records read from one line wait to be handed out.
    pub(super) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }
}

impl<R: std::io::BufRead> Records<R> {
    pub(super) fn new(input: R, n: usize) -> Records<R> {
        Records {
            input,
            n,
            line: 0,
            buf: Vec::new(),
            json: Scanner::new(),
            ready: VecDeque::new(),
        }
    }

    /// The record of a JSON board: its cells when its side is the run's.
    fn of_piece(&mut self, piece: Piece) -> Record {
        let Piece { line, raw, board } = piece;
        let (layout, cells) = match board {
            Err(e) => (Layout::Chars, Err(e)),
            Ok(b) => {
                if self.n == 0 {
                    self.n = b.side;
                }
                let n = self.n;
                let cells = match b.side == n {
                    true => Ok(b.values),
                    false => Err(format!(
                        "line {line}: a JSON board of side {}; expected {n} rows of {n} cells",
                        b.side
                    )),
                };
                (Layout::Json(b.style), cells)
            }
        };
        Record {
            line,
            layout,
            cells,
            raw,
        }
    }

    /// The next line, None at the end of the input.
    fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let Some(len) = read_line(&mut self.input, &mut self.buf, MAX_LINE)? else {
            return Ok(None);
        };
        self.line += 1;
        if self.line == 1 && self.buf.starts_with(BOM) {
            self.buf.drain(..BOM.len());
        }
        if len > MAX_LINE {
            return Ok(Some(Line::TooLong(len)));
        }
        Ok(Some(match std::str::from_utf8(&self.buf) {
            Ok(t) => Line::Text(t.trim().to_string()),
            Err(_) => Line::NotText,
        }))
    }

    /// Why line `at` of `line` could not be read, in words.
    fn unreadable(at: usize, line: &Line) -> String {
        match line {
            Line::TooLong(len) => {
                format!("line {at}: {len} bytes, longer than any grid ({MAX_LINE} at most)")
            }
            _ => format!("line {at}: not text"),
        }
    }
}

impl<R: std::io::BufRead> Iterator for Records<R> {
    type Item = std::io::Result<Record>;

    fn next(&mut self) -> Option<std::io::Result<Record>> {
        let l = loop {
            if let Some(r) = self.ready.pop_front() {
                return Some(Ok(r));
            }
            // A JSON board is read as bytes, not lines: its layout is free.
            match json::starts(&mut self.input) {
                Err(e) => return Some(Err(e)),
                Ok(starts) if starts || self.json.is_on() => {
                    match self.json.next(&mut self.input, &mut self.line) {
                        Err(e) => return Some(Err(e)),
                        Ok(Some(p)) => return Some(Ok(self.of_piece(p))),
                        Ok(None) => continue,
                    }
                }
                Ok(_) => {}
            }
            match self.next_line() {
                Err(e) => return Some(Err(e)),
                Ok(None) => return None,
                Ok(Some(Line::Text(t))) if t.is_empty() || t.starts_with('#') => {}
                Ok(Some(Line::Text(t))) if t.starts_with('[') => {
                    // A JSON board whose start the buffer did not show whole.
                    let mut before = self.line - 1;
                    for p in self.json.feed_line(t.as_bytes(), &mut before) {
                        let r = self.of_piece(p);
                        self.ready.push_back(r);
                    }
                }
                Ok(Some(Line::Text(t))) => break t,
                Ok(Some(bad)) => {
                    return Some(Ok(Record {
                        line: self.line,
                        layout: Layout::Chars,
                        cells: Err(Self::unreadable(self.line, &bad)),
                        raw: String::new(),
                    }));
                }
            }
        };
        let (cells, ints, spaced) = cells_of(&l);
        let k = cells.len();
        if self.n == 0 {
            // `--box auto`: the first record tells, as it does without `--box`.
            self.n = side_for(&cells);
        }
        let (n, start) = (self.n, self.line);
        if k == n * n && n > 1 {
            return Some(Ok(Record {
                line: start,
                layout: if ints { Layout::Ints } else { Layout::Chars },
                cells: collect(cells, start),
                raw: l,
            }));
        }
        if k != n {
            // Neither a line nor a block's first row of this size: one
            // record in error, so the records after it keep their places.
            return Some(Ok(Record {
                line: start,
                layout: if ints { Layout::Ints } else { Layout::Chars },
                cells: Err(format!(
                    "line {start}: {k} cells: not a {n}x{n} line ({}) or row ({n})",
                    n * n
                )),
                raw: l,
            }));
        }
        // A block: n rows of n cells, this line the first.
        let mut all = Vec::with_capacity(n * n);
        all.extend(cells);
        let mut raw = l;
        let mut fault = None;
        let mut rows = 1;
        while rows < n {
            let row = match self.next_line() {
                Err(e) => return Some(Err(e)),
                Ok(None) => break,
                Ok(Some(Line::Text(t))) => {
                    if t.is_empty() || t.starts_with('#') || t.chars().all(|c| "-+| ".contains(c)) {
                        continue;
                    }
                    raw.push('\n');
                    raw.push_str(&t);
                    cells_of(&t).0
                }
                Ok(Some(bad)) => {
                    fault.get_or_insert_with(|| Self::unreadable(self.line, &bad));
                    rows += 1;
                    continue;
                }
            };
            if row.len() != n && fault.is_none() {
                fault = Some(format!(
                    "line {}: expected {n} cells in a row, found {}",
                    self.line,
                    row.len()
                ));
            }
            all.extend(row);
            rows += 1;
        }
        let cells = match fault {
            Some(f) => Err(f),
            None if rows < n => Err(format!("line {start}: incomplete grid: {rows} of {n} rows")),
            None => collect(all, start),
        };
        Some(Ok(Record {
            line: start,
            layout: Layout::Block { ints, spaced },
            cells,
            raw,
        }))
    }
}

/// Every record of `text`, as [`Records`] reads them.
/// Reads a box shape, "RxC".
pub(super) fn parse_box(text: &str) -> anyhow::Result<Shape> {
    let (r, c) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow::anyhow!("--box {text:?}: expected RxC, as 4x4 or 2x3"))?;
    let (r, c): (usize, usize) = (
        r.trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("--box {text:?}: {r:?} is not a number"))?,
        c.trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("--box {text:?}: {c:?} is not a number"))?,
    );
    Shape::new(r, c).map_err(|e| anyhow::anyhow!("--box {text}: {e}"))
}

#[cfg(test)]
pub(super) fn records(text: &str, n: usize) -> Vec<Record> {
    Records::new(text.as_bytes(), n)
        .collect::<std::io::Result<_>>()
        .unwrap()
}

fn collect(cells: Vec<Option<u32>>, line: usize) -> Result<Vec<u32>, String> {
    let n = cells.len().isqrt().max(1);
    cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            c.ok_or_else(|| {
                format!(
                    "line {line}: row {}, column {}: not a value",
                    i / n + 1,
                    i % n + 1
                )
            })
        })
        .collect()
}

/// `grid` written in `layout`.
pub(super) fn write(grid: &SizedGrid, layout: Layout) -> String {
    let n = grid.shape().side();
    let text = n <= 35;
    let cell = |v: u8, ints: bool| {
        if ints || !text {
            v.to_string()
        } else {
            value_char(v).to_string()
        }
    };
    match layout {
        Layout::Json(style) => json::write_board(grid.values(), n, style),
        Layout::Chars if text => grid.values().iter().map(|&v| value_char(v)).collect(),
        Layout::Chars | Layout::Ints => grid
            .values()
            .iter()
            .map(|&v| v.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        Layout::Block { ints, spaced } => grid
            .values()
            .chunks(n)
            .map(|row| {
                let parts: Vec<String> = row.iter().map(|&v| cell(v, ints)).collect();
                parts.join(if spaced || ints || !text { " " } else { "" })
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_every_layout_read_and_write_back() {
        let line = "1234341221434321";
        let block = "1 2 | 3 4\n3 4 | 1 2\n----+----\n2 1 | 4 3\n4 3 | 2 1";
        let ints = (1..=16)
            .map(|i| (i % 4 + 1).to_string())
            .collect::<Vec<_>>()
            .join(",");
        let text = format!("# a comment\n{line}\n\n{block}\n{ints}\n");
        let rs = records(&text, 4);
        assert_eq!(rs.len(), 3);
        assert_eq!(rs[0].layout, Layout::Chars);
        assert!(matches!(rs[1].layout, Layout::Block { .. }));
        assert_eq!(rs[2].layout, Layout::Ints);
        let shape = Shape::new(2, 2).unwrap();
        let g = SizedGrid::from_cells(shape, rs[0].cells.as_ref().unwrap()).unwrap();
        assert_eq!(write(&g, rs[0].layout), line);
        let b = SizedGrid::from_cells(shape, rs[1].cells.as_ref().unwrap()).unwrap();
        assert_eq!(
            write(
                &b,
                Layout::Block {
                    ints: false,
                    spaced: true
                }
            ),
            "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1"
        );
        // The side comes from the first record when not given.
        assert_eq!(records(line, 0).len(), 1);
    }

    #[test]
    fn json_boards_of_other_sizes_read_and_write_back() {
        let ints = "[[1,0,0,4],[0,0,0,0],[0,1,0,0],[4,0,0,1]]";
        let pretty = "[\n  [\"1\", \".\", \".\", \"4\"],\n  [\".\", \".\", \".\", \".\"],\n  [\".\", \"1\", \".\", \".\"],\n  [\"4\", \".\", \".\", \"1\"]\n]";
        let text = format!("{ints}\n1..4\n....\n.1..\n4..1\n{pretty}\n[{ints},{ints}]\n");
        for n in [0, 4] {
            let rs = records(&text, n);
            assert_eq!(rs.len(), 5, "--box side {n}");
            assert_eq!(
                rs.iter().map(|r| r.line).collect::<Vec<_>>(),
                [1, 2, 6, 12, 12]
            );
            let want = rs[0].cells.as_ref().unwrap();
            assert!(rs.iter().all(|r| r.cells.as_ref() == Ok(want)));
            assert_eq!(rs[2].raw, pretty);
            let g = SizedGrid::from_cells(Shape::new(2, 2).unwrap(), want).unwrap();
            assert_eq!(write(&g, rs[0].layout), ints);
            assert_eq!(
                write(&g, rs[2].layout),
                r#"[["1",".",".","4"],[".",".",".","."],[".","1",".","."],["4",".",".","1"]]"#
            );
        }
    }

    /// `--box auto` on a 4-line 4x4 grid said "no box fits a side of 2":
    /// its first row of 4 cells was taken for a whole 2x2 grid.
    #[test]
    fn box_auto_reads_a_block_whose_rows_are_squares() {
        for (text, n) in [
            ("1...\n..3.\n.4..\n...2\n", 4),
            ("1 . . .\n. . 3 .\n. 4 . .\n. . . 2\n", 4),
            (&"53..7....\n".repeat(9) as &str, 9),
            ("1234341221434321\n", 4),
            (&format!("{}\n", "123456789ABCDEFG".repeat(16)) as &str, 16),
        ] {
            let rs = records(text, 0);
            assert_eq!(rs.len(), 1, "{text}");
            assert_eq!(rs[0].cells.as_ref().map(Vec::len), Ok(n * n), "{text}");
        }
    }
}
