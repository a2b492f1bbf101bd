//! The cap on gRPC connections, the limit per peer, and room for new
//! clients while silent, idle or greedy connections flood in.
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
//! speaks: it is closed and the new connection accepted.
//!
//! A connection that has spoken can still hold its place without use: it
//! answers PINGs and opens no call, or its one call's body never ends.
//! So room is made among established connections too, as proxies do
//! under overload, rather than by refusing the newcomer:
//!
//! - One peer (an IPv4 address, an IPv6 /64) may hold `--max-connections-per-peer`
//!   connections; its next one closes the least useful of its own (see
//!   below), never refused, so a client behind the same address as a flood
//!   (a NAT, a proxy) still gets in.
//! - At the cap, after the oldest pending connection, the victim is the
//!   connection idle longest (no open call for [`IDLE_SETTLE`] or more);
//!   failing that, the least useful connection of the peer that holds the
//!   most, if it holds more than one.
//! - "Least useful": idle for [`IDLE_SETTLE`] or more first; then one that
//!   never received a request message whole nor ended a call; then the one
//!   quiet longest (no accept, handshake, call opening or ending, or whole
//!   message since). A flood that never completes a request, idle or
//!   trickling, goes before any client whose first request came in whole,
//!   however young; among the flood, the oldest goes first.
//! - A flood that reopens every connection closed would turn its peer's
//!   slots over as fast as accept runs: accept pauses [`PEER_CHURN_PAUSE`]
//!   after each such turnover, so a client sharing its address has time to
//!   send its first request.
//!
//! Only when every connection is established, and no peer holds more than
//! one with calls open, is a new connection refused as soon as it is
//! accepted, so its client fails fast instead of waiting in the listen
//! queue: on the plaintext port with a GOAWAY that says no stream was
//! processed ([`refuse`]), which gRPC clients report as UNAVAILABLE; on the
//! TLS port by closing the socket.

use std::collections::{BTreeMap, HashMap};
use std::future::poll_fn;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

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

/// How long a connection must have had no open call to count as idle when
/// room is made: a new connection between its handshake and its first call
/// is not.
pub(super) const IDLE_SETTLE: Duration = Duration::from_secs(1);

/// What the accept loop does with a new connection.
pub(super) enum Admit {
    /// Serve it, holding its place under the cap.
    Accepted(Ticket),
    /// Refuse it: politely ([`refuse`]) with the ticket, which counts its
    /// descriptor among those closing; closing the socket at once without.
    Refused(Option<Ticket>),
}

/// The cap on connections, the limit per peer, and the connections open.
pub(super) struct Admission {
    state: Mutex<State>,
    /// Connections open at once (not counting those told to close).
    cap: usize,
    /// Connections in their handshake at once.
    pending_cap: usize,
    /// Connections one peer may hold at once.
    per_peer: usize,
    gauges: Arc<Gauges>,
    /// Signalled when a socket closes while accept waits for one to.
    room: Notify,
    /// Where the slots' progress times count from.
    epoch: Instant,
    /// A peer at its limit made room since accept last paused.
    churned: AtomicBool,
    /// Milliseconds added to the clock (tests).
    #[cfg(test)]
    skew: AtomicU64,
}

struct State {
    /// Tickets alive: connections whose socket is still open.
    held: usize,
    /// Of those, connections told to close that have not closed yet.
    closing: usize,
    /// Connections in their handshake, by accept order (oldest first).
    pending: BTreeMap<u64, Arc<Slot>>,
    /// Every connection not told to close, pending or established.
    open: BTreeMap<u64, Arc<Slot>>,
    /// How many of `open` each peer holds.
    peers: HashMap<IpAddr, usize>,
}

/// What a connection and the admission share.
struct Slot {
    peer: IpAddr,
    evicted: AtomicBool,
    /// Why the connection must close ([`SLOW_BODY`]), besides eviction.
    told: AtomicU8,
    /// Wakes the connection's task when it is evicted or told to close.
    waker: AtomicWaker,
    /// Calls open on the connection.
    calls: AtomicU32,
    /// When the connection last did something (its accept, its handshake,
    /// a call opening or ending, a request message received whole), in
    /// milliseconds since the admission's epoch.
    progressed: AtomicU64,
    /// A request message came in whole, or a call ended: the connection
    /// did useful work once.
    useful: AtomicBool,
}

