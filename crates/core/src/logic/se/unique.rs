//! Unique rectangles and loops (types 1-4) and the bivalue universal
//! grave (types 1-4), as SE finds and values them.
//!
//! Both rest on the puzzle having one solution. A unique loop is a closed
//! path of cells that all hold the same two candidates {a,b}, each unit
//! it passes through holding exactly two of its cells, one at an even and
//! one at an odd position: were those cells all reduced to {a,b}, the two
//! ways of filling them would give two solutions, so the cells with more
//! candidates ("extra" cells) must keep one of their extra digits.
//!
//! Values: 4.5 for a rectangle (4 cells), 4.6 for 6 cells, 4.7 for 8 and
//! 5.0 from 10 on; type 3 adds 0.1 a digit of its naked set beyond the
//! first (hidden sets: a cell beyond the second). SE collects every hint
//! and reports them by value, then type, in the order it found them;
//! values are compared as SE's doubles, so 4.6 + 0.1 comes before 4.7.
//!
//! BUG: when removing one digit from a few cells ("BUG cells") would leave
//! every open cell with two candidates and every digit twice in each unit
//! where it is open, one of those digits is true. Type 1 (5.6): one BUG
//! cell, which keeps only its BUG digit. Type 2 (5.7): one BUG digit,
//! which the cells seeing all BUG cells lose. Type 3 (5.7 + 0.1 a digit
//! of the naked set beyond the first): the BUG digits form a naked set
//! with other cells of a unit shared by the BUG cells. Type 4 (5.7): two
//! BUG cells in a unit share one other digit, which is then locked in
//! them: each keeps its BUG digits and that digit.

use super::Sink;
use crate::logic::candidates::{Layout, bits_of, digits_of, over_two_bits, two_bits};
use crate::logic::notation::{Cells, Digits, Rc};
use crate::logic::{Candidates, Step, Technique, UnitRef};

/// SE's region order for these techniques: box, row, column (as indices
/// into [`Layout::units_of`]).
const KINDS: [usize; 3] = [2, 0, 1];

fn write(step: &mut Step, args: std::fmt::Arguments<'_>) {
    use std::fmt::Write;
    let _ = step.explanation.write_fmt(args);
}

/// The `k`-subsets of `0..len` as masks, in increasing numeric order (SE's
/// `Permutations`).
fn combinations(len: usize, k: usize) -> impl Iterator<Item = u64> {
    let limit = 1u128 << len;
    let mut next = if k > len { limit } else { (1u128 << k) - 1 };
    std::iter::from_fn(move || {
        if next >= limit {
            return None;
        }
        let out = next;
        if out == 0 {
            next = limit;
        } else {
            let smallest = out & out.wrapping_neg();
            let ripple = out + smallest;
            next = ripple | (((out ^ ripple) >> 2) / smallest);
        }
        Some(out as u64)
    })
}

/// SE's value of a loop of `len` cells, as the double it compares.
fn loop_base(len: usize) -> f64 {
    let mut v = 4.5;
    if len >= 10 {
        v += 0.3;
    }
    if len >= 8 {
        v += 0.2;
    } else if len >= 6 {
        v += 0.1;
    }
    v
}

fn tenths(v: f64) -> u16 {
    (v * 10.0).round() as u16
}

/// One unique-loop hint, with what SE sorts and deduplicates it by.
struct Found {
    /// SE's difficulty, as its double.
    key: f64,
    /// Type 1 to 4.
    kind: u8,
    /// What makes two hints the same for SE: class (1, 2, 3 naked = 3,
    /// 3 hidden = 5, 4), the loop's cells as a set, and for type 3 the
    /// unit, the set's digits and its cells or positions.
    same: (u8, Vec<u16>, usize, u64, Vec<u16>),
    step: Step,
}

/// Every closed path of SE's loop search from one start cell.
struct LoopSearch<'a> {
    c: &'a Candidates,
    l: &'a Layout,
    /// The loop's two digits.
    pair: u64,
    path: Vec<u16>,
    on_path: Vec<bool>,
    /// The loops found that SE keeps, one after another, each `path` long
    /// at the time.
    found: Vec<u16>,
    ends: Vec<usize>,
    /// The units of the path's cells at even and at odd positions, by kind
    /// (bit: the unit's index within its kind).
    seen: [[u64; 3]; 2],
    /// For each unit, the positions of its cells holding both digits of
    /// `pair`: the only cells the walk can go to.
    both: Vec<u64>,
}

