//! The engine for every size: grids of N x N cells, N up to 64, with boxes
//! of any `box_rows` x `box_cols` (see [`crate::puzzle::sized`]). The same
//! contracts as the 9x9 engine: a node budget and a resumable search
//! ([`SizedSolver::resume`] returns [`Progress`]), counting up to a limit,
//! and no allocation per node.
//!
//! ```text
//!  words[0 .. C)          cands[cell]   u64: bit v-1 = value v may go there (0 once placed)
//!  words[C .. C+3N)       done[unit]    u64: values placed in the unit (rows, columns, boxes)
//!  words[C+3N .. 2C+3N)   value[cell]   0 or the value placed
//!  words[2C+3N]           open          cells not placed yet
//! ```
//!
//! Every write below the root goes through `set`, which logs the old word
//! on a trail; a branch point remembers the trail's length, and trying its
//! next value undoes the trail back to it. So the search keeps one board
//! and one trail, both allocated once per solver and size, and a branch
//! costs what the guess changed, not a copy of the board (a 64x64 board is
//! 66 KiB).
//!
//! Propagation at each node, to a fixpoint: naked singles (a cell left one
//! value is queued when its last but one goes), hidden singles (counted per
//! unit with an at-least-once and an at-least-twice mask, which also finds
//! a unit that lost a value), and box-line reasoning (pointing: a value
//! confined to one row or column of a box leaves the rest of that line;
//! claiming: a value confined to one box of a line leaves the rest of that
//! box). Then a look-ahead on the two-valued cells (up to `PROBES` of
//! them; below 16x16 only once a search has guessed 128 times): each value
//! is tried and propagated, then undone; a value that fails forces the
//! other, and otherwise the search branches on the cell whose two sides
//! close the most cells (the product of both). Without a two-valued cell,
//! MRV: a value with two places left in a unit when there is one, else an
//! open cell with the fewest candidates. On the 25x25-hard set (44% clues)
//! the look-ahead cut the search from 4.5M nodes to 135k (probes counted)
//! and the time about 28-fold.
//!
//! A search for one solution at a side of 36 or more restarts: its choices
//! (where a scan for the branching cell starts, which value or place to try
//! next) are random from a fixed seed, and after a number of nodes that
//! follows the Luby sequence it goes back to the root's board and branches
//! again (see `RESTART_SIDE`). When the root leaves 60% of the cells or
//! more open (or less than 50%, where the SAT engine below takes the
//! first turn), its first run ends after at most one node a cell, and
//! after each run a repair search (`solver/anneal.rs`: a full grid whose
//! boxes hold their values, mended by swaps until no row or column repeats
//! one) takes a turn of sixteen times the run's nodes, going on where its
//! last turn stopped; from 50% open, a turn as long as the run. A sparse
//! grid with many solutions is where the tree search fails near its end
//! and repair does not; near the phase transition the tree search finds
//! what repair does not. Prime sides (a box that is a whole row) and
//! Generate's searches never repair. Below 60% open, after each run (and
//! repair's turn) a SAT engine (`solver/cdcl.rs`: the root's board as a
//! formula, one solver call paused between turns) takes a turn of four
//! times the run's nodes below 50% open, one time from 50%, a conflict
//! counting ten: grids about half blank are where a search that learns
//! from its conflicts wins. Counting searches and smaller sides keep the
//! one ordered search, and from a side of 25 give the SAT engine turns
//! too, without restarts: after 5,000 nodes of the tree, the engine
//! (on the root's board) and the tree take turns of the same length, the
//! tree's doubling each time; each counts on its own (the engine excludes
//! each model it finds and searches on), and the count ends when either
//! reaches the limit or has searched everything. A proof of uniqueness
//! is where learning pays most: `--unique` on a 25x25 puzzle of 43% clues
//! took 14.0 s with the tree alone and 1.5 s so; on 36x36 grids of 58%
//! blanks, 21 s and two work limits became 0.4-5.7 s.

use super::anneal::{self, Anneal, Outcome};
use super::cdcl::{Cdcl, Sat};
use super::xorshift::XorShift;
use super::{Progress, Stats};
use crate::puzzle::sized::{Shape, SizedGrid, UnitKind, value_mask};

/// What a sized search found, and whether it finished; the solution is
/// [`SizedSolver::solution`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SizedAnswer {
    /// Solutions found, at most the limit.
    pub count: u32,
    /// True when the search ended on its own (space exhausted or limit
    /// reached); false when the node budget ran out first.
    pub complete: bool,
    /// Work done.
    pub stats: Stats,
}

/// A branch point: the trail's length before the guess and what is left to
/// try. With `value` 0 it branches on a cell (`at` is the cell, `remaining`
/// its values not tried yet); otherwise on where `value` goes in a unit
/// (`at` is the unit, `remaining` the positions in it not tried yet).
#[derive(Clone, Copy)]
struct Frame {
    mark: u32,
    at: u16,
    value: u8,
    remaining: u64,
}

/// How propagation ended.
enum Node {
    Solved,
    Dead,
    /// Branch on the values of a cell.
    Cell(usize),
    /// Branch on the places of `value` in `unit` (positions `at`).
    Place {
        unit: usize,
        value: u8,
        at: u64,
    },
}

/// A contradiction: the board has no solution.
struct Dead;

/// A search in progress over grids of one shape at a time; restarting it on
/// a grid of another shape reallocates its tables, restarting it on one of
/// the same shape writes only its board.
#[derive(Clone)]
pub struct SizedSolver {
    shape: Shape,
    n: usize,
    cells: usize,
    /// The cells of each unit: rows, then columns, then boxes.
    units: Vec<u16>,
    /// The three units of each cell.
    cell_units: Vec<[u16; 3]>,
    words: Vec<u64>,
    trail: Vec<(u32, u64)>,
    frames: Vec<Frame>,
    queue: Vec<(u16, u8)>,
    /// Units (bit u of 3N) whose cells changed since hidden singles last
    /// looked at them; the others cannot hold a new one.
    hs_dirty: [u64; 3],
    /// The same for box-line reasoning (a box for pointing, a row or
    /// column for claiming).
    bl_dirty: [u64; 3],
    solution: Vec<u8>,
    has_solution: bool,
    limit: u32,
    answer: SizedAnswer,
    started: bool,
    /// A look-ahead is under way: log every write, at the root too.
    probing: bool,
    /// Restarts (see [`RESTART_SIDE`]): on for a search of one solution
    /// at a side of 36 or more.
    shake: bool,
    /// The random state of the choices a restarting search varies.
    rng: XorShift,
    /// Runs ended by a restart so far, and the nodes of the current run.
    runs: u32,
    run_nodes: u64,
    /// The repair search a restarting search runs between its tree runs
    /// (allocated for sides from [`RESTART_SIDE`] only), and the nodes its
    /// current turn has left.
    repair: Anneal,
    repair_left: u64,
    /// The node count when the current tree run began.
    run_from: u64,
    /// Whether this search may give the repair search turns (see
    /// [`SizedSolver::restart_without_repair`]).
    repair_on: bool,
    /// The repair search's turn after a tree run, as a multiple of the
    /// run's nodes (0: no repair turns), set by the root's open cells;
    /// [`REPAIR_SHARE`] on a sparse grid, whose first run is cut short.
    share: u64,
    /// The SAT engine a restarting search near the phase transition gives
    /// turns (see `solver/cdcl.rs`), the nodes its current turn has left,
    /// and its turn after a tree run as a multiple of the run's nodes (0:
    /// no turns in this search, or none any more).
    cdcl: Cdcl,
    cdcl_left: u64,
    cdcl_share: u64,
    /// A search that does not restart (a count, or a side below
    /// [`RESTART_SIDE`]) from [`LEARN_SIDE`] up: its tree search and the SAT
    /// engine take turns (see [`LEARN_UNIT`]), each counting on its own.
    learn: bool,
    /// The tree's first turn in such a search ([`LEARN_UNIT`]; shorter in
    /// tests, so that small searches take turns).
    learn_unit: u64,
    /// The root's board for the engine's formula in such a search (the
    /// tree is elsewhere when its first turn comes): candidates, then
    /// values, of each cell; `rooted` once it is made.
    root: Vec<u64>,
    rooted: bool,
    /// Solutions the tree search and the SAT engine have found, each its
    /// own (the answer counts the larger: each is a lower bound, and the
    /// one that finishes counted them all).
    tree_count: u32,
    cdcl_count: u32,
    /// The most bytes the solver may hold ([`SizedSolver::set_memory_cap`]).
    memory_cap: usize,
}

