//! Nishio, multiple and dynamic forcing chains (SE's
//! getMultipleChainsHintList): every candidate of a cell is assumed on and
//! off. A contradiction removes the assumption (Nishio and dynamic modes);
//! a potential both assumptions force holds (dynamic, cells of three
//! candidates or more); a potential every candidate of the cell forces,
//! or every place of the digit in a unit, holds (cell and region forcing
//! chains).

use super::engine::{self, Best, Engine, NONE};
use super::memory::{Memory, RunMemory};
use super::reach::Reach;
use super::{Body, Found, Multi, Rec, others, rule_base};
use crate::logic::Stopped;
use crate::logic::candidates::{bits_of, digits_of};
use crate::logic::se::GoOn;

/// The runs of the search: each "on" assumption's run is made once and
/// shared by the cell, region and binary chains that use it.
struct Runs {
    on_run: Vec<u32>,
}

impl Runs {
    fn on(
        &mut self,
        eng: &mut Engine<'_>,
        found: &mut Found,
        cell: usize,
        d: u8,
        go_on: &mut GoOn<'_>,
    ) -> Result<u32, Stopped> {
        let k = cell * eng.g.n + d as usize - 1;
        if self.on_run[k] == NONE {
            let run = eng.chain(eng.g.pot(cell, d, true), go_on)?;
            found.runs.push(run);
            self.on_run[k] = found.runs.len() as u32 - 1;
        }
        Ok(self.on_run[k])
    }
}

