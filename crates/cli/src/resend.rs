//! What a SolveBatch stream was given and has not had answered, so that a
//! stream lost with its server can hand those items to a new stream on the
//! balanced channel.
//!
//! Each call of a stream draws its request messages through a [`Source`]:
//! first the items an earlier call of the same stream left unanswered,
//! then messages from the queue every stream shares. Every item it hands
//! to tonic is noted in the call's [`Tracker`] before it leaves, and struck
//! off when its answer comes. When the call fails, the stream closes the
//! tracker and takes what is left: closing and taking happen under the
//! tracker's lock, the same lock the source holds while it takes a message
//! from the queue, so a message is either in what is left or still in the
//! queue, never lost between a dead call and a new one.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::Stream;

use super::wire::{Item, Request};
use sudoku_grpc::pb;

/// Hashes the ids of one run, which are its input's sequence numbers:
/// one multiply, where the default hasher's SipHash cost more than the
/// table itself.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The items a call has sent and not had answered.
#[derive(Default)]
pub struct Tracker {
    pending: HashMap<u64, Item, BuildHasherDefault<IdHasher>>,
    /// Set when the call is given up: its source takes nothing more.
    closed: bool,
}

/// A call's tracker, shared between the call's source and its stream.
#[derive(Clone, Default)]
pub struct Shared(Arc<Mutex<Tracker>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Tracker> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Strikes off answered items.
    pub fn answered(&self, ids: impl Iterator<Item = u64>) {
        let mut t = self.lock();
        for id in ids {
            t.pending.remove(&id);
        }
    }

    /// Gives the call up: its source takes nothing more from the queue,
    /// and the items it left unanswered are returned in input order.
    pub fn close(&self) -> Vec<Item> {
        let mut t = self.lock();
        t.closed = true;
        let mut left: Vec<Item> = t.pending.drain().map(|(_, item)| item).collect();
        left.sort_unstable_by_key(|item| item.id);
        left
    }
}

/// The most items a request message may carry: the run's `--batch` until
/// a server says it takes fewer (`TOO_MANY_ITEMS`), then what it takes.
/// Shared by every stream of a run.
#[derive(Clone)]
pub struct Cap(Arc<AtomicUsize>);

impl Cap {
    /// A cap of `batch` items.
    pub fn new(batch: usize) -> Cap {
        Cap(Arc::new(AtomicUsize::new(batch.max(1))))
    }

    /// The cap now.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Lowers the cap to `max` (never raises it); true when it was higher.
    pub fn lower_to(&self, max: usize) -> bool {
        self.0.fetch_min(max.max(1), Ordering::Relaxed) > max.max(1)
    }
}

/// The request messages of one call: the items `again` first, in messages
/// of at most the cap, then the shared queue until it ends (a message of
/// it above the cap is sent in parts).
pub(super) struct Source {
    again: VecDeque<Request>,
    // Boxed: a receiver is not `Unpin`.
    queue: Pin<Box<async_channel::Receiver<Request>>>,
    tracker: Shared,
    cap: Cap,
}

impl Source {
    /// A source for a new call; `again` (the items an earlier call left
    /// unanswered) counts as sent from the start, so they are not lost if
    /// this call fails before it sends them.
    pub fn new(
        again: Vec<Item>,
        cap: Cap,
        options: Option<pb::SolveOptions>,
        queue: async_channel::Receiver<Request>,
    ) -> (Source, Shared) {
        let tracker = Shared::default();
        let mut messages = VecDeque::new();
        {
            let mut t = tracker.lock();
            let mut items = again.into_iter().peekable();
            while items.peek().is_some() {
                let chunk: Vec<Item> = items.by_ref().take(cap.get()).collect();
                for item in &chunk {
                    t.pending.insert(item.id, item.clone());
                }
                messages.push_back(Request {
                    items: chunk,
                    options,
                });
            }
        }
        let source = Source {
            again: messages,
            queue: Box::pin(queue),
            tracker: tracker.clone(),
            cap,
        };
        (source, tracker)
    }
}

impl Stream for Source {
    type Item = Request;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let mut t = this.tracker.lock();
        if t.closed {
            return Poll::Ready(None);
        }
        if let Some(message) = this.again.pop_front() {
            return Poll::Ready(Some(message));
        }
        // Taken from the queue and noted under one lock (see the module
        // docs); the poll itself does not wait.
        match this.queue.as_mut().poll_next(cx) {
            Poll::Ready(Some(mut message)) => {
                for item in &message.items {
                    t.pending.insert(item.id, item.clone());
                }
                let cap = this.cap.get();
                if message.items.len() > cap {
                    // The parts after the first wait in `again`, noted as
                    // sent already.
                    let rest = message.items.split_off(cap);
                    for part in rest.chunks(cap) {
                        this.again.push_back(Request {
                            items: part.to_vec(),
                            options: message.options,
                        });
                    }
                }
                Poll::Ready(Some(message))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn item(id: u64) -> Item {
        Item {
            id,
            grid: crate::answer::Puzzle::Nine(sudoku_core::puzzle::Grid::EMPTY),
        }
    }

    #[tokio::test]
    async fn items_left_over_come_first_and_a_closed_source_takes_nothing() {
        let (tx, rx) = async_channel::bounded(4);
        tx.send(Request {
            items: vec![item(7), item(8)],
            options: None,
        })
        .await
        .unwrap();
        tx.send(Request {
            items: vec![item(9)],
            options: None,
        })
        .await
        .unwrap();
        let (mut source, tracker) =
            Source::new(vec![item(2), item(3), item(5)], Cap::new(2), None, rx);
        let ids =
            |m: Option<Request>| -> Vec<u64> { m.unwrap().items.iter().map(|i| i.id).collect() };
        assert_eq!(ids(source.next().await), [2, 3]);
        assert_eq!(ids(source.next().await), [5]);
        assert_eq!(ids(source.next().await), [7, 8]);
        tracker.answered([3, 7].into_iter());
        let left: Vec<u64> = tracker.close().iter().map(|i| i.id).collect();
        assert_eq!(left, [2, 5, 8], "sent and unanswered, in input order");
        assert!(source.next().await.is_none(), "closed: takes no more");
        assert_eq!(tx.len(), 1, "the last message stays for another stream");
    }

    #[tokio::test]
    async fn a_message_above_the_cap_goes_in_parts_all_noted_as_sent() {
        let (tx, rx) = async_channel::bounded(4);
        tx.send(Request {
            items: (10..17).map(item).collect(),
            options: None,
        })
        .await
        .unwrap();
        drop(tx);
        let cap = Cap::new(8);
        assert!(cap.lower_to(3));
        assert!(!cap.lower_to(5), "a cap is never raised");
        let (mut source, tracker) = Source::new(vec![item(1)], cap, None, rx);
        let ids =
            |m: Option<Request>| -> Vec<u64> { m.unwrap().items.iter().map(|i| i.id).collect() };
        assert_eq!(ids(source.next().await), [1]);
        assert_eq!(ids(source.next().await), [10, 11, 12]);
        // Lost now: the parts not yet sent are handed on too.
        let left: Vec<u64> = tracker.close().iter().map(|i| i.id).collect();
        assert_eq!(left, [1, 10, 11, 12, 13, 14, 15, 16]);
    }
}
