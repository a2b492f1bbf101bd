//! Server settings: every one can be set by flag or by environment variable,
//! and each has a default, so `sudoku-server` with no arguments just runs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::service::Limits;
pub use crate::telemetry::LogFormat;

/// Whether the solver threads are pinned to cores (`--pin-solvers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PinSolvers {
    /// One a core when they are as many as the cores the process may use.
    Auto,
    /// Placed by the kernel.
    Off,
}

/// Settings of `sudoku-server`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "sudoku-server",
    version,
    about = "gRPC server that solves Sudoku (sudoku.v1.SudokuService, health, reflection)",
    after_help = "Log levels come from RUST_LOG (default: info), e.g. RUST_LOG=sudoku_grpc=debug."
)]
pub struct Config {
    /// Address to listen on: gRPC over HTTP/2 (plaintext h2c), and
    /// gRPC-Web over HTTP/1.1 or HTTP/2, on the same port.
    #[arg(long, env = "SUDOKU_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// PEM certificate chain for TLS; with --tls-key, the server speaks TLS
    /// (HTTP/2 over TLS, ALPN h2) instead of plaintext h2c.
    #[arg(long, env = "SUDOKU_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(long, env = "SUDOKU_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// PEM CA certificates: when set, clients must present a certificate
    /// signed by one of them (mutual TLS).
    #[arg(long, env = "SUDOKU_TLS_CLIENT_CA", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,

