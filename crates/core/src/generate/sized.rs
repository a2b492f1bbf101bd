//! Puzzles of any size (see [`crate::puzzle::sized`]): a random solution
//! grid, then clues taken away one at a time in a random order, each kept
//! only if the puzzle would lose its one solution without it. A puzzle
//! made to the end is minimal. Each check tries the other values the
//! removed cell allows, each with a search for one solution, under one
//! node budget: a check that runs out keeps its clue (the puzzle stays
//! unique, and is reported not minimal).
//!
//! The maker is a stepper: [`SizedMaker::step`] does one check, so the
//! service can share a solver thread between it and other work. The same
//! seed, index and shape give the same puzzle (and the same budget, below,
//! the same puzzle cut short).
//!
//! The work of the checks can be bounded ([`SizedMaker::with_budget`]): a
//! blank 64x64 grid has 4,096 clues to try, some of whose checks run to
//! their full [`CHECK_NODES`]. Once the budget is spent no more clues are
//! tried: the puzzle made so far is unique (every clue taken away was
//! checked), with more clues than it needs, and reported not minimal.

use super::rng::Rng;
use crate::puzzle::sized::{Shape, SizedGrid};
use crate::solver::Progress;
use crate::solver::sized::SizedSolver;

/// Nodes one uniqueness check may take before its clue is kept.
pub const CHECK_NODES: u64 = 20_000;

/// Nodes of a check one [`SizedMaker::step`] runs at most, so that a step
/// stays short (a few milliseconds on a 25x25 grid) however long the check.
pub const STEP_NODES: u64 = 256;

/// A puzzle made, with its solution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizedPuzzle {
    /// The puzzle: exactly one solution.
    pub puzzle: SizedGrid,
    /// Its solution.
    pub solution: SizedGrid,
    /// Clues left.
    pub clues: usize,
    /// Every clue was tried and none can go.
    pub minimal: bool,
}

/// A sized puzzle in the making.
pub struct SizedMaker {
    puzzle: SizedGrid,
    solution: SizedGrid,
    order: Vec<usize>,
    next: usize,
    min_clues: usize,
    clues: usize,
    minimal: bool,
    /// The check in progress, if any.
    check: Option<Check>,
    /// Search nodes the checks have taken (a restart counts as one).
    spent: u64,
    /// Search nodes the checks may take in all.
    budget: u64,
}

/// The check of one removal: a second solution must put another value in
/// the removed cell, one its peers allow after propagation, so each such
/// value is tried with a search for one solution. Each try starts more
/// constrained than a count to two of the whole puzzle, which must exhaust
/// its tree, and most end in propagation.
struct Check {
    cell: usize,
    /// The clue taken away.
    kept: u8,
    /// Values not tried yet.
    others: u64,
    /// Nodes left of [`CHECK_NODES`].
    budget: u64,
    /// A try is under way in the solver.
    trying: bool,
}

/// A random solution grid of `shape`: the sized engine's first solution of
/// the blank grid, relabelled and with its rows, columns, bands and stacks
/// shuffled (moves that keep every rule).
pub fn solution_grid(solver: &mut SizedSolver, shape: Shape, rng: &mut Rng) -> SizedGrid {
    let blank = SizedGrid::empty(shape);
    solver.restart(&blank, 1);
    while solver.resume(u64::MAX) == Progress::Paused {}
    let base = solver.solution().unwrap_or(blank);
    let (n, br, bc) = (shape.side(), shape.box_rows(), shape.box_cols());
    let mut label: Vec<u8> = (1..=n as u8).collect();
    rng.shuffle(&mut label);
    // Rows: bands of `br` rows, shuffled, and rows shuffled within each.
    let permute = |rng: &mut Rng, groups: usize, size: usize| {
        let mut group: Vec<usize> = (0..groups).collect();
        rng.shuffle(&mut group);
        let mut order = Vec::with_capacity(groups * size);
        for g in group {
            let mut inner: Vec<usize> = (0..size).collect();
            rng.shuffle(&mut inner);
            order.extend(inner.into_iter().map(|k| g * size + k));
        }
        order
    };
    let rows = permute(rng, n / br, br);
    let cols = permute(rng, n / bc, bc);
    let values = (0..n * n)
        .map(|i| {
            let v = base.values()[rows[i / n] * n + cols[i % n]];
            label[usize::from(v) - 1]
        })
        .collect();
    SizedGrid::from_values(shape, values).unwrap_or_else(|_| SizedGrid::empty(shape))
}

