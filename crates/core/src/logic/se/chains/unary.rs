//! Level 0: cycles (SE's bidirectional X-, Y- and XY-cycles) and forcing
//! chains whose assumption implies its own negation (forcing X-chains and
//! forcing chains), searched breadth first from every candidate of every
//! cell with two or more, as SE's doUnaryChaining does.

use super::engine::{self, Best, Engine, Geo, Memo, NONE, Pot, START};
use super::memory::Memory;
use super::reach::Reach;
use super::{Body, Found, Rec, others};
use crate::logic::Stopped;
use crate::logic::candidates::{digits_of, over_two_bits, two_bits};
use crate::logic::se::GoOn;

thread_local! {
    /// The last search's tree and memo, kept for their buffers (a rating
    /// walk searches hundreds of times) when they hold no more than
    /// [`engine::SPARE_ENGINE_BYTES`]: any 9x9 search's do; a 16x16 one's
    /// memo can take a few megabytes.
    static SPARE: std::cell::RefCell<Option<(Tree, Memo)>> =
        const { std::cell::RefCell::new(None) };
}

/// The search tree of one start: potentials with their one parent.
#[derive(Default)]
struct Tree {
    nodes: Vec<(Pot, u32, u8)>,
    /// The generation in which each potential was marked.
    marks: Vec<u32>,
    generation: u32,
    /// Scratch marks of a cycle's hint: its cells, and the candidates an
    /// "on" potential of it sees, marked `scratch`.
    cells: Vec<u32>,
    seen: Vec<u32>,
    scratch: u32,
    /// Buffers the searches reuse: the next layers, the layer being
    /// expanded, the ends found.
    on: Vec<u32>,
    off: Vec<u32>,
    batch: Vec<u32>,
    ends: Vec<u32>,
}

impl Tree {
    /// Empty, for a search on a grid of `g`'s size.
    fn renew(&mut self, g: Geo) {
        self.nodes.clear();
        self.marks.clear();
        self.marks.resize(g.count(), 0);
        self.generation = 0;
        self.cells.clear();
        self.cells.resize(g.n * g.n, 0);
        self.seen.clear();
        self.seen.resize(g.count() / 2, 0);
        self.scratch = 0;
    }
    /// The bytes its buffers hold.
    fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<(Pot, u32, u8)>()
            + (self.marks.capacity()
                + self.cells.capacity()
                + self.seen.capacity()
                + self.on.capacity()
                + self.off.capacity()
                + self.batch.capacity()
                + self.ends.capacity())
                * size_of::<u32>()
    }
    fn reset(&mut self) {
        self.nodes.clear();
        self.generation += 1;
    }
    fn push(&mut self, pot: Pot, parent: u32, cause: u8) -> u32 {
        self.nodes.push((pot, parent, cause));
        self.nodes.len() as u32 - 1
    }
    /// Marks `p` as in its set; false when it was already.
    fn mark(&mut self, p: Pot) -> bool {
        let s = &mut self.marks[p as usize];
        if *s == self.generation {
            false
        } else {
            *s = self.generation;
            true
        }
    }
    /// The reused buffers, empty, for a search to own while it runs.
    fn buffers(&mut self) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut b = (
            std::mem::take(&mut self.on),
            std::mem::take(&mut self.off),
            std::mem::take(&mut self.ends),
            std::mem::take(&mut self.batch),
        );
        b.0.clear();
        b.1.clear();
        b.2.clear();
        b.3.clear();
        b
    }
    /// Takes the buffers back.
    fn keep(&mut self, b: (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>)) {
        (self.on, self.off, self.ends, self.batch) = b;
    }
    /// Whether `p` is a strict ancestor of node `i` (SE's isParent).
    fn is_ancestor(&self, i: u32, p: Pot) -> bool {
        let mut j = self.nodes[i as usize].1;
        while j != NONE {
            if self.nodes[j as usize].0 == p {
                return true;
            }
            j = self.nodes[j as usize].1;
        }
        false
    }
    /// The potentials from node `i` back to the start, the start left out.
    fn body(&self, mut i: u32) -> impl Iterator<Item = Pot> + '_ {
        std::iter::from_fn(move || {
            let (p, parent, _) = self.nodes[i as usize];
            if parent == NONE {
                return None;
            }
            i = parent;
            Some(p)
        })
    }
    /// The path from node `i` back to the start, reversed: start first.
    fn path(&self, mut i: u32) -> Vec<(Pot, u8)> {
        let mut out = Vec::new();
        while i != NONE {
            let (p, parent, cause) = self.nodes[i as usize];
            out.push((p, cause));
            i = parent;
        }
        out.reverse();
        out
    }
}