impl SizedSolver {
    /// Starts a search of `puzzle` for up to `max_solutions` solutions (at
    /// least 1). Givens that break the rules make a puzzle with no solution.
    pub fn new(puzzle: &SizedGrid, max_solutions: u32) -> SizedSolver {
        let mut s = SizedSolver {
            shape: puzzle.shape(),
            n: 0,
            cells: 0,
            units: Vec::new(),
            cell_units: Vec::new(),
            words: Vec::new(),
            trail: Vec::new(),
            frames: Vec::new(),
            queue: Vec::new(),
            hs_dirty: [0; 3],
            bl_dirty: [0; 3],
            solution: Vec::new(),
            has_solution: false,
            limit: 1,
            answer: SizedAnswer::default(),
            started: false,
            probing: false,
            shake: false,
            rng: XorShift::default(),
            runs: 0,
            run_nodes: 0,
            repair: Anneal::default(),
            repair_left: 0,
            run_from: 0,
            repair_on: true,
            share: 0,
            cdcl: Cdcl::default(),
            cdcl_left: 0,
            cdcl_share: 0,
            learn: false,
            learn_unit: LEARN_UNIT,
            root: Vec::new(),
            rooted: false,
            tree_count: 0,
            cdcl_count: 0,
            memory_cap: DEFAULT_MEMORY_CAP,
        };
        s.reshape(puzzle.shape());
        s.restart(puzzle, max_solutions);
        s
    }