impl SizedMaker {
    /// Starts puzzle `index` of `seed` for `shape`, removing clues down to
    /// `min_clues` at the least.
    pub fn new(
        solver: &mut SizedSolver,
        shape: Shape,
        seed: u64,
        index: u64,
        min_clues: usize,
    ) -> SizedMaker {
        let mut rng = Rng::for_attempt(seed, index, 0);
        let solution = solution_grid(solver, shape, &mut rng);
        let mut order: Vec<usize> = (0..shape.cells()).collect();
        rng.shuffle(&mut order);
        SizedMaker {
            puzzle: solution.clone(),
            solution,
            order,
            next: 0,
            min_clues,
            clues: shape.cells(),
            minimal: true,
            check: None,
            spent: 0,
            budget: u64::MAX,
        }
    }

    /// This maker, trying no more clues once its checks have taken
    /// `nodes` search nodes in all.
    pub fn with_budget(mut self, nodes: u64) -> SizedMaker {
        self.budget = nodes;
        self
    }

    /// Search nodes the checks have taken so far (a restart counts as
    /// one, for the table it fills).
    pub fn nodes(&self) -> u64 {
        self.spent
    }

    /// The bytes a maker of a grid of `cells` cells holds on the heap: the
    /// puzzle, its solution and the order of the clues to try.
    pub fn footprint(cells: usize) -> usize {
        cells.saturating_mul(2 + std::mem::size_of::<usize>())
    }

    /// One step: at most [`STEP_NODES`] nodes of a clue's check; `Some`
    /// with the puzzle once every clue has been tried (or the floor met).
    pub fn step(&mut self, solver: &mut SizedSolver) -> Option<SizedPuzzle> {
        if let Some(check) = self.check.take() {
            self.go_on(solver, check);
            return None;
        }
        if let Some(&cell) = self.order.get(self.next)
            && self.clues > self.min_clues
            && self.spent < self.budget
        {
            self.next += 1;
            let kept = self.puzzle.values()[cell];
            self.puzzle.values_mut()[cell] = 0;
            solver.restart(&self.puzzle, 2);
            let progress = solver.resume(1);
            self.spent += 1 + solver.answer().stats.nodes;
            if progress == Progress::Done {
                let unique = solver.answer().count == 1;
                self.decide(cell, kept, Some(unique));
            } else if solver.placed(cell) != 0 {
                // Paused after the root, so the board is the root's
                // fixpoint: a cell placed there is forced, to `kept`.
                self.decide(cell, kept, Some(true));
            } else {
                let check = Check {
                    cell,
                    kept,
                    others: solver.candidates(cell) & !(1u64 << (kept - 1)),
                    budget: CHECK_NODES - 1,
                    trying: false,
                };
                self.go_on(solver, check);
            }
            return None;
        }
        Some(SizedPuzzle {
            puzzle: self.puzzle.clone(),
            solution: self.solution.clone(),
            clues: self.clues,
            minimal: self.minimal && self.next == self.order.len(),
        })
    }

