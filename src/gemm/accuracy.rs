//! Accuracy measured, not assumed: a result's errors against the f64 reference,
//! next to FP32's own (cuBLAS SGEMM on the same inputs), and the gate that says
//! whether a tensor-core SGEMM counts as FP32-accurate.
//!
//! Three measures per result, all against the full f64 reference C of the same
//! inputs: the largest absolute error; that error over the per-element bound of
//! the FP32 check (`MAX_ELEMENT_ERR_RMS` x rms(C)); and the largest error over
//! u32 * (|A||B|)_ij, the scale of FP32 rounding for that element (1 = one unit
//! roundoff of its magnitude). The FP32 check itself (full and sampled) is run on
//! every result too, to show where it does and does not tell a lower precision
//! from FP32.

use serde::{Deserialize, Serialize};

use crate::gemm::check::{check, check_sampled, Samples, MAX_ELEMENT_ERR_RMS};
use crate::gemm::data::Inputs;

/// FP32's unit roundoff, 2^-24.
const U32: f64 = 5.960_464_477_539_063e-8;

/// 3xTF32 counts as FP32-accurate where its largest error is at most this many
/// times cuBLAS SGEMM's on the same inputs ("of the same order"); a result whose
/// error is larger is told apart from FP32 by the same gate.
pub const FP32_FACTOR: f64 = 4.0;

/// The errors of one result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Errors {
    pub max_abs: f64,
    /// `max_abs` over the FP32 full check's per-element bound (pass: <= 1).
    pub over_check_bound: f64,
    /// max_ij |C - Cref|_ij / (u32 (|A||B|)_ij).
    pub over_unit_roundoff: f64,
    pub rel_frobenius: f64,
    /// Whether FP32's full check passes it.
    pub f32_full_check: bool,
    /// The FP32 sampled check: its worst error over its bound (pass: <= 1).
    pub f32_sampled_ratio: f64,
}

/// `c`'s errors against `reference` (column-major M x N, f64) and `abs` = |A||B|
/// (the same shape), with the FP32 checks run on `c` narrowed to f32 (exact for
/// an f32 result).
pub fn errors(m: usize, c: &[f64], reference: &[f64], abs: &[f64], samples: &Samples) -> Errors {
    let mut max_abs = 0f64;
    let mut over_u = 0f64;
    for ((&got, &want), &a) in c.iter().zip(reference).zip(abs) {
        let d = (got - want).abs();
        max_abs = max_abs.max(d);
        if a > 0.0 {
            over_u = over_u.max(d / (U32 * a));
        }
    }
    let narrow: Vec<f32> = c.iter().map(|&v| v as f32).collect();
    let full = check(m, &narrow, reference);
    let sampled = check_sampled(m, &narrow, samples);
    let rms = (reference.iter().map(|v| v * v).sum::<f64>() / reference.len().max(1) as f64).sqrt();
    Errors {
        max_abs,
        over_check_bound: if rms > 0.0 {
            max_abs / (MAX_ELEMENT_ERR_RMS * rms)
        } else {
            max_abs
        },
        over_unit_roundoff: over_u,
        rel_frobenius: full.rel_frobenius,
        f32_full_check: full.passed,
        f32_sampled_ratio: sampled.max_err_over_bound.unwrap_or(f64::NAN),
    }
}

/// What a result's products were formed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arithmetic {
    /// FP32 fused multiply-adds (SIMT kernels, cuBLAS SGEMM's default).
    Fp32,
    /// Three TF32 products per step with FP32 accumulation (FP32-accurate by design).
    Tf32x3,
    /// One TF32 product (operands rounded to 11 significant bits): lower precision.
    Tf32x1,
}

impl Arithmetic {
    pub fn label(self) -> &'static str {
        match self {
            Arithmetic::Fp32 => "FP32",
            Arithmetic::Tf32x3 => "3xTF32",
            Arithmetic::Tf32x1 => "1xTF32 (lower precision)",
        }
    }
}

/// One result of an accuracy run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub inputs: Inputs,
    pub seed: u64,
    pub toolchain: String,
    /// "tc", "simt", "cublas", "cublas-tf32".
    pub kernel: String,
    pub config: String,
    /// The switches set against the kernel's published state ("published" where none).
    pub hints: String,
    pub arithmetic: Arithmetic,
    /// None where the result could not be had (`status` says why).
    pub errors: Option<Errors>,
    pub status: String,
}

impl Row {
    pub fn point(&self) -> (usize, usize, usize, Inputs) {
        (self.m, self.n, self.k, self.inputs)
    }
}

/// The gate at one point (size and inputs) and toolchain: each non-FP32 result's
/// largest error as a multiple of cuBLAS SGEMM's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verdict {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub inputs: Inputs,
    pub toolchain: String,
    pub kernel: String,
    pub hints: String,
    pub arithmetic: Arithmetic,
    /// max_abs / cuBLAS SGEMM's max_abs on the same inputs.
    pub factor: f64,
    /// What the gate says: 3xTF32 is FP32-accurate (factor <= FP32_FACTOR); a lower
    /// precision (1xTF32, cuBLAS TF32) is told apart from FP32 (factor > FP32_FACTOR).
    pub holds: bool,
}

