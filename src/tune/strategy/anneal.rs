//! Simulated annealing over the grid's neighbourhood, in independent chains.
//!
//! A chain holds a state (an evaluated point) and proposes unasked neighbours
//! of it; each outcome is accepted as the new state by the Metropolis rule on
//! the score difference divided by the best score so far, so the temperature
//! means the same on any device. Every chain cools geometrically and restarts
//! from a random unasked point, reheated, when its state has no unasked
//! neighbour left or it has gone a while without a new best.
//!
//! Batches: chains take turns proposing; a further chain starts only when the
//! running ones have nothing to propose (a state not known yet, or a
//! neighbourhood all in flight), so asking one point at a time runs one chain
//! and asking many runs up to `anneal_chains` side by side.
//!
//! Outcomes are queued by `tell` and judged at the next `ask`, which has the
//! generator the Metropolis rule needs.

use std::collections::HashMap;

use super::{usable, Knobs, Rng, Strategy, Unasked};
use crate::tune::grid::Grid;

#[derive(Debug, Clone)]
pub struct Anneal {
    t0: f64,
    cooling: f64,
    patience: usize,
    max_chains: usize,
    unasked: Unasked,
    chains: Vec<Chain>,
    /// The chain (and its generation) that proposed each point in flight.
    flight: HashMap<usize, (usize, u32)>,
    /// Outcomes told but not yet judged.
    inbox: Vec<(usize, Option<f64>)>,
    /// Best score of any point so far: the scale of score differences.
    best: Option<f64>,
    /// The chain that proposes first at the next ask, so all get turns.
    turn: usize,
}

#[derive(Debug, Clone)]
struct Chain {
    /// Bumped at each restart; outcomes of older proposals no longer move the chain.
    generation: u32,
    /// Current point and its score; `None` until the (re)start point succeeds.
    state: Option<(usize, f64)>,
    /// Proposals of this generation in flight.
    in_flight: usize,
    temperature: f64,
    /// Best score this generation has seen, and outcomes since it last rose.
    top: f64,
    stale: usize,
}

impl Anneal {
    pub fn new(knobs: &Knobs) -> Anneal {
        Anneal {
            t0: knobs.anneal_t0,
            cooling: knobs.anneal_cooling,
            patience: knobs.anneal_patience,
            max_chains: knobs.anneal_chains.max(1),
            unasked: Unasked::default(),
            chains: Vec::new(),
            flight: HashMap::new(),
            inbox: Vec::new(),
            best: None,
            turn: 0,
        }
    }

    fn new_chain(&self) -> Chain {
        Chain {
            generation: 0,
            state: None,
            in_flight: 0,
            temperature: self.t0,
            top: f64::NEG_INFINITY,
            stale: 0,
        }
    }

    fn restart(&mut self, c: usize) {
        let chain = &mut self.chains[c];
        chain.generation = chain.generation.wrapping_add(1);
        chain.state = None;
        chain.in_flight = 0;
        chain.temperature = self.t0;
        chain.top = f64::NEG_INFINITY;
        chain.stale = 0;
    }

    /// Judges the queued outcomes, in the order they were told.
    fn digest(&mut self, grid: &Grid, rng: &mut Rng) {
        // Outcomes without a new chain best before a chain gives up.
        let patience = self.patience.saturating_mul(2 * grid.dims().max(1));
        for (point, score) in std::mem::take(&mut self.inbox) {
            let Some((c, generation)) = self.flight.remove(&point) else {
                continue; // never asked, or told twice
            };
            let score = usable(score);
            if let Some(s) = score {
                self.best = Some(self.best.map_or(s, |b| b.max(s)));
            }
            let scale = match self.best {
                Some(b) if b.abs() > 0.0 => b.abs(),
                _ => 1.0,
            };
            let chain = &mut self.chains[c];
            if chain.generation != generation {
                continue;
            }
            chain.in_flight -= 1;
            chain.temperature *= self.cooling;
            match (score, chain.state) {
                (None, None) => {} // the start point failed: the chain draws another
                (None, Some(_)) => chain.stale += 1,
                (Some(s), None) => {
                    chain.state = Some((point, s));
                    chain.top = s;
                }
                (Some(s), Some((_, current))) => {
                    let delta = (s - current) / scale;
                    if delta >= 0.0 || rng.unit() < (delta / chain.temperature).exp() {
                        chain.state = Some((point, s));
                    }
                    if s > chain.top {
                        chain.top = s;
                        chain.stale = 0;
                    } else {
                        chain.stale += 1;
                    }
                }
            }
            if chain.stale >= patience {
                self.restart(c);
            }
        }
    }

