//! The engine: finds a solution, or counts solutions up to a limit, under a
//! work budget. Knows nothing of gRPC.
//!
//! The search is resumable: [`Solver::resume`] runs at most a given number of
//! search nodes and returns, so a caller can check a deadline or yield to
//! other work between slices without threads or syscalls in the hot loop.
//!
//! The board representation and propagation rules live in `board.rs` (its
//! header has the bit layout); this file holds the search: an explicit stack
//! of saved boards in a fixed array, so a `Solver` is one fixed-size value
//! with no heap, and pausing is just returning from the loop.

mod anneal;
mod board;
mod cdcl;
pub mod cores;
mod ones;
pub mod sized;
mod tables;
mod xorshift;

use crate::puzzle::{CELLS, Grid};
pub use board::Rules;
use board::{ALL_WORDS, Board, Cands, Outcome};
pub use cores::{Cores, Uniqueness};

/// Work the solver did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Branch points: nodes where more than one candidate had to be tried.
    pub guesses: u64,
    /// Search nodes visited, the root included.
    pub nodes: u64,
}

/// What the search found, and whether it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The first solution found, if any.
    pub solution: Option<Grid>,
    /// Solutions found, at most the limit.
    pub count: u32,
    /// True when the search ended on its own (space exhausted or limit
    /// reached); false when the node budget ran out first.
    pub complete: bool,
    /// Work done.
    pub stats: Stats,
}

/// Whether [`Solver::resume`] finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The search is over; read [`Solver::answer`].
    Done,
    /// The slice's node budget ran out; call `resume` again to go on.
    Paused,
}

/// A stack entry. Below the top: a branch point, the board before the
/// guess, the cell, the digits not tried yet and which end of them to try
/// next. At the top: the board being
/// propagated, in place (band, bit and remaining unused until it branches).
#[derive(Clone, Copy)]
struct Frame {
    cands: Cands,
    band: u8,
    bit: u8,
    remaining: u16,
    high_first: bool,
}

/// A search in progress. A fixed-size value (about 11 KiB: a stack of 82
/// boards): no heap allocation per puzzle or per node.
///
/// Boards are worked on in place: `stack[depth]` is the board being
/// propagated; a branch just bumps `depth`; a child is one copy of its
/// parent, except the last child, which reuses the parent's entry. Entry k
/// has at least k cells placed, so a board can branch only below 81 and 82
/// entries suffice.
#[derive(Clone)]
pub struct Solver {
    stack: [Frame; CELLS + 1],
    depth: usize,
    limit: u32,
    rules: Rules,
    answer: Answer,
    started: bool,
    /// The top board's words changed since last analysed (see `Board::new`).
    pending: u32,
}

impl Solver {
    /// Starts a search of `puzzle` for up to `max_solutions` solutions (at
    /// least 1). Givens that break the rules make a puzzle with no solution.
    pub fn new(puzzle: &Grid, max_solutions: u32) -> Solver {
        Solver::with_rules(puzzle, max_solutions, Rules::DEFAULT)
    }

    /// Like [`Solver::new`], with some propagation rules switched off (for
    /// measuring what each is worth; answers are the same, only slower).
    pub fn with_rules(puzzle: &Grid, max_solutions: u32, rules: Rules) -> Solver {
        let mut s = Solver {
            stack: [Frame {
                cands: Cands::ZERO,
                band: 0,
                bit: 0,
                remaining: 0,
                high_first: false,
            }; CELLS + 1],
            depth: 0,
            limit: 1,
            rules,
            answer: Answer {
                solution: None,
                count: 0,
                complete: true,
                stats: Stats::default(),
            },
            started: false,
            pending: ALL_WORDS,
        };
        s.restart_with_rules(puzzle, max_solutions, rules);
        s
    }

    /// Starts a new search in this solver, as [`Solver::new`] would, reusing
    /// its memory: only the root board is written, where building a new
    /// `Solver` writes all 11 KiB of its stack. A caller solving many puzzles
    /// keeps one `Solver` and restarts it.
    pub fn restart(&mut self, puzzle: &Grid, max_solutions: u32) {
        self.restart_with_rules(puzzle, max_solutions, Rules::DEFAULT);
    }

