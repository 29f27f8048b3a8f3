//! The testbench's one source of randomness: xoshiro256** seeded through SplitMix64.
//!
//! A run has one seed. Each consumer (a workload, a host) derives its own stream with
//! [`Rng::fork`], so adding a consumer never shifts the numbers another one sees. The
//! generator is written here (not taken from a crate) so that its output is fixed forever:
//! the same seed gives the same run on every machine and every version of the dependencies.

/// SplitMix64 (Steele, Lea, Flood 2014): expands one 64-bit seed into well-mixed words.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman, Vigna 2018).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose state is four SplitMix64 outputs of `seed` (never all zero).
    pub fn new(seed: u64) -> Rng {
        let mut sm = SplitMix64::new(seed);
        Rng {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }

    /// An independent stream named by `stream`, derived from this generator's seed state
    /// without advancing it.
    pub fn fork(&self, stream: u64) -> Rng {
        let mixed = self.s[0] ^ self.s[1].rotate_left(17) ^ self.s[2].rotate_left(31) ^ self.s[3];
        Rng::new(mixed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform float in [0, 1) with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform float in (0, 1]: safe to take the logarithm of.
    pub fn unit_open_zero(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in 0..n (n > 0), without modulo bias (Lemire's method with
    /// rejection).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0) has no values");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = self.next_u64() as u128 * n as u128;
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// An exponential variate with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -self.unit_open_zero().ln() * mean
    }

    /// A standard normal variate (Box-Muller; one of the pair is used, so that the stream
    /// has no hidden state).
    pub fn standard_normal(&mut self) -> f64 {
        let r = (-2.0 * self.unit_open_zero().ln()).sqrt();
        r * (std::f64::consts::TAU * self.unit()).cos()
    }

    /// A log-normal variate with the given mean and shape `sigma` (the standard deviation
    /// of its logarithm): `exp(mu + sigma Z)` with `mu = ln(mean) - sigma^2 / 2`.
    pub fn log_normal(&mut self, mean: f64, sigma: f64) -> f64 {
        let mu = mean.ln() - sigma * sigma / 2.0;
        (mu + sigma * self.standard_normal()).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference_output() {
        // First outputs of the reference splitmix64.c for seed 1234567.
        let mut sm = SplitMix64::new(1234567);
        assert_eq!(sm.next_u64(), 6457827717110365317);
        assert_eq!(sm.next_u64(), 3203168211198807973);
    }

    #[test]
    fn xoshiro_matches_the_reference_output() {
        // xoshiro256** from state {1, 2, 3, 4}: reference outputs of xoshiro256starstar.c.
        let mut r = Rng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(got, vec![11520, 0, 1509978240]);
    }

    #[test]
    fn same_seed_same_stream_and_forks_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let mut r = Rng::new(42);
        assert_eq!(a, (0..8).map(|_| r.next_u64()).collect::<Vec<_>>());
        let base = Rng::new(42);
        let (mut f1, mut f2) = (base.fork(1), base.fork(2));
        assert_ne!(f1.next_u64(), f2.next_u64());
        assert_eq!(base, Rng::new(42), "fork does not advance the parent");
    }

    #[test]
    fn distributions_have_their_means() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let u: f64 = (0..n).map(|_| r.unit()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.005, "{u}");
        let e: f64 = (0..n).map(|_| r.exponential(10.0)).sum::<f64>() / n as f64;
        assert!((e - 10.0).abs() < 0.1, "{e}");
        let l: f64 = (0..n).map(|_| r.log_normal(10.0, 1.0)).sum::<f64>() / n as f64;
        assert!((l - 10.0).abs() < 0.2, "{l}");
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[r.below(3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
    }
}
