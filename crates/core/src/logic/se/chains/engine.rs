//! What every chaining mode shares: potentials (a candidate assumed true,
//! "on", or false, "off"), the implications between them, and a chaining
//! run, which grows the sets of potentials one assumption forces.

use super::super::{Chaining, GoOn};
use crate::logic::candidates::{Layout, bit, two_bits};
use crate::logic::{Candidates, Stopped};

/// A potential packed in an integer: `(cell * n + digit - 1) * 2 + on`.
pub(super) type Pot = u32;

/// No node, no nested chain.
pub(super) const NONE: u32 = u32::MAX;

/// Why a potential follows from its first parent. For an "on" potential
/// derived from an "off" one: the cell's last candidate (`CELL`) or the
/// digit's last place in a box, row or column. For an "off" potential
/// derived from an "on" one: the cell holds one digit (`CELL`) or a unit
/// holds the digit once. `RULE`: removed by a technique inside the chain.
pub(super) const START: u8 = 0;
pub(super) const CELL: u8 = 1;
pub(super) const BOX: u8 = 2;
pub(super) const ROW: u8 = 3;
pub(super) const COL: u8 = 4;
pub(super) const RULE: u8 = 5;

/// The cause of a unit of kind 0 (row), 1 (column) or 2 (box).
fn unit_cause(kind: usize) -> u8 {
    [ROW, COL, BOX][kind]
}

/// The starts of a search, in SE's order: each candidate of each open cell
/// with two or more, cell by cell.
pub(super) fn open_candidates(c: &Candidates) -> impl Iterator<Item = (usize, u8)> + '_ {
    (0..c.side() * c.side())
        .filter(|&cell| {
            let m = c.mask(cell);
            c.value(cell) == 0 && m & m.wrapping_sub(1) != 0
        })
        .flat_map(|cell| crate::logic::candidates::digits_of(c.mask(cell)).map(move |d| (cell, d)))
}

/// Packing and unpacking potentials at side `n`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geo {
    pub n: usize,
}

impl Geo {
    #[inline]
    pub fn pot(self, cell: usize, d: u8, on: bool) -> Pot {
        ((cell * self.n + d as usize - 1) * 2 + usize::from(on)) as Pot
    }
    /// (Divisions in 32 bits: the quicker, and a potential fits.)
    #[inline]
    pub fn cell(self, p: Pot) -> usize {
        ((p >> 1) / self.n as u32) as usize
    }
    #[inline]
    pub fn digit(self, p: Pot) -> u8 {
        ((p >> 1) % self.n as u32) as u8 + 1
    }
    #[inline]
    pub fn on(p: Pot) -> bool {
        p & 1 == 1
    }
    /// How many potentials there are.
    pub fn count(self) -> usize {
        2 * self.n * self.n * self.n
    }
}

/// One implication found: the potential, its cause, and for a region
/// cause the unit.
#[derive(Debug, Clone, Copy)]
pub(super) struct Imp {
    pub pot: Pot,
    pub cause: u8,
    /// Whether `pot` implies anything in a search that says which
    /// potentials do ([`Memo::live`]); true elsewhere.
    pub live: bool,
    pub unit: u16,
}

/// Candidates during a search, with the places of each digit in each unit
/// (bit i: the unit's i-th cell), kept together.
#[derive(Debug, Clone, Default)]
pub(super) struct Grid {
    pub masks: Vec<u64>,
    /// `pos[u * n + d - 1]`: the places of `d` in unit `u`.
    pub pos: Vec<u64>,
    /// The candidates again, a bit each at `cell * n + d - 1` (a
    /// potential shifted right once): a test without dividing by n.
    pub bits: Vec<u64>,
}

impl Grid {
    /// Becomes the candidates of `c`, whose places are kept already
    /// (keeping its buffers).
    pub fn refill(&mut self, c: &Candidates) {
        let n = c.side();
        self.masks.clear();
        self.masks.extend_from_slice(c.masks());
        self.pos.clear();
        self.pos.extend_from_slice(c.places());
        self.bits.clear();
        self.bits.resize((n * n * n).div_ceil(64), 0);
        for (cell, &m) in c.masks().iter().enumerate() {
            let mut m = m;
            while m != 0 {
                let k = cell * n + m.trailing_zeros() as usize;
                m &= m - 1;
                self.bits[k / 64] |= 1 << (k % 64);
            }
        }
    }

