//! Cycles and forcing chains, as SE's `Chaining` finds and values them.
//!
//! A chain is made of potentials: a candidate assumed true ("on") or
//! false ("off"). An "on" potential turns off the cell's other candidates
//! and the digit's other places in its units; an "off" potential turns on
//! the cell's other candidate when it has two, and the digit's other place
//! in a unit that has two. SE's modes search these implications in
//! different ways:
//!
//! - level 0, neither multiple nor dynamic: cycles of X-links (one digit),
//!   Y-links (bivalue cells) or both, and forcing chains where an
//!   assumption implies its own negation (`unary.rs`);
//! - Nishio, multiple and dynamic modes: every candidate assumed on and
//!   off; contradictions, conclusions both assumptions share, and
//!   conclusions every candidate of a cell or every place of a digit in a
//!   unit shares (`multiple.rs`); dynamic runs use the eliminations made
//!   earlier along them (`engine.rs`);
//! - levels 1 to 5: dynamic runs that also apply pointing, claiming, pairs,
//!   X-wings and, from level 2, whole chain searches inside
//!   (`advanced.rs`).
//!
//! Each search collects every hint, then sorts them as SE does (value,
//! then complexity, the number of potentials in the chains, then a key by
//! kind), keeps the first of those with the same eliminations, and
//! reports them in that order.

mod advanced;
mod engine;
mod memory;
mod multiple;
mod reach;
mod rules;
#[cfg(test)]
mod tests;
mod unary;

use std::collections::HashSet;
use std::fmt::Write;

use super::{Chaining, GoOn, Sink};
use crate::logic::candidates::digits_of;
use crate::logic::notation::Rc;
use crate::logic::{Candidates, Step, Stopped, Technique, UnitRef};
use engine::{Engine, Geo, Pot, Run};
pub(crate) use memory::Memory;

/// SE's `Chaining(multiple, dynamic, nishio, level)`: every hint of the
/// mode, reported cheapest first; with `cheapest`, only those that can
/// come first (hints that sort after one already found are not searched
/// for), which is all the ladder reads.
///
/// With `memory` (a walk's), a Nishio search skips the runs it knows end
/// in no contradiction, a level-0 search the X-link starts it knows find
/// nothing, and a static multiple search reads the closures of the
/// level-0 search before it on the same candidates.
pub(crate) fn find(
    c: &Candidates,
    mode: Chaining,
    cheapest: bool,
    sink: &mut Sink<'_>,
    go_on: &mut GoOn<'_>,
    memory: Option<&mut Memory>,
) -> Result<(), Stopped> {
    let mut eng = Engine::new(c, mode);
    eng.cheapest = cheapest;
    let found = collect(&mut eng, go_on, memory)?;
    let mut found = found;
    for rec in &found.recs {
        if !sink(step(&mut eng, &found.runs, rec)) {
            break;
        }
    }
    engine::recycle(&mut found.runs);
    Ok(())
}

/// One hint found, before it becomes a [`Step`].
struct Rec {
    /// SE's difficulty (a double, as SE sorts by it).
    diff: f64,
    /// SE's complexity: the potentials of its chains, plus those of the
    /// chains nested in them.
    cx: u32,
    /// SE's sort key by kind.
    key: u8,
    /// The candidates it removes, sorted (SE's removable potentials).
    removable: Vec<(u16, u8)>,
    /// The digit it places (SE's hints whose result is an "on" potential).
    place: Option<(u16, u8)>,
    body: Body,
}

/// The chains of a hint.
enum Body {
    /// A cycle: its potentials from the start round to the start again,
    /// with their causes.
    Cycle {
        path: Vec<(Pot, u8)>,
        x: bool,
        y: bool,
    },
    /// A forcing chain from an assumption to its negation.
    Forcing {
        path: Vec<(Pot, u8)>,
        x: bool,
        y: bool,
    },
    /// Several chains ending on the same potential, as (run, node).
    Multi {
        kind: Multi,
        targets: Vec<(u32, u32)>,
    },
}

#[derive(Debug, Clone, Copy)]
enum Multi {
    /// The assumption leads to a potential both on and off.
    Contradiction(Pot),
    /// The candidate on and off lead to the same potential.
    Double(Pot),
    /// Each candidate of the cell leads to the same potential.
    Cell(u16),
    /// Each place of the digit in the unit leads to the same potential.
    Region(u16, u8),
}

/// The hints of a search, sorted, and the runs their chains live in.
struct Found {
    recs: Vec<Rec>,
    runs: Vec<Run>,
}

