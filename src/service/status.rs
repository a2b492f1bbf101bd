//! Every way a call, or an item of a batch, can fail, and the one map from
//! a failure to the gRPC status a client sees, with the one map from a
//! puzzle's fault at any shape ([`PuzzleError`]) to a failure. Both are
//! exhaustive `match`es: a new failure does not compile until someone
//! decides its code and reason.
//!
//! Beside its code, every status but CANCELLED carries a google.rpc.ErrorInfo
//! (AIP-193): a stable UPPER_SNAKE `reason` in the domain [`ERROR_DOMAIN`],
//! for clients to branch on without reading messages, and for
//! INVALID_ARGUMENT the cells at fault in its metadata (`cells`, indexes
//! separated by commas), beside the google.rpc.BadRequest that explains each
//! violation. The reasons are listed in the proto's service comment and in
//! docs/grpc-web.md.

use std::collections::HashMap;

use tonic::metadata::MetadataValue;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use sudoku_core::puzzle::PuzzleError;

/// What an overloaded server asks retrying clients to wait, in
/// milliseconds (`grpc-retry-pushback-ms` on RESOURCE_EXHAUSTED).
pub const OVERLOAD_PUSHBACK_MS: &str = "50";

/// The `domain` of every google.rpc.ErrorInfo the service sends.
pub const ERROR_DOMAIN: &str = "sudoku.v1";

/// Why a request is wrong, as google.rpc.ErrorInfo names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wrong {
    /// A grid that cannot be read: wrong length or count, a bad character
    /// or value, both or neither forms set.
    MalformedGrid,
    /// Givens with a digit twice in a row, column or box.
    ConflictingGivens,
    /// A current grid that changes one of the puzzle's givens.
    ChangedGiven,
    /// Any other field out of range: an option, an enum value, candidates.
    InvalidField,
}

impl Wrong {
    fn reason(self) -> &'static str {
        match self {
            Wrong::MalformedGrid => "MALFORMED_GRID",
            Wrong::ConflictingGivens => "CONFLICTING_GIVENS",
            Wrong::ChangedGiven => "CHANGED_GIVEN",
            Wrong::InvalidField => "INVALID_FIELD",
        }
    }
}

/// One field of a request that is wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Violation {
    pub(super) field: String,
    pub(super) description: String,
    pub(super) wrong: Wrong,
    /// The cells at fault (row-major indexes from 0), when the field is a grid.
    pub(super) cells: Vec<usize>,
}

/// Why a call, or an item of a batch, failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Failure {
    /// The request is malformed or its givens break the rules.
    Invalid(Vec<Violation>),
    /// A batch message carried more items than allowed.
    TooManyItems { found: usize, max: usize },
    /// The client's deadline passed, or the server's bound of a call that
    /// set none (`--max-call-seconds`).
    DeadlineExceeded,
    /// The client went away.
    Cancelled,
    /// The server is at its limit of concurrent work.
    Overloaded,
    /// The server is draining before it exits.
    ShuttingDown,
    /// A bug: the handler panicked.
    Panicked,
    /// The `grpc-timeout` header is not one the gRPC spec allows; the
    /// message says how.
    MalformedTimeout(String),
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
                let reason = violations
                    .first()
                    .map_or(Wrong::InvalidField, |v| v.wrong)
                    .reason();
                let mut cells: Vec<usize> = Vec::new();
                for &cell in violations.iter().flat_map(|v| &v.cells) {
                    if !cells.contains(&cell) {
                        cells.push(cell);
                    }
                }
                let mut metadata = HashMap::new();
                if !cells.is_empty() {
                    let listed: Vec<String> = cells.iter().map(usize::to_string).collect();
                    metadata.insert("cells".to_string(), listed.join(","));
                }
                let mut details = ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata);
                for v in violations {
                    details.add_bad_request_violation(v.field, v.description);
                }
                Status::with_error_details(Code::InvalidArgument, message, details)
            }
            Failure::TooManyItems { found, max } => with_reason(
                Code::ResourceExhausted,
                format!("a request message carries {found} items; the limit is {max}"),
                "TOO_MANY_ITEMS",
                &[("found", found.to_string()), ("max", max.to_string())],
            ),
            Failure::DeadlineExceeded => with_reason(
                Code::DeadlineExceeded,
                "the deadline passed before the work was done (the client's deadline, or the \
                 server's work bound of a call that sets none)"
                    .to_string(),
                "DEADLINE_EXCEEDED",
                &[],
            ),
            // The client left: nobody reads the details.
            Failure::Cancelled => Status::cancelled("the call was cancelled"),
            Failure::Overloaded => {
                let mut status = with_reason(
                    Code::ResourceExhausted,
                    "the server is at its limit of concurrent work; retry with back-off"
                        .to_string(),
                    "OVERLOADED",
                    &[("retryPushbackMs", OVERLOAD_PUSHBACK_MS.to_string())],
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
            Failure::ShuttingDown => with_reason(
                Code::Unavailable,
                "the server is shutting down; retry on another instance".to_string(),
                "SHUTTING_DOWN",
                &[],
            ),
            Failure::Panicked => with_reason(
                Code::Internal,
                "internal error while solving this puzzle".to_string(),
                "INTERNAL_ERROR",
                &[],
            ),
            // grpc-go's transport answers a malformed grpc-timeout with
            // INTERNAL (and HTTP 400, which gRPC clients also read as
            // INTERNAL); a trailers-only answer with the code is the same
            // to every client.
            Failure::MalformedTimeout(message) => {
                with_reason(Code::Internal, message, "MALFORMED_TIMEOUT", &[])
            }
            Failure::GenerateExhausted { index, attempts } => with_reason(
                Code::ResourceExhausted,
                format!(
                    "puzzle {index}: no puzzle matched the options in {attempts} attempts (the \
                     work budget); widen the label, rating or clue range"
                ),
                "GENERATE_BUDGET_EXHAUSTED",
                &[
                    ("index", index.to_string()),
                    ("attempts", attempts.to_string()),
                ],
            ),
        }
    }
}

