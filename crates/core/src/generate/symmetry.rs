//! Symmetries of the clue pattern, and the orbits they split the cells of
//! a grid of any side into: a symmetric puzzle keeps or removes a whole
//! orbit at once. The maps are written once for a side N (row r and row
//! N-1-r); the 9x9 generator keeps its orbits in fixed arrays.

use crate::puzzle::CELLS;
use crate::puzzle::sized::Shape;

/// A map of a grid of side N onto itself, (N, row, column) -> (row, column).
type Map = fn(usize, usize, usize) -> (usize, usize);

/// How the clues of a puzzle mirror each other: a clue's images under the
/// symmetry are clues too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Symmetry {
    /// No symmetry: every cell is its own orbit.
    #[default]
    None,
    /// Rotation by 180 degrees about the centre.
    Rotate180,
    /// Rotation by 90 degrees (so also by 180 and 270).
    Rotate90,
    /// Row r and row 8-r.
    MirrorHorizontal,
    /// Column c and column 8-c.
    MirrorVertical,
    /// (r, c) and (c, r).
    Diagonal,
    /// (r, c) and (8-c, 8-r).
    AntiDiagonal,
    /// Both middle lines (so also rotation by 180 degrees).
    MirrorBoth,
}

impl Symmetry {
    /// Every symmetry.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::None,
        Symmetry::Rotate180,
        Symmetry::Rotate90,
        Symmetry::MirrorHorizontal,
        Symmetry::MirrorVertical,
        Symmetry::Diagonal,
        Symmetry::AntiDiagonal,
        Symmetry::MirrorBoth,
    ];

    /// The generators of the symmetry's group, as maps (N, row, column) ->
    /// (row, column).
    fn generators(self) -> &'static [Map] {
        match self {
            Symmetry::None => &[],
            Symmetry::Rotate180 => &[|n, r, c| (n - 1 - r, n - 1 - c)],
            Symmetry::Rotate90 => &[|n, r, c| (c, n - 1 - r)],
            Symmetry::MirrorHorizontal => &[|n, r, c| (n - 1 - r, c)],
            Symmetry::MirrorVertical => &[|n, r, c| (r, n - 1 - c)],
            Symmetry::Diagonal => &[|_, r, c| (c, r)],
            Symmetry::AntiDiagonal => &[|n, r, c| (n - 1 - c, n - 1 - r)],
            Symmetry::MirrorBoth => &[|n, r, c| (n - 1 - r, c), |n, r, c| (r, n - 1 - c)],
        }
    }

    /// Whether the symmetry maps the boxes of `shape` onto boxes, so that a
    /// symmetric clue pattern is one of the grid as players see it: every
    /// symmetry for square boxes (4x4, 9x9, 16x16...); for boxes of r x c
    /// with r != c (6x6 of 2x3, 12x12 of 3x4...) the turns by 180 degrees
    /// and the mirrors in the middle lines, not the quarter turn or the
    /// diagonals, which would turn the boxes r x c into c x r.
    pub fn fits(self, shape: Shape) -> bool {
        shape.box_rows() == shape.box_cols()
            || !matches!(
                self,
                Symmetry::Rotate90 | Symmetry::Diagonal | Symmetry::AntiDiagonal
            )
    }

    /// The orbits of the symmetry on a grid of side `n`, each its cells
    /// (row-major indices), in the order of their smallest cell.
    pub fn orbits(self, n: usize) -> Vec<Vec<usize>> {
        let mut seen = vec![false; n * n];
        let mut orbits = Vec::new();
        for start in 0..n * n {
            if seen[start] {
                continue;
            }
            seen[start] = true;
            let mut orbit = vec![start];
            let mut k = 0;
            while k < orbit.len() {
                let cell = orbit[k];
                for g in self.generators() {
                    let (r, c) = g(n, cell / n, cell % n);
                    let image = r * n + c;
                    if !seen[image] {
                        seen[image] = true;
                        orbit.push(image);
                    }
                }
                k += 1;
            }
            orbits.push(orbit);
        }
        orbits
    }

    /// The lowercase name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Symmetry::None => "none",
            Symmetry::Rotate180 => "rotate180",
            Symmetry::Rotate90 => "rotate90",
            Symmetry::MirrorHorizontal => "mirror-horizontal",
            Symmetry::MirrorVertical => "mirror-vertical",
            Symmetry::Diagonal => "diagonal",
            Symmetry::AntiDiagonal => "anti-diagonal",
            Symmetry::MirrorBoth => "mirror-both",
        }
    }
}

impl std::str::FromStr for Symmetry {
    type Err = String;

