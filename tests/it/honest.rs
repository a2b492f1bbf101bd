//! Honest answers (issue 32): count mode never calls a grid with several
//! solutions SOLVED, whatever `max_solutions` says; a malformed
//! `grpc-timeout` fails the call with INTERNAL (as grpc-go answers it)
//! instead of running it with no deadline; a second request message on a
//! call that takes one is refused with INTERNAL over gRPC and gRPC-Web
//! alike, instead of answered from the first; and Hint checks a player's
//! pencil marks against the solution, naming the cell and the digit a mark
//! removed rather than deriving a wrong step from it.

use std::time::Duration;

use http_body_util::{BodyExt, Full, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use prost::Message;
use sudoku_core::logic::{self, Candidates};
use sudoku_core::puzzle::Grid;
use sudoku_core::puzzle::sized::SizedGrid;
use sudoku_grpc::pb;
use tonic::Code;
use tonic::codegen::Bytes;
use tonic::codegen::http::{Request, StatusCode, Version, header};
use tonic_types::StatusExt;

use crate::grpc_web::{base64, frames, unbase64};
use crate::support::SolveExt;
use crate::support::text_grid;
use crate::support::{CLASSIC, TestServer, bare_client, data_set};

const SOLVE: &str = "/sudoku.v1.SudokuService/Solve";

/// The reason of `status`'s google.rpc.ErrorInfo, whose domain must be the
/// service's.
fn reason(status: &tonic::Status) -> String {
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.domain, "sudoku.v1", "{status:?}");
    info.reason
}

