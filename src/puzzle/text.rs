//! Reading puzzles from text as people and pipelines write them, and writing
//! solutions back in the same shape.
//!
//! Accepted, mixed freely in one input:
//! - 81-character lines: '1'-'9', '.' or '0' for blanks; text after the 81
//!   characters is ignored (ratings, comments).
//! - 9-line blocks: one row per line, 9 cells separated by spaces or not,
//!   '.' or '0' for blanks; `|`, `-` and `+` box rulers are ignored.
//! - Bracketed boards, as in `[["5","3",".",...],...]`, on one line or one
//!   row per line.
//!
//! Lines starting with '#' and blank lines are skipped.

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
    /// A bracketed board of quoted digits on one line.
    Bracketed,
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
    /// The input text of the puzzle, as read (for echoing failures).
    pub raw: String,
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

struct Block {
    start: usize,
    rows: Vec<[u8; 9]>,
    raw: String,
    format: Format,
}

/// Reads every puzzle in `text`.
pub fn read_puzzles(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut block: Option<Block> = None;
    let flush_partial = |block: &mut Option<Block>, out: &mut Vec<Entry>| {
        if let Some(b) = block.take() {
            out.push(Entry {
                line: b.start,
                format: b.format,
                puzzle: Err(format!(
                    "line {}: incomplete grid: {} of 9 rows",
                    b.start,
                    b.rows.len()
                )),
                raw: b.raw,
            });
        }
    };
    for (i, raw_line) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw_line.trim();
        if line.is_empty() || line.starts_with('#') {
            if line.is_empty() {
                flush_partial(&mut block, &mut out);
            }
            continue;
        }
        // An 81-character line; anything after it is commentary.
        let head: Vec<char> = line.chars().take(CELLS + 1).collect();
        if head.len() >= CELLS
            && head[..CELLS].iter().all(|&c| is_cell(c))
            && head.get(CELLS).is_none_or(|c| !is_cell(*c))
        {
            flush_partial(&mut block, &mut out);
            let text: String = head[..CELLS].iter().collect();
            out.push(Entry {
                line: n,
                format: Format::Line,
                puzzle: Grid::from_text(&text).map_err(|e| format!("line {n}: {e}")),
                raw: text,
            });
            continue;
        }
        // Otherwise a row (or a whole bracketed board) of cells with separators.
        let bracketed = line.starts_with('[') || line.starts_with('"');
        let mut cells = Vec::with_capacity(CELLS);
        let mut spaced = false;
        let mut bad = None;
        // Columns are counted in the line as written, before trimming.
        let indent = raw_line.chars().count() - raw_line.trim_start().chars().count();
        for (col, c) in line.chars().enumerate() {
            if is_cell(c) {
                cells.push(cell_value(c));
            } else if c.is_whitespace() {
                spaced = true;
            } else if !matches!(c, '|' | '-' | '+' | ',' | '"' | '\'' | '[' | ']') {
                bad = Some((indent + col + 1, c));
                break;
            }
        }
        if let Some((col, c)) = bad {
            flush_partial(&mut block, &mut out);
            out.push(Entry {
                line: n,
                format: Format::Line,
                puzzle: Err(format!(
                    "line {n}, column {col}: unexpected character {c:?}; expected '1'-'9', '.' or '0'"
                )),
                raw: raw_line.to_string(),
            });
            continue;
        }
        match cells.len() {
            0 => continue, // a ruler such as "------+-------+------"
            CELLS => {
                flush_partial(&mut block, &mut out);
                let mut g = [0u8; CELLS];
                g.copy_from_slice(&cells);
                out.push(Entry {
                    line: n,
                    format: if bracketed {
                        Format::Bracketed
                    } else {
                        Format::Line
                    },
                    puzzle: Ok(Grid(g)),
                    raw: raw_line.to_string(),
                });
            }
            9 => {
                let b = block.get_or_insert_with(|| Block {
                    start: n,
                    rows: Vec::with_capacity(9),
                    raw: String::new(),
                    format: if bracketed {
                        Format::Bracketed
                    } else {
                        Format::Grid { spaced }
                    },
                });
                let mut row = [0u8; 9];
                row.copy_from_slice(&cells);
                b.rows.push(row);
                if !b.raw.is_empty() {
                    b.raw.push('\n');
                }
                b.raw.push_str(raw_line);
                if b.rows.len() == 9 {
                    let b = block.take().expect("block was just filled");
                    let mut g = [0u8; CELLS];
                    for (r, row) in b.rows.iter().enumerate() {
                        g[r * 9..r * 9 + 9].copy_from_slice(row);
                    }
                    out.push(Entry {
                        line: b.start,
                        format: b.format,
                        puzzle: Ok(Grid(g)),
                        raw: b.raw,
                    });
                }
            }
            k => {
                flush_partial(&mut block, &mut out);
                out.push(Entry {
                    line: n,
                    format: Format::Line,
                    puzzle: Err(format!(
                        "line {n}: found {k} cells; expected 81 on one line or 9 per row of a grid"
                    )),
                    raw: raw_line.to_string(),
                });
            }
        }
    }
    flush_partial(&mut block, &mut out);
    out
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
        Format::Bracketed => {
            let mut s = String::with_capacity(400);
            s.push('[');
            for r in 0..9 {
                if r > 0 {
                    s.push(',');
                }
                s.push('[');
                for c in 0..9 {
                    if c > 0 {
                        s.push(',');
                    }
                    s.push('"');
                    s.push(digit(grid.0[r * 9 + c]));
                    s.push('"');
                }
                s.push(']');
            }
            s.push(']');
            s
        }
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

    #[test]
    fn bracketed_board() {
        let rows: Vec<String> = (0..9)
            .map(|r| {
                let cells: Vec<String> = LINE[r * 9..r * 9 + 9]
                    .chars()
                    .map(|c| format!("\"{c}\""))
                    .collect();
                format!("[{}]", cells.join(","))
            })
            .collect();
        let one_line = format!("[{}]", rows.join(","));
        let e = read_puzzles(&one_line);
        assert_eq!(e[0].format, Format::Bracketed);
        let g = e[0].puzzle.clone().unwrap();
        assert_eq!(g.to_text(), LINE);
        assert_eq!(write_grid(&g, Format::Bracketed), one_line);
        let multi = read_puzzles(&format!("[\n{}\n]", rows.join(",\n")));
        assert_eq!(multi.len(), 1);
        assert_eq!(multi[0].puzzle.clone().unwrap().to_text(), LINE);
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
}
