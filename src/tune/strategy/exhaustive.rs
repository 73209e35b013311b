//! Every point once, in grid order: the baseline that cannot miss the best.

use super::{Rng, Strategy};
use crate::tune::grid::Grid;

#[derive(Debug, Clone, Default)]
pub struct Exhaustive {
    /// The next point to hand out.
    next: usize,
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
        let end = self.next.saturating_add(n).min(grid.len());
        let out: Vec<usize> = (self.next..end).collect();
        self.next = self.next.max(end);
        out
    }

    fn tell(&mut self, _grid: &Grid, _point: usize, _score: Option<f64>) {}
}

#[cfg(test)]
mod tests {
    use super::super::testkit;

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
