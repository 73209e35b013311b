//! Host-side data parallelism for the O(M*N) and O(M*K) passes (inputs, checks,
//! conversions) that would otherwise dominate a run at 32768^2: scoped threads
//! over contiguous chunks, one per available core.

/// Calls `f(start, chunk)` on consecutive chunks of `data` of at most `chunk`
/// elements, spread over the host's cores; `start` is the chunk's first index.
pub fn for_chunks<T: Send>(data: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk = chunk.max(1);
    let threads = threads().min(data.len().div_ceil(chunk)).max(1);
    if threads == 1 {
        for (c, part) in data.chunks_mut(chunk).enumerate() {
            f(c * chunk, part);
        }
        return;
    }
    // Chunks are dealt round-robin so every thread gets a similar share.
    let mut lanes: Vec<Vec<(usize, &mut [T])>> = (0..threads).map(|_| Vec::new()).collect();
    for (c, part) in data.chunks_mut(chunk).enumerate() {
        lanes[c % threads].push((c * chunk, part));
    }
    std::thread::scope(|s| {
        for lane in lanes {
            let f = &f;
            s.spawn(move || {
                for (start, part) in lane {
                    f(start, part);
                }
            });
        }
    });
}

/// Maps `0..n` to values in parallel, keeping the order.
pub fn map_range<R: Send + Default + Clone>(n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let mut out = vec![R::default(); n];
    let per = n.div_ceil(threads()).max(1);
    for_chunks(&mut out, per, |start, part| {
        for (i, v) in part.iter_mut().enumerate() {
            *v = f(start + i);
        }
    });
    out
}

pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_visited_once_with_its_index() {
        let mut v = vec![0usize; 10_007];
        for_chunks(&mut v, 100, |start, part| {
            for (i, x) in part.iter_mut().enumerate() {
                *x += start + i;
            }
        });
        assert!(v.iter().enumerate().all(|(i, &x)| x == i));
        assert_eq!(map_range(5, |i| i * i), vec![0, 1, 4, 9, 16]);
        assert!(map_range(0, |i| i).is_empty());
    }
}
