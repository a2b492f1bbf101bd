//! Prometheus metrics on their own address (`--metrics-listen`), through the
//! `metrics` facade. Without a listener no recorder is installed and every
//! call below is a no-op. The `grpc_server_*` series count every call the
//! server answered, whoever answered it (see `server/calls.rs`), for every
//! service it serves.
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `grpc_server_started_total` | counter | `grpc_service`, `grpc_method` |
//! | `grpc_server_handled_total` | counter | `grpc_service`, `grpc_method`, `grpc_code` |
//! | `grpc_server_handling_seconds` | histogram | `grpc_service`, `grpc_method` |
//! | `sudoku_puzzles_total` | counter | `outcome` (solved, no_solution, multiple_solutions, work_limit_reached, invalid, failed) |
//! | `sudoku_solving` | gauge | puzzles being solved now |
//! | `sudoku_streams_open` | gauge | SolveBatch streams open now |
//! | `sudoku_batch_messages_total` | counter | SolveBatch request messages answered |
//! | `sudoku_connections_open` | gauge | gRPC connections open now |
//! | `sudoku_connections_refused_total` | counter | gRPC connections closed at once, the server being at its connection cap |
//! | `sudoku_connections_closed_total` | counter | `reason` (handshake_timeout, header_timeout, evicted, idle_timeout, slow_body): gRPC connections the server closed early |

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::StartError;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use tonic::Code;

use std::sync::atomic::{AtomicU64, AtomicUsize};

/// How the service's work on one puzzle ended, as `sudoku_puzzles_total`
/// counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuzzleOutcome {
    /// Solved (and unique, when counting).
    Solved,
    /// No solution.
    NoSolution,
    /// Several solutions, when counting.
    MultipleSolutions,
    /// The work budget ran out first.
    WorkLimitReached,
    /// The puzzle could not be read or breaks the rules.
    Invalid,
    /// Any other failure: deadline, cancellation, overload, a bug.
    Failed,
}

impl PuzzleOutcome {
    /// Every outcome, in the index order of [`Gauges::puzzles`].
    pub const ALL: [PuzzleOutcome; 6] = [
        PuzzleOutcome::Solved,
        PuzzleOutcome::NoSolution,
        PuzzleOutcome::MultipleSolutions,
        PuzzleOutcome::WorkLimitReached,
        PuzzleOutcome::Invalid,
        PuzzleOutcome::Failed,
    ];

    /// The `outcome` label.
    pub fn name(self) -> &'static str {
        match self {
            PuzzleOutcome::Solved => "solved",
            PuzzleOutcome::NoSolution => "no_solution",
            PuzzleOutcome::MultipleSolutions => "multiple_solutions",
            PuzzleOutcome::WorkLimitReached => "work_limit_reached",
            PuzzleOutcome::Invalid => "invalid",
            PuzzleOutcome::Failed => "failed",
        }
    }
}

/// Why the server closed a connection before its client did, as
/// `sudoku_connections_closed_total` counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionClosed {
    /// The handshake (TLS, HTTP/2 preface and SETTINGS) took too long.
    HandshakeTimeout,
    /// A header block took too long.
    HeaderTimeout,
    /// Closed to make room for a newer connection (see `server::admission`).
    Evicted,
    /// No call open for `--idle-timeout-secs`.
    IdleTimeout,
    /// A request body came slower than `--min-request-body-rate`.
    SlowBody,
}

impl ConnectionClosed {
    /// Every reason, in the index order of [`Gauges::connections_closed`].
    pub const ALL: [ConnectionClosed; 5] = [
        ConnectionClosed::HandshakeTimeout,
        ConnectionClosed::HeaderTimeout,
        ConnectionClosed::Evicted,
        ConnectionClosed::IdleTimeout,
        ConnectionClosed::SlowBody,
    ];

    /// The `reason` label.
    pub fn name(self) -> &'static str {
        match self {
            ConnectionClosed::HandshakeTimeout => "handshake_timeout",
            ConnectionClosed::HeaderTimeout => "header_timeout",
            ConnectionClosed::Evicted => "evicted",
            ConnectionClosed::IdleTimeout => "idle_timeout",
            ConnectionClosed::SlowBody => "slow_body",
        }
    }
}

