//! The error contract at every shape: for each shape class (9x9, square
//! boxes of other sizes, oblong boxes both ways, and sides above 35, which
//! only the integer form carries) and each fault a grid can have, every RPC
//! that takes a grid answers with the google.rpc.ErrorInfo reason and the
//! cells the proto promises, and its google.rpc.BadRequest and its message
//! say the same cell, counted from 1 as players count; fields and the
//! `cells` metadata count from 0.

use prost::Message as _;
use sudoku_grpc::pb;
use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;

use sudoku_core::puzzle::sized::{Shape, SizedGrid, value_char};

use crate::support::TestServer;

/// One box per shape class: 9x9, square 4x4 and 16x16, oblong 6x6 both ways
/// and 12x12, and 36x36 and 49x49, beyond the text form.
const BOXES: [(usize, usize); 8] = [
    (3, 3),
    (2, 2),
    (4, 4),
    (2, 3),
    (3, 2),
    (3, 4),
    (6, 6),
    (7, 7),
];

/// A full grid of `shape`: each band's rows shift by a box's width, each
/// band by one.
fn solution(shape: Shape) -> SizedGrid {
    let n = shape.side();
    let (br, bc) = (shape.box_rows(), shape.box_cols());
    let values = (0..n * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            ((bc * (r % br) + r / br + c) % n + 1) as u8
        })
        .collect();
    let g = SizedGrid::from_values(shape, values).unwrap();
    assert!(g.is_valid_solution(), "{shape}");
    g
}

/// The solution with one blank in each row (on the diagonal): a puzzle
/// with one solution, each blank the last of its row.
fn puzzle(shape: Shape) -> SizedGrid {
    let mut g = solution(shape);
    let n = shape.side();
    for r in 0..n {
        g.values_mut()[r * n + r] = 0;
    }
    g
}

/// `values` on the wire as cells, with the box of `shape` (unset for 9x9).
fn cells(shape: Shape, values: Vec<u32>) -> pb::Grid {
    let (r, c) = boxes(shape);
    pb::Grid {
        cells: values,
        box_rows: r,
        box_cols: c,
        ..Default::default()
    }
}

/// `text` on the wire, with the box of `shape`.
fn text(shape: Shape, text: String) -> pb::Grid {
    let (r, c) = boxes(shape);
    pb::Grid {
        text,
        box_rows: r,
        box_cols: c,
        ..Default::default()
    }
}

/// The box fields of `shape`: unset for 9x9, as most clients send it.
fn boxes(shape: Shape) -> (u32, u32) {
    match shape == Shape::CLASSIC {
        true => (0, 0),
        false => (shape.box_rows() as u32, shape.box_cols() as u32),
    }
}

/// "row R, column C" of cell `i` of `shape`, counted from 1.
fn at(shape: Shape, i: usize) -> String {
    let n = shape.side();
    format!("row {}, column {}", i / n + 1, i % n + 1)
}

/// What a refusal says: the reason, the cells metadata, the one field
/// violation, and the message.
#[derive(Debug)]
struct Refusal {
    reason: String,
    cells: Option<String>,
    field: String,
    description: String,
}

/// Reads `status` as the contract promises it, and checks that its parts
/// agree: one violation, the message is "field: description", the cells
/// are named in the description as people count them, a `cells[i]` field
/// names the first cell, and no number in the message counts from 0.
fn refusal(shape: Shape, status: &tonic::Status) -> Refusal {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    let info = details.error_info().expect("an ErrorInfo");
    assert_eq!(info.domain, "sudoku.v1");
    let bad = details.bad_request().expect("a BadRequest");
    assert_eq!(bad.field_violations.len(), 1, "{status:?}");
    let v = &bad.field_violations[0];
    assert_eq!(
        status.message(),
        format!("{}: {}", v.field, v.description),
        "the message is the violation"
    );
    let listed = info.metadata.get("cells").cloned();
    let indexes: Vec<usize> = listed
        .iter()
        .flat_map(|l| l.split(','))
        .map(|i| i.parse().unwrap())
        .collect();
    for &i in &indexes {
        assert!(
            v.description.contains(&at(shape, i)),
            "{shape}: cell {i} is not named in {:?}",
            v.description
        );
    }
    if let Some(i) = v
        .field
        .rsplit_once("cells[")
        .and_then(|(_, rest)| rest.strip_suffix(']'))
    {
        assert_eq!(Some(&i.parse().unwrap()), indexes.first(), "{status:?}");
    }
    for zero in ["row 0", "column 0", "box 0"] {
        assert!(!status.message().contains(zero), "{status:?}");
    }
    Refusal {
        reason: info.reason.clone(),
        cells: listed,
        field: v.field.clone(),
        description: v.description.clone(),
    }
}

