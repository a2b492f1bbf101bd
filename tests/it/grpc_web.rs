//! gRPC-Web on the gRPC port, as a browser speaks it: calls over HTTP/1.1
//! (hyper's client, the gRPC-Web framing written here), binary and base64
//! text; SolveStream; statuses and their BadRequest details in the
//! trailers frame; CORS for the configured origins only; and the HTTP/1.1
//! connection protections (header-read deadline, connection cap). Plain
//! gRPC SolveStream over HTTP/2 is tested here too.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use prost::Message;
use sudoku_core::puzzle::Grid;
use sudoku_grpc::pb;
use sudoku_grpc::telemetry::metrics::ConnectionClosed;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_stream::StreamExt;
use tonic::Code;
use tonic::codegen::Bytes;
use tonic::codegen::http::{self, HeaderMap, Method, Request, StatusCode, Version};
use tonic_types::StatusExt;

use crate::support::{
    BinaryServer, CLASSIC, CLASSIC_SOLVED, SETTLE, TestServer, data_set, free_port, http_get,
};

const SOLVE: &str = "/sudoku.v1.SudokuService/Solve";
const SOLVE_STREAM: &str = "/sudoku.v1.SudokuService/SolveStream";
const PAGE: &str = "http://localhost:8080";

// --- base64, as gRPC-Web text carries it --------------------------------

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(crate) fn base64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from_be_bytes([0, b[0], b[1], b[2]]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes base64 that may be several padded pieces one after another, as
/// a gRPC-Web text response is (one piece per chunk the server wrote).
pub(crate) fn unbase64(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for quad in text.chunks(4) {
        assert_eq!(quad.len(), 4, "base64 of a length not a multiple of 4");
        let mut n = 0u32;
        let mut pad = 0;
        for &c in quad {
            let v = match c {
                b'=' => {
                    pad += 1;
                    0
                }
                _ => ALPHABET
                    .iter()
                    .position(|&a| a == c)
                    .expect("a base64 character") as u32,
            };
            n = n << 6 | v;
        }
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    out
}

#[test]
fn base64_round_trips_and_decodes_concatenated_pieces() {
    for len in 0..10 {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 200) as u8).collect();
        assert_eq!(unbase64(base64(&bytes).as_bytes()), bytes);
    }
    assert_eq!(base64(b"ab"), "YWI=");
    assert_eq!(unbase64(b"YWI=Yw=="), b"abc");
}

// --- the gRPC-Web framing ------------------------------------------------

/// A gRPC-Web answer: HTTP status and headers, its messages, and the
/// trailers its trailers frame carried.
#[derive(Debug)]
struct WebAnswer {
    http: StatusCode,
    headers: HeaderMap,
    messages: Vec<Vec<u8>>,
    trailers: Option<HeaderMap>,
}

impl WebAnswer {
    fn status(&self) -> tonic::Status {
        let trailers = self.trailers.as_ref().expect("a trailers frame");
        tonic::Status::from_header_map(trailers).expect("grpc-status in the trailers frame")
    }
}

/// Splits a gRPC-Web body into its messages and its trailers frame.
pub(crate) fn frames(mut body: &[u8]) -> (Vec<Vec<u8>>, Option<HeaderMap>) {
    let mut messages = Vec::new();
    let mut trailers = None;
    while !body.is_empty() {
        assert!(body.len() >= 5, "a cut frame header: {body:?}");
        let flags = body[0];
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let payload = &body[5..5 + len];
        body = &body[5 + len..];
        if flags & 0x80 != 0 {
            assert!(trailers.is_none(), "two trailers frames");
            let mut map = HeaderMap::new();
            let text = std::str::from_utf8(payload).expect("trailers are text");
            for line in text.split("\r\n").filter(|l| !l.is_empty()) {
                let (name, value) = line.split_once(':').expect("name: value");
                map.append(
                    http::HeaderName::from_bytes(name.trim().as_bytes()).unwrap(),
                    value.trim().parse().unwrap(),
                );
            }
            trailers = Some(map);
        } else {
            assert!(trailers.is_none(), "a message after the trailers frame");
            assert_eq!(flags, 0, "a compressed message nobody asked for");
            messages.push(payload.to_vec());
        }
    }
    (messages, trailers)
}

