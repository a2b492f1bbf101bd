//! Aligned pair and triple exclusion, as SE finds and values them.
//!
//! A set of `degree` base cells can't take a combination of digits that
//! repeats a digit in two of them that share a unit, or that covers every
//! candidate of a cell all of them see (an excluding cell: 2 candidates
//! for pairs, 2 or 3 for triples). A digit of a base cell that lives in no
//! remaining combination goes.
//!
//! SE's choice of sets, which decides which hint comes first:
//! - base cells are the open cells, row by row, with 2 or more candidates,
//!   no peer left with a single candidate, and at least one excluding
//!   peer;
//! - pairs of base cells come in SE's binary-permutation order: the second
//!   cell's index outer, the first's inner (0-1, 0-2, 1-2, 0-3, ...); the
//!   base cells need not see each other;
//! - a triple is such a pair plus a third base cell among the excluding
//!   peers of the first cell, then of the second (each peer list in SE's
//!   order: box, row, column); the same three cells may come more than
//!   once;
//! - the excluding cells they all see must be 2 or more;
//! - the first set with an elimination is reported first, eliminations in
//!   the order of the base cells.

use super::{GoOn, Sink};
use crate::logic::candidates::{Layout, bit, bits_of, digits_of};
use crate::logic::notation::{Cells, Digits, Rc};
use crate::logic::{Candidates, Step, Stopped, Technique};

const NONE: u32 = u32::MAX;

/// SE's `AlignedPairExclusion` (`degree` 2, 6.2) and `AlignedExclusion(3)`
/// (7.5). With `recall`, a walk's memory of the last search of this
/// degree that found nothing: the sets whose cells and shared excluding
/// cells are as they were then are not tried again.
pub(crate) fn aligned(
    c: &Candidates,
    degree: usize,
    sink: &mut Sink<'_>,
    go_on: &mut GoOn<'_>,
    recall: Option<&mut Option<Clean>>,
) -> Result<(), Stopped> {
    assert!(
        degree == 2 || degree == 3,
        "aligned exclusion of 2 or 3 cells"
    );
    let bases = Bases::new(c, degree);
    let mut recall = recall;
    // What this search may skip; the memory is taken, and kept again only
    // when the search ends having found nothing in every set it could try.
    let since = recall
        .as_deref_mut()
        .and_then(Option::take)
        .map(|clean| clean.since(c, &bases));
    let mut found = false;
    let empty = if bases.cells.len() < degree {
        true
    } else if degree == 3 {
        // The quick pass tries every set; SE's order matters only when
        // one removes something (then not every set is known empty).
        if bases.any_triple(c, since.as_ref(), go_on)? {
            ordered(c, &bases, degree, None, sink, go_on)?;
            false
        } else {
            true
        }
    } else {
        ordered(
            c,
            &bases,
            degree,
            since.as_ref(),
            &mut |step| {
                found = true;
                sink(step)
            },
            go_on,
        )?;
        !found
    };
    if empty && let Some(recall) = recall {
        *recall = Some(Clean::of(c, &bases, since));
    }
    Ok(())
}

/// The state of a search that found nothing in any set of its base
/// cells: the candidates it saw, and which cells were base cells.
pub(crate) struct Clean {
    masks: Vec<u64>,
    bases: Vec<u64>,
}

/// What changed since a [`Clean`] search, as its sets see it. A set of
/// base cells that were base cells then, with the same candidates, whose
/// shared excluding cells all kept theirs, removes nothing: its shared
/// excluding cells were excluding then, so it was tried, with the same
/// cells and as many excluding cells or more (more can only lock more
/// combinations).
struct Since {
    /// Cells whose candidates differ, as a bit set over cells.
    changed: Vec<u64>,
    /// Per base cell: a base cell then, with the same candidates.
    kept: Vec<bool>,
    /// The memory, for the next search to reuse.
    clean: Clean,
}

impl Clean {
    fn since(self, c: &Candidates, bases: &Bases) -> Since {
        let mut changed = vec![0u64; bases.words];
        for (x, (&now, &then)) in c.masks().iter().zip(&self.masks).enumerate() {
            if now != then {
                changed[x / 64] |= 1 << (x % 64);
            }
        }
        let has = |set: &[u64], x: usize| set[x / 64] & 1 << (x % 64) != 0;
        let kept = bases
            .cells
            .iter()
            .map(|&x| has(&self.bases, x) && !has(&changed, x))
            .collect();
        Since {
            changed,
            kept,
            clean: self,
        }
    }

