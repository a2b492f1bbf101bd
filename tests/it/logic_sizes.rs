//! Hint and Rate at every size, through the real server, checked by a
//! validator written here and sharing nothing with the service: a puzzle of
//! each shape (4x4, 6x6 both ways, 12x12, 16x16 and 9x9) is walked hint by
//! hint to its solution, the test keeping its own pencil marks and sending
//! them; every placement must be the solution's digit, no elimination may
//! remove it, every cell an explanation names is in r1c1 notation inside
//! the grid, and the walk ends on a grid this file's own checker accepts.

use sudoku_core::generate::sized::SizedMaker;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::sized::SizedSolver;
use sudoku_grpc::pb::{self, Outcome};

use crate::support::SolveExt;
use crate::support::TestServer;

/// A grid is a solution when each row, column and box holds 1..=N once:
/// checked here from the shape's arithmetic alone.
fn is_solution(values: &[u8], r: usize, c: usize) -> bool {
    let n = r * c;
    let full = |cells: Vec<usize>| {
        let mut seen = vec![false; n + 1];
        cells.iter().all(|&i| {
            let v = values[i] as usize;
            (1..=n).contains(&v) && !std::mem::replace(&mut seen[v], true)
        })
    };
    (0..n).all(|i| {
        let (br, bc) = (i / (n / c) * r, i % (n / c) * c);
        full((0..n).map(|k| i * n + k).collect())
            && full((0..n).map(|k| k * n + i).collect())
            && full((0..n).map(|k| (br + k / c) * n + bc + k % c).collect())
    })
}

/// The cells sharing a row, column or box with `cell`.
fn peers(cell: usize, r: usize, c: usize) -> Vec<usize> {
    let n = r * c;
    let (row, col) = (cell / n, cell % n);
    (0..n * n)
        .filter(|&x| {
            let (xr, xc) = (x / n, x % n);
            x != cell && (xr == row || xc == col || (xr / r == row / r && xc / c == col / c))
        })
        .collect()
}

/// Every "rXcY" an explanation names, as (row, column) from 1.
fn named_cells(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let number = |mut j: usize| {
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        (text[start..j].parse::<usize>().ok(), j)
    };
    while i < b.len() {
        if b[i] == b'r'
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && let (Some(row), j) = number(i + 1)
            && j < b.len()
            && b[j] == b'c'
            && let (Some(col), k) = number(j + 1)
        {
            out.push((row, col));
            i = k;
            continue;
        }
        i += 1;
    }
    out
}

fn wire(values: &[u8], shape: Shape) -> pb::Grid {
    pb::Grid {
        cells: values.iter().map(|&v| u32::from(v)).collect(),
        box_rows: shape.box_rows() as u32,
        box_cols: shape.box_cols() as u32,
        ..Default::default()
    }
}

/// A puzzle of `shape` with one solution: minimal up to 12x12, clue removal
/// stopped at half the cells above (to keep the test short).
fn puzzle(shape: Shape, seed: u64) -> SizedGrid {
    let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
    let floor = if shape.side() > 12 {
        shape.cells() / 2
    } else {
        0
    };
    SizedMaker::new(&mut solver, shape, seed, 0, floor)
        .run(&mut solver)
        .puzzle
}

