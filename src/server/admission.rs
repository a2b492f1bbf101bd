//! The cap on gRPC connections, and room for new clients while silent
//! connections flood in.
//!
//! Every connection holds a file descriptor, and a process out of them
//! cannot accept (EMFILE): every legitimate client is then locked out
//! until the flood leaves. So the cap stays below the open-file limit,
//! less a reserve, and the accept loop closes connections itself before
//! the kernel refuses them.
//!
//! Connections still in their handshake ("pending": no HTTP/2 preface and
//! SETTINGS yet) may take a quarter of the cap. A legitimate client sends
//! its preface within milliseconds of connecting, so when room is needed
//! the oldest pending connection is the likeliest to be one that never
//! speaks: it is closed and the new connection accepted. Only when every
//! connection has finished its handshake and the cap is reached is a new
//! connection refused as soon as it is accepted, so its client fails fast
//! instead of waiting in the listen queue: on the plaintext port with a
//! GOAWAY that says no stream was processed ([`refuse`]), which gRPC
//! clients report as UNAVAILABLE; on the TLS port by closing the socket.

use std::collections::BTreeMap;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::task::AtomicWaker;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::telemetry::metrics::{ConnectionClosed, Gauges};

/// File descriptors the cap leaves to the rest of the process: the
/// listener, the metrics port's connections (at most
/// [`crate::telemetry::scrape::MAX_CONNECTIONS`]), connections closed to
/// make room but not gone yet (at most [`CLOSING_SLACK`]), a connection
/// accepted only to be closed, and the runtime, logs and files.
pub(super) const FD_RESERVE: u64 = 64;

/// Connections told to close that may still hold their descriptors while
/// new ones are accepted; past it new connections are refused until they
/// are gone.
const CLOSING_SLACK: usize = 16;

/// The smallest pending quota (and cap).
const MIN_PENDING: usize = 16;

/// What the accept loop does with a new connection.
pub(super) enum Admit {
    /// Serve it, holding its place under the cap.
    Accepted(Ticket),
    /// Refuse it: politely ([`refuse`]) with the ticket, which counts its
    /// descriptor among those closing; closing the socket at once without.
    Refused(Option<Ticket>),
}

/// The cap on connections and the set of those still in their handshake.
pub(super) struct Admission {
    state: Mutex<State>,
    /// Connections open at once (not counting those told to close).
    cap: usize,
    /// Connections in their handshake at once.
    pending_cap: usize,
    gauges: Arc<Gauges>,
    /// Signalled when a socket closes while accept waits for one to.
    room: Notify,
}

struct State {
    /// Tickets alive: connections whose socket is still open.
    held: usize,
    /// Of those, connections told to close that have not closed yet.
    closing: usize,
    /// Connections in their handshake, by accept order (oldest first).
    pending: BTreeMap<u64, Arc<Slot>>,
}

/// What a connection and the admission share.
#[derive(Default)]
struct Slot {
    evicted: AtomicBool,
    waker: AtomicWaker,
}

impl Admission {
    /// A cap of `max_connections`, lowered to what the open-file limit
    /// allows (raised first to its hard limit) less [`FD_RESERVE`].
    pub(super) fn new(max_connections: u64, gauges: Arc<Gauges>) -> Arc<Admission> {
        let fd_limit = raise_fd_limit();
        let (cap, pending_cap) = caps(max_connections, fd_limit);
        tracing::info!(
            max_connections = cap,
            max_pending_handshakes = pending_cap,
            fd_limit = %fd_limit.map_or_else(|| "unlimited".to_string(), |l| l.to_string()),
            "connection cap"
        );
        Admission::with_caps(cap, pending_cap, gauges)
    }

    fn with_caps(cap: usize, pending_cap: usize, gauges: Arc<Gauges>) -> Arc<Admission> {
        Arc::new(Admission {
            state: Mutex::new(State {
                held: 0,
                closing: 0,
                pending: BTreeMap::new(),
            }),
            cap,
            pending_cap,
            gauges,
            room: Notify::new(),
        })
    }

    /// Admits connection `id` (ids grow with accept order), closing the
    /// oldest pending connection when the pending quota or the cap is
    /// full, or refuses it when no pending connection can make room.
    pub(super) fn admit(self: &Arc<Self>, id: u64) -> Admit {
        let mut state = self.lock();
        if state.pending.len() >= self.pending_cap {
            self.evict_oldest(&mut state);
        }
        let full = state.held - state.closing >= self.cap;
        let room = state.held < self.descriptors();
        if (full && !self.evict_oldest(&mut state)) || !room {
            self.gauges
                .connections_refused
                .fetch_add(1, Ordering::Relaxed);
            if !room {
                return Admit::Refused(None);
            }
            // Among the closing from the start: it never counts against
            // the cap, only against the descriptors.
            let slot = Arc::new(Slot::default());
            slot.evicted.store(true, Ordering::Release);
            state.held += 1;
            state.closing += 1;
            self.publish(&state);
            return Admit::Refused(Some(self.ticket(id, slot)));
        }
        let slot = Arc::new(Slot::default());
        state.held += 1;
        state.pending.insert(id, slot.clone());
        self.publish(&state);
        Admit::Accepted(self.ticket(id, slot))
    }

