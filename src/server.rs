//! Assembles the gRPC server: SudokuService, health, reflection, HTTP/2
//! settings, and the drain on shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use std::pin::Pin;

use anyhow::Context as _;
use futures::TryFutureExt;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic::Status;
use tonic::codec::CompressionEncoding;
use tonic::codegen::http::{HeaderValue, Request, Response};
use tonic::codegen::{Context, Poll, Service};
use tonic_health::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_health::server::{HealthReporter, HealthService};

use crate::config::{Config, LogFormat};
use crate::pb::sudoku_service_server::SudokuServiceServer;
use crate::service::{Gauges, Limits, Sudoku};

/// The fully qualified name of the solving service, as health reports it.
pub const SERVICE_NAME: &str = "sudoku.v1.SudokuService";

/// Sets up logging: RUST_LOG filters (default `info`), `format` picks text
/// or JSON lines.
pub fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// A server ready to run on a bound listener.
pub struct Prepared {
    config: Config,
    listener: TcpListener,
    service: Sudoku,
    token: CancellationToken,
}

impl Prepared {
    /// Binds `config.listen` and builds the service.
    pub async fn bind(config: Config) -> anyhow::Result<Prepared> {
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        Prepared::with_listener(config, listener)
    }

    /// Builds the service on a listener the caller bound (tests bind port 0).
    pub fn with_listener(config: Config, listener: TcpListener) -> anyhow::Result<Prepared> {
        let token = CancellationToken::new();
        let service = Sudoku::new(Limits::from_config(&config), token.clone())
            .context("starting the solver threads")?;
        Ok(Prepared {
            config,
            listener,
            service,
            token,
        })
    }

    /// Replaces the service (tests use this to install hooks).
    #[doc(hidden)]
    pub fn map_service(mut self, f: impl FnOnce(Sudoku) -> Sudoku) -> Prepared {
        self.service = f(self.service);
        self
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.config.listen)
    }

    /// The service's gauges.
    pub fn gauges(&self) -> Arc<Gauges> {
        self.service.gauges()
    }

    /// Serves until `signal` resolves, then drains: health goes NOT_SERVING,
    /// new calls are refused, streams end with UNAVAILABLE after the items
    /// they hold, and calls still running at the drain deadline are cut.
    pub async fn serve(
        self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Prepared {
            config,
            listener,
            service,
            token,
        } = self;
        let addr = listener.local_addr().ok();
        if let Some(metrics_addr) = config.metrics_listen {
            crate::metrics::install(metrics_addr)?;
            crate::metrics::spawn_publisher(service.gauges());
        }
        // Every service takes the same encodings, so the one
        // grpc-accept-encoding header the routes advertise is true of each.
        macro_rules! compressed {
            ($service:expr) => {{
                let mut service = $service;
                for encoding in ENCODINGS {
                    service = service
                        .accept_compressed(encoding)
                        .send_compressed(encoding);
                }
                service
            }};
        }
        let reporter = HealthReporter::new();
        let health = HealthServer::new(DrainingHealth {
            inner: HealthService::from_health_reporter(reporter.clone()),
            stop: token.clone(),
        });
        reporter.set_serving::<SudokuServiceServer<Sudoku>>().await;

        let reflection_v1 = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(crate::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1()?;
        let reflection_v1alpha = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(crate::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1alpha()?;

        let sudoku =
            SudokuServiceServer::new(service).max_decoding_message_size(config.max_message_bytes);

        let routes = AdvertiseEncodings(
            tonic::service::Routes::new(compressed!(health))
                .add_service(compressed!(reflection_v1))
                .add_service(compressed!(reflection_v1alpha))
                .add_service(compressed!(sudoku))
                .prepare(),
        );

        // HTTP/2 is served with hyper directly rather than through tonic's
        // Server: its built-in grpc-timeout layer answers an expired deadline
        // with CANCELLED, where gRPC says DEADLINE_EXCEEDED. The handlers
        // enforce deadlines themselves.
        let secs = |s: u64| (s > 0).then(|| Duration::from_secs(s));
        let mut http2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
        http2
            .timer(TokioTimer::new())
            .max_concurrent_streams(config.max_concurrent_streams)
            .keep_alive_interval(secs(config.keepalive_interval_secs))
            .keep_alive_timeout(Duration::from_secs(config.keepalive_timeout_secs.max(1)))
            .max_header_list_size(16 << 10);
        let max_age = secs(config.max_connection_age_secs);
        let age_grace = Duration::from_secs(config.max_connection_age_grace_secs);
        let drain = config.drain_timeout();

        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => {
                Some(tls_acceptor(cert, key, config.tls_client_ca.as_deref())?)
            }
            _ => None,
        };
        let connections = TaskTracker::new();
        let spawn_connection = |stream: TcpStream, peer: SocketAddr| {
            let _ = stream.set_nodelay(true);
            let conn = Connection {
                lingering: connections.clone(),
                http2: http2.clone(),
                routes: routes.clone(),
                peer,
                stop: token.clone(),
                max_age,
                age_grace,
                drain,
            };
            match tls.clone() {
                None => {
                    connections.spawn(conn.serve(stream));
                }
                Some(acceptor) => {
                    connections.spawn(async move {
                        // The handshake runs in the connection's task so a
                        // slow or wrong client never holds up accept.
                        match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream))
                            .await
                        {
                            Ok(Ok(tls)) => conn.serve(tls).await,
                            Ok(Err(e)) => {
                                tracing::debug!(%peer, error = %e, "TLS handshake failed")
                            }
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        }
                    });
                }
            }
        };
        tracing::info!(addr = ?addr, "serving sudoku.v1.SudokuService, health and reflection");
        tokio::pin!(signal);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut signal => break,
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            spawn_connection(stream, peer);
        }
        tracing::info!("shutdown requested; draining");
        // The listener closes before health says NOT_SERVING, so a client
        // that sees the flip and connects again is refused (UNAVAILABLE)
        // rather than accepted. Connections already waiting in the kernel's
        // backlog would be reset when it closes, which clients report as
        // UNKNOWN; they are taken and served instead, and their calls get
        // UNAVAILABLE and a GOAWAY like those of every other connection.
        for (stream, peer) in take_backlog(listener) {
            spawn_connection(stream, peer);
        }
        reporter
            .set_not_serving::<SudokuServiceServer<Sudoku>>()
            .await;
        reporter
            .set_service_status("", ServingStatus::NotServing)
            .await;
        token.cancel();
        connections.close();
        match tokio::time::timeout(config.drain_timeout(), connections.wait()).await {
            Ok(()) => tracing::info!("drained; exiting"),
            Err(_) => tracing::warn!(
                drain_timeout_ms = config.drain_timeout_ms,
                "drain deadline passed; cutting the calls still in flight"
            ),
        }
        Ok(())
    }
}

