//! Memory given back to the system after a large release. glibc's malloc
//! keeps what a thread frees in that thread's arena for reuse, and the
//! solvers of large grids (half a megabyte each at 64x64) are allocated on
//! the solver threads and freed on whichever thread drops their task: once
//! the puzzles a thousand Generate streams had in the making were dropped,
//! the process kept nearly all of their memory resident (docs/generate.md).
//! A background thread watches the bytes held
//! in the request [`Budget`](super::Budget) and the connections open, and
//! when either has fallen from its highest since the last trim, by
//! [`TRIM_AFTER_BYTES`] or [`TRIM_AFTER_CONNECTIONS`], asks malloc to give
//! its free pages back (`malloc_trim`, which walks every arena). The
//! connections count too because a connection's buffers and calls are
//! freed when it closes, which may be long after its work was released
//! (streams that ended at their deadline, clients that leave later). A
//! steady load, which goes up and down by less, never pays for it; the walk
//! runs on this thread, not on a solver or runtime thread.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::Budget;
use crate::telemetry::metrics::Gauges;

/// How far the bytes held must fall from their high-water mark before the
/// free memory is given back.
const TRIM_AFTER_BYTES: usize = 8 << 20;

/// How far the connections open must fall from their high-water mark
/// (each holds some tens of kilobytes of buffers).
const TRIM_AFTER_CONNECTIONS: usize = 128;

/// How often the thread looks at the budget.
const EVERY: Duration = Duration::from_millis(500);

/// Ticks after a trim when it is made once more.
const AGAIN_AFTER: u32 = 3;

/// Starts the thread that gives memory back when `budget`'s held bytes or
/// `gauges`' open connections fall; it ends once `alive` is dropped (with
/// the service). Only where the allocator is glibc's.
pub(super) fn start(budget: Budget, gauges: Arc<Gauges>, alive: Weak<()>) -> std::io::Result<()> {
    if !TRIMS {
        return Ok(());
    }
    std::thread::Builder::new()
        .name("sudoku-trim".to_string())
        .spawn(move || {
            let (mut high, mut most) = (0usize, 0usize);
            // Ticks until the second trim of a release.
            let mut again = 0u32;
            loop {
                std::thread::sleep(EVERY);
                if alive.strong_count() == 0 {
                    return;
                }
                let held = budget.held();
                let open = gauges.connections_open.load(Ordering::Relaxed);
                high = high.max(held);
                most = most.max(open);
                if high - held >= TRIM_AFTER_BYTES || most - open >= TRIM_AFTER_CONNECTIONS {
                    trim();
                    tracing::debug!(
                        bytes = high - held,
                        connections = most - open,
                        "free memory given back"
                    );
                    (high, most) = (held, open);
                    again = AGAIN_AFTER;
                } else if again > 0 {
                    // What the calls and connections of the same clients
                    // free as they close, after the work they held.
                    again -= 1;
                    if again == 0 {
                        trim();
                    }
                }
            }
        })
        .map(|_| ())
}

/// Whether [`trim`] gives memory back on this target.
const TRIMS: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// Asks glibc's malloc to return the free pages of every arena.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() {
    // SAFETY: malloc_trim takes a byte count to leave at the top of the
    // main heap and only releases memory malloc holds free; it reads and
    // writes no memory of ours.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
