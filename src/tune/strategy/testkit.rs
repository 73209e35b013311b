//! Shared checks for the strategies' tests: grids, a synthetic objective and
//! the properties every strategy must have, run through the replay driver
//! (which itself rejects over-long asks, repeats and points outside the grid).

use crate::tune::grid::Grid;
use crate::tune::replay::{replay, replay_from, Outcomes};
use crate::tune::strategy::by_name;

/// The unconstrained test grid and a constrained one: a diagonal band of
/// invalid points and a missing corner, so neighbours must skip values.
pub fn grids() -> Vec<Grid> {
    let sizes = vec![5, 5, 4, 3];
    let full = Grid::full(sizes.clone());
    let kept = (0..full.len())
        .map(|i| full.coords(i).to_vec())
        .filter(|c| {
            let band = (c[0] + c[1]) % 3 == 0 && c[2] == 1;
            let corner = c[0] >= 3 && c[3] == 2;
            !(band || corner)
        })
        .collect();
    vec![full, Grid::new(sizes, kept)]
}

/// A smooth unimodal score peaking at 40 % along each dimension (100 there),
/// with about one point in nine failing (never the peak).
pub fn objective(grid: &Grid) -> Vec<Option<f64>> {
    (0..grid.len())
        .map(|i| {
            let c = grid.coords(i);
            let peak: Vec<u8> = (0..grid.dims())
                .map(|d| (grid.size(d) * 2 / 5) as u8)
                .collect();
            if c == peak.as_slice() {
                return Some(100.0);
            }
            let hash = c
                .iter()
                .fold(17u64, |h, &v| h.wrapping_mul(31).wrapping_add(u64::from(v)));
            if (hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) % 9 == 0 {
                return None;
            }
            let d2: f64 = c
                .iter()
                .zip(&peak)
                .enumerate()
                .map(|(d, (&v, &p))| (d + 1) as f64 * (f64::from(v) - f64::from(p)).powi(2))
                .sum();
            Some(100.0 / (1.0 + 0.3 * d2))
        })
        .collect()
}

fn table(grid: &Grid) -> Outcomes {
    Outcomes {
        scores: objective(grid),
        costs: vec![1.0; grid.len()],
    }
}

/// The points `name` tries on `grid` with `n` in flight, unbounded.
pub fn order(name: &str, grid: &Grid, n: usize, seed: u64) -> Vec<usize> {
    replay(grid, &table(grid), name, usize::MAX, n, seed)
        .unwrap()
        .iter()
        .map(|s| s.point)
        .collect()
}

/// Unbounded, the strategy tries every point of both grids exactly once,
/// whatever the batch.
pub fn visits_every_point_once(name: &str) {
    for grid in grids() {
        for n in [1, 3, 8, 32] {
            let mut o = order(name, &grid, n, 5);
            o.sort_unstable();
            assert_eq!(o, (0..grid.len()).collect::<Vec<_>>(), "{name}, n = {n}");
        }
    }
}

/// Seeded with a start point, the strategy never asks for it, still tries
/// every other point once, and the start is the first outcome.
pub fn seeded_start_is_tried_once(name: &str) {
    for grid in grids() {
        let t = table(&grid);
        for n in [1, 5] {
            let start = grid.len() / 3;
            let mut s = by_name(name).unwrap();
            let trace = replay_from(&grid, &t, s.as_mut(), Some(start), usize::MAX, n, 3).unwrap();
            assert_eq!(trace[0].point, start, "{name}, n = {n}");
            let mut o: Vec<usize> = trace.iter().map(|s| s.point).collect();
            o.sort_unstable();
            assert_eq!(o, (0..grid.len()).collect::<Vec<_>>(), "{name}, n = {n}");
        }
    }
}

/// The same seed gives the same search.
pub fn reproducible(name: &str) {
    for grid in grids() {
        for n in [1, 6] {
            assert_eq!(order(name, &grid, n, 11), order(name, &grid, n, 11));
        }
    }
}

/// Median over `seeds` runs of the number of points tried until the best of a
/// unimodal objective on a 5x5x5x5 grid turned up.
pub fn median_evaluations_to_best(name: &str, n: usize, seeds: u64) -> usize {
    let grid = Grid::full(vec![5, 5, 5, 5]);
    let t = table(&grid);
    let top = t.best();
    let mut evals: Vec<usize> = (0..seeds)
        .map(|seed| {
            let trace = replay(&grid, &t, name, usize::MAX, n, seed).unwrap();
            1 + trace.iter().position(|s| s.best == top).unwrap()
        })
        .collect();
    evals.sort_unstable();
    evals[evals.len() / 2]
}

/// The guided strategy `name` finds the best in under half the evaluations
/// random search needs (median), one point at a time and with a batch in flight.
pub fn beats_random(name: &str) {
    for n in [1, 8] {
        let guided = median_evaluations_to_best(name, n, 21);
        let random = median_evaluations_to_best("random", n, 21);
        eprintln!("{name}, n = {n}: median {guided} evaluations to the best, random {random}");
        assert!(
            2 * guided < random,
            "{name}, n = {n}: {guided} vs random's {random}"
        );
    }
}

#[test]
fn the_test_inputs_are_what_they_claim() {
    let [full, constrained] = <[Grid; 2]>::try_from(grids()).unwrap();
    assert_eq!(full.len(), 300);
    assert!(constrained.len() < 260, "{}", constrained.len());
    for grid in [full, constrained, Grid::full(vec![5, 5, 5, 5])] {
        let scores = objective(&grid);
        let failed = scores.iter().filter(|s| s.is_none()).count();
        assert!(
            (grid.len() / 20..grid.len() / 5).contains(&failed),
            "{failed} of {}",
            grid.len()
        );
        // A single best, so "found the best" is well defined.
        let top = scores.iter().flatten().copied().fold(0.0, f64::max);
        assert_eq!(scores.iter().filter(|s| **s == Some(top)).count(), 1);
    }
}
