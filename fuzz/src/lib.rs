//! Checks shared by the fuzz targets. Everything here is independent of the
//! code under test: it re-derives the rules from scratch.

use sudoku_core::puzzle::{CELLS, Grid};
use sudoku_core::solver::Answer;

/// The 27 units (rows, columns, boxes) as cell indices.
pub fn units() -> Vec<[usize; 9]> {
    let mut out = Vec::with_capacity(27);
    for u in 0..9 {
        out.push(std::array::from_fn(|k| u * 9 + k));
        out.push(std::array::from_fn(|k| k * 9 + u));
        out.push(std::array::from_fn(|k| {
            (u / 3 * 3 + k / 3) * 9 + u % 3 * 3 + k % 3
        }));
    }
    out
}

/// True when no digit 1-9 appears twice in a unit (values must be 0-9).
pub fn conflict_free(g: &Grid) -> bool {
    units().iter().all(|unit| {
        let mut seen = [false; 10];
        unit.iter().all(|&i| {
            let d = g.0[i] as usize;
            if d == 0 {
                return true;
            }
            !std::mem::replace(&mut seen[d], true)
        })
    })
}

/// True when `s` is a complete grid that keeps the rules.
pub fn is_solution(s: &Grid) -> bool {
    s.0.iter().all(|&d| (1..=9).contains(&d)) && conflict_free(s)
}

/// True when `s` keeps every given of `p`.
pub fn keeps(p: &Grid, s: &Grid) -> bool {
    (0..CELLS).all(|i| p.0[i] == 0 || p.0[i] == s.0[i])
}

/// What any answer of the solver must satisfy.
pub fn check_answer(p: &Grid, a: &Answer, limit: u32, budget: u64) {
    let limit = limit.max(1);
    assert!(a.count <= limit, "count {} above limit {limit}", a.count);
    assert_eq!(
        a.solution.is_some(),
        a.count > 0,
        "solution iff count > 0: {a:?}"
    );
    if let Some(s) = a.solution {
        assert!(is_solution(&s), "invalid solution {s:?} for {p:?}");
        assert!(keeps(p, &s), "solution {s:?} drops givens of {p:?}");
    }
    if a.count == limit {
        assert!(a.complete, "limit reached but not complete: {a:?}");
    }
    assert!(a.stats.guesses <= a.stats.nodes, "{a:?}");
    assert!(
        a.stats.nodes <= budget.max(1),
        "nodes {} over budget {budget}",
        a.stats.nodes
    );
    let valid_givens = p.0.iter().all(|&d| d <= 9) && conflict_free(p);
    if !valid_givens {
        assert_eq!(
            (a.count, a.complete),
            (0, true),
            "bad givens must have no solution"
        );
    }
    if p.0.iter().all(|&d| (1..=9).contains(&d)) && valid_givens {
        assert_eq!(a.count, 1, "a full valid grid is its own unique solution");
    }
}

/// Node budget per puzzle for the service targets.
pub const SERVICE_NODES: u64 = 4_000;

/// Decodes `bytes` and answers it through the service's handler code, then
/// checks the response against the request.
pub fn check_service(bytes: &[u8], batch: bool) {
    use prost::Message;
    use sudoku_grpc::pb;
    use sudoku_grpc::service::{MAX_SOLUTIONS_LIMIT, fuzz::fuzz_request};

    let response = fuzz_request(bytes, batch, SERVICE_NODES);
    // The request as the handler saw it: (id, puzzle) pairs and options.
    let (items, options) = if batch {
        match pb::SolveBatchRequest::decode(bytes) {
            Ok(r) => (
                r.items
                    .into_iter()
                    .map(|i| (i.id, i.puzzle))
                    .collect::<Vec<_>>(),
                r.options,
            ),
            Err(_) => {
                assert_eq!(response.unwrap_err().code(), tonic::Code::Internal);
                return;
            }
        }
    } else {
        match pb::SolveRequest::decode(bytes) {
            Ok(r) => (vec![(0, r.puzzle)], r.options),
            Err(_) => {
                assert_eq!(response.unwrap_err().code(), tonic::Code::Internal);
                return;
            }
        }
    };
    let response = match response {
        Ok(r) => r,
        Err(status) => {
            assert!(batch && items.len() > 1_024, "unexpected {status:?}");
            assert_eq!(status.code(), tonic::Code::ResourceExhausted);
            return;
        }
    };
    assert_eq!(response.results.len(), items.len());
    let limit = options.as_ref().map_or(Some(1), |o| match o.mode {
        0 | 1 => Some(1),
        2 if o.max_solutions == 0 => Some(2),
        2 if o.max_solutions <= MAX_SOLUTIONS_LIMIT => Some(o.max_solutions),
        _ => None,
    });
    for (result, (id, puzzle)) in response.results.iter().zip(&items) {
        assert_eq!(result.id, *id);
        match result.result.as_ref().expect("every result is set") {
            pb::batch_result::Result::Error(status) => {
                assert_eq!(
                    status.code,
                    tonic::Code::InvalidArgument as i32,
                    "{status:?}"
                );
                assert!(!status.message.is_empty());
            }
            pb::batch_result::Result::Solution(sol) => {
                let limit = limit.expect("bad options must be rejected");
                let p = puzzle.as_ref().expect("a missing puzzle must be rejected");
                let (given, text_form) = match (p.text.is_empty(), p.cells.is_empty()) {
                    (false, true) => (Grid::from_text(&p.text), true),
                    (true, false) => (Grid::from_cells(&p.cells), false),
                    _ => panic!("both or neither forms must be rejected: {p:?}"),
                };
                let given = given.expect("an unreadable grid must be rejected");
                assert!(conflict_free(&given), "conflicting givens must be rejected");
                let count = sol.solution_count;
                assert!(count <= u64::from(limit));
                let stats = sol.stats.expect("stats are always set");
                assert!(stats.nodes <= SERVICE_NODES && stats.guesses <= stats.nodes);
                if let Some(g) = &sol.grid {
                    let s = if text_form {
                        assert!(g.cells.is_empty());
                        Grid::from_text(&g.text)
                    } else {
                        assert!(g.text.is_empty());
                        Grid::from_cells(&g.cells)
                    }
                    .expect("the solution reads back");
                    assert!(is_solution(&s) && keeps(&given, &s), "{s:?} for {given:?}");
                }
                let outcome = pb::Outcome::try_from(sol.outcome).expect("known outcome");
                match outcome {
                    pb::Outcome::Unspecified => panic!("OUTCOME_UNSPECIFIED sent"),
                    pb::Outcome::NoSolution => assert!(count == 0 && sol.grid.is_none()),
                    pb::Outcome::Solved => assert!(count == 1 && sol.grid.is_some()),
                    pb::Outcome::MultipleSolutions => assert!(count >= 2 && sol.grid.is_some()),
                    pb::Outcome::WorkLimitReached => {
                        assert!(count < u64::from(limit));
                        assert_eq!(sol.grid.is_some(), count > 0);
                    }
                }
            }
        }
    }
}
