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
//!  open_rows[band] (27 bits)  bit 3*d + r: band row r has not got digit d+1 placed
//!  prev[9 * band + d]         cand[9 * band + d] as `update` last analysed it;
//!                             a word that differs is analysed again
//! ```
//!
//! Placing a digit does not record which words it changed: `settle` finds
//! them by comparing all 27 words with `prev` (a few vector compares), so
//! the placements stay plain and-nots, and row singles found in one word are
//! placed together. This cut instructions by ~30% on every set against
//! tracking changes at each write.
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
//! - hidden singles in columns and boxes (`hidden_singles`, off by default):
//!   run only when the cheaper rules are stuck.
//!
//! The search branches on a cell with two candidates when there is one (see
//! `Board::bivalue` for which, and `Board::bivalue_by_peers` once a search
//! has proved hard), else on a cell with the fewest (MRV).
//!
//! Inspired by public descriptions of JCZSolve / fsss2 (per-digit 81-bit
//! candidate sets held as 3 band words of 27 bits, band-local updates with
//! lookup tables, bivalue guessing) and the tdoku design notes on band
//! bitboards. Written from those descriptions; no code was copied.

use super::tables::{
    BAND, BOX, COLUMN, KEEP, LOCKED_COLUMNS, OTHER, OTHER_WORDS, PEERS_IN_BAND, ROWS, SHRINK,
    SINGLE,
};
use crate::grid::{CELLS, Grid};

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
    /// Hidden singles in columns (and boxes, when box-line is off), looked
    /// for before branching. Off by default: it saves guesses, but on every
    /// set but forum hardest its scans cost more than the guesses it saves
    /// (ablation in the README).
    pub hidden_singles: bool,
    /// After this many guesses in one solve, branch on the bivalue cell
    /// with the most unsolved peers instead of the first one a cheap scan
    /// finds (`u64::MAX`: never). Choosing costs a few popcounts per
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
        hidden_singles: false,
        branch_by_peers_after: 8,
        generic: false,
    };
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::DEFAULT
    }
}

/// The 27 candidate words of a board (`Cands::cand`, and the copy of them
/// as `settle` last analysed them).
pub(crate) type Words = [u32; 27];

/// Words no board can have (bits above 27 set): as `Words` last analysed,
/// says every word of a new board must be analysed.
pub(crate) const NEVER_ANALYSED: Words = [u32::MAX; 27];

/// The candidate state saved on the search stack (132 bytes).
#[derive(Clone, Copy)]
pub(crate) struct Cands {
    cand: Words,
    unsolved: [u32; 3],
    open_rows: [u32; 3],
}

