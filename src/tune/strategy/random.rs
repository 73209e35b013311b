//! A random permutation of the grid, drawn as it goes (sampling without
//! replacement): the baseline the guided strategies must beat.

use super::{Rng, Strategy, Unasked};
use crate::tune::grid::Grid;

#[derive(Debug, Clone, Default)]
pub struct Random {
    unasked: Unasked,
}

impl Random {
    pub fn new() -> Random {
        Random::default()
    }
}

impl Strategy for Random {
    fn name(&self) -> &'static str {
        "random"
    }

    fn ask(&mut self, grid: &Grid, n: usize, rng: &mut Rng) -> Vec<usize> {
        self.unasked.fit(grid.len());
        (0..n).map_while(|_| self.unasked.draw(rng)).collect()
    }

    fn tell(&mut self, _grid: &Grid, _point: usize, _score: Option<f64>) {}

    fn guided(&self) -> bool {
        false
    }

    fn seed(&mut self, grid: &Grid, point: usize) {
        self.unasked.fit(grid.len());
        self.unasked.take(point);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit;

    #[test]
    fn a_seeded_start_is_tried_once_and_first() {
        testkit::seeded_start_is_tried_once("random");
    }

    #[test]
    fn visits_every_point_once_in_any_batch() {
        testkit::visits_every_point_once("random");
    }

    #[test]
    fn runs_are_reproducible_and_seeds_differ() {
        testkit::reproducible("random");
        let grid = crate::tune::grid::Grid::full(vec![5, 5, 4, 3]);
        assert_ne!(
            testkit::order("random", &grid, 4, 1),
            testkit::order("random", &grid, 4, 2)
        );
    }
}
