//! Connections that hold a slot without being silent or slow in their
//! handshake: idle HTTP/2 connections that answer PINGs, and request bodies
//! that trickle a byte every 5 s over HTTP/2 and over HTTP/1.1 (gRPC-Web,
//! chunked). [`ATTACKERS`] of them are held against the `sudoku-server`
//! binary with its default settings, each reopened as soon as the server
//! closes it, for [`ATTACK`]; meanwhile a legitimate client makes a Solve
//! on a fresh connection every [`LEGIT_EVERY`], and at least 90% of them
//! must succeed. Attacker and client both come from 127.0.0.1, as they do
//! behind a proxy or a NAT. `--nocapture` shows the figures.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_body_util::StreamBody;
use hyper::body::{Bytes, Frame};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::support::{BinaryServer, CLASSIC, CLASSIC_SOLVED};
use crate::support::{solve_request, text_grid};
use sudoku_grpc::pb::{self, sudoku_service_client::SudokuServiceClient};

/// Connections the attacker holds at once.
const ATTACKERS: usize = 1024;
/// How long the attack lasts.
const ATTACK: Duration = Duration::from_secs(60);
/// A legitimate Solve starts this often, each on a fresh connection.
const LEGIT_EVERY: Duration = Duration::from_secs(2);
/// How long one legitimate Solve (connect included) may take.
const LEGIT_LIMIT: Duration = Duration::from_secs(10);
/// One request-body byte this often.
const TRICKLE_EVERY: Duration = Duration::from_secs(5);

const SOLVE: &str = "/sudoku.v1.SudokuService/Solve";

#[derive(Clone, Copy, Debug)]
enum Attack {
    /// HTTP/2, handshake done, PINGs answered, no call.
    IdleHttp2,
    /// HTTP/2, one Solve whose body comes a byte every [`TRICKLE_EVERY`].
    TrickleHttp2,
    /// HTTP/1.1 gRPC-Web Solve, chunked, a byte every [`TRICKLE_EVERY`].
    TrickleHttp1,
}

/// The first 5 bytes of a gRPC message of 100 bytes: the rest never comes
/// in time.
fn trickled_body() -> impl Iterator<Item = u8> {
    [0u8, 0, 0, 0, 100]
        .into_iter()
        .chain(std::iter::repeat(0x0a))
}

/// Holds one connection of `attack` until the server closes it (or `stop`).
async fn hold_one(addr: SocketAddr, attack: Attack, stop: &mut watch::Receiver<bool>) {
    let held = async {
        let tcp = TcpStream::connect(addr).await.map_err(|_| ())?;
        match attack {
            Attack::IdleHttp2 | Attack::TrickleHttp2 => {
                let (mut send, conn) =
                    hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
                        .await
                        .map_err(|_| ())?;
                let conn = tokio::spawn(conn);
                if let Attack::TrickleHttp2 = attack {
                    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, String>>(1);
                    let body = StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(rx));
                    let request = hyper::Request::post(format!("http://{addr}{SOLVE}"))
                        .header("content-type", "application/grpc")
                        .header("te", "trailers")
                        .body(body)
                        .map_err(|_| ())?;
                    let answer = send.send_request(request);
                    let trickle = async move {
                        for b in trickled_body() {
                            if tx
                                .send(Ok(Frame::data(Bytes::from(vec![b]))))
                                .await
                                .is_err()
                            {
                                break;
                            }
                            tokio::time::sleep(TRICKLE_EVERY).await;
                        }
                    };
                    tokio::select! {
                        _ = answer => {}
                        () = trickle => {}
                    }
                }
                let _ = conn.await;
                drop(send);
            }
            Attack::TrickleHttp1 => {
                let (mut read, mut write) = tcp.into_split();
                write
                    .write_all(
                        format!(
                            "POST {SOLVE} HTTP/1.1\r\nHost: {addr}\r\n\
                             Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n\
                             Transfer-Encoding: chunked\r\n\r\n"
                        )
                        .as_bytes(),
                    )
                    .await
                    .map_err(|_| ())?;
                let trickle = async move {
                    for b in trickled_body() {
                        let chunk = [b'1', b'\r', b'\n', b, b'\r', b'\n'];
                        if write.write_all(&chunk).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(TRICKLE_EVERY).await;
                    }
                };
                let closed = async {
                    let mut sink = [0u8; 1024];
                    while let Ok(n) = read.read(&mut sink).await {
                        if n == 0 {
                            break;
                        }
                    }
                };
                tokio::select! {
                    () = trickle => {}
                    () = closed => {}
                }
            }
        }
        Ok::<(), ()>(())
    };
    tokio::select! {
        _ = held => {}
        _ = stop.changed() => {}
    }
}