/// The working board: candidates (held in place, on the search stack) plus
/// each word as last analysed.
pub(crate) struct Board<'a> {
    pub(crate) c: &'a mut Cands,
    prev: &'a mut Words,
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
        open_rows: [0; 3],
    };

    /// No digit placed, every candidate open.
    pub(crate) const EMPTY: Cands = Cands {
        cand: [BAND; 27],
        unsolved: [BAND; 3],
        open_rows: [BAND; 3],
    };

    /// The board of a puzzle's givens, before any propagation; `None` when
    /// two givens break the rules (or a value is not a digit).
    pub(crate) fn from_givens(puzzle: &Grid) -> Option<Cands> {
        let mut c = Cands::EMPTY;
        let mut given = [[0u32; 9]; 3];
        for (band, cells) in puzzle.0.chunks_exact(27).enumerate() {
            for (x, &v) in cells.iter().enumerate() {
                if v == 0 {
                    continue;
                }
                let d = usize::from(v) - 1;
                if d >= 9 {
                    return None;
                }
                // Clears the digit from the peers only: the other digits
                // lose all given cells at once below.
                c.place_naked(band, x, d);
                given[band][d] |= 1 << x;
            }
        }
        for (band, given) in given.iter().enumerate() {
            let placed = BAND & !c.unsolved[band];
            for (d, &g) in given.iter().enumerate() {
                let w = c.cand[9 * band + d];
                if w & g != g {
                    // A given of the same digit among its peers.
                    return None;
                }
                c.cand[9 * band + d] = (w & !placed) | g;
            }
        }
        Some(c)
    }

    /// Places digit `d` (0-based) in cell `x` of `band`. The caller has
    /// checked the cell is unsolved and has `d` as a candidate. Which words
    /// changed is not tracked here: the next `settle` compares the words
    /// with their last analysed values.
    #[inline(always)]
    pub(crate) fn place(&mut self, band: usize, x: usize, d: usize) {
        let bit = 1u32 << x;
        let base = 9 * band;
        for w in &mut self.cand[base..base + 9] {
            *w &= !bit;
        }
        self.cand[base + d] |= bit;
        self.place_naked(band, x, d);
    }

    /// Places digit `d` in cell `x` of `band` where `d` is the cell's only
    /// candidate: no other digit holds the cell, so only the peers lose `d`.
    #[inline(always)]
    pub(crate) fn place_naked(&mut self, band: usize, x: usize, d: usize) {
        self.cand[9 * band + d] &= !PEERS_IN_BAND[x & 31];
        let col = COLUMN[x % 9];
        for o in OTHER[band] {
            self.cand[9 * o + d] &= !col;
        }
        self.unsolved[band] &= !(1u32 << x);
        self.open_rows[band] &= !(1 << (3 * d + x / 9));
    }

    /// Places digit `d` in `cells` of `band`, one cell in each of the band
    /// rows in `rows` (bit r = band row r), where the band update has just
    /// found them hidden singles of their rows: the box-line step has then
    /// already cleared their peers for `d` (in band and, through locked
    /// columns, in the other bands), so only the other digits lose the
    /// cells, all at once.
    #[inline(always)]
    fn place_row_singles(&mut self, band: usize, d: usize, rows: u32, cells: u32) {
        let base = 9 * band;
        let own = self.cand[base + d];
        for w in &mut self.cand[base..base + 9] {
            *w &= !cells;
        }
        self.cand[base + d] = own;
        self.unsolved[band] &= !cells;
        self.open_rows[band] &= !(rows << (3 * d));
    }

    /// The candidate words.
    #[inline(always)]
    pub(crate) fn words(&self) -> Words {
        self.cand
    }

    /// How many peers of cell `x` of `band` still have digit `d` (0-based)
    /// as a candidate.
    #[inline]
    pub(crate) fn peers_with(&self, band: u8, x: u8, d: usize) -> u32 {
        let (band, x) = (band as usize, x as usize);
        let col = COLUMN[x % 9];
        let mut n = (self.cand[9 * band + d] & PEERS_IN_BAND[x & 31]).count_ones();
        for o in OTHER[band] {
            n += (self.cand[9 * o + d] & col).count_ones();
        }
        n
    }

    /// The grid of a board with every cell placed.
    pub(crate) fn solution(&self) -> Grid {
        let mut g = [0u8; CELLS];
        for band in 0..3 {
            for d in 0..9 {
                let mut m = self.cand[9 * band + d];
                while m != 0 {
                    let x = m.trailing_zeros() as usize;
                    m &= m - 1;
                    g[27 * band + x] = d as u8 + 1;
                }
            }
        }
        Grid(g)
    }
}