    /// The memory of a search on `c` over `bases` that found nothing,
    /// in the vectors of the last one when there was one.
    fn of(c: &Candidates, bases: &Bases, since: Option<Since>) -> Clean {
        let mut clean = since.map_or(
            Clean {
                masks: Vec::new(),
                bases: Vec::new(),
            },
            |s| s.clean,
        );
        clean.masks.clear();
        clean.masks.extend_from_slice(c.masks());
        clean.bases.clear();
        clean.bases.resize(bases.words, 0);
        for &x in &bases.cells {
            clean.bases[x / 64] |= 1 << (x % 64);
        }
        clean
    }
}

impl Since {
    /// Whether the set of base cells `set` (indices), sharing the
    /// excluding cells `shared`, is known to remove nothing.
    fn skips(&self, set: &[usize], shared: &[u64]) -> bool {
        set.iter().all(|&i| self.kept[i])
            && shared.iter().zip(&self.changed).all(|(&s, &d)| s & d == 0)
    }
}

/// The sets of `bases` in SE's order, each reported when it removes
/// anything; those `since` knows to remove nothing are not tried.
fn ordered(
    c: &Candidates,
    bases: &Bases,
    degree: usize,
    since: Option<&Since>,
    sink: &mut Sink<'_>,
    go_on: &mut GoOn<'_>,
) -> Result<(), Stopped> {
    let nb = bases.cells.len();
    let mut trio = vec![0u64; bases.words];
    let mut common = Vec::new();
    let listed = match since {
        Some(s) if degree == 2 => bases.unknown_sets(s, 2, go_on)?,
        _ => None,
    };
    if let Some(mut list) = listed {
        // The pairs not known to remove nothing, in SE's order (the
        // second cell outer).
        list.sort_unstable_by_key(|set| (set[1], set[0]));
        for [i, j, _] in list {
            if !go_on() {
                return Err(Stopped);
            }
            and_two(&mut trio, bases.set(i), bases.set(j));
            if let Some(step) = bases.try_set(c, &[i, j], &trio, &mut common)
                && !sink(step)
            {
                break;
            }
        }
        return Ok(());
    }
    let mut twin = Vec::new();
    let mut in_twin = vec![false; nb];
    bases.pairs(go_on, |i, j, pair| {
        if degree == 2 {
            if since.is_some_and(|s| s.skips(&[i, j], pair)) {
                return true;
            }
            return match bases.try_set(c, &[i, j], pair, &mut common) {
                Some(step) => sink(step),
                None => true,
            };
        }
        // The third cell: a base cell among the excluding peers of the
        // first two, in SE's order.
        twin.clear();
        for &k in bases.thirds(i).iter().chain(bases.thirds(j)) {
            let k = k as usize;
            if k != i && k != j && !in_twin[k] {
                in_twin[k] = true;
                twin.push(k);
            }
        }
        for &k in &twin {
            in_twin[k] = false;
        }
        for &k in &twin {
            if !and_two(&mut trio, pair, bases.set(k))
                || bases.seen(i, j, k)
                || since.is_some_and(|s| s.skips(&[i, j, k], &trio))
            {
                continue;
            }
            if let Some(step) = bases.try_set(c, &[i, j, k], &trio, &mut common)
                && !sink(step)
            {
                return false;
            }
        }
        true
    })?;
    Ok(())
}

/// The most sets a search with a memory lists (about 100 KB); past that,
/// as after a large grid's cascade of placements, it walks them all.
const LISTED: usize = 1 << 12;

/// `out = a & b`; true when it has 2 or more bits.
fn and_two(out: &mut [u64], a: &[u64], b: &[u64]) -> bool {
    // Up to 128 cells (9x9 and below), two words, without a loop.
    if let ([o0, o1], [a0, a1], [b0, b1]) = (&mut *out, a, b) {
        let (x, y) = (a0 & b0, a1 & b1);
        (*o0, *o1) = (x, y);
        return (x != 0 && y != 0) || x & x.wrapping_sub(1) != 0 || y & y.wrapping_sub(1) != 0;
    }
    let mut any = false;
    let mut two = false;
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x & y;
        if *o != 0 {
            two |= any || *o & (*o - 1) != 0;
            any = true;
        }
    }
    two
}

