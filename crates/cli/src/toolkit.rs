//! `sudoku validate`, `sudoku hint` and `sudoku rate`, and what they share
//! with `sudoku generate`: each calls the service's RPC of the same name,
//! through `--server` or, with `--local`, on a service in this process (the
//! same code the server runs, so both give the same answers). Puzzles are
//! read as they come, answered a few at once and printed in input order.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use futures::StreamExt;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;
use tonic::{Request, Status};

use super::answer::Puzzle;
use super::answer::{JsonError, Output};
use super::connect::{TlsArgs, connect};
use super::input;
use super::sized::{Grids, SizedRecords};
use super::sized_text::parse_box;
use super::words::{code_name, for_people};
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::puzzle::text::{Entry, Reader};
use sudoku_grpc::pb::{
    self, sudoku_service_client::SudokuServiceClient, sudoku_service_server::SudokuService,
};
use sudoku_grpc::server::Config;
use sudoku_grpc::service::Sudoku;

/// Where the calls go.
#[derive(Debug, Args)]
pub struct Target {
    /// Server to call: host:port, or an http:// or https:// URL.
    #[arg(long, env = "SUDOKU_SERVER", default_value = "http://127.0.0.1:50051")]
    pub(super) server: String,
    #[command(flatten)]
    pub(super) tls: TlsArgs,
    /// Answer in this process, with the service's own code, no server.
    #[arg(long)]
    pub(super) local: bool,
    /// Solver threads for --local (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub(super) threads: usize,
    /// Work budget for --local, in search nodes: of one puzzle's search,
    /// and of one Generate attempt's checks (a server's `--max-nodes`, and
    /// its default). A minimal puzzle of 25x25 and up needs more than the
    /// default (docs/sizes.md).
    #[arg(long)]
    pub(super) max_nodes: Option<u64>,
    /// What to print for each answer.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) output: Output,
}

/// Flags of `validate`, `hint` and `rate`.
#[derive(Debug, Args)]
pub struct FileArgs {
    /// Puzzle file (any format `solve` reads); stdin when absent or "-".
    file: Option<PathBuf>,
    #[command(flatten)]
    target: Target,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// The box of grids other than 9x9, RxC (4x4 for 16x16, 2x3 for 6x6):
    /// every record is read as a grid of that shape, in the text or the
    /// integer form `solve --box` reads (docs/sizes.md).
    #[arg(long = "box", value_name = "RxC")]
    boxx: Option<String>,
}

impl FileArgs {
    /// True for `--local`: the service runs in this process.
    pub(super) fn is_local(&self) -> bool {
        self.target.local
    }
}

/// Flags of `validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    common: FileArgs,
    /// A player's grid for the (single) puzzle, in its text form (81
    /// characters for 9x9, N*N with --box): its entries
    /// are checked against the unique solution.
    #[arg(long)]
    current: Option<String>,
}

impl ValidateArgs {
    /// True for `--local`: the service runs in this process.
    pub(super) fn is_local(&self) -> bool {
        self.common.is_local()
    }
}

/// The service to call: a server, or one in this process.
#[derive(Clone)]
pub(super) enum Backend {
    Remote(SudokuServiceClient<Channel>),
    Local(Sudoku),
}

impl Backend {
    /// A client of `target`'s server, or a service in this process.
    pub(super) async fn new(target: &Target) -> anyhow::Result<Backend> {
        if target.local {
            let mut limits = Config::default().limits();
            // The work is the user's own, on their own machine: no bound.
            limits.max_call = None;
            if let Some(nodes) = target.max_nodes {
                limits.max_nodes = nodes.max(1);
            }
            if target.threads > 0 {
                limits.solver_threads = target.threads;
                limits.stream_workers = target.threads;
            }
            let service = Sudoku::new(limits, CancellationToken::new())
                .context("cannot start the solver threads")?;
            return Ok(Backend::Local(service));
        }
        Ok(Backend::Remote(SudokuServiceClient::new(
            connect(&target.server, &target.tls).await?,
        )))
    }

    async fn validate(self, r: pb::ValidateRequest) -> Result<pb::ValidateResponse, Status> {
        match self {
            Backend::Remote(mut c) => c.validate(r).await,
            Backend::Local(s) => SudokuService::validate(&s, Request::new(r)).await,
        }
        .map(|r| r.into_inner())
    }