    /// [`Solver::restart`] with some rules switched off (see
    /// [`Solver::with_rules`]).
    pub fn restart_with_rules(&mut self, puzzle: &Grid, max_solutions: u32, rules: Rules) {
        let root = Cands::from_givens(puzzle);
        self.stack[0].cands = root.unwrap_or(Cands::ZERO);
        self.depth = 0;
        self.limit = max_solutions.max(1);
        self.rules = rules;
        self.answer = Answer {
            solution: None,
            count: 0,
            complete: root.is_none(),
            stats: Stats::default(),
        };
        self.started = false;
    }

    /// Starts a search of `puzzle` for up to `max_solutions` solutions
    /// that do not put `digit` (1-9) in `cell` (0-80), reusing this
    /// solver's memory as [`Solver::restart`] does. A given `cell` holding
    /// `digit` leaves no solution; another digit is not ruled out of it.
    ///
    /// One search covers every other digit of the cell at once: whether a
    /// puzzle stays unique once a clue is blanked is whether the blanked
    /// puzzle has a solution without the clue's digit there.
    pub fn restart_without(&mut self, puzzle: &Grid, cell: usize, digit: u8, max_solutions: u32) {
        self.restart_with_rules(puzzle, max_solutions, Rules::DEFAULT);
        if self.answer.complete || !(1..=9).contains(&digit) || cell >= CELLS {
            return;
        }
        if puzzle.0[cell] == digit {
            self.answer.complete = true;
        } else if puzzle.0[cell] == 0 {
            self.stack[0]
                .cands
                .rule_out(cell / 27, cell % 27, usize::from(digit) - 1);
        }
    }

    /// Runs at most `node_budget` more search nodes (at least 1).
    pub fn resume(&mut self, node_budget: u64) -> Progress {
        if self.rules == Rules::DEFAULT {
            self.resume_with::<true>(node_budget)
        } else {
            self.resume_with::<false>(node_budget)
        }
    }

    /// The search loop; `DEFAULT` compiles a copy with the default rules
    /// fixed.
    #[inline(always)]
    fn resume_with<const DEFAULT: bool>(&mut self, node_budget: u64) -> Progress {
        let rules = if DEFAULT { Rules::DEFAULT } else { self.rules };
        if self.answer.complete {
            return Progress::Done;
        }
        let stop_at = self.answer.stats.nodes.saturating_add(node_budget.max(1));
        if !self.started {
            self.started = true;
            self.pending = ALL_WORDS;
        } else if !self.next_child() {
            return Progress::Done;
        }
        loop {
            self.answer.stats.nodes += 1;
            let top = &mut self.stack[self.depth];
            let guesses = self.answer.stats.guesses;
            match Board::new(&mut top.cands, self.pending).propagate(rules, guesses) {
                Outcome::Solved => {
                    self.answer.count += 1;
                    if self.answer.solution.is_none() {
                        self.answer.solution = Some(top.cands.solution());
                    }
                    if self.answer.count >= self.limit {
                        self.answer.complete = true;
                        return Progress::Done;
                    }
                }
                Outcome::Dead => {}
                Outcome::Branch { band, bit, digits } => {
                    if digits & (digits - 1) != 0 {
                        self.answer.stats.guesses += 1;
                    }
                    top.band = band;
                    top.bit = bit;
                    top.remaining = digits;
                    // In "any solution" mode the order of a pair matters:
                    // trying first the digit that more peers could still take
                    // (the placement that propagates furthest) cuts guesses by
                    // 8% on the hard sets. Counting explores both anyway.
                    // Exactly two digits: one left once the lowest goes.
                    let rest = digits & (digits - 1);
                    top.high_first = self.limit == 1
                        && rest != 0
                        && rest & (rest - 1) == 0
                        && top.cands.peers_with(band, bit, high(digits))
                            > top.cands.peers_with(band, bit, low(digits));
                    self.depth += 1;
                }
            }
            if self.answer.stats.nodes >= stop_at {
                return Progress::Paused;
            }
            if !self.next_child() {
                return Progress::Done;
            }
        }
    }

