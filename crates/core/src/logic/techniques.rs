//! The finders, one per technique. Each scans in a fixed order (units rows,
//! columns, boxes unless it says otherwise; cells and digits lowest first)
//! and stops at the first instance that changes the state: a placement, or
//! at least one elimination. None allocates beyond the reused [`Step`], and
//! explanations are written only when asked for.

// Unit and cell numbers are data here (they name units in steps), not just
// positions in the tables they index.
#![allow(clippy::needless_range_loop)]

use std::fmt::{self, Write};

use super::candidates::{
    ALL_DIGITS, CellSet, PEERS, UNIT_SETS, UNITS, bit, box_of, cells_of, col_of, digits_of, row_of,
};
use super::{Candidates, Step, Technique, UnitRef};

/// A cell as people write it: r3c5 (both from 1).
struct Rc(usize);

impl fmt::Display for Rc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}c{}", self.0 / 9 + 1, self.0 % 9 + 1)
    }
}

/// A set of cells as a list: r1c1, r1c5.
struct Cells(CellSet);

impl fmt::Display for Cells {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.count_ones() as usize;
        for (i, c) in cells_of(self.0).enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " and " } else { ", " })?;
            }
            write!(f, "{}", Rc(c))?;
        }
        Ok(())
    }
}

/// A digit set as people write it: {1,5}.
struct Digits(u16);

impl fmt::Display for Digits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, d) in digits_of(self.0).enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("}")
    }
}

/// A list of units as people write them: rows 1 and 4 / columns 2, 5 and 8.
struct Lines<'a>(&'a [usize]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.0[0] < 9 { "rows" } else { "columns" };
        write!(f, "{kind} ")?;
        for (i, &u) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == self.0.len() { " and " } else { ", " })?;
            }
            write!(f, "{}", u % 9 + 1)?;
        }
        Ok(())
    }
}

macro_rules! explain {
    ($f:expr, $($arg:tt)*) => {
        if $f.explain {
            let _ = write!($f.step.explanation, $($arg)*);
        }
    };
}

