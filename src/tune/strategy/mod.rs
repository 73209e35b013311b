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

    /// A point the search tries before asking anything (the published
    /// configuration): it is never asked for, and its outcome arrives through
    /// `tell` like any other, so a guided strategy can start from it.
    fn seed(&mut self, grid: &Grid, point: usize);

    /// Whether what it asks depends on what it was told. One that does not (random,
    /// exhaustive) may be asked far ahead: a slow build at the front of the line then
    /// does not leave the compile threads idle.
    fn guided(&self) -> bool {
        true
    }
}

/// The strategies gemmlab offers, by name.
pub const NAMES: &[&str] = &["exhaustive", "random", "anneal", "genetic"];

pub mod anneal;
pub mod exhaustive;
pub mod genetic;
pub mod random;
#[cfg(test)]
pub(crate) mod testkit;

/// Tuning knobs of the guided strategies. The defaults are plain textbook
/// choices, checked only on the tests' synthetic grids; `replay::compare` on a
/// real device's table is the place to revisit them.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    /// Anneal: starting temperature as a relative score loss (0.05: a move to a
    /// point 5 % worse than the current one, relative to the best so far, is
    /// taken with probability 1/e).
    pub anneal_t0: f64,
    /// Anneal: the temperature is multiplied by this after every outcome a chain sees.
    pub anneal_cooling: f64,
    /// Anneal: a chain restarts after this many neighbourhoods' worth of outcomes
    /// (2 per dimension) without a new chain best.
    pub anneal_patience: usize,
    /// Anneal: most chains at once; a new one starts only when the others have
    /// nothing to propose, so a one-at-a-time tuner runs a single chain.
    pub anneal_chains: usize,
    /// Genetic: how many of the best evaluated points breed (and how many random
    /// points seed them).
    pub genetic_population: usize,
    /// Genetic: members drawn per tournament; the best of them becomes a parent.
    pub genetic_tournament: usize,
    /// Genetic: probability that a child gets one coordinate moved to another value.
    pub genetic_mutation: f64,
}

impl Default for Knobs {
    fn default() -> Knobs {
        Knobs {
            anneal_t0: 0.05,
            anneal_cooling: 0.95,
            anneal_patience: 2,
            anneal_chains: 4,
            genetic_population: 16,
            genetic_tournament: 3,
            genetic_mutation: 0.5,
        }
    }
}

impl Knobs {
    /// Why these knobs cannot work, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        let problems = [
            (
                !(self.anneal_t0.is_finite() && self.anneal_t0 > 0.0),
                "anneal_t0 must be a positive number",
            ),
            (
                !(self.anneal_cooling > 0.0 && self.anneal_cooling <= 1.0),
                "anneal_cooling must be in (0, 1]",
            ),
            (
                self.anneal_patience == 0,
                "anneal_patience must be at least 1",
            ),
            (self.anneal_chains == 0, "anneal_chains must be at least 1"),
            (
                self.genetic_population < 2,
                "genetic_population must be at least 2",
            ),
            (
                self.genetic_tournament == 0,
                "genetic_tournament must be at least 1",
            ),
            (
                !(0.0..=1.0).contains(&self.genetic_mutation),
                "genetic_mutation must be in [0, 1]",
            ),
        ];
        match problems.iter().find(|(bad, _)| *bad) {
            Some((_, why)) => Err(format!("strategy knobs: {why}")),
            None => Ok(()),
        }
    }
}

/// The strategy called `name`, with default knobs.
pub fn by_name(name: &str) -> Result<Box<dyn Strategy + Send>, String> {
    by_name_with(name, &Knobs::default())
}

/// The strategy called `name`, with the given knobs.
pub fn by_name_with(name: &str, knobs: &Knobs) -> Result<Box<dyn Strategy + Send>, String> {
    knobs.check()?;
    match name {
        "exhaustive" => Ok(Box::new(exhaustive::Exhaustive::new())),
        "random" => Ok(Box::new(random::Random::new())),
        "anneal" => Ok(Box::new(anneal::Anneal::new(knobs))),
        "genetic" => Ok(Box::new(genetic::Genetic::new(knobs))),
        _ => Err(format!(
            "unknown strategy '{name}' (known: {})",
            NAMES.join(", ")
        )),
    }
}

/// The points not asked for yet: membership, removal and a uniform draw, each
/// O(1). Sized on a strategy's first ask, since strategies are built before
/// they see their grid (a strategy serves one grid).
#[derive(Debug, Clone, Default)]
pub struct Unasked(Set);

/// Up to this many points the set is dense (16 bytes a point); above, it holds
/// only the points asked, and a draw retries until it meets an unasked one. The
/// SIMT kernels' CUDA spaces hold 0.95 and 1.55 billion points: dense, 15 and 25 GB
/// for a search that asks a few thousand of them.
pub const DENSE_MAX: usize = 1 << 22;