/// The base cells and their excluding peers.
struct Bases {
    /// Base cells, row by row.
    cells: Vec<usize>,
    /// Each base cell's excluding peers that are base cells too (indices),
    /// in SE's order, one after another; for triples only.
    thirds: Vec<u32>,
    /// Where each base cell's `thirds` start, and the end.
    thirds_at: Vec<usize>,
    /// Each base cell's excluding peers as a bit set of `words` words.
    bits: Vec<u64>,
    words: usize,
}

impl Bases {
    fn new(c: &Candidates, degree: usize) -> Bases {
        let l = c.layout();
        let cells = l.n() * l.n();
        let words = cells.div_ceil(64);
        let count: Vec<u32> = (0..cells).map(|x| c.mask(x).count_ones()).collect();
        let excluding = |x: usize| count[x] >= 2 && count[x] as usize <= degree;
        let mut index = vec![NONE; cells];
        let mut bases = Bases {
            cells: Vec::new(),
            thirds: Vec::new(),
            thirds_at: vec![0],
            bits: Vec::new(),
            words,
        };
        for cell in 0..cells {
            if count[cell] < 2 {
                continue;
            }
            let peers = l.box_first_peers(cell);
            if peers.iter().any(|&p| count[p as usize] == 1)
                || !peers.iter().any(|&p| excluding(p as usize))
            {
                continue;
            }
            index[cell] = bases.cells.len() as u32;
            bases.cells.push(cell);
            let start = bases.bits.len();
            bases.bits.resize(start + words, 0);
            for &p in peers.iter() {
                let p = p as usize;
                if excluding(p) {
                    bases.bits[start + p / 64] |= 1 << (p % 64);
                }
            }
        }
        if degree == 3 {
            for &cell in &bases.cells {
                let peers = l.box_first_peers(cell);
                let thirds = peers
                    .iter()
                    .map(|&p| p as usize)
                    .filter(|&p| excluding(p) && index[p] != NONE)
                    .map(|p| index[p]);
                bases.thirds.extend(thirds);
                bases.thirds_at.push(bases.thirds.len());
            }
        }
        bases
    }