    fn bytes(&self) -> usize {
        (self.masks.capacity() + self.pos.capacity() + self.bits.capacity()) * 8
    }

    /// Whether the candidate of potential `p` is still there.
    #[inline]
    pub fn has(&self, p: Pot) -> bool {
        let k = (p >> 1) as usize;
        self.bits[k / 64] >> (k % 64) & 1 != 0
    }

    /// Removes candidate `d` from `cell`.
    pub fn remove(&mut self, l: &Layout, cell: usize, d: u8) {
        let n = l.n();
        let k = cell * n + d as usize - 1;
        self.bits[k / 64] &= !(1 << (k % 64));
        self.masks[cell] &= !bit(d);
        l.unplace(&mut self.pos, cell, d);
    }

    /// Puts back candidate `d` of `cell`, removed before.
    pub fn restore(&mut self, l: &Layout, cell: usize, d: u8) {
        let n = l.n();
        let k = cell * n + d as usize - 1;
        self.bits[k / 64] |= 1 << (k % 64);
        self.masks[cell] |= bit(d);
        l.replace(&mut self.pos, cell, d);
    }

    #[inline]
    pub fn places(&self, n: usize, u: usize, d: u8) -> u64 {
        self.pos[u * n + d as usize - 1]
    }
}

/// The potentials that go off when `p` (on) holds, in SE's order: the
/// cell's other candidates (only with `y`), then the digit's other places
/// in the box, the row and the column, each once.
pub(super) fn on_to_off(l: &Layout, g: Geo, grid: &Grid, p: Pot, y: bool, out: &mut Vec<Imp>) {
    out.clear();
    let cell = g.cell(p);
    let d = g.digit(p);
    if y {
        let mut m = grid.masks[cell] & !bit(d);
        while m != 0 {
            let d2 = m.trailing_zeros() as u8 + 1;
            m &= m - 1;
            out.push(Imp {
                pot: g.pot(cell, d2, false),
                cause: CELL,
                live: true,
                unit: 0,
            });
        }
    }
    let units = l.units_of(cell);
    let places = l.places_of(cell);
    let n = g.n;
    let b = units[2] as usize - 2 * n;
    for kind in [2, 0, 1] {
        let u = units[kind] as usize;
        let mut m = grid.places(n, u, d) & !(1u64 << places[kind]);
        if kind != 2 {
            // A line's cells in the cell's box came with the box.
            m &= !l.meet(kind, 2)[(u - kind * n) * n + b];
        }
        let cells = l.unit(u);
        while m != 0 {
            let x = cells[m.trailing_zeros() as usize] as usize;
            m &= m - 1;
            out.push(Imp {
                pot: g.pot(x, d, false),
                cause: unit_cause(kind),
                live: true,
                unit: u as u16,
            });
        }
    }
}

/// The potentials that go on when `p` (off) holds, in SE's order: the
/// cell's other candidate when it has two (with `y`), then the digit's
/// other place in the box, the row and the column when it has two (with
/// `x`), each once.
pub(super) fn off_to_on(
    l: &Layout,
    g: Geo,
    grid: &Grid,
    p: Pot,
    y: bool,
    x: bool,
    out: &mut Vec<Imp>,
) {
    out.clear();
    let cell = g.cell(p);
    let d = g.digit(p);
    let mask = grid.masks[cell];
    if y && two_bits(mask) {
        let mut other = mask.trailing_zeros() as u8 + 1;
        if other == d {
            other = (mask & !bit(d)).trailing_zeros() as u8 + 1;
        }
        out.push(Imp {
            pot: g.pot(cell, other, true),
            cause: CELL,
            live: true,
            unit: 0,
        });
    }
    if x {
        let units = l.units_of(cell);
        for kind in [2, 0, 1] {
            let u = units[kind] as usize;
            let m = grid.places(g.n, u, d);
            if !two_bits(m) {
                continue;
            }
            let cells = l.unit(u);
            let mut other = cells[m.trailing_zeros() as usize] as usize;
            if other == cell {
                other = cells[(m & (m - 1)).trailing_zeros() as usize] as usize;
            }
            let q = g.pot(other, d, true);
            if out.iter().any(|i| i.pot == q) {
                continue;
            }
            out.push(Imp {
                pot: q,
                cause: unit_cause(kind),
                live: true,
                unit: u as u16,
            });
        }
    }
}

