//! The generator's random numbers: SplitMix64, a 64-bit state stepped by a
//! constant and scrambled by two multiply-xorshift rounds (Steele, Lea and
//! Flood, 2014). Small, fast, and the same on every machine: a seed names
//! the same puzzles everywhere, which no platform generator promises.

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output function: a bijective scramble of `z`.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The stream for attempt `attempt` of puzzle `index` of the puzzles
    /// from `seed`: each attempt its own stream, so puzzle `index` does not
    /// depend on how many attempts the puzzles before it took, nor on the
    /// order puzzles are made in.
    pub fn for_attempt(seed: u64, index: u64, attempt: u64) -> Rng {
        Rng(mix(mix(seed ^ mix(index.wrapping_add(GOLDEN))) ^ attempt))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// A uniform number in `0..n` (`n` at least 1), by Lemire's
    /// multiply-and-reject: no modulo bias.
    pub fn below(&mut self, n: u32) -> u32 {
        let n = n.max(1);
        loop {
            let m = u64::from(self.next_u64() as u32) * u64::from(n);
            if (m as u32) >= n.wrapping_neg() % n {
                return (m >> 32) as u32;
            }
        }
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_published_splitmix64() {
        // The first outputs of SplitMix64 seeded with 1234567, as in the
        // reference implementation (prng.di.unimi.it/splitmix64.c).
        let mut r = Rng::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(7);
        let mut seen = [0u32; 9];
        for _ in 0..90_000 {
            seen[r.below(9) as usize] += 1;
        }
        assert!(
            seen.iter().all(|&n| (9_000..11_000).contains(&n)),
            "{seen:?}"
        );
    }

    #[test]
    fn attempts_and_indexes_get_different_streams() {
        let first = |s, i, a| Rng::for_attempt(s, i, a).next_u64();
        assert_ne!(first(1, 0, 0), first(1, 0, 1));
        assert_ne!(first(1, 0, 0), first(1, 1, 0));
        assert_ne!(first(1, 0, 0), first(2, 0, 0));
        assert_eq!(first(1, 5, 3), first(1, 5, 3));
    }
}