    /// Whether some set of three base cells that share two excluding
    /// cells or more removes anything: each such set once, in no
    /// particular order. SE's sets are among them, so when none does, its
    /// ordered search (which tries many sets several times over) need not
    /// run; it almost never finds one.
    fn any_triple(
        &self,
        c: &Candidates,
        since: Option<&Since>,
        go_on: &mut GoOn<'_>,
    ) -> Result<bool, Stopped> {
        let nb = self.cells.len();
        let mut common = Vec::new();
        let listed = match since {
            Some(s) => self.unknown_sets(s, 3, go_on)?,
            None => None,
        };
        if let Some(list) = listed {
            let (mut pair, mut trio) = (vec![0u64; self.words], vec![0u64; self.words]);
            for [i, j, k] in list {
                if !go_on() {
                    return Err(Stopped);
                }
                and_two(&mut pair, self.set(i), self.set(j));
                and_two(&mut trio, &pair, self.set(k));
                if self.try_set(c, &[i, j, k], &trio, &mut common).is_some() {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        let (words, bwords) = (self.words, nb.div_ceil(64));
        // Each cell's base cells that have it as an excluding peer.
        let mut seers = vec![0u64; c.side() * c.side() * bwords];
        for i in 0..nb {
            for (w, &word) in self.set(i).iter().enumerate() {
                for b in bits_of(word) {
                    seers[(w * 64 + b) * bwords + i / 64] |= 1 << (i % 64);
                }
            }
        }
        let mut trio = vec![0u64; words];
        let (mut once, mut twice) = (vec![0u64; bwords], vec![0u64; bwords]);
        let none = self.pairs(go_on, |i, j, pair| {
            // The third cells: base cells after j that see two of the
            // pair's shared excluding cells or more.
            once.fill(0);
            twice.fill(0);
            for (w, &word) in pair.iter().enumerate() {
                for b in bits_of(word) {
                    let s = &seers[(w * 64 + b) * bwords..][..bwords];
                    for ((t, o), &x) in twice.iter_mut().zip(once.iter_mut()).zip(s) {
                        *t |= *o & x;
                        *o |= x;
                    }
                }
            }
            for (w, &word) in twice.iter().enumerate() {
                for b in bits_of(word) {
                    let k = w * 64 + b;
                    if k <= j {
                        continue;
                    }
                    for ((t, &a), &b) in trio.iter_mut().zip(pair).zip(self.set(k)) {
                        *t = a & b;
                    }
                    if since.is_some_and(|s| s.skips(&[i, j, k], &trio)) {
                        continue;
                    }
                    if self.try_set(c, &[i, j, k], &trio, &mut common).is_some() {
                        return false;
                    }
                }
            }
            true
        })?;
        Ok(!none)
    }

    /// The sets of `degree` base cells sharing two excluding cells or more
    /// that `since` does not know to remove nothing (each as indices in
    /// order, a third 0 for pairs): those with a base cell that changed or
    /// was not one then, and those whose shared excluding cells include a
    /// changed cell (all their cells have it as an excluding peer). None
    /// when so many changed that listing them is not worth it, or when
    /// the list would pass [`LISTED`] sets (then the caller walks them
    /// all, as without a memory). Asks `go_on` once a changed cell.
    fn unknown_sets(
        &self,
        since: &Since,
        degree: usize,
        go_on: &mut GoOn<'_>,
    ) -> Result<Option<Vec<[usize; 3]>>, Stopped> {
        let nb = self.cells.len();
        let fresh: Vec<usize> = (0..nb).filter(|&i| !since.kept[i]).collect();
        if fresh.len() * 8 > nb {
            return Ok(None);
        }
        let mut out = Vec::new();
        let (mut pair, mut trio) = (vec![0u64; self.words], vec![0u64; self.words]);
        let add = |out: &mut Vec<[usize; 3]>, mut set: [usize; 3]| {
            set[..degree].sort_unstable();
            out.push(set);
        };
        for &i in &fresh {
            if !go_on() {
                return Err(Stopped);
            }
            for a in (0..nb).filter(|&a| a != i) {
                if !and_two(&mut pair, self.set(i), self.set(a)) {
                    continue;
                }
                if out.len() > LISTED {
                    return Ok(None);
                }
                if degree == 2 {
                    add(&mut out, [i, a, 0]);
                    continue;
                }
                for b in (a + 1..nb).filter(|&b| b != i) {
                    if and_two(&mut trio, &pair, self.set(b)) {
                        add(&mut out, [i, a, b]);
                    }
                }
            }
        }
        let mut seers = Vec::new();
        for (w, &word) in since.changed.iter().enumerate() {
            for bit in bits_of(word) {
                let y = w * 64 + bit;
                if !go_on() {
                    return Err(Stopped);
                }
                seers.clear();
                seers.extend((0..nb).filter(|&i| self.has(i, y)));
                for (p, &a) in seers.iter().enumerate() {
                    for (q, &b) in seers.iter().enumerate().skip(p + 1) {
                        if out.len() > LISTED {
                            return Ok(None);
                        }
                        if !and_two(&mut pair, self.set(a), self.set(b)) {
                            continue;
                        }
                        if degree == 2 {
                            add(&mut out, [a, b, 0]);
                            continue;
                        }
                        for &d in &seers[q + 1..] {
                            if and_two(&mut trio, &pair, self.set(d)) {
                                add(&mut out, [a, b, d]);
                            }
                        }
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(Some(out))
    }

    /// Calls `f(i, j, shared)` on each pair of base cells `i < j` that
    /// share two excluding cells or more (`shared`), in SE's order (the
    /// second cell outer), until `f` answers false; true when it never
    /// did.
    fn pairs(
        &self,
        go_on: &mut GoOn<'_>,
        mut f: impl FnMut(usize, usize, &[u64]) -> bool,
    ) -> Result<bool, Stopped> {
        let mut pair = vec![0u64; self.words];
        for j in 1..self.cells.len() {
            // Asked once a second cell: its pairs are a few microseconds
            // of work at 9x9.
            if !go_on() {
                return Err(Stopped);
            }
            for i in 0..j {
                if and_two(&mut pair, self.set(i), self.set(j)) && !f(i, j, &pair) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Base cell `i`'s excluding peers that are base cells too.
    fn thirds(&self, i: usize) -> &[u32] {
        &self.thirds[self.thirds_at[i]..self.thirds_at[i + 1]]
    }

    fn set(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }

    /// True when `cell` is an excluding peer of base cell `i`.
    fn has(&self, i: usize, cell: usize) -> bool {
        self.set(i)[cell / 64] & 1 << (cell % 64) != 0
    }

    /// True when the triple of base cells `i < j` and `k` (one of their
    /// excluding peers) has been tried already, as an earlier pair with
    /// the third cell among its excluding peers. SE tries it again, but a
    /// set gives the same eliminations whatever the order of its cells.
    fn seen(&self, i: usize, j: usize, k: usize) -> bool {
        let (ci, cj) = (self.cells[i], self.cells[j]);
        if k > j {
            false
        } else if k > i {
            self.has(i, cj) || self.has(k, cj)
        } else {
            self.has(k, cj) || self.has(i, cj) || self.has(k, ci) || self.has(j, ci)
        }
    }

    /// The step of the base cells `set` (indices) whose shared excluding
    /// cells are `shared`, if it removes anything.
    fn try_set(
        &self,
        c: &Candidates,
        set: &[usize],
        shared: &[u64],
        common: &mut Vec<(usize, u64)>,
    ) -> Option<Step> {
        common.clear();
        for (w, &word) in shared.iter().enumerate() {
            for b in bits_of(word) {
                let x = w * 64 + b;
                common.push((x, c.mask(x)));
            }
        }
        let mut cells = [0; 3];
        for (k, &i) in set.iter().enumerate() {
            cells[k] = self.cells[i];
        }
        let group = Group::new(c, &cells[..set.len()], common);
        let removable = group.removable()?;
        Some(group.step(c.layout(), removable))
    }
}

/// Why a combination of digits in the base cells can't be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lock {
    /// Two cells that share a unit would hold the same digit.
    Twice,
    /// This excluding cell (with these candidates) would have no
    /// candidate left.
    Empties(usize, u64),
}

/// A set of base cells with the excluding cells they share.
struct Group<'a> {
    cells: &'a [usize],
    masks: [u64; 3],
    sees: [[bool; 3]; 3],
    common: &'a [(usize, u64)],
}

impl<'a> Group<'a> {
    fn new(c: &Candidates, cells: &'a [usize], common: &'a [(usize, u64)]) -> Group<'a> {
        let l = c.layout();
        let mut masks = [0; 3];
        let mut sees = [[false; 3]; 3];
        for (i, &a) in cells.iter().enumerate() {
            masks[i] = c.mask(a);
            for (j, &b) in cells.iter().enumerate().skip(i + 1) {
                sees[i][j] = l.sees(a, b);
                sees[j][i] = sees[i][j];
            }
        }
        Group {
            cells,
            masks,
            sees,
            common,
        }
    }

    /// Calls `f` on every combination of the cells' candidates (a digit
    /// per cell) until it says stop.
    fn each(&self, f: &mut impl FnMut(&[u8]) -> bool) {
        let k = self.cells.len();
        for a in digits_of(self.masks[0]) {
            for b in digits_of(self.masks[1]) {
                if k == 2 {
                    if !f(&[a, b]) {
                        return;
                    }
                    continue;
                }
                for d in digits_of(self.masks[2]) {
                    if !f(&[a, b, d]) {
                        return;
                    }
                }
            }
        }
    }

    /// Why `pick` (a digit per cell) can't be, if it can't.
    fn lock(&self, pick: &[u8]) -> Option<Lock> {
        let mut union = 0;
        for (i, &a) in pick.iter().enumerate() {
            for (j, &b) in pick.iter().enumerate().skip(i + 1) {
                if a == b && self.sees[i][j] {
                    return Some(Lock::Twice);
                }
            }
            union |= bit(a);
        }
        self.common
            .iter()
            .find(|&&(_, m)| m & !union == 0)
            .map(|&(x, m)| Lock::Empties(x, m))
    }

    /// Each cell's candidates that no possible combination uses, if any.
    /// The cell with the most candidates is handled as a set: given the
    /// others' digits, it can't take theirs where they see it, nor the
    /// last candidate an excluding cell would keep.
    fn removable(&self) -> Option<[u64; 3]> {
        let k = self.cells.len();
        // Positions by candidate count, the largest last.
        let mut p = [0usize, 1, 2];
        p[..k].sort_by_key(|&i| self.masks[i].count_ones());
        let last = p[k - 1];
        let mut allowed = [0u64; 3];
        let try_heads = |allowed: &mut [u64; 3], heads: &[(usize, u8)]| {
            let mut union = 0;
            let mut forbidden = 0;
            for &(i, d) in heads {
                union |= bit(d);
                if self.sees[i][last] {
                    forbidden |= bit(d);
                }
            }
            for &(_, m) in self.common {
                let rest = m & !union;
                if rest == 0 {
                    return;
                }
                if rest & (rest - 1) == 0 {
                    forbidden |= rest;
                }
            }
            let free = self.masks[last] & !forbidden;
            if free != 0 {
                allowed[last] |= free;
                for &(i, d) in heads {
                    allowed[i] |= bit(d);
                }
            }
        };
        let (h0, h1) = (p[0], p[1]);
        for a in digits_of(self.masks[h0]) {
            if k == 2 {
                try_heads(&mut allowed, &[(h0, a)]);
            } else {
                for b in digits_of(self.masks[h1]) {
                    if a != b || !self.sees[h0][h1] {
                        try_heads(&mut allowed, &[(h0, a), (h1, b)]);
                    }
                }
            }
            if (0..k).all(|i| allowed[i] == self.masks[i]) {
                return None;
            }
        }
        let mut out = [0; 3];
        for i in 0..k {
            out[i] = self.masks[i] & !allowed[i];
        }
        Some(out)
    }

    fn step(&self, l: &Layout, removable: [u64; 3]) -> Step {
        let n = l.n();
        let k = self.cells.len();
        let mut step = if k == 2 {
            Step::new(Technique::AlignedPairExclusion, 62)
        } else {
            Step::new(Technique::AlignedTripleExclusion, 75)
        };
        step.cells.extend(self.cells.iter().map(|&x| x as u16));
        for (&x, &m) in self.cells.iter().zip(&removable) {
            for d in digits_of(m) {
                step.eliminations.push((x as u16, d));
            }
        }
        let name = if k == 2 { "pair" } else { "triple" };
        let mut text = format!("aligned {name} exclusion on {}: ", Cells(self.cells, n));
        // The combinations that would keep a removed candidate, and why
        // each can't be.
        let mut first = true;
        self.each(&mut |pick| {
            if !pick
                .iter()
                .enumerate()
                .any(|(i, &d)| removable[i] & bit(d) != 0)
            {
                return true;
            }
            if !first {
                text.push_str(", ");
            }
            first = false;
            for (i, d) in pick.iter().enumerate() {
                if i > 0 {
                    text.push('-');
                }
                text.push_str(&d.to_string());
            }
            match self.lock(pick) {
                Some(Lock::Twice) => text.push_str(" repeats a digit in a unit"),
                Some(Lock::Empties(x, m)) => {
                    text.push_str(&format!(" empties {} {}", Rc(x, n), Digits(m)));
                    if !step.cells.contains(&(x as u16)) {
                        step.cells.push(x as u16);
                    }
                }
                None => unreachable!("a removed candidate has no possible combination"),
            }
            true
        });
        text.push_str("; so ");
        let mut first = true;
        for (&x, &m) in self.cells.iter().zip(&removable) {
            if m == 0 {
                continue;
            }
            if !first {
                text.push_str(", ");
            }
            first = false;
            text.push_str(&format!("{} loses {}", Rc(x, n), Digits(m)));
        }
        step.explanation = text;
        step
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::generate::Rng;
    use crate::generate::sized::solution_grid;
    use crate::puzzle::sized::{Shape, SizedGrid};
    use crate::solver::sized::SizedSolver;

    /// A 9x9 state written as 81 tokens: `=d` a placed digit, else the
    /// cell's candidates.
    fn state(text: &str) -> Candidates {
        let toks: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(toks.len(), 81);
        let mut values = [0u8; 81];
        for (i, t) in toks.iter().enumerate() {
            if let Some(v) = t.strip_prefix('=') {
                values[i] = v.parse().expect("a digit");
            }
        }
        let mut c = Candidates::from_grid(&crate::puzzle::Grid(values));
        for (i, t) in toks.iter().enumerate() {
            if values[i] == 0 {
                for d in 1..=9u8 {
                    if !t.contains(char::from(b'0' + d)) {
                        c.eliminate(i, d);
                    }
                }
                assert_eq!(digits_of(c.mask(i)).count(), t.len(), "token {i}");
            }
        }
        c
    }

    fn first(c: &Candidates, degree: usize) -> Option<Step> {
        let mut found = None;
        aligned(
            c,
            degree,
            &mut |s| {
                found = Some(s);
                false
            },
            &mut || true,
            None,
        )
        .expect("not stopped");
        found
    }

    fn cell(r: usize, col: usize) -> u16 {
        ((r - 1) * 9 + col - 1) as u16
    }

    // States met on the way through reference puzzles; the first hints
    // are those SE 1.2.1's AlignedPairExclusion and AlignedExclusion(3)
    // give on them.
    const PAIR: &str = "=7 23 23 =4 =6 =1 =9 =5 =8 =9 =4 =6 =7 =8 =5 =2 =1 =3 \
        =8 135 135 39 39 =2 =4 =6 =7 =3 =6 29 19 179 =4 =8 27 =5 \
        =1 57 457 =8 =2 =6 =3 47 =9 45 289 289 59 579 =3 =6 247 =1 \
        =2 1379 1379 =6 1379 79 =5 =8 =4 =6 1359 1359 1359 =4 =8 =7 39 =2 \
        45 35789 345789 =2 3579 79 =1 39 =6";
    const TRIPLE: &str = "=6 23 =5 =1 479 49 29 23479 =8 29 =1 349 579 =8 4569 2569 2345679 235679 \
        =7 =8 49 =2 =3 4569 1569 14569 1569 =3 =7 =6 =8 49 459 1259 1259 1259 \
        =4 59 =1 359 =2 =7 =8 3569 3569 =8 59 =2 359 =6 =1 =7 359 =4 \
        129 23 379 =6 =5 239 =4 =8 1279 1259 =6 79 =4 179 =8 =3 12579 12579 \
        1259 =4 =8 379 179 239 12569 125679 125679";

    #[test]
    fn pair_exclusion_finds_ses_first_hint() {
        let c = state(PAIR);
        let s = first(&c, 2).expect("an aligned pair exclusion");
        assert_eq!(s.technique, Technique::AlignedPairExclusion);
        assert_eq!(s.value, 62);
        assert_eq!(&s.cells[..2], &[cell(1, 2), cell(3, 2)]);
        // r3c2=3 repeats r1c2's 3 in column 2, or with r1c2=2 empties
        // r1c3 {2,3}.
        assert_eq!(s.eliminations, vec![(cell(3, 2), 3)]);
        assert!(s.explanation.contains("r1c3"), "{}", s.explanation);
        assert!(
            s.explanation.contains("r3c2 loses {3}"),
            "{}",
            s.explanation
        );
    }

    #[test]
    fn triple_exclusion_finds_ses_first_hint() {
        let c = state(TRIPLE);
        assert!(first(&c, 2).is_none());
        let s = first(&c, 3).expect("an aligned triple exclusion");
        assert_eq!(s.technique, Technique::AlignedTripleExclusion);
        assert_eq!(s.value, 75);
        assert_eq!(&s.cells[..3], &[cell(7, 1), cell(7, 2), cell(7, 3)]);
        assert_eq!(s.eliminations, vec![(cell(7, 1), 9)]);
        // The pair's state has a triple too: SE's scan meets r1c2, r4c3
        // and r3c2 first.
        let s = first(&state(PAIR), 3).expect("an aligned triple exclusion");
        assert_eq!(&s.cells[..3], &[cell(1, 2), cell(4, 3), cell(3, 2)]);
        assert_eq!(s.eliminations, vec![(cell(3, 2), 3)]);
    }

    /// A random solution of `shape` with about 60% of its cells open, as
    /// candidates, and the solution.
    pub(in crate::logic::se) fn open_state(shape: Shape, rng: &mut Rng) -> (Candidates, Vec<u8>) {
        let mut solver = SizedSolver::new(&SizedGrid::empty(shape), 1);
        let solution = solution_grid(&mut solver, shape, rng);
        let sol = solution.values().to_vec();
        let values: Vec<u8> = sol
            .iter()
            .map(|&v| if rng.below(10) < 6 { 0 } else { v })
            .collect();
        let puzzle = SizedGrid::from_values(shape, values).expect("a grid");
        (Candidates::new(&puzzle), sol)
    }

    /// Removes a wrong candidate of a random cell with 3 or more, if it
    /// has one: the state keeps its solution.
    pub(in crate::logic::se) fn thin(c: &mut Candidates, sol: &[u8], rng: &mut Rng) {
        let n = c.side();
        let x = rng.below((n * n) as u32) as usize;
        let wrong = c.mask(x) & !bit(sol[x]);
        if c.mask(x).count_ones() > 2 && wrong != 0 {
            let d = digits_of(wrong).nth(rng.below(wrong.count_ones()) as usize);
            c.eliminate(x, d.expect("a digit"));
        }
    }

    /// The quick test for triples says yes whenever SE's ordered search
    /// has a hint (it tries a superset of SE's sets), and says no on most
    /// states: checked on thinned states at several sizes.
    #[test]
    fn the_quick_triple_test_misses_no_hint() {
        let (mut hints, mut skipped) = (0, 0);
        for (rows, cols) in [(2, 3), (3, 3), (3, 4)] {
            let shape = Shape::new(rows, cols).expect("a shape");
            let n = shape.side();
            for seed in 0..40u64 {
                let mut rng = Rng::new(seed * 13 + n as u64);
                let (mut c, sol) = open_state(shape, &mut rng);
                for round in 0..n * n * 3 {
                    thin(&mut c, &sol, &mut rng);
                    if round % n != 0 {
                        continue;
                    }
                    let bases = Bases::new(&c, 3);
                    if bases.cells.len() < 3 {
                        continue;
                    }
                    let mut any = false;
                    ordered(
                        &c,
                        &bases,
                        3,
                        None,
                        &mut |_| {
                            any = true;
                            false
                        },
                        &mut || true,
                    )
                    .expect("not stopped");
                    let quick = bases
                        .any_triple(&c, None, &mut || true)
                        .expect("not stopped");
                    assert!(quick || !any, "a hint the quick test missed");
                    hints += usize::from(any);
                    skipped += usize::from(!quick);
                }
            }
        }
        assert!(
            hints > 20 && skipped > 100,
            "{hints} with hints, {skipped} skipped"
        );
    }

    /// A walk's memory changes no answer: on states thinned step by step,
    /// at several sizes, each search with the memory of the last finds
    /// the first hint a search without it finds; and it skips sets.
    #[test]
    fn recalled_searches_find_what_fresh_searches_find() {
        let (mut hints, mut recalled) = ([0; 2], 0);
        for (rows, cols) in [(2, 3), (3, 3), (3, 4)] {
            let shape = Shape::new(rows, cols).expect("a shape");
            let n = shape.side();
            for seed in 0..30u64 {
                let mut rng = Rng::new(seed * 11 + n as u64);
                let (mut c, sol) = open_state(shape, &mut rng);
                let mut memory = [None, None];
                for round in 0..n * n * 3 {
                    thin(&mut c, &sol, &mut rng);
                    if round % 3 != 0 {
                        continue;
                    }
                    for degree in [2, 3] {
                        let memory = &mut memory[degree - 2];
                        recalled += usize::from(memory.is_some());
                        let mut with = None;
                        aligned(
                            &c,
                            degree,
                            &mut |s| {
                                with = Some(s);
                                false
                            },
                            &mut || true,
                            Some(memory),
                        )
                        .expect("not stopped");
                        let fresh = first(&c, degree);
                        let key = |s: &Option<Step>| {
                            s.as_ref()
                                .map(|s| (s.cells.clone(), s.eliminations.clone()))
                        };
                        assert_eq!(
                            key(&with),
                            key(&fresh),
                            "{shape:?} seed {seed} round {round}"
                        );
                        hints[degree - 2] += usize::from(fresh.is_some());
                        // A hint applied, as a walk does.
                        if let Some(s) = fresh {
                            c.apply(&s);
                        }
                    }
                }
            }
        }
        assert!(
            hints[0] > 20 && hints[1] > 5 && recalled > 1000,
            "{hints:?} hints, {recalled} searches with a memory"
        );
    }

    #[test]
    fn stops_when_asked() {
        let c = state(TRIPLE);
        for degree in [2, 3] {
            let r = aligned(&c, degree, &mut |_| true, &mut || false, None);
            assert!(matches!(r, Err(Stopped)));
        }
    }

    /// On states that keep their solution, at several sizes, nothing
    /// removed is a solution digit, and the search finds something.
    #[test]
    fn sound_at_any_size() {
        let mut found = [0; 2];
        for (rows, cols) in [(2, 3), (3, 3), (3, 4), (4, 4)] {
            let shape = Shape::new(rows, cols).expect("a shape");
            let n = shape.side();
            for seed in 0..6u64 {
                let mut rng = Rng::new(seed * 7 + n as u64);
                let (mut c, sol) = open_state(shape, &mut rng);
                // Thin the candidates till many cells have 2 or 3 left.
                for _ in 0..n * n * 2 {
                    thin(&mut c, &sol, &mut rng);
                }
                for degree in [2, 3] {
                    aligned(
                        &c,
                        degree,
                        &mut |s| {
                            found[degree - 2] += 1;
                            for &(x, d) in &s.eliminations {
                                assert_ne!(sol[x as usize], d, "{}", s.explanation);
                            }
                            true
                        },
                        &mut || true,
                        None,
                    )
                    .expect("not stopped");
                }
            }
        }
        assert!(found[0] > 0 && found[1] > 0, "{found:?}");
    }
}
