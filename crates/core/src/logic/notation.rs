//! How steps write cells, digits and lines: r1c1 notation, as players do.

use std::fmt;

use super::candidates::{bits_of, digits_of};

/// A cell as people write it: r3c5 (both from 1).
pub(crate) struct Rc(pub(crate) usize, pub(crate) usize);

impl fmt::Display for Rc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}c{}", self.0 / self.1 + 1, self.0 % self.1 + 1)
    }
}

/// A list of cells as people write it: r1c1, r1c5 and r2c3.
pub(crate) struct Cells<'a>(pub(crate) &'a [usize], pub(crate) usize);

impl fmt::Display for Cells<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        for (i, &c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " and " } else { ", " })?;
            }
            write!(f, "{}", Rc(c, self.1))?;
        }
        Ok(())
    }
}

/// A digit set as people write it: {1,5}.
pub(crate) struct Digits(pub(crate) u64);

impl fmt::Display for Digits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, d) in digits_of(self.0).enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("}")
    }
}

/// Lines as people write them: rows 1 and 4 / columns 2, 5 and 8. `rows`
/// says which; the mask holds the lines' indices.
pub(crate) struct Lines(pub(crate) bool, pub(crate) u64);

impl fmt::Display for Lines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0 { "rows " } else { "columns " })?;
        let n = self.1.count_ones() as usize;
        for (i, line) in bits_of(self.1).enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " and " } else { ", " })?;
            }
            write!(f, "{}", line + 1)?;
        }
        Ok(())
    }
}
