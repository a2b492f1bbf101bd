//! The board: digit-major, band-oriented candidate bitboards and the
//! propagation rules on them.
//!
//! ```text
//!  cand[9 * band + d]  (u32, 27 bits used) = cells of `band` where digit d+1 may go
//!
//!            col 0 1 2   3 4 5   6 7 8
//!   band row 0   0 1 2 | 3 4 5 | 6 7 8      bit x  <->  cell 27*band + x
//!   band row 1   9 ...             17       (row-major index of the grid)
//!   band row 2  18 ...             26
//!                box 0 | box 1 | box 2
//!
//!  unsolved[band]  (27 bits)  cells not yet placed
//!  changed         (27 bits)  bit 9*band + d: the word changed since `update`
//!                             last analysed it (kept by `Board`, not saved)
//! ```
//!
//! Each write says which words it really changed, and `settle` analyses
//! those. Marking a word that did not change costs a whole band update
//! (marking all 8 other words of a band for each row single ran 0.66x).
//! Comparing all 27 words with a copy as last analysed takes 11% fewer
//! instructions, but its wide loads wait for the narrow stores just made
//! (the store cannot be forwarded): it ran 0.88-0.96x on every set and
//! mode, except 17-clue any (1.01x).
//!
//! Invariants, kept by `place`:
//! - a placed cell's bit is set for exactly one digit, its own, and that
//!   digit's bit is clear in all 20 peers of the cell;
//! - an unsolved cell may have any set of candidates; an empty one, a row or
//!   box without a digit, or a digit's band with no permutation of minirows
//!   left is a contradiction, found by the rules below;
//! - so a board with no unsolved cell is a valid solution.
//!
//! Propagation (each rule can be switched off through [`Rules`]):
//! - band update (always): for a digit-band word that changed since last
//!   analysed, check each band row still has a candidate;
//! - box-line (`box_line`): keep only minirows that belong to a 3x3
//!   permutation pattern (pointing and claiming within the band) and remove
//!   the digit from columns locked by a box from the two other bands;
//! - hidden singles in rows (`row_singles`): a band row with one candidate
//!   for an open digit gets it placed, found during the band update;
//! - naked singles (`naked_singles`): bit-sliced counting over the 9 digit
//!   words of a band finds cells with one candidate (and empty cells);
//! - hidden singles in columns and boxes (`hidden_singles_after`): once a
//!   search has proved hard, run when the cheaper rules are stuck.
//!
//! The search branches on a cell with two candidates when there is one (see
//! `Board::bivalue` for which, and `Board::bivalue_by_peers` once a search
//! has proved hard), else on a cell with the fewest (MRV). A search has
//! proved hard once it has made 8 guesses: both of its hard-search rules
//! cost more than they save on a puzzle solved in a few guesses.
//!
//! Inspired by public descriptions of JCZSolve / fsss2 (per-digit 81-bit
//! candidate sets held as 3 band words of 27 bits, band-local updates with
//! lookup tables, bivalue guessing) and the tdoku design notes on band
//! bitboards. Written from those descriptions; no code was copied.

use super::ones::{ones, ones9};
use super::tables::{
    BAND, BOX, CELL_COLUMN, COLUMN, KEEP, LOCKED_COLUMNS, OTHER, OTHER_WORDS, PEERS_IN_BAND, ROWS,
    SHRINK, SINGLE, SPREAD,
};
use crate::puzzle::{CELLS, Grid};

