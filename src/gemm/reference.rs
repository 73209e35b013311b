//! The f64 CPU reference: every GEMM result is checked against it.

/// C = A * B in f64, column-major, from f32 operands (A: M x K, B: K x N).
/// matrixmultiply's threaded dgemm: a 4096^3 reference takes seconds on a multi-core host.
pub fn reference_gemm(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    let a64: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let b64: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    let mut c = vec![0.0f64; m * n];
    if m == 0 || n == 0 || k == 0 {
        return c;
    }
    // SAFETY: the slices hold m*k, k*n and m*n elements; strides describe column-major storage.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a64.as_ptr(),
            1,
            m as isize,
            b64.as_ptr(),
            1,
            k as isize,
            0.0,
            c.as_mut_ptr(),
            1,
            m as isize,
        );
    }
    c
}

/// Random single elements in a sampled reference, besides its whole rows and columns.
pub const RANDOM_SAMPLES: usize = 4096;

/// A sampled f64 reference of C = A * B (column-major): `RANDOM_SAMPLES` random
/// elements and the corners, two whole rows (one random, the last) and two whole
/// columns (one random, the last): the last row and column are where padding and
/// border bugs land. Cost (samples + 2M + 2N) * K instead of M * N * K.
pub fn sampled_reference(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    seed: u64,
) -> super::check::Samples {
    use super::parallel::{for_chunks, map_range};
    let mut pick = seed ^ 0x005A_3D1E_C0DE;
    let mut next = |bound: usize| {
        pick = pick.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = pick;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % bound.max(1) as u64) as usize
    };
    let mut rows = vec![next(m), m - 1];
    let mut cols = vec![next(n), n - 1];
    rows.dedup();
    cols.dedup();
    let mut singles: Vec<(usize, usize)> = vec![(0, 0), (m - 1, 0), (0, n - 1)];
    singles.extend((0..RANDOM_SAMPLES).map(|_| (next(m), next(n))));

    // One element: sum and sum of |products| in f64 (f32 x f32 products are exact).
    let dot = |i: usize, j: usize| {
        let bj = &b[j * k..(j + 1) * k];
        let (mut v, mut abs) = (0.0f64, 0.0f64);
        for (p, &bv) in bj.iter().enumerate() {
            let x = f64::from(a[p * m + i]) * f64::from(bv);
            v += x;
            abs += x.abs();
        }
        (v, abs)
    };
    let mut points = Vec::new();
    let mut values = Vec::new();
    let mut abs_sums = Vec::new();
    let mut push = |pts: Vec<(usize, usize)>, got: Vec<(f64, f64)>| {
        for (pt, (v, s)) in pts.into_iter().zip(got) {
            points.push(pt);
            values.push(v);
            abs_sums.push(s);
        }
    };
    let got = map_range(singles.len(), |x| dot(singles[x].0, singles[x].1));
    push(singles, got);
    for &i in &rows {
        // Row i of A gathered once (stride M in column-major storage).
        let ai: Vec<f64> = (0..k).map(|p| f64::from(a[p * m + i])).collect();
        let got = map_range(n, |j| {
            let (mut v, mut abs) = (0.0f64, 0.0f64);
            for (p, &x) in ai.iter().enumerate() {
                let y = x * f64::from(b[j * k + p]);
                v += y;
                abs += y.abs();
            }
            (v, abs)
        });
        push((0..n).map(|j| (i, j)).collect(), got);
    }
    for &j in &cols {
        // Column j of C = sum over p of column p of A times b[p, j]: contiguous in A.
        let mut acc = vec![(0.0f64, 0.0f64); m];
        let bj = &b[j * k..(j + 1) * k];
        for_chunks(&mut acc, 4096, |lo, part| {
            for (p, &bv) in bj.iter().enumerate() {
                let col = &a[p * m + lo..p * m + lo + part.len()];
                for (slot, &av) in part.iter_mut().zip(col) {
                    let y = f64::from(av) * f64::from(bv);
                    slot.0 += y;
                    slot.1 += y.abs();
                }
            }
        });
        push((0..m).map(|i| (i, j)).collect(), acc);
    }
    let description = format!(
        "sampled: {} random elements and corners, rows {:?}, columns {:?} against f64; each within {:.2e} x sum|a||b| (probabilistic bound, lambda = {}); all of C scanned for NaN/inf",
        RANDOM_SAMPLES,
        rows,
        cols,
        super::check::sampled_bound(k),
        super::check::LAMBDA
    );
    super::check::Samples {
        k,
        points,
        values,
        abs_sums,
        description,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_naive_triple_loop_on_a_rectangular_case() {
        let (m, n, k) = (7, 5, 3);
        let a: Vec<f32> = (0..m * k).map(|i| i as f32 * 0.5 - 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| 1.0 - i as f32 * 0.25).collect();
        let c = reference_gemm(m, n, k, &a, &b);
        for j in 0..n {
            for i in 0..m {
                let want: f64 = (0..k)
                    .map(|p| a[p * m + i] as f64 * b[j * k + p] as f64)
                    .sum();
                assert_eq!(c[j * m + i], want);
            }
        }
    }

    #[test]
    fn sampled_values_are_the_full_reference_values() {
        let (m, n, k) = (37, 29, 50);
        let a = crate::gemm::random_matrix(m * k, 1);
        let b = crate::gemm::random_matrix(k * n, 2);
        let full = reference_gemm(m, n, k, &a, &b);
        let s = sampled_reference(m, n, k, &a, &b, 9);
        assert!(s.points.len() >= 2 * m + 2 * n);
        assert!(s.points.contains(&(m - 1, n - 1)));
        for ((&(i, j), &v), &abs) in s.points.iter().zip(&s.values).zip(&s.abs_sums) {
            assert!((v - full[j * m + i]).abs() < 1e-12, "({i},{j})");
            assert!(abs >= v.abs());
        }
    }
}
