//! Wire to domain and back: a request's grid and options become an
//! [`AnyGrid`] and a solution limit (a batch message [`Item`]s), its
//! `grpc-timeout` a deadline, and a search's [`Found`] a `pb::Solution` in
//! the form the puzzle came in. The only place besides the handlers and
//! the stream code where `pb` meets the domain.

use std::time::{Duration, Instant};

use tonic::metadata::MetadataMap;

use super::status::{Failure, Violation, Wrong, to_rpc_status, violation, violation_of};
use super::work::{Answered, AnyGrid, AnyJob, Form, Found, Item};
use crate::pb;
use sudoku_core::generate::sized::{SizedFound, SizedOptions};
use sudoku_core::generate::{self, Generated, Symmetry, Target};
use sudoku_core::logic::{Label, Rating, Step, Technique, UnitRef};
use sudoku_core::puzzle::sized::{Shape, SizedGrid, UnitKind};
use sudoku_core::puzzle::{CELLS, Grid, Unit};
use sudoku_core::solver::Verdict;

/// The largest `max_solutions` a caller may ask for.
pub const MAX_SOLUTIONS_LIMIT: u32 = 1_000_000;

/// Conflicts a Validate answer lists of each grid, at most; it counts the
/// rest (the proto says so). A grid of one digit everywhere has 972 pairs at
/// 9x9 and 387,072 at 64x64: listed, they made an 8 KB request's answer 12 MB.
pub(super) const MAX_LISTED_CONFLICTS: usize = 64;

/// The most one listed conflict takes encoded: two cells of up to 2 bytes,
/// a unit, a digit, their tags and the entry's framing (17 at 64x64).
const CONFLICT_BYTES: usize = 20;

/// What a Validate answer adds to its lists and its solution: the two
/// counts, the flags and the framing of the lists and of the solution.
const VALIDATE_OVER_LISTS_BYTES: usize = 64;

/// The most a Validate answer to `request` takes encoded: the listed
/// conflicts of both grids, three lists of cells of up to 2 bytes each (a
/// grid has at most 4,096 cells), and a solution no longer than the puzzle
/// (the same form and size). The shape is checked later; a bad one is
/// answered with an error, so its bound only needs to be a bound.
pub(super) fn validate_answer_bound(request: &pb::ValidateRequest) -> usize {
    let side = request
        .puzzle
        .as_ref()
        .map_or(9, |g| match (g.box_rows, g.box_cols) {
            (0, 0) => 9,
            (r, c) => (r as usize).saturating_mul(c as usize).min(64),
        });
    let puzzle = request
        .puzzle
        .as_ref()
        .map_or(0, prost::Message::encoded_len);
    2 * MAX_LISTED_CONFLICTS * CONFLICT_BYTES
        + 3 * 2 * side * side
        + puzzle
        + VALIDATE_OVER_LISTS_BYTES
}

/// The most a Hint answer takes encoded: a 9x9 step places at most 81
/// digits and eliminates at most 729 candidates (6 bytes each), names at
/// most 81 cells and 27 units, and explains itself in a sentence.
pub(super) const HINT_ANSWER_BYTES: usize = 8 << 10;

/// The most a Rate answer takes encoded: a rating counts each technique
/// once, a few dozen at most.
pub(super) const RATE_ANSWER_BYTES: usize = 2 << 10;

/// Reads a wire grid of any shape and checks its givens.
pub(super) fn parse_any(grid: Option<&pb::Grid>, field: &str) -> Result<AnyGrid, Failure> {
    decode(grid, field, true)
}

/// Reads a wire grid of any shape, givens not checked, by the one decoder
/// the server reads requests with: for clients of this crate reading the
/// grids of answers. A fault is said as the server's status would say it.
pub fn read_grid(grid: &pb::Grid) -> Result<AnyGrid, String> {
    read_any(Some(grid), "").map_err(|f| tonic::Status::from(f).message().to_string())
}

