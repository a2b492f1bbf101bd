//! CORS for gRPC-Web calls from browsers on the configured origins
//! (`--cors-origin`), and for no others.
//!
//! A request whose `Origin` is on the list gets `Access-Control-Allow-Origin`
//! naming it, and the gRPC headers a page must read exposed; its preflight
//! (`OPTIONS` with `Access-Control-Request-Method`) is answered here, with
//! the methods and request headers a gRPC-Web client uses. A request from
//! any other origin passes through without a single `Access-Control-*`
//! header, so the browser keeps the answer from the page; its preflight
//! goes on to the routes, which refuse it. With no origins configured the
//! layer is not there at all.
//!
//! tower-http's CORS layer answers every preflight itself and sends the
//! allowed methods and headers whatever the origin, which says more than
//! needed to pages that may not call; this one is the few lines the service
//! needs.

use std::sync::Arc;

use futures::future::{self, Either, Ready};
use tonic::codegen::http::header::{self, HeaderMap, HeaderValue};
use tonic::codegen::http::{Method, Request, Response, StatusCode};
use tonic::codegen::{BoxFuture, Context, Poll, Service};

/// What a preflight may ask for: gRPC-Web calls are POSTs.
const ALLOW_METHODS: &str = "POST, OPTIONS";

/// The request headers a gRPC-Web client sends (grpc-web and Connect's
/// gRPC-Web transport), with trace context for instrumented pages.
const ALLOW_HEADERS: &str = "content-type, x-grpc-web, x-user-agent, grpc-timeout, \
     grpc-encoding, grpc-accept-encoding, traceparent, tracestate";

/// The response headers a page may read: the call's status, which gRPC-Web
/// puts in the headers of a trailers-only answer, and the encodings.
const EXPOSE_HEADERS: &str =
    "grpc-status, grpc-message, grpc-status-details-bin, grpc-encoding, grpc-accept-encoding";

/// How long a browser may cache a preflight's answer, in seconds.
const MAX_AGE: &str = "7200";

/// The origins allowed to call, as browsers write them in `Origin`.
#[derive(Clone, Debug)]
pub(super) struct Origins(Arc<[HeaderValue]>);

impl Origins {
    /// `origins` (already checked by the config), or `None` when there are none.
    pub(super) fn new(origins: &[String]) -> Option<Origins> {
        let values: Vec<HeaderValue> = origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        (!values.is_empty()).then(|| Origins(values.into()))
    }

    fn allowed<'a>(&self, headers: &'a HeaderMap) -> Option<&'a HeaderValue> {
        headers
            .get(header::ORIGIN)
            .filter(|origin| self.0.iter().any(|o| o == *origin))
    }
}

/// The routes behind CORS for `origins` (none: no CORS at all).
#[derive(Clone)]
pub(super) struct Cors<S> {
    pub(super) inner: S,
    pub(super) origins: Option<Origins>,
}

impl<S, B> Service<Request<B>> for Cors<S>
where
    S: Service<Request<B>, Response = Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Either<
        Either<S::Future, BoxFuture<Self::Response, S::Error>>,
        Ready<Result<Self::Response, S::Error>>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let Some(origins) = &self.origins else {
            return Either::Left(Either::Left(self.inner.call(request)));
        };
        let Some(origin) = origins.allowed(request.headers()).cloned() else {
            // Caches must not serve one origin's answer to another.
            let answered = self.inner.call(request);
            return Either::Left(Either::Right(Box::pin(async move {
                let mut response = answered.await?;
                vary(response.headers_mut());
                Ok(response)
            })));
        };
        if request.method() == Method::OPTIONS
            && request
                .headers()
                .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        {
            return Either::Right(future::ready(Ok(preflight(origin))));
        }
        let answered = self.inner.call(request);
        Either::Left(Either::Right(Box::pin(async move {
            let mut response = answered.await?;
            let headers = response.headers_mut();
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSE_HEADERS),
            );
            vary(headers);
            Ok(response)
        })))
    }
}

/// The answer to an allowed origin's preflight.
fn preflight(origin: HeaderValue) -> Response<tonic::body::Body> {
    let mut response = Response::new(tonic::body::Body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(MAX_AGE),
    );
    vary(headers);
    response
}

fn vary(headers: &mut HeaderMap) {
    headers.append(header::VARY, HeaderValue::from_static("origin"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every request 200 with no headers.
    #[derive(Clone)]
    struct Ok200;

    impl Service<Request<()>> for Ok200 {
        type Response = Response<tonic::body::Body>;
        type Error = std::convert::Infallible;
        type Future = Ready<Result<Self::Response, Self::Error>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, _: Request<()>) -> Self::Future {
            future::ready(Ok(Response::new(tonic::body::Body::empty())))
        }
    }

    fn cors(origins: &[&str]) -> Cors<Ok200> {
        let origins: Vec<String> = origins.iter().map(|o| o.to_string()).collect();
        Cors {
            inner: Ok200,
            origins: Origins::new(&origins),
        }
    }

    async fn answer(cors: &mut Cors<Ok200>, method: Method, origin: Option<&str>) -> HeaderMap {
        let mut request = Request::builder().method(method.clone()).uri("/x");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if method == Method::OPTIONS {
            request = request.header("access-control-request-method", "POST");
        }
        let response = cors.call(request.body(()).unwrap()).await.unwrap();
        response.headers().clone()
    }

    fn cors_headers(headers: &HeaderMap) -> Vec<String> {
        headers
            .keys()
            .map(|k| k.as_str().to_string())
            .filter(|k| k.starts_with("access-control-"))
            .collect()
    }

    #[tokio::test]
    async fn an_allowed_origin_gets_its_preflight_and_the_exposed_headers() {
        let mut cors = cors(&["https://a.example", "http://localhost:8080"]);
        let pre = answer(&mut cors, Method::OPTIONS, Some("http://localhost:8080")).await;
        assert_eq!(pre["access-control-allow-origin"], "http://localhost:8080");
        assert_eq!(pre["access-control-allow-methods"], ALLOW_METHODS);
        for h in ["x-grpc-web", "x-user-agent", "grpc-timeout", "traceparent"] {
            let allowed = pre["access-control-allow-headers"].to_str().unwrap();
            assert!(allowed.split(", ").any(|a| a == h), "{h} not in {allowed}");
        }
        let call = answer(&mut cors, Method::POST, Some("https://a.example")).await;
        assert_eq!(call["access-control-allow-origin"], "https://a.example");
        let exposed = call["access-control-expose-headers"].to_str().unwrap();
        for h in ["grpc-status", "grpc-message", "grpc-status-details-bin"] {
            assert!(exposed.split(", ").any(|e| e == h), "{h} not in {exposed}");
        }
        assert_eq!(call["vary"], "origin");
    }

    #[tokio::test]
    async fn another_origin_or_none_gets_no_cors_header() {
        let mut cors = cors(&["https://a.example"]);
        for origin in [
            Some("https://b.example"),
            Some("https://a.example.evil"),
            None,
        ] {
            for method in [Method::OPTIONS, Method::POST] {
                let headers = answer(&mut cors, method.clone(), origin).await;
                assert_eq!(
                    cors_headers(&headers),
                    Vec::<String>::new(),
                    "{method} {origin:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn with_no_origins_the_layer_adds_nothing() {
        let mut cors = cors(&[]);
        assert!(cors.origins.is_none());
        let headers = answer(&mut cors, Method::OPTIONS, Some("https://a.example")).await;
        assert!(headers.is_empty(), "{headers:?}");
    }
}