    async fn hint(self, r: pb::HintRequest) -> Result<pb::HintResponse, Status> {
        match self {
            Backend::Remote(mut c) => c.hint(r).await,
            Backend::Local(s) => SudokuService::hint(&s, Request::new(r)).await,
        }
        .map(|r| r.into_inner())
    }

    async fn rate(self, r: pb::RateRequest) -> Result<pb::RateResponse, Status> {
        match self {
            Backend::Remote(mut c) => c.rate(r).await,
            Backend::Local(s) => SudokuService::rate(&s, Request::new(r)).await,
        }
        .map(|r| r.into_inner())
    }
}

/// A cell of a grid of side `n` as people name it: rows and columns from 1.
fn rc(cell: u32, n: u32) -> String {
    format!("r{}c{}", cell / n + 1, cell % n + 1)
}

/// The side of a wire grid: its box's, 9 when unset.
fn side(g: &pb::Grid) -> u32 {
    match g.box_rows * g.box_cols {
        0 => 9,
        n => n,
    }
}

fn unit_name(unit: Option<&pb::Unit>) -> String {
    let Some(u) = unit else {
        return "?".into();
    };
    let kind = match pb::UnitKind::try_from(u.kind) {
        Ok(pb::UnitKind::Row) => "row",
        Ok(pb::UnitKind::Column) => "column",
        Ok(pb::UnitKind::Box) => "box",
        _ => "unit",
    };
    format!("{kind} {}", u.index + 1)
}

/// A grid as text: its own text, or its cells as characters (up to
/// 35x35) or as numbers.
pub(super) fn grid_text(g: Option<&pb::Grid>) -> String {
    g.map(|g| {
        if g.text.is_empty() && g.cells.len() > 35 * 35 {
            // Above 35x35 there is no text form: the values, one space
            // between, blanks as 0 (the line form `sudoku solve` reads).
            let items: Vec<_> = g.cells.iter().map(u32::to_string).collect();
            items.join(" ")
        } else if g.text.is_empty() {
            g.cells
                .iter()
                .map(|&d| sudoku_core::puzzle::sized::value_char(d.min(35) as u8))
                .collect()
        } else {
            g.text.clone()
        }
    })
    .unwrap_or_default()
}

/// `value` as one line of JSON.
pub(super) fn json_line(value: &impl Serialize) -> String {
    // The objects here are plain structs and lists: nothing fails to serialize.
    serde_json::to_string(value).unwrap_or_default()
}

/// A conflict as `--output jsonl` gives it.
#[derive(Serialize)]
struct JsonConflict {
    first: u32,
    second: u32,
    unit: String,
    digit: u32,
}

fn json_conflicts(v: &[pb::Conflict]) -> Vec<JsonConflict> {
    v.iter()
        .map(|c| JsonConflict {
            first: c.first,
            second: c.second,
            unit: unit_name(c.unit.as_ref()),
            digit: c.digit,
        })
        .collect()
}

