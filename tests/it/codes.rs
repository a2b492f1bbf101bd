//! The codes the contract promises for requests the handlers never see:
//! bodies that cannot be decoded answer INTERNAL (as other gRPC servers
//! answer them), and a request message over the size limit answers
//! OUT_OF_RANGE whether it came compressed or not, on both RPCs. And the
//! google.rpc.ErrorInfo every refusal carries: its reason (the stable word
//! the contract lists), the domain, and the cells at fault.

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sudoku_grpc::pb;
use tonic::Code;
use tonic::codec::CompressionEncoding;
use tonic::codegen::Bytes;
use tonic::codegen::http::{Request, header};
use tonic_types::StatusExt;

use crate::support::solve_request;
use crate::support::{CLASSIC, TestServer};

/// What a raw call got back: the gRPC code and message, from the headers
/// of a trailers-only answer or from the trailers.
#[derive(Debug)]
struct Answer {
    code: Code,
    message: String,
}

/// POSTs `body` to `path` over HTTP/2 with the given content type, as a
/// gRPC client that sends bytes of its own would.
async fn raw_call(server: &TestServer, path: &str, content_type: &str, body: Vec<u8>) -> Answer {
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Full<Bytes>>();
    let request = Request::post(format!("http://{}{path}", server.addr))
        .header(header::CONTENT_TYPE, content_type)
        .header("te", "trailers");
    let response = client
        .request(request.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let trailers = body.collect().await.unwrap().trailers().cloned();
    let status = tonic::Status::from_header_map(&parts.headers)
        .or_else(|| trailers.as_ref().and_then(tonic::Status::from_header_map))
        .unwrap_or_else(|| panic!("no grpc-status in {parts:?} / {trailers:?}"));
    Answer {
        code: status.code(),
        message: status.message().to_string(),
    }
}

/// One gRPC message frame: flag byte, big-endian length, payload.
fn frame(compressed: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![u8::from(compressed)];
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Groups of an unknown field (number 100) nested `depth` deep, never closed.
fn deep_groups(depth: usize) -> Vec<u8> {
    // Tag (100 << 3) | 3 (start group) as a varint.
    [0xa3u8, 0x06].repeat(depth)
}

#[tokio::test]
async fn bodies_that_cannot_be_decoded_answer_internal_on_both_rpcs() {
    let server = TestServer::start().await;
    let grpc = "application/grpc";
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        (
            "random bytes",
            grpc,
            frame(false, &[0xff, 0x13, 0x37, 0x00, 0xde, 0xad, 0xbe, 0xef]),
        ),
        ("a truncated varint", grpc, frame(false, &[0x0a, 0xff])),
        (
            // SolveRequest{puzzle: Grid{text: "\xff"}}
            "invalid UTF-8 in Grid.text",
            grpc,
            frame(false, &[0x0a, 0x03, 0x0a, 0x01, 0xff]),
        ),
        ("deep unknown groups", grpc, frame(false, &deep_groups(200))),
        (
            "a compressed flag with no grpc-encoding",
            grpc,
            frame(true, &[0x0a, 0x00]),
        ),
        (
            "a JSON body",
            "application/grpc+json",
            frame(false, br#"{"puzzle":{"text":"53..7"}}"#),
        ),
    ];
    for path in [
        "/sudoku.v1.SudokuService/Solve",
        "/sudoku.v1.SudokuService/SolveBatch",
    ] {
        for (what, content_type, body) in &cases {
            let answer = raw_call(&server, path, content_type, body.clone()).await;
            assert_eq!(answer.code, Code::Internal, "{path}, {what}: {answer:?}");
            assert!(
                !answer.message.is_empty(),
                "{path}, {what}: a message says why"
            );
        }
    }
    // The server is still up and answers properly formed calls.
    let solved = server
        .client()
        .await
        .solve(solve_request(CLASSIC))
        .await
        .unwrap();
    assert_eq!(
        solved.into_inner().solution.unwrap().outcome(),
        pb::Outcome::Solved
    );
}

#[tokio::test]
async fn a_message_over_the_limit_is_out_of_range_compressed_or_not() {
    let limit = 64 << 10;
    let server = TestServer::start_with(|c| c.max_message_bytes = limit, |s| s).await;
    // 100 KiB of text: over the limit, but a few hundred bytes compressed.
    let huge = "1".repeat(100 << 10);
    let request = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            text: huge.clone(),
            cells: vec![],
            ..Default::default()
        }),
        options: None,
    };
    let batch = pb::SolveBatchRequest {
        items: vec![pb::BatchItem {
            id: 1,
            puzzle: request.puzzle.clone(),
        }],
        options: None,
    };
    for encoding in [
        None,
        Some(CompressionEncoding::Gzip),
        Some(CompressionEncoding::Zstd),
    ] {
        let mut client = server.client().await;
        if let Some(encoding) = encoding {
            client = client.send_compressed(encoding);
        }
        let unary = client.solve(request.clone()).await.unwrap_err();
        assert_eq!(
            unary.code(),
            Code::OutOfRange,
            "Solve, {encoding:?}: {unary:?}"
        );
        let mut out = client
            .solve_batch(tokio_stream::iter(vec![batch.clone()]))
            .await
            .unwrap()
            .into_inner();
        let streamed = out.message().await.unwrap_err();
        assert_eq!(
            streamed.code(),
            Code::OutOfRange,
            "SolveBatch, {encoding:?}: {streamed:?}"
        );
        for status in [&unary, &streamed] {
            let (reason, metadata) = error_info(status);
            assert_eq!(reason, "MESSAGE_TOO_LARGE", "{encoding:?}: {status:?}");
            assert_eq!(metadata["limitBytes"], limit.to_string());
        }
        if encoding.is_some() {
            let said = format!("larger than the limit of {limit} bytes once decompressed");
            assert!(unary.message().contains(&said), "{unary:?}");
            assert!(streamed.message().contains(&said), "{streamed:?}");
        }
    }
}

