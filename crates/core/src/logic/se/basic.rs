//! SE's first producers: hidden and naked singles, the direct techniques
//! (an intersection or hidden set that leaves a hidden single, which they
//! place), pointing and claiming, naked and hidden sets, fish, XY- and
//! XYZ-wings. Each scans in SE's order (its units boxes, columns, rows
//! unless it says otherwise) and reports every hint it finds to the sink
//! until the sink says stop.
//!
//! What each step holds, for the chains that reuse these producers:
//! `units` lists the units the step reasons about (intersections: the
//! unit the digit is confined to, then the unit it is removed from; sets:
//! the unit; fish: the base lines, then the cover lines); `cells` the
//! cells of the pattern.

use super::Sink;
use crate::logic::candidates::{Layout, bit, bits_of, digits_of, two_bits};
use crate::logic::notation::{Cells, Digits, Lines, Rc};
use crate::logic::{Candidates, Step, Technique, UnitRef};

/// The units of one kind: 0 rows, 1 columns, 2 boxes.
fn units(n: usize, kind: usize) -> std::ops::Range<usize> {
    kind * n..(kind + 1) * n
}

/// What a walk knows of its set searches (naked and hidden sets, direct
/// or not) between steps: by unit, the searches that found nothing in it,
/// and the cells they saw. Such a search reads only its unit's cells
/// (their candidates and whether they are open), so while those stay the
/// same it finds nothing again: it is skipped.
#[derive(Default)]
pub(crate) struct UnitMemory {
    masks: Vec<u64>,
    values: Vec<u8>,
    /// Per unit, a bit per search that found nothing there
    /// ([`UnitMemory::search`]).
    clean: Vec<u16>,
}

impl UnitMemory {
    /// Forgets the searches of the units whose cells changed since the
    /// last search (all of them on another grid).
    fn update(&mut self, c: &Candidates) {
        let l = c.layout();
        if self.masks.len() != c.masks().len() || self.clean.len() != l.unit_count() {
            self.masks = c.masks().to_vec();
            self.values = c.values().to_vec();
            self.clean = vec![0; l.unit_count()];
            return;
        }
        let now = c.masks().iter().zip(c.values());
        let then = self.masks.iter_mut().zip(self.values.iter_mut());
        for (x, ((&mask, &value), (old_mask, old_value))) in now.zip(then).enumerate() {
            if mask != *old_mask || value != *old_value {
                (*old_mask, *old_value) = (mask, value);
                for u in l.units_of(x) {
                    self.clean[u as usize] = 0;
                }
            }
        }
    }

    /// The bit of a set search: naked or hidden (direct or not), of `k`
    /// cells or digits.
    fn search(hidden: bool, direct: bool, k: usize) -> u16 {
        1 << (k - 2 + 3 * usize::from(hidden) + 3 * usize::from(direct))
    }
}

/// SE's usual unit order: boxes, columns, rows.
fn se_units(n: usize) -> impl Iterator<Item = usize> {
    units(n, 2).chain(units(n, 1)).chain(units(n, 0))
}

/// The open cells of unit `u`.
fn empty_count(c: &Candidates, l: &Layout, u: usize) -> usize {
    l.unit(u)
        .iter()
        .filter(|&&x| c.value(x as usize) == 0)
        .count()
}

fn write(step: &mut Step, args: std::fmt::Arguments<'_>) {
    use std::fmt::Write;
    let _ = step.explanation.write_fmt(args);
}