#[derive(Debug, Clone)]
enum Set {
    Dense {
        items: Vec<usize>,
        /// Where each point sits in `items`; `usize::MAX` once asked.
        pos: Vec<usize>,
    },
    Sparse {
        len: usize,
        asked: std::collections::HashSet<usize>,
    },
}

impl Default for Set {
    fn default() -> Set {
        Set::Dense {
            items: Vec::new(),
            pos: Vec::new(),
        }
    }
}

impl Unasked {
    /// Every one of `len` points unasked.
    pub fn new(len: usize) -> Unasked {
        Unasked(if len <= DENSE_MAX {
            Set::Dense {
                items: (0..len).collect(),
                pos: (0..len).collect(),
            }
        } else {
            Set::Sparse {
                len,
                asked: Default::default(),
            }
        })
    }

    /// Fills a default (empty) set with `len` points; no-op once filled.
    pub fn fit(&mut self, len: usize) {
        if matches!(&self.0, Set::Dense { pos, .. } if pos.is_empty()) {
            *self = Unasked::new(len);
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Set::Dense { items, .. } => items.len(),
            Set::Sparse { len, asked } => len - asked.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, point: usize) -> bool {
        match &self.0 {
            Set::Dense { pos, .. } => pos.get(point).is_some_and(|&i| i != usize::MAX),
            Set::Sparse { len, asked } => point < *len && !asked.contains(&point),
        }
    }

    /// Marks `point` asked; false if it already was (or is no point).
    pub fn take(&mut self, point: usize) -> bool {
        if !self.contains(point) {
            return false;
        }
        match &mut self.0 {
            Set::Dense { items, pos } => {
                let i = pos[point];
                items.swap_remove(i);
                if let Some(&moved) = items.get(i) {
                    pos[moved] = i;
                }
                pos[point] = usize::MAX;
            }
            Set::Sparse { asked, .. } => {
                asked.insert(point);
            }
        }
        true
    }

    /// A uniformly drawn unasked point, marked asked.
    pub fn draw(&mut self, rng: &mut Rng) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        let p = match &self.0 {
            Set::Dense { items, .. } => items[rng.below(items.len())],
            Set::Sparse { len, asked } => loop {
                let p = rng.below(*len);
                if !asked.contains(&p) {
                    break p;
                }
            },
        };
        self.take(p);
        Some(p)
    }

    /// The unasked points, in no particular order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match &self.0 {
            Set::Dense { items, .. } => Box::new(items.iter().copied()),
            Set::Sparse { len, asked } => Box::new((0..*len).filter(|p| !asked.contains(p))),
        }
    }
}

/// A finite score, or `None`: a NaN or infinite score counts as a failure so
/// it can never become a state or a parent.
pub fn usable(score: Option<f64>) -> Option<f64> {
    score.filter(|s| s.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_set_of_unasked_points_holds_only_those_asked() {
        let len = DENSE_MAX + 10;
        let mut u = Unasked::default();
        u.fit(len);
        assert!(matches!(u.0, Set::Sparse { .. }));
        assert_eq!(u.len(), len);
        assert!(u.take(len - 1) && !u.take(len - 1) && !u.take(len));
        let mut rng = Rng::new(7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let p = u.draw(&mut rng).unwrap();
            assert!(
                p < len - 1 && seen.insert(p),
                "{p} drawn twice or taken before"
            );
            assert!(!u.contains(p));
        }
        assert_eq!(u.len(), len - 1001);
        // A small set stays dense, and both draw every point exactly once.
        let mut small = Unasked::new(50);
        let mut all: Vec<usize> = std::iter::from_fn(|| small.draw(&mut rng)).collect();
        all.sort_unstable();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn by_name_knows_every_name_and_lists_them_otherwise() {
        for name in NAMES {
            assert_eq!(by_name(name).unwrap().name(), *name);
        }
        let err = by_name("hill").err().unwrap();
        assert!(NAMES.iter().all(|n| err.contains(n)), "{err}");
        let bad = Knobs {
            genetic_population: 1,
            ..Knobs::default()
        };
        assert!(by_name_with("genetic", &bad).is_err());
    }

    #[test]
    fn unasked_draws_each_point_once() {
        let mut u = Unasked::default();
        u.fit(50);
        assert!(u.take(7));
        assert!(!u.take(7));
        assert!(!u.take(50));
        let mut rng = Rng::new(3);
        let mut seen: Vec<usize> = std::iter::from_fn(|| u.draw(&mut rng)).collect();
        assert!(u.is_empty());
        seen.push(7);
        seen.sort_unstable();
        assert_eq!(seen, (0..50).collect::<Vec<_>>());
    }
}