/// A per-item status of SolveBatch as a tonic status, details and all.
fn item_status(e: &tonic_types::pb::Status) -> tonic::Status {
    tonic::Status::with_details(
        Code::from(e.code),
        e.message.clone(),
        e.encode_to_vec().into(),
    )
}

/// The refusals of `grid` by every RPC that reads a puzzle: Solve, a
/// SolveBatch item, Hint and Rate, with the givens checked; Validate reads
/// the puzzle without (conflicts are its answer), so `checked` false asks
/// it too.
async fn refusals(
    client: &mut SudokuServiceClient<Channel>,
    shape: Shape,
    grid: pb::Grid,
    checked: bool,
) -> Vec<(&'static str, Refusal)> {
    let mut out = Vec::new();
    let status = client
        .solve(pb::SolveRequest {
            puzzle: Some(grid.clone()),
            options: None,
        })
        .await
        .unwrap_err();
    out.push(("Solve", refusal(shape, &status)));
    let request = pb::SolveBatchRequest {
        items: vec![pb::BatchItem {
            id: 7,
            puzzle: Some(grid.clone()),
        }],
        options: None,
    };
    let mut stream = client
        .solve_batch(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let msg = tokio::time::timeout(std::time::Duration::from_secs(60), stream.message())
        .await
        .expect("an answer")
        .unwrap()
        .unwrap();
    let Some(pb::batch_result::Result::Error(e)) = &msg.results[0].result else {
        panic!("{shape}: the item should fail: {msg:?}");
    };
    out.push(("SolveBatch", refusal(shape, &item_status(e))));
    // Hint and Rate read the grid as the others do, at any shape (and only
    // then refuse a shape other than 9x9).
    let status = client
        .hint(pb::HintRequest {
            puzzle: Some(grid.clone()),
            candidates: None,
        })
        .await
        .unwrap_err();
    out.push(("Hint", refusal(shape, &status)));
    let status = client
        .rate(pb::RateRequest {
            puzzle: Some(grid.clone()),
        })
        .await
        .unwrap_err();
    out.push(("Rate", refusal(shape, &status)));
    if !checked {
        let status = client
            .validate(pb::ValidateRequest {
                puzzle: Some(grid),
                current: None,
            })
            .await
            .unwrap_err();
        out.push(("Validate", refusal(shape, &status)));
    }
    out
}

/// Asserts every refusal of `got` has `reason`, `cells`, `field` (under
/// `items[0].` for the batch item) and a description starting with `says`.
fn expect(
    shape: Shape,
    fault: &str,
    got: &[(&str, Refusal)],
    reason: &str,
    cells: Option<&str>,
    field: &str,
    says: &str,
) {
    for (rpc, r) in got {
        let what = format!("{shape} {fault} {rpc}: {r:?}");
        assert_eq!(r.reason, reason, "{what}");
        assert_eq!(r.cells.as_deref(), cells, "{what}");
        let want = match *rpc {
            "SolveBatch" => format!("items[0].{field}"),
            _ => field.to_string(),
        };
        assert_eq!(r.field, want, "{what}");
        assert!(r.description.starts_with(says), "{what}: not {says:?}");
    }
}

#[tokio::test]
async fn every_shape_gets_the_reasons_and_cells_the_proto_promises() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    for (br, bc) in BOXES {
        let shape = Shape::new(br, bc).unwrap();
        let n = shape.side();
        let puzzle = puzzle(shape);
        let values = puzzle.to_cells();
        let textual = n <= 35;

        // A character that is no value of this size, in the text form; a
        // grid beyond 35x35 has no text form at all.
        let k = n + 2;
        if textual {
            let mut t: Vec<char> = puzzle.to_text().unwrap().chars().collect();
            t[k] = 'x';
            let got = refusals(
                &mut client,
                shape,
                text(shape, t.into_iter().collect()),
                false,
            );
            let says = format!("{}: unexpected character 'x'", at(shape, k));
            let cells = k.to_string();
            expect(
                shape,
                "bad character",
                &got.await,
                "MALFORMED_GRID",
                Some(&cells),
                "puzzle.text",
                &says,
            );
        } else {
            let got = refusals(&mut client, shape, text(shape, ".".repeat(n * n)), false);
            let says = format!("{n}x{n} ({br}x{bc} boxes): the text form carries sides up to 35");
            expect(
                shape,
                "text too large",
                &got.await,
                "MALFORMED_GRID",
                None,
                "puzzle.text",
                &says,
            );
        }

        // A value above N, in the integer form.
        let mut v = values.clone();
        v[k] = n as u32 + 1;
        let got = refusals(&mut client, shape, cells(shape, v), false).await;
        let says = format!(
            "{}: value {} is out of range; expected 0-{n}",
            at(shape, k),
            n + 1
        );
        let listed = k.to_string();
        let field = format!("puzzle.cells[{k}]");
        expect(
            shape,
            "out of range",
            &got,
            "MALFORMED_GRID",
            Some(&listed),
            &field,
            &says,
        );

        // One cell short, in each form.
        let describe = shape.describe();
        let got = refusals(
            &mut client,
            shape,
            cells(shape, values[1..].to_vec()),
            false,
        )
        .await;
        let says = format!(
            "expected {} cells for {describe}, found {}",
            n * n,
            n * n - 1
        );
        expect(
            shape,
            "wrong count",
            &got,
            "MALFORMED_GRID",
            None,
            "puzzle.cells",
            &says,
        );
        if textual {
            let t = puzzle.to_text().unwrap();
            let got = refusals(&mut client, shape, text(shape, t[1..].to_string()), false).await;
            let says = format!(
                "expected {} characters for {describe}, found {}",
                n * n,
                n * n - 1
            );
            expect(
                shape,
                "wrong length",
                &got,
                "MALFORMED_GRID",
                None,
                "puzzle.text",
                &says,
            );
        }

        // The value of row 1, column 2 given again at the row's end: the
        // first clash, rows scanned first, is in row 1.
        let mut clash = values.clone();
        clash[n - 1] = clash[1];
        let grid = match textual {
            true => text(shape, clash.iter().map(|&v| value_char(v as u8)).collect()),
            false => cells(shape, clash.clone()),
        };
        let got = refusals(&mut client, shape, grid, true).await;
        let says = format!(
            "{} is given twice in row 1: at {} and {}",
            clash[1],
            at(shape, 1),
            at(shape, n - 1)
        );
        let listed = format!("1,{}", n - 1);
        expect(
            shape,
            "conflicting givens",
            &got,
            "CONFLICTING_GIVENS",
            Some(&listed),
            "puzzle",
            &says,
        );

        // Validate: a current grid that changes a given (blanks it, then
        // changes it to another value), and one with a wrong entry, which
        // is an answer, not an error.
        let given = n + 2;
        for (found, held) in [(0, "a blank".to_string()), (1, String::new())] {
            let mut current = values.clone();
            current[given] = match found {
                0 => 0,
                _ => current[given] % n as u32 + 1,
            };
            let held = match found {
                0 => held,
                _ => current[given].to_string(),
            };
            let status = client
                .validate(pb::ValidateRequest {
                    puzzle: Some(cells(shape, values.clone())),
                    current: Some(cells(shape, current)),
                })
                .await
                .unwrap_err();
            let r = refusal(shape, &status);
            let says = format!(
                "the current grid changes a given: {} holds {held} where the puzzle gives {}",
                at(shape, given),
                values[given]
            );
            let listed = given.to_string();
            expect(
                shape,
                "changed given",
                &[("Validate", r)],
                "CHANGED_GIVEN",
                Some(&listed),
                "current",
                &says,
            );
        }
        // A current grid of another shape is refused naming its box.
        let other = Shape::new(1, 2).unwrap();
        let status = client
            .validate(pb::ValidateRequest {
                puzzle: Some(cells(shape, values.clone())),
                current: Some(cells(other, vec![0; 4])),
            })
            .await
            .unwrap_err();
        let r = refusal(shape, &status);
        assert_eq!(
            (r.reason.as_str(), r.field.as_str()),
            ("INVALID_FIELD", "current.box_rows"),
            "{shape}: {r:?}"
        );
        // The blank of row 2 filled with a wrong value: listed by index.
        let wrong = n + 1;
        let mut current = values.clone();
        current[wrong] = solution(shape).values()[wrong] as u32 % n as u32 + 1;
        let answer = client
            .validate(pb::ValidateRequest {
                puzzle: Some(cells(shape, values.clone())),
                current: Some(cells(shape, current)),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(answer.unique, "{shape}: {answer:?}");
        assert_eq!(answer.wrong_cells, [wrong as u32], "{shape}");
    }
}
