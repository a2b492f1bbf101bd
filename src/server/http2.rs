//! HTTP settings and message settings: the hyper builder every connection
//! uses (HTTP/2 for gRPC, HTTP/1.1 as well for gRPC-Web), the compression
//! encodings, and the layer that advertises them.

use std::time::Duration;

use futures::TryFutureExt;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto;
use tonic::codec::CompressionEncoding;
use tonic::codegen::http::{HeaderValue, Request, Response};
use tonic::codegen::{Context, Poll, Service};

use super::config::Config;

/// The largest HTTP/1.1 request head, and HTTP/2 header list, accepted.
const MAX_HEADER_BYTES: usize = 16 << 10;

/// The HTTP settings of `config`, for every connection: a connection whose
/// first bytes are the HTTP/2 preface is served as HTTP/2, any other as
/// HTTP/1.1 (browsers' gRPC-Web, `curl` without `--http2`).
pub(super) fn builder(config: &Config) -> auto::Builder<TokioExecutor> {
    let secs = |s: u64| (s > 0).then(|| Duration::from_secs(s));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        // Each request head after the first (which is the connection's
        // handshake, see `deadlines.rs`) within the header-read deadline;
        // hyper's timer runs from the moment it waits for a head, so it
        // also closes a keep-alive connection idle that long.
        .header_read_timeout(config.header_read_timeout())
        // hyper's buffer holds the head being read: its size bounds a head.
        // 8 KiB is hyper's floor; twice the header cap leaves room for
        // the request line and the body bytes read with the head.
        .max_buf_size(2 * MAX_HEADER_BYTES)
        .max_headers(100)
        .half_close(false);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(config.max_concurrent_streams)
        .keep_alive_interval(secs(config.keepalive_interval_secs))
        .keep_alive_timeout(Duration::from_secs(config.keepalive_timeout_secs.max(1)))
        .max_header_list_size(MAX_HEADER_BYTES as u32)
        // Windows sized to what a request can need rather than grown to
        // what a sender offers: request bytes in flight that the server has
        // not read are bounded by the connection window, and past them the
        // request budget (see `budget.rs`) stops reading.
        .adaptive_window(false)
        .initial_stream_window_size(config.http2_stream_window)
        .initial_connection_window_size(config.http2_connection_window)
        .max_send_buf_size(config.http2_send_buffer.max(1));
    builder
}

/// The message encodings every service accepts and answers in, besides
/// identity.
pub(super) const ENCODINGS: [CompressionEncoding; 2] =
    [CompressionEncoding::Gzip, CompressionEncoding::Zstd];

/// `grpc-accept-encoding` for [`ENCODINGS`], written as tonic writes it on
/// the UNIMPLEMENTED answer to an unknown encoding: the enabled ones in
/// order, then identity, with no spaces (grpc-js splits it on bare commas).
const ACCEPT_ENCODING: &str = "gzip,zstd,identity";

/// Adds `grpc-accept-encoding` to every response of the gRPC routes it
/// wraps, OK or error, unary or streaming. tonic sends it only when it
/// refuses an encoding, so a client could not otherwise learn that the
/// server takes zstd before trying it. A header already set is kept.
#[derive(Clone)]
pub(super) struct AdvertiseEncodings<S>(pub(super) S);

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
