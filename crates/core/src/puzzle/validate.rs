//! Checks a puzzle, and a player's progress on it, without judging: a grid
//! that breaks the rules gets an answer listing how, not an error.
//!
//! The rule checks here are plain scans of the grid (every pair of cells of
//! a unit, every blank cell's peers); whether the puzzle has one solution is
//! for the engine (the service asks it).

use super::sized::SizedGrid;
use super::{CELLS, Cell, Grid, Unit};

/// Two cells of one unit holding the same digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// The earlier cell.
    pub first: Cell,
    /// The later cell.
    pub second: Cell,
    /// The unit they share.
    pub unit: Unit,
    /// The digit both hold, 1-9.
    pub digit: u8,
}

/// The conflicts of a grid: the first ones listed, and how many there are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conflicts {
    /// The first conflicts, in the order [`conflicts`] lists them.
    pub first: Vec<Conflict>,
    /// Every conflict of the grid, counted (listed or not).
    pub total: u32,
}

/// The pairs of cells that share a unit and hold the same digit: the first
/// `max` listed (rows first, then columns, then boxes, each by unit and then
/// by cell; a pair that shares a row and a box is listed for each), and all
/// of them counted. Values above 9 are not digits and are not compared.
///
/// The count comes from each unit's tally of digits (k cells of one digit
/// make k(k-1)/2 pairs), and the listing stops at `max`: the work is a scan
/// of the grid, however many pairs it holds.
pub fn conflicts(grid: &Grid, max: usize) -> Conflicts {
    // One scan for every shape: the 9x9 grid's is the sized grid's.
    let (listed, total) = SizedGrid::from_grid(grid).conflicts(max);
    Conflicts {
        first: listed
            .into_iter()
            .map(|(kind, index, a, b, digit)| Conflict {
                first: Cell(a.index.min(b.index)),
                second: Cell(a.index.max(b.index)),
                unit: Unit::new(kind, index),
                digit,
            })
            .collect(),
        total,
    }
}

/// The blank cells whose row, column and box hold all nine digits between
/// them, in cell order. Only the digits in the grid count (no further
/// reasoning), so the answer is the same whoever asks.
pub fn cells_without_candidates(grid: &Grid) -> Vec<Cell> {
    SizedGrid::from_grid(grid)
        .cells_without_candidates()
        .into_iter()
        .map(Cell)
        .collect()
}

/// The filled cells of `current` whose digit is not the one in `solution`,
/// in cell order.
pub fn wrong_cells(current: &Grid, solution: &Grid) -> Vec<Cell> {
    (0..CELLS)
        .filter(|&i| current.0[i] != 0 && current.0[i] != solution.0[i])
        .map(Cell)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::PuzzleError;
    use crate::puzzle::error::check_kept;
    use crate::puzzle::sized::Shape;

    const CLASSIC: &str =
        "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    const CLASSIC_SOLVED: &str =
        "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

    #[test]
    fn a_legal_puzzle_has_no_conflicts_and_every_cell_has_a_candidate() {
        let g = Grid::from_text(CLASSIC).unwrap();
        assert_eq!(conflicts(&g, usize::MAX), Conflicts::default());
        assert!(cells_without_candidates(&g).is_empty());
    }

    #[test]
    fn a_digit_twice_in_a_row_and_a_box_is_one_conflict_per_unit() {
        let mut g = Grid::EMPTY;
        g.0[0] = 4;
        g.0[1] = 4;
        g.0[80] = 4;
        let found = conflicts(&g, usize::MAX);
        assert_eq!(found.total, 2);
        assert_eq!(
            found.first,
            vec![
                Conflict {
                    first: Cell(0),
                    second: Cell(1),
                    unit: Unit::Row(0),
                    digit: 4
                },
                Conflict {
                    first: Cell(0),
                    second: Cell(1),
                    unit: Unit::Box(0),
                    digit: 4
                },
            ]
        );
    }

    #[test]
    fn conflicts_agree_with_check_givens() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..2000 {
            let mut g = Grid::EMPTY;
            for _ in 0..(round % 30) {
                g.0[(next() % 81) as usize] = (next() % 10) as u8;
            }
            let found = conflicts(&g, usize::MAX);
            assert_eq!(found.total as usize, found.first.len(), "{g}");
            match g.check_givens() {
                Ok(()) => assert!(found.first.is_empty(), "{g}"),
                Err(crate::puzzle::PuzzleError::Conflict {
                    unit,
                    first,
                    second,
                    value,
                }) => assert!(
                    found.first.contains(&Conflict {
                        first: Cell(first.index),
                        second: Cell(second.index),
                        unit,
                        digit: value
                    }),
                    "{g}"
                ),
                Err(e) => panic!("{e}"),
            }
            // A shorter listing is the start of the full one.
            let few = conflicts(&g, 3);
            assert_eq!(few.total, found.total, "{g}");
            assert_eq!(
                few.first[..],
                found.first[..found.first.len().min(3)],
                "{g}"
            );
        }
    }

    #[test]
    fn a_grid_of_ones_counts_every_pair_and_lists_the_first() {
        let g = Grid([1; CELLS]);
        let found = conflicts(&g, 64);
        // 27 units of 9 cells: 36 pairs each.
        assert_eq!(found.total, 27 * 36);
        assert_eq!(found.first.len(), 64);
        assert_eq!(found.first[..], conflicts(&g, usize::MAX).first[..64]);
        assert_eq!(
            found.first[0],
            Conflict {
                first: Cell(0),
                second: Cell(1),
                unit: Unit::Row(0),
                digit: 1
            }
        );
    }

    #[test]
    fn a_blank_whose_peers_hold_every_digit_has_no_candidate() {
        // Row 0 holds 1-8 and column 8 holds 9: cell 8 has nothing left.
        let g = Grid::from_text(&format!("12345678.{}9{}", ".".repeat(8), ".".repeat(63))).unwrap();
        assert_eq!(cells_without_candidates(&g), vec![Cell(8)]);
    }

    #[test]
    fn wrong_entries_and_changed_givens_are_found() {
        let puzzle = Grid::from_text(CLASSIC).unwrap();
        let solution = Grid::from_text(CLASSIC_SOLVED).unwrap();
        let mut current = puzzle;
        current.0[2] = 4; // right
        current.0[3] = 1; // wrong: 6
        assert_eq!(wrong_cells(&current, &solution), vec![Cell(3)]);
        let kept = |current: &Grid| check_kept(Shape::CLASSIC, &puzzle.0, &current.0);
        assert_eq!(kept(&current), Ok(()));
        current.0[0] = 0;
        assert_eq!(
            kept(&current),
            Err(PuzzleError::ChangedGiven {
                at: Cell(0).into(),
                given: 5,
                found: 0
            })
        );
    }
}
