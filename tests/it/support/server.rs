//! Real servers on 127.0.0.1 for the tests: in this process ([`TestServer`])
//! or as the `sudoku-server` binary ([`BinaryServer`]), and clients for them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient;
use sudoku_grpc::server::{Config, Prepared};
use sudoku_grpc::service::Sudoku;
use sudoku_grpc::telemetry::metrics::Gauges;
use tokio::sync::oneshot;
use tonic::transport::Channel;

/// The real server in this process, on an ephemeral 127.0.0.1 port. It runs
/// on the test's runtime ([`TestServer::start`]), or on a runtime of its own
/// ([`TestServer::start_detached`]) for plain `#[test]`s that drive other
/// programs against it. Dropping it stops it.
pub struct TestServer {
    pub addr: SocketAddr,
    pub gauges: Arc<Gauges>,
    stop: Option<oneshot::Sender<()>>,
    /// The server's task: ends when the drain ends.
    pub done: tokio::task::JoinHandle<Result<(), sudoku_grpc::StartError>>,
    /// The runtime of a detached server.
    runtime: Option<tokio::runtime::Runtime>,
}

impl TestServer {
    /// Starts a server with default settings on the test's runtime.
    pub async fn start() -> TestServer {
        Self::start_with(|_| {}, |s| s).await
    }

    /// Starts a server on the test's runtime after `tweak` adjusts its
    /// config and `hook` its service.
    pub async fn start_with(
        tweak: impl FnOnce(&mut Config),
        hook: impl FnOnce(Sudoku) -> Sudoku,
    ) -> TestServer {
        let mut config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..Config::default()
        };
        tweak(&mut config);
        launch(config, hook).await
    }

    /// Starts a server with two solver threads and a 2 s drain on a runtime
    /// of its own, for tests that are not async.
    pub fn start_detached() -> TestServer {
        Self::start_detached_with(|_| {})
    }

    /// [`TestServer::start_detached`] after `tweak` adjusts the config.
    pub fn start_detached_with(tweak: impl FnOnce(&mut Config)) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let mut config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            workers: 2,
            drain_timeout_ms: 2_000,
            ..Config::default()
        };
        tweak(&mut config);
        let mut server = runtime.block_on(launch(config, |s| s));
        server.runtime = Some(runtime);
        server
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `127.0.0.1:PORT`, for a client's command line.
    pub fn target(&self) -> String {
        self.addr.to_string()
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

impl Drop for TestServer {
    fn drop(&mut self) {
        self.signal_stop();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(3));
        }
    }
}

/// Binds 127.0.0.1:0 and serves `config` there until the server is stopped.
async fn launch(config: Config, hook: impl FnOnce(Sudoku) -> Sudoku) -> TestServer {
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
        runtime: None,
    }
}

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
        Self::spawn_with_prefix(&[], args).await
    }

    /// [`BinaryServer::spawn`], the binary started by the program
    /// `prefix` names (with its arguments), which must `exec` it with the
    /// arguments that follow: `&["sh", "-c", "ulimit -n 256 && exec \"$@\"", "sh"]`
    /// runs it under an open-file limit of 256.
    pub async fn spawn_with_prefix(prefix: &[&str], args: &[&str]) -> BinaryServer {
        Self::launch(prefix, &[], args).await
    }

    /// [`BinaryServer::spawn`] with the environment variables `env` set.
    pub async fn spawn_with_env(env: &[(&str, &str)], args: &[&str]) -> BinaryServer {
        Self::launch(&[], env, args).await
    }

    async fn launch(prefix: &[&str], env: &[(&str, &str)], args: &[&str]) -> BinaryServer {
        use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
        let addr = SocketAddr::from(([127, 0, 0, 1], super::free_port()));
        let binary = server_binary();
        let mut command = match prefix.split_first() {
            None => std::process::Command::new(binary),
            Some((program, rest)) => {
                let mut c = std::process::Command::new(program);
                c.args(rest).arg(binary);
                c
            }
        };
        let child = command
            .arg("--listen")
            .arg(addr.to_string())
            .args(args)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
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

/// The `sudoku-server` a [`BinaryServer`] runs: this build's, or the one
/// `SUDOKU_TEST_SERVER` names, so that the attack tests can measure another
/// build (a release one, or an older one for a before-and-after figure).
fn server_binary() -> String {
    std::env::var("SUDOKU_TEST_SERVER")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_sudoku-server").to_string())
}

/// A new HTTP/2 connection to `url` with tonic's default settings.
pub async fn connect(url: &str) -> Channel {
    Channel::from_shared(url.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap()
}
