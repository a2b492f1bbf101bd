//! `sudoku solve --box RxC` (or `--box auto`): grids of any size (see
//! docs/sizes.md), read, solved and written back one at a time, in the
//! input's own shape. The 9x9 path (`solve.rs`) is untouched: without
//! `--box` nothing here runs.
//!
//! Records, mixed freely; '#' lines and blank lines are skipped:
//! - a line of N*N cell characters ('1'-'9', 'A'-'Z', '.' or '0'), for N up
//!   to 35;
//! - a line of N*N integers separated by spaces or commas (any N);
//! - N lines of N cells each, characters or space-separated integers,
//!   `|`, `-` and `+` rulers ignored.

use std::io::{Read, Write};

use anyhow::{Context, anyhow};

use crate::pb;
use crate::pb::sudoku_service_client::SudokuServiceClient;
use crate::puzzle::sized::{Shape, SizedGrid, char_value, value_char};
use crate::solver::Progress;
use crate::solver::sized::SizedSolver;

/// How a record was written; its solution is written the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One line of characters.
    Chars,
    /// One line of integers.
    Ints,
    /// N lines; integers (or characters) separated by spaces when `spaced`.
    Block { ints: bool, spaced: bool },
}

/// The cells of one row or record: values, or `None` for a token that is
/// not a cell.
fn cells_of(line: &str) -> (Vec<Option<u32>>, bool, bool) {
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

/// One record: its first line, layout and cell values (or why not).
struct Record {
    line: usize,
    layout: Layout,
    cells: Result<Vec<u32>, String>,
}

/// Splits `text` into records of side `n` (or, when `n` is 0, the side of
/// the first record).
fn records(text: &str, mut n: usize) -> Vec<Record> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.is_empty() || l.starts_with('#') {
            i += 1;
            continue;
        }
        let (cells, ints, spaced) = cells_of(l);
        let k = cells.len();
        let side = (k as f64).sqrt().round() as usize;
        if n == 0 {
            n = if side * side == k && side > 1 {
                side
            } else {
                k
            };
        }
        let start = i + 1;
        if k == n * n && n > 1 {
            out.push(Record {
                line: start,
                layout: if ints { Layout::Ints } else { Layout::Chars },
                cells: collect(cells, start),
            });
            i += 1;
            continue;
        }
        // A block: n rows of n cells.
        let mut all = Vec::with_capacity(n * n);
        let mut fault = None;
        let mut rows = 0;
        while rows < n && i < lines.len() {
            let l = lines[i].trim();
            i += 1;
            if l.is_empty() || l.starts_with('#') || l.chars().all(|c| "-+| ".contains(c)) {
                continue;
            }
            let (row, _, _) = cells_of(l);
            if row.len() != n && fault.is_none() {
                fault = Some(format!(
                    "line {}: expected {n} cells in a row, found {}",
                    i,
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
        out.push(Record {
            line: start,
            layout: Layout::Block { ints, spaced },
            cells,
        });
    }
    out
}

fn collect(cells: Vec<Option<u32>>, line: usize) -> Result<Vec<u32>, String> {
    cells
        .iter()
        .enumerate()
        .map(|(i, c)| c.ok_or_else(|| format!("line {line}: cell {i} is not a value")))
        .collect()
}

/// `grid` written in `layout`.
fn write(grid: &SizedGrid, layout: Layout) -> String {
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

/// Solves every record of the input with box `shape` (`None`: the squarest
/// box for the first record's side, said on stderr), locally or on
/// `server`; prints solutions in input order. Exit code 1 when any puzzle
/// failed.
pub async fn run(
    input: &mut dyn Read,
    shape: Option<Shape>,
    server: Option<&[String]>,
    unique: bool,
    max_nodes: u64,
) -> anyhow::Result<i32> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .context("reading the puzzles")?;
    let records = records(&text, shape.map_or(0, |s| s.side()));
    let shape = match (shape, records.first()) {
        (Some(s), _) => s,
        (None, None) => return Ok(0),
        (None, Some(r)) => {
            let k = r.cells.as_ref().map_or(0, Vec::len);
            let n = (k as f64).sqrt().round() as usize;
            let s = Shape::for_side(n).ok_or_else(|| {
                anyhow!("line {}: no box fits a side of {n}; give --box RxC", r.line)
            })?;
            eprintln!(
                "sudoku: {} puzzles, boxes {s} (--box to choose)",
                s.describe()
            );
            s
        }
    };
    let mut client = match server {
        Some(servers) => Some(SudokuServiceClient::new(
            super::connect::connect_all(servers).await?,
        )),
        None => None,
    };
    let limit = if unique { 2 } else { 1 };
    let mut solver = SizedSolver::new(&SizedGrid::empty(shape), limit);
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    for r in records {
        let puzzle = r.cells.and_then(|c| {
            let g =
                SizedGrid::from_cells(shape, &c).map_err(|e| format!("line {}: {e}", r.line))?;
            g.check_givens()
                .map_err(|e| format!("line {}: {e}", r.line))?;
            Ok(g)
        });
        let answer = match puzzle {
            Err(e) => Err(e),
            Ok(g) => match client.as_mut() {
                None => {
                    solver.restart(&g, limit);
                    let _ = solver.resume(max_nodes) == Progress::Paused;
                    let a = solver.answer();
                    match (a.complete, a.count, solver.solution()) {
                        (true, 1, Some(s)) => Ok(s),
                        (true, c, Some(s)) if c > 1 && !unique => Ok(s),
                        (true, 0, _) => Err(format!("line {}: no solution", r.line)),
                        (true, _, _) => Err(format!("line {}: several solutions", r.line)),
                        (false, _, _) => Err(format!("line {}: work limit reached", r.line)),
                    }
                }
                Some(c) => remote(c, &g, shape, unique)
                    .await
                    .map_err(|e| format!("line {}: {e}", r.line)),
            },
        };
        match answer {
            Ok(s) => writeln!(out, "{}", write(&s, r.layout))?,
            Err(e) => {
                failed = true;
                writeln!(out, "# error: {e}")?;
            }
        }
    }
    out.flush()?;
    Ok(i32::from(failed))
}

/// One puzzle solved on the server.
async fn remote(
    client: &mut SudokuServiceClient<tonic::transport::Channel>,
    g: &SizedGrid,
    shape: Shape,
    unique: bool,
) -> Result<SizedGrid, String> {
    let request = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            cells: g.to_cells(),
            box_rows: shape.box_rows() as u32,
            box_cols: shape.box_cols() as u32,
            ..Default::default()
        }),
        options: unique.then_some(pb::SolveOptions {
            mode: pb::SolveMode::Count as i32,
            max_solutions: 2,
        }),
    };
    let s = client
        .solve(request)
        .await
        .map_err(|e| e.message().to_string())?
        .into_inner()
        .solution
        .ok_or("no solution in the response")?;
    match (pb::Outcome::try_from(s.outcome), s.grid) {
        (Ok(pb::Outcome::Solved), Some(grid)) => {
            SizedGrid::from_cells(shape, &grid.cells).map_err(|e| e.to_string())
        }
        (Ok(o), _) => Err(o.as_str_name().to_lowercase()),
        (Err(_), _) => Err("unknown outcome".to_string()),
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
}
