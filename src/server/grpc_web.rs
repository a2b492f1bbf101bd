//! gRPC-Web on the gRPC port: tonic-web translates a gRPC-Web call (binary
//! or base64 text, over HTTP/1.1 or HTTP/2) into gRPC for the routes and
//! their answer back; plain gRPC passes through untouched.
//!
//! One change to what tonic-web sends: a call that fails before any
//! message is answered by gRPC "trailers-only", its status in the response
//! headers. For gRPC-Web it is sent as a response whose body is one
//! trailers frame instead, which the gRPC-Web protocol allows as well: a
//! page then reads every status, with its details, from the same place,
//! and a browser lets it read them even where CORS exposes no header.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::Either;
use http_body::Frame;
use tonic::codegen::BoxFuture;
use tonic::codegen::http::header::{self, HeaderMap, HeaderName};
use tonic::codegen::http::{Request, Response};
use tonic::codegen::{Bytes, Service};
use tonic_web::{GrpcWebLayer, GrpcWebService};
use tower_layer::Layer as _;

/// The headers of a trailers-only answer that belong in the trailers.
const STATUS_HEADERS: [&str; 3] = ["grpc-status", "grpc-message", "grpc-status-details-bin"];

/// Marks a request as gRPC-Web, for [`TrailersInBody`] below tonic-web,
/// which rewrites the content type.
#[derive(Clone, Copy)]
struct WebCall;

/// `inner` answering gRPC-Web as well as gRPC (see the module docs).
#[derive(Clone)]
pub(super) struct GrpcWeb<S> {
    inner: GrpcWebService<TrailersInBody<S>>,
}

impl<S> GrpcWeb<S> {
    pub(super) fn new(inner: S) -> GrpcWeb<S> {
        GrpcWeb {
            inner: GrpcWebLayer::new().layer(TrailersInBody { inner }),
        }
    }
}

/// Whether `headers` name one of the four gRPC-Web content types.
fn is_grpc_web(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            matches!(
                ct,
                "application/grpc-web"
                    | "application/grpc-web+proto"
                    | "application/grpc-web-text"
                    | "application/grpc-web-text+proto"
            )
        })
}

impl<S, B> Service<Request<B>> for GrpcWeb<S>
where
    GrpcWebService<TrailersInBody<S>>: Service<Request<B>>,
{
    type Response = <GrpcWebService<TrailersInBody<S>> as Service<Request<B>>>::Response;
    type Error = <GrpcWebService<TrailersInBody<S>> as Service<Request<B>>>::Error;
    type Future = <GrpcWebService<TrailersInBody<S>> as Service<Request<B>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        if is_grpc_web(request.headers()) {
            request.extensions_mut().insert(WebCall);
        }
        self.inner.call(request)
    }
}

/// Below tonic-web: moves the status of a gRPC-Web call's trailers-only
/// answer into a trailers frame of its body.
#[derive(Clone)]
pub(super) struct TrailersInBody<S> {
    inner: S,
}

impl<S, B> Service<Request<B>> for TrailersInBody<S>
where
    S: Service<Request<B>, Response = Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Either<S::Future, BoxFuture<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.extensions().get::<WebCall>().is_none() {
            return Either::Left(self.inner.call(request));
        }
        let answered = self.inner.call(request);
        Either::Right(Box::pin(async move {
            let response = answered.await?;
            Ok(status_in_trailers(response))
        }))
    }
}

/// `response` with the status of a trailers-only answer in a trailers frame.
fn status_in_trailers(mut response: Response<tonic::body::Body>) -> Response<tonic::body::Body> {
    if !response.headers().contains_key("grpc-status") {
        return response;
    }
    let mut trailers = HeaderMap::new();
    for name in STATUS_HEADERS {
        let name = HeaderName::from_static(name);
        if let Some(value) = response.headers_mut().remove(&name) {
            trailers.insert(name, value);
        }
    }
    *response.body_mut() = tonic::body::Body::new(OnlyTrailers(Some(trailers)));
    response
}

/// A body of one trailers frame.
struct OnlyTrailers(Option<HeaderMap>);

impl http_body::Body for OnlyTrailers {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        Poll::Ready(self.0.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn a_trailers_only_answer_keeps_its_headers_and_moves_its_status() {
        let mut response = Response::new(tonic::body::Body::empty());
        let headers = response.headers_mut();
        headers.insert("content-type", "application/grpc".parse().unwrap());
        headers.insert("grpc-status", "3".parse().unwrap());
        headers.insert("grpc-message", "bad".parse().unwrap());
        headers.insert("grpc-status-details-bin", "CAM".parse().unwrap());
        let moved = status_in_trailers(response);
        assert_eq!(moved.headers().len(), 1, "{:?}", moved.headers());
        let body = moved.into_body().collect().await.unwrap();
        let trailers = body.trailers().unwrap();
        assert_eq!(trailers["grpc-status"], "3");
        assert_eq!(trailers["grpc-message"], "bad");
        assert_eq!(trailers["grpc-status-details-bin"], "CAM");
    }

    #[tokio::test]
    async fn an_answer_with_messages_is_left_alone() {
        let mut response = Response::new(tonic::body::Body::empty());
        response
            .headers_mut()
            .insert("content-type", "application/grpc".parse().unwrap());
        let kept = status_in_trailers(response);
        assert_eq!(kept.headers()["content-type"], "application/grpc");
        assert!(
            kept.into_body()
                .collect()
                .await
                .unwrap()
                .trailers()
                .is_none()
        );
    }

    #[test]
    fn the_four_grpc_web_content_types_are_grpc_web_and_grpc_is_not() {
        let with = |ct: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, ct.parse().unwrap());
            is_grpc_web(&h)
        };
        for ct in [
            "application/grpc-web",
            "application/grpc-web+proto",
            "application/grpc-web-text",
            "application/grpc-web-text+proto",
        ] {
            assert!(with(ct), "{ct}");
        }
        assert!(!with("application/grpc"));
        assert!(!with("application/grpc+proto"));
        assert!(!is_grpc_web(&HeaderMap::new()));
    }
}
