//! Every size through the service: grids of 4x4 to 64x64 and rectangular
//! boxes on Solve, SolveBatch (sizes mixed in one call) and Validate, each
//! answer checked by the sized grid's own validator; the errors that name
//! the field; and the sized engine against the fast one on every 9x9
//! public set.

use crate::support::SolveExt;
use crate::support::text_grid;
use crate::support::violations;
use crate::support::{CLASSIC, TestServer, data_set};
use sudoku_core::generate::sized::SizedMaker;
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};
use sudoku_core::solver::sized::{SizedSolver, run_sized};
use sudoku_core::solver::{self, Progress};
use sudoku_grpc::pb::{self, Outcome, SolveMode};
use tonic::Code;

/// The box shapes every check covers.
const SHAPES: [(usize, usize); 14] = [
    (2, 2),
    (2, 3),
    (3, 2),
    (2, 4),
    (3, 3),
    (3, 4),
    (4, 3),
    (4, 4),
    (4, 5),
    (5, 5),
    (6, 6),
    (7, 7),
    (8, 8),
    (2, 5),
];

/// A puzzle of `shape` with one solution: made by the sized maker, clue
/// removal stopped at 60% of the cells (90% above 25x25, to keep the test
/// short), once per shape and shared by every test of this binary.
fn puzzle(shape: Shape) -> SizedGrid {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static MADE: OnceLock<Mutex<HashMap<Shape, SizedGrid>>> = OnceLock::new();
    let mut made = MADE.get_or_init(Default::default).lock().unwrap();
    made.entry(shape)
        .or_insert_with(|| {
            let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
            let floor = shape.cells() * if shape.side() > 25 { 9 } else { 6 } / 10;
            let salt = (shape.box_rows() + shape.box_cols()) as u64;
            SizedMaker::new(&mut solver, shape, 11, salt, floor)
                .run(&mut solver)
                .puzzle
        })
        .clone()
}

fn wire(g: &SizedGrid, text: bool) -> pb::Grid {
    let s = g.shape();
    pb::Grid {
        text: if text {
            g.to_text().unwrap()
        } else {
            String::new()
        },
        cells: if text { vec![] } else { g.to_cells() },
        box_rows: s.box_rows() as u32,
        box_cols: s.box_cols() as u32,
    }
}

/// The solution on the wire, read back and checked: valid, and keeping the
/// puzzle's givens.
fn check(puzzle: &SizedGrid, got: &pb::Grid, text: bool) {
    let s = puzzle.shape();
    // A 9x9 takes the fast path, and comes back with the box unset (3x3).
    let want = if s == Shape::CLASSIC {
        (0, 0)
    } else {
        (s.box_rows() as u32, s.box_cols() as u32)
    };
    assert_eq!((got.box_rows, got.box_cols), want);
    let sol = if text {
        assert!(got.cells.is_empty(), "{s}: answer in the request's form");
        SizedGrid::from_text(s, &got.text).unwrap()
    } else {
        SizedGrid::from_cells(s, &got.cells).unwrap()
    };
    assert!(sol.is_valid_solution(), "{s}: {sol:?}");
    assert!(puzzle.is_kept_by(&sol), "{s}");
}

/// Solves `puzzle` through unary Solve, sent as text or as cells, and
/// checks that it comes back SOLVED with a solution keeping its givens.
async fn solve_and_check(
    client: &mut sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient<
        tonic::transport::Channel,
    >,
    puzzle: &SizedGrid,
    text: bool,
) {
    let shape = puzzle.shape();
    let s = client
        .solve(pb::SolveRequest {
            puzzle: Some(wire(puzzle, text)),
            options: None,
        })
        .await
        .unwrap_or_else(|e| panic!("{shape}: {e:?}"))
        .into_inner()
        .solution
        .unwrap();
    assert_eq!(s.outcome(), Outcome::Solved, "{shape}");
    check(puzzle, s.grid.as_ref().unwrap(), text);
}

#[tokio::test]
async fn every_shape_is_solved_through_solve() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (r, c) in SHAPES {
        let shape = Shape::new(r, c).unwrap();
        let p = puzzle(shape);
        for text in [true, false] {
            if text && shape.side() > 35 {
                continue;
            }
            solve_and_check(&mut client, &p, text).await;
        }
    }
}

#[tokio::test]
async fn one_solve_batch_call_mixes_sizes() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut puzzles = Vec::new();
    let mut items = Vec::new();
    for (i, (r, c)) in SHAPES.iter().enumerate() {
        let shape = Shape::new(*r, *c).unwrap();
        let p = puzzle(shape);
        items.push(pb::BatchItem {
            id: i as u64,
            puzzle: Some(wire(&p, shape.side() <= 35 && i % 2 == 0)),
        });
        puzzles.push(Some(p));
        // A 9x9 of the fast path between each.
        items.push(pb::BatchItem {
            id: 100 + i as u64,
            puzzle: text_grid(CLASSIC),
        });
    }
    let requests = vec![
        pb::SolveBatchRequest {
            items: items[..10].to_vec(),
            options: None,
        },
        pb::SolveBatchRequest {
            items: items[10..].to_vec(),
            options: Some(pb::SolveOptions {
                mode: SolveMode::Count as i32,
                max_solutions: 1,
            }),
        },
    ];
    let mut stream = client
        .solve_batch(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner();
    let mut seen = 0;
    while let Some(msg) = stream.message().await.unwrap() {
        for r in msg.results {
            let Some(pb::batch_result::Result::Solution(s)) = r.result else {
                panic!("item {}: {:?}", r.id, r.result);
            };
            let g = s.grid.as_ref().unwrap();
            if r.id >= 100 {
                let sol = Grid::from_text(&g.text).unwrap();
                assert!(sol.is_valid_solution());
                assert_eq!((g.box_rows, g.box_cols), (0, 0));
            } else {
                let p = puzzles[r.id as usize].as_ref().unwrap();
                check(p, g, !g.text.is_empty());
            }
            seen += 1;
        }
    }
    assert_eq!(seen, items.len());
}

