//! One accepted connection's life: HTTP/2 (or HTTP/1.1, for gRPC-Web)
//! served until the peer leaves, or
//! until a GOAWAY (on drain, old age or idleness) and its grace period are
//! over, and then a lingering close of the socket; or until it is closed
//! to make room or for a request body too slow.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::TryFutureExt as _;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Edge;
use super::activity::{Pace, Tracked};
use super::admission::{EVICTED, SLOW_BODY, Ticket};
use super::budget::AnswerHeld;
use super::budget::Metered;
use super::cors::{Cors, Origins};
use super::deadlines::Deadlines;
use super::grpc_web::GrpcWeb;
use super::web_page::WebPage;
use crate::service::{AnswerCharge, SERVICE_PATH_PREFIX, Share, Tenant};
use crate::telemetry::metrics::ConnectionClosed;

/// How old a connection must be before a drain sends it GOAWAY (see
/// `Connection::serve`).
const NEW_CONNECTION_GRACE: Duration = Duration::from_millis(100);

/// How long an idle connection told to make room has to read its GOAWAY
/// before its socket is closed.
const EVICTION_GRACE: Duration = Duration::from_millis(100);

/// How long a connection closed for a slow request body has for the
/// failed call's status and the GOAWAY to reach its client.
const SLOW_BODY_GRACE: Duration = Duration::from_secs(1);

/// One accepted connection and how to run it.
pub(super) struct Connection {
    /// Where the socket lingers after the connection ends (see [`Lingering`]).
    pub(super) lingering: TaskTracker,
    /// HTTP/2 and HTTP/1.1, whichever the client's first bytes speak.
    pub(super) http: auto::Builder<TokioExecutor>,
    pub(super) routes: Edge,
    /// The origins CORS allows (none: no CORS).
    pub(super) origins: Option<Origins>,
    /// Whether GET / and its assets are the web page's.
    pub(super) web_page: bool,
    pub(super) peer: SocketAddr,
    /// Tags every request of this connection.
    pub(super) tenant: Tenant,
    /// The connection's share of the request budget, charged by every
    /// request body; messages over `max_message` bytes fail.
    pub(super) share: Share,
    pub(super) max_message: usize,
    pub(super) stop: CancellationToken,
    pub(super) max_age: Option<Duration>,
    pub(super) age_grace: Duration,
    pub(super) drain: Duration,
    /// When the handshake must be over (see [`Deadlines`]).
    pub(super) handshake_deadline: tokio::time::Instant,
    /// How long one header block may take.
    pub(super) header_timeout: Duration,
    /// How long the connection may have no call open; `None`: for ever.
    pub(super) idle_timeout: Option<Duration>,
    /// The minimum pace of request bodies.
    pub(super) pace: Pace,
}

