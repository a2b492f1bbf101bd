//! Request bodies charged to their connection's [`Share`] of the request
//! budget, so that no client can make the server hold more request bytes
//! than its share, and all clients together no more than the budget.
//!
//! tonic buffers a request message until its last byte has arrived, and
//! reserves the length its 5-byte gRPC prefix claims as soon as it reads
//! the prefix; it keeps that buffer for the rest of the request. HTTP/2 flow
//! control does not bound this: hyper returns flow-control credit to the
//! sender as soon as tonic takes a DATA chunk out of the body. So
//! [`Metered`] reads the gRPC framing of the bytes it passes up, and before
//! it passes up a prefix it holds the claimed length in the receive pool
//! ([`Purpose::Buffers`]) of the share. When the share or the budget has
//! not got the bytes free it does not read on: the chunk waits in the
//! wrapper, hyper returns no credit, and the sender stalls at the
//! stream's HTTP/2 window.
//!
//! The charge is the largest message the body has carried (plus room for
//! a decompressed copy once a compressed message completed before the
//! body's end, as tonic keeps that buffer too), and it is released when the
//! body is dropped: that is when tonic frees its buffers. A message that
//! claims more than `--max-message-bytes` fails the call at once with
//! OUT_OF_RANGE, as tonic answers it.
//!
//! The answers go the other way: a unary handler charges its answer to the
//! same share ([`AnswerCharge`], in the messages pool) before it makes it,
//! and [`AnswerHeld`] keeps that charge in the response body until hyper
//! drops the body, which it does once it has handed the last bytes to
//! HTTP/2 (a client that does not read leaves the body unfinished, and the
//! charge held). The streams charge their responses themselves
//! (`service/stream.rs`).
//!
//! The same framing counts the messages. A call that takes one request
//! message (any that is not client-streaming, see
//! [`crate::service::takes_one_message`]) fails with INTERNAL when the
//! prefix of a second one arrives, as grpc-go answers it: tonic would read
//! the first, drop the rest, and answer OK.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use hyper::body::{Body, Bytes, Frame, SizeHint};

use crate::service::{AnswerCharge, Charge, Purpose, Share};

/// The error type of [`Metered`]: the inner body's, or a `tonic::Status`,
/// which tonic's decoder finds in it and answers as it is.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body whose received messages are charged to a connection's
/// [`Share`] (see the module docs).
pub(super) struct Metered<B> {
    inner: B,
    share: Share,
    max_message: usize,
    /// The framing of the bytes passed up so far.
    framing: Framing,
    /// What the body holds: [`Framing::need`] of `framing`.
    held: Option<Charge>,
    /// A chunk read but not passed up yet, with the framing after it, and
    /// the charge it waits for.
    parked: Option<Parked>,
    /// The body failed (a message over the limit): it ends.
    failed: bool,
}

struct Parked {
    chunk: Bytes,
    framing: Framing,
    charge: Pin<Box<dyn Future<Output = Charge> + Send>>,
}

impl<B> Metered<B> {
    /// `inner`, charged to `share`; messages over `max_message` bytes fail,
    /// and so does a second message when `one_message`.
    pub(super) fn new(inner: B, share: Share, max_message: usize, one_message: bool) -> Metered<B> {
        Metered {
            inner,
            share,
            max_message,
            framing: Framing {
                one_message,
                ..Framing::default()
            },
            held: None,
            parked: None,
            failed: false,
        }
    }

    fn held(&self) -> usize {
        self.held.as_ref().map_or(0, Charge::bytes)
    }

    fn absorb(&mut self, charge: Charge) {
        match &mut self.held {
            Some(held) => held.absorb(charge),
            None => self.held = Some(charge),
        }
    }
}

