//! The reorder window of `sudoku solve`: a bound on the puzzles read but
//! not yet printed. The reader takes a place per puzzle and waits when none
//! is free (backpressure); the writer gives places back as it prints, so a
//! slow puzzle holds back only the output behind it and memory stays flat.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The reorder window's free places: the reader takes one per puzzle, the
/// writer gives them back as it prints. Taking a place is one atomic step
/// while places are free; the lock and the condition variable are for
/// waiting, and the writer signals only a reader that waits.
pub(super) struct Window {
    free: AtomicUsize,
    closed: AtomicBool,
    /// True while the reader waits (or is about to) for a place.
    waiting: Mutex<bool>,
    cv: Condvar,
}

impl Window {
    /// A window of `size` free places.
    pub(super) fn new(size: usize) -> Window {
        Window {
            free: AtomicUsize::new(size),
            closed: AtomicBool::new(false),
            waiting: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Waits for a free place; false once the window is closed.
    pub(super) fn acquire(&self) -> bool {
        loop {
            if self.closed.load(Ordering::Acquire) {
                return false;
            }
            let free = self.free.load(Ordering::Acquire);
            if free > 0 {
                if self
                    .free
                    .compare_exchange_weak(free, free - 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            // Looked at again under the lock: `release` and `close` change
            // the count before they take it, so neither is missed.
            if self.free.load(Ordering::Acquire) == 0 && !self.closed.load(Ordering::Acquire) {
                *waiting = true;
                drop(self.cv.wait(waiting).unwrap_or_else(|e| e.into_inner()));
            }
        }
    }

    /// True when a place is free now.
    pub(super) fn has_room(&self) -> bool {
        self.free.load(Ordering::Acquire) > 0 && !self.closed.load(Ordering::Acquire)
    }

    /// Gives `n` places back.
    pub(super) fn release(&self, n: usize) {
        self.free.fetch_add(n, Ordering::AcqRel);
        self.wake();
    }

    /// Stops the reader: nothing more will be printed.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if std::mem::take(&mut *waiting) {
            self.cv.notify_all();
        }
    }
}
