//! The finders, one per technique, each written once over the units of any
//! shape. Each scans in a fixed order (units rows, columns, boxes unless it
//! says otherwise; cells and digits lowest first) and stops at the first
//! instance that changes the state: a placement, or at least one
//! elimination. Explanations are written only when asked for.

use std::fmt::{self, Write};

use super::candidates::{Layout, all_digits, bit, bits_of, digits_of};
use super::{Candidates, Step, Technique, UnitRef};
use crate::puzzle::sized::value_mask;

/// A cell as people write it: r3c5 (both from 1).
pub(crate) struct Rc(pub(crate) usize, pub(crate) usize);

impl fmt::Display for Rc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}c{}", self.0 / self.1 + 1, self.0 % self.1 + 1)
    }
}

/// A list of cells as people write it: r1c1, r1c5 and r2c3.
pub(crate) struct Cells<'a>(pub(crate) &'a [usize], pub(crate) usize);

impl fmt::Display for Cells<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        for (i, &c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " and " } else { ", " })?;
            }
            write!(f, "{}", Rc(c, self.1))?;
        }
        Ok(())
    }
}

/// A digit set as people write it: {1,5}.
pub(crate) struct Digits(pub(crate) u64);

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

/// Lines as people write them: rows 1 and 4 / columns 2, 5 and 8. `rows`
/// says which; the mask holds the lines' indices.
pub(crate) struct Lines(pub(crate) bool, pub(crate) u64);

impl fmt::Display for Lines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0 { "rows " } else { "columns " })?;
        let n = self.1.count_ones() as usize;
        for (i, line) in bits_of(self.1).enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " and " } else { ", " })?;
            }
            write!(f, "{}", line + 1)?;
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

/// Depth-first search for `k` of `items` (masks) whose union has exactly
/// `k` bits, in lexicographic order of their indices; a branch whose union
/// already has more than `k` bits is cut, so large units stay cheap. Calls
/// `found` on each such choice (indices ascending) until it returns true;
/// returns whether it did.
fn choose<F: FnMut(&[usize], u64) -> bool>(items: &[u64], k: usize, found: &mut F) -> bool {
    /// The choice so far: at most four (quads and jellyfish).
    struct Picked {
        at: [usize; 4],
        len: usize,
    }
    fn go<F: FnMut(&[usize], u64) -> bool>(
        items: &[u64],
        k: usize,
        start: usize,
        union: u64,
        picked: &mut Picked,
        found: &mut F,
    ) -> bool {
        if picked.len == k {
            return union.count_ones() as usize == k && found(&picked.at[..k], union);
        }
        let need = k - picked.len;
        for i in start..items.len() {
            if items.len() - i < need {
                break;
            }
            let u = union | items[i];
            if u.count_ones() as usize > k {
                continue;
            }
            picked.at[picked.len] = i;
            picked.len += 1;
            if go(items, k, i + 1, u, picked, found) {
                return true;
            }
            picked.len -= 1;
        }
        false
    }
    if k == 0 || k > 4 || k > items.len() {
        return false;
    }
    let mut picked = Picked { at: [0; 4], len: 0 };
    go(items, k, 0, 0, &mut picked, found)
}

/// The unit of internal index `u` of a side-`n` layout.
fn unit_ref(u: usize, n: usize) -> UnitRef {
    UnitRef::of(u, n)
}

/// Runs one technique's finder and holds the step it found.
pub(crate) struct Finder {
    /// The step last found.
    pub(crate) step: Step,
    explain: bool,
    /// Scratch lists, reused.
    a: Vec<usize>,
    b: Vec<usize>,
    masks: Vec<u64>,
    /// Where each digit can go in each unit: `places[u * n + d - 1]` has
    /// bit i set when the unit's i-th cell holds candidate d. Filled once
    /// per state, by the first finder that needs it ([`Finder::reset`]
    /// marks it stale).
    places: Vec<u64>,
    places_ready: bool,
    colouring: Colouring,
}