    /// An origin whose pages may call the service through gRPC-Web, as a
    /// browser writes it (`https://app.example.com`, `http://localhost:8080`):
    /// repeat the flag or separate origins with commas. None by default: no
    /// CORS headers are sent, so browsers refuse calls from pages on other
    /// origins.
    #[arg(long = "cors-origin", env = "SUDOKU_CORS_ORIGIN", value_delimiter = ',',
          value_parser = parse_origin)]
    pub cors_origins: Vec<String>,

    /// Do not serve the web page (GET / and its two assets, built from
    /// web/ into the binary) on the gRPC port: every request then goes to
    /// gRPC-Web and gRPC.
    #[arg(long, env = "SUDOKU_NO_WEB_PAGE")]
    pub no_web_page: bool,

    /// Address to serve Prometheus metrics on (GET /metrics); off when unset.
    #[arg(long, env = "SUDOKU_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// Log format.
    #[arg(long, env = "SUDOKU_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// OTLP/gRPC endpoint to export traces to (`http://collector:4317`);
    /// off when unset, and then OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
    /// OTEL_EXPORTER_OTLP_ENDPOINT is used if set. OTEL_SERVICE_NAME,
    /// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG are honoured; see
    /// docs/tracing.md.
    #[arg(long, env = "SUDOKU_OTLP_ENDPOINT", value_parser = parse_endpoint)]
    pub otlp_endpoint: Option<String>,

    /// Solver threads, which run batch messages and the searches of unary
    /// calls that outlive their inline budget; the async runtime, which
    /// does the I/O, gets as many threads. 0 = one per core.
    #[arg(long, env = "SUDOKU_WORKERS", default_value_t = 0)]
    pub workers: usize,

    /// Nice value added to the solver threads (0-19; 0 keeps the process's
    /// priority), so the runtime's threads get a core at once when a call
    /// arrives while every core is solving. In a container it ranks only
    /// the server's own threads; on a host shared with other busy
    /// processes it also yields to them.
    #[arg(long, env = "SUDOKU_SOLVER_NICE", default_value_t = 19,
          value_parser = clap::value_parser!(i32).range(0..=19))]
    pub solver_nice: i32,

    /// Pin each solver thread to a core of its own: `auto` does when the
    /// solver threads are as many as the cores the process may run on (its
    /// CPU affinity, as a cpuset gives it), `off` leaves them to the
    /// kernel. Unpinned, threads woken together when work arrives were
    /// often queued on one core while another stayed idle for a scheduler
    /// tick. Pinned, a thread whose core is busy with another process
    /// waits for it, so `off` suits a host shared with busy processes.
    #[arg(long, env = "SUDOKU_PIN_SOLVERS", value_enum, default_value = "auto")]
    pub pin_solvers: PinSolvers,

    /// Search nodes a unary call solves at once on the thread that read
    /// it; most puzzles need fewer, and the rest of a longer search runs on
    /// a solver thread.
    #[arg(long, env = "SUDOKU_INLINE_NODES", default_value_t = 20)]
    pub inline_nodes: u64,

    /// Work budget per puzzle, in search nodes: past it the answer is
    /// OUTCOME_WORK_LIMIT_REACHED. Bounds the work of calls that set no deadline.
    #[arg(long, env = "SUDOKU_MAX_NODES", default_value_t = 5_000_000)]
    pub max_nodes: u64,

    /// Work bound of a call that sets no deadline, in seconds: such a call
    /// (a SolveBatch stream excepted, which the client feeds message by
    /// message) gets this deadline, and past it ends DEADLINE_EXCEEDED as
    /// if the client had set it. 0 = none.
    #[arg(long, env = "SUDOKU_MAX_CALL_SECONDS", default_value_t = 60)]
    pub max_call_seconds: u64,

    /// Search nodes solved between checks of the deadline and of the
    /// client leaving; smaller stops sooner, larger is cheaper.
    #[arg(long, env = "SUDOKU_SLICE_NODES", default_value_t = 500)]
    pub slice_nodes: u64,

    /// Unary calls and batch messages being solved at once, server-wide.
    /// Past it, Solve fails fast with RESOURCE_EXHAUSTED and SolveBatch
    /// streams wait (flow control pushes back on their senders).
    #[arg(long, env = "SUDOKU_MAX_IN_FLIGHT", default_value_t = 4_096)]
    pub max_in_flight: usize,

    /// Request messages of one SolveBatch stream being solved at once; more
    /// are not read from the stream until one finishes.
    #[arg(long, env = "SUDOKU_STREAM_WINDOW", default_value_t = 16)]
    pub stream_window: usize,

    /// Items allowed in one SolveBatch request message.
    #[arg(long, env = "SUDOKU_MAX_BATCH_ITEMS", default_value_t = 1_024)]
    pub max_batch_items: usize,

    /// Largest request message accepted, in bytes (after decompression);
    /// a larger one fails the call with OUT_OF_RANGE.
    #[arg(long, env = "SUDOKU_MAX_MESSAGE_BYTES", default_value_t = 1 << 20)]
    pub max_message_bytes: usize,

    /// HTTP/2 streams (calls) allowed at once on one connection.
    #[arg(long, env = "SUDOKU_MAX_CONCURRENT_STREAMS", default_value_t = 256)]
    pub max_concurrent_streams: u32,

    /// Interval between HTTP/2 keepalive pings, in seconds; 0 = off.
    #[arg(long, env = "SUDOKU_KEEPALIVE_INTERVAL_SECS", default_value_t = 60)]
    pub keepalive_interval_secs: u64,

    /// How long to wait for a keepalive ping's answer before closing, in seconds.
    #[arg(long, env = "SUDOKU_KEEPALIVE_TIMEOUT_SECS", default_value_t = 20)]
    pub keepalive_timeout_secs: u64,

    /// Close connections older than this, in seconds (GOAWAY, so clients
    /// rebalance across instances); 0 = never.
    #[arg(long, env = "SUDOKU_MAX_CONNECTION_AGE_SECS", default_value_t = 0)]
    pub max_connection_age_secs: u64,

    /// After max connection age, how long calls in flight may take to finish,
    /// in seconds.
    #[arg(
        long,
        env = "SUDOKU_MAX_CONNECTION_AGE_GRACE_SECS",
        default_value_t = 30
    )]
    pub max_connection_age_grace_secs: u64,

    /// On SIGTERM/SIGINT, how long calls in flight may take to finish before
    /// they are cut and the process exits, in milliseconds.
    #[arg(long, env = "SUDOKU_DRAIN_TIMEOUT_MS", default_value_t = 10_000)]
    pub drain_timeout_ms: u64,

    // Connections that never speak, or speak too slowly: the listen queue,
    // the handshake and header deadlines, and the cap on connections.
    /// Connections the kernel may queue for accept (listen(2)'s backlog;
    /// the kernel caps it at net.core.somaxconn). Past it, new connects
    /// wait for SYN retransmits, a second or more each.
    #[arg(long, env = "SUDOKU_LISTEN_BACKLOG", default_value_t = 1_024,
          value_parser = clap::value_parser!(u32).range(1..=65_535))]
    pub listen_backlog: u32,

    /// How long a new connection may take, from accept, to finish its
    /// handshake (TLS, then the HTTP/2 preface and first SETTINGS frame),
    /// in milliseconds; past it the connection is closed.
    #[arg(long, env = "SUDOKU_HANDSHAKE_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub handshake_timeout_ms: u64,

    /// How long a client may take to send one request's headers (an HTTP/2
    /// header block, from its first byte to END_HEADERS; on the metrics
    /// port, an HTTP/1.1 request head), in milliseconds; past it the
    /// connection is closed.
    #[arg(long, env = "SUDOKU_HEADER_READ_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_ms: u64,

    /// gRPC connections open at once, lowered to what the open-file limit
    /// allows. A quarter of them (at least 16) may be still in their
    /// handshake; past that the oldest such connection is closed to make
    /// room. At the cap, a new connection is refused at once (with a
    /// GOAWAY, REFUSED_STREAM: calls fail with UNAVAILABLE).
    #[arg(long, env = "SUDOKU_MAX_CONNECTIONS", default_value_t = 1_024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,

    // --- Sharing the solver threads between connections ---
    /// How long, in microseconds, a search or batch message runs on a
    /// solver thread while other work waits, before it yields to the next
    /// connection's (connections with work take turns). Smaller lets other
    /// connections in sooner; larger switches less.
    #[arg(long, env = "SUDOKU_QUANTUM_US", default_value_t = 2_000)]
    pub quantum_us: u64,

    // --- Memory a client can pin: HTTP/2 windows and the request budget ---
    /// HTTP/2 receive window of each stream, in bytes: request bytes a
    /// client may send on one call before the server reads them.
    #[arg(long, env = "SUDOKU_HTTP2_STREAM_WINDOW", default_value_t = 64 << 10)]
    pub http2_stream_window: u32,

    /// HTTP/2 receive window of each connection, in bytes: request bytes a
    /// client may send on all its calls together before the server reads
    /// them.
    #[arg(long, env = "SUDOKU_HTTP2_CONNECTION_WINDOW", default_value_t = 1 << 20)]
    pub http2_connection_window: u32,

    /// Response bytes queued per stream for a client that does not read,
    /// beyond what its flow-control window lets through.
    #[arg(long, env = "SUDOKU_HTTP2_SEND_BUFFER", default_value_t = 64 << 10)]
    pub http2_send_buffer: usize,

    /// Request bytes the server holds at once, server-wide: half for
    /// messages being received, half for SolveBatch messages waiting or
    /// being solved (and their responses). Past it, reading requests
    /// waits and HTTP/2 flow control stops the senders.
    #[arg(long, env = "SUDOKU_MAX_BUFFERED_REQUEST_BYTES", default_value_t = 64 << 20)]
    pub max_buffered_request_bytes: usize,

    /// Request bytes one connection may have the server hold at once, in
    /// the same two halves; must be at least 4 x --max-message-bytes (a
    /// compressed message may need its wire size and its decompressed size
    /// in the receive half).
    #[arg(long, env = "SUDOKU_CONNECTION_BUFFER_BYTES", default_value_t = 4 << 20)]
    pub connection_buffer_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        // The defaults are the ones clap documents; parsing no arguments with
        // the environment ignored keeps the two in one place.
        Config::parse_from_defaults()
    }
}

