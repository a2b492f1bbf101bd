//! Puzzles of any size (see [`crate::puzzle::sized`]): a random solution
//! grid, then clues taken away one at a time in a random order, each kept
//! only if the puzzle would lose its one solution without it. A puzzle
//! made to the end is minimal. Each check tries the other values the
//! removed cell allows, each with a search for one solution, under one
//! node budget: a check that runs out keeps its clue (the puzzle stays
//! unique, and is reported not minimal). Where a count takes turns with
//! the SAT engine ([`SizedSolver::counts_take_turns`], from 25x25), the
//! checks are asked of one formula of the whole grid ([`Cores`], see
//! `Engine`), which takes away in bulk the clues its proofs did not use;
//! where that formula does not fit the solver's memory cap, a check is one
//! count to two of the puzzle without the clue, under
//! [`LARGE_CHECK_NODES`] (docs/sizes.md, "Limits of the maker").
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
//!
//! With a symmetry ([`SizedMaker::attempt`]) clues go by orbits: an
//! orbit of several cells is taken away when the puzzle without it still
//! counts one solution. The puzzle is then minimal as to orbits, and each
//! clue is checked after for `minimal` (clue by clue).
//!
//! [`SizedSearch`] makes puzzles attempt by attempt until one matches a
//! [`Target`] (a label, an SE range) and a clue range: the options of the
//! 9x9 generator, at every size.

use super::rng::Rng;
use super::symmetry::Symmetry;
use super::target::Target;
use crate::logic::{self, Rating, Reach};
use crate::puzzle::sized::{Shape, SizedGrid};
use crate::solver::sized::SizedSolver;
use crate::solver::{Cores, Progress, Uniqueness, cores};

/// Nodes one uniqueness check may take before its clue is kept.
pub const CHECK_NODES: u64 = 20_000;

/// The same where a check is a count that takes turns with the SAT engine
/// (from 25x25). Making a minimal 25x25 puzzle (`--seed 1`, 269 clues),
/// the largest check took 970,000 nodes; with 200,000, 10 checks of that
/// puzzle ran out.
pub const LARGE_CHECK_NODES: u64 = 2_000_000;

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
    /// The orbits of the symmetry (one cell each without one), in the
    /// random order they are tried, flattened: orbit i is
    /// `order[ends[i-1]..ends[i]]` (four bytes a cell, not a vector each).
    order: Vec<u16>,
    ends: Vec<u32>,
    next: usize,
    /// After the orbits, with a symmetry: the next clue to check for
    /// minimality clue by clue, and whether every one so far was needed.
    probe: Option<usize>,
    clue_minimal: bool,
    /// An orbit was skipped to stay above the floor.
    floored: bool,
    /// The hardest technique the puzzle may need: a removal that leaves
    /// a unique puzzle the techniques up to it cannot finish is undone
    /// (the clue could go, so the puzzle is then not minimal).
    ceiling: Option<u16>,
    capped: bool,
    min_clues: usize,
    clues: usize,
    minimal: bool,
    /// The check in progress, if any.
    check: Option<Check>,
    /// Search nodes the checks have taken (a restart counts as one).
    spent: u64,
    /// Search nodes the checks may take in all.
    budget: u64,
    /// The SAT engine's formula of the whole grid, asked the checks (see
    /// [`Engine`]).
    engine: Engine,
    /// Checks started.
    checks: u64,
}

/// Where counts take turns with the SAT engine (from 25x25), the checks
/// are asked of one [`Cores`] for the whole making: the formula of the
/// grid and "some cell differs from the solution", with the clues as
/// assumptions. It keeps what it learned from one check to the next, and
/// a removal it proves names the clues the proof used: the clues still to
/// try that it did not use go too (without a symmetry, a floor in reach or
/// a ceiling). A minimal 36x36 puzzle takes under a minute this way, where
/// a count per check stalled at half the clues.
enum Engine {
    /// Not loaded yet: loaded at the first check, if its estimate fits
    /// the solver's memory cap.
    Untried,
    On(Box<Cores>),
    /// Not used (a smaller grid, no room, lost, or past the cap): checks
    /// are value tries or counts.
    Off,
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
    /// The other cells of its orbit, taken away with it: the check is then
    /// a count to two of the puzzle without them all.
    with: Vec<usize>,
    /// Only a probe of minimality: the clue goes back whatever the answer.
    probe: bool,
    /// Values not tried yet.
    others: u64,
    /// The check is one count to two (an orbit, or a clue where counts take
    /// turns with the SAT engine), not a try of each other value.
    count: bool,
    /// The check is a question to the SAT engine ([`Engine::On`]).
    asked: bool,
    /// Nodes left of [`CHECK_NODES`] (or [`LARGE_CHECK_NODES`]).
    budget: u64,
    /// A try is under way in the solver.
    trying: bool,
}

