//! Every point once, in grid order: the baseline that cannot miss the best.

use super::{Rng, Strategy};
use crate::tune::grid::Grid;

#[derive(Debug, Clone, Default)]
pub struct Exhaustive {
    /// The next point to hand out.
    next: usize,
    /// Seeded points, skipped when their turn comes.
    seeded: Vec<usize>,
}

impl Exhaustive {
    pub fn new() -> Exhaustive {
        Exhaustive::default()
    }
}

impl Strategy for Exhaustive {
    fn name(&self) -> &'static str {
        "exhaustive"
    }

    fn ask(&mut self, grid: &Grid, n: usize, _rng: &mut Rng) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && self.next < grid.len() {
            if !self.seeded.contains(&self.next) {
                out.push(self.next);
            }
            self.next += 1;
        }
        out
    }

    fn tell(&mut self, _grid: &Grid, _point: usize, _score: Option<f64>) {}

    fn guided(&self) -> bool {
        false
    }

    fn seed(&mut self, _grid: &Grid, point: usize) {
        self.seeded.push(point);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit;

    #[test]
    fn a_seeded_start_is_tried_once_and_first() {
        testkit::seeded_start_is_tried_once("exhaustive");
    }

    #[test]
    fn visits_every_point_once_in_any_batch() {
        testkit::visits_every_point_once("exhaustive");
    }

    #[test]
    fn runs_are_reproducible() {
        testkit::reproducible("exhaustive");
    }

    #[test]
    fn goes_in_grid_order() {
        let grid = crate::tune::grid::Grid::full(vec![5, 5, 4, 3]);
        let order = testkit::order("exhaustive", &grid, 3, 1);
        assert_eq!(order, (0..grid.len()).collect::<Vec<_>>());
    }
}