/// Which propagation rules run, and when the search changes how it
/// chooses a bivalue cell. [`Rules::DEFAULT`] is the set that pays
/// for itself on the benchmark sets; switching a rule off or on is for
/// measuring what it is worth (the engine stays correct either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Hidden singles found in band rows during the band update.
    pub row_singles: bool,
    /// Box-line reasoning inside a band (pointing/claiming) plus locked
    /// columns across bands.
    pub box_line: bool,
    /// Cells with a single candidate are placed without branching.
    pub naked_singles: bool,
    /// After this many guesses in one solve, look for hidden singles in
    /// columns (and boxes, when box-line is off) before branching
    /// (`u64::MAX`: never, 0: always). Their scans cost more than the
    /// guesses they save on a puzzle solved in a few guesses (serg,
    /// 17-clue); on a hard one they save a sixth of the guesses.
    pub hidden_singles_after: u64,
    /// After this many guesses in one solve, branch on the bivalue cell
    /// with the most unsolved peers instead of the first one a cheap scan
    /// finds (`u64::MAX`: never). Choosing costs a popcount per
    /// bivalue cell, and its branches propagate further: on a puzzle solved
    /// in a few guesses that costs more than it saves, on a hard one it
    /// saves a third of the guesses.
    pub branch_by_peers_after: u64,
    /// Run the generic code path (rules read at run time) even with the
    /// default rules, so ablation figures compare like with like. Benches
    /// only.
    pub generic: bool,
}

impl Rules {
    /// The rules the engine runs unless told otherwise.
    pub const DEFAULT: Rules = Rules {
        row_singles: true,
        box_line: true,
        naked_singles: true,
        hidden_singles_after: 8,
        branch_by_peers_after: 8,
        generic: false,
    };
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::DEFAULT
    }
}

/// All 27 words (bit i = word i): what a new board must analyse.
pub(crate) const ALL_WORDS: u32 = (1 << 27) - 1;

/// The candidate state saved on the search stack (120 bytes). Which band
/// rows have a digit placed is not kept: they are the rows of `cand & !unsolved`.
/// Keeping it cost every placement and every given a store, and made a
/// board 132 bytes, which a copy does through a `memcpy` call.
#[derive(Clone, Copy)]
pub(crate) struct Cands {
    cand: [u32; 27],
    unsolved: [u32; 3],
}

/// The working board: candidates (held in place, on the search stack) plus
/// which words changed since last analysed.
pub(crate) struct Board<'a> {
    pub(crate) c: &'a mut Cands,
    /// The words changed since last analysed (bit i = word i).
    changed: u32,
}
/// Result of propagating a board to a fixpoint.
pub(crate) enum Outcome {
    /// Every cell placed.
    Solved,
    /// No solution below this board.
    Dead,
    /// Branch on this cell (band, bit) over these digits (bit d = digit d+1).
    Branch { band: u8, bit: u8, digits: u16 },
}

impl Cands {
    /// All zero: a placeholder for stack entries, written before being read
    /// (zeroing compiles to a plain memset, unlike a pattern fill).
    pub(crate) const ZERO: Cands = Cands {
        cand: [0; 27],
        unsolved: [0; 3],
    };

    /// The board of a puzzle's givens, before any propagation; `None` when
    /// two givens break the rules (or a value is not a digit).
    ///
    /// One pass over the givens: each clears its digit from its peers (in
    /// its band, then its column in the two other bands), and two givens
    /// break the rules exactly when one finds its own cell already cleared
    /// by the other. The clash is gathered without a branch. Then every
    /// word loses the given cells but its own. Building each digit's words
    /// from masks of its givens' rows, columns and boxes instead, with the
    /// clash found by counting them, took 2,100 instructions per serg
    /// puzzle (35 givens) against about 800.
    pub(crate) fn from_givens(puzzle: &Grid) -> Option<Cands> {
        let filled = given_cells(puzzle)?;
        // Padded to 32 so a masked index needs no bounds check.
        let mut cand = [BAND; 32];
        // given[9 * band + d]: the band's cells given digit d+1.
        let mut given = [0u32; 32];
        let mut clash = 0u32;
        for (band, cells) in puzzle.0.chunks_exact(27).enumerate() {
            let [o1, o2] = OTHER[band];
            let mut f = filled[band];
            while f != 0 {
                let x = f.trailing_zeros() as usize;
                f &= f - 1;
                // A value 1..=9 (`given_cells` checked).
                let d = usize::from(cells[x]).wrapping_sub(1);
                let bit = 1u32 << x;
                let i = (9 * band + d) & 31;
                clash |= bit & !cand[i];
                cand[i] &= !PEERS_IN_BAND[x & 31];
                given[i] |= bit;
                let col = CELL_COLUMN[x & 31];
                cand[(9 * o1 + d) & 31] &= !col;
                cand[(9 * o2 + d) & 31] &= !col;
            }
        }
        if clash != 0 {
            return None;
        }
        let mut c = Cands::ZERO;
        // Band by band, so the compiler does a band's words at once.
        for (band, &f) in filled.iter().enumerate() {
            let words = 9 * band..9 * band + 9;
            let out = &mut c.cand[words.clone()];
            for ((w, &free), &g) in out.iter_mut().zip(&cand[words.clone()]).zip(&given[words]) {
                *w = (free & !f) | g;
            }
        }
        c.unsolved = filled.map(|f| BAND & !f);
        Some(c)
    }

