//! The basic techniques SE applies inside a chain from level 1 (pointing
//! and claiming, hidden pairs, naked pairs, X-wings), on the run's current
//! candidates. They find what `se::basic` finds, in its order, but only
//! produce what the chain needs: each elimination with the run's
//! eliminations it relies on (SE's getRuleParents). The test in
//! `tests.rs` holds them to `se::basic`.

use super::engine::{Engine, NONE, Pot};
use crate::logic::candidates::{bit, bits_of, digits_of, two_bits};

/// Units of SE's usual order: boxes, columns, rows.
fn se_units(n: usize) -> impl Iterator<Item = usize> {
    (2 * n..3 * n).chain(n..2 * n).chain(0..n)
}

/// The node of the run's "off" potential of `cell`=`d`.
pub(super) fn off_node(eng: &Engine<'_>, cell: usize, d: u8, out: &mut Vec<u32>) {
    let s = eng.slot[eng.g.pot(cell, d, false) as usize];
    debug_assert!(
        s != NONE,
        "a removed candidate is an off potential of the run"
    );
    if s != NONE && !out.contains(&s) {
        out.push(s);
    }
}

/// True when the run removed `d` from `cell`.
pub(super) fn removed(eng: &Engine<'_>, cell: usize, d: u8) -> bool {
    eng.c.mask(cell) & bit(d) != 0 && eng.cur.masks[cell] & bit(d) == 0
}

/// The rule's eliminations that rely on the run, with their parents, in
/// SE's order. `rule`: 0 pointing and claiming, 1 hidden pairs, 2 naked
/// pairs, 3 X-wings.
pub(super) fn apply(eng: &Engine<'_>, rule: usize, out: &mut Vec<(Pot, u32, Vec<u32>)>) {
    let (l, g) = (eng.l, eng.g);
    let n = g.n;
    let cur = &eng.cur.masks[..];
    let pos = &eng.cur.pos[..];
    let open = |u: usize| {
        l.unit(u)
            .iter()
            .filter(|&&x| eng.c.value(x as usize) == 0)
            .count()
    };
    let mut elims: Vec<(usize, u8)> = Vec::new();
    let mut parents = Vec::new();
    let emit = |elims: &[(usize, u8)], parents: &[u32], out: &mut Vec<(Pot, u32, Vec<u32>)>| {
        if parents.is_empty() {
            return;
        }
        for &(x, d) in elims {
            out.push((g.pot(x, d, false), NONE, parents.to_vec()));
        }
    };
    match rule {
        0 => {
            let mut hits = Vec::new();
            for (k1, k2) in [(2, 1), (2, 0), (1, 2), (0, 2)] {
                for u1 in k1 * n..(k1 + 1) * n {
                    let cells1 = l.unit(u1);
                    hits.clear();
                    for d in 1..=n as u8 {
                        let p = pos[u1 * n + d as usize - 1];
                        if p.count_ones() <= 1 {
                            continue;
                        }
                        let u2 = l.units_of(cells1[p.trailing_zeros() as usize] as usize)[k2];
                        if bits_of(p).all(|i| l.units_of(cells1[i] as usize)[k2] == u2) {
                            hits.push((u2 as usize, d));
                        }
                    }
                    hits.sort_unstable();
                    for &(u2, d) in &hits {
                        elims.clear();
                        for &x in l.unit(u2) {
                            let x = x as usize;
                            if l.units_of(x)[k1] as usize != u1 && cur[x] & bit(d) != 0 {
                                elims.push((x, d));
                            }
                        }
                        if elims.is_empty() {
                            continue;
                        }
                        parents.clear();
                        for &x in cells1 {
                            let x = x as usize;
                            if removed(eng, x, d) && l.units_of(x)[k2] as usize != u2 {
                                off_node(eng, x, d, &mut parents);
                            }
                        }
                        emit(&elims, &parents, out);
                    }
                }
            }
        }
        1 => {
            for u in se_units(n) {
                if open(u) <= 4 {
                    continue;
                }
                let unit = l.unit(u);
                for i in 0..n {
                    let a = pos[u * n + i];
                    if a.count_ones() <= 1 {
                        continue;
                    }
                    for j in i + 1..n {
                        let b = pos[u * n + j];
                        if b.count_ones() <= 1 || !two_bits(a | b) {
                            continue;
                        }
                        let common = a | b;
                        let digits = 1u64 << i | 1u64 << j;
                        elims.clear();
                        for p in bits_of(common) {
                            let x = unit[p] as usize;
                            elims.extend(digits_of(cur[x] & !digits).map(|v| (x, v)));
                        }
                        if elims.is_empty() {
                            continue;
                        }
                        parents.clear();
                        for (p, &x) in unit.iter().enumerate() {
                            if common & 1 << p == 0 {
                                for v in digits_of(eng.c.mask(x as usize) & digits) {
                                    off_node(eng, x as usize, v, &mut parents);
                                }
                            }
                        }
                        emit(&elims, &parents, out);
                    }
                }
            }
        }
        2 => {
            for u in se_units(n) {
                if open(u) < 4 {
                    continue;
                }
                let unit = l.unit(u);
                for i in 0..n {
                    let a = cur[unit[i] as usize];
                    if a.count_ones() <= 1 {
                        continue;
                    }
                    for j in i + 1..n {
                        let b = cur[unit[j] as usize];
                        if b.count_ones() <= 1 || !two_bits(a | b) {
                            continue;
                        }
                        let union = a | b;
                        elims.clear();
                        for (p, &x) in unit.iter().enumerate() {
                            if p != i && p != j {
                                let x = x as usize;
                                elims.extend(digits_of(cur[x] & union).map(|v| (x, v)));
                            }
                        }
                        if elims.is_empty() {
                            continue;
                        }
                        parents.clear();
                        for x in [unit[i] as usize, unit[j] as usize] {
                            for v in digits_of(eng.c.mask(x) & !union) {
                                off_node(eng, x, v, &mut parents);
                            }
                        }
                        emit(&elims, &parents, out);
                    }
                }
            }
        }
        _ => {
            let mut placed = vec![0usize; n + 1];
            for &v in eng.c.values() {
                placed[v as usize] += 1;
            }
            for (bk, ck) in [(1, 0), (0, 1)] {
                for i in 0..n {
                    for j in i + 1..n {
                        for d in 1..=n as u8 {
                            if placed[d as usize] + 4 > n {
                                continue;
                            }
                            let pi = pos[(bk * n + i) * n + d as usize - 1];
                            let pj = pos[(bk * n + j) * n + d as usize - 1];
                            if pi.count_ones() <= 1 || pj.count_ones() <= 1 || !two_bits(pi | pj) {
                                continue;
                            }
                            let common = pi | pj;
                            elims.clear();
                            for cj in bits_of(common) {
                                for (p, &x) in l.unit(ck * n + cj).iter().enumerate() {
                                    let x = x as usize;
                                    if p != i && p != j && cur[x] & bit(d) != 0 {
                                        elims.push((x, d));
                                    }
                                }
                            }
                            if elims.is_empty() {
                                continue;
                            }
                            parents.clear();
                            for b in [i, j] {
                                for &x in l.unit(bk * n + b) {
                                    let x = x as usize;
                                    let cover = l.units_of(x)[ck] as usize - ck * n;
                                    if removed(eng, x, d) && common & 1 << cover == 0 {
                                        off_node(eng, x, d, &mut parents);
                                    }
                                }
                            }
                            emit(&elims, &parents, out);
                        }
                    }
                }
            }
        }
    }
}
