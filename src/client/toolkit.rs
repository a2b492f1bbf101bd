//! `sudoku validate`, `sudoku hint`, `sudoku rate` and `sudoku generate`.
//! Each calls the service's RPC of the same name, through `--server` or,
//! with `--local`, on a service in this process (the same code the server
//! runs, so both give the same answers and the same generated puzzles).
//! The first three stream like `solve`: puzzles are read as they come,
//! answered a few at once and printed in input order.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;
use tonic::{Request, Status};

use super::connect;
use super::solve::{for_people, json_string};
use crate::generate::Symmetry;
use crate::logic::Label;
use crate::pb::{
    self, sudoku_service_client::SudokuServiceClient, sudoku_service_server::SudokuService,
};
use crate::puzzle::text::{Entry, Reader};
use crate::server::Config;
use crate::service::Sudoku;

/// What to print for each answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// One line a person reads.
    Text,
    /// One JSON object per line.
    Jsonl,
}

/// Where the calls go.
#[derive(Debug, Args)]
pub struct Target {
    /// Server to call: host:port or an http:// URL.
    #[arg(long, env = "SUDOKU_SERVER", default_value = "http://127.0.0.1:50051")]
    server: String,
    /// Answer in this process, with the service's own code, no server.
    #[arg(long)]
    local: bool,
    /// Solver threads for --local (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// What to print for each answer.
    #[arg(long, value_enum, default_value = "text")]
    output: Output,
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
}

/// Flags of `validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    common: FileArgs,
    /// A player's grid for the (single) puzzle, 81 characters: its entries
    /// are checked against the unique solution.
    #[arg(long)]
    current: Option<String>,
}

/// Flags of `generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    target: Target,
    /// Puzzles to generate.
    #[arg(short = 'n', long, default_value_t = 1)]
    count: u32,
    /// Difficulty: easy, medium, hard, expert or extreme (default: any).
    #[arg(long, conflicts_with_all = ["min_level", "min_rating", "max_rating"])]
    level: Option<Label>,
    /// Lowest difficulty: this level or any harder one, extreme included
    /// (every `--min-level hard` puzzle is one QQwing rates expert).
    #[arg(long, conflicts_with_all = ["min_rating", "max_rating"])]
    min_level: Option<Label>,
    /// Lowest SE rating (instead of --level).
    #[arg(long)]
    min_rating: Option<f32>,
    /// Highest SE rating (instead of --level).
    #[arg(long)]
    max_rating: Option<f32>,
    /// Seed: the same seed and options give the same puzzles (default: a
    /// fresh one, printed on stderr).
    #[arg(long)]
    seed: Option<u64>,
    /// Symmetry of the clues: none, rotate180, rotate90, mirror-horizontal,
    /// mirror-vertical, diagonal, anti-diagonal, mirror-both.
    #[arg(long, default_value = "none")]
    symmetry: Symmetry,
    /// Clue-count range, A..B (either end may be left out). For grids
    /// other than 9x9, A only: clue removal stops there.
    #[arg(long)]
    clues: Option<String>,
    /// The box, RxC (rows x columns), for grids other than 9x9: 4x4 makes
    /// 16x16, 2x3 makes 6x6 (docs/sizes.md).
    #[arg(long = "box", value_name = "RxC")]
    boxx: Option<String>,
}

/// Reads a box shape, "RxC".
pub(crate) fn parse_box(text: &str) -> anyhow::Result<crate::puzzle::sized::Shape> {
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
    crate::puzzle::sized::Shape::new(r, c).map_err(|e| anyhow::anyhow!("--box {text}: {e}"))
}

/// The service to call: a server, or one in this process.
#[derive(Clone)]
enum Backend {
    Remote(SudokuServiceClient<Channel>),
    Local(Sudoku),
}

