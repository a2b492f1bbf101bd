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
    /// One core each, when there is a solving thread per core the server may use.
    Auto,
    /// Left to the operating system.
    Off,
}

// The headings `sudoku-server --help` groups its flags under: each flag
// names its own in an `#[arg(help_heading = ...)]` line (a test checks).
const NETWORK: &str = "Network";
const TLS: &str = "TLS";
const TELEMETRY: &str = "Telemetry";
const SCHEDULING: &str = "Scheduling";
const LIMITS: &str = "Limits";
const CONNECTIONS: &str = "Connections";
const MEMORY: &str = "Memory";

/// Settings of `sudoku-server`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "sudoku-server",
    version,
    about = "gRPC server that solves Sudoku (sudoku.v1.SudokuService, health, reflection)",
    after_help = "Every flag can also be set by the environment variable shown with it. Log levels \
                  come from RUST_LOG (default: info), e.g. RUST_LOG=sudoku_grpc=debug. What clients \
                  see at each limit: README.md, Limits; running the server: docs/operations.md."
)]
pub struct Config {
    /// Address to listen on, for gRPC and gRPC-Web alike (plaintext unless
    /// --tls-cert is set).
    #[arg(help_heading = NETWORK)]
    #[arg(long, env = "SUDOKU_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// PEM certificate chain: with --tls-key, serve over TLS instead of
    /// plaintext. Off by default.
    #[arg(help_heading = TLS)]
    #[arg(long, env = "SUDOKU_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(help_heading = TLS)]
    #[arg(long, env = "SUDOKU_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// PEM CA certificates: clients must present a certificate signed by
    /// one of them (mutual TLS). Off by default.
    #[arg(help_heading = TLS)]
    #[arg(long, env = "SUDOKU_TLS_CLIENT_CA", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,

