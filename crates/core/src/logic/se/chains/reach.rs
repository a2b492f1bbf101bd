//! Where each potential can lead on the base grid: the potentials its
//! static run could reach, as a bit set, from the strongly connected
//! components of the implication graph (a component reaches itself and
//! whatever the components after it reach).
//!
//! A static run (no eliminations along the way) is exactly this closure,
//! cut short only by a contradiction; so when the sets of several starts
//! share nothing, their runs share nothing, and a cell or region forcing
//! chain search need not make those runs at all. Most cells and regions
//! share nothing: the search then makes only the runs of those that might.

use super::engine::{Engine, Geo, NONE, Pot};
use crate::logic::Candidates;

/// The reach of every potential of the base grid's candidates.
pub(super) struct Reach {
    /// Each potential's node, or [`NONE`] when its candidate is not there.
    node: Vec<u32>,
    /// Each node's component.
    comp: Vec<u32>,
    /// Each component's reach, `words` words: a bit per node.
    bits: Vec<u64>,
    words: usize,
}

/// The most words the sets of a graph may take, one set a node: 512 KiB,
/// which holds any 9x9 state (1,458 potentials, 23 words a set). Past
/// that (large grids with many candidates) the closures would cost more
/// than the searches they spare, in time and memory: none are made.
const MAX_WORDS: usize = 1 << 16;

impl Reach {
    /// The reach of the potentials of `eng`'s base grid under its
    /// implications; None when the sets would take more than
    /// [`MAX_WORDS`].
    pub fn new(eng: &mut Engine<'_>) -> Option<Reach> {
        Reach::of(eng.c, eng.g, |p, out| {
            out.extend(eng.base_implications(p).iter().map(|imp| imp.pot));
        })
    }

    /// The reach of the potentials of `c` under `implications` (which
    /// adds to its list what a potential implies).
    pub fn of(
        c: &Candidates,
        g: Geo,
        mut implications: impl FnMut(Pot, &mut Vec<Pot>),
    ) -> Option<Reach> {
        let mut node = vec![NONE; g.count()];
        let mut pots: Vec<Pot> = Vec::new();
        for (cell, &m) in c.masks().iter().enumerate() {
            let mut m = m;
            while m != 0 {
                let d = m.trailing_zeros() as u8 + 1;
                m &= m - 1;
                for on in [false, true] {
                    let p = g.pot(cell, d, on);
                    node[p as usize] = pots.len() as u32;
                    pots.push(p);
                }
            }
        }
        let v = pots.len();
        let words = v.div_ceil(64).max(1);
        if v * words > MAX_WORDS {
            return None;
        }
        // The graph, each node's successors in a row.
        let mut start = Vec::with_capacity(v + 1);
        let mut adj: Vec<u32> = Vec::new();
        for &p in &pots {
            start.push(adj.len() as u32);
            let from = adj.len();
            implications(p, &mut adj);
            for w in &mut adj[from..] {
                // Implications are of the grid's candidates.
                debug_assert_ne!(node[*w as usize], NONE);
                *w = node[*w as usize];
            }
        }
        start.push(adj.len() as u32);
        let succ = |x: usize| &adj[start[x] as usize..start[x + 1] as usize];
        // A potential that implies nothing (most "off" ones) reaches only
        // itself: it gets no component nor set of its own, only its bit in
        // the sets of those that imply it.
        let sink = |x: usize| start[x] == start[x + 1];

        // Tarjan's algorithm, without recursion, over the others;
        // components come out last ones first, so each one's successors
        // are done before it.
        let mut index = vec![NONE; v];
        let mut low = vec![0u32; v];
        let mut comp = vec![NONE; v];
        let mut stack: Vec<u32> = Vec::new();
        let mut calls: Vec<(u32, u32)> = Vec::new();
        let mut next = 0u32;
        let mut comps = 0u32;
        let mut members: Vec<u32> = Vec::new();
        let mut comp_start: Vec<u32> = Vec::new();
        for root in 0..v {
            if index[root] != NONE || sink(root) {
                continue;
            }
            calls.push((root as u32, 0));
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root as u32);
            while let Some(&mut (x, ref mut k)) = calls.last_mut() {
                let xs = succ(x as usize);
                if let Some(&w) = xs.get(*k as usize) {
                    *k += 1;
                    let w = w as usize;
                    if sink(w) {
                        continue;
                    }
                    if index[w] == NONE {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w as u32);
                        calls.push((w as u32, 0));
                    } else if comp[w] == NONE {
                        low[x as usize] = low[x as usize].min(index[w]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(parent, _)) = calls.last() {
                    low[parent as usize] = low[parent as usize].min(low[x as usize]);
                }
                if low[x as usize] == index[x as usize] {
                    comp_start.push(members.len() as u32);
                    loop {
                        let w = stack.pop().expect("on the stack");
                        comp[w as usize] = comps;
                        members.push(w);
                        if w == x {
                            break;
                        }
                    }
                    comps += 1;
                }
            }
        }
        comp_start.push(members.len() as u32);
        let mut bits = vec![0u64; comps as usize * words];
        // The component each one last took a union from: each successor
        // component once.
        let mut taken = vec![NONE; comps as usize];
        for c in 0..comps as usize {
            let (lo, hi) = (comp_start[c] as usize, comp_start[c + 1] as usize);
            let (done, rest) = bits.split_at_mut(c * words);
            let own = &mut rest[..words];
            for &x in &members[lo..hi] {
                own[x as usize / 64] |= 1 << (x % 64);
                for &w in succ(x as usize) {
                    if sink(w as usize) {
                        own[w as usize / 64] |= 1 << (w % 64);
                        continue;
                    }
                    let cw = comp[w as usize] as usize;
                    if cw != c && taken[cw] != c as u32 {
                        taken[cw] = c as u32;
                        let theirs = &done[cw * words..(cw + 1) * words];
                        for (o, &t) in own.iter_mut().zip(theirs) {
                            *o |= t;
                        }
                    }
                }
            }
        }
        Some(Reach {
            node,
            comp,
            bits,
            words,
        })
    }