/// The reason and metadata of `status`'s google.rpc.ErrorInfo, whose
/// domain must be the service's.
fn error_info(status: &tonic::Status) -> (String, std::collections::HashMap<String, String>) {
    let details = status.get_error_details();
    let info = details
        .error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.domain, "sudoku.v1", "{status:?}");
    (info.reason.clone(), info.metadata.clone())
}

fn grid(text: &str) -> Option<pb::Grid> {
    Some(pb::Grid {
        text: text.to_string(),
        cells: vec![],
        ..Default::default()
    })
}

#[tokio::test]
async fn every_refusal_names_its_reason_and_cells_in_an_error_info() {
    let server = TestServer::start_with(|c| c.max_batch_items = 2, |s| s).await;
    let mut client = server.client().await;
    let solve = |text: &str| pb::SolveRequest {
        puzzle: grid(text),
        options: None,
    };
    let bad_char = format!("{}x{}", &CLASSIC[..10], &CLASSIC[11..]);
    let clash = format!("5{}5{}", &CLASSIC[1..8], &CLASSIC[9..]);
    for (request, reason, cells) in [
        (solve(&bad_char), "MALFORMED_GRID", Some("10")),
        (solve(&CLASSIC[..80]), "MALFORMED_GRID", None),
        (solve(""), "MALFORMED_GRID", None),
        (solve(&clash), "CONFLICTING_GIVENS", Some("0,8")),
        (
            pb::SolveRequest {
                puzzle: grid(CLASSIC),
                options: Some(pb::SolveOptions {
                    mode: pb::SolveMode::Count as i32,
                    max_solutions: u32::MAX,
                }),
            },
            "INVALID_FIELD",
            None,
        ),
    ] {
        let status = client.solve(request.clone()).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{request:?}");
        let (got, metadata) = error_info(&status);
        assert_eq!(got, reason, "{request:?}: {status:?}");
        assert_eq!(
            metadata.get("cells").map(String::as_str),
            cells,
            "{status:?}"
        );
        // The BadRequest is still there beside it.
        assert!(status.get_details_bad_request().is_some(), "{status:?}");
    }

    let mut changed = CLASSIC.as_bytes().to_vec();
    changed[0] = b'4';
    let status = client
        .validate(pb::ValidateRequest {
            puzzle: grid(CLASSIC),
            current: grid(std::str::from_utf8(&changed).unwrap()),
        })
        .await
        .unwrap_err();
    let (reason, metadata) = error_info(&status);
    assert_eq!(reason, "CHANGED_GIVEN", "{status:?}");
    assert_eq!(metadata["cells"], "0");

    let status = match client
        .generate(pb::GenerateRequest {
            count: 1_000_000,
            ..Default::default()
        })
        .await
    {
        Err(status) => status,
        Ok(stream) => stream.into_inner().message().await.unwrap_err(),
    };
    assert_eq!(error_info(&status).0, "INVALID_FIELD", "{status:?}");

    let items = (0..3)
        .map(|id| pb::BatchItem {
            id,
            puzzle: grid(CLASSIC),
        })
        .collect();
    let status = match client
        .solve_stream(pb::SolveStreamRequest {
            items,
            options: None,
        })
        .await
    {
        Err(status) => status,
        Ok(stream) => stream.into_inner().message().await.unwrap_err(),
    };
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let (reason, metadata) = error_info(&status);
    assert_eq!(reason, "TOO_MANY_ITEMS", "{status:?}");
    assert_eq!(
        (metadata["found"].as_str(), metadata["max"].as_str()),
        ("3", "2")
    );
}