/// Full houses (1.0: the last open cell of a unit), then hidden singles
/// (1.2 in a box, 1.5 in a line).
pub(crate) fn hidden_single(c: &Candidates, sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    for alone_only in [true, false] {
        for u in se_units(n) {
            let cells = l.unit(u);
            // The digits with one place in the unit: seen once, not twice.
            let (mut open, mut once, mut twice) = (0, 0u64, 0u64);
            for &x in cells {
                let m = c.mask(x as usize);
                open += usize::from(c.value(x as usize) == 0);
                twice |= once & m;
                once |= m;
            }
            let alone = open == 1;
            if alone != alone_only {
                continue;
            }
            for d in digits_of(once & !twice) {
                let Some(&cell) = cells.iter().find(|&&x| c.mask(x as usize) & bit(d) != 0) else {
                    continue;
                };
                let cell = cell as usize;
                let unit = UnitRef::of(u, n);
                let mut step = if alone {
                    Step::new(Technique::FullHouse, 10)
                } else if u >= 2 * n {
                    Step::new(Technique::HiddenSingle, 12)
                } else {
                    Step::new(Technique::HiddenSingle, 15)
                };
                step.placements.push((cell as u16, d));
                step.units.push(unit);
                if alone {
                    step.cells.push(cell as u16);
                } else {
                    blockers(c, l, u, cell, d, &mut step.cells);
                }
                if alone {
                    write(
                        &mut step,
                        format_args!(
                            "{} is the last empty cell in {unit}: it takes {d}",
                            Rc(cell, n)
                        ),
                    );
                } else {
                    write(
                        &mut step,
                        format_args!(
                            "{} is the only cell in {unit} that can hold {d}",
                            Rc(cell, n)
                        ),
                    );
                }
                if !sink(step) {
                    return;
                }
            }
        }
    }
}