    /// A point chain `c` wants tried next, if it has one now.
    fn propose(&mut self, grid: &Grid, c: usize, rng: &mut Rng) -> Option<usize> {
        let chain = &self.chains[c];
        let point = match chain.state {
            // Waiting for its start point.
            None if chain.in_flight > 0 => None,
            None => self.unasked.draw(rng),
            Some((at, _)) => {
                let fresh: Vec<usize> = grid
                    .neighbours(at)
                    .into_iter()
                    .filter(|&q| self.unasked.contains(q))
                    .collect();
                if !fresh.is_empty() {
                    let q = fresh[rng.below(fresh.len())];
                    self.unasked.take(q);
                    Some(q)
                } else if chain.in_flight == 0 {
                    // Neighbourhood exhausted and nothing pending that could move on.
                    self.restart(c);
                    self.unasked.draw(rng)
                } else {
                    None
                }
            }
        }?;
        let chain = &mut self.chains[c];
        chain.in_flight += 1;
        self.flight.insert(point, (c, chain.generation));
        Some(point)
    }
}

impl Strategy for Anneal {
    fn name(&self) -> &'static str {
        "anneal"
    }

    fn ask(&mut self, grid: &Grid, n: usize, rng: &mut Rng) -> Vec<usize> {
        self.unasked.fit(grid.len());
        self.digest(grid, rng);
        let mut out = Vec::with_capacity(n);
        while out.len() < n && !self.unasked.is_empty() {
            // One round: each chain proposes at most one point.
            let before = out.len();
            for k in 0..self.chains.len() {
                if out.len() == n {
                    break;
                }
                let c = (self.turn + k) % self.chains.len();
                if let Some(p) = self.propose(grid, c, rng) {
                    out.push(p);
                }
            }
            if !self.chains.is_empty() {
                self.turn = (self.turn + 1) % self.chains.len();
            }
            if out.len() == before {
                if self.chains.len() == self.max_chains {
                    break; // every chain waits for outcomes
                }
                self.chains.push(self.new_chain());
            }
        }
        out
    }

    fn tell(&mut self, _grid: &Grid, point: usize, score: Option<f64>) {
        self.inbox.push((point, score));
    }

    /// The seed starts a chain of its own: when it verifies, that chain walks
    /// from it (from the published configuration, in a tuning run).
    fn seed(&mut self, grid: &Grid, point: usize) {
        self.unasked.fit(grid.len());
        if !self.unasked.take(point) || self.chains.len() == self.max_chains {
            return;
        }
        let c = self.chains.len();
        let mut chain = self.new_chain();
        chain.in_flight = 1;
        self.chains.push(chain);
        self.flight.insert(point, (c, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit;
    use super::*;

    #[test]
    fn a_seeded_start_is_tried_once_and_first() {
        testkit::seeded_start_is_tried_once("anneal");
    }

    #[test]
    fn visits_every_point_once_in_any_batch() {
        testkit::visits_every_point_once("anneal");
    }

    #[test]
    fn runs_are_reproducible() {
        testkit::reproducible("anneal");
    }

    #[test]
    fn finds_the_best_sooner_than_random() {
        testkit::beats_random("anneal");
    }

    #[test]
    fn one_at_a_time_runs_one_chain_and_batches_several() {
        let grid = Grid::full(vec![5, 5, 4, 3]);
        let mut rng = Rng::new(1);
        let mut a = Anneal::new(&Knobs::default());
        let first = a.ask(&grid, 1, &mut rng);
        assert_eq!(first.len(), 1);
        // Its start point is pending and one chain is all a single slot needs.
        assert!(a.ask(&grid, 0, &mut rng).is_empty());
        assert_eq!(a.chains.len(), 1);
        let more = a.ask(&grid, 10, &mut rng);
        assert_eq!(more.len(), Knobs::default().anneal_chains - 1);
        // Once a state is known, its chain proposes neighbours of it.
        a.tell(&grid, first[0], Some(1.0));
        let next = a.ask(&grid, 2, &mut rng);
        assert_eq!(next.len(), 2);
        for p in next {
            assert!(grid.neighbours(first[0]).contains(&p));
        }
    }

    #[test]
    fn a_verified_seed_is_where_the_walk_starts() {
        let grid = Grid::full(vec![5, 5, 4, 3]);
        let mut rng = Rng::new(7);
        let mut a = Anneal::new(&Knobs::default());
        let start = 77;
        a.seed(&grid, start);
        a.tell(&grid, start, Some(50.0));
        let next = a.ask(&grid, 1, &mut rng);
        assert_eq!(next.len(), 1);
        assert!(grid.neighbours(start).contains(&next[0]), "{next:?}");
    }

    #[test]
    fn failed_points_never_become_states() {
        let grid = Grid::full(vec![4, 4]);
        let mut rng = Rng::new(2);
        let mut a = Anneal::new(&Knobs::default());
        while let Some(&p) = a.ask(&grid, 1, &mut rng).first() {
            a.tell(&grid, p, if p % 2 == 0 { None } else { Some(p as f64) });
            a.digest(&grid, &mut rng);
            for chain in &a.chains {
                if let Some((at, _)) = chain.state {
                    assert_eq!(at % 2, 1);
                }
            }
        }
    }
}
