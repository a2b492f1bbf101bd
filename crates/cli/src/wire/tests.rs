//! The codec's tests: requests and answers as prost writes and reads
//! them, on the fast path and off it, for every size.

use super::*;
use sudoku_core::puzzle::sized::{Shape, SizedGrid};

fn grid(text: &str) -> Grid {
    Grid::from_text(text).unwrap()
}

const PUZZLE: &str =
    "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......";
const SOLVED: &str =
    "417369825632158947958724316825437169791586432346912758289643571573291684164875293";

#[test]
fn requests_are_what_prost_writes() {
    for (ids, options) in [
        (vec![0u64, 1, 127, 128, 300, u64::MAX], None),
        (
            vec![5],
            Some(pb::SolveOptions {
                mode: pb::SolveMode::Count as i32,
                max_solutions: 2,
            }),
        ),
        (vec![], None),
    ] {
        let request = Request {
            items: ids
                .iter()
                .map(|&id| Item {
                    id,
                    grid: Puzzle::Nine(grid(PUZZLE)),
                })
                .collect(),
            options,
        };
        let mut ours = Vec::new();
        encode_request(&request, &mut ours);
        let theirs = pb::SolveBatchRequest {
            items: ids
                .iter()
                .map(|&id| pb::BatchItem {
                    id,
                    puzzle: Some(pb::Grid {
                        text: PUZZLE.to_string(),
                        ..Default::default()
                    }),
                })
                .collect(),
            options,
        };
        // prost leaves out an id of 0; both read back the same.
        assert_eq!(pb::SolveBatchRequest::decode(&ours[..]).unwrap(), theirs);
        let nonzero = ids.iter().all(|&id| id != 0);
        if nonzero {
            assert_eq!(ours, theirs.encode_to_vec());
        }
    }
    for v in [0, 1, 127, 128, 16_383, 16_384, u64::MAX] {
        let mut b = Vec::new();
        put_varint(&mut b, v);
        assert_eq!(b.len(), varint_len(v), "{v}");
    }
}

/// Grids of other sizes go as prost writes them, cells and box, between
/// 9x9 ones written by hand; their solutions come back as their size.
#[test]
fn other_sizes_go_and_come_back_with_their_box() {
    let shape = Shape::new(2, 3).unwrap();
    let mut six = SizedGrid::empty(shape);
    six.values_mut()[..6].copy_from_slice(&[1, 2, 3, 4, 5, 6]);
    let request = Request {
        items: vec![
            Item {
                id: 1,
                grid: Puzzle::Nine(grid(PUZZLE)),
            },
            Item {
                id: 2,
                grid: Puzzle::Sized(std::sync::Arc::new(six.clone())),
            },
        ],
        options: None,
    };
    let mut ours = Vec::new();
    encode_request(&request, &mut ours);
    let read = pb::SolveBatchRequest::decode(&ours[..]).unwrap();
    assert_eq!(read.items[0].puzzle.as_ref().unwrap().text, PUZZLE);
    let g = read.items[1].puzzle.as_ref().unwrap();
    assert_eq!((read.items[1].id, g.box_rows, g.box_cols), (2, 2, 3));
    assert_eq!(g.cells, six.to_cells());
    let answer = pb::BatchResult {
        id: 2,
        result: Some(pb::batch_result::Result::Solution(pb::Solution {
            outcome: pb::Outcome::MultipleSolutions as i32,
            grid: Some(g.clone()),
            solution_count: 2,
            stats: None,
        })),
    };
    let response = pb::SolveBatchResponse {
        results: vec![answer],
    };
    let answers = decode_response(&response.encode_to_vec(), true).unwrap();
    let (id, _, done) = &answers[0];
    assert_eq!(*id, 2);
    assert!(done.outcome == Outcome::NotUnique);
    assert_eq!(done.solution, Some(Puzzle::Sized(std::sync::Arc::new(six))));
}

fn solution(outcome: pb::Outcome, text: &str, count: u64) -> pb::batch_result::Result {
    pb::batch_result::Result::Solution(pb::Solution {
        outcome: outcome as i32,
        grid: (!text.is_empty()).then(|| pb::Grid {
            text: text.to_string(),
            ..Default::default()
        }),
        solution_count: count,
        stats: Some(pb::SolveStats {
            guesses: 3,
            nodes: 1_000_000,
            solve_time_us: 17,
        }),
    })
}

fn summary(d: &Done) -> String {
    format!(
        "{:?} {:?} {} {} {} {} {:?}",
        d.outcome as u8, d.solution, d.count, d.guesses, d.nodes, d.micros, d.error
    )
}