/// Counters and gauges of the service's own work: plain atomics, bumped on
/// the hot path with one relaxed add and published to the recorder off it.
#[derive(Debug, Default)]
pub struct Gauges {
    /// Puzzles being solved right now.
    pub solving: AtomicUsize,
    /// SolveBatch streams open right now.
    pub open_streams: AtomicUsize,
    /// Puzzles answered since start, by outcome (see [`PuzzleOutcome::ALL`]).
    pub puzzles: [AtomicU64; 6],
    /// SolveBatch request messages answered since start.
    pub batch_messages: AtomicU64,
    /// gRPC connections open now (their sockets held, lingering ones too).
    pub connections_open: AtomicUsize,
    /// gRPC connections closed as soon as accepted, the server being at
    /// its connection cap.
    pub connections_refused: AtomicU64,
    /// gRPC connections the server closed early, by reason (see
    /// [`ConnectionClosed::ALL`]).
    pub connections_closed: [AtomicU64; 5],
}

impl Gauges {
    /// Counts one puzzle that ended with `outcome`.
    pub fn count(&self, outcome: PuzzleOutcome) {
        self.puzzles[outcome as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Puzzles counted with `outcome` so far.
    pub fn counted(&self, outcome: PuzzleOutcome) -> u64 {
        self.puzzles[outcome as usize].load(Ordering::Relaxed)
    }

    /// Counts one connection the server closed early, `why`.
    pub fn count_closed(&self, why: ConnectionClosed) {
        self.connections_closed[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Connections closed early `why` so far.
    pub fn closed(&self, why: ConnectionClosed) -> u64 {
        self.connections_closed[why as usize].load(Ordering::Relaxed)
    }
}

/// Installs the Prometheus recorder and serves it on `addr` (any path,
/// `/metrics` by convention), with `header_timeout` for each request head
/// (see `telemetry/scrape.rs`).
pub async fn install(addr: SocketAddr, header_timeout: Duration) -> Result<(), StartError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| StartError::Listen { addr, source })?;
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("grpc_server_handling_seconds".into()),
            &[
                0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05,
                0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ],
        )
        .map_err(|e| StartError::Metrics {
            what: "bad histogram buckets",
            source: e.into(),
        })?
        .install_recorder()
        .map_err(|e| StartError::Metrics {
            what: "cannot install the metrics recorder",
            source: e.into(),
        })?;
    // The recorder leaves its upkeep (draining histogram samples into
    // their buckets between scrapes) to whoever holds the handle; the
    // exporter's own listener ran it every 5 s.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    let addr = listener.local_addr().unwrap_or(addr);
    super::scrape::spawn(listener, handle, header_timeout);
    tracing::info!(%addr, "serving Prometheus metrics");
    Ok(())
}

/// Copies the service's own atomic counters into the recorder twice a
/// second, so the hot path pays one relaxed atomic add per puzzle and
/// nothing for label lookups.
pub fn spawn_publisher(gauges: Arc<Gauges>) {
    tokio::spawn(async move {
        let solving = metrics::gauge!("sudoku_solving");
        let streams = metrics::gauge!("sudoku_streams_open");
        let messages = metrics::counter!("sudoku_batch_messages_total");
        let outcomes: Vec<_> = PuzzleOutcome::ALL
            .iter()
            .map(|o| metrics::counter!("sudoku_puzzles_total", "outcome" => o.name()))
            .collect();
        let connections = metrics::gauge!("sudoku_connections_open");
        let refused = metrics::counter!("sudoku_connections_refused_total");
        let closed: Vec<_> = ConnectionClosed::ALL
            .iter()
            .map(|r| metrics::counter!("sudoku_connections_closed_total", "reason" => r.name()))
            .collect();
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tick.tick().await;
            solving.set(gauges.solving.load(Ordering::Relaxed) as f64);
            streams.set(gauges.open_streams.load(Ordering::Relaxed) as f64);
            messages.absolute(gauges.batch_messages.load(Ordering::Relaxed));
            for (counter, value) in outcomes.iter().zip(gauges.puzzles.iter()) {
                counter.absolute(value.load(Ordering::Relaxed));
            }
            connections.set(gauges.connections_open.load(Ordering::Relaxed) as f64);
            refused.absolute(gauges.connections_refused.load(Ordering::Relaxed));
            for (counter, value) in closed.iter().zip(gauges.connections_closed.iter()) {
                counter.absolute(value.load(Ordering::Relaxed));
            }
        }
    });
}

