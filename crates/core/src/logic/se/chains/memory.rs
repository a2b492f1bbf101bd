//! What a rating walk's chain searches remember from one step to the
//! next: Nishio's runs ([`RunMemory`]) and the starts of the level-0 pass
//! with X-links only ([`StartMemory`]).
//!
//! A level-0 run reads of the grid only the candidates it expands: each
//! such cell's candidates and its digit's places in the cell's units. When
//! none of those changed since, it is the same run with the same end.
//! Between two Nishio searches of a walk one candidate has usually gone
//! (235 of 290 times on top1465), so most of the runs that ended in no
//! contradiction last time are known to again.

use super::engine::{Geo, Pot};
use super::reach::Reach;
use crate::logic::Candidates;
use crate::logic::candidates::digits_of;

/// What a walk's chain searches remember, by mode.
#[derive(Default)]
pub(crate) struct Memory {
    pub(super) nishio: RunMemory,
    pub(super) x_starts: StartMemory,
    /// The closures of the last level-0 XY pass, with the candidates they
    /// are of. When level 0 finds nothing, the static multiple search
    /// comes next on the same candidates and the same implications: it
    /// reads them again.
    closures: Option<(Vec<u64>, Reach)>,
}

impl Memory {
    /// Keeps `reach`, the closures of `c`'s candidates.
    pub(super) fn keep_closures(&mut self, c: &Candidates, reach: Reach) {
        let masks = match self.closures.take() {
            Some((mut masks, _)) => {
                masks.clear();
                masks.extend_from_slice(c.masks());
                masks
            }
            None => c.masks().to_vec(),
        };
        self.closures = Some((masks, reach));
    }

    /// Takes the closures kept, when they are of `c`'s candidates.
    pub(super) fn take_closures(&mut self, c: &Candidates) -> Option<Reach> {
        match &self.closures {
            Some((masks, _)) if masks == c.masks() => self.closures.take().map(|(_, r)| r),
            _ => None,
        }
    }
}

/// For each start (by potential), the candidates its run read (a bit at
/// `cell * n + digit - 1`) when it found nothing; and the candidates the
/// memory is up to date with.
#[derive(Default)]
pub(crate) struct RunMemory {
    masks: Vec<u64>,
    /// `words` words a start.
    reads: Vec<u64>,
    /// Whether a start's reads are known (and found nothing).
    known: Vec<bool>,
    words: usize,
}

/// The most words a memory keeps (512 KiB): any 9x9 grid (1,458 starts of
/// 12 words), no 16x16 one (8,192 starts of 64).
const MEMORY_WORDS: usize = 1 << 16;

impl RunMemory {
    /// Brings the memory to `c`: forgets the starts whose runs read a
    /// candidate that changed (any candidate of a changed cell; a changed
    /// digit in the cells of the units it changed in). False when the
    /// memory would be too large (then it is not used).
    pub(super) fn update(&mut self, c: &Candidates, g: Geo) -> bool {
        let n = g.n;
        let words = (n * n * n).div_ceil(64);
        if g.count() * words > MEMORY_WORDS {
            return false;
        }
        if self.words != words || self.masks.len() != n * n {
            self.words = words;
            self.masks = c.masks().to_vec();
            self.reads = vec![0; g.count() * words];
            self.known = vec![false; g.count()];
            return true;
        }
        let l = c.layout();
        let mut dirty = vec![0u64; words];
        let mut any = false;
        for (y, (&now, then)) in c.masks().iter().zip(self.masks.iter_mut()).enumerate() {
            let diff = now ^ *then;
            if diff == 0 {
                continue;
            }
            any = true;
            *then = now;
            for k in y * n..(y + 1) * n {
                dirty[k / 64] |= 1 << (k % 64);
            }
            for e in digits_of(diff) {
                for u in l.units_of(y) {
                    for &x in l.unit(u as usize) {
                        let k = x as usize * n + e as usize - 1;
                        dirty[k / 64] |= 1 << (k % 64);
                    }
                }
            }
        }
        if any {
            // Usually a candidate or two changed: a few words to test.
            let dirty: Vec<(usize, u64)> = dirty
                .into_iter()
                .enumerate()
                .filter(|&(_, d)| d != 0)
                .collect();
            for (s, known) in self.known.iter_mut().enumerate() {
                if *known {
                    let reads = &self.reads[s * words..(s + 1) * words];
                    *known = dirty.iter().all(|&(w, d)| reads[w] & d == 0);
                }
            }
        }
        true
    }

    /// The words of a set of reads.
    pub(super) fn words(&self) -> usize {
        self.words
    }

    /// Whether the run from `p` is known to find nothing.
    pub(super) fn known(&self, p: Pot) -> bool {
        self.known[p as usize]
    }

    /// The run from `p` found nothing, reading `reads`.
    pub(super) fn remember(&mut self, p: Pot, reads: &[u64]) {
        let s = p as usize;
        self.reads[s * self.words..(s + 1) * self.words].copy_from_slice(reads);
        self.known[s] = true;
    }

    /// The run from `p` found something.
    pub(super) fn forget(&mut self, p: Pot) {
        self.known[p as usize] = false;
    }

    /// How many starts it knows.
    #[cfg(test)]
    pub(super) fn count(&self) -> usize {
        self.known.iter().filter(|&&k| k).count()
    }
}

/// The starts of the level-0 pass with X-links only (X-cycles and forcing
/// X-chains) that found nothing in a search with no bound.
///
/// Such a search from a start of digit d reads only where d is (its links
/// in units, the cycles' eliminations); which cells are starts decides
/// only which searches run. While d stays where it was, the search finds
/// nothing again. A walk's step changes one digit or a few: the others'
/// starts are not searched again.
#[derive(Default)]
pub(crate) struct StartMemory {
    /// The candidates it is up to date with.
    masks: Vec<u64>,
    /// A bit at `cell * n + digit - 1`: the search from there found
    /// nothing.
    empty: Vec<u64>,
}

impl StartMemory {
    /// Brings the memory to `c`: forgets the starts of each digit that
    /// changed.
    pub(super) fn update(&mut self, c: &Candidates) {
        let n = c.side();
        if self.masks.len() != n * n {
            self.masks = c.masks().to_vec();
            self.empty = vec![0; (n * n * n).div_ceil(64)];
            return;
        }
        let mut dirty = 0u64;
        for (then, &now) in self.masks.iter_mut().zip(c.masks()) {
            dirty |= *then ^ now;
            *then = now;
        }
        for d in digits_of(dirty) {
            for cell in 0..n * n {
                let k = cell * n + d as usize - 1;
                self.empty[k / 64] &= !(1 << (k % 64));
            }
        }
    }

    /// Whether the search from `d` in `cell` is known to find nothing.
    pub(super) fn known(&self, n: usize, cell: usize, d: u8) -> bool {
        let k = cell * n + d as usize - 1;
        self.empty[k / 64] >> (k % 64) & 1 != 0
    }

    /// The search from `d` in `cell`, with no bound, found nothing.
    pub(super) fn remember(&mut self, n: usize, cell: usize, d: u8) {
        let k = cell * n + d as usize - 1;
        self.empty[k / 64] |= 1 << (k % 64);
    }

    /// How many starts it knows.
    #[cfg(test)]
    pub(super) fn count(&self) -> usize {
        self.empty.iter().map(|w| w.count_ones() as usize).sum()
    }
}