/// Simple colouring's per-cell tables, kept between calls: each cell's
/// conjugate partners (at most one a unit), its colour (0 none, 1 on, 2
/// off), each unit's count of cells of each colour, and the colours of the
/// chain cells each cell sees (bits 1 and 2). All clean between calls.
#[derive(Default)]
struct Colouring {
    adj: Vec<[u16; 3]>,
    colour: Vec<u8>,
    per_unit: Vec<[u8; 2]>,
    sees: Vec<u8>,
}

impl Finder {
    /// A finder that writes explanations and justifying cells only when
    /// `explain` (rating needs neither).
    pub(crate) fn new(explain: bool) -> Finder {
        Finder {
            step: Step::empty(),
            explain,
            a: Vec::new(),
            b: Vec::new(),
            masks: Vec::new(),
            places: Vec::new(),
            places_ready: false,
            colouring: Colouring::default(),
        }
    }

    /// Marks what the finder knows of the last state stale: call before
    /// looking at a new or changed state.
    pub(crate) fn reset(&mut self) {
        self.places_ready = false;
    }

    /// Fills [`Finder::places`] for `c`, unless it is ready.
    fn ensure_places(&mut self, c: &Candidates) {
        if self.places_ready {
            return;
        }
        let l = c.layout();
        let n = l.n();
        self.places.clear();
        self.places.resize(3 * n * n, 0);
        for (x, &m) in c.masks().iter().enumerate() {
            if m == 0 {
                continue;
            }
            let units = l.units_of(x);
            let at = l.places_of(x);
            for k in 0..3 {
                let row = &mut self.places[units[k] as usize * n..][..n];
                let b = 1u64 << at[k];
                let mut m = m;
                while m != 0 {
                    row[m.trailing_zeros() as usize] |= b;
                    m &= m - 1;
                }
            }
        }
        self.places_ready = true;
    }

    /// The places of `d` in unit `u` (see [`Finder::places`]).
    #[inline]
    fn at(&self, n: usize, u: usize, d: u8) -> u64 {
        self.places[u * n + d as usize - 1]
    }

    /// The cells of unit `u` at `positions`, ascending, into `out`.
    fn cells_at(l: &Layout, u: usize, positions: u64, out: &mut Vec<usize>) {
        out.clear();
        let unit = l.unit(u);
        out.extend(bits_of(positions).map(|i| unit[i] as usize));
        out.sort_unstable();
    }

    fn begin(&mut self, t: Technique) {
        let s = &mut self.step;
        s.technique = t;
        s.value = (t.se_rating() * 10.0).round() as u16;
        s.placements.clear();
        s.eliminations.clear();
        s.restorations.clear();
        s.cells.clear();
        s.units.clear();
        s.explanation.clear();
    }

    fn cells(&mut self, cells: &[usize]) {
        if self.explain {
            self.step.cells.extend(cells.iter().map(|&c| c as u16));
        }
    }