/// The implications of each potential on a grid that does not change
/// (a level-0 search, a static run), found once.
#[derive(Default)]
pub(super) struct Memo {
    /// Which potentials imply anything, by potential, copied into each
    /// implication found ([`Imp::live`]); empty: all of them.
    pub live: Vec<bool>,
    /// Each potential's implications, `data[start..end]`; `start` is
    /// [`NONE`] until they are found.
    at: Vec<(u32, u32)>,
    data: Vec<Imp>,
    buf: Vec<Imp>,
}

impl Memo {
    /// An empty memo for `count` potentials, in `self`'s buffers.
    pub fn renew(mut self, count: usize) -> Memo {
        self.live.clear();
        self.at.clear();
        self.at.resize(count, (NONE, 0));
        self.data.clear();
        self
    }

    /// The bytes its buffers hold.
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.live.capacity()
            + self.at.capacity() * size_of::<(u32, u32)>()
            + (self.data.capacity() + self.buf.capacity()) * size_of::<Imp>()
    }

    pub fn reset(&mut self) {
        self.at.fill((NONE, 0));
        self.data.clear();
    }

    /// What `p` implies on `grid`: its "off" potentials when on, with
    /// `y`; its "on" potentials when off, with `y` and `x`.
    #[inline]
    pub fn get(&mut self, l: &Layout, g: Geo, grid: &Grid, p: Pot, y: bool, x: bool) -> &[Imp] {
        let (mut start, mut end) = self.at[p as usize];
        if start == NONE {
            (start, end) = self.fill(l, g, grid, p, y, x);
        }
        &self.data[start as usize..end as usize]
    }

    #[inline(never)]
    fn fill(&mut self, l: &Layout, g: Geo, grid: &Grid, p: Pot, y: bool, x: bool) -> (u32, u32) {
        if Geo::on(p) {
            on_to_off(l, g, grid, p, y, &mut self.buf);
        } else {
            off_to_on(l, g, grid, p, y, x, &mut self.buf);
        }
        if !self.live.is_empty() {
            for imp in &mut self.buf {
                imp.live = self.live[imp.pot as usize];
            }
        }
        let start = self.data.len() as u32;
        self.data.extend_from_slice(&self.buf);
        let span = (start, self.data.len() as u32);
        self.at[p as usize] = span;
        span
    }
}

/// A potential of a run with its parents (the first is the one it follows
/// from; the others, in dynamic chains, the eliminations it relies on).
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub pot: Pot,
    pub cause: u8,
    /// The nested chain (an index into [`Engine::nested`]) behind a
    /// `RULE` potential, or [`NONE`].
    pub nested: u32,
    /// The links from the start along first parents.
    pub depth: u32,
    start: u32,
    len: u32,
}

/// What one assumption forces: SE's sets "to on" and "to off", in the
/// order they were found, and the contradiction that stopped it, if any.
#[derive(Debug, Default)]
pub(super) struct Run {
    pub nodes: Vec<Node>,
    par: Vec<u32>,
    /// Node indices of the "on" set, in order.
    pub ons: Vec<u32>,
    /// Node indices of the "off" set, in order.
    pub offs: Vec<u32>,
    /// The potential found both on and off: (its on node, its off node).
    pub absurd: Option<(u32, u32)>,
    /// The nodes of the two sets, in the order of their potentials.
    index: Vec<u32>,
    /// The potentials of the two sets, a bit each.
    bits: Vec<u64>,
    /// For each word of `bits`, the potentials in the words before it: a
    /// potential's place in `index` is that and those below it in its
    /// word.
    ranks: Vec<u32>,
}

impl Run {
    pub fn parents(&self, i: u32) -> &[u32] {
        let n = self.nodes[i as usize];
        &self.par[n.start as usize..(n.start + n.len) as usize]
    }

    /// The node of `p` in the run's sets (None in a Nishio run, which
    /// keeps no index).
    #[inline]
    pub fn get(&self, p: Pot) -> Option<u32> {
        let (k, b) = (p as usize / 64, p % 64);
        let w = *self.bits.get(k)?;
        if w >> b & 1 == 0 {
            return None;
        }
        let below = (w & ((1u64 << b) - 1)).count_ones();
        Some(self.index[(self.ranks[k] + below) as usize])
    }