impl Board<'_> {
    /// A board to propagate, working on `c` in place; `prev` holds each
    /// word as last analysed (a word that differs is analysed again), and is
    /// kept up to date.
    #[inline(always)]
    pub(crate) fn new<'a>(c: &'a mut Cands, prev: &'a mut Words) -> Board<'a> {
        Board { c, prev }
    }

    /// The words that changed since last analysed.
    #[inline(always)]
    fn changed(&self) -> u32 {
        let mut changed = 0u32;
        for (i, (w, p)) in self.c.cand.iter().zip(self.prev.iter()).enumerate() {
            changed |= u32::from(w != p) << i;
        }
        changed
    }

    /// Analyses digit-band word `i` (= 9 * band + digit). False on a
    /// contradiction.
    #[inline(always)]
    fn update(&mut self, i: usize, r: Rules) -> bool {
        let (band, d) = (i / 9, i % 9);
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
            // The same digit's words in the two other bands; the next
            // `changed` sees whether they lost anything.
            let [o1, o2] = OTHER_WORDS[i & 31].map(usize::from);
            self.c.cand[o1] &= !locked;
            self.c.cand[o2] &= !locked;
            self.c.cand[i] = m;
        } else if m & 0x1ff == 0 || m & (0x1ff << 9) == 0 || m & (0x1ff << 18) == 0 {
            return false;
        }
        self.prev[i] = m;
        if r.row_singles {
            let open = (self.c.open_rows[band] >> (3 * d)) & 7;
            if open != 0 {
                let single = (u32::from(SINGLE[(m & 0x1ff) as usize])
                    | u32::from(SINGLE[((m >> 9) & 0x1ff) as usize]) << 1
                    | u32::from(SINGLE[((m >> 18) & 0x1ff) as usize]) << 2)
                    & open;
                if single != 0 && r.box_line {
                    // The rows of a permutation pattern are in different
                    // boxes and columns: the singles of one word are not
                    // peers, and box-line already cleared their peers.
                    self.c
                        .place_row_singles(band, d, single, m & ROWS[single as usize]);
                    return true;
                }
                let mut single = single;
                while single != 0 {
                    let row = single.trailing_zeros() as usize;
                    single &= single - 1;
                    let x = ((m >> (9 * row)) & 0x1ff).trailing_zeros() as usize + 9 * row;
                    if self.c.cand[i] & (1 << x) == 0 {
                        // Cleared by a single placed just before.
                        return false;
                    }
                    self.c.place(band, x, d);
                }
            }
        }
        true
    }

    /// Runs `update` on every changed word until none changes.
    #[inline(always)]
    fn settle(&mut self, r: Rules) -> bool {
        loop {
            let mut changed = self.changed();
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
                            self.c.place(band, hit.trailing_zeros() as usize, d);
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
                            self.c.place(band, m.trailing_zeros() as usize, d);
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
                let n = (0..9)
                    .filter(|&d| self.c.cand[9 * band + d] & (1 << x) != 0)
                    .count() as u32;
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
        let mut best = None;
        let mut most = 0;
        for (band, &p) in pairs.iter().enumerate() {
            let [o1, o2] = OTHER[band];
            let mut m = p;
            while m != 0 {
                let x = m.trailing_zeros() as usize;
                m &= m - 1;
                let col = COLUMN[x % 9];
                let peers = (self.c.unsolved[band] & PEERS_IN_BAND[x & 31]).count_ones()
                    + (self.c.unsolved[o1] & col).count_ones()
                    + (self.c.unsolved[o2] & col).count_ones();
                if peers >= most {
                    most = peers;
                    best = Some((band, x));
                }
            }
        }
        best
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
        let start = (0..9)
            .rev()
            .find(|&d| self.c.cand[9 * last + d] & (1 << x) != 0)
            .unwrap_or(0);
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
        let mut digits = 0u16;
        for d in 0..9 {
            if self.c.cand[9 * band + d] & (1 << x) != 0 {
                digits |= 1 << d;
            }
        }
        Outcome::Branch {
            band: band as u8,
            bit: x as u8,
            digits,
        }
    }

    /// Applies the rules until nothing changes, then says what to do next;
    /// `hard` says the search has made `r.branch_by_peers_after` guesses.
    #[inline(always)]
    pub(crate) fn propagate(&mut self, r: Rules, hard: bool) -> Outcome {
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
                            self.c.place_naked(band, x, d);
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
            if r.hidden_singles {
                match self.hidden_singles(r) {
                    None => return Outcome::Dead,
                    Some(true) => continue 'fixpoint,
                    Some(false) => {}
                }
            }
            let pair = if hard {
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