/// With `memory` (a walk's), the pass with X-links only skips the starts
/// it knows find nothing, and the XY pass's closures are kept for the
/// next search.
pub(super) fn collect(
    eng: &mut Engine<'_>,
    found: &mut Found,
    go_on: &mut GoOn<'_>,
    mut memory: Option<&mut Memory>,
) -> Result<(), Stopped> {
    let c = eng.c;
    let g = eng.g;
    if let Some(m) = &mut memory {
        m.x_starts.update(c);
    }
    // The tree and memo of the thread's last search, for their buffers.
    let (mut tree, memo) = SPARE.with(|s| s.borrow_mut().take()).unwrap_or_default();
    tree.renew(g);
    let mut memo = memo.renew(g.count());
    // Whether each potential implies anything in a pass (an "on" one
    // always does; an "off" one when its cell has two candidates, with
    // Y-links, or its digit two places in a unit, with X-links). A
    // potential that implies nothing can end a chain but not lead on: the
    // searches do not add it to the tree, nor mark it, unless it is the
    // start's negation or one of its partners.
    memo.live.resize(g.count(), true);
    let mut best = Best::default();
    for (y, x) in [(false, true), (true, false), (true, true)] {
        // Every hint of the pass has the base of its cycles (those of
        // its forcing chains are not lower) and two potentials or more.
        if best.beats(cycle_base(x, y), 2) {
            continue;
        }
        memo.reset();
        let l = eng.l;
        for cell in 0..g.n * g.n {
            let mask = c.mask(cell);
            let bivalue = two_bits(mask);
            for d in digits_of(mask) {
                let conjugate = l
                    .units_of(cell)
                    .iter()
                    .any(|&u| two_bits(eng.base.places(g.n, u as usize, d)));
                memo.live[g.pot(cell, d, false) as usize] = (y && bivalue) || (x && conjugate);
            }
        }
        // Where each potential leads in this pass, for the XY pass: a
        // start whose closure holds neither its negation (a forcing chain)
        // nor a partner (a cycle) has no hint, and many have neither.
        // (In the X and Y passes the trees are small or the starts few:
        // the closures cost more than the searches they save.)
        let reach = if x && y && eng.prune {
            memory
                .as_deref_mut()
                .and_then(|m| m.take_closures(c))
                .or_else(|| {
                    Reach::of(c, g, |p, out| {
                        out.extend(memo.get(l, g, &eng.base, p, y, x).iter().map(|imp| imp.pot));
                    })
                })
        } else {
            None
        };
        // The X-link pass's memory (see [`StartMemory`]).
        let mut starts = memory
            .as_deref_mut()
            .map(|m| &mut m.x_starts)
            .filter(|_| x && !y);
        for (cell, d) in engine::open_candidates(c) {
            if !go_on() {
                return Err(Stopped);
            }
            if starts.as_ref().is_some_and(|m| m.known(g.n, cell, d)) {
                continue;
            }
            let unbounded = best == Best::default();
            let from = found.recs.len();
            unary(
                eng,
                &mut tree,
                &mut memo,
                reach.as_ref(),
                best,
                cell,
                d,
                y,
                x,
                &mut found.recs,
            );
            if unbounded
                && found.recs.len() == from
                && let Some(m) = &mut starts
            {
                m.remember(g.n, cell, d);
            }
            if eng.cheapest {
                for rec in &found.recs[from..] {
                    best.offer(rec.diff, rec.cx);
                }
            }
        }
        if let (Some(m), Some(reach)) = (memory.as_deref_mut(), reach) {
            m.keep_closures(c, reach);
        }
    }
    if tree.bytes() + memo.bytes() <= engine::SPARE_ENGINE_BYTES {
        SPARE.with(|s| *s.borrow_mut() = Some((tree, memo)));
    }
    Ok(())
}