    /// Places digit `d` (0-based) in cell `x` of `band`. The caller has
    /// checked the cell is unsolved and has `d` as a candidate. Returns the
    /// words it changed (bit i = word i; `d`'s word in the band counts as
    /// changed).
    #[inline(always)]
    pub(crate) fn place(&mut self, band: usize, x: usize, d: usize) -> u32 {
        let bit = 1u32 << x;
        let base = 9 * band;
        let mut changed = 0u32;
        for (k, w) in self.cand[base..base + 9].iter_mut().enumerate() {
            changed |= u32::from(*w & bit != 0) << k;
            *w &= !bit;
        }
        self.cand[base + d] |= bit;
        changed << base | self.place_naked(band, x, d)
    }

    /// Makes this board `from` with digit `d` placed in cell `x` of `band`,
    /// as `place` would, reading the words to change from `from` and writing
    /// each once: placing on the copy would read words just stored, and a
    /// band's words are read at once (wide loads), which must wait for such
    /// stores.
    #[inline(always)]
    pub(crate) fn copy_placed(&mut self, from: &Cands, band: usize, x: usize, d: usize) -> u32 {
        *self = *from;
        let bit = 1u32 << x;
        let base = 9 * band;
        let mut changed = 0u32;
        for k in 0..9 {
            let w = from.cand[base + k];
            changed |= u32::from(w & bit != 0) << k;
            self.cand[base + k] = w & !bit;
        }
        self.cand[base + d] = (from.cand[base + d] & !PEERS_IN_BAND[x & 31]) | bit;
        changed = changed << base | 1 << (base + d);
        let col = CELL_COLUMN[x & 31];
        for o in OTHER[band] {
            let w = from.cand[9 * o + d];
            changed |= u32::from(w & col != 0) << (9 * o + d);
            self.cand[9 * o + d] = w & !col;
        }
        self.unsolved[band] = from.unsolved[band] & !bit;
        changed
    }

    /// Places digit `d` in cell `x` of `band` where `d` is the cell's only
    /// candidate: no other digit holds the cell, so only the peers lose `d`.
    /// Returns the words it changed, as `place` does.
    #[inline(always)]
    pub(crate) fn place_naked(&mut self, band: usize, x: usize, d: usize) -> u32 {
        self.cand[9 * band + d] &= !PEERS_IN_BAND[x & 31];
        let mut changed = 1 << (9 * band + d);
        let col = CELL_COLUMN[x & 31];
        for o in OTHER[band] {
            let w = &mut self.cand[9 * o + d];
            changed |= u32::from(*w & col != 0) << (9 * o + d);
            *w &= !col;
        }
        self.unsolved[band] &= !(1u32 << x);
        changed
    }

    /// Places digit `d` in `cells` of `band`, at most one cell in each band
    /// row, where the band update has just
    /// found them hidden singles of their rows: the box-line step has then
    /// already cleared their peers for `d` (in band and, through locked
    /// columns, in the other bands), so only the other digits lose the
    /// cells, all at once; `d`'s word becomes `own`. Returns the words it
    /// changed.
    #[inline(always)]
    fn place_row_singles(&mut self, band: usize, d: usize, own: u32, cells: u32) -> u32 {
        let base = 9 * band;
        let mut changed = 0u32;
        for (k, w) in self.cand[base..base + 9].iter_mut().enumerate() {
            changed |= u32::from(*w & cells != 0) << k;
            *w &= !cells;
        }
        self.cand[base + d] = own;
        self.unsolved[band] &= !cells;
        (changed & !(1 << d)) << base
    }