fn framed(message: &impl Message) -> Vec<u8> {
    let bytes = message.encode_to_vec();
    let mut out = vec![0u8];
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(&bytes);
    out
}

/// One gRPC-Web call of `path` to `addr` over HTTP/1.1, in base64 text
/// when `text`, with `origin` set when given.
async fn web_call(
    addr: SocketAddr,
    path: &str,
    message: &impl Message,
    text: bool,
    origin: Option<&str>,
) -> WebAnswer {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let body = framed(message);
    let (content_type, body) = if text {
        ("application/grpc-web-text", base64(&body).into_bytes())
    } else {
        ("application/grpc-web+proto", body)
    };
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("http://{addr}{path}"))
        .header("content-type", content_type)
        .header("accept", content_type)
        .header("x-grpc-web", "1")
        .header("x-user-agent", "grpc-web-test/1.0");
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = client
        .request(request.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .expect("a gRPC-Web answer");
    assert_eq!(response.version(), Version::HTTP_11);
    let http = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let body = if text { unbase64(&body) } else { body.to_vec() };
    let (messages, trailers) = frames(&body);
    WebAnswer {
        http,
        headers,
        messages,
        trailers,
    }
}

use crate::support::solve_request;

fn stream_request(puzzles: &[(u64, String)]) -> pb::SolveStreamRequest {
    pb::SolveStreamRequest {
        items: puzzles
            .iter()
            .map(|(id, p)| pb::BatchItem {
                id: *id,
                puzzle: Some(pb::Grid {
                    text: p.clone(),
                    cells: vec![],
                    ..Default::default()
                }),
            })
            .collect(),
        options: None,
    }
}

/// Asserts `solution` is a full valid grid that keeps `puzzle`'s givens.
fn check_solution(puzzle: &str, solution: &str) {
    let p = Grid::from_text(puzzle).unwrap();
    let s = Grid::from_text(solution).unwrap_or_else(|e| panic!("{solution:?}: {e}"));
    assert!(
        s.is_valid_solution() && p.is_kept_by(&s),
        "{solution} does not solve {puzzle}"
    );
}

fn solved_text(solution: &pb::Solution) -> &str {
    assert_eq!(solution.outcome(), pb::Outcome::Solved, "{solution:?}");
    &solution.grid.as_ref().expect("a solved grid").text
}

async fn eventually(limit: Duration, f: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    f()
}

// --- calls ---------------------------------------------------------------