impl Connection {
    /// Serves HTTP/2 or HTTP/1.1 on `io` until the peer leaves, misses a deadline or
    /// is told to make room (`ticket`), or until a GOAWAY (on shutdown or
    /// old age) and its grace period are over.
    pub(super) async fn serve<I>(self, io: I, ticket: Ticket)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let Connection {
            lingering,
            http,
            routes,
            origins,
            web_page,
            peer,
            tenant,
            share,
            max_message,
            stop,
            max_age,
            age_grace,
            drain,
            handshake_deadline,
            header_timeout,
            idle_timeout,
            pace,
        } = self;
        let activity = ticket.activity();
        let timed_out = Arc::new(AtomicBool::new(false));
        let cut = Arc::new(AtomicBool::new(false));
        let io = Lingering {
            io: Some(Deadlines::new(
                io,
                ticket,
                handshake_deadline,
                header_timeout,
            )),
            tasks: lingering,
            timed_out: timed_out.clone(),
            cut: cut.clone(),
        };
        // The page's few GETs first; then CORS; then gRPC-Web is
        // translated to gRPC, so that below it the budget reads the gRPC
        // framing of decoded bytes (not base64), and every call, gRPC-Web
        // or not, is counted and answered alike.
        let service = WebPage {
            inner: Cors {
                inner: GrpcWeb::new(PerConnection {
                    routes,
                    tenant,
                    share,
                    max_message,
                }),
                origins,
            },
            on: web_page,
        };
        // Outermost, so that a call is open from its head to the end of its
        // response, whoever answers it, and the pace is of the bytes on
        // the wire.
        let service = Tracked {
            inner: service,
            activity: activity.clone(),
            pace,
        };
        let conn = http.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
        tokio::pin!(conn);
        let aged = async {
            match max_age {
                Some(age) => tokio::time::sleep(age).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(aged);
        let opened = tokio::time::Instant::now();
        let mut goaway: Option<Pin<Box<tokio::time::Sleep>>> = None;
        let mut grace: Option<Pin<Box<tokio::time::Sleep>>> = None;
        // Checked when it fires, and set again for when the connection could
        // have been idle long enough.
        let mut idle = idle_timeout.map(|t| Box::pin(tokio::time::sleep(t)));
        // What the connection was told (see `admission::Activity`) and has
        // acted on.
        let mut handled = 0u8;
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        if e.downcast_ref::<hyper::Error>().is_some_and(|e| e.is_timeout()) {
                            timed_out.store(true, Ordering::Relaxed);
                        }
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                    break;
                }
                // A connection opened moments ago (one from the backlog the
                // listener left) may carry a first call its client is
                // sending right now. A GOAWAY ahead of it fails that call
                // with a protocol error, which clients do not retry, so the
                // GOAWAY waits until the connection is NEW_CONNECTION_GRACE
                // old; meanwhile the service refuses calls with UNAVAILABLE.
                _ = stop.cancelled(), if goaway.is_none() && grace.is_none() => {
                    goaway = Some(Box::pin(tokio::time::sleep_until(opened + NEW_CONNECTION_GRACE)));
                }
                _ = async { goaway.as_mut().expect("guarded").await }, if goaway.is_some() && grace.is_none() => {
                    conn.as_mut().graceful_shutdown();
                    grace = Some(Box::pin(tokio::time::sleep(drain)));
                }
                _ = &mut aged, if grace.is_none() => {
                    conn.as_mut().graceful_shutdown();
                    grace = Some(Box::pin(tokio::time::sleep(age_grace)));
                }
                _ = async { grace.as_mut().expect("guarded").await }, if grace.is_some() => {
                    tracing::debug!(%peer, "grace after GOAWAY passed; closing");
                    break;
                }
                _ = async { idle.as_mut().expect("guarded").await }, if idle.is_some() && grace.is_none() => {
                    let timeout = idle_timeout.unwrap_or_default();
                    let quiet = activity.quiet_for();
                    if activity.open_calls() == 0 && quiet >= timeout {
                        tracing::debug!(%peer, "idle; closing");
                        activity.count_closed(ConnectionClosed::IdleTimeout);
                        conn.as_mut().graceful_shutdown();
                        grace = Some(Box::pin(tokio::time::sleep(age_grace)));
                    } else if let Some(idle) = &mut idle {
                        // Busy: look again a whole timeout later at the
                        // earliest, since the last call cannot end sooner
                        // and be idle that long.
                        let left = if activity.open_calls() == 0 {
                            timeout.saturating_sub(quiet)
                        } else {
                            timeout
                        };
                        idle.as_mut().reset(tokio::time::Instant::now() + left);
                    }
                }
                told = std::future::poll_fn(|cx| activity.poll_told(cx, handled)) => {
                    handled |= told;
                    if told & EVICTED != 0 {
                        // Counted by the admission when it chose this one.
                        cut.store(true, Ordering::Relaxed);
                        if activity.open_calls() > 0 {
                            tracing::debug!(%peer, "closed with calls open to make room");
                            break;
                        }
                        tracing::debug!(%peer, "idle; closed to make room");
                        conn.as_mut().graceful_shutdown();
                        grace = Some(Box::pin(tokio::time::sleep(EVICTION_GRACE)));
                    } else if told & SLOW_BODY != 0 {
                        tracing::debug!(%peer, "a request body came too slowly; closing");
                        activity.count_closed(ConnectionClosed::SlowBody);
                        cut.store(true, Ordering::Relaxed);
                        conn.as_mut().graceful_shutdown();
                        let closing = tokio::time::Instant::now() + SLOW_BODY_GRACE;
                        if grace.as_ref().is_none_or(|g| g.deadline() > closing) {
                            grace = Some(Box::pin(tokio::time::sleep_until(closing)));
                        }
                    }
                }
            }
        }
    }
}

/// The routes as one connection sees them: every request is tagged with
/// the connection's [`Tenant`], and its body is charged to the connection's
/// [`Share`] of the request budget ([`Metered`]) before it is routed; an
/// answer's charge is held by its response body ([`hold_answer`]).
#[derive(Clone)]
struct PerConnection {
    routes: Edge,
    tenant: Tenant,
    share: Share,
    max_message: usize,
}

/// A request as the routes see it.
type Charged<B> = tonic::codegen::http::Request<Metered<B>>;