impl<B> Body for Metered<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Some(parked) = &mut this.parked {
            let charge = ready!(parked.charge.as_mut().poll(cx));
            let Some(parked) = this.parked.take() else {
                return Poll::Ready(None); // unreachable: matched above
            };
            this.absorb(charge);
            this.framing = parked.framing;
            return Poll::Ready(Some(Ok(Frame::data(parked.chunk))));
        }
        if this.failed {
            return Poll::Ready(None);
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            None => return Poll::Ready(None),
            Some(Err(e)) => return Poll::Ready(Some(Err(e.into()))),
            Some(Ok(frame)) => frame,
        };
        let chunk = match frame.into_data() {
            Ok(chunk) => chunk,
            Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
        };
        let mut framing = this.framing;
        if let Err(status) = framing.scan(&chunk, this.max_message) {
            this.failed = true;
            return Poll::Ready(Some(Err(Box::new(status))));
        }
        // tonic keeps the decompressed copy of a message for the rest of
        // the body; the last message of a body is decoded as it ends.
        if framing.completed_compressed && !this.inner.is_end_stream() {
            framing.room = true;
        }
        let need = framing.need(this.max_message).min(this.share.capacity());
        let held = this.held();
        if need > held {
            let more = need - held;
            match this.share.try_charge(Purpose::Buffers, more) {
                Some(charge) => this.absorb(charge),
                None => {
                    // The chunk is copied so that it does not keep alive the
                    // larger read buffer it may be a slice of.
                    let share = this.share.clone();
                    this.parked = Some(Parked {
                        chunk: Bytes::copy_from_slice(&chunk),
                        framing,
                        charge: Box::pin(async move { share.charge(Purpose::Buffers, more).await }),
                    });
                    return Pin::new(this).poll_frame(cx);
                }
            }
        }
        this.framing = framing;
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.parked.is_none() && (self.failed || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        match &self.parked {
            None => self.inner.size_hint(),
            Some(_) => SizeHint::default(),
        }
    }
}

/// A response body that holds its answer's charge until it is dropped.
pub(super) struct AnswerHeld {
    inner: tonic::body::Body,
    _charge: AnswerCharge,
}

impl AnswerHeld {
    pub(super) fn new(inner: tonic::body::Body, charge: AnswerCharge) -> AnswerHeld {
        AnswerHeld {
            inner,
            _charge: charge,
        }
    }
}

impl Body for AnswerHeld {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Where a body is in the gRPC framing of its messages (a 5-byte prefix:
/// a compressed flag and a big-endian u32 length; then that many bytes),
/// and what it has carried so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Framing {
    /// Bytes of the current message's payload still to come.
    rest: usize,
    /// The prefix of the next message, as far as it has come.
    head: [u8; 5],
    head_len: u8,
    /// The current message is compressed.
    compressed: bool,
    /// The largest length claimed so far.
    largest: usize,
    /// A compressed message completed before the body's end.
    room: bool,
    /// A compressed message completed in the last chunk scanned.
    completed_compressed: bool,
    /// The body may carry one message only.
    one_message: bool,
    /// A message's prefix has been read.
    seen_one: bool,
}

impl Framing {
    /// Follows `chunk`'s bytes through the framing: a few operations per
    /// message, none per payload byte. Fails when a prefix claims more than
    /// `max_message` bytes, or is a second one where one is allowed.
    fn scan(&mut self, mut chunk: &[u8], max_message: usize) -> Result<(), tonic::Status> {
        self.completed_compressed = false;
        loop {
            if self.rest > 0 {
                let take = self.rest.min(chunk.len());
                self.rest -= take;
                chunk = &chunk[take..];
                if self.rest > 0 {
                    return Ok(());
                }
                self.completed_compressed |= self.compressed;
            }
            if chunk.is_empty() {
                return Ok(());
            }
            let have = usize::from(self.head_len);
            let take = (5 - have).min(chunk.len());
            self.head[have..have + take].copy_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if have + take < 5 {
                self.head_len = (have + take) as u8;
                return Ok(());
            }
            self.head_len = 0;
            if self.one_message && self.seen_one {
                return Err(crate::service::second_message());
            }
            self.seen_one = true;
            let [flag, l0, l1, l2, l3] = self.head;
            let claim = u32::from_be_bytes([l0, l1, l2, l3]) as usize;
            if claim > max_message {
                // tonic's own words for a message over its limit.
                return Err(crate::service::message_too_large(
                    format!(
                        "Error, decoded message length too large: found {claim} bytes, the limit is: {max_message} bytes"
                    ),
                    max_message,
                ));
            }
            self.compressed = flag == 1;
            self.largest = self.largest.max(claim);
            self.rest = claim;
        }
    }

