//! Seeded random operands. SplitMix64 keeps inputs reproducible from a printed
//! seed without depending on a random-number crate's stream stability.

use serde::{Deserialize, Serialize};

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

/// How random operands are drawn: the accuracy of a GEMM depends on its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inputs {
    /// Uniform in [-1, 1) on a grid of 2^-23 (`random_matrix`): what every check uses.
    Uniform,
    /// Every value with a full 24-bit significand: +-(1 + 23 random bits) / 2, in
    /// [0.5, 1) in magnitude, so no bit of FP32's mantissa is zero by construction.
    Mantissa,
    /// Full 24-bit significands times 2^e, e uniform in [-12, 12]: magnitudes that differ
    /// by up to 2^24, so small products sit beside large ones in every sum.
    Mixed,
}

impl Inputs {
    pub const ALL: [Inputs; 3] = [Inputs::Uniform, Inputs::Mantissa, Inputs::Mixed];

    pub fn name(self) -> &'static str {
        match self {
            Inputs::Uniform => "uniform",
            Inputs::Mantissa => "mantissa",
            Inputs::Mixed => "mixed",
        }
    }

    pub fn parse(s: &str) -> crate::Result<Inputs> {
        Inputs::ALL
            .into_iter()
            .find(|i| i.name() == s.trim())
            .ok_or_else(|| {
                crate::Error::invalid(format!("inputs '{s}': expected uniform, mantissa or mixed"))
            })
    }

    /// What the values are, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Inputs::Uniform => "uniform in [-1, 1) (2^-23 grid)",
            Inputs::Mantissa => "full 24-bit significands, magnitude in [0.5, 1)",
            Inputs::Mixed => "full 24-bit significands times 2^e, e in [-12, 12]",
        }
    }
}

/// `len` values drawn as `inputs` says from `seed` (`Uniform` is `random_matrix`).
pub fn random_matrix_of(len: usize, seed: u64, inputs: Inputs) -> Vec<f32> {
    if inputs == Inputs::Uniform {
        return random_matrix(len, seed);
    }
    let mut out = vec![0.0f32; len];
    const CHUNK: usize = 1 << 20;
    crate::gemm::parallel::for_chunks(&mut out, CHUNK, |start, chunk| {
        for (i, v) in chunk.iter_mut().enumerate() {
            let bits = splitmix(seed, (start + i) as u64 + 1);
            // 23 bits of significand below the leading one, a sign bit, 5 bits of exponent.
            let significand =
                (1u32 << 23 | (bits >> 41) as u32 & 0x7F_FFFF) as f32 / (1u32 << 24) as f32;
            let sign = if bits & 1 == 0 { 1.0 } else { -1.0 };
            let scale = match inputs {
                Inputs::Mixed => 2f32.powi(((bits >> 1) % 25) as i32 - 12),
                _ => 1.0,
            };
            *v = sign * significand * scale;
        }
    });
    out
}

fn splitmix(seed: u64, step: u64) -> u64 {
    let mut z = seed.wrapping_add(GAMMA.wrapping_mul(step));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `step`-th SplitMix64 output from `seed`, as 24 random bits in [-1, 1).
fn splitmix_unit(seed: u64, step: u64) -> f32 {
    let z = splitmix(seed, step);
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
    /// How A, B and C0 were drawn.
    pub inputs: Inputs,
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
        Self::for_problem_of(problem, seed, Inputs::Uniform)
    }

    /// `for_problem` with operands drawn as `inputs` says.
    pub fn for_problem_of(problem: Problem, seed: u64, inputs: Inputs) -> Self {
        let (m, n, k) = (problem.m, problem.n, problem.k);
        // Different streams for A, B and C, all tied to the one printed seed.
        let a = random_matrix_of(m * k, seed ^ 0xA, inputs);
        let b = random_matrix_of(k * n, seed.rotate_left(17) ^ 0xB, inputs);
        let c0 = if problem.beta != 0.0 {
            random_matrix_of(m * n, seed.rotate_left(33) ^ 0xC, inputs)
        } else {
            Vec::new()
        };
        Operands {
            m,
            n,
            k,
            seed,
            inputs,
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

pub use crate::kernel::builtin::round_up;

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
    fn input_distributions_have_their_significands_and_magnitudes() {
        let m = random_matrix_of(50_000, 3, Inputs::Mantissa);
        assert_eq!(m, random_matrix_of(50_000, 3, Inputs::Mantissa));
        // Every value: 0.5 <= |x| < 1 with the lowest significand bit free to be set.
        assert!(m.iter().all(|x| (0.5..1.0).contains(&x.abs())));
        let odd = m
            .iter()
            .filter(|x| (x.abs() * (1u32 << 24) as f32) as u32 % 2 == 1)
            .count();
        assert!(odd > 20_000 && odd < 30_000, "{odd}");
        let x = random_matrix_of(50_000, 3, Inputs::Mixed);
        let (lo, hi) = x.iter().fold((f32::MAX, 0f32), |(l, h), v| {
            (l.min(v.abs()), h.max(v.abs()))
        });
        assert!(lo < 2f32.powi(-11) && hi > 2f32.powi(11), "{lo} {hi}");
        assert!(x.iter().any(|v| *v < 0.0) && x.iter().any(|v| *v > 0.0));
        assert_eq!(
            random_matrix_of(100, 3, Inputs::Uniform),
            random_matrix(100, 3)
        );
        assert_eq!(Inputs::parse("mixed").unwrap(), Inputs::Mixed);
        assert!(Inputs::parse("gaussian").is_err());
    }

    #[test]
    fn rounding() {
        assert_eq!(round_up(1, 32), 32);
        assert_eq!(round_up(32, 32), 32);
        assert_eq!(round_up(33, 32), 64);
        assert_eq!(round_up(17, 1), 17);
    }
}
