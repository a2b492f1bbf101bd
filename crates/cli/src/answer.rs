//! Answers: how the search for one puzzle ended ([`Done`]), where the
//! puzzle came from ([`Meta`]), and the `--output jsonl` object of each,
//! written by serde_json.

use std::io::Write;

use clap::ValueEnum;
use serde::Serialize;

use super::words::{code_name, for_people};
use sudoku_core::puzzle::text::Format;
use sudoku_core::puzzle::{CELLS, Grid};

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

/// The answer for one puzzle (a 9x9 grid, or a grid of another size in
/// `sized.rs`).
pub(super) struct Done<G = Grid> {
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

    /// A puzzle the server failed with `status`, in the command's words.
    pub(super) fn of_status(status: &tonic::Status) -> Done<G> {
        let msg = for_people(status.message());
        match status.code() {
            tonic::Code::InvalidArgument => Done::invalid(msg),
            code => Done {
                outcome: Outcome::Failed,
                error: Some((code_name(code), msg)),
                ..Done::invalid(String::new())
            },
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

/// Writes the `--output jsonl` line of a 9x9 answer.
pub(super) fn write_json_nine(
    out: &mut impl Write,
    meta: &Meta,
    done: &Done,
) -> std::io::Result<()> {
    write_json(out, meta.line, None, done, |g| Digits(g.text_bytes()))
}

/// A 9x9 solution's 81 digits, written as a JSON string without a
/// `String` of their own.
struct Digits([u8; CELLS]);

impl Serialize for Digits {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(std::str::from_utf8(&self.0).map_err(serde::ser::Error::custom)?)
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
