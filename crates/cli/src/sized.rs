//! `sudoku solve --box RxC` (or `--box auto`, or an input whose first
//! record is not 9x9): grids of any size, read, solved and written back one
//! at a time, in the input's own shape, in this process or through
//! servers (one Solve call each, made again when a server is lost).

use std::io::{Read, Write};

use anyhow::{Context, anyhow};

use super::answer::{Done, Outcome, write_json};
use super::connect::{TlsArgs, connect_all};
use super::retry::{MAX_FAILURES, MAX_OUTAGE, backoff, lost_server};
use super::sized_text::{Layout, Records, write};
use super::sniff::{Sniffed, needs_box};
use super::words::{for_people, puzzles};
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::Progress;
use sudoku_core::solver::sized::SizedSolver;
use sudoku_grpc::pb;
use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;

/// The box of a sized run.
#[derive(Debug, Clone, Copy)]
pub(super) enum Size {
    /// `--box RxC`.
    Given(Shape),
    /// `--box auto`: the squarest box for the first record's side.
    Auto,
    /// No `--box`: what [`sniff`](crate::sniff::sniff) found in the first record.
    Sniffed(Sniffed),
}

/// How answers are written: `--output jsonl`, and `--format`'s choice of
/// one line (`Some(true)`) or a block of rows (`Some(false)`) over the
/// record's own layout.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Written {
    pub(super) jsonl: bool,
    pub(super) line: Option<bool>,
}

/// A solution as `--output jsonl` gives it: text up to 35x35, an array of
/// integers above.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum JsonSolution {
    Text(String),
    Values(Vec<u8>),
}

fn json_solution(g: &SizedGrid) -> JsonSolution {
    match g.to_text() {
        Ok(text) => JsonSolution::Text(text),
        Err(_) => JsonSolution::Values(g.values().to_vec()),
    }
}

/// Solves every record of the input with the box `size` says, locally or
/// on `server`; prints solutions in input order, one answer (or `# error:`
/// line, or JSON object) per record. What box a run without `--box RxC`
/// took is said on stderr unless `quiet`. Exit code 1 when any puzzle
/// failed.
pub(super) async fn run(
    input: &mut dyn Read,
    size: Size,
    server: Option<(&[String], &TlsArgs)>,
    unique: bool,
    max_nodes: u64,
    quiet: bool,
    written: Written,
) -> anyhow::Result<i32> {
    let side = match size {
        Size::Given(s) | Size::Sniffed(Sniffed::Square(s)) => s.side(),
        Size::Sniffed(Sniffed::NeedsBox(n)) => n,
        Size::Auto | Size::Sniffed(Sniffed::Nine) => 0,
    };
    // Read as the puzzles are solved: one record held at a time.
    let mut records = Records::new(std::io::BufReader::with_capacity(1 << 16, input), side);
    let first = records.next().transpose().context("reading the puzzles")?;
    let shape = match (size, first.as_ref()) {
        (Size::Given(s), _) => s,
        (_, None) => return Ok(0),
        (Size::Sniffed(Sniffed::NeedsBox(n)), Some(_)) => {
            // Every record answered, so outputs stay one per input.
            let why = needs_box(n);
            let mut out = std::io::stdout().lock();
            for r in first.into_iter().map(Ok).chain(records) {
                let r = r.context("reading the puzzles")?;
                let e = format!("line {}: {why}", r.line);
                eprintln!("{e}");
                if written.jsonl {
                    let a = Done::<SizedGrid>::invalid(why.clone());
                    write_json(&mut out, r.line, None, &a, json_solution)?;
                } else {
                    writeln!(out, "{}", r.marked(&format!("# error: {e}")))?;
                }
            }
            out.flush()?;
            return Ok(1);
        }
        (Size::Sniffed(Sniffed::Square(s)), Some(_)) => {
            if !quiet {
                eprintln!(
                    "sudoku: {} puzzles, the size of the first record",
                    s.describe()
                );
            }
            s
        }
        (Size::Auto | Size::Sniffed(Sniffed::Nine), Some(r)) => {
            let k = r.cells.as_ref().map_or(0, Vec::len);
            let n = (k as f64).sqrt().round() as usize;
            let s = Shape::for_side(n).ok_or_else(|| {
                anyhow!("line {}: no box fits a side of {n}; give --box RxC", r.line)
            })?;
            if !quiet {
                eprintln!(
                    "sudoku: {} puzzles, boxes {s} (--box to choose)",
                    s.describe()
                );
            }
            s
        }
    };
    let mut client = match server {
        Some((servers, tls)) => Some(SudokuServiceClient::new(connect_all(servers, tls).await?)),
        None => None,
    };
    let limit = if unique { 2 } else { 1 };
    let mut solver = SizedSolver::new(&SizedGrid::empty(shape), limit);
    let mut out = std::io::stdout().lock();
    // Records answered so far, and how many of them failed.
    let (mut answered, mut failures) = (0u64, 0u64);
    for r in first.into_iter().map(Ok).chain(records) {
        let r = r.context("reading the puzzles")?;
        let puzzle = match &r.cells {
            // The record's own errors name the line; the output does too.
            Err(e) => Err(e
                .strip_prefix(&format!("line {}: ", r.line))
                .unwrap_or(e)
                .to_string()),
            Ok(c) => SizedGrid::from_cells(shape, c)
                .and_then(|g| g.check_givens().map(|()| g))
                .map_err(|e| e.to_string()),
        };
        let answer = match puzzle {
            Err(e) => Done::invalid(e),
            Ok(g) => match client.as_mut() {
                None => {
                    let started = std::time::Instant::now();
                    solver.restart(&g, limit);
                    let _ = solver.resume(max_nodes) == Progress::Paused;
                    let micros = started.elapsed().as_micros() as u64;
                    let a = solver.answer();
                    let outcome = match (a.complete, a.count) {
                        (true, 1) => Outcome::Solved,
                        (true, 0) => Outcome::NoSolution,
                        (true, _) => Outcome::NotUnique,
                        (false, _) => Outcome::WorkLimit,
                    };
                    Done {
                        outcome,
                        solution: (a.count > 0).then(|| solver.solution()).flatten(),
                        count: u64::from(a.count),
                        guesses: a.stats.guesses,
                        nodes: a.stats.nodes,
                        micros,
                        error: None,
                    }
                }
                Some(c) => match remote_again(c, &g, shape, unique).await {
                    Ok(done) => done,
                    // Gone for good: as for 9x9, exit 2 with the count.
                    Err(status) => {
                        out.flush()?;
                        eprintln!(
                            "sudoku: lost the server ({}); {} answered before that",
                            for_people(status.message()),
                            puzzles(answered)
                        );
                        return Ok(2);
                    }
                },
            },
        };
        let complaint = answer.complaint();
        answered += 1;
        if let Some(c) = &complaint {
            // On stderr too, as 9x9 says its failures.
            failures += 1;
            eprintln!("line {}: {c}", r.line);
        }
        if written.jsonl {
            write_json(&mut out, r.line, Some(&shape), &answer, json_solution)?;
            continue;
        }
        let side = shape.side();
        let layout = match (written.line, r.layout) {
            (None, l) => l,
            (Some(true), Layout::Json(s)) if s.ints || side > 35 => Layout::Ints,
            (Some(true), Layout::Json(_)) => Layout::Chars,
            (Some(false), Layout::Json(s)) => Layout::Block {
                ints: s.ints || side > 35,
                spaced: true,
            },
            (Some(true), Layout::Block { ints, .. }) if ints || shape.side() > 35 => Layout::Ints,
            (Some(true), Layout::Block { .. }) => Layout::Chars,
            (Some(false), l @ Layout::Block { .. }) => l,
            (Some(true), l) => l,
            (Some(false), l) => Layout::Block {
                ints: l == Layout::Ints || shape.side() > 35,
                spaced: true,
            },
        };
        match (complaint, &answer.solution) {
            (None, Some(s)) => writeln!(out, "{}", write(s, layout))?,
            (c, _) => {
                let why = c.unwrap_or_else(|| "no solution".to_string());
                writeln!(
                    out,
                    "{}",
                    r.marked(&format!("# error: line {}: {why}", r.line))
                )?
            }
        }
    }
    out.flush()?;
    if failures > 0 {
        eprintln!("{failures} of {} not solved", puzzles(answered));
    } else if answered == 0 && !quiet {
        eprintln!("0 puzzles");
    }
    Ok(i32::from(failures > 0))
}

