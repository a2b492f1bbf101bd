//! The metrics port: a small HTTP/1.1 server that answers every GET (any
//! path, `/metrics` by convention) with the Prometheus text format.
//!
//! It replaces the exporter crate's own listener, which waits for ever on a
//! request whose headers never end and logs a warning for every such
//! connection: a handful of idle sockets could hold the port, and a flood
//! of them filled the log. Here a request head must arrive within the
//! header-read timeout, which also closes a keep-alive connection left idle
//! that long, and the port serves at most [`MAX_CONNECTIONS`] connections
//! at once; past that a new one is closed as soon as it is accepted.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Connections the metrics port serves at once: a scraper or two and an
/// operator with curl.
pub(crate) const MAX_CONNECTIONS: usize = 16;

/// The text exposition format's content type.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `handle`'s metrics on `listener` for the life of the process.
pub(super) fn spawn(listener: TcpListener, handle: PrometheusHandle, header_timeout: Duration) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::spawn(async move {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: back off.
                    tracing::debug!(error = %e, "metrics port: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                tracing::debug!(%peer, "metrics port: too many connections; closing a new one");
                continue;
            };
            let handle = handle.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let answer = answer(&handle, &request);
                    async move { Ok::<_, Infallible>(answer) }
                });
                let served = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                if let Err(e) = served {
                    tracing::debug!(%peer, error = %e, "metrics port: connection ended");
                }
                drop(slot);
            });
        }
    });
}

/// The answer to one request: the metrics for GET (and HEAD) of any path
/// but `/health`, which answers OK as the exporter's own listener did; 405
/// for any other method.
fn answer(handle: &PrometheusHandle, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (request.method(), request.uri().path()) {
        (&Method::GET | &Method::HEAD, "/health") => {
            (StatusCode::OK, "text/plain", Bytes::from_static(b"OK"))
        }
        (&Method::GET | &Method::HEAD, _) => {
            (StatusCode::OK, TEXT_FORMAT, Bytes::from(handle.render()))
        }
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            Bytes::from_static(b"only GET\n"),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if status == StatusCode::METHOD_NOT_ALLOWED {
        headers.insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
    }
    response
}
