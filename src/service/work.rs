//! What the scheduler takes and gives back, in domain types only: a puzzle
//! of any shape with the wire form it came in ([`AnyGrid`]), a search to
//! run ([`Job`], [`Item`]) and a search's answer ([`Found`]). `convert.rs`
//! turns the wire into these and these back into the wire; the scheduler
//! never sees a `pb` type.

use std::time::Duration;

use super::status::Failure;
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::{Stats, Verdict};

/// Which wire form the puzzle came in; the solution goes back in the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `text`: one character a cell.
    Text,
    /// `cells`: one integer a cell.
    Cells,
}

/// A wire grid of any shape, read: a 9x9 one goes to the fast engine, the
/// others to the sized one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyGrid {
    /// 9x9 with 3x3 boxes (no box fields, or 3x3).
    Nine(Grid, Form),
    /// Any other shape.
    Sized(SizedGrid, Form),
}

impl AnyGrid {
    /// Its shape.
    pub(super) fn shape(&self) -> Shape {
        match self {
            AnyGrid::Nine(..) => Shape::CLASSIC,
            AnyGrid::Sized(grid, _) => grid.shape(),
        }
    }

    /// The wire form it came in.
    pub(super) fn form(&self) -> Form {
        match self {
            AnyGrid::Nine(_, form) | AnyGrid::Sized(_, form) => *form,
        }
    }

    /// The grid as the one model of every shape (a 9x9 one too).
    pub(super) fn into_sized(self) -> SizedGrid {
        match self {
            AnyGrid::Nine(grid, _) => SizedGrid::from_grid(&grid),
            AnyGrid::Sized(grid, _) => grid,
        }
    }

    /// Its values, row-major.
    pub(super) fn values(&self) -> &[u8] {
        match self {
            AnyGrid::Nine(grid, _) => &grid.0,
            AnyGrid::Sized(grid, _) => grid.values(),
        }
    }
}

/// A validated puzzle to search, in the grid type of its engine (`Grid`
/// for the 9x9 one, `SizedGrid` for the sized one).
#[derive(Debug, Clone, Copy)]
pub(super) struct Job<P = Grid> {
    pub(super) grid: P,
    pub(super) form: Form,
    /// Solutions to look for: 1 in "any" mode.
    pub(super) limit: u32,
}

/// A job on the engine of its shape.
pub(super) enum AnyJob {
    Nine(Job<Grid>),
    Sized(Job<SizedGrid>),
}

impl AnyJob {
    /// The job of `grid`, looking for up to `limit` solutions.
    pub(super) fn of(grid: AnyGrid, limit: u32) -> AnyJob {
        match grid {
            AnyGrid::Nine(grid, form) => AnyJob::Nine(Job { grid, form, limit }),
            AnyGrid::Sized(grid, form) => AnyJob::Sized(Job { grid, form, limit }),
        }
    }
}

/// One item of a batch message: its id, and its job or why it has none (a
/// bad puzzle or options, answered as that item's error).
pub(super) struct Item {
    pub(super) id: u64,
    pub(super) job: Result<AnyJob, Failure>,
}

/// A finished search's answer, of either engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) verdict: Verdict,
    /// The first solution found, in the form the puzzle came in.
    pub(super) solution: Option<AnyGrid>,
    /// Solutions found, at most the job's limit.
    pub(super) count: u32,
    pub(super) stats: Stats,
    /// Solving time.
    pub(super) elapsed: Duration,
}

/// An item's answer: its id, and what its search found or why it failed.
pub(super) type Answered = (u64, Result<Found, Failure>);
