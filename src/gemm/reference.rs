//! The f64 CPU reference: every GEMM result is checked against it.

/// C = A * B in f64, column-major, from f32 operands (A: M x K, B: K x N).
/// matrixmultiply's threaded dgemm: a 4096^3 reference takes seconds on a multi-core host.
pub fn reference_gemm(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    let a64: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let b64: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    let mut c = vec![0.0f64; m * n];
    if m == 0 || n == 0 {
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
}