/// One attacker: a connection of `attack` held, and another opened as soon
/// as the server closes it, until `stop`.
async fn attacker(
    addr: SocketAddr,
    attack: Attack,
    mut stop: watch::Receiver<bool>,
    opened: Arc<AtomicU64>,
) {
    while !*stop.borrow() {
        opened.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        hold_one(addr, attack, &mut stop).await;
        // A refused or failed connect: do not spin.
        if started.elapsed() < Duration::from_millis(10) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// One Solve on a fresh connection, within [`LEGIT_LIMIT`] in all.
async fn legit_solve(url: String) -> Result<Duration, String> {
    let started = Instant::now();
    let call = async {
        let channel = tonic::transport::Channel::from_shared(url)
            .map_err(|e| e.to_string())?
            .connect_timeout(LEGIT_LIMIT)
            .timeout(LEGIT_LIMIT)
            .connect()
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let solved = SudokuServiceClient::new(channel)
            .solve(solve_request(CLASSIC))
            .await
            .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?
            .into_inner();
        match solved.solution.and_then(|s| s.grid) {
            Some(grid) if grid.text == CLASSIC_SOLVED => Ok(started.elapsed()),
            other => Err(format!("unexpected answer {other:?}")),
        }
    };
    tokio::time::timeout(LEGIT_LIMIT, call)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {LEGIT_LIMIT:?}")))
}

/// Runs `attack` against a default server while legitimate Solves go on;
/// asserts that at least 90% of them succeed.
async fn siege(attack: Attack) {
    crate::support::raise_fd_limit();
    let server = BinaryServer::spawn(&[]).await;
    let addr = server.addr;
    let (stop_tx, stop) = watch::channel(false);
    let opened = Arc::new(AtomicU64::new(0));
    // The attacker runs on threads of its own, as another process would,
    // so that the legitimate client's own runtime is not the flood's.
    let flood = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let attackers: Vec<_> = (0..ATTACKERS)
        .map(|_| flood.spawn(attacker(addr, attack, stop.clone(), opened.clone())))
        .collect();
    // Let the attack take hold before the first legitimate call.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let started = Instant::now();
    let mut legit = Vec::new();
    while started.elapsed() < ATTACK {
        legit.push(tokio::spawn(legit_solve(server.url())));
        tokio::time::sleep(LEGIT_EVERY).await;
    }
    let mut times = Vec::new();
    let mut failures = Vec::new();
    for call in legit {
        match call.await.expect("a legitimate call's task") {
            Ok(t) => times.push(t),
            Err(e) => failures.push(e),
        }
    }
    let _ = stop_tx.send(true);
    for a in attackers {
        let _ = tokio::time::timeout(Duration::from_secs(10), a).await;
    }
    flood.shutdown_background();
    times.sort();
    let total = times.len() + failures.len();
    let median = times.get(times.len() / 2).copied();
    let mut kinds: Vec<String> = failures.clone();
    kinds.sort();
    kinds.dedup();
    println!(
        "{attack:?}: {ATTACKERS} held for {} s, {} connections opened in all; legitimate Solves \
         on fresh connections: {} of {total} succeeded (median {median:?}); failures: {kinds:?}",
        ATTACK.as_secs(),
        opened.load(Ordering::Relaxed),
        times.len(),
    );
    assert!(
        times.len() * 10 >= total * 9,
        "{attack:?}: {} of {total} legitimate Solves succeeded; {failures:?}",
        times.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_http2_connections_answering_pings_cannot_hold_the_slots() {
    siege(Attack::IdleHttp2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_bodies_trickling_a_byte_every_5_s_cannot_hold_the_slots() {
    siege(Attack::TrickleHttp2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_http1_bodies_trickling_a_byte_every_5_s_cannot_hold_the_slots() {
    siege(Attack::TrickleHttp1).await;
}

/// The HTTP/2 client preface and an empty SETTINGS frame.
fn raw_handshake() -> Vec<u8> {
    let mut h = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    h.extend([0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
    h
}

/// Reads `stream` until the server closes it, for at most `limit`: whether
/// it closed, and whether a GOAWAY frame came first (the first frame type
/// 0x7 at a frame boundary).
async fn goaway_then_close(stream: &mut TcpStream, limit: Duration) -> (bool, bool) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    let closed = loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => break false,
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
        }
    };
    let mut at = 0;
    let mut goaway = false;
    while at + 9 <= seen.len() {
        let len = u32::from_be_bytes([0, seen[at], seen[at + 1], seen[at + 2]]) as usize;
        goaway |= seen[at + 3] == 0x7;
        at += 9 + len;
    }
    (closed, goaway)
}

#[tokio::test]
async fn an_idle_connection_gets_a_goaway_at_the_idle_timeout_and_a_busy_one_stays() {
    // A raw client that answers no PING: the GOAWAY's grace closes it.
    let server = BinaryServer::spawn(&[
        "--idle-timeout",
        "1",
        "--max-connection-age-grace-secs",
        "1",
    ])
    .await;
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(&raw_handshake()).await.unwrap();
    let since = Instant::now();
    // A SolveBatch stream open on another connection, between messages.
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let mut client = SudokuServiceClient::new(server.channel().await);
    let mut answers = client
        .solve_batch(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let (closed, goaway) = goaway_then_close(&mut idle, Duration::from_secs(6)).await;
    let idle_for = since.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The stream, quiet for over twice the idle timeout, still answers.
    tx.send(pb::SolveBatchRequest {
        items: vec![pb::BatchItem {
            id: 7,
            puzzle: text_grid(CLASSIC),
        }],
        options: None,
    })
    .await
    .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), answers.message())
        .await
        .expect("an answer within 5 s");
    println!(
        "--idle-timeout 1: an idle connection closed {closed} (GOAWAY first: {goaway}) after {:.2} s; \
         a SolveBatch stream quiet for {:.2} s answered {:?}",
        idle_for.as_secs_f64(),
        since.elapsed().as_secs_f64(),
        answer.as_ref().map(|m| m.as_ref().map(|m| m.results.len()))
    );
    assert!(closed && goaway, "closed {closed}, GOAWAY {goaway}");
    assert!(
        answer.unwrap().unwrap().results.len() == 1,
        "the busy connection did not answer"
    );
}

#[tokio::test]
async fn a_trickled_body_fails_with_unavailable_and_its_connection_closes() {
    let server = BinaryServer::spawn(&[
        "--request-body-grace-secs",
        "1",
        "--min-request-body-rate",
        "1024",
    ])
    .await;
    let addr = server.addr;
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    let conn = tokio::spawn(conn);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, String>>(1);
    let request = hyper::Request::post(format!("http://{addr}{SOLVE}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(StreamBody::new(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
        .unwrap();
    let since = Instant::now();
    let trickle = tokio::spawn(async move {
        for b in trickled_body() {
            if tx
                .send(Ok(Frame::data(Bytes::from(vec![b]))))
                .await
                .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let response = tokio::time::timeout(Duration::from_secs(10), send.send_request(request))
        .await
        .expect("an answer within 10 s")
        .expect("a response");
    let answered = since.elapsed();
    let status = response
        .headers()
        .get("grpc-status")
        .map(|v| v.to_str().unwrap().to_string());
    let message = response
        .headers()
        .get("grpc-message")
        .map(|v| v.to_str().unwrap().to_string());
    let closed = tokio::time::timeout(Duration::from_secs(5), conn)
        .await
        .is_ok();
    trickle.abort();
    println!(
        "a body a byte every 200 ms (grace 1 s, 1024 bytes/s): answered after {:.2} s with \
         grpc-status {status:?} ({message:?}); connection closed: {closed}",
        answered.as_secs_f64()
    );
    assert_eq!(status.as_deref(), Some("14"), "{message:?}");
    assert!(closed, "the connection stayed open");
    // A normal client is served on a new connection.
    legit_solve(server.url()).await.unwrap();
}
