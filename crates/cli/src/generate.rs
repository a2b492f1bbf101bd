//! `sudoku generate`: unique puzzles, minimal (for their symmetry, with
//! `--symmetry`), from the service's
//! generator, through `--server` or on a service in this process, printed
//! as they come.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use futures::StreamExt;
use tonic::Request;

use super::answer::Output;
use super::sized_text::parse_box;
use super::toolkit::{Backend, JsonRating, Target, grid_text, json_line};
use super::words::{code_name, for_people};
use sudoku_core::generate::Symmetry;
use sudoku_core::logic::Label;
use sudoku_grpc::pb::{self, sudoku_service_server::SudokuService};

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
    /// mirror-vertical, diagonal, anti-diagonal, mirror-both. What it
    /// costs: a symmetric puzzle is minimal for its symmetry (no symmetric
    /// set of clues can be removed) but may keep a single clue that could
    /// go, and then `"minimal"` in `--output jsonl` is false.
    #[arg(long, default_value = "none")]
    symmetry: Symmetry,
    /// Clue-count range, A..B (either end may be left out); A alone is
    /// exactly A.
    #[arg(long)]
    clues: Option<String>,
    /// The box, RxC (rows x columns), for grids other than 9x9: 4x4 makes
    /// 16x16, 2x3 makes 6x6 (docs/sizes.md).
    #[arg(long = "box", value_name = "RxC")]
    boxx: Option<String>,
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

/// A generated puzzle as `--output jsonl` gives it, with its rating's
/// members (every size is rated).
#[derive(serde::Serialize)]
struct JsonGenerated<'a> {
    index: u32,
    seed: u64,
    puzzle: &'a str,
    solution: String,
    clues: u32,
    minimal: bool,
    attempts: u64,
    #[serde(flatten)]
    rating: Option<JsonRating<'a>>,
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
        request.cells = shape.side() > sudoku_core::puzzle::sized::MAX_TEXT_SIDE;
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
                    code_name(status.code()),
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
                let generated = JsonGenerated {
                    index: r.index,
                    seed: r.seed,
                    puzzle: &puzzle,
                    solution: grid_text(p.solution.as_ref()),
                    clues: p.clues,
                    minimal: p.minimal,
                    attempts: p.attempts,
                    rating: p.rating.as_ref().map(JsonRating::of),
                };
                writeln!(out, "{}", json_line(&generated))?
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