impl Backend {
    async fn new(target: &Target) -> anyhow::Result<Backend> {
        if target.local {
            let mut limits = Config::default().limits();
            // The work is the user's own, on their own machine: no bound.
            limits.max_call = None;
            if target.threads > 0 {
                limits.solver_threads = target.threads;
                limits.stream_workers = target.threads;
            }
            let service = Sudoku::new(limits, CancellationToken::new())
                .context("cannot start the solver threads")?;
            return Ok(Backend::Local(service));
        }
        Ok(Backend::Remote(SudokuServiceClient::new(
            connect(&target.server).await?,
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

/// A cell as people name it: rows and columns from 1.
fn rc(cell: u32) -> String {
    format!("r{}c{}", cell / 9 + 1, cell % 9 + 1)
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

fn grid_text(g: Option<&pb::Grid>) -> String {
    g.map(|g| {
        if g.text.is_empty() && g.cells.len() > 35 * 35 {
            // Above 35x35 there is no text form: the values, one space
            // between, blanks as 0 (the line form `sudoku solve` reads).
            let items: Vec<_> = g.cells.iter().map(u32::to_string).collect();
            items.join(" ")
        } else if g.text.is_empty() {
            g.cells
                .iter()
                .map(|&d| crate::puzzle::sized::value_char(d.min(35) as u8))
                .collect()
        } else {
            g.text.clone()
        }
    })
    .unwrap_or_default()
}

fn json_u32s(v: &[u32]) -> String {
    let items: Vec<_> = v.iter().map(u32::to_string).collect();
    format!("[{}]", items.join(","))
}

fn json_conflicts(v: &[pb::Conflict]) -> String {
    let items: Vec<_> = v
        .iter()
        .map(|c| {
            format!(
                "{{\"first\":{},\"second\":{},\"unit\":\"{}\",\"digit\":{}}}",
                c.first,
                c.second,
                unit_name(c.unit.as_ref()),
                c.digit
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn text_conflicts(v: &[pb::Conflict]) -> String {
    v.iter()
        .map(|c| {
            format!(
                "{} and {} both hold {} in {}",
                rc(c.first),
                rc(c.second),
                c.digit,
                unit_name(c.unit.as_ref())
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The puzzles of `file` (stdin for none or "-"), read on a thread of
/// their own as they come.
fn read_entries(file: Option<&PathBuf>) -> anyhow::Result<mpsc::Receiver<std::io::Result<Entry>>> {
    let input: Box<dyn Read + Send> = match file {
        Some(p) if p.as_os_str() != "-" => Box::new(
            std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        _ => Box::new(std::io::stdin()),
    };
    let (tx, rx) = mpsc::channel(256);
    std::thread::spawn(move || {
        for entry in Reader::new(input) {
            let stop = entry.is_err();
            if tx.blocking_send(entry).is_err() || stop {
                return;
            }
        }
    });
    Ok(rx)
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
    let entries = read_entries(args.file.as_ref())?;
    let output = args.target.output;
    let mut answers = ReceiverStream::new(entries)
        .map(|entry| {
            let fut = match entry {
                Ok(Entry {
                    line,
                    puzzle: Ok(grid),
                    ..
                }) => Ok(call(
                    line,
                    pb::Grid {
                        text: grid.to_text(),
                        cells: Vec::new(),
                        ..Default::default()
                    },
                )),
                Ok(Entry {
                    line,
                    puzzle: Err(e),
                    ..
                }) => Err(Some(failed(line, "INVALID_ARGUMENT", &e, output))),
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
    let code = crate::telemetry::metrics::code_name(status.code());
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
            let mut s = format!(
                "{{\"line\":{line},\"outcome\":\"{outcome}\",\"error\":{{\"code\":\"{code}\",\"message\":"
            );
            json_string(&mut s, why);
            s.push_str("}}");
            s
        }
        Output::Text => format!("line {line}: error: {code} {why}"),
    };
    (text, true)
}

/// `sudoku validate`.
pub async fn validate(args: ValidateArgs) -> anyhow::Result<i32> {
    let backend = Backend::new(&args.common.target).await?;
    let output = args.common.target.output;
    let current = args.current.clone();
    each_puzzle(&args.common, |line, puzzle| {
        let backend = backend.clone();
        let current = current.clone().map(|text| pb::Grid {
            text,
            cells: Vec::new(),
            ..Default::default()
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
                Output::Jsonl => {
                    let mut s = format!(
                        "{{\"line\":{line},\"solvable\":{},\"unique\":{},\"search_complete\":{},\"conflicts\":{},\"no_candidate_cells\":{}",
                        r.solvable,
                        r.unique,
                        r.search_complete,
                        json_conflicts(&r.conflicts),
                        json_u32s(&r.no_candidate_cells)
                    );
                    if r.solution.is_some() {
                        s.push_str(&format!(",\"solution\":\"{}\"", grid_text(r.solution.as_ref())));
                    }
                    s.push_str(&format!(
                        ",\"current_conflicts\":{},\"wrong_cells\":{}}}",
                        json_conflicts(&r.current_conflicts),
                        json_u32s(&r.wrong_cells)
                    ));
                    s
                }
                Output::Text => {
                    let mut s = format!("line {line}: {verdict}");
                    if !r.conflicts.is_empty() {
                        s.push_str(&format!("; conflicts: {}", text_conflicts(&r.conflicts)));
                    }
                    if !r.no_candidate_cells.is_empty() {
                        let cells: Vec<_> = r.no_candidate_cells.iter().map(|&c| rc(c)).collect();
                        s.push_str(&format!("; no candidate: {}", cells.join(" ")));
                    }
                    if !r.current_conflicts.is_empty() {
                        s.push_str(&format!(
                            "; current conflicts: {}",
                            text_conflicts(&r.current_conflicts)
                        ));
                    }
                    if !r.wrong_cells.is_empty() {
                        let cells: Vec<_> = r.wrong_cells.iter().map(|&c| rc(c)).collect();
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
                    Output::Jsonl => (
                        format!(
                            "{{\"line\":{line},\"solved\":{},\"search_complete\":{}}}",
                            r.solved, r.search_complete
                        ),
                        !r.solved,
                    ),
                };
            };
            let text = match output {
                Output::Text => format!(
                    "line {line}: {}: {}",
                    step.technique_name, step.explanation
                ),
                Output::Jsonl => {
                    let pairs = |v: &[pb::CellDigit]| {
                        let items: Vec<_> =
                            v.iter().map(|p| format!("[{},{}]", p.cell, p.digit)).collect();
                        format!("[{}]", items.join(","))
                    };
                    let units: Vec<_> = step
                        .units
                        .iter()
                        .map(|u| format!("\"{}\"", unit_name(Some(u))))
                        .collect();
                    let mut s = format!(
                        "{{\"line\":{line},\"technique\":\"{}\",\"placements\":{},\"eliminations\":{},\"cells\":{},\"units\":[{}],\"explanation\":",
                        step.technique_name,
                        pairs(&step.placements),
                        pairs(&step.eliminations),
                        json_u32s(&step.cells),
                        units.join(",")
                    );
                    json_string(&mut s, &step.explanation);
                    s.push('}');
                    s
                }
            };
            (text, false)
        }
    })
    .await
}

/// A rating as one JSON object's fields (without braces).
fn json_rating(r: &pb::Rating) -> String {
    let counts: Vec<_> = r
        .counts
        .iter()
        .map(|c| format!("\"{}\":{}", c.technique_name, c.count))
        .collect();
    format!(
        "\"label\":\"{}\",\"se_rating\":{:.1},\"hardest\":\"{}\",\"solved_by_techniques\":{},\"counts\":{{{}}},\"guesses\":{}",
        label_name(r.label),
        r.se_rating,
        r.hardest_name,
        r.solved_by_techniques,
        counts.join(","),
        r.guesses
    )
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
    let mut s = format!("{} {:.1} {hardest}", label_name(r.label), r.se_rating);
    if !r.solved_by_techniques {
        s.push_str(" (not finished by the techniques)");
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
                (Output::Jsonl, Some(rating)) => (
                    format!("{{\"line\":{line},{}}}", json_rating(rating)),
                    false,
                ),
                (Output::Text, None) => (
                    format!("line {line}: not rated: {}", outcome_name(r.outcome)),
                    true,
                ),
                (Output::Jsonl, None) => (
                    format!(
                        "{{\"line\":{line},\"outcome\":\"{}\"}}",
                        outcome_name(r.outcome)
                    ),
                    true,
                ),
            }
        }
    })
    .await
}

/// Reads "A..B", "A..", "..B" or "A" into a clue range (0: no bound).
fn parse_clues(text: &str) -> anyhow::Result<(u32, u32)> {
    let num = |s: &str| -> anyhow::Result<u32> {
        if s.is_empty() {
            return Ok(0);
        }
        s.trim()
            .parse()
            .with_context(|| format!("--clues {text:?}: {s:?} is not a number"))
    };
    match text.split_once("..") {
        Some((a, b)) => Ok((num(a)?, num(b)?)),
        None => {
            let n = num(text)?;
            Ok((n, n))
        }
    }
}

/// `sudoku generate`.
pub async fn generate(args: GenerateArgs) -> anyhow::Result<i32> {
    let (min_clues, max_clues) = match &args.clues {
        Some(c) => parse_clues(c)?,
        None => (0, 0),
    };
    let label_pb = |l: Option<Label>| {
        l.map_or(pb::Label::Unspecified, |l| match l {
            Label::Easy => pb::Label::Easy,
            Label::Medium => pb::Label::Medium,
            Label::Hard => pb::Label::Hard,
            Label::Expert => pb::Label::Expert,
            Label::Extreme => pb::Label::Extreme,
        }) as i32
    };
    let symmetry = match args.symmetry {
        Symmetry::None => pb::Symmetry::None,
        Symmetry::Rotate180 => pb::Symmetry::Rotate180,
        Symmetry::Rotate90 => pb::Symmetry::Rotate90,
        Symmetry::MirrorHorizontal => pb::Symmetry::MirrorHorizontal,
        Symmetry::MirrorVertical => pb::Symmetry::MirrorVertical,
        Symmetry::Diagonal => pb::Symmetry::Diagonal,
        Symmetry::AntiDiagonal => pb::Symmetry::AntiDiagonal,
        Symmetry::MirrorBoth => pb::Symmetry::MirrorBoth,
    };
    let request = pb::GenerateRequest {
        count: args.count,
        label: label_pb(args.level),
        min_label: label_pb(args.min_level),
        min_rating: args.min_rating.unwrap_or(0.0),
        max_rating: args.max_rating.unwrap_or(0.0),
        symmetry: symmetry as i32,
        min_clues,
        max_clues,
        seed: args.seed,
        cells: false,
        ..Default::default()
    };
    let mut request = request;
    if let Some(b) = &args.boxx {
        let shape = parse_box(b)?;
        request.box_rows = shape.box_rows() as u32;
        request.box_cols = shape.box_cols() as u32;
        request.cells = shape.side() > crate::puzzle::sized::MAX_TEXT_SIDE;
    }
    let backend = Backend::new(&args.target).await?;
    let mut stream = match backend {
        Backend::Remote(mut c) => c.generate(request).await?.into_inner().boxed(),
        Backend::Local(s) => SudokuService::generate(&s, Request::new(request))
            .await?
            .into_inner()
            .boxed(),
    };
    let mut out = std::io::stdout().lock();
    let mut told_seed = args.seed.is_some();
    while let Some(item) = stream.next().await {
        let r = match item {
            Ok(r) => r,
            Err(status) => {
                eprintln!(
                    "sudoku: generate ended: {} {}",
                    crate::telemetry::metrics::code_name(status.code()),
                    for_people(status.message())
                );
                return Ok(1);
            }
        };
        if !told_seed {
            eprintln!("seed {}", r.seed);
            told_seed = true;
        }
        let Some(p) = r.puzzle else { continue };
        let puzzle = grid_text(p.puzzle.as_ref());
        match args.target.output {
            Output::Text => writeln!(out, "{puzzle}")?,
            Output::Jsonl => {
                // Unrated puzzles (sizes other than 9x9) have no rating
                // member, and no comma before it.
                let rating = p
                    .rating
                    .as_ref()
                    .map(|r| format!(",{}", json_rating(r)))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{{\"index\":{},\"seed\":{},\"puzzle\":\"{puzzle}\",\"solution\":\"{}\",\"clues\":{},\"minimal\":{},\"attempts\":{}{rating}}}",
                    r.index,
                    r.seed,
                    grid_text(p.solution.as_ref()),
                    p.clues,
                    p.minimal,
                    p.attempts
                )?
            }
        }
        out.flush()?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clue_ranges_read() {
        assert_eq!(parse_clues("22..26").unwrap(), (22, 26));
        assert_eq!(parse_clues("..26").unwrap(), (0, 26));
        assert_eq!(parse_clues("24..").unwrap(), (24, 0));
        assert_eq!(parse_clues("25").unwrap(), (25, 25));
        assert!(parse_clues("a..3").is_err());
    }
}
