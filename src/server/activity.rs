//! What a connection is doing, for the admission and the idle timeout:
//! the calls open on it ([`Tracked`], [`CallBody`]), and the pace of their
//! request bodies ([`Paced`]).
//!
//! A call is open from its request head until its response body is done
//! or dropped (the stream ended or was reset). A connection with no call
//! open is idle; one whose calls make no progress (no request message
//! arrives whole) is no better, and the admission ranks both so (see
//! `admission.rs`).
//!
//! The pace: a request body the server is waiting for must come at
//! `--min-request-body-rate` bytes per second once `--request-body-grace-secs`
//! has passed, as Apache's mod_reqtimeout asks (`body=10,MinRate=1024`). The
//! clock runs only while the server waits: a body the server is not
//! reading (the request budget full, a stream's window of messages busy)
//! owes nothing. A unary call's body owes from its head to its end; a
//! client stream (SolveBatch, reflection over gRPC) owes from a message's
//! first byte to its last, and nothing between messages, when a client
//! may well have nothing to send. A body too slow fails its call with
//! UNAVAILABLE, and the connection is told to close (GOAWAY): a trickle a
//! byte at a time must not hold a connection slot.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use tonic::codegen::Service;
use tonic::codegen::http::{Request, Response};

use super::admission::Activity;
use crate::service::SOLVE_BATCH_PATH;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The minimum pace of request bodies (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pace {
    /// Bytes per second; 0: no minimum.
    pub(super) min_rate: u64,
    /// Waiting allowed before the rate applies.
    pub(super) grace: Duration,
}

impl Pace {
    /// How long the server may have waited for a body that has sent
    /// `received` bytes so far.
    fn allowance(&self, received: u64) -> Duration {
        self.grace + Duration::from_secs_f64(received as f64 / self.min_rate as f64)
    }
}

/// Methods whose request is a stream of messages (the rest take one).
fn client_streams(path: &str) -> bool {
    path == SOLVE_BATCH_PATH || path.ends_with("ServerReflection/ServerReflectionInfo")
}

/// A connection's service, its calls counted open and their bodies paced.
#[derive(Clone)]
pub(super) struct Tracked<S> {
    pub(super) inner: S,
    pub(super) activity: Activity,
    pub(super) pace: Pace,
}

impl<S, B, R> Service<Request<B>> for Tracked<S>
where
    S: Service<Request<Paced<B>>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Send + 'static,
{
    type Response = Response<CallBody<R>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let open = OpenCall::new(self.activity.clone());
        // gRPC-Web has no client streams: its body is one message.
        let framed = client_streams(request.uri().path())
            && request
                .headers()
                .get("content-type")
                .is_some_and(|t| !t.as_bytes().starts_with(b"application/grpc-web"));
        let (parts, body) = request.into_parts();
        let body = Paced::new(body, self.pace, self.activity.clone(), framed);
        let answered = self.inner.call(Request::from_parts(parts, body));
        Box::pin(async move {
            let response = answered.await?;
            Ok(response.map(|inner| CallBody { inner, _open: open }))
        })
    }
}

/// One open call: counted on its connection until dropped.
struct OpenCall(Activity);

impl OpenCall {
    fn new(activity: Activity) -> OpenCall {
        activity.call_opened();
        OpenCall(activity)
    }
}

impl Drop for OpenCall {
    fn drop(&mut self) {
        self.0.call_closed();
    }
}

/// A response body that keeps its call open until it is done or dropped.
pub(super) struct CallBody<R> {
    inner: R,
    _open: OpenCall,
}

impl<R: Body + Unpin> Body for CallBody<R> {
    type Data = R::Data;
    type Error = R::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that must keep a minimum pace (see the module docs).
pub(super) struct Paced<B> {
    inner: B,
    pace: Pace,
    activity: Activity,
    /// A client stream's framing; `None`: the whole body is owed.
    framing: Option<Framing>,
    /// The body owes bytes now.
    owed: bool,
    /// Bytes received since it began to owe.
    received: u64,
    /// Time waited since it began to owe, up to `waiting_since`.
    waited: Duration,
    /// The server has been waiting since then.
    waiting_since: Option<Instant>,
    /// When the wait runs out; made the first time the server waits.
    timer: Option<Pin<Box<Sleep>>>,
    failed: bool,
}

/// Where a client stream is in the gRPC framing of its messages: a 5-byte
/// prefix (a flag, a big-endian u32 length), then the message.
#[derive(Debug, Default, Clone, Copy)]
struct Framing {
    head: [u8; 5],
    head_len: usize,
    rest: u64,
}

impl<B> Paced<B> {
    fn new(inner: B, pace: Pace, activity: Activity, framed: bool) -> Paced<B> {
        Paced {
            inner,
            pace,
            activity,
            framing: framed.then(Framing::default),
            owed: !framed,
            received: 0,
            waited: Duration::ZERO,
            waiting_since: None,
            timer: None,
            failed: false,
        }
    }

    /// Follows bytes received.
    fn received(&mut self, mut bytes: &[u8]) {
        let Some(framing) = &mut self.framing else {
            self.received += bytes.len() as u64;
            return;
        };
        while !bytes.is_empty() {
            if !self.owed {
                // A message begins.
                self.owed = true;
                self.received = 0;
                self.waited = Duration::ZERO;
            }
            let n = if framing.head_len < framing.head.len() {
                let n = (framing.head.len() - framing.head_len).min(bytes.len());
                framing.head[framing.head_len..framing.head_len + n].copy_from_slice(&bytes[..n]);
                framing.head_len += n;
                if framing.head_len == framing.head.len() {
                    let [_, l0, l1, l2, l3] = framing.head;
                    framing.rest = u64::from(u32::from_be_bytes([l0, l1, l2, l3]));
                }
                n
            } else {
                let n = framing.rest.min(bytes.len() as u64) as usize;
                framing.rest -= n as u64;
                n
            };
            bytes = &bytes[n..];
            self.received += n as u64;
            if framing.head_len == framing.head.len() && framing.rest == 0 {
                // The message is whole.
                *framing = Framing::default();
                self.owed = false;
                self.activity.progressed();
            }
        }
    }

