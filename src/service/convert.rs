//! Wire to domain and back: a request's grid and options become a [`Job`],
//! its `grpc-timeout` a deadline, and the engine's [`Answer`] a
//! `pb::Solution` in the form the puzzle came in.

use std::time::{Duration, Instant};

use tonic::metadata::MetadataMap;

use super::status::{Failure, Violation, Wrong, grid_failure, violation, violation_of};
use crate::generate::{self, Generated, Symmetry, Target};
use crate::logic::{Label, Rating, Step, Technique, UnitRef};
use crate::pb;
use crate::puzzle::validate::Conflict;
use crate::puzzle::{CELLS, Cell, Grid, Unit};
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
    decode_grid(grid, field, true)
}

/// Reads a wire grid (exactly one form set), givens that break the rules
/// and all.
pub(super) fn read_grid(grid: Option<&pb::Grid>, field: &str) -> Result<(Grid, Form), Failure> {
    decode_grid(grid, field, false)
}

fn decode_grid(
    grid: Option<&pb::Grid>,
    field: &str,
    check_givens: bool,
) -> Result<(Grid, Form), Failure> {
    let Some(g) = grid else {
        return Err(violation_of(
            Wrong::MalformedGrid,
            field,
            "required: set text (81 characters) or cells (81 integers)",
            Vec::new(),
        ));
    };
    let (parsed, form) = match (g.text.is_empty(), g.cells.is_empty()) {
        // Read and checked in one pass over the bytes.
        (false, true) if check_givens => (Grid::from_text_checked(&g.text), Form::Text),
        (false, true) => (Grid::from_text(&g.text), Form::Text),
        (true, false) => (
            Grid::from_cells(&g.cells).and_then(|g| {
                if check_givens {
                    g.check_givens().map(|()| g)
                } else {
                    Ok(g)
                }
            }),
            Form::Cells,
        ),
        (false, false) => {
            return Err(violation_of(
                Wrong::MalformedGrid,
                field,
                "set only one of text and cells, not both",
                Vec::new(),
            ));
        }
        (true, true) => {
            return Err(violation_of(
                Wrong::MalformedGrid,
                field,
                "empty: set text (81 characters) or cells (81 integers)",
                Vec::new(),
            ));
        }
    };
    let grid = parsed.map_err(|e| grid_failure(field, e))?;
    Ok((grid, form))
}