#[test]
fn answers_read_as_prost_reads_them_on_either_path() {
    let cells = pb::Grid {
        cells: grid(SOLVED).0.iter().map(|&d| u32::from(d)).collect(),
        ..Default::default()
    };
    let results = vec![
        (7, Some(solution(pb::Outcome::Solved, SOLVED, 1))),
        (0, Some(solution(pb::Outcome::MultipleSolutions, SOLVED, 2))),
        (9, Some(solution(pb::Outcome::NoSolution, "", 0))),
        (10, Some(solution(pb::Outcome::WorkLimitReached, "", 0))),
        (11, Some(solution(pb::Outcome::Unspecified, SOLVED, 1))),
        // Slow paths: cells, a bad text, an error, nothing.
        (
            12,
            Some(pb::batch_result::Result::Solution(pb::Solution {
                outcome: pb::Outcome::Solved as i32,
                grid: Some(cells),
                solution_count: 1,
                stats: None,
            })),
        ),
        (13, Some(solution(pb::Outcome::Solved, &SOLVED[1..], 1))),
        (
            14,
            Some(pb::batch_result::Result::Error(tonic_types::pb::Status {
                code: tonic::Code::InvalidArgument as i32,
                message: "items[0].puzzle: 5 is given twice".into(),
                details: vec![],
            })),
        ),
        (u64::MAX, None),
    ];
    let msg = pb::SolveBatchResponse {
        results: results
            .into_iter()
            .map(|(id, result)| pb::BatchResult { id, result })
            .collect(),
    };
    let bytes = msg.encode_to_vec();
    for unique in [false, true] {
        let ours = decode_response(&bytes, unique).unwrap();
        let theirs: Vec<(u64, Done)> = msg
            .results
            .iter()
            .cloned()
            .map(|r| (r.id, done_of(r, unique)))
            .collect();
        assert_eq!(ours.len(), theirs.len());
        for ((a, _, da), (b, db)) in ours.iter().zip(&theirs) {
            assert_eq!(a, b);
            assert_eq!(summary(da), summary(db), "id {a}");
        }
    }
    // The fast path is the one the common answer takes.
    let one = pb::BatchResult {
        id: 7,
        result: Some(solution(pb::Outcome::Solved, SOLVED, 1)),
    };
    assert!(fast_result(&one.encode_to_vec(), false).is_some());
    // Truncated bytes are an error, not a panic.
    assert!(decode_response(&bytes[..bytes.len() - 3], false).is_err());
    // An unknown field of the response is skipped, as prost does.
    let mut extra = bytes.clone();
    extra.extend_from_slice(&[key(9, VARINT), 1]);
    assert_eq!(decode_response(&extra, false).unwrap().len(), 9);
}

/// A valid response of solved, counted, unsolved and failed results.
fn sample() -> Vec<u8> {
    let results = [
        (7, Some(solution(pb::Outcome::Solved, SOLVED, 1))),
        (
            300,
            Some(solution(pb::Outcome::MultipleSolutions, SOLVED, 2)),
        ),
        (9, Some(solution(pb::Outcome::NoSolution, "", 0))),
        (
            14,
            Some(pb::batch_result::Result::Error(tonic_types::pb::Status {
                code: tonic::Code::Internal as i32,
                message: "items[2]: boom".into(),
                details: vec![],
            })),
        ),
    ];
    pb::SolveBatchResponse {
        results: results
            .into_iter()
            .map(|(id, result)| pb::BatchResult { id, result })
            .collect(),
    }
    .encode_to_vec()
}

proptest::proptest! {
    /// Whatever bytes a server sends, the hand-written reader does not
    /// panic, and where prost reads them too the two agree.
    #[test]
    fn any_bytes_read_as_prost_reads_them_or_fail(
        edits in proptest::collection::vec((0usize..2_000, proptest::prelude::any::<u8>()), 0..6),
        cut in 0usize..2_000,
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        unique in proptest::prelude::any::<bool>(),
    ) {
        let mut bytes = sample();
        for (at, b) in edits {
            let n = bytes.len();
            bytes[at % n] = b;
        }
        bytes.truncate(cut.max(1).min(bytes.len()));
        bytes.extend_from_slice(&noise);
        let ours = decode_response(&bytes, unique);
        let theirs = pb::SolveBatchResponse::decode(&bytes[..]);
        if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
            proptest::prop_assert_eq!(ours.len(), theirs.results.len());
            for ((a, _, da), r) in ours.iter().zip(theirs.results) {
                proptest::prop_assert_eq!(*a, r.id);
                proptest::prop_assert_eq!(summary(da), summary(&done_of(r, unique)));
            }
        }
    }
}
