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
    sizes: Vec<usize>,
    strides: Vec<u64>,
    points: Points,
}

#[derive(Debug, Clone)]
enum Points {
    /// Every point's position, and the order that sorts them where they are not.
    Keys {
        keys: Vec<u64>,
        sorted: Option<Vec<u32>>,
    },
    /// Positions `outer * inner + offset`: for each valid combination of the
    /// leading dimensions (`outer`, increasing), the valid combinations of the
    /// trailing ones are one of a few shared lists (`classes`, increasing
    /// offsets). The SIMT kernels' CUDA spaces, 0.95 and 1.55 billion points, are
    /// held this way in megabytes (their switches and caps filter alike for most
    /// tiles), where a position each took 7.6 and 12.4 GB.
    Blocks {
        inner: u64,
        outer: Vec<u64>,
        class: Vec<u32>,
        /// The index of each block's first point; one more entry, the total.
        start: Vec<u64>,
        classes: Vec<Vec<u32>>,
    },
}

impl Grid {
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
            points: Points::Keys { keys, sorted },
        }
    }

    /// The points `outer * inner + o` for each `(outer, class)` of `blocks` and
    /// each offset `o` of `classes[class]`, where `inner` is the product of the
    /// trailing dimensions the offsets range over. Blocks are sorted by their outer
    /// position and offsets within a class; an empty class adds no point.
    pub fn from_blocks(
        sizes: Vec<usize>,
        inner: u64,
        mut blocks: Vec<(u64, u32)>,
        mut classes: Vec<Vec<u32>>,
    ) -> Grid {
        for c in &mut classes {
            c.sort_unstable();
            c.dedup();
        }
        blocks.retain(|&(_, c)| !classes[c as usize].is_empty());
        blocks.sort_unstable_by_key(|b| b.0);
        blocks.dedup_by_key(|b| b.0);
        let mut start = Vec::with_capacity(blocks.len() + 1);
        let mut at = 0u64;
        for &(_, c) in &blocks {
            start.push(at);
            at += classes[c as usize].len() as u64;
        }
        start.push(at);
        let (outer, class) = blocks.into_iter().unzip();
        Grid {
            strides: strides(&sizes),
            sizes,
            points: Points::Blocks {
                inner: inner.max(1),
                outer,
                class,
                start,
                classes,
            },
        }
    }

    /// The position in the full product of the point `point`.
    fn key(&self, point: usize) -> u64 {
        match &self.points {
            Points::Keys { keys, .. } => keys[point],
            Points::Blocks {
                inner,
                outer,
                class,
                start,
                classes,
            } => {
                let p = point as u64;
                let b = start.partition_point(|&s| s <= p) - 1;
                let offset = classes[class[b] as usize][(p - start[b]) as usize];
                outer[b] * inner + u64::from(offset)
            }
        }
    }

    pub fn full(sizes: Vec<usize>) -> Grid {
        let n: u64 = sizes.iter().map(|&s| s as u64).product();
        Grid::from_keys(sizes, (0..n).collect())
    }

    pub fn len(&self) -> usize {
        match &self.points {
            Points::Keys { keys, .. } => keys.len(),
            Points::Blocks { start, .. } => start.last().copied().unwrap_or(0) as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dims(&self) -> usize {
        self.sizes.len()
    }

    /// Number of values of dimension `d`.
    pub fn size(&self, d: usize) -> usize {
        self.sizes[d]
    }

    pub fn coords(&self, point: usize) -> Vec<u8> {
        decode(&self.strides, self.key(point))
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
        match &self.points {
            Points::Keys { keys, sorted: None } => keys.binary_search(&key).ok(),
            Points::Keys {
                keys,
                sorted: Some(order),
            } => order
                .binary_search_by_key(&key, |&i| keys[i as usize])
                .ok()
                .map(|at| order[at] as usize),
            Points::Blocks {
                inner,
                outer,
                class,
                start,
                classes,
            } => {
                let b = outer.binary_search(&(key / inner)).ok()?;
                let offset = u32::try_from(key % inner).ok()?;
                let at = classes[class[b] as usize].binary_search(&offset).ok()?;
                Some((start[b] + at as u64) as usize)
            }
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
    fn blocks_hold_the_same_points_as_their_keys() {
        // Dimensions 3 x 2 x 4: the outer combination (first two) picks a class of
        // valid offsets over the last dimension.
        let sizes = vec![3, 2, 4];
        let classes = vec![vec![0, 3], vec![], vec![1, 2, 3]];
        let blocks = vec![(0, 0), (2, 1), (3, 2), (5, 0)];
        let g = Grid::from_blocks(sizes.clone(), 4, blocks, classes);
        let keys = vec![0, 3, 13, 14, 15, 20, 23];
        let k = Grid::from_keys(sizes, keys.clone());
        assert_eq!(g.len(), keys.len());
        for i in 0..g.len() {
            assert_eq!(g.coords(i), k.coords(i), "point {i}");
            assert_eq!(g.find(&g.coords(i)), Some(i));
            assert_eq!(g.neighbours(i), k.neighbours(i));
        }
        assert_eq!(g.find(&[0, 0, 1]), None, "an offset its class lacks");
        assert_eq!(
            g.find(&[1, 0, 0]),
            None,
            "an outer point with an empty class"
        );
        assert_eq!(g.find(&[2, 0, 0]), None, "an outer point without a block");
        assert!(Grid::from_blocks(vec![2, 2], 2, vec![(0, 0)], vec![vec![]]).is_empty());
    }

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
