//! The server's assembly: SudokuService, health and reflection behind one
//! set of routes, served over HTTP/2 (optionally TLS) on a bound listener
//! until a signal, then drained. The same routes answer gRPC-Web, over
//! HTTP/1.1 or HTTP/2, behind CORS for the configured origins, and GET /
//! serves a web page that calls them.
//!
//! | file | its job |
//! |---|---|
//! | `config.rs` | every setting, with its flag, environment variable and default |
//! | `calls.rs` | every call counted at the edge, whoever answered it |
//! | `listener.rs` | the listening socket, its backlog, the shutdown signal |
//! | `admission.rs` | the cap on connections and per peer, room for new ones while silent, idle or greedy ones flood in |
//! | `connection.rs` | one connection's life: HTTP/2 or HTTP/1.1, GOAWAY on drain, age or idleness, lingering close |
//! | `activity.rs` | the calls open on a connection, and the minimum pace of their request bodies |
//! | `deadlines.rs` | the handshake and header-block deadlines, following HTTP/2 framing (and an HTTP/1.1 first head) |
//! | `http2.rs` | HTTP/2 and HTTP/1.1 settings, compression encodings and how they are advertised |
//! | `cors.rs` | CORS for the `--cors-origin` origins, and no others |
//! | `grpc_web.rs` | gRPC-Web translated to gRPC (tonic-web), statuses in a trailers frame |
//! | `web_page.rs` | the web page at `/` (web/dist/, embedded), in front of gRPC-Web |
//! | `tls.rs` | the TLS acceptor (mutual TLS with a client CA) |
//! | `health.rs` | health that turns NOT_SERVING on drain, and reflection |
//! | `budget.rs` | the body wrappers that charge received messages, and hold unary answers, in the connection's share |

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic_health::ServingStatus;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};

use crate::StartError;
use crate::pb::sudoku_service_server::SudokuServiceServer;
use crate::service::{Sudoku, Tenant};
use crate::telemetry::metrics::{self, ConnectionClosed, Gauges};
use admission::{Admission, Admit};
use calls::Calls;
use connection::Connection;
use cors::Origins;
use health::DrainingHealth;
use http2::{AdvertiseEncodings, ENCODINGS};
use listener::take_backlog;
use tls::tls_acceptor;

mod activity;
mod admission;
mod budget;
mod calls;
pub mod config;
mod connection;
mod cors;
mod deadlines;
mod grpc_web;
mod health;
mod http2;
mod listener;
mod tls;
mod web_page;

pub use config::{Config, LogFormat};
pub use listener::shutdown_signal;

/// The fully qualified name of the solving service, as health reports it.
pub const SERVICE_NAME: &str = "sudoku.v1.SudokuService";

/// Every route of the server, as each connection serves them (behind CORS
/// and gRPC-Web, see `connection.rs`).
type Edge = Calls<AdvertiseEncodings<tonic::service::Routes>>;

/// A server ready to run on a bound listener.
pub struct Prepared {
    config: Config,
    listener: TcpListener,
    service: Sudoku,
    token: CancellationToken,
}

impl Prepared {
    /// Binds `config.listen` (with `config.listen_backlog`) and builds the
    /// service.
    pub async fn bind(config: Config) -> Result<Prepared, StartError> {
        let listener = listener::bind(config.listen, config.listen_backlog).map_err(|source| {
            StartError::Listen {
                addr: config.listen,
                source,
            }
        })?;
        Prepared::with_listener(config, listener)
    }

    /// Builds the service on a listener the caller bound (tests bind port 0).
    pub fn with_listener(config: Config, listener: TcpListener) -> Result<Prepared, StartError> {
        config.validate().map_err(StartError::Settings)?;
        let token = CancellationToken::new();
        let service = Sudoku::new(config.limits(), token.clone()).map_err(StartError::Threads)?;
        Ok(Prepared {
            config,
            listener,
            service,
            token,
        })
    }