impl LoopSearch<'_> {
    /// SE's `checkForLoops`: extends the path with `cell`; from it, along
    /// a unit of another kind than the one it was reached by, to any cell
    /// holding both digits, as long as the extra digits seen so far are
    /// all one digit or fewer than two cells with extra digits are on the
    /// path. As in SE, `extra` gathers the extra digits of every cell
    /// tried from here, not only of those on the path.
    fn walk(&mut self, cell: usize, allowed: i32, extra: u64, last: Option<usize>) {
        let (c, l, pair) = (self.c, self.l, self.pair);
        self.flip(cell, self.path.len());
        self.path.push(cell as u16);
        self.on_path[cell] = true;
        let mut extra = extra;
        let units = l.units_of(cell);
        for kind in KINDS {
            if last == Some(kind) {
                continue;
            }
            let u = units[kind] as usize;
            let cells = l.unit(u);
            let mut places = self.both[u];
            while places != 0 {
                let next = cells[places.trailing_zeros() as usize] as usize;
                places &= places - 1;
                if next == self.path[0] as usize && self.path.len() >= 4 {
                    // SE keeps a loop when each unit it visits holds two
                    // of its cells, one at an even position and one at an
                    // odd: no unit is seen twice at one parity (the walk
                    // never goes there), so both parities see the same.
                    if self.seen[0] == self.seen[1] {
                        self.found.extend_from_slice(&self.path);
                        self.ends.push(self.found.len());
                    }
                } else if !self.on_path[next] {
                    let m = c.mask(next);
                    extra |= m & !pair;
                    let wide = over_two_bits(m);
                    if (!wide || extra.count_ones() == 1 || allowed > 0)
                        && self.fits(next, self.path.len())
                    {
                        self.walk(next, allowed - i32::from(wide), extra, Some(kind));
                    }
                }
            }
        }
        self.on_path[cell] = false;
        self.path.pop();
        self.flip(cell, self.path.len());
    }

    /// Whether `cell` at position `at` of the path can still be part of a
    /// loop SE keeps: none of its units holds a path cell at a position of
    /// the same parity. A path that breaks this closes no loop SE keeps,
    /// however it goes on (its `extra` digits are gathered by the caller
    /// before this test, as SE does).
    fn fits(&self, cell: usize, at: usize) -> bool {
        let n = self.l.n();
        let seen = &self.seen[at & 1];
        self.l
            .units_of(cell)
            .iter()
            .enumerate()
            .all(|(k, &u)| seen[k] & (1u64 << (u as usize - k * n)) == 0)
    }

    /// Marks (or unmarks) the units of `cell` at position `at`.
    fn flip(&mut self, cell: usize, at: usize) {
        let n = self.l.n();
        for (k, &u) in self.l.units_of(cell).iter().enumerate() {
            self.seen[at & 1][k] ^= 1u64 << (u as usize - k * n);
        }
    }
}

/// SE's `UniqueLoops`: every unique rectangle and loop, reported cheapest
/// first (by value, then type).
pub(crate) fn unique_loops(c: &Candidates, sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    let mut hints: Vec<Found> = Vec::new();
    let mut search = LoopSearch {
        c,
        l,
        pair: 0,
        path: Vec::new(),
        on_path: vec![false; n * n],
        found: Vec::new(),
        ends: Vec::new(),
        seen: [[0; 3]; 2],
        both: vec![0; 3 * n],
    };
    for cell in 0..n * n {
        let pair = c.mask(cell);
        if !two_bits(pair) {
            continue;
        }
        search.pair = pair;
        let (d1, d2) = (
            pair.trailing_zeros() as usize,
            (pair & (pair - 1)).trailing_zeros() as usize,
        );
        let places = c.places();
        for (u, both) in search.both.iter_mut().enumerate() {
            *both = places[u * n + d1] & places[u * n + d2];
        }
        search.found.clear();
        search.ends.clear();
        search.walk(cell, 2, 0, None);
        let mut start = 0;
        for &end in &search.ends {
            loop_hints(c, &search.found[start..end], pair, &mut hints);
            start = end;
        }
    }
    // Stable: equal values and types keep the order they were found in.
    hints.sort_by(|a, b| a.key.total_cmp(&b.key).then(a.kind.cmp(&b.kind)));
    for h in hints {
        if !sink(h.step) {
            return;
        }
    }
}

/// The hints of one loop, added to `out` unless SE already has the same.
fn loop_hints(c: &Candidates, cells: &[u16], pair: u64, out: &mut Vec<Found>) {
    let mut extra_cells = [0usize; 2];
    let mut count = 0;
    for &x in cells {
        if c.mask(x as usize).count_ones() > 2 {
            if count < 2 {
                extra_cells[count] = x as usize;
            }
            count += 1;
        }
    }
    let mut add = |h: Found| {
        if !h.step.eliminations.is_empty() && !out.iter().any(|o| o.same == h.same) {
            out.push(h);
        }
    };
    match count {
        0 => {}
        1 => add(type1(c, cells, pair, extra_cells[0])),
        2 => {
            let [c1, c2] = extra_cells;
            let extra = (c.mask(c1) | c.mask(c2)) & !pair;
            if extra.count_ones() == 1 {
                add(type2(c, cells, pair));
            } else {
                type3(c, cells, pair, c1, c2, &mut add);
            }
            if let Some(h) = type4(c, cells, pair, c1, c2) {
                add(h);
            }
        }
        _ => add(type2(c, cells, pair)),
    }
}

/// A hint on `cells` with its value, eliminations sorted; `same` filled
/// with the class and the loop's cells.
fn found(cells: &[u16], class: u8, kind: u8, key: f64) -> Found {
    let technique = if cells.len() == 4 {
        Technique::UniqueRectangle
    } else {
        Technique::UniqueLoop
    };
    let mut step = Step::new(technique, tenths(key));
    step.cells.extend_from_slice(cells);
    let mut set = cells.to_vec();
    set.sort_unstable();
    Found {
        key,
        kind,
        same: (class, set, 0, 0, Vec::new()),
        step,
    }
}

/// "unique rectangle type 1: r1c1, ... on {1,2}: " and the like.
fn head(step: &mut Step, cells: &[u16], pair: u64, kind: u8, n: usize) {
    let cells: Vec<usize> = cells.iter().map(|&x| x as usize).collect();
    if cells.len() == 4 {
        write(
            step,
            format_args!(
                "unique rectangle type {kind}: {} on {}",
                Cells(&cells, n),
                Digits(pair)
            ),
        );
    } else {
        write(
            step,
            format_args!(
                "unique loop type {kind} ({} cells): {} on {}",
                cells.len(),
                Cells(&cells, n),
                Digits(pair)
            ),
        );
    }
}

/// Type 1: one cell has more candidates; it loses the loop's two.
fn type1(c: &Candidates, cells: &[u16], pair: u64, target: usize) -> Found {
    let n = c.side();
    let mut h = found(cells, 1, 1, loop_base(cells.len()));
    for d in digits_of(pair) {
        h.step.eliminations.push((target as u16, d));
    }
    head(&mut h.step, cells, pair, 1, n);
    write(
        &mut h.step,
        format_args!(
            "; only {} has other candidates, so it cannot be {}",
            Rc(target, n),
            Digits(pair)
        ),
    );
    h
}

