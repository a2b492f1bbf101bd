//! Request bytes the server holds at once: a server-wide [`Budget`], and a
//! [`Share`] of it for each connection. A byte held is charged to both, so
//! one connection can pin at most its share and all of them together at
//! most the budget.
//!
//! Each is split in two pools ([`Purpose`]) of half its size:
//!
//! - [`Purpose::Buffers`]: request messages being received. tonic buffers a
//!   message until its last byte arrives (and reserves its claimed length
//!   as soon as it reads the 5-byte prefix), and keeps that buffer for the
//!   rest of the request, so a request body is charged the largest message
//!   it has carried until it ends (the server's body wrapper does this).
//! - [`Purpose::Messages`]: decoded SolveBatch messages in a stream's window or
//!   being solved, then their responses until HTTP/2 has taken their bytes;
//!   the solvers of paused searches of large grids; and every unary answer,
//!   from before it is made until HTTP/2 has taken its bytes
//!   ([`AnswerCharge`]).
//!
//! Two pools, not one, so that the buffers of open streams can never take
//! what their own decoded messages need to make progress: a stream that
//! holds its buffer can always get its next message solved, so a full
//! share only pushes back on senders and never stalls for good.
//!
//! A [`Charge`] releases its bytes when dropped. Charging is two uncontended
//! atomic operations per pool when the bytes are there; only a charge that
//! must wait allocates (its waiting future).

use std::sync::Arc;

use tokio::sync::Semaphore;

/// Which half of a budget or share a charge takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Request messages being received, in tonic's buffers.
    Buffers,
    /// Decoded SolveBatch messages and their responses, paused solvers,
    /// Generate's puzzles in the making and its answers.
    Messages,
    /// Unary answers: the connection's messages half, but a server-wide
    /// pool of their own (a quarter of the messages half), so that work
    /// waiting for memory in the messages pool (a flood of Generate or
    /// SolveBatch streams fills it by design) never sheds a Solve.
    Answers,
}

/// The server-wide budget of request bytes held at once; cheap to clone.
#[derive(Clone)]
pub struct Budget(Arc<Pools>);

/// A connection's share of the [`Budget`]; cheap to clone. The server puts
/// one in the extensions of every SolveBatch request.
#[derive(Clone)]
pub struct Share(Arc<SharePools>);

struct Pools {
    buffers: Semaphore,
    messages: Semaphore,
    answers: Semaphore,
    /// Bytes of each pool.
    pool: usize,
    /// Bytes of each pool of one connection's share.
    share_pool: usize,
}

struct SharePools {
    budget: Budget,
    buffers: Semaphore,
    messages: Semaphore,
}

impl Budget {
    /// A budget of `total` bytes, of which each connection may hold
    /// `share`; each is split evenly between the two pools.
    pub fn new(total: usize, share: usize) -> Budget {
        let pool = |bytes: usize| (bytes / 2).clamp(1, Semaphore::MAX_PERMITS);
        let answers = (pool(total) / 4).max(1);
        Budget(Arc::new(Pools {
            buffers: Semaphore::new(pool(total)),
            messages: Semaphore::new(pool(total) - answers.min(pool(total) - 1)),
            answers: Semaphore::new(answers),
            pool: pool(total),
            share_pool: pool(share),
        }))
    }

    /// A new connection's share.
    pub fn share(&self) -> Share {
        let n = self.0.share_pool;
        Share(Arc::new(SharePools {
            budget: self.clone(),
            buffers: Semaphore::new(n),
            messages: Semaphore::new(n),
        }))
    }

    /// Bytes held now, in both pools, server-wide.
    pub fn held(&self) -> usize {
        let free = self.available(Purpose::Buffers)
            + self.available(Purpose::Messages)
            + self.available(Purpose::Answers);
        (2 * self.0.pool).saturating_sub(free)
    }

    /// Bytes free in the `purpose` pool server-wide (for tests and metrics).
    pub fn available(&self, purpose: Purpose) -> usize {
        self.0.semaphore(purpose).available_permits()
    }
}

impl Pools {
    fn semaphore(&self, purpose: Purpose) -> &Semaphore {
        match purpose {
            Purpose::Buffers => &self.buffers,
            Purpose::Messages => &self.messages,
            Purpose::Answers => &self.answers,
        }
    }
}

impl SharePools {
    fn semaphore(&self, purpose: Purpose) -> &Semaphore {
        match purpose {
            Purpose::Buffers => &self.buffers,
            Purpose::Messages | Purpose::Answers => &self.messages,
        }
    }
}

impl Share {
    /// The most one charge can take: one pool of the connection's share.
    pub fn capacity(&self) -> usize {
        self.0.budget.0.share_pool
    }

    /// Bytes free in this connection's `purpose` pool (for tests).
    pub fn available(&self, purpose: Purpose) -> usize {
        self.0.semaphore(purpose).available_permits()
    }

