//! Boards written as JSON, as programs print them: rows of integers
//! (`[[5,3,0,...],...]`, 0 for a blank), rows of strings
//! (`[["5","3",".",...],...]`, "." "0" or "" for a blank), or one flat
//! array of N*N cells; on one line or spread over many, as
//! `json.dumps(board, indent=2)` writes them; one after another, or all in
//! one array of boards. Python's `print(board)`, with single quotes, is
//! read too.
//!
//! [`Scanner`] finds where each board starts and ends in a byte stream,
//! holding one board's bytes at a time however the boards are laid out
//! (an array of a million boards on one line included); serde_json reads
//! each board. Text readers hand a line to it when its first character
//! (after spaces) is '[' ([`starts`]); everything else stays theirs.

use std::io::BufRead;

use super::sized::{MAX_TEXT_SIDE, char_value, value_char};

/// The longest board kept, in bytes: a 64x64 board of integers written
/// with `indent=2` takes about 40 KB. The rest of a longer one is scanned
/// to its end (so the boards after it keep their places) and dropped.
pub const MAX_BOARD: usize = 1 << 20;

/// How a board's cells were written; its answer is written the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Integers (0 for a blank) rather than strings.
    pub ints: bool,
    /// One array of N*N cells rather than N arrays of N.
    pub flat: bool,
    /// How a blank string cell was written.
    pub blank: Blank,
}

/// A blank string cell as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blank {
    /// `"."`
    Dot,
    /// `"0"`
    Zero,
    /// `""`
    Empty,
}

impl Blank {
    fn text(self) -> &'static str {
        match self {
            Blank::Dot => ".",
            Blank::Zero => "0",
            Blank::Empty => "",
        }
    }
}

/// A board as read: its side N and N*N values row-major, each 0 (a
/// blank) to N. Whether the givens keep the rules is the caller's check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    /// N.
    pub side: usize,
    /// N*N values, row-major.
    pub values: Vec<u32>,
    /// How it was written.
    pub style: Style,
}

/// One board found in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// 1-based line of the board's opening bracket.
    pub line: usize,
    /// The board's text as read (cut short past [`MAX_BOARD`]).
    pub raw: String,
    /// The board, or why it is not one (a sentence naming the line).
    pub board: Result<Board, String>,
}

/// True when the next line buffered in `input` starts, after spaces and
/// tabs, with '[': a JSON board. Looks without consuming.
pub fn starts(input: &mut impl BufRead) -> std::io::Result<bool> {
    let avail = loop {
        match input.fill_buf() {
            Ok(b) => break b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    Ok(avail.iter().find(|&&b| b != b' ' && b != b'\t') == Some(&b'['))
}

/// Where the scanner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not in JSON: the text reader reads lines.
    Off,
    /// After a board, on its last line: more boards, commas, spaces or a
    /// '#' comment may follow; the line's end hands back to the text reader.
    Between,
    /// Inside a top-level array.
    Value,
    /// Dropping the rest of a line after an error.
    Skip,
}

/// Finds JSON boards in a byte stream; see the module's notes.
#[derive(Debug)]
pub struct Scanner {
    state: State,
    /// Open arrays (and objects).
    depth: usize,
    /// The quote of the string the scanner is in.
    quote: Option<u8>,
    escaped: bool,
    /// The top-level array holds boards rather than being one: unknown
    /// until its first cell or its third '['.
    list: Option<bool>,
    /// In a list, a stray value between boards was already reported.
    stray: bool,
    /// The current board's bytes.
    buf: Vec<u8>,
    /// Bytes of the current board seen past [`MAX_BOARD`].
    over: usize,
    /// Line and 0-based byte column of the current board's first byte.
    start: (usize, usize),
    /// Where in `buf` a board inside the top-level array starts, and its
    /// line and column, while `list` is unknown.
    inner: Option<(usize, (usize, usize))>,
    /// Bytes since the current line's start.
    col: usize,
    /// The input ended inside a board (see [`Scanner::ended_inside`]).
    cut: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner::new()
    }
}

/// What one byte did.
enum Step {
    More,
    Piece(Piece),
    /// The JSON ended with its line: back to the text reader.
    End,
}

