//! Sudoku Explainer's ladder: the techniques of SE 1.2.1, with its values
//! and its rules for choosing the next step, so that a rating here is the
//! rating SE (and its command-line rater, serate) gives: ER, the hardest
//! step on the path; EP, the hardest up to the first placement; ED, the
//! first step's value.
//!
//! The ladder is a list of producers ([`Rung`]), easiest first. The next
//! step is the first hint of the first producer that has one. Most
//! producers report hints in their scan order (units, then digits or
//! cells); the unique-loop and chaining producers sort theirs by value
//! first, so the cheapest of the family comes first. After each step the
//! ladder starts again from the bottom. Every producer is written over the
//! [`Candidates`] of any shape; SE itself is defined at 9x9.
//!
//! Files: `basic.rs` singles, direct techniques, intersections, subsets,
//! fish and wings; `unique.rs` unique rectangles and loops, BUG;
//! `exclusion.rs` aligned pair and triple exclusion; `chains.rs` cycles and
//! every kind of forcing chain.

mod basic;
mod chains;
mod exclusion;
mod unique;

use super::{Candidates, Step, Stopped};

/// Where a producer reports its hints, in its order; a producer stops as
/// soon as the sink answers false.
pub(crate) type Sink<'a> = dyn FnMut(Step) -> bool + 'a;

/// Asked now and then by the longer searches: false means stop (the
/// service's deadline, a node budget, a cancelled call).
pub(crate) type GoOn<'a> = dyn FnMut() -> bool + 'a;

/// What a chaining producer looks for: SE's `Chaining(multiple, dynamic,
/// nishio, level)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chaining {
    /// Cell and region forcing chains (several chains to one conclusion).
    pub multiple: bool,
    /// Chains that use the eliminations made earlier along them.
    pub dynamic: bool,
    /// Nishio: an assumption that leads to a contradiction.
    pub nishio: bool,
    /// 0: plain chains; 1: with the basic techniques inside (dynamic +);
    /// 2 to 5: nested forcing chains.
    pub level: u8,
}

/// One producer of the ladder, in SE's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rung {
    HiddenSingle,
    DirectLocking,
    DirectHidden(u8),
    NakedSingle,
    Locking,
    Naked(u8),
    Fish(u8),
    Hidden(u8),
    XyWing,
    XyzWing,
    UniqueLoops,
    Bug,
    Aligned(u8),
    Chains(Chaining),
}

const fn chains(multiple: bool, dynamic: bool, nishio: bool, level: u8) -> Rung {
    Rung::Chains(Chaining {
        multiple,
        dynamic,
        nishio,
        level,
    })
}

impl Rung {
    /// The least value (tenths) any hint of this producer has: a walk that
    /// stops above a ceiling need not run the producers beyond it.
    pub(crate) fn floor(self) -> u16 {
        match self {
            Rung::HiddenSingle => 10,
            Rung::DirectLocking => 17,
            Rung::DirectHidden(2) => 20,
            Rung::NakedSingle => 23,
            Rung::DirectHidden(_) => 25,
            Rung::Locking => 26,
            Rung::Naked(2) => 30,
            Rung::Fish(2) => 32,
            Rung::Hidden(2) => 34,
            Rung::Naked(3) => 36,
            Rung::Fish(3) => 38,
            Rung::Hidden(3) => 40,
            Rung::XyWing => 42,
            Rung::XyzWing => 44,
            Rung::UniqueLoops => 45,
            Rung::Naked(_) => 50,
            Rung::Fish(_) => 52,
            Rung::Hidden(_) => 54,
            Rung::Bug => 56,
            Rung::Aligned(2) => 62,
            Rung::Aligned(_) => 75,
            Rung::Chains(m) if m.level >= 2 => 95 + 5 * (u16::from(m.level) - 2),
            Rung::Chains(m) if m.level == 1 => 90,
            Rung::Chains(m) if m.nishio => 75,
            Rung::Chains(m) if m.dynamic => 85,
            Rung::Chains(m) if m.multiple => 80,
            Rung::Chains(_) => 65,
        }
    }
}

/// SE's ladder (its `Solver` constructor, every technique enabled).
pub(crate) const LADDER: &[Rung] = &[
    Rung::HiddenSingle,
    Rung::DirectLocking,
    Rung::DirectHidden(2),
    Rung::NakedSingle,
    Rung::DirectHidden(3),
    Rung::Locking,
    Rung::Naked(2),
    Rung::Fish(2),
    Rung::Hidden(2),
    Rung::Naked(3),
    Rung::Fish(3),
    Rung::Hidden(3),
    Rung::XyWing,
    Rung::XyzWing,
    Rung::UniqueLoops,
    Rung::Naked(4),
    Rung::Fish(4),
    Rung::Hidden(4),
    Rung::Bug,
    Rung::Aligned(2),
    chains(false, false, false, 0),
    Rung::Aligned(3),
    chains(false, true, true, 0),
    chains(true, false, false, 0),
    chains(true, true, false, 0),
    chains(true, true, false, 1),
    chains(true, true, false, 2),
    chains(true, true, false, 3),
    chains(true, true, false, 4),
    chains(true, true, false, 5),
];

/// What a walk from step to step remembers for the next: the producers
/// whose last search found nothing, and what they saw then, so that they
/// try again only what has changed since. Whatever the candidates become,
/// the first hint is the one a search without memory finds.
#[derive(Default)]
pub(crate) struct Recall {
    /// Aligned pair and triple exclusion.
    aligned: [Option<exclusion::Clean>; 2],
    /// Nishio's runs, and the level-0 starts with X-links only.
    chains: chains::Memory,
    /// Naked and hidden sets, by unit.
    units: basic::UnitMemory,
}

