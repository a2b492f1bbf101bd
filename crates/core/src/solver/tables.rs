//! Lookup tables for the band layout described in `board.rs`, all built at
//! compile time. Bit `x` of a band word (0..27) is the cell in row `x / 9` of
//! the band and column `x % 9`; a "minirow" is the 3 cells of one row inside
//! one box, bit `3 * r + b` of a 9-bit minirow mask (row `r` of the band, box
//! `b` of the band).

/// The 27 bits of a band word.
pub(crate) const BAND: u32 = (1 << 27) - 1;

/// For the 9 bits of one band row: which of its 3 minirows are non-empty.
pub(crate) const SHRINK: [u8; 512] = {
    let mut t = [0u8; 512];
    let mut v = 0;
    while v < 512 {
        let mut b = 0;
        while b < 3 {
            if (v >> (3 * b)) & 7 != 0 {
                t[v] |= 1 << b;
            }
            b += 1;
        }
        v += 1;
    }
    t
};

/// For a set of band rows (bit r = row r): the cells of those rows.
pub(crate) const ROWS: [u32; 8] = {
    let mut t = [0u32; 8];
    let mut v = 0;
    while v < 8 {
        let mut r = 0;
        while r < 3 {
            if (v >> r) & 1 != 0 {
                t[v] |= 0x1ff << (9 * r);
            }
            r += 1;
        }
        v += 1;
    }
    t
};

/// For the 9 bits of one band row: at most one cell set.
pub(crate) const SINGLE: [bool; 512] = {
    let mut t = [false; 512];
    let mut v = 0;
    while v < 512 {
        t[v] = v & v.wrapping_sub(1) == 0;
        v += 1;
    }
    t
};

/// For word `9 * band + digit` (0..27): the same digit's words in the two
/// other bands. Padded to 32.
pub(crate) const OTHER_WORDS: [[u8; 2]; 32] = {
    let mut t = [[0u8; 2]; 32];
    let mut i = 0;
    while i < 27 {
        t[i] = [((i + 9) % 27) as u8, ((i + 18) % 27) as u8];
        i += 1;
    }
    t
};

/// A 9-bit minirow mask widened to the 27 cells it covers.
pub(crate) const EXPAND: [u32; 512] = {
    let mut t = [0u32; 512];
    let mut v = 0;
    while v < 512 {
        let mut k = 0;
        while k < 9 {
            if (v >> k) & 1 != 0 {
                let (r, b) = (k / 3, k % 3);
                t[v] |= 7 << (9 * r + 3 * b);
            }
            k += 1;
        }
        v += 1;
    }
    t
};

/// Box-line reasoning for one digit in one band, on minirows. In a solution
/// the digit fills exactly one minirow per band row and one per box: a 3x3
/// permutation pattern. Maps the non-empty minirows to the union of the
/// permutation patterns that fit inside them (0: none fits, contradiction).
/// This subsumes pointing and claiming inside the band: a row confined to one
/// box clears that box's other rows, and a box confined to one row clears
/// that row's other boxes.
pub(crate) const COMPLEX: [u16; 512] = {
    const PERMS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut t = [0u16; 512];
    let mut v = 0;
    while v < 512 {
        let mut p = 0;
        while p < 6 {
            let pat = (1 << PERMS[p][0]) | (1 << (3 + PERMS[p][1])) | (1 << (6 + PERMS[p][2]));
            if v & pat == pat {
                t[v] |= pat as u16;
            }
            p += 1;
        }
        v += 1;
    }
    t
};

/// `COMPLEX` widened by `EXPAND`: for a minirow occupancy, the cells of the
/// minirows that belong to a permutation pattern (0: none does). One lookup
/// instead of two dependent ones in the band update.
pub(crate) const KEEP: [u32; 512] = {
    let mut t = [0u32; 512];
    let mut v = 0;
    while v < 512 {
        t[v] = EXPAND[COMPLEX[v] as usize];
        v += 1;
    }
    t
};