    /// The shape this solver is laid out for.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    fn reshape(&mut self, shape: Shape) {
        let n = shape.side();
        let cells = shape.cells();
        self.shape = shape;
        self.n = n;
        self.cells = cells;
        self.units.clear();
        for kind in UnitKind::ALL {
            for u in 0..n {
                self.units
                    .extend(shape.unit_cells(kind, u).map(|c| c as u16));
            }
        }
        self.cell_units = (0..cells)
            .map(|c| {
                let (r, col) = (c / n, c % n);
                [
                    r as u16,
                    (n + col) as u16,
                    (2 * n + shape.box_of(r, col)) as u16,
                ]
            })
            .collect();
        self.words.clear();
        self.words.resize(2 * cells + 3 * n + 1, 0);
        self.trail.clear();
        self.trail.reserve(trail_reserve(cells));
        self.frames.clear();
        self.frames.reserve(cells + 1);
        self.queue.clear();
        self.queue.reserve(2 * cells);
        self.solution.clear();
        self.solution.resize(cells, 0);
        self.root = Vec::new();
        if Self::counts_take_turns(shape) {
            self.root.resize(ROOT_BYTES_PER_CELL / 8 * cells, 0);
        }
        self.repair = if repairs(shape) {
            Anneal::new(shape)
        } else {
            Anneal::default()
        };
        // From a larger shape: give back what this one does not use.
        self.units.shrink_to_fit();
        self.words.shrink_to_fit();
        self.trail.shrink_to(trail_reserve(cells));
        self.frames.shrink_to(cells + 1);
        self.queue.shrink_to(2 * cells);
        self.solution.shrink_to_fit();
    }

    /// About what a solver for grids of `cells` cells allocates when it
    /// takes that shape: its unit tables, candidate words, trail, branch
    /// frames, queue and solution (117 bytes a cell, rounded up, and a few
    /// hundred for the smallest grids' tables), from a side of 25 the copy
    /// of the root's board for the SAT engine (16 bytes a cell, with the
    /// engine), and from a side of 36 the repair search's tables (16 bytes
    /// a cell). The trail can grow past its reservation on a long path
    /// ([`SizedSolver::heap_bytes`]); this is what a solver holds between
    /// searches.
    pub fn footprint(cells: usize) -> usize {
        let repair = if cells >= RESTART_SIDE * RESTART_SIDE {
            cells.saturating_mul(anneal::BYTES_PER_CELL)
        } else {
            0
        };
        let root = if Cdcl::AVAILABLE && cells >= LEARN_SIDE * LEARN_SIDE {
            cells.saturating_mul(ROOT_BYTES_PER_CELL)
        } else {
            0
        };
        cells
            .saturating_mul(128)
            .saturating_add(256)
            .saturating_add(repair)
            .saturating_add(root)
    }

    /// The bytes this solver holds on the heap now: its tables, board,
    /// trail, frames, queue and solution, at their capacities. The trail
    /// grows with the search's depth (a word logged per change on the
    /// current path, up to about N + 6 per cell), so a deep search holds
    /// more than [`SizedSolver::footprint`]; [`SizedSolver::restart`] gives
    /// such a trail back.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.units.capacity() * size_of::<u16>()
            + self.cell_units.capacity() * size_of::<[u16; 3]>()
            + self.words.capacity() * size_of::<u64>()
            + self.trail.capacity() * size_of::<(u32, u64)>()
            + self.frames.capacity() * size_of::<Frame>()
            + self.queue.capacity() * size_of::<(u16, u8)>()
            + self.solution.capacity()
            + self.root.capacity() * size_of::<u64>()
            + self.repair.heap_bytes()
            + self.cdcl.heap_bytes()
    }

    /// Caps this solver's [`SizedSolver::heap_bytes`] at `bytes` where it
    /// can: the tree and repair searches hold what their shape needs, and
    /// the SAT engine of a search near the phase transition takes at most
    /// the rest (by its estimate): it starts only when its formula fits,
    /// and is dropped (the other searches go on) when what it learned would
    /// pass the cap. [`DEFAULT_MEMORY_CAP`] unless set; kept across
    /// restarts, so a caller whose budget changes sets it before each call.
    pub fn set_memory_cap(&mut self, bytes: usize) {
        self.memory_cap = bytes;
        if self.heap_bytes() > bytes {
            self.drop_cdcl();
        }
    }

    /// Frees what the last search took beyond the solver's tables (the
    /// SAT engine and what it learned) and sets the memory cap back to
    /// [`DEFAULT_MEMORY_CAP`]: for a solver kept between searches, whose
    /// next user sets its own cap. The search cannot go on after it
    /// without the engine; [`SizedSolver::restart`] starts the next.
    pub fn release(&mut self) {
        self.drop_cdcl();
        self.memory_cap = DEFAULT_MEMORY_CAP;
    }

    /// The memory cap ([`SizedSolver::set_memory_cap`]).
    pub fn memory_cap(&self) -> usize {
        self.memory_cap
    }

    /// What the SAT engine may take under the memory cap.
    fn cdcl_room(&self) -> usize {
        let others = self.heap_bytes() - self.cdcl.heap_bytes();
        self.memory_cap.saturating_sub(others)
    }

    /// Starts a new search in this solver, as [`SizedSolver::new`] would,
    /// reusing its memory when the shape is the same.
    pub fn restart(&mut self, puzzle: &SizedGrid, max_solutions: u32) {
        if puzzle.shape() != self.shape || self.words.is_empty() {
            self.reshape(puzzle.shape());
        }
        let (n, cells) = (self.n, self.cells);
        let full = value_mask(n);
        self.words[..cells].fill(full);
        self.words[cells..].fill(0);
        self.words[2 * cells + 3 * n] = cells as u64;
        self.trail.clear();
        if self.trail.capacity() > 2 * trail_reserve(cells) {
            // A deep search left a long trail: back to the reservation, so a
            // solver between searches holds its footprint.
            self.trail = Vec::with_capacity(trail_reserve(cells));
        }
        self.frames.clear();
        self.queue.clear();
        // The root looks at every unit once.
        self.hs_dirty = units_mask(3 * n);
        self.bl_dirty = self.hs_dirty;
        let mut ok = true;
        for (i, &v) in puzzle.values().iter().enumerate() {
            if usize::from(v) > n {
                ok = false;
            } else if v != 0 {
                self.queue.push((i as u16, v));
            }
        }
        self.limit = max_solutions.max(1);
        self.has_solution = false;
        self.answer = SizedAnswer {
            count: 0,
            complete: !ok,
            stats: Stats::default(),
        };
        self.started = false;
        self.shake = self.limit == 1 && n >= RESTART_SIDE;
        self.rng = XorShift::new(SEED);
        self.runs = 0;
        self.run_nodes = 0;
        self.repair.clear();
        self.repair_left = 0;
        self.run_from = 0;
        self.repair_on = true;
        self.share = 0;
        self.cdcl.clear();
        self.cdcl_left = 0;
        self.cdcl_share = 0;
        self.learn = !self.shake && !self.root.is_empty();
        self.rooted = false;
        self.tree_count = 0;
        self.cdcl_count = 0;
    }

    /// Starts a search as [`SizedSolver::restart`] does, but one that
    /// gives no other search a turn (repair, the SAT engine): the search
    /// as it was before they came, for a caller that needs the same
    /// answer as then (Generate's solution grid, so a seed names the same
    /// puzzles).
    pub fn restart_without_repair(&mut self, puzzle: &SizedGrid, max_solutions: u32) {
        self.restart(puzzle, max_solutions);
        self.repair_on = false;
        self.learn = false;
    }

    /// Where a scan for the cell to branch on starts: the first cell, or a
    /// random one in a restarting search.
    fn scan_from(&mut self) -> usize {
        if self.shake {
            self.rng.below(self.cells)
        } else {
            0
        }
    }

    /// Whether the current run has used its share of nodes: the Luby
    /// sequence (1, 1, 2, 1, 1, 2, 4, ...) times [`RESTART_UNIT`], so the
    /// runs grow without end and a search that restarts still ends.
    fn run_over(&self) -> bool {
        self.shake
            && !self.frames.is_empty()
            && (self.run_nodes >= RESTART_UNIT.saturating_mul(luby(self.runs + 1))
                || (self.runs == 0
                    && (self.sparse() || self.cdcl_first())
                    && self.answer.stats.nodes >= (FIRST_RUN_PER_CELL * self.cells) as u64))
    }

    /// Whether the SAT engine leads this search: the root left less than
    /// [`MIXED_OPEN_PERCENT`] of the cells open, or less than
    /// [`REPAIR_OPEN_PERCENT`] with a formula under [`ENGINE_LED_VARS`]
    /// variables. The engine then takes the turns repair has elsewhere:
    /// its first turn comes as early as repair's on a sparse grid. There the
    /// look-ahead can spend a hundred probes on each branch, so a first
    /// run of [`RESTART_UNIT`] branches was the whole search (49x49 at 42%
    /// blanks: 181,000 nodes, 3 s, where the engine needs 340 conflicts).
    fn cdcl_first(&self) -> bool {
        self.cdcl_share == CDCL_SHARE
    }

    /// Whether this search gives the SAT engine turns.
    fn cdcl_on(&self) -> bool {
        self.cdcl_share > 0
    }

    /// Whether the root left at least [`REPAIR_OPEN_PERCENT`] of the cells
    /// open, so the repair search takes the larger share.
    fn sparse(&self) -> bool {
        self.share == REPAIR_SHARE
    }

    /// Ends the current run: back to the root's board (what the root
    /// propagated stays), to branch there again with other choices.
    fn restart_run(&mut self) {
        let mark = self.frames[0].mark as usize;
        self.frames.clear();
        self.back_to(mark);
        self.runs += 1;
        // The repair search's turn (see REPAIR_SHARE).
        if self.share > 0 && !self.repair.ready() {
            // Out of `self` for the call, so it can read the root's board.
            let seed = self.rng.next();
            let mut repair = std::mem::take(&mut self.repair);
            repair.start(|c| self.placed(c), |c| self.candidates(c), seed);
            self.repair = repair;
        }
        let ran = self.answer.stats.nodes - self.run_from;
        if self.share > 0 && self.repair.ready() {
            self.repair_left = ran.saturating_mul(self.share);
        }
        if self.cdcl_on() {
            // Whole conflicts, so a turn is the same however it is sliced.
            self.cdcl_left = ran.saturating_mul(self.cdcl_share) / CONFLICT_NODES * CONFLICT_NODES;
        }
        self.run_nodes = 0;
    }

    /// The turns of the other searches after a tree run (repair, then the
    /// SAT engine), within the budget (`stop_at` nodes): Some when the
    /// call should return (solved, proved unsolvable, or the budget ran out
    /// with a turn unfinished).
    fn other_turns(&mut self, stop_at: u64) -> Option<Progress> {
        if let Some(p) = self.repair_turn(stop_at) {
            return Some(p);
        }
        let p = self.cdcl_turn(stop_at);
        self.run_from = self.answer.stats.nodes;
        p
    }

    /// Gives the SAT engine the rest of its turn, within the budget
    /// (`stop_at` nodes), a conflict counted as [`CONFLICT_NODES`] nodes:
    /// whole conflicts, at least one (so a call may end up to nine nodes
    /// past `stop_at`); a turn is a whole number of conflicts, so the
    /// engine runs the same conflicts however the turn is sliced.
    fn cdcl_turn(&mut self, stop_at: u64) -> Option<Progress> {
        while self.cdcl_left > 0 {
            if self.answer.stats.nodes >= stop_at {
                return Some(Progress::Paused);
            }
            if !self.cdcl.ready() {
                // The root's board: the board itself between tree runs, or
                // the copy a search that takes turns made there.
                let room = self.cdcl_room();
                let mut cdcl = std::mem::take(&mut self.cdcl);
                let cells = self.cells;
                let started = if self.learn {
                    let root = &self.root;
                    cdcl.start(self.shape, |c| root[cells + c] as u8, |c| root[c], room)
                } else {
                    cdcl.start(self.shape, |c| self.placed(c), |c| self.candidates(c), room)
                };
                self.cdcl = cdcl;
                if !started {
                    self.drop_cdcl();
                    break;
                }
            }
            let slice =
                (self.cdcl_left.min(stop_at - self.answer.stats.nodes) / CONFLICT_NODES).max(1);
            let (sat, made) = self.cdcl.run(slice);
            let nodes = made * CONFLICT_NODES;
            self.answer.stats.nodes += nodes;
            self.cdcl_left = self.cdcl_left.saturating_sub(nodes);
            match sat {
                Sat::Solved => {
                    // The root's board, its open cells filled by the model.
                    let mut values: Vec<u8> = if self.learn {
                        self.root[self.cells..].iter().map(|&v| v as u8).collect()
                    } else {
                        (0..self.cells).map(|c| self.placed(c)).collect()
                    };
                    self.cdcl.fill(&mut values);
                    if let Ok(grid) = SizedGrid::from_values(self.shape, values)
                        && grid.is_valid_solution()
                    {
                        if !self.has_solution {
                            self.solution.copy_from_slice(grid.values());
                        }
                        self.has_solution = true;
                        self.cdcl_count += 1;
                        self.answer.count = self.answer.count.max(self.cdcl_count);
                        if self.cdcl_count >= self.limit {
                            self.cdcl_left = 0;
                            self.answer.complete = true;
                            return Some(Progress::Done);
                        }
                        // A count goes on: the next model is another. A
                        // model costs a conflict's nodes at least (a call
                        // may find one without a conflict), and its clause
                        // is charged to the engine's memory.
                        self.answer.stats.nodes += CONFLICT_NODES;
                        self.cdcl_left = self.cdcl_left.saturating_sub(CONFLICT_NODES);
                        self.cdcl.exclude_model();
                        if self.heap_bytes() > self.memory_cap {
                            self.drop_cdcl();
                        }
                        continue;
                    }
                    // Never an answer that breaks a rule: the other
                    // searches go on alone.
                    debug_assert!(false, "the SAT model breaks a rule");
                    self.drop_cdcl();
                }
                Sat::NoSolution => {
                    // No model but those excluded: the engine counted them
                    // all.
                    self.cdcl_left = 0;
                    self.answer.count = self.cdcl_count;
                    self.answer.complete = true;
                    return Some(Progress::Done);
                }
                Sat::Paused => {
                    if self.heap_bytes() > self.memory_cap {
                        self.drop_cdcl();
                    }
                }
                Sat::Lost => self.drop_cdcl(),
            }
        }
        None
    }

    /// Ends the SAT engine's turns in this search and frees it.
    fn drop_cdcl(&mut self) {
        self.cdcl.clear();
        self.cdcl_share = 0;
        self.cdcl_left = 0;
    }

    /// Gives the repair search the rest of its turn, within the budget
    /// (`stop_at` nodes): Some when the call should return (solved, or the
    /// budget ran out with the turn unfinished).
    fn repair_turn(&mut self, stop_at: u64) -> Option<Progress> {
        while self.repair_left > 0 {
            if self.answer.stats.nodes >= stop_at {
                return Some(Progress::Paused);
            }
            self.answer.stats.nodes += 1;
            self.repair_left -= 1;
            if self.repair.run(anneal::MOVES_PER_NODE) == Outcome::Solved {
                self.repair_left = 0;
                self.answer.count = 1;
                self.has_solution = true;
                self.solution.copy_from_slice(self.repair.values());
                self.answer.complete = true;
                return Some(Progress::Done);
            }
        }
        None
    }

    /// Whether a count of `shape` takes turns with the SAT engine: from a
    /// side of 25, with the engine built in (the `cdcl` feature).
    pub fn counts_take_turns(shape: Shape) -> bool {
        Cdcl::AVAILABLE && shape.side() >= LEARN_SIDE
    }

    /// Runs at most `node_budget` more search nodes (at least 1).
    pub fn resume(&mut self, node_budget: u64) -> Progress {
        if self.answer.complete {
            return Progress::Done;
        }
        let progress = self.search(node_budget);
        if progress == Progress::Done && self.cdcl.ready() {
            // A finished search frees the SAT engine now (its thread ends
            // and gives back the solver's memory), not in the next search.
            self.drop_cdcl();
        }
        progress
    }

    /// [`SizedSolver::resume`]'s search.
    fn search(&mut self, node_budget: u64) -> Progress {
        let stop_at = self.answer.stats.nodes.saturating_add(node_budget.max(1));
        if !self.started {
            self.started = true;
        } else if self.repair_left > 0 || self.cdcl_left > 0 {
            // Paused in another search's turn: the tree search goes on
            // from the root after it.
            if let Some(p) = self.other_turns(stop_at) {
                return p;
            }
        } else if self.run_over() {
            self.restart_run();
            if let Some(p) = self.other_turns(stop_at) {
                return p;
            }
        } else if !self.next_child() {
            return Progress::Done;
        }
        loop {
            self.answer.stats.nodes += 1;
            self.run_nodes += 1;
            match self.propagate() {
                Node::Solved => {
                    self.tree_count += 1;
                    self.answer.count = self.answer.count.max(self.tree_count);
                    if !self.has_solution {
                        self.has_solution = true;
                        let base = self.cells + 3 * self.n;
                        for (out, &w) in self
                            .solution
                            .iter_mut()
                            .zip(&self.words[base..base + self.cells])
                        {
                            *out = w as u8;
                        }
                    }
                    if self.tree_count >= self.limit {
                        self.answer.complete = true;
                        return Progress::Done;
                    }
                }
                Node::Dead => {}
                Node::Cell(cell) => {
                    let remaining = self.words[cell];
                    self.branch(cell, 0, remaining);
                }
                Node::Place { unit, value, at } => self.branch(unit, value, at),
            }
            if self.answer.stats.nodes >= stop_at {
                return Progress::Paused;
            }
            if self.run_over() {
                self.restart_run();
                if let Some(p) = self.other_turns(stop_at) {
                    return p;
                }
                continue;
            }
            if !self.next_child() {
                return Progress::Done;
            }
            if self.learn_turn_due() {
                // The tree goes on from this child after the engine's turn.
                self.runs += 1;
                let ran = self.answer.stats.nodes - self.run_from;
                self.cdcl_left =
                    ran.saturating_mul(self.cdcl_share) / CONFLICT_NODES * CONFLICT_NODES;
                if let Some(p) = self.other_turns(stop_at) {
                    return p;
                }
            }
        }
    }

    /// Whether the tree search of a search that takes turns (see
    /// [`LEARN_UNIT`]) has had its turn: [`LEARN_UNIT`] nodes, doubling
    /// turn by turn.
    fn learn_turn_due(&self) -> bool {
        self.learn
            && self.cdcl_on()
            && self.answer.stats.nodes - self.run_from >= self.learn_unit << self.runs.min(24)
    }

    /// Opens a branch point (see [`Frame`]).
    fn branch(&mut self, at: usize, value: u8, remaining: u64) {
        if self.frames.is_empty() && self.shake && self.repair_on && self.runs == 0 {
            // Decided once: a dropped engine stays dropped.
            let open = self.words[2 * self.cells + 3 * self.n] as usize;
            self.cdcl_share = if !Cdcl::AVAILABLE {
                0
            } else if open * 100 < MIXED_OPEN_PERCENT * self.cells {
                CDCL_SHARE
            } else if open * 100 < REPAIR_OPEN_PERCENT * self.cells {
                // The engine's formula has a variable for each candidate
                // of an open cell.
                let vars: usize = (0..self.cells)
                    .filter(|&c| self.placed(c) == 0)
                    .map(|c| self.candidates(c).count_ones() as usize)
                    .sum();
                if vars < ENGINE_LED_VARS {
                    CDCL_SHARE
                } else {
                    CDCL_MIXED_SHARE
                }
            } else {
                0
            };
        }
        if self.frames.is_empty() && self.shake && self.repair_on && repairs(self.shape) {
            // The root's board: how much it left open decides the repair
            // turns (none where the engine leads, while it runs).
            let open = self.words[2 * self.cells + 3 * self.n] as usize;
            self.share = if open * 100 >= REPAIR_OPEN_PERCENT * self.cells {
                REPAIR_SHARE
            } else if open * 100 >= MIXED_OPEN_PERCENT * self.cells && !self.cdcl_first() {
                1
            } else {
                0
            };
        }
        if self.learn && !self.rooted {
            // The root's board, for the engine's formula later.
            let (cells, values) = (self.cells, self.cells + 3 * self.n);
            self.root[..cells].copy_from_slice(&self.words[..cells]);
            self.root[cells..].copy_from_slice(&self.words[values..values + cells]);
            self.rooted = true;
            self.cdcl_share = LEARN_SHARE;
            self.run_from = self.answer.stats.nodes;
        }
        if remaining & (remaining - 1) != 0 {
            self.answer.stats.guesses += 1;
        }
        self.frames.push(Frame {
            mark: self.trail.len() as u32,
            at: at as u16,
            value,
            remaining,
        });
    }

    /// Undoes the board to the top branch point and queues its next
    /// placement, or returns false (marking the search complete) when none
    /// is left.
    fn next_child(&mut self) -> bool {
        let Some(&Frame { remaining, .. }) = self.frames.last() else {
            self.answer.complete = true;
            return false;
        };
        let mut pick = remaining;
        if self.shake {
            // A random one of the values (or places) left.
            for _ in 0..self.rng.below(remaining.count_ones() as usize) {
                pick &= pick - 1;
            }
        }
        let k = pick.trailing_zeros() as usize;
        let f = self.frames.last_mut().expect("a frame");
        f.remaining &= !(1u64 << k);
        let (mark, last) = (f.mark as usize, f.remaining == 0);
        let (cell, v) = if f.value == 0 {
            (f.at, k as u8 + 1)
        } else {
            (self.units[usize::from(f.at) * self.n + k], f.value)
        };
        if last {
            self.frames.pop();
        }
        self.back_to(mark);
        self.queue.push((cell, v));
        true
    }

    /// Undoes the board to trail length `mark`, a point propagation left
    /// at its fixpoint: no unit has anything new, and nothing is queued.
    fn back_to(&mut self, mark: usize) {
        while self.trail.len() > mark {
            if let Some((i, old)) = self.trail.pop() {
                self.words[i as usize] = old;
            }
        }
        self.hs_dirty = [0; 3];
        self.bl_dirty = [0; 3];
        self.queue.clear();
    }

    /// What the search has found so far.
    pub fn answer(&self) -> SizedAnswer {
        self.answer
    }

    /// The candidates of `cell` on the board as it stands (0 once placed):
    /// after a first [`SizedSolver::resume`] of one node that paused, those
    /// the root's propagation left.
    pub fn candidates(&self, cell: usize) -> u64 {
        if cell < self.cells {
            self.words[cell]
        } else {
            0
        }
    }

    /// The value placed in `cell` on the board as it stands, 0 if open.
    pub fn placed(&self, cell: usize) -> u8 {
        if cell < self.cells {
            self.value_of(cell) as u8
        } else {
            0
        }
    }

    /// The first solution found, if any.
    pub fn solution(&self) -> Option<SizedGrid> {
        if !self.has_solution {
            return None;
        }
        SizedGrid::from_values(self.shape, self.solution.clone()).ok()
    }

    /// Writes word `i`, logging its old value unless at the root (which is
    /// never undone).
    #[inline(always)]
    fn set(&mut self, i: usize, w: u64) {
        if self.probing || !self.frames.is_empty() {
            self.trail.push((i as u32, self.words[i]));
        }
        self.words[i] = w;
    }

    /// Marks the three units of `cell` as changed.
    #[inline(always)]
    fn touch(&mut self, cell: usize) {
        for u in self.cell_units[cell] {
            let (w, b) = (usize::from(u) >> 6, 1u64 << (u & 63));
            self.hs_dirty[w] |= b;
            self.bl_dirty[w] |= b;
        }
    }

    #[inline(always)]
    fn value_of(&self, cell: usize) -> u64 {
        self.words[self.cells + 3 * self.n + cell]
    }

    /// Removes `mask` from the candidates of open cell `cell`; queues it
    /// when one value is left.
    #[inline(always)]
    fn eliminate(&mut self, cell: usize, mask: u64) -> Result<bool, Dead> {
        let m = self.words[cell];
        if m & mask == 0 {
            return Ok(false);
        }
        let left = m & !mask;
        if left == 0 {
            return Err(Dead);
        }
        self.set(cell, left);
        self.touch(cell);
        if left & (left - 1) == 0 {
            self.queue
                .push((cell as u16, left.trailing_zeros() as u8 + 1));
        }
        Ok(true)
    }

    /// Places value `v` in `cell` and removes it from the cell's peers.
    fn place(&mut self, cell: usize, v: u8) -> Result<(), Dead> {
        let placed = self.value_of(cell);
        if placed != 0 {
            return if placed == u64::from(v) {
                Ok(())
            } else {
                Err(Dead)
            };
        }
        let bit = 1u64 << (v - 1);
        if self.words[cell] & bit == 0 {
            return Err(Dead);
        }
        let (cells, n) = (self.cells, self.n);
        let units = self.cell_units[cell];
        for &u in &units {
            let i = cells + usize::from(u);
            let done = self.words[i];
            if done & bit != 0 {
                return Err(Dead);
            }
            self.set(i, done | bit);
        }
        self.set(cells + 3 * n + cell, u64::from(v));
        self.set(cell, 0);
        self.touch(cell);
        let open = 2 * cells + 3 * n;
        let left = self.words[open] - 1;
        self.set(open, left);
        for &u in &units {
            let start = usize::from(u) * n;
            for k in 0..n {
                let p = usize::from(self.units[start + k]);
                self.eliminate(p, bit)?;
            }
        }
        Ok(())
    }

    /// Places everything queued, and what that queues in turn.
    fn drain(&mut self) -> Result<(), Dead> {
        while let Some((cell, v)) = self.queue.pop() {
            self.place(usize::from(cell), v)?;
        }
        Ok(())
    }

    /// Hidden singles in every unit, queued; a unit where an unplaced value
    /// has no cell left is a contradiction. True when any was queued.
    fn hidden_singles(&mut self) -> Result<bool, Dead> {
        let (n, cells) = (self.n, self.cells);
        let full = value_mask(n);
        let mut found = false;
        let dirty = std::mem::take(&mut self.hs_dirty);
        for u in Units(dirty) {
            let done = self.words[cells + u];
            if done == full {
                continue;
            }
            let (mut once, mut twice) = (0u64, 0u64);
            let unit = &self.units[u * n..(u + 1) * n];
            for &c in unit {
                let m = self.words[usize::from(c)];
                twice |= once & m;
                once |= m;
            }
            let need = full & !done;
            if need & !once != 0 {
                return Err(Dead);
            }
            let mut single = need & !twice;
            while single != 0 {
                let bit = single & single.wrapping_neg();
                single ^= bit;
                if let Some(&c) = unit
                    .iter()
                    .find(|&&c| self.words[usize::from(c)] & bit != 0)
                {
                    self.queue.push((c, bit.trailing_zeros() as u8 + 1));
                    found = true;
                }
            }
        }
        Ok(found)
    }

    /// Pointing and claiming between every box and the rows and columns
    /// through it. True when a candidate went.
    fn box_line(&mut self) -> Result<bool, Dead> {
        let (n, br, bc) = (self.n, self.shape.box_rows(), self.shape.box_cols());
        let stacks = n / bc;
        let mut changed = false;
        let mut seg = [0u64; 64];
        let dirty = std::mem::take(&mut self.bl_dirty);
        for b in Units(dirty).skip_while(|&u| u < 2 * n).map(|u| u - 2 * n) {
            let (r0, c0) = (b / stacks * br, b % stacks * bc);
            // Pointing along rows: the box's row segments.
            let (mut once, mut twice) = (0u64, 0u64);
            for (i, s) in seg.iter_mut().enumerate().take(br) {
                let row = (r0 + i) * n + c0;
                *s = self.words[row..row + bc].iter().fold(0, |a, &m| a | m);
                twice |= once & *s;
                once |= *s;
            }
            for (i, &part) in seg.iter().enumerate().take(br) {
                let only = part & !twice;
                if only != 0 {
                    let row = (r0 + i) * n;
                    for c in (0..c0).chain(c0 + bc..n) {
                        changed |= self.eliminate(row + c, only)?;
                    }
                }
            }
            // Pointing along columns: the box's column segments.
            let (mut once, mut twice) = (0u64, 0u64);
            for (j, s) in seg.iter_mut().enumerate().take(bc) {
                *s = (0..br).fold(0, |a, i| a | self.words[(r0 + i) * n + c0 + j]);
                twice |= once & *s;
                once |= *s;
            }
            for (j, &part) in seg.iter().enumerate().take(bc) {
                let only = part & !twice;
                if only != 0 {
                    for r in (0..r0).chain(r0 + br..n) {
                        changed |= self.eliminate(r * n + c0 + j, only)?;
                    }
                }
            }
        }
        // Claiming from rows: a row's segments, one per box it crosses.
        for r in Units(dirty).take_while(|&u| u < n) {
            let (mut once, mut twice) = (0u64, 0u64);
            for (s, out) in seg.iter_mut().enumerate().take(stacks) {
                let at = r * n + s * bc;
                *out = self.words[at..at + bc].iter().fold(0, |a, &m| a | m);
                twice |= once & *out;
                once |= *out;
            }
            for (s, &part) in seg.iter().enumerate().take(stacks) {
                let only = part & !twice;
                if only != 0 {
                    let r0 = r / br * br;
                    for rr in (r0..r0 + br).filter(|&rr| rr != r) {
                        for c in s * bc..(s + 1) * bc {
                            changed |= self.eliminate(rr * n + c, only)?;
                        }
                    }
                }
            }
        }
        // Claiming from columns.
        let bands = n / br;
        for c in Units(dirty)
            .skip_while(|&u| u < n)
            .take_while(|&u| u < 2 * n)
            .map(|u| u - n)
        {
            let (mut once, mut twice) = (0u64, 0u64);
            for (t, out) in seg.iter_mut().enumerate().take(bands) {
                *out = (0..br).fold(0, |a, i| a | self.words[(t * br + i) * n + c]);
                twice |= once & *out;
                once |= *out;
            }
            for (t, &part) in seg.iter().enumerate().take(bands) {
                let only = part & !twice;
                if only != 0 {
                    let c0 = c / bc * bc;
                    for r in t * br..(t + 1) * br {
                        for cc in (c0..c0 + bc).filter(|&cc| cc != c) {
                            changed |= self.eliminate(r * n + cc, only)?;
                        }
                    }
                }
            }
        }
        Ok(changed)
    }

    /// Propagates the queued placements to a fixpoint: true when the grid
    /// is full.
    fn fixpoint(&mut self) -> Result<bool, Dead> {
        let open = 2 * self.cells + 3 * self.n;
        loop {
            self.drain()?;
            if self.words[open] == 0 {
                return Ok(true);
            }
            if self.hidden_singles()? || self.box_line()? || !self.queue.is_empty() {
                continue;
            }
            return Ok(false);
        }
    }

    /// Tries `v` in `cell` and propagates, then undoes it: the cells it
    /// left open, or None when it leads to a contradiction.
    fn probe(&mut self, cell: usize, v: u8) -> Option<u64> {
        let mark = self.trail.len();
        self.probing = true;
        self.queue.clear();
        self.queue.push((cell as u16, v));
        let out = match self.fixpoint() {
            Ok(_) => Some(self.words[2 * self.cells + 3 * self.n]),
            Err(Dead) => None,
        };
        self.probing = false;
        self.back_to(mark);
        out
    }

    /// Propagates the queued placements to a fixpoint and picks the cell to
    /// branch on.
    fn propagate(&mut self) -> Node {
        let open = 2 * self.cells + 3 * self.n;
        'fix: loop {
            match self.fixpoint() {
                Err(Dead) => return Node::Dead,
                Ok(true) => return Node::Solved,
                Ok(false) => {}
            }
            if self.answer.stats.guesses < probe_after(self.n) {
                break;
            }
            // Look ahead on up to PROBES two-valued cells: a value that
            // fails forces the other; otherwise branch where both sides
            // close the most cells. Each probe counts as a node of the
            // budget.
            let left = self.words[open];
            let mut tried = 0;
            let mut best = usize::MAX;
            let mut best_score = 0u64;
            let from = self.scan_from();
            for c in (from..self.cells).chain(0..from) {
                let m = self.words[c];
                if m.count_ones() != 2 {
                    continue;
                }
                let a = m.trailing_zeros() as u8 + 1;
                let b = (63 - m.leading_zeros()) as u8 + 1;
                self.answer.stats.nodes += 2;
                let pa = self.probe(c, a);
                let pb = self.probe(c, b);
                match (pa, pb) {
                    (None, None) => return Node::Dead,
                    (None, Some(_)) => {
                        self.queue.push((c as u16, b));
                        continue 'fix;
                    }
                    (Some(_), None) => {
                        self.queue.push((c as u16, a));
                        continue 'fix;
                    }
                    (Some(x), Some(y)) => {
                        let score = (left - x + 1) * (left - y + 1);
                        if score > best_score {
                            best_score = score;
                            best = c;
                        }
                    }
                }
                tried += 1;
                if tried >= PROBES {
                    break;
                }
            }
            if best != usize::MAX {
                return Node::Cell(best);
            }
            break;
        }
        let mut best = usize::MAX;
        let mut fewest = u32::MAX;
        let from = self.scan_from();
        for c in (from..self.cells).chain(0..from) {
            let m = self.words[c];
            if m != 0 {
                let k = m.count_ones();
                if k < fewest {
                    fewest = k;
                    best = c;
                    if k <= 2 {
                        break;
                    }
                }
            }
        }
        if best == usize::MAX {
            // Open cells but no candidates: cannot happen (an empty cell is
            // found when its last candidate goes), but is no solution.
            return Node::Dead;
        }
        if fewest > 2
            && let Some(place) = self.two_places()
        {
            return place;
        }
        Node::Cell(best)
    }

    /// A value with exactly two places left in some unit, as a branch: when
    /// every open cell has three candidates or more, this halves the tree
    /// where a cell would split it three ways or more.
    fn two_places(&self) -> Option<Node> {
        let (n, cells) = (self.n, self.cells);
        for u in 0..3 * n {
            let need = value_mask(n) & !self.words[cells + u];
            if need == 0 {
                continue;
            }
            let unit = &self.units[u * n..(u + 1) * n];
            let (mut once, mut twice, mut more) = (0u64, 0u64, 0u64);
            for &c in unit {
                let m = self.words[usize::from(c)];
                more |= twice & m;
                twice |= once & m;
                once |= m;
            }
            let two = need & twice & !more;
            if two != 0 {
                let bit = two & two.wrapping_neg();
                let mut at = 0u64;
                for (k, &c) in unit.iter().enumerate() {
                    if self.words[usize::from(c)] & bit != 0 {
                        at |= 1 << k;
                    }
                }
                return Some(Node::Place {
                    unit: u,
                    value: bit.trailing_zeros() as u8 + 1,
                    at,
                });
            }
        }
        None
    }
}