    /// A web origin whose pages may call the service through gRPC-Web
    /// (`https://app.example.com`); repeat the flag or separate origins with
    /// commas. None by default: browsers refuse calls from other origins.
    #[arg(help_heading = NETWORK)]
    #[arg(long = "cors-origin", env = "SUDOKU_CORS_ORIGIN", value_delimiter = ',',
          value_parser = parse_origin)]
    pub cors_origins: Vec<String>,

    /// Do not serve the web page at `/` (served by default on the gRPC port).
    #[arg(help_heading = NETWORK)]
    #[arg(long, env = "SUDOKU_NO_WEB_PAGE")]
    pub no_web_page: bool,

    /// Address to serve Prometheus metrics on (`GET /metrics`). Off by default.
    #[arg(help_heading = TELEMETRY)]
    #[arg(long, env = "SUDOKU_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// Format of the log lines on stderr; the level comes from RUST_LOG.
    #[arg(help_heading = TELEMETRY)]
    #[arg(long, env = "SUDOKU_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// OpenTelemetry collector to send traces to (`http://collector:4317`).
    /// Unset, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT
    /// is used if set, else tracing is off. OTEL_SERVICE_NAME and
    /// OTEL_TRACES_SAMPLER(_ARG) are honoured (docs/tracing.md).
    #[arg(help_heading = TELEMETRY)]
    #[arg(long, env = "SUDOKU_OTLP_ENDPOINT", value_parser = parse_endpoint)]
    pub otlp_endpoint: Option<String>,

    /// Threads that solve puzzles; as many more serve the network. 0 = one
    /// per core.
    #[arg(help_heading = SCHEDULING)]
    #[arg(long, env = "SUDOKU_WORKERS", default_value_t = 0)]
    pub workers: usize,

    /// How much lower the solving threads' priority is (0-19; 0 = the same as
    /// the server's), so new calls are answered while every core is solving.
    #[arg(help_heading = SCHEDULING)]
    #[arg(long, env = "SUDOKU_SOLVER_NICE", default_value_t = 19,
          value_parser = clap::value_parser!(i32).range(0..=19))]
    pub solver_nice: i32,

    /// Pin each solving thread to a core of its own: `auto` does when there
    /// is one such thread per core the server may use; `off` leaves them to
    /// the operating system, which suits a host shared with busy programs.
    #[arg(help_heading = SCHEDULING)]
    #[arg(long, env = "SUDOKU_PIN_SOLVERS", value_enum, default_value = "auto")]
    pub pin_solvers: PinSolvers,

    /// Search nodes a unary call is solved for as soon as it arrives; most
    /// puzzles need fewer, and longer searches continue on a solving thread.
    #[arg(help_heading = SCHEDULING)]
    #[arg(long, env = "SUDOKU_INLINE_NODES", default_value_t = 20)]
    pub inline_nodes: u64,

    /// Search nodes one puzzle may take: past them the answer is
    /// OUTCOME_WORK_LIMIT_REACHED. Bounds calls that set no deadline.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_MAX_NODES", default_value_t = 5_000_000)]
    pub max_nodes: u64,

    /// A deadline, in seconds, for a call that sets none (a SolveBatch
    /// stream excepted: the client feeds it message by message). Past it
    /// the call ends DEADLINE_EXCEEDED, as if the client had set it. 0 =
    /// none.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_MAX_CALL_SECONDS", default_value_t = 60)]
    pub max_call_seconds: u64,

    /// Search nodes between checks for a passed deadline or a cancelled
    /// call: smaller stops sooner, larger costs less.
    #[arg(help_heading = SCHEDULING)]
    #[arg(long, env = "SUDOKU_SLICE_NODES", default_value_t = 500)]
    pub slice_nodes: u64,

    /// Unary calls and batch messages solved at once, server-wide. Past it,
    /// Solve fails at once with RESOURCE_EXHAUSTED (clients should back off)
    /// and streams wait.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_MAX_IN_FLIGHT", default_value_t = 4_096)]
    pub max_in_flight: usize,

    /// Messages of one SolveBatch stream solved at once; the stream waits
    /// for one to finish before more are read.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_STREAM_WINDOW", default_value_t = 16)]
    pub stream_window: usize,

    /// Puzzles in one SolveBatch message or SolveStream request; more fail
    /// with RESOURCE_EXHAUSTED.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_MAX_BATCH_ITEMS", default_value_t = 1_024)]
    pub max_batch_items: usize,

    /// Largest request message, in bytes after decompression; a larger one
    /// fails the call with OUT_OF_RANGE.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_MAX_MESSAGE_BYTES", default_value_t = 1 << 20)]
    pub max_message_bytes: usize,

    /// Calls open at once on one connection; more wait for a free one.
    #[arg(help_heading = LIMITS)]
    #[arg(long, env = "SUDOKU_MAX_CONCURRENT_STREAMS", default_value_t = 256)]
    pub max_concurrent_streams: u32,

    /// Seconds between keepalive pings on a connection; 0 = no pings.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_KEEPALIVE_INTERVAL_SECS", default_value_t = 60)]
    pub keepalive_interval_secs: u64,

    /// Seconds to wait for a keepalive ping's answer before closing the
    /// connection.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_KEEPALIVE_TIMEOUT_SECS", default_value_t = 20)]
    pub keepalive_timeout_secs: u64,

    /// Ask clients to reconnect once a connection is this many seconds old,
    /// so load spreads over new instances; 0 = never.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_MAX_CONNECTION_AGE_SECS", default_value_t = 0)]
    pub max_connection_age_secs: u64,

    /// Seconds the calls on a connection past its age get to finish.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(
        long,
        env = "SUDOKU_MAX_CONNECTION_AGE_GRACE_SECS",
        default_value_t = 30
    )]
    pub max_connection_age_grace_secs: u64,

    /// On SIGTERM or SIGINT, milliseconds the calls in flight get to finish
    /// before the server exits.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_DRAIN_TIMEOUT_MS", default_value_t = 10_000)]
    pub drain_timeout_ms: u64,

    /// New connections the operating system may queue until the server
    /// accepts them (net.core.somaxconn caps it); more wait and retry.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_LISTEN_BACKLOG", default_value_t = 1_024,
          value_parser = clap::value_parser!(u32).range(1..=65_535))]
    pub listen_backlog: u32,

    /// Milliseconds a new connection gets to finish its set-up (TLS, then
    /// HTTP/2) before it is closed.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_HANDSHAKE_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub handshake_timeout_ms: u64,

    /// Milliseconds a client gets to finish sending a request's headers
    /// once it starts (on the metrics port too) before the connection is
    /// closed.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_HEADER_READ_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_ms: u64,

    /// Connections open at once, lowered to fit the open-file limit; a
    /// quarter of them may be still setting up (the oldest is closed to
    /// make room). At the cap, a connection still setting up, else the one
    /// idle longest, else the least active of the peer with the most is
    /// closed for the new one; only when none can be is the new one
    /// refused (its calls fail with UNAVAILABLE).
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_MAX_CONNECTIONS", default_value_t = 1_024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,

    /// Close a connection that has had no call open for this long, in
    /// seconds (GOAWAY, then close); 0 = never.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(
        long = "idle-timeout-secs",
        visible_alias = "idle-timeout",
        env = "SUDOKU_IDLE_TIMEOUT_SECS",
        default_value_t = 300
    )]
    pub idle_timeout_secs: u64,

    /// Slowest request body accepted, in bytes per second, once the server
    /// has waited --request-body-grace-secs for it (a unary call's body, or
    /// one message of a stream). A slower call fails with UNAVAILABLE and
    /// its connection is closed; 0 = no minimum.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_MIN_REQUEST_BODY_RATE", default_value_t = 1_024)]
    pub min_request_body_rate: u64,

    /// Seconds a request body (or a stream's message) may take before the
    /// minimum rate applies.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_REQUEST_BODY_GRACE_SECS", default_value_t = 10)]
    pub request_body_grace_secs: u64,

    /// Connections one client address (IPv4, or an IPv6 /64) may hold at
    /// once, at most --max-connections. Its next one closes the least
    /// active of its own rather than being refused.
    #[arg(help_heading = CONNECTIONS)]
    #[arg(long, env = "SUDOKU_MAX_CONNECTIONS_PER_PEER", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_peer: u64,

    /// Microseconds one connection's work runs while another's waits,
    /// before they take turns: smaller lets others in sooner.
    #[arg(help_heading = SCHEDULING)]
    #[arg(long, env = "SUDOKU_QUANTUM_US", default_value_t = 2_000)]
    pub quantum_us: u64,

    /// Request bytes a client may send on one call before the server reads
    /// them (the HTTP/2 stream window).
    #[arg(help_heading = MEMORY)]
    #[arg(long, env = "SUDOKU_HTTP2_STREAM_WINDOW", default_value_t = 64 << 10)]
    pub http2_stream_window: u32,

    /// Request bytes a client may send on all its calls on one connection
    /// before the server reads them (the HTTP/2 connection window).
    #[arg(help_heading = MEMORY)]
    #[arg(long, env = "SUDOKU_HTTP2_CONNECTION_WINDOW", default_value_t = 1 << 20)]
    pub http2_connection_window: u32,

    /// Response bytes held for each call of a client that does not read
    /// them; then the call waits.
    #[arg(help_heading = MEMORY)]
    #[arg(long, env = "SUDOKU_HTTP2_SEND_BUFFER", default_value_t = 64 << 10)]
    pub http2_send_buffer: usize,

    /// Request bytes the server holds at once, server-wide: half for
    /// messages being received, half for messages being solved and answers
    /// not yet sent. Past it, reading requests waits (senders stall) and a
    /// unary call with no room for its answer is shed.
    #[arg(help_heading = MEMORY)]
    #[arg(long, env = "SUDOKU_MAX_BUFFERED_REQUEST_BYTES", default_value_t = 64 << 20)]
    pub max_buffered_request_bytes: usize,

    /// Request and answer bytes one connection may have the server hold at
    /// once, in the same two halves: a connection that leaves its answers
    /// unread makes only its own next calls wait. At least 4 x
    /// --max-message-bytes.
    #[arg(help_heading = MEMORY)]
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

    /// The idle timeout of gRPC connections; `None`: never.
    pub fn idle_timeout(&self) -> Option<Duration> {
        (self.idle_timeout_secs > 0).then(|| Duration::from_secs(self.idle_timeout_secs))
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
        assert_eq!(c.idle_timeout(), Some(Duration::from_secs(300)));
        assert_eq!(c.max_connections_per_peer, 256);
        assert_eq!(
            (c.min_request_body_rate, c.request_body_grace_secs),
            (1024, 10)
        );
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
    fn every_flag_is_under_a_help_heading() {
        use clap::CommandFactory;
        for arg in Config::command().get_arguments() {
            let id = arg.get_id().as_str();
            if id != "help" && id != "version" {
                let flag = arg.get_long().unwrap_or(id);
                assert!(
                    arg.get_help_heading().is_some(),
                    "--{flag} has no help heading"
                );
            }
        }
    }

    #[test]
    fn flags_override_defaults() {
        let c = Config::parse_from(["sudoku-server", "--listen", "0.0.0.0:9", "--max-nodes", "7"]);
        assert_eq!(c.listen.port(), 9);
        assert_eq!(c.max_nodes, 7);
    }

    #[test]
    fn the_idle_timeout_flag_has_a_short_alias_and_zero_turns_it_off() {
        let c = Config::parse_from(["sudoku-server", "--idle-timeout", "7"]);
        assert_eq!(c.idle_timeout(), Some(Duration::from_secs(7)));
        let c = Config::parse_from(["sudoku-server", "--idle-timeout-secs", "0"]);
        assert_eq!(c.idle_timeout(), None);
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
