//! Property tests of the solver through its public API.
//!
//! Puzzles come from a known solved grid (or the solution of a random seed
//! puzzle) scrambled by random Sudoku symmetries with random cells removed,
//! and from fully random sparse grids. Every search runs under a node budget;
//! a property that needs a finished search is only checked when it finished.
//!
//! Checked:
//! - every returned solution keeps the rules (checked here from scratch) and
//!   keeps the givens;
//! - the capped solution count (limit 2) is invariant under digit
//!   relabelling, row permutations within bands, column permutations within
//!   stacks, band and stack swaps and transposition, and the transformed
//!   solution of a puzzle solves the transformed puzzle;
//! - count(k) == min(count(k + 1), k).

use proptest::prelude::*;
use sudoku_core::puzzle::{CELLS, Grid};
use sudoku_core::solver::{self, Answer};

/// Node budget per search: generous for generated puzzles (they solve in
/// well under a thousand nodes), tight enough to bound a pathological case.
const BUDGET: u64 = 200_000;

const SOLVED: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

fn solved() -> Grid {
    Grid::from_text(SOLVED).unwrap()
}

/// The rules, checked independently of `Grid::check_givens`: no digit twice
/// in a row, column or box.
fn conflict_free(g: &Grid) -> bool {
    (0..9).all(|u| {
        let unit = |f: &dyn Fn(usize) -> usize| {
            let mut seen = [false; 10];
            (0..9).all(|k| {
                let d = g.0[f(k)] as usize;
                d == 0 || !std::mem::replace(&mut seen[d], true)
            })
        };
        unit(&|k| u * 9 + k)
            && unit(&|k| k * 9 + u)
            && unit(&|k| (u / 3 * 3 + k / 3) * 9 + u % 3 * 3 + k % 3)
    })
}

fn is_solution_of(s: &Grid, p: &Grid) -> bool {
    s.0.iter().all(|&d| (1..=9).contains(&d))
        && conflict_free(s)
        && (0..CELLS).all(|i| p.0[i] == 0 || p.0[i] == s.0[i])
}

/// A symmetry of Sudoku: output cell (r, c) takes the relabelled digit of
/// input cell (rows[r], cols[c]), then the grid is transposed if asked.
#[derive(Debug, Clone)]
struct Transform {
    digits: [u8; 10],
    rows: [usize; 9],
    cols: [usize; 9],
    transpose: bool,
}

impl Transform {
    fn identity() -> Transform {
        Transform {
            digits: std::array::from_fn(|d| d as u8),
            rows: std::array::from_fn(|i| i),
            cols: std::array::from_fn(|i| i),
            transpose: false,
        }
    }

    fn apply(&self, g: &Grid) -> Grid {
        let mut out = Grid::EMPTY;
        for r in 0..9 {
            for c in 0..9 {
                let d = self.digits[g.0[self.rows[r] * 9 + self.cols[c]] as usize];
                let (r, c) = if self.transpose { (c, r) } else { (r, c) };
                out.0[r * 9 + c] = d;
            }
        }
        out
    }
}

fn perm(n: usize) -> impl Strategy<Value = Vec<usize>> {
    Just((0..n).collect::<Vec<_>>()).prop_shuffle()
}

/// A line permutation that keeps bands (or stacks): bands permuted, and the
/// three lines inside each band permuted.
fn lines(shuffle_groups: bool, shuffle_within: bool) -> impl Strategy<Value = [usize; 9]> {
    (perm(3), perm(3), perm(3), perm(3)).prop_map(move |(g, a, b, c)| {
        let within = [a, b, c];
        std::array::from_fn::<usize, 9, _>(|i| {
            let group = if shuffle_groups { g[i / 3] } else { i / 3 };
            let line = if shuffle_within {
                within[i / 3][i % 3]
            } else {
                i % 3
            };
            group * 3 + line
        })
    })
}

fn digits() -> impl Strategy<Value = [u8; 10]> {
    perm(9).prop_map(|p| {
        std::array::from_fn::<u8, 10, _>(|d| if d == 0 { 0 } else { p[d - 1] as u8 + 1 })
    })
}

/// One kind of symmetry alone, so each is checked on its own.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Relabel,
    RowsWithinBands,
    ColumnsWithinStacks,
    BandSwap,
    StackSwap,
    Transpose,
    All,
}

fn transform(kind: Kind) -> BoxedStrategy<Transform> {
    let id = Transform::identity();
    match kind {
        Kind::Relabel => digits()
            .prop_map(move |digits| Transform {
                digits,
                ..id.clone()
            })
            .boxed(),
        Kind::RowsWithinBands => lines(false, true)
            .prop_map(move |rows| Transform { rows, ..id.clone() })
            .boxed(),
        Kind::ColumnsWithinStacks => lines(false, true)
            .prop_map(move |cols| Transform { cols, ..id.clone() })
            .boxed(),
        Kind::BandSwap => lines(true, false)
            .prop_map(move |rows| Transform { rows, ..id.clone() })
            .boxed(),
        Kind::StackSwap => lines(true, false)
            .prop_map(move |cols| Transform { cols, ..id.clone() })
            .boxed(),
        Kind::Transpose => Just(Transform {
            transpose: true,
            ..id
        })
        .boxed(),
        Kind::All => (
            digits(),
            lines(true, true),
            lines(true, true),
            any::<bool>(),
        )
            .prop_map(|(digits, rows, cols, transpose)| Transform {
                digits,
                rows,
                cols,
                transpose,
            })
            .boxed(),
    }
}