/// SE's doUnaryChaining from `cell`=`d`.
#[allow(clippy::too_many_arguments)]
fn unary(
    eng: &Engine<'_>,
    tree: &mut Tree,
    memo: &mut Memo,
    reach: Option<&Reach>,
    best: Best,
    cell: usize,
    d: u8,
    y: bool,
    x: bool,
    recs: &mut Vec<Rec>,
) {
    let c = eng.c;
    let g = eng.g;
    // Y-cycles start only from a bivalue cell.
    if over_two_bits(c.mask(cell)) && !x {
        return;
    }
    let source = g.pot(cell, d, true);
    // A cycle comes back through a partner, a forcing chain reaches the
    // negation: without the closures, every start is searched.
    let leads = |from: Pot, to: Pot| reach.is_none_or(|r| r.leads(from, to));
    let partner = memo
        .get(eng.l, g, &eng.base, source & !1, y, x)
        .iter()
        .any(|imp| leads(source, imp.pot & !1));
    if partner || (x && leads(source, source & !1)) {
        from_on(eng, tree, memo, best, source, y, x, recs);
    }
    if x && leads(source & !1, source) {
        forcing(eng, tree, memo, best, source & !1, y, recs);
    }
}

/// SE's doCycles from `source` (on): breadth first, every path that comes
/// back to it after at least four links is a cycle; and with `x`, SE's
/// doForcingChains from it, a path to its negation.
///
/// The two searches grow the same tree: each potential is added the first
/// time it is implied, layer by layer, "off" and "on" layers in turn. SE's
/// cycle search also adds an "off" potential again on every later path it
/// is not an ancestor on; such a copy implies nothing new (its "on"
/// implications are in the tree already) and can only close a cycle, so
/// only the start's partners (the "off" potentials that imply it) are
/// copied. Each search takes the layers its own bound lets it; the tree
/// grows while either does.
#[allow(clippy::too_many_arguments)]
fn from_on(
    eng: &Engine<'_>,
    tree: &mut Tree,
    memo: &mut Memo,
    best: Best,
    source: Pot,
    y: bool,
    x: bool,
    recs: &mut Vec<Rec>,
) {
    // A cycle comes back to its start by a strong link (the cell's other
    // candidate off, or the digit's other place in a unit off); the links
    // go both ways: the start's partners are what its "off" potential
    // implies, turned off.
    let mut partners = [NONE; 4];
    let mut cycles = false;
    for (k, imp) in memo
        .get(eng.l, eng.g, &eng.base, source & !1, y, x)
        .iter()
        .enumerate()
    {
        partners[k] = imp.pot & !1;
        cycles = true;
    }
    let forcing = x;
    if !cycles && !forcing {
        return;
    }
    tree.reset();
    let root = tree.push(source, NONE, START);
    tree.mark(source);
    let negation = source ^ 1;
    let (cycle_base, forcing_base) = (cycle_base(x, y), forcing_base(y));
    let (mut frontier, spare, mut ends, mut batch) = tree.buffers();
    frontier.push(root);
    let mut forcing_end = NONE;
    // Layer `t` makes the nodes `t` links from the start: "off" ones when
    // `t` is odd. A cycle closed in layer t has t potentials; a forcing
    // chain ending there t + 1.
    let mut t = 0;
    while !frontier.is_empty() {
        t += 1;
        let odd = t % 2 == 1;
        // An "off" layer serves the cycles the next layer closes.
        let want_cycles = cycles && !best.settles(cycle_base, t + u32::from(odd));
        let want_forcing = forcing && forcing_end == NONE && !best.settles(forcing_base, t + 1);
        if !want_cycles && !want_forcing {
            break;
        }
        std::mem::swap(&mut batch, &mut frontier);
        for &i in &batch {
            for imp in memo.get(eng.l, eng.g, &eng.base, tree.nodes[i as usize].0, y, x) {
                if odd {
                    // An "off" potential not yet in the tree is no ancestor
                    // (the off marks only say "seen" here, and only of
                    // those that can lead on or end a forcing chain).
                    let first = (imp.live || imp.pot == negation) && tree.mark(imp.pot);
                    if first
                        || (want_cycles
                            && partners.contains(&imp.pot)
                            && !tree.is_ancestor(i, imp.pot))
                    {
                        let j = tree.push(imp.pot, i, imp.cause);
                        frontier.push(j);
                        if imp.pot == negation && want_forcing {
                            forcing_end = j;
                        }
                    }
                } else {
                    if want_cycles && t >= 4 && imp.pot == source {
                        ends.push(tree.push(imp.pot, i, imp.cause));
                    }
                    if tree.mark(imp.pot) {
                        frontier.push(tree.push(imp.pot, i, imp.cause));
                    }
                }
            }
        }
        batch.clear();
    }
    for &end in &ends {
        if let Some(rec) = cycle_hint(eng, tree, memo, end, y, x) {
            recs.push(rec);
        }
    }
    if forcing_end != NONE
        && let Some(rec) = forcing_hint(eng, tree, forcing_end, y)
    {
        recs.push(rec);
    }
    tree.keep((frontier, spare, ends, batch));
}