/// Reads a wire grid of any shape, givens that break the rules and all.
pub(super) fn read_any(grid: Option<&pb::Grid>, field: &str) -> Result<AnyGrid, Failure> {
    decode(grid, field, false)
}

/// The one decoder: a wire grid of any shape (its box, exactly one form
/// set) into the domain puzzle, its givens checked when `check` says so.
/// A fault is a violation of `field` (or the part of it at fault), mapped
/// by the one status map (`From<PuzzleError> for Failure`).
fn decode(grid: Option<&pb::Grid>, field: &str, check: bool) -> Result<AnyGrid, Failure> {
    let Some(g) = grid else {
        return Err(violation_of(
            Wrong::MalformedGrid,
            field,
            "required: set text or cells",
            Vec::new(),
        ));
    };
    let shape = shape_of(g, field)?;
    let form = match (g.text.is_empty(), g.cells.is_empty()) {
        (false, true) => Form::Text,
        (true, false) => Form::Cells,
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
                format!(
                    "empty: set text ({n} characters) or cells ({n} integers)",
                    n = shape.cells()
                ),
                Vec::new(),
            ));
        }
    };
    let decoded = if shape == Shape::CLASSIC {
        let grid = match form {
            // Read and checked in one pass over the bytes.
            Form::Text if check => Grid::from_text_checked(&g.text),
            Form::Text => Grid::from_text(&g.text),
            Form::Cells => Grid::from_cells(&g.cells),
        };
        grid.and_then(|grid| {
            if check && form == Form::Cells {
                grid.check_givens()?;
            }
            Ok(AnyGrid::Nine(grid, form))
        })
    } else {
        let grid = match form {
            Form::Text => SizedGrid::from_text(shape, &g.text),
            Form::Cells => SizedGrid::from_cells(shape, &g.cells),
        };
        grid.and_then(|grid| {
            if check {
                grid.check_givens()?;
            }
            Ok(AnyGrid::Sized(grid, form))
        })
    };
    decoded.map_err(|e| Failure::from(e).prefixed(field))
}

/// `grid` on the wire in `form`.
pub(super) fn grid_to_pb(grid: &Grid, form: Form) -> pb::Grid {
    match form {
        Form::Text => pb::Grid {
            text: grid.to_text(),
            ..Default::default()
        },
        Form::Cells => pb::Grid {
            cells: grid.to_cells(),
            ..Default::default()
        },
    }
}

/// The shape a wire grid names: 9x9 when both box fields are 0. A fault is
/// a violation of `field`'s box fields.
fn shape_of(g: &pb::Grid, field: &str) -> Result<Shape, Failure> {
    box_shape(g.box_rows, g.box_cols, field)
}

/// The shape of a box of `rows` x `cols`, 9x9 when both are 0; a fault is a
/// violation of the `box_rows` field of `prefix` (of the request itself
/// when it is empty).
fn box_shape(rows: u32, cols: u32, prefix: &str) -> Result<Shape, Failure> {
    match (rows, cols) {
        (0, 0) => Ok(Shape::CLASSIC),
        (0, _) | (_, 0) => Err(violation(
            "box_rows",
            format!("box {rows}x{cols}: set both box_rows and box_cols, or neither (9x9)"),
        )
        .prefixed(prefix)),
        (r, c) => Shape::new(r as usize, c as usize).map_err(|e| Failure::from(e).prefixed(prefix)),
    }
}

/// A sized grid on the wire in `form`, with its box.
pub(super) fn sized_to_pb(grid: &SizedGrid, form: Form) -> pb::Grid {
    let shape = grid.shape();
    let mut g = pb::Grid {
        box_rows: shape.box_rows() as u32,
        box_cols: shape.box_cols() as u32,
        ..Default::default()
    };
    match (form, grid.to_text()) {
        (Form::Text, Ok(text)) => g.text = text,
        _ => g.cells = grid.to_cells(),
    }
    g
}

