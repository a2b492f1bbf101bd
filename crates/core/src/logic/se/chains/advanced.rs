//! Levels 1 to 5: other techniques applied inside a dynamic chain (SE's
//! getAdvancedPotentials). When a run's implications dry up, pointing and
//! claiming, hidden pairs, naked pairs and X-wings (and from level 2 whole
//! chain searches) look at the run's current candidates; the first of
//! them that finds eliminations which rely on the run's own eliminations
//! gives new "off" potentials, whose parents are those eliminations.

use super::engine::{BOX, CELL, COL, Engine, Geo, NestedInfo, Pot, ROW, Run, START};
use super::rules::{off_node, removed};
use super::{Body, Found, Multi, Rec, collect};
use crate::logic::candidates::digits_of;
use crate::logic::se::{Chaining, GoOn};
use crate::logic::{Candidates, Stopped};

/// What a chain found inside a chain relies on: a cell whose removed
/// candidates it needs, or a unit whose removed places of a digit it
/// needs (SE's collectRuleParents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Site {
    Cell(usize),
    Unit(usize, u8),
}

/// A hint of a nested search: what it removes, what it relies on, its
/// complexity.
struct Nested {
    removable: Vec<(u16, u8)>,
    sites: Vec<Site>,
    complexity: u32,
}

/// The new "off" potentials: (potential, nested chain or NONE, parent
/// nodes in `run`).
pub(super) type Found3 = Vec<(Pot, u32, Vec<u32>)>;

pub(super) fn potentials(
    eng: &mut Engine<'_>,
    _run: &Run,
    go_on: &mut GoOn<'_>,
) -> Result<Found3, Stopped> {
    let mut out = Vec::new();
    for rule in 0..4 {
        super::rules::apply(eng, rule, &mut out);
        if !out.is_empty() {
            return Ok(out);
        }
    }
    let n = eng.g.n;
    let mut cur = eng.c.clone();
    for cell in 0..n * n {
        for d in digits_of(eng.c.mask(cell) & !eng.cur.masks[cell]) {
            cur.eliminate(cell, d);
        }
    }
    let level = eng.mode.level;
    let mut inner = Vec::new();
    let chaining = |multiple, dynamic, level| Chaining {
        multiple,
        dynamic,
        nishio: false,
        level,
    };
    if level < 4 {
        if level >= 2 {
            inner.push(chaining(false, false, 0));
        }
        if level >= 3 {
            inner.push(chaining(true, false, 0));
        }
    } else {
        inner.push(chaining(true, true, 0));
        if level >= 5 {
            inner.push(chaining(true, true, level - 3));
        }
    }
    for mode in inner {
        for hint in nested_hints(&cur, mode, go_on)? {
            let parents = site_parents(eng, &hint.sites);
            if parents.is_empty() {
                continue;
            }
            eng.nested.push(NestedInfo {
                complexity: hint.complexity,
            });
            let id = eng.nested.len() as u32 - 1;
            for &(cell, d) in &hint.removable {
                out.push((eng.g.pot(cell as usize, d, false), id, parents.clone()));
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    Ok(out)
}

/// The run's eliminations behind a nested chain's sites.
fn site_parents(eng: &Engine<'_>, sites: &[Site]) -> Vec<u32> {
    let l = eng.l;
    let mut out = Vec::new();
    for &site in sites {
        match site {
            Site::Cell(x) => {
                for v in digits_of(eng.c.mask(x) & !eng.cur.masks[x]) {
                    off_node(eng, x, v, &mut out);
                }
            }
            Site::Unit(u, d) => {
                for &x in l.unit(u) {
                    if removed(eng, x as usize, d) {
                        off_node(eng, x as usize, d, &mut out);
                    }
                }
            }
        }
    }
    out
}

/// Every hint of `mode` on `cur`, in SE's order, with its sites.
fn nested_hints(
    cur: &Candidates,
    mode: Chaining,
    go_on: &mut GoOn<'_>,
) -> Result<Vec<Nested>, Stopped> {
    let mut inner = Engine::new(cur, mode);
    let mut found = collect(&mut inner, go_on, None)?;
    let out = found
        .recs
        .iter()
        .map(|rec| Nested {
            removable: rec.removable.clone(),
            sites: sites(&inner, &found, rec),
            complexity: rec.cx,
        })
        .collect();
    super::engine::recycle(&mut found.runs);
    Ok(out)
}

/// The site of an "on" potential of `cell`=`d` with `cause`.
fn site_of(eng: &Engine<'_>, cell: usize, d: u8, cause: u8) -> Option<Site> {
    let units = eng.l.units_of(cell);
    match cause {
        CELL => Some(Site::Cell(cell)),
        ROW => Some(Site::Unit(units[0] as usize, d)),
        COL => Some(Site::Unit(units[1] as usize, d)),
        BOX => Some(Site::Unit(units[2] as usize, d)),
        _ => None,
    }
}

fn add_site(out: &mut Vec<Site>, s: Option<Site>) {
    if let Some(s) = s
        && !out.contains(&s)
    {
        out.push(s);
    }
}

/// SE's getRuleParents of a chain hint, as sites: the cells and units
/// whose removed candidates its "on" potentials rely on.
fn sites(eng: &Engine<'_>, found: &Found, rec: &Rec) -> Vec<Site> {
    let g = eng.g;
    let mut out = Vec::new();
    match &rec.body {
        // Both directions of a cycle: every potential but the start, by
        // the cause it was found with.
        Body::Cycle { path, .. } => {
            for &(p, cause) in &path[1..] {
                add_site(&mut out, site_of(eng, g.cell(p), g.digit(p), cause));
            }
        }
        Body::Forcing { path, .. } => {
            for &(p, cause) in path {
                if Geo::on(p) {
                    add_site(&mut out, site_of(eng, g.cell(p), g.digit(p), cause));
                }
            }
        }
        Body::Multi { kind, targets } => {
            for &(r, i) in targets {
                let run = &found.runs[r as usize];
                let mut seen: Vec<Pot> = Vec::new();
                let mut todo = vec![i];
                while let Some(j) = todo.pop() {
                    let node = run.nodes[j as usize];
                    if seen.contains(&node.pot) {
                        continue;
                    }
                    seen.push(node.pot);
                    todo.extend_from_slice(run.parents(j));
                    if !Geo::on(node.pot) {
                        continue;
                    }
                    let (cell, d) = (g.cell(node.pot), g.digit(node.pot));
                    let site = if node.cause == START {
                        match *kind {
                            Multi::Cell(_) => Some(Site::Cell(cell)),
                            Multi::Region(u, d) => Some(Site::Unit(u as usize, d)),
                            _ => None,
                        }
                    } else {
                        site_of(eng, cell, d, node.cause)
                    };
                    add_site(&mut out, site);
                }
            }
        }
    }
    out
}