    fn eliminate_digit(&mut self, cells: &[usize], d: u8) {
        self.step
            .eliminations
            .extend(cells.iter().map(|&c| (c as u16, d)));
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
            // Sudoku Explainer's own ladder finds the rest (`super::se`).
            _ => false,
        }
    }

    /// The last empty cell of a unit takes the unit's missing digit.
    fn full_house(&mut self, c: &Candidates) -> bool {
        let l = c.layout();
        let n = l.n();
        let values = c.values();
        for u in 0..l.unit_count() {
            // A unit with all digits but one placed has one open cell.
            if c.placed_in(u).count_ones() as usize + 1 != n {
                continue;
            }
            let Some(cell) = l
                .unit(u)
                .iter()
                .map(|&x| x as usize)
                .find(|&x| values[x] == 0)
            else {
                continue;
            };
            let missing = all_digits(n) & !c.placed_in(u);
            if missing.count_ones() != 1 || c.mask(cell) & missing == 0 {
                continue;
            }
            let d = missing.trailing_zeros() as u8 + 1;
            self.begin(Technique::FullHouse);
            self.step.placements.push((cell as u16, d));
            self.step.units.push(unit_ref(u, n));
            if self.explain {
                self.a.clear();
                self.a
                    .extend(l.unit(u).iter().map(|&x| x as usize).filter(|&x| x != cell));
                let others = std::mem::take(&mut self.a);
                self.cells(&others);
                self.a = others;
            }
            explain!(
                self,
                "{} is the last empty cell in {}: it takes {d}",
                Rc(cell, n),
                unit_ref(u, n)
            );
            return true;
        }
        false
    }

    /// A digit with one place left in a unit; boxes first, as SE rates a
    /// hidden single in a box easier.
    fn hidden_single(&mut self, c: &Candidates) -> bool {
        let l = c.layout();
        let n = l.n();
        for u in (2 * n..3 * n).chain(0..2 * n) {
            let (mut once, mut twice) = (0u64, 0u64);
            for &x in l.unit(u) {
                let m = c.mask(x as usize);
                twice |= once & m;
                once |= m;
            }
            let single = once & !twice;
            if single == 0 {
                continue;
            }
            let d = single.trailing_zeros() as u8 + 1;
            let Some(&cell) = l
                .unit(u)
                .iter()
                .find(|&&x| c.mask(x as usize) & bit(d) != 0)
            else {
                continue;
            };
            let cell = cell as usize;
            self.begin(Technique::HiddenSingle);
            self.step.placements.push((cell as u16, d));
            self.step.units.push(unit_ref(u, n));
            if self.explain {
                // The placed d's that keep d out of the unit's other open cells.
                let mut blockers = Vec::new();
                for &y in l.unit(u) {
                    let y = y as usize;
                    if y == cell || c.value(y) != 0 {
                        continue;
                    }
                    if let Some(p) = l.peers(y).find(|&p| c.value(p) == d) {
                        blockers.push(p);
                    }
                }
                blockers.sort_unstable();
                blockers.dedup();
                self.cells(&blockers);
            }
            explain!(
                self,
                "{} is the only cell in {} that can hold {d}",
                Rc(cell, n),
                unit_ref(u, n)
            );
            return true;
        }
        false
    }

    /// A cell with one candidate left.
    fn naked_single(&mut self, c: &Candidates) -> bool {
        let l = c.layout();
        let n = l.n();
        let Some(cell) = (0..n * n).find(|&x| c.mask(x).count_ones() == 1) else {
            return false;
        };
        let d = c.mask(cell).trailing_zeros() as u8 + 1;
        self.begin(Technique::NakedSingle);
        self.step.placements.push((cell as u16, d));
        if self.explain {
            let mut placed = Vec::new();
            l.sorted_peers(cell, &mut placed);
            placed.retain(|&p| c.value(p) != 0);
            self.cells(&placed);
        }
        explain!(self, "{} has one candidate left: {d}", Rc(cell, n));
        true
    }

    /// A digit's places in a box on one line: the line outside the box loses it.
    fn pointing(&mut self, c: &Candidates) -> bool {
        self.ensure_places(c);
        let l = c.layout();
        let s = l.shape();
        let n = l.n();
        let (br, bc) = (s.box_rows(), s.box_cols());
        let per_band = n / bc;
        let (mut on, mut elim) = (std::mem::take(&mut self.a), std::mem::take(&mut self.b));
        let mut found = false;
        'boxes: for b in 0..n {
            let (r0, c0) = (b / per_band * br, b % per_band * bc);
            for d in 1..=n as u8 {
                let p = self.at(n, 2 * n + b, d);
                if p == 0 {
                    continue;
                }
                let first = p.trailing_zeros() as usize;
                let (lr, lc) = (first / bc, first % bc);
                // The box's local row lr, and its local column lc.
                let row_bits = value_mask(bc) << (lr * bc);
                let col_bits = (0..br).fold(0u64, |m, k| m | 1 << (k * bc + lc));
                let lines = [
                    (p & !row_bits == 0, r0 + lr, value_mask(bc) << c0),
                    (p & !col_bits == 0, n + c0 + lc, value_mask(br) << r0),
                ];
                for (inside, line, in_box) in lines {
                    if !inside {
                        continue;
                    }
                    let out = self.at(n, line, d) & !in_box;
                    if out == 0 {
                        continue;
                    }
                    Self::cells_at(l, line, out, &mut elim);
                    Self::cells_at(l, 2 * n + b, p, &mut on);
                    self.begin(Technique::Pointing);
                    self.eliminate_digit(&elim, d);
                    self.cells(&on);
                    self.step.units.push(UnitRef::Box(b as u8));
                    self.step.units.push(unit_ref(line, n));
                    explain!(
                        self,
                        "in box {} the {d}s lie in {} only, so {} loses {d} outside the box",
                        b + 1,
                        unit_ref(line, n),
                        unit_ref(line, n)
                    );
                    found = true;
                    break 'boxes;
                }
            }
        }
        (self.a, self.b) = (on, elim);
        found
    }

    /// A digit's places in a line inside one box: the box outside the line
    /// loses it.
    fn claiming(&mut self, c: &Candidates) -> bool {
        self.ensure_places(c);
        let l = c.layout();
        let s = l.shape();
        let n = l.n();
        let (br, bc) = (s.box_rows(), s.box_cols());
        let per_band = n / bc;
        let (mut on, mut elim) = (std::mem::take(&mut self.a), std::mem::take(&mut self.b));
        let mut found = false;
        'lines: for line in 0..2 * n {
            let (is_row, i) = (line < n, line % n);
            // A row's places are columns, cut in segments of bc by the
            // boxes; a column's are rows, cut in segments of br.
            let seg = if is_row { bc } else { br };
            for d in 1..=n as u8 {
                let p = self.at(n, line, d);
                if p == 0 {
                    continue;
                }
                let k = p.trailing_zeros() as usize / seg;
                if p & !(value_mask(seg) << (k * seg)) != 0 {
                    continue;
                }
                let (b, on_line) = if is_row {
                    (i / br * per_band + k, value_mask(bc) << (i % br * bc))
                } else {
                    let lc = i % bc;
                    let bits = (0..br).fold(0u64, |m, r| m | 1 << (r * bc + lc));
                    (k * per_band + i / bc, bits)
                };
                let out = self.at(n, 2 * n + b, d) & !on_line;
                if out == 0 {
                    continue;
                }
                Self::cells_at(l, 2 * n + b, out, &mut elim);
                Self::cells_at(l, line, p, &mut on);
                self.begin(Technique::Claiming);
                self.eliminate_digit(&elim, d);
                self.cells(&on);
                self.step.units.push(unit_ref(line, n));
                self.step.units.push(UnitRef::Box(b as u8));
                explain!(
                    self,
                    "in {} the {d}s lie in box {} only, so the rest of box {} loses {d}",
                    unit_ref(line, n),
                    b + 1,
                    b + 1
                );
                found = true;
                break 'lines;
            }
        }
        (self.a, self.b) = (on, elim);
        found
    }

    /// The subsets of size k in each unit, written once for naked and
    /// hidden sets: `items` lists a unit's candidates for the set (their
    /// ids and masks), and `apply` makes the step of k of them whose masks
    /// have k bits between them, or says there is nothing to remove.
    fn unit_subsets(
        &mut self,
        c: &Candidates,
        k: usize,
        items: impl Fn(&Finder, usize, &mut Vec<usize>, &mut Vec<u64>),
        mut apply: impl FnMut(&mut Finder, usize, &[usize], u64) -> bool,
    ) -> bool {
        let mut ids = std::mem::take(&mut self.a);
        let mut masks = std::mem::take(&mut self.masks);
        let mut found = false;
        for u in 0..c.layout().unit_count() {
            ids.clear();
            masks.clear();
            items(self, u, &mut ids, &mut masks);
            found = choose(&masks, k, &mut |idx, union| {
                let mut chosen = [0usize; 4];
                for (slot, &i) in chosen.iter_mut().zip(idx) {
                    *slot = ids[i];
                }
                apply(self, u, &chosen[..idx.len()], union)
            });
            if found {
                break;
            }
        }
        self.a = ids;
        self.masks = masks;
        found
    }

    /// k cells of a unit with k candidates between them: the unit's other
    /// cells lose those digits.
    fn naked_subset(&mut self, c: &Candidates, k: usize, t: Technique) -> bool {
        let l = c.layout();
        let n = l.n();
        let items = |_: &Finder, u: usize, ids: &mut Vec<usize>, masks: &mut Vec<u64>| {
            for &x in l.unit(u) {
                let m = c.mask(x as usize);
                if (2..=k).contains(&(m.count_ones() as usize)) {
                    ids.push(x as usize);
                    masks.push(m);
                }
            }
        };
        self.unit_subsets(c, k, items, |f, u, subset, union| {
            let mut others: Vec<usize> = l.unit(u).iter().map(|&y| y as usize).collect();
            others.retain(|y| !subset.contains(y) && c.mask(*y) & union != 0);
            if others.is_empty() {
                return false;
            }
            others.sort_unstable();
            f.begin(t);
            for &y in &others {
                for d in digits_of(c.mask(y) & union) {
                    f.step.eliminations.push((y as u16, d));
                }
            }
            let mut subset = subset.to_vec();
            subset.sort_unstable();
            f.cells(&subset);
            f.step.units.push(unit_ref(u, n));
            explain!(
                f,
                "{} hold only {} between them, so the rest of {} loses those digits",
                Cells(&subset, n),
                Digits(union),
                unit_ref(u, n)
            );
            true
        })
    }

    /// k digits confined to the same k cells of a unit: those cells lose
    /// their other digits.
    fn hidden_subset(&mut self, c: &Candidates, k: usize, t: Technique) -> bool {
        self.ensure_places(c);
        let l = c.layout();
        let n = l.n();
        let items = |f: &Finder, u: usize, ids: &mut Vec<usize>, masks: &mut Vec<u64>| {
            for d in 1..=n as u8 {
                let places = f.at(n, u, d);
                if (2..=k).contains(&(places.count_ones() as usize)) {
                    ids.push(usize::from(d));
                    masks.push(places);
                }
            }
        };
        self.unit_subsets(c, k, items, |f, u, digits, positions| {
            let unit = l.unit(u);
            let keep = digits.iter().fold(0u64, |m, &d| m | bit(d as u8));
            let mut cells: Vec<usize> = bits_of(positions).map(|i| unit[i] as usize).collect();
            cells.sort_unstable();
            if !cells.iter().any(|&y| c.mask(y) & !keep != 0) {
                return false;
            }
            f.begin(t);
            for &y in &cells {
                for d in digits_of(c.mask(y) & !keep) {
                    f.step.eliminations.push((y as u16, d));
                }
            }
            f.cells(&cells);
            f.step.units.push(unit_ref(u, n));
            explain!(
                f,
                "in {} the digits {} fit only in {}, so those cells lose their other candidates",
                unit_ref(u, n),
                Digits(keep),
                Cells(&cells, n)
            );
            true
        })
    }

    /// A digit confined to k columns in k rows (or k rows in k columns): the
    /// cover lines lose it outside the base lines.
    fn fish(&mut self, c: &Candidates, k: usize, t: Technique) -> bool {
        self.ensure_places(c);
        let l = c.layout();
        let n = l.n();
        let mut lines = std::mem::take(&mut self.a);
        let mut covers = std::mem::take(&mut self.masks);
        let mut found = false;
        'digits: for d in 1..=n as u8 {
            for by_rows in [true, false] {
                lines.clear();
                covers.clear();
                for i in 0..n {
                    // The base line's cells with d, as positions across it
                    // (a row's are columns, a column's rows).
                    let base = if by_rows { i } else { n + i };
                    let cover = self.at(n, base, d);
                    if (2..=k).contains(&(cover.count_ones() as usize)) {
                        lines.push(i);
                        covers.push(cover);
                    }
                }
                found = choose(&covers, k, &mut |idx, cover| {
                    let base = idx.iter().fold(0u64, |m, &i| m | 1 << lines[i]);
                    // Cells of the cover lines with d, outside the base lines.
                    let at = |line: usize, across: usize| {
                        if by_rows {
                            across * n + line
                        } else {
                            line * n + across
                        }
                    };
                    let mut elim = Vec::new();
                    for j in bits_of(cover) {
                        for i in 0..n {
                            let x = at(j, i);
                            if base & 1 << i == 0 && c.mask(x) & bit(d) != 0 {
                                elim.push(x);
                            }
                        }
                    }
                    if elim.is_empty() {
                        return false;
                    }
                    elim.sort_unstable();
                    self.begin(t);
                    self.eliminate_digit(&elim, d);
                    if self.explain {
                        let mut fins = Vec::new();
                        for i in bits_of(base) {
                            for j in bits_of(cover) {
                                let x = at(j, i);
                                if c.mask(x) & bit(d) != 0 {
                                    fins.push(x);
                                }
                            }
                        }
                        fins.sort_unstable();
                        self.cells(&fins);
                    }
                    let (base_kind, cover_kind) = if by_rows { (0, n) } else { (n, 0) };
                    for i in bits_of(base) {
                        self.step.units.push(unit_ref(base_kind + i, n));
                    }
                    for j in bits_of(cover) {
                        self.step.units.push(unit_ref(cover_kind + j, n));
                    }
                    explain!(
                        self,
                        "in {} the {d}s lie only in {}, so those {} lose {d} elsewhere",
                        Lines(by_rows, base),
                        Lines(!by_rows, cover),
                        if by_rows { "columns" } else { "rows" }
                    );
                    true
                });
                if found {
                    break 'digits;
                }
            }
        }
        self.a = lines;
        self.masks = covers;
        found
    }

    /// The cells holding `d` that see every cell of `seen` (and are none of
    /// them), ascending.
    fn seeing_all(l: &Layout, c: &Candidates, d: u8, seen: &[usize]) -> Vec<usize> {
        let mut out: Vec<usize> = l
            .peers(seen[0])
            .filter(|&x| c.mask(x) & bit(d) != 0 && seen[1..].iter().all(|&s| l.sees(x, s)))
            .collect();
        out.sort_unstable();
        out
    }

    /// The open cells with exactly `k` candidates, ascending.
    fn with_count(c: &Candidates, k: u32) -> Vec<usize> {
        (0..c.masks().len())
            .filter(|&x| c.mask(x).count_ones() == k)
            .collect()
    }

    /// Pivot {a,b}, pincers {a,z} and {b,z} that see it: whichever the pivot
    /// holds, one pincer is z, so cells seeing both pincers lose z.
    fn xy_wing(&mut self, c: &Candidates) -> bool {
        let l = c.layout();
        let n = l.n();
        let bivalue = Self::with_count(c, 2);
        for &p in &bivalue {
            let mp = c.mask(p);
            for &q1 in bivalue.iter().filter(|&&q| l.sees(p, q)) {
                let m1 = c.mask(q1);
                if (m1 & mp).count_ones() != 1 {
                    continue;
                }
                let z = m1 & !mp;
                let need = (mp & !m1) | z;
                for &q2 in bivalue.iter().filter(|&&q| l.sees(p, q)) {
                    if q2 == q1 || c.mask(q2) != need {
                        continue;
                    }
                    let zd = z.trailing_zeros() as u8 + 1;
                    let mut elim = Self::seeing_all(l, c, zd, &[q1, q2]);
                    elim.retain(|&x| x != p);
                    if elim.is_empty() {
                        continue;
                    }
                    self.begin(Technique::XyWing);
                    self.eliminate_digit(&elim, zd);
                    let mut three = [p, q1, q2];
                    three.sort_unstable();
                    self.cells(&three);
                    explain!(
                        self,
                        "pivot {} {} with pincers {} {} and {} {}: one pincer is {zd}, so cells seeing both lose {zd}",
                        Rc(p, n),
                        Digits(mp),
                        Rc(q1, n),
                        Digits(m1),
                        Rc(q2, n),
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
        let l = c.layout();
        let n = l.n();
        let bivalue = Self::with_count(c, 2);
        for p in Self::with_count(c, 3) {
            let mp = c.mask(p);
            for &q1 in bivalue.iter().filter(|&&q| l.sees(p, q)) {
                let m1 = c.mask(q1);
                if m1 & !mp != 0 {
                    continue;
                }
                for &q2 in bivalue.iter().filter(|&&q| l.sees(p, q)) {
                    let m2 = c.mask(q2);
                    if q2 <= q1 || m2 & !mp != 0 || m1 | m2 != mp {
                        continue;
                    }
                    let zd = (m1 & m2).trailing_zeros() as u8 + 1;
                    let elim = Self::seeing_all(l, c, zd, &[p, q1, q2]);
                    if elim.is_empty() {
                        continue;
                    }
                    self.begin(Technique::XyzWing);
                    self.eliminate_digit(&elim, zd);
                    let mut three = [p, q1, q2];
                    three.sort_unstable();
                    self.cells(&three);
                    explain!(
                        self,
                        "pivot {} {} with pincers {} {} and {} {}: one of them is {zd}, so cells seeing all three lose {zd}",
                        Rc(p, n),
                        Digits(mp),
                        Rc(q1, n),
                        Digits(m1),
                        Rc(q2, n),
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
        self.ensure_places(c);
        let l = c.layout();
        let n = l.n();
        let bivalue = Self::with_count(c, 2);
        let mut two = Vec::new();
        for &x in &bivalue {
            let mx = c.mask(x);
            for &y in &bivalue {
                if y <= x || c.mask(y) != mx || l.sees(x, y) {
                    continue;
                }
                for a in digits_of(mx) {
                    let b = (mx & !bit(a)).trailing_zeros() as u8 + 1;
                    let elim = Self::seeing_all(l, c, b, &[x, y]);
                    if elim.is_empty() {
                        continue;
                    }
                    for u in 0..l.unit_count() {
                        let places = self.at(n, u, a);
                        if places.count_ones() != 2 {
                            continue;
                        }
                        Self::cells_at(l, u, places, &mut two);
                        if two.contains(&x) || two.contains(&y) {
                            continue;
                        }
                        let (p, q) = (two[0], two[1]);
                        if !((l.sees(x, p) && l.sees(y, q)) || (l.sees(x, q) && l.sees(y, p))) {
                            continue;
                        }
                        self.begin(Technique::WWing);
                        self.eliminate_digit(&elim, b);
                        let mut four = [x, y, p, q];
                        four.sort_unstable();
                        self.cells(&four);
                        self.step.units.push(unit_ref(u, n));
                        explain!(
                            self,
                            "{} and {} are both {}, and in {} the {a} is in {} or {}, one seen by each: one of them is {b}, so cells seeing both lose {b}",
                            Rc(x, n),
                            Rc(y, n),
                            Digits(mx),
                            unit_ref(u, n),
                            Rc(p, n),
                            Rc(q, n)
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
        self.ensure_places(c);
        let l = c.layout();
        let n = l.n();
        let cells = n * n;
        // The scratch, kept between calls and left clean by each.
        let mut scratch = std::mem::take(&mut self.colouring);
        if scratch.colour.len() != cells {
            scratch = Colouring {
                adj: vec![[u16::MAX; 3]; cells],
                colour: vec![0; cells],
                per_unit: vec![[0; 2]; 3 * n],
                sees: vec![0; cells],
            };
        }
        let found = self.colour_digits(c, &mut scratch);
        self.colouring = scratch;
        found
    }

    /// [`Finder::simple_coloring`] with its scratch.
    fn colour_digits(&mut self, c: &Candidates, scratch: &mut Colouring) -> bool {
        let l = c.layout();
        let n = l.n();
        let Colouring {
            adj,
            colour,
            per_unit,
            sees,
        } = scratch;
        let mut pair = Vec::new();
        for d in 1..=n as u8 {
            let mut linked = Vec::new();
            for u in 0..l.unit_count() {
                let places = self.at(n, u, d);
                if places.count_ones() != 2 {
                    continue;
                }
                Self::cells_at(l, u, places, &mut pair);
                if let [p, q] = pair[..] {
                    let kind = u / n;
                    adj[p][kind] = q as u16;
                    adj[q][kind] = p as u16;
                    linked.push(p);
                    linked.push(q);
                }
            }
            linked.sort_unstable();
            linked.dedup();
            let mut found = false;
            for &start in &linked {
                if colour[start] != 0 {
                    continue;
                }
                // Two-colour the chain from `start`, breadth first.
                let mut chain = vec![start];
                colour[start] = 1;
                let mut odd = false;
                let mut i = 0;
                while i < chain.len() {
                    let x = chain[i];
                    i += 1;
                    for &y in &adj[x] {
                        if y == u16::MAX {
                            continue;
                        }
                        let y = y as usize;
                        if colour[y] == 0 {
                            colour[y] = 3 - colour[x];
                            chain.push(y);
                        } else if colour[y] == colour[x] {
                            odd = true;
                        }
                    }
                }
                chain.sort_unstable();
                if !odd {
                    found = self.colour_step(c, d, &chain, colour, per_unit, sees);
                }
                if found {
                    break;
                }
            }
            // Reset the scratch for the next digit.
            for &x in &linked {
                adj[x] = [u16::MAX; 3];
                colour[x] = 0;
            }
            if found {
                return true;
            }
        }
        false
    }

    /// The wrap or trap of one coloured chain (ascending cells), if any.
    fn colour_step(
        &mut self,
        c: &Candidates,
        d: u8,
        chain: &[usize],
        colour: &[u8],
        per_unit: &mut [[u8; 2]],
        sees: &mut [u8],
    ) -> bool {
        let l = c.layout();
        let n = l.n();
        // Wrap: the first unit (rows, columns, boxes) with two cells of one
        // colour, the "on" colour tried first.
        let mut wrap: Option<(usize, usize)> = None;
        for &x in chain {
            for u in l.units_of(x) {
                let slot = &mut per_unit[u as usize][colour[x] as usize - 1];
                *slot += 1;
                if *slot >= 2 {
                    let k = colour[x] as usize - 1;
                    let better = match wrap {
                        None => true,
                        Some((ck, cu)) => (k, u as usize) < (ck, cu),
                    };
                    if better {
                        wrap = Some((k, u as usize));
                    }
                }
            }
        }
        for &x in chain {
            for u in l.units_of(x) {
                per_unit[u as usize] = [0, 0];
            }
        }
        let of =
            |k: u8| -> Vec<usize> { chain.iter().copied().filter(|&x| colour[x] == k).collect() };
        if let Some((k, u)) = wrap {
            let false_colour = of(k as u8 + 1);
            let other = of(2 - k as u8);
            self.begin(Technique::SimpleColoring);
            self.eliminate_digit(&false_colour, d);
            self.cells(chain);
            self.step.units.push(unit_ref(u, n));
            let two: Vec<usize> = false_colour
                .iter()
                .copied()
                .filter(|&x| l.units_of(x).contains(&(u as u16)))
                .collect();
            explain!(
                self,
                "colouring the chain of {d}s {}: {} share a colour and {}, so that colour is false and {} hold {d}",
                Cells(chain, n),
                Cells(&two, n),
                unit_ref(u, n),
                Cells(&other, n)
            );
            return true;
        }
        // Trap: cells with d off the chain that see both colours: each
        // chain cell marks its peers with its colour's bit.
        let mut touched = Vec::new();
        for &x in chain {
            for p in l.peers(x) {
                if c.mask(p) & bit(d) != 0 && chain.binary_search(&p).is_err() {
                    if sees[p] == 0 {
                        touched.push(p);
                    }
                    sees[p] |= colour[x];
                }
            }
        }
        let mut trapped: Vec<usize> = touched.iter().copied().filter(|&p| sees[p] == 3).collect();
        for &p in &touched {
            sees[p] = 0;
        }
        if trapped.is_empty() {
            return false;
        }
        trapped.sort_unstable();
        self.begin(Technique::SimpleColoring);
        self.eliminate_digit(&trapped, d);
        self.cells(chain);
        explain!(
            self,
            "colouring the chain of {d}s {}: {} see both colours, and one colour holds {d}, so they lose {d}",
            Cells(chain, n),
            Cells(&trapped, n)
        );
        true
    }
}