    /// Bytes a body at this point holds in tonic's buffers at most: its
    /// largest message, and a decompressed copy of up to `max_message`.
    fn need(&self, max_message: usize) -> usize {
        self.largest + if self.room { max_message } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::convert::Infallible;
    use std::time::Duration;

    use super::*;
    use crate::service::Budget;

    fn prefix(compressed: bool, len: u32) -> Vec<u8> {
        let mut p = vec![u8::from(compressed)];
        p.extend_from_slice(&len.to_be_bytes());
        p
    }

    /// A body of `chunks`, one frame each.
    struct Chunks(VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready(self.0.pop_front().map(|c| Ok(Frame::data(c))))
        }

        fn is_end_stream(&self) -> bool {
            self.0.is_empty()
        }
    }

    fn metered(chunks: Vec<Vec<u8>>, share: &Share, max_message: usize) -> Metered<Chunks> {
        let chunks = Chunks(chunks.into_iter().map(Bytes::from).collect());
        Metered::new(chunks, share.clone(), max_message, false)
    }

    async fn next(b: &mut Metered<Chunks>) -> Option<Result<Frame<Bytes>, BoxError>> {
        std::future::poll_fn(|cx| Pin::new(&mut *b).poll_frame(cx)).await
    }

    async fn next_len(b: &mut Metered<Chunks>) -> usize {
        match next(b).await {
            Some(Ok(frame)) => frame.into_data().map_or(0, |d| d.len()),
            other => panic!("expected data, got {other:?}"),
        }
    }

    #[test]
    fn framing_follows_messages_split_anywhere() {
        let mut wire = prefix(false, 3);
        wire.extend_from_slice(b"abc");
        wire.extend(prefix(false, 0));
        wire.extend(prefix(true, 10));
        wire.extend_from_slice(&[7; 10]);
        wire.extend(prefix(false, 700));
        wire.extend_from_slice(&[1; 100]);
        for cut in 0..wire.len() {
            let mut f = Framing::default();
            f.scan(&wire[..cut], 1000).unwrap();
            let first = f.completed_compressed;
            f.scan(&wire[cut..], 1000).unwrap();
            assert_eq!(f.rest, 600, "cut at {cut}");
            assert_eq!(f.largest, 700);
            assert!(first || f.completed_compressed, "cut at {cut}");
        }
    }

    #[test]
    fn a_claim_over_the_limit_fails_with_out_of_range() {
        let mut f = Framing::default();
        let status = f.scan(&prefix(false, 1001), 1000).unwrap_err();
        assert_eq!(status.code(), tonic::Code::OutOfRange);
        assert!(status.message().contains("found 1001 bytes"), "{status:?}");
        assert!(Framing::default().scan(&prefix(false, 1000), 1000).is_ok());
    }

    #[test]
    fn a_second_message_fails_a_call_that_takes_one() {
        let mut wire = prefix(false, 3);
        wire.extend_from_slice(b"abc");
        wire.extend(prefix(false, 0));
        for cut in 0..wire.len() {
            let mut f = Framing {
                one_message: true,
                ..Framing::default()
            };
            let status = f
                .scan(&wire[..cut], 1000)
                .and_then(|()| f.scan(&wire[cut..], 1000))
                .unwrap_err();
            assert_eq!(status.code(), tonic::Code::Internal, "cut at {cut}");
            assert!(status.message().contains("cardinality violation"));
        }
        // One message, or a stream of them where streams are allowed.
        let mut one = Framing {
            one_message: true,
            ..Framing::default()
        };
        assert!(one.scan(&wire[..8], 1000).is_ok());
        assert!(Framing::default().scan(&wire, 1000).is_ok());
    }