/// A random solution grid of `shape`: the sized engine's first solution of
/// the blank grid, relabelled and with its rows, columns, bands and stacks
/// shuffled (moves that keep every rule).
pub fn solution_grid(solver: &mut SizedSolver, shape: Shape, rng: &mut Rng) -> SizedGrid {
    let blank = SizedGrid::empty(shape);
    // The blank grid fills in the tree search's first run; without repair
    // turns it fills as it always did, so a seed names the same puzzles.
    solver.restart_without_repair(&blank, 1);
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
        SizedMaker::attempt(solver, shape, seed, index, 0, min_clues, Symmetry::None)
    }

    /// Attempt `attempt` at puzzle `index` of `seed`: its own solution
    /// grid and removal order, clues taken away by the orbits of
    /// `symmetry` (see [`Symmetry::fits`] for the ones a shape takes).
    pub fn attempt(
        solver: &mut SizedSolver,
        shape: Shape,
        seed: u64,
        index: u64,
        attempt: u64,
        min_clues: usize,
        symmetry: Symmetry,
    ) -> SizedMaker {
        let mut rng = Rng::for_attempt(seed, index, attempt);
        let solution = solution_grid(solver, shape, &mut rng);
        let mut orbits = symmetry.orbits(shape.side());
        rng.shuffle(&mut orbits);
        let mut order = Vec::with_capacity(shape.cells());
        let mut ends = Vec::with_capacity(orbits.len());
        for orbit in orbits {
            order.extend(orbit.into_iter().map(|c| c as u16));
            ends.push(order.len() as u32);
        }
        SizedMaker {
            puzzle: solution.clone(),
            solution,
            probe: (symmetry != Symmetry::None).then_some(0),
            clue_minimal: true,
            floored: false,
            ceiling: None,
            capped: false,
            order,
            ends,
            next: 0,
            min_clues,
            clues: shape.cells(),
            minimal: true,
            check: None,
            spent: 0,
            budget: u64::MAX,
            engine: if SizedSolver::counts_take_turns(shape) {
                Engine::Untried
            } else {
                Engine::Off
            },
            checks: 0,
        }
    }

    /// This maker, asking the SAT engine its checks at any size (it does
    /// from 25x25).
    #[cfg(all(test, feature = "cdcl"))]
    fn with_engine(mut self) -> SizedMaker {
        self.engine = Engine::Untried;
        self
    }

    /// Whether the SAT engine is loaded.
    #[cfg(all(test, feature = "cdcl"))]
    fn engine_on(&self) -> bool {
        matches!(self.engine, Engine::On(_))
    }

    /// This maker, trying no more clues once its checks have taken
    /// `nodes` search nodes in all.
    pub fn with_budget(mut self, nodes: u64) -> SizedMaker {
        self.budget = nodes;
        self
    }

    /// This maker, keeping the puzzle within what the techniques up to
    /// steps worth up to `ceiling` tenths finish (see [`Target::ceiling`]): how an easy 16x16
    /// puzzle is made, where a minimal one is almost never easy.
    pub fn with_ceiling(mut self, ceiling: Option<u16>) -> SizedMaker {
        self.ceiling = ceiling;
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
        cells.saturating_mul(2 + 2 + 4)
    }

    /// The estimated bytes of the SAT engine's formula, when loaded: held
    /// beside the solver's, and within its memory cap.
    pub fn engine_bytes(&self) -> usize {
        match &self.engine {
            Engine::On(cores) => cores.heap_bytes(),
            _ => 0,
        }
    }

    /// The cells of orbit `i` in the removal order, if there is one.
    fn orbit(&self, i: usize) -> Option<&[u16]> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.order[start..end])
    }

    /// One step: at most [`STEP_NODES`] nodes of a clue's check; `Some`
    /// with the puzzle once every clue has been tried (or the floor met).
    pub fn step(&mut self, solver: &mut SizedSolver) -> Option<SizedPuzzle> {
        if let Some(check) = self.check.take() {
            self.go_on(solver, check);
            return None;
        }
        // The next orbit still in the puzzle (a core may have taken clues
        // away ahead of their turn) that fits above the floor.
        while let Some(orbit) = self.orbit(self.next) {
            if self.puzzle.values()[usize::from(orbit[0])] == 0 {
                self.next += 1;
            } else if self.clues.saturating_sub(orbit.len()) < self.min_clues {
                self.next += 1;
                self.floored = true;
            } else {
                break;
            }
        }
        if let Some(orbit) = self.orbit(self.next)
            && self.spent < self.budget
        {
            let cell = usize::from(orbit[0]);
            let with = orbit[1..].iter().map(|&c| usize::from(c)).collect();
            self.next += 1;
            self.try_without(solver, cell, with, false);
            return None;
        }
        let all_tried =
            self.next == self.ends.len() && self.minimal && !self.floored && !self.capped;
        // With a symmetry, the clues left are each checked for minimality.
        if all_tried && let Some(from) = self.probe {
            let cells = self.puzzle.shape().cells();
            if let Some(cell) = (from..cells).find(|&c| self.puzzle.values()[c] != 0) {
                self.probe = Some(cell + 1);
                if self.spent < self.budget {
                    self.try_without(solver, cell, Vec::new(), true);
                } else {
                    self.clue_minimal = false;
                    self.probe = Some(cells);
                }
                return None;
            }
        }
        Some(SizedPuzzle {
            puzzle: self.puzzle.clone(),
            solution: self.solution.clone(),
            clues: self.clues,
            minimal: all_tried && self.clue_minimal,
        })
    }

    /// Takes `cell` (and the rest of its orbit, `with`) away and starts the
    /// check of the puzzle without them; a `probe` puts them back after.
    fn try_without(
        &mut self,
        solver: &mut SizedSolver,
        cell: usize,
        with: Vec<usize>,
        probe: bool,
    ) {
        self.checks += 1;
        let kept = self.puzzle.values()[cell];
        self.puzzle.values_mut()[cell] = 0;
        for &c in &with {
            self.puzzle.values_mut()[c] = 0;
        }
        let turns = SizedSolver::counts_take_turns(self.puzzle.shape());
        let mut check = Check {
            cell,
            kept,
            count: !with.is_empty() || turns,
            with,
            probe,
            others: 0,
            asked: false,
            budget: if turns {
                LARGE_CHECK_NODES
            } else {
                CHECK_NODES
            } - 1,
            trying: false,
        };
        // The engine, where there is one, is asked every check: its unit
        // propagation settles what the root would (a root's look-ahead on a
        // 25x25 grid costs more), and its proofs take clues away in bulk.
        if self.ask(solver) {
            check.asked = true;
            return self.go_on(solver, check);
        }
        solver.restart(&self.puzzle, 2);
        let progress = solver.resume(1);
        self.spent += 1 + solver.answer().stats.nodes;
        if progress == Progress::Done {
            let unique = solver.answer().count == 1;
            self.decide(&check, Some(unique));
        } else if check.with.is_empty() && solver.placed(cell) != 0 {
            // Paused after the root, so the board is the root's
            // fixpoint: a cell placed there is forced, to `kept`.
            self.decide(&check, Some(true));
        } else if !check.count {
            check.others = solver.candidates(cell) & !(1u64 << (kept - 1));
            self.go_on(solver, check);
        } else {
            // A count to two (a whole orbit, or one clue where the count
            // takes turns with the SAT engine) goes on where it paused.
            check.trying = true;
            self.go_on(solver, check);
        }
    }

    /// Runs `check` on (its current try, or the next value) for up to
    /// [`STEP_NODES`] nodes; decides the clue when the check is over.
    fn go_on(&mut self, solver: &mut SizedSolver, mut check: Check) {
        let cell = check.cell;
        if check.asked {
            return self.go_on_asking(solver, check);
        }
        if check.count {
            // One count to two.
            let (progress, count) = self.slice(solver, &mut check);
            if progress == Progress::Done {
                return self.decide(&check, Some(count == 1));
            }
            if check.budget == 0 {
                return self.decide(&check, None);
            }
            self.check = Some(check);
            return;
        }
        if !check.trying {
            if check.others == 0 {
                return self.decide(&check, Some(true));
            }
            if check.budget == 0 {
                return self.decide(&check, None);
            }
            let v = check.others.trailing_zeros() as u8 + 1;
            check.others &= check.others - 1;
            self.puzzle.values_mut()[cell] = v;
            // Usually there is none, and only the tree search proves it.
            solver.restart_without_repair(&self.puzzle, 1);
            self.puzzle.values_mut()[cell] = 0;
            check.trying = true;
            self.spent += 1;
        }
        let (progress, count) = self.slice(solver, &mut check);
        if count > 0 {
            return self.decide(&check, Some(false));
        }
        if progress == Progress::Done {
            check.trying = false;
            if check.others == 0 {
                return self.decide(&check, Some(true));
            }
        } else if check.budget == 0 {
            return self.decide(&check, None);
        }
        self.check = Some(check);
    }

    /// How much of the removal order has been tried: the orbits up to the
    /// one under check.
    fn tried(&self) -> usize {
        match self.next.checked_sub(1) {
            Some(i) => self.ends[i] as usize,
            None => 0,
        }
    }

    /// Asks the SAT engine (loading it first, if not tried yet) whether
    /// the puzzle as it stands, the clue under check taken away, is
    /// unique; false when there is no engine to ask.
    fn ask(&mut self, solver: &SizedSolver) -> bool {
        if matches!(self.engine, Engine::Untried) {
            let room = solver.memory_cap().saturating_sub(solver.heap_bytes());
            self.engine = match Cores::start(&self.solution, room) {
                Some(cores) => Engine::On(Box::new(cores)),
                None => Engine::Off,
            };
        }
        let tried = self.tried();
        let Engine::On(cores) = &mut self.engine else {
            return false;
        };
        // The clues tried and kept first: every proof needs them. Then the
        // clues still to try, last first: a clue implied by those before
        // it is left out of a core, and goes now rather than in its turn.
        let values = self.puzzle.values();
        let (kept, ahead) = self.order.split_at(tried);
        cores.ask(
            kept.iter()
                .chain(ahead.iter().rev())
                .map(|&c| (usize::from(c), values[usize::from(c)]))
                .filter(|&(_, v)| v != 0),
        );
        true
    }

    /// One slice of the SAT engine's answer to `check`: decides it when
    /// the answer comes; falls back to a count when the engine outgrows
    /// the solver's memory cap or is lost.
    fn go_on_asking(&mut self, solver: &mut SizedSolver, mut check: Check) {
        let Engine::On(cores) = &mut self.engine else {
            unreachable!("a question without an engine");
        };
        let checks = (check.budget.min(STEP_NODES) / cores::CHECK_NODES).max(1);
        let (answer, made) = cores.run(checks);
        let nodes = made.max(1) * cores::CHECK_NODES;
        check.budget = check.budget.saturating_sub(nodes);
        self.spent += nodes;
        let over = solver.heap_bytes().saturating_add(cores.heap_bytes()) > solver.memory_cap();
        if answer == Uniqueness::Lost || (answer == Uniqueness::Paused && over) {
            // Gone, or what it learned would pass the cap: the check goes
            // on as a count, and the checks after it.
            self.engine = Engine::Off;
            check.asked = false;
            check.count = true;
            check.trying = true;
            solver.restart(&self.puzzle, 2);
            self.spent += 1;
            self.check = Some(check);
            return;
        }
        match answer {
            Uniqueness::Unique => {
                self.take_uncored(&check);
                self.decide(&check, Some(true));
            }
            Uniqueness::Another => self.decide(&check, Some(false)),
            _ if check.budget == 0 => self.decide(&check, None),
            _ => self.check = Some(check),
        }
    }

    /// After the engine proved the puzzle without `check`'s clue unique:
    /// takes away the clues still to try that its proof did not use (they
    /// leave it unique too), unless a symmetry, a ceiling or the floor
    /// asks for clues to go one check at a time.
    fn take_uncored(&mut self, check: &Check) {
        if check.probe || self.probe.is_some() || self.ceiling.is_some() {
            return;
        }
        let Engine::On(cores) = &self.engine else {
            return;
        };
        let mut used = vec![false; self.puzzle.shape().cells()];
        cores.core(&mut used);
        let values = self.puzzle.values();
        let unused: Vec<usize> = self.order[self.tried()..]
            .iter()
            .map(|&c| usize::from(c))
            .filter(|&c| values[c] != 0 && !used[c])
            .collect();
        // The clue under check goes too (decide takes it off the count).
        if self.clues.saturating_sub(1 + unused.len()) < self.min_clues {
            return;
        }
        for &c in &unused {
            self.puzzle.values_mut()[c] = 0;
        }
        self.clues -= unused.len();
    }

    /// One slice of `check`'s search, its nodes taken from the check's
    /// budget and counted as spent: how it ended, and the solutions found.
    fn slice(&mut self, solver: &mut SizedSolver, check: &mut Check) -> (Progress, u32) {
        let before = solver.answer().stats.nodes;
        let progress = solver.resume(check.budget.min(STEP_NODES));
        let a = solver.answer();
        let nodes = a.stats.nodes - before;
        check.budget = check.budget.saturating_sub(nodes);
        self.spent += nodes;
        (progress, a.count)
    }

    /// Takes the clues away for good when the puzzle stays unique without
    /// them; puts them back otherwise (`None`: not known, so not minimal).
    /// A probe always puts its clue back, and learns only whether the
    /// puzzle is minimal clue by clue.
    fn decide(&mut self, check: &Check, unique: Option<bool>) {
        if check.probe {
            if unique != Some(false) {
                self.clue_minimal = false;
            }
            self.puzzle.values_mut()[check.cell] = check.kept;
            return;
        }
        let within = |puzzle: &SizedGrid| match self.ceiling {
            None => true,
            Some(ceiling) => logic::reach(puzzle, ceiling) == Reach::Solved,
        };
        let unique = match unique {
            Some(true) if !within(&self.puzzle) => {
                self.capped = true;
                Some(false)
            }
            other => other,
        };
        match unique {
            Some(true) => self.clues -= 1 + check.with.len(),
            _ => {
                if unique.is_none() {
                    self.minimal = false;
                }
                self.puzzle.values_mut()[check.cell] = check.kept;
                for &c in &check.with {
                    self.puzzle.values_mut()[c] = self.solution.values()[c];
                }
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

/// The options of a sized Generate: what the 9x9 generator takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizedOptions {
    /// Symmetry of the clues; it must fit the shape ([`Symmetry::fits`]).
    pub symmetry: Symmetry,
    /// Clue removal stops here (0: no floor).
    pub min_clues: usize,
    /// Puzzles with more clues are dropped (`usize::MAX`: no bound).
    pub max_clues: usize,
    /// Attempts per puzzle before [`SizedSearch::step`] gives up.
    pub max_attempts: u64,
    /// Search nodes the checks of one attempt may take.
    pub budget: u64,
}

/// A sized puzzle that matched, with its rating and the attempts it took.
#[derive(Debug, Clone, PartialEq)]
pub struct SizedFound {
    /// The puzzle made.
    pub made: SizedPuzzle,
    /// Its rating, as [`crate::logic::rate_within`] gives it.
    pub rating: Rating,
    /// Attempts made and dropped before this one.
    pub attempts: u64,
}

/// What one [`SizedSearch::step`] came to.
#[derive(Debug, Clone, PartialEq)]
pub enum SizedPoll {
    /// A puzzle that matches.
    Found(Box<SizedFound>),
    /// `max_attempts` were made and none matched.
    Exhausted {
        /// Attempts made.
        attempts: u64,
    },
    /// Not yet: call `step` again.
    Working,
}

/// Puzzle `index` of `seed` at `shape` made to a target: attempts, each a
/// [`SizedMaker`] with its own solution grid, until one's clue count and
/// rating match. Stepped like the maker: one check a step, and the count
/// behind a made puzzle's rating (the engine's guesses, for
/// [`Rating::guesses`]) in slices of [`STEP_NODES`] within the budget.
pub struct SizedSearch {
    shape: Shape,
    seed: u64,
    index: u64,
    options: SizedOptions,
    target: Target,
    attempt: u64,
    phase: Phase,
}

/// Where an attempt stands.
enum Phase {
    /// Between attempts.
    Idle,
    /// Clues are being taken away.
    Making(SizedMaker),
    /// The puzzle is made; the engine counts its solutions to two (it has
    /// one) for its guesses, `spent` nodes so far.
    Counting(SizedPuzzle, u64),
}

impl SizedSearch {
    /// The search for puzzle `index` of `seed`.
    pub fn new(
        shape: Shape,
        seed: u64,
        index: u64,
        options: SizedOptions,
        target: Target,
    ) -> SizedSearch {
        SizedSearch {
            shape,
            seed,
            index,
            options,
            target,
            attempt: 0,
            phase: Phase::Idle,
        }
    }

    /// Attempts made so far (the one under way included).
    pub fn attempts(&self) -> u64 {
        self.attempt
    }

    /// The estimated bytes of the attempt's SAT engine, if it has one
    /// ([`SizedMaker::engine_bytes`]).
    pub fn engine_bytes(&self) -> usize {
        match &self.phase {
            Phase::Making(maker) => maker.engine_bytes(),
            _ => 0,
        }
    }

    /// One step of the attempt under way (or the start of the next).
    pub fn step(&mut self, solver: &mut SizedSolver) -> SizedPoll {
        let o = self.options;
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Idle => {
                if self.attempt >= o.max_attempts {
                    return SizedPoll::Exhausted {
                        attempts: self.attempt,
                    };
                }
                let maker = SizedMaker::attempt(
                    solver,
                    self.shape,
                    self.seed,
                    self.index,
                    self.attempt,
                    o.min_clues,
                    o.symmetry,
                )
                .with_budget(o.budget)
                .with_ceiling(self.target.ceiling());
                self.attempt += 1;
                self.phase = Phase::Making(maker);
            }
            Phase::Making(mut maker) => match maker.step(solver) {
                None => self.phase = Phase::Making(maker),
                // Too many clues: the next attempt.
                Some(made) if made.clues > o.max_clues => {}
                Some(made) => {
                    solver.restart(&made.puzzle, 2);
                    self.phase = Phase::Counting(made, 0);
                }
            },
            Phase::Counting(made, spent) => {
                let before = solver.answer().stats.nodes;
                let progress = solver.resume(STEP_NODES);
                let spent = spent + solver.answer().stats.nodes - before;
                if progress == Progress::Paused && spent < o.budget {
                    self.phase = Phase::Counting(made, spent);
                    return SizedPoll::Working;
                }
                // Past the budget the guesses are those counted so far.
                let guesses = solver.answer().stats.guesses;
                if let Some(rating) = self.target.accept_counted(&made.puzzle, || guesses) {
                    return SizedPoll::Found(Box::new(SizedFound {
                        made,
                        rating,
                        attempts: self.attempt - 1,
                    }));
                }
            }
        }
        SizedPoll::Working
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The solutions of `puzzle`, counted to two.
    fn count(solver: &mut SizedSolver, puzzle: &SizedGrid) -> u32 {
        solver.restart(puzzle, 2);
        solver.resume(u64::MAX);
        solver.answer().count
    }

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
            assert_eq!(count(&mut solver, &made.puzzle), 1);
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
        assert_eq!(count(&mut solver, &cut.puzzle), 1);
        // The same seed and budget make the same puzzle.
        let again = SizedMaker::new(&mut solver, shape, 3, 0, 0)
            .with_budget(budget)
            .run(&mut solver);
        assert_eq!(again, cut);
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn without_room_for_the_whole_grid_a_check_is_one_count_that_takes_turns_with_the_sat_engine() {
        let shape = Shape::new(5, 5).unwrap();
        assert!(SizedSolver::counts_take_turns(shape));
        assert!(!SizedSolver::counts_take_turns(Shape::new(4, 4).unwrap()));
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        // Room for the search's engine on one board, not for the whole
        // grid's formula (about 50 MB at 25x25).
        solver.set_memory_cap(SizedSolver::footprint(shape.cells()) + (24 << 20));
        let budget = 150_000;
        let mut maker = SizedMaker::new(&mut solver, shape, 1, 0, 0).with_budget(budget);
        let mut counts = 0;
        let cut = loop {
            if let Some(made) = maker.step(&mut solver) {
                break made;
            }
            assert!(!maker.engine_on());
            if let Some(check) = &maker.check {
                assert!(check.count && check.with.is_empty() && check.others == 0);
                counts += 1;
            }
        };
        assert!(counts > 0, "no check went past the root");
        assert!(maker.nodes() >= budget && maker.nodes() <= budget + LARGE_CHECK_NODES + 1);
        assert!(!cut.minimal && cut.clues < shape.cells());
        assert!(cut.puzzle.is_kept_by(&cut.solution));
        assert_eq!(count(&mut solver, &cut.puzzle), 1);
        // The engine's turns are counted in nodes: the same seed and
        // budget make the same puzzle.
        let again = SizedMaker::new(&mut solver, shape, 1, 0, 0)
            .with_budget(budget)
            .run(&mut solver);
        assert_eq!(again, cut);
    }

    /// Makes a puzzle step by step; whether the SAT engine was loaded.
    #[cfg(feature = "cdcl")]
    fn make(solver: &mut SizedSolver, mut maker: SizedMaker) -> (SizedPuzzle, bool, u64) {
        let mut on = false;
        loop {
            on |= maker.engine_on();
            if let Some(made) = maker.step(solver) {
                return (made, on, maker.checks);
            }
        }
    }

    /// The puzzle has one solution, and loses it without any one clue.
    #[cfg(feature = "cdcl")]
    fn assert_unique_and_minimal(solver: &mut SizedSolver, made: &SizedPuzzle, every: usize) {
        assert!(made.puzzle.is_kept_by(&made.solution));
        assert_eq!(made.clues, made.puzzle.givens());
        assert_eq!(count(solver, &made.puzzle), 1);
        let clues = (0..made.puzzle.shape().cells()).filter(|&c| made.puzzle.values()[c] != 0);
        for cell in clues.step_by(every) {
            let mut without = made.puzzle.clone();
            without.values_mut()[cell] = 0;
            assert_eq!(count(solver, &without), 2, "clue {cell} can go");
        }
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn from_25x25_the_sat_engine_answers_the_checks_and_takes_unused_clues_in_bulk() {
        let shape = Shape::new(5, 5).unwrap();
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let maker = SizedMaker::new(&mut solver, shape, 1, 0, 0);
        let (made, on, checks) = make(&mut solver, maker);
        assert!(on && made.minimal);
        // Clues its proofs did not use went without a check of their own
        // (243 of the 379 that went, when written).
        assert!(checks + 100 < shape.cells() as u64, "{checks} checks");
        assert_unique_and_minimal(&mut solver, &made, 5);
        // The same seed makes the same puzzle (run, or step by step).
        let again = SizedMaker::new(&mut solver, shape, 1, 0, 0).run(&mut solver);
        assert_eq!(again, made);
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn the_sat_engine_makes_minimal_puzzles_at_every_size_with_symmetry_and_floor() {
        for (r, c) in [(2, 2), (2, 3), (3, 3), (4, 4)] {
            let shape = Shape::new(r, c).unwrap();
            let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
            let maker = SizedMaker::new(&mut solver, shape, 4, 2, 0).with_engine();
            let (made, on, _) = make(&mut solver, maker);
            assert!(on && made.minimal, "{shape}");
            assert_unique_and_minimal(&mut solver, &made, 1);
            let again = SizedMaker::new(&mut solver, shape, 4, 2, 0).with_engine();
            assert_eq!(make(&mut solver, again).0, made);
            // A floor: clues go one check at a time, down to it.
            let floor = made.clues + 5;
            let floored = SizedMaker::new(&mut solver, shape, 4, 2, floor).with_engine();
            let (floored, _, _) = make(&mut solver, floored);
            assert!(floored.clues >= floor && !floored.minimal, "{shape}");
        }
        let shape = Shape::new(3, 3).unwrap();
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let maker =
            SizedMaker::attempt(&mut solver, shape, 2, 0, 0, 0, Symmetry::Rotate180).with_engine();
        let (made, on, _) = make(&mut solver, maker);
        assert!(on);
        let v = made.puzzle.values();
        assert!(
            (0..81).all(|i| (v[i] == 0) == (v[80 - i] == 0)),
            "orbits kept whole"
        );
        assert_eq!(count(&mut solver, &made.puzzle), 1);
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn an_engine_past_the_memory_cap_leaves_the_checks_to_counts() {
        let shape = Shape::new(4, 4).unwrap();
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let mut maker = SizedMaker::new(&mut solver, shape, 6, 0, 0).with_engine();
        // Until a question pauses with the engine loaded; then the cap
        // leaves it no room.
        while !(maker.engine_on() && maker.check.as_ref().is_some_and(|c| c.asked)) {
            assert!(maker.step(&mut solver).is_none(), "made before a pause");
        }
        solver.set_memory_cap(solver.heap_bytes());
        let mut counted = false;
        let made = loop {
            if let Some(made) = maker.step(&mut solver) {
                break made;
            }
            counted |= maker.check.as_ref().is_some_and(|c| c.count && !c.asked);
        };
        assert!(!maker.engine_on() && counted);
        assert!(made.minimal);
        assert_unique_and_minimal(&mut solver, &made, 1);
    }

    #[test]
    fn symmetric_puzzles_keep_whole_orbits_and_say_if_minimal_clue_by_clue() {
        for (r, c, sym) in [
            (2, 3, Symmetry::Rotate180),
            (3, 2, Symmetry::MirrorBoth),
            (2, 2, Symmetry::Rotate90),
            (3, 3, Symmetry::Diagonal),
        ] {
            let shape = Shape::new(r, c).unwrap();
            let n = shape.side();
            let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
            let made = SizedMaker::attempt(&mut solver, shape, 5, 0, 0, 0, sym).run(&mut solver);
            assert!(made.puzzle.is_kept_by(&made.solution));
            assert_eq!(made.clues, made.puzzle.givens());
            for orbit in sym.orbits(n) {
                let set = made.puzzle.values()[orbit[0]] != 0;
                assert!(
                    orbit.iter().all(|&x| (made.puzzle.values()[x] != 0) == set),
                    "{shape} {sym:?}"
                );
            }
            let count = |p: &SizedGrid| crate::solver::sized::run_sized(p, 2, u64::MAX).0.count;
            assert_eq!(count(&made.puzzle), 1);
            // Minimal clue by clue exactly when no single clue can go.
            let removable = (0..n * n)
                .filter(|&x| made.puzzle.values()[x] != 0)
                .any(|x| {
                    let mut p = made.puzzle.clone();
                    p.values_mut()[x] = 0;
                    count(&p) == 1
                });
            assert_eq!(made.minimal, !removable, "{shape} {sym:?}");
        }
    }

    #[test]
    fn a_search_finds_puzzles_of_the_label_and_clue_range_asked() {
        use crate::logic::{self, Label};
        let shape = Shape::new(2, 3).unwrap();
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let options = SizedOptions {
            symmetry: Symmetry::Rotate180,
            min_clues: 0,
            max_clues: 14,
            max_attempts: 1_000,
            budget: u64::MAX,
        };
        for label in [Label::Easy, Label::Medium] {
            let mut search = SizedSearch::new(shape, 1, 0, options, Target::Label(label));
            let found = loop {
                match search.step(&mut solver) {
                    SizedPoll::Found(found) => break found,
                    SizedPoll::Exhausted { attempts } => panic!("{label}: {attempts} attempts"),
                    SizedPoll::Working => {}
                }
            };
            assert_eq!(found.rating.label, label);
            assert!(found.made.clues <= 14);
            assert_eq!(
                logic::rate_within(&found.made.puzzle, u64::MAX).unwrap(),
                found.rating
            );
        }
    }
}