/// The least side a search for one solution restarts at. Completing a
/// large Latin-square-like grid is heavy-tailed: a run that guessed wrong
/// near the top can spend minutes below, while another order finds a
/// solution in a moment. So such a search varies its choices (which value
/// to try, which cell to scan from) and starts again from the root after a
/// growing number of nodes. Smaller sides and searches that count (a
/// uniqueness check must see the whole tree) keep the one ordered search.
const RESTART_SIDE: usize = 36;

/// Whether a restarting search of `shape` gives the repair search turns:
/// from [`RESTART_SIDE`] up, with boxes of two rows and two columns or
/// more. A prime side's box is a whole row, so its grid is a Latin square,
/// which the repair search (tuned on boxed grids) did not finish from blank
/// 37x37 in 131 million moves: such shapes keep the tree search alone.
fn repairs(shape: Shape) -> bool {
    shape.side() >= RESTART_SIDE && shape.box_rows() > 1 && shape.box_cols() > 1
}

/// On a sparse grid, the repair search's turn after each tree run, in
/// nodes, as a multiple of the nodes the run took (look-ahead probes
/// counted). The tree search keeps a seventeenth: it still finishes the
/// grids its first runs close, and proves a sparse grid has no solution
/// (slowly). Chosen with [`FIRST_RUN_PER_CELL`] on the 60 grids of
/// data/large/ with 65% and 80% blanks (in-process, one thread): with a
/// first run of 4 nodes a cell and a share of 8, 64x64 at 65% took up to
/// 0.99 s (median 0.40); 2 and 16, up to 0.67 s; 1 and 16, up to 0.56 s
/// (median 0.33), and every size's median fell or held.
const REPAIR_SHARE: u64 = 16;

