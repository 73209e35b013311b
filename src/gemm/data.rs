//! Seeded random operands. SplitMix64 keeps inputs reproducible from a printed
//! seed without depending on a random-number crate's stream stability.

use super::problem::{Matrix, Problem};

/// Uniform values in [-1, 1); never all zeros, reproducible from `seed`.
/// SplitMix64's state after i steps is seed + i * gamma, so element i can be made
/// on its own: the matrix is filled in parallel chunks, the same values as in order.
pub fn random_matrix(len: usize, seed: u64) -> Vec<f32> {
    let mut out = vec![0.0f32; len];
    const CHUNK: usize = 1 << 20;
    crate::gemm::parallel::for_chunks(&mut out, CHUNK, |start, chunk| {
        for (i, v) in chunk.iter_mut().enumerate() {
            *v = splitmix_unit(seed, (start + i) as u64 + 1);
        }
    });
    out
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The `step`-th SplitMix64 output from `seed`, as 24 random bits in [-1, 1).
fn splitmix_unit(seed: u64, step: u64) -> f32 {
    let mut z = seed.wrapping_add(GAMMA.wrapping_mul(step));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    // 24 random bits: exactly representable in f32.
    ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// The operands of one problem, as the product uses them: op(A) is M x K and
/// op(B) is K x N, column-major, whatever the problem's storage (`stored`
/// places them); C0 is C before the call where beta is not 0. Values are 24-bit
/// (exact in f32 and f64), so both precisions compute from the same numbers.
#[derive(Debug, Clone)]
pub struct Operands {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub seed: u64,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    /// C before the call (column-major M x N) where beta != 0; empty otherwise.
    pub c0: Vec<f32>,
    pub problem: Problem,
}

/// What the elements of a C buffer outside the matrix (gaps between columns,
/// the offset) hold before a call; they must hold it afterwards.
pub const C_GAP: f32 = -7777.0;

impl Operands {
    /// The tutorial's problem: column-major C = A * B in f32.
    pub fn new(m: usize, n: usize, k: usize, seed: u64) -> Self {
        Self::for_problem(Problem::plain(m, n, k), seed)
    }

    pub fn for_problem(problem: Problem, seed: u64) -> Self {
        let (m, n, k) = (problem.m, problem.n, problem.k);
        // Different streams for A, B and C, all tied to the one printed seed.
        let a = random_matrix(m * k, seed ^ 0xA);
        let b = random_matrix(k * n, seed.rotate_left(17) ^ 0xB);
        let c0 = if problem.beta != 0.0 {
            random_matrix(m * n, seed.rotate_left(33) ^ 0xC)
        } else {
            Vec::new()
        };
        Operands {
            m,
            n,
            k,
            seed,
            a,
            b,
            c0,
            problem,
        }
    }

    /// The buffer of matrix `which` as the problem stores it (layout, transpose,
    /// leading dimension, offset). Elements outside the matrix hold `gap`; C's own
    /// elements hold C0, or NaN where beta is 0 (a routine must not read them).
    pub fn stored(&self, which: Matrix, gap: f32) -> Vec<f32> {
        let p = &self.problem;
        let s = p.storage(which);
        let (rows, cols, src): (usize, usize, &[f32]) = match which {
            Matrix::A => (p.m, p.k, &self.a),
            Matrix::B => (p.k, p.n, &self.b),
            Matrix::C => (p.m, p.n, &self.c0),
        };
        let mut out = vec![gap; s.buffer_len()];
        for j in 0..cols {
            for i in 0..rows {
                out[s.index(i, j)] = src.get(j * rows + i).copied().unwrap_or(f32::NAN);
            }
        }
        out
    }

    /// True when matrix `which` is stored exactly as the logical column-major
    /// values (no transpose, tight, no offset): it can be uploaded as it is.
    pub fn stored_as_is(&self, which: Matrix) -> bool {
        let p = &self.problem;
        let s = p.storage(which);
        let rows = match which {
            Matrix::A | Matrix::C => p.m,
            Matrix::B => p.k,
        };
        !s.transposed && s.offset == 0 && s.ld == rows.max(1) && which != Matrix::C
    }
}

/// "N" (for N x N x N) or "MxNxK": positive, at most 65536 (the kernels index with 32-bit ints).
pub fn parse_size(s: &str) -> crate::Result<(usize, usize, usize)> {
    let bad = || {
        crate::Error::invalid(format!(
            "size '{s}': expected N or MxNxK with positive integers"
        ))
    };
    let parts: Vec<usize> = s
        .trim()
        .split(['x', 'X'])
        .map(|p| p.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<crate::Result<_>>()?;
    let dims = match parts.as_slice() {
        [n] => (*n, *n, *n),
        [m, n, k] => (*m, *n, *k),
        _ => return Err(bad()),
    };
    if dims.0 == 0 || dims.1 == 0 || dims.2 == 0 {
        return Err(bad());
    }
    if dims.0.max(dims.1).max(dims.2) > 65536 {
        return Err(crate::Error::invalid(format!(
            "size '{s}': dimensions above 65536 are not supported (32-bit kernel indices)"
        )));
    }
    Ok(dims)
}

pub use crate::kernels::round_up;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_reproducible_bounded_and_not_zero() {
        let a = random_matrix(10_000, 7);
        assert_eq!(a, random_matrix(10_000, 7));
        assert_ne!(a, random_matrix(10_000, 8));
        assert!(a.iter().all(|&x| (-1.0..1.0).contains(&x)));
        let zeros = a.iter().filter(|&&x| x == 0.0).count();
        assert!(zeros < 5);
        let mean: f32 = a.iter().sum::<f32>() / a.len() as f32;
        assert!(mean.abs() < 0.05);
    }

    #[test]
    fn parallel_chunks_give_the_sequential_stream() {
        // The generator as it ran before chunking: one state stepped in order.
        let seed = 42u64;
        let mut state = seed;
        let len = (1 << 20) * 2 + 77;
        let sequential: Vec<f32> = (0..len)
            .map(|_| {
                state = state.wrapping_add(GAMMA);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect();
        assert_eq!(random_matrix(len, seed), sequential);
    }

    #[test]
    fn rounding() {
        assert_eq!(round_up(1, 32), 32);
        assert_eq!(round_up(32, 32), 32);
        assert_eq!(round_up(33, 32), 64);
        assert_eq!(round_up(17, 1), 17);
    }
}