    fn from_str(s: &str) -> Result<Symmetry, String> {
        Symmetry::ALL
            .into_iter()
            .find(|sym| sym.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Symmetry::ALL.iter().map(|s| s.name()).collect();
                format!(
                    "unknown symmetry {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// The orbits of a symmetry: each a set of up to 4 cells, listed once.
#[derive(Debug, Clone)]
pub struct Orbits {
    /// Cells of each orbit, `len[i]` of them used.
    cells: [[u8; 4]; CELLS],
    len: [u8; CELLS],
    count: usize,
}

impl Orbits {
    /// The orbits of `symmetry`, in the order of their smallest cell.
    pub fn of(symmetry: Symmetry) -> Orbits {
        let mut orbits = Orbits {
            cells: [[0; 4]; CELLS],
            len: [0; CELLS],
            count: 0,
        };
        // At most 4 cells an orbit (the group has at most 4 elements).
        for (o, orbit) in symmetry.orbits(9).into_iter().enumerate() {
            for (k, &cell) in orbit.iter().enumerate() {
                orbits.cells[o][k] = cell as u8;
            }
            orbits.len[o] = orbit.len() as u8;
            orbits.count += 1;
        }
        orbits
    }

    /// Number of orbits.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none (never: a grid has cells).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The cells of orbit `i`.
    pub fn cells(&self, i: usize) -> &[u8] {
        &self.cells[i][..self.len[i] as usize]
    }

    /// Whether the cells set in `clues` (a cell is set when nonzero) form
    /// whole orbits.
    pub fn respected_by(&self, clues: &[u8; CELLS]) -> bool {
        (0..self.count).all(|i| {
            let cells = self.cells(i);
            let set = clues[cells[0] as usize] != 0;
            cells.iter().all(|&c| (clues[c as usize] != 0) == set)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbits_partition_the_grid_and_are_closed_under_the_symmetry() {
        for sym in Symmetry::ALL {
            let orbits = Orbits::of(sym);
            let mut hit = [0u8; CELLS];
            for i in 0..orbits.len() {
                for &c in orbits.cells(i) {
                    hit[c as usize] += 1;
                }
                for g in sym.generators() {
                    for &c in orbits.cells(i) {
                        let (r, col) = g(9, c as usize / 9, c as usize % 9);
                        assert!(orbits.cells(i).contains(&((r * 9 + col) as u8)), "{sym:?}");
                    }
                }
            }
            assert!(hit.iter().all(|&n| n == 1), "{sym:?}");
        }
        assert_eq!(Orbits::of(Symmetry::None).len(), 81);
        assert_eq!(Orbits::of(Symmetry::Rotate180).len(), 41);
        assert_eq!(Orbits::of(Symmetry::Rotate90).len(), 21);
        assert_eq!(Orbits::of(Symmetry::MirrorHorizontal).len(), 45);
        assert_eq!(Orbits::of(Symmetry::Diagonal).len(), 45);
        assert_eq!(Orbits::of(Symmetry::MirrorBoth).len(), 25);
    }

    #[test]
    fn orbits_of_every_side_partition_it_and_rectangular_boxes_keep_their_turns() {
        for n in [1, 4, 6, 9, 12, 16, 25] {
            for sym in Symmetry::ALL {
                let orbits = sym.orbits(n);
                let mut hit = vec![0; n * n];
                for orbit in &orbits {
                    assert!(orbit.len() <= 4, "{sym:?} {n}");
                    for &c in orbit {
                        hit[c] += 1;
                        for g in sym.generators() {
                            let (r, col) = g(n, c / n, c % n);
                            assert!(orbit.contains(&(r * n + col)), "{sym:?} {n}");
                        }
                    }
                }
                assert!(hit.iter().all(|&k| k == 1), "{sym:?} {n}");
            }
        }
        // 6x6: 18 pairs and no centre under the half turn.
        assert_eq!(Symmetry::Rotate180.orbits(6).len(), 18);
        let six = Shape::new(2, 3).unwrap();
        let fit: Vec<_> = Symmetry::ALL.into_iter().filter(|s| s.fits(six)).collect();
        assert_eq!(
            fit,
            [
                Symmetry::None,
                Symmetry::Rotate180,
                Symmetry::MirrorHorizontal,
                Symmetry::MirrorVertical,
                Symmetry::MirrorBoth
            ]
        );
        assert!(
            Symmetry::ALL
                .iter()
                .all(|s| s.fits(Shape::new(4, 4).unwrap()))
        );
    }

    #[test]
    fn names_read_back() {
        for sym in Symmetry::ALL {
            assert_eq!(sym.name().parse::<Symmetry>(), Ok(sym));
        }
        assert!("spiral".parse::<Symmetry>().is_err());
    }
}