    /// Whether `to` is in the closure of `from`.
    pub fn leads(&self, from: Pot, to: Pot) -> bool {
        let k = self.node[to as usize];
        match self.set(from) {
            Some(set) => k != NONE && set[k as usize / 64] >> (k % 64) & 1 != 0,
            None => from == to,
        }
    }

    /// The closure of `p` as a set of nodes; None when `p` implies
    /// nothing (its closure is itself).
    fn set(&self, p: Pot) -> Option<&[u64]> {
        let c = self.comp[self.node[p as usize] as usize];
        (c != NONE).then(|| &self.bits[c as usize * self.words..(c as usize + 1) * self.words])
    }

    /// Whether the static runs of all of `starts` may have a potential in
    /// common: false means they have none.
    pub fn may_share(&self, starts: impl IntoIterator<Item = Pot>, scratch: &mut Vec<u64>) -> bool {
        let mut starts = starts.into_iter();
        let Some(first) = starts.next() else {
            return false;
        };
        // A start that implies nothing is left to the runs (rare).
        let Some(set) = self.set(first) else {
            return true;
        };
        scratch.clear();
        scratch.extend_from_slice(set);
        for p in starts {
            let Some(set) = self.set(p) else {
                return true;
            };
            let mut any = 0;
            for (s, &t) in scratch.iter_mut().zip(set) {
                *s &= t;
                any |= *s;
            }
            if any == 0 {
                return false;
            }
        }
        scratch.iter().any(|&w| w != 0)
    }

    /// The potentials `p` leads to, itself included, in order.
    #[cfg(test)]
    pub fn closure(&self, p: Pot) -> Vec<Pot> {
        let Some(set) = self.set(p) else {
            return vec![p];
        };
        (0..self.node.len() as Pot)
            .filter(|&q| {
                let k = self.node[q as usize] as usize;
                k != NONE as usize && set[k / 64] >> (k % 64) & 1 != 0
            })
            .collect()
    }
}