    pub fn push(&mut self, pot: Pot, cause: u8, nested: u32, parents: &[u32]) -> u32 {
        let start = self.par.len() as u32;
        self.par.extend_from_slice(parents);
        let depth = parents
            .first()
            .map_or(0, |&p| self.nodes[p as usize].depth + 1);
        self.nodes.push(Node {
            pot,
            cause,
            nested,
            depth,
            start,
            len: parents.len() as u32,
        });
        self.nodes.len() as u32 - 1
    }

    fn clear(&mut self) {
        self.nodes.clear();
        self.par.clear();
        self.ons.clear();
        self.offs.clear();
        self.absurd = None;
        self.index.clear();
        self.bits.clear();
        self.ranks.clear();
    }

    /// The first-parent path from node `i` back to the start, `i` first.
    pub fn path(&self, mut i: u32) -> Vec<u32> {
        let mut out = vec![i];
        while let Some(&p) = self.parents(i).first() {
            out.push(p);
            i = p;
        }
        out
    }
}

/// A chain technique found inside a chain (nested forcing chains): its
/// complexity, added to the chains that use it.
#[derive(Debug, Clone, Copy)]
pub(super) struct NestedInfo {
    pub complexity: u32,
}

/// The state shared by one search.
pub(super) struct Engine<'a> {
    pub c: &'a Candidates,
    pub l: &'a Layout,
    pub g: Geo,
    pub mode: Chaining,
    /// Only the cheapest hint is wanted: a search may leave out chains
    /// that would sort after one it has (the ladder takes a producer's
    /// first hint; nested searches want them all).
    pub cheapest: bool,
    /// Whether searches may skip starts and runs whose closures show they
    /// find nothing ([`super::reach`]); off only to test that they lose
    /// nothing.
    pub prune: bool,
    /// The candidates the search starts from.
    pub base: Grid,
    /// The candidates during a run (dynamic runs remove some, and put
    /// them back after: between runs it is `base`).
    pub cur: Grid,
    /// The candidates the run being grown removed from `cur`.
    removed: Vec<(u32, u8)>,
    /// The node of each potential in the run being built, or NONE.
    pub slot: Vec<u32>,
    imps: Vec<Imp>,
    hidden: Vec<u32>,
    stamp: Vec<u32>,
    generation: u32,
    pub nested: Vec<NestedInfo>,
    todo: Vec<u32>,
    next: Vec<u32>,
    /// A run's queues of "on" and "off" nodes to expand (read from a
    /// cursor: nodes are only added at the end).
    pending_on: Vec<u32>,
    pending_off: Vec<u32>,
    /// The implications on the base grid, for runs that do not change it.
    memo: Memo,
    /// When not empty, the candidates (a bit at `cell * n + digit - 1`)
    /// whose potentials the run being grown expanded: all a run at level 0
    /// reads of the grid is those cells' candidates and their digits'
    /// places in their units ([`super::multiple`]'s Nishio memory).
    pub track: Vec<u64>,
}

thread_local! {
    /// Runs done with, kept for their buffers: a search makes hundreds,
    /// nested searches many more. With the bytes their buffers hold.
    static SPARE_RUNS: std::cell::RefCell<(Vec<Run>, usize)> =
        const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// The most a thread keeps in spare runs' buffers: enough for a 9x9
/// search's runs, and a bound on what a thread holds after a large grid's.
const SPARE_BYTES: usize = 8 << 20;

impl Run {
    /// The bytes its buffers hold.
    fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<Node>()
            + self.par.capacity() * size_of::<u32>()
            + (self.ons.capacity() + self.offs.capacity()) * size_of::<u32>()
            + (self.index.capacity() + self.ranks.capacity()) * size_of::<u32>()
            + self.bits.capacity() * size_of::<u64>()
    }
}

/// Gives runs back for reuse, up to 512 runs and [`SPARE_BYTES`].
pub(super) fn recycle(runs: &mut Vec<Run>) {
    SPARE_RUNS.with(|s| {
        let (spare, bytes) = &mut *s.borrow_mut();
        for run in runs.drain(..) {
            if !keep_spare(spare, bytes, run) {
                break;
            }
        }
    });
    runs.clear();
}

