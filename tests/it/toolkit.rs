//! Validate, Hint, Rate and Generate against the real server: answers, not
//! errors, for rule-breaking puzzles; INVALID_ARGUMENT with BadRequest for
//! malformed ones; generated puzzles unique and minimal by an independent
//! count, the same for the same seed through the server and in-process; a
//! cancelled or timed-out Generate stops the server's work; Validate, Hint
//! and Rate bounded by the work budget and stopped by their deadline; Hint
//! from pencil marks; the commands' options, locally and through a server.

use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::StreamExt;
use sudoku_core::logic::{self, Candidates};
use sudoku_core::puzzle::Grid;
use sudoku_core::solver::count_solutions_up_to;
use sudoku_grpc::pb;
use sudoku_grpc::telemetry::metrics::PuzzleOutcome;
use tonic::Code;
use tonic_types::StatusExt;

use crate::support::{
    CLASSIC, CLASSIC_SOLVED, DEEP_CONTRADICTION, SETTLE, TestServer, bare_client,
};

fn text(t: &str) -> Option<pb::Grid> {
    Some(pb::Grid {
        text: t.to_string(),
        cells: vec![],
        ..Default::default()
    })
}

/// The BadRequest fields of a failed call.
fn bad_fields(status: &tonic::Status) -> Vec<String> {
    status
        .get_details_bad_request()
        .map(|b| b.field_violations.into_iter().map(|v| v.field).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn validate_answers_a_conflicting_puzzle_with_its_conflicts() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // A second 5 at r1c9 (cell 8): the classic has one at r1c1 of that
    // row, and one at r8c9 of that column.
    let mut broken = CLASSIC.to_string();
    broken.replace_range(8..9, "5");
    let r = client
        .validate(pb::ValidateRequest {
            puzzle: text(&broken),
            current: None,
        })
        .await
        .expect("a broken puzzle is answered, not refused")
        .into_inner();
    let found: Vec<_> = r
        .conflicts
        .iter()
        .map(|c| {
            let unit = c.unit.unwrap();
            (c.first, c.second, c.digit, unit.kind(), unit.index)
        })
        .collect();
    assert_eq!(
        found,
        vec![
            (0, 8, 5, pb::UnitKind::Row, 0),
            (8, 71, 5, pb::UnitKind::Column, 8)
        ]
    );
    assert!(!r.solvable && !r.unique && r.search_complete);
}

#[tokio::test]
async fn validate_finds_a_players_wrong_entries_against_the_unique_solution() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut current = CLASSIC.to_string();
    current.replace_range(2..3, "4"); // right
    current.replace_range(3..4, "2"); // wrong: the solution has 6
    let r = client
        .validate(pb::ValidateRequest {
            puzzle: text(CLASSIC),
            current: text(&current),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.solvable && r.unique && r.conflicts.is_empty());
    assert_eq!(r.solution.unwrap().text, CLASSIC_SOLVED);
    assert_eq!(r.wrong_cells, vec![3]);
    // A current grid that drops a given is a bad request.
    let mut dropped = CLASSIC.to_string();
    dropped.replace_range(0..1, ".");
    let err = client
        .validate(pb::ValidateRequest {
            puzzle: text(CLASSIC),
            current: text(&dropped),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(bad_fields(&err), vec!["current".to_string()]);
}

#[tokio::test]
async fn malformed_grids_are_invalid_argument_with_bad_request_on_every_new_rpc() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let mut bad = CLASSIC.to_string();
    bad.replace_range(13..14, "x");
    let statuses = [
        client
            .validate(pb::ValidateRequest {
                puzzle: text(&bad),
                current: None,
            })
            .await
            .unwrap_err(),
        client
            .hint(pb::HintRequest {
                puzzle: text(&bad),
                candidates: None,
            })
            .await
            .unwrap_err(),
        client
            .rate(pb::RateRequest { puzzle: text(&bad) })
            .await
            .unwrap_err(),
    ];
    for status in statuses {
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert_eq!(bad_fields(&status), vec!["puzzle.text".to_string()]);
        assert!(
            status.message().contains("row 2, column 5"),
            "{}",
            status.message()
        );
    }
    let err = client
        .generate(pb::GenerateRequest {
            max_clues: 10,
            label: pb::Label::Easy as i32,
            min_rating: 2.0,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(bad_fields(&err), vec!["label", "max_clues"]);
}

#[tokio::test]
async fn a_hint_agrees_with_the_solution_and_rate_labels_the_classic_easy() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let solution = Grid::from_text(CLASSIC_SOLVED).unwrap();
    let r = client
        .hint(pb::HintRequest {
            puzzle: text(CLASSIC),
            candidates: None,
        })
        .await
        .unwrap()
        .into_inner();
    let step = r.step.expect("a step");
    assert!(!step.technique_name.is_empty() && !step.explanation.is_empty());
    assert_eq!(
        step.technique_name,
        step.technique()
            .as_str_name()
            .trim_start_matches("TECHNIQUE_")
    );
    assert!(!step.placements.is_empty() || !step.eliminations.is_empty());
    for p in &step.placements {
        assert_eq!(p.digit as u8, solution.0[p.cell as usize]);
    }
    for e in &step.eliminations {
        assert_ne!(e.digit as u8, solution.0[e.cell as usize]);
    }
    let full = client
        .hint(pb::HintRequest {
            puzzle: text(CLASSIC_SOLVED),
            candidates: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(full.solved && full.step.is_none());

    let rated = client
        .rate(pb::RateRequest {
            puzzle: text(CLASSIC),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rated.outcome(), pb::Outcome::Solved);
    let rating = rated.rating.unwrap();
    assert!(rating.solved_by_techniques);
    assert_eq!(rating.label(), pb::Label::Easy);
    assert!(rating.counts.iter().map(|c| c.count).sum::<u32>() >= 51);
    // Several solutions: answered, without a rating.
    let open = client
        .rate(pb::RateRequest {
            puzzle: text(&".".repeat(81)),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(open.outcome(), pb::Outcome::MultipleSolutions);
    assert!(open.rating.is_none());
}

async fn generate(
    client: &mut pb::sudoku_service_client::SudokuServiceClient<tonic::transport::Channel>,
    request: pb::GenerateRequest,
) -> Vec<pb::GenerateResponse> {
    let mut stream = client.generate(request).await.unwrap().into_inner();
    let mut out = Vec::new();
    while let Some(r) = stream.message().await.unwrap() {
        out.push(r);
    }
    out
}

/// Counted twice, by the engine (a fresh one per count) and by
/// [`plain_count`], which shares no code with it or the generator: one
/// solution, and two or more once any single clue is removed.
fn assert_unique_and_minimal(puzzle: &Grid) {
    assert_eq!(count_solutions_up_to(puzzle, 2), 1, "{puzzle}");
    assert_eq!(plain_count(puzzle, 2), 1, "{puzzle}");
    for c in 0..81 {
        if puzzle.0[c] != 0 {
            let mut p = *puzzle;
            p.0[c] = 0;
            assert_eq!(count_solutions_up_to(&p, 2), 2, "{puzzle} without cell {c}");
            assert_eq!(plain_count(&p, 2), 2, "{puzzle} without cell {c}");
        }
    }
}

/// The solutions of `g`, counted up to `limit` by plain backtracking: the
/// digits each row, column and box still lacks as bit masks, and at each
/// step the blank with the fewest digits left. No propagation and nothing
/// from the crate but the grid's cells, so it checks the engine's counts
/// with other code.
fn plain_count(g: &Grid, limit: u32) -> u32 {
    struct Board {
        cells: [u8; 81],
        used: [[u16; 9]; 3],
    }
    fn unit(i: usize) -> [usize; 3] {
        [i / 9, i % 9, (i / 27) * 3 + (i % 9) / 3]
    }
    fn count(b: &mut Board, limit: u32) -> u32 {
        let mut best: Option<(usize, u16)> = None;
        for i in 0..81 {
            if b.cells[i] != 0 {
                continue;
            }
            let [r, c, x] = unit(i);
            let free = !(b.used[0][r] | b.used[1][c] | b.used[2][x]) & 0x3fe;
            if best.is_none_or(|(_, f)| free.count_ones() < f.count_ones()) {
                best = Some((i, free));
            }
        }
        let Some((i, free)) = best else {
            return 1;
        };
        let [r, c, x] = unit(i);
        let mut found = 0;
        for d in 1..=9u8 {
            let bit = 1u16 << d;
            if free & bit == 0 {
                continue;
            }
            b.cells[i] = d;
            b.used[0][r] |= bit;
            b.used[1][c] |= bit;
            b.used[2][x] |= bit;
            found += count(b, limit - found);
            b.cells[i] = 0;
            b.used[0][r] &= !bit;
            b.used[1][c] &= !bit;
            b.used[2][x] &= !bit;
            if found >= limit {
                break;
            }
        }
        found
    }
    let mut b = Board {
        cells: g.0,
        used: [[0; 9]; 3],
    };
    for i in 0..81 {
        let d = g.0[i];
        if d == 0 {
            continue;
        }
        let bit = 1u16 << d;
        let [r, c, x] = unit(i);
        if (b.used[0][r] | b.used[1][c] | b.used[2][x]) & bit != 0 {
            return 0;
        }
        b.used[0][r] |= bit;
        b.used[1][c] |= bit;
        b.used[2][x] |= bit;
    }
    count(&mut b, limit)
}

#[test]
fn the_plain_counter_counts() {
    assert_eq!(plain_count(&Grid::from_text(CLASSIC).unwrap(), 2), 1);
    assert_eq!(plain_count(&Grid::EMPTY, 2), 2);
    let mut clash = Grid::from_text(CLASSIC).unwrap();
    clash.0[2] = 5;
    assert_eq!(plain_count(&clash, 2), 0);
    let solved = Grid::from_text(CLASSIC_SOLVED).unwrap();
    assert_eq!(plain_count(&solved, 2), 1);
}

#[tokio::test]
async fn generated_puzzles_are_unique_minimal_rated_and_the_same_for_the_same_seed() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let request = pb::GenerateRequest {
        count: 12,
        label: pb::Label::Medium as i32,
        seed: Some(2026),
        ..Default::default()
    };
    let first = generate(&mut client, request).await;
    let again = generate(&mut client, request).await;
    assert_eq!(first.len(), 12);
    assert_eq!(first, again, "the same seed gave different puzzles");
    for (i, r) in first.iter().enumerate() {
        assert_eq!(r.index as usize, i);
        assert_eq!(r.seed, 2026);
        let p = r.puzzle.as_ref().unwrap();
        let puzzle = Grid::from_text(&p.puzzle.as_ref().unwrap().text).unwrap();
        let solution = Grid::from_text(&p.solution.as_ref().unwrap().text).unwrap();
        assert!(solution.is_valid_solution() && puzzle.is_kept_by(&solution));
        assert_unique_and_minimal(&puzzle);
        assert!(p.minimal);
        assert_eq!(p.clues as usize, puzzle.givens());
        assert_eq!(p.rating.as_ref().unwrap().label(), pb::Label::Medium);
    }
    // A symmetric request keeps its symmetry.
    let sym = generate(
        &mut client,
        pb::GenerateRequest {
            count: 3,
            symmetry: pb::Symmetry::Rotate180 as i32,
            min_clues: 22,
            max_clues: 32,
            seed: Some(5),
            ..Default::default()
        },
    )
    .await;
    for r in sym {
        let p = r.puzzle.unwrap();
        let g = Grid::from_text(&p.puzzle.unwrap().text).unwrap();
        assert!((22..=32).contains(&p.clues));
        assert_eq!(count_solutions_up_to(&g, 2), 1);
        for c in 0..81 {
            assert_eq!(g.0[c] == 0, g.0[80 - c] == 0, "{g}");
        }
    }
}

#[tokio::test]
async fn a_label_floor_generates_that_label_or_harder_and_refuses_a_second_target() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let request = pb::GenerateRequest {
        count: 16,
        min_label: pb::Label::Hard as i32,
        seed: Some(31),
        ..Default::default()
    };
    let got = generate(&mut client, request).await;
    assert_eq!(got.len(), 16);
    let mut labels = Vec::new();
    for r in &got {
        let p = r.puzzle.as_ref().unwrap();
        let puzzle = Grid::from_text(&p.puzzle.as_ref().unwrap().text).unwrap();
        assert_unique_and_minimal(&puzzle);
        let label = p.rating.as_ref().unwrap().label();
        assert!(
            matches!(
                label,
                pb::Label::Hard | pb::Label::Expert | pb::Label::Extreme
            ),
            "{label:?} for {puzzle}"
        );
        labels.push(label);
    }
    assert!(labels.contains(&pb::Label::Extreme), "{labels:?}");
    assert!(labels.contains(&pb::Label::Hard), "{labels:?}");
    for (other, field) in [
        (
            pb::GenerateRequest {
                label: pb::Label::Hard as i32,
                ..request
            },
            "min_label",
        ),
        (
            pb::GenerateRequest {
                min_rating: 3.0,
                ..request
            },
            "min_label",
        ),
        (
            pb::GenerateRequest {
                min_label: 99,
                ..request
            },
            "min_label",
        ),
    ] {
        let err = client.generate(other).await.expect_err("two targets");
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        assert!(bad_fields(&err).contains(&field.to_string()), "{err:?}");
    }
}

/// What `sudoku generate ARGS` prints, once it has exited 0.
fn generated(args: &[&str]) -> String {
    let out = Command::new(crate::support::sudoku_cli())
        .arg("generate")
        .args(args)
        .output()
        .expect("the sudoku binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn generate_local_and_through_the_server_print_the_same_puzzles() {
    let server = TestServer::start_detached();
    let run = |extra: &[&str]| {
        let common = ["-n", "6", "--seed", "77", "--level", "hard"];
        let more = ["--symmetry", "diagonal", "--output", "jsonl"];
        generated(&[&common[..], &more, extra].concat())
    };
    let remote = run(&["--server", &server.url()]);
    let local = run(&["--local", "--threads", "1"]);
    let local_two = run(&["--local", "--threads", "2"]);
    assert_eq!(remote.lines().count(), 6, "{remote}");
    assert!(
        remote.lines().all(|l| l.contains("\"label\":\"hard\"")),
        "{remote}"
    );
    assert_eq!(remote, local);
    assert_eq!(local, local_two);
}

/// The same seed and options make the same puzzles on any machine: these
/// were made on the development machine, and a build anywhere else (another
/// CPU, word size or thread count) must make them again.
#[test]
fn a_seed_makes_the_puzzles_it_made_on_the_development_machine() {
    let made = |args: &[&str]| generated(&[&["--local"][..], args].concat());
    assert_eq!(
        made(&[
            "-n",
            "3",
            "--level",
            "medium",
            "--seed",
            "42",
            "--symmetry",
            "rotate180"
        ]),
        ".9....8.4...6...5....9..73237.8....5.6..1..7.8....7.96513..4....8...3...6.7....2.\n\
         ..1....487...5......3.14...37.6......16...39......3.57...52.4......9...312....8..\n\
         .3.8..7..58..3...21...5..8...29.......85.76.......62...5..7...47...4..38..3..8.7.\n"
    );
    assert_eq!(
        made(&[
            "-n",
            "2",
            "--level",
            "hard",
            "--seed",
            "9",
            "--threads",
            "2"
        ]),
        "......4.117....6.....6.7.....2...7...39...5..4..5..3.6.8...4...3..8.6..96.......4\n\
         ..59...42...1.....8......9......6....4....9.79.82....445182..........1....2....78\n"
    );
}

/// Waits until nothing has been solving on `server` for 100 ms on end, or
/// panics after `within`.
async fn wait_idle(server: &TestServer, within: Duration, what: &str) -> Duration {
    let started = Instant::now();
    let mut quiet_since = None;
    loop {
        if server.gauges.solving.load(Ordering::Relaxed) > 0 {
            quiet_since = None;
        } else if quiet_since.get_or_insert_with(Instant::now).elapsed()
            > Duration::from_millis(100)
        {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "{what}: the server is still generating"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_cancelled_generate_stops_the_servers_work() {
    let server = TestServer::start_with(|c| c.workers = 2, |s| s).await;
    let mut client = server.client().await;
    let mut stream = client
        .generate(pb::GenerateRequest {
            count: 10_000,
            label: pb::Label::Expert as i32,
            seed: Some(1),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.index, 0);
    let started = Instant::now();
    while server.gauges.solving.load(Ordering::Relaxed) == 0 {
        assert!(started.elapsed() < SETTLE, "nothing generating");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    drop(stream);
    wait_idle(&server, SETTLE, "after the client left").await;
}

#[tokio::test]
async fn a_generate_past_its_deadline_ends_deadline_exceeded_and_stops() {
    let server = TestServer::start_with(|c| c.workers = 2, |s| s).await;
    let mut client = server.client().await;
    let mut request = tonic::Request::new(pb::GenerateRequest {
        count: 10_000,
        label: pb::Label::Expert as i32,
        seed: Some(3),
        ..Default::default()
    });
    request.set_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let end = match client.generate(request).await {
        Err(status) => status,
        Ok(response) => {
            let mut stream = response.into_inner();
            loop {
                match stream.message().await {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("10,000 expert puzzles in 300 ms"),
                    Err(status) => break status,
                }
            }
        }
    };
    assert_eq!(end.code(), Code::DeadlineExceeded, "{end:?}");
    eprintln!("300 ms deadline: ended after {:?}", started.elapsed());
    wait_idle(&server, SETTLE, "after the deadline").await;
}

#[tokio::test]
async fn an_impossible_generate_ends_resource_exhausted_naming_the_budget() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let err = async {
        let mut stream = client
            .generate(pb::GenerateRequest {
                count: 1,
                max_clues: 17,
                seed: Some(1),
                ..Default::default()
            })
            .await?
            .into_inner();
        while stream.message().await?.is_some() {}
        Ok::<_, tonic::Status>(())
    }
    .await
    .expect_err("no 17-clue puzzle in the budget");
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.message().contains("attempts"), "{}", err.message());
}

#[tokio::test]
async fn reflection_lists_the_new_methods() {
    use prost::Message;
    use tonic_reflection::pb::v1::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let server = TestServer::start().await;
    let mut refl = ServerReflectionClient::new(server.channel().await);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(
            "sudoku.v1.SudokuService".into(),
        )),
    };
    let mut out = refl
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let Some(MessageResponse::FileDescriptorResponse(files)) =
        out.message().await.unwrap().unwrap().message_response
    else {
        panic!("expected file descriptors");
    };
    let methods: Vec<String> = files
        .file_descriptor_proto
        .iter()
        .filter_map(|b| prost_types::FileDescriptorProto::decode(b.as_slice()).ok())
        .flat_map(|f| f.service)
        .filter(|s| s.name() == "SudokuService")
        .flat_map(|s| s.method)
        .map(|m| m.name().to_string())
        .collect();
    for m in [
        "Solve",
        "SolveBatch",
        "SolveStream",
        "Validate",
        "Hint",
        "Rate",
        "Generate",
    ] {
        assert!(
            methods.iter().any(|n| n == m),
            "{m} missing from {methods:?}"
        );
    }
}

#[test]
fn validate_hint_and_rate_commands_answer_the_same_locally_and_through_the_server() {
    let server = TestServer::start_detached();
    let input = format!(
        "{CLASSIC}\n{}\n5.......5{}\n",
        ".".repeat(81),
        ".".repeat(72)
    );
    let run = |args: &[&str]| sudoku(args, &input);
    let url = server.url();
    for command in ["validate", "hint", "rate"] {
        for output in ["text", "jsonl"] {
            let remote = run(&[command, "--server", &url, "--output", output]);
            let local = run(&[command, "--local", "--output", output]);
            assert_eq!(remote, local, "{command} --output {output}");
            assert_eq!(remote.1.lines().count(), 3, "{command}: {}", remote.1);
        }
    }
    let (code, text, _) = run(&["validate", "--server", &url]);
    assert_eq!(code, Some(1));
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines[0], "line 1: unique");
    assert_eq!(lines[1], "line 2: several solutions");
    assert_eq!(
        lines[2],
        "line 3: no solution; conflicts: r1c1 and r1c9 both hold 5 in row 1"
    );
    let (_, rated, _) = run(&["rate", "--server", &url]);
    let rated: Vec<_> = rated.lines().collect();
    assert!(rated[0].starts_with("line 1: easy "), "{rated:?}");
    assert_eq!(rated[1], "line 2: not rated: several solutions");
    // The server's words for the clash, as `solve` says it: no wire field
    // path, rows and columns counted from 1.
    assert_eq!(
        rated[2],
        "line 3: error: INVALID_ARGUMENT 5 is given twice in row 1: at row 1, column 1 and \
         row 1, column 9",
        "{rated:?}"
    );
    let (_, rated, _) = run(&["rate", "--server", &url, "--output", "jsonl"]);
    let last: serde_json::Value = serde_json::from_str(rated.lines().nth(2).unwrap()).unwrap();
    assert_eq!(last["line"], 3);
    assert_eq!(last["outcome"], "invalid");
    assert_eq!(last["error"]["code"], "INVALID_ARGUMENT");
    assert_eq!(
        last["error"]["message"],
        "5 is given twice in row 1: at row 1, column 1 and row 1, column 9"
    );
    let (_, hinted, _) = run(&["hint", "--server", &url]);
    assert!(
        hinted.lines().next().unwrap().starts_with("line 1: "),
        "{hinted}"
    );
}

/// A Hint request no listed technique can progress, whose fallback search
/// is long: DEEP_CONTRADICTION with the pencil marks its one technique step
/// (a hidden pair) leaves. The search then needs about 1.55 million nodes
/// to find that the placed digits have no solution.
fn stuck_hint() -> pb::HintRequest {
    let grid = Grid::from_text(DEEP_CONTRADICTION).unwrap();
    let mut state = Candidates::from_grid(&grid);
    let mut steps = 0;
    // Up to SE's chains, which the service tries only on placed digits
    // with one solution (these have none).
    while let Some(step) = logic::hint_before_chains(&state, || true).unwrap() {
        state.apply(&step);
        steps += 1;
    }
    assert!(steps > 0, "the marks must differ from the grid's own");
    pb::HintRequest {
        puzzle: text(&state.puzzle().to_grid().unwrap().to_string()),
        candidates: Some(pb::Candidates {
            masks: state.masks().iter().map(|&m| m as u32).collect(),
            wide_masks: Vec::new(),
        }),
    }
}

/// `message` with a `grpc-timeout` header of `timeout` ("5m": 5 ms).
fn timed<T>(message: T, timeout: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("grpc-timeout", timeout.parse().unwrap());
    request
}

fn counted(server: &TestServer, outcome: PuzzleOutcome) -> u64 {
    server.gauges.counted(outcome)
}

#[tokio::test]
async fn hints_fallback_search_stops_at_the_work_budget_and_says_so() {
    let server = TestServer::start_with(|c| c.max_nodes = 1_000, |s| s).await;
    let mut client = server.client().await;
    let limited = counted(&server, PuzzleOutcome::WorkLimitReached);
    let r = client.hint(stuck_hint()).await.unwrap().into_inner();
    assert!(r.step.is_none(), "{r:?}");
    assert!(!r.solved && !r.search_complete, "{r:?}");
    assert_eq!(
        counted(&server, PuzzleOutcome::WorkLimitReached),
        limited + 1,
        "the fallback's search is counted as Solve's are"
    );
    // Under the same budget a short fallback search finishes: the empty
    // grid has no technique step, and its first solution takes a few dozen
    // nodes.
    let r = client
        .hint(pb::HintRequest {
            puzzle: text(&".".repeat(81)),
            candidates: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.search_complete, "{r:?}");
    let step = r.step.expect("the fallback step");
    assert_eq!(step.technique(), pb::Technique::Search);
    assert_eq!(step.placements.len(), 1);
    // With the default budget the long search finishes too: no solution,
    // so no step, and the search says it is complete.
    let roomy = TestServer::start().await;
    let r = roomy
        .client()
        .await
        .hint(stuck_hint())
        .await
        .unwrap()
        .into_inner();
    assert!(r.step.is_none() && !r.solved && r.search_complete, "{r:?}");
}

#[tokio::test]
async fn validate_and_rate_past_the_work_budget_say_the_search_is_unfinished() {
    let server = TestServer::start_with(|c| c.max_nodes = 1_000, |s| s).await;
    let mut client = server.client().await;
    let r = client
        .validate(pb::ValidateRequest {
            puzzle: text(DEEP_CONTRADICTION),
            current: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!r.search_complete, "{r:?}");
    assert!(!r.solvable && !r.unique && r.solution.is_none(), "{r:?}");
    assert!(r.conflicts.is_empty() && r.no_candidate_cells.is_empty());
    // Several solutions are found well within the budget: complete.
    let open = client
        .validate(pb::ValidateRequest {
            puzzle: text(&".".repeat(81)),
            current: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(open.search_complete && open.solvable && !open.unique);

    let rated = client
        .rate(pb::RateRequest {
            puzzle: text(DEEP_CONTRADICTION),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rated.outcome(), pb::Outcome::WorkLimitReached);
    assert!(rated.rating.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_hint_and_rate_past_their_deadline_end_deadline_exceeded_and_stop() {
    // A budget the long searches below never reach: only the deadline can
    // stop them.
    let server = TestServer::start_with(
        |c| {
            c.workers = 1;
            c.max_nodes = 100_000_000;
        },
        |s| s,
    )
    .await;
    let gauges = server.gauges.clone();
    let solving = move || gauges.solving.load(Ordering::Relaxed);
    // A bare client keeps no timer of its own, so the code is the server's.
    let client = bare_client(server.addr);
    let call = |what: &'static str, timeout: &'static str| {
        let mut client = client.clone();
        async move {
            match what {
                "Validate" => client
                    .validate(timed(
                        pb::ValidateRequest {
                            puzzle: text(DEEP_CONTRADICTION),
                            current: None,
                        },
                        timeout,
                    ))
                    .await
                    .map(|r| format!("{:?}", r.into_inner())),
                "Hint" => client
                    .hint(timed(stuck_hint(), timeout))
                    .await
                    .map(|r| format!("{:?}", r.into_inner())),
                _ => client
                    .rate(timed(
                        pb::RateRequest {
                            puzzle: text(DEEP_CONTRADICTION),
                        },
                        timeout,
                    ))
                    .await
                    .map(|r| format!("{:?}", r.into_inner())),
            }
        }
    };
    for what in ["Validate", "Hint", "Rate"] {
        // A deadline already all but spent.
        let status = call(what, "1m").await.expect_err(what);
        assert_eq!(status.code(), Code::DeadlineExceeded, "{what}: {status:?}");

        // A deadline that passes mid-search: the search is seen running,
        // then the call ends DEADLINE_EXCEEDED and the search stops with it
        // (work that went on past the deadline would hold the one solver
        // thread for about a second).
        let started = Instant::now();
        let running = tokio::spawn(call(what, "200m"));
        while solving() == 0 {
            assert!(
                !running.is_finished() && started.elapsed() < SETTLE,
                "{what}: no search seen running"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let status = running.await.unwrap().expect_err(what);
        assert_eq!(status.code(), Code::DeadlineExceeded, "{what}: {status:?}");
        let ended = Instant::now();
        while solving() > 0 {
            assert!(
                ended.elapsed() < SETTLE,
                "{what}: the search went on after the deadline"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// A step as its technique's name, placements and eliminations, each a
/// (cell, digit): what the wire and the logical solver can be compared on.
type StepKey = (String, Vec<(u32, u32)>, Vec<(u32, u32)>);

/// A step's [`StepKey`], from the wire.
fn wire_step(step: &pb::Step) -> StepKey {
    let pairs = |v: &[pb::CellDigit]| v.iter().map(|p| (p.cell, p.digit)).collect();
    (
        step.technique_name.clone(),
        pairs(&step.placements),
        pairs(&step.eliminations),
    )
}

/// A step's [`StepKey`], from the logical solver.
fn logic_step(step: &logic::Step) -> StepKey {
    let pairs = |v: &[(u16, u8)]| {
        v.iter()
            .map(|&(c, d)| (u32::from(c), u32::from(d)))
            .collect()
    };
    (
        step.technique.name().to_string(),
        pairs(&step.placements),
        pairs(&step.eliminations),
    )
}

#[tokio::test]
async fn a_hint_from_pencil_marks_starts_where_the_marks_stand() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    // The first puzzle of top1465, stepped in process up to its first
    // elimination, which is then applied: the grid alone cannot show it,
    // the marks can.
    let puzzle =
        Grid::from_text(&crate::support::data_set("puzzles3_magictour_top1465")[0]).unwrap();
    let solution = sudoku_core::solver::solve(&puzzle).unwrap();
    let mut state = Candidates::from_grid(&puzzle);
    let elimination = loop {
        let step = logic::hint(&state).expect("a step before the first elimination");
        state.apply(&step);
        if !step.eliminations.is_empty() {
            break step;
        }
    };
    let grid = text(&state.puzzle().to_grid().unwrap().to_string());
    let masks: Vec<u32> = state.masks().iter().map(|&m| m as u32).collect();

    let marked = client
        .hint(pb::HintRequest {
            puzzle: grid.clone(),
            candidates: Some(pb::Candidates {
                masks: masks.clone(),
                wide_masks: Vec::new(),
            }),
        })
        .await
        .unwrap()
        .into_inner();
    let step = marked.step.expect("a step");
    let want = logic::hint(&state).expect("a step after the elimination");
    assert_eq!(wire_step(&step), logic_step(&want));
    assert_ne!(wire_step(&step), logic_step(&elimination));
    for p in &step.placements {
        assert_eq!(p.digit as u8, solution.0[p.cell as usize], "{step:?}");
    }
    for e in &step.eliminations {
        assert_ne!(e.digit as u8, solution.0[e.cell as usize], "{step:?}");
    }

    // Without the marks the server finds the elimination again.
    let bare = client
        .hint(pb::HintRequest {
            puzzle: grid.clone(),
            candidates: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        wire_step(&bare.step.expect("a step")),
        logic_step(&elimination)
    );

    // Marks that cannot be read: INVALID_ARGUMENT naming the field.
    let mut beyond = masks.clone();
    beyond[0] = 0x200;
    for bad in [beyond, masks[..80].to_vec()] {
        let err = client
            .hint(pb::HintRequest {
                puzzle: grid.clone(),
                candidates: Some(pb::Candidates {
                    masks: bad,
                    wide_masks: Vec::new(),
                }),
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        assert!(
            bad_fields(&err).iter().any(|f| f.starts_with("candidates")),
            "{err:?}"
        );
    }
}

/// Runs the `sudoku` binary with `args`, `input` on its stdin: its exit
/// code, stdout and stderr.
fn sudoku(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let out = crate::support::sudoku_stdin(args, input);
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn validate_current_names_wrong_entries_locally_and_through_the_server() {
    let server = TestServer::start_detached();
    let url = server.url();
    let input = format!("{CLASSIC}\n");
    // The classic with r1c3 entered: 4 is the solution's digit there, 1 is not.
    let entered = |d: char| {
        let mut current = CLASSIC.to_string();
        current.replace_range(2..3, &d.to_string());
        current
    };
    let (right, wrong) = (entered('4'), entered('1'));
    let mut changed = CLASSIC.to_string();
    changed.replace_range(0..1, "6");
    let cases = [
        (&right, "text", Some(0), "line 1: unique"),
        (&wrong, "text", Some(1), "line 1: unique; wrong: r1c3"),
        (&changed, "text", Some(1), "line 1: error: INVALID_ARGUMENT"),
    ];
    for (current, output, code, want) in cases {
        let remote = sudoku(
            &[
                "validate",
                "--server",
                &url,
                "--output",
                output,
                "--current",
                current,
            ],
            &input,
        );
        let local = sudoku(
            &[
                "validate",
                "--local",
                "--output",
                output,
                "--current",
                current,
            ],
            &input,
        );
        assert_eq!(remote, local, "--current {current}");
        assert_eq!(remote.0, code, "{remote:?}");
        assert!(remote.1.starts_with(want), "{remote:?}");
    }
    let (_, changed_line, _) = sudoku(&["validate", "--local", "--current", &changed], &input);
    assert!(changed_line.contains("current"), "{changed_line}");
    let (_, json, _) = sudoku(
        &[
            "validate",
            "--server",
            &url,
            "--output",
            "jsonl",
            "--current",
            &wrong,
        ],
        &input,
    );
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["wrong_cells"], serde_json::json!([2]), "{json}");
    assert_eq!(v["solution"], CLASSIC_SOLVED, "{json}");
}

#[test]
fn generate_keeps_clue_and_rating_ranges_locally_and_through_the_server() {
    let server = TestServer::start_detached();
    let url = server.url();
    let cases: [(&[&str], &str); 2] = [
        (&["--clues", "24..26"], "clues"),
        (&["--min-rating", "3.0", "--max-rating", "4.0"], "rating"),
    ];
    for (range, what) in cases {
        let run = |target: &[&str]| {
            let mut args = vec!["generate", "-n", "6", "--seed", "11", "--output", "jsonl"];
            args.extend_from_slice(range);
            args.extend_from_slice(target);
            let out = sudoku(&args, "");
            assert_eq!(out.0, Some(0), "{what}: {out:?}");
            out.1
        };
        let remote = run(&["--server", &url]);
        assert_eq!(remote, run(&["--local", "--threads", "1"]), "{what}");
        let lines: Vec<&str> = remote.lines().collect();
        assert_eq!(lines.len(), 6, "{what}: {remote}");
        for line in lines {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let puzzle = Grid::from_text(v["puzzle"].as_str().unwrap()).unwrap();
            assert_unique_and_minimal(&puzzle);
            // Counted and rated here, not taken from the answer.
            let clues = puzzle.0.iter().filter(|&&d| d != 0).count();
            let rating = logic::rate(&puzzle).unwrap();
            assert_eq!(v["clues"], clues, "{line}");
            match what {
                "clues" => assert!((24..=26).contains(&clues), "{line}"),
                _ => assert!(
                    (3.0..=4.0).contains(&rating.se_rating),
                    "{line}: {rating:?}"
                ),
            }
        }
    }
}
