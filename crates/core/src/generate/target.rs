//! Which puzzles a request wants: a label, an SE range, or any; each
//! candidate is rated with [`crate::logic::rate`] and kept when it matches.
//! The command line's `--local` and the service both choose through here,
//! so the same seed and options give the same puzzles either way.

use super::Candidate;
use crate::logic::{self, Label, Rating, Reach};
use crate::puzzle::sized::SizedGrid;

/// The puzzles wanted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Any puzzle.
    Any,
    /// Puzzles with this label.
    Label(Label),
    /// Puzzles with this label or a harder one, extreme included.
    AtLeast(Label),
    /// Puzzles the techniques finish with an SE rating in `min..=max`.
    /// A puzzle they cannot finish has no rating, so none matches.
    Rating {
        /// Lowest SE rating, inclusive.
        min: f32,
        /// Highest SE rating, inclusive.
        max: f32,
    },
}

impl Target {
    /// The highest ER a puzzle of this target may have, in tenths, when
    /// the target bounds it below SE's "unrated": a label's upper end, a
    /// rating range's. None: no bound.
    pub fn ceiling(&self) -> Option<u16> {
        match *self {
            Target::Any | Target::AtLeast(_) | Target::Label(Label::Extreme) => None,
            Target::Label(label) => Some(label.er_range().1),
            Target::Rating { max, .. } => Some(tenths(max)),
        }
    }

    /// Rates `candidate` and keeps it when it matches: its rating, the
    /// one [`logic::rate`] gives.
    ///
    /// A candidate has exactly one solution, so the uniqueness check of
    /// [`logic::rate`] is skipped, and most candidates are refused before
    /// a full rating: SE's path is walked only while its steps stay
    /// within the target's ceiling, and a puzzle that needs a harder step
    /// is refused there. A candidate that stays within is rated in full
    /// on the same walk, so the decision and the rating are those of
    /// [`logic::rate`].
    pub fn accept(&self, candidate: &Candidate) -> Option<Rating> {
        self.accept_puzzle(&SizedGrid::from_grid(&candidate.puzzle))
    }

    /// [`Target::accept`] of a puzzle of any shape, known to have exactly
    /// one solution.
    pub fn accept_puzzle(&self, puzzle: &SizedGrid) -> Option<Rating> {
        self.accept_counted(puzzle, || logic::count(puzzle, 2, u64::MAX).stats.guesses)
    }

    /// [`Target::accept_puzzle`] with the engine's guesses (for
    /// [`Rating::guesses`]) given by `guesses` when a rating is made: the
    /// sized search counts them in steps of its own.
    pub fn accept_counted(
        &self,
        puzzle: &SizedGrid,
        guesses: impl FnOnce() -> u64,
    ) -> Option<Rating> {
        let (floor, ceiling) = match *self {
            Target::Any => (0, logic::se::UNRATED),
            Target::Label(label) => label.er_range(),
            Target::AtLeast(label) => (label.er_range().0, logic::se::UNRATED),
            Target::Rating { min, max } => (tenths(min), tenths(max)),
        };
        if ceiling < logic::se::UNRATED && logic::reach(puzzle, ceiling) == Reach::Stuck {
            return None;
        }
        let rating = logic::rating_within(puzzle, guesses(), ceiling)?;
        let er = tenths(rating.se_rating);
        let unrated_ok = !matches!(self, Target::Rating { .. });
        ((floor..=ceiling).contains(&er) && (rating.solved || unrated_ok)).then_some(rating)
    }
}

/// An SE rating in tenths (2.6 is 26).
fn tenths(v: f32) -> u16 {
    (v * 10.0).round().clamp(0.0, f32::from(logic::se::UNRATED)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Options, Search};
    use crate::puzzle::Grid;
    use crate::solver::Solver;

    #[test]
    fn puzzles_of_a_label_have_it() {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        for label in [Label::Easy, Label::Medium, Label::Hard] {
            let target = Target::Label(label);
            for i in 0..3 {
                let got = Search::new(21, i, Options::default())
                    .run(&mut solver, &mut |c| target.accept(c))
                    .expect("a puzzle");
                assert_eq!(got.extra.label, label);
                assert_eq!(logic::rate(&got.candidate.puzzle).unwrap(), got.extra);
            }
        }
    }

    #[test]
    fn a_floor_keeps_its_label_and_every_harder_one() {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let target = Target::AtLeast(Label::Hard);
        let mut seen = Vec::new();
        for i in 0..12 {
            let got = Search::new(5, i, Options::default())
                .run(&mut solver, &mut |c| target.accept(c))
                .expect("a puzzle");
            assert!(got.extra.label >= Label::Hard, "{:?}", got.extra);
            assert_eq!(logic::rate(&got.candidate.puzzle).unwrap(), got.extra);
            seen.push(got.extra.label);
        }
        // Not one label in disguise: unfinished puzzles come too.
        assert!(seen.contains(&Label::Extreme), "{seen:?}");
        assert!(seen.iter().any(|&l| l < Label::Extreme), "{seen:?}");
        // The first candidate whose full rating is hard or harder, no other.
        for i in 0..4 {
            let search = Search::new(8, i, Options::default());
            let kept = search
                .clone()
                .run(&mut solver, &mut |c| target.accept(c))
                .unwrap();
            let mut every = search;
            let first = loop {
                let got = every
                    .run(&mut solver, &mut |c| Target::Any.accept(c))
                    .unwrap();
                if got.extra.label >= Label::Hard {
                    break got;
                }
            };
            assert_eq!(first, kept);
        }
    }

    #[test]
    fn a_rating_range_keeps_only_finished_puzzles_in_it() {
        let mut solver = Solver::new(&Grid::EMPTY, 1);
        let target = Target::Rating { min: 2.5, max: 3.4 };
        let got = Search::new(2, 0, Options::default())
            .run(&mut solver, &mut |c| target.accept(c))
            .expect("a puzzle");
        assert!(got.extra.solved);
        assert!((2.5..=3.4).contains(&got.extra.se_rating));
    }
}
