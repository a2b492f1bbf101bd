//! Batching for `sudoku solve --server`: the input's records read into
//! SolveBatch request messages, small ones first, queued for the feeds on
//! one bounded channel.

use std::io::Read;
use std::sync::Arc;

use super::answer::Meta;
use super::input::{ReadEnd, Records, Waits, Work};
use super::printer::Msg;
use super::sized::Grids;
use super::window::Window;
use super::wire::{Item, Request};
use sudoku_grpc::pb;

/// The reading side of a run through servers: records read into request
/// messages of [`message_size`] puzzles, queued at most `queue` deep on
/// `outbox`, the receiver the streams draw from. Closing it stops the
/// reading.
pub(super) struct Reading {
    records: Records,
    batcher: Batcher,
    window: Arc<Window>,
}

impl Reading {
    /// The reading of `input`, and the queue its messages go to.
    pub(super) fn new(
        input: Box<dyn Read + Send>,
        grids: Grids,
        window: Arc<Window>,
        to_writer: async_channel::Sender<Msg>,
        batch: usize,
        queue: usize,
        options: Option<pb::SolveOptions>,
    ) -> (Reading, async_channel::Receiver<Request>) {
        let (requests, outbox) = async_channel::bounded::<Request>(queue);
        let reading = Reading {
            records: Records::new(input, grids),
            batcher: Batcher {
                // Sized for the message being filled: the first ones are
                // small, and a new thread's heap grows a system call at a
                // time.
                items: Vec::with_capacity(message_size(batch, 0)),
                sent: Vec::with_capacity(message_size(batch, 0)),
                messages: 0,
                batch,
                requests,
                to_writer,
                options,
            },
            window,
        };
        (reading, outbox)
    }

    /// Reads the first message on this thread, never waiting for a place
    /// in the window (the writer may not have started); `None` once the
    /// input is all read (the queue is closed then).
    pub(super) fn first_here(mut self) -> Option<Reading> {
        let batcher = &mut self.batcher;
        let read = self
            .records
            .read(&self.window, &batcher.to_writer.clone(), Waits::No, |w| {
                batcher.take(w) && batcher.messages == 0
            });
        (read == ReadEnd::Stopped).then_some(self)
    }

    /// Reads the rest on a thread of its own.
    pub(super) fn go_on(self) {
        let Reading {
            mut records,
            mut batcher,
            window,
        } = self;
        std::thread::spawn(move || {
            let to_writer = batcher.to_writer.clone();
            records.read(&window, &to_writer, Waits::Yes, |w| batcher.take(w));
        });
    }
}

/// Puts read puzzles into request messages.
struct Batcher {
    items: Vec<Item>,
    sent: Vec<(u64, Meta)>,
    /// Messages sent so far.
    messages: usize,
    batch: usize,
    requests: async_channel::Sender<Request>,
    to_writer: async_channel::Sender<Msg>,
    options: Option<pb::SolveOptions>,
}

impl Batcher {
    /// Takes a puzzle, sending the message it fills (or, when the input
    /// has nothing buffered, the part filled); false once nothing more can
    /// be sent.
    fn take(&mut self, w: Work) -> bool {
        match w {
            Work::Puzzle(seq, meta, g) => {
                self.sent.push((seq, meta));
                self.items.push(Item { id: seq, grid: g });
                if self.items.len() < message_size(self.batch, self.messages) {
                    return true;
                }
            }
            Work::Idle if self.items.is_empty() => return true,
            Work::Idle => {}
        }
        self.messages += 1;
        let next = message_size(self.batch, self.messages);
        // The writer learns of the puzzles before their answers can come.
        let metas = std::mem::replace(&mut self.sent, Vec::with_capacity(next));
        if self.to_writer.send_blocking(Msg::Sent(metas)).is_err() {
            return false;
        }
        let items = std::mem::replace(&mut self.items, Vec::with_capacity(next));
        self.requests
            .send_blocking(Request {
                items,
                options: self.options,
            })
            .is_ok()
    }
}

/// Request messages at the start of a run that carry a quarter of
/// `--batch` puzzles each, at most [`SMALL_MESSAGE`].
const SMALL_MESSAGES: usize = 8;
const SMALL_MESSAGE: usize = 64;

/// Puzzles in request message number `sent` (from 0) of a run. The first
/// [`SMALL_MESSAGES`] carry 64 puzzles (or a quarter of a smaller `batch`):
/// the server starts on the first while the rest is read, the first
/// answers come back early, and a small file is several messages, which a
/// server solves side by side even where it does not share one message
/// out over its solver threads (older servers, and grids of other sizes).
/// A long run pays a few wake-ups more.
fn message_size(batch: usize, sent: usize) -> usize {
    if sent < SMALL_MESSAGES {
        (batch / 4).clamp(1, SMALL_MESSAGE)
    } else {
        batch
    }
}
