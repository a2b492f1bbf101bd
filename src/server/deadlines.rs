//! Deadlines a gRPC client must meet while it speaks: its handshake (TLS,
//! then the HTTP/2 preface and first SETTINGS frame) within
//! `--handshake-timeout-ms` of accept, and each header block within
//! `--header-read-timeout-ms` of its first byte. hyper has neither, and its
//! keepalive pings start only after the handshake, so without them a
//! connection that never speaks, or sends a byte at a time, is held for
//! good.
//!
//! [`Frames`] follows the HTTP/2 framing passively as the client's bytes
//! pass: the 24 preface bytes, then 9-byte frame headers, whose payloads it
//! skips by count, so a DATA-heavy stream costs a few operations per frame,
//! not per byte. [`Deadlines`] wraps the connection's plaintext stream
//! (above TLS) with it and a timer that runs only while the client owes
//! something; the timer is polled inside `poll_read`, which hyper always
//! has pending while it waits for the client, so the waiting task wakes
//! when it fires and the read fails with `TimedOut`, which ends the
//! connection. The same read fails when the admission tells a connection
//! still in its handshake to make room (see [`super::admission`]).
//!
//! A connection whose first bytes are not the preface but an HTTP/1.1
//! request line (gRPC-Web from a browser) owes its first request head as
//! its handshake ([`Http1Head`]); hyper's own `header_read_timeout` times
//! every head after it (and the first too), and a connection it closes for
//! that is counted and closed here like one cut for a header deadline.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::admission::Ticket;
use crate::telemetry::metrics::ConnectionClosed;

/// The client connection preface (RFC 9113, section 3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The size of a frame header: length (24 bits), type, flags, stream id.
const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const SETTINGS: u8 = 0x4;
const PUSH_PROMISE: u8 = 0x5;
const CONTINUATION: u8 = 0x9;
/// The flag that ends a header block, on HEADERS, PUSH_PROMISE and
/// CONTINUATION.
const END_HEADERS: u8 = 0x4;

/// What a client owes the server, as far as deadlines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Owed {
    /// Nothing: it is between frames, or inside a frame's payload outside
    /// a header block.
    Nothing,
    /// The rest of the preface and first SETTINGS frame.
    Handshake,
    /// The rest of a frame header, or of a header block.
    Headers,
}

/// The HTTP/2 framing of what a client sent, followed byte count by byte
/// count.
#[derive(Debug, Clone)]
pub(super) struct Frames {
    /// Preface bytes seen so far.
    preface: usize,
    /// The frame header being read, `head_len` bytes of it so far.
    head: [u8; FRAME_HEADER],
    head_len: usize,
    /// Payload bytes of the current frame still to come.
    payload_left: u32,
    frame_type: u8,
    frame_flags: u8,
    /// The first frame, SETTINGS, came in whole: the handshake is over.
    settled: bool,
    /// A header block is open (a HEADERS frame without END_HEADERS yet).
    in_block: bool,
    /// Not HTTP/2 (a wrong preface, a first frame other than SETTINGS):
    /// stop following; hyper refuses the connection itself.
    lost: bool,
    /// HTTP/1.1 instead (see [`Http1Head`]), once the first bytes said so.
    http1: Option<Http1Head>,
}

/// An HTTP/1.1 connection's first request head, followed until its blank
/// line. Its handshake is that head: a client that never speaks, or sends
/// its first head a byte at a time, is cut at the handshake deadline as an
/// HTTP/2 one is. Later heads are hyper's to time (`header_read_timeout`,
/// which runs from the moment hyper waits for a head): following HTTP/1.1
/// bodies byte by byte would mean parsing lengths and chunks here.
#[derive(Debug, Clone, Copy)]
pub(super) struct Http1Head {
    /// Bytes of `\r\n\r\n` matched so far.
    matched: u8,
    /// The blank line came: the handshake is over.
    done: bool,
}

impl Http1Head {
    fn feed(&mut self, bytes: &[u8]) {
        const END: &[u8; 4] = b"\r\n\r\n";
        for &b in bytes {
            if self.done {
                return;
            }
            self.matched = if b == END[self.matched as usize] {
                self.matched + 1
            } else if b == b'\r' {
                1
            } else {
                0
            };
            self.done = self.matched == 4;
        }
    }
}

impl Frames {
    /// The framing of a connection before its first byte.
    pub(super) fn new() -> Frames {
        Frames {
            preface: 0,
            head: [0; FRAME_HEADER],
            head_len: 0,
            payload_left: 0,
            frame_type: 0,
            frame_flags: 0,
            settled: false,
            in_block: false,
            lost: false,
            http1: None,
        }
    }

