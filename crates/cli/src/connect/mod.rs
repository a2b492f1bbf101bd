//! Connecting to servers: one HTTP/2 channel per address, or one channel
//! balanced over several; over TLS for `https://` addresses.
//!
//! A channel to one server runs on a connector of our own: TCP, then TLS
//! for `https://`, then a watch on the first bytes the server sends. What
//! that first reply says is known before any call is made:
//!
//! - `http://` whose reply is a TLS record (a server that speaks TLS reads
//!   the HTTP/2 preface as a broken handshake and answers with an alert):
//!   the wrong scheme, said as such.
//! - `https://` whose handshake gets bytes that are no TLS record (an
//!   HTTP/2 or HTTP/1 server answering a ClientHello): the wrong scheme.
//! - A certificate the client refuses (unknown CA, expired, another name),
//!   or an alert from a server that refuses the client's (mutual TLS; in
//!   TLS 1.3 that alert comes after the client's side of the handshake, as
//!   the first reply).
//!
//! Several servers are each connected that way once first; the channel
//! balanced over them is tonic's, with tonic's TLS on the same verifier and
//! client identity.

mod probe;
mod refused;
mod tls;

use probe::{Dial, Reply};
use refused::{Refused, Why, refusal, tls_record, why_tls_failed};
use tls::Tls;

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::Args;
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_rustls::rustls::{
    self, AlertDescription, CertificateError, ClientConfig, RootCertStore,
    client::WebPkiServerVerifier,
};
use tonic::codegen::http::Uri;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint, Identity};

/// The TLS flags of every command that calls a server; they apply to
/// `https://` servers only.
#[derive(Debug, Clone, Default, Args)]
pub struct TlsArgs {
    /// CA certificates (PEM) that https:// servers' certificates must chain
    /// to, instead of the system's.
    #[arg(
        long,
        env = "SUDOKU_CA_CERT",
        value_name = "FILE",
        help_heading = "TLS"
    )]
    pub ca_cert: Option<PathBuf>,
    /// Client certificate chain (PEM), for servers that ask for one
    /// (mutual TLS); needs --client-key.
    #[arg(
        long,
        env = "SUDOKU_CLIENT_CERT",
        value_name = "FILE",
        requires = "client_key",
        help_heading = "TLS"
    )]
    pub client_cert: Option<PathBuf>,
    /// Private key (PEM) of --client-cert.
    #[arg(
        long,
        env = "SUDOKU_CLIENT_KEY",
        value_name = "FILE",
        requires = "client_cert",
        help_heading = "TLS"
    )]
    pub client_key: Option<PathBuf>,
}

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// While calls are open, the client pings a server that has sent nothing
/// for this long, and gives the connection up when the ping is not
/// answered within [`KEEPALIVE_TIMEOUT`]: a server that stops answering
/// without closing its socket (stopped, or cut off) then fails its calls
/// as one that died, whose puzzles go to the other servers, instead of
/// holding the run for ever. The server answers pings on its I/O threads,
/// so one busy solving does not miss them.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// What to do about a server that is not there.
const START_ONE: &str =
    "start a server there (sudoku-server --listen ...) or solve in this process with --local";

/// A server address: `host:port` means plain HTTP/2 (`http://host:port`).
struct Target {
    /// As the user gave it, with `http://` added to a bare `host:port`.
    url: String,
    uri: Uri,
    /// `host:port`, as messages name the server.
    at: String,
    /// The host without the brackets of an IPv6 address.
    host: String,
    port: u16,
    tls: bool,
}

impl Target {
    fn of(server: &str) -> anyhow::Result<Target> {
        let server = server.trim();
        let url = if server.contains("://") {
            server.to_string()
        } else {
            format!("http://{server}")
        };
        let bad = || {
            anyhow!(
                "bad server address {server:?}; expected host:port, http://host:port or https://host:port"
            )
        };
        let uri: Uri = url.parse().map_err(|_| bad())?;
        let tls = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(bad()),
        };
        let authority = uri.authority().ok_or_else(bad)?;
        let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Ok(Target {
            at: authority.to_string(),
            url,
            uri,
            host,
            port,
            tls,
        })
    }

    /// The endpoint tonic connects: keep-alive and time-outs set; TLS is
    /// the connector's (or, balanced, tonic's).
    fn endpoint(&self) -> Endpoint {
        Target::settings(Endpoint::from(self.uri.clone()))
    }

    fn settings(endpoint: Endpoint) -> Endpoint {
        endpoint
            .tcp_nodelay(true)
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT)
    }
}

/// Why a connection to one server failed.
enum Failure {
    /// Refused for a reason in the command: no other server mends it.
    Refused(Refused),
    /// Not reached (refused, reset, timed out), with the innermost cause.
    Down { url: String, cause: String },
}