    fn ticket(self: &Arc<Self>, id: u64, slot: Arc<Slot>) -> Ticket {
        Ticket {
            admission: self.clone(),
            id,
            slot,
        }
    }

    /// Sockets the connections may hold at once, those told to close
    /// included.
    fn descriptors(&self) -> usize {
        self.cap + CLOSING_SLACK
    }

    /// Resolves when a new connection can be accepted without exceeding
    /// [`Admission::descriptors`]. Connections told to close release their
    /// sockets within moments, but a burst of accepts can outrun them:
    /// accept then waits for them, and new connections wait in the listen
    /// queue rather than being refused.
    pub(super) async fn room(&self) {
        loop {
            let freed = self.room.notified();
            if self.lock().held < self.descriptors() {
                return;
            }
            freed.await;
        }
    }

    /// Tells the oldest pending connection to close; false when none is.
    fn evict_oldest(&self, state: &mut State) -> bool {
        let Some((_, slot)) = state.pending.pop_first() else {
            return false;
        };
        slot.evicted.store(true, Ordering::Release);
        slot.waker.wake();
        state.closing += 1;
        self.gauges.count_closed(ConnectionClosed::Evicted);
        true
    }

    fn publish(&self, state: &State) {
        self.gauges
            .connections_open
            .store(state.held, Ordering::Relaxed);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock's state is whole.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One admitted connection's place under the cap, held as long as its
/// socket is open.
pub(super) struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    slot: Arc<Slot>,
}

impl Ticket {
    /// The connection finished its handshake: it is no longer pending,
    /// and no newer connection can displace it. False when it was told to
    /// close to make room first: it must close all the same.
    pub(super) fn established(&self) -> bool {
        self.admission.lock().pending.remove(&self.id).is_some()
    }