/// SE's getHintList and the filter of getHints: every hint, sorted by
/// difficulty, complexity and key (stable), the first of those with
/// equal eliminations kept.
fn collect(
    eng: &mut Engine<'_>,
    go_on: &mut GoOn<'_>,
    memory: Option<&mut Memory>,
) -> Result<Found, Stopped> {
    let mut found = Found {
        recs: Vec::new(),
        runs: Vec::new(),
    };
    if eng.mode.nishio {
        multiple::nishio(eng, &mut found, go_on, memory.map(|m| &mut m.nishio))?;
    } else if eng.mode.multiple || eng.mode.dynamic {
        multiple::collect(eng, &mut found, go_on, memory)?;
    } else {
        unary::collect(eng, &mut found, go_on, memory)?;
    }
    let order = |a: &Rec, b: &Rec| {
        a.diff
            .partial_cmp(&b.diff)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cx.cmp(&b.cx))
            .then(a.key.cmp(&b.key))
    };
    if eng.cheapest {
        // Only the first counts: the first of the least, as a stable sort
        // puts it (the filter always keeps the first).
        let mut first = 0;
        for (i, rec) in found.recs.iter().enumerate().skip(1) {
            if order(rec, &found.recs[first]).is_lt() {
                first = i;
            }
        }
        if !found.recs.is_empty() {
            found.recs.swap(0, first);
            found.recs.truncate(1);
        }
        return Ok(found);
    }
    found.recs.sort_by(order);
    let mut seen = HashSet::new();
    found.recs.retain(|r| seen.insert(r.removable.clone()));
    Ok(found)
}

/// SE's difficulty of the multiple and dynamic modes, before the length.
fn rule_base(mode: Chaining) -> f64 {
    if mode.level >= 2 {
        9.5 + 0.5 * f64::from(mode.level - 2)
    } else if mode.level > 0 {
        8.5 + 0.5 * f64::from(mode.level)
    } else if mode.nishio {
        7.5
    } else if mode.dynamic {
        8.5
    } else {
        8.0
    }
}

/// The candidates of `cell` but `d`: what placing `d` removes.
fn others(c: &Candidates, cell: usize, d: u8) -> Vec<(u16, u8)> {
    digits_of(c.mask(cell) & !crate::logic::candidates::bit(d))
        .map(|e| (cell as u16, e))
        .collect()
}

fn technique(mode: Chaining, body: &Body) -> Technique {
    match body {
        Body::Cycle { x, y, .. } => match (x, y) {
            (true, true) => Technique::XyCycle,
            (false, true) => Technique::YCycle,
            _ => Technique::XCycle,
        },
        Body::Forcing { x, y, .. } => {
            if *x && *y {
                Technique::ForcingChain
            } else {
                Technique::ForcingXChain
            }
        }
        Body::Multi { .. } => {
            if mode.level >= 2 {
                Technique::NestedForcingChains
            } else if mode.level == 1 {
                Technique::DynamicForcingChainsPlus
            } else if mode.nishio {
                Technique::Nishio
            } else if mode.dynamic {
                Technique::DynamicForcingChains
            } else {
                Technique::MultipleForcingChains
            }
        }
    }
}

/// `r1c2=5` for a candidate; `r1c2<>5` when `negated`.
struct Cand(Geo, Pot, bool);

impl std::fmt::Display for Cand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Cand(g, p, negated) = *self;
        write!(
            f,
            "{}{}{}",
            Rc(g.cell(p), g.n),
            if negated { "<>" } else { "=" },
            g.digit(p)
        )
    }
}

/// A chain in the notation players write: the assumption with its state,
/// then each potential, `-` before one that goes off, `=` before one that
/// goes on.
fn write_chain(out: &mut String, g: Geo, pots: &[Pot], cells: &mut Vec<u16>) {
    for (k, &p) in pots.iter().enumerate() {
        let on = Geo::on(p);
        if k == 0 {
            let _ = write!(out, "{}", Cand(g, p, !on));
        } else {
            let _ = write!(out, " {} {}", if on { "=" } else { "-" }, Cand(g, p, false));
        }
        let cell = g.cell(p) as u16;
        if !cells.contains(&cell) {
            cells.push(cell);
        }
    }
}

fn write_conclusion(out: &mut String, g: Geo, rec: &Rec) {
    if let Some((cell, d)) = rec.place {
        let _ = write!(
            out,
            ", so {}",
            Cand(g, g.pot(cell as usize, d, true), false)
        );
        return;
    }
    out.push_str(", so ");
    for (k, &(cell, d)) in rec.removable.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}", Cand(g, g.pot(cell as usize, d, true), true));
    }
}

/// The most branches an explanation lists.
const BRANCHES: usize = 8;