/// SE's createCycleHint: a candidate outside the cycle that sees an "on"
/// and an "off" potential of its digit goes. The cycle ends at node `end`
/// (the start again); its potentials are those from `end` back to the
/// start, the start once. Most cycles remove nothing: those are seen
/// through marks on the tree's scratch, before a path is built.
fn cycle_hint(
    eng: &Engine<'_>,
    tree: &mut Tree,
    memo: &mut Memo,
    end: u32,
    y: bool,
    x: bool,
) -> Option<Rec> {
    let (l, g) = (eng.l, eng.g);
    tree.scratch = tree.scratch.wrapping_add(1);
    if tree.scratch == 0 {
        tree.cells.fill(0);
        tree.seen.fill(0);
        tree.scratch = 1;
    }
    let mark = tree.scratch;
    let mut cells = std::mem::take(&mut tree.cells);
    for p in tree.body(end) {
        cells[g.cell(p)] = mark;
    }
    // A candidate of the digit in a unit of an "on" potential's cell (its
    // unit implications), outside the cycle's cells, is seen from an "on";
    // it goes when an "off" potential's cell sees it too.
    let mut seen = std::mem::take(&mut tree.seen);
    let mut removable: Vec<(u16, u8)> = Vec::new();
    for on_side in [true, false] {
        for p in tree.body(end).filter(|&p| Geo::on(p) == on_side) {
            for imp in memo.get(l, g, &eng.base, p | 1, y, x) {
                if imp.cause == engine::CELL || cells[g.cell(imp.pot)] == mark {
                    continue;
                }
                let k = imp.pot as usize / 2;
                if on_side {
                    seen[k] = mark;
                } else if seen[k] == mark {
                    // Taken once.
                    seen[k] = 0;
                    removable.push((g.cell(imp.pot) as u16, g.digit(imp.pot)));
                }
            }
        }
    }
    tree.cells = cells;
    tree.seen = seen;
    if removable.is_empty() {
        return None;
    }
    removable.sort_unstable();
    let path = tree.path(end);
    let cx = distinct(&path);
    debug_assert_eq!(cx as usize, path.len() - 1);
    Some(Rec {
        diff: engine::difficulty(cycle_base(x, y), cx),
        cx,
        key: sort_key(x, y),
        removable,
        place: None,
        body: Body::Cycle { path, x, y },
    })
}