fn text(t: &str) -> Option<pb::Grid> {
    text_grid(t)
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
                .solved(pb::SolveRequest {
                    puzzle: Some(blank(r, c)),
                    options: count_to(max),
                })
                .await;
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
        .solved(pb::SolveRequest {
            puzzle: Some(blank(4, 4)),
            options: None,
        })
        .await;
    assert_eq!(any.outcome(), pb::Outcome::Solved);
    assert_eq!(any.solution_count, 1);
    // A unique puzzle counted with max_solutions 1 is SOLVED, the only one.
    let unique = client
        .solved(pb::SolveRequest {
            puzzle: text(CLASSIC),
            options: count_to(1),
        })
        .await;
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

// --- grpc-timeout -------------------------------------------------------------

/// Values the gRPC spec does not allow for `grpc-timeout` (1 to 8 digits
/// and one of H M S m u n).
const MALFORMED_TIMEOUTS: [&str; 10] = [
    "1",
    "H",
    "-1S",
    "1.5S",
    "123456789S",
    "+1S",
    "1s",
    "S1",
    "1 S",
    "",
];

/// `message` with a `grpc-timeout` of `value`.
fn timed<T>(message: T, value: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("grpc-timeout", value.parse().unwrap());
    request
}

#[tokio::test]
async fn a_malformed_grpc_timeout_fails_every_rpc_with_internal() {
    let server = TestServer::start().await;
    // A bare client sends the header as it is and keeps no timer.
    let client = bare_client(server.addr);
    for value in MALFORMED_TIMEOUTS {
        let mut c = client.clone();
        let solve = || pb::SolveRequest {
            puzzle: text(CLASSIC),
            options: None,
        };
        let items = vec![pb::BatchItem {
            id: 1,
            puzzle: text(CLASSIC),
        }];
        let mut statuses = vec![
            ("Solve", c.solve(timed(solve(), value)).await.unwrap_err()),
            (
                "Validate",
                c.validate(timed(
                    pb::ValidateRequest {
                        puzzle: text(CLASSIC),
                        current: None,
                    },
                    value,
                ))
                .await
                .unwrap_err(),
            ),
            (
                "Hint",
                c.hint(timed(
                    pb::HintRequest {
                        puzzle: text(CLASSIC),
                        candidates: None,
                    },
                    value,
                ))
                .await
                .unwrap_err(),
            ),
            (
                "Rate",
                c.rate(timed(
                    pb::RateRequest {
                        puzzle: text(CLASSIC),
                    },
                    value,
                ))
                .await
                .unwrap_err(),
            ),
        ];
        // The streams fail before their first message.
        let generate = c
            .generate(timed(pb::GenerateRequest::default(), value))
            .await;
        let stream = c
            .solve_stream(timed(
                pb::SolveStreamRequest {
                    items: items.clone(),
                    options: None,
                },
                value,
            ))
            .await;
        let batch = c
            .solve_batch(timed(
                tokio_stream::iter(vec![pb::SolveBatchRequest {
                    items,
                    options: None,
                }]),
                value,
            ))
            .await;
        statuses.push(("Generate", generate.map(|_| ()).unwrap_err()));
        statuses.push(("SolveStream", stream.map(|_| ()).unwrap_err()));
        statuses.push(("SolveBatch", batch.map(|_| ()).unwrap_err()));
        for (rpc, status) in statuses {
            assert_eq!(
                status.code(),
                Code::Internal,
                "{rpc}, {value:?}: {status:?}"
            );
            assert!(
                status.message().starts_with("malformed grpc-timeout"),
                "{rpc}, {value:?}: {status:?}"
            );
            assert_eq!(reason(&status), "MALFORMED_TIMEOUT", "{rpc}, {value:?}");
        }
    }
    // The largest value the spec allows, in every unit, is a deadline.
    let mut c = client.clone();
    for unit in ["H", "M", "S", "m", "u"] {
        let value = format!("99999999{unit}");
        let solution = c
            .solve(timed(
                pb::SolveRequest {
                    puzzle: text(CLASSIC),
                    options: None,
                },
                &value,
            ))
            .await
            .unwrap_or_else(|s| panic!("{value}: {s:?}"))
            .into_inner()
            .solution
            .unwrap();
        assert_eq!(solution.outcome(), pb::Outcome::Solved, "{value}");
    }
    // And 8 digits of nanoseconds (0.1 s) are a deadline too: passed, or
    // met, never malformed.
    let met = c
        .solve(timed(
            pb::SolveRequest {
                puzzle: text(CLASSIC),
                options: None,
            },
            "99999999n",
        ))
        .await;
    if let Err(status) = met {
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    }
}

// --- one request message ------------------------------------------------------

/// One gRPC message frame: flag byte, big-endian length, payload.
fn frame(message: &impl Message) -> Vec<u8> {
    let bytes = message.encode_to_vec();
    let mut out = vec![0u8];
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(&bytes);
    out
}

/// The status of a raw HTTP/2 gRPC call of `path` whose body is `chunks`,
/// sent one by one with a pause between them (so that the server reads the
/// first message before the second arrives).
async fn grpc_call(server: &TestServer, path: &str, chunks: Vec<Vec<u8>>) -> tonic::Status {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<_, std::convert::Infallible>>(4);
    tokio::spawn(async move {
        for chunk in chunks {
            if tx
                .send(Ok(hyper::body::Frame::data(Bytes::from(chunk))))
                .await
                .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let body = StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let request = Request::post(format!("http://{}{path}", server.addr))
        .header(header::CONTENT_TYPE, "application/grpc")
        .header("te", "trailers")
        .body(body)
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let (parts, body) = response.into_parts();
    let trailers = tokio::time::timeout(Duration::from_secs(10), body.collect())
        .await
        .expect("the body within 10 s")
        .unwrap()
        .trailers()
        .cloned();
    tonic::Status::from_header_map(&parts.headers)
        .or_else(|| trailers.as_ref().and_then(tonic::Status::from_header_map))
        .unwrap_or_else(|| panic!("no grpc-status in {parts:?} / {trailers:?}"))
}

fn assert_refused(status: &tonic::Status, what: &str) {
    assert_eq!(status.code(), Code::Internal, "{what}: {status:?}");
    assert!(
        status.message().contains("cardinality violation"),
        "{what}: {status:?}"
    );
    assert_eq!(reason(status), "MULTIPLE_MESSAGES", "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_request_message_is_refused_over_grpc() {
    let server = TestServer::start().await;
    let solve = frame(&pb::SolveRequest {
        puzzle: text(CLASSIC),
        options: None,
    });
    let hint = frame(&pb::HintRequest {
        puzzle: text(CLASSIC),
        candidates: None,
    });
    let stream = frame(&pb::SolveStreamRequest {
        items: vec![pb::BatchItem {
            id: 1,
            puzzle: text(CLASSIC),
        }],
        options: None,
    });
    let generate = frame(&pb::GenerateRequest::default());
    let empty = frame(&pb::SolveRequest::default());
    let cases: Vec<(&str, Vec<Vec<u8>>)> = vec![
        (SOLVE, vec![[solve.clone(), solve.clone()].concat()]),
        (SOLVE, vec![solve.clone(), solve.clone()]),
        // The second message may be empty: it is still a message.
        (SOLVE, vec![solve.clone(), empty]),
        ("/sudoku.v1.SudokuService/Hint", vec![hint.clone(), hint]),
        (
            "/sudoku.v1.SudokuService/SolveStream",
            vec![[stream.clone(), stream].concat()],
        ),
        (
            "/sudoku.v1.SudokuService/Generate",
            vec![generate.clone(), generate],
        ),
    ];
    for (path, chunks) in cases {
        let what = format!("{path}, {} chunks", chunks.len());
        assert_refused(&grpc_call(&server, path, chunks).await, &what);
    }
    // One message, even in two chunks, is answered.
    let (a, b) = solve.split_at(7);
    let status = grpc_call(&server, SOLVE, vec![a.to_vec(), b.to_vec()]).await;
    assert_eq!(status.code(), Code::Ok, "{status:?}");
    // SolveBatch takes a stream of messages.
    let batch = frame(&pb::SolveBatchRequest {
        items: vec![pb::BatchItem {
            id: 1,
            puzzle: text(CLASSIC),
        }],
        options: None,
    });
    let status = grpc_call(
        &server,
        "/sudoku.v1.SudokuService/SolveBatch",
        vec![batch.clone(), batch],
    )
    .await;
    assert_eq!(status.code(), Code::Ok, "{status:?}");
}

#[tokio::test]
async fn a_second_request_message_is_refused_over_grpc_web() {
    let server = TestServer::start().await;
    let one = frame(&pb::SolveRequest {
        puzzle: text(CLASSIC),
        options: None,
    });
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    for text_form in [false, true] {
        for messages in [1, 2] {
            let body = one.repeat(messages);
            let (content_type, body) = if text_form {
                ("application/grpc-web-text", base64(&body).into_bytes())
            } else {
                ("application/grpc-web+proto", body)
            };
            let request = Request::post(format!("http://{}{SOLVE}", server.addr))
                .header("content-type", content_type)
                .header("accept", content_type)
                .header("x-grpc-web", "1")
                .body(Full::new(Bytes::from(body)))
                .unwrap();
            let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
                .await
                .expect("an answer within 10 s")
                .unwrap();
            assert_eq!(response.version(), Version::HTTP_11);
            assert_eq!(response.status(), StatusCode::OK);
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let body = if text_form {
                unbase64(&body)
            } else {
                body.to_vec()
            };
            let (answers, trailers) = frames(&body);
            let trailers = trailers.expect("a trailers frame");
            let status = tonic::Status::from_header_map(&trailers).expect("a grpc-status");
            let what = format!("text {text_form}, {messages} messages");
            if messages == 1 {
                assert_eq!(status.code(), Code::Ok, "{what}: {status:?}");
                assert_eq!(answers.len(), 1, "{what}");
            } else {
                assert!(answers.is_empty(), "{what}: answered {answers:?}");
                assert_refused(&status, &what);
            }
        }
    }
}

// --- Hint and pencil marks ----------------------------------------------------

/// Puzzles of three public sets with their solutions.
fn puzzles_and_solutions() -> Vec<(Grid, Grid)> {
    [
        "puzzles2_17_clue",
        "puzzles3_magictour_top1465",
        "puzzles6_forum_hardest_1106",
    ]
    .iter()
    .flat_map(|set| data_set(set).into_iter().take(4))
    .map(|p| {
        let g = Grid::from_text(&p).unwrap();
        (g, sudoku_core::solver::solve(&g).unwrap())
    })
    .collect()
}

fn marks_of(state: &Candidates) -> Option<pb::Candidates> {
    marks_on_wire(state.masks())
}

/// Pencil marks on the wire.
fn marks_on_wire(masks: &[u64]) -> Option<pb::Candidates> {
    Some(pb::Candidates {
        masks: masks.iter().map(|&m| m as u32).collect(),
        wide_masks: Vec::new(),
    })
}

#[tokio::test]
async fn a_hint_from_marks_that_exclude_the_solution_digit_names_the_cell_and_digit() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut cases = 0;
    for (puzzle, solution) in puzzles_and_solutions() {
        let fresh = Candidates::from_grid(&puzzle);
        let open: Vec<usize> = (0..81).filter(|&c| puzzle.0[c] == 0).collect();
        // Ten open cells spread over the grid, each with its solution digit
        // struck from its marks (the rest of the marks as the grid leaves
        // them, which is right).
        for &cell in open.iter().step_by(open.len() / 10 + 1) {
            let d = solution.0[cell];
            let mut masks = fresh.masks().to_vec();
            masks[cell] = 0x1ff & !(1 << (d - 1));
            let r = client
                .hint(pb::HintRequest {
                    puzzle: text(&puzzle.to_string()),
                    candidates: marks_on_wire(&masks),
                })
                .await
                .unwrap()
                .into_inner();
            assert!(!r.solved && r.search_complete, "{r:?}");
            let step = r.step.expect("a step");
            assert_eq!(
                step.technique(),
                pb::Technique::MissingCandidate,
                "{step:?}"
            );
            assert_eq!(step.technique_name, "MISSING_CANDIDATE");
            let restored: Vec<(u32, u32)> = step
                .restorations
                .iter()
                .map(|p| (p.cell, p.digit))
                .collect();
            assert_eq!(restored, vec![(cell as u32, u32::from(d))]);
            assert!(step.placements.is_empty() && step.eliminations.is_empty());
            assert_eq!(step.cells, vec![cell as u32]);
            let named = format!("r{}c{} must keep {d}", cell / 9 + 1, cell % 9 + 1);
            assert!(step.explanation.starts_with(&named), "{}", step.explanation);
            cases += 1;
        }
        // Marks that keep every solution digit give an ordinary step, and
        // it agrees with the solution.
        let r = client
            .hint(pb::HintRequest {
                puzzle: text(&puzzle.to_string()),
                candidates: marks_of(&fresh),
            })
            .await
            .unwrap()
            .into_inner();
        let step = r.step.expect("a step");
        assert_ne!(step.technique(), pb::Technique::MissingCandidate);
        for p in &step.placements {
            assert_eq!(p.digit as u8, solution.0[p.cell as usize], "{step:?}");
        }
        for e in &step.eliminations {
            assert_ne!(e.digit as u8, solution.0[e.cell as usize], "{step:?}");
        }
    }
    assert!(cases >= 100, "{cases} cases");
}

/// Whether `step` contradicts `solution`: a placement of another digit, or
/// the elimination of the solution's.
fn astray(step: &logic::Step, solution: &Grid) -> bool {
    step.placements
        .iter()
        .any(|&(c, d)| solution.0[usize::from(c)] != d)
        || step
            .eliminations
            .iter()
            .any(|&(c, d)| solution.0[usize::from(c)] == d)
}

#[tokio::test]
async fn hint_from_marks_that_exclude_the_solution_gave_a_wrong_step() {
    // The finding: marks that strike the solution's digit from a cell
    // made Hint reason from them to a wrong step. Cases where the
    // techniques alone (what Hint answered before) go astray are picked in
    // process: a cell's marks cut to one wrong digit, or to all but the
    // right one. Hint now answers each with the correction.
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut cases = 0;
    'puzzles: for (puzzle, solution) in puzzles_and_solutions() {
        let fresh = Candidates::from_grid(&puzzle);
        for cell in (0..81).filter(|&c| puzzle.0[c] == 0) {
            let d = solution.0[cell];
            let others = (1..=9u8).filter(|&w| w != d && fresh.mask(cell) & (1 << (w - 1)) != 0);
            let marks = others
                .map(|w| 1u64 << (w - 1))
                .chain([0x1ff & !(1 << (d - 1))]);
            for mark in marks {
                let mut masks = fresh.masks().to_vec();
                masks[cell] = mark;
                let state = Candidates::with_marks(&SizedGrid::from_grid(&puzzle), &masks).unwrap();
                let Some(unchecked) = logic::hint(&state) else {
                    continue;
                };
                if !astray(&unchecked, &solution) {
                    continue;
                }
                let r = client
                    .hint(pb::HintRequest {
                        puzzle: text(&puzzle.to_string()),
                        candidates: marks_on_wire(&masks),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                let step = r.step.expect("a step");
                assert_eq!(
                    step.technique(),
                    pb::Technique::MissingCandidate,
                    "{step:?}"
                );
                assert!(step.placements.is_empty() && step.eliminations.is_empty());
                // The lowest cell whose marks lack its digit: this one.
                let restored = &step.restorations[0];
                assert_eq!((restored.cell, restored.digit), (cell as u32, u32::from(d)));
                cases += 1;
                if cases == 100 {
                    break 'puzzles;
                }
            }
        }
    }
    assert_eq!(cases, 100, "cases where the techniques alone went astray");

    let puzzle = Grid::from_text(CLASSIC).unwrap();
    let solution = sudoku_core::solver::solve(&puzzle).unwrap();
    let fresh = Candidates::from_grid(&puzzle);
    // A wrong entry (placed digits without a solution) with marks: no step.
    let mut wrong = CLASSIC.as_bytes().to_vec();
    let first_open = wrong.iter().position(|&b| b == b'.').unwrap();
    let d = solution.0[first_open];
    let other = (1..=9u8)
        .find(|&w| w != d && fresh.mask(first_open) & (1 << (w - 1)) != 0)
        .expect("a second candidate");
    wrong[first_open] = b'0' + other;
    let wrong = std::str::from_utf8(&wrong).unwrap();
    let state = Candidates::from_grid(&Grid::from_text(wrong).unwrap());
    let r = client
        .hint(pb::HintRequest {
            puzzle: text(wrong),
            candidates: marks_of(&state),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.step.is_none() && !r.solved && r.search_complete, "{r:?}");
}
