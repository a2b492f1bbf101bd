//! Every way a call, or an item of a batch, can fail, and the one map from
//! a failure to the gRPC status a client sees. The map is an exhaustive
//! `match`: a new failure does not compile until someone decides its code.

use tonic::metadata::MetadataValue;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::puzzle::GridError;

/// What an overloaded server asks retrying clients to wait, in
/// milliseconds (`grpc-retry-pushback-ms` on RESOURCE_EXHAUSTED).
pub const OVERLOAD_PUSHBACK_MS: &str = "50";

/// One field of a request that is wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Violation {
    pub(super) field: String,
    pub(super) description: String,
}

/// Why a call, or an item of a batch, failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Failure {
    /// The request is malformed or its givens break the rules.
    Invalid(Vec<Violation>),
    /// A batch message carried more items than allowed.
    TooManyItems { found: usize, max: usize },
    /// The client's deadline passed.
    DeadlineExceeded,
    /// The client went away.
    Cancelled,
    /// The server is at its limit of concurrent work.
    Overloaded,
    /// The server is draining before it exits.
    ShuttingDown,
    /// A bug: the handler panicked.
    Panicked,
    /// Generate spent its work budget on a puzzle without one matching the
    /// options.
    GenerateExhausted {
        /// The puzzle's position in the stream.
        index: u32,
        /// Attempts made.
        attempts: u64,
    },
}

impl From<Failure> for Status {
    fn from(f: Failure) -> Status {
        match f {
            Failure::Invalid(violations) => {
                let message = violations
                    .iter()
                    .map(|v| format!("{}: {}", v.field, v.description))
                    .collect::<Vec<_>>()
                    .join("; ");
                let mut details = ErrorDetails::new();
                for v in violations {
                    details.add_bad_request_violation(v.field, v.description);
                }
                Status::with_error_details(Code::InvalidArgument, message, details)
            }
            Failure::TooManyItems { found, max } => Status::resource_exhausted(format!(
                "a request message carries {found} items; the limit is {max}"
            )),
            Failure::DeadlineExceeded => {
                Status::deadline_exceeded("the deadline passed before the solver finished")
            }
            Failure::Cancelled => Status::cancelled("the call was cancelled"),
            Failure::Overloaded => {
                let mut status = Status::resource_exhausted(
                    "the server is at its limit of concurrent work; retry with back-off",
                );
                // gRPC retry pushback: a client whose retry policy lists
                // RESOURCE_EXHAUSTED waits this long instead of its own
                // back-off. Callers retrying at once cost the admitted calls
                // CPU (docs/performance.md, capacity at 2x).
                status.metadata_mut().insert(
                    "grpc-retry-pushback-ms",
                    MetadataValue::from_static(OVERLOAD_PUSHBACK_MS),
                );
                status
            }
            Failure::ShuttingDown => {
                Status::unavailable("the server is shutting down; retry on another instance")
            }
            Failure::Panicked => Status::internal("internal error while solving this puzzle"),
            Failure::GenerateExhausted { index, attempts } => Status::resource_exhausted(format!(
                "puzzle {index}: no puzzle matched the options in {attempts} attempts (the work \
                 budget); widen the label, rating or clue range"
            )),
        }
    }
}

impl Failure {
    /// The same failure with `prefix.` before each field path, for items of a batch.
    pub(super) fn prefixed(self, prefix: &str) -> Failure {
        match self {
            Failure::Invalid(vs) => Failure::Invalid(
                vs.into_iter()
                    .map(|v| Violation {
                        field: format!("{prefix}.{}", v.field),
                        description: v.description,
                    })
                    .collect(),
            ),
            other => other,
        }
    }
}

/// A failure of one wrong field.
pub(super) fn violation(field: impl Into<String>, description: impl Into<String>) -> Failure {
    Failure::Invalid(vec![Violation {
        field: field.into(),
        description: description.into(),
    }])
}

/// A grid that could not be read, as a violation of the field (or the part
/// of it) at fault.
pub(super) fn grid_failure(field: &str, err: GridError) -> Failure {
    let field = match &err {
        GridError::OutOfRange { cell, .. } => format!("{field}.cells[{}]", cell.0),
        GridError::WrongCount { .. } => format!("{field}.cells"),
        GridError::WrongLength { .. } | GridError::BadChar { .. } => format!("{field}.text"),
        GridError::Conflict { .. } => field.to_string(),
    };
    violation(field, err.to_string())
}

/// The google.rpc.Status a per-item failure travels as: the same code,
/// message and details the unary call would have returned.
pub(super) fn to_rpc_status(status: Status) -> tonic_types::pb::Status {
    use prost::Message;
    if !status.details().is_empty()
        && let Ok(decoded) = tonic_types::pb::Status::decode(status.details())
    {
        return decoded;
    }
    tonic_types::pb::Status {
        code: status.code() as i32,
        message: status.message().to_string(),
        details: Vec::new(),
    }
}