impl Config {
    fn parse_from_defaults() -> Config {
        use clap::{CommandFactory, FromArgMatches};
        let mut cmd = Config::command();
        // Defaults only: strip the environment bindings for this parse.
        let args: Vec<clap::Arg> = cmd.get_arguments().cloned().collect();
        for a in args {
            let id = a.get_id().clone();
            cmd = cmd.mut_arg(id, |a| a.env(None::<&str>));
        }
        let matches = cmd
            .try_get_matches_from(["sudoku-server"])
            .unwrap_or_else(|e| panic!("built-in defaults must parse: {e}"));
        Config::from_arg_matches(&matches)
            .unwrap_or_else(|e| panic!("built-in defaults must parse: {e}"))
    }

    /// The limits the service applies to every call.
    pub fn limits(&self) -> Limits {
        Limits {
            max_nodes: self.max_nodes.max(1),
            max_call: (self.max_call_seconds > 0)
                .then(|| Duration::from_secs(self.max_call_seconds)),
            slice_nodes: self.slice_nodes.max(1),
            max_in_flight: self.max_in_flight.max(1),
            stream_window: self.stream_window.max(1),
            max_batch_items: self.max_batch_items.max(1),
            stream_workers: self.worker_threads(),
            solver_threads: self.worker_threads(),
            solver_nice: self.solver_nice,
            pin_solvers: self.pin_solvers == PinSolvers::Auto,
            inline_nodes: self.inline_nodes,
            quantum: Duration::from_micros(self.quantum_us),
            max_buffered_request_bytes: self.max_buffered_request_bytes,
            connection_buffer_bytes: self.connection_buffer_bytes,
        }
    }

