//! When to try again: which failures of a call mean its server was lost
//! (worth sending again elsewhere), how long to wait between tries, how
//! many tries and how long in all, and the batch size a server's refusal
//! names.

use std::time::Duration;

/// The most items a server takes in one message, when `status` is its
/// refusal of a message that carried more (`TOO_MANY_ITEMS`, with `max`).
pub fn items_limit(status: &tonic::Status) -> Option<usize> {
    use tonic_types::StatusExt as _;
    if status.code() != tonic::Code::ResourceExhausted {
        return None;
    }
    let info = status.get_details_error_info()?;
    if info.reason != "TOO_MANY_ITEMS" {
        return None;
    }
    info.metadata.get("max")?.parse().ok().filter(|&m| m > 0)
}

/// True when a call ended because its connection or server went away
/// (refused, reset, closed, a server draining), not because a server
/// answered it with an error: worth sending its items again elsewhere.
/// A status made here from a transport error carries that error as its
/// source; one a server sent has none.
pub fn lost_server(status: &tonic::Status) -> bool {
    use tonic::Code;
    match status.code() {
        Code::Unavailable => true,
        Code::Unknown | Code::Internal | Code::Cancelled => {
            std::error::Error::source(status).is_some()
        }
        _ => false,
    }
}

/// Calls a stream may fail one after another, without an answer between
/// them, before the run gives up. The balancer picks a server at random
/// and keeps a dead one in its list (each pick of it fails at once), so
/// with one of three servers gone ten failures in a row are 1 in 59,000;
/// with every server gone the run ends after about 4.6 s of waits.
pub const MAX_FAILURES: u32 = 10;

/// How long a stream goes on trying while its calls fail one after
/// another: a server that is stopped rather than gone takes each new call
/// to a connect timeout, so ten failures could otherwise take minutes.
pub const MAX_OUTAGE: Duration = Duration::from_secs(20);

/// The wait before the `failures`-th call again in a row: 25 ms, doubling,
/// at most 1 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_millis((25u64 << failures.saturating_sub(1).min(6)).min(1_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_items_limit_is_read_from_the_refusal() {
        use tonic_types::{ErrorDetails, StatusExt as _};
        // As the server says it (tests/it/cli.rs meets a real one).
        let refusal = tonic::Status::with_error_details(
            tonic::Code::ResourceExhausted,
            "a request message carries 3000 items; the limit is 100",
            ErrorDetails::with_error_info(
                "TOO_MANY_ITEMS",
                sudoku_grpc::service::ERROR_DOMAIN,
                [
                    ("found".to_string(), "3000".to_string()),
                    ("max".to_string(), "100".to_string()),
                ],
            ),
        );
        assert_eq!(items_limit(&refusal), Some(100));
        assert_eq!(
            items_limit(&tonic::Status::resource_exhausted("busy")),
            None
        );
    }

    #[test]
    fn only_transport_failures_are_sent_again() {
        assert!(lost_server(&tonic::Status::unavailable("draining")));
        assert!(!lost_server(&tonic::Status::internal("a server's bug")));
        assert!(!lost_server(&tonic::Status::resource_exhausted("too many")));
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        let local = tonic::Status::from_error(Box::new(io));
        assert!(lost_server(&local), "{local:?}");
    }

    #[test]
    fn backoff_doubles_to_a_second() {
        assert_eq!(backoff(1), Duration::from_millis(25));
        assert_eq!(backoff(2), Duration::from_millis(50));
        assert_eq!(backoff(7), Duration::from_millis(1_000));
        assert_eq!(backoff(40), Duration::from_millis(1_000));
        // The waits before the second to the last call in a row.
        let total: Duration = (1..MAX_FAILURES).map(backoff).sum();
        assert_eq!(total, Duration::from_millis(4_575));
    }
}