    /// Makes `stack[depth]` the board for the next untried candidate of the
    /// top branch point, or returns false (marking the search complete) when
    /// no candidate is left.
    #[inline(always)]
    fn next_child(&mut self) -> bool {
        let Some(parent) = self.depth.checked_sub(1) else {
            self.answer.complete = true;
            return false;
        };
        let f = &mut self.stack[parent];
        let d = if f.high_first {
            high(f.remaining)
        } else {
            low(f.remaining)
        };
        f.remaining &= !(1 << d);
        let (band, bit) = (f.band as usize, f.bit as usize);
        // The parent was analysed to a fixpoint: only what the guess
        // changes needs analysing again.
        if f.remaining == 0 {
            // The last candidate: the parent is not needed any more.
            self.depth = parent;
            self.pending = f.cands.place(band, bit, d);
        } else {
            let (below, top) = self.stack.split_at_mut(self.depth);
            self.pending = top[0].cands.copy_placed(&below[parent].cands, band, bit, d);
        }
        true
    }

    /// What the search has found so far.
    pub fn answer(&self) -> Answer {
        self.answer
    }
}

/// The lowest digit (0-based) of a non-empty digit set.
#[inline(always)]
fn low(digits: u16) -> usize {
    digits.trailing_zeros() as usize
}

/// The highest digit (0-based) of a non-empty digit set.
#[inline(always)]
fn high(digits: u16) -> usize {
    15 - digits.leading_zeros() as usize
}

/// How a search ended, whichever engine ran it: what every caller reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Exactly one solution (or the one asked for, with a limit of 1).
    Solved,
    /// The search space was exhausted without a solution.
    NoSolution,
    /// The limit of two or more was reached: not unique.
    NotUnique,
    /// The node budget ran out first.
    WorkLimit,
}

impl Verdict {
    /// The verdict of a search that found `count` solutions and did, or
    /// did not, finish.
    pub fn of(complete: bool, count: u32) -> Verdict {
        match (complete, count) {
            (false, _) => Verdict::WorkLimit,
            (true, 0) => Verdict::NoSolution,
            (true, 1) => Verdict::Solved,
            (true, _) => Verdict::NotUnique,
        }
    }
}

/// The two engines, one interface: the 9x9 bitboard ([`Solver`], where the
/// speed is) and the generic one ([`sized::SizedSolver`], every shape).
/// Callers pick the engine by the puzzle's shape and write the rest once.
pub trait Engine {
    /// The puzzles it solves.
    type Puzzle;
    /// Starts a search of `puzzle` for up to `limit` solutions.
    fn start(&mut self, puzzle: &Self::Puzzle, limit: u32);
    /// Searches on for at most `nodes` nodes.
    fn go_on(&mut self, nodes: u64) -> Progress;
    /// Solutions found so far, whether the search finished, and its work.
    fn report(&self) -> (u32, bool, Stats);
    /// The first solution found, if any.
    fn first_solution(&self) -> Option<Self::Puzzle>;
    /// How the search ended (or stands).
    fn verdict(&self) -> Verdict {
        let (count, complete, _) = self.report();
        Verdict::of(complete, count)
    }
}

impl Engine for Solver {
    type Puzzle = Grid;
    fn start(&mut self, puzzle: &Grid, limit: u32) {
        self.restart(puzzle, limit);
    }
    fn go_on(&mut self, nodes: u64) -> Progress {
        self.resume(nodes)
    }
    fn report(&self) -> (u32, bool, Stats) {
        (self.answer.count, self.answer.complete, self.answer.stats)
    }
    fn first_solution(&self) -> Option<Grid> {
        self.answer.solution
    }
}

impl Engine for sized::SizedSolver {
    type Puzzle = crate::puzzle::sized::SizedGrid;
    fn start(&mut self, puzzle: &Self::Puzzle, limit: u32) {
        self.restart(puzzle, limit);
    }
    fn go_on(&mut self, nodes: u64) -> Progress {
        self.resume(nodes)
    }
    fn report(&self) -> (u32, bool, Stats) {
        let a = self.answer();
        (a.count, a.complete, a.stats)
    }
    fn first_solution(&self) -> Option<Self::Puzzle> {
        self.solution()
    }
}

