//! The connector under a channel to one server: TCP, TLS for `https://`,
//! and a watch on the first reply (see the parent module's doc).

use super::*;

/// The first reply of a connection, as [`Watched`] saw it.
#[derive(Debug, Clone)]
pub(super) enum Reply {
    /// Bytes that are neither TLS where HTTP/2 was due nor an alert.
    Answered,
    /// The server's reply refuses the connection for a reason in the command.
    Refused(Refused),
    /// Closed or failed without a word: left to the calls, which say so.
    Nothing,
}

/// Where the first connection of a channel tells its first reply.
pub(super) type Told = Arc<watch::Sender<Option<Reply>>>;

/// The stream under the channel: TCP or TLS over TCP.
pub(super) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A stream whose first reply is looked at (see the module's doc), then
/// passed through.
pub(super) struct Watched {
    io: Box<dyn Io>,
    /// Until the first reply.
    first: Option<First>,
}

pub(super) struct First {
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
pub(super) struct Tap {
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
pub(super) struct Dial {
    pub(super) host: Arc<str>,
    pub(super) port: u16,
    pub(super) at: Arc<str>,
    pub(super) tls: Option<Tls>,
    pub(super) told: Told,
}

impl Dial {
    pub(super) async fn open(self) -> io::Result<TokioIo<Watched>> {
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