/// The share of open cells (in percent, after the root's propagation) from
/// which a restarting search gives the repair search turns of
/// [`REPAIR_SHARE`] and cuts its first run short: a sparse grid.
const REPAIR_OPEN_PERCENT: usize = 60;

/// From this share of open cells up to [`REPAIR_OPEN_PERCENT`], near the
/// phase transition, the repair search's turn is as long as the tree run
/// before it: such grids have few solutions, and each search finds some
/// the other does not. On the ten 36x36 grids of 58% blanks (3,000,000
/// nodes each), the tree search alone solved 6, with these turns 8, faster
/// on five of the six both solved. Below it (the grids of 50% and less),
/// repair has no turns (it found none of the 50% grids) and the SAT engine
/// has (see [`CDCL_SHARE`]).
const MIXED_OPEN_PERCENT: usize = 50;

/// On a sparse grid, the first run of a restarting search ends after this
/// many nodes a cell at most (look-ahead probes counted), so that the
/// repair search gets its first turn early (see [`REPAIR_SHARE`]).
const FIRST_RUN_PER_CELL: usize = 1;

/// Near the phase transition (the root leaves less than
/// [`MIXED_OPEN_PERCENT`] of the cells open, or less than
/// [`REPAIR_OPEN_PERCENT`] with a small formula: [`ENGINE_LED_VARS`]), the
/// SAT engine's turn after each tree run, as a multiple of the run's nodes.
const CDCL_SHARE: u64 = 4;

