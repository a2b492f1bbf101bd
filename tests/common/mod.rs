//! A real server on 127.0.0.1:0 for integration tests.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use sudoku_grpc::config::Config;
use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;
use sudoku_grpc::server::Prepared;
use sudoku_grpc::service::{Gauges, Sudoku};
use tokio::sync::oneshot;
use tonic::transport::Channel;

/// A running server; dropping it without `stop` leaves it to the runtime.
pub struct TestServer {
    pub addr: SocketAddr,
    pub gauges: Arc<Gauges>,
    stop: Option<oneshot::Sender<()>>,
    pub done: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl TestServer {
    /// Starts a server with default settings.
    pub async fn start() -> TestServer {
        Self::start_with(|_| {}, |s| s).await
    }

    /// Starts a server after `tweak` adjusts its config and `hook` its service.
    pub async fn start_with(
        tweak: impl FnOnce(&mut Config),
        hook: impl FnOnce(Sudoku) -> Sudoku,
    ) -> TestServer {
        let mut config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..Config::default()
        };
        tweak(&mut config);
        let listener = tokio::net::TcpListener::bind(config.listen).await.unwrap();
        let prepared = Prepared::with_listener(config, listener).map_service(hook);
        let addr = prepared.local_addr();
        let gauges = prepared.gauges();
        let (tx, rx) = oneshot::channel::<()>();
        let done = tokio::spawn(prepared.serve(async move {
            let _ = rx.await;
        }));
        TestServer {
            addr,
            gauges,
            stop: Some(tx),
            done,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub async fn client(&self) -> SudokuServiceClient<Channel> {
        SudokuServiceClient::new(self.channel().await)
    }

    /// Sends the shutdown signal (as SIGTERM would).
    pub fn signal_stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// Puzzles of a data set committed in data/, skipping '#' lines.
pub fn data_set(name: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#') && l.len() >= 81)
        .map(|l| l[..81].to_string())
        .collect()
}

pub const CLASSIC: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
pub const CLASSIC_SOLVED: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

/// A client over a bare HTTP/2 connection, without tonic's channel layers:
/// it sends `grpc-timeout` but keeps no timer of its own, so the status a
/// test sees is the one the server sent.
pub fn bare_client(
    addr: SocketAddr,
) -> SudokuServiceClient<
    hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        tonic::body::Body,
    >,
> {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let origin: tonic::codegen::http::Uri = format!("http://{addr}").parse().unwrap();
    SudokuServiceClient::with_origin(client, origin)
}
