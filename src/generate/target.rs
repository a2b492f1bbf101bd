//! Which puzzles a request wants: a label, an SE range, or any; each
//! candidate is rated with [`crate::logic::rate`] and kept when it matches.
//! The command line's `--local` and the service both choose through here,
//! so the same seed and options give the same puzzles either way.

use super::Candidate;
use crate::logic::{self, Label, Rating};

/// The puzzles wanted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Any puzzle.
    Any,
    /// Puzzles with this label.
    Label(Label),
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
    /// Rates `candidate` and keeps it when it matches: its rating.
    pub fn accept(&self, candidate: &Candidate) -> Option<Rating> {
        // A candidate has exactly one solution, so it always has a rating.
        let rating = logic::rate(&candidate.puzzle).ok()?;
        let keep = match *self {
            Target::Any => true,
            Target::Label(label) => rating.label == label,
            Target::Rating { min, max } => rating.solved && (min..=max).contains(&rating.se_rating),
        };
        keep.then_some(rating)
    }
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