/// Type 2: the cells with more candidates have one extra digit between
/// them (SE takes the first extra cell's lowest); one of them holds it,
/// so the cells that see them all lose it.
fn type2(c: &Candidates, cells: &[u16], pair: u64) -> Found {
    let l = c.layout();
    let n = l.n();
    let extra: Vec<usize> = cells
        .iter()
        .map(|&x| x as usize)
        .filter(|&x| c.mask(x).count_ones() > 2)
        .collect();
    let extra_digits = c.mask(extra[0]) & !pair;
    let d = extra_digits.trailing_zeros() as u8 + 1;
    let mut h = found(cells, 2, 2, loop_base(cells.len()));
    let b = 1u64 << (d - 1);
    for x in 0..n * n {
        if c.mask(x) & b != 0 && !extra.contains(&x) && extra.iter().all(|&e| l.sees(x, e)) {
            h.step.eliminations.push((x as u16, d));
        }
    }
    head(&mut h.step, cells, pair, 2, n);
    write(
        &mut h.step,
        format_args!(
            "; one of {} is {d}, so the cells that see them all lose {d}",
            Cells(&extra, n)
        ),
    );
    h
}

/// Type 3: the two extra cells `c1` and `c2` share a unit; together they
/// act as one cell holding their extra digits, which forms a naked set
/// with other cells of the unit (the rest of the unit loses its digits),
/// or a hidden set of the loop's digits and others, counting `c1` only
/// (its other cells lose their other candidates). Degrees from the number
/// of extra digits up; each kind of unit; naked sets, then hidden ones;
/// sets in SE's order.
fn type3(
    c: &Candidates,
    cells: &[u16],
    pair: u64,
    c1: usize,
    c2: usize,
    add: &mut dyn FnMut(Found),
) {
    let l = c.layout();
    let n = l.n();
    let (m1, m2) = (c.mask(c1), c.mask(c2));
    let extra = (m1 | m2) & !pair;
    // The digits a hidden set may add to the loop's two.
    let rest = crate::logic::candidates::all_digits(n) & !pair & !extra;
    let (u1, u2) = (l.units_of(c1), l.units_of(c2));
    let base = loop_base(cells.len());
    // Positions that can join a naked set; digits that can join a hidden
    // one, with their places. Skipping the others keeps SE's order.
    let mut open: Vec<usize> = Vec::with_capacity(n);
    let mut digits: Vec<(u8, u64)> = Vec::with_capacity(n);
    for degree in extra.count_ones() as usize..=n.saturating_sub(2) {
        for kind in KINDS {
            if u1[kind] != u2[kind] {
                continue;
            }
            let u = u1[kind] as usize;
            let unit = l.unit(u);
            let empty = unit.iter().filter(|&&x| c.value(x as usize) == 0).count();
            let i1 = l.places_of(c1)[kind] as usize;
            let i2 = l.places_of(c2)[kind] as usize;
            if degree * 2 <= empty {
                open.clear();
                open.extend(
                    (0..n).filter(|&i| {
                        i != i1 && i != i2 && c.mask(unit[i] as usize).count_ones() > 1
                    }),
                );
                for pick in combinations(open.len(), degree - 1) {
                    let mut naked = extra & m1 & m2;
                    let mut union = extra;
                    let mut set = 1u64 << i1;
                    for j in bits_of(pick) {
                        let m = c.mask(unit[open[j]] as usize);
                        naked |= m;
                        union |= m;
                        set |= 1 << open[j];
                    }
                    if naked.count_ones() as usize != degree
                        || union.count_ones() as usize != degree
                    {
                        continue;
                    }
                    let key = base + (degree - 1) as f64 * 0.1;
                    let mut h = found(cells, 3, 3, key);
                    for (i, &x) in unit.iter().enumerate() {
                        if set & 1 << i == 0 && i != i2 {
                            for d in digits_of(c.mask(x as usize) & union) {
                                h.step.eliminations.push((x, d));
                            }
                        }
                    }
                    let others: Vec<usize> = bits_of(set & !(1 << i1))
                        .map(|i| unit[i] as usize)
                        .collect();
                    h.step.units.push(UnitRef::of(u, n));
                    head(&mut h.step, cells, pair, 3, n);
                    write(
                        &mut h.step,
                        format_args!(
                            "; {} or {} holds one of {}, a naked set {} with {} in {}, \
                             so the rest of {} loses them",
                            Rc(c1, n),
                            Rc(c2, n),
                            Digits(extra),
                            Digits(union),
                            Cells(&others, n),
                            UnitRef::of(u, n),
                            UnitRef::of(u, n)
                        ),
                    );
                    h.same.2 = u;
                    h.same.3 = union;
                    h.same.4 = others.iter().map(|&x| x as u16).collect();
                    add(h);
                }
            }
            // SE draws the added digits from `rest`; when it is empty it
            // draws nothing, not even the empty set.
            if degree * 2 < empty && degree - 2 <= rest.count_ones() as usize && rest != 0 {
                let at = |d: u8| -> u64 {
                    let mut at = 0u64;
                    for (i, &x) in unit.iter().enumerate() {
                        if i != i2 && c.mask(x as usize) & 1 << (d - 1) != 0 {
                            at |= 1 << i;
                        }
                    }
                    at
                };
                let mut at_pair = 0;
                for d in digits_of(pair) {
                    at_pair |= at(d);
                }
                digits.clear();
                digits.extend(digits_of(rest).map(|d| (d, at(d))).filter(|&(_, p)| p != 0));
                for pick in combinations(digits.len(), degree - 2) {
                    let mut set_digits = pair;
                    let mut union = at_pair;
                    for j in bits_of(pick) {
                        set_digits |= 1 << (digits[j].0 - 1);
                        union |= digits[j].1;
                    }
                    if union.count_ones() as usize != degree {
                        continue;
                    }
                    let places = union & !(1 << i1) & !(1 << i2);
                    let key = base + (places.count_ones() as i32 - 1) as f64 * 0.1;
                    let mut h = found(cells, 5, 3, key);
                    let mut set_cells = Vec::new();
                    for i in bits_of(places) {
                        let x = unit[i];
                        set_cells.push(x as usize);
                        for d in digits_of(c.mask(x as usize) & !set_digits) {
                            h.step.eliminations.push((x, d));
                        }
                    }
                    h.step.units.push(UnitRef::of(u, n));
                    head(&mut h.step, cells, pair, 3, n);
                    write(
                        &mut h.step,
                        format_args!(
                            "; {} or {} holds one of {}, so {} are a hidden set in {} \
                             with {}, which lose their other candidates",
                            Rc(c1, n),
                            Rc(c2, n),
                            Digits(extra),
                            Digits(set_digits),
                            UnitRef::of(u, n),
                            Cells(&set_cells, n)
                        ),
                    );
                    h.same.2 = u;
                    h.same.3 = set_digits;
                    h.same.4 = set_cells.iter().map(|&x| x as u16).collect();
                    add(h);
                }
            }
        }
    }
}