    /// Takes digit `d` (0-based) from the candidates of cell `x` of
    /// `band`, an unsolved cell (a placed one must keep its digit).
    #[inline]
    pub(crate) fn rule_out(&mut self, band: usize, x: usize, d: usize) {
        debug_assert!(self.unsolved[band] & (1 << x) != 0);
        self.cand[9 * band + d] &= !(1u32 << x);
    }

    /// How many peers of cell `x` of `band` still have digit `d` (0-based)
    /// as a candidate.
    #[inline(always)]
    pub(crate) fn peers_with(&self, band: u8, x: u8, d: usize) -> u32 {
        let (band, x) = (band as usize, x as usize);
        let [o1, o2] = OTHER[band];
        peers_in(
            self.cand[9 * band + d],
            self.cand[9 * o1 + d],
            self.cand[9 * o2 + d],
            x,
        )
    }

    /// The digits (bit d = digit d+1) cell `x` of `band` may still take.
    #[inline(always)]
    pub(crate) fn digits_at(&self, band: usize, x: usize) -> u16 {
        let mut digits = 0u16;
        for d in 0..9 {
            digits |= (((self.cand[9 * band + d] >> x) & 1) as u16) << d;
        }
        digits
    }

    /// The grid of a board with every cell placed. Without a branch per
    /// cell: each band's digit values as 4 bit planes, each plane spread to
    /// one bit per byte, 8 cells at a time.
    pub(crate) fn solution(&self) -> Grid {
        // 81 cells plus room for the last 8-byte write.
        let mut out = [0u8; CELLS + 7];
        for band in 0..3 {
            let w = &self.cand[9 * band..9 * band + 9];
            // Bit k of each cell's value (digit d is value d+1).
            let planes = [
                w[0] | w[2] | w[4] | w[6] | w[8],
                w[1] | w[2] | w[5] | w[6],
                w[3] | w[4] | w[5] | w[6],
                w[7] | w[8],
            ];
            // The last 8 bytes of a band spill zeros into the next band,
            // which is written after it.
            for chunk in 0..4 {
                let mut bytes = 0u64;
                for (k, p) in planes.iter().enumerate() {
                    bytes |= SPREAD[((p >> (8 * chunk)) & 0xff) as usize] << k;
                }
                let at = 27 * band + 8 * chunk;
                out[at..at + 8].copy_from_slice(&bytes.to_le_bytes());
            }
        }
        let mut g = [0u8; CELLS];
        g.copy_from_slice(&out[..CELLS]);
        Grid(g)
    }
}

/// How many peers of cell `x` of a band are in `own` (a word of that band)
/// or in `w1` and `w2` (words of the two other bands), counted as one word:
/// the column's cells of the other bands are disjoint from each other once
/// `w2`'s are moved up a bit, and all of them from the band's cells once
/// moved up 32 bits.
#[inline(always)]
fn peers_in(own: u32, w1: u32, w2: u32, x: usize) -> u32 {
    let col = CELL_COLUMN[x & 31];
    let others = (w1 & col) | (w2 & col) << 1;
    ones([u64::from(own & PEERS_IN_BAND[x & 31]) | u64::from(others) << 32])
}

/// Each band's given (non-zero) cells; `None` when a value is not a digit.
/// Eight cells at a time, without a branch per cell: whether a cell is
/// blank is a coin toss the branch predictor loses.
#[inline(always)]
fn given_cells(puzzle: &Grid) -> Option<[u32; 3]> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = !LOW7;
    let (mut filled, mut over) = (0u128, 0u64);
    for (k, chunk) in puzzle.0.chunks_exact(8).enumerate() {
        let v = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        // The high bit of each byte: the byte is not 0 / is over 9.
        let nonzero = (((v & LOW7) + LOW7) | v) & HIGH;
        over |= (((v & LOW7) + 0x7676_7676_7676_7676) | v) & HIGH;
        // Gathers the 8 high bits into one byte.
        let bits = (nonzero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        filled |= u128::from(bits) << (8 * k);
    }
    let last = puzzle.0[CELLS - 1];
    filled |= u128::from(last != 0) << (CELLS - 1);
    if over != 0 || last > 9 {
        return None;
    }
    let band = |b: u32| (filled >> (27 * b)) as u32 & BAND;
    Some([band(0), band(1), band(2)])
}

