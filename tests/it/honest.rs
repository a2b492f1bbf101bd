//! Honest answers (issue 32): count mode never calls a grid with several
//! solutions SOLVED, whatever `max_solutions` says.

use std::time::Duration;

use sudoku_grpc::pb;

use crate::support::{CLASSIC, TestServer};

fn text(t: &str) -> Option<pb::Grid> {
    Some(pb::Grid {
        text: t.to_string(),
        ..Default::default()
    })
}

/// A blank grid of `box_rows` x `box_cols` boxes (0 and 0: 9x9), as cells.
fn blank(box_rows: u32, box_cols: u32) -> pb::Grid {
    let side = match (box_rows, box_cols) {
        (0, 0) => 9,
        (r, c) => r * c,
    };
    pb::Grid {
        cells: vec![0; (side * side) as usize],
        box_rows,
        box_cols,
        ..Default::default()
    }
}

fn count_to(max_solutions: u32) -> Option<pb::SolveOptions> {
    Some(pb::SolveOptions {
        mode: pb::SolveMode::Count as i32,
        max_solutions,
    })
}

// --- count mode -------------------------------------------------------------

#[tokio::test]
async fn count_mode_with_max_solutions_1_never_calls_an_empty_grid_solved() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let shapes = [(2, 2), (2, 3), (0, 0), (3, 3), (4, 4), (5, 5)];
    for (r, c) in shapes {
        for max in [0, 1, 2] {
            let solution = client
                .solve(pb::SolveRequest {
                    puzzle: Some(blank(r, c)),
                    options: count_to(max),
                })
                .await
                .unwrap()
                .into_inner()
                .solution
                .unwrap();
            assert_eq!(
                solution.outcome(),
                pb::Outcome::MultipleSolutions,
                "{r}x{c} boxes, max_solutions {max}: {solution:?}"
            );
            assert_eq!(solution.solution_count, 2, "{r}x{c}, {max}");
            assert!(solution.grid.is_some(), "the first solution comes along");
        }
        // Validate says the same of the same grid.
        let validated = client
            .validate(pb::ValidateRequest {
                puzzle: Some(blank(r, c)),
                current: None,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(validated.solvable && !validated.unique, "{r}x{c}");
    }
    // Any mode still stops at the first solution, and says SOLVED.
    let any = client
        .solve(pb::SolveRequest {
            puzzle: Some(blank(4, 4)),
            options: None,
        })
        .await
        .unwrap()
        .into_inner()
        .solution
        .unwrap();
    assert_eq!(any.outcome(), pb::Outcome::Solved);
    assert_eq!(any.solution_count, 1);
    // A unique puzzle counted with max_solutions 1 is SOLVED, the only one.
    let unique = client
        .solve(pb::SolveRequest {
            puzzle: text(CLASSIC),
            options: count_to(1),
        })
        .await
        .unwrap()
        .into_inner()
        .solution
        .unwrap();
    assert_eq!(unique.outcome(), pb::Outcome::Solved);
    assert_eq!(unique.solution_count, 1);
}

#[tokio::test]
async fn count_mode_with_max_solutions_1_is_honest_in_streams_too() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let items: Vec<pb::BatchItem> = [(2, 2), (0, 0), (4, 4)]
        .into_iter()
        .enumerate()
        .map(|(id, (r, c))| pb::BatchItem {
            id: id as u64,
            puzzle: Some(blank(r, c)),
        })
        .collect();
    let mut batch = client
        .solve_batch(tokio_stream::iter(vec![pb::SolveBatchRequest {
            items: items.clone(),
            options: count_to(1),
        }]))
        .await
        .unwrap()
        .into_inner();
    let mut stream = client
        .solve_stream(pb::SolveStreamRequest {
            items,
            options: count_to(1),
        })
        .await
        .unwrap()
        .into_inner();
    let mut results = Vec::new();
    while let Some(m) = tokio::time::timeout(Duration::from_secs(30), batch.message())
        .await
        .expect("SolveBatch answers")
        .unwrap()
    {
        results.extend(m.results);
    }
    while let Some(m) = tokio::time::timeout(Duration::from_secs(30), stream.message())
        .await
        .expect("SolveStream answers")
        .unwrap()
    {
        results.extend(m.result);
    }
    assert_eq!(results.len(), 6);
    for r in results {
        let Some(pb::batch_result::Result::Solution(s)) = &r.result else {
            panic!("{r:?}");
        };
        assert_eq!(s.outcome(), pb::Outcome::MultipleSolutions, "item {}", r.id);
        assert_eq!(s.solution_count, 2);
    }
}