    /// Runs `check` on (its current try, or the next value) for up to
    /// [`STEP_NODES`] nodes; decides the clue when the check is over.
    fn go_on(&mut self, solver: &mut SizedSolver, mut check: Check) {
        let cell = check.cell;
        if !check.trying {
            if check.others == 0 {
                return self.decide(cell, check.kept, Some(true));
            }
            if check.budget == 0 {
                return self.decide(cell, check.kept, None);
            }
            let v = check.others.trailing_zeros() as u8 + 1;
            check.others &= check.others - 1;
            self.puzzle.values_mut()[cell] = v;
            solver.restart(&self.puzzle, 1);
            self.puzzle.values_mut()[cell] = 0;
            check.trying = true;
            self.spent += 1;
        }
        let before = solver.answer().stats.nodes;
        let progress = solver.resume(check.budget.min(STEP_NODES));
        let a = solver.answer();
        let nodes = a.stats.nodes - before;
        check.budget = check.budget.saturating_sub(nodes);
        self.spent += nodes;
        if a.count > 0 {
            return self.decide(cell, check.kept, Some(false));
        }
        if progress == Progress::Done {
            check.trying = false;
            if check.others == 0 {
                return self.decide(cell, check.kept, Some(true));
            }
        } else if check.budget == 0 {
            return self.decide(cell, check.kept, None);
        }
        self.check = Some(check);
    }

    /// Takes the clue away for good when the puzzle stays unique without
    /// it; puts it back otherwise (`None`: not known, so not minimal).
    fn decide(&mut self, cell: usize, kept: u8, unique: Option<bool>) {
        match unique {
            Some(true) => self.clues -= 1,
            _ => {
                if unique.is_none() {
                    self.minimal = false;
                }
                self.puzzle.values_mut()[cell] = kept;
            }
        }
    }

    /// Makes the whole puzzle.
    pub fn run(mut self, solver: &mut SizedSolver) -> SizedPuzzle {
        loop {
            if let Some(made) = self.step(solver) {
                return made;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_puzzles_are_unique_minimal_and_repeatable() {
        for (r, c) in [(2, 2), (2, 3), (3, 2), (2, 4), (3, 3)] {
            let shape = Shape::new(r, c).unwrap();
            let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
            let made = SizedMaker::new(&mut solver, shape, 7, 1, 0).run(&mut solver);
            assert!(made.solution.is_valid_solution(), "{shape}");
            assert!(made.puzzle.is_kept_by(&made.solution));
            assert!(made.minimal);
            assert_eq!(made.clues, made.puzzle.givens());
            solver.restart(&made.puzzle, 2);
            solver.resume(u64::MAX);
            assert_eq!(solver.answer().count, 1);
            assert_eq!(solver.solution(), Some(made.solution.clone()));
            let again = SizedMaker::new(&mut solver, shape, 7, 1, 0).run(&mut solver);
            assert_eq!(again, made);
        }
    }

    #[test]
    fn a_maker_out_of_its_budget_stops_with_a_unique_puzzle_not_minimal() {
        let shape = Shape::new(3, 3).unwrap();
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let mut maker = SizedMaker::new(&mut solver, shape, 3, 0, 0);
        let whole = loop {
            if let Some(made) = maker.step(&mut solver) {
                break made;
            }
        };
        assert!(whole.minimal);
        let budget = maker.nodes() / 4;
        let mut maker = SizedMaker::new(&mut solver, shape, 3, 0, 0).with_budget(budget);
        let cut = loop {
            if let Some(made) = maker.step(&mut solver) {
                break made;
            }
        };
        // The check under way when the budget ran out is finished.
        assert!(maker.nodes() >= budget && maker.nodes() <= budget + CHECK_NODES + 1);
        assert!(!cut.minimal);
        assert!(cut.clues > whole.clues, "{} vs {}", cut.clues, whole.clues);
        assert!(cut.puzzle.is_kept_by(&cut.solution));
        solver.restart(&cut.puzzle, 2);
        solver.resume(u64::MAX);
        assert_eq!(solver.answer().count, 1);
        // The same seed and budget make the same puzzle.
        let again = SizedMaker::new(&mut solver, shape, 3, 0, 0)
            .with_budget(budget)
            .run(&mut solver);
        assert_eq!(again, cut);
    }
}
