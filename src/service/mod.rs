//! The gRPC service: the only module that knows both the wire types in
//! [`crate::pb`] and the domain types in [`sudoku_core::puzzle`] and
//! [`sudoku_core::solver`].
//!
//! | file | its job |
//! |---|---|
//! | `api.rs` | the handlers, thin: validate, convert, schedule, convert back |
//! | `convert.rs` | wire to domain and back: grids, options, deadlines, answers |
//! | `status.rs` | every failure, and the one map from a failure to a gRPC status |
//! | `schedule/` | where work runs and when it stops: inline budget, solver threads, slices, deadlines, the work budget; one file a job |
//! | `stream.rs` | SolveBatch orchestration: the reader, the window, the workers, how a stream ends; SolveStream on top of it |
//! | `generate.rs` | Generate orchestration: puzzles made in parallel, sent in order, stopped when the client leaves |
//! | `pool.rs` | the solver threads, shared out in turns between connections |
//! | `budget.rs` | request bytes and unary answers held at once: the server-wide budget and each connection's share |
//! | `work.rs` | what the scheduler takes and gives back: jobs, batch items, answers, in domain types |
//! | `trim.rs` | freed memory given back to the system after a large release (glibc) |
//! | `fuzz.rs` | (feature `fuzzing`) a request answered without a server |

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::telemetry::metrics::Gauges;
use pool::Pool;

mod api;
mod budget;
mod convert;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod generate;
mod pool;
mod schedule;
mod status;
mod stream;
mod trim;
mod work;

pub use budget::{AnswerCharge, Budget, Charge, Purpose, Share};
pub use convert::{MAX_SOLUTIONS_LIMIT, read_grid};
pub use status::{ERROR_DOMAIN, OVERLOAD_PUSHBACK_MS, message_too_large, second_message};
pub use work::{AnyGrid, Form};

/// Which connection a call arrived on. The server puts one in every
/// request's extensions; the service uses it to share its solver threads
/// between connections in turns (pool.rs). Calls without one (the fuzzing
/// hook) share one tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tenant(pub u64);

/// The prefix of the paths of `sudoku.v1.SudokuService`'s calls: the server
/// gives their requests the connection's [`Share`], which the streams'
/// handlers charge the messages they hold, the searches of grids other than
/// 9x9 their paused solvers, and every unary handler its answer (other
/// routes need none, and pay nothing for it).
pub const SERVICE_PATH_PREFIX: &str = "/sudoku.v1.SudokuService/";

/// The path of SolveBatch, the one method whose request is a stream of
/// messages.
pub const SOLVE_BATCH_PATH: &str = "/sudoku.v1.SudokuService/SolveBatch";

/// Whether a call to `path` carries exactly one request message: every
/// method of the service but SolveBatch (the one that is client-streaming),
/// and health's Check and Watch. The server refuses a second message on
/// such a call (src/server/budget.rs), as grpc-go does; tonic would answer
/// from the first and drop the rest. Reflection, client-streaming, and
/// unknown paths are not limited.
pub fn takes_one_message(path: &str) -> bool {
    match path.strip_prefix(SERVICE_PATH_PREFIX) {
        Some(_) => path != SOLVE_BATCH_PATH,
        None => matches!(
            path,
            "/grpc.health.v1.Health/Check" | "/grpc.health.v1.Health/Watch"
        ),
    }
}

/// Limits the service applies to every call.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Work budget per puzzle, in search nodes.
    pub max_nodes: u64,
    /// The deadline of a call that sets none (a SolveBatch stream
    /// excepted); `None`: no bound.
    pub max_call: Option<Duration>,
    /// Nodes solved between deadline/cancellation checks.
    pub slice_nodes: u64,
    /// Unary calls and batch messages solved at once, server-wide.
    pub max_in_flight: usize,
    /// Request messages of one stream solved at once.
    pub stream_window: usize,
    /// Items allowed in one batch request message.
    pub max_batch_items: usize,
    /// Tasks that solve one stream's messages in parallel.
    pub stream_workers: usize,
    /// Threads that run searches longer than `inline_nodes`, and batch
    /// messages; 0 runs them on the calling thread (as the fuzzing hook does).
    pub solver_threads: usize,
    /// Nice value added to the solver threads'.
    pub solver_nice: i32,
    /// Pin each solver thread to a core when there are as many cores.
    pub pin_solvers: bool,
    /// Search nodes a unary call solves on arrival, on the runtime thread
    /// that read it; a search that needs more moves to a solver thread.
    pub inline_nodes: u64,
    /// How long a task runs on a solver thread, while others wait, before
    /// it yields to the next connection's (checked between slices and
    /// between batch items).
    pub quantum: Duration,
    /// Request bytes held at once, server-wide (see [`Budget`]).
    pub max_buffered_request_bytes: usize,
    /// Request bytes one connection may have held at once.
    pub connection_buffer_bytes: usize,
}