    /// Follows `bytes`, the next bytes the client sent. True when what the
    /// client owes now (if anything) began within `bytes`, so its deadline
    /// starts now rather than at an earlier read.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) -> bool {
        let mut fresh = false;
        if let Some(head) = &mut self.http1 {
            head.feed(bytes);
            return false;
        }
        while !bytes.is_empty() && !self.lost {
            if self.preface < PREFACE.len() {
                let want = &PREFACE[self.preface..];
                let n = want.len().min(bytes.len());
                if bytes[..n] != want[..n] {
                    self.lost = true;
                    // An HTTP/1.1 request line starts with a method, in
                    // capitals; the preface's own blank line comes at
                    // byte 18, so a mismatch before it leaves none behind.
                    let first = if self.preface == 0 { bytes[0] } else { b'P' };
                    if first.is_ascii_uppercase() && self.preface < 18 {
                        let mut head = Http1Head {
                            matched: 0,
                            done: false,
                        };
                        head.feed(bytes);
                        self.http1 = Some(head);
                    }
                    break;
                }
                self.preface += n;
                bytes = &bytes[n..];
            } else if self.payload_left > 0 {
                let n = bytes.len().min(self.payload_left as usize);
                // n <= payload_left, a u32.
                self.payload_left -= n as u32;
                bytes = &bytes[n..];
                if self.payload_left == 0 {
                    self.frame_done();
                }
            } else {
                if self.head_len == 0 && !self.in_block {
                    // A new frame; a HEADERS frame's block dates from here.
                    fresh = true;
                }
                let n = bytes.len().min(FRAME_HEADER - self.head_len);
                self.head[self.head_len..self.head_len + n].copy_from_slice(&bytes[..n]);
                self.head_len += n;
                bytes = &bytes[n..];
                if self.head_len == FRAME_HEADER {
                    self.head_len = 0;
                    let [l0, l1, l2, frame_type, flags, ..] = self.head;
                    self.payload_left = u32::from_be_bytes([0, l0, l1, l2]);
                    self.frame_type = frame_type;
                    self.frame_flags = flags;
                    if matches!(frame_type, HEADERS | PUSH_PROMISE) {
                        self.in_block = true;
                    }
                    if self.payload_left == 0 {
                        self.frame_done();
                    }
                }
            }
        }
        fresh
    }

    /// The current frame came in whole.
    fn frame_done(&mut self) {
        if !self.settled {
            if self.frame_type == SETTINGS {
                self.settled = true;
            } else {
                self.lost = true;
            }
        }
        if self.in_block
            && matches!(self.frame_type, HEADERS | PUSH_PROMISE | CONTINUATION)
            && self.frame_flags & END_HEADERS != 0
        {
            self.in_block = false;
        }
    }

    /// What the client owes now.
    pub(super) fn owed(&self) -> Owed {
        if let Some(head) = &self.http1 {
            return if head.done {
                Owed::Nothing
            } else {
                Owed::Handshake
            };
        }
        // A connection that is not HTTP/2 never settles: its handshake
        // deadline stands until hyper refuses it.
        if !self.settled {
            Owed::Handshake
        } else if self.in_block || self.head_len > 0 {
            Owed::Headers
        } else {
            Owed::Nothing
        }
    }
}

/// A connection's plaintext stream under the handshake and header
/// deadlines, holding the connection's place under the cap.
pub(super) struct Deadlines<I> {
    io: I,
    frames: Frames,
    owed: Owed,
    /// The deadline of what is owed; polled only while something is.
    timer: Pin<Box<Sleep>>,
    header_timeout: Duration,
    ticket: Ticket,
    /// Why the connection was cut, once it was.
    cut: Option<ConnectionClosed>,
}

impl<I> Deadlines<I> {
    /// `io`, whose handshake must be over by `handshake_deadline` and whose
    /// header blocks must each take at most `header_timeout`.
    pub(super) fn new(
        io: I,
        ticket: Ticket,
        handshake_deadline: Instant,
        header_timeout: Duration,
    ) -> Deadlines<I> {
        Deadlines {
            io,
            frames: Frames::new(),
            owed: Owed::Handshake,
            timer: Box::pin(tokio::time::sleep_until(handshake_deadline)),
            header_timeout,
            ticket,
            cut: None,
        }
    }

    /// False once the connection was cut for a missed deadline or to make
    /// room: its socket is closed at once rather than lingering, so its
    /// descriptor is free for the connection that needed it.
    pub(super) fn should_linger(&self) -> bool {
        self.cut.is_none()
    }

