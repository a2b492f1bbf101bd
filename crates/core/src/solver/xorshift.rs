//! The random choices of a restarting search and of its repair search:
//! xorshift64*, a 64-bit state, the same sequence on every machine, so a
//! search is repeatable.

/// An xorshift64* stream.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct XorShift(u64);

impl XorShift {
    /// A stream from `seed` (a zero seed, which xorshift cannot leave, is
    /// taken as 1).
    pub(super) fn new(seed: u64) -> XorShift {
        XorShift(if seed == 0 { 1 } else { seed })
    }

    /// The next 64 random bits.
    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (at least 1), from the high 32 bits.
    pub(super) fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}
