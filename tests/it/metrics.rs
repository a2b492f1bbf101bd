//! Prometheus metrics on their own address. The recorder is global to a
//! process, so the test runs the `sudoku-server` binary: the other tests in
//! this binary cannot touch its counts.

use std::time::Duration;

use crate::support::{BinaryServer, CLASSIC, free_port};
use sudoku_grpc::pb;

#[tokio::test]
async fn metrics_count_calls_codes_and_puzzles() {
    let metrics_addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let server = BinaryServer::spawn(&["--metrics-listen", &metrics_addr.to_string()]).await;
    let mut client =
        sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient::new(server.channel().await);
    let good = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            text: CLASSIC.into(),
            cells: vec![],
        }),
        options: None,
    };
    for _ in 0..3 {
        client.solve(good.clone()).await.unwrap();
    }
    let bad = pb::SolveRequest {
        puzzle: Some(pb::Grid {
            text: "1".into(),
            cells: vec![],
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
    // The publisher copies the counters twice a second.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text =
        tokio::task::spawn_blocking(move || crate::support::http_get(metrics_addr, "/metrics"))
            .await
            .unwrap()
            .unwrap();
    for line in [
        r#"grpc_server_handled_total{grpc_method="Solve",grpc_code="OK"} 3"#,
        r#"grpc_server_handled_total{grpc_method="Solve",grpc_code="INVALID_ARGUMENT"} 1"#,
        r#"grpc_server_handled_total{grpc_method="SolveBatch",grpc_code="OK"} 1"#,
        r#"sudoku_puzzles_total{outcome="solved"} 8"#,
        r#"sudoku_puzzles_total{outcome="invalid"} 1"#,
        "sudoku_solving 0",
        "sudoku_streams_open 0",
        "sudoku_batch_messages_total 1",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(text.contains(r#"grpc_server_handling_seconds_bucket{grpc_method="Solve""#));
}