    /// Checks the settings that only make sense together; the error says
    /// which flags to change.
    pub fn validate(&self) -> Result<(), String> {
        // A message is admitted only when the receive half of the
        // connection's share can hold it (and, compressed, its
        // decompressed size too); a smaller share would stall it for good.
        let needed = self.max_message_bytes.saturating_mul(4);
        if self.connection_buffer_bytes < needed {
            return Err(format!(
                "--connection-buffer-bytes ({}) must be at least 4 x --max-message-bytes ({}), \
                 that is {needed}: half of it receives messages, and a compressed message \
                 needs its size and its decompressed size there",
                self.connection_buffer_bytes, self.max_message_bytes
            ));
        }
        if self.max_buffered_request_bytes < self.connection_buffer_bytes {
            return Err(format!(
                "--max-buffered-request-bytes ({}) must be at least --connection-buffer-bytes ({})",
                self.max_buffered_request_bytes, self.connection_buffer_bytes
            ));
        }
        // HTTP/2 caps windows at 2^31 - 1 bytes.
        const MAX_WINDOW: u32 = (1 << 31) - 1;
        if self.http2_stream_window > MAX_WINDOW || self.http2_connection_window > MAX_WINDOW {
            return Err(format!(
                "--http2-stream-window and --http2-connection-window must be at most {MAX_WINDOW}"
            ));
        }
        if self.http2_connection_window < self.http2_stream_window {
            return Err(format!(
                "--http2-connection-window ({}) must be at least --http2-stream-window ({})",
                self.http2_connection_window, self.http2_stream_window
            ));
        }
        Ok(())
    }

    /// Where to export traces: `--otlp-endpoint`, else the standard
    /// OpenTelemetry variables; `None` keeps tracing off.
    pub fn otlp_endpoint(&self) -> Option<String> {
        crate::telemetry::traces::endpoint(self.otlp_endpoint.as_deref())
    }

    /// The drain deadline as a duration.
    pub fn drain_timeout(&self) -> Duration {
        Duration::from_millis(self.drain_timeout_ms)
    }

    /// The handshake deadline as a duration.
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_millis(self.handshake_timeout_ms)
    }

    /// The header-read deadline as a duration.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms)
    }

    /// Threads of the async runtime: as many as solver threads.
    pub fn runtime_threads(&self) -> usize {
        self.worker_threads()
    }

    /// Solver threads, resolving 0 to the number of cores.
    pub fn worker_threads(&self) -> usize {
        if self.workers > 0 {
            self.workers
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }
}

/// An OTLP/gRPC endpoint: an http:// URL. The exporter is built without
/// TLS (a collector is usually a sidecar or a node agent), so https:// is
/// refused here rather than at start-up.
fn parse_endpoint(text: &str) -> Result<String, String> {
    let endpoint = text.trim();
    match endpoint.split_once("://") {
        Some(("http", rest)) if !rest.is_empty() => Ok(endpoint.to_string()),
        Some(("https", _)) => Err(format!(
            "{text:?}: the trace exporter speaks plaintext OTLP/gRPC only (http://); \
             export to a local collector and let it forward over TLS"
        )),
        _ => Err(format!(
            "{text:?} is not an OTLP/gRPC endpoint: it must be a URL such as http://127.0.0.1:4317"
        )),
    }
}