impl<B> tonic::codegen::Service<tonic::codegen::http::Request<B>> for PerConnection
where
    Edge: tonic::codegen::Service<Charged<B>, Response = Answered>,
{
    type Response = Answered;
    type Error = <Edge as tonic::codegen::Service<Charged<B>>>::Error;
    type Future = futures::future::MapOk<
        <Edge as tonic::codegen::Service<Charged<B>>>::Future,
        fn(Answered) -> Answered,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        tonic::codegen::Service::<Charged<B>>::poll_ready(&mut self.routes, cx)
    }

    fn call(&mut self, request: tonic::codegen::http::Request<B>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(self.tenant);
        // Only the service's handlers charge what they hold (messages,
        // paused solvers, answers); health and reflection, whose answers
        // are small and fixed, are spared the extension's allocation.
        if parts.uri.path().starts_with(SERVICE_PATH_PREFIX) {
            parts.extensions.insert(self.share.clone());
        }
        let one_message = crate::service::takes_one_message(parts.uri.path());
        let body = Metered::new(body, self.share.clone(), self.max_message, one_message);
        self.routes
            .call(tonic::codegen::http::Request::from_parts(parts, body))
            .map_ok(hold_answer as fn(Answered) -> Answered)
    }
}

/// A response whose handler charged its answer to the connection's share
/// ([`AnswerCharge`]): the charge moves from its extensions into its body,
/// which holds it until hyper drops the body, after handing its last bytes
/// to HTTP/2. Until then an unread answer (an unpolled body keeps the
/// unencoded message; hyper keeps a polled chunk until the stream has send
/// capacity for it) counts against the connection that does not read.
fn hold_answer(mut response: Answered) -> Answered {
    match response.extensions_mut().remove::<AnswerCharge>() {
        None => response,
        Some(charge) => response.map(|body| tonic::body::Body::new(AnswerHeld::new(body, charge))),
    }
}

/// A response as the routes give it.
type Answered = tonic::codegen::http::Response<tonic::body::Body>;

/// How long a closed connection's socket keeps reading what the client
/// still sends, at most.
const LINGER: Duration = Duration::from_secs(2);

/// A connection's socket, closed the way HTTP servers close sockets
/// ("lingering close"). When hyper ends a connection (after a drain, or old
/// age) it sends GOAWAY and shuts the write half, but a client may still be
/// sending: a SolveBatch stream that never half-closed has DATA in flight.
/// Closing the socket with unread data makes the kernel answer with a TCP
/// reset, and the client's transport then fails the whole connection,
/// losing the final statuses it had not read yet (a drained stream's
/// UNAVAILABLE would arrive as UNKNOWN "broken pipe"). So on drop the socket
/// is handed to a task, tracked with the connections so the process waits
/// for it, that reads and discards until the client closes, for at most
/// [`LINGER`]. A connection cut for a missed deadline or to make room
/// closes at once instead: its client is not owed its answers, and its
/// descriptor is wanted.
struct Lingering<I: tokio::io::AsyncRead + Unpin + Send + 'static> {
    io: Option<Deadlines<I>>,
    tasks: TaskTracker,
    /// Set when hyper ended the connection for a timeout of its own (an
    /// HTTP/1.1 request head too slow): see [`Deadlines::hyper_timed_out`].
    timed_out: Arc<AtomicBool>,
    /// Set when the connection was closed to make room or for a request
    /// body too slow: it closes at once.
    cut: Arc<AtomicBool>,
}

impl<I: tokio::io::AsyncRead + Unpin + Send + 'static> Drop for Lingering<I> {
    fn drop(&mut self) {
        let Some(mut io) = self.io.take() else { return };
        if self.timed_out.load(Ordering::Relaxed) {
            io.hyper_timed_out();
        }
        if !io.should_linger()
            || self.cut.load(Ordering::Relaxed)
            || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        self.tasks.spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut sink = [0u8; 8 << 10];
            let drained = async {
                while let Ok(n) = io.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(LINGER, drained).await;
        });
    }
}

impl<I> tokio::io::AsyncRead for Lingering<I>
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.io.as_mut() {
            Some(io) => Pin::new(io).poll_read(cx, buf),
            None => std::task::Poll::Ready(Ok(())),
        }
    }
}

impl<I> tokio::io::AsyncWrite for Lingering<I>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.io.as_mut() {
            Some(io) => Pin::new(io).poll_write(cx, buf),
            None => std::task::Poll::Ready(Err(std::io::ErrorKind::NotConnected.into())),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.io.as_mut() {
            Some(io) => Pin::new(io).poll_write_vectored(cx, bufs),
            None => std::task::Poll::Ready(Err(std::io::ErrorKind::NotConnected.into())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.io.as_ref().is_some_and(|io| io.is_write_vectored())
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.io.as_mut() {
            Some(io) => Pin::new(io).poll_flush(cx),
            None => std::task::Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.io.as_mut() {
            Some(io) => Pin::new(io).poll_shutdown(cx),
            None => std::task::Poll::Ready(Ok(())),
        }
    }
}