impl Slot {
    fn new(peer: IpAddr, now: u64) -> Slot {
        Slot {
            peer,
            evicted: AtomicBool::new(false),
            told: AtomicU8::new(0),
            waker: AtomicWaker::new(),
            calls: AtomicU32::new(0),
            progressed: AtomicU64::new(now),
            useful: AtomicBool::new(false),
        }
    }

    /// How the slot ranks as a victim (greater goes first): idle for
    /// [`IDLE_SETTLE`] or more; then never useful; then the longest
    /// quiet. A flood that never completes a request, idle or trickling,
    /// goes before a client whose request came in whole, however young.
    fn rank(&self, now: u64) -> (u8, u64) {
        let quiet = now.saturating_sub(self.progressed.load(Ordering::Relaxed));
        let tier =
            if self.calls.load(Ordering::Relaxed) == 0 && quiet >= IDLE_SETTLE.as_millis() as u64 {
                2
            } else if !self.useful.load(Ordering::Relaxed) {
                1
            } else {
                0
            };
        (tier, quiet)
    }
}

impl Admission {
    /// A cap of `max_connections`, lowered to what the open-file limit
    /// allows (raised first to its hard limit) less [`FD_RESERVE`].
    /// A cap of `max_connections`, lowered to what the open-file limit
    /// allows (raised first to its hard limit) less [`FD_RESERVE`], and at
    /// most `max_per_peer` of them (at most the cap) from one peer.
    pub(super) fn new(
        max_connections: u64,
        max_per_peer: u64,
        gauges: Arc<Gauges>,
    ) -> Arc<Admission> {
        let fd_limit = raise_fd_limit();
        let (cap, pending_cap) = caps(max_connections, fd_limit);
        let per_peer = usize::try_from(max_per_peer)
            .unwrap_or(usize::MAX)
            .clamp(1, cap);
        tracing::info!(
            max_connections = cap,
            max_pending_handshakes = pending_cap,
            max_connections_per_peer = per_peer,
            fd_limit = %fd_limit.map_or_else(|| "unlimited".to_string(), |l| l.to_string()),
            "connection cap"
        );
        Admission::with_caps(cap, pending_cap, per_peer, gauges)
    }

    fn with_caps(
        cap: usize,
        pending_cap: usize,
        per_peer: usize,
        gauges: Arc<Gauges>,
    ) -> Arc<Admission> {
        Arc::new(Admission {
            state: Mutex::new(State {
                held: 0,
                closing: 0,
                pending: BTreeMap::new(),
                open: BTreeMap::new(),
                peers: HashMap::new(),
            }),
            cap,
            pending_cap,
            per_peer,
            gauges,
            room: Notify::new(),
            epoch: Instant::now(),
            churned: AtomicBool::new(false),
            #[cfg(test)]
            skew: AtomicU64::new(0),
        })
    }

    fn now(&self) -> u64 {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        #[cfg(test)]
        let now = now + self.skew.load(Ordering::Relaxed);
        now
    }