/// Type 4: the two extra cells share a unit where one loop digit has no
/// other place (the last such unit, box, row, column; the first digit if
/// both qualify); they both lose the other loop digit.
fn type4(c: &Candidates, cells: &[u16], pair: u64, c1: usize, c2: usize) -> Option<Found> {
    let l = c.layout();
    let n = l.n();
    let (u1, u2) = (l.units_of(c1), l.units_of(c2));
    let lo = pair & pair.wrapping_neg();
    let hi = pair & !lo;
    let mut lock_lo = None;
    let mut lock_hi = None;
    for kind in KINDS {
        if u1[kind] != u2[kind] {
            continue;
        }
        let u = u1[kind] as usize;
        let mut seen = 0u64;
        for &x in l.unit(u) {
            let x = x as usize;
            if x != c1 && x != c2 {
                seen |= c.mask(x) & pair;
            }
        }
        if seen & lo == 0 {
            lock_lo = Some(u);
        }
        if seen & hi == 0 {
            lock_hi = Some(u);
        }
    }
    let (u, lock, rem) = match (lock_lo, lock_hi) {
        (Some(u), _) => (u, lo, hi),
        (None, Some(u)) => (u, hi, lo),
        (None, None) => return None,
    };
    let d = rem.trailing_zeros() as u8 + 1;
    let mut h = found(cells, 4, 4, loop_base(cells.len()));
    h.step.eliminations.push((c1 as u16, d));
    h.step.eliminations.push((c2 as u16, d));
    h.step.units.push(UnitRef::of(u, n));
    head(&mut h.step, cells, pair, 4, n);
    write(
        &mut h.step,
        format_args!(
            "; in {} {} can only go in {} or {}, so neither can be {d}",
            UnitRef::of(u, n),
            lock.trailing_zeros() + 1,
            Rc(c1, n),
            Rc(c2, n)
        ),
    );
    Some(h)
}

/// A cell's house in SE's order: its box, then the rest of its row, then
/// the rest of its column; the cell itself left out.
fn house(l: &Layout, cell: usize) -> Vec<usize> {
    let units = l.units_of(cell);
    let mut out = Vec::with_capacity(3 * l.n());
    for (j, kind) in KINDS.into_iter().enumerate() {
        for &x in l.unit(units[kind] as usize) {
            let x = x as usize;
            let xs = l.units_of(x);
            if x != cell && !KINDS[..j].iter().any(|&k| xs[k] == units[k]) {
                out.push(x);
            }
        }
    }
    out
}