/// Reads the options into the number of solutions to look for.
///
/// In count mode OUTCOME_SOLVED says the solution is the only one, which a
/// search that stops at the first solution cannot know: a `max_solutions`
/// of 1 counts to 2, as 0 does, so that a grid with several solutions is
/// never answered SOLVED. Refusing 1 (INVALID_ARGUMENT) would also be
/// honest, but would fail callers that get an answer today; counting one
/// further costs at most one more solution's search.
pub(super) fn parse_limit(options: Option<&pb::SolveOptions>, field: &str) -> Result<u32, Failure> {
    let Some(o) = options else { return Ok(1) };
    match pb::SolveMode::try_from(o.mode) {
        Ok(pb::SolveMode::Unspecified | pb::SolveMode::Any) => Ok(1),
        Ok(pb::SolveMode::Count) => match o.max_solutions {
            0 | 1 => Ok(2),
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
///
/// A value the gRPC spec does not allow (1 to 8 ASCII digits, then one of
/// the units H, M, S, m, u, n) fails the call with INTERNAL, as grpc-go's
/// transport answers it: ignoring it would run the call with no deadline
/// although its client asked for one.
pub(super) fn deadline_of(metadata: &MetadataMap) -> Result<Option<Instant>, Failure> {
    let Some(value) = metadata.get("grpc-timeout") else {
        return Ok(None);
    };
    let raw = value.as_bytes();
    let timeout = timeout_of(raw).map_err(|why| {
        let shown = match raw.len() {
            0..=32 => format!("{:?}", String::from_utf8_lossy(raw)),
            n => format!("of {n} bytes"),
        };
        Failure::MalformedTimeout(format!(
            "malformed grpc-timeout {shown}: {why}; expected 1 to 8 digits and a unit \
             (H, M, S, m, u or n)"
        ))
    })?;
    Ok(Instant::now().checked_add(timeout))
}

/// A `grpc-timeout` value as a duration, or what is wrong with it; checked
/// in grpc-go's order (length, unit, digits).
fn timeout_of(raw: &[u8]) -> Result<Duration, &'static str> {
    let (&unit, digits) = match raw.split_last() {
        Some((_, [])) | None => return Err("too short"),
        Some(split) => split,
    };
    if digits.len() > 8 {
        return Err("more than 8 digits");
    }
    let scale: fn(u64) -> Duration = match unit {
        b'H' => |n| Duration::from_secs(n * 3600),
        b'M' => |n| Duration::from_secs(n * 60),
        b'S' => Duration::from_secs,
        b'm' => Duration::from_millis,
        b'u' => Duration::from_micros,
        b'n' => Duration::from_nanos,
        _ => return Err("unknown unit"),
    };
    if !digits.iter().all(u8::is_ascii_digit) {
        return Err("not a whole number of digits");
    }
    // At most 8 digits: no overflow, even in hours.
    let n = digits
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    Ok(scale(n))
}

/// How a search of either engine ended, as the contract names it.
pub(super) fn outcome_to_pb(verdict: Verdict) -> pb::Outcome {
    match verdict {
        Verdict::WorkLimit => pb::Outcome::WorkLimitReached,
        Verdict::NoSolution => pb::Outcome::NoSolution,
        Verdict::Solved => pb::Outcome::Solved,
        Verdict::NotUnique => pb::Outcome::MultipleSolutions,
    }
}

/// A search's answer on the wire, its solution in the puzzle's own form.
pub(super) fn found_to_pb(found: &Found) -> pb::Solution {
    pb::Solution {
        outcome: outcome_to_pb(found.verdict) as i32,
        grid: found.solution.as_ref().map(any_to_pb),
        solution_count: u64::from(found.count),
        stats: Some(pb::SolveStats {
            guesses: found.stats.guesses,
            nodes: found.stats.nodes,
            solve_time_us: found.elapsed.as_micros() as u64,
        }),
    }
}

/// A grid of any shape on the wire, in the form it came in.
pub(super) fn any_to_pb(grid: &AnyGrid) -> pb::Grid {
    match grid {
        AnyGrid::Nine(grid, form) => grid_to_pb(grid, *form),
        AnyGrid::Sized(grid, form) => sized_to_pb(grid, *form),
    }
}

/// A batch message's items as jobs: the options read once, each puzzle
/// decoded and checked, a fault answered as that item's error with its
/// place in the client's request (`first_index` is the message's first
/// item's).
pub(super) fn batch_items(request: pb::SolveBatchRequest, first_index: usize) -> Vec<Item> {
    let limit = parse_limit(request.options.as_ref(), "options");
    request
        .items
        .into_iter()
        .enumerate()
        .map(|(i, item)| Item {
            id: item.id,
            job: limit.clone().and_then(|limit| {
                parse_any(item.puzzle.as_ref(), "puzzle")
                    .map(|grid| AnyJob::of(grid, limit))
                    .map_err(|e| e.prefixed(&format!("items[{}]", first_index + i)))
            }),
        })
        .collect()
}

/// A batch message's answers on the wire, in item order.
pub(super) fn batch_response(answers: Vec<Answered>) -> pb::SolveBatchResponse {
    let results = answers
        .into_iter()
        .map(|(id, answer)| pb::BatchResult {
            id,
            result: Some(match answer {
                Ok(found) => pb::batch_result::Result::Solution(found_to_pb(&found)),
                Err(failure) => pb::batch_result::Result::Error(to_rpc_status(failure.into())),
            }),
        })
        .collect();
    pb::SolveBatchResponse { results }
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

/// The conflicts of a grid of any shape on the wire: the first
/// [`MAX_LISTED_CONFLICTS`], and how many there are.
pub(super) fn conflicts_to_pb(grid: &SizedGrid) -> (Vec<pb::Conflict>, u32) {
    let (listed, total) = grid.conflicts(MAX_LISTED_CONFLICTS);
    let listed = listed
        .into_iter()
        .map(|(kind, unit, first, second, value)| pb::Conflict {
            first: first.index as u32,
            second: second.index as u32,
            unit: Some(pb::Unit {
                kind: match kind {
                    UnitKind::Row => pb::UnitKind::Row,
                    UnitKind::Column => pb::UnitKind::Column,
                    UnitKind::Box => pb::UnitKind::Box,
                } as i32,
                index: unit as u32,
            }),
            digit: u32::from(value),
        })
        .collect();
    (listed, total)
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
    let pairs = |v: &[(u16, u8)]| {
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
        restorations: pairs(&step.restorations),
        cells: step.cells.iter().map(|&c| u32::from(c)).collect(),
        units: step.units.iter().map(|&u| unit_ref_to_pb(u)).collect(),
        explanation: step.explanation.clone(),
        se_value: f32::from(step.value) / 10.0,
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
        se_pearl: rating.ep,
        se_diamond: rating.ed,
    }
}

/// Pencil marks for a grid of `shape`, one mask a cell: `masks` (uint32,
/// sides up to 32) or `wide_masks` (uint64, any side), not both. A mask
/// with bits beyond the side's digits is refused naming its index and cell.
pub(super) fn parse_candidates(
    candidates: Option<&pb::Candidates>,
    field: &str,
    shape: Shape,
) -> Result<Option<Vec<u64>>, Failure> {
    let Some(c) = candidates else {
        return Ok(None);
    };
    let (name, masks): (&str, Vec<u64>) = match (c.masks.is_empty(), c.wide_masks.is_empty()) {
        (false, false) => {
            return Err(violation(
                format!("{field}.wide_masks"),
                "send masks or wide_masks, not both".to_string(),
            ));
        }
        (true, false) => ("wide_masks", c.wide_masks.clone()),
        _ => ("masks", c.masks.iter().map(|&m| u64::from(m)).collect()),
    };
    let cells = shape.cells();
    if masks.len() != cells {
        return Err(violation(
            format!("{field}.{name}"),
            format!(
                "expected {cells} masks for a {}, found {}",
                shape.describe(),
                masks.len()
            ),
        ));
    }
    let n = shape.side();
    let all = sudoku_core::puzzle::sized::value_mask(n);
    if let Some(i) = masks.iter().position(|&m| m & !all != 0) {
        return Err(violation(
            format!("{field}.{name}[{i}]"),
            format!(
                "{}: mask {:#x} has bits beyond the {n} digits ({all:#x})",
                sudoku_core::puzzle::At::of(shape, i),
                masks[i]
            ),
        ));
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
    /// The box of a size other than 9x9, made by the sized search with
    /// these options (its target is `target`).
    pub(super) shape: Option<(Shape, SizedOptions)>,
}

/// Reads a Generate request; `fresh_seed` picks the seed when it sets none.
///
/// `max_nodes` is the work budget of one Solve: the search nodes the
/// checks of one attempt at a sized puzzle may take (a puzzle that spends
/// it comes with the clues it has left, unique and not minimal).
pub(super) fn parse_generate(
    request: &pb::GenerateRequest,
    fresh_seed: impl FnOnce() -> u64,
    max_nodes: u64,
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
    let mut label_of = |field: &str, value: i32| match pb::Label::try_from(value) {
        Ok(pb::Label::Unspecified) => None,
        Ok(pb::Label::Easy) => Some(Label::Easy),
        Ok(pb::Label::Medium) => Some(Label::Medium),
        Ok(pb::Label::Hard) => Some(Label::Hard),
        Ok(pb::Label::Expert) => Some(Label::Expert),
        Ok(pb::Label::Extreme) => Some(Label::Extreme),
        Err(_) => {
            bad(field, format!("unknown label {value}"));
            None
        }
    };
    let label = label_of("label", request.label);
    let floor = label_of("min_label", request.min_label);
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
    if floor.is_some() && (ranged || label.is_some()) {
        bad(
            "min_label",
            "set one of label, min_label and a rating range".to_string(),
        );
    }
    let target = match (label, floor, ranged) {
        (Some(l), _, _) => Target::Label(l),
        (None, Some(Label::Easy), false) => Target::Any,
        (None, Some(f), false) => Target::AtLeast(f),
        (None, _, true) => Target::Rating {
            min: min_r,
            max: if max_r == 0.0 { f32::MAX } else { max_r },
        },
        (None, None, false) => Target::Any,
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
    // 3x3 is the 9x9 maker's, rated and symmetric; other boxes the sized one's.
    let shape = Some(box_shape(request.box_rows, request.box_cols, "")?)
        .filter(|&shape| shape != Shape::CLASSIC);
    // The clue range: 0 to N*N at other sizes; at 9x9 a bound below 17
    // can never be met.
    let cells = shape.map_or(CELLS, Shape::cells) as u32;
    if let Some(shape) = shape
        && !symmetry.fits(shape)
    {
        bad(
            "symmetry",
            format!(
                "{} does not map the {}x{} boxes of {} onto boxes; this shape takes \
                 none, rotate180, mirror-horizontal, mirror-vertical and mirror-both",
                symmetry.name(),
                shape.box_rows(),
                shape.box_cols(),
                shape.describe()
            ),
        );
    }
    let least = if shape.is_some() { 1 } else { MIN_CLUES };
    if min_c > cells {
        bad(
            "min_clues",
            format!("{min_c} is out of range; expected 0 to {cells}"),
        );
    }
    if max_c != 0 && !(least..=cells).contains(&max_c) {
        let why = match shape {
            Some(_) => String::new(),
            None => format!(": no puzzle with fewer than {least} clues has one solution"),
        };
        bad(
            "max_clues",
            format!("{max_c} is out of range; expected 0 (no bound) or {least} to {cells}{why}"),
        );
    } else if max_c != 0 && min_c > max_c {
        bad("max_clues", format!("{max_c} is below min_clues {min_c}"));
    }
    if !problems.is_empty() {
        return Err(Failure::Invalid(problems));
    }
    let nine = shape.is_none();
    Ok(GeneratePlan {
        count,
        seed: request.seed.unwrap_or_else(fresh_seed),
        options: generate::Options {
            symmetry,
            min_clues: if nine { min_c as u8 } else { 0 },
            max_clues: if nine && max_c != 0 {
                max_c as u8
            } else {
                CELLS as u8
            },
            max_attempts: generate::DEFAULT_MAX_ATTEMPTS,
        },
        target,
        form: if request.cells {
            Form::Cells
        } else {
            Form::Text
        },
        shape: shape.map(|shape| {
            let options = SizedOptions {
                symmetry,
                min_clues: min_c as usize,
                max_clues: if max_c == 0 {
                    usize::MAX
                } else {
                    max_c as usize
                },
                max_attempts: SIZED_MAX_ATTEMPTS,
                budget: max_nodes,
            };
            (shape, options)
        }),
    })
}

/// Sized puzzle `index` of a Generate stream on the wire (unrated).
pub(super) fn sized_generated_to_pb(
    index: u32,
    plan: &GeneratePlan,
    found: &SizedFound,
) -> pb::GenerateResponse {
    let made = &found.made;
    let grids = (
        sized_to_pb(&made.puzzle, plan.form),
        sized_to_pb(&made.solution, plan.form),
    );
    let about = (made.clues as u32, made.minimal, found.attempts);
    made_to_pb(index, plan.seed, grids, &found.rating, about)
}

/// A made puzzle of either maker on the wire: its puzzle and solution
/// grids, rating, and (clues, minimal, attempts).
fn made_to_pb(
    index: u32,
    seed: u64,
    (puzzle, solution): (pb::Grid, pb::Grid),
    rating: &Rating,
    (clues, minimal, attempts): (u32, bool, u64),
) -> pb::GenerateResponse {
    pb::GenerateResponse {
        index,
        seed,
        puzzle: Some(pb::GeneratedPuzzle {
            puzzle: Some(puzzle),
            solution: Some(solution),
            rating: Some(rating_to_pb(rating)),
            clues,
            minimal,
            attempts,
        }),
    }
}

/// Attempts one sized puzzle may take before the call says it found none
/// (FAILED_PRECONDITION, as a 9x9 one past its attempts): a 4x4 grid is
/// never harder than easy, so a hard 4x4 is refused after these.
pub(super) const SIZED_MAX_ATTEMPTS: u64 = 1_000;

/// The fewest clues a puzzle with one solution has.
const MIN_CLUES: u32 = 17;

/// Puzzle `index` of a Generate stream on the wire.
pub(super) fn generated_to_pb(
    index: u32,
    plan: &GeneratePlan,
    made: &Generated<Rating>,
) -> pb::GenerateResponse {
    let c = &made.candidate;
    let grids = (
        grid_to_pb(&c.puzzle, plan.form),
        grid_to_pb(&c.solution, plan.form),
    );
    let about = (u32::from(c.clues), c.minimal, made.attempts);
    made_to_pb(index, plan.seed, grids, &made.extra, about)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Status;

    #[test]
    fn every_technique_has_its_own_value_in_the_contract() {
        let all = Technique::ALL
            .iter()
            .copied()
            .chain([Technique::Search, Technique::MissingCandidate]);
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
        let d = deadline_of(&m).unwrap().unwrap();
        assert!(d > Instant::now() && d <= Instant::now() + Duration::from_millis(5));
        m.insert("grpc-timeout", "1H".parse().unwrap());
        let d = deadline_of(&m).unwrap().unwrap();
        assert!(d > Instant::now() + Duration::from_secs(3500));
        m.insert("grpc-timeout", "99999999H".parse().unwrap());
        assert!(deadline_of(&m).unwrap().is_some());
        assert_eq!(deadline_of(&MetadataMap::new()), Ok(None));
        for (ok, d) in [
            ("0S", Duration::ZERO),
            ("12345678n", Duration::from_nanos(12_345_678)),
            ("7u", Duration::from_micros(7)),
            ("2M", Duration::from_secs(120)),
            ("00000001S", Duration::from_secs(1)),
        ] {
            assert_eq!(timeout_of(ok.as_bytes()), Ok(d), "{ok}");
        }
    }

    #[test]
    fn malformed_grpc_timeouts_fail_with_internal() {
        for bad in [
            "",
            "1",
            "H",
            "S",
            "-1S",
            "+1S",
            "1.5S",
            "1e3m",
            " 1S",
            "1s",
            "1h",
            "bogus",
            "123456789S",
            "0x10S",
        ] {
            let mut m = MetadataMap::new();
            m.insert("grpc-timeout", bad.parse().unwrap());
            let failure = deadline_of(&m).expect_err(bad);
            let status = Status::from(failure);
            assert_eq!(status.code(), tonic::Code::Internal, "{bad}");
            assert!(
                status.message().starts_with("malformed grpc-timeout"),
                "{bad}: {}",
                status.message()
            );
        }
        for (bad, why) in [
            ("", "too short"),
            ("1", "too short"),
            ("H", "too short"),
            ("1x", "unknown unit"),
            ("1s", "unknown unit"),
            ("-1S", "not a whole number of digits"),
            ("1.5S", "not a whole number of digits"),
            ("123456789S", "more than 8 digits"),
        ] {
            assert_eq!(timeout_of(bad.as_bytes()), Err(why), "{bad:?}");
        }
        let mut m = MetadataMap::new();
        m.insert("grpc-timeout", "9".repeat(100).parse().unwrap());
        let status = Status::from(deadline_of(&m).unwrap_err());
        assert!(
            status.message().contains("of 100 bytes"),
            "{}",
            status.message()
        );
    }

    #[test]
    fn outcomes() {
        let a = |count, complete| outcome_to_pb(Verdict::of(complete, count));
        assert_eq!(a(0, true), pb::Outcome::NoSolution);
        assert_eq!(a(0, false), pb::Outcome::WorkLimitReached);
        assert_eq!(a(1, true), pb::Outcome::Solved);
        assert_eq!(a(1, false), pb::Outcome::WorkLimitReached);
        assert_eq!(a(2, true), pb::Outcome::MultipleSolutions);
        assert_eq!(a(5, false), pb::Outcome::WorkLimitReached);
    }

    #[test]
    fn both_forms_and_neither_are_rejected() {
        let both = pb::Grid {
            text: ".".repeat(81),
            cells: vec![0; 81],
            ..Default::default()
        };
        assert!(matches!(
            parse_any(Some(&both), "puzzle"),
            Err(Failure::Invalid(_))
        ));
        assert!(matches!(
            parse_any(Some(&pb::Grid::default()), "puzzle"),
            Err(Failure::Invalid(_))
        ));
        assert!(matches!(
            parse_any(None, "puzzle"),
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
        assert_eq!(parse_limit(Some(&count(1)), "options"), Ok(2));
        assert_eq!(parse_limit(Some(&count(2)), "options"), Ok(2));
        assert_eq!(parse_limit(Some(&count(7)), "options"), Ok(7));
        assert!(parse_limit(Some(&count(MAX_SOLUTIONS_LIMIT + 1)), "options").is_err());
        let bad_mode = pb::SolveOptions {
            mode: 99,
            max_solutions: 0,
        };
        assert!(parse_limit(Some(&bad_mode), "options").is_err());
    }
}
