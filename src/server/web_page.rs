//! The web page at `/`: web/ built into web/dist/ (by web/build.mjs, the
//! bundle committed so a build needs no node) and embedded in the binary.
//!
//! GET or HEAD of `/`, `/app.js` or `/app.css` is answered here, in front
//! of gRPC-Web, which would refuse such a request (tonic-web answers 400 to
//! an HTTP/1.1 request that is not gRPC-Web). Every other request, any
//! other method or path, goes on to gRPC-Web and gRPC untouched.
//!
//! The three files are small and change only with the binary, so each is
//! sent whole with an ETag of its bytes and `Cache-Control: no-cache`: a
//! browser keeps its copy and asks again each time, and a matching
//! `If-None-Match` is answered 304 with no body. The page talks only to
//! its own origin, which its Content-Security-Policy says.
//! `--no-web-page` turns it off.

use std::sync::LazyLock;

use futures::future::{self, Either, Ready};
use http_body_util::Full;
use tonic::codegen::http::header::{self, HeaderMap, HeaderValue};
use tonic::codegen::http::{Method, Request, Response, StatusCode};
use tonic::codegen::{Bytes, Context, Poll, Service};

/// One embedded file and how it is served.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

const ASSETS: [Asset; 3] = [
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../../web/dist/index.html"),
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/dist/app.js"),
    },
    Asset {
        path: "/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../web/dist/app.css"),
    },
];

/// The page's policy: its own scripts, styles and calls, nothing else, and
/// no framing by other sites.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Every asset's ETag: a strong validator of its bytes (FNV-1a, 64 bits).
static ETAGS: LazyLock<[HeaderValue; 3]> = LazyLock::new(|| {
    ASSETS.map(|a| {
        HeaderValue::from_str(&format!("\"{:016x}\"", fnv1a(a.body)))
            .unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
    })
});

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `inner` with the page in front of it, when `on`.
#[derive(Clone)]
pub(super) struct WebPage<S> {
    pub(super) inner: S,
    pub(super) on: bool,
}

impl<S, B> Service<Request<B>> for WebPage<S>
where
    S: Service<Request<B>, Response = Response<tonic::body::Body>>,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Either<S::Future, Ready<Result<Self::Response, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if self.on
            && let Some(response) =
                answer(request.method(), request.uri().path(), request.headers())
        {
            return Either::Right(future::ready(Ok(response)));
        }
        Either::Left(self.inner.call(request))
    }
}

/// The page's answer to a request, or `None` when it is not for the page.
fn answer(method: &Method, path: &str, headers: &HeaderMap) -> Option<Response<tonic::body::Body>> {
    let head = match *method {
        Method::GET => false,
        Method::HEAD => true,
        _ => return None,
    };
    let at = ASSETS.iter().position(|a| a.path == path)?;
    let asset = &ASSETS[at];
    let etag = ETAGS[at].clone();
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim() == "*" || tag.trim() == etag);
    let (status, body) = match (fresh, head) {
        (true, _) => (StatusCode::NOT_MODIFIED, tonic::body::Body::empty()),
        (false, true) => (StatusCode::OK, tonic::body::Body::empty()),
        (false, false) => (
            StatusCode::OK,
            tonic::body::Body::new(Full::new(Bytes::from_static(asset.body))),
        ),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(header::ETAG, etag);
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if status == StatusCode::OK {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(asset.body.len()));
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        if asset.path == "/" {
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            );
        }
    }
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn get(
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Option<(StatusCode, HeaderMap, Bytes)> {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        let response = answer(&method, path, &map)?;
        let (parts, body) = response.into_parts();
        Some((
            parts.status,
            parts.headers,
            body.collect().await.unwrap().to_bytes(),
        ))
    }

    #[tokio::test]
    async fn the_three_files_are_served_with_their_types_and_validators() {
        for (path, ty, starts) in [
            ("/", "text/html; charset=utf-8", "<!doctype html>"),
            ("/app.js", "text/javascript; charset=utf-8", ""),
            ("/app.css", "text/css; charset=utf-8", ":root"),
        ] {
            let (status, headers, body) = get(Method::GET, path, &[]).await.unwrap();
            assert_eq!(status, StatusCode::OK, "{path}");
            assert_eq!(headers["content-type"], ty, "{path}");
            assert_eq!(headers["cache-control"], "no-cache");
            assert_eq!(headers["content-length"], body.len().to_string().as_str());
            assert!(body.starts_with(starts.as_bytes()), "{path}");
            let etag = headers["etag"].to_str().unwrap().to_string();
            let (status, _, body) = get(Method::GET, path, &[("if-none-match", &etag)])
                .await
                .unwrap();
            assert_eq!(status, StatusCode::NOT_MODIFIED, "{path}");
            assert!(body.is_empty());
            let (status, headers, body) = get(Method::HEAD, path, &[]).await.unwrap();
            assert_eq!(status, StatusCode::OK);
            assert_eq!(
                headers["content-length"],
                ASSETS
                    .iter()
                    .find(|a| a.path == path)
                    .unwrap()
                    .body
                    .len()
                    .to_string()
                    .as_str()
            );
            assert!(body.is_empty());
        }
        let (_, headers, _) = get(Method::GET, "/", &[]).await.unwrap();
        assert!(
            headers["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("connect-src 'self'")
        );
    }

    #[tokio::test]
    async fn other_methods_and_paths_are_not_the_pages() {
        assert!(get(Method::POST, "/", &[]).await.is_none());
        assert!(get(Method::OPTIONS, "/app.js", &[]).await.is_none());
        for path in [
            "/index.html",
            "/app.js.map",
            "/sudoku.v1.SudokuService/Solve",
            "//",
            "",
        ] {
            assert!(get(Method::GET, path, &[]).await.is_none(), "{path}");
        }
    }

    #[test]
    fn different_bytes_have_different_etags() {
        assert_ne!(ETAGS[0], ETAGS[1]);
        assert_ne!(ETAGS[1], ETAGS[2]);
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
