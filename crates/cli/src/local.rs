//! The local pool of `sudoku solve --local`: puzzles solved in this
//! process, 9x9 grids by the fast engine and other sizes by the generic
//! one, by the reading thread itself or by a pool of solver threads fed
//! work items through a bounded channel.

use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

use super::answer::{Done, Meta, Outcome, Puzzle};
use super::input::{Work, read_input};
use super::printer::Msg;
use super::sized::Grids;
use super::window::Window;
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_core::solver::sized::SizedSolver;
use sudoku_core::solver::{Engine, Solver, Verdict};

/// How each puzzle is solved in-process.
#[derive(Clone, Copy)]
pub(super) struct Rules {
    /// Solutions to look for: 1, or 2 for a uniqueness check.
    pub(super) limit: u32,
    /// Work budget per puzzle, in search nodes.
    pub(super) max_nodes: u64,
    /// Time each solve (for `--output jsonl`; text output shows no times,
    /// and two clock reads a puzzle slow an easy set).
    pub(super) timed: bool,
}

/// Puzzles per work item with several `--local` threads, at most.
const LOCAL_ITEM: usize = 64;

/// Solves in-process, reading on the calling thread: the reader feeds
/// `threads` solver threads work items of `batch` (at most [`LOCAL_ITEM`])
/// puzzles through a bounded channel. With one thread the reader solves
/// each puzzle itself as it reads it: no puzzle crosses threads on its way
/// in, no thread is started but the writer, and answers go to the writer
/// `batch` at a time. Returns when the input is read and solved (or
/// printing stopped).
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_local(
    input: Box<dyn Read + Send>,
    grids: Grids,
    window: &Window,
    to_writer: async_channel::Sender<Msg>,
    rules: Rules,
    threads: usize,
    batch: usize,
    queue: usize,
) {
    if threads <= 1 {
        let mut solver = Engines::new();
        let mut answers = Vec::with_capacity(batch);
        read_input(input, grids, window, &to_writer, |w| {
            match w {
                Work::Puzzle(seq, meta, g) => {
                    answers.push((seq, Some(meta), solver.solve(&g, rules)));
                    if answers.len() < batch {
                        return true;
                    }
                }
                Work::Idle if answers.is_empty() => return true,
                Work::Idle => {}
            }
            let full = std::mem::replace(&mut answers, Vec::with_capacity(batch));
            to_writer.send_blocking(Msg::Answers(full)).is_ok()
        });
        return;
    }
    // Threads share out items of at most LOCAL_ITEM puzzles, so that a
    // small set of hard puzzles still spreads over all of them.
    let batch = batch.min(LOCAL_ITEM);
    let (jobs, todo) = async_channel::bounded::<Vec<(u64, Meta, Puzzle)>>(queue);
    for _ in 0..threads {
        let todo = todo.clone();
        let to_writer = to_writer.clone();
        std::thread::spawn(move || {
            // One solver per thread, restarted per puzzle: no allocation
            // in the engine.
            let mut solver = Engines::new();
            while let Ok(items) = todo.recv_blocking() {
                let answers = items
                    .into_iter()
                    .map(|(seq, meta, g)| (seq, Some(meta), solver.solve(&g, rules)))
                    .collect();
                if to_writer.send_blocking(Msg::Answers(answers)).is_err() {
                    return;
                }
            }
        });
    }
    drop(todo);
    let mut items = Vec::with_capacity(batch);
    read_input(input, grids, window, &to_writer, |w| {
        match w {
            Work::Puzzle(seq, meta, g) => {
                items.push((seq, meta, g));
                if items.len() < batch {
                    return true;
                }
            }
            Work::Idle if items.is_empty() => return true,
            Work::Idle => {}
        }
        let full = std::mem::replace(&mut items, Vec::with_capacity(batch));
        jobs.send_blocking(full).is_ok()
    });
}

/// The engines of one solver thread: the 9x9 one, and the generic one
/// once a grid of another size comes (restarted per puzzle, it keeps its
/// tables while the shape stays the same).
struct Engines {
    nine: Solver,
    sized: Option<SizedSolver>,
}

impl Engines {
    fn new() -> Engines {
        Engines {
            nine: Solver::new(&Grid::EMPTY, 1),
            sized: None,
        }
    }

    /// Solves `g` with the engine for its shape.
    fn solve(&mut self, g: &Puzzle, rules: Rules) -> Done {
        match g {
            Puzzle::Nine(g) => solve_with(&mut self.nine, g, rules, Puzzle::Nine),
            Puzzle::Sized(g) => {
                let solver = self
                    .sized
                    .get_or_insert_with(|| SizedSolver::new(&SizedGrid::empty(g.shape()), 1));
                solve_with(solver, g, rules, |s| Puzzle::Sized(Arc::new(s)))
            }
        }
    }
}

/// Solves one puzzle with `solver`, restarted for it: written once for
/// both engines; `wrap` makes the run's puzzle of a solution.
fn solve_with<E: Engine>(
    solver: &mut E,
    g: &E::Puzzle,
    rules: Rules,
    wrap: impl FnOnce(E::Puzzle) -> Puzzle,
) -> Done {
    let Rules {
        limit,
        max_nodes,
        timed,
    } = rules;
    let started = timed.then(Instant::now);
    solver.start(g, limit);
    solver.go_on(max_nodes);
    let (count, _, stats) = solver.report();
    let micros = started.map_or(0, |t| t.elapsed().as_micros() as u64);
    let outcome = match solver.verdict() {
        Verdict::Solved => Outcome::Solved,
        Verdict::NoSolution => Outcome::NoSolution,
        Verdict::NotUnique => Outcome::NotUnique,
        Verdict::WorkLimit => Outcome::WorkLimit,
    };
    Done {
        outcome,
        solution: solver.first_solution().map(wrap),
        count: u64::from(count),
        guesses: stats.guesses,
        nodes: stats.nodes,
        micros,
        error: None,
    }
}