/// Every verdict the rows allow: for each point, each result that is not FP32
/// against cuBLAS SGEMM's result at the same point (cuBLAS runs on the CUDA side
/// of the same GPU; its errors do not depend on which toolchain ran the kernel).
pub fn verdicts(rows: &[Row]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for r in rows {
        let Some(e) = r.errors else { continue };
        if r.arithmetic == Arithmetic::Fp32 {
            continue;
        }
        let fp32 = rows
            .iter()
            .find(|b| b.kernel == "cublas" && b.point() == r.point() && b.errors.is_some());
        let Some(base) = fp32.and_then(|b| b.errors) else {
            continue;
        };
        let factor = if base.max_abs > 0.0 {
            e.max_abs / base.max_abs
        } else {
            f64::INFINITY
        };
        let holds = match r.arithmetic {
            Arithmetic::Tf32x3 => factor <= FP32_FACTOR,
            _ => factor > FP32_FACTOR,
        };
        out.push(Verdict {
            m: r.m,
            n: r.n,
            k: r.k,
            inputs: r.inputs,
            toolchain: r.toolchain.clone(),
            kernel: r.kernel.clone(),
            hints: r.hints.clone(),
            arithmetic: r.arithmetic,
            factor,
            holds,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::reference::sampled_reference;
    use crate::gemm::{data::random_matrix, reference_gemm};

    fn setup(m: usize, n: usize, k: usize) -> (Vec<f32>, Vec<f32>, Vec<f64>, Vec<f64>, Samples) {
        let a = random_matrix(m * k, 1);
        let b = random_matrix(k * n, 2);
        let r = reference_gemm(m, n, k, &a, &b);
        let aa: Vec<f32> = a.iter().map(|v| v.abs()).collect();
        let ba: Vec<f32> = b.iter().map(|v| v.abs()).collect();
        let abs = reference_gemm(m, n, k, &aa, &ba);
        let s = sampled_reference(m, n, k, &a, &b, 3);
        (a, b, r, abs, s)
    }

    /// TF32 rounding of x: 10 explicit mantissa bits, to nearest.
    fn tf32(x: f32) -> f32 {
        let b = x.to_bits();
        f32::from_bits((b + 0x1000) & !0x1FFF)
    }

    #[test]
    fn fp32_tf32_and_split_tf32_products_are_told_apart() {
        let (m, n, k) = (48, 40, 512);
        let (a, b, r, abs, s) = setup(m, n, k);
        let gemm = |fa: &dyn Fn(f32) -> f32, fb: &dyn Fn(f32) -> f32| -> Vec<f64> {
            let mut c = vec![0f64; m * n];
            for j in 0..n {
                for i in 0..m {
                    let mut acc = 0f32;
                    for p in 0..k {
                        acc += fa(a[p * m + i]) * fb(b[j * k + p]);
                    }
                    c[j * m + i] = f64::from(acc);
                }
            }
            c
        };
        let fp32 = errors(m, &gemm(&|x| x, &|x| x), &r, &abs, &s);
        let one = errors(m, &gemm(&tf32, &tf32), &r, &abs, &s);
        // 3xTF32 by hand: hi*hi + hi*lo + lo*hi, each product exact in f32.
        let mut three = vec![0f64; m * n];
        for j in 0..n {
            for i in 0..m {
                let mut acc = 0f32;
                for p in 0..k {
                    let (x, y) = (a[p * m + i], b[j * k + p]);
                    let (xh, yh) = (tf32(x), tf32(y));
                    let (xl, yl) = (tf32(x - xh), tf32(y - yh));
                    acc += xl * yh;
                    acc += xh * yl;
                    acc += xh * yh;
                }
                three[j * m + i] = f64::from(acc);
            }
        }
        let three = errors(m, &three, &r, &abs, &s);
        assert!(
            fp32.f32_full_check && three.f32_full_check,
            "{fp32:?} {three:?}"
        );
        assert!(!one.f32_full_check, "{one:?}");
        assert!(three.max_abs < 4.0 * fp32.max_abs, "{three:?} vs {fp32:?}");
        assert!(one.max_abs > 100.0 * fp32.max_abs, "{one:?} vs {fp32:?}");
        assert!(
            fp32.over_unit_roundoff < 64.0 && one.over_unit_roundoff > 100.0,
            "{fp32:?} {one:?}"
        );

        let row = |kernel: &str, arithmetic, e| Row {
            m,
            n,
            k,
            inputs: Inputs::Uniform,
            seed: 1,
            toolchain: "cuda".into(),
            kernel: kernel.into(),
            config: String::new(),
            hints: "published".into(),
            arithmetic,
            errors: Some(e),
            status: "ok".into(),
        };
        let rows = [
            row("cublas", Arithmetic::Fp32, fp32),
            row("tc", Arithmetic::Tf32x3, three),
            row("tc", Arithmetic::Tf32x1, one),
        ];
        let v = verdicts(&rows);
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|v| v.holds), "{v:?}");
    }
}