/// A random sparse grid that keeps the rules: up to `max_givens` random
/// placements, each kept only if it clashes with nothing placed so far.
fn sparse(max_givens: usize) -> impl Strategy<Value = Grid> {
    prop::collection::vec((0..CELLS, 1..=9u8), 0..=max_givens).prop_map(|placements| {
        let mut g = Grid::EMPTY;
        for (i, d) in placements {
            let before = g.0[i];
            g.0[i] = d;
            if g.check_givens().is_err() {
                g.0[i] = before;
            }
        }
        assert!(conflict_free(&g));
        g
    })
}

/// A solved grid: the known one, or the solution of a random sparse seed
/// (when the seed has one within the budget).
fn base() -> impl Strategy<Value = Grid> {
    prop_oneof![
        Just(solved()),
        sparse(12).prop_map(|seed| {
            let a = solver::run(&seed, 1, BUDGET);
            a.solution.unwrap_or_else(solved)
        }),
    ]
}

/// A puzzle with at least one solution: a scrambled solved grid with cells
/// removed, each kept with probability `keep`/100 for a random `keep`.
fn puzzle() -> impl Strategy<Value = Grid> {
    (
        base(),
        transform(Kind::All),
        20..70u32,
        prop::collection::vec(0..100u32, CELLS),
    )
        .prop_map(|(solution, t, keep, dice)| {
            let mut g = t.apply(&solution);
            for (c, roll) in g.0.iter_mut().zip(dice) {
                if roll >= keep {
                    *c = 0;
                }
            }
            g
        })
}

/// Checks what any answer must satisfy, and returns it.
fn checked(p: &Grid, limit: u32) -> Result<Answer, TestCaseError> {
    let a = solver::run(p, limit, BUDGET);
    prop_assert!(a.count <= limit);
    prop_assert_eq!(a.solution.is_some(), a.count > 0);
    if let Some(s) = a.solution {
        prop_assert!(is_solution_of(&s, p), "{:?} does not solve {:?}", s, p);
    }
    Ok(a)
}

fn check_invariance(p: &Grid, t: &Transform) -> Result<(), TestCaseError> {
    let q = t.apply(p);
    prop_assert!(conflict_free(&q));
    let a = checked(p, 2)?;
    let b = checked(&q, 2)?;
    if a.complete && b.complete {
        prop_assert_eq!(a.count, b.count, "count changed by {:?}", t);
    }
    if let Some(s) = a.solution {
        let ts = t.apply(&s);
        prop_assert!(
            is_solution_of(&ts, &q),
            "T(solution) does not solve T(puzzle)"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn solutions_keep_rules_and_givens(p in puzzle()) {
        let a = checked(&p, 1)?;
        // The puzzle was cut from a solved grid: it has a solution.
        prop_assert!(a.complete);
        prop_assert_eq!(a.count, 1);
        let unique = checked(&p, 2)?;
        if unique.complete {
            prop_assert_eq!(solver::is_unique(&p), unique.count == 1);
            prop_assert_eq!(solver::count_solutions_up_to(&p, 2), unique.count);
            prop_assert_eq!(solver::solve(&p), a.solution);
        }
    }

    #[test]
    fn invariant_under_relabelling(p in puzzle(), t in transform(Kind::Relabel)) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn invariant_under_row_permutations_within_bands(
        p in puzzle(), t in transform(Kind::RowsWithinBands)
    ) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn invariant_under_column_permutations_within_stacks(
        p in puzzle(), t in transform(Kind::ColumnsWithinStacks)
    ) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn invariant_under_band_swaps(p in puzzle(), t in transform(Kind::BandSwap)) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn invariant_under_stack_swaps(p in puzzle(), t in transform(Kind::StackSwap)) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn invariant_under_transposition(p in puzzle(), t in transform(Kind::Transpose)) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn invariant_under_all_symmetries(p in puzzle(), t in transform(Kind::All)) {
        check_invariance(&p, &t)?;
    }

    #[test]
    fn count_limits_agree(p in prop_oneof![puzzle(), sparse(30)], k in 1..6u32) {
        let small = checked(&p, k)?;
        let big = checked(&p, k + 1)?;
        if small.complete && big.complete {
            prop_assert_eq!(small.count, big.count.min(k));
        }
    }

    #[test]
    fn random_sparse_grids(p in sparse(40), limit in 1..4u32) {
        prop_assert!(p.check_givens().is_ok());
        checked(&p, limit)?;
    }
}

#[test]
fn transforms_are_symmetries_of_the_known_grid() {
    // Sanity check of the test's own machinery: every kind maps a solved grid
    // to a solved grid.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    for kind in [
        Kind::Relabel,
        Kind::RowsWithinBands,
        Kind::ColumnsWithinStacks,
        Kind::BandSwap,
        Kind::StackSwap,
        Kind::Transpose,
        Kind::All,
    ] {
        for _ in 0..20 {
            let t = transform(kind).new_tree(&mut runner).unwrap().current();
            let g = t.apply(&solved());
            assert!(is_solution_of(&g, &Grid::EMPTY), "{kind:?}: {t:?}");
        }
    }
}