/// The eliminations a dynamic chain relies on besides its own path (an
/// implication that holds only once earlier candidates of the cell or the
/// unit went), each written as the chain that removed it, from the same
/// assumption: ", with r7c2=9 - r5c6=9; ...". Branches of branches follow,
/// each once, at most [`BRANCHES`] in all.
fn write_branches(
    out: &mut String,
    g: Geo,
    runs: &[Run],
    targets: &[(u32, u32)],
    cells: &mut Vec<u16>,
) {
    // (run, node) on a chain written already, and the branches to write.
    let mut shown: HashSet<(u32, u32)> = HashSet::new();
    let mut todo: Vec<(u32, u32)> = Vec::new();
    let walk = |r: u32, i: u32, shown: &mut HashSet<(u32, u32)>, todo: &mut Vec<(u32, u32)>| {
        let run = &runs[r as usize];
        let path = run.path(i);
        shown.extend(path.iter().map(|&j| (r, j)));
        for &j in &path {
            for &q in run.parents(j).iter().skip(1) {
                if !shown.contains(&(r, q)) && !todo.contains(&(r, q)) {
                    todo.push((r, q));
                }
            }
        }
    };
    for &(r, i) in targets {
        walk(r, i, &mut shown, &mut todo);
    }
    let mut written = 0;
    let mut k = 0;
    while k < todo.len() {
        let (r, q) = todo[k];
        k += 1;
        if shown.contains(&(r, q)) {
            continue;
        }
        if written == BRANCHES {
            let left = todo[k - 1..].iter().filter(|e| !shown.contains(e)).count();
            let _ = write!(out, "; and {left} more");
            break;
        }
        out.push_str(if written == 0 { ", with " } else { "; " });
        write_chain(out, g, &main_path(&runs[r as usize], q), cells);
        written += 1;
        walk(r, q, &mut shown, &mut todo);
    }
}

/// The first-parent path of a target, from its assumption.
fn main_path(run: &Run, node: u32) -> Vec<Pot> {
    let mut pots: Vec<Pot> = run
        .path(node)
        .iter()
        .map(|&i| run.nodes[i as usize].pot)
        .collect();
    pots.reverse();
    pots
}

/// The step a hint makes.
fn step(eng: &mut Engine<'_>, runs: &[Run], rec: &Rec) -> Step {
    let g = eng.g;
    let n = g.n;
    let tech = technique(eng.mode, &rec.body);
    let mut step = Step::new(tech, engine::tenths(rec.diff));
    if let Some(p) = rec.place {
        step.placements.push(p);
    }
    step.eliminations = rec.removable.clone();
    let mut text = String::new();
    let mut cells = Vec::new();
    match &rec.body {
        Body::Cycle { path, .. } => {
            let d = g.digit(path[0].0);
            let name = match tech {
                Technique::XCycle => format!("X-cycle on {d}"),
                Technique::YCycle => "Y-cycle".to_owned(),
                _ => "XY-cycle".to_owned(),
            };
            let _ = write!(text, "{name}: ");
            let pots: Vec<Pot> = path.iter().map(|e| e.0).collect();
            write_chain(&mut text, g, &pots, &mut cells);
            write_conclusion(&mut text, g, rec);
        }
        Body::Forcing { path, .. } => {
            let pots: Vec<Pot> = path.iter().map(|e| e.0).collect();
            let _ = write!(
                text,
                "{}: {} implies its opposite: ",
                if tech == Technique::ForcingChain {
                    "forcing chain"
                } else {
                    "forcing X-chain"
                },
                Cand(g, pots[0], !Geo::on(pots[0]))
            );
            write_chain(&mut text, g, &pots, &mut cells);
            write_conclusion(&mut text, g, rec);
        }
        Body::Multi { kind, targets } => {
            let target = runs[targets[0].0 as usize].nodes[targets[0].1 as usize].pot;
            let t = Cand(g, target, !Geo::on(target));
            let _ = match *kind {
                Multi::Contradiction(src) => write!(
                    text,
                    "{} leads to {} both on and off: ",
                    Cand(g, src, !Geo::on(src)),
                    Cand(g, target, false)
                ),
                Multi::Double(src) => write!(
                    text,
                    "{} and {} both lead to {t}: ",
                    Cand(g, src, false),
                    Cand(g, src, true)
                ),
                Multi::Cell(cell) => write!(
                    text,
                    "each candidate of {} leads to {t}: ",
                    Rc(cell as usize, n)
                ),
                Multi::Region(u, d) => {
                    step.units.push(UnitRef::of(u as usize, n));
                    write!(
                        text,
                        "each place of {d} in {} leads to {t}: ",
                        UnitRef::of(u as usize, n)
                    )
                }
            };
            for (k, &(r, i)) in targets.iter().enumerate() {
                if k > 0 {
                    text.push_str("; ");
                }
                write_chain(&mut text, g, &main_path(&runs[r as usize], i), &mut cells);
            }
            write_branches(&mut text, g, runs, targets, &mut cells);
            write_conclusion(&mut text, g, rec);
        }
    }
    step.cells = cells;
    step.explanation = text;
    step
}
