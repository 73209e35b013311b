//! The search space as strategies see it: dimensions with ordered values and the
//! valid points among their product, each point a vector of value indices. What
//! the values mean (parameters, switches, register caps) stays in `space`; a
//! strategy only needs order and neighbourhood, so it can be tested on any grid.

use std::collections::HashMap;

/// Valid points of a product of ordered dimensions.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Number of values of each dimension.
    sizes: Vec<usize>,
    /// Coordinates of every valid point.
    points: Vec<Vec<u8>>,
    index: HashMap<Vec<u8>, usize>,
}

impl Grid {
    /// A grid of the given dimension sizes holding `points` (duplicates dropped, order kept).
    pub fn new(sizes: Vec<usize>, points: Vec<Vec<u8>>) -> Grid {
        let mut index = HashMap::with_capacity(points.len());
        let mut kept = Vec::with_capacity(points.len());
        for p in points {
            debug_assert_eq!(p.len(), sizes.len());
            if !index.contains_key(&p) {
                index.insert(p.clone(), kept.len());
                kept.push(p);
            }
        }
        Grid {
            sizes,
            points: kept,
            index,
        }
    }

    /// Every point of the full product (for tests and unconstrained spaces).
    pub fn full(sizes: Vec<usize>) -> Grid {
        let mut points = vec![Vec::new()];
        for &s in &sizes {
            let mut next = Vec::with_capacity(points.len() * s);
            for p in &points {
                for v in 0..s {
                    let mut q = p.clone();
                    q.push(v as u8);
                    next.push(q);
                }
            }
            points = next;
        }
        Grid::new(sizes, points)
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn dims(&self) -> usize {
        self.sizes.len()
    }

    /// Number of values of dimension `d`.
    pub fn size(&self, d: usize) -> usize {
        self.sizes[d]
    }

    pub fn coords(&self, point: usize) -> &[u8] {
        &self.points[point]
    }

    /// The point with these coordinates, if it is valid.
    pub fn find(&self, coords: &[u8]) -> Option<usize> {
        self.index.get(coords).copied()
    }

    /// Valid points one step away: one dimension moved to the next value up or
    /// down. Where a dimension's next value is invalid, the nearest valid value
    /// along that dimension counts instead, so narrow valid regions stay connected.
    pub fn neighbours(&self, point: usize) -> Vec<usize> {
        let c = &self.points[point];
        let mut out = Vec::new();
        for d in 0..self.sizes.len() {
            for dir in [-1i32, 1] {
                let mut v = i32::from(c[d]) + dir;
                let mut q = c.clone();
                while v >= 0 && (v as usize) < self.sizes[d] {
                    q[d] = v as u8;
                    if let Some(i) = self.find(&q) {
                        out.push(i);
                        break;
                    }
                    v += dir;
                }
            }
        }
        out
    }

    /// Number of dimensions in which two points differ.
    pub fn distance(&self, a: usize, b: usize) -> usize {
        self.points[a]
            .iter()
            .zip(&self.points[b])
            .filter(|(x, y)| x != y)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_grid_has_the_product_and_finds_points() {
        let g = Grid::full(vec![3, 2, 4]);
        assert_eq!(g.len(), 24);
        let i = g.find(&[2, 1, 3]).unwrap();
        assert_eq!(g.coords(i), &[2, 1, 3]);
        assert_eq!(g.find(&[3, 0, 0]), None);
    }

    #[test]
    fn neighbours_step_one_dimension_and_skip_invalid_values() {
        // Valid: everything except the middle value of dimension 0.
        let sizes = vec![3, 2];
        let points: Vec<Vec<u8>> = Grid::full(sizes.clone())
            .points
            .into_iter()
            .filter(|p| p[0] != 1)
            .collect();
        let g = Grid::new(sizes, points);
        let a = g.find(&[0, 0]).unwrap();
        let mut n: Vec<&[u8]> = g.neighbours(a).into_iter().map(|i| g.coords(i)).collect();
        n.sort();
        assert_eq!(n, vec![&[0u8, 1][..], &[2, 0][..]]);
        assert_eq!(g.distance(a, g.find(&[2, 1]).unwrap()), 2);
    }
}
