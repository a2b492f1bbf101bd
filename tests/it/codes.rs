//! The codes the contract promises for requests the handlers never see:
//! bodies that cannot be decoded answer INTERNAL (as other gRPC servers
//! answer them), and a request message over the size limit answers
//! OUT_OF_RANGE whether it came compressed or not, on both RPCs.

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sudoku_grpc::pb;
use tonic::Code;
use tonic::codec::CompressionEncoding;
use tonic::codegen::Bytes;
use tonic::codegen::http::{Request, header};

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
        .solve(pb::SolveRequest {
            puzzle: Some(pb::Grid {
                text: CLASSIC.into(),
                cells: vec![],
                ..Default::default()
            }),
            options: None,
        })
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
        if encoding.is_some() {
            let said = format!("larger than the limit of {limit} bytes once decompressed");
            assert!(unary.message().contains(&said), "{unary:?}");
            assert!(streamed.message().contains(&said), "{streamed:?}");
        }
    }
}
