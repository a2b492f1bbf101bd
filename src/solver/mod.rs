//! The engine: finds a solution, or counts solutions up to a limit, under a
//! work budget. Knows nothing of gRPC.
//!
//! The search is resumable: [`Solver::resume`] runs at most a given number of
//! search nodes and returns, so a caller can check a deadline or yield to
//! other work between slices without threads or syscalls in the hot loop.
//!
//! State (all fixed-size, no heap):
//!
//! ```text
//!   rows[r], cols[c], boxes[b]  9-bit masks of digits already placed (bit d-1 = digit d)
//!   cells[i]                    0 = blank, 1-9 = digit
//!   candidates(i)               !(rows[r] | cols[c] | boxes[b]) & 0x1ff
//! ```
//!
//! Invariant: a digit's bit is set in the three masks of a cell iff the cell
//! holds that digit. Search branches on the blank cell with the fewest
//! candidates (MRV); a cell with one candidate is placed without branching.

use crate::grid::{CELLS, Grid};

const ALL: u16 = 0x1ff;

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

#[derive(Clone, Copy)]
struct Board {
    cells: [u8; CELLS],
    rows: [u16; 9],
    cols: [u16; 9],
    boxes: [u16; 9],
    blanks: u8,
}

#[derive(Clone, Copy)]
struct Frame {
    board: Board,
    cell: u8,
    remaining: u16,
}

const BOX_OF: [u8; CELLS] = {
    let mut t = [0u8; CELLS];
    let mut i = 0;
    while i < CELLS {
        t[i] = ((i / 9) / 3 * 3 + (i % 9) / 3) as u8;
        i += 1;
    }
    t
};

impl Board {
    #[inline]
    fn candidates(&self, i: usize) -> u16 {
        !(self.rows[i / 9] | self.cols[i % 9] | self.boxes[BOX_OF[i] as usize]) & ALL
    }

    #[inline]
    fn place(&mut self, i: usize, bit: u16) {
        self.cells[i] = bit.trailing_zeros() as u8 + 1;
        self.rows[i / 9] |= bit;
        self.cols[i % 9] |= bit;
        self.boxes[BOX_OF[i] as usize] |= bit;
        self.blanks -= 1;
    }

    /// Places forced cells until none is left. Returns the MRV cell and its
    /// candidates, `None` when solved, or `Some((_, 0))` on a contradiction.
    fn propagate(&mut self) -> Option<(usize, u16)> {
        loop {
            if self.blanks == 0 {
                return None;
            }
            let mut best = (0usize, 0u16);
            let mut best_n = 10u32;
            let mut placed = false;
            for i in 0..CELLS {
                if self.cells[i] != 0 {
                    continue;
                }
                let c = self.candidates(i);
                let n = c.count_ones();
                if n == 0 {
                    return Some((i, 0));
                }
                if n == 1 {
                    self.place(i, c);
                    placed = true;
                } else if n < best_n {
                    best_n = n;
                    best = (i, c);
                }
            }
            if !placed {
                return Some(best);
            }
        }
    }
}

/// A search in progress. A fixed-size value: no heap allocation per puzzle or
/// per node.
pub struct Solver {
    stack: [Frame; CELLS + 1],
    depth: usize,
    limit: u32,
    answer: Answer,
    started: bool,
}

impl Solver {
    /// Starts a search of `puzzle` for up to `max_solutions` solutions (at
    /// least 1). Givens that break the rules make a puzzle with no solution.
    pub fn new(puzzle: &Grid, max_solutions: u32) -> Solver {
        let empty = Board {
            cells: [0; CELLS],
            rows: [0; 9],
            cols: [0; 9],
            boxes: [0; 9],
            blanks: CELLS as u8,
        };
        let mut s = Solver {
            stack: [Frame {
                board: empty,
                cell: 0,
                remaining: 0,
            }; CELLS + 1],
            depth: 0,
            limit: max_solutions.max(1),
            answer: Answer {
                solution: None,
                count: 0,
                complete: false,
                stats: Stats::default(),
            },
            started: false,
        };
        let board = &mut s.stack[0].board;
        let mut ok = true;
        for (i, &d) in puzzle.0.iter().enumerate() {
            if d == 0 {
                continue;
            }
            if d > 9 || board.candidates(i) & (1u16 << (d - 1)) == 0 {
                ok = false;
                break;
            }
            board.place(i, 1u16 << (d - 1));
        }
        if !ok {
            s.answer.complete = true;
        }
        s
    }

    /// Runs at most `node_budget` more search nodes.
    pub fn resume(&mut self, node_budget: u64) -> Progress {
        if self.answer.complete {
            return Progress::Done;
        }
        let stop_at = self.answer.stats.nodes.saturating_add(node_budget.max(1));
        // The board being expanded: either the root or a child of the top frame.
        let mut board;
        if !self.started {
            self.started = true;
            board = self.stack[0].board;
        } else {
            match self.next_child() {
                Some(b) => board = b,
                None => return Progress::Done,
            }
        }
        loop {
            self.answer.stats.nodes += 1;
            match board.propagate() {
                None => {
                    self.answer.count += 1;
                    if self.answer.solution.is_none() {
                        self.answer.solution = Some(Grid(board.cells));
                    }
                    if self.answer.count >= self.limit {
                        self.answer.complete = true;
                        return Progress::Done;
                    }
                }
                Some((_, 0)) => {}
                Some((cell, cands)) => {
                    self.answer.stats.guesses += 1;
                    self.stack[self.depth] = Frame {
                        board,
                        cell: cell as u8,
                        remaining: cands,
                    };
                    self.depth += 1;
                }
            }
            if self.answer.stats.nodes >= stop_at {
                return Progress::Paused;
            }
            match self.next_child() {
                Some(b) => board = b,
                None => return Progress::Done,
            }
        }
    }

    /// Pops exhausted frames and returns the board for the next untried
    /// candidate, or `None` (marking the search complete) when none is left.
    fn next_child(&mut self) -> Option<Board> {
        while self.depth > 0 {
            let top = &mut self.stack[self.depth - 1];
            if top.remaining == 0 {
                self.depth -= 1;
                continue;
            }
            let bit = top.remaining & top.remaining.wrapping_neg();
            top.remaining &= !bit;
            let mut b = top.board;
            b.place(top.cell as usize, bit);
            if top.remaining == 0 {
                self.depth -= 1;
            }
            return Some(b);
        }
        self.answer.complete = true;
        None
    }

    /// What the search has found so far.
    pub fn answer(&self) -> Answer {
        self.answer
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
}