/// Gives one run back for reuse, as [`recycle`].
pub(super) fn recycle_one(run: Run) {
    SPARE_RUNS.with(|s| {
        let (spare, bytes) = &mut *s.borrow_mut();
        keep_spare(spare, bytes, run);
    });
}

/// Keeps `run` among the spares if they have room; false when full.
fn keep_spare(spare: &mut Vec<Run>, bytes: &mut usize, run: Run) -> bool {
    let b = run.bytes();
    if spare.len() >= 512 || *bytes + b > SPARE_BYTES {
        return false;
    }
    *bytes += b;
    spare.push(run);
    true
}

/// An engine's buffers, kept between searches: a rating walk makes
/// thousands of engines, nested chains more within one search.
#[derive(Default)]
struct Buffers {
    base: Grid,
    cur: Grid,
    removed: Vec<(u32, u8)>,
    slot: Vec<u32>,
    imps: Vec<Imp>,
    hidden: Vec<u32>,
    stamp: Vec<u32>,
    nested: Vec<NestedInfo>,
    todo: Vec<u32>,
    next: Vec<u32>,
    pending_on: Vec<u32>,
    pending_off: Vec<u32>,
    memo: Memo,
    track: Vec<u64>,
}

impl Buffers {
    fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.base.bytes()
            + self.cur.bytes()
            + self.removed.capacity() * size_of::<(u32, u8)>()
            + self.imps.capacity() * size_of::<Imp>()
            + self.nested.capacity() * size_of::<NestedInfo>()
            + (self.slot.capacity()
                + self.hidden.capacity()
                + self.stamp.capacity()
                + self.todo.capacity()
                + self.next.capacity()
                + self.pending_on.capacity()
                + self.pending_off.capacity())
                * size_of::<u32>()
            + self.track.capacity() * size_of::<u64>()
            + self.memo.bytes()
    }
}

thread_local! {
    /// Buffers of engines done with (nested searches hold several at
    /// once), with the bytes they hold.
    static SPARE_ENGINES: std::cell::RefCell<(Vec<Buffers>, usize)> =
        const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// The most a thread keeps in spare engines' buffers, and how many: a
/// 9x9 engine takes tens of kilobytes, a 16x16 one about a megabyte.
pub(super) const SPARE_ENGINE_BYTES: usize = 4 << 20;
const SPARE_ENGINES_MAX: usize = 8;

impl Drop for Engine<'_> {
    /// Keeps the buffers for the next engine of the thread, up to
    /// [`SPARE_ENGINES_MAX`] of them and [`SPARE_ENGINE_BYTES`].
    fn drop(&mut self) {
        use std::mem::take;
        let b = Buffers {
            base: take(&mut self.base),
            cur: take(&mut self.cur),
            removed: take(&mut self.removed),
            slot: take(&mut self.slot),
            imps: take(&mut self.imps),
            hidden: take(&mut self.hidden),
            stamp: take(&mut self.stamp),
            nested: take(&mut self.nested),
            todo: take(&mut self.todo),
            next: take(&mut self.next),
            pending_on: take(&mut self.pending_on),
            pending_off: take(&mut self.pending_off),
            memo: take(&mut self.memo),
            track: take(&mut self.track),
        };
        let size = b.bytes();
        // A thread being torn down keeps nothing.
        let _ = SPARE_ENGINES.try_with(|s| {
            let (spare, bytes) = &mut *s.borrow_mut();
            if spare.len() < SPARE_ENGINES_MAX && *bytes + size <= SPARE_ENGINE_BYTES {
                *bytes += size;
                spare.push(b);
            }
        });
    }
}