/// The listed conflicts, and how many more the server counted (it lists the
/// first 64).
fn text_conflicts(v: &[pb::Conflict], total: u32, n: u32) -> String {
    let more = (total as usize).saturating_sub(v.len());
    let listed = v
        .iter()
        .map(|c| {
            format!(
                "{} and {} both hold {} in {}",
                rc(c.first, n),
                rc(c.second, n),
                c.digit,
                unit_name(c.unit.as_ref())
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    match more {
        0 => listed,
        n => format!("{listed}; and {n} more"),
    }
}

/// A record read: its line, and its puzzle on the wire or why there is
/// none.
type Record = (usize, Result<pb::Grid, String>);

/// The puzzles of `file` (stdin for none or "-"), read on a thread of
/// their own as they come: 9x9 ones by the 9x9 reader, or with `--box` of
/// another shape by the reader of every size.
fn read_entries(
    file: Option<&Path>,
    boxx: Option<&str>,
) -> anyhow::Result<mpsc::Receiver<std::io::Result<Record>>> {
    let input = input::open(file)?;
    let shape = boxx.map(parse_box).transpose()?;
    let (tx, rx) = mpsc::channel(256);
    match shape {
        Some(shape) if shape != Shape::CLASSIC => {
            std::thread::spawn(move || {
                let mut records = SizedRecords::new(input, Grids::given(shape));
                while let Some(record) = records.next_record() {
                    let record = record.map(|(meta, puzzle)| {
                        let grid = puzzle.map(|p| match p {
                            Puzzle::Nine(g) => nine_to_pb(&g),
                            Puzzle::Sized(g) => sized_to_pb(&g),
                        });
                        (meta.line, grid)
                    });
                    let stop = record.is_err();
                    if tx.blocking_send(record).is_err() || stop {
                        return;
                    }
                }
            });
        }
        _ => {
            std::thread::spawn(move || {
                for entry in Reader::new(input) {
                    let record = entry.map(|e: Entry| (e.line, e.puzzle.map(|g| nine_to_pb(&g))));
                    let stop = record.is_err();
                    if tx.blocking_send(record).is_err() || stop {
                        return;
                    }
                }
            });
        }
    }
    Ok(rx)
}

/// A 9x9 grid on the wire, as text.
fn nine_to_pb(g: &sudoku_core::puzzle::Grid) -> pb::Grid {
    pb::Grid {
        text: g.to_text(),
        ..Default::default()
    }
}

/// A grid of another shape on the wire, with its box: text up to 35x35,
/// integers above.
fn sized_to_pb(g: &SizedGrid) -> pb::Grid {
    let shape = g.shape();
    let (text, cells) = match g.to_text() {
        Ok(text) => (text, Vec::new()),
        Err(_) => (String::new(), g.to_cells()),
    };
    pb::Grid {
        text,
        cells,
        box_rows: shape.box_rows() as u32,
        box_cols: shape.box_cols() as u32,
    }
}

/// An answer for one puzzle: the line to print, and whether it counts as
/// a failure for the exit code.
type Answered = (String, bool);

/// Reads `args.file`, calls `call` for each puzzle (`--concurrency` at
/// once) and prints the answers in input order; exit 1 when any failed.
async fn each_puzzle<F, Fut>(args: &FileArgs, call: F) -> anyhow::Result<i32>
where
    F: Fn(usize, pb::Grid) -> Fut,
    Fut: std::future::Future<Output = Answered>,
{
    let entries = read_entries(args.file.as_deref(), args.boxx.as_deref())?;
    let output = args.target.output;
    let mut answers = ReceiverStream::new(entries)
        .map(|entry| {
            let fut = match entry {
                Ok((line, Ok(grid))) => Ok(call(line, grid)),
                Ok((line, Err(e))) => Err(Some(failed(line, "INVALID_ARGUMENT", &e, output))),
                Err(e) => Err(Some((format!("sudoku: {e}"), true))),
            };
            async move {
                match fut {
                    Ok(f) => Some(f.await),
                    Err(e) => e,
                }
            }
        })
        .buffered(args.concurrency.max(1));
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    while let Some(answer) = answers.next().await {
        let Some((text, bad)) = answer else { continue };
        failed |= bad;
        writeln!(out, "{text}")?;
        out.flush()?;
    }
    Ok(i32::from(failed))
}

/// A call that failed, in the command's words (the same `--local` and
/// through a server), as a line of `output`.
fn failed_call(line: usize, status: &Status, output: Output) -> Answered {
    let code = code_name(status.code());
    failed(line, code, &for_people(status.message()), output)
}

/// A puzzle that got no answer: `code` and why, as a line of `output`
/// keyed by the line its record starts on.
fn failed(line: usize, code: &str, why: &str, output: Output) -> Answered {
    let text = match output {
        Output::Jsonl => {
            // The outcome names of `sudoku solve --output jsonl`.
            let outcome = if code == "INVALID_ARGUMENT" {
                "invalid"
            } else {
                "failed"
            };
            #[derive(Serialize)]
            struct Failed<'a> {
                line: usize,
                outcome: &'a str,
                error: JsonError<'a>,
            }
            json_line(&Failed {
                line,
                outcome,
                error: JsonError { code, message: why },
            })
        }
        Output::Text => format!("line {line}: error: {code} {why}"),
    };
    (text, true)
}

/// A validation as `--output jsonl` gives it.
#[derive(Serialize)]
struct JsonValidation<'a> {
    line: usize,
    solvable: bool,
    unique: bool,
    search_complete: bool,
    conflicts: Vec<JsonConflict>,
    conflict_count: u32,
    no_candidate_cells: &'a [u32],
    #[serde(skip_serializing_if = "Option::is_none")]
    solution: Option<String>,
    current_conflicts: Vec<JsonConflict>,
    current_conflict_count: u32,
    wrong_cells: &'a [u32],
}

/// `sudoku validate`.
pub async fn validate(args: ValidateArgs) -> anyhow::Result<i32> {
    let backend = Backend::new(&args.common.target).await?;
    let output = args.common.target.output;
    let current = args.current.clone();
    each_puzzle(&args.common, |line, puzzle| {
        let backend = backend.clone();
        let n = side(&puzzle);
        let current = current.clone().map(|text| pb::Grid {
            text,
            cells: Vec::new(),
            box_rows: puzzle.box_rows,
            box_cols: puzzle.box_cols,
        });
        async move {
            let r = match backend
                .validate(pb::ValidateRequest {
                    puzzle: Some(puzzle),
                    current,
                })
                .await
            {
                Ok(r) => r,
                Err(s) => return failed_call(line, &s, output),
            };
            let ok = r.unique && r.conflicts.is_empty() && r.wrong_cells.is_empty();
            let verdict = match (r.search_complete, r.solvable, r.unique) {
                (false, _, _) => "work limit reached",
                (true, false, _) => "no solution",
                (true, true, false) => "several solutions",
                (true, true, true) => "unique",
            };
            let text = match output {
                Output::Jsonl => json_line(&JsonValidation {
                    line,
                    solvable: r.solvable,
                    unique: r.unique,
                    search_complete: r.search_complete,
                    conflicts: json_conflicts(&r.conflicts),
                    conflict_count: r.conflict_count,
                    no_candidate_cells: &r.no_candidate_cells,
                    solution: r.solution.is_some().then(|| grid_text(r.solution.as_ref())),
                    current_conflicts: json_conflicts(&r.current_conflicts),
                    current_conflict_count: r.current_conflict_count,
                    wrong_cells: &r.wrong_cells,
                }),
                Output::Text => {
                    let mut s = format!("line {line}: {verdict}");
                    if !r.conflicts.is_empty() {
                        s.push_str(&format!(
                            "; conflicts: {}",
                            text_conflicts(&r.conflicts, r.conflict_count, n)
                        ));
                    }
                    if !r.no_candidate_cells.is_empty() {
                        let cells: Vec<_> =
                            r.no_candidate_cells.iter().map(|&c| rc(c, n)).collect();
                        s.push_str(&format!("; no candidate: {}", cells.join(" ")));
                    }
                    if !r.current_conflicts.is_empty() {
                        s.push_str(&format!(
                            "; current conflicts: {}",
                            text_conflicts(&r.current_conflicts, r.current_conflict_count, n)
                        ));
                    }
                    if !r.wrong_cells.is_empty() {
                        let cells: Vec<_> = r.wrong_cells.iter().map(|&c| rc(c, n)).collect();
                        s.push_str(&format!("; wrong: {}", cells.join(" ")));
                    }
                    s
                }
            };
            (text, !ok)
        }
    })
    .await
}

/// A step as `--output jsonl` gives it.
#[derive(Serialize)]
struct JsonStep<'a> {
    line: usize,
    technique: &'a str,
    placements: Vec<[u32; 2]>,
    eliminations: Vec<[u32; 2]>,
    cells: &'a [u32],
    units: Vec<String>,
    explanation: &'a str,
}