#[tokio::test]
async fn hint_walks_and_rate_rates_every_shape() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (r, c, seed) in [
        (2, 2, 1),
        (2, 3, 2),
        (3, 2, 3),
        (3, 3, 4),
        (3, 4, 5),
        (4, 4, 6),
    ] {
        let shape = Shape::new(r, c).unwrap();
        let n = shape.side();
        let p = puzzle(shape, seed);
        let solution: Vec<u8> = {
            let s = client
                .solved(pb::SolveRequest {
                    puzzle: Some(wire(p.values(), shape)),
                    options: None,
                })
                .await;
            assert_eq!(s.outcome(), Outcome::Solved, "{shape}");
            s.grid.unwrap().cells.iter().map(|&v| v as u8).collect()
        };
        assert!(is_solution(&solution, r, c), "{shape}");

        // Rate: a rating, and its parts agree with each other.
        let rated = client
            .rate(pb::RateRequest {
                puzzle: Some(wire(p.values(), shape)),
            })
            .await
            .unwrap_or_else(|e| panic!("{shape}: {e:?}"))
            .into_inner();
        assert_eq!(rated.outcome(), Outcome::Solved, "{shape}");
        let rating = rated.rating.expect("a unique puzzle is rated");
        assert!(!rating.counts.is_empty(), "{shape}: {rating:?}");
        assert!(
            rating
                .counts
                .iter()
                .any(|t| t.technique_name == rating.hardest_name),
            "{shape}: {rating:?}"
        );
        // SE's ladder finishes it, or it is unrated (20.0) and extreme.
        assert_eq!(
            rating.solved_by_techniques,
            rating.se_rating < 20.0,
            "{shape}: {rating:?}"
        );
        assert!(
            rating.solved_by_techniques || rating.label() == pb::Label::Extreme,
            "{shape}: {rating:?}"
        );

        // The walk, with the test's own pencil marks.
        let mut values = p.values().to_vec();
        let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let mut marks: Vec<u64> = (0..n * n)
            .map(|cell| {
                if values[cell] != 0 {
                    return 0;
                }
                peers(cell, r, c)
                    .into_iter()
                    .filter(|&x| values[x] != 0)
                    .fold(all, |m, x| m & !(1u64 << (values[x] - 1)))
            })
            .collect();
        let mut used = std::collections::BTreeSet::new();
        let mut steps = 0;
        loop {
            let answer = client
                .hint(pb::HintRequest {
                    puzzle: Some(wire(&values, shape)),
                    candidates: Some(pb::Candidates {
                        masks: Vec::new(),
                        wide_masks: marks.clone(),
                    }),
                })
                .await
                .unwrap_or_else(|e| panic!("{shape} step {steps}: {e:?}"))
                .into_inner();
            if answer.solved {
                break;
            }
            let step = answer
                .step
                .unwrap_or_else(|| panic!("{shape} step {steps}: no step"));
            assert!(
                step.placements.len() + step.eliminations.len() > 0,
                "{shape}: {step:?}"
            );
            let named = named_cells(&step.explanation);
            for &(row, col) in &named {
                assert!(
                    (1..=n).contains(&row) && (1..=n).contains(&col),
                    "{shape}: {}",
                    step.explanation
                );
            }
            // Placements must be the solution's digits, in cells the
            // explanation names; eliminations must spare them.
            let why = |what: &str| format!("{shape}: {what}: {}", step.explanation);
            for p in &step.placements {
                let (cell, d) = (p.cell as usize, p.digit as u8);
                assert_eq!(d, solution[cell], "{}", why("a wrong digit"));
                let at = (cell / n + 1, cell % n + 1);
                assert!(named.contains(&at), "{}", why("the filled cell unnamed"));
                values[cell] = d;
                marks[cell] = 0;
                for x in peers(cell, r, c) {
                    marks[x] &= !(1u64 << (d - 1));
                }
            }
            for e in &step.eliminations {
                let (cell, d) = (e.cell as usize, e.digit as u8);
                assert_ne!(d, solution[cell], "{}", why("the solution's digit removed"));
                marks[cell] &= !(1u64 << (d - 1));
            }
            used.insert(step.technique_name.clone());
            steps += 1;
            assert!(steps <= 2 * n * n * n, "{shape}: the walk does not end");
        }
        assert!(is_solution(&values, r, c), "{shape}: the walk ends solved");
        assert_eq!(values, solution, "{shape}");
        println!(
            "{shape}: {} givens, rated {} {:.1} ({}), {steps} hints: {used:?}",
            p.givens(),
            rating.label().as_str_name(),
            rating.se_rating,
            rating.hardest_name
        );
    }
}

/// Pencil marks at other sizes: the wrong count or bits beyond the side's
/// digits are refused naming the field, and a mark that removed the
/// solution's digit is the step.
#[tokio::test]
async fn pencil_marks_of_other_sizes_are_checked() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let shape = Shape::new(2, 2).unwrap();
    let p = puzzle(shape, 9);
    let hint = |candidates: pb::Candidates| pb::HintRequest {
        puzzle: Some(wire(p.values(), shape)),
        candidates: Some(candidates),
    };
    let e = client
        .hint(hint(pb::Candidates {
            masks: vec![0xF; 15],
            wide_masks: Vec::new(),
        }))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("16 masks"), "{}", e.message());
    let mut masks = vec![0u32; 16];
    let open = p.values().iter().position(|&v| v == 0).unwrap();
    masks[open] = 0x10;
    let e = client
        .hint(hint(pb::Candidates {
            masks: masks.clone(),
            wide_masks: Vec::new(),
        }))
        .await
        .unwrap_err();
    assert!(
        e.message().contains(&format!("candidates.masks[{open}]")),
        "{}",
        e.message()
    );
    assert!(
        e.message().contains("beyond the 4 digits"),
        "{}",
        e.message()
    );
    // Marks without the solution's digit in the first open cell.
    let solution = sudoku_core::solver::sized::run_sized(&p, 1, u64::MAX)
        .1
        .unwrap();
    let d = solution.values()[open];
    masks[open] = 0xF & !(1 << (d - 1));
    let step = client
        .hint(hint(pb::Candidates {
            masks,
            wide_masks: Vec::new(),
        }))
        .await
        .unwrap()
        .into_inner()
        .step
        .unwrap();
    assert_eq!(step.technique_name, "MISSING_CANDIDATE");
    assert_eq!(step.restorations[0].cell as usize, open);
    assert!(step.explanation.starts_with(&format!(
        "r{}c{} must keep {d}",
        open / 4 + 1,
        open % 4 + 1
    )));
}