const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How old a connection must be before a drain sends it GOAWAY (see
/// `Connection::serve`).
const NEW_CONNECTION_GRACE: Duration = Duration::from_millis(100);

/// Closes `listener`, returning the connections the kernel had already
/// accepted for it but the server had not taken yet.
fn take_backlog(listener: TcpListener) -> Vec<(TcpStream, SocketAddr)> {
    let mut taken = Vec::new();
    let listener = match listener.into_std() {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "could not take the listen backlog");
            return taken;
        }
    };
    // The socket is still non-blocking: accept until the backlog is empty.
    loop {
        match listener.accept() {
            Ok((stream, peer)) => {
                let stream = stream
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(stream));
                match stream {
                    Ok(stream) => taken.push((stream, peer)),
                    Err(e) => tracing::warn!(%peer, error = %e, "dropping a backlog connection"),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return taken,
        }
    }
}

/// The message encodings every service accepts and answers in, besides
/// identity.
const ENCODINGS: [CompressionEncoding; 2] = [CompressionEncoding::Gzip, CompressionEncoding::Zstd];

/// `grpc-accept-encoding` for [`ENCODINGS`], written as tonic writes it on
/// the UNIMPLEMENTED answer to an unknown encoding: the enabled ones in
/// order, then identity, with no spaces (grpc-js splits it on bare commas).
const ACCEPT_ENCODING: &str = "gzip,zstd,identity";

/// Adds `grpc-accept-encoding` to every response of the gRPC routes it
/// wraps, OK or error, unary or streaming. tonic sends it only when it
/// refuses an encoding, so a client could not otherwise learn that the
/// server takes zstd before trying it. A header already set is kept.
#[derive(Clone)]
struct AdvertiseEncodings<S>(S);

impl<S, B, R> Service<Request<B>> for AdvertiseEncodings<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = futures::future::MapOk<S::Future, fn(Response<R>) -> Response<R>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.0.call(request).map_ok(advertise_encodings::<R>)
    }
}

