//! Connections that never speak, or speak too slowly: the handshake and
//! header deadlines, the connection cap under an open-file limit, the
//! metrics port's own timeouts, and the listen backlog. Each runs the
//! `sudoku-server` binary and drives it with raw sockets on 127.0.0.1,
//! printing what it measured (`--nocapture` shows it).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures::future::join_all;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::support::solve_request;
use crate::support::{
    BinaryServer, CLASSIC, CLASSIC_SOLVED, TestServer, free_port, sample, scrape,
};
use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;

/// The HTTP/2 client preface.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// One HTTP/2 frame.
fn frame(frame_type: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_be_bytes();
    let mut f = vec![len[1], len[2], len[3], frame_type, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// The preface and an empty SETTINGS frame: a finished client handshake.
fn handshake() -> Vec<u8> {
    let mut h = PREFACE.to_vec();
    h.extend(frame(0x4, 0, 0, &[]));
    h
}

/// `n` connections to `addr`, opened at once.
async fn open_many(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    join_all((0..n).map(|_| TcpStream::connect(addr)))
        .await
        .into_iter()
        .map(|c| c.expect("connect to the server"))
        .collect()
}

/// How long after `since` the server closed `stream` (end of stream or
/// reset), reading and dropping what it sends meanwhile; `None` if it was
/// still open `limit` after `since`.
async fn closed_after(
    mut stream: impl tokio::io::AsyncRead + Unpin,
    since: Instant,
    limit: Duration,
) -> Option<Duration> {
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

/// A health check and a Solve on a new connection, each within 5 s.
async fn serves_a_new_client(url: &str) -> Result<(), String> {
    let within = Duration::from_secs(5);
    let channel = tonic::transport::Channel::from_shared(url.to_string())
        .map_err(|e| e.to_string())?
        .connect_timeout(within)
        .timeout(within)
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))?;
    HealthClient::new(channel.clone())
        .check(HealthCheckRequest::default())
        .await
        .map_err(|e| format!("health check: {e}"))?;
    let solved = SudokuServiceClient::new(channel)
        .solve(solve_request(CLASSIC))
        .await
        .map_err(|e| format!("solve: {e}"))?
        .into_inner();
    match solved.solution.and_then(|s| s.grid) {
        Some(grid) if grid.text == CLASSIC_SOLVED => Ok(()),
        other => Err(format!("unexpected answer {other:?}")),
    }
}

/// Seconds with two decimals, for the printed figures.
fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

#[tokio::test]
async fn silent_half_and_trickling_connections_are_closed_while_clients_are_served() {
    crate::support::raise_fd_limit();
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    // A cap high enough that no connection is displaced: every close below
    // is a deadline's.
    let server = BinaryServer::spawn(&[
        "--handshake-timeout-ms",
        "1000",
        "--header-read-timeout-ms",
        "1000",
        "--max-connections",
        "4096",
        "--max-connections-per-peer",
        "4096",
        "--metrics-listen",
        &metrics_addr.to_string(),
    ])
    .await;
    let addr = server.addr;
    let opened = Instant::now();
    let silent = open_many(addr, 300).await;
    let silent: Vec<_> = silent
        .into_iter()
        .map(|s| tokio::spawn(closed_after(s, opened, Duration::from_secs(6))))
        .collect();

    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(&PREFACE[..12]).await.unwrap();
    let half_opened = Instant::now();
    let half = tokio::spawn(closed_after(half, half_opened, Duration::from_secs(6)));

    // A full handshake, then a header block a byte every 100 ms: 73 bytes
    // would take 7.3 s.
    let trickle = tokio::spawn(async move {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut read, mut write) = stream.into_split();
        write.write_all(&handshake()).await.unwrap();
        let started = Instant::now();
        let writer = tokio::spawn(async move {
            let block = frame(0x1, 0x4 | 0x1, 1, &[0x82; 64]);
            for b in block {
                if write.write_all(&[b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let mut sink = [0u8; 1024];
        let closed = loop {
            match tokio::time::timeout(Duration::from_secs(8), read.read(&mut sink)).await {
                Err(_) => break None,
                Ok(Ok(0)) | Ok(Err(_)) => break Some(started.elapsed()),
                Ok(Ok(_)) => {}
            }
        };
        writer.abort();
        closed
    });

    // While all of them are held, a new client is served.
    serves_a_new_client(&server.url())
        .await
        .expect("a client is served while silent connections are held");
    let served_after = opened.elapsed();

    let closes: Vec<Option<Duration>> = join_all(silent)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let closed: Vec<Duration> = closes.iter().flatten().copied().collect();
    let first = closed.iter().min().copied().unwrap_or_default();
    let last = closed.iter().max().copied().unwrap_or_default();
    println!(
        "silent: {} of {} closed, the first after {}, the last after {} (handshake timeout 1 s); \
         a new client was served {} after they connected",
        closed.len(),
        closes.len(),
        secs(first),
        secs(last),
        secs(served_after),
    );
    let half = half.await.unwrap();
    println!("half a preface: closed after {:?}", half.map(secs));
    let trickle = trickle.await.unwrap();
    println!(
        "headers a byte every 100 ms: closed {:?} after the first byte (header-read timeout 1 s)",
        trickle.map(secs)
    );
    // And once they are gone, as well.
    serves_a_new_client(&server.url())
        .await
        .expect("a client is served after the silent connections were closed");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text = scrape(metrics_addr).await;
    for reason in ["handshake_timeout", "header_timeout", "evicted"] {
        let name = format!("sudoku_connections_closed_total{{reason=\"{reason}\"}}");
        println!("{name} {:?}", sample(&text, &name));
    }

    assert_eq!(closed.len(), 300, "silent connections still open after 6 s");
    assert!(
        last <= Duration::from_secs(3),
        "the last closed after {last:?}"
    );
    assert!(
        first >= Duration::from_millis(900),
        "closed before the handshake deadline: {first:?}"
    );
    let half = half.expect("half a preface still open after 6 s");
    assert!(half <= Duration::from_secs(3), "half a preface: {half:?}");
    let trickle = trickle.expect("a trickled header block still open after 8 s");
    assert!(
        trickle <= Duration::from_secs(3),
        "trickled headers: {trickle:?}"
    );
    assert!(
        sample(
            &text,
            r#"sudoku_connections_closed_total{reason="handshake_timeout"}"#
        ) >= Some(301.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"sudoku_connections_closed_total{reason="header_timeout"}"#
        ),
        Some(1.0)
    );
}

#[tokio::test]
async fn the_tls_handshake_and_the_preface_after_it_share_the_handshake_deadline() {
    use std::sync::Arc;
    use tokio_rustls::rustls;
    let dir = std::env::temp_dir().join(format!("sudoku-conn-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let server = TestServer::start_with(
        |c| {
            c.tls_cert = Some(cert);
            c.tls_key = Some(key);
            c.handshake_timeout_ms = 1000;
        },
        |s| s,
    )
    .await;
    let limit = Duration::from_secs(6);

    // No ClientHello at all.
    let since = Instant::now();
    let silent = TcpStream::connect(server.addr).await.unwrap();
    let silent = tokio::spawn(closed_after(silent, since, limit));

    // TLS, then no HTTP/2 preface.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certified.cert.der().clone()).unwrap();
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let since = Instant::now();
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
        .connect(
            rustls_pki_types::ServerName::try_from("localhost").unwrap(),
            tcp,
        )
        .await
        .expect("the TLS handshake");
    let tls_done = since.elapsed();
    let quiet = closed_after(stream, since, limit).await;
    let silent = silent.await.unwrap();
    println!(
        "TLS port (handshake timeout 1 s): no ClientHello closed after {:?}; TLS done after {} \
         and then no preface closed after {:?} from connect",
        silent.map(secs),
        secs(tls_done),
        quiet.map(secs)
    );
    let silent = silent.expect("a silent TLS connection still open after 6 s");
    assert!(silent <= Duration::from_secs(3), "{silent:?}");
    let quiet = quiet.expect("a TLS connection without a preface still open after 6 s");
    assert!(quiet <= Duration::from_secs(3), "{quiet:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_client_idle_between_calls_is_not_cut_by_the_header_timeout() {
    let server = BinaryServer::spawn(&[
        "--handshake-timeout-ms",
        "1000",
        "--header-read-timeout-ms",
        "1000",
    ])
    .await;
    // A raw connection that finishes its handshake and then says nothing.
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    raw.write_all(&handshake()).await.unwrap();
    let mut head = [0u8; 9];
    raw.read_exact(&mut head).await.unwrap();
    assert_eq!(head[3], 0x4, "the server's first frame is SETTINGS");
    let mut settings = vec![0u8; u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize];
    raw.read_exact(&mut settings).await.unwrap();
    raw.write_all(&frame(0x4, 0x1, 0, &[])).await.unwrap();

    // A tonic client idle between two calls on one channel.
    let mut client = SudokuServiceClient::new(server.channel().await);
    client.solve(solve_request(CLASSIC)).await.unwrap();

    let idle = Duration::from_millis(3000);
    let mut sink = [0u8; 256];
    let quiet_until = tokio::time::Instant::now() + idle;
    loop {
        match tokio::time::timeout_at(quiet_until, raw.read(&mut sink)).await {
            Err(_) => break,
            Ok(Ok(0)) | Ok(Err(_)) => panic!("an idle connection was closed"),
            // The ACK of our SETTINGS, and the like.
            Ok(Ok(_)) => {}
        }
    }
    // Still served: a PING is answered.
    let ping = frame(0x6, 0, 0, b"stillhr!");
    raw.write_all(&ping).await.unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(3), async {
        let mut seen = Vec::new();
        loop {
            let n = raw.read(&mut sink).await.unwrap();
            assert!(n > 0, "closed instead of answering a PING");
            seen.extend_from_slice(&sink[..n]);
            if seen.windows(8).any(|w| w == b"stillhr!") {
                return;
            }
        }
    })
    .await;
    assert!(answered.is_ok(), "no PING answer after idling");
    client.solve(solve_request(CLASSIC)).await.unwrap();
    println!(
        "a connection idle {} after its handshake (header-read timeout 1 s) stayed open and answered a PING",
        secs(idle)
    );
}

#[tokio::test]
async fn silent_connections_never_lock_clients_out_under_an_fd_limit_of_256() {
    crate::support::raise_fd_limit();
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut server = BinaryServer::spawn_with_prefix(
        &["sh", "-c", "ulimit -n 256 && exec \"$@\"", "sh"],
        &["--metrics-listen", &metrics_addr.to_string()],
    )
    .await;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).unwrap();
    let nofile = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .to_string();
    assert!(
        nofile.split_whitespace().nth(3) == Some("256"),
        "the server runs without the limit: {nofile}"
    );
    // More silent connections than descriptors, held by this process with
    // the default (10 s) handshake timeout: only the cap makes room.
    let started = Instant::now();
    let silent = open_many(server.addr, 400).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    serves_a_new_client(&server.url())
        .await
        .expect("a new client is served while 400 silent connections are held");
    let served_after = started.elapsed();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text = scrape(metrics_addr).await;
    let open = sample(&text, "sudoku_connections_open");
    let evicted = sample(
        &text,
        r#"sudoku_connections_closed_total{reason="evicted"}"#,
    );
    let refused = sample(&text, "sudoku_connections_refused_total");
    println!(
        "fd limit 256: 400 silent connections held, a new client served (health and Solve) {} \
         after they connected; the server holds {open:?} connections, closed {evicted:?} to \
         make room and refused {refused:?}",
        secs(served_after)
    );
    assert!(
        served_after < Duration::from_secs(9),
        "served only after {served_after:?}: the handshake timeout, not the cap, made room"
    );
    drop(silent);
    server.sigterm();
    server.wait_exit(Duration::from_secs(15)).await;
    let logs = server.logs();
    assert!(
        !logs.contains("Too many open files") && !logs.contains("accept failed"),
        "accept ran out of descriptors:\n{logs}"
    );
    assert!(evicted >= Some(400.0 - 192.0), "{text}");
    // Room was made by closing silent connections, never by refusing new ones.
    assert_eq!(refused, Some(0.0), "{text}");
}

/// A connection to `addr` from the loopback address `from`, as another
/// machine's would be.
async fn connect_from(from: std::net::Ipv4Addr, addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    socket.connect(addr).await.expect("connect to the server")
}

/// A SolveBatch call held open on a connection of its own from `from`,
/// sending no message; the task ends when the server closes it.
async fn hold_a_stream(from: std::net::Ipv4Addr, addr: SocketAddr) -> tokio::task::JoinHandle<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let tcp = connect_from(from, addr).await;
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel::<
        Result<hyper::body::Frame<hyper::body::Bytes>, std::convert::Infallible>,
    >(1);
    let request = hyper::Request::post(format!("http://{addr}/sudoku.v1.SudokuService/SolveBatch"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(http_body_util::StreamBody::new(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
        .unwrap();
    let answer = send.send_request(request);
    tokio::spawn(async move {
        let _held = (tx, send);
        let _ = tokio::join!(answer, conn);
    })
}

#[tokio::test]
async fn at_the_cap_with_every_peer_holding_one_busy_connection_a_new_one_is_refused_at_once() {
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let server = BinaryServer::spawn(&[
        "--max-connections",
        "16",
        "--metrics-listen",
        &metrics_addr.to_string(),
    ])
    .await;
    // Give the health check of spawn() time to close its connection.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Sixteen peers, one call open each: no connection is idle and no
    // peer holds more than one, so none can make room.
    let mut held = Vec::new();
    for n in 0..16u8 {
        held.push(hold_a_stream(std::net::Ipv4Addr::new(127, 0, 1, n + 1), server.addr).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let since = Instant::now();
    let call = tokio::time::timeout(Duration::from_secs(5), async {
        let channel = tonic::transport::Channel::from_shared(server.url())
            .unwrap()
            .connect_lazy();
        SudokuServiceClient::new(channel)
            .solve(solve_request(CLASSIC))
            .await
    })
    .await
    .expect("the refused call did not fail within 5 s");
    let failed_after = since.elapsed();
    let code = call.as_ref().map_err(|s| s.code()).err();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text = scrape(metrics_addr).await;
    let refused = sample(&text, "sudoku_connections_refused_total");
    println!(
        "--max-connections 16, 16 peers with a call open each: a new client's Solve failed with \
         {code:?} after {}; sudoku_connections_refused_total {refused:?}",
        secs(failed_after)
    );
    // The GOAWAY reaches the client either before it sends (UNAVAILABLE) or
    // after (hyper hands the unsent request back: CANCELLED "connection
    // closed"). Both say the call was not processed; anything else is wrong.
    let refused_unsent = matches!(&call, Err(s) if s.code() == tonic::Code::Cancelled
        && format!("{s:?}").contains("connection closed"));
    assert!(
        code == Some(tonic::Code::Unavailable) || refused_unsent,
        "{call:?}"
    );
    assert!(refused >= Some(1.0), "{text}");
    assert!(
        held.iter().all(|h| !h.is_finished()),
        "a held stream was closed"
    );
    for h in held {
        h.abort();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    serves_a_new_client(&server.url())
        .await
        .expect("served again once connections closed");
}

#[tokio::test]
async fn at_the_cap_an_idle_connection_makes_room_for_a_new_client() {
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let server = BinaryServer::spawn(&[
        "--max-connections",
        "16",
        "--metrics-listen",
        &metrics_addr.to_string(),
    ])
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Sixteen peers with an established connection each and no call.
    let mut idle = Vec::new();
    for n in 0..16u8 {
        let mut c = connect_from(std::net::Ipv4Addr::new(127, 0, 2, n + 1), server.addr).await;
        c.write_all(&handshake()).await.unwrap();
        idle.push(c);
    }
    // Idle long enough to count as idle (a second).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    serves_a_new_client(&server.url())
        .await
        .expect("a new client is served at the cap");
    let since = Instant::now();
    let closes = join_all(
        idle.into_iter()
            .map(|c| closed_after(c, since, Duration::from_secs(2))),
    )
    .await;
    let closed = closes.iter().flatten().count();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text = scrape(metrics_addr).await;
    let evicted = sample(
        &text,
        r#"sudoku_connections_closed_total{reason="evicted"}"#,
    );
    let refused = sample(&text, "sudoku_connections_refused_total");
    println!(
        "--max-connections 16, 16 idle peers: a new client served; {closed} idle connections \
         closed to make room, evicted {evicted:?}, refused {refused:?}"
    );
    assert!(closed >= 1, "no idle connection made room");
    assert!(evicted >= Some(1.0), "{text}");
    assert_eq!(refused, Some(0.0), "{text}");
}

/// Reads one HTTP/1.1 response with a Content-Length body; its head.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before a response: {got:?}");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= len {
                return head.to_string();
            }
        }
    }
}

#[tokio::test]
async fn the_metrics_port_closes_unfinished_requests_and_idle_connections() {
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut server = BinaryServer::spawn(&[
        "--header-read-timeout-ms",
        "1000",
        "--metrics-listen",
        &metrics_addr.to_string(),
    ])
    .await;
    let limit = Duration::from_secs(6);

    let mut unfinished = TcpStream::connect(metrics_addr).await.unwrap();
    unfinished
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let since = Instant::now();
    let unfinished = tokio::spawn(closed_after(unfinished, since, limit));

    let mut post = TcpStream::connect(metrics_addr).await.unwrap();
    post.write_all(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        .await
        .unwrap();
    let head = read_response(&mut post).await;
    assert!(head.starts_with("HTTP/1.1 405"), "{head}");

    let mut idle = TcpStream::connect(metrics_addr).await.unwrap();
    idle.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let head = read_response(&mut idle).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let since_answer = Instant::now();
    let idle = closed_after(idle, since_answer, limit).await;

    let unfinished = unfinished.await.unwrap();
    println!(
        "metrics port (header-read timeout 1 s): an unfinished request head closed after {:?}, \
         a keep-alive connection idle after its answer closed after {:?}",
        unfinished.map(secs),
        idle.map(secs)
    );
    let unfinished = unfinished.expect("an unfinished request still open after 6 s");
    assert!(unfinished <= Duration::from_secs(3), "{unfinished:?}");
    let idle = idle.expect("an idle keep-alive connection still open after 6 s");
    assert!(idle <= Duration::from_secs(3), "{idle:?}");

    server.sigterm();
    server.wait_exit(Duration::from_secs(15)).await;
    let logs = server.logs();
    assert!(
        !logs.contains("WARN"),
        "warnings for the metrics port:\n{logs}"
    );
}

#[tokio::test]
async fn the_metrics_port_closes_connections_past_its_cap_at_once() {
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    // The default header-read timeout, 10 s: a close within 2 s is the cap's.
    let _server = BinaryServer::spawn(&["--metrics-listen", &metrics_addr.to_string()]).await;
    let held = open_many(metrics_addr, 16).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let since = Instant::now();
    let extra = TcpStream::connect(metrics_addr).await.unwrap();
    let closed = closed_after(extra, since, Duration::from_secs(2)).await;
    println!(
        "metrics port: with 16 connections held a 17th closed after {:?}",
        closed.map(secs)
    );
    assert!(closed.is_some(), "a 17th connection was held");
    drop(held);
    // Room again once they are gone.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let text = scrape(metrics_addr).await;
    assert!(text.contains("sudoku_connections_open"), "{text}");
}

/// The slowest of `n` connects to `addr` made at once, and how many took a
/// second or more (a SYN retransmit).
async fn burst_of_connects(addr: SocketAddr, n: usize) -> (Duration, usize) {
    let started = Instant::now();
    let times = join_all((0..n).map(|_| async move {
        let s = TcpStream::connect(addr).await.expect("connect");
        (s, started.elapsed())
    }))
    .await;
    let slowest = times.iter().map(|(_, t)| *t).max().unwrap_or_default();
    let retried = times
        .iter()
        .filter(|(_, t)| *t >= Duration::from_secs(1))
        .count();
    (slowest, retried)
}

#[tokio::test]
async fn a_thousand_simultaneous_connects_are_all_accepted_within_a_second() {
    crate::support::raise_fd_limit();
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    // For comparison, tokio's fixed backlog.
    let small = BinaryServer::spawn(&["--listen-backlog", "128"]).await;
    let (small_slowest, small_retried) = burst_of_connects(small.addr, 1000).await;
    drop(small);
    let server = BinaryServer::spawn(&[]).await;
    let (slowest, retried) = burst_of_connects(server.addr, 1000).await;
    println!(
        "1000 connects at once (net.core.somaxconn {somaxconn:?}): backlog 128: slowest {}, \
         {small_retried} took 1 s or more; backlog 1024 (default): slowest {}, {retried} took 1 s or more",
        secs(small_slowest),
        secs(slowest),
    );
    if somaxconn.is_some_and(|m| m < 1024) {
        crate::support::skip(
            "a_thousand_simultaneous_connects_are_all_accepted_within_a_second",
            "net.core.somaxconn caps the backlog below 1024",
        );
        return;
    }
    assert_eq!(retried, 0, "slowest connect {slowest:?}");
    serves_a_new_client(&server.url()).await.unwrap();
}
