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

/// The client's TLS, read from the flags' files once.
#[derive(Clone)]
struct Tls {
    config: Arc<ClientConfig>,
    verifier: Arc<WebPkiServerVerifier>,
    /// The PEM of --client-cert and --client-key, for tonic's TLS.
    identity: Option<(Vec<u8>, Vec<u8>)>,
    /// --ca-cert, as a refused certificate's advice names it.
    ca_cert: Option<PathBuf>,
}

fn read(flag: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {flag} {}", path.display()))
}

fn certificates(
    flag: &str,
    path: &Path,
    pem: &[u8],
) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("bad PEM in {flag} {}", path.display()))?;
    if certs.is_empty() {
        return Err(anyhow!("no certificate in {flag} {}", path.display()));
    }
    Ok(certs)
}

impl Tls {
    fn load(args: &TlsArgs) -> anyhow::Result<Tls> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        match &args.ca_cert {
            Some(path) => {
                let pem = read("--ca-cert", path)?;
                for cert in certificates("--ca-cert", path, &pem)? {
                    roots.add(cert).with_context(|| {
                        format!("bad CA certificate in --ca-cert {}", path.display())
                    })?;
                }
            }
            None => {
                // Certificates the system holds but rustls cannot use are
                // skipped, as a browser would.
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(anyhow!(
                        "found no CA certificates on this system; give the server's CA with --ca-cert FILE"
                    ));
                }
            }
        }
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .context("cannot build the certificate verifier")?;
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_webpki_verifier(verifier.clone());
        let (mut config, identity) = match (&args.client_cert, &args.client_key) {
            (Some(cert_path), Some(key_path)) => {
                let cert_pem = read("--client-cert", cert_path)?;
                let key_pem = read("--client-key", key_path)?;
                let chain = certificates("--client-cert", cert_path, &cert_pem)?;
                let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
                    anyhow!("no private key in --client-key {}: {e}", key_path.display())
                })?;
                let config = builder.with_client_auth_cert(chain, key).with_context(|| {
                    format!(
                        "--client-key {} does not fit --client-cert {}",
                        key_path.display(),
                        cert_path.display()
                    )
                })?;
                (config, Some((cert_pem, key_pem)))
            }
            _ => (builder.with_no_client_auth(), None),
        };
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            verifier,
            identity,
            ca_cert: args.ca_cert.clone(),
        })
    }

    /// `target`'s endpoint with tonic's TLS on this verifier and identity.
    fn tonic_endpoint(&self, target: &Target) -> anyhow::Result<Endpoint> {
        let mut tls = ClientTlsConfig::new();
        if let Some((cert, key)) = &self.identity {
            tls = tls.identity(Identity::from_pem(cert, key));
        }
        target
            .endpoint()
            .tls_config_with_verifier(tls, self.verifier.clone())
            .with_context(|| format!("TLS for {}", target.url))
    }
}

/// Why a server was refused before any call: a mistake in the command
/// (scheme, certificates), which trying again would not mend.
#[derive(Debug, Clone)]
pub struct Refused {
    /// The server, as `host:port`.
    at: String,
    why: Why,
}