fn advertise_encodings<R>(mut response: Response<R>) -> Response<R> {
    response
        .headers_mut()
        .entry("grpc-accept-encoding")
        .or_insert(HeaderValue::from_static(ACCEPT_ENCODING));
    response
}

/// One accepted connection and how to run it.
struct Connection {
    /// Where the socket lingers after the connection ends (see [`Lingering`]).
    lingering: TaskTracker,
    http2: hyper::server::conn::http2::Builder<TokioExecutor>,
    routes: AdvertiseEncodings<tonic::service::Routes>,
    peer: SocketAddr,
    stop: CancellationToken,
    max_age: Option<Duration>,
    age_grace: Duration,
    drain: Duration,
}

impl Connection {
    /// Serves HTTP/2 on `io` until the peer leaves, or until a GOAWAY (on
    /// shutdown or old age) and its grace period are over.
    async fn serve<I>(self, io: I)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let Connection {
            lingering,
            http2,
            routes,
            peer,
            stop,
            max_age,
            age_grace,
            drain,
        } = self;
        let io = Lingering {
            io: Some(io),
            tasks: lingering,
        };
        let conn = http2.serve_connection(TokioIo::new(io), TowerToHyperService::new(routes));
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
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
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
            }
        }
    }
}

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
/// [`LINGER`].
struct Lingering<I: tokio::io::AsyncRead + Unpin + Send + 'static> {
    io: Option<I>,
    tasks: TaskTracker,
}

impl<I: tokio::io::AsyncRead + Unpin + Send + 'static> Drop for Lingering<I> {
    fn drop(&mut self) {
        let Some(mut io) = self.io.take() else { return };
        if tokio::runtime::Handle::try_current().is_err() {
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

/// `grpc.health.v1.Health` that ends Watch streams once the server drains
/// and the watcher has been told NOT_SERVING: a watch never ends by itself,
/// so without this every client watching health (gRPC client-side health
/// checking keeps one open per connection) would hold the drain open until
/// its deadline.
struct DrainingHealth {
    inner: HealthService,
    stop: CancellationToken,
}

type WatchStream = Pin<Box<dyn futures::Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

#[tonic::async_trait]
impl Health for DrainingHealth {
    async fn check(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthCheckResponse>, Status> {
        self.inner.check(request).await
    }

    type WatchStream = WatchStream;

    async fn watch(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, Status> {
        use futures::StreamExt;
        let inner = self.inner.watch(request).await?.into_inner();
        let stop = self.stop.clone();
        // The state: the inner stream, and whether the last status sent was
        // NOT_SERVING. Health turns NOT_SERVING before `stop` is cancelled,
        // so every watcher gets that status before its stream ends.
        let stream = futures::stream::unfold((inner, false), move |(mut inner, told)| {
            let stop = stop.clone();
            async move {
                let next = if told {
                    tokio::select! {
                        item = inner.next() => item,
                        _ = stop.cancelled() => None,
                    }
                } else {
                    inner.next().await
                };
                let item = next?;
                let told = matches!(&item, Ok(r) if r.status() == tonic_health::pb::health_check_response::ServingStatus::NotServing);
                Some((item, (inner, told)))
            }
        });
        Ok(tonic::Response::new(Box::pin(stream)))
    }
}

/// A TLS acceptor for `cert` and `key` (PEM), asking for client
/// certificates signed by `client_ca` when given. Uses the ring provider
/// only, and offers HTTP/2 alone through ALPN.
fn tls_acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
    client_ca: Option<&std::path::Path>,
) -> anyhow::Result<tokio_rustls::TlsAcceptor> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls;

    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("cannot read certificates from {}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("cannot read a private key from {}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for ca in CertificateDer::pem_file_iter(path)
                .with_context(|| format!("cannot read client CA from {}", path.display()))?
            {
                roots
                    .add(ca.with_context(|| format!("bad certificate in {}", path.display()))?)
                    .with_context(|| format!("bad client CA in {}", path.display()))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .context("client certificate verifier")?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut tls = builder
        .with_single_cert(certs, key)
        .context("the TLS certificate and key do not match")?;
    tls.alpn_protocols = vec![b"h2".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(tls)))
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_lists_the_enabled_encodings_then_identity() {
        let mut listed: Vec<String> = ENCODINGS.iter().map(|e| e.to_string()).collect();
        listed.push("identity".to_string());
        assert_eq!(ACCEPT_ENCODING, listed.join(","));
    }
}