/// The placed `d`s that keep it out of unit `u`'s open cells other than
/// `cell`: the cells that justify a hidden single, ascending.
fn blockers(c: &Candidates, l: &Layout, u: usize, cell: usize, d: u8, out: &mut Vec<u16>) {
    for &y in l.unit(u) {
        let y = y as usize;
        if y == cell || c.value(y) != 0 {
            continue;
        }
        if let Some(p) = l.peers(y).find(|&p| c.value(p) == d) {
            out.push(p as u16);
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// Cells with one candidate, row by row (2.3).
pub(crate) fn naked_single(c: &Candidates, sink: &mut Sink<'_>) {
    let n = c.side();
    for cell in 0..n * n {
        let m = c.mask(cell);
        if m.count_ones() == 1 {
            let d = m.trailing_zeros() as u8 + 1;
            let mut step = Step::new(Technique::NakedSingle, 23);
            step.placements.push((cell as u16, d));
            step.cells.push(cell as u16);
            write(
                &mut step,
                format_args!("{} has one candidate left: {d}", Rc(cell, n)),
            );
            if !sink(step) {
                return;
            }
        }
    }
}

/// Pointing (a box's places of a digit on one line) and claiming (a
/// line's places in one box): the other unit loses the digit. In direct
/// mode only those that leave a hidden single in a unit parallel to the
/// first, which they place (direct pointing 1.7, direct claiming 1.9;
/// else 2.6 and 2.8).
pub(crate) fn locking(c: &Candidates, direct: bool, sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    let at = c.places();
    let places = |u: usize, d: u8| at[u * n + d as usize - 1];
    // The (second unit, digit) of each of a unit's intersections, in SE's
    // order: by the second unit, then the digit.
    let mut found: Vec<(usize, u8)> = Vec::new();
    for (k1, k2) in [(2, 1), (2, 0), (1, 2), (0, 2)] {
        let meet = l.meet(k1, k2);
        for (i, u1) in units(n, k1).enumerate() {
            // The places of each digit in u1 that all lie in one unit of
            // the second kind: there is at most one such unit.
            found.clear();
            let cells = l.unit(u1);
            for d in 1..=n as u8 {
                let p = places(u1, d);
                if p.count_ones() <= 1 {
                    continue;
                }
                let first = cells[p.trailing_zeros() as usize] as usize;
                let j = l.units_of(first)[k2] as usize - k2 * n;
                if p & !meet[i * n + j] == 0 {
                    found.push((j, d));
                }
            }
            found.sort_unstable();
            for &(j, d) in &found {
                let u2 = k2 * n + j;
                if direct {
                    for (i3, u3) in units(n, k1).enumerate() {
                        let inside3 = meet[i3 * n + j];
                        if u3 == u1 || inside3 == 0 {
                            continue;
                        }
                        let p3 = places(u3, d);
                        // The places of d in u3 outside u2: one left is
                        // a hidden single.
                        let left = p3 & !inside3;
                        if p3.count_ones() <= 1 || left.count_ones() != 1 {
                            continue;
                        }
                        let single = l.unit(u3)[left.trailing_zeros() as usize];
                        if let Some(step) = lock_step(c, l, u1, u2, d, Some(single))
                            && !sink(step)
                        {
                            return;
                        }
                    }
                } else if let Some(step) = lock_step(c, l, u1, u2, d, None)
                    && !sink(step)
                {
                    return;
                }
            }
        }
    }
}

fn lock_step(
    c: &Candidates,
    l: &Layout,
    u1: usize,
    u2: usize,
    d: u8,
    single: Option<u16>,
) -> Option<Step> {
    let n = l.n();
    let b = 1u64 << (d - 1);
    let pointing = u1 >= 2 * n;
    let technique = match (pointing, single.is_some()) {
        (true, false) => (Technique::Pointing, 26),
        (false, false) => (Technique::Claiming, 28),
        (true, true) => (Technique::DirectPointing, 17),
        (false, true) => (Technique::DirectClaiming, 19),
    };
    // Most locked digits were dealt with by an earlier step: no Step is
    // made for those.
    // (Its places in u2 outside u1, from the places table.)
    let inside = l.meet(u2 / n, u1 / n)[(u2 % n) * n + u1 % n];
    let removes = c.places()[u2 * n + d as usize - 1] & !inside != 0;
    if !removes {
        return None;
    }
    let mut step = Step::new(technique.0, technique.1);
    for &x in l.unit(u2) {
        let in1 = l.units_of(x as usize).contains(&(u1 as u16));
        if c.mask(x as usize) & b == 0 {
            continue;
        }
        if in1 {
            step.cells.push(x);
        } else {
            step.eliminations.push((x, d));
        }
    }
    if step.eliminations.is_empty() {
        return None;
    }
    step.units.push(UnitRef::of(u1, n));
    step.units.push(UnitRef::of(u2, n));
    let cells: Vec<usize> = step.cells.iter().map(|&x| x as usize).collect();
    write(
        &mut step,
        format_args!(
            "in {}, {d} can only go in {}, all in {}: the rest of {} loses {d}",
            UnitRef::of(u1, n),
            Cells(&cells, n),
            UnitRef::of(u2, n),
            UnitRef::of(u2, n)
        ),
    );
    if let Some(x) = single {
        // A direct step only places its single: SE leaves the candidates
        // it reasoned away for the steps after to remove.
        step.eliminations.clear();
        step.placements.push((x, d));
        write(
            &mut step,
            format_args!(
                ", which leaves {} as the only place for {d}",
                Rc(x as usize, n)
            ),
        );
    }
    Some(step)
}

/// SE's tuples: calls `f(set, union)` on every `k` of `items` (masks)
/// whose union has exactly `k` bits, each of them with at least 2 (SE's
/// common tuples take no member with fewer), `set` their indices as bits.
/// The order is SE's, lexicographic in the indices; a branch whose union
/// already has more than `k` bits is cut, so large units stay cheap. `f`
/// returns false to stop; so does this.
fn tuples(items: &[u64], k: usize, f: &mut dyn FnMut(u64, u64) -> bool) -> bool {
    fn go(
        items: &[u64],
        k: usize,
        start: usize,
        set: u64,
        union: u64,
        f: &mut dyn FnMut(u64, u64) -> bool,
    ) -> bool {
        if set.count_ones() as usize == k {
            return union.count_ones() as usize != k || f(set, union);
        }
        for (i, &m) in items.iter().enumerate().skip(start) {
            let u = union | m;
            if m.count_ones() < 2 || u.count_ones() as usize > k {
                continue;
            }
            if !go(items, k, i + 1, set | 1 << i, u, f) {
                return false;
            }
        }
        true
    }
    go(items, k, 0, 0, 0, f)
}

pub(crate) const SET_NAMES: [&str; 3] = ["pair", "triple", "quad"];

/// Naked sets of `k` cells in a unit (pair 3.0, triple 3.6, quad 5.0):
/// each cell has 2 or more candidates, k between them; the unit's other
/// cells lose them. SE looks only in units with at least 2k open cells.
///
/// With `memory` (a walk's), the units where this search found nothing
/// and whose cells are the same are skipped.
pub(crate) fn naked_set(
    c: &Candidates,
    k: usize,
    sink: &mut Sink<'_>,
    mut memory: Option<&mut UnitMemory>,
) {
    let l = c.layout();
    let n = l.n();
    let (technique, value) = match k {
        2 => (Technique::NakedPair, 30),
        3 => (Technique::NakedTriple, 36),
        _ => (Technique::NakedQuad, 50),
    };
    let search = UnitMemory::search(false, false, k);
    if let Some(m) = memory.as_deref_mut() {
        m.update(c);
    }
    for u in se_units(n) {
        if memory.as_ref().is_some_and(|m| m.clean[u] & search != 0) {
            continue;
        }
        let mut reported = false;
        if empty_count(c, l, u) < 2 * k {
            if let Some(m) = memory.as_deref_mut() {
                m.clean[u] |= search;
            }
            continue;
        }
        let unit = l.unit(u);
        let mut masks = [0u64; 64];
        for (m, &x) in masks.iter_mut().zip(unit) {
            *m = c.mask(x as usize);
        }
        let go_on = tuples(&masks[..n], k, &mut |set, union| {
            // A set found before removes nothing now: no Step for it.
            let removes = (0..n).any(|i| set & 1 << i == 0 && masks[i] & union != 0);
            if !removes {
                return true;
            }
            let mut step = Step::new(technique, value);
            for (i, &x) in unit.iter().enumerate() {
                if set & 1 << i != 0 {
                    step.cells.push(x);
                } else {
                    for d in digits_of(c.mask(x as usize) & union) {
                        step.eliminations.push((x, d));
                    }
                }
            }
            if step.eliminations.is_empty() {
                return true;
            }
            step.units.push(UnitRef::of(u, n));
            let cells: Vec<usize> = step.cells.iter().map(|&x| x as usize).collect();
            write(
                &mut step,
                format_args!(
                    "{} hold only {} between them, so the rest of {} loses those digits",
                    Cells(&cells, n),
                    Digits(union),
                    UnitRef::of(u, n)
                ),
            );
            reported = true;
            sink(step)
        });
        if !go_on {
            return;
        }
        if !reported && let Some(m) = memory.as_deref_mut() {
            m.clean[u] |= search;
        }
    }
}

/// Hidden sets of `k` digits in a unit (pair 3.4, triple 4.0, quad 5.4):
/// each digit has 2 or more places, k between them; those cells lose
/// their other candidates. SE looks only in units with more than 2k open
/// cells. In direct mode (pair 2.0, triple 2.5) only those whose
/// eliminations leave another digit a hidden single in the unit, which
/// they place; it looks in units with more than k open cells.
///
/// With `memory` (a walk's), the units where this search found nothing
/// and whose cells are the same are skipped.
pub(crate) fn hidden_set(
    c: &Candidates,
    k: usize,
    direct: bool,
    sink: &mut Sink<'_>,
    mut memory: Option<&mut UnitMemory>,
) {
    let l = c.layout();
    let n = l.n();
    let (technique, value) = match (k, direct) {
        (2, true) => (Technique::DirectHiddenPair, 20),
        (3, true) => (Technique::DirectHiddenTriple, 25),
        (2, false) => (Technique::HiddenPair, 34),
        (3, false) => (Technique::HiddenTriple, 40),
        _ => (Technique::HiddenQuad, 54),
    };
    let search = UnitMemory::search(true, direct, k);
    if let Some(m) = memory.as_deref_mut() {
        m.update(c);
    }
    let at = c.places();
    for u in se_units(n) {
        if memory.as_ref().is_some_and(|m| m.clean[u] & search != 0) {
            continue;
        }
        let mut reported = false;
        let empty = empty_count(c, l, u);
        if !(empty > 2 * k || (direct && empty > k)) {
            if let Some(m) = memory.as_deref_mut() {
                m.clean[u] |= search;
            }
            continue;
        }
        let unit = l.unit(u);
        let at = &at[u * n..(u + 1) * n];
        let go_on = tuples(at, k, &mut |digits, common| {
            // The direct step's hidden single, or whether the set removes
            // anything (a set found before removes nothing now): no Step
            // is made without.
            let single = if direct {
                let single = (0..n).find(|&i| {
                    digits & 1 << i == 0
                        && at[i].count_ones() > 1
                        && (at[i] & !common).count_ones() == 1
                });
                let Some(i) = single else {
                    return true;
                };
                Some((
                    unit[(at[i] & !common).trailing_zeros() as usize],
                    i as u8 + 1,
                ))
            } else {
                if !bits_of(common).any(|i| c.mask(unit[i] as usize) & !digits != 0) {
                    return true;
                }
                None
            };
            let mut step = Step::new(technique, value);
            for i in bits_of(common) {
                let x = unit[i];
                step.cells.push(x);
                if single.is_none() {
                    for d in digits_of(c.mask(x as usize) & !digits) {
                        step.eliminations.push((x, d));
                    }
                }
            }
            // Only the single is placed, as SE does.
            step.placements.extend(single);
            step.units.push(UnitRef::of(u, n));
            let cells: Vec<usize> = step.cells.iter().map(|&x| x as usize).collect();
            write(
                &mut step,
                format_args!(
                    "hidden {} {} in {}: only {} can hold them, so they lose their other candidates",
                    SET_NAMES[k - 2],
                    Digits(digits),
                    UnitRef::of(u, n),
                    Cells(&cells, n)
                ),
            );
            if let Some(&(x, d)) = step.placements.first() {
                write(
                    &mut step,
                    format_args!(
                        ", which leaves {} as the only place for {d}",
                        Rc(x as usize, n)
                    ),
                );
            }
            reported = true;
            sink(step)
        });
        if !go_on {
            return;
        }
        if !reported && let Some(m) = memory.as_deref_mut() {
            m.clean[u] |= search;
        }
    }
}

/// Fish of `k` lines (X-wing 3.2, swordfish 3.8, jellyfish 5.2): a
/// digit's places in k base lines lie in k cover lines, which lose it
/// elsewhere. Columns as base lines first, then rows; within them, sets of
/// lines in SE's order and digits ascending; SE tries a digit only when at
/// least 2k of its places are open.
pub(crate) fn fish(c: &Candidates, k: usize, sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    let (technique, value) = match k {
        2 => (Technique::XWing, 32),
        3 => (Technique::Swordfish, 38),
        _ => (Technique::Jellyfish, 52),
    };
    let at = c.places();
    let mut placed = vec![0usize; n + 1];
    for &v in c.values() {
        placed[v as usize] += 1;
    }
    let digits = (1..=n as u8)
        .filter(|&d| placed[d as usize] + 2 * k <= n)
        .fold(0u64, |m, d| m | 1 << (d - 1));
    for (base_kind, cover_kind) in [(1, 0), (0, 1)] {
        let place = |line: usize, d: u8| at[(base_kind * n + line) * n + d as usize - 1];
        let mut report = |lines: u64, d: u8, common: u64| -> bool {
            // A fish found before removes nothing now: no Step for it.
            let cover = |j: usize| at[(cover_kind * n + j) * n + d as usize - 1];
            if !bits_of(common).any(|j| cover(j) & !lines != 0) {
                return true;
            }
            let mut step = Step::new(technique, value);
            for j in bits_of(common) {
                let cover = cover_kind * n + j;
                for (i, &x) in l.unit(cover).iter().enumerate() {
                    if c.mask(x as usize) & 1 << (d - 1) == 0 {
                        continue;
                    }
                    if lines & 1 << i != 0 {
                        step.cells.push(x);
                    } else {
                        step.eliminations.push((x, d));
                    }
                }
            }
            if step.eliminations.is_empty() {
                return true;
            }
            step.cells.sort_unstable();
            for i in bits_of(lines) {
                step.units.push(UnitRef::of(base_kind * n + i, n));
            }
            for j in bits_of(common) {
                step.units.push(UnitRef::of(cover_kind * n + j, n));
            }
            let rows = base_kind == 0;
            let cells: Vec<usize> = step.cells.iter().map(|&x| x as usize).collect();
            write(
                &mut step,
                format_args!(
                    "in {} {d} can only go in {}, on {}: the rest of those lose {d} ({})",
                    Lines(rows, lines),
                    Cells(&cells, n),
                    Lines(!rows, common),
                    technique.name().to_lowercase().replace('_', "-")
                ),
            );
            sink(step)
        };
        // Sets of lines in lexicographic order; a branch lives while some
        // digit still has 2 or more places in each line so far and at
        // most k columns (or rows) between them.
        let mut unions = vec![0u64; (k + 1) * n];
        let go_on = fish_lines(n, k, 0, 0, digits, &mut unions, &place, &mut report);
        if !go_on {
            return;
        }
    }
}

/// The recursion of [`fish`]: adds lines from `start` to `lines`, with
/// `alive` the digits still possible and `unions[depth * n + d - 1]` each
/// one's places so far.
#[allow(clippy::too_many_arguments)]
fn fish_lines(
    n: usize,
    k: usize,
    start: usize,
    lines: u64,
    alive: u64,
    unions: &mut [u64],
    place: &dyn Fn(usize, u8) -> u64,
    report: &mut dyn FnMut(u64, u8, u64) -> bool,
) -> bool {
    let depth = lines.count_ones() as usize;
    if depth == k {
        for d in digits_of(alive) {
            let common = unions[depth * n + d as usize - 1];
            if common.count_ones() as usize == k && !report(lines, d, common) {
                return false;
            }
        }
        return true;
    }
    for line in start..n {
        let mut next = 0;
        for d in digits_of(alive) {
            let p = place(line, d);
            let u = unions[depth * n + d as usize - 1] | p;
            if p.count_ones() >= 2 && u.count_ones() as usize <= k {
                unions[(depth + 1) * n + d as usize - 1] = u;
                next |= 1 << (d - 1);
            }
        }
        if next != 0
            && !fish_lines(
                n,
                k,
                line + 1,
                lines | 1 << line,
                next,
                unions,
                place,
                report,
            )
        {
            return false;
        }
    }
    true
}

/// XY-wing (4.2): a pivot with candidates {x,y} sees a cell {x,z} and a
/// cell {y,z}; a cell that sees both wings loses z. XYZ-wing (4.4): the
/// pivot holds {x,y,z}, and the cell must see it too. Pivots row by row.
pub(crate) fn xy_wing(c: &Candidates, xyz: bool, sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    let mut bivalue: Vec<usize> = Vec::new();
    for pivot in 0..n * n {
        let xy = c.mask(pivot);
        // Two candidates, or three for an XYZ-wing (two past the lowest).
        let pivot_fits = if xyz {
            two_bits(xy & xy.wrapping_sub(1))
        } else {
            two_bits(xy)
        };
        if !pivot_fits {
            continue;
        }
        // The wings are among the pivot's bivalue peers, in order.
        bivalue.clear();
        bivalue.extend(
            l.sorted_peers(pivot)
                .iter()
                .map(|&x| x as usize)
                .filter(|&x| two_bits(c.mask(x))),
        );
        for &xz_cell in &bivalue {
            let xz = c.mask(xz_cell);
            if (xy & !xz).count_ones() != 1 {
                continue;
            }
            for &yz_cell in &bivalue {
                let yz = c.mask(yz_cell);
                let union = xy | xz | yz;
                let inter = xy & xz & yz;
                let wing = union.count_ones() == 3 && inter.count_ones() == if xyz { 1 } else { 0 };
                if !wing {
                    continue;
                }
                let z = (xz & yz).trailing_zeros() as u8 + 1;
                // The cells that see both wings (and the pivot, for an
                // XYZ-wing) are among the first wing's peers, in order.
                let mut eliminations = Vec::new();
                for &x in l.sorted_peers(xz_cell).iter() {
                    let x = x as usize;
                    if x == pivot || x == yz_cell {
                        continue;
                    }
                    if c.mask(x) & 1 << (z - 1) != 0
                        && l.sees(x, yz_cell)
                        && (!xyz || l.sees(x, pivot))
                    {
                        eliminations.push((x as u16, z));
                    }
                }
                if eliminations.is_empty() {
                    continue;
                }
                let mut step = Step::new(
                    if xyz {
                        Technique::XyzWing
                    } else {
                        Technique::XyWing
                    },
                    if xyz { 44 } else { 42 },
                );
                step.eliminations = eliminations;
                step.cells
                    .extend([pivot as u16, xz_cell as u16, yz_cell as u16]);
                write(
                    &mut step,
                    format_args!(
                        "{} {} sees {} {} and {} {}: one of the wings is {z}, so the cells that see {} lose {z}",
                        Rc(pivot, n),
                        Digits(xy),
                        Rc(xz_cell, n),
                        Digits(xz),
                        Rc(yz_cell, n),
                        Digits(yz),
                        if xyz { "all three" } else { "both wings" }
                    ),
                );
                if !sink(step) {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Rng;
    use crate::logic::se::exclusion::tests::{open_state, thin};
    use crate::puzzle::sized::Shape;

    /// Every step of a set search (sink never stops it), as compared.
    fn all(
        c: &Candidates,
        hidden: bool,
        direct: bool,
        k: usize,
        memory: Option<&mut UnitMemory>,
    ) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut keep = |s: Step| {
            steps.push(s);
            true
        };
        if hidden {
            hidden_set(c, k, direct, &mut keep, memory);
        } else {
            naked_set(c, k, &mut keep, memory);
        }
        steps
    }

    /// A walk's unit memory changes no answer: on states thinned step by
    /// step, with steps applied as a walk applies them, at several sizes,
    /// each set search with the memory finds every step a search without
    /// it finds; and it skips units.
    #[test]
    fn set_searches_with_memory_find_what_fresh_searches_find() {
        let searches = [
            (true, true, 2),
            (true, true, 3),
            (false, false, 2),
            (false, false, 3),
            (false, false, 4),
            (true, false, 2),
            (true, false, 3),
            (true, false, 4),
        ];
        let (mut steps, mut skipped) = (0, 0);
        for (rows, cols) in [(2, 3), (3, 3), (3, 4)] {
            let shape = Shape::new(rows, cols).expect("a shape");
            let n = shape.side();
            for seed in 0..20u64 {
                let mut rng = Rng::new(seed * 7 + n as u64);
                let (mut c, sol) = open_state(shape, &mut rng);
                let mut memory = UnitMemory::default();
                for round in 0..n * n * 2 {
                    thin(&mut c, &sol, &mut rng);
                    if round % 2 != 0 {
                        continue;
                    }
                    for &(hidden, direct, k) in &searches {
                        memory.update(&c);
                        let search = UnitMemory::search(hidden, direct, k);
                        skipped += memory.clean.iter().filter(|&&b| b & search != 0).count();
                        let with = all(&c, hidden, direct, k, Some(&mut memory));
                        let fresh = all(&c, hidden, direct, k, None);
                        let key = |s: &Step| {
                            (
                                s.technique,
                                s.cells.clone(),
                                s.eliminations.clone(),
                                s.placements.clone(),
                            )
                        };
                        assert_eq!(
                            with.iter().map(key).collect::<Vec<_>>(),
                            fresh.iter().map(key).collect::<Vec<_>>(),
                            "{shape:?} seed {seed} round {round} {hidden} {direct} {k}"
                        );
                        steps += fresh.len();
                        // The first step applied, as a walk does.
                        if let Some(s) = fresh.first() {
                            c.apply(s);
                        }
                    }
                }
            }
        }
        assert!(
            steps > 1000 && skipped > 100_000,
            "{steps} steps, {skipped} units skipped"
        );
    }
}