#[tokio::test]
async fn solve_over_http1_grpc_web_in_binary_and_in_text() {
    let server = TestServer::start().await;
    for text in [false, true] {
        let answer = web_call(server.addr, SOLVE, &solve_request(CLASSIC), text, None).await;
        assert_eq!(answer.http, StatusCode::OK);
        let expected = if text {
            "application/grpc-web-text+proto"
        } else {
            "application/grpc-web+proto"
        };
        assert_eq!(answer.headers["content-type"], expected);
        // The encodings are advertised to gRPC-Web clients as to gRPC ones.
        assert_eq!(answer.headers["grpc-accept-encoding"], "gzip,zstd,identity");
        assert_eq!(answer.status().code(), Code::Ok, "{answer:?}");
        assert_eq!(answer.messages.len(), 1, "{answer:?}");
        let response = pb::SolveResponse::decode(&answer.messages[0][..]).unwrap();
        let solution = response.solution.unwrap();
        assert_eq!(solved_text(&solution), CLASSIC_SOLVED);
        assert!(solution.stats.unwrap().nodes >= 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn solve_stream_over_grpc_web_streams_one_result_per_item_then_ok() {
    let server = TestServer::start().await;
    let hard = data_set("puzzles6_forum_hardest_1106");
    let mut puzzles: Vec<(u64, String)> = hard
        .iter()
        .take(6)
        .enumerate()
        .map(|(i, p)| (1000 + i as u64, p.clone()))
        .collect();
    // One bad item among them: it gets its own error, the others go on.
    puzzles.insert(3, (7, format!("55{}", ".".repeat(79))));
    for text in [false, true] {
        let answer = web_call(
            server.addr,
            SOLVE_STREAM,
            &stream_request(&puzzles),
            text,
            None,
        )
        .await;
        assert_eq!(answer.status().code(), Code::Ok, "{answer:?}");
        assert_eq!(answer.messages.len(), puzzles.len(), "{answer:?}");
        let mut seen = vec![false; puzzles.len()];
        for m in &answer.messages {
            let response = pb::SolveStreamResponse::decode(&m[..]).unwrap();
            let index = response.index as usize;
            assert!(!seen[index], "index {index} twice");
            seen[index] = true;
            let result = response.result.unwrap();
            let (id, puzzle) = &puzzles[index];
            assert_eq!(result.id, *id, "index {index}");
            match result.result.unwrap() {
                pb::batch_result::Result::Solution(s) => check_solution(puzzle, solved_text(&s)),
                pb::batch_result::Result::Error(e) => {
                    assert_eq!(index, 3, "{e:?}");
                    assert_eq!(e.code, Code::InvalidArgument as i32);
                    assert!(
                        e.message.starts_with("items[3].puzzle"),
                        "the error names the request's item: {}",
                        e.message
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn an_error_comes_in_the_trailers_frame_with_its_bad_request_details() {
    let server = TestServer::start().await;
    let clashing = format!("5.......5{}", ".".repeat(72));
    for text in [false, true] {
        let answer = web_call(server.addr, SOLVE, &solve_request(&clashing), text, None).await;
        assert_eq!(answer.http, StatusCode::OK);
        assert!(answer.messages.is_empty(), "{answer:?}");
        assert!(
            !answer.headers.contains_key("grpc-status"),
            "the status is in the trailers frame, not the headers: {:?}",
            answer.headers
        );
        assert_eq!(answer.headers["grpc-accept-encoding"], "gzip,zstd,identity");
        let trailers = answer.trailers.as_ref().expect("a trailers frame");
        assert!(
            trailers.contains_key("grpc-status-details-bin"),
            "{trailers:?}"
        );
        let status = answer.status();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().contains("5 is given twice in row 1"),
            "{}",
            status.message()
        );
        let bad = status
            .get_details_bad_request()
            .expect("BadRequest details");
        assert_eq!(bad.field_violations.len(), 1, "{bad:?}");
        assert_eq!(bad.field_violations[0].field, "puzzle");
        assert!(
            bad.field_violations[0]
                .description
                .contains("at row 1, column 1 and row 1, column 9"),
            "{bad:?}"
        );
        let info = status.get_details_error_info().expect("ErrorInfo details");
        assert_eq!(
            (info.reason.as_str(), info.domain.as_str()),
            ("CONFLICTING_GIVENS", "sudoku.v1")
        );
        assert_eq!(info.metadata["cells"], "0,8");
    }
    // A stream too long for the server fails before any result.
    let many: Vec<(u64, String)> = (0..1025).map(|i| (i, CLASSIC.to_string())).collect();
    let answer = web_call(
        server.addr,
        SOLVE_STREAM,
        &stream_request(&many),
        false,
        None,
    )
    .await;
    assert!(answer.messages.is_empty());
    assert_eq!(
        answer.status().code(),
        Code::ResourceExhausted,
        "{answer:?}"
    );
}

// --- the web page ----------------------------------------------------------

/// The status and headers of `method path` over HTTP/1.1.
async fn page_head(addr: SocketAddr, method: &str, path: &str) -> (u16, Vec<(String, String)>) {
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    exchange(addr, &request).await
}

#[tokio::test]
async fn the_web_page_is_served_at_the_root_and_other_requests_pass_on() {
    let server = TestServer::start().await;
    for (path, content_type) in [
        ("/", "text/html; charset=utf-8"),
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
    ] {
        for method in ["GET", "HEAD"] {
            let (status, headers) = page_head(server.addr, method, path).await;
            assert_eq!(status, 200, "{method} {path}: {headers:?}");
            assert_eq!(header(&headers, "content-type"), content_type);
            assert_eq!(header(&headers, "cache-control"), "no-cache");
            assert!(header(&headers, "etag").starts_with('"'), "{headers:?}");
        }
    }
    let addr = server.addr;
    let get = |path: &'static str| async move {
        tokio::task::spawn_blocking(move || http_get(addr, path))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    };
    let page = get("/").await;
    assert!(
        page.contains(r#"<script type="module" src="/app.js">"#),
        "{page}"
    );
    let script = get("/app.js").await;
    assert!(
        script.contains("application/grpc-web+proto"),
        "the bundle speaks binary gRPC-Web"
    );
    // Another path, or another method on the page's path, is gRPC-Web's
    // (which refuses a request that is not gRPC-Web).
    for (method, path) in [
        ("GET", "/favicon.ico"),
        ("GET", "/index.html"),
        ("POST", "/"),
    ] {
        let (status, headers) = page_head(server.addr, method, path).await;
        assert_ne!(status, 200, "{method} {path}: {headers:?}");
    }
    // And gRPC-Web on the same connection type still answers.
    let answer = web_call(server.addr, SOLVE, &solve_request(CLASSIC), false, None).await;
    assert_eq!(answer.status().code(), Code::Ok);
}

#[tokio::test]
async fn no_web_page_leaves_every_request_to_grpc() {
    let server = TestServer::start_with(|c| c.no_web_page = true, |s| s).await;
    for path in ["/", "/app.js", "/app.css"] {
        let (status, headers) = page_head(server.addr, "GET", path).await;
        assert_ne!(status, 200, "GET {path}: {headers:?}");
        assert!(
            !headers.iter().any(|(n, _)| n == "etag"),
            "GET {path}: {headers:?}"
        );
    }
    let answer = web_call(server.addr, SOLVE, &solve_request(CLASSIC), false, None).await;
    assert_eq!(answer.status().code(), Code::Ok);
}

// --- CORS ----------------------------------------------------------------

/// A raw HTTP/1.1 exchange: `request` sent on a new connection, the
/// response head read back (lowercased names).
async fn exchange(addr: SocketAddr, request: &str) -> (u16, Vec<(String, String)>) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head = loop {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("an answer within 5 s")
            .unwrap();
        assert!(n > 0, "closed before an answer: {got:?}");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, _)) = text.split_once("\r\n\r\n") {
            break head.to_string();
        }
    };
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers)
}

fn preflight(origin: &str) -> String {
    format!(
        "OPTIONS {SOLVE} HTTP/1.1\r\nHost: x\r\nOrigin: {origin}\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type,x-grpc-web,x-user-agent,grpc-timeout\r\n\
         Connection: close\r\n\r\n"
    )
}

fn cors_headers(headers: &[(String, String)]) -> Vec<&(String, String)> {
    headers
        .iter()
        .filter(|(n, _)| n.starts_with("access-control-"))
        .collect()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in {headers:?}"))
}

#[tokio::test]
async fn cors_answers_the_configured_origins_and_no_others() {
    let server = TestServer::start_with(
        |c| c.cors_origins = vec![PAGE.to_string(), "https://app.example".to_string()],
        |s| s,
    )
    .await;

    let (status, headers) = exchange(server.addr, &preflight(PAGE)).await;
    assert!(status == 200 || status == 204, "{status} {headers:?}");
    assert_eq!(header(&headers, "access-control-allow-origin"), PAGE);
    assert!(header(&headers, "access-control-allow-methods").contains("POST"));
    let allowed = header(&headers, "access-control-allow-headers");
    for h in [
        "content-type",
        "x-grpc-web",
        "x-user-agent",
        "grpc-timeout",
        "traceparent",
    ] {
        assert!(allowed.split(", ").any(|a| a == h), "{h} not in {allowed}");
    }

    let answer = web_call(
        server.addr,
        SOLVE,
        &solve_request(CLASSIC),
        false,
        Some(PAGE),
    )
    .await;
    assert_eq!(answer.status().code(), Code::Ok);
    assert_eq!(answer.headers["access-control-allow-origin"], PAGE);
    let exposed = answer.headers["access-control-expose-headers"]
        .to_str()
        .unwrap();
    for h in ["grpc-status", "grpc-message", "grpc-status-details-bin"] {
        assert!(exposed.split(", ").any(|e| e == h), "{h} not in {exposed}");
    }

    // Another origin: no CORS header at all, on the preflight or the call.
    let (status, headers) = exchange(server.addr, &preflight("http://evil.example")).await;
    assert!(cors_headers(&headers).is_empty(), "{status} {headers:?}");
    assert!(status >= 400, "a disallowed preflight is not OK: {status}");
    let answer = web_call(
        server.addr,
        SOLVE,
        &solve_request(CLASSIC),
        false,
        Some("http://evil.example"),
    )
    .await;
    assert!(
        !answer
            .headers
            .keys()
            .any(|k| k.as_str().starts_with("access-control-")),
        "{:?}",
        answer.headers
    );

    // No --cors-origin: no CORS header for anyone.
    let plain = TestServer::start().await;
    let (status, headers) = exchange(plain.addr, &preflight(PAGE)).await;
    assert!(cors_headers(&headers).is_empty(), "{status} {headers:?}");
    let answer = web_call(
        plain.addr,
        SOLVE,
        &solve_request(CLASSIC),
        false,
        Some(PAGE),
    )
    .await;
    assert_eq!(answer.status().code(), Code::Ok);
    assert!(
        !answer
            .headers
            .keys()
            .any(|k| k.as_str().starts_with("access-control-")),
        "{:?}",
        answer.headers
    );
}

// --- HTTP/1.1 protections -----------------------------------------------

/// How long after `since` the server closed `stream`; `None` if still open
/// `limit` after it.
async fn closed_after(mut stream: TcpStream, since: Instant, limit: Duration) -> Option<Duration> {
    let deadline = tokio::time::Instant::from_std(since + limit);
    let mut sink = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut sink)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(since.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

/// A whole gRPC-Web Solve as HTTP/1.1 bytes, keeping the connection open.
fn raw_web_solve() -> Vec<u8> {
    let body = framed(&solve_request(CLASSIC));
    let mut request = format!(
        "POST {SOLVE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// Reads one chunked HTTP/1.1 response to its last chunk; its head.
async fn read_chunked(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("an answer within 5 s")
            .unwrap();
        assert!(n > 0, "closed before a whole answer: {got:?}");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if text.contains("\r\n\r\n") && text.ends_with("0\r\n\r\n") {
            return text.split_once("\r\n\r\n").unwrap().0.to_string();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_http1_head_is_closed_at_the_header_read_timeout() {
    let server = TestServer::start_with(
        |c| {
            c.header_read_timeout_ms = 1_000;
            c.handshake_timeout_ms = 30_000;
        },
        |s| s,
    )
    .await;
    let limit = Duration::from_secs(8);

    // A first request head sent a few bytes at a time, never finished.
    let trickle = TcpStream::connect(server.addr).await.unwrap();
    let since = Instant::now();
    let (read, mut write) = trickle.into_split();
    let trickling = tokio::spawn(async move {
        for piece in b"POST /sudoku.v1.SudokuService/Solve HTTP/1.1\r\nHost: x\r\nX-A: ".chunks(3) {
            if write.write_all(piece).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        loop {
            if write.write_all(b"a").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let first = async move {
        let mut read = read;
        let deadline = tokio::time::Instant::from_std(since + limit);
        let mut sink = [0u8; 1024];
        loop {
            match tokio::time::timeout_at(deadline, read.read(&mut sink)).await {
                Err(_) => return None,
                Ok(Ok(0)) | Ok(Err(_)) => return Some(since.elapsed()),
                Ok(Ok(_)) => {}
            }
        }
    };

    // A keep-alive connection: one whole call, then half of a second head.
    let mut second = TcpStream::connect(server.addr).await.unwrap();
    second.write_all(&raw_web_solve()).await.unwrap();
    let head = read_chunked(&mut second).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    second
        .write_all(b"POST /sudoku.v1.SudokuService/Solve HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let second_since = Instant::now();
    let (first, second) = tokio::join!(first, closed_after(second, second_since, limit));
    trickling.abort();
    println!(
        "HTTP/1.1, header-read timeout 1 s: a trickled first head closed after {:?}, \
         an unfinished second head after {:?}",
        first, second
    );
    let first = first.expect("a trickled head still open after 8 s");
    assert!(first <= Duration::from_secs(3), "{first:?}");
    let second = second.expect("an unfinished second head still open after 8 s");
    assert!(second <= Duration::from_secs(3), "{second:?}");
    assert_eq!(
        server.gauges.closed(ConnectionClosed::HeaderTimeout),
        2,
        "both counted as header timeouts"
    );
    // Still serving.
    let answer = web_call(server.addr, SOLVE, &solve_request(CLASSIC), false, None).await;
    assert_eq!(answer.status().code(), Code::Ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_counts_http1_connections_and_an_idle_one_makes_room() {
    let server = TestServer::start_with(|c| c.max_connections = 16, |s| s).await;
    let mut held = Vec::new();
    for _ in 0..16 {
        let mut c = TcpStream::connect(server.addr).await.unwrap();
        c.write_all(&raw_web_solve()).await.unwrap();
        let head = read_chunked(&mut c).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        held.push(c);
    }
    // Idle long enough to count as idle (a second) at the cap.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let evicted_before = server.gauges.closed(ConnectionClosed::Evicted);
    // The 17th is served; the keep-alive connection idle longest is closed.
    let mut extra = TcpStream::connect(server.addr).await.unwrap();
    extra.write_all(&raw_web_solve()).await.unwrap();
    let head = tokio::time::timeout(Duration::from_secs(5), read_chunked(&mut extra))
        .await
        .expect("an answer past the cap within 5 s");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut first = held.remove(0);
    let mut got = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), first.read_to_end(&mut got)).await;
    assert!(closed.is_ok(), "the connection idle longest was not closed");
    assert_eq!(
        server.gauges.closed(ConnectionClosed::Evicted),
        evicted_before + 1
    );
    assert_eq!(server.gauges.connections_refused.load(Ordering::Relaxed), 0);
    let g = server.gauges.clone();
    assert!(eventually(SETTLE, || g.connections_open.load(Ordering::Relaxed) <= 16).await);
}

// --- SolveStream over gRPC (HTTP/2) --------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn solve_stream_over_grpc_answers_every_item_and_refuses_too_many() {
    let server = TestServer::start_with(|c| c.max_batch_items = 40, |s| s).await;
    let mut client = server.client().await;
    let corpus = data_set("puzzles6_forum_hardest_1106");
    let puzzles: Vec<(u64, String)> = corpus
        .iter()
        .take(40)
        .enumerate()
        .map(|(i, p)| (u64::MAX - i as u64, p.clone()))
        .collect();
    let mut stream = client
        .solve_stream(stream_request(&puzzles))
        .await
        .unwrap()
        .into_inner();
    let mut seen = vec![false; puzzles.len()];
    while let Some(response) = stream.next().await {
        let response = response.unwrap();
        let index = response.index as usize;
        assert!(!std::mem::replace(&mut seen[index], true), "{index} twice");
        let result = response.result.unwrap();
        assert_eq!(result.id, puzzles[index].0);
        let Some(pb::batch_result::Result::Solution(s)) = result.result else {
            panic!("item {index}: {result:?}");
        };
        check_solution(&puzzles[index].1, solved_text(&s));
    }
    assert!(seen.iter().all(|&s| s), "unanswered items");

    let empty = client
        .solve_stream(stream_request(&[]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(empty.collect::<Vec<_>>().await.len(), 0);

    let too_many: Vec<(u64, String)> = (0..41).map(|i| (i, CLASSIC.to_string())).collect();
    let refused = match client.solve_stream(stream_request(&too_many)).await {
        Err(status) => status,
        Ok(stream) => stream
            .into_inner()
            .next()
            .await
            .expect("an answer")
            .expect_err("too many items accepted"),
    };
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("41 items"), "{refused:?}");
}

/// 1,024 of the hardest puzzles, counted to 2: seconds of work.
fn hard_work() -> pb::SolveStreamRequest {
    let hard = data_set("puzzles6_forum_hardest_1106");
    let puzzles: Vec<(u64, String)> = (0..1024)
        .map(|i| (i, hard[i as usize % hard.len()].clone()))
        .collect();
    let mut request = stream_request(&puzzles);
    request.options = Some(pb::SolveOptions {
        mode: pb::SolveMode::Count as i32,
        max_solutions: 2,
    });
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn solve_stream_stops_at_its_deadline_and_when_its_client_leaves() {
    let server = TestServer::start_with(|c| c.max_nodes = 100_000_000, |s| s).await;
    let g = server.gauges.clone();
    let idle =
        || g.solving.load(Ordering::Relaxed) == 0 && g.open_streams.load(Ordering::Relaxed) == 0;
    let mut client = server.client().await;

    let mut request = tonic::Request::new(hard_work());
    request.set_timeout(Duration::from_millis(50));
    let started = Instant::now();
    let mut stream = client.solve_stream(request).await.unwrap().into_inner();
    let mut answered = 0;
    let end = loop {
        match stream.next().await {
            Some(Ok(_)) => answered += 1,
            Some(Err(status)) => break status,
            None => panic!("ended OK past its deadline after {answered} results"),
        }
    };
    assert_eq!(end.code(), Code::DeadlineExceeded, "{end:?}");
    let took = started.elapsed();
    assert!(eventually(SETTLE, idle).await, "solving goes on");
    println!("SolveStream, 50 ms deadline: DEADLINE_EXCEEDED after {took:?}, {answered} results");
    assert!(took < SETTLE, "{took:?}");

    let mut stream = client.solve_stream(hard_work()).await.unwrap().into_inner();
    stream.next().await.expect("a first result").unwrap();
    drop(stream);
    let left = Instant::now();
    assert!(
        eventually(SETTLE, idle).await,
        "solving goes on after the client left"
    );
    println!(
        "SolveStream: the client left; solving stopped after {:?}",
        left.elapsed()
    );
}

// --- metrics -------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_calls_are_counted_like_the_others() {
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let server = BinaryServer::spawn(&["--metrics-listen", &metrics_addr.to_string()]).await;
    let answer = web_call(server.addr, SOLVE, &solve_request(CLASSIC), true, None).await;
    assert_eq!(answer.status().code(), Code::Ok);
    let clashing = format!("55{}", ".".repeat(79));
    let answer = web_call(server.addr, SOLVE, &solve_request(&clashing), false, None).await;
    assert_eq!(answer.status().code(), Code::InvalidArgument);
    let puzzles: Vec<(u64, String)> = (0..3).map(|i| (i, CLASSIC.to_string())).collect();
    let answer = web_call(
        server.addr,
        SOLVE_STREAM,
        &stream_request(&puzzles),
        false,
        None,
    )
    .await;
    assert_eq!(answer.status().code(), Code::Ok);
    let want = [
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve",grpc_code="OK"} 1"#,
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve",grpc_code="INVALID_ARGUMENT"} 1"#,
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="SolveStream",grpc_code="OK"} 1"#,
        r#"grpc_server_started_total{grpc_service="sudoku.v1.SudokuService",grpc_method="SolveStream"} 1"#,
    ];
    let mut text = String::new();
    for _ in 0..50 {
        text = tokio::task::spawn_blocking(move || http_get(metrics_addr, "/metrics"))
            .await
            .unwrap()
            .unwrap();
        if want.iter().all(|w| text.lines().any(|l| l == *w)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("missing some of {want:?} in\n{text}");
}
