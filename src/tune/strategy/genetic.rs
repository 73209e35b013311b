//! A steady-state genetic algorithm. The population is the best evaluated
//! points (failures never join); each child takes every coordinate from one
//! of two parents chosen by tournament, may have one coordinate mutated, and
//! when it is no valid point or was asked before it becomes the nearest
//! unasked point (fewest differing coordinates, ties drawn at random).
//!
//! Random points seed the population; breeding starts once two members are
//! known, so a batch asked before any outcome is simply random.

use std::collections::HashSet;

use super::{usable, Knobs, Rng, Strategy, Unasked};
use crate::tune::grid::Grid;

#[derive(Debug, Clone)]
pub struct Genetic {
    size: usize,
    tournament: usize,
    mutation: f64,
    unasked: Unasked,
    in_flight: HashSet<usize>,
    /// Evaluated points and scores, at most `size` of them.
    population: Vec<(usize, f64)>,
    /// Random points asked so far to seed the population.
    seeded: usize,
}

impl Genetic {
    pub fn new(knobs: &Knobs) -> Genetic {
        Genetic {
            size: knobs.genetic_population.max(2),
            tournament: knobs.genetic_tournament.max(1),
            mutation: knobs.genetic_mutation,
            unasked: Unasked::default(),
            in_flight: HashSet::new(),
            population: Vec::new(),
            seeded: 0,
        }
    }

    /// The best of `tournament` members drawn with replacement.
    fn select(&self, rng: &mut Rng) -> usize {
        let mut winner = self.population[rng.below(self.population.len())];
        for _ in 1..self.tournament {
            let other = self.population[rng.below(self.population.len())];
            if other.1 > winner.1 {
                winner = other;
            }
        }
        winner.0
    }

    fn breed(&mut self, grid: &Grid, rng: &mut Rng) -> Option<usize> {
        let a = self.select(rng);
        let mut b = self.select(rng);
        // A second try for a distinct mate; selfing gives the parent back.
        if b == a {
            b = self.select(rng);
        }
        let (ca, cb) = (grid.coords(a), grid.coords(b));
        let mut child: Vec<u8> = ca
            .iter()
            .zip(&cb)
            .map(|(&x, &y)| if rng.below(2) == 0 { x } else { y })
            .collect();
        if grid.dims() > 0 && rng.unit() < self.mutation {
            let d = rng.below(grid.dims());
            if grid.size(d) > 1 {
                // Uniform over the dimension's other values.
                let v = rng.below(grid.size(d) - 1) as u8;
                child[d] = if v >= child[d] { v + 1 } else { v };
            }
        }
        match grid.find(&child) {
            Some(p) if self.unasked.take(p) => Some(p),
            _ => self.nearest_unasked(grid, &child, rng),
        }
    }

    /// The unasked point differing from `coords` in the fewest dimensions.
    fn nearest_unasked(&mut self, grid: &Grid, coords: &[u8], rng: &mut Rng) -> Option<usize> {
        let mut pick = None;
        let (mut least, mut ties) = (usize::MAX, 0usize);
        for p in self.unasked.iter() {
            let d = grid
                .coords(p)
                .iter()
                .zip(coords)
                .filter(|(x, y)| x != y)
                .count();
            if d < least {
                (least, ties, pick) = (d, 1, Some(p));
            } else if d == least {
                // Reservoir draw: each tied point ends up chosen with equal odds.
                ties += 1;
                if rng.below(ties) == 0 {
                    pick = Some(p);
                }
            }
        }
        let p = pick?;
        self.unasked.take(p);
        Some(p)
    }
}

impl Strategy for Genetic {
    fn name(&self) -> &'static str {
        "genetic"
    }

    fn ask(&mut self, grid: &Grid, n: usize, rng: &mut Rng) -> Vec<usize> {
        self.unasked.fit(grid.len());
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let next = if self.seeded < self.size || self.population.len() < 2 {
                self.seeded += 1;
                self.unasked.draw(rng)
            } else {
                self.breed(grid, rng)
            };
            let Some(p) = next else { break };
            self.in_flight.insert(p);
            out.push(p);
        }
        out
    }

    /// The seed counts as one of the random points that start the population.
    fn seed(&mut self, grid: &Grid, point: usize) {
        self.unasked.fit(grid.len());
        if self.unasked.take(point) {
            self.seeded += 1;
            self.in_flight.insert(point);
        }
    }

    fn tell(&mut self, _grid: &Grid, point: usize, score: Option<f64>) {
        if !self.in_flight.remove(&point) {
            return;
        }
        let Some(s) = usable(score) else { return };
        if self.population.len() < self.size {
            self.population.push((point, s));
        } else if let Some(worst) = self
            .population
            .iter_mut()
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .filter(|w| s > w.1)
        {
            *worst = (point, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit;
    use super::*;

    #[test]
    fn a_seeded_start_is_tried_once_and_first() {
        testkit::seeded_start_is_tried_once("genetic");
    }

    #[test]
    fn visits_every_point_once_in_any_batch() {
        testkit::visits_every_point_once("genetic");
    }

    #[test]
    fn runs_are_reproducible() {
        testkit::reproducible("genetic");
    }

    #[test]
    fn finds_the_best_sooner_than_random() {
        testkit::beats_random("genetic");
    }

    #[test]
    fn the_population_keeps_the_best_and_no_failures() {
        let grid = Grid::full(vec![4, 4, 4]);
        let mut rng = Rng::new(4);
        let mut g = Genetic::new(&Knobs::default());
        while let Some(&p) = g.ask(&grid, 1, &mut rng).first() {
            g.tell(&grid, p, if p % 3 == 0 { None } else { Some(p as f64) });
        }
        let mut members: Vec<usize> = g.population.iter().map(|m| m.0).collect();
        members.sort_unstable();
        let best: Vec<usize> = (0..grid.len())
            .filter(|p| p % 3 != 0)
            .rev()
            .take(16)
            .collect();
        assert_eq!(members, best.into_iter().rev().collect::<Vec<_>>());
    }

    #[test]
    fn invalid_children_are_repaired_to_the_nearest_unasked_point() {
        let sizes = vec![3, 3];
        // Only the corners and the centre are valid.
        let points = vec![vec![0, 0], vec![0, 2], vec![2, 0], vec![2, 2], vec![1, 1]];
        let grid = Grid::new(sizes, points);
        let mut g = Genetic::new(&Knobs::default());
        g.unasked.fit(grid.len());
        g.unasked.take(0);
        g.unasked.take(4);
        let mut rng = Rng::new(0);
        // [0, 1] is invalid; of the points one step away, [0, 0] and [1, 1] were asked.
        assert_eq!(g.nearest_unasked(&grid, &[0, 1], &mut rng), Some(1));
    }
}