/// Runs one producer of the ladder on `c`, reporting to `sink`. A chaining
/// producer reports only the hints that can come first: the ladder reads
/// no further.
pub(crate) fn produce(
    rung: Rung,
    c: &Candidates,
    sink: &mut Sink<'_>,
    go_on: &mut GoOn<'_>,
    recall: &mut Recall,
) -> Result<(), Stopped> {
    match rung {
        Rung::HiddenSingle => basic::hidden_single(c, sink),
        Rung::DirectLocking => basic::locking(c, true, sink),
        Rung::DirectHidden(k) => {
            basic::hidden_set(c, k as usize, true, sink, Some(&mut recall.units))
        }
        Rung::NakedSingle => basic::naked_single(c, sink),
        Rung::Locking => basic::locking(c, false, sink),
        Rung::Naked(k) => basic::naked_set(c, k as usize, sink, Some(&mut recall.units)),
        Rung::Fish(k) => basic::fish(c, k as usize, sink),
        Rung::Hidden(k) => basic::hidden_set(c, k as usize, false, sink, Some(&mut recall.units)),
        Rung::XyWing => basic::xy_wing(c, false, sink),
        Rung::XyzWing => basic::xy_wing(c, true, sink),
        Rung::UniqueLoops => unique::unique_loops(c, sink),
        Rung::Bug => unique::bug(c, sink),
        Rung::Aligned(k) => {
            let memory = &mut recall.aligned[usize::from(k == 3)];
            return exclusion::aligned(c, k as usize, sink, go_on, Some(memory));
        }
        Rung::Chains(mode) => {
            return chains::find(c, mode, true, sink, go_on, Some(&mut recall.chains));
        }
    }
    Ok(())
}

/// The step SE takes next on `c`: the first hint of the first producer of
/// the ladder that has one. None when no technique applies (SE's 20.0).
pub(crate) fn next_step(c: &Candidates, go_on: &mut GoOn<'_>) -> Result<Option<Step>, Stopped> {
    next_step_within(c, go_on, UNRATED, &mut Recall::default())
}

/// [`next_step`] from the producers whose hints can be worth `ceiling`
/// tenths or less: None also when only a harder producer would have one.
/// A walk passes the same `recall` from step to step.
pub(crate) fn next_step_within(
    c: &Candidates,
    go_on: &mut GoOn<'_>,
    ceiling: u16,
    recall: &mut Recall,
) -> Result<Option<Step>, Stopped> {
    let chains = c.side() <= CHAIN_SIDE;
    for &rung in LADDER.iter().take_while(|r| r.floor() <= ceiling) {
        if !chains && rung.floor() >= CHAINS {
            break;
        }
        if !go_on() {
            return Err(Stopped);
        }
        let mut found = None;
        produce(
            rung,
            c,
            &mut |step| {
                found = Some(step);
                false
            },
            go_on,
            recall,
        )?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// A rating on SE's scale, in tenths: serate's `%r %p %d`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeRating {
    /// ER: the hardest step on the path; [`UNRATED`] when SE's techniques
    /// cannot finish the puzzle.
    pub er: u16,
    /// EP: the hardest step up to the first that places a digit.
    pub ep: u16,
    /// ED: the first step's value.
    pub ed: u16,
    /// The steps taken, in order.
    pub steps: Vec<Step>,
}

/// The least value of a chain (6.5): the producers from here on search
/// chains.
pub(crate) const CHAINS: u16 = 65;

/// The largest side the chain producers (and aligned triple exclusion
/// among them) run at. A side-N grid has N*N*N candidates for a chain to
/// start from, and a dynamic search keeps a run of up to twice that many
/// nodes for each start it compares: at 25x25 the forcing chains of one
/// hard puzzle ran past the service's work budget (about a minute), at
/// 36x36 past 20 s without a step, and their runs would take hundreds of
/// megabytes. Above this side a puzzle the rest of the ladder cannot
/// finish is unrated (20.0) at once.
pub(crate) const CHAIN_SIDE: usize = 16;

/// SE's "unrated" (20.0): the ladder got stuck.
pub(crate) const UNRATED: u16 = 200;

/// Walks SE's path from `c` to the end, as serate does; or until a step
/// is worth more than `above` tenths (then `er` is that step's value and
/// the walk ends there: what a search for puzzles up to `above` needs).
/// Below [`UNRATED`], producers whose least value is above `above` are not
/// run: when no other has a step, `er` is [`UNRATED`], which is above too.
pub(crate) fn rate(
    mut c: Candidates,
    go_on: &mut GoOn<'_>,
    above: u16,
) -> Result<SeRating, Stopped> {
    let mut rating = SeRating {
        er: 0,
        ep: 0,
        ed: 0,
        steps: Vec::new(),
    };
    let mut placed = false;
    let mut recall = Recall::default();
    while !c.is_solved() {
        let Some(step) = next_step_within(&c, go_on, above, &mut recall)? else {
            rating.er = UNRATED;
            break;
        };
        rating.er = rating.er.max(step.value);
        if rating.er > above {
            rating.steps.push(step);
            break;
        }
        c.apply(&step);
        if !placed {
            if rating.ed == 0 {
                rating.ed = rating.er;
            }
            if !step.placements.is_empty() {
                rating.ep = rating.er;
                placed = true;
            }
        }
        rating.steps.push(step);
    }
    Ok(rating)
}

#[cfg(test)]
mod tests;