/// OUT_OF_RANGE for a request message over the size limit, which the
/// server's edge answers before any handler runs (src/server/budget.rs,
/// calls.rs), with its ErrorInfo like every other status.
pub fn message_too_large(message: String, limit: usize) -> Status {
    with_reason(
        Code::OutOfRange,
        message,
        "MESSAGE_TOO_LARGE",
        &[("limitBytes", limit.to_string())],
    )
}

/// INTERNAL for a second request message on a call that takes one (not
/// client-streaming), which the server's edge answers (src/server/budget.rs)
/// as grpc-go does ("cardinality violation"), with an ErrorInfo of reason
/// MULTIPLE_MESSAGES.
pub fn second_message() -> Status {
    with_reason(
        Code::Internal,
        "cardinality violation: a second request message on a call that takes one \
         (this method is not client-streaming)"
            .to_string(),
        "MULTIPLE_MESSAGES",
        &[],
    )
}

/// A status of `code` with a google.rpc.ErrorInfo of `reason` and `metadata`.
fn with_reason(code: Code, message: String, reason: &str, metadata: &[(&str, String)]) -> Status {
    let metadata: HashMap<String, String> = metadata
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let details = ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata);
    Status::with_error_details(code, message, details)
}

impl Failure {
    /// The same failure with `prefix.` before each field path: for the
    /// fields of a grid, and for items of a batch. An empty field becomes
    /// `prefix` itself; an empty prefix changes nothing.
    pub(super) fn prefixed(self, prefix: &str) -> Failure {
        let join = |field: String| match (prefix.is_empty(), field.is_empty()) {
            (true, _) => field,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{field}"),
        };
        match self {
            Failure::Invalid(vs) => Failure::Invalid(
                vs.into_iter()
                    .map(|v| Violation {
                        field: join(v.field),
                        ..v
                    })
                    .collect(),
            ),
            other => other,
        }
    }
}

/// A failure of one wrong field (an option, an enum value, candidates).
pub(super) fn violation(field: impl Into<String>, description: impl Into<String>) -> Failure {
    violation_of(Wrong::InvalidField, field, description, Vec::new())
}

/// A failure of one wrong field, `wrong` in the way named, at `cells`.
pub(super) fn violation_of(
    wrong: Wrong,
    field: impl Into<String>,
    description: impl Into<String>,
    cells: Vec<usize>,
) -> Failure {
    Failure::Invalid(vec![Violation {
        field: field.into(),
        description: description.into(),
        wrong,
        cells,
    }])
}