/// From [`MIXED_OPEN_PERCENT`] to [`REPAIR_OPEN_PERCENT`] open, a root
/// whose formula for the SAT engine has fewer variables than this (a
/// candidate of an open cell each) gives the engine the lead: turns of
/// [`CDCL_SHARE`] from a first run cut short, and none for repair while
/// the engine runs. Where the formula is small, a conflict is cheap and
/// what the engine learns covers the space fast; where it is large, the
/// tree and repair searches find solutions the engine is slow to. On the
/// grids of 58% blanks in data/large/ (whole processes, ours alone, one
/// at a time, 2026-12-05): 36x36 (6,800-7,000 variables) median 2.37 s
/// with the mixed turns, 1.27 s led by the engine; 49x49 (16,400-16,800)
/// 4.5 s mixed, 8.6 s led by the engine. 64x64 (36,000) keeps the mixed
/// turns too.
const ENGINE_LED_VARS: usize = 10_000;

/// From [`MIXED_OPEN_PERCENT`] to [`REPAIR_OPEN_PERCENT`] open, with a
/// formula of [`ENGINE_LED_VARS`] variables or more, the SAT engine's turn
/// after the tree run's and repair's, as a multiple of the run's nodes.
/// (These figures are from before the small formulas' lead.) On the grids
/// of 58% blanks in data/large/ (60 s each, whole processes), without
/// these turns 36x36 solved 9 of 10 (the tenth at the work limit in 31 s;
/// CaDiCaL 1.8 s), with a share of 1 all 10, and 49x49 and 64x64 kept
/// their counts (9 and 10 of 10) at 10-20% more time; a share of 2 took
/// 36x36 a little faster and 49x49 and 64x64 25-40% slower. (When the
/// engine's calls were cut into chunks of 2,000 conflicts, these turns
/// cost 64x64 one of its two grids.)
const CDCL_MIXED_SHARE: u64 = 1;

/// The least side at which a search that does not restart (a count, or a
/// search for one solution below [`RESTART_SIDE`]) gives the SAT engine
/// turns.
const LEARN_SIDE: usize = 25;

/// In a search that does not restart, from [`LEARN_SIDE`] up: the tree
/// search's first turn, in nodes, after which it and the SAT engine take
/// turns, each [`LEARN_SHARE`] times as long as the tree's, the tree's
/// doubling turn by turn. Neither search restarts, so each counts on its
/// own: the engine excludes each model it finds and searches on, and a
/// count ends when either has found the limit or searched its whole space.
const LEARN_UNIT: u64 = 5_000;

/// The SAT engine's turn in a search that does not restart, as a multiple
/// of the tree's turn before it.
const LEARN_SHARE: u64 = 1;

/// The copy of the root's board such a search keeps: a candidate word
/// and a value word a cell.
const ROOT_BYTES_PER_CELL: usize = 16;

/// The nodes one conflict of the SAT engine counts for: about the time of
/// a tree node (look-ahead probes counted) on the 36x36 and 64x64 grids of
/// 50% blanks in data/large/.
const CONFLICT_NODES: u64 = 10;

/// A solver's default memory cap ([`SizedSolver::set_memory_cap`]): what
/// the SAT engine may grow to on a 64x64 grid near the transition in a
/// minute.
pub const DEFAULT_MEMORY_CAP: usize = 256 << 20;

/// The nodes of the shortest run of a restarting search.
const RESTART_UNIT: u64 = 2_000;

/// The random state a restarting search starts from.
const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// The Luby sequence, from i = 1: 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2,
/// 4, 8, ...
fn luby(i: u32) -> u64 {
    let mut i = u64::from(i);
    loop {
        // The k with 2^k - 1 >= i.
        let mut k = 1;
        while (1u64 << k) - 1 < i {
            k += 1;
        }
        if i == (1u64 << k) - 1 {
            return 1 << (k - 1);
        }
        i -= (1u64 << (k - 1)) - 1;
    }
}

/// Two-valued cells looked ahead on at each branch point, at most (so a
/// node costs at most `2 * PROBES + 1` of the budget). On the 25x25-hard
/// set, 32 solved as fast as no cap; 4 took four times as long.
const PROBES: usize = 32;

