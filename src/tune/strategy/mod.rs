//! Search strategies. Each is one file behind the `Strategy` trait: the tuner
//! asks for points to try (several at a time, so compilation can run ahead of
//! the GPU) and tells each outcome back. Strategies see only the `Grid`.

use super::grid::Grid;

/// A small seeded generator (SplitMix64): runs are reproducible from the seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A search strategy.
pub trait Strategy {
    /// The name on the command line and in results: "exhaustive", "random", ...
    fn name(&self) -> &'static str;

    /// Up to `n` points (indices into `grid`) to try next. Never a point asked
    /// before. Fewer than `n` (even none) while waiting for outcomes is allowed;
    /// none when nothing is in flight means the strategy is finished.
    fn ask(&mut self, grid: &Grid, n: usize, rng: &mut Rng) -> Vec<usize>;

    /// The outcome of a point asked for: its score (GFLOP/s, higher is better),
    /// or `None` when it failed (compile error, wrong result, launch error).
    fn tell(&mut self, grid: &Grid, point: usize, score: Option<f64>);
}

/// The strategies gemmlab offers, by name.
pub const NAMES: &[&str] = &["exhaustive", "random", "anneal", "genetic"];

/// The strategy called `name`. (Placeholder until the strategies land.)
pub fn by_name(name: &str) -> Result<Box<dyn Strategy + Send>, String> {
    Err(format!("unknown strategy {name}; known: {}", NAMES.join(", ")))
}