/// SE's `BivalueUniversalGrave`: types 1 to 4.
///
/// Units box, row, column; in each, digits lowest first: a digit open in
/// other than two places with exactly one of them a cell of three or more
/// candidates makes that cell a BUG cell with that BUG digit; with none,
/// no BUG. Without the BUG digits the grid must be a BUG (every open cell
/// two candidates, every open digit twice in each unit).
pub(crate) fn bug(c: &Candidates, sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    let mut twin: Vec<u64> = c.masks().to_vec();
    let mut bug_cells: Vec<usize> = Vec::new();
    let mut bug_digits: Vec<u64> = Vec::new();
    let mut all = 0u64;
    // The cells that see every BUG cell, in the order of the first one's
    // house.
    let mut common: Option<Vec<usize>> = None;
    let at = c.places();
    for kind in KINDS {
        for u in kind * n..(kind + 1) * n {
            let unit = l.unit(u);
            // The unit's cells of three candidates or more, as bits.
            let mut wide_cells = 0u64;
            for (i, &x) in unit.iter().enumerate() {
                if c.mask(x as usize).count_ones() >= 3 {
                    wide_cells |= 1 << i;
                }
            }
            for d in 1..=n as u8 {
                let b = 1u64 << (d - 1);
                let places = at[u * n + d as usize - 1];
                if places.count_ones() == 0 || places.count_ones() == 2 {
                    continue;
                }
                let wide = places & wide_cells;
                if wide == 0 {
                    return;
                }
                if wide.count_ones() > 1 {
                    continue;
                }
                let cell = unit[wide.trailing_zeros() as usize] as usize;
                let k = match bug_cells.iter().position(|&x| x == cell) {
                    Some(k) => k,
                    None => {
                        bug_cells.push(cell);
                        bug_digits.push(0);
                        bug_cells.len() - 1
                    }
                };
                bug_digits[k] |= b;
                all |= b;
                twin[cell] &= !b;
                let common = common.get_or_insert_with(|| house(l, cell));
                common.retain(|&y| l.sees(y, cell) && !bug_cells.contains(&y));
                if bug_cells.len() > 1 && all.count_ones() > 1 && common.is_empty() {
                    return;
                }
            }
        }
    }
    if (0..n * n).any(|x| c.value(x) == 0 && twin[x].count_ones() != 2) {
        return;
    }
    for u in 0..3 * n {
        let unit = l.unit(u);
        for d in 1..=n as u8 {
            let b = 1u64 << (d - 1);
            let places = unit.iter().filter(|&&x| twin[x as usize] & b != 0).count();
            if places != 0 && places != 2 {
                return;
            }
        }
    }
    let common = common.unwrap_or_default();
    if bug_cells.len() == 1 {
        let x = bug_cells[0];
        let mut step = Step::new(Technique::Bug, 56);
        for d in digits_of(c.mask(x) & !all) {
            step.eliminations.push((x as u16, d));
        }
        step.cells.push(x as u16);
        write(
            &mut step,
            format_args!(
                "BUG type 1: without {} in {} every open cell would have two candidates \
                 and every digit two places in each unit, two solutions; so {} is {}",
                Digits(all),
                Rc(x, n),
                Rc(x, n),
                Digits(all)
            ),
        );
        sink(step);
    } else if all.count_ones() == 1 {
        if !bug2(c, &bug_cells, all, &common, sink) {
            return;
        }
        if bug_cells.len() == 2 {
            bug4(c, &bug_cells, &bug_digits, all, sink);
        }
    } else if !common.is_empty() {
        if bug_cells.len() == 2 && !bug4(c, &bug_cells, &bug_digits, all, sink) {
            return;
        }
        bug3(c, &bug_cells, all, &common, sink);
    }
}

/// "BUG type k: r1c1 and r2c2 hold {..} (one of them is true)".
fn bug_head(step: &mut Step, kind: u8, cells: &[usize], all: u64, n: usize) {
    step.cells.extend(cells.iter().map(|&x| x as u16));
    write(
        step,
        format_args!(
            "BUG type {kind}: one of {} holds one of its BUG digits {}",
            Cells(cells, n),
            Digits(all)
        ),
    );
}

/// BUG type 2 (5.7): one BUG digit; the cells that see every BUG cell
/// lose it. False when the sink says stop.
fn bug2(c: &Candidates, cells: &[usize], all: u64, common: &[usize], sink: &mut Sink<'_>) -> bool {
    let n = c.side();
    let d = all.trailing_zeros() as u8 + 1;
    let mut step = Step::new(Technique::Bug, 57);
    for &x in common {
        if c.mask(x) & all != 0 {
            step.eliminations.push((x as u16, d));
        }
    }
    if step.eliminations.is_empty() {
        return true;
    }
    step.eliminations.sort_unstable();
    bug_head(&mut step, 2, cells, all, n);
    write(
        &mut step,
        format_args!(", so the cells that see them all lose {d}"),
    );
    sink(step)
}

/// BUG type 4 (5.7): two BUG cells sharing a unit and one digit besides
/// the BUG digits: that digit is in one of them, so each keeps only its
/// BUG digits and that one. One hint for each kind of unit they share.
/// False when the sink says stop.
fn bug4(c: &Candidates, cells: &[usize], digits: &[u64], all: u64, sink: &mut Sink<'_>) -> bool {
    let l = c.layout();
    let n = l.n();
    let (c1, c2) = (cells[0], cells[1]);
    let shared = c.mask(c1) & c.mask(c2) & !all;
    if shared.count_ones() != 1 {
        return true;
    }
    let (u1, u2) = (l.units_of(c1), l.units_of(c2));
    for kind in KINDS {
        if u1[kind] != u2[kind] {
            continue;
        }
        let mut step = Step::new(Technique::Bug, 57);
        for (k, &x) in [c1, c2].iter().enumerate() {
            for d in digits_of(c.mask(x) & !digits[k] & !shared) {
                step.eliminations.push((x as u16, d));
            }
        }
        step.units.push(UnitRef::of(u1[kind] as usize, n));
        bug_head(&mut step, 4, cells, all, n);
        write(
            &mut step,
            format_args!(
                "; in {} {} is in one of them, so each keeps only its BUG digits and {}",
                UnitRef::of(u1[kind] as usize, n),
                Digits(shared),
                Digits(shared)
            ),
        );
        if !sink(step) {
            return false;
        }
    }
    true
}