/// The calls counted by name, as (service, method); any other path is
/// counted under the last row, so a client cannot add label values.
const METHODS: [(&str, &str); 12] = [
    ("sudoku.v1.SudokuService", "Solve"),
    ("sudoku.v1.SudokuService", "SolveBatch"),
    ("sudoku.v1.SudokuService", "SolveStream"),
    ("sudoku.v1.SudokuService", "Validate"),
    ("sudoku.v1.SudokuService", "Hint"),
    ("sudoku.v1.SudokuService", "Rate"),
    ("sudoku.v1.SudokuService", "Generate"),
    ("grpc.health.v1.Health", "Check"),
    ("grpc.health.v1.Health", "Watch"),
    (
        "grpc.reflection.v1.ServerReflection",
        "ServerReflectionInfo",
    ),
    (
        "grpc.reflection.v1alpha.ServerReflection",
        "ServerReflectionInfo",
    ),
    ("unknown", "unknown"),
];

/// Which of the counted calls a request is (a row of the method table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallKind(usize);

impl CallKind {
    /// The call a request path such as `/sudoku.v1.SudokuService/Solve` names.
    pub fn of_path(path: &str) -> CallKind {
        let named = path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .and_then(|(service, method)| {
                METHODS
                    .iter()
                    .position(|&(s, m)| s == service && m == method)
            });
        CallKind(named.unwrap_or(METHODS.len() - 1))
    }

    /// The `grpc_method` label.
    pub fn method(self) -> &'static str {
        METHODS[self.0].1
    }
}

/// One method's call metrics, registered on first use and kept: looking
/// a metric up by name and labels on every call costs a label allocation,
/// a hash and a registry lock each time.
struct MethodMetrics {
    service: &'static str,
    method: &'static str,
    started: Counter,
    /// By `grpc_code`, indexed by the code's number, registered when first seen.
    handled: [OnceLock<Counter>; 17],
    seconds: Histogram,
}

impl MethodMetrics {
    fn new((service, method): (&'static str, &'static str)) -> MethodMetrics {
        MethodMetrics {
            service,
            method,
            started: metrics::counter!(
                "grpc_server_started_total",
                "grpc_service" => service,
                "grpc_method" => method
            ),
            handled: std::array::from_fn(|_| OnceLock::new()),
            seconds: metrics::histogram!(
                "grpc_server_handling_seconds",
                "grpc_service" => service,
                "grpc_method" => method
            ),
        }
    }
}

/// The metrics of `kind`. Handles taken before [`install`] would stay
/// no-ops, but the server installs the recorder before it accepts a call.
fn method_metrics(kind: CallKind) -> &'static MethodMetrics {
    static METRICS: [OnceLock<MethodMetrics>; METHODS.len()] =
        [const { OnceLock::new() }; METHODS.len()];
    METRICS[kind.0].get_or_init(|| MethodMetrics::new(METHODS[kind.0]))
}

/// A call started.
pub fn call_started(kind: CallKind) {
    method_metrics(kind).started.increment(1);
}

/// A call ended with `code` after `elapsed`.
pub fn call_handled(kind: CallKind, code: Code, elapsed: Duration) {
    let m = method_metrics(kind);
    let slot = (code as usize).min(m.handled.len() - 1);
    m.handled[slot]
        .get_or_init(|| {
            metrics::counter!(
                "grpc_server_handled_total",
                "grpc_service" => m.service,
                "grpc_method" => m.method,
                "grpc_code" => code_name(code)
            )
        })
        .increment(1);
    m.seconds.record(elapsed.as_secs_f64());
}

/// The canonical name of a gRPC status code, as `grpc_code` labels carry it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_calls_and_anything_else_is_unknown() {
        assert_eq!(
            CallKind::of_path("/sudoku.v1.SudokuService/SolveBatch").method(),
            "SolveBatch"
        );
        assert_eq!(
            CallKind::of_path("/sudoku.v1.SudokuService/SolveStream").method(),
            "SolveStream"
        );
        assert_eq!(
            CallKind::of_path("/grpc.health.v1.Health/Check").method(),
            "Check"
        );
        for method in ["Validate", "Hint", "Rate", "Generate"] {
            let path = format!("/sudoku.v1.SudokuService/{method}");
            assert_eq!(CallKind::of_path(&path).method(), method);
        }
        for path in ["/sudoku.v1.SudokuService/Nope", "/", "", "/x/y/z", "/a"] {
            assert_eq!(CallKind::of_path(path).method(), "unknown", "{path}");
        }
    }
}
