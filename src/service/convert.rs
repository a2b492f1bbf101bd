//! Wire to domain and back: a request's grid and options become a [`Job`],
//! its `grpc-timeout` a deadline, and the engine's [`Answer`] a
//! `pb::Solution` in the form the puzzle came in.

use std::time::{Duration, Instant};

use tonic::metadata::MetadataMap;

use super::status::{Failure, grid_failure, violation};
use crate::pb;
use crate::puzzle::Grid;
use crate::solver::Answer;

/// The largest `max_solutions` a caller may ask for.
pub const MAX_SOLUTIONS_LIMIT: u32 = 1_000_000;

/// The puzzle a request asked about, validated.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job {
    pub(super) grid: Grid,
    pub(super) form: Form,
    /// Solutions to look for: 1 in "any" mode.
    pub(super) limit: u32,
}

/// Which wire form the puzzle came in; the solution goes back in the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Text,
    Cells,
}

/// Reads a wire grid (exactly one form set) and checks its givens.
pub(super) fn parse_grid(grid: Option<&pb::Grid>, field: &str) -> Result<(Grid, Form), Failure> {
    let Some(g) = grid else {
        return Err(violation(
            field,
            "required: set text (81 characters) or cells (81 integers)",
        ));
    };
    let (parsed, form) = match (g.text.is_empty(), g.cells.is_empty()) {
        // Read and checked in one pass over the bytes.
        (false, true) => (Grid::from_text_checked(&g.text), Form::Text),
        (true, false) => (
            Grid::from_cells(&g.cells).and_then(|g| g.check_givens().map(|()| g)),
            Form::Cells,
        ),
        (false, false) => {
            return Err(violation(field, "set only one of text and cells, not both"));
        }
        (true, true) => {
            return Err(violation(
                field,
                "empty: set text (81 characters) or cells (81 integers)",
            ));
        }
    };
    let grid = parsed.map_err(|e| grid_failure(field, e))?;
    Ok((grid, form))
}

/// Reads the options into the number of solutions to look for.
pub(super) fn parse_limit(options: Option<&pb::SolveOptions>, field: &str) -> Result<u32, Failure> {
    let Some(o) = options else { return Ok(1) };
    match pb::SolveMode::try_from(o.mode) {
        Ok(pb::SolveMode::Unspecified | pb::SolveMode::Any) => Ok(1),
        Ok(pb::SolveMode::Count) => match o.max_solutions {
            0 => Ok(2),
            n if n <= MAX_SOLUTIONS_LIMIT => Ok(n),
            n => Err(violation(
                format!("{field}.max_solutions"),
                format!("{n} is out of range; expected 0 (default 2) to {MAX_SOLUTIONS_LIMIT}"),
            )),
        },
        Err(_) => Err(violation(
            format!("{field}.mode"),
            format!("unknown mode {}", o.mode),
        )),
    }
}

/// The deadline the client set with `grpc-timeout`, if any.
pub(super) fn deadline_of(metadata: &MetadataMap) -> Option<Instant> {
    let raw = metadata.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = raw.split_at(raw.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    let d = match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    };
    Instant::now().checked_add(d)
}

/// How the engine's search ended, as the contract names it.
pub(super) fn outcome(answer: &Answer) -> pb::Outcome {
    match (answer.complete, answer.count) {
        (false, _) => pb::Outcome::WorkLimitReached,
        (true, 0) => pb::Outcome::NoSolution,
        (true, 1) => pb::Outcome::Solved,
        (true, _) => pb::Outcome::MultipleSolutions,
    }
}

/// The answer to `job` on the wire, its solution in the puzzle's own form.
pub(super) fn to_pb(answer: &Answer, job: &Job, elapsed: Duration) -> pb::Solution {
    let grid = answer.solution.map(|s| match job.form {
        Form::Text => pb::Grid {
            text: s.to_text(),
            cells: Vec::new(),
        },
        Form::Cells => pb::Grid {
            text: String::new(),
            cells: s.to_cells(),
        },
    });
    pb::Solution {
        outcome: outcome(answer) as i32,
        grid,
        solution_count: u64::from(answer.count),
        stats: Some(pb::SolveStats {
            guesses: answer.stats.guesses,
            nodes: answer.stats.nodes,
            solve_time_us: elapsed.as_micros() as u64,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_units() {
        let mut m = MetadataMap::new();
        m.insert("grpc-timeout", "5m".parse().unwrap());
        let d = deadline_of(&m).unwrap();
        assert!(d > Instant::now() && d <= Instant::now() + Duration::from_millis(5));
        m.insert("grpc-timeout", "bogus".parse().unwrap());
        assert!(deadline_of(&m).is_none());
        m.insert("grpc-timeout", "1H".parse().unwrap());
        assert!(deadline_of(&m).unwrap() > Instant::now() + Duration::from_secs(3500));
    }

    #[test]
    fn outcomes() {
        let a = |count, complete| Answer {
            solution: None,
            count,
            complete,
            stats: Default::default(),
        };
        assert_eq!(outcome(&a(0, true)), pb::Outcome::NoSolution);
        assert_eq!(outcome(&a(0, false)), pb::Outcome::WorkLimitReached);
        assert_eq!(outcome(&a(1, true)), pb::Outcome::Solved);
        assert_eq!(outcome(&a(1, false)), pb::Outcome::WorkLimitReached);
        assert_eq!(outcome(&a(2, true)), pb::Outcome::MultipleSolutions);
        assert_eq!(outcome(&a(5, false)), pb::Outcome::WorkLimitReached);
    }

    #[test]
    fn both_forms_and_neither_are_rejected() {
        let both = pb::Grid {
            text: ".".repeat(81),
            cells: vec![0; 81],
        };
        assert!(matches!(
            parse_grid(Some(&both), "puzzle"),
            Err(Failure::Invalid(_))
        ));
        assert!(matches!(
            parse_grid(Some(&pb::Grid::default()), "puzzle"),
            Err(Failure::Invalid(_))
        ));
        assert!(matches!(
            parse_grid(None, "puzzle"),
            Err(Failure::Invalid(_))
        ));
    }

    #[test]
    fn limits_are_checked() {
        let count = |n| pb::SolveOptions {
            mode: pb::SolveMode::Count as i32,
            max_solutions: n,
        };
        assert_eq!(parse_limit(Some(&count(0)), "options"), Ok(2));
        assert_eq!(parse_limit(Some(&count(7)), "options"), Ok(7));
        assert!(parse_limit(Some(&count(MAX_SOLUTIONS_LIMIT + 1)), "options").is_err());
        let bad_mode = pb::SolveOptions {
            mode: 99,
            max_solutions: 0,
        };
        assert!(parse_limit(Some(&bad_mode), "options").is_err());
    }
}