/// The one map from a puzzle's fault, at any shape, to the violation a
/// client sees: the reason, the cells at fault (indexes from 0, as the
/// wire's), and the field relative to the grid (`text`, `cells[17]`, or the
/// grid itself, ""), which [`Failure::prefixed`] puts under the grid's own
/// field. Exhaustive: a new fault does not compile until it has its reason.
impl From<PuzzleError> for Failure {
    fn from(err: PuzzleError) -> Failure {
        let (field, wrong, cells) = match &err {
            PuzzleError::BadShape { .. } => ("box_rows".to_string(), Wrong::InvalidField, vec![]),
            PuzzleError::TextTooLarge { .. } | PuzzleError::WrongLength { .. } => {
                ("text".to_string(), Wrong::MalformedGrid, vec![])
            }
            PuzzleError::BadChar { at, .. } => {
                ("text".to_string(), Wrong::MalformedGrid, vec![at.index])
            }
            PuzzleError::WrongCount { .. } => ("cells".to_string(), Wrong::MalformedGrid, vec![]),
            PuzzleError::OutOfRange { at, .. } => (
                format!("cells[{}]", at.index),
                Wrong::MalformedGrid,
                vec![at.index],
            ),
            PuzzleError::Conflict { first, second, .. } => (
                String::new(),
                Wrong::ConflictingGivens,
                vec![first.index, second.index],
            ),
            PuzzleError::ChangedGiven { at, .. } => {
                (String::new(), Wrong::ChangedGiven, vec![at.index])
            }
        };
        violation_of(wrong, field, err.to_string(), cells)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reason_of(status: &Status) -> Option<(String, HashMap<String, String>)> {
        let details = status.get_error_details();
        details.error_info().map(|info| {
            assert_eq!(info.domain, ERROR_DOMAIN);
            (info.reason.clone(), info.metadata.clone())
        })
    }

    #[test]
    fn every_failure_but_cancelled_has_its_reason() {
        for (failure, code, reason) in [
            (
                Failure::DeadlineExceeded,
                Code::DeadlineExceeded,
                "DEADLINE_EXCEEDED",
            ),
            (Failure::Overloaded, Code::ResourceExhausted, "OVERLOADED"),
            (Failure::ShuttingDown, Code::Unavailable, "SHUTTING_DOWN"),
            (Failure::Panicked, Code::Internal, "INTERNAL_ERROR"),
            (
                Failure::MalformedTimeout("malformed grpc-timeout \"1\"".to_string()),
                Code::Internal,
                "MALFORMED_TIMEOUT",
            ),
            (
                Failure::TooManyItems { found: 3, max: 2 },
                Code::ResourceExhausted,
                "TOO_MANY_ITEMS",
            ),
            (
                Failure::GenerateExhausted {
                    index: 4,
                    attempts: 9,
                },
                Code::ResourceExhausted,
                "GENERATE_BUDGET_EXHAUSTED",
            ),
            (
                violation("count", "too big"),
                Code::InvalidArgument,
                "INVALID_FIELD",
            ),
        ] {
            let status = Status::from(failure.clone());
            assert_eq!(status.code(), code, "{failure:?}");
            let (got, _) = reason_of(&status).unwrap_or_else(|| panic!("{failure:?}"));
            assert_eq!(got, reason, "{failure:?}");
        }
        assert!(reason_of(&Status::from(Failure::Cancelled)).is_none());
        let overloaded = Status::from(Failure::Overloaded);
        assert_eq!(
            overloaded.metadata().get("grpc-retry-pushback-ms").unwrap(),
            OVERLOAD_PUSHBACK_MS
        );
        let (_, metadata) = reason_of(&message_too_large("big".into(), 64)).unwrap();
        assert_eq!(metadata["limitBytes"], "64");
    }

    #[test]
    fn a_batch_item_keeps_its_cells_under_the_prefixed_field() {
        let clash = PuzzleError::Conflict {
            unit: sudoku_core::puzzle::Unit::Row(0),
            first: sudoku_core::puzzle::Cell(0).into(),
            second: sudoku_core::puzzle::Cell(8).into(),
            value: 5,
        };
        let failure = Failure::from(clash).prefixed("puzzle");
        let status = Status::from(failure.prefixed("items[3]"));
        let (reason, metadata) = reason_of(&status).unwrap();
        assert_eq!(reason, "CONFLICTING_GIVENS");
        assert_eq!(metadata["cells"], "0,8");
        let bad = status.get_details_bad_request().unwrap();
        assert_eq!(bad.field_violations[0].field, "items[3].puzzle");
    }
}