    /// Admits connection `id` (ids grow with accept order) from `peer`,
    /// making room as the module docs say, or refuses it when nothing can.
    pub(super) fn admit(self: &Arc<Self>, id: u64, peer: IpAddr) -> Admit {
        let peer = peer_of(peer);
        let mut state = self.lock();
        let now = self.now();
        if state.pending.len() >= self.pending_cap {
            self.evict_oldest(&mut state);
        }
        if state.peers.get(&peer).copied().unwrap_or(0) >= self.per_peer {
            let victim = self.victim(&state, now, Some(peer));
            if let Some(victim) = victim {
                self.evict(&mut state, victim);
                self.churned.store(true, Ordering::Relaxed);
            }
        }
        let full = state.held - state.closing >= self.cap;
        let room = state.held < self.descriptors();
        if (full && !self.make_room(&mut state, now)) || !room {
            self.gauges
                .connections_refused
                .fetch_add(1, Ordering::Relaxed);
            if !room {
                return Admit::Refused(None);
            }
            // Among the closing from the start: it never counts against
            // the cap, only against the descriptors.
            let slot = Arc::new(Slot::new(peer, now));
            slot.evicted.store(true, Ordering::Release);
            state.held += 1;
            state.closing += 1;
            self.publish(&state);
            return Admit::Refused(Some(self.ticket(id, slot)));
        }
        let slot = Arc::new(Slot::new(peer, now));
        state.held += 1;
        state.pending.insert(id, slot.clone());
        state.open.insert(id, slot.clone());
        *state.peers.entry(peer).or_insert(0) += 1;
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
    /// queue rather than being refused. It first pauses
    /// [`PEER_CHURN_PAUSE`] when a peer at its limit made room since.
    pub(super) async fn room(&self) {
        if self.churned.swap(false, Ordering::Relaxed) {
            tokio::time::sleep(PEER_CHURN_PAUSE).await;
        }
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
        let Some((&id, _)) = state.pending.first_key_value() else {
            return false;
        };
        self.evict(state, id);
        true
    }

    /// At the cap: tells the oldest pending connection to close, or else
    /// the one idle longest, or else the least useful of the peer holding
    /// the most if it holds more than one; false when none qualifies.
    fn make_room(&self, state: &mut State, now: u64) -> bool {
        if self.evict_oldest(state) {
            return true;
        }
        let idle = self
            .victim(state, now, None)
            .filter(|id| state.open[id].rank(now).0 == 2);
        let victim = idle.or_else(|| {
            let (&greediest, &held) = state.peers.iter().max_by_key(|(_, n)| **n)?;
            (held > 1)
                .then(|| self.victim(state, now, Some(greediest)))
                .flatten()
        });
        match victim {
            Some(id) => {
                self.evict(state, id);
                true
            }
            None => false,
        }
    }

    /// The connection (of `peer`, or of any) to close first: see
    /// [`Slot::rank`]; of equals, the oldest.
    fn victim(&self, state: &State, now: u64, peer: Option<IpAddr>) -> Option<u64> {
        let mut best: Option<((u8, u64), u64)> = None;
        for (&id, slot) in &state.open {
            if peer.is_some_and(|p| p != slot.peer) {
                continue;
            }
            let rank = slot.rank(now);
            if best.is_none_or(|(r, _)| rank > r) {
                best = Some((rank, id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// Tells connection `id` to close to make room.
    fn evict(&self, state: &mut State, id: u64) {
        let Some(slot) = state.open.remove(&id) else {
            return;
        };
        state.pending.remove(&id);
        forget_peer(state, slot.peer);
        slot.evicted.store(true, Ordering::Release);
        slot.waker.wake();
        state.closing += 1;
        self.gauges.count_closed(ConnectionClosed::Evicted);
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
        self.activity().touch();
        self.admission.lock().pending.remove(&self.id).is_some()
    }

    /// The connection's side of its slot, for its calls and its task.
    pub(super) fn activity(&self) -> Activity {
        Activity {
            slot: self.slot.clone(),
            admission: self.admission.clone(),
        }
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

/// The peer an address counts as: an IPv4 address (mapped into IPv6 or
/// not), or an IPv6 /64, which one host can draw addresses from at will.
fn peer_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from_bits(
                v6.to_bits() & !((1u128 << 64) - 1),
            )),
        },
    }
}

/// How long accept pauses after a peer at its limit made room among its
/// own: a flood that reopens every connection closed would otherwise
/// turn the peer's slots over thousands of times a second, and a client
/// sharing its address would have milliseconds to send its first request.
const PEER_CHURN_PAUSE: Duration = Duration::from_millis(1);

/// Told bit: the connection was told to close to make room.
pub(super) const EVICTED: u8 = 1;
/// Told bit: a request body on it came too slowly.
pub(super) const SLOW_BODY: u8 = 2;

/// A connection's side of its slot: its calls opening and closing, the
/// progress they make, and what its task must close for.
#[derive(Clone)]
pub(super) struct Activity {
    slot: Arc<Slot>,
    admission: Arc<Admission>,
}

impl Activity {
    /// A call opened on the connection.
    pub(super) fn call_opened(&self) {
        self.slot.calls.fetch_add(1, Ordering::Relaxed);
        self.touch();
    }

    /// A call on the connection ended.
    pub(super) fn call_closed(&self) {
        self.slot.calls.fetch_sub(1, Ordering::Relaxed);
        self.slot.useful.store(true, Ordering::Relaxed);
        self.touch();
    }

    /// A request message came in whole.
    pub(super) fn progressed(&self) {
        self.slot.useful.store(true, Ordering::Relaxed);
        self.touch();
    }

    fn touch(&self) {
        self.slot
            .progressed
            .store(self.admission.now(), Ordering::Relaxed);
    }

    /// Calls open now.
    pub(super) fn open_calls(&self) -> u32 {
        self.slot.calls.load(Ordering::Relaxed)
    }

    /// How long since the connection last made progress.
    pub(super) fn quiet_for(&self) -> Duration {
        let since = self.slot.progressed.load(Ordering::Relaxed);
        Duration::from_millis(self.admission.now().saturating_sub(since))
    }

    /// A request body came too slowly: the connection's task closes it.
    pub(super) fn slow_body(&self) {
        self.slot.told.fetch_or(SLOW_BODY, Ordering::AcqRel);
        self.slot.waker.wake();
    }

    fn told(&self) -> u8 {
        let evicted = if self.slot.evicted.load(Ordering::Acquire) {
            EVICTED
        } else {
            0
        };
        evicted | self.slot.told.load(Ordering::Acquire)
    }

    /// Ready with what the connection was told ([`EVICTED`],
    /// [`SLOW_BODY`]) that is not in `handled`.
    pub(super) fn poll_told(&self, cx: &mut Context<'_>, handled: u8) -> Poll<u8> {
        let told = self.told() & !handled;
        if told != 0 {
            return Poll::Ready(told);
        }
        self.slot.waker.register(cx.waker());
        match self.told() & !handled {
            0 => Poll::Pending,
            told => Poll::Ready(told),
        }
    }

    /// Counts this connection as closed early, `why`.
    pub(super) fn count_closed(&self, why: ConnectionClosed) {
        self.admission.gauges.count_closed(why);
    }
}

#[cfg(test)]
impl Activity {
    /// A connection's activity, with the ticket that holds its slot.
    pub(super) fn for_tests() -> (Ticket, Activity) {
        let a = Admission::with_caps(16, 16, 16, Arc::new(Gauges::default()));
        let Admit::Accepted(ticket) = a.admit(1, IpAddr::from([127, 0, 0, 1])) else {
            unreachable!("an empty admission accepts")
        };
        let activity = ticket.activity();
        (ticket, activity)
    }

    /// Whether a request message came in whole or a call ended.
    pub(super) fn was_useful(&self) -> bool {
        self.slot.useful.load(Ordering::Relaxed)
    }

    /// What the connection was told.
    pub(super) fn told_bits(&self) -> u8 {
        self.told()
    }
}

fn forget_peer(state: &mut State, peer: IpAddr) {
    if let Some(n) = state.peers.get_mut(&peer) {
        *n -= 1;
        if *n == 0 {
            state.peers.remove(&peer);
        }
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
            if state.open.remove(&self.id).is_some() {
                forget_peer(&mut state, self.slot.peer);
            }
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
        Admission::with_caps(cap, pending_cap, cap, Arc::new(Gauges::default()))
    }

    fn evicted(ticket: &Ticket) -> bool {
        ticket.slot.evicted.load(Ordering::Acquire)
    }

    const ONE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));

    fn peer(n: u8) -> IpAddr {
        IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, n))
    }