#[derive(Debug, Clone)]
enum Why {
    /// Occurs when an `http://` server answers in TLS.
    SpeaksTls,
    /// Occurs when an `https://` server answers the TLS hello in something else.
    NoTls,
    /// Occurs when the server's certificate is past its end, given when known.
    Expired(Option<u64>),
    /// Occurs when the server's certificate is not valid yet.
    NotYetValid,
    /// Occurs when the server's certificate chains to no trusted CA;
    /// holds --ca-cert when one was given.
    UnknownIssuer(Option<PathBuf>),
    /// Occurs when the server's certificate is for other names.
    OtherName(String),
    /// Occurs when the server's certificate is refused for another reason.
    Certificate(String),
    /// Occurs when a server that wants a client certificate got none.
    ClientCertWanted,
    /// Occurs when the server refused the client's certificate, with its alert.
    ClientCertRefused(String),
    /// Occurs when the server does not offer HTTP/2 over TLS.
    NoHttp2,
    /// Occurs when TLS failed otherwise.
    Tls(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = &self.at;
        let cert = format!("the certificate of the server at {at}");
        match &self.why {
            Why::SpeaksTls => write!(f, "the server at {at} speaks TLS: use https://{at}"),
            Why::NoTls => write!(f, "the server at {at} does not speak TLS: use http://{at}"),
            Why::Expired(Some(end)) => write!(f, "{cert} expired on {}", utc(*end)),
            Why::Expired(None) => write!(f, "{cert} expired"),
            Why::NotYetValid => write!(f, "{cert} is not valid yet"),
            Why::UnknownIssuer(Some(ca)) => write!(
                f,
                "{cert} is not signed by the CA in --ca-cert {}",
                ca.display()
            ),
            Why::UnknownIssuer(None) => write!(
                f,
                "{cert} is not signed by a CA this system trusts; give its CA with --ca-cert FILE"
            ),
            Why::OtherName(names) => write!(f, "{cert} is not for that name ({names})"),
            Why::Certificate(e) => write!(f, "{cert} is refused: {e}"),
            Why::ClientCertWanted => write!(
                f,
                "the server at {at} asks for a client certificate (mutual TLS); give --client-cert and --client-key"
            ),
            Why::ClientCertRefused(alert) => write!(
                f,
                "the server at {at} refused the client certificate ({alert}); is it signed by a CA the server trusts?"
            ),
            Why::NoHttp2 => write!(f, "the server at {at} does not offer HTTP/2 over TLS"),
            Why::Tls(e) => write!(f, "TLS with the server at {at} failed: {e}"),
        }
    }
}

impl std::error::Error for Refused {}