    /// hyper closed the connection for a timeout of its own: on HTTP/1.1,
    /// that is a request head past `header_read_timeout`, which counts as
    /// the header deadline, and the socket is closed at once like any
    /// connection cut for a deadline. (On HTTP/2, hyper's only timeout is
    /// the keepalive ping's, which is not a header deadline.)
    pub(super) fn hyper_timed_out(&mut self) {
        if self.frames.http1.is_some() && self.cut.is_none() {
            let _ = self.cut(ConnectionClosed::HeaderTimeout);
        }
    }

    /// Follows bytes the client sent, moving the deadline with what it owes.
    fn follow(&mut self, bytes: &[u8]) {
        let fresh = self.frames.feed(bytes);
        let owed = self.frames.owed();
        if owed == Owed::Headers && (fresh || self.owed != Owed::Headers) {
            self.timer
                .as_mut()
                .reset(Instant::now() + self.header_timeout);
        }
        if self.owed == Owed::Handshake && owed != Owed::Handshake && !self.ticket.established() {
            // Told to make room just before: the next read fails.
            self.cut = Some(ConnectionClosed::Evicted);
        }
        self.owed = owed;
    }

    fn cut(&mut self, why: ConnectionClosed) -> io::Error {
        self.cut = Some(why);
        self.ticket.count_closed(why);
        cut_error(why)
    }
}

fn cut_error(why: ConnectionClosed) -> io::Error {
    let what = match why {
        ConnectionClosed::HandshakeTimeout => "the client did not finish its handshake in time",
        ConnectionClosed::HeaderTimeout => "the client did not finish a header block in time",
        ConnectionClosed::Evicted => "closed to make room for a newer connection",
        ConnectionClosed::IdleTimeout => "idle for too long",
        ConnectionClosed::SlowBody => "a request body came too slowly",
    };
    io::Error::new(io::ErrorKind::TimedOut, what)
}