/// Runs a whole search with a total budget of `max_nodes` nodes.
pub fn run(puzzle: &Grid, max_solutions: u32, max_nodes: u64) -> Answer {
    let mut s = Solver::new(puzzle, max_solutions);
    s.resume(max_nodes);
    s.answer()
}

/// One solution of `puzzle`, if it has any.
pub fn solve(puzzle: &Grid) -> Option<Grid> {
    run(puzzle, 1, u64::MAX).solution
}

/// The number of solutions of `puzzle`, counting no further than `limit`.
pub fn count_solutions_up_to(puzzle: &Grid, limit: u32) -> u32 {
    run(puzzle, limit, u64::MAX).count
}

/// True when `puzzle` has exactly one solution.
pub fn is_unique(puzzle: &Grid) -> bool {
    count_solutions_up_to(puzzle, 2) == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLASSIC: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    const CLASSIC_SOLVED: &str =
        "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

    #[test]
    fn solves_the_classic_board() {
        let p = Grid::from_text(CLASSIC).unwrap();
        assert_eq!(solve(&p).unwrap().to_text(), CLASSIC_SOLVED);
        assert!(is_unique(&p));
    }

    #[test]
    fn empty_grid_has_many_solutions() {
        let a = run(&Grid::EMPTY, 5, u64::MAX);
        assert_eq!(a.count, 5);
        assert!(a.complete);
        assert!(a.solution.unwrap().is_valid_solution());
    }

    #[test]
    fn full_grid_is_solved_at_once() {
        let p = Grid::from_text(CLASSIC_SOLVED).unwrap();
        let a = run(&p, 2, u64::MAX);
        assert_eq!(a.count, 1);
        assert_eq!(a.stats.nodes, 1);
        assert_eq!(a.stats.guesses, 0);
    }

    #[test]
    fn conflicting_givens_have_no_solution() {
        let mut p = Grid::EMPTY;
        p.0[0] = 1;
        p.0[1] = 1;
        let a = run(&p, 2, u64::MAX);
        assert_eq!((a.count, a.complete), (0, true));
    }

    #[test]
    fn no_solution_is_complete_with_zero() {
        // Row 0 needs a 9 in its last cell, but column 8 already has one.
        let p = Grid::from_text(&format!("12345678.........9{}", ".".repeat(63))).unwrap();
        let a = run(&p, 1, u64::MAX);
        assert_eq!((a.count, a.complete), (0, true));
    }

    #[test]
    fn budget_pauses_and_resume_finishes_the_same() {
        let p = Grid::from_text(
            "........8..3...4...9..2..6.....79.......612...6.5.2.7...8...5...1.....2.4.5.....3",
        )
        .unwrap();
        let whole = run(&p, 2, u64::MAX);
        let mut s = Solver::new(&p, 2);
        let mut slices = 0;
        while s.resume(3) == Progress::Paused {
            slices += 1;
        }
        assert!(slices > 1);
        assert_eq!(s.answer(), whole);
    }

    const HARD: &str =
        "........8..3...4...9..2..6.....79.......612...6.5.2.7...8...5...1.....2.4.5.....3";

    #[test]
    fn every_rule_set_gives_the_same_answers() {
        let p = Grid::from_text(HARD).unwrap();
        let want = run(&p, 2, u64::MAX);
        assert_eq!(want.count, 1);
        let sol = want.solution.unwrap();
        assert!(sol.is_valid_solution() && p.is_kept_by(&sol));
        for bits in 0..64u32 {
            let rules = Rules {
                row_singles: bits & 1 != 0,
                box_line: bits & 2 != 0,
                naked_singles: bits & 4 != 0,
                hidden_singles_after: if bits & 8 != 0 { 0 } else { u64::MAX },
                branch_by_peers_after: if bits & 32 != 0 { 0 } else { u64::MAX },
                generic: bits & 16 != 0,
            };
            for limit in [1, 2] {
                let mut s = Solver::with_rules(&p, limit, rules);
                assert_eq!(s.resume(u64::MAX), Progress::Done);
                let a = s.answer();
                assert_eq!((a.count, a.solution), (1, Some(sol)), "{rules:?}");
            }
        }
    }

    #[test]
    fn sliced_resume_matches_one_call_for_every_slice_size() {
        let p = Grid::from_text(HARD).unwrap();
        for limit in [1, 2, 5] {
            let whole = run(&p, limit, u64::MAX);
            for slice in [1, 2, 10, 1000] {
                let mut s = Solver::new(&p, limit);
                let mut calls = 1u64;
                while s.resume(slice) == Progress::Paused {
                    calls += 1;
                    assert!(s.answer().stats.nodes <= calls * slice);
                }
                assert_eq!(s.answer(), whole, "limit {limit} slice {slice}");
                // Done is sticky.
                assert_eq!(s.resume(slice), Progress::Done);
                assert_eq!(s.answer(), whole);
            }
        }
    }

    #[test]
    fn many_solutions_are_distinct_and_valid() {
        // Blank the last two rows of a solution: each solution found must keep
        // the givens and the rules.
        let text = format!("{}{}", &CLASSIC_SOLVED[..63], ".".repeat(18));
        let p = Grid::from_text(&text).unwrap();
        let a = run(&p, 100, u64::MAX);
        assert!(a.complete && a.count >= 1);
        let s = a.solution.unwrap();
        assert!(s.is_valid_solution() && p.is_kept_by(&s));
    }

    #[test]
    fn restart_answers_as_a_new_solver_does() {
        let puzzles = [HARD, CLASSIC, CLASSIC_SOLVED, &".".repeat(81)];
        let mut s = Solver::new(&Grid::EMPTY, 1);
        for limit in [1, 2, 3] {
            for text in puzzles {
                let p = Grid::from_text(text).unwrap();
                // Left paused mid-search, then restarted on the next puzzle.
                s.resume(2);
                s.restart(&p, limit);
                s.resume(u64::MAX);
                assert_eq!(s.answer(), run(&p, limit, u64::MAX), "{text} limit {limit}");
            }
        }
    }

    #[test]
    fn restart_without_finds_the_solutions_without_the_digit() {
        let solved = Grid::from_text(CLASSIC_SOLVED).unwrap();
        let mut s = Solver::new(&Grid::EMPTY, 1);
        // Blank cells of a solution, then rule one digit out of one cell:
        // the answer is the union of the searches with each other digit
        // placed there.
        for (blank, cell) in [(40usize, 3usize), (35, 10), (30, 80), (25, 0)] {
            let mut p = solved;
            for k in 0..blank {
                p.0[(k * 37 + 11) % CELLS] = 0;
            }
            p.0[cell] = 0;
            for digit in 1..=9u8 {
                let mut want = 0;
                for other in (1..=9u8).filter(|&w| w != digit) {
                    let mut q = p;
                    q.0[cell] = other;
                    want += count_solutions_up_to(&q, 1_000_000);
                }
                assert!(want < 1_000_000);
                s.restart_without(&p, cell, digit, 1_000_000);
                s.resume(u64::MAX);
                let a = s.answer();
                assert!(a.complete);
                assert_eq!(a.count, want, "blank {blank} cell {cell} digit {digit}");
                if let Some(g) = a.solution {
                    assert!(g.is_valid_solution() && p.is_kept_by(&g) && g.0[cell] != digit);
                }
            }
        }
        // A given: its own digit leaves nothing, another changes nothing.
        s.restart_without(&solved, 5, solved.0[5], 2);
        s.resume(u64::MAX);
        assert_eq!((s.answer().count, s.answer().complete), (0, true));
        let other = solved.0[5] % 9 + 1;
        s.restart_without(&solved, 5, other, 2);
        s.resume(u64::MAX);
        assert_eq!(s.answer().count, 1);
    }

    #[test]
    fn solver_is_a_small_fixed_size_value() {
        assert!(std::mem::size_of::<Solver>() < 12 * 1024);
    }
}
