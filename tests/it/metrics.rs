//! Prometheus metrics on their own address. The recorder is global to a
//! process, so the test runs the `sudoku-server` binary: the other tests in
//! this binary cannot touch its counts.

use std::time::Duration;

use crate::support::solve_request;
use crate::support::{BinaryServer, CLASSIC, free_port};
use sudoku_grpc::pb;

#[tokio::test]
async fn metrics_count_calls_codes_and_puzzles() {
    let metrics_addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let server = BinaryServer::spawn(&["--metrics-listen", &metrics_addr.to_string()]).await;
    let mut client =
        sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient::new(server.channel().await);
    let good = solve_request(CLASSIC);
    for _ in 0..3 {
        client.solve(good.clone()).await.unwrap();
    }
    let bad = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            text: "1".into(),
            cells: vec![],
            ..Default::default()
        }),
        options: None,
    };
    assert!(client.solve(bad).await.is_err());
    let batch = pb::SolveBatchRequest {
        items: (0..5)
            .map(|id| pb::BatchItem {
                id,
                puzzle: good.puzzle.clone(),
            })
            .collect(),
        options: None,
    };
    let mut out = client
        .solve_batch(tokio_stream::iter(vec![batch]))
        .await
        .unwrap()
        .into_inner();
    while out.message().await.unwrap().is_some() {}
    // Refused by the decoder before the handler sees it: counted all the same.
    let oversized = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            text: "1".repeat(2 << 20),
            cells: vec![],
            ..Default::default()
        }),
        options: None,
    };
    let refused = client.solve(oversized).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::OutOfRange);
    // Health checks are calls too.
    tonic_health::pb::health_client::HealthClient::new(server.channel().await)
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await
        .unwrap();
    // The publisher copies the counters twice a second.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text =
        tokio::task::spawn_blocking(move || crate::support::http_get(metrics_addr, "/metrics"))
            .await
            .unwrap()
            .unwrap();
    for line in [
        r#"grpc_server_started_total{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve"} 5"#,
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve",grpc_code="OK"} 3"#,
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve",grpc_code="INVALID_ARGUMENT"} 1"#,
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve",grpc_code="OUT_OF_RANGE"} 1"#,
        r#"grpc_server_handled_total{grpc_service="sudoku.v1.SudokuService",grpc_method="SolveBatch",grpc_code="OK"} 1"#,
        r#"sudoku_puzzles_total{outcome="solved"} 8"#,
        r#"sudoku_puzzles_total{outcome="invalid"} 1"#,
        "sudoku_solving 0",
        "sudoku_streams_open 0",
        "sudoku_batch_messages_total 1",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // The start-up wait polls health too, so only its presence is certain.
    assert!(text.contains(
        r#"grpc_server_handled_total{grpc_service="grpc.health.v1.Health",grpc_method="Check",grpc_code="OK"} "#
    ));
    assert!(text.contains(r#"grpc_server_handling_seconds_bucket{grpc_service="sudoku.v1.SudokuService",grpc_method="Solve""#));
}

/// A rapid-reset attacker draws a warning per connection from the HTTP/2
/// library (GOAWAY ENHANCE_YOUR_CALM). The log gets a few of them; the
/// rest are counted in `sudoku_log_lines_suppressed_total`.
#[tokio::test]
async fn a_rapid_reset_flood_writes_a_few_warnings_and_counts_the_rest() {
    use sudoku_grpc::telemetry::repeats::BURST;
    const CONNECTIONS: usize = 60;
    let metrics_addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut server = BinaryServer::spawn(&["--metrics-listen", &metrics_addr.to_string()]).await;
    let mut goaways = 0;
    for _ in 0..CONNECTIONS {
        let attack = rapid_reset_frames(100);
        let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // All of it in one write, as the attack sends it: the server sees
        // each stream reset before it has accepted it.
        if tcp.write_all(&attack).await.is_err() {
            continue;
        }
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await;
        if goaway_reason(&answer) == Some(0xb) {
            goaways += 1;
        }
    }
    // The server still answers.
    let mut client =
        sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient::new(server.channel().await);
    client.solve(solve_request(CLASSIC)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let text =
        tokio::task::spawn_blocking(move || crate::support::http_get(metrics_addr, "/metrics"))
            .await
            .unwrap()
            .unwrap();
    let suppressed: u64 = text
        .lines()
        .filter(|l| l.starts_with("sudoku_log_lines_suppressed_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum();
    server.sigterm();
    server.wait_exit(Duration::from_secs(15)).await;
    let logs = server.logs();
    let warnings = logs.lines().filter(|l| l.contains("reached limit")).count();
    println!(
        "rapid reset: {goaways} GOAWAYs of {CONNECTIONS} connections, {warnings} warning lines, {suppressed} suppressed"
    );
    assert!(
        warnings >= 1 && warnings <= BURST as usize,
        "{warnings} warning lines:\n{logs}"
    );
    assert!(
        goaways >= CONNECTIONS / 2,
        "the server told most attackers to calm down: {goaways} of {CONNECTIONS}"
    );
    assert!(
        suppressed as usize + warnings >= goaways,
        "most attackers drew a warning, written or counted: {suppressed} suppressed, {warnings} written"
    );
}

/// An HTTP/2 client preface and SETTINGS, then `streams` Solve requests,
/// each reset (CANCEL) right after its HEADERS.
fn rapid_reset_frames(streams: u32) -> Vec<u8> {
    fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
        out.extend_from_slice(&[kind, flags]);
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
    }
    // HPACK: :method POST (static 3), :scheme http (static 6), then
    // literals without indexing for :path (name 4), content-type (name 31)
    // and te.
    let path = b"/sudoku.v1.SudokuService/Solve";
    let mut block = vec![0x83, 0x86, 0x04, path.len() as u8];
    block.extend_from_slice(path);
    block.extend_from_slice(&[0x0f, 0x10, 16]);
    block.extend_from_slice(b"application/grpc");
    block.extend_from_slice(&[0x00, 2]);
    block.extend_from_slice(b"te");
    block.push(8);
    block.extend_from_slice(b"trailers");
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    frame(&mut out, 0x4, 0, 0, &[]);
    for i in 0..streams {
        let id = 2 * i + 1;
        frame(&mut out, 0x1, 0x4, id, &block);
        frame(&mut out, 0x3, 0, id, &8u32.to_be_bytes());
    }
    out
}

/// The error code of the first GOAWAY frame in `bytes` from the server.
fn goaway_reason(bytes: &[u8]) -> Option<u32> {
    let mut at = 0;
    while at + 9 <= bytes.len() {
        let len = u32::from_be_bytes([0, bytes[at], bytes[at + 1], bytes[at + 2]]) as usize;
        let kind = bytes[at + 3];
        let payload = bytes.get(at + 9..at + 9 + len)?;
        if kind == 0x7 && payload.len() >= 8 {
            return Some(u32::from_be_bytes([
                payload[4], payload[5], payload[6], payload[7],
            ]));
        }
        at += 9 + len;
    }
    None
}