/// Guesses a search of side `n` makes before it starts to look ahead.
/// From 16x16 up the look-ahead pays from the root (16x16-hard's p99 went
/// from 48 ms to 8 ms, 25x25-hard's median from 1.35 s to 83 ms); below,
/// most searches are short and the probes would cost them more than they
/// save (on 9x9, probing from the root took serg's set from 9.7 to 104 us
/// a puzzle), so only a search that has guessed 128 times starts.
fn probe_after(n: usize) -> u64 {
    if n >= 16 { 0 } else { 128 }
}

/// Trail entries reserved for a grid of `cells` cells.
fn trail_reserve(cells: usize) -> usize {
    cells * 4
}

/// Units 0..count as a unit set.
fn units_mask(count: usize) -> [u64; 3] {
    let mut m = [0u64; 3];
    for (i, w) in m.iter_mut().enumerate() {
        let lo = i * 64;
        *w = if count >= lo + 64 {
            u64::MAX
        } else if count > lo {
            (1u64 << (count - lo)) - 1
        } else {
            0
        };
    }
    m
}

/// The units of a unit set, in increasing order.
struct Units([u64; 3]);

impl Iterator for Units {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        for (i, w) in self.0.iter_mut().enumerate() {
            if *w != 0 {
                let b = w.trailing_zeros() as usize;
                *w &= *w - 1;
                return Some(i * 64 + b);
            }
        }
        None
    }
}

/// The grids of a data/large/ file (`text`, one grid of integers a line,
/// 0 blank) with at least `least_blank_percent` of their cells blank.
#[cfg(test)]
pub(super) fn blanked_grids(
    text: &str,
    shape: Shape,
    least_blank_percent: usize,
) -> Vec<SizedGrid> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .filter(|v: &Vec<u8>| {
            v.iter().filter(|&&x| x == 0).count() * 100 >= least_blank_percent * v.len()
        })
        .map(|v| SizedGrid::from_values(shape, v).unwrap())
        .collect()
}