impl Scanner {
    /// A scanner that is off until a text reader finds a JSON start.
    pub fn new() -> Scanner {
        Scanner {
            state: State::Off,
            depth: 0,
            quote: None,
            escaped: false,
            list: None,
            stray: false,
            buf: Vec::new(),
            over: 0,
            start: (0, 0),
            inner: None,
            col: 0,
            cut: false,
        }
    }

    /// True while a JSON board (or the line it ended on) is being read:
    /// the text reader must call [`Scanner::next`] before reading a line.
    pub fn is_on(&self) -> bool {
        self.state != State::Off
    }

    /// Reads on from `input`, which is at the start of a line where
    /// [`starts`] is true, or where the last call left it: the next board,
    /// or `None` when the JSON ended with a line (or the input) and the
    /// text reader reads on. `lines` counts the lines read, as the text
    /// reader does: each line break read here adds one.
    pub fn next(
        &mut self,
        input: &mut impl BufRead,
        lines: &mut usize,
    ) -> std::io::Result<Option<Piece>> {
        if self.state == State::Off {
            self.state = State::Between;
            self.col = 0;
        }
        loop {
            let avail = match input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                let last = self.state;
                self.state = State::Off;
                if last == State::Value && !(self.list == Some(true) && self.depth <= 1) {
                    self.cut = true;
                    let msg = format!(
                        "line {}: the JSON board does not end: {} '[' not closed",
                        self.start.0, self.depth
                    );
                    return Ok(Some(self.piece(Err(msg))));
                }
                return Ok(None);
            }
            let mut used = 0;
            let mut out = None;
            for &b in avail {
                used += 1;
                match self.step(b, lines) {
                    Step::More => {}
                    Step::Piece(p) => {
                        out = Some(Some(p));
                        break;
                    }
                    Step::End => {
                        out = Some(None);
                        break;
                    }
                }
            }
            input.consume(used);
            if let Some(o) = out {
                return Ok(o);
            }
        }
    }

    /// True when the last [`Scanner::next`] met the input's end inside a
    /// board: more of the input would have told more.
    pub fn ended_inside(&self) -> bool {
        self.cut
    }

    /// Reads a line a text reader read itself (without its line break) and
    /// found to start with '[': [`starts`] could not see it whole in the
    /// buffer. `lines` counts the lines before it. The boards it ends are
    /// returned; one it leaves open is read on with [`Scanner::next`].
    pub fn feed_line(&mut self, line: &[u8], lines: &mut usize) -> Vec<Piece> {
        self.state = State::Between;
        self.col = 0;
        let mut out = Vec::new();
        for &b in line.iter().chain(b"\n") {
            if let Step::Piece(p) = self.step(b, lines) {
                out.push(p);
            }
        }
        out
    }

    fn step(&mut self, b: u8, lines: &mut usize) -> Step {
        let (line, col) = (*lines + 1, self.col);
        if b == b'\n' {
            *lines += 1;
            self.col = 0;
        } else {
            self.col += 1;
        }
        match self.state {
            State::Off => Step::End,
            State::Skip => match b {
                b'\n' => {
                    self.state = State::Off;
                    Step::End
                }
                _ => Step::More,
            },
            State::Between => match b {
                b' ' | b'\t' | b'\r' | b',' => Step::More,
                b'\n' => {
                    self.state = State::Off;
                    Step::End
                }
                b'#' => {
                    self.state = State::Skip;
                    Step::More
                }
                b'[' => {
                    self.state = State::Value;
                    self.depth = 1;
                    self.quote = None;
                    self.escaped = false;
                    self.list = None;
                    self.stray = false;
                    self.inner = None;
                    self.buf.clear();
                    self.over = 0;
                    self.buf.push(b);
                    self.start = (line, col);
                    Step::More
                }
                _ => {
                    self.state = State::Skip;
                    Step::Piece(Piece {
                        line,
                        raw: String::new(),
                        board: Err(format!(
                            "line {line}, column {}: text after a JSON board; \
                             put each board on lines of its own",
                            col + 1
                        )),
                    })
                }
            },
            State::Value => self.value(b, line, col),
        }
    }

    fn keep(&mut self, b: u8) {
        if self.buf.len() < MAX_BOARD {
            self.buf.push(b);
        } else {
            self.over += 1;
        }
    }

    fn value(&mut self, b: u8, line: usize, col: usize) -> Step {
        // Between the boards of a list nothing is kept.
        let between = self.list == Some(true) && self.depth == 1;
        if !between {
            self.keep(b);
        }
        if let Some(q) = self.quote {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == q || b == b'\n' {
                // A string does not span lines: a lost quote spoils one
                // line, not the rest of the input.
                self.quote = None;
            }
            return Step::More;
        }
        match b {
            b'[' | b'{' => {
                self.depth += 1;
                if between {
                    self.buf.clear();
                    self.over = 0;
                    self.buf.push(b);
                    self.start = (line, col);
                    self.stray = false;
                } else if self.list.is_none() {
                    match self.depth {
                        2 => self.inner = Some((self.buf.len() - 1, (line, col))),
                        3 => {
                            // A board's rows inside the top-level array:
                            // the array is a list of boards.
                            self.list = Some(true);
                            if let Some((at, start)) = self.inner.take() {
                                self.buf.drain(..at);
                                self.start = start;
                            }
                        }
                        _ => {}
                    }
                }
                Step::More
            }
            b']' | b'}' => {
                self.depth = self.depth.saturating_sub(1);
                match (self.list, self.depth) {
                    (Some(true), 1) => Step::Piece(self.piece(Ok(()))),
                    (Some(true), 0) => {
                        self.state = State::Between;
                        Step::More
                    }
                    (_, 0) => {
                        self.state = State::Between;
                        Step::Piece(self.piece(Ok(())))
                    }
                    _ => Step::More,
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' | b',' | b':' => Step::More,
            _ => {
                if b == b'"' || b == b'\'' {
                    self.quote = Some(b);
                }
                if self.list.is_none() {
                    self.list = Some(false);
                }
                if between && !self.stray {
                    self.stray = true;
                    let msg = format!(
                        "line {line}, column {}: not a board in the array of boards",
                        col + 1
                    );
                    return Step::Piece(Piece {
                        line,
                        raw: String::new(),
                        board: Err(msg),
                    });
                }
                Step::More
            }
        }
    }

    /// The board in `buf` as a piece: read, or `fault`.
    fn piece(&mut self, fault: Result<(), String>) -> Piece {
        let (line, col) = self.start;
        let text = String::from_utf8_lossy(&self.buf).into_owned();
        let board = match fault {
            Err(e) => Err(e),
            Ok(()) if self.over > 0 => Err(format!(
                "line {line}: a JSON board of {} bytes, longer than any grid ({MAX_BOARD} at most)",
                self.buf.len() + self.over
            )),
            Ok(()) => read_board(&text, line, col),
        };
        self.buf.clear();
        Piece {
            line,
            raw: text,
            board,
        }
    }
}

/// The side of the first board of `text`, which starts with it: `None`
/// when `text` ends inside the board, `Some(None)` when it is not a board.
pub fn first_side(text: &[u8]) -> Option<Option<usize>> {
    let mut scanner = Scanner::new();
    let piece = scanner.next(&mut &text[..], &mut 0).ok()?;
    if scanner.ended_inside() {
        return None;
    }
    Some(piece.and_then(|p| p.board.ok()).map(|b| b.side))
}

/// Reads one board's JSON `text`, which starts at line `line`, 0-based
/// column `col` of the input (for messages).
pub fn read_board(text: &str, line: usize, col: usize) -> Result<Board, String> {
    // Python's repr of a board of strings: its quotes are the only
    // difference from JSON.
    let swapped;
    let text = if text.contains('\'') && !text.contains('"') {
        swapped = text.replace('\'', "\"");
        &swapped
    } else {
        text
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let at_line = line + e.line().saturating_sub(1);
        let at_col = e.column() + if e.line() <= 1 { col } else { 0 };
        let full = e.to_string();
        let msg = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m);
        format!("line {at_line}, column {at_col}: not JSON: {msg}")
    })?;
    let serde_json::Value::Array(outer) = value else {
        return Err(format!("line {line}: a JSON board is an array"));
    };
    let flat = !outer.first().is_some_and(serde_json::Value::is_array);
    let (side, cells): (usize, Vec<&serde_json::Value>) = if flat {
        let side = outer.len().isqrt();
        if side < 2 || side * side != outer.len() {
            return Err(format!(
                "line {line}: a flat JSON board of {} cells; expected N*N (81 for 9x9)",
                outer.len()
            ));
        }
        (side, outer.iter().collect())
    } else {
        let side = outer.len();
        for (r, row) in outer.iter().enumerate() {
            let len = row.as_array().map_or(0, Vec::len);
            if !row.is_array() || len != side {
                return Err(format!(
                    "line {line}: row {} of the JSON board has {len} cells; \
                     {side} rows need {side} cells each",
                    r + 1
                ));
            }
        }
        (
            side,
            outer.iter().flat_map(|r| r.as_array()).flatten().collect(),
        )
    };
    let mut style = Style {
        ints: cells.first().is_some_and(|c| c.is_number()),
        flat,
        blank: Blank::Dot,
    };
    let mut blank = None;
    let mut values = Vec::with_capacity(cells.len());
    for (i, c) in cells.iter().enumerate() {
        let v = match c {
            serde_json::Value::Number(n) => n.as_u64().and_then(|v| u32::try_from(v).ok()),
            serde_json::Value::String(s) => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (None, _) => {
                        blank.get_or_insert(Blank::Empty);
                        Some(0)
                    }
                    (Some(ch), None) => char_value(ch).map(u32::from).inspect(|&v| {
                        if v == 0 {
                            blank.get_or_insert(if ch == '0' { Blank::Zero } else { Blank::Dot });
                        }
                    }),
                    _ => s.parse().ok(),
                }
            }
            _ => None,
        };
        let (r, col) = (i / side + 1, i % side + 1);
        let Some(v) = v else {
            return Err(format!(
                "line {line}: row {r}, column {col}: {c} is not a cell; \
                 expected a number, or a string of one digit or letter"
            ));
        };
        if v as usize > side {
            return Err(format!(
                "line {line}: row {r}, column {col}: {c} is not a value of a {side}x{side} board"
            ));
        }
        values.push(v);
    }
    style.blank = blank.unwrap_or(Blank::Dot);
    Ok(Board {
        side,
        values,
        style,
    })
}

