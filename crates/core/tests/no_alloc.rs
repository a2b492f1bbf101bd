//! The engine allocates nothing on the heap: not per puzzle, not per search
//! node, not when paused and resumed. A counting allocator wraps the system
//! one and counts, per thread, every allocation this test's thread makes
//! while it solves the public sets in data/ every way the service does.
//!
//! `unsafe` is needed here only to implement `GlobalAlloc` (the library
//! itself forbids it); the wrapper adds a counter and calls the system
//! allocator unchanged.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::text::read_puzzles;
use sudoku_core::solver::{self, Progress, Solver};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter left, and must
    // still be able to free memory.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations made on this thread while `f` runs.
fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// The puzzles of a data set, read as the CLI reads its input.
fn load(name: &str) -> Vec<Grid> {
    let path = format!("{}/../../data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    read_puzzles(&text)
        .into_iter()
        .map(|e| e.puzzle.unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

#[test]
fn solving_allocates_nothing() {
    // The counter sees allocations: a test that counted nothing would pass
    // whatever the engine did.
    assert!(allocations_in(|| drop(std::hint::black_box(vec![1u8; 64]))) >= 1);

    let sets: Vec<Vec<Grid>> = [
        "puzzles2_17_clue",
        "puzzles3_magictour_top1465",
        "puzzles6_forum_hardest_1106",
        "puzzles7_serg_benchmark",
    ]
    .iter()
    .map(|name| load(name).into_iter().take(400).collect())
    .collect();
    let mut reused = Solver::new(&sets[0][0], 1);
    let (mut nodes, mut solutions) = (0u64, 0u64);

    let allocations = allocations_in(|| {
        for p in sets.iter().flatten() {
            for limit in [1, 2] {
                // One solver restarted per puzzle, run whole (the service's
                // inline path and the CLI).
                reused.restart(p, limit);
                reused.resume(u64::MAX);
                let a = reused.answer();
                nodes += a.stats.nodes;
                solutions += u64::from(a.count);

                // A new solver, paused and resumed every 5 nodes (the
                // service's budgeted path).
                let mut s = Solver::new(p, limit);
                while s.resume(5) == Progress::Paused {}
                nodes += s.answer().stats.nodes;
            }
            // The one-call helpers.
            solutions += u64::from(solver::solve(p).is_some());
            solutions += u64::from(solver::is_unique(p));
        }
    });

    assert_eq!(allocations, 0, "heap allocations while solving");
    // The work really ran: up to 400 puzzles of each set, both modes, two
    // ways each.
    assert!(nodes > 100_000, "{nodes} nodes");
    assert!(solutions > 6_000, "{solutions} solutions");
}