#[tokio::test]
async fn sizes_count_and_validate() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // 4x4 with 2x2 boxes: 288 grids in all.
    let empty = SizedGrid::empty(Shape::new(2, 2).unwrap());
    let s = client
        .solved(pb::SolveRequest {
            puzzle: Some(wire(&empty, true)),
            options: Some(pb::SolveOptions {
                mode: SolveMode::Count as i32,
                max_solutions: 1000,
            }),
        })
        .await;
    assert_eq!(
        (s.outcome(), s.solution_count),
        (Outcome::MultipleSolutions, 288)
    );
    // A 16x16 with a value given twice in a box.
    let shape = Shape::new(4, 4).unwrap();
    let mut p = puzzle(shape);
    p.values_mut()[0] = 5;
    p.values_mut()[17] = 5;
    let v = client
        .validate(pb::ValidateRequest {
            puzzle: Some(wire(&p, true)),
            current: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!v.conflicts.is_empty());
    assert!(
        v.conflicts
            .iter()
            .any(|c| c.first == 0 && c.second == 17 && c.digit == 5)
    );
    assert!(!v.solvable);
    // A full 16x16 grid with one cell blanked: unique, and its solution.
    let (_, full) = run_sized(&SizedGrid::empty(shape), 1, u64::MAX);
    let full = full.unwrap();
    let mut one = full.clone();
    one.values_mut()[40] = 0;
    let v = client
        .validate(pb::ValidateRequest {
            puzzle: Some(wire(&one, false)),
            current: Some(wire(&one, false)),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(v.solvable && v.unique && v.search_complete);
    assert_eq!(v.solution.unwrap().cells, full.to_cells());
}

#[tokio::test]
async fn size_errors_name_the_field_and_the_cell() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut solve = async |g: pb::Grid| {
        client
            .solve(pb::SolveRequest {
                puzzle: Some(g),
                options: None,
            })
            .await
            .unwrap_err()
    };
    let grid = |text: String, r, c| pb::Grid {
        text,
        box_rows: r,
        box_cols: c,
        ..Default::default()
    };
    // 40x40 has no text form.
    let e = solve(grid(".".repeat(1600), 5, 8)).await;
    let v = violations(&e);
    assert_eq!(v[0].0, "puzzle.text");
    assert!(v[0].1.contains("up to 35"), "{v:?}");
    // A character beyond the size, by row and column.
    let mut t = ".".repeat(36);
    t.replace_range(13..14, "7");
    let v = violations(&solve(grid(t, 2, 3)).await);
    assert_eq!(v[0].0, "puzzle.text");
    assert!(v[0].1.contains("row 3, column 2"), "{v:?}");
    assert!(v[0].1.contains("'1'-'6'"), "{v:?}");
    // Half a box, and a box too large.
    let v = violations(&solve(grid(".".repeat(16), 2, 0)).await);
    assert_eq!(v[0].0, "puzzle.box_rows");
    let v = violations(&solve(grid(".".repeat(16), 9, 9)).await);
    assert_eq!(v[0].0, "puzzle.box_rows");
    // A value above N in the integer form.
    let e = solve(pb::Grid {
        cells: [vec![17], vec![0; 255]].concat(),
        box_rows: 4,
        box_cols: 4,
        ..Default::default()
    })
    .await;
    let v = violations(&e);
    assert_eq!(v[0].0, "puzzle.cells[0]");
    // Hint and Rate take every size: an empty 4x4 has many solutions, so
    // no technique applies and the hint is the search's digit; Rate says
    // the puzzle is not unique and gives no rating.
    let step = client
        .hint(pb::HintRequest {
            puzzle: Some(grid(".".repeat(16), 2, 2)),
            candidates: None,
        })
        .await
        .unwrap()
        .into_inner()
        .step
        .unwrap();
    assert_eq!(step.technique_name, "SEARCH");
    assert_eq!(step.placements.len(), 1);
    let rated = client
        .rate(pb::RateRequest {
            puzzle: Some(grid(".".repeat(16), 2, 2)),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rated.outcome(), Outcome::MultipleSolutions);
    assert!(rated.rating.is_none());
}

/// The sized engine against the fast one on every 9x9 public set: the same
/// solution for a unique puzzle, the same count up to 3 for any; one
/// solver reused across the set, restarted, and resumed in slices.
#[test]
fn the_sized_engine_agrees_with_the_fast_one_on_every_public_set() {
    let sets = [
        "puzzles2_17_clue",
        "puzzles3_magictour_top1465",
        "puzzles6_forum_hardest_1106",
        "puzzles7_serg_benchmark",
    ];
    let mut sized = SizedSolver::new(&SizedGrid::empty(Shape::CLASSIC), 1);
    for set in sets {
        let puzzles = data_set(set);
        // Every puzzle of the smaller sets; a spread of the 49,000 17-clue
        // ones (the same rule: every 16th).
        let step = if puzzles.len() > 20_000 { 16 } else { 1 };
        for (i, text) in puzzles.iter().enumerate().step_by(step) {
            let g = Grid::from_text(text).unwrap();
            let fast = solver::run(&g, 3, u64::MAX);
            sized.restart(&SizedGrid::from_grid(&g), 3);
            while sized.resume(1000) == Progress::Paused {}
            let a = sized.answer();
            assert!(a.complete, "{set} #{i}");
            assert_eq!(a.count, fast.count, "{set} #{i}: {text}");
            if fast.count == 1 {
                let sol = sized.solution().and_then(|s| s.to_grid());
                assert_eq!(sol, fast.solution, "{set} #{i}");
            }
        }
    }
}

#[tokio::test]
async fn generate_makes_unique_puzzles_of_other_sizes() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (r, c, cells) in [(2, 3, false), (3, 2, true), (2, 4, false)] {
        let shape = Shape::new(r, c).unwrap();
        let request = pb::GenerateRequest {
            count: 3,
            seed: Some(42),
            cells,
            box_rows: r as u32,
            box_cols: c as u32,
            ..Default::default()
        };
        let mut stream = client.generate(request).await.unwrap().into_inner();
        let mut made = Vec::new();
        while let Some(m) = stream.message().await.unwrap() {
            let p = m.puzzle.unwrap();
            let (g, s) = (p.puzzle.unwrap(), p.solution.unwrap());
            let read = |g: &pb::Grid| {
                assert_eq!((g.box_rows, g.box_cols), (r as u32, c as u32));
                if cells {
                    SizedGrid::from_cells(shape, &g.cells).unwrap()
                } else {
                    SizedGrid::from_text(shape, &g.text).unwrap()
                }
            };
            let (puzzle, solution) = (read(&g), read(&s));
            assert!(solution.is_valid_solution() && puzzle.is_kept_by(&solution));
            let (a, only) = run_sized(&puzzle, 2, u64::MAX);
            assert_eq!((a.count, only), (1, Some(solution)), "{shape}");
            assert_eq!(p.clues as usize, puzzle.givens());
            // Rated as Rate rates it.
            let rating = p.rating.expect("rated");
            let rated = client
                .rate(pb::RateRequest {
                    puzzle: Some(g.clone()),
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(rated.rating, Some(rating), "{shape}");
            made.push(puzzle);
        }
        assert_eq!(made.len(), 3);
        // The same seed makes the same puzzles.
        let mut again = client.generate(request).await.unwrap().into_inner();
        let first = again.message().await.unwrap().unwrap().puzzle.unwrap();
        assert_eq!(first.clues as usize, made[0].givens());
    }
    // A symmetry that would turn 2x3 boxes into 3x2 is refused; a 4x4
    // grid is never harder than easy, so a hard one is not found.
    let e = client
        .generate(pb::GenerateRequest {
            box_rows: 2,
            box_cols: 3,
            symmetry: pb::Symmetry::Rotate90 as i32,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(violations(&e)[0].0, "symmetry");
    assert!(violations(&e)[0].1.contains("rotate180"), "{e:?}");
    let mut hard = client
        .generate(pb::GenerateRequest {
            box_rows: 2,
            box_cols: 2,
            label: pb::Label::Hard as i32,
            seed: Some(1),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let e = hard.message().await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("1000 attempts"), "{e:?}");
}

/// Generate at other sizes takes every option the 9x9 one takes: a label
/// or an SE range, a symmetry the shape admits, a clue range; each puzzle
/// is checked here by the sized engine (one solution), by this test's own
/// reading of the clue pattern (whole orbits), and by Rate (the label).
#[tokio::test]
async fn generate_takes_labels_ratings_symmetry_and_clues_at_every_size() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // (box, label, min..max rating, symmetry, max clues)
    let cases = [
        (
            (2, 2),
            pb::Label::Easy,
            (0.0, 0.0),
            pb::Symmetry::Rotate90,
            0,
        ),
        (
            (2, 3),
            pb::Label::Hard,
            (0.0, 0.0),
            pb::Symmetry::Rotate180,
            0,
        ),
        (
            (3, 2),
            pb::Label::Unspecified,
            (4.0, 4.4),
            pb::Symmetry::Rotate180,
            0,
        ),
        (
            (3, 4),
            pb::Label::Medium,
            (0.0, 0.0),
            pb::Symmetry::MirrorBoth,
            70,
        ),
        (
            (4, 4),
            pb::Label::Expert,
            (0.0, 0.0),
            pb::Symmetry::Diagonal,
            0,
        ),
        (
            (4, 4),
            pb::Label::Easy,
            (0.0, 0.0),
            pb::Symmetry::MirrorHorizontal,
            120,
        ),
    ];
    for ((r, c), label, (min_rating, max_rating), symmetry, max_clues) in cases {
        let shape = Shape::new(r, c).unwrap();
        let n = shape.side();
        let request = pb::GenerateRequest {
            count: 2,
            seed: Some(3),
            label: label as i32,
            min_rating,
            max_rating,
            symmetry: symmetry as i32,
            max_clues,
            box_rows: r as u32,
            box_cols: c as u32,
            ..Default::default()
        };
        let mut stream = client.generate(request).await.unwrap().into_inner();
        let mut got = 0;
        while let Some(m) = stream
            .message()
            .await
            .unwrap_or_else(|e| panic!("{shape}: {e:?}"))
        {
            let p = m.puzzle.unwrap();
            let g = p.puzzle.clone().unwrap();
            let puzzle = SizedGrid::from_text(shape, &g.text).unwrap();
            let (a, _) = run_sized(&puzzle, 2, u64::MAX);
            assert_eq!(a.count, 1, "{shape}");
            // The clue pattern, read with this test's own maps.
            let is_clue = |row: usize, col: usize| puzzle.values()[row * n + col] != 0;
            for row in 0..n {
                for col in 0..n {
                    let (m, k) = (n - 1 - row, n - 1 - col);
                    let images: Vec<(usize, usize)> = match symmetry {
                        pb::Symmetry::Rotate90 => vec![(col, m), (m, k), (k, row)],
                        pb::Symmetry::Rotate180 => vec![(m, k)],
                        pb::Symmetry::MirrorBoth => vec![(m, col), (row, k)],
                        pb::Symmetry::MirrorHorizontal => vec![(m, col)],
                        pb::Symmetry::Diagonal => vec![(col, row)],
                        _ => unreachable!(),
                    };
                    for (a, b) in images {
                        assert_eq!(is_clue(row, col), is_clue(a, b), "{shape} {symmetry:?}");
                    }
                }
            }
            if max_clues > 0 {
                assert!(p.clues <= max_clues, "{shape}: {} clues", p.clues);
            }
            let rating = p.rating.clone().expect("rated");
            if label != pb::Label::Unspecified {
                assert_eq!(rating.label(), label, "{shape}");
            } else {
                assert!(
                    rating.solved_by_techniques
                        && (min_rating..=max_rating).contains(&rating.se_rating),
                    "{shape}: {rating:?}"
                );
            }
            let rated = client
                .rate(pb::RateRequest { puzzle: Some(g) })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(rated.rating, Some(rating), "{shape}");
            got += 1;
        }
        assert_eq!(got, 2, "{shape}");
    }
}

/// `sudoku solve --box` over stdin, with its arguments.
async fn cli(args: Vec<String>, stdin: String) -> std::process::Output {
    tokio::task::spawn_blocking(move || crate::support::sudoku_stdin(&args, &stdin))
        .await
        .unwrap()
}

/// The committed sets through `sudoku solve --box`, locally and on a
/// server: every answer valid, keeping its puzzle, in the input's shape.
#[tokio::test]
async fn the_cli_solves_every_committed_size_locally_and_on_a_server() {
    let server = TestServer::start().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sizes");
    for (file, b) in [
        ("6x6.txt", "2x3"),
        ("8x8.txt", "2x4"),
        ("12x12.txt", "3x4"),
        ("16x16-hard.txt", "auto"),
        ("25x25-hard.txt", "5x5"),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let puzzles: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            // 25x25-hard puzzles take seconds to minutes in a test build:
            // the quickest one (0.7 s in release) only.
            .skip(if file.starts_with("25x25") { 3 } else { 0 })
            .take(if file.starts_with("25x25") { 1 } else { 5 })
            .collect();
        let n = (puzzles[0].len() as f64).sqrt() as usize;
        let shape = Shape::for_side(n).unwrap();
        for remote in [false, true] {
            let mut args = vec!["solve".to_string(), "--box".to_string(), b.to_string()];
            if remote {
                args.extend(["--server".to_string(), server.url()]);
            } else {
                args.push("--local".to_string());
            }
            // The first puzzle also as a block of N spaced rows.
            let block: Vec<String> = puzzles[0]
                .as_bytes()
                .chunks(n)
                .map(|row| {
                    row.iter()
                        .map(|&c| (c as char).to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            let input = format!("{}\n{}\n", puzzles.join("\n"), block.join("\n"));
            let out = cli(args, input).await;
            assert!(out.status.success(), "{file}: {out:?}");
            let stdout = String::from_utf8(out.stdout).unwrap();
            let lines: Vec<&str> = stdout.lines().collect();
            assert_eq!(lines.len(), puzzles.len() + n, "{file}");
            let mut answers: Vec<String> = lines[..puzzles.len()]
                .iter()
                .map(|l| l.to_string())
                .collect();
            answers.push(lines[puzzles.len()..].join("").replace(' ', ""));
            for (p, a) in puzzles.iter().chain([&puzzles[0]]).zip(&answers) {
                let p = SizedGrid::from_text(shape, p).unwrap();
                let s = SizedGrid::from_text(shape, a).unwrap();
                assert!(s.is_valid_solution() && p.is_kept_by(&s), "{file}");
            }
        }
    }
}

/// The box shapes the property tests draw from: small enough for many cases.
const SMALL: [(usize, usize); 8] = [
    (2, 2),
    (2, 3),
    (3, 2),
    (2, 4),
    (4, 2),
    (3, 3),
    (3, 4),
    (4, 4),
];

/// `g` with its values relabelled by `label` (value v becomes label[v-1]),
/// its bands and stacks rotated by `band` and `stack`, and rows and columns
/// rotated within each by `row` and `col`: moves that keep every rule.
fn transform(
    g: &SizedGrid,
    label: &[u8],
    band: usize,
    stack: usize,
    row: usize,
    col: usize,
) -> SizedGrid {
    let s = g.shape();
    let (n, br, bc) = (s.side(), s.box_rows(), s.box_cols());
    let (bands, stacks) = (n / br, n / bc);
    let map_row = |r: usize| ((r / br + band) % bands) * br + (r % br + row) % br;
    let map_col = |c: usize| ((c / bc + stack) % stacks) * bc + (c % bc + col) % bc;
    let mut out = vec![0u8; n * n];
    for (i, &v) in g.values().iter().enumerate() {
        let (r, c) = (i / n, i % n);
        out[map_row(r) * n + map_col(c)] = if v == 0 { 0 } else { label[usize::from(v) - 1] };
    }
    SizedGrid::from_values(s, out).unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Relabelling values and permuting bands, stacks, rows and columns
    /// keeps the count of solutions, and maps the one solution of a unique
    /// puzzle to the transformed puzzle's.
    #[test]
    fn sized_answers_are_invariant_under_relabelling_and_permutation(
        which in 0..SMALL.len(),
        seed in 0u64..1000,
        perm in proptest::collection::vec(0u64..u64::MAX, 16),
        band in 0usize..8, stack in 0usize..8, row in 0usize..8, col in 0usize..8,
        floor_pct in 0usize..60,
    ) {
        let (r, c) = SMALL[which];
        let shape = Shape::new(r, c).unwrap();
        let n = shape.side();
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let made = SizedMaker::new(&mut solver, shape, seed, 0, shape.cells() * floor_pct / 100)
            .run(&mut solver);
        // Some puzzles with several solutions too: one clue fewer.
        let mut loose = made.puzzle.clone();
        if let Some(i) = loose.values().iter().position(|&v| v != 0) {
            loose.values_mut()[i] = 0;
        }
        let mut label: Vec<u8> = (1..=n as u8).collect();
        label.sort_by_key(|&v| perm[usize::from(v) - 1]);
        for p in [&made.puzzle, &loose] {
            let q = transform(p, &label, band, stack, row, col);
            let (a, sol) = run_sized(p, 3, u64::MAX);
            let (b, tsol) = run_sized(&q, 3, u64::MAX);
            proptest::prop_assert_eq!(a.count, b.count);
            let (sol, tsol) = (sol.unwrap(), tsol.unwrap());
            proptest::prop_assert!(sol.is_valid_solution() && p.is_kept_by(&sol));
            proptest::prop_assert!(tsol.is_valid_solution() && q.is_kept_by(&tsol));
            if a.count == 1 {
                proptest::prop_assert_eq!(transform(&sol, &label, band, stack, row, col), tsol);
            }
        }
    }
}

/// A solved grid of side `n` with `r`x`c` boxes checked without the crate:
/// every row, column and box holds 1..=n once, and every clue of `puzzle`
/// is kept. Cells are characters: '1'-'9', then 'A' for 10 on.
fn solves(puzzle: &str, answer: &str, r: usize, c: usize) -> bool {
    let n = r * c;
    let value = |ch: char| ch.to_digit(36).map_or(0, |d| d as usize);
    let p: Vec<usize> = puzzle.chars().map(value).collect();
    let a: Vec<usize> = answer.chars().map(value).collect();
    if p.len() != n * n || a.len() != n * n {
        return false;
    }
    let unit_ok = |cells: Vec<usize>| {
        let mut seen = vec![false; n + 1];
        cells
            .into_iter()
            .all(|i| (1..=n).contains(&a[i]) && !std::mem::replace(&mut seen[a[i]], true))
    };
    (0..n).all(|k| {
        unit_ok((0..n).map(|j| k * n + j).collect())
            && unit_ok((0..n).map(|j| j * n + k).collect())
            && unit_ok(
                (0..n)
                    .map(|j| (k / r * r + j / c) * n + k % r * c + j % c)
                    .collect(),
            )
    }) && p.iter().zip(&a).all(|(&g, &s)| g == 0 || g == s)
}

/// Without `--box` the first record tells the size: the whole 16x16 set
/// (lines) and a 4x4 block, locally and on a server, each answer checked by
/// an independent validator and written in the input's shape.
#[tokio::test]
async fn the_cli_infers_square_boxes_from_the_first_record() {
    let server = TestServer::start().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sizes");
    let file = root.join("16x16-hard.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    let puzzles: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(puzzles.len(), 40);
    let block = "1 . . 4\n. . . .\n. 1 . .\n4 . . 1\n";
    for remote in [false, true] {
        let mut args = vec!["solve".to_string(), file.display().to_string()];
        let mut small = vec!["solve".to_string()];
        for a in [&mut args, &mut small] {
            if remote {
                a.extend(["--server".to_string(), server.url()]);
            } else {
                a.push("--local".to_string());
            }
        }
        let out = cli(args, String::new()).await;
        assert!(out.status.success(), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("16x16 (4x4 boxes)"),
            "{out:?}"
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let answers: Vec<&str> = stdout.lines().collect();
        assert_eq!(answers.len(), puzzles.len(), "remote {remote}");
        for (p, a) in puzzles.iter().zip(&answers) {
            assert!(solves(p, a, 4, 4), "remote {remote}: {p} -> {a}");
        }

        let out = cli(small, block.to_string()).await;
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let rows: Vec<&str> = stdout.lines().collect();
        assert_eq!(rows.len(), 4, "{stdout}");
        assert!(rows.iter().all(|r| r.split(' ').count() == 4), "{stdout}");
        let flat = |s: &str| s.replace([' ', '\n'], "").replace('.', "0");
        assert!(solves(&flat(block), &flat(&stdout), 2, 2), "{stdout}");
    }
}

/// A 6x6 file without `--box`: each record echoed with an `# error:` that
/// says which boxes to give, as a 9x9 failure is, and exit code 1; with
/// `--box 2x3` it solves.
#[tokio::test]
async fn the_cli_asks_for_the_box_a_side_cannot_tell() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sizes");
    let text = std::fs::read_to_string(root.join("6x6.txt")).unwrap();
    let puzzles: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(3)
        .collect();
    let input = format!("# six\n{}\n", puzzles.join("\n"));
    let out = cli(vec!["solve".into(), "--local".into()], input.clone()).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        (2..5)
            .map(|l| format!(
                "{}  # error: line {l}: a 6x6 grid needs --box 2x3 or --box 3x2",
                puzzles[l - 2]
            ))
            .collect::<Vec<_>>()
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: a 6x6 grid needs --box 2x3"));
    let out = cli(
        vec![
            "solve".into(),
            "--local".into(),
            "--box".into(),
            "2x3".into(),
        ],
        input,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    for (p, a) in puzzles.iter().zip(stdout.lines()) {
        assert!(solves(p, a, 2, 3), "{p} -> {a}");
    }
}

/// `--output jsonl` for other sizes: one object per record, in order, the
/// same locally and on a server (but for the time); a 64x64 solution as an
/// array of integers, since `text` stops at 35x35.
#[tokio::test]
async fn the_cli_writes_jsonl_for_every_size() {
    let server = TestServer::start().await;
    let six = puzzle(Shape::new(2, 3).unwrap());
    let clashed = six.values().iter().position(|&v| v != 0).unwrap();
    // A given's digit put beside it in its row: a clash of givens.
    let clash = {
        let mut g = six.clone();
        let i = clashed;
        let d = g.values()[i];
        g.values_mut()[i / 6 * 6 + (i % 6 + 1) % 6] = d;
        g
    };
    let input = format!(
        "{}\n{}\nnot a grid\n",
        six.to_text().unwrap(),
        clash.to_text().unwrap()
    );
    let mut runs = Vec::new();
    for remote in [false, true] {
        let mut args: Vec<String> = ["solve", "--box", "2x3", "--output", "jsonl"]
            .map(String::from)
            .to_vec();
        if remote {
            args.extend(["--server".to_string(), server.url()]);
        } else {
            args.push("--local".to_string());
        }
        let out = cli(args, input.clone()).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let objects = crate::support::json_lines(&out.stdout);
        assert_eq!(objects.len(), 3, "{objects:?}");
        assert_eq!(objects[0]["line"], 1);
        assert_eq!(objects[0]["box"], "2x3");
        assert_eq!(objects[0]["outcome"], "solved");
        let s = objects[0]["solution"].as_str().unwrap();
        let s = SizedGrid::from_text(six.shape(), s).unwrap();
        assert!(s.is_valid_solution() && six.is_kept_by(&s));
        assert_eq!(objects[1]["outcome"], "invalid");
        assert_eq!(objects[1]["error"]["code"], "INVALID_ARGUMENT");
        // Rows and columns counted from 1, as in every message of the CLI:
        // the clash names the changed cell.
        let j = clashed / 6 * 6 + (clashed % 6 + 1) % 6;
        let msg = objects[1]["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("{} is given twice in ", six.values()[clashed]))
                && msg.contains(&format!("row {}, column {}", j / 6 + 1, j % 6 + 1))
                && !msg.contains("row 0")
                && !msg.contains("column 0"),
            "{msg}"
        );
        assert_eq!(objects[2]["line"], 3);
        assert_eq!(objects[2]["outcome"], "invalid");
        runs.push(crate::support::timeless(objects));
    }
    assert_eq!(runs[0], runs[1], "--local and --server agree");

    // 64x64: cells only, so the solution is an array.
    let big = puzzle(Shape::new(8, 8).unwrap());
    let line: Vec<String> = big.values().iter().map(|v| v.to_string()).collect();
    let out = cli(
        ["solve", "--box", "8x8", "--local", "--output", "jsonl"]
            .map(String::from)
            .to_vec(),
        format!("{}\n", line.join(" ")),
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let o: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    let cells: Vec<u32> = o["solution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    let s = SizedGrid::from_cells(big.shape(), &cells).unwrap();
    assert!(s.is_valid_solution() && big.is_kept_by(&s));
}

/// Runs `sudoku solve` with `args` on `input` locally and on `server`:
/// the local output, which the server's must equal.
async fn both_ways(
    tag: &'static str,
    server: &TestServer,
    args: &[&str],
    input: &str,
) -> std::process::Output {
    let (url, input) = (server.url(), input.to_string());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let run = |how: &[&str]| {
            let mut all: Vec<&str> = vec!["solve"];
            all.extend(how);
            all.extend(args.iter().map(String::as_str));
            crate::support::sudoku_on_file(tag, &all, &input)
        };
        let local = run(&["--local"]);
        let remote = run(&["--server", &url]);
        assert_eq!(local.stdout, remote.stdout, "{tag}: {remote:?}");
        assert_eq!(local.status.code(), remote.status.code(), "{tag}");
        local
    })
    .await
    .unwrap()
}

/// `--box auto` on a 4-line 4x4 grid said "no box fits a side of 2" (its
/// first row was taken for a whole 2x2 grid) where no `--box` solved it.
#[tokio::test]
async fn box_auto_reads_a_four_line_four_by_four() {
    let server = TestServer::start().await;
    let grid = "1...\n..3.\n.4..\n...2\n";
    for args in [&["--box", "auto"][..], &[]] {
        let out = both_ways("box-auto", &server, args, grid).await;
        assert!(out.status.success(), "{args:?}: {out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout, "1324\n4231\n2413\n3142\n", "{args:?}");
    }
}

/// A 6x6 without `--box` printed `# error:` alone, where a 9x9 failure
/// echoes its puzzle first: other sizes echo their records too, a line
/// with the error after it, a block with the error on a line below.
#[tokio::test]
async fn a_failed_record_of_another_size_is_echoed_before_its_error() {
    let server = TestServer::start().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sizes");
    let text = std::fs::read_to_string(root.join("6x6.txt")).unwrap();
    let six = text.lines().find(|l| !l.starts_with('#')).unwrap();
    // Its rows spaced, with a ruler between the boxes' bands.
    let rows: Vec<String> = (0..6)
        .map(|r| {
            let cells: Vec<String> = six[r * 6..r * 6 + 6].chars().map(String::from).collect();
            format!("{} | {}", cells[..3].join(" "), cells[3..].join(" "))
        })
        .collect();
    let block = format!(
        "{}\n------+------\n{}\n------+------\n{}\n",
        rows[..2].join("\n"),
        rows[2..4].join("\n"),
        rows[4..].join("\n")
    );
    let line = format!("11{}", ".".repeat(34));
    let input = format!("{block}{line}\n");
    let out = both_ways("echo-six", &server, &[], &input).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let why = "a 6x6 grid needs --box 2x3 or --box 3x2";
    assert_eq!(
        stdout,
        format!(
            "{}\n# error: line 1: {why}\n{line}  # error: line 9: {why}\n",
            rows.join("\n")
        )
    );
    // With the box, a clash of givens is echoed the same way.
    let out = both_ways("echo-six-box", &server, &["--box", "2x3"], &input).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{stdout}");
    assert_eq!(
        lines[6],
        format!(
            "{line}  # error: line 9: 1 is given twice in row 1: at row 1, column 1 and row 1, column 2"
        )
    );
}

/// JSON boards of other sizes: the first board tells the size, and each
/// answer is a board written as its puzzle was.
#[tokio::test]
async fn json_boards_of_other_sizes_come_back_as_written() {
    let server = TestServer::start().await;
    // One solution: 1324 4231 2413 3142.
    let ints = "[[1,0,0,0],[0,0,3,0],[0,4,0,0],[0,0,0,2]]";
    let strings = "[\n  [\"1\", \".\", \".\", \".\"],\n  [\".\", \".\", \"3\", \".\"],\n  [\".\", \"4\", \".\", \".\"],\n  [\".\", \".\", \".\", \"2\"]\n]";
    let input = format!("{ints}\n{strings}\n");
    for args in [&[][..], &["--box", "auto"], &["--box", "2x2"]] {
        let out = both_ways("json-four", &server, args, &input).await;
        assert!(out.status.success(), "{args:?}: {out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            stdout,
            "[[1,3,2,4],[4,2,3,1],[2,4,1,3],[3,1,4,2]]\n\
             [[\"1\",\"3\",\"2\",\"4\"],[\"4\",\"2\",\"3\",\"1\"],[\"2\",\"4\",\"1\",\"3\"],[\"3\",\"1\",\"4\",\"2\"]]\n",
            "{args:?}"
        );
    }
}

/// Grids with most cells blank and many solutions (data/large/: 80% of a
/// random solution's cells blanked): at 49x49 and 64x64 the tree search
/// alone ran out of the default budget on such grids; with the repair
/// search's turns, unary Solve answers them within it.
#[tokio::test]
async fn sparse_large_grids_are_solved_through_solve() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (b, text) in [
        (7, include_str!("../../data/large/49x49.txt")),
        (8, include_str!("../../data/large/64x64.txt")),
    ] {
        let grid = large_grid(text, b, |percent| percent >= 80);
        solve_and_check(&mut client, &grid, false).await;
    }
}

/// The first grid of a data/large/ file (`b`x`b` boxes) whose share of
/// blank cells, in percent, passes `blanks`.
fn large_grid(text: &str, b: usize, blanks: impl Fn(usize) -> bool) -> SizedGrid {
    let cells: Vec<u32> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect::<Vec<u32>>()
        })
        .find(|v| blanks(v.iter().filter(|&&x| x == 0).count() * 100 / v.len()))
        .unwrap();
    SizedGrid::from_cells(Shape::new(b, b).unwrap(), &cells).unwrap()
}

/// The first 36x36 grid of 50% blanks in data/large/: near the phase
/// transition, where the tree and repair searches alone need millions of
/// nodes and the SAT engine a few hundred thousand.
fn half_blank_36x36() -> SizedGrid {
    let text = include_str!("../../data/large/36x36.txt");
    large_grid(text, 6, |percent| (48..52).contains(&percent))
}

#[tokio::test]
async fn a_half_blank_grid_gets_the_sat_engine_when_the_connection_can_hold_it() {
    let grid = half_blank_36x36();
    let solve = |server: &TestServer| {
        let grid = grid.clone();
        let url = server.url();
        async move {
            let mut client = pb::sudoku_service_client::SudokuServiceClient::connect(url)
                .await
                .unwrap();
            client
                .solve(pb::SolveRequest {
                    puzzle: Some(wire(&grid, false)),
                    options: None,
                })
                .await
                .unwrap()
                .into_inner()
                .solution
                .unwrap()
        }
    };
    // A connection buffer that holds the engine's formula (about 9 MiB):
    // solved within a budget the other searches alone do not finish in.
    let roomy = TestServer::start_with(
        |c| {
            c.max_nodes = 600_000;
            c.connection_buffer_bytes = 64 << 20;
            c.max_buffered_request_bytes = 256 << 20;
        },
        |s| s,
    )
    .await;
    let s = solve(&roomy).await;
    assert_eq!(s.outcome(), Outcome::Solved);
    check(&grid, s.grid.as_ref().unwrap(), false);
    // The default buffer (4 MiB a connection) leaves the engine out: the
    // same budget ends at the work limit, and the call is not refused.
    let tight = TestServer::start_with(|c| c.max_nodes = 600_000, |s| s).await;
    let s = solve(&tight).await;
    assert_eq!(s.outcome(), Outcome::WorkLimitReached);
}

#[tokio::test]
async fn a_server_with_room_makes_minimal_25x25_puzzles_with_the_whole_grid_formula() {
    // The whole-grid formula of a 25x25 grid is about 160 MB by its
    // estimate: a connection buffer that holds it lets Generate ask it
    // every check (docs/sizes.md, "Limits of the maker").
    let server = TestServer::start_with(
        |c| {
            c.connection_buffer_bytes = 512 << 20;
            c.max_buffered_request_bytes = 1 << 30;
        },
        |s| s,
    )
    .await;
    let mut client = server.client().await;
    let shape = Shape::new(5, 5).unwrap();
    let request = pb::GenerateRequest {
        count: 1,
        seed: Some(1),
        box_rows: 5,
        box_cols: 5,
        ..Default::default()
    };
    let mut stream = client.generate(request).await.unwrap().into_inner();
    let p = stream.message().await.unwrap().unwrap().puzzle.unwrap();
    assert!(stream.message().await.unwrap().is_none());
    assert!(p.minimal, "{} clues, not minimal", p.clues);
    let read = |g: &pb::Grid| SizedGrid::from_text(shape, &g.text).unwrap();
    let (puzzle, solution) = (
        read(p.puzzle.as_ref().unwrap()),
        read(p.solution.as_ref().unwrap()),
    );
    assert!(solution.is_valid_solution() && puzzle.is_kept_by(&solution));
    assert_eq!(p.clues as usize, puzzle.givens());
    // Minimal where the maker went without a count: fewer than 43% clues
    // (counts made 286 on a default server), one solution, and each of a
    // sample of clues needed.
    assert!(
        puzzle.givens() < shape.cells() * 43 / 100,
        "{} clues",
        puzzle.givens()
    );
    let (a, only) = run_sized(&puzzle, 2, u64::MAX);
    assert_eq!((a.count, only), (1, Some(solution)));
    let clues: Vec<usize> = (0..shape.cells())
        .filter(|&i| puzzle.values()[i] != 0)
        .collect();
    for &cell in clues.iter().step_by(10) {
        let mut without = puzzle.clone();
        without.values_mut()[cell] = 0;
        assert_eq!(
            run_sized(&without, 2, u64::MAX).0.count,
            2,
            "clue {cell} can go"
        );
    }
    // The same seed and settings make the same puzzle.
    let mut again = client.generate(request).await.unwrap().into_inner();
    let first = again.message().await.unwrap().unwrap().puzzle.unwrap();
    assert_eq!(first.puzzle, p.puzzle);
}