/// Calls `f` on each k-combination of 0..n (k at most 4) in lexicographic
/// order until it returns true; returns whether it did.
fn for_each_combo(n: usize, k: usize, mut f: impl FnMut(&[usize]) -> bool) -> bool {
    if k == 0 || k > n || k > 4 {
        return false;
    }
    let mut idx = [0usize; 4];
    for (i, slot) in idx.iter_mut().enumerate().take(k) {
        *slot = i;
    }
    loop {
        if f(&idx[..k]) {
            return true;
        }
        let mut i = k;
        loop {
            if i == 0 {
                return false;
            }
            i -= 1;
            if idx[i] < n - k + i {
                break;
            }
        }
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// The open cells holding each digit: index d-1 for digit d.
fn digit_sets(c: &Candidates) -> [CellSet; 9] {
    let mut s = [0u128; 9];
    for (cell, &m) in c.masks().iter().enumerate() {
        for d in digits_of(m) {
            s[d as usize - 1] |= 1u128 << cell;
        }
    }
    s
}

/// The set of the given cells.
fn set_of(cells: impl IntoIterator<Item = usize>) -> CellSet {
    cells.into_iter().fold(0, |s, c| s | 1u128 << c)
}

/// Runs one technique's finder and holds the step it found.
pub(crate) struct Finder {
    /// The step last found.
    pub(crate) step: Step,
    explain: bool,
}

impl Finder {
    /// A finder that writes explanations and justifying cells only when
    /// `explain` (rating needs neither).
    pub(crate) fn new(explain: bool) -> Finder {
        Finder {
            step: Step::empty(),
            explain,
        }
    }

    fn begin(&mut self, t: Technique) {
        let s = &mut self.step;
        s.technique = t;
        s.placements.clear();
        s.eliminations.clear();
        s.cells.clear();
        s.units.clear();
        s.explanation.clear();
    }

    fn cells(&mut self, set: CellSet) {
        self.step.cells.extend(cells_of(set).map(|c| c as u8));
    }

    fn eliminate_digit(&mut self, set: CellSet, d: u8) {
        self.step
            .eliminations
            .extend(cells_of(set).map(|c| (c as u8, d)));
    }

    /// Looks for an instance of `t` in `c`; true when one was found (it is
    /// in `self.step`).
    pub(crate) fn find(&mut self, t: Technique, c: &Candidates) -> bool {
        match t {
            Technique::FullHouse => self.full_house(c),
            Technique::HiddenSingle => self.hidden_single(c),
            Technique::NakedSingle => self.naked_single(c),
            Technique::Pointing => self.pointing(c),
            Technique::Claiming => self.claiming(c),
            Technique::NakedPair => self.naked_subset(c, 2, t),
            Technique::NakedTriple => self.naked_subset(c, 3, t),
            Technique::NakedQuad => self.naked_subset(c, 4, t),
            Technique::HiddenPair => self.hidden_subset(c, 2, t),
            Technique::HiddenTriple => self.hidden_subset(c, 3, t),
            Technique::HiddenQuad => self.hidden_subset(c, 4, t),
            Technique::XWing => self.fish(c, 2, t),
            Technique::Swordfish => self.fish(c, 3, t),
            Technique::Jellyfish => self.fish(c, 4, t),
            Technique::XyWing => self.xy_wing(c),
            Technique::XyzWing => self.xyz_wing(c),
            Technique::WWing => self.w_wing(c),
            Technique::SimpleColoring => self.simple_coloring(c),
            Technique::Search | Technique::MissingCandidate => false,
        }
    }

    /// The last empty cell of a unit takes the unit's missing digit.
    fn full_house(&mut self, c: &Candidates) -> bool {
        for u in 0..27 {
            let mut open = 0;
            let mut cell = 0;
            for &x in &UNITS[u] {
                if c.value(x as usize) == 0 {
                    open += 1;
                    cell = x as usize;
                }
            }
            if open != 1 {
                continue;
            }
            let missing = ALL_DIGITS & !c.placed_in(u);
            if missing.count_ones() != 1 || c.mask(cell) & missing == 0 {
                continue;
            }
            let d = missing.trailing_zeros() as u8 + 1;
            self.begin(Technique::FullHouse);
            self.step.placements.push((cell as u8, d));
            self.step.units.push(UnitRef::of(u));
            if self.explain {
                self.cells(UNIT_SETS[u] & !(1u128 << cell));
            }
            explain!(
                self,
                "{} is the last empty cell in {}: it takes {d}",
                Rc(cell),
                UnitRef::of(u)
            );
            return true;
        }
        false
    }

    /// A digit with one place left in a unit; boxes first, as SE rates a
    /// hidden single in a box easier.
    fn hidden_single(&mut self, c: &Candidates) -> bool {
        for u in (18..27).chain(0..18) {
            let (mut once, mut twice) = (0u16, 0u16);
            for &x in &UNITS[u] {
                let m = c.mask(x as usize);
                twice |= once & m;
                once |= m;
            }
            let single = once & !twice;
            if single == 0 {
                continue;
            }
            let d = single.trailing_zeros() as u8 + 1;
            let Some(&cell) = UNITS[u].iter().find(|&&x| c.mask(x as usize) & bit(d) != 0) else {
                continue;
            };
            let cell = cell as usize;
            self.begin(Technique::HiddenSingle);
            self.step.placements.push((cell as u8, d));
            self.step.units.push(UnitRef::of(u));
            if self.explain {
                // The placed d's that keep d out of the unit's other open cells.
                let mut blockers = 0u128;
                for &y in &UNITS[u] {
                    let y = y as usize;
                    if y == cell || c.value(y) != 0 {
                        continue;
                    }
                    if let Some(p) = cells_of(PEERS[y]).find(|&p| c.value(p) == d) {
                        blockers |= 1u128 << p;
                    }
                }
                self.cells(blockers);
            }
            explain!(
                self,
                "{} is the only cell in {} that can hold {d}",
                Rc(cell),
                UnitRef::of(u)
            );
            return true;
        }
        false
    }

    /// A cell with one candidate left.
    fn naked_single(&mut self, c: &Candidates) -> bool {
        let Some(cell) = (0..81).find(|&x| c.mask(x).count_ones() == 1) else {
            return false;
        };
        let d = c.mask(cell).trailing_zeros() as u8 + 1;
        self.begin(Technique::NakedSingle);
        self.step.placements.push((cell as u8, d));
        if self.explain {
            self.cells(set_of(cells_of(PEERS[cell]).filter(|&p| c.value(p) != 0)));
        }
        explain!(self, "{} has one candidate left: {d}", Rc(cell));
        true
    }

    /// A digit's places in a box on one line: the line outside the box loses it.
    fn pointing(&mut self, c: &Candidates) -> bool {
        let ds = digit_sets(c);
        for b in 0..9 {
            let boxset = UNIT_SETS[18 + b];
            for d in 1..=9u8 {
                let s = ds[d as usize - 1] & boxset;
                if s == 0 {
                    continue;
                }
                let first = s.trailing_zeros() as usize;
                for line in [row_of(first), 9 + col_of(first)] {
                    if s & UNIT_SETS[line] != s {
                        continue;
                    }
                    let elim = ds[d as usize - 1] & UNIT_SETS[line] & !boxset;
                    if elim == 0 {
                        continue;
                    }
                    self.begin(Technique::Pointing);
                    self.eliminate_digit(elim, d);
                    self.cells(s);
                    self.step.units.push(UnitRef::Box(b as u8));
                    self.step.units.push(UnitRef::of(line));
                    explain!(
                        self,
                        "in box {} the {d}s lie in {} only, so {} loses {d} outside the box",
                        b + 1,
                        UnitRef::of(line),
                        UnitRef::of(line)
                    );
                    return true;
                }
            }
        }
        false
    }

    /// A digit's places in a line inside one box: the box outside the line
    /// loses it.
    fn claiming(&mut self, c: &Candidates) -> bool {
        let ds = digit_sets(c);
        for line in 0..18 {
            for d in 1..=9u8 {
                let s = ds[d as usize - 1] & UNIT_SETS[line];
                if s == 0 {
                    continue;
                }
                let b = box_of(s.trailing_zeros() as usize);
                let boxset = UNIT_SETS[18 + b];
                if s & boxset != s {
                    continue;
                }
                let elim = ds[d as usize - 1] & boxset & !UNIT_SETS[line];
                if elim == 0 {
                    continue;
                }
                self.begin(Technique::Claiming);
                self.eliminate_digit(elim, d);
                self.cells(s);
                self.step.units.push(UnitRef::of(line));
                self.step.units.push(UnitRef::Box(b as u8));
                explain!(
                    self,
                    "in {} the {d}s lie in box {} only, so the rest of box {} loses {d}",
                    UnitRef::of(line),
                    b + 1,
                    b + 1
                );
                return true;
            }
        }
        false
    }

    /// k cells of a unit with k candidates between them: the unit's other
    /// cells lose those digits.
    fn naked_subset(&mut self, c: &Candidates, k: usize, t: Technique) -> bool {
        for u in 0..27 {
            let mut cells = [0usize; 9];
            let mut n = 0;
            let mut open = 0u128;
            for &x in &UNITS[u] {
                let x = x as usize;
                let p = c.mask(x).count_ones() as usize;
                if p > 0 {
                    open |= 1u128 << x;
                }
                if (2..=k).contains(&p) {
                    cells[n] = x;
                    n += 1;
                }
            }
            let found = for_each_combo(n, k, |idx| {
                let union = idx.iter().fold(0u16, |m, &i| m | c.mask(cells[i]));
                if union.count_ones() as usize != k {
                    return false;
                }
                let subset = set_of(idx.iter().map(|&i| cells[i]));
                let others = open & !subset;
                if !cells_of(others).any(|y| c.mask(y) & union != 0) {
                    return false;
                }
                self.begin(t);
                for y in cells_of(others) {
                    for d in digits_of(c.mask(y) & union) {
                        self.step.eliminations.push((y as u8, d));
                    }
                }
                self.cells(subset);
                self.step.units.push(UnitRef::of(u));
                explain!(
                    self,
                    "{} hold only {} between them, so the rest of {} loses those digits",
                    Cells(subset),
                    Digits(union),
                    UnitRef::of(u)
                );
                true
            });
            if found {
                return true;
            }
        }
        false
    }

    /// k digits confined to the same k cells of a unit: those cells lose
    /// their other digits.
    fn hidden_subset(&mut self, c: &Candidates, k: usize, t: Technique) -> bool {
        for u in 0..27 {
            let mut pos = [0u128; 9];
            for &x in &UNITS[u] {
                for d in digits_of(c.mask(x as usize)) {
                    pos[d as usize - 1] |= 1u128 << x;
                }
            }
            let mut digits = [0u8; 9];
            let mut n = 0;
            for d in 1..=9u8 {
                if (2..=k).contains(&(pos[d as usize - 1].count_ones() as usize)) {
                    digits[n] = d;
                    n += 1;
                }
            }
            let found = for_each_combo(n, k, |idx| {
                let cells = idx
                    .iter()
                    .fold(0u128, |s, &i| s | pos[digits[i] as usize - 1]);
                if cells.count_ones() as usize != k {
                    return false;
                }
                let keep = idx.iter().fold(0u16, |m, &i| m | bit(digits[i]));
                if !cells_of(cells).any(|y| c.mask(y) & !keep != 0) {
                    return false;
                }
                self.begin(t);
                for y in cells_of(cells) {
                    for d in digits_of(c.mask(y) & !keep) {
                        self.step.eliminations.push((y as u8, d));
                    }
                }
                self.cells(cells);
                self.step.units.push(UnitRef::of(u));
                explain!(
                    self,
                    "in {} the digits {} fit only in {}, so those cells lose their other candidates",
                    UnitRef::of(u),
                    Digits(keep),
                    Cells(cells)
                );
                true
            });
            if found {
                return true;
            }
        }
        false
    }

    /// A digit confined to k columns in k rows (or k rows in k columns): the
    /// cover lines lose it outside the base lines.
    fn fish(&mut self, c: &Candidates, k: usize, t: Technique) -> bool {
        let ds = digit_sets(c);
        for d in 1..=9u8 {
            let dc = ds[d as usize - 1];
            for by_rows in [true, false] {
                let mut lines = [0usize; 9];
                let mut covers = [0u16; 9];
                let mut n = 0;
                for i in 0..9 {
                    let base = if by_rows { i } else { 9 + i };
                    let s = dc & UNIT_SETS[base];
                    let cover = cells_of(s).fold(0u16, |m, x| {
                        m | 1 << if by_rows { col_of(x) } else { row_of(x) }
                    });
                    if (2..=k).contains(&(cover.count_ones() as usize)) {
                        lines[n] = base;
                        covers[n] = cover;
                        n += 1;
                    }
                }
                let found = for_each_combo(n, k, |idx| {
                    let cover = idx.iter().fold(0u16, |m, &i| m | covers[i]);
                    if cover.count_ones() as usize != k {
                        return false;
                    }
                    let base_set = idx.iter().fold(0u128, |s, &i| s | UNIT_SETS[lines[i]]);
                    let cover_set = (0..9)
                        .filter(|j| cover & 1 << j != 0)
                        .fold(0u128, |s, j| s | UNIT_SETS[if by_rows { 9 + j } else { j }]);
                    let elim = dc & cover_set & !base_set;
                    if elim == 0 {
                        return false;
                    }
                    self.begin(t);
                    self.eliminate_digit(elim, d);
                    self.cells(dc & base_set);
                    let mut base_lines = [0usize; 4];
                    let mut cover_lines = [0usize; 4];
                    for (slot, &i) in base_lines.iter_mut().zip(idx) {
                        *slot = lines[i];
                        self.step.units.push(UnitRef::of(lines[i]));
                    }
                    for (slot, j) in cover_lines
                        .iter_mut()
                        .zip((0..9).filter(|j| cover & 1 << j != 0))
                    {
                        *slot = if by_rows { 9 + j } else { j };
                        self.step.units.push(UnitRef::of(*slot));
                    }
                    explain!(
                        self,
                        "in {} the {d}s lie only in {}, so those {} lose {d} elsewhere",
                        Lines(&base_lines[..k]),
                        Lines(&cover_lines[..k]),
                        if by_rows { "columns" } else { "rows" }
                    );
                    true
                });
                if found {
                    return true;
                }
            }
        }
        false
    }

    /// Pivot {a,b}, pincers {a,z} and {b,z} that see it: whichever the pivot
    /// holds, one pincer is z, so cells seeing both pincers lose z.
    fn xy_wing(&mut self, c: &Candidates) -> bool {
        let ds = digit_sets(c);
        let bivalue = set_of((0..81).filter(|&x| c.mask(x).count_ones() == 2));
        for p in cells_of(bivalue) {
            let mp = c.mask(p);
            for q1 in cells_of(bivalue & PEERS[p]) {
                let m1 = c.mask(q1);
                if (m1 & mp).count_ones() != 1 {
                    continue;
                }
                let z = m1 & !mp;
                let need = (mp & !m1) | z;
                for q2 in cells_of(bivalue & PEERS[p]) {
                    if q2 == q1 || c.mask(q2) != need {
                        continue;
                    }
                    let zd = z.trailing_zeros() as u8 + 1;
                    let elim = ds[zd as usize - 1] & PEERS[q1] & PEERS[q2] & !(1u128 << p);
                    if elim == 0 {
                        continue;
                    }
                    self.begin(Technique::XyWing);
                    self.eliminate_digit(elim, zd);
                    self.cells(1u128 << p | 1u128 << q1 | 1u128 << q2);
                    explain!(
                        self,
                        "pivot {} {} with pincers {} {} and {} {}: one pincer is {zd}, so cells seeing both lose {zd}",
                        Rc(p),
                        Digits(mp),
                        Rc(q1),
                        Digits(m1),
                        Rc(q2),
                        Digits(need)
                    );
                    return true;
                }
            }
        }
        false
    }

    /// Pivot {a,b,z}, pincers {a,z} and {b,z} that see it: one of the three
    /// is z, so cells seeing all three lose z.
    fn xyz_wing(&mut self, c: &Candidates) -> bool {
        let ds = digit_sets(c);
        let bivalue = set_of((0..81).filter(|&x| c.mask(x).count_ones() == 2));
        for p in (0..81).filter(|&x| c.mask(x).count_ones() == 3) {
            let mp = c.mask(p);
            for q1 in cells_of(bivalue & PEERS[p]) {
                let m1 = c.mask(q1);
                if m1 & !mp != 0 {
                    continue;
                }
                for q2 in cells_of(bivalue & PEERS[p]) {
                    let m2 = c.mask(q2);
                    if q2 <= q1 || m2 & !mp != 0 || m1 | m2 != mp {
                        continue;
                    }
                    let z = m1 & m2;
                    let zd = z.trailing_zeros() as u8 + 1;
                    let elim = ds[zd as usize - 1] & PEERS[p] & PEERS[q1] & PEERS[q2];
                    if elim == 0 {
                        continue;
                    }
                    self.begin(Technique::XyzWing);
                    self.eliminate_digit(elim, zd);
                    self.cells(1u128 << p | 1u128 << q1 | 1u128 << q2);
                    explain!(
                        self,
                        "pivot {} {} with pincers {} {} and {} {}: one of them is {zd}, so cells seeing all three lose {zd}",
                        Rc(p),
                        Digits(mp),
                        Rc(q1),
                        Digits(m1),
                        Rc(q2),
                        Digits(m2)
                    );
                    return true;
                }
            }
        }
        false
    }

    /// Two cells {a,b} that do not see each other, and a unit where a has
    /// exactly two places, one seen by each: one of the two cells is b, so
    /// cells seeing both lose b.
    fn w_wing(&mut self, c: &Candidates) -> bool {
        let ds = digit_sets(c);
        let bivalue = set_of((0..81).filter(|&x| c.mask(x).count_ones() == 2));
        for x in cells_of(bivalue) {
            let mx = c.mask(x);
            for y in cells_of(bivalue & !PEERS[x]) {
                if y <= x || c.mask(y) != mx {
                    continue;
                }
                let common = PEERS[x] & PEERS[y];
                let pair = 1u128 << x | 1u128 << y;
                for a in digits_of(mx) {
                    let b = (mx & !bit(a)).trailing_zeros() as u8 + 1;
                    let elim = ds[b as usize - 1] & common;
                    if elim == 0 {
                        continue;
                    }
                    for u in 0..27 {
                        let s = ds[a as usize - 1] & UNIT_SETS[u];
                        if s.count_ones() != 2 || s & pair != 0 {
                            continue;
                        }
                        let p = s.trailing_zeros() as usize;
                        let q = 127 - s.leading_zeros() as usize;
                        let sees = |i: usize, j: usize| PEERS[i] & (1u128 << j) != 0;
                        if !((sees(x, p) && sees(y, q)) || (sees(x, q) && sees(y, p))) {
                            continue;
                        }
                        self.begin(Technique::WWing);
                        self.eliminate_digit(elim, b);
                        self.cells(pair | s);
                        self.step.units.push(UnitRef::of(u));
                        explain!(
                            self,
                            "{} and {} are both {}, and in {} the {a} is in {} or {}, one seen by each: one of them is {b}, so cells seeing both lose {b}",
                            Rc(x),
                            Rc(y),
                            Digits(mx),
                            UnitRef::of(u),
                            Rc(p),
                            Rc(q)
                        );
                        return true;
                    }
                }
            }
        }
        false
    }

    /// A digit's conjugate pairs (units where it has two places) joined
    /// into chains and coloured in turn: two cells of one colour in a unit
    /// make that colour false (wrap); a cell seeing both colours cannot
    /// hold the digit (trap).
    fn simple_coloring(&mut self, c: &Candidates) -> bool {
        let ds = digit_sets(c);
        for d in 1..=9u8 {
            let dc = ds[d as usize - 1];
            let mut adj = [0u128; 81];
            let mut linked = 0u128;
            for set in UNIT_SETS {
                let s = dc & set;
                if s.count_ones() == 2 {
                    let p = s.trailing_zeros() as usize;
                    let q = 127 - s.leading_zeros() as usize;
                    adj[p] |= 1u128 << q;
                    adj[q] |= 1u128 << p;
                    linked |= s;
                }
            }
            let mut seen = 0u128;
            for start in cells_of(linked) {
                if seen & (1u128 << start) != 0 {
                    continue;
                }
                let (mut on, mut off) = (1u128 << start, 0u128);
                let mut todo = on;
                while todo != 0 {
                    let mut new_off = 0u128;
                    for x in cells_of(todo) {
                        new_off |= adj[x];
                    }
                    new_off &= !off;
                    off |= new_off;
                    let mut new_on = 0u128;
                    for x in cells_of(new_off) {
                        new_on |= adj[x];
                    }
                    new_on &= !on;
                    on |= new_on;
                    todo = new_on;
                }
                seen |= on | off;
                if on & off != 0 {
                    // An odd cycle of conjugate pairs: the state is already
                    // contradictory; nothing sound to say.
                    continue;
                }
                let chain = on | off;
                for (colour, other) in [(on, off), (off, on)] {
                    let Some(u) = (0..27).find(|&u| (colour & UNIT_SETS[u]).count_ones() >= 2)
                    else {
                        continue;
                    };
                    self.begin(Technique::SimpleColoring);
                    self.eliminate_digit(colour, d);
                    self.cells(chain);
                    self.step.units.push(UnitRef::of(u));
                    let two = colour & UNIT_SETS[u];
                    explain!(
                        self,
                        "colouring the chain of {d}s {}: {} share a colour and {}, so that colour is false and {} hold {d}",
                        Cells(chain),
                        Cells(two),
                        UnitRef::of(u),
                        Cells(other)
                    );
                    return true;
                }
                let mut trapped = 0u128;
                for x in cells_of(dc & !chain) {
                    if PEERS[x] & on != 0 && PEERS[x] & off != 0 {
                        trapped |= 1u128 << x;
                    }
                }
                if trapped != 0 {
                    self.begin(Technique::SimpleColoring);
                    self.eliminate_digit(trapped, d);
                    self.cells(chain);
                    explain!(
                        self,
                        "colouring the chain of {d}s {}: {} see both colours, and one colour holds {d}, so they lose {d}",
                        Cells(chain),
                        Cells(trapped)
                    );
                    return true;
                }
            }
        }
        false
    }
}