/// `grid` on the wire in `form`.
pub(super) fn grid_to_pb(grid: &Grid, form: Form) -> pb::Grid {
    match form {
        Form::Text => pb::Grid {
            text: grid.to_text(),
            cells: Vec::new(),
        },
        Form::Cells => pb::Grid {
            text: String::new(),
            cells: grid.to_cells(),
        },
    }
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
    let grid = answer.solution.map(|s| grid_to_pb(&s, job.form));
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

/// A unit on the wire.
fn unit_to_pb(unit: Unit) -> pb::Unit {
    let (kind, index) = match unit {
        Unit::Row(i) => (pb::UnitKind::Row, i),
        Unit::Column(i) => (pb::UnitKind::Column, i),
        Unit::Box(i) => (pb::UnitKind::Box, i),
    };
    pb::Unit {
        kind: kind as i32,
        index: index as u32,
    }
}

/// A logic unit on the wire.
fn unit_ref_to_pb(unit: UnitRef) -> pb::Unit {
    unit_to_pb(match unit {
        UnitRef::Row(i) => Unit::Row(usize::from(i)),
        UnitRef::Column(i) => Unit::Column(usize::from(i)),
        UnitRef::Box(i) => Unit::Box(usize::from(i)),
    })
}

/// Conflicts on the wire.
pub(super) fn conflicts_to_pb(found: &[Conflict]) -> Vec<pb::Conflict> {
    found
        .iter()
        .map(|c| pb::Conflict {
            first: c.first.0 as u32,
            second: c.second.0 as u32,
            unit: Some(unit_to_pb(c.unit)),
            digit: u32::from(c.digit),
        })
        .collect()
}

/// Cells on the wire.
pub(super) fn cells_to_pb(cells: &[Cell]) -> Vec<u32> {
    cells.iter().map(|c| c.0 as u32).collect()
}

/// A technique on the wire: the enum value of the same stable name
/// (`TECHNIQUE_` + [`Technique::name`]), unspecified for one the contract
/// does not list yet, and the name itself.
fn technique_to_pb(t: Technique) -> (i32, String) {
    let value = pb::Technique::from_str_name(&format!("TECHNIQUE_{}", t.name()))
        .unwrap_or(pb::Technique::Unspecified);
    (value as i32, t.name().to_string())
}

/// A label on the wire.
pub(super) fn label_to_pb(label: Label) -> pb::Label {
    match label {
        Label::Easy => pb::Label::Easy,
        Label::Medium => pb::Label::Medium,
        Label::Hard => pb::Label::Hard,
        Label::Expert => pb::Label::Expert,
        Label::Extreme => pb::Label::Extreme,
    }
}

/// A step on the wire.
pub(super) fn step_to_pb(step: &Step) -> pb::Step {
    let pairs = |v: &[(u8, u8)]| {
        v.iter()
            .map(|&(cell, digit)| pb::CellDigit {
                cell: u32::from(cell),
                digit: u32::from(digit),
            })
            .collect()
    };
    let (technique, technique_name) = technique_to_pb(step.technique);
    pb::Step {
        technique,
        technique_name,
        placements: pairs(&step.placements),
        eliminations: pairs(&step.eliminations),
        cells: step.cells.iter().map(|&c| u32::from(c)).collect(),
        units: step.units.iter().map(|&u| unit_ref_to_pb(u)).collect(),
        explanation: step.explanation.clone(),
    }
}

/// A rating on the wire.
pub(super) fn rating_to_pb(rating: &Rating) -> pb::Rating {
    let (hardest, hardest_name) = rating.hardest.map(technique_to_pb).unwrap_or_default();
    pb::Rating {
        solved_by_techniques: rating.solved,
        hardest,
        hardest_name,
        se_rating: rating.se_rating,
        label: label_to_pb(rating.label) as i32,
        counts: rating
            .counts
            .iter()
            .map(|&(t, count)| {
                let (technique, technique_name) = technique_to_pb(t);
                pb::TechniqueCount {
                    technique,
                    technique_name,
                    count,
                }
            })
            .collect(),
        guesses: rating.guesses,
    }
}

/// Reads pencil marks: 81 masks of nine bits.
pub(super) fn parse_candidates(
    candidates: Option<&pb::Candidates>,
    field: &str,
) -> Result<Option<[u16; CELLS]>, Failure> {
    let Some(c) = candidates else {
        return Ok(None);
    };
    if c.masks.len() != CELLS {
        return Err(violation(
            format!("{field}.masks"),
            format!("expected 81 masks, found {}", c.masks.len()),
        ));
    }
    let mut masks = [0u16; CELLS];
    for (i, (&m, out)) in c.masks.iter().zip(masks.iter_mut()).enumerate() {
        if m > 0x1ff {
            return Err(violation(
                format!("{field}.masks[{i}]"),
                format!(
                    "{}: mask {m:#x} has bits beyond the nine digits (0x1ff)",
                    Cell(i)
                ),
            ));
        }
        *out = m as u16;
    }
    Ok(Some(masks))
}

/// The most puzzles one Generate call may ask for.
pub(super) const MAX_GENERATE_COUNT: u32 = 10_000;

/// A Generate request, validated.
#[derive(Debug, Clone, Copy)]
pub(super) struct GeneratePlan {
    pub(super) count: u32,
    pub(super) seed: u64,
    pub(super) options: generate::Options,
    pub(super) target: Target,
    pub(super) form: Form,
}

/// Reads a Generate request; `fresh_seed` picks the seed when it sets none.
pub(super) fn parse_generate(
    request: &pb::GenerateRequest,
    fresh_seed: impl FnOnce() -> u64,
) -> Result<GeneratePlan, Failure> {
    let mut problems = Vec::new();
    let mut bad = |field: &str, description: String| {
        problems.push(Violation {
            field: field.to_string(),
            description,
            wrong: Wrong::InvalidField,
            cells: Vec::new(),
        })
    };
    let count = match request.count {
        0 => 1,
        n if n <= MAX_GENERATE_COUNT => n,
        n => {
            bad(
                "count",
                format!("{n} is out of range; expected 0 (default 1) to {MAX_GENERATE_COUNT}"),
            );
            1
        }
    };
    let label = match pb::Label::try_from(request.label) {
        Ok(pb::Label::Unspecified) => None,
        Ok(pb::Label::Easy) => Some(Label::Easy),
        Ok(pb::Label::Medium) => Some(Label::Medium),
        Ok(pb::Label::Hard) => Some(Label::Hard),
        Ok(pb::Label::Expert) => Some(Label::Expert),
        Ok(pb::Label::Extreme) => Some(Label::Extreme),
        Err(_) => {
            bad("label", format!("unknown label {}", request.label));
            None
        }
    };
    let (min_r, max_r) = (request.min_rating, request.max_rating);
    let ranged = min_r != 0.0 || max_r != 0.0;
    if !(min_r.is_finite() && max_r.is_finite() && min_r >= 0.0 && max_r >= 0.0) {
        bad(
            "min_rating",
            format!("rating range {min_r}..{max_r}: expected finite values of 0 or more"),
        );
    } else if max_r != 0.0 && min_r > max_r {
        bad("max_rating", format!("{max_r} is below min_rating {min_r}"));
    }
    if ranged && label.is_some() {
        bad(
            "label",
            "set a label or a rating range, not both".to_string(),
        );
    }
    let target = match (label, ranged) {
        (Some(l), _) => Target::Label(l),
        (None, true) => Target::Rating {
            min: min_r,
            max: if max_r == 0.0 { f32::MAX } else { max_r },
        },
        (None, false) => Target::Any,
    };
    let symmetry = match pb::Symmetry::try_from(request.symmetry) {
        Ok(pb::Symmetry::Unspecified | pb::Symmetry::None) => Symmetry::None,
        Ok(pb::Symmetry::Rotate180) => Symmetry::Rotate180,
        Ok(pb::Symmetry::Rotate90) => Symmetry::Rotate90,
        Ok(pb::Symmetry::MirrorHorizontal) => Symmetry::MirrorHorizontal,
        Ok(pb::Symmetry::MirrorVertical) => Symmetry::MirrorVertical,
        Ok(pb::Symmetry::Diagonal) => Symmetry::Diagonal,
        Ok(pb::Symmetry::AntiDiagonal) => Symmetry::AntiDiagonal,
        Ok(pb::Symmetry::MirrorBoth) => Symmetry::MirrorBoth,
        Err(_) => {
            bad("symmetry", format!("unknown symmetry {}", request.symmetry));
            Symmetry::None
        }
    };
    let (min_c, max_c) = (request.min_clues, request.max_clues);
    if min_c > CELLS as u32 {
        bad(
            "min_clues",
            format!("{min_c} is out of range; expected 0 to 81"),
        );
    }
    if max_c != 0 && !(MIN_CLUES..=CELLS as u32).contains(&max_c) {
        bad(
            "max_clues",
            format!(
                "{max_c} is out of range; expected 0 (no bound) or {MIN_CLUES} to 81: \
                 no puzzle with fewer than {MIN_CLUES} clues has one solution"
            ),
        );
    } else if max_c != 0 && min_c > max_c {
        bad("max_clues", format!("{max_c} is below min_clues {min_c}"));
    }
    if !problems.is_empty() {
        return Err(Failure::Invalid(problems));
    }
    Ok(GeneratePlan {
        count,
        seed: request.seed.unwrap_or_else(fresh_seed),
        options: generate::Options {
            symmetry,
            min_clues: min_c as u8,
            max_clues: if max_c == 0 { CELLS as u8 } else { max_c as u8 },
            max_attempts: generate::DEFAULT_MAX_ATTEMPTS,
        },
        target,
        form: if request.cells {
            Form::Cells
        } else {
            Form::Text
        },
    })
}

/// The fewest clues a puzzle with one solution has.
const MIN_CLUES: u32 = 17;

/// Puzzle `index` of a Generate stream on the wire.
pub(super) fn generated_to_pb(
    index: u32,
    plan: &GeneratePlan,
    made: &Generated<Rating>,
) -> pb::GenerateResponse {
    let c = &made.candidate;
    pb::GenerateResponse {
        index,
        seed: plan.seed,
        puzzle: Some(pb::GeneratedPuzzle {
            puzzle: Some(grid_to_pb(&c.puzzle, plan.form)),
            solution: Some(grid_to_pb(&c.solution, plan.form)),
            rating: Some(rating_to_pb(&made.extra)),
            clues: u32::from(c.clues),
            minimal: c.minimal,
            attempts: made.attempts,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_technique_has_its_own_value_in_the_contract() {
        let all = Technique::ALL.iter().copied().chain([Technique::Search]);
        for t in all {
            let (value, name) = technique_to_pb(t);
            assert_ne!(
                value,
                pb::Technique::Unspecified as i32,
                "{name} is not in sudoku.proto"
            );
            assert_eq!(
                pb::Technique::try_from(value).unwrap().as_str_name(),
                format!("TECHNIQUE_{name}")
            );
        }
    }

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