/// An origin as `Origin` headers carry it: a scheme (http or https), a
/// host and an optional port, with nothing after them; lowercased, as
/// browsers send it.
fn parse_origin(text: &str) -> Result<String, String> {
    let origin = text.trim().to_ascii_lowercase();
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(|| {
            format!("{text:?} is not an origin: it must start with http:// or https://")
        })?;
    if rest.is_empty() {
        return Err(format!("{text:?} is not an origin: it names no host"));
    }
    if let Some(c) = rest
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')))
    {
        return Err(format!(
            "{text:?} is not an origin: {c:?} cannot appear in one (no path, not even a trailing '/')"
        ));
    }
    Ok(origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_match_the_docs() {
        let c = Config::default();
        assert_eq!(c.listen, "127.0.0.1:50051".parse().unwrap());
        assert_eq!(c.max_batch_items, 1024);
        assert_eq!(c.log_format, LogFormat::Text);
        assert_eq!(c.listen_backlog, 1024);
        assert_eq!(c.handshake_timeout(), Duration::from_secs(10));
        assert_eq!(c.header_read_timeout(), Duration::from_secs(10));
        assert_eq!(c.max_connections, 1024);
        assert!(c.cors_origins.is_empty());
        assert!(!c.no_web_page);
        assert_eq!(c.otlp_endpoint, None);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn solver_threads_are_pinned_unless_turned_off() {
        assert!(Config::default().limits().pin_solvers);
        let c = Config::try_parse_from(["sudoku-server", "--pin-solvers", "off"]).unwrap();
        assert!(!c.limits().pin_solvers);
        assert!(Config::try_parse_from(["sudoku-server", "--pin-solvers", "yes"]).is_err());
    }

    #[test]
    fn the_web_page_is_turned_off_by_flag() {
        let c = Config::try_parse_from(["sudoku-server", "--no-web-page"]).unwrap();
        assert!(c.no_web_page);
    }

    #[test]
    fn the_otlp_endpoint_must_be_a_url() {
        let c = Config::parse_from(["sudoku-server", "--otlp-endpoint", "http://127.0.0.1:4317"]);
        assert_eq!(c.otlp_endpoint.as_deref(), Some("http://127.0.0.1:4317"));
        for bad in [
            "127.0.0.1:4317",
            "http://",
            "grpc://collector:4317",
            "https://collector:4317",
        ] {
            let parsed = Config::try_parse_from(["sudoku-server", "--otlp-endpoint", bad]);
            assert!(parsed.is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn cors_origins_repeat_or_come_as_a_list_and_must_be_origins() {
        let c = Config::parse_from([
            "sudoku-server",
            "--cors-origin",
            "https://App.example.com,http://localhost:8080",
            "--cors-origin=http://[::1]:3000",
        ]);
        assert_eq!(
            c.cors_origins,
            [
                "https://app.example.com",
                "http://localhost:8080",
                "http://[::1]:3000"
            ]
        );
        for bad in [
            "app.example.com",
            "https://a.example/",
            "https://",
            "*",
            "ftp://a",
        ] {
            let parsed = Config::try_parse_from(["sudoku-server", "--cors-origin", bad]);
            assert!(parsed.is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_connection_share_too_small_for_the_message_limit_is_refused() {
        let c = Config::parse_from(["sudoku-server", "--max-message-bytes", "2097152"]);
        let err = c.validate().unwrap_err();
        assert!(err.contains("--connection-buffer-bytes (4194304)"), "{err}");
        assert!(err.contains("8388608"), "{err}");
        let c = Config::parse_from([
            "sudoku-server",
            "--connection-buffer-bytes",
            "1000",
            "--max-message-bytes",
            "250",
            "--max-buffered-request-bytes",
            "999",
        ]);
        assert!(
            c.validate()
                .unwrap_err()
                .contains("--max-buffered-request-bytes")
        );
        let c = Config::parse_from(["sudoku-server", "--http2-connection-window", "1024"]);
        assert!(
            c.validate()
                .unwrap_err()
                .contains("--http2-connection-window")
        );
    }

    #[test]
    fn flags_override_defaults() {
        let c = Config::parse_from(["sudoku-server", "--listen", "0.0.0.0:9", "--max-nodes", "7"]);
        assert_eq!(c.listen.port(), 9);
        assert_eq!(c.max_nodes, 7);
    }

    #[test]
    fn a_call_without_a_deadline_gets_max_call_seconds_and_0_is_none() {
        assert_eq!(
            Config::default().limits().max_call,
            Some(Duration::from_secs(60))
        );
        let c = Config::parse_from(["sudoku-server", "--max-call-seconds", "0"]);
        assert_eq!(c.limits().max_call, None);
    }

    #[test]
    fn quantum_flag_sets_the_solver_turn() {
        assert_eq!(Config::default().limits().quantum, Duration::from_millis(2));
        let c = Config::parse_from(["sudoku-server", "--quantum-us", "500"]);
        assert_eq!(c.limits().quantum, Duration::from_micros(500));
    }
}