/// A hint whose chains end on `targets` ((run, node) each) and conclude
/// what `conclusion` says; None when it concludes nothing, or when only
/// the cheapest hint is wanted and `best` sorts before it: its complexity
/// is at least the potentials on its chains' first-parent paths, so those
/// alone can rule it out before its ancestors are counted.
fn rec(
    eng: &mut Engine<'_>,
    found: &Found,
    best: &mut Best,
    kind: Multi,
    key: u8,
    targets: &[(u32, u32)],
    conclusion: impl FnOnce(&Engine<'_>) -> Option<Conclusion>,
) -> Option<Rec> {
    let base = rule_base(eng.mode);
    if eng.cheapest {
        let least = targets
            .iter()
            .map(|&(r, i)| found.runs[r as usize].nodes[i as usize].depth + 1)
            .sum();
        if best.beats(base, least) {
            return None;
        }
    }
    let (removable, place) = conclusion(eng)?;
    let mut nested = Vec::new();
    let mut cx = 0;
    for &(r, i) in targets {
        cx += eng.ancestors(&found.runs[r as usize], i, &mut nested);
    }
    cx += nested
        .iter()
        .map(|&k| eng.nested[k as usize].complexity)
        .sum::<u32>();
    let diff = engine::difficulty(base, cx);
    if eng.cheapest {
        best.offer(diff, cx);
    }
    Some(Rec {
        diff,
        cx,
        key,
        removable,
        place,
        body: Body::Multi {
            kind,
            targets: targets.to_vec(),
        },
    })
}

/// A hint's eliminations and the digit it places, if any.
type Conclusion = (Vec<(u16, u8)>, Option<(u16, u8)>);

/// What a hint concluding `pot` removes, and the digit it places when
/// `pot` is on; None when it would remove nothing.
fn conclusion(eng: &Engine<'_>, pot: u32) -> Option<Conclusion> {
    let g = eng.g;
    let (cell, d) = (g.cell(pot), g.digit(pot));
    if engine::Geo::on(pot) {
        let removable = others(eng.c, cell, d);
        if removable.is_empty() {
            None
        } else {
            Some((removable, Some((cell as u16, d))))
        }
    } else {
        Some((vec![(cell as u16, d)], None))
    }
}

/// With `memory` (a walk's), a static search takes the closures the
/// level-0 search on the same candidates made.
pub(super) fn collect(
    eng: &mut Engine<'_>,
    found: &mut Found,
    go_on: &mut GoOn<'_>,
    memory: Option<&mut Memory>,
) -> Result<(), Stopped> {
    let c = eng.c;
    let g = eng.g;
    let l = eng.l;
    let mode = eng.mode;
    let n = g.n;
    let mut runs = Runs {
        on_run: vec![NONE; n * n * n],
    };
    let mut best = Best::default();
    // A static search makes a cell's or a region's runs only when their
    // closures meet: most share nothing, and their runs are most of its
    // work. (Dynamic runs use their own eliminations: no such test.)
    let reach = if mode.dynamic || !eng.prune {
        None
    } else {
        memory
            .and_then(|m| m.take_closures(c))
            .or_else(|| Reach::new(eng))
    };
    let mut scratch = Vec::new();
    let mut place_runs = Vec::new();
    for cell in 0..n * n {
        let mask = c.mask(cell);
        let card = mask.count_ones();
        if c.value(cell) != 0 || !(card > 2 || (card > 1 && mode.dynamic)) {
            continue;
        }
        for d in digits_of(mask) {
            if !go_on() {
                return Err(Stopped);
            }
            // A static search makes the run when a chain needs it.
            let on = if reach.is_none() {
                runs.on(eng, found, cell, d, go_on)?
            } else {
                NONE
            };
            let do_double = card >= 3 && mode.dynamic;
            // The "off" assumption serves only contradictions and
            // doubles, both dynamic.
            let mut off = NONE;
            if mode.dynamic {
                let off_run = eng.chain(g.pot(cell, d, false), go_on)?;
                found.runs.push(off_run);
                off = found.runs.len() as u32 - 1;
            }
            if mode.dynamic {
                // An assumption that leads to a contradiction is false:
                // the hint concludes its negation.
                for (run, assumed) in [(on, true), (off, false)] {
                    if let Some((a, b)) = found.runs[run as usize].absurd
                        && let Some(r) = rec(
                            eng,
                            found,
                            &mut best,
                            Multi::Contradiction(g.pot(cell, d, assumed)),
                            7,
                            &[(run, a), (run, b)],
                            |eng| conclusion(eng, g.pot(cell, d, !assumed)),
                        )
                    {
                        found.recs.push(r);
                    }
                }
            }
            if do_double {
                let (on_r, off_r) = (&found.runs[on as usize], &found.runs[off as usize]);
                let mut pairs = Vec::new();
                for &i in on_r.ons.iter().chain(on_r.offs.iter()) {
                    let pot = on_r.nodes[i as usize].pot;
                    if let Some(j) = off_r.get(pot) {
                        pairs.push((pot, i, j));
                    }
                }
                for (pot, i, j) in pairs {
                    if let Some(r) = rec(
                        eng,
                        found,
                        &mut best,
                        Multi::Double(g.pot(cell, d, true)),
                        1,
                        &[(on, i), (off, j)],
                        |eng| conclusion(eng, pot),
                    ) {
                        found.recs.push(r);
                    }
                }
            }
            // Region chains from the unit's first place of the digit.
            for kind in [2, 0, 1] {
                let u = l.units_of(cell)[kind] as usize;
                let unit = l.unit(u);
                // The digit's places in the unit, as bits of its cells.
                let places = c.places()[u * n + d as usize - 1];
                let count = places.count_ones();
                if !(count == 2 || (mode.multiple && count > 2))
                    || unit[places.trailing_zeros() as usize] as usize != cell
                {
                    continue;
                }
                let pots = bits_of(places).map(|i| g.pot(unit[i] as usize, d, true));
                if let Some(r) = &reach
                    && !r.may_share(pots, &mut scratch)
                {
                    continue;
                }
                place_runs.clear();
                for i in bits_of(places) {
                    if !go_on() {
                        return Err(Stopped);
                    }
                    place_runs.push(runs.on(eng, found, unit[i] as usize, d, go_on)?);
                }
                shared(
                    eng,
                    found,
                    &mut best,
                    &place_runs,
                    Multi::Region(u as u16, d),
                    6,
                );
            }
        }
        if card == 2 || (mode.multiple && card > 2) {
            if let Some(r) = &reach
                && !r.may_share(digits_of(mask).map(|d| g.pot(cell, d, true)), &mut scratch)
            {
                continue;
            }
            let mut value_runs = Vec::with_capacity(card as usize);
            for d in digits_of(mask) {
                value_runs.push(runs.on(eng, found, cell, d, go_on)?);
            }
            shared(
                eng,
                found,
                &mut best,
                &value_runs,
                Multi::Cell(cell as u16),
                5,
            );
        }
    }
    Ok(())
}

/// SE's Nishio: each candidate assumed on and off, a dynamic run with
/// the digits' places only (no cell links); one that ends in a
/// contradiction removes its assumption. With `memory`, the runs it knows
/// end in none are not grown again.
pub(super) fn nishio(
    eng: &mut Engine<'_>,
    found: &mut Found,
    go_on: &mut GoOn<'_>,
    memory: Option<&mut RunMemory>,
) -> Result<(), Stopped> {
    let (c, g) = (eng.c, eng.g);
    let mut memory = memory.and_then(|m| m.update(c, g).then_some(m));
    let words = memory.as_ref().map_or(0, |m| m.words());
    let mut best = Best::default();
    for (cell, d) in engine::open_candidates(c) {
        if !go_on() {
            return Err(Stopped);
        }
        for assumed in [true, false] {
            let p = g.pot(cell, d, assumed);
            if memory.as_ref().is_some_and(|m| m.known(p)) {
                continue;
            }
            if memory.is_some() {
                eng.track.clear();
                eng.track.resize(words, 0);
            }
            let run = eng.chain(p, go_on)?;
            let Some((a, b)) = run.absurd else {
                if let Some(m) = &mut memory {
                    m.remember(p, &eng.track);
                }
                engine::recycle_one(run);
                continue;
            };
            if let Some(m) = &mut memory {
                m.forget(p);
            }
            found.runs.push(run);
            let r = found.runs.len() as u32 - 1;
            if let Some(rec) = rec(
                eng,
                found,
                &mut best,
                Multi::Contradiction(p),
                7,
                &[(r, a), (r, b)],
                |eng| conclusion(eng, g.pot(cell, d, !assumed)),
            ) {
                found.recs.push(rec);
            }
        }
    }
    eng.track.clear();
    Ok(())
}

/// The potentials every run of `runs` forces, in the order of the first
/// run ("on" ones first), each a hint.
fn shared(
    eng: &mut Engine<'_>,
    found: &mut Found,
    best: &mut Best,
    runs: &[u32],
    kind: Multi,
    key: u8,
) {
    let first = &found.runs[runs[0] as usize];
    let mut common = Vec::new();
    let mut targets = Vec::with_capacity(runs.len());
    for &i in first.ons.iter().chain(first.offs.iter()) {
        let pot = first.nodes[i as usize].pot;
        targets.clear();
        targets.push((runs[0], i));
        for &r in &runs[1..] {
            match found.runs[r as usize].get(pot) {
                Some(j) => targets.push((r, j)),
                None => break,
            }
        }
        if targets.len() == runs.len() {
            common.push((pot, targets.clone()));
        }
    }
    for (pot, targets) in common {
        if let Some(r) = rec(eng, found, best, kind, key, &targets, |eng| {
            conclusion(eng, pot)
        }) {
            found.recs.push(r);
        }
    }
}
