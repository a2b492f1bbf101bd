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
        let prepared = Prepared::with_listener(config, listener)
            .expect("the server starts")
            .map_service(hook);
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
        connect(&self.url()).await
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

/// A near-empty grid (12 givens) with no solution, where the search finds
/// the contradiction only after about 1.55 million nodes (0.34 s on the
/// development machine; 2.76 million before the search learned to branch
/// on the bivalue cell with most unsolved peers): found by a random search
/// over few-given grids.
pub const DEEP_CONTRADICTION: &str =
    "......3.......2...........4...5..83....83.5..7..........1.........4..............";

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

/// A port that was free a moment ago, for a server process to bind.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The real `sudoku-server` binary on 127.0.0.1, as an orchestrator runs
/// it: flags, SIGTERM, exit code. Killed on drop if still running.
pub struct BinaryServer {
    pub addr: SocketAddr,
    child: std::process::Child,
}

impl BinaryServer {
    /// Starts `sudoku-server` with `args` (plus `--listen`), logging at
    /// `warn` to a pipe, and waits until it answers health checks.
    pub async fn spawn(args: &[&str]) -> BinaryServer {
        use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_sudoku-server"))
            .arg("--listen")
            .arg(addr.to_string())
            .args(args)
            .env("RUST_LOG", "warn")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let server = BinaryServer { addr, child };
        let started = std::time::Instant::now();
        loop {
            if let Ok(channel) = Channel::from_shared(server.url()).unwrap().connect().await {
                let check = HealthClient::new(channel)
                    .check(HealthCheckRequest::default())
                    .await;
                if check.is_ok() {
                    return server;
                }
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "sudoku-server did not answer health checks"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A new HTTP/2 connection with tonic's default settings.
    pub async fn channel(&self) -> Channel {
        connect(&self.url()).await
    }

    /// A `/proc/PID/status` figure in kB, such as `VmRSS` or `VmHWM`.
    pub fn status_kb(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in /proc/PID/status"))
    }

    /// Sends SIGTERM, as an orchestrator stopping the instance does.
    pub fn sigterm(&self) {
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }

    /// Waits up to `limit` for the process to exit; its status, or `None`.
    pub async fn wait_exit(
        &mut self,
        limit: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if started.elapsed() > limit {
                return None;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// What the process wrote to stderr; call after it exited.
    pub fn logs(&mut self) -> String {
        let mut logs = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut logs);
        }
        logs
    }
}

impl Drop for BinaryServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A new HTTP/2 connection to `url` with tonic's default settings.
pub async fn connect(url: &str) -> Channel {
    Channel::from_shared(url.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap()
}
