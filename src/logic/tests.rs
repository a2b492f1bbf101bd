//! Tests of the logical solver: one known state per technique with the
//! exact step expected, and the properties over the public sets.

use super::*;
use crate::puzzle::text::read_puzzles;

const CLASSIC: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";

fn grid(text: &str) -> Grid {
    Grid::from_text(text).unwrap()
}

/// The first `n` puzzles of a public set in data/.
pub(super) fn public_set(name: &str, n: usize) -> Vec<Grid> {
    let path = format!("{}/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    read_puzzles(&text)
        .into_iter()
        .take(n)
        .map(|e| e.puzzle.unwrap())
        .collect()
}

#[test]
fn the_classic_puzzle_needs_singles_only() {
    let r = rate(&grid(CLASSIC)).unwrap();
    assert!(r.solved);
    assert_eq!(r.label, Label::Easy);
    assert!(r.hardest <= Some(Technique::NakedSingle), "{r:?}");
}

#[test]
fn hints_never_lead_away_from_the_solution() {
    for name in ["puzzles2_17_clue", "puzzles3_magictour_top1465"] {
        for g in public_set(name, 200) {
            let solution = solver::solve(&g).unwrap();
            let mut state = Candidates::from_grid(&g);
            while let Some(step) = hint(&state) {
                for &(c, d) in &step.placements {
                    assert_eq!(solution.0[c as usize], d, "{g:?} {step:?}");
                }
                for &(c, d) in &step.eliminations {
                    assert_ne!(solution.0[c as usize], d, "{g:?} {step:?}");
                    assert!(state.mask(c as usize) & (1 << (d - 1)) != 0, "{step:?}");
                }
                assert!(!step.placements.is_empty() || !step.eliminations.is_empty());
                state.apply(&step);
            }
        }
    }
}