    /// Replaces the service (feature `test-hooks`: tests install hooks).
    #[cfg(feature = "test-hooks")]
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
    ) -> Result<(), StartError> {
        self.serve_until(Box::pin(signal)).await
    }

    /// [`Prepared::serve`] with the signal boxed. Not generic, so the
    /// library compiles the server's whole stack (routes, hyper, TLS) once;
    /// a generic `serve` made every caller's crate (the server binary, the
    /// integration tests) compile its own copy for its own signal type.
    async fn serve_until(
        self,
        signal: Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
    ) -> Result<(), StartError> {
        let Prepared {
            config,
            listener,
            service,
            token,
        } = self;
        let addr = listener.local_addr().ok();
        if let Some(metrics_addr) = config.metrics_listen {
            metrics::install(metrics_addr, config.header_read_timeout()).await?;
            metrics::spawn_publisher(service.gauges());
        }
        let admission = Admission::new(
            config.max_connections,
            config.max_connections_per_peer,
            service.gauges(),
        );
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

        let (reflection_v1, reflection_v1alpha) = health::reflection()?;

        let budget = service.budget();
        let sudoku =
            SudokuServiceServer::new(service).max_decoding_message_size(config.max_message_bytes);

        let routes = Calls::new(
            AdvertiseEncodings(
                tonic::service::Routes::new(compressed!(health))
                    .add_service(compressed!(reflection_v1))
                    .add_service(compressed!(reflection_v1alpha))
                    .add_service(compressed!(sudoku))
                    .prepare(),
            ),
            config.max_message_bytes,
        );
        let origins = Origins::new(&config.cors_origins);

        // HTTP/2 (and HTTP/1.1) is served with hyper directly rather than through tonic's
        // Server: its built-in grpc-timeout layer answers an expired deadline
        // with CANCELLED, where gRPC says DEADLINE_EXCEEDED. The handlers
        // enforce deadlines themselves.
        let http = http2::builder(&config);
        let secs = |s: u64| (s > 0).then(|| Duration::from_secs(s));
        let max_age = secs(config.max_connection_age_secs);
        let age_grace = Duration::from_secs(config.max_connection_age_grace_secs);
        let drain = config.drain_timeout();
        let handshake_timeout = config.handshake_timeout();
        let header_timeout = config.header_read_timeout();
        let idle_timeout = config.idle_timeout();
        let pace = activity::Pace {
            min_rate: config.min_request_body_rate,
            grace: Duration::from_secs(config.request_body_grace_secs),
        };

        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => {
                Some(tls_acceptor(cert, key, config.tls_client_ca.as_deref())?)
            }
            _ => None,
        };
        let connections = TaskTracker::new();
        let mut accepted: u64 = 0;
        let mut spawn_connection = |stream: TcpStream, peer: SocketAddr| {
            accepted += 1;
            let ticket = match admission.admit(accepted, peer.ip()) {
                Admit::Accepted(ticket) => ticket,
                Admit::Refused(ticket) => {
                    // At once, so the client fails fast rather than waiting
                    // in the listen queue. A TLS client could not read a
                    // GOAWAY before its handshake: it sees the socket close.
                    tracing::debug!(%peer, "at the connection cap; refusing a new connection");
                    if let (Some(ticket), None) = (ticket, &tls) {
                        connections.spawn(admission::refuse(stream, ticket));
                    }
                    return;
                }
            };
            let handshake_deadline = tokio::time::Instant::now() + handshake_timeout;
            let _ = stream.set_nodelay(true);
            let conn = Connection {
                lingering: connections.clone(),
                http: http.clone(),
                routes: routes.clone(),
                origins: origins.clone(),
                web_page: !config.no_web_page,
                peer,
                tenant: Tenant(accepted),
                share: budget.share(),
                max_message: config.max_message_bytes,
                stop: token.clone(),
                max_age,
                age_grace,
                drain,
                handshake_deadline,
                header_timeout,
                idle_timeout,
                pace,
            };
            match tls.clone() {
                None => {
                    connections.spawn(conn.serve(stream, ticket));
                }
                Some(acceptor) => {
                    connections.spawn(async move {
                        // The handshake runs in the connection's task so a
                        // slow or wrong client never holds up accept. Its
                        // deadline is the whole handshake's, HTTP/2 preface
                        // included, and it makes room like any pending
                        // connection.
                        let handshake =
                            tokio::time::timeout_at(handshake_deadline, acceptor.accept(stream));
                        let handshake = tokio::select! {
                            done = handshake => done,
                            () = ticket.evicted() => {
                                tracing::debug!(%peer, "closed in its TLS handshake to make room");
                                return;
                            }
                        };
                        match handshake {
                            Ok(Ok(tls)) => conn.serve(tls, ticket).await,
                            Ok(Err(e)) => {
                                tracing::debug!(%peer, error = %e, "TLS handshake failed")
                            }
                            Err(_) => {
                                ticket.count_closed(ConnectionClosed::HandshakeTimeout);
                                tracing::debug!(%peer, "TLS handshake timed out");
                            }
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
                accepted = async {
                    admission.room().await;
                    listener.accept().await
                } => match accepted {
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