/// BUG type 3 (5.7 + 0.1 a digit beyond the first): the BUG cells share a
/// unit; their BUG digits, as one cell, form a naked set with other cells
/// of it that see every BUG cell; the rest of those cells lose the set's
/// digits. Units box, row, column; sets of 2 up to n - 3 digits.
fn bug3(c: &Candidates, cells: &[usize], all: u64, common: &[usize], sink: &mut Sink<'_>) {
    let l = c.layout();
    let n = l.n();
    let units = l.units_of(cells[0]);
    for kind in KINDS {
        let u = units[kind];
        if cells.iter().any(|&x| l.units_of(x)[kind] != u) {
            continue;
        }
        let in_unit: Vec<usize> = common
            .iter()
            .copied()
            .filter(|&x| l.units_of(x)[kind] == u)
            .collect();
        // Cells with one candidate or none never join a set; skipping them
        // keeps SE's order.
        let open: Vec<usize> = in_unit
            .iter()
            .copied()
            .filter(|&x| c.mask(x).count_ones() > 1)
            .collect();
        for degree in 2..=n.saturating_sub(3) {
            if in_unit.len() < degree {
                continue;
            }
            for pick in combinations(open.len(), degree - 1) {
                let mut union = 0;
                for j in bits_of(pick) {
                    union |= c.mask(open[j]);
                }
                if union.count_ones() as usize != degree || all & !union != 0 {
                    continue;
                }
                let mut step = Step::new(Technique::Bug, tenths(5.7 + (degree - 1) as f64 * 0.1));
                let mut set_cells = Vec::with_capacity(degree - 1);
                for (j, &x) in open.iter().enumerate() {
                    if pick & 1 << j != 0 {
                        set_cells.push(x);
                    }
                }
                for &x in &in_unit {
                    if !set_cells.contains(&x) {
                        for d in digits_of(c.mask(x) & union) {
                            step.eliminations.push((x as u16, d));
                        }
                    }
                }
                if step.eliminations.is_empty() {
                    continue;
                }
                step.eliminations.sort_unstable();
                step.units.push(UnitRef::of(u as usize, n));
                bug_head(&mut step, 3, cells, all, n);
                write(
                    &mut step,
                    format_args!(
                        ", a naked set {} with {} in {}, so the rest of {} loses them",
                        Digits(union),
                        Cells(&set_cells, n),
                        UnitRef::of(u as usize, n),
                        UnitRef::of(u as usize, n)
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
    use crate::puzzle::Grid;
    use crate::puzzle::sized::SizedGrid;

    /// A 9x9 state: 81 tokens, "=d" a placed digit, else the candidates.
    fn state(text: &str) -> Candidates {
        let mut values = vec![0u32; 81];
        let mut masks = vec![0u64; 81];
        let tokens: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(tokens.len(), 81);
        for (i, t) in tokens.iter().enumerate() {
            if let Some(v) = t.strip_prefix('=') {
                values[i] = v.parse().unwrap();
            } else {
                masks[i] = t.bytes().map(|b| 1u64 << (b - b'1')).fold(0, |a, b| a | b);
            }
        }
        let grid = SizedGrid::from_grid(&Grid::from_cells(&values).unwrap());
        let c = Candidates::with_marks(&grid, &masks).unwrap();
        for (i, &m) in masks.iter().enumerate() {
            assert_eq!(c.mask(i), m, "cell {i} keeps its marks");
        }
        c
    }

    fn first(c: &Candidates, f: fn(&Candidates, &mut Sink<'_>)) -> Option<Step> {
        let mut out = None;
        f(c, &mut |s| {
            out = Some(s);
            false
        });
        out
    }

    /// The first hint: its technique, value, sorted eliminations (as
    /// (row, column, digit) from 1) and the start of its explanation.
    fn check(
        c: &Candidates,
        f: fn(&Candidates, &mut Sink<'_>),
        technique: Technique,
        value: u16,
        elims: &[(u16, u16, u8)],
        start: &str,
    ) {
        let s = first(c, f).expect("a hint");
        let mut got: Vec<(u16, u16, u8)> = s
            .eliminations
            .iter()
            .map(|&(x, d)| (x / 9 + 1, x % 9 + 1, d))
            .collect();
        got.sort_unstable();
        assert_eq!(
            (s.technique, s.value, got.as_slice()),
            (technique, value, elims),
            "{}",
            s.explanation
        );
        assert!(s.explanation.starts_with(start), "{}", s.explanation);
    }

    #[test]
    fn combinations_in_se_order() {
        let all: Vec<u64> = combinations(5, 3).collect();
        assert_eq!(all.len(), 10);
        assert_eq!(&all[..4], &[0b00111, 0b01011, 0b01101, 0b01110]);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(combinations(4, 0).collect::<Vec<_>>(), vec![0]);
        assert_eq!(combinations(3, 4).count(), 0);
        assert_eq!(combinations(64, 64).collect::<Vec<_>>(), vec![u64::MAX]);
    }

    #[test]
    fn loop_values_are_se_doubles() {
        let v: Vec<u16> = [4, 6, 8, 10, 12]
            .iter()
            .map(|&n| tenths(loop_base(n)))
            .collect();
        assert_eq!(v, [45, 46, 47, 50, 50]);
        // A 6-loop with a naked pair sorts before an 8-loop, as in SE.
        assert!(loop_base(6) + 0.1 < loop_base(8));
    }

    #[test]
    fn rectangle_type_1() {
        let c = state(
            "35 1568 =4 =7 2569 13589 269 3689 59 357 568 =9 3568 256 358 246 34678 =1 \
             357 1568 =2 35689 =4 13589 69 36789 59 =8 9 =3 =2 =1 =7 =5 49 =6 \
             =4 =2 =6 589 =3 589 =1 9 =7 =1 59 =7 569 569 =4 =8 =2 =3 \
             =9 =4 =8 =1 =7 =6 =3 =5 =2 =2 =7 =1 359 =8 359 69 69 =4 \
             =6 =3 =5 =4 9 =2 =7 19 =8",
        );
        check(
            &c,
            unique_loops,
            Technique::UniqueRectangle,
            45,
            &[(3, 8, 6), (3, 8, 9)],
            "unique rectangle type 1: r3c7, r3c8, r8c8 and r8c7 on {6,9}",
        );
    }

    #[test]
    fn rectangle_type_2() {
        let c = state(
            "4579 =8 =1 =6 2479 2479 =3 24 245 469 4 469 =5 =3 2489 =1 2468 =7 \
             =2 =3 4567 48 =1 478 456 468 =9 45678 12457 =3 148 4 148 =9 1246 12456 \
             469 124 2469 =7 =5 =3 =8 1246 1246 4589 145 4589 =2 =6 1489 =7 =3 145 \
             =1 =9 2478 34 247 =6 24 =5 2348 3457 2457 2457 =9 =8 12457 246 12467 12346 \
             34578 =6 24578 134 247 12457 24 124789 12348",
        );
        check(
            &c,
            unique_loops,
            Technique::UniqueRectangle,
            45,
            &[(1, 5, 7), (8, 6, 7), (9, 6, 7)],
            "unique rectangle type 2: r7c7, r9c7, r9c5 and r7c5 on {2,4}",
        );
    }

    #[test]
    fn rectangle_type_3_naked_triple() {
        let c = state(
            "457 =1 267 267 579 569 49 =3 =8 358 69 36 =4 359 5689 =7 =1 =2 \
             3478 249 237 27 379 =1 49 =5 =6 =9 =8 =5 =3 =4 =2 =1 =6 =7 \
             7 6 =1 =8 59 59 =3 =2 =4 347 246 2367 67 =1 6 =8 =9 =5 \
             =2 =3 =8 =1 =6 =4 =5 =7 =9 =6 =7 =9 =5 =8 =3 =2 =4 =1 \
             =1 =5 =4 =9 =2 =7 =6 =8 =3",
        );
        // {6,7} of r1c5/r1c6 with r1c4 {2,6,7} and r3c4 {2,7}: box 2 loses
        // 2, 6 and 7 elsewhere; 4.5 + 0.2.
        check(
            &c,
            unique_loops,
            Technique::UniqueRectangle,
            47,
            &[(2, 6, 6), (3, 5, 7)],
            "unique rectangle type 3: r5c5, r5c6, r1c6 and r1c5 on {5,9}",
        );
    }

    #[test]
    fn rectangle_type_3_hidden_set() {
        let c = state(
            "=7 =3 =9 268 =4 2 =1 =5 28 =8 =5 =6 1239 1239 1239 =7 =4 29 \
             =2 =1 =4 5789 589 579 =6 =3 89 =1 =6 =2 35 35 =8 =4 =9 =7 \
             =4 =7 =8 129 129 129 =5 =6 =3 =3 =9 =5 =4 =7 =6 =8 =2 =1 \
             =9 =2 =7 58 58 =4 =3 =1 =6 =5 =8 =3 126 126 12 =9 =7 =4 \
             =6 =4 =1 379 39 379 =2 =8 =5",
        );
        // {5,6,8} in box 2 only in r1c4, r3c6 and one of r3c4/r3c5: a
        // hidden triple, worth 4.5 + 0.1.
        check(
            &c,
            unique_loops,
            Technique::UniqueRectangle,
            46,
            &[(1, 4, 2), (3, 6, 7), (3, 6, 9)],
            "unique rectangle type 3: r7c4, r7c5, r3c5 and r3c4 on {5,8}",
        );
    }

    #[test]
    fn rectangle_type_4() {
        let c = state(
            "35 1568 =4 =7 2569 13589 2569 35689 59 357 568 =9 3568 256 358 2456 345678 =1 \
             357 1568 =2 135689 =4 13589 569 356789 59 =8 59 =3 =2 =1 =7 459 459 =6 \
             45 =2 =6 4589 =3 4589 =1 459 =7 =1 59 =7 4569 569 459 =8 =2 =3 \
             =9 =4 58 15 =7 =6 =3 15 =2 =2 =7 =1 3459 =8 3459 4569 4569 459 \
             =6 =3 5 1459 59 =2 =7 1459 =8",
        );
        check(
            &c,
            unique_loops,
            Technique::UniqueRectangle,
            45,
            &[(9, 4, 5), (9, 8, 5)],
            "unique rectangle type 4: r7c4, r9c4, r9c8 and r7c8 on {1,5}",
        );
    }

    #[test]
    fn loop_of_six_type_2() {
        let c = state(
            "=2 =1 =6 =7 =3 =9 =8 =4 =5 9 79 =3 =8 =5 =4 =2 =1 =6 \
             =4 =8 =5 =6 =1 =2 379 379 39 =6 =3 89 =2 89 =1 =4 =5 =7 \
             =7 =4 =1 =5 89 =3 9 =6 =2 =5 =2 9 =4 =6 =7 39 =8 =1 \
             389 79 789 139 =2 =6 =5 379 =4 =1 =5 =4 39 =7 =8 =6 =2 39 \
             39 =6 =2 39 =4 =5 =1 379 =8",
        );
        check(
            &c,
            unique_loops,
            Technique::UniqueLoop,
            46,
            &[(7, 8, 7)],
            "unique loop type 2 (6 cells): r3c9, r3c8, r9c8, r9c4, r8c4 and r8c9 on {3,9}",
        );
    }

    #[test]
    fn loop_of_ten_type_1() {
        let c = state(
            "=7 145 =6 =8 =2 =3 145 =9 5 12 =9 38 =7 156 =4 1568 356 2356 \
             124 145 38 56 156 =9 14568 =7 2356 =3 =8 =2 =4 =7 =1 56 56 =9 \
             14 14 =5 =3 =9 =6 =7 =2 =8 =9 =6 =7 =2 =8 =5 =3 =4 =1 \
             =8 =3 =4 =1 56 =2 =9 56 =7 56 =2 =1 =9 =4 =7 56 =8 356 \
             56 =7 =9 56 =3 =8 =2 =1 =4",
        );
        check(
            &c,
            unique_loops,
            Technique::UniqueLoop,
            50,
            &[(3, 5, 5), (3, 5, 6)],
            "unique loop type 1 (10 cells)",
        );
    }

    #[test]
    fn loop_type_3_naked_pair_sorts_before_equal_value_types() {
        // A 6-loop with a naked pair (4.6 + 0.1, just under SE's 4.7).
        let c = state(
            "=7 =5 =3 =6 =2 =1 =9 =4 =8 69 69 =4 =5 =3 =8 =1 =7 =2 \
             =8 =1 =2 =4 =7 =9 6 =5 =3 69 =8 =5 129 =4 =3 267 1269 1679 \
             =3 69 =1 289 689 =7 =4 269 569 =4 =2 =7 19 169 =5 =8 =3 169 \
             =5 =4 =9 1378 18 =6 237 12 17 =1 =3 =6 79 9 =2 =5 =8 =4 \
             =2 =7 =8 13 =5 =4 36 169 169",
        );
        check(
            &c,
            unique_loops,
            Technique::UniqueLoop,
            47,
            &[(9, 8, 1)],
            "unique loop type 3 (6 cells): r2c1, r2c2, r5c2, r5c8, r4c8 and r4c1 on {6,9}",
        );
    }

    #[test]
    fn no_loop_without_extra_cells_or_in_a_solved_grid() {
        let c = state(
            "=1 =2 =3 =4 =5 =6 =7 =8 =9 =4 =5 =6 =7 =8 =9 =1 =2 =3 \
             =7 =8 =9 =1 =2 =3 =4 =5 =6 =2 =3 =4 =5 =6 =7 =8 =9 =1 \
             =5 =6 =7 =8 =9 =1 =2 =3 =4 =8 =9 =1 =2 =3 =4 =5 =6 =7 \
             =3 =4 =5 =6 =7 =8 =9 =1 =2 =6 =7 =8 =9 =1 =2 =3 =4 =5 \
             =9 =1 =2 =3 =4 =5 =6 =7 =8",
        );
        assert!(first(&c, unique_loops).is_none());
        assert!(first(&c, bug).is_none());
    }

    #[test]
    fn bug_type_1() {
        let c = state(
            "=4 =3 789 89 =2 17 =5 19 =6 25 69 58 38 =4 16 23 19 =7 \
             26 =1 79 39 =5 67 23 =8 =4 =9 =5 =3 =7 =1 =4 =8 =6 =2 \
             =1 =8 =6 =2 =3 =5 =4 =7 =9 =7 =4 =2 =6 =9 =8 =1 =3 =5 \
             =8 =2 =4 =1 =6 =9 =7 =5 =3 56 =7 59 =4 =8 =3 69 =2 =1 \
             =3 69 =1 =5 =7 =2 69 =4 =8",
        );
        check(
            &c,
            bug,
            Technique::Bug,
            56,
            &[(1, 3, 7), (1, 3, 8)],
            "BUG type 1",
        );
    }

    #[test]
    fn bug_type_2() {
        let c = state(
            "=5 =1 =3 =6 =7 24 48 =9 28 =8 469 49 =3 24 =1 =5 =7 26 \
             =7 46 =2 =5 =8 =9 =3 46 =1 =9 =7 45 =1 =6 =3 48 =2 58 \
             =3 245 =8 =7 =9 24 =1 46 56 =6 24 =1 24 =5 =8 =7 =3 =9 \
             =2 59 59 =8 =3 =7 =6 =1 =4 =1 =8 =7 24 24 =6 =9 =5 =3 \
             =4 =3 =6 =9 =1 =5 =2 =8 =7",
        );
        check(
            &c,
            bug,
            Technique::Bug,
            57,
            &[(3, 2, 4), (6, 2, 4)],
            "BUG type 2: one of r2c2 and r5c2",
        );
    }

    #[test]
    fn bug_type_3_naked_triple() {
        let c = state(
            "35 67 =2 =8 46 =9 47 =1 35 14 39 169 =7 46 =5 =8 =2 36 \
             56 347 =8 23 23 =1 47 =9 56 =8 36 67 29 29 =4 13 =5 17 \
             =9 =1 37 =5 78 38 =2 =6 =4 =2 =5 =4 =1 37 =6 =9 37 =8 \
             67 =8 19 39 15 37 56 =4 =2 13 =2 36 =4 15 78 56 78 =9 \
             47 49 =5 =6 89 =2 13 38 17",
        );
        check(
            &c,
            bug,
            Technique::Bug,
            59,
            &[(1, 2, 6), (2, 2, 3)],
            "BUG type 3: one of r3c2 and r2c3",
        );
    }

    #[test]
    fn bug_type_4() {
        let c = state(
            "=7 =5 =3 =1 =4 =2 68 68 =9 =8 =4 =6 =9 57 =3 57 =1 =2 \
             =9 =1 =2 56 567 =8 =3 467 45 56 =2 =4 =8 56 =9 =1 =3 =7 \
             =3 =7 =1 56 =2 =4 56 =9 =8 56 =9 =8 =3 =1 =7 =2 46 45 \
             =2 =6 =9 =4 =3 =5 78 78 =1 =1 =8 =5 =7 =9 =6 =4 =2 =3 \
             =4 =3 =7 =2 =8 =1 =9 =5 =6",
        );
        check(
            &c,
            bug,
            Technique::Bug,
            57,
            &[(3, 5, 6), (3, 8, 4)],
            "BUG type 4: one of r3c5 and r3c8",
        );
    }

    #[test]
    fn rectangle_on_a_six_by_six_grid() {
        // Boxes of 2 rows by 3 columns; r1c1, r1c4, r2c1 hold {1,2},
        // r2c4 {1,2,3}; every other cell is open with all six digits.
        let shape = crate::puzzle::sized::Shape::new(2, 3).unwrap();
        let mut masks = vec![0b11_1111u64; 36];
        for x in [0, 3, 6] {
            masks[x] = 0b11;
        }
        masks[9] = 0b111;
        let c = Candidates::with_marks(&SizedGrid::empty(shape), &masks).unwrap();
        let s = first(&c, unique_loops).expect("a hint");
        assert_eq!(
            (s.technique, s.value, s.eliminations.as_slice()),
            (Technique::UniqueRectangle, 45, &[(9, 1), (9, 2)][..]),
            "{}",
            s.explanation
        );
        assert!(first(&c, bug).is_none());
    }
}