impl Failure {
    fn of(url: &str, err: &(dyn std::error::Error + 'static)) -> Failure {
        if let Some(r) = refusal(err) {
            return Failure::Refused(r.clone());
        }
        let mut cause: &(dyn std::error::Error + 'static) = err;
        while let Some(next) = cause.source() {
            cause = next;
        }
        let cause = match cause.downcast_ref::<io::Error>() {
            Some(io) if io.kind() == io::ErrorKind::ConnectionRefused => {
                "connection refused".to_string()
            }
            _ => cause.to_string(),
        };
        Failure::Down {
            url: url.to_string(),
            cause,
        }
    }

    fn into_error(self) -> anyhow::Error {
        match self {
            Failure::Refused(r) => anyhow::Error::new(r),
            Failure::Down { url, cause } if cause == "connection refused" => {
                anyhow!("cannot connect to {url}: connection refused; {START_ONE}")
            }
            Failure::Down { url, cause } => anyhow!("cannot connect to {url}: {cause}"),
        }
    }
}

/// The TLS settings when any of `targets` is `https://`.
fn tls_for(targets: &[Target], args: &TlsArgs) -> anyhow::Result<Option<Tls>> {
    match targets.iter().any(|t| t.tls) {
        true => Tls::load(args).map(Some),
        false => Ok(None),
    }
}

/// A channel to `target` on our connector, once its first reply has come
/// (or [`CONNECT_TIMEOUT`] has passed: a server that accepts late is then
/// left to the calls, as a server that has not answered yet is).
async fn connect_one(target: &Target, tls: Option<&Tls>) -> Result<Channel, Failure> {
    let (told, mut first) = watch::channel(None);
    let dial = Dial {
        host: target.host.as_str().into(),
        port: target.port,
        at: target.at.as_str().into(),
        tls: tls.filter(|_| target.tls).cloned(),
        told: Arc::new(told),
    };
    // tonic would add TLS of its own to an `https://` endpoint: the
    // connector's is `http://`, and its origin says `https://` in every
    // request.
    let endpoint = match target.tls {
        false => target.endpoint(),
        true => match format!("http://{}", target.at).parse::<Uri>() {
            Ok(plain) => Target::settings(Endpoint::from(plain)).origin(target.uri.clone()),
            Err(e) => return Err(Failure::of(&target.url, &e)),
        },
    };
    let channel = endpoint
        .connect_with_connector(tower::service_fn(move |_: Uri| dial.clone().open()))
        .await
        .map_err(|e| Failure::of(&target.url, &e))?;
    if let Ok(Ok(reply)) =
        tokio::time::timeout(CONNECT_TIMEOUT, first.wait_for(Option::is_some)).await
        && let Some(Reply::Refused(r)) = &*reply
    {
        return Err(Failure::Refused(r.clone()));
    }
    Ok(channel)
}

/// Connects a channel to `server` (host:port, or an http:// or https:// URL).
pub async fn connect(server: &str, tls: &TlsArgs) -> anyhow::Result<Channel> {
    let target = Target::of(server)?;
    let settings = tls_for(std::slice::from_ref(&target), tls)?;
    connect_one(&target, settings.as_ref())
        .await
        .map_err(Failure::into_error)
}

/// One channel over `servers`: connected at once when there is one (so a
/// wrong address is said before any work), else balanced by tonic over all
/// of them. Each of several is tried once first: when none answers the
/// run ends at once with why, as for one, and so does one refused for a
/// reason in the command (the scheme, a certificate); a server down at the
/// start is said on stderr and left to the balancer, which takes it in
/// when it comes up.
pub async fn connect_all(servers: &[String], tls: &TlsArgs) -> anyhow::Result<Channel> {
    let targets = servers
        .iter()
        .map(|s| Target::of(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let settings = tls_for(&targets, tls)?;
    match targets.as_slice() {
        [] => Err(anyhow!("no server given")),
        [one] => connect_one(one, settings.as_ref())
            .await
            .map_err(Failure::into_error),
        many => {
            let tried =
                futures::future::join_all(many.iter().map(|t| connect_one(t, settings.as_ref())))
                    .await;
            let mut down = Vec::new();
            for failure in tried.into_iter().filter_map(Result::err) {
                match failure {
                    Failure::Refused(r) => return Err(anyhow::Error::new(r)),
                    Failure::Down { url, cause } => down.push(format!("{url}: {cause}")),
                }
            }
            if down.len() == many.len() {
                let refused = down.iter().all(|d| d.ends_with("connection refused"));
                return Err(anyhow!(
                    "cannot connect to any of the {} servers ({}){}",
                    many.len(),
                    down.join(", "),
                    if refused {
                        format!("; {START_ONE}")
                    } else {
                        String::new()
                    }
                ));
            }
            for d in &down {
                eprintln!("sudoku: cannot connect to {d}; going on with the other servers");
            }
            let endpoints = many
                .iter()
                .map(|t| match (&settings, t.tls) {
                    (Some(tls), true) => tls.tonic_endpoint(t),
                    _ => Ok(t.endpoint()),
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(Channel::balance_list(endpoints.into_iter()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_their_schemes() {
        let bare = Target::of("127.0.0.1:50051").unwrap();
        assert_eq!(
            (bare.url.as_str(), bare.tls),
            ("http://127.0.0.1:50051", false)
        );
        let tls = Target::of(" https://[::1]:50443 ").unwrap();
        assert_eq!((tls.host.as_str(), tls.port, tls.tls), ("::1", 50443, true));
        assert_eq!(tls.at, "[::1]:50443");
        assert_eq!(Target::of("https://example.com").unwrap().port, 443);
        assert!(Target::of("ftp://host:1").is_err());
    }
}