    fn admit(a: &Arc<Admission>, id: u64) -> Option<Ticket> {
        admit_from(a, id, ONE)
    }

    fn admit_from(a: &Arc<Admission>, id: u64, from: IpAddr) -> Option<Ticket> {
        match a.admit(id, from) {
            Admit::Accepted(t) => Some(t),
            Admit::Refused(_) => None,
        }
    }

    /// An established connection from `from` with one call open.
    fn busy(a: &Arc<Admission>, id: u64, from: IpAddr) -> Ticket {
        let t = admit_from(a, id, from).unwrap();
        assert!(t.established());
        t.activity().call_opened();
        t
    }

    fn pass(a: &Admission, time: Duration) {
        a.skew.fetch_add(time.as_millis() as u64, Ordering::Relaxed);
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
    fn at_the_cap_with_every_peer_holding_one_busy_connection_the_newcomer_is_refused() {
        let a = admission(2, 2);
        let one = busy(&a, 1, peer(1));
        let two = busy(&a, 2, peer(2));
        pass(&a, Duration::from_secs(10));
        let Admit::Refused(Some(refused)) = a.admit(3, peer(3)) else {
            panic!("not refused politely");
        };
        assert_eq!(a.gauges.connections_refused.load(Ordering::Relaxed), 1);
        assert_eq!(a.gauges.connections_open.load(Ordering::Relaxed), 3);
        drop(refused);
        assert!(!evicted(&one) && !evicted(&two));
        drop(one);
        assert!(admit_from(&a, 4, peer(4)).is_some());
    }

    #[test]
    fn at_the_cap_the_connection_idle_longest_makes_room() {
        let a = admission(3, 3);
        let busy_one = busy(&a, 1, peer(1));
        let idle_long = admit_from(&a, 2, peer(2)).unwrap();
        assert!(idle_long.established());
        pass(&a, Duration::from_secs(5));
        let idle_short = admit_from(&a, 3, peer(3)).unwrap();
        assert!(idle_short.established());
        pass(&a, Duration::from_secs(2));
        let newcomer = admit_from(&a, 4, peer(4)).unwrap();
        assert!(evicted(&idle_long));
        assert!(!evicted(&busy_one) && !evicted(&idle_short) && !evicted(&newcomer));
        assert_eq!(a.gauges.closed(ConnectionClosed::Evicted), 1);
    }

    #[test]
    fn a_connection_between_its_handshake_and_its_first_call_is_not_idle() {
        let a = admission(2, 2);
        let old_busy = busy(&a, 1, ONE);
        pass(&a, Duration::from_secs(30));
        // Established moments ago, no call yet: the busy one that made no
        // progress for 30 s goes first.
        let fresh = admit(&a, 2).unwrap();
        assert!(fresh.established());
        let newcomer = admit(&a, 3).unwrap();
        assert!(evicted(&old_busy));
        assert!(!evicted(&fresh) && !evicted(&newcomer));
    }

    #[test]
    fn at_the_cap_the_greediest_peer_makes_room_with_its_least_active() {
        let a = admission(3, 3);
        let x1 = busy(&a, 1, peer(1));
        pass(&a, Duration::from_secs(1));
        let x2 = busy(&a, 2, peer(1));
        let y = busy(&a, 3, peer(2));
        pass(&a, Duration::from_secs(5));
        // x1's call completed a message just now: x2 made no progress longer.
        x1.activity().progressed();
        let z = admit_from(&a, 4, peer(3)).unwrap();
        assert!(evicted(&x2));
        assert!(!evicted(&x1) && !evicted(&y) && !evicted(&z));
    }

    #[test]
    fn a_peer_is_an_ipv4_address_or_an_ipv6_slash_64() {
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(peer_of("::ffff:192.0.2.7".parse().unwrap()), v4);
        assert_eq!(peer_of(v4), v4);
        assert_eq!(
            peer_of("2001:db8:1:2:aaaa:bbbb:cccc:dddd".parse().unwrap()),
            "2001:db8:1:2::".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_peer_at_its_limit_makes_room_among_its_own_and_is_never_refused() {
        let a = Admission::with_caps(100, 100, 2, Arc::new(Gauges::default()));
        let other = admit_from(&a, 1, peer(9)).unwrap();
        let first = busy(&a, 2, ONE);
        let second = admit(&a, 3).unwrap();
        assert!(second.established());
        pass(&a, Duration::from_secs(2));
        // The idle one goes, though it is the younger.
        let third = admit(&a, 4).unwrap();
        assert!(evicted(&second) && !evicted(&first) && !evicted(&third));
        // Then the one without progress longest; other peers never.
        pass(&a, Duration::from_millis(10));
        third.activity().call_opened();
        let fourth = admit(&a, 5).unwrap();
        assert!(evicted(&first) && !evicted(&third) && !evicted(&fourth));
        assert!(!evicted(&other));
        assert_eq!(a.gauges.connections_refused.load(Ordering::Relaxed), 0);
        assert_eq!(a.gauges.closed(ConnectionClosed::Evicted), 2);
        drop((first, second));
        assert_eq!(a.lock().peers.get(&ONE), Some(&2));
    }

    #[test]
    fn at_the_cap_a_pending_connection_makes_room() {
        let a = admission(2, 2);
        let one = admit_from(&a, 1, peer(1)).unwrap();
        one.established();
        let two = admit_from(&a, 2, peer(2)).unwrap();
        let three = admit_from(&a, 3, peer(3)).unwrap();
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