    /// `bytes` of the `purpose` pool at once, or `None` when the connection or the
    /// server has not got them free now. `bytes` must not exceed
    /// [`Share::capacity`].
    pub fn try_charge(&self, purpose: Purpose, bytes: usize) -> Option<Charge> {
        let n = permits(bytes);
        if n > 0 {
            let mine = self.0.semaphore(purpose).try_acquire_many(n).ok()?;
            let server = self
                .0
                .budget
                .0
                .semaphore(purpose)
                .try_acquire_many(n)
                .ok()?;
            mine.forget();
            server.forget();
        }
        Some(self.charged(purpose, n as usize))
    }

    /// `bytes` of the `purpose` pool, waiting until the connection's share and then the
    /// server's budget have them free (first come, first served). `bytes`
    /// is capped at [`Share::capacity`], so the wait always ends once the
    /// bytes held before are released.
    pub async fn charge(&self, purpose: Purpose, bytes: usize) -> Charge {
        let n = permits(bytes.min(self.capacity()));
        if n > 0 {
            // The semaphores are never closed; a failed acquire would mean
            // they were, and then charging nothing is all that can be done.
            let (Ok(mine), Ok(server)) = (
                self.0.semaphore(purpose).acquire_many(n).await,
                self.0.budget.0.semaphore(purpose).acquire_many(n).await,
            ) else {
                return self.charged(purpose, 0);
            };
            mine.forget();
            server.forget();
        }
        self.charged(purpose, n as usize)
    }

    /// `bytes` of the `purpose` pool, waiting until the connection's own
    /// share has them free (a connection that leaves what it holds unread
    /// stalls only itself), then taking them from the server's budget if it
    /// has them now: `None` when it has not, and the caller sheds its call
    /// rather than wait on other connections. `bytes` is capped at
    /// [`Share::capacity`].
    pub async fn charge_or_shed(&self, purpose: Purpose, bytes: usize) -> Option<Charge> {
        let n = permits(bytes.min(self.capacity()));
        if n > 0 {
            let mine = self.0.semaphore(purpose).acquire_many(n).await.ok()?;
            let server = self
                .0
                .budget
                .0
                .semaphore(purpose)
                .try_acquire_many(n)
                .ok()?;
            mine.forget();
            server.forget();
        }
        Some(self.charged(purpose, n as usize))
    }

    fn charged(&self, purpose: Purpose, bytes: usize) -> Charge {
        Charge {
            share: self.clone(),
            purpose,
            bytes,
        }
    }

    fn release(&self, purpose: Purpose, bytes: usize) {
        if bytes > 0 {
            self.0.semaphore(purpose).add_permits(bytes);
            self.0.budget.0.semaphore(purpose).add_permits(bytes);
        }
    }
}