impl Board<'_> {
    /// A board to propagate, working on `c` in place; `changed` holds the
    /// words changed since last analysed ([`ALL_WORDS`] for a new board).
    #[inline(always)]
    pub(crate) fn new(c: &mut Cands, changed: u32) -> Board<'_> {
        Board { c, changed }
    }

    /// Analyses digit-band word `i` (= 9 * band + digit). False on a
    /// contradiction.
    #[inline(always)]
    fn update(&mut self, i: usize, r: Rules) -> bool {
        let (band, d) = (i / 9, i % 9);
        self.changed &= !(1 << i);
        let mut m = self.c.cand[i];
        if r.box_line {
            let s = SHRINK[(m & 0x1ff) as usize] as usize
                | (SHRINK[((m >> 9) & 0x1ff) as usize] as usize) << 3
                | (SHRINK[((m >> 18) & 0x1ff) as usize] as usize) << 6;
            let keep = KEEP[s & 0x1ff];
            if keep == 0 {
                return false;
            }
            m &= keep;
            let locked = LOCKED_COLUMNS[((m | m >> 9 | m >> 18) & 0x1ff) as usize];
            // The same digit's words in the two other bands, marked changed
            // if they lose anything.
            let [o1, o2] = OTHER_WORDS[i & 31].map(usize::from);
            let (w1, w2) = (self.c.cand[o1], self.c.cand[o2]);
            self.changed |= u32::from(w1 & locked != 0) << o1 | u32::from(w2 & locked != 0) << o2;
            self.c.cand[o1] = w1 & !locked;
            self.c.cand[o2] = w2 & !locked;
            // `cand[i] = m` is written last: row singles read the band's
            // words at once (wide loads), which would wait for this store.
        } else if m & 0x1ff == 0 || m & (0x1ff << 9) == 0 || m & (0x1ff << 18) == 0 {
            return false;
        }
        if r.row_singles {
            // Rows with one spot left (none is a contradiction found above);
            // those whose spot is unsolved have a hidden single.
            let single = u32::from(SINGLE[(m & 0x1ff) as usize])
                | u32::from(SINGLE[((m >> 9) & 0x1ff) as usize]) << 1
                | u32::from(SINGLE[((m >> 18) & 0x1ff) as usize]) << 2;
            let mut cells = m & ROWS[single as usize] & self.c.unsolved[band];
            if cells != 0 {
                if r.box_line {
                    // The rows of a permutation pattern are in different
                    // boxes and columns: the singles of one word are not
                    // peers, and box-line already cleared their peers.
                    self.changed |= self.c.place_row_singles(band, d, m, cells);
                    return true;
                }
                while cells != 0 {
                    let x = cells.trailing_zeros() as usize;
                    cells &= cells - 1;
                    if self.c.cand[i] & (1 << x) == 0 {
                        // Cleared by a single placed just before.
                        return false;
                    }
                    self.changed |= self.c.place(band, x, d);
                }
            }
        }
        if r.box_line {
            self.c.cand[i] = m;
        }
        true
    }

    /// Runs `update` on every changed word until none changes.
    #[inline(always)]
    fn settle(&mut self, r: Rules) -> bool {
        loop {
            let mut changed = self.changed;
            if changed == 0 {
                return true;
            }
            while changed != 0 {
                let i = changed.trailing_zeros() as usize;
                changed &= changed - 1;
                if !self.update(i, r) {
                    return false;
                }
            }
        }
    }

    /// Places digits that have one spot left in a column (and, when box-line
    /// is off, in a box). `Some(true)` if any was placed, `None` on a
    /// contradiction (a column or box with no spot for a digit).
    #[inline(never)]
    fn hidden_singles(&mut self, r: Rules) -> Option<bool> {
        let mut placed = false;
        for d in 0..9 {
            let (m0, m1, m2) = (self.c.cand[d], self.c.cand[9 + d], self.c.cand[18 + d]);
            // Per cell position of a band: seen in one band / in two or more.
            let one27 = m0 | m1 | m2;
            let two27 = (m0 & m1) | (m2 & (m0 | m1));
            let (a, b, c) = (one27 & 0x1ff, (one27 >> 9) & 0x1ff, one27 >> 18);
            let one = a | b | c;
            if one != 0x1ff {
                return None;
            }
            let two = ((two27 | two27 >> 9 | two27 >> 18) & 0x1ff) | (a & b) | (c & (a | b));
            // Columns where the digit is already placed are not news.
            let p27 = (m0 & !self.c.unsolved[0])
                | (m1 & !self.c.unsolved[1])
                | (m2 & !self.c.unsolved[2]);
            let done = (p27 | p27 >> 9 | p27 >> 18) & 0x1ff;
            let mut cols = one & !two & !done;
            while cols != 0 {
                let c = cols.trailing_zeros() as usize;
                cols &= cols - 1;
                for band in 0..3 {
                    let hit = self.c.cand[9 * band + d] & COLUMN[c];
                    if hit != 0 {
                        if hit & self.c.unsolved[band] != 0 {
                            self.changed |= self.c.place(band, hit.trailing_zeros() as usize, d);
                            placed = true;
                        }
                        break;
                    }
                    if band == 2 {
                        // The column's last spot was taken by a peer just placed.
                        return None;
                    }
                }
            }
            if !r.box_line {
                for band in 0..3 {
                    for bx in BOX {
                        let m = self.c.cand[9 * band + d] & bx;
                        if m == 0 {
                            return None;
                        }
                        if m & (m - 1) == 0 && m & self.c.unsolved[band] != 0 {
                            self.changed |= self.c.place(band, m.trailing_zeros() as usize, d);
                            placed = true;
                        }
                    }
                }
            }
        }
        Some(placed)
    }

    /// The cell with the fewest candidates (at least 3: called when no cell
    /// has fewer), as a branch.
    #[inline(never)]
    fn fewest(&self) -> Outcome {
        let mut best = (0usize, 0usize, u32::MAX);
        for band in 0..3 {
            let mut u = self.c.unsolved[band];
            while u != 0 {
                let x = u.trailing_zeros() as usize;
                u &= u - 1;
                let n = ones9(self.c.digits_at(band, x));
                if n < best.2 {
                    best = (band, x, n);
                    if n <= 3 {
                        return self.branch_at(band, x);
                    }
                }
            }
        }
        self.branch_at(best.0, best.1)
    }

    /// The bivalue cell to branch on once a search is hard (see
    /// `Rules::branch_by_peers_after`): the one with the most unsolved peers,
    /// the last of them in grid order. Both its branches reach furthest, so
    /// a wrong one dies sooner. From the start of each search, this takes
    /// 31-37% fewer guesses than `bivalue` on forum hardest (80 against 127
    /// per puzzle in any mode, 176 against 262 counting) and 22-42% fewer
    /// on top1465 and 17-clue, but serg's quick searches ran 0.74-0.86x.
    #[inline(always)]
    fn bivalue_by_peers(&self, pairs: &[u32; 3]) -> Option<(usize, usize)> {
        if *pairs == [0; 3] {
            return None;
        }
        // Peers, then grid order, in one key: the largest is the cell, found
        // without a branch on each comparison.
        let mut best = 0u32;
        for (band, &p) in pairs.iter().enumerate() {
            let [o1, o2] = OTHER[band];
            let mut m = p;
            while m != 0 {
                let x = m.trailing_zeros();
                m &= m - 1;
                let u = &self.c.unsolved;
                let peers = peers_in(u[band], u[o1], u[o2], x as usize);
                best = best.max(peers << 8 | (band as u32) << 5 | x);
            }
        }
        Some(((best >> 5 & 3) as usize, (best & 31) as usize))
    }

    /// The bivalue cell to branch on, given each band's bivalue cells. The
    /// scan goes digit by digit, band by band (the last such cell of a
    /// band), starting from the higher digit of the last bivalue cell in
    /// grid order, so no digit label is preferred. Against that last cell
    /// itself, this takes 7-9% fewer guesses on forum hardest (127 against
    /// 137 per puzzle in any mode, 262 against 287 counting) and 10-13% fewer
    /// on top1465; 17-clue and serg within 5%.
    #[inline(always)]
    fn bivalue(&self, pairs: &[u32; 3]) -> Option<(usize, usize)> {
        let last = pairs.iter().rposition(|&p| p != 0)?;
        let x = 31 - pairs[last].leading_zeros() as usize;
        let start = super::high(self.c.digits_at(last, x));
        for k in 0..9 {
            let d = (start + k) % 9;
            for (band, &p) in pairs.iter().enumerate() {
                let m = p & self.c.cand[9 * band + d];
                if m != 0 {
                    return Some((band, 31 - m.leading_zeros() as usize));
                }
            }
        }
        Some((last, x))
    }

    #[inline]
    fn branch_at(&self, band: usize, x: usize) -> Outcome {
        Outcome::Branch {
            band: band as u8,
            bit: x as u8,
            digits: self.c.digits_at(band, x),
        }
    }

    /// Applies the rules until nothing changes, then says what to do next;
    /// `guesses` is how many the search has made so far.
    #[inline(always)]
    pub(crate) fn propagate(&mut self, r: Rules, guesses: u64) -> Outcome {
        'fixpoint: loop {
            if !self.settle(r) {
                return Outcome::Dead;
            }
            if self.c.unsolved == [0; 3] {
                return Outcome::Solved;
            }
            // Bit-sliced count of candidates per cell, one band at a time:
            // finds empty cells, naked singles and a bivalue cell in one pass.
            let mut placed = false;
            let mut single = None;
            // Each band's bivalue cells.
            let mut pairs = [0u32; 3];
            for (band, band_pairs) in pairs.iter_mut().enumerate() {
                let u = self.c.unsolved[band];
                if u == 0 {
                    continue;
                }
                let (mut one, mut two, mut three) = (0u32, 0u32, 0u32);
                for d in 0..9 {
                    let m = self.c.cand[9 * band + d];
                    three |= two & m;
                    two |= one & m;
                    one |= m;
                }
                if u & !one != 0 {
                    return Outcome::Dead;
                }
                let singles = u & !two;
                if singles != 0 {
                    if !r.naked_singles {
                        single = single.or(Some((band, singles.trailing_zeros() as usize)));
                        continue;
                    }
                    // Digit by digit: a naked single is in one word only,
                    // so no other digit loses the cell.
                    for d in 0..9 {
                        let mut mine = singles & self.c.cand[9 * band + d];
                        while mine != 0 {
                            let x = mine.trailing_zeros() as usize;
                            mine &= mine - 1;
                            if self.c.cand[9 * band + d] & (1 << x) == 0 {
                                // Two singles of one unit want the same digit.
                                return Outcome::Dead;
                            }
                            self.changed |= self.c.place_naked(band, x, d);
                        }
                    }
                    if singles & self.c.unsolved[band] != 0 {
                        // A single lost its digit to a single placed before it.
                        return Outcome::Dead;
                    }
                    placed = true;
                    continue;
                }
                *band_pairs = u & two & !three;
            }
            if placed {
                continue 'fixpoint;
            }
            if guesses >= r.hidden_singles_after {
                match self.hidden_singles(r) {
                    None => return Outcome::Dead,
                    Some(true) => continue 'fixpoint,
                    Some(false) => {}
                }
            }
            let pair = if guesses >= r.branch_by_peers_after {
                self.bivalue_by_peers(&pairs)
            } else {
                self.bivalue(&pairs)
            };
            return match single.or(pair) {
                Some((band, x)) => self.branch_at(band, x),
                None => self.fewest(),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next value of a xorshift generator: test data, not randomness.
    fn xorshift(seed: &mut u32) -> u32 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 17;
        *seed ^= *seed << 5;
        *seed
    }

    /// The board of `puzzle`'s givens built given by given, as placing
    /// them would; `None` on a clash.
    fn from_givens_one_by_one(puzzle: &Grid) -> Option<Cands> {
        let mut c = Cands {
            cand: [BAND; 27],
            unsolved: [BAND; 3],
        };
        for (i, &v) in puzzle.0.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let (band, x, d) = (i / 27, i % 27, usize::from(v) - 1);
            if c.cand[9 * band + d] & (1 << x) == 0 {
                return None;
            }
            c.place(band, x, d);
        }
        Some(c)
    }

    #[test]
    fn givens_board_matches_placing_the_givens_one_by_one() {
        let solved =
            "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
        let mut seed = 0x2545_f491_u32;
        let mut next = || xorshift(&mut seed);
        let mut clashes = 0;
        for round in 0..500 {
            let mut g = Grid::from_text(solved).unwrap();
            for v in &mut g.0 {
                if next() % 3 != 0 {
                    *v = 0;
                }
            }
            // Some rounds get a few givens that may clash.
            if round % 2 == 1 {
                for _ in 0..3 {
                    g.0[(next() % 81) as usize] = (next() % 10) as u8;
                }
            }
            let (a, b) = (Cands::from_givens(&g), from_givens_one_by_one(&g));
            assert_eq!(a.is_some(), b.is_some(), "{}", g.to_text());
            clashes += usize::from(b.is_none());
            if let (Some(a), Some(b)) = (a, b) {
                assert_eq!(
                    (a.cand, a.unsolved),
                    (b.cand, b.unsolved),
                    "{}",
                    g.to_text()
                );
            }
        }
        // Both kinds of board were seen.
        assert!((50..250).contains(&clashes), "{clashes} clashes");
    }

    #[test]
    fn copy_placed_matches_placing_on_a_copy() {
        let solved =
            "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
        let mut seed = 0x1234_5679_u32;
        let mut placements = 0;
        for _ in 0..300 {
            let mut g = Grid::from_text(solved).unwrap();
            for v in &mut g.0 {
                if xorshift(&mut seed) & 1 == 0 {
                    *v = 0;
                }
            }
            let from = Cands::from_givens(&g).unwrap();
            for band in 0..3 {
                let mut u = from.unsolved[band];
                while u != 0 {
                    let x = u.trailing_zeros() as usize;
                    u &= u - 1;
                    for d in 0..9 {
                        if from.cand[9 * band + d] & (1 << x) == 0 {
                            continue;
                        }
                        let mut a = Cands::ZERO;
                        let changed_a = a.copy_placed(&from, band, x, d);
                        let mut b = from;
                        let changed_b = b.place(band, x, d);
                        assert_eq!(
                            (a.cand, a.unsolved, changed_a),
                            (b.cand, b.unsolved, changed_b),
                            "{} band {band} cell {x} digit {d}",
                            g.to_text()
                        );
                        placements += 1;
                    }
                }
            }
        }
        assert!(placements > 10_000, "{placements} placements");
    }

    #[test]
    fn given_cells_match_a_cell_by_cell_scan() {
        // A pseudo-random fill of every value 0..=9 in every position.
        let mut seed = 0x9e37_79b9_u32;
        for _ in 0..200 {
            let mut g = [0u8; CELLS];
            for v in &mut g {
                let r = xorshift(&mut seed);
                *v = (r % 10) as u8 * u8::from(r & 0x300 != 0);
            }
            let mut want = [0u32; 3];
            for (i, &v) in g.iter().enumerate() {
                want[i / 27] |= u32::from(v != 0) << (i % 27);
            }
            assert_eq!(given_cells(&Grid(g)), Some(want));
        }
        for (i, bad) in [(0, 10), (40, 0x80), (79, 255), (80, 10)] {
            let mut g = [0u8; CELLS];
            g[i] = bad;
            assert_eq!(given_cells(&Grid(g)), None, "value {bad} at {i}");
        }
    }

    #[test]
    fn solution_reads_every_cell() {
        // Any full assignment, valid or not: one digit per cell.
        let mut c = Cands::ZERO;
        let mut want = [0u8; CELLS];
        for (i, w) in want.iter_mut().enumerate() {
            let d = (i * 7 + i / 9) % 9;
            c.cand[9 * (i / 27) + d] |= 1 << (i % 27);
            *w = d as u8 + 1;
        }
        assert_eq!(c.solution(), Grid(want));
    }
}
