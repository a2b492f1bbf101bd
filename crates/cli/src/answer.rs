//! Answers: the grid a puzzle travels the pipeline as ([`Puzzle`]), how
//! the search for it ended ([`Done`]), where it came from ([`Meta`]), and
//! the `--output jsonl` object of each, written by serde_json.

use std::io::Write;
use std::sync::Arc;

use clap::ValueEnum;
use serde::Serialize;

use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::puzzle::text::Format;
use sudoku_core::puzzle::{CELLS, Grid};

/// A grid on its way through `sudoku solve` (a puzzle or its solution):
/// the fixed 9x9 form, which the fast engine solves and the hand-written
/// codec sends, or a grid of another size (any box, 9x9 with boxes other
/// than 3x3 too), which the generic engine solves and prost sends. Shared,
/// so a copy kept for a resend costs no allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Puzzle {
    Nine(Grid),
    Sized(Arc<SizedGrid>),
}

/// What to print for each puzzle (every command that reads puzzles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Text for people.
    Text,
    /// One JSON object per line, for programs.
    Jsonl,
}

/// Where a puzzle came from, kept until its answer is printed.
pub(super) struct Meta {
    pub(super) line: usize,
    pub(super) format: Format,
    /// Echoed when there is no solution to print.
    pub(super) echo: Echo,
}

/// What to print for a puzzle without a solution.
pub(super) enum Echo {
    Grid(Grid),
    Raw(String),
    /// A record of another size: its box (`None` when the run has none to
    /// give it, see `sniff::needs_box`) and its text as given (its
    /// solution is written in the record's format, [`Meta::format`]).
    Sized {
        shape: Option<Shape>,
        raw: String,
    },
}

/// How the search for one puzzle ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Solved,
    NotUnique,
    NoSolution,
    WorkLimit,
    /// The puzzle could not be read, or its givens break the rules.
    Invalid,
    /// The server answered the item with an error.
    Failed,
}

impl Outcome {
    pub(super) fn name(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::NotUnique => "multiple_solutions",
            Outcome::NoSolution => "no_solution",
            Outcome::WorkLimit => "work_limit_reached",
            Outcome::Invalid => "invalid",
            Outcome::Failed => "failed",
        }
    }
}

/// The answer for one puzzle, its solution a [`Puzzle`] (or, where only
/// 9x9 grids are read, a [`Grid`]).
pub(super) struct Done<G = Puzzle> {
    pub(super) outcome: Outcome,
    pub(super) solution: Option<G>,
    pub(super) count: u64,
    pub(super) guesses: u64,
    pub(super) nodes: u64,
    pub(super) micros: u64,
    /// gRPC code name and message, for the failures that have one.
    pub(super) error: Option<(&'static str, String)>,
}

impl<G> Done<G> {
    pub(super) fn invalid(msg: String) -> Done<G> {
        Done {
            outcome: Outcome::Invalid,
            solution: None,
            count: 0,
            guesses: 0,
            nodes: 0,
            micros: 0,
            error: Some(("INVALID_ARGUMENT", msg)),
        }
    }

    /// What to say about a failure; `None` when solved.
    pub(super) fn complaint(&self) -> Option<String> {
        match self.outcome {
            Outcome::Solved => None,
            Outcome::NotUnique => Some(format!("not unique: {}+ solutions", self.count)),
            Outcome::NoSolution => Some("no solution".into()),
            Outcome::WorkLimit => Some("work limit reached before an answer".into()),
            Outcome::Invalid | Outcome::Failed => Some(
                self.error
                    .as_ref()
                    .map_or_else(|| "failed".into(), |(_, m)| m.clone()),
            ),
        }
    }
}

/// A puzzle's answer: its id, its `Meta` when it was not sent before,
/// and what became of it.
pub(super) type Answer = (u64, Option<Meta>, Done);

/// The `--output jsonl` object of one answer, in the order its members
/// are written.
#[derive(Serialize)]
struct Json<'a, S> {
    line: usize,
    /// A box other than 3x3, as RxC.
    #[serde(rename = "box", skip_serializing_if = "Option::is_none")]
    boxed: Option<String>,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    solution: Option<S>,
    solution_count: u64,
    stats: Stats,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<JsonError<'a>>,
}

#[derive(Serialize)]
struct Stats {
    guesses: u64,
    nodes: u64,
    solve_time_us: u64,
}

/// A failure's gRPC code name and message.
#[derive(Serialize)]
pub(super) struct JsonError<'a> {
    pub(super) code: &'a str,
    pub(super) message: &'a str,
}

/// Writes the `--output jsonl` line of every size: `boxed` names a box
/// other than 3x3, and `solution` gives the solution's JSON value.
pub(super) fn write_json<G, S: Serialize>(
    out: &mut impl Write,
    line: usize,
    boxed: Option<&dyn std::fmt::Display>,
    done: &Done<G>,
    solution: impl FnOnce(&G) -> S,
) -> std::io::Result<()> {
    let json = Json {
        line,
        boxed: boxed.map(|b| b.to_string()),
        outcome: done.outcome.name(),
        solution: done.solution.as_ref().map(solution),
        solution_count: done.count,
        stats: Stats {
            guesses: done.guesses,
            nodes: done.nodes,
            solve_time_us: done.micros,
        },
        error: done
            .error
            .as_ref()
            .map(|(code, message)| JsonError { code, message }),
    };
    serde_json::to_writer(&mut *out, &json)?;
    out.write_all(b"\n")
}

/// Writes the `--output jsonl` line of an answer of the pipeline: a grid
/// of another size names its box.
pub(super) fn write_json_of(out: &mut impl Write, meta: &Meta, done: &Done) -> std::io::Result<()> {
    let boxed = match &meta.echo {
        Echo::Sized {
            shape: Some(shape), ..
        } => Some(shape as &dyn std::fmt::Display),
        _ => None,
    };
    write_json(out, meta.line, boxed, done, |g| match g {
        Puzzle::Nine(g) => JsonSolution::Digits(g.text_bytes()),
        Puzzle::Sized(g) => JsonSolution::Sized(g.clone()),
    })
}

/// A solution as `--output jsonl` gives it: a 9x9 grid's 81 digits
/// (written as a JSON string without a `String` of their own); text for
/// other sizes up to 35x35, an array of integers above.
enum JsonSolution {
    Digits([u8; CELLS]),
    Sized(Arc<SizedGrid>),
}

impl Serialize for JsonSolution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonSolution::Digits(d) => {
                s.serialize_str(std::str::from_utf8(d).map_err(serde::ser::Error::custom)?)
            }
            JsonSolution::Sized(g) => match g.to_text() {
                Ok(text) => s.serialize_str(&text),
                Err(_) => g.values().serialize(s),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_objects_keep_their_order_and_escape_messages() {
        let mut out = Vec::new();
        let done = Done::<Grid>::invalid("a \"b\"\\\n\u{1}é".to_string());
        write_json(&mut out, 3, None, &done, |g: &Grid| g.to_text()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"line":3,"outcome":"invalid","solution_count":0,"#,
                r#""stats":{"guesses":0,"nodes":0,"solve_time_us":0},"#,
                r#""error":{"code":"INVALID_ARGUMENT","message":"a \"b\"\\\n\u0001é"}}"#,
                "\n"
            )
        );
    }
}