impl Limits {
    /// Limits of a service with no solver threads, which answers on the
    /// calling thread: the fuzzing hook's, and the unit tests'.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn on_the_calling_thread(max_nodes: u64) -> Limits {
        Limits {
            max_nodes,
            max_call: None,
            slice_nodes: 64,
            max_in_flight: 1,
            stream_window: 1,
            max_batch_items: 1_024,
            stream_workers: 1,
            solver_threads: 0,
            solver_nice: 0,
            pin_solvers: false,
            inline_nodes: 64,
            quantum: std::time::Duration::from_millis(2),
            max_buffered_request_bytes: 8 << 20,
            connection_buffer_bytes: 4 << 20,
        }
    }
}

/// `sudoku.v1.SudokuService`: one per server, cheap to clone.
#[derive(Clone)]
pub struct Sudoku {
    shared: Arc<Shared>,
}

/// What every call of one server shares.
struct Shared {
    limits: Limits,
    permits: Semaphore,
    pool: Pool,
    budget: Budget,
    shutdown: CancellationToken,
    gauges: Arc<Gauges>,
    /// Keeps the thread that gives freed memory back going (trim.rs); a
    /// token of its own, so that the thread holds no handle on this.
    trimming: Arc<()>,
    /// Test hook: solving exactly this grid panics, to show a panic stays
    /// inside its call.
    #[cfg(feature = "test-hooks")]
    panic_on: Option<sudoku_core::puzzle::Grid>,
}

impl Sudoku {
    /// A service with `limits`; `shutdown` is cancelled when the server
    /// starts draining.
    pub fn new(limits: Limits, shutdown: CancellationToken) -> std::io::Result<Sudoku> {
        let sudoku = Sudoku {
            shared: Arc::new(Shared {
                permits: Semaphore::new(limits.max_in_flight.max(1)),
                pool: Pool::new(
                    limits.solver_threads,
                    limits.solver_nice,
                    limits.quantum,
                    limits.pin_solvers,
                )?,
                budget: Budget::new(
                    limits.max_buffered_request_bytes,
                    limits.connection_buffer_bytes,
                ),
                limits,
                shutdown,
                gauges: Arc::new(Gauges::default()),
                trimming: Arc::new(()),
                #[cfg(feature = "test-hooks")]
                panic_on: None,
            }),
        };
        // A service with solver threads (a server's) holds memory for many
        // calls; one without answers on the calling thread.
        let shared = &sudoku.shared;
        if shared.limits.solver_threads > 0 {
            trim::start(
                shared.budget.clone(),
                shared.gauges.clone(),
                Arc::downgrade(&shared.trimming),
            )?;
        }
        Ok(sudoku)
    }

    /// Test hook (feature `test-hooks`): solving exactly `grid` panics
    /// inside the solver path.
    #[cfg(feature = "test-hooks")]
    pub fn with_panic_on(mut self, grid: sudoku_core::puzzle::Grid) -> Sudoku {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.panic_on = Some(grid);
        }
        self
    }

    /// The server-wide budget of request bytes, from which each connection
    /// takes its [`Share`].
    pub fn budget(&self) -> Budget {
        self.shared.budget.clone()
    }

    /// The service's gauges, for metrics and tests.
    pub fn gauges(&self) -> Arc<Gauges> {
        self.shared.gauges.clone()
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn one_message_for_every_method_that_is_not_client_streaming() {
        let set = prost_types::FileDescriptorSet::decode(crate::pb::FILE_DESCRIPTOR_SET).unwrap();
        let mut methods = 0;
        for file in &set.file {
            for service in &file.service {
                for m in &service.method {
                    let path = format!("/{}.{}/{}", file.package(), service.name(), m.name());
                    assert_eq!(takes_one_message(&path), !m.client_streaming(), "{path}");
                    methods += 1;
                }
            }
        }
        assert!(methods >= 7, "{methods} methods in the descriptor");
        assert!(takes_one_message("/grpc.health.v1.Health/Check"));
        assert!(takes_one_message("/grpc.health.v1.Health/Watch"));
        assert!(!takes_one_message(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
        ));
        assert!(!takes_one_message("/other.Service/Method"));
    }
}