/// `sudoku hint`.
pub async fn hint(args: FileArgs) -> anyhow::Result<i32> {
    let backend = Backend::new(&args.target).await?;
    let output = args.target.output;
    each_puzzle(&args, |line, puzzle| {
        let backend = backend.clone();
        async move {
            let r = match backend
                .hint(pb::HintRequest {
                    puzzle: Some(puzzle),
                    candidates: None,
                })
                .await
            {
                Ok(r) => r,
                Err(s) => return failed_call(line, &s, output),
            };
            let Some(step) = r.step else {
                let what = match (r.solved, r.search_complete) {
                    (true, _) => "solved",
                    (false, false) => "work limit reached",
                    (false, true) => "no solution",
                };
                return match output {
                    Output::Text => (format!("line {line}: {what}"), !r.solved),
                    Output::Jsonl => {
                        #[derive(Serialize)]
                        struct NoStep {
                            line: usize,
                            solved: bool,
                            search_complete: bool,
                        }
                        let no_step = NoStep {
                            line,
                            solved: r.solved,
                            search_complete: r.search_complete,
                        };
                        (json_line(&no_step), !r.solved)
                    }
                };
            };
            let text = match output {
                Output::Text => {
                    format!("line {line}: {}: {}", step.technique_name, step.explanation)
                }
                Output::Jsonl => {
                    let pairs = |v: &[pb::CellDigit]| v.iter().map(|p| [p.cell, p.digit]).collect();
                    json_line(&JsonStep {
                        line,
                        technique: &step.technique_name,
                        placements: pairs(&step.placements),
                        eliminations: pairs(&step.eliminations),
                        cells: &step.cells,
                        units: step.units.iter().map(|u| unit_name(Some(u))).collect(),
                        explanation: &step.explanation,
                    })
                }
            };
            (text, false)
        }
    })
    .await
}

