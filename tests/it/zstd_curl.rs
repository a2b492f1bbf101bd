//! zstd with a peer that is not tonic: grpcio (Python) and grpc-js (Node)
//! cannot send zstd, so this speaks gRPC by hand with curl (nghttp2's HTTP/2)
//! and the reference zstd command: a zstd-compressed Solve request gets a
//! zstd-compressed, valid answer that advertises grpc-accept-encoding, and
//! a request in an encoding the server lacks gets UNIMPLEMENTED with the same
//! grpc-accept-encoding, once.
//!
//! Needs curl with HTTP/2 and zstd. Skips when missing, except under
//! CI=true, where it fails. .ci/setup-clients.sh installs both.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use prost::Message;
use sudoku_core::puzzle::Grid;
use sudoku_grpc::pb;

use crate::support::{TestServer, have, run, skip, target_dir};

const PUZZLE: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

fn zstd(args: &[&str], from: &Path, to: &Path) -> Vec<u8> {
    let mut cmd = Command::new("zstd");
    cmd.args(args)
        .arg("-q")
        .arg("-f")
        .arg(from)
        .arg("-o")
        .arg(to);
    let out = run(cmd, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "zstd {args:?}: {}", out.both());
    std::fs::read(to).unwrap()
}

/// POSTs the gRPC message frame in `frame` to Solve with `headers`; returns
/// the response headers and trailers (as curl dumps them) and the body.
fn post(server: &TestServer, frame: &Path, headers: &[&str], dir: &Path) -> (String, Vec<u8>) {
    let head = dir.join("headers.txt");
    let body = dir.join("body.bin");
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "--http2-prior-knowledge",
        "--max-time",
        "20",
        "-X",
        "POST",
    ])
    .args(["-H", "content-type: application/grpc", "-H", "te: trailers"]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    cmd.arg("--data-binary")
        .arg(format!("@{}", frame.display()))
        .arg("-D")
        .arg(&head)
        .arg("-o")
        .arg(&body)
        .arg(format!(
            "http://{}/sudoku.v1.SudokuService/Solve",
            server.target()
        ));
    let out = run(cmd, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "curl: {}", out.both());
    (
        std::fs::read_to_string(&head).unwrap().to_ascii_lowercase(),
        std::fs::read(&body).unwrap_or_default(),
    )
}

/// The one `grpc-accept-encoding` header in `headers` (as `post` returns
/// them); panics when it is missing or repeated.
fn accept_encoding(headers: &str) -> String {
    let values: Vec<&str> = headers
        .lines()
        .filter_map(|l| l.strip_prefix("grpc-accept-encoding:"))
        .map(str::trim)
        .collect();
    match values.as_slice() {
        [one] => one.to_string(),
        _ => panic!("expected one grpc-accept-encoding, found {values:?} in\n{headers}"),
    }
}

#[test]
fn server_accepts_and_answers_zstd_from_curl() {
    const TEST: &str = "server_accepts_and_answers_zstd_from_curl";
    if !have("zstd") {
        return skip(TEST, "the zstd command is not installed");
    }
    let curl_http2 = {
        let mut cmd = Command::new("curl");
        cmd.arg("--version");
        run(cmd, Duration::from_secs(10)).is_ok_and(|o| o.success && o.stdout.contains("HTTP2"))
    };
    if !curl_http2 {
        return skip(TEST, "curl with HTTP/2 is not installed");
    }
    let dir = target_dir().join(format!("zstd-curl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = TestServer::start_detached();

    // The request message, zstd-compressed, in a frame flagged compressed.
    let request = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            text: PUZZLE.to_string(),
            cells: Vec::new(),
            ..Default::default()
        }),
        options: None,
    };
    std::fs::write(dir.join("request.bin"), request.encode_to_vec()).unwrap();
    let compressed = zstd(&[], &dir.join("request.bin"), &dir.join("request.zst"));
    let mut frame = vec![1u8];
    frame.extend_from_slice(&(compressed.len() as u32).to_be_bytes());
    frame.extend_from_slice(&compressed);
    std::fs::write(dir.join("frame.bin"), &frame).unwrap();

    let (headers, body) = post(
        &server,
        &dir.join("frame.bin"),
        &["grpc-encoding: zstd", "grpc-accept-encoding: zstd"],
        &dir,
    );
    assert!(headers.contains("grpc-status: 0"), "{headers}");
    assert!(headers.contains("grpc-encoding: zstd"), "{headers}");
    // A successful answer says what the server accepts too, so a client can
    // learn it before sending anything compressed.
    let advertised = accept_encoding(&headers);
    assert_eq!(advertised, "gzip,zstd,identity", "{headers}");
    assert!(
        body.len() > 5 && body[0] == 1,
        "not a compressed frame: {body:?}"
    );
    let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
    assert_eq!(body.len(), 5 + len, "one message expected");
    std::fs::write(dir.join("response.zst"), &body[5..]).unwrap();
    let plain = zstd(
        &["-d"],
        &dir.join("response.zst"),
        &dir.join("response.bin"),
    );
    let response = pb::SolveResponse::decode(plain.as_slice()).expect("a SolveResponse");
    let solution = response.solution.expect("a solution");
    assert_eq!(solution.outcome, pb::Outcome::Solved as i32);
    let text = solution.grid.expect("a grid").text;
    let (puzzle, solved) = (
        Grid::from_text(PUZZLE).unwrap(),
        Grid::from_text(&text).unwrap(),
    );
    assert!(
        solved.is_valid_solution() && puzzle.is_kept_by(&solved),
        "{text}"
    );

    // An encoding the server lacks: UNIMPLEMENTED, and the header says what
    // it accepts. The body is empty: the server answers from the headers
    // alone and resets the stream, and curl 7.88 sometimes reports that
    // reset as an error (exit 92) while it is still sending a body.
    std::fs::write(dir.join("empty.bin"), b"").unwrap();
    let (headers, _) = post(
        &server,
        &dir.join("empty.bin"),
        &["grpc-encoding: deflate"],
        &dir,
    );
    assert!(headers.contains("grpc-status: 12"), "{headers}");
    // tonic's own header, once, and the same as on the OK answer.
    assert_eq!(accept_encoding(&headers), advertised, "{headers}");
    let _ = std::fs::remove_dir_all(&dir);
}
