//! The search space as strategies see it: dimensions with ordered values and the
//! valid points among their product, each point a vector of value indices. What
//! the values mean (parameters, switches, register caps) stays in `space`; a
//! strategy only needs order and neighbourhood, so it can be tested on any grid.

use std::collections::HashSet;

/// Valid points of a product of ordered dimensions. A point is stored as its
/// position in the full product (mixed radix, the last dimension fastest): a
/// kernel's space holds millions of points, and a number each is a twentieth of
/// the memory a vector of coordinates each would take, with nothing to allocate.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Number of values of each dimension.
    sizes: Vec<usize>,
    /// Position in the full product of one step along each dimension.
    strides: Vec<u64>,
    /// Every valid point's position in the full product, in point order.
    keys: Vec<u64>,
    /// Point numbers sorted by key, where `keys` is not already increasing.
    sorted: Option<Vec<u32>>,
}

impl Grid {
    /// A grid of the given dimension sizes holding `points` (duplicates dropped, order kept).
    pub fn new(sizes: Vec<usize>, points: Vec<Vec<u8>>) -> Grid {
        let strides = strides(&sizes);
        let mut seen = HashSet::with_capacity(points.len());
        let keys = points
            .iter()
            .map(|p| {
                debug_assert_eq!(p.len(), sizes.len());
                key_of(&strides, p)
            })
            .filter(|k| seen.insert(*k))
            .collect();
        Grid::from_keys(sizes, keys)
    }

    /// A grid from points given as positions in the full product (distinct).
    pub fn from_keys(sizes: Vec<usize>, keys: Vec<u64>) -> Grid {
        let strides = strides(&sizes);
        let increasing = keys.windows(2).all(|w| w[0] < w[1]);
        let sorted = (!increasing).then(|| {
            let mut order: Vec<u32> = (0..keys.len() as u32).collect();
            order.sort_unstable_by_key(|&i| keys[i as usize]);
            order
        });
        Grid {
            sizes,
            strides,
            keys,
            sorted,
        }
    }

    /// Every point of the full product (for tests and unconstrained spaces).
    pub fn full(sizes: Vec<usize>) -> Grid {
        let n: u64 = sizes.iter().map(|&s| s as u64).product();
        Grid::from_keys(sizes, (0..n).collect())
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn dims(&self) -> usize {
        self.sizes.len()
    }

    /// Number of values of dimension `d`.
    pub fn size(&self, d: usize) -> usize {
        self.sizes[d]
    }

    pub fn coords(&self, point: usize) -> Vec<u8> {
        decode(&self.strides, self.keys[point])
    }

    /// The point with these coordinates, if it is valid.
    pub fn find(&self, coords: &[u8]) -> Option<usize> {
        if coords.len() != self.sizes.len()
            || coords
                .iter()
                .zip(&self.sizes)
                .any(|(&c, &s)| c as usize >= s)
        {
            return None;
        }
        let key = key_of(&self.strides, coords);
        match &self.sorted {
            None => self.keys.binary_search(&key).ok(),
            Some(order) => order
                .binary_search_by_key(&key, |&i| self.keys[i as usize])
                .ok()
                .map(|at| order[at] as usize),
        }
    }

    /// Valid points one step away: one dimension moved to the next value up or
    /// down. Where a dimension's next value is invalid, the nearest valid value
    /// along that dimension counts instead, so narrow valid regions stay connected.
    pub fn neighbours(&self, point: usize) -> Vec<usize> {
        let c = self.coords(point);
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
        let (a, b) = (self.coords(a), self.coords(b));
        a.iter().zip(&b).filter(|(x, y)| x != y).count()
    }
}

/// Mixed-radix place values of a product of dimension sizes, the last fastest.
pub(crate) fn strides(sizes: &[usize]) -> Vec<u64> {
    let mut out = vec![1u64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        out[d] = out[d + 1] * sizes[d + 1] as u64;
    }
    out
}

/// The coordinates of position `pos` in a product with place values `strides`.
pub(crate) fn decode(strides: &[u64], mut pos: u64) -> Vec<u8> {
    strides
        .iter()
        .map(|&s| {
            let v = pos / s;
            pos %= s;
            v as u8
        })
        .collect()
}

fn key_of(strides: &[u64], coords: &[u8]) -> u64 {
    coords
        .iter()
        .zip(strides)
        .map(|(&c, &s)| u64::from(c) * s)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_grid_has_the_product_and_finds_points() {
        let g = Grid::full(vec![3, 2, 4]);
        assert_eq!(g.len(), 24);
        let i = g.find(&[2, 1, 3]).unwrap();
        assert_eq!(g.coords(i), vec![2, 1, 3]);
        assert_eq!(g.find(&[3, 0, 0]), None);
    }

    #[test]
    fn points_in_any_order_are_found_and_duplicates_dropped() {
        let g = Grid::new(
            vec![2, 3],
            vec![vec![1, 2], vec![0, 1], vec![1, 2], vec![1, 0]],
        );
        assert_eq!(g.len(), 3);
        assert_eq!(g.find(&[1, 2]), Some(0));
        assert_eq!(g.find(&[0, 1]), Some(1));
        assert_eq!(g.find(&[1, 0]), Some(2));
        assert_eq!(g.find(&[0, 0]), None);
        assert_eq!(g.coords(2), vec![1, 0]);
    }

    #[test]
    fn neighbours_step_one_dimension_and_skip_invalid_values() {
        // Valid: everything except the middle value of dimension 0.
        let sizes = vec![3, 2];
        let full = Grid::full(sizes.clone());
        let points: Vec<Vec<u8>> = (0..full.len())
            .map(|i| full.coords(i))
            .filter(|p| p[0] != 1)
            .collect();
        let g = Grid::new(sizes, points);
        let a = g.find(&[0, 0]).unwrap();
        let mut n: Vec<Vec<u8>> = g.neighbours(a).into_iter().map(|i| g.coords(i)).collect();
        n.sort();
        assert_eq!(n, vec![vec![0u8, 1], vec![2, 0]]);
        assert_eq!(g.distance(a, g.find(&[2, 1]).unwrap()), 2);
    }
}