fn cycle_base(x: bool, y: bool) -> f64 {
    if x && y { 7.0 } else { 6.5 }
}

fn forcing_base(y: bool) -> f64 {
    if y { 7.0 } else { 6.6 }
}

fn sort_key(x: bool, y: bool) -> u8 {
    match (x, y) {
        (true, true) => 4,
        (false, true) => 3,
        _ => 2,
    }
}

/// The potentials of a path, each once (SE's ancestor count).
fn distinct(path: &[(Pot, u8)]) -> u32 {
    let mut seen: Vec<Pot> = Vec::with_capacity(path.len());
    for &(p, _) in path {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen.len() as u32
}

/// SE's doForcingChains: breadth first from `source`; a path to its
/// negation is a forcing chain.
#[allow(clippy::too_many_arguments)]
fn forcing(
    eng: &Engine<'_>,
    tree: &mut Tree,
    memo: &mut Memo,
    best: Best,
    source: Pot,
    y: bool,
    recs: &mut Vec<Rec>,
) {
    tree.reset();
    let root = tree.push(source, NONE, START);
    tree.mark(source);
    let negation = source ^ 1;
    let (mut frontier, spare, mut ends, mut batch) = tree.buffers();
    frontier.push(root);
    // SE alternates an "on" and an "off" layer, each expanded by the same
    // rule (an implication goes on when it is the end or not yet marked;
    // SE's ancestor test adds nothing, every ancestor is marked): one
    // frontier, layer by layer, is the same search. `depth` is that of the
    // nodes the next layer makes; an end at depth k has k + 1 potentials.
    let mut depth = 1;
    let base = forcing_base(y);
    // The search has one end, its negation: it stops there.
    'search: while !frontier.is_empty() {
        if best.settles(base, depth + 1) {
            break;
        }
        depth += 1;
        std::mem::swap(&mut batch, &mut frontier);
        for &i in &batch {
            for imp in memo.get(eng.l, eng.g, &eng.base, tree.nodes[i as usize].0, y, true) {
                if imp.pot == negation {
                    ends.push(tree.push(imp.pot, i, imp.cause));
                    break 'search;
                }
                if imp.live && tree.mark(imp.pot) {
                    frontier.push(tree.push(imp.pot, i, imp.cause));
                }
            }
        }
        batch.clear();
    }

    for &end in &ends {
        if let Some(rec) = forcing_hint(eng, tree, end, y) {
            recs.push(rec);
        }
    }
    tree.keep((frontier, spare, ends, batch));
}

/// The forcing chain ending at node `end` (the start's negation).
fn forcing_hint(eng: &Engine<'_>, tree: &Tree, end: u32, y: bool) -> Option<Rec> {
    let (g, c) = (eng.g, eng.c);
    let target = tree.nodes[end as usize].0;
    let (cell, d) = (g.cell(target), g.digit(target));
    let (removable, place) = if Geo::on(target) {
        (others(c, cell, d), Some((cell as u16, d)))
    } else {
        (vec![(cell as u16, d)], None)
    };
    // SE keeps a hint that removes nothing from a cell with one
    // candidate; it changes nothing, so it is left out here.
    if removable.is_empty() {
        return None;
    }
    let path = tree.path(end);
    let cx = distinct(&path);
    debug_assert_eq!(cx as usize, path.len());
    let x = true;
    Some(Rec {
        diff: engine::difficulty(forcing_base(y), cx),
        cx,
        key: sort_key(x, y),
        removable,
        place,
        body: Body::Forcing { path, x, y },
    })
}