    /// The body ended: whatever it owed came.
    fn ended(&mut self) {
        if self.owed {
            self.owed = false;
            self.activity.progressed();
        }
    }

    /// The server waits for more: Ready when the body is too slow.
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.owed || self.pace.min_rate == 0 {
            return Poll::Pending;
        }
        let now = Instant::now();
        let since = *self.waiting_since.get_or_insert(now);
        let allowed = self.pace.allowance(self.received);
        let Some(left) = allowed.checked_sub(self.waited) else {
            return Poll::Ready(());
        };
        let deadline = since + left;
        if deadline <= now {
            return Poll::Ready(());
        }
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx)
    }
}

impl<B> Body for Paced<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        let polled = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => {
                ready!(this.poll_wait(cx));
                this.failed = true;
                this.activity.slow_body();
                let status = tonic::Status::unavailable(format!(
                    "the request body came slower than {} bytes/s after the first {} s; \
                     the server closes the connection",
                    this.pace.min_rate,
                    this.pace.grace.as_secs()
                ));
                return Poll::Ready(Some(Err(Box::new(status))));
            }
            Poll::Ready(polled) => polled,
        };
        if let Some(since) = this.waiting_since.take() {
            this.waited += since.elapsed();
        }
        match polled {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.received(data);
                }
                if this.inner.is_end_stream() {
                    this.ended();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(e.into()))),
            None => {
                this.ended();
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::admission::SLOW_BODY;
    use http_body_util::{BodyExt, StreamBody};
    use tokio::sync::mpsc;
    use tokio_stream::wrappers::ReceiverStream;

    type Sent = Result<Frame<Bytes>, std::convert::Infallible>;

    fn paced(
        framed: bool,
    ) -> (
        mpsc::Sender<Sent>,
        Paced<StreamBody<ReceiverStream<Sent>>>,
        Activity,
        super::super::admission::Ticket,
    ) {
        let (tx, rx) = mpsc::channel(4);
        let (ticket, activity) = Activity::for_tests();
        let pace = Pace {
            min_rate: 1024,
            grace: Duration::from_millis(100),
        };
        let body = Paced::new(
            StreamBody::new(ReceiverStream::new(rx)),
            pace,
            activity.clone(),
            framed,
        );
        (tx, body, activity, ticket)
    }

    fn data(bytes: &[u8]) -> Sent {
        Ok(Frame::data(Bytes::copy_from_slice(bytes)))
    }

    #[tokio::test]
    async fn a_stream_owes_nothing_between_messages_and_is_useful_once_one_is_whole() {
        let (tx, mut body, activity, _ticket) = paced(true);
        tx.send(data(&[0, 0, 0, 0, 3, 1])).await.unwrap();
        body.frame().await.unwrap().unwrap();
        assert!(!activity.was_useful(), "half a message");
        tx.send(data(&[2, 3])).await.unwrap();
        body.frame().await.unwrap().unwrap();
        assert!(activity.was_useful(), "the message is whole");
        // Quiet between messages for three times the grace: no failure.
        let quiet = tokio::time::timeout(Duration::from_millis(300), body.frame()).await;
        assert!(quiet.is_err(), "{quiet:?}");
        assert_eq!(activity.told_bits(), 0);
    }

    #[tokio::test]
    async fn a_message_begun_and_not_finished_fails_after_the_grace() {
        let (tx, mut body, activity, _ticket) = paced(true);
        tx.send(data(&[0, 0, 0, 0, 100])).await.unwrap();
        body.frame().await.unwrap().unwrap();
        let failed = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("failed within 5 s")
            .unwrap()
            .unwrap_err();
        let status = failed.downcast::<tonic::Status>().unwrap();
        assert_eq!(status.code(), tonic::Code::Unavailable);
        assert_eq!(activity.told_bits(), SLOW_BODY);
        drop(tx);
    }

    #[tokio::test]
    async fn a_unary_body_owes_from_its_head_and_is_useful_at_its_end() {
        let (tx, mut body, activity, _ticket) = paced(false);
        tx.send(data(&[0, 0, 0, 0, 1, 7])).await.unwrap();
        body.frame().await.unwrap().unwrap();
        drop(tx);
        assert!(body.frame().await.is_none());
        assert!(activity.was_useful());
        let (_tx, mut body, activity, _ticket) = paced(false);
        let failed = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("failed within 5 s");
        assert!(matches!(failed, Some(Err(_))), "{failed:?}");
        assert_eq!(activity.told_bits(), SLOW_BODY);
    }

    #[test]
    fn the_allowance_grows_with_the_bytes_received() {
        let pace = Pace {
            min_rate: 1000,
            grace: Duration::from_secs(10),
        };
        assert_eq!(pace.allowance(0), Duration::from_secs(10));
        assert_eq!(pace.allowance(5000), Duration::from_secs(15));
    }

    #[test]
    fn only_client_streams_are_followed_message_by_message() {
        assert!(client_streams(SOLVE_BATCH_PATH));
        assert!(client_streams(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
        ));
        assert!(!client_streams("/sudoku.v1.SudokuService/Solve"));
        assert!(!client_streams("/sudoku.v1.SudokuService/SolveStream"));
    }
}