/// One puzzle solved on the server; a call lost with its server (see
/// [`lost_server`]) is made again, on another server when there are
/// several, up to [`MAX_FAILURES`] times in all and for at most
/// [`MAX_OUTAGE`]. `Err` when it never got through.
async fn remote_again(
    client: &mut SudokuServiceClient<tonic::transport::Channel>,
    g: &SizedGrid,
    shape: Shape,
    unique: bool,
) -> Result<Done<SizedGrid>, tonic::Status> {
    let mut failures = 0;
    let since = std::time::Instant::now();
    loop {
        match remote(client, g, shape, unique).await {
            Err(status)
                if lost_server(&status)
                    && failures + 1 < MAX_FAILURES
                    && since.elapsed() < MAX_OUTAGE =>
            {
                failures += 1;
                tokio::time::sleep(backoff(failures)).await;
            }
            Err(status) if lost_server(&status) => return Err(status),
            Err(status) => return Ok(Done::of_status(&status)),
            Ok(done) => return Ok(done),
        }
    }
}

/// One puzzle solved on the server; `Err` for a call that failed.
async fn remote(
    client: &mut SudokuServiceClient<tonic::transport::Channel>,
    g: &SizedGrid,
    shape: Shape,
    unique: bool,
) -> Result<Done<SizedGrid>, tonic::Status> {
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
    let s = client.solve(request).await?.into_inner().solution;
    let failed = |outcome, code, message| Done {
        outcome,
        solution: None,
        count: 0,
        guesses: 0,
        nodes: 0,
        micros: 0,
        error: Some((code, message)),
    };
    let Some(s) = s else {
        let why = "no solution in the response".to_string();
        return Ok(failed(Outcome::Failed, "UNKNOWN", why));
    };
    let solution = s
        .grid
        .and_then(|grid| SizedGrid::from_cells(shape, &grid.cells).ok());
    let outcome = match pb::Outcome::try_from(s.outcome) {
        Ok(pb::Outcome::Solved) if solution.is_some() => Outcome::Solved,
        Ok(pb::Outcome::MultipleSolutions) if solution.is_some() => Outcome::NotUnique,
        Ok(pb::Outcome::NoSolution) => Outcome::NoSolution,
        Ok(pb::Outcome::WorkLimitReached) => Outcome::WorkLimit,
        _ => {
            let why = format!("unexpected answer {}", s.outcome);
            return Ok(failed(Outcome::Failed, "UNKNOWN", why));
        }
    };
    let (guesses, nodes, micros) = s
        .stats
        .map_or((0, 0, 0), |st| (st.guesses, st.nodes, st.solve_time_us));
    Ok(Done {
        outcome,
        solution,
        count: s.solution_count,
        guesses,
        nodes,
        micros,
        error: None,
    })
}