    #[tokio::test]
    async fn a_body_holds_its_largest_message_until_dropped() {
        let share = Budget::new(1 << 20, 64 << 10).share();
        let mut wire = prefix(false, 5000);
        wire.extend_from_slice(&[0; 5000]);
        wire.extend(prefix(false, 100));
        wire.extend_from_slice(&[0; 100]);
        let mut b = metered(vec![wire], &share, 10_000);
        assert_eq!(next_len(&mut b).await, 5000 + 100 + 10);
        assert_eq!(share.available(Purpose::Buffers), (32 << 10) - 5000);
        assert!(next(&mut b).await.is_none());
        drop(b);
        assert_eq!(share.available(Purpose::Buffers), 32 << 10);
    }

    #[tokio::test]
    async fn a_message_that_does_not_fit_waits_without_reading_on() {
        let share = Budget::new(1 << 20, 16 << 10).share();
        let hog = share.try_charge(Purpose::Buffers, 6000).unwrap();
        let mut wire = prefix(false, 4000);
        wire.extend_from_slice(&[0; 10]);
        let mut b = metered(vec![wire, vec![0; 100]], &share, 10_000);
        let first = tokio::time::timeout(Duration::from_millis(50), next(&mut b)).await;
        assert!(first.is_err(), "passed a message the share cannot hold");
        assert_eq!(b.inner.0.len(), 1, "read on while waiting");
        drop(hog);
        assert_eq!(next_len(&mut b).await, 15);
        assert_eq!(share.available(Purpose::Buffers), (8 << 10) - 4000);
        assert_eq!(next_len(&mut b).await, 100);
    }

    #[tokio::test]
    async fn a_compressed_message_before_the_end_holds_room_for_its_copy() {
        let share = Budget::new(1 << 20, 64 << 10).share();
        let mut wire = prefix(true, 10);
        wire.extend_from_slice(&[0; 10]);
        let mut b = metered(vec![wire.clone(), vec![]], &share, 8000);
        next_len(&mut b).await;
        assert_eq!(share.available(Purpose::Buffers), (32 << 10) - 8010);
        // The last message of a body needs no room: tonic decodes it as
        // the body ends.
        let mut b = metered(vec![wire], &share, 8000);
        next_len(&mut b).await;
        assert_eq!(share.available(Purpose::Buffers), (32 << 10) - 8010 - 10);
    }

    #[tokio::test]
    async fn an_answer_holds_its_charge_until_its_body_is_dropped() {
        use http_body_util::BodyExt as _;
        let share = Budget::new(1 << 20, 64 << 10).share();
        let charge = AnswerCharge::new(share.try_charge(Purpose::Messages, 1000).unwrap());
        let answer = http_body_util::Full::new(Bytes::from_static(b"answer"));
        let mut body = AnswerHeld::new(tonic::body::Body::new(answer), charge);
        let frame = body.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), "answer");
        assert_eq!(share.available(Purpose::Messages), (32 << 10) - 1000);
        drop(body);
        assert_eq!(share.available(Purpose::Messages), 32 << 10);
    }

    #[tokio::test]
    async fn an_oversized_claim_fails_the_body_with_a_status() {
        let share = Budget::new(1 << 20, 64 << 10).share();
        let mut b = metered(vec![prefix(false, 9000)], &share, 8000);
        let Some(Err(err)) = next(&mut b).await else {
            panic!("an oversized claim passed");
        };
        let status = tonic::Status::from_error(err);
        assert_eq!(status.code(), tonic::Code::OutOfRange);
        assert!(next(&mut b).await.is_none());
    }
}