/// Columns a digit is locked to by this band. Input: the 9-bit set of
/// columns where the digit still has a candidate in the band. A box whose
/// candidates sit in a single column puts the digit in that column within
/// this band, so the other two bands lose it there. Output: those columns,
/// repeated over the 3 rows of a band word.
pub(crate) const LOCKED_COLUMNS: [u32; 512] = {
    let mut t = [0u32; 512];
    let mut v = 0;
    while v < 512 {
        let mut b = 0;
        while b < 3 {
            let g = (v >> (3 * b)) & 7;
            if g == 1 || g == 2 || g == 4 {
                let m = (g << (3 * b)) as u32;
                t[v] |= m | (m << 9) | (m << 18);
            }
            b += 1;
        }
        v += 1;
    }
    t
};

/// For each cell of a band: its peers inside the band (same row, same box,
/// or same column), the cell itself excluded. Padded to 32 entries so an
/// index masked with 31 needs no bounds check.
pub(crate) const PEERS_IN_BAND: [u32; 32] = {
    let mut t = [0u32; 32];
    let mut x = 0;
    while x < 27 {
        let (r, c) = (x / 9, x % 9);
        let row = 0x1ffu32 << (9 * r);
        let col = COLUMN[c];
        let b = 7u32 << (3 * (c / 3));
        let bx = b | (b << 9) | (b << 18);
        t[x] = (row | col | bx) & !(1 << x);
        x += 1;
    }
    t
};

/// Column `c` (0..9) in a band word: 3 cells.
pub(crate) const COLUMN: [u32; 9] = {
    let mut t = [0u32; 9];
    let mut c = 0;
    while c < 9 {
        t[c] = (1 << c) | (1 << (c + 9)) | (1 << (c + 18));
        c += 1;
    }
    t
};

/// For each cell of a band: its column (3 cells), as `COLUMN[x % 9]`
/// without the division. Padded to 32 entries.
pub(crate) const CELL_COLUMN: [u32; 32] = {
    let mut t = [0u32; 32];
    let mut x = 0;
    while x < 27 {
        t[x] = COLUMN[x % 9];
        x += 1;
    }
    t
};

/// For a byte: each of its 8 bits as one byte (0 or 1), lowest bit first.
pub(crate) const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut i = 0;
        while i < 8 {
            if (v >> i) & 1 != 0 {
                t[v] |= 1 << (8 * i);
            }
            i += 1;
        }
        v += 1;
    }
    t
};

/// Box `b` (0..3, left to right) of a band word: 9 cells.
pub(crate) const BOX: [u32; 3] = [0x1c0e07, 0x1c0e07 << 3, 0x1c0e07 << 6];

/// The two other bands.
pub(crate) const OTHER: [[usize; 2]; 3] = [[1, 2], [0, 2], [0, 1]];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_and_columns_partition_the_band() {
        assert_eq!(BOX[0] | BOX[1] | BOX[2], BAND);
        assert_eq!(BOX[0] & BOX[1], 0);
        let mut all = 0;
        for c in COLUMN {
            assert_eq!(all & c, 0);
            all |= c;
        }
        assert_eq!(all, BAND);
    }

    #[test]
    fn peers_are_twenty_minus_other_bands() {
        // 8 in the row, 4 more in the box, 2 more in the column (in-band).
        for p in &PEERS_IN_BAND[..27] {
            assert_eq!(p.count_ones(), 8 + 4 + 2);
        }
    }

    #[test]
    fn complex_keeps_full_and_rejects_uncoverable() {
        assert_eq!(COMPLEX[511], 511);
        // Rows 0 and 1 only in box 0: no permutation fits.
        assert_eq!(COMPLEX[0b100_001_001], 0);
        // Row 0 only in box 0: box 0 loses rows 1 and 2.
        assert_eq!(COMPLEX[0b111_111_001], 0b110_110_001);
        // Box 2 only in row 2: row 2 loses boxes 0 and 1.
        assert_eq!(COMPLEX[0b111_011_011], 0b100_011_011);
    }

    #[test]
    fn cell_column_and_spread() {
        for x in 0..27 {
            assert_eq!(CELL_COLUMN[x], COLUMN[x % 9]);
            assert_ne!(CELL_COLUMN[x] & (1 << x), 0);
        }
        assert_eq!(SPREAD[0b1000_0101], 0x0100_0000_0001_0001);
        assert_eq!(SPREAD[255], 0x0101_0101_0101_0101);
    }

    #[test]
    fn locked_columns() {
        assert_eq!(LOCKED_COLUMNS[0b000_000_010], COLUMN[1]);
        assert_eq!(LOCKED_COLUMNS[0b011_100_011], COLUMN[5]);
    }
}