impl<I: AsyncRead + Unpin> AsyncRead for Deadlines<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(why) = this.cut {
            return Poll::Ready(Err(cut_error(why)));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let filled = buf.filled();
                if filled.len() > before {
                    this.follow(&filled[before..]);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if this.owed == Owed::Handshake && this.ticket.poll_evicted(cx).is_ready() {
                    // Counted by the admission when it chose this one.
                    this.cut = Some(ConnectionClosed::Evicted);
                    return Poll::Ready(Err(cut_error(ConnectionClosed::Evicted)));
                }
                if this.owed != Owed::Nothing && this.timer.as_mut().poll(cx).is_ready() {
                    let why = match this.owed {
                        Owed::Handshake => ConnectionClosed::HandshakeTimeout,
                        _ => ConnectionClosed::HeaderTimeout,
                    };
                    return Poll::Ready(Err(this.cut(why)));
                }
                Poll::Pending
            }
        }
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Deadlines<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(frame_type: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = (payload.len() as u32).to_be_bytes();
        let mut f = vec![len[1], len[2], len[3], frame_type, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn settings() -> Vec<u8> {
        frame(SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100])
    }

    fn handshake() -> Vec<u8> {
        let mut h = PREFACE.to_vec();
        h.extend(settings());
        h
    }

    fn settled() -> Frames {
        let mut f = Frames::new();
        f.feed(&handshake());
        assert_eq!(f.owed(), Owed::Nothing);
        f
    }

    #[test]
    fn the_handshake_is_owed_until_the_first_settings_frame_is_whole() {
        let all = handshake();
        for split in 0..all.len() {
            let mut f = Frames::new();
            f.feed(&all[..split]);
            assert_eq!(f.owed(), Owed::Handshake, "after {split} bytes");
            f.feed(&all[split..]);
            assert_eq!(f.owed(), Owed::Nothing, "split at {split}");
        }
    }

    #[test]
    fn a_byte_at_a_time_is_followed_as_well() {
        let mut f = Frames::new();
        let all = handshake();
        for (i, b) in all.iter().enumerate() {
            assert_eq!(f.owed(), Owed::Handshake, "before byte {i}");
            f.feed(std::slice::from_ref(b));
        }
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn a_half_preface_or_a_wrong_one_still_owes_the_handshake() {
        let mut f = Frames::new();
        f.feed(&PREFACE[..12]);
        assert_eq!(f.owed(), Owed::Handshake);
        let mut f = Frames::new();
        f.feed(b"\x16\x03\x01 not http");
        assert_eq!(f.owed(), Owed::Handshake);
        f.feed(&handshake());
        assert_eq!(f.owed(), Owed::Handshake, "not followed once lost");
    }

    #[test]
    fn an_http1_connection_owes_its_first_request_head_only() {
        let mut f = Frames::new();
        f.feed(b"POST /sudoku.v1.SudokuService/Solve HTTP/1.1\r\nHost: x\r\n");
        assert_eq!(f.owed(), Owed::Handshake);
        f.feed(b"content-length: 3\r\n\r");
        assert_eq!(f.owed(), Owed::Handshake, "half a blank line");
        f.feed(b"\nabc");
        assert_eq!(f.owed(), Owed::Nothing);
        f.feed(b"POST / HTTP/1.1\r\n");
        assert_eq!(f.owed(), Owed::Nothing, "later heads are hyper's to time");
    }

    #[test]
    fn an_http1_head_split_at_every_byte_is_followed() {
        let mut f = Frames::new();
        for b in b"OPTIONS / HTTP/1.1\r\nOrigin: a\r\r\n\r\n" {
            assert_eq!(f.owed(), Owed::Handshake);
            f.feed(&[*b]);
        }
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn a_first_frame_other_than_settings_never_settles() {
        let mut f = Frames::new();
        f.feed(PREFACE);
        f.feed(&frame(0x6, 0, 0, &[0; 8]));
        f.feed(&settings());
        assert_eq!(f.owed(), Owed::Handshake);
    }

    #[test]
    fn a_header_block_is_owed_until_end_headers_through_continuations() {
        let mut f = settled();
        assert!(f.feed(&frame(HEADERS, 0x1, 1, &[0x82; 20])));
        assert_eq!(f.owed(), Owed::Headers);
        assert!(!f.feed(&frame(CONTINUATION, 0, 1, &[0x86; 10])));
        assert_eq!(f.owed(), Owed::Headers);
        f.feed(&frame(CONTINUATION, END_HEADERS, 1, &[0x84; 10]));
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn a_headers_frame_is_owed_until_its_payload_is_whole() {
        let mut f = settled();
        let headers = frame(HEADERS, END_HEADERS, 1, &[0x82; 300]);
        f.feed(&headers[..100]);
        assert_eq!(f.owed(), Owed::Headers);
        f.feed(&headers[100..]);
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn frame_headers_split_across_reads_are_owed_and_followed() {
        let mut f = settled();
        let mut bytes = frame(0x6, 0, 0, &[7; 8]);
        bytes.extend(frame(HEADERS, END_HEADERS | 0x1, 3, &[0x82; 5]));
        for split in 1..bytes.len() {
            let mut g = f.clone();
            g.feed(&bytes[..split]);
            // Inside the PING's header or anywhere in the HEADERS frame a
            // header is owed; inside the PING's payload or between the two,
            // nothing.
            let expected = if (9..=17).contains(&split) {
                Owed::Nothing
            } else {
                Owed::Headers
            };
            assert_eq!(g.owed(), expected, "split at {split}");
            g.feed(&bytes[split..]);
            assert_eq!(g.owed(), Owed::Nothing, "split at {split}");
        }
        f.feed(&bytes);
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn a_ping_or_window_update_between_blocks_owes_nothing() {
        let mut f = settled();
        f.feed(&frame(0x6, 0, 0, &[1; 8]));
        assert_eq!(f.owed(), Owed::Nothing);
        f.feed(&frame(0x8, 0, 0, &[0, 0, 1, 0]));
        assert_eq!(f.owed(), Owed::Nothing);
        f.feed(&frame(0x4, 0x1, 0, &[]));
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn data_payloads_are_skipped_by_count_and_owe_nothing() {
        let mut f = settled();
        let data = frame(0x0, 0, 1, &vec![0x1; 16_384]);
        f.feed(&data[..9]);
        assert_eq!(f.owed(), Owed::Nothing);
        for chunk in data[9..].chunks(1000) {
            f.feed(chunk);
            assert_eq!(f.owed(), Owed::Nothing);
        }
        assert_eq!(f.payload_left, 0);
        // The bytes of a DATA payload that look like a HEADERS frame are
        // payload all the same.
        let sneaky = frame(0x0, 0x1, 1, &frame(HEADERS, 0, 1, &[0; 4]));
        f.feed(&sneaky);
        assert_eq!(f.owed(), Owed::Nothing);
    }

    #[test]
    fn a_new_block_in_a_later_read_is_fresh_and_a_continued_one_is_not() {
        let mut f = settled();
        let first = frame(HEADERS, END_HEADERS, 1, &[0x82; 8]);
        let second = frame(HEADERS, END_HEADERS, 3, &[0x82; 8]);
        // The first ends in this read and the second starts in it.
        let mut read = first[..12].to_vec();
        assert!(f.feed(&read));
        read = first[12..].to_vec();
        read.extend_from_slice(&second[..4]);
        assert!(f.feed(&read), "the second block starts in this read");
        assert!(!f.feed(&second[4..10]), "the second block goes on");
        assert_eq!(f.owed(), Owed::Headers);
        f.feed(&second[10..]);
        assert_eq!(f.owed(), Owed::Nothing);
    }
}