    /// Ready once the connection was told to close to make room.
    pub(super) fn poll_evicted(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.slot.evicted.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.slot.waker.register(cx.waker());
        if self.slot.evicted.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Resolves once the connection was told to close to make room.
    pub(super) async fn evicted(&self) {
        poll_fn(|cx| self.poll_evicted(cx)).await
    }

    /// Counts this connection as closed early, `why`.
    pub(super) fn count_closed(&self, why: ConnectionClosed) {
        self.admission.gauges.count_closed(why);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.admission.lock();
        state.held -= 1;
        if self.slot.evicted.load(Ordering::Acquire) {
            state.closing -= 1;
        } else {
            state.pending.remove(&self.id);
        }
        self.admission.publish(&state);
        if state.held < self.admission.descriptors() {
            self.admission.room.notify_one();
        }
    }
}

/// How long a refused connection may keep its socket while its client
/// reads the GOAWAY.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// What a refused plaintext connection is sent: the server's preface (an
/// empty SETTINGS frame) and a GOAWAY with last stream id 0 and
/// REFUSED_STREAM, saying that nothing the client sent was processed.
const REFUSAL: &[u8] = b"\
    \x00\x00\x00\x04\x00\x00\x00\x00\x00\
    \x00\x00\x1d\x07\x00\x00\x00\x00\x00\
    \x00\x00\x00\x00\x00\x00\x00\x07at the connection cap";

/// Refuses a plaintext connection so that its client can tell: a gRPC
/// client fails its call with UNAVAILABLE (and some retry it on another
/// connection), where a bare close fails it as a reset, UNKNOWN. The
/// client's bytes are read until it closes, for at most
/// [`REFUSAL_LINGER`], since closing a socket with unread data resets it
/// and the reset would overtake the GOAWAY.
pub(super) async fn refuse(mut stream: TcpStream, ticket: Ticket) {
    let refused = async {
        stream.write_all(REFUSAL).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 1024];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, refused).await;
    drop(ticket);
}

/// The cap and the pending quota for `max_connections` under a soft
/// open-file limit of `fd_limit` (`None`: unlimited).
fn caps(max_connections: u64, fd_limit: Option<u64>) -> (usize, usize) {
    let allowed = fd_limit.map_or(u64::MAX, |l| l.saturating_sub(FD_RESERVE));
    let cap = max_connections.min(allowed).max(MIN_PENDING as u64);
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    (cap, (cap / 4).max(MIN_PENDING).min(cap))
}

/// Raises the soft open-file limit to the hard one, and returns the soft
/// limit now in force (`None`: unlimited).
fn raise_fd_limit() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        // An unlimited hard limit cannot be the soft one (the kernel caps
        // descriptors at fs.nr_open); leave the soft limit as it is then.
        if let (Some(current), Some(maximum)) = (limit.current, limit.maximum)
            && current < maximum
            && let Err(e) = setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: Some(maximum),
                    maximum: Some(maximum),
                },
            )
        {
            tracing::warn!(error = %e, current, maximum, "cannot raise the open-file limit");
        }
        getrlimit(Resource::Nofile).current
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(cap: usize, pending_cap: usize) -> Arc<Admission> {
        Admission::with_caps(cap, pending_cap, Arc::new(Gauges::default()))
    }

    fn evicted(ticket: &Ticket) -> bool {
        ticket.slot.evicted.load(Ordering::Acquire)
    }

    fn admit(a: &Arc<Admission>, id: u64) -> Option<Ticket> {
        match a.admit(id) {
            Admit::Accepted(t) => Some(t),
            Admit::Refused(_) => None,
        }
    }

    #[test]
    fn the_refusal_is_a_settings_frame_then_a_goaway() {
        let (settings, goaway) = REFUSAL.split_at(9);
        assert_eq!(settings, [0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
        let len = u32::from_be_bytes([0, goaway[0], goaway[1], goaway[2]]) as usize;
        assert_eq!(goaway.len(), 9 + len);
        assert_eq!(&goaway[3..9], [0x7, 0, 0, 0, 0, 0], "GOAWAY on stream 0");
        assert_eq!(&goaway[9..13], [0, 0, 0, 0], "last stream id 0");
        assert_eq!(&goaway[13..17], [0, 0, 0, 0x7], "REFUSED_STREAM");
        assert_eq!(&goaway[17..], b"at the connection cap");
    }

    #[test]
    fn the_cap_leaves_the_reserve_and_a_quarter_for_handshakes() {
        assert_eq!(caps(1024, Some(20_000)), (1024, 256));
        assert_eq!(caps(1024, Some(256)), (192, 48));
        assert_eq!(caps(1024, None), (1024, 256));
        assert_eq!(caps(40, None), (40, 16));
        assert_eq!(caps(4, Some(10)), (16, 16));
    }

    #[test]
    fn a_full_pending_quota_closes_the_oldest_pending_connection() {
        let a = admission(8, 2);
        let first = admit(&a, 1).unwrap();
        let second = admit(&a, 2).unwrap();
        let third = admit(&a, 3).unwrap();
        assert!(evicted(&first));
        assert!(!evicted(&second) && !evicted(&third));
        assert_eq!(a.gauges.closed(ConnectionClosed::Evicted), 1);
        drop(first);
        assert_eq!(a.gauges.connections_open.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn established_connections_are_never_displaced_and_the_cap_refuses() {
        let a = admission(2, 2);
        let one = admit(&a, 1).unwrap();
        let two = admit(&a, 2).unwrap();
        one.established();
        two.established();
        let Admit::Refused(Some(refused)) = a.admit(3) else {
            panic!("not refused politely");
        };
        assert_eq!(a.gauges.connections_refused.load(Ordering::Relaxed), 1);
        assert_eq!(a.gauges.connections_open.load(Ordering::Relaxed), 3);
        drop(refused);
        assert!(!evicted(&one) && !evicted(&two));
        drop(one);
        assert!(admit(&a, 4).is_some());
    }

    #[test]
    fn at_the_cap_a_pending_connection_makes_room() {
        let a = admission(2, 2);
        let one = admit(&a, 1).unwrap();
        one.established();
        let two = admit(&a, 2).unwrap();
        let three = admit(&a, 3).unwrap();
        assert!(evicted(&two) && !evicted(&one) && !evicted(&three));
        // Established after it was told to close: it closes all the same.
        assert!(!two.established());
        assert!(three.established());
        assert!(
            two.poll_evicted(&mut Context::from_waker(futures::task::noop_waker_ref()))
                .is_ready()
        );
    }

    #[test]
    fn connections_told_to_close_but_still_open_bound_new_ones() {
        let a = admission(1, 1);
        let mut kept = vec![admit(&a, 0).unwrap()];
        for id in 1..=CLOSING_SLACK as u64 {
            kept.push(admit(&a, id).unwrap());
        }
        assert!(admit(&a, 100).is_none(), "too many sockets still open");
        kept.clear();
        assert!(admit(&a, 101).is_some());
    }

    #[tokio::test]
    async fn accept_waits_for_sockets_told_to_close_rather_than_refusing() {
        let a = admission(1, 1);
        let mut kept: Vec<Ticket> = (0..=CLOSING_SLACK as u64)
            .map(|id| admit(&a, id).unwrap())
            .collect();
        let waiting = tokio::time::timeout(Duration::from_millis(50), a.room()).await;
        assert!(waiting.is_err(), "room while every descriptor is held");
        let room = tokio::spawn({
            let a = a.clone();
            async move { a.room().await }
        });
        tokio::task::yield_now().await;
        kept.remove(0);
        tokio::time::timeout(Duration::from_secs(5), room)
            .await
            .expect("room once a socket closed")
            .unwrap();
    }
}
