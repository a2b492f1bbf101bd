//! Every call at the edge, before any service sees it and after every
//! service is done with it: counted in the `grpc_server_*` metrics whoever
//! answered it (a handler, tonic's decoder refusing a body, the router not
//! knowing the method, a client resetting the stream), and the one code
//! tonic answers off the contract put right.
//!
//! The code is read where gRPC puts it: in the response headers of a
//! trailers-only answer (most failures), or in the trailers that end the
//! body. A body dropped before its trailers is a call the client cancelled.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use http_body::Frame;
use tonic::codegen::http::{HeaderMap, Request, Response};
use tonic::codegen::{Bytes, Service};
use tonic::{Code, Status};

use crate::telemetry::metrics::{self, CallKind};

/// The routes wrapped so that every call is counted (see the module docs).
#[derive(Clone)]
pub(super) struct Calls<S> {
    inner: S,
    /// `--max-message-bytes`, for the corrected message.
    max_message_bytes: usize,
}

impl<S> Calls<S> {
    pub(super) fn new(inner: S, max_message_bytes: usize) -> Calls<S> {
        Calls {
            inner,
            max_message_bytes,
        }
    }
}

impl<S, B> Service<Request<B>> for Calls<S>
where
    S: Service<Request<B>, Response = Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let call = Call {
            kind: CallKind::of_path(request.uri().path()),
            started: Instant::now(),
            max_message_bytes: self.max_message_bytes,
        };
        metrics::call_started(call.kind);
        let answered = self.inner.call(request);
        Box::pin(async move {
            let mut response = answered.await?;
            if response.headers().contains_key("grpc-status") {
                // Trailers-only: the call ended with its headers.
                let code = call.correct(response.headers_mut());
                call.finish(code);
                return Ok(response);
            }
            Ok(response.map(|body| {
                tonic::body::Body::new(Counted {
                    inner: body,
                    call: Some(call),
                })
            }))
        })
    }
}

/// One call on its way: what it is and when it started.
struct Call {
    kind: CallKind,
    started: Instant,
    max_message_bytes: usize,
}

impl Call {
    /// The call's code as `headers` carry it, after correcting it.
    ///
    /// tonic answers a compressed request message that grows past the size
    /// limit while it is decompressed with RESOURCE_EXHAUSTED, which the
    /// contract reserves for "retry with back-off"; an uncompressed message
    /// over the limit gets OUT_OF_RANGE, as the contract says. Both get
    /// OUT_OF_RANGE here. tonic's decoder says "size limit" only there.
    fn correct(&self, headers: &mut HeaderMap) -> Code {
        let Some(status) = Status::from_header_map(headers) else {
            return Code::Unknown;
        };
        if status.code() == Code::ResourceExhausted
            && status
                .message()
                .starts_with("Error decompressing: size limit")
        {
            let corrected = crate::service::message_too_large(
                format!(
                    "the request message is larger than the limit of {} bytes once decompressed",
                    self.max_message_bytes
                ),
                self.max_message_bytes,
            );
            if corrected.add_header(headers).is_ok() {
                return Code::OutOfRange;
            }
        }
        status.code()
    }

    fn finish(self, code: Code) {
        metrics::call_handled(self.kind, code, self.started.elapsed());
    }
}

/// A response body that counts its call when the trailers pass, or when it
/// is dropped without them (the client left).
struct Counted {
    inner: tonic::body::Body,
    call: Option<Call>,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) if frame.is_trailers() => {
                let Poll::Ready(Some(Ok(frame))) = polled else {
                    unreachable!("matched above")
                };
                let mut trailers = frame.into_trailers().unwrap_or_default();
                if let Some(call) = self.call.take() {
                    let code = call.correct(&mut trailers);
                    call.finish(code);
                }
                return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
            }
            Poll::Ready(Some(Err(status))) => {
                let code = status.code();
                if let Some(call) = self.call.take() {
                    call.finish(code);
                }
            }
            // A gRPC response that ends without trailers is broken.
            Poll::Ready(None) => {
                if let Some(call) = self.call.take() {
                    call.finish(Code::Unknown);
                }
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            call.finish(Code::Cancelled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Call {
        Call {
            kind: CallKind::of_path("/sudoku.v1.SudokuService/Solve"),
            started: Instant::now(),
            max_message_bytes: 1024,
        }
    }

    fn headers_of(status: Status) -> HeaderMap {
        let mut headers = HeaderMap::new();
        status.add_header(&mut headers).unwrap();
        headers
    }

    #[test]
    fn a_decompression_limit_becomes_out_of_range() {
        let mut headers = headers_of(Status::resource_exhausted(
            "Error decompressing: size limit, of 1024 bytes, exceeded while decompressing message",
        ));
        assert_eq!(call().correct(&mut headers), Code::OutOfRange);
        let status = Status::from_header_map(&headers).unwrap();
        assert_eq!(status.code(), Code::OutOfRange);
        assert_eq!(
            status.message(),
            "the request message is larger than the limit of 1024 bytes once decompressed"
        );
    }

    #[test]
    fn other_codes_pass_unchanged() {
        let shed = Status::resource_exhausted("the server is at its limit of concurrent work");
        let mut headers = headers_of(shed.clone());
        assert_eq!(call().correct(&mut headers), Code::ResourceExhausted);
        assert_eq!(headers, headers_of(shed));
        let mut headers = headers_of(Status::internal("failed to decode Protobuf message"));
        assert_eq!(call().correct(&mut headers), Code::Internal);
    }
}