/// `values` (N*N, row-major, 0 blank) written as a board in `style`, on
/// one line.
pub fn write_board(values: &[u8], side: usize, style: Style) -> String {
    let mut s = String::with_capacity(values.len() * 4 + 2 * side + 2);
    s.push('[');
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if !style.flat && i % side == 0 {
            if i > 0 {
                s.pop();
                s.push_str("],");
            }
            s.push('[');
        }
        match (style.ints, v) {
            (true, v) => s.push_str(&v.to_string()),
            (false, 0) => {
                s.push('"');
                s.push_str(style.blank.text());
                s.push('"');
            }
            (false, v) if side <= MAX_TEXT_SIDE => {
                s.push('"');
                s.push(value_char(v));
                s.push('"');
            }
            (false, v) => {
                s.push('"');
                s.push_str(&v.to_string());
                s.push('"');
            }
        }
    }
    if !style.flat && !values.is_empty() {
        s.push(']');
    }
    s.push(']');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> (Vec<Piece>, Vec<String>) {
        let mut input = std::io::BufReader::with_capacity(7, text.as_bytes());
        let mut lines = 0;
        let mut scanner = Scanner::new();
        let mut got = Vec::new();
        let mut rest = Vec::new();
        loop {
            if scanner.is_on() || starts(&mut input).unwrap() {
                if let Some(p) = scanner.next(&mut input, &mut lines).unwrap() {
                    got.push(p);
                }
                continue;
            }
            let mut l = String::new();
            if input.read_line(&mut l).unwrap() == 0 {
                break;
            }
            let l = l.trim_end();
            if l.trim_start().starts_with('[') {
                got.extend(scanner.feed_line(l.as_bytes(), &mut lines));
                continue;
            }
            lines += 1;
            rest.push(format!("{lines}:{l}"));
        }
        (got, rest)
    }

    const BOARD: &str = "[[1,0,0,4],[0,0,0,0],[0,1,0,0],[4,0,0,1]]";

    #[test]
    fn a_board_on_one_line_or_many() {
        let pretty = "[\n  [\n    1,\n    0,\n    0,\n    4\n  ],\n  [0, 0, 0, 0],\n  [0,1,0,0],\n  [4,0,0,1]\n]";
        let text = format!("# two\n{BOARD}\nline\n{pretty}\n  {BOARD}  # a note\nlast\n");
        let (got, rest) = pieces(&text);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(rest, ["1:# two", "3:line", "16:last"]);
        assert_eq!(got.iter().map(|p| p.line).collect::<Vec<_>>(), [2, 4, 15]);
        for p in &got {
            let b = p.board.as_ref().unwrap();
            assert_eq!(b.side, 4);
            assert_eq!(b.values, [1, 0, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 0, 1]);
            assert!(b.style.ints && !b.style.flat);
        }
        assert_eq!(got[1].raw, pretty);
    }

    #[test]
    fn an_array_of_boards_gives_each_board() {
        let one_line = format!("[{BOARD}, {BOARD},{BOARD}]");
        let (got, rest) = pieces(&format!("{one_line}\n[\n  {BOARD},\n  {BOARD}\n]\nx\n"));
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(rest, ["6:x"]);
        assert_eq!(
            got.iter().map(|p| p.line).collect::<Vec<_>>(),
            [1, 1, 1, 3, 4]
        );
        assert!(got.iter().all(|p| p.raw == BOARD && p.board.is_ok()));
    }

    #[test]
    fn strings_dots_and_python_quotes() {
        let flat = read_board(
            r#"["1",".",".","4", "","","","", ".","1",".",".", "4","0","0","1"]"#,
            1,
            0,
        )
        .unwrap();
        assert!(flat.style.flat && !flat.style.ints);
        assert_eq!(flat.style.blank, Blank::Dot);
        assert_eq!(flat.values[..4], [1, 0, 0, 4]);
        let py = read_board("[['1', '0', '0', '4'], ['0', '0', '0', '0'], ['0', '1', '0', '0'], ['4', '0', '0', '1']]", 1, 0).unwrap();
        assert_eq!(py.style.blank, Blank::Zero);
        let values: Vec<u8> = py.values.iter().map(|&v| v as u8).collect();
        assert_eq!(
            write_board(&values, 4, py.style),
            r#"[["1","0","0","4"],["0","0","0","0"],["0","1","0","0"],["4","0","0","1"]]"#
        );
        assert_eq!(
            write_board(
                &values,
                4,
                Style {
                    ints: true,
                    flat: false,
                    blank: Blank::Dot
                }
            ),
            BOARD
        );
        assert_eq!(
            write_board(
                &values[..4],
                2,
                Style {
                    ints: true,
                    flat: true,
                    blank: Blank::Dot
                }
            ),
            "[1,0,0,4]"
        );
    }

    #[test]
    fn faults_name_the_line_and_the_rest_reads_on() {
        let (got, rest) = pieces(&format!(
            "[[1,2],\n [3,x]]\n[[1,2,3],[1,2]]\n[[\"1\",true],[1,2]]\n{BOARD} junk\nnext\n[[1\n"
        ));
        assert_eq!(got.len(), 6, "{got:?}");
        assert_eq!(got[3].board.as_ref().map(|b| b.side), Ok(4));
        let errs: Vec<&str> = got
            .iter()
            .filter_map(|p| p.board.as_ref().err())
            .map(String::as_str)
            .collect();
        assert!(
            errs[0].starts_with("line 2, column 5: not JSON"),
            "{errs:?}"
        );
        assert!(
            errs[1].starts_with("line 3: row 1 of the JSON board has 3 cells"),
            "{errs:?}"
        );
        assert!(
            errs[2].starts_with("line 4: row 1, column 2: true is not a cell"),
            "{errs:?}"
        );
        let junk = format!(
            "line 5, column {}: text after a JSON board",
            BOARD.len() + 2
        );
        assert!(errs[3].starts_with(&junk), "{errs:?}");
        assert!(
            errs[4].starts_with("line 7: the JSON board does not end"),
            "{errs:?}"
        );
        assert_eq!(rest, ["6:next"]);
    }

    #[test]
    fn the_first_side_waits_for_the_whole_board() {
        assert_eq!(first_side(BOARD.as_bytes()), Some(Some(4)));
        assert_eq!(first_side(&BOARD.as_bytes()[..20]), None);
        assert_eq!(first_side(b"[1,2,3]\n"), Some(None));
    }

    #[test]
    fn a_board_past_the_limit_is_one_error_in_bounded_memory() {
        let big = format!("[[{}0]]\n{BOARD}\n", "0,".repeat(MAX_BOARD));
        let (got, _) = pieces(&big);
        assert_eq!(got.len(), 2);
        assert!(
            got[0]
                .board
                .as_ref()
                .unwrap_err()
                .contains("longer than any grid")
        );
        assert!(got[0].raw.len() <= MAX_BOARD);
        assert!(got[1].board.is_ok());
    }
}