/// Runs a whole search with a total budget of `max_nodes` nodes: the
/// answer and the first solution.
pub fn run_sized(
    puzzle: &SizedGrid,
    max_solutions: u32,
    max_nodes: u64,
) -> (SizedAnswer, Option<SizedGrid>) {
    let mut s = SizedSolver::new(puzzle, max_solutions);
    s.resume(max_nodes);
    (s.answer(), s.solution())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::Grid;

    const HARD: &str =
        "........8..3...4...9..2..6.....79.......612...6.5.2.7...8...5...1.....2.4.5.....3";

    fn shapes() -> Vec<Shape> {
        [
            (1, 1),
            (1, 2),
            (2, 1),
            (2, 2),
            (2, 3),
            (3, 2),
            (2, 4),
            (4, 2),
            (3, 3),
            (3, 4),
            (4, 3),
            (4, 4),
            (4, 5),
            (5, 5),
            (6, 6),
            (7, 7),
            (8, 8),
        ]
        .into_iter()
        .map(|(r, c)| Shape::new(r, c).unwrap())
        .collect()
    }

    #[test]
    fn every_shape_fills_an_empty_grid_validly() {
        for shape in shapes() {
            let empty = SizedGrid::empty(shape);
            let (a, sol) = run_sized(&empty, 1, u64::MAX);
            let sol = sol.unwrap();
            assert!(a.complete && a.count == 1, "{shape}");
            assert!(sol.is_valid_solution(), "{shape}: {sol:?}");
        }
    }

    #[test]
    fn agrees_with_the_fast_engine_on_a_hard_9x9() {
        let g = Grid::from_text(HARD).unwrap();
        let (a, sol) = run_sized(&SizedGrid::from_grid(&g), 2, u64::MAX);
        assert_eq!(a.count, 1);
        assert_eq!(sol.unwrap().to_grid(), crate::solver::solve(&g));
    }

    #[test]
    fn counts_solutions_of_a_small_grid() {
        // The 4x4 grids with 2x2 boxes: 288 in all.
        let empty = SizedGrid::empty(Shape::new(2, 2).unwrap());
        let (a, _) = run_sized(&empty, 1000, u64::MAX);
        assert_eq!((a.count, a.complete), (288, true));
        let (a, _) = run_sized(&empty, 10, u64::MAX);
        assert_eq!((a.count, a.complete), (10, true));
    }

    #[test]
    fn conflicting_givens_have_no_solution() {
        let shape = Shape::new(2, 3).unwrap();
        let mut g = SizedGrid::empty(shape);
        g.values_mut()[0] = 5;
        g.values_mut()[7] = 5; // row 1, column 1: the same box
        let (a, sol) = run_sized(&g, 2, u64::MAX);
        assert_eq!((a.count, a.complete, sol), (0, true, None));
    }

    #[test]
    fn sliced_resume_matches_one_call() {
        let g = SizedGrid::from_grid(&Grid::from_text(HARD).unwrap());
        for limit in [1, 2] {
            let whole = run_sized(&g, limit, u64::MAX);
            for slice in [1, 3, 100] {
                let mut s = SizedSolver::new(&g, limit);
                let mut calls = 1;
                while s.resume(slice) == Progress::Paused {
                    calls += 1;
                }
                assert!(calls > 1 || slice == 100);
                assert_eq!((s.answer(), s.solution()), whole, "slice {slice}");
                assert_eq!(s.resume(slice), Progress::Done);
            }
        }
    }

    #[test]
    fn a_solver_between_searches_holds_its_footprint() {
        for shape in shapes() {
            let s = SizedSolver::new(&SizedGrid::empty(shape), 1);
            assert!(
                s.heap_bytes() <= SizedSolver::footprint(shape.cells()),
                "{shape}: {} bytes",
                s.heap_bytes()
            );
        }
        // A blank 64x64 grid solved: every cell placed on one path, so the
        // trail outgrows its reservation; a restart gives it back.
        let big = Shape::new(8, 8).unwrap();
        let mut s = SizedSolver::new(&SizedGrid::empty(big), 1);
        s.resume(u64::MAX);
        assert_eq!(s.answer().count, 1);
        assert!(s.heap_bytes() > SizedSolver::footprint(big.cells()));
        s.restart(&SizedGrid::empty(big), 1);
        assert!(s.heap_bytes() <= SizedSolver::footprint(big.cells()));
    }

    #[test]
    fn restart_on_other_shapes_answers_as_a_new_solver() {
        let mut s = SizedSolver::new(&SizedGrid::empty(Shape::new(2, 2).unwrap()), 1);
        for shape in shapes().into_iter().rev().chain(shapes()) {
            let mut g = SizedGrid::empty(shape);
            g.values_mut()[0] = 1;
            s.resume(2);
            s.restart(&g, 2);
            s.resume(u64::MAX);
            let fresh = run_sized(&g, 2, u64::MAX);
            assert_eq!((s.answer(), s.solution()), fresh, "{shape}");
        }
    }
    #[test]
    fn the_luby_sequence() {
        let got: Vec<u64> = (1..=15).map(luby).collect();
        assert_eq!(got, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    }

    /// The committed 36x36 grids at 65% and 80% blanks (many solutions):
    /// a restarting search solves each, keeps the givens and is
    /// repeatable; a counting search of the same grid does not restart.
    #[test]
    fn a_large_search_for_one_solution_restarts_and_finds_one() {
        let text = include_str!("../../../../data/large/36x36.txt");
        let shape = Shape::new(6, 6).unwrap();
        let mut tried = 0;
        for g in blanked_grids(text, shape, 65) {
            let values = g.values().to_vec();
            let mut s = SizedSolver::new(&g, 1);
            assert!(s.shake);
            assert_eq!(s.resume(5_000_000), Progress::Done);
            let answer = s.answer();
            assert_eq!((answer.count, answer.complete), (1, true));
            let solution = s.solution().unwrap();
            for (i, (&given, &got)) in values.iter().zip(solution.values()).enumerate() {
                assert!(given == 0 || given == got, "cell {i}");
            }
            assert!(solution.conflicts(1).0.is_empty());
            assert!(solution.values().iter().all(|&v| v != 0));
            // The same search again, in slices: the same solution.
            let mut again = SizedSolver::new(&g, 1);
            while again.resume(1_000) == Progress::Paused {}
            assert_eq!(again.solution(), Some(solution));
            assert!(!SizedSolver::new(&g, 2).shake);
            tried += 1;
            if tried == 4 {
                break;
            }
        }
        assert_eq!(tried, 4);
    }

    #[test]
    fn a_sparse_49x49_grid_is_solved_by_the_repair_turns() {
        // 80% blank: the first tree run ends at its cap without a
        // solution, and the repair search finishes the grid.
        let text = include_str!("../../../../data/large/49x49.txt");
        let shape = Shape::new(7, 7).unwrap();
        let g = blanked_grids(text, shape, 80).swap_remove(0);
        let mut s = SizedSolver::new(&g, 1);
        while s.resume(10_000) == Progress::Paused {
            assert!(s.answer().stats.nodes < 5_000_000);
        }
        assert!(s.runs >= 1, "the tree search's first run solved it");
        assert!(s.repair.ready());
        // A caller proving there is no solution asks for none of that: the
        // same grid runs the tree search alone.
        let mut alone = SizedSolver::new(&g, 1);
        alone.restart_without_repair(&g, 1);
        alone.resume(200_000);
        assert!(!alone.repair.ready() && !alone.sparse());
        // And a plain restart of that solver gives repair its turns again.
        alone.restart(&g, 1);
        while alone.resume(10_000) == Progress::Paused {}
        assert!(alone.repair.ready());
        let solution = s.solution().unwrap();
        assert!(solution.is_valid_solution());
        assert!(g.is_kept_by(&solution));
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn a_grid_half_blank_is_solved_by_the_sat_turns_within_the_memory_cap() {
        // 50% blank: the first 36x36 grid of that share, which the tree
        // and repair searches alone do not finish in 500,000 nodes.
        let text = include_str!("../../../../data/large/36x36.txt");
        let shape = Shape::new(6, 6).unwrap();
        let g = blanked_grids(text, shape, 50)
            .into_iter()
            .find(|g| g.values().iter().filter(|&&v| v == 0).count() * 100 < 55 * g.values().len())
            .unwrap();
        let mut s = SizedSolver::new(&g, 1);
        while s.resume(500) == Progress::Paused {
            assert!(s.answer().stats.nodes < 2_000_000);
            assert!(s.heap_bytes() <= DEFAULT_MEMORY_CAP);
        }
        assert_eq!(s.cdcl_count, 1, "solved before the SAT engine's turn");
        assert!(!s.cdcl.ready(), "a finished search keeps its engine");
        let solution = s.solution().unwrap();
        assert!(solution.is_valid_solution());
        assert!(g.is_kept_by(&solution));
        assert_eq!((s.answer().count, s.answer().complete), (1, true));
        // The engine's one call is paused between slices, not cut: one
        // resume runs the same search, conflict for conflict.
        let mut whole = SizedSolver::new(&g, 1);
        assert_eq!(whole.resume(2_000_000), Progress::Done);
        assert_eq!(
            (whole.answer(), whole.solution()),
            (s.answer(), Some(solution.clone()))
        );
        // Dropped in the middle of a turn, a search ends the engine's call
        // and joins its thread.
        let mut paused = SizedSolver::new(&g, 1);
        while !paused.cdcl.ready() {
            assert_eq!(paused.resume(500), Progress::Paused);
        }
        assert_eq!(paused.resume(500), Progress::Paused);
        drop(paused);
        // Capped below what its formula needs (about 9 MiB by the
        // estimate), the engine never starts, and the solver holds no more
        // than the cap (the tree search's trail grows past its footprint
        // on a deep path, well within 4 MiB).
        let cap = SizedSolver::footprint(shape.cells()) + (4 << 20);
        let mut capped = SizedSolver::new(&g, 1);
        capped.set_memory_cap(cap);
        assert_eq!(capped.resume(500_000), Progress::Paused);
        assert!(!capped.cdcl.ready() && !capped.cdcl_on());
        assert_eq!(capped.cdcl.heap_bytes(), 0);
        assert!(
            capped.heap_bytes() <= cap,
            "{} > {cap}: trail {}",
            capped.heap_bytes(),
            capped.trail.capacity()
        );
        // A restart clears the engine; the cap stays until released.
        s.restart(&g, 1);
        assert!(!s.cdcl.ready() && s.heap_bytes() <= SizedSolver::footprint(shape.cells()) * 2);
        assert_eq!(capped.memory_cap, cap);
        capped.release();
        assert_eq!(capped.memory_cap, DEFAULT_MEMORY_CAP);
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn the_engine_leads_where_its_formula_is_small() {
        // The first grid of 58% blanks at 36x36 (about 7,000 variables)
        // and at 49x49 (about 16,500): both roots leave 50-60% open.
        let first_58 = |text: &str, shape: Shape| {
            blanked_grids(text, shape, 58)
                .into_iter()
                .find(|g| {
                    g.values().iter().filter(|&&v| v == 0).count() * 100 < 60 * g.values().len()
                })
                .unwrap()
        };
        let rooted = |s: &mut SizedSolver| {
            while s.frames.is_empty() {
                assert_eq!(s.resume(1), Progress::Paused);
            }
        };
        let shape = Shape::new(6, 6).unwrap();
        let g = first_58(include_str!("../../../../data/large/36x36.txt"), shape);
        let mut s = SizedSolver::new(&g, 1);
        rooted(&mut s);
        assert!(
            s.cdcl_first() && s.share == 0,
            "{} {}",
            s.cdcl_share,
            s.share
        );
        // Where the formula does not fit the cap, the engine never starts
        // and repair takes its turns from the next run on.
        let mut capped = SizedSolver::new(&g, 1);
        capped.set_memory_cap(SizedSolver::footprint(shape.cells()) + (4 << 20));
        while capped.runs == 0 || capped.frames.is_empty() {
            assert_eq!(capped.resume(100), Progress::Paused);
        }
        assert!(!capped.cdcl_on() && capped.share == 1);
        let shape = Shape::new(7, 7).unwrap();
        let g = first_58(include_str!("../../../../data/large/49x49.txt"), shape);
        let mut s = SizedSolver::new(&g, 1);
        rooted(&mut s);
        assert_eq!((s.cdcl_share, s.share), (CDCL_MIXED_SHARE, 1));
    }

    #[cfg(feature = "cdcl")]
    #[test]
    fn a_count_takes_turns_with_the_sat_engine_and_counts_as_the_tree_alone() {
        // 25x25 puzzles of 44% clues, and one with clues taken away (many
        // solutions), counted to 1, 2 and 12 with the tree's turns
        // cut to 200 nodes so that the engine takes several turns: the
        // counts are those of the tree alone, each solution valid, and the
        // engine finishes some counts itself (a proof, or the limit).
        let text = include_str!("../../../../data/sizes/25x25-hard.txt");
        let shape = Shape::new(5, 5).unwrap();
        let mut grids: Vec<SizedGrid> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .take(3)
            .map(|l| SizedGrid::from_text(shape, l).unwrap())
            .collect();
        let mut g = grids[0].clone();
        let clues: Vec<usize> = (0..shape.cells()).filter(|&c| g.values()[c] != 0).collect();
        for &c in clues.iter().take(24) {
            g.values_mut()[c] = 0;
        }
        grids.push(g);
        let mut by_engine = 0;
        for g in &grids {
            for limit in [1, 2, 12] {
                let mut alone = SizedSolver::new(g, limit);
                alone.restart_without_repair(g, limit);
                assert_eq!(alone.resume(5_000_000), Progress::Done);
                let mut s = SizedSolver::new(g, limit);
                s.learn_unit = 200;
                s.restart(g, limit);
                while s.resume(300) == Progress::Paused {
                    assert!(s.answer().stats.nodes < 5_000_000);
                }
                assert!(s.runs > 0, "no turn of the engine");
                assert_eq!(s.answer().count, alone.answer().count, "limit {limit}");
                assert!(s.answer().complete);
                let solution = s.solution().unwrap();
                assert!(solution.is_valid_solution() && g.is_kept_by(&solution));
                if s.cdcl_count == s.answer().count && s.tree_count < s.answer().count
                    || s.cdcl_count == s.answer().count && s.answer().count < limit
                {
                    by_engine += 1;
                }
            }
        }
        assert!(by_engine > 0, "the tree finished every count");
        // A count to a huge limit where the engine finds model after
        // model: each model costs nodes, so every call keeps to its budget
        // (within a tree node's probes or a slice's last conflict), where
        // a call once went on model after model at no cost.
        let sparse = grids.last().unwrap();
        let mut s = SizedSolver::new(sparse, 1_000_000);
        s.learn_unit = 200;
        s.restart(sparse, 1_000_000);
        for _ in 0..1_000 {
            let before = s.answer().stats.nodes;
            assert_eq!(s.resume(300), Progress::Paused);
            let took = s.answer().stats.nodes - before;
            assert!(took < 2 * 300, "{took}");
            if s.cdcl_count > 10 {
                break;
            }
        }
        assert!(
            s.cdcl_count > 10,
            "the engine found {} models",
            s.cdcl_count
        );
        // A count of a blank 64x64 grid: the engine's turn comes, and its
        // formula (262,144 variables) is over the cap, so it never starts
        // and the tree counts on alone.
        let blank = SizedGrid::empty(Shape::new(8, 8).unwrap());
        let mut s = SizedSolver::new(&blank, 1_000_000);
        s.learn_unit = 200;
        s.restart(&blank, 1_000_000);
        assert_eq!(s.resume(2_000), Progress::Paused);
        assert!(s.runs > 0 && !s.cdcl_on() && !s.cdcl.ready());
        assert_eq!(s.cdcl.heap_bytes(), 0);
    }
}