/// A rating's members as `--output jsonl` gives them, flattened into the
/// object of its puzzle.
#[derive(Serialize)]
pub(super) struct JsonRating<'a> {
    label: &'static str,
    se_rating: OneDecimal,
    se_pearl: OneDecimal,
    se_diamond: OneDecimal,
    hardest: &'a str,
    solved_by_techniques: bool,
    counts: Counts<'a>,
    guesses: u64,
}

impl<'a> JsonRating<'a> {
    pub(super) fn of(r: &'a pb::Rating) -> JsonRating<'a> {
        JsonRating {
            label: label_name(r.label),
            se_rating: OneDecimal(r.se_rating),
            se_pearl: OneDecimal(r.se_pearl),
            se_diamond: OneDecimal(r.se_diamond),
            hardest: &r.hardest_name,
            solved_by_techniques: r.solved_by_techniques,
            counts: Counts(&r.counts),
            guesses: r.guesses,
        }
    }
}

/// A rating written with one decimal, as the SE scale gives it.
struct OneDecimal(f32);

impl Serialize for OneDecimal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(format!("{:.1}", self.0).parse().unwrap_or(0.0))
    }
}

/// Each technique's count, as an object in the rating's order.
struct Counts<'a>(&'a [pb::TechniqueCount]);

impl Serialize for Counts<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for c in self.0 {
            map.serialize_entry(&c.technique_name, &c.count)?;
        }
        map.end()
    }
}

fn label_name(label: i32) -> &'static str {
    match pb::Label::try_from(label) {
        Ok(pb::Label::Easy) => "easy",
        Ok(pb::Label::Medium) => "medium",
        Ok(pb::Label::Hard) => "hard",
        Ok(pb::Label::Expert) => "expert",
        Ok(pb::Label::Extreme) => "extreme",
        _ => "unknown",
    }
}

fn text_rating(r: &pb::Rating) -> String {
    let hardest = if r.hardest_name.is_empty() {
        "nothing to do"
    } else {
        &r.hardest_name
    };
    // ER/EP/ED, as Sudoku Explainer's rater writes them.
    let mut s = format!(
        "{} {:.1}/{:.1}/{:.1} {hardest}",
        label_name(r.label),
        r.se_rating,
        r.se_pearl,
        r.se_diamond
    );
    if !r.solved_by_techniques {
        s.push_str(" (unrated: not finished by the techniques)");
    }
    s
}

fn outcome_name(outcome: i32) -> &'static str {
    match pb::Outcome::try_from(outcome) {
        Ok(pb::Outcome::Solved) => "solved",
        Ok(pb::Outcome::NoSolution) => "no solution",
        Ok(pb::Outcome::MultipleSolutions) => "several solutions",
        Ok(pb::Outcome::WorkLimitReached) => "work limit reached",
        _ => "unknown",
    }
}

/// `sudoku rate`.
pub async fn rate(args: FileArgs) -> anyhow::Result<i32> {
    let backend = Backend::new(&args.target).await?;
    let output = args.target.output;
    each_puzzle(&args, |line, puzzle| {
        let backend = backend.clone();
        async move {
            let r = match backend
                .rate(pb::RateRequest {
                    puzzle: Some(puzzle),
                })
                .await
            {
                Ok(r) => r,
                Err(s) => return failed_call(line, &s, output),
            };
            match (output, r.rating.as_ref()) {
                (Output::Text, Some(rating)) => {
                    (format!("line {line}: {}", text_rating(rating)), false)
                }
                (Output::Jsonl, Some(rating)) => {
                    #[derive(Serialize)]
                    struct Rated<'a> {
                        line: usize,
                        #[serde(flatten)]
                        rating: JsonRating<'a>,
                    }
                    let rating = JsonRating::of(rating);
                    (json_line(&Rated { line, rating }), false)
                }
                (Output::Text, None) => (
                    format!("line {line}: not rated: {}", outcome_name(r.outcome)),
                    true,
                ),
                (Output::Jsonl, None) => {
                    #[derive(Serialize)]
                    struct NotRated {
                        line: usize,
                        outcome: &'static str,
                    }
                    let outcome = outcome_name(r.outcome);
                    (json_line(&NotRated { line, outcome }), true)
                }
            }
        }
    })
    .await
}