impl<'a> Engine<'a> {
    pub fn new(c: &'a Candidates, mode: Chaining) -> Engine<'a> {
        let l = c.layout();
        let g = Geo { n: l.n() };
        let mut b = SPARE_ENGINES
            .with(|s| {
                let (spare, bytes) = &mut *s.borrow_mut();
                let b = spare.pop()?;
                *bytes -= b.bytes();
                Some(b)
            })
            .unwrap_or_default();
        b.base.refill(c);
        b.cur.refill(c);
        b.removed.clear();
        b.slot.clear();
        b.slot.resize(g.count(), NONE);
        b.stamp.clear();
        b.stamp.resize(g.count(), 0);
        b.nested.clear();
        b.track.clear();
        // The others are cleared where they are used.
        Engine {
            c,
            l,
            g,
            mode,
            cheapest: false,
            prune: true,
            base: b.base,
            cur: b.cur,
            removed: b.removed,
            slot: b.slot,
            imps: b.imps,
            hidden: b.hidden,
            stamp: b.stamp,
            generation: 0,
            nested: b.nested,
            todo: b.todo,
            next: b.next,
            pending_on: b.pending_on,
            pending_off: b.pending_off,
            memo: b.memo.renew(g.count()),
            track: b.track,
        }
    }

    fn new_run(&mut self) -> Run {
        let mut r = SPARE_RUNS
            .with(|s| {
                let (spare, bytes) = &mut *s.borrow_mut();
                let run = spare.pop()?;
                *bytes -= run.bytes();
                Some(run)
            })
            .unwrap_or_default();
        r.clear();
        r
    }

    /// What `p` implies on the base grid, as this engine's runs read it
    /// (cell links unless Nishio; unit links always).
    pub fn base_implications(&mut self, p: Pot) -> &[Imp] {
        let y = !self.mode.nishio;
        self.memo.get(self.l, self.g, &self.base, p, y, true)
    }

    /// SE's doChaining: everything `start` forces, "on" potentials first,
    /// until nothing new follows or a potential would be both on and off.
    /// Dynamic runs remove each "off" candidate once it is used; from
    /// level 1 the basic techniques (and nested chains) add eliminations
    /// whenever the plain implications run dry.
    pub fn chain(&mut self, start: Pot, go_on: &mut GoOn<'_>) -> Result<Run, Stopped> {
        let mut run = self.new_run();
        let result = self.grow(&mut run, start, go_on);
        // Only dynamic runs change the candidates: back to the base grid,
        // candidate by candidate (a run removes a few; the grid is
        // kilobytes).
        for (cell, d) in self.removed.drain(..) {
            self.cur.restore(self.l, cell as usize, d);
        }
        run.index.clear();
        run.bits.clear();
        run.ranks.clear();
        // Nishio asks a run only whether it ends in a contradiction.
        if self.mode.nishio {
            for node in &run.nodes {
                self.slot[node.pot as usize] = NONE;
            }
            return result.map(|()| run);
        }
        // The index, sorted by potential: the sets' potentials marked in
        // a bitset, read back in order (each potential is in the sets
        // once, at the node its slot holds).
        run.bits.resize(self.g.count().div_ceil(64), 0);
        for &i in run.ons.iter().chain(run.offs.iter()) {
            let p = run.nodes[i as usize].pot as usize;
            run.bits[p / 64] |= 1 << (p % 64);
        }
        for (k, &word) in run.bits.iter().enumerate() {
            run.ranks.push(run.index.len() as u32);
            let mut w = word;
            while w != 0 {
                let p = k * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                run.index.push(self.slot[p]);
            }
        }
        for node in &run.nodes {
            self.slot[node.pot as usize] = NONE;
        }
        result.map(|()| run)
    }

    fn add(&mut self, run: &mut Run, pot: Pot, cause: u8, nested: u32, parents: &[u32]) -> u32 {
        let i = run.push(pot, cause, nested, parents);
        self.slot[pot as usize] = i;
        if Geo::on(pot) {
            run.ons.push(i);
        } else {
            run.offs.push(i);
        }
        i
    }

    fn grow(&mut self, run: &mut Run, start: Pot, go_on: &mut GoOn<'_>) -> Result<(), Stopped> {
        let (l, g) = (self.l, self.g);
        let y = !self.mode.nishio;
        let dynamic = self.mode.dynamic;
        let mut pending_on = std::mem::take(&mut self.pending_on);
        let mut pending_off = std::mem::take(&mut self.pending_off);
        pending_on.clear();
        pending_off.clear();
        let (mut next_on, mut next_off) = (0, 0);
        let i = self.add(run, start, START, NONE, &[]);
        if Geo::on(start) {
            pending_on.push(i);
        } else {
            pending_off.push(i);
        }
        let mut imps = std::mem::take(&mut self.imps);
        let mut parents = std::mem::take(&mut self.hidden);
        let mut memo = std::mem::take(&mut self.memo);
        let mut result = Ok(());
        loop {
            if let Some(&i) = pending_on.get(next_on) {
                next_on += 1;
                let p = run.nodes[i as usize].pot;
                self.read(p);
                // The base grid's implications, of the candidates the run
                // has left (an "on" potential's are in the same order).
                for imp in memo.get(l, g, &self.base, p, y, true) {
                    if dynamic && !self.cur.has(imp.pot) {
                        continue;
                    }
                    let on = self.slot[(imp.pot | 1) as usize];
                    if on != NONE {
                        let off = run.push(imp.pot, imp.cause, NONE, &[i]);
                        run.absurd = Some((on, off));
                        break;
                    }
                    if self.slot[imp.pot as usize] == NONE {
                        let j = self.add(run, imp.pot, imp.cause, NONE, &[i]);
                        pending_off.push(j);
                    }
                }
                if run.absurd.is_some() {
                    break;
                }
            } else if let Some(&i) = pending_off.get(next_off) {
                next_off += 1;
                let p = run.nodes[i as usize].pot;
                self.read(p);
                if dynamic {
                    off_to_on(l, g, &self.cur, p, y, true, &mut imps);
                    let (cell, d) = (g.cell(p), g.digit(p));
                    for imp in &imps {
                        let off = self.slot[(imp.pot & !1) as usize];
                        if off == NONE && self.slot[imp.pot as usize] != NONE {
                            continue;
                        }
                        // New, or a contradiction: with the eliminations
                        // it relies on.
                        parents.clear();
                        parents.push(i);
                        self.hidden_parents(imp, &mut parents);
                        if off != NONE {
                            let on = run.push(imp.pot, imp.cause, NONE, &parents);
                            run.absurd = Some((on, off));
                            break;
                        }
                        let j = self.add(run, imp.pot, imp.cause, NONE, &parents);
                        pending_on.push(j);
                    }
                    self.cur.remove(l, cell, d);
                    self.removed.push((cell as u32, d));
                } else {
                    for imp in memo.get(l, g, &self.base, p, y, true) {
                        let off = self.slot[(imp.pot & !1) as usize];
                        if off != NONE {
                            let on = run.push(imp.pot, imp.cause, NONE, &[i]);
                            run.absurd = Some((on, off));
                            break;
                        }
                        if self.slot[imp.pot as usize] == NONE {
                            let j = self.add(run, imp.pot, imp.cause, NONE, &[i]);
                            pending_on.push(j);
                        }
                    }
                }
                if run.absurd.is_some() {
                    break;
                }
            } else {
                break;
            }
            if next_on == pending_on.len() && next_off == pending_off.len() && self.mode.level > 0 {
                match super::advanced::potentials(self, run, go_on) {
                    Ok(found) => {
                        for (pot, nested, ps) in found {
                            if self.slot[pot as usize] == NONE {
                                let j = self.add(run, pot, RULE, nested, &ps);
                                pending_off.push(j);
                            }
                        }
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
        }
        self.imps = imps;
        self.hidden = parents;
        self.pending_on = pending_on;
        self.pending_off = pending_off;
        self.memo = memo;
        result
    }

    /// Notes that the run expands `p`, when runs are tracked.
    #[inline]
    fn read(&mut self, p: Pot) {
        if !self.track.is_empty() {
            let k = (p >> 1) as usize;
            self.track[k / 64] |= 1 << (k % 64);
        }
    }

    /// The eliminations an "on" implication relies on, besides its first
    /// parent: the cell's candidates removed so far in this run, or the
    /// digit's places removed from the unit.
    fn hidden_parents(&self, imp: &Imp, out: &mut Vec<u32>) {
        let g = self.g;
        let source = self.c.masks();
        let cell = g.cell(imp.pot);
        let d = g.digit(imp.pot);
        if imp.cause == CELL {
            let mut gone = source[cell] & !self.cur.masks[cell];
            while gone != 0 {
                let d2 = gone.trailing_zeros() as u8 + 1;
                gone &= gone - 1;
                let s = self.slot[g.pot(cell, d2, false) as usize];
                debug_assert!(s != NONE);
                if s != NONE {
                    out.push(s);
                }
            }
        } else {
            // The unit's places of the digit the run removed, in the
            // unit's order.
            let u = imp.unit as usize;
            let cells = self.l.unit(u);
            let mut gone = self.base.places(g.n, u, d) & !self.cur.places(g.n, u, d);
            while gone != 0 {
                let x = cells[gone.trailing_zeros() as usize] as usize;
                gone &= gone - 1;
                let s = self.slot[g.pot(x, d, false) as usize];
                debug_assert!(s != NONE);
                if s != NONE {
                    out.push(s);
                }
            }
        }
    }

    /// SE's ancestor count of node `i` (itself included), breadth first,
    /// each potential once; adds the nested chains met to `nested`.
    pub fn ancestors(&mut self, run: &Run, i: u32, nested: &mut Vec<u32>) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
        let generation = self.generation;
        let mut count = 0;
        let mut todo = std::mem::take(&mut self.todo);
        let mut next = std::mem::take(&mut self.next);
        todo.clear();
        next.clear();
        todo.push(i);
        while !todo.is_empty() {
            for &j in &todo {
                let node = run.nodes[j as usize];
                let s = &mut self.stamp[node.pot as usize];
                if *s == generation {
                    continue;
                }
                *s = generation;
                count += 1;
                if node.nested != NONE && !nested.contains(&node.nested) {
                    nested.push(node.nested);
                }
                next.extend_from_slice(run.parents(j));
            }
            std::mem::swap(&mut todo, &mut next);
            next.clear();
        }
        self.todo = todo;
        self.next = next;
        count
    }
}

/// The cheapest hint found so far, as the hints sort (difficulty, then
/// complexity): a search for the cheapest leaves out what would sort
/// after it. A chain's difficulty grows with its complexity, so a lower
/// bound on a chain's complexity is enough to leave it out: a
/// breadth-first level-0 search stops at the depth where every chain it
/// could still find would sort after the best (a chain found at depth L,
/// L links, has complexity L for a cycle, whose start comes twice, and
/// L + 1 for a forcing chain, whose potentials are all different); a
/// multiple search skips a conclusion whose chains' first-parent paths
/// alone are too long.
#[derive(Default, Clone, Copy, PartialEq)]
pub(super) struct Best(Option<(f64, u32)>);

impl Best {
    pub fn offer(&mut self, diff: f64, cx: u32) {
        if self
            .0
            .is_none_or(|(d, c)| diff < d || (diff == d && cx < c))
        {
            self.0 = Some((diff, cx));
        }
    }
    /// Whether every chain of `base` with complexity `cx` or more sorts
    /// after the best or ties it: what a search that reports hints in
    /// their sort order's ties (a later one never comes first) can leave
    /// out.
    pub fn settles(&self, base: f64, cx: u32) -> bool {
        self.0.is_some_and(|(d, c)| {
            let diff = difficulty(base, cx);
            diff > d || (diff == d && cx >= c)
        })
    }
    /// Whether every chain of `base` with complexity `cx` or more sorts
    /// after the best.
    pub fn beats(&self, base: f64, cx: u32) -> bool {
        self.0.is_some_and(|(d, c)| {
            let diff = difficulty(base, cx);
            diff > d || (diff == d && cx > c)
        })
    }
}

/// SE's chain-length penalty in tenths: one for each of the thresholds
/// 4, 6, 8, 12, 16, 24, ... that `complexity - 2` exceeds.
pub(super) fn length_steps(complexity: u32) -> u32 {
    let length = i64::from(complexity) - 2;
    let (mut ceil, mut odd, mut steps) = (4i64, false, 0);
    while length > ceil {
        steps += 1;
        ceil = if odd { ceil * 4 / 3 } else { ceil * 3 / 2 };
        odd = !odd;
    }
    steps
}

/// A chain hint's difficulty as SE computes it, in floating point (SE
/// sorts by it, so the rounding of its sums is kept).
pub(super) fn difficulty(base: f64, complexity: u32) -> f64 {
    let mut added = 0.0;
    for _ in 0..length_steps(complexity) {
        added += 0.1;
    }
    base + added
}

/// The value serate prints for a difficulty, in tenths.
pub(super) fn tenths(difficulty: f64) -> u16 {
    ((difficulty + 0.05) * 10.0) as u16
}
