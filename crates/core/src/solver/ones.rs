//! Counting set bits where the target may lack a `popcnt` instruction.
//!
//! A plain `cargo install` builds for baseline x86-64, where each
//! `count_ones` is a dozen-instruction bit-twiddling sequence. The engine
//! therefore counts as few words as it can, and where it must count, packs
//! what it counts into as few 64-bit words as possible and shares the last,
//! costly steps of the sequence between them. Built with `popcnt`
//! (`-C target-cpu=native` on any recent x86-64, or other targets), the
//! plain instruction is used: the choice is made at compile time, not at run
//! time.

/// The number of set bits in `words`, summed; at most 3 words, so the
/// total (at most 192) fits in a byte.
#[inline(always)]
pub(crate) fn ones<const N: usize>(words: [u64; N]) -> u32 {
    const { assert!(N <= 3) };
    if cfg!(target_feature = "popcnt") {
        let mut n = 0;
        for w in words {
            n += w.count_ones();
        }
        n
    } else {
        // Each nibble's count (at most 4) in the nibble, summed over the
        // words (at most 12: no carry out of a nibble), then the nibbles
        // paired into bytes and the bytes summed by one multiply.
        let mut s = 0u64;
        for w in words {
            let x = w - ((w >> 1) & 0x5555_5555_5555_5555);
            s += (x & 0x3333_3333_3333_3333) + ((x >> 2) & 0x3333_3333_3333_3333);
        }
        let bytes = (s & 0x0f0f_0f0f_0f0f_0f0f) + ((s >> 4) & 0x0f0f_0f0f_0f0f_0f0f);
        (bytes.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u32
    }
}

/// The number of set bits of a 9-bit digit set.
#[inline(always)]
pub(crate) fn ones9(digits: u16) -> u32 {
    if cfg!(target_feature = "popcnt") {
        digits.count_ones()
    } else {
        u32::from(ONES9[usize::from(digits & 0x1ff)])
    }
}

/// The number of set bits of each 9-bit value.
const ONES9: [u8; 512] = {
    let mut t = [0u8; 512];
    let mut v = 1;
    while v < 512 {
        t[v] = t[v >> 1] + (v & 1) as u8;
        v += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_count_ones() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..10_000 {
            let (a, b, c) = (next(), next(), next());
            assert_eq!(ones([a]), a.count_ones());
            assert_eq!(
                ones([a, b, c]),
                a.count_ones() + b.count_ones() + c.count_ones()
            );
        }
        assert_eq!(ones([u64::MAX; 3]), 192);
        assert_eq!(ones([0u64; 0]), 0);
        for v in 0..512u16 {
            assert_eq!(ones9(v), v.count_ones());
        }
    }
}