/// `secs` since 1970 as a UTC date and time.
fn utc(secs: u64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// True when `bytes` open a TLS record: a content type (change cipher
/// spec, alert, handshake, application data) and major version 3. No
/// HTTP/2 server starts so: its first frame is a SETTINGS frame, whose
/// 3-byte length would then be over a megabyte.
fn tls_record(bytes: &[u8]) -> bool {
    matches!(bytes, [20..=23, 3, ..] | [20..=23])
}

/// What a TLS failure means for the user, or `None` for an I/O failure
/// that is no TLS's.
fn why_tls_failed(err: &io::Error, has_identity: bool, ca_cert: &Option<PathBuf>) -> Option<Why> {
    use rustls::Error as E;
    let tls = err.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some(match tls {
        E::InvalidCertificate(cert) => match cert {
            CertificateError::Expired => Why::Expired(None),
            CertificateError::ExpiredContext { not_after, .. } => {
                Why::Expired(Some(not_after.as_secs()))
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                Why::NotYetValid
            }
            CertificateError::UnknownIssuer => Why::UnknownIssuer(ca_cert.clone()),
            CertificateError::NotValidForName => Why::OtherName("another name".into()),
            CertificateError::NotValidForNameContext {
                expected,
                presented,
            } => Why::OtherName(format!(
                "wanted {}, it names {}",
                expected.to_str(),
                presented.join(", ")
            )),
            other => Why::Certificate(format!("{other:?}")),
        },
        E::AlertReceived(AlertDescription::CertificateRequired) => Why::ClientCertWanted,
        E::AlertReceived(AlertDescription::HandshakeFailure) if !has_identity => {
            Why::ClientCertWanted
        }
        E::AlertReceived(
            alert @ (AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateRevoked
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::AccessDenied),
        ) if has_identity => Why::ClientCertRefused(format!("{alert:?}")),
        E::AlertReceived(AlertDescription::NoApplicationProtocol) => Why::NoHttp2,
        other => Why::Tls(other.to_string()),
    })
}

/// The first reply of a connection, as [`Watched`] saw it.
#[derive(Debug, Clone)]
enum Reply {
    /// Bytes that are neither TLS where HTTP/2 was due nor an alert.
    Answered,
    /// The server's reply refuses the connection for a reason in the command.
    Refused(Refused),
    /// Closed or failed without a word: left to the calls, which say so.
    Nothing,
}

/// Where the first connection of a channel tells its first reply.
type Told = Arc<watch::Sender<Option<Reply>>>;

/// The stream under the channel: TCP or TLS over TCP.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A stream whose first reply is looked at (see the module's doc), then
/// passed through.
struct Watched {
    io: Box<dyn Io>,
    /// Until the first reply.
    first: Option<First>,
}

struct First {
    told: Told,
    at: String,
    /// `http://`: TLS in the first bytes is the wrong scheme.
    plain: bool,
    has_identity: bool,
}

impl First {
    /// What the first read, which put `got` in the buffer, says.
    fn judge(&self, read: &io::Result<()>, got: &[u8]) -> Reply {
        let refused = |why| {
            Reply::Refused(Refused {
                at: self.at.clone(),
                why,
            })
        };
        match read {
            Ok(()) if got.is_empty() => Reply::Nothing,
            Ok(()) if self.plain && tls_record(got) => refused(Why::SpeaksTls),
            Ok(()) => Reply::Answered,
            Err(e) => why_tls_failed(e, self.has_identity, &None).map_or(Reply::Nothing, refused),
        }
    }

    /// Tells `reply` when it is the channel's first; a refusal becomes the
    /// connection's error, so that HTTP/2 never reads an alert as a frame.
    fn tell<T>(self, reply: Reply, otherwise: io::Result<T>) -> io::Result<T> {
        self.told.send_if_modified(|r| {
            let first = r.is_none();
            if first {
                *r = Some(reply.clone());
            }
            first
        });
        match reply {
            Reply::Refused(r) => Err(io::Error::other(r)),
            _ => otherwise,
        }
    }
}

impl Watched {
    /// A write failed before the first reply was read: a server that
    /// refused the handshake (mutual TLS, in TLS 1.3 after the client's
    /// side of it) has sent its alert and closed, and the HTTP/2 preface
    /// then meets a broken pipe. The alert is still there to read; until
    /// the socket says so, the write waits (on the read's wake-up), and
    /// the writer that tries again meets the same broken pipe.
    fn write_failed<T>(&mut self, cx: &mut Context<'_>, err: io::Error) -> Poll<io::Result<T>> {
        let Some(first) = self.first.take() else {
            return Poll::Ready(Err(err));
        };
        let mut scratch = [0u8; 64];
        let mut buf = ReadBuf::new(&mut scratch);
        match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
            Poll::Ready(read) => {
                let reply = first.judge(&read, buf.filled());
                Poll::Ready(first.tell(reply, Err(err)))
            }
            Poll::Pending => {
                self.first = Some(first);
                Poll::Pending
            }
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // Gone before a reply: nothing to wait for.
        if let Some(first) = self.first.take() {
            let _ = first.tell(Reply::Nothing, Ok(()));
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.first.is_none() {
            return Pin::new(&mut this.io).poll_read(cx, buf);
        }
        let before = buf.filled().len();
        let read = ready!(Pin::new(&mut this.io).poll_read(cx, buf));
        let Some(first) = this.first.take() else {
            return Poll::Ready(read);
        };
        let reply = first.judge(&read, &buf.filled()[before..]);
        Poll::Ready(first.tell(reply, read))
    }
}

/// Passes a write's result on, or, when it failed before the first reply,
/// what that reply says (see [`Watched::write_failed`]).
macro_rules! written {
    ($this:ident, $cx:ident, $call:expr) => {
        match ready!($call) {
            Err(e) if $this.first.is_some() => $this.write_failed($cx, e),
            done => Poll::Ready(done),
        }
    };
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        written!(this, cx, Pin::new(&mut this.io).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        written!(
            this,
            cx,
            Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
        )
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        written!(this, cx, Pin::new(&mut this.io).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// TCP under a TLS handshake, keeping the first bytes the server sent: a
/// handshake that failed on bytes that are no TLS record met a server
/// that does not speak TLS.
struct Tap {
    tcp: TcpStream,
    first: Vec<u8>,
}

impl AsyncRead for Tap {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = ready!(Pin::new(&mut this.tcp).poll_read(cx, buf));
        if this.first.len() < 2 {
            let got = &buf.filled()[before..];
            let want = (2 - this.first.len()).min(got.len());
            this.first.extend_from_slice(&got[..want]);
        }
        Poll::Ready(read)
    }
}

impl AsyncWrite for Tap {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

/// What the connector needs to open a connection to one server.
#[derive(Clone)]
struct Dial {
    host: Arc<str>,
    port: u16,
    at: Arc<str>,
    tls: Option<Tls>,
    told: Told,
}

impl Dial {
    async fn open(self) -> io::Result<TokioIo<Watched>> {
        let tcp = TcpStream::connect((&*self.host, self.port)).await?;
        tcp.set_nodelay(true)?;
        let refused = |why| {
            io::Error::other(Refused {
                at: self.at.to_string(),
                why,
            })
        };
        let io: Box<dyn Io> = match &self.tls {
            None => Box::new(tcp),
            Some(tls) => {
                let name = ServerName::try_from(self.host.to_string()).map_err(|e| {
                    refused(Why::Tls(format!("{:?} is no server name: {e}", self.host)))
                })?;
                let tap = Tap {
                    tcp,
                    first: Vec::with_capacity(2),
                };
                let handshake = tokio_rustls::TlsConnector::from(tls.config.clone())
                    .connect(name, tap)
                    .into_fallible();
                match handshake.await {
                    Ok(stream) => {
                        if stream
                            .get_ref()
                            .1
                            .alpn_protocol()
                            .is_some_and(|p| p != b"h2")
                        {
                            return Err(refused(Why::NoHttp2));
                        }
                        Box::new(stream)
                    }
                    Err((err, tap)) => {
                        if !tap.first.is_empty() && !tls_record(&tap.first) {
                            return Err(refused(Why::NoTls));
                        }
                        return Err(
                            match why_tls_failed(&err, tls.identity.is_some(), &tls.ca_cert) {
                                Some(why) => refused(why),
                                None => err,
                            },
                        );
                    }
                }
            }
        };
        Ok(TokioIo::new(Watched {
            io,
            first: Some(First {
                told: self.told.clone(),
                at: self.at.to_string(),
                plain: self.tls.is_none(),
                has_identity: self.tls.as_ref().is_some_and(|t| t.identity.is_some()),
            }),
        }))
    }
}

/// The [`Refused`] somewhere in `err`'s chain of causes.
fn refusal<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if let Some(r) = e.downcast_ref::<Refused>() {
            return Some(r);
        }
        if let Some(r) = e
            .downcast_ref::<io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<Refused>())
        {
            return Some(r);
        }
        cause = e.source();
    }
    None
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
    fn tls_records_and_http2_frames_told_apart() {
        // An alert (what a TLS server answers the HTTP/2 preface with) and
        // a handshake record.
        assert!(tls_record(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(tls_record(&[0x16, 0x03, 0x01]));
        assert!(tls_record(&[0x15]));
        // A SETTINGS frame, an HTTP/1 answer.
        assert!(!tls_record(&[0x00, 0x00, 0x12, 0x04]));
        assert!(!tls_record(b"HTTP/1.1 400"));
        assert!(!tls_record(&[]));
    }

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

    #[test]
    fn refusals_in_words() {
        let at = |why| Refused {
            at: "127.0.0.1:50443".into(),
            why,
        };
        assert_eq!(
            at(Why::SpeaksTls).to_string(),
            "the server at 127.0.0.1:50443 speaks TLS: use https://127.0.0.1:50443"
        );
        assert_eq!(
            at(Why::NoTls).to_string(),
            "the server at 127.0.0.1:50443 does not speak TLS: use http://127.0.0.1:50443"
        );
        // 2021-01-01T00:00:00Z and a leap day.
        assert_eq!(utc(1_609_459_200), "2021-01-01 00:00:00 UTC");
        assert_eq!(utc(951_827_696), "2000-02-29 12:34:56 UTC");
        assert!(
            at(Why::Expired(Some(1_609_459_200)))
                .to_string()
                .ends_with("expired on 2021-01-01 00:00:00 UTC")
        );
    }
}