/// Semaphore permits for `bytes` (tokio counts permits in u32).
fn permits(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// Bytes held in one pool of a connection's share and of the budget;
/// released when dropped.
pub struct Charge {
    share: Share,
    purpose: Purpose,
    bytes: usize,
}

impl Charge {
    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The most this charge can ever hold: its connection's share
    /// ([`Share::capacity`]).
    pub fn capacity(&self) -> usize {
        self.share.capacity()
    }

    /// The most this charge could grow to now: what it holds and what the
    /// connection's share and the server's budget both have free.
    pub fn room(&self) -> usize {
        let free = self
            .share
            .available(self.purpose)
            .min(self.share.0.budget.available(self.purpose));
        self.bytes.saturating_add(free)
    }

    /// Releases what is held beyond `bytes`.
    pub fn shrink_to(&mut self, bytes: usize) {
        if bytes < self.bytes {
            self.share.release(self.purpose, self.bytes - bytes);
            self.bytes = bytes;
        }
    }

    /// Grows this charge to `bytes` if the connection's share and the
    /// server's budget have the difference free now; false (holding what it
    /// held) when they have not.
    pub fn try_grow_to(&mut self, bytes: usize) -> bool {
        if bytes <= self.bytes {
            return true;
        }
        match self.share.try_charge(self.purpose, bytes - self.bytes) {
            Some(more) => {
                self.absorb(more);
                true
            }
            None => false,
        }
    }

    /// Adds what `other` holds (of the same share and pool) to this charge.
    pub fn absorb(&mut self, mut other: Charge) {
        debug_assert!(Arc::ptr_eq(&self.share.0, &other.share.0) && self.purpose == other.purpose);
        self.bytes += std::mem::take(&mut other.bytes);
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.share.release(self.purpose, self.bytes);
    }
}

/// What a unary answer holds of its connection's share: a [`Charge`] taken
/// before the answer is made (its bound) and shrunk to the answer's encoded
/// size once made. The handler puts it in the response's extensions; the
/// server moves it into the response body, which releases it when dropped,
/// once its last byte has been handed to HTTP/2 (`server/budget.rs`). A
/// response that no server takes it from (the fuzzing hook's) releases it
/// with its extensions. Shared, as extensions must be `Clone`: the bytes are
/// released when the last holder drops.
#[derive(Clone, Debug)]
pub struct AnswerCharge(Arc<Charge>);

impl AnswerCharge {
    /// `charge`, to travel with a response.
    pub fn new(charge: Charge) -> AnswerCharge {
        AnswerCharge(Arc::new(charge))
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.0.bytes()
    }
}

impl std::fmt::Debug for Charge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Charge")
            .field("purpose", &self.purpose)
            .field("bytes", &self.bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_takes_from_the_share_and_the_budget_until_dropped() {
        let budget = Budget::new(8 << 10, 4 << 10);
        let a = budget.share();
        let b = budget.share();
        let held = a.try_charge(Purpose::Buffers, 1500).unwrap();
        assert_eq!(a.available(Purpose::Buffers), 2048 - 1500);
        assert_eq!(b.available(Purpose::Buffers), 2048);
        assert_eq!(budget.available(Purpose::Buffers), 4096 - 1500);
        assert_eq!(budget.available(Purpose::Messages), 3072);
        assert_eq!(budget.available(Purpose::Answers), 1024);
        assert_eq!(budget.held(), 1500);
        drop(held);
        assert_eq!(budget.held(), 0);
        assert_eq!(a.available(Purpose::Buffers), 2048);
        assert_eq!(budget.available(Purpose::Buffers), 4096);
    }

    #[test]
    fn a_connection_cannot_take_more_than_its_share() {
        let budget = Budget::new(1 << 20, 4 << 10);
        let a = budget.share();
        let _held = a.try_charge(Purpose::Messages, 2048).unwrap();
        assert!(a.try_charge(Purpose::Messages, 1).is_none());
        assert!(budget.share().try_charge(Purpose::Messages, 2048).is_some());
    }

    #[test]
    fn the_budget_bounds_all_connections_together() {
        let budget = Budget::new(8 << 10, 4 << 10);
        let (a, b, c) = (budget.share(), budget.share(), budget.share());
        let _a = a.try_charge(Purpose::Buffers, 2048).unwrap();
        let _b = b.try_charge(Purpose::Buffers, 2048).unwrap();
        assert!(c.try_charge(Purpose::Buffers, 1).is_none());
        // A failed try leaves the connection's own share untouched.
        assert_eq!(c.available(Purpose::Buffers), 2048);
    }

    #[test]
    fn shrink_and_absorb_keep_the_books() {
        let budget = Budget::new(8 << 10, 8 << 10);
        let a = budget.share();
        let mut held = a.try_charge(Purpose::Buffers, 1000).unwrap();
        held.absorb(a.try_charge(Purpose::Buffers, 500).unwrap());
        assert_eq!(held.bytes(), 1500);
        assert_eq!(a.available(Purpose::Buffers), 4096 - 1500);
        held.shrink_to(100);
        assert_eq!(a.available(Purpose::Buffers), 4096 - 100);
        held.shrink_to(200); // never grows
        assert_eq!(held.bytes(), 100);
        drop(held);
        assert_eq!(budget.available(Purpose::Buffers), 4096);
    }

    #[tokio::test]
    async fn an_answer_waits_for_its_own_share_and_sheds_on_the_servers() {
        let budget = Budget::new(8 << 10, 4 << 10);
        let (a, b) = (budget.share(), budget.share());
        let held = a.try_charge(Purpose::Messages, 2000).unwrap();
        let waiting = tokio::spawn({
            let a = a.clone();
            async move {
                a.charge_or_shed(Purpose::Answers, 1000)
                    .await
                    .map(|c| c.bytes())
            }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "took more than its own share");
        drop(held);
        assert_eq!(waiting.await.unwrap(), Some(1000));
        // Work waiting in the messages pool, however full, sheds no answer.
        let _work = b.try_charge(Purpose::Messages, 2048).unwrap();
        let _more = budget.share().try_charge(Purpose::Messages, 1024).unwrap();
        assert_eq!(budget.available(Purpose::Messages), 0);
        assert!(a.charge_or_shed(Purpose::Answers, 1).await.is_some());
        // The server's answers pool, taken by others, is not waited for.
        let _b = b.try_charge(Purpose::Answers, 1024);
        let _c = budget.share().try_charge(Purpose::Answers, 1024);
        assert_eq!(budget.available(Purpose::Answers), 0);
        assert!(a.charge_or_shed(Purpose::Answers, 1).await.is_none());
        assert_eq!(
            a.available(Purpose::Messages),
            2048,
            "a shed charge kept bytes"
        );
    }

    #[tokio::test]
    async fn a_waiting_charge_is_served_when_bytes_are_released() {
        let budget = Budget::new(8 << 10, 4 << 10);
        let a = budget.share();
        let held = a.try_charge(Purpose::Messages, 2000).unwrap();
        let waiting = tokio::spawn({
            let a = a.clone();
            async move { a.charge(Purpose::Messages, 1000).await.bytes() }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(held);
        assert_eq!(waiting.await.unwrap(), 1000);
        // More than a connection's pool is capped to it, so it can be served.
        assert_eq!(a.charge(Purpose::Messages, 1 << 20).await.bytes(), 2048);
    }
}
