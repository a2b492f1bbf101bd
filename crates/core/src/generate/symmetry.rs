//! Symmetries of the clue pattern, and the orbits they split the 81 cells
//! into: a symmetric puzzle keeps or removes a whole orbit at once.

use crate::puzzle::CELLS;

/// A map of the grid onto itself, (row, column) -> (row, column).
type Map = fn(usize, usize) -> (usize, usize);

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

    /// The generators of the symmetry's group, as maps (row, column) ->
    /// (row, column).
    fn generators(self) -> &'static [Map] {
        match self {
            Symmetry::None => &[],
            Symmetry::Rotate180 => &[|r, c| (8 - r, 8 - c)],
            Symmetry::Rotate90 => &[|r, c| (c, 8 - r)],
            Symmetry::MirrorHorizontal => &[|r, c| (8 - r, c)],
            Symmetry::MirrorVertical => &[|r, c| (r, 8 - c)],
            Symmetry::Diagonal => &[|r, c| (c, r)],
            Symmetry::AntiDiagonal => &[|r, c| (8 - c, 8 - r)],
            Symmetry::MirrorBoth => &[|r, c| (8 - r, c), |r, c| (r, 8 - c)],
        }
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
        let mut seen = [false; CELLS];
        for start in 0..CELLS {
            if seen[start] {
                continue;
            }
            // Closure of {start} under the generators: at most 4 cells.
            let o = orbits.count;
            orbits.cells[o][0] = start as u8;
            orbits.len[o] = 1;
            seen[start] = true;
            let mut k = 0;
            while k < orbits.len[o] as usize {
                let cell = orbits.cells[o][k] as usize;
                for g in symmetry.generators() {
                    let (r, c) = g(cell / 9, cell % 9);
                    let image = r * 9 + c;
                    if !seen[image] {
                        seen[image] = true;
                        orbits.cells[o][orbits.len[o] as usize] = image as u8;
                        orbits.len[o] += 1;
                    }
                }
                k += 1;
            }
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
                        let (r, col) = g(c as usize / 9, c as usize % 9);
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
    fn names_read_back() {
        for sym in Symmetry::ALL {
            assert_eq!(sym.name().parse::<Symmetry>(), Ok(sym));
        }
        assert!("spiral".parse::<Symmetry>().is_err());
    }
}
