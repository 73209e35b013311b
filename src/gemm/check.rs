//! Checking a result against the reference.
//!
//! Against a full f64 reference (every element: the CPU reference, or cuBLAS DGEMM
//! on the device for sizes where the CPU would take hours) two criteria must hold:
//! - relative Frobenius error ||C - Cref||_F / ||Cref||_F <= 1e-4. FP32 GEMM with
//!   random inputs in [-1, 1) lands near sqrt(K) * 2^-24 (about 5e-6 at K = 8192);
//!   an indexing or synchronisation bug lands near 1e-1.
//! - every element within 1e-3 * rms(Cref) of the reference, so that a single wrong
//!   element in a large matrix, which the Frobenius norm would average away, still fails.
//!
//! Against a sampled reference (random elements plus whole rows and columns, in f64)
//! every sampled element must lie within its derived rounding-error bound
//! (`sampled_bound`), and the whole of C is still scanned for non-finite values.
//!
//! Any NaN or infinity fails: outputs are poisoned with NaN before checked runs,
//! so an element the kernel never wrote shows up here.

use serde::{Deserialize, Serialize};

use super::parallel;
use super::problem::Precision;

/// An element type a result can have, with the limits its check uses.
pub trait Real: Copy + Send + Sync + 'static {
    const PRECISION: Precision;
    fn wide(self) -> f64;
}

impl Real for f32 {
    const PRECISION: Precision = Precision::F32;
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    fn wide(self) -> f64 {
        self
    }
}

/// The limits of the full check, per precision: (relative Frobenius error, worst
/// element error over rms). FP64 GEMM lands near sqrt(K) 2^-53 (1e-14 at K = 8192):
/// 1e-11 leaves room for any summation order and still fails a kernel that
/// accumulates in f32 (about 1e-7).
pub fn limits(p: Precision) -> (f64, f64) {
    match p {
        Precision::F32 => (MAX_REL_FROBENIUS, MAX_ELEMENT_ERR_RMS),
        Precision::F64 => (1e-11, 1e-10),
    }
}

fn unit_roundoff(p: Precision) -> f64 {
    match p {
        Precision::F32 => U32,
        Precision::F64 => U64,
    }
}

/// The limits of the full check for a result whose products were formed from TF32
/// operands (1xTF32: 11 significant bits, unit roundoff 2^-11): such a GEMM lands near
/// 3e-4 relative Frobenius error and 1.5e-3 x rms in its worst element (measured on
/// the H200 at 1000-8192); an indexing or synchronisation bug lands near 1e-1.
pub const TF32_LIMITS: (f64, f64) = (5e-3, 2e-2);
/// Unit roundoff of TF32 (10 explicit mantissa bits, round to nearest).
pub const U_TF32: f64 = 4.882_812_5e-4;

pub const MAX_REL_FROBENIUS: f64 = 1e-4;
pub const MAX_ELEMENT_ERR_RMS: f64 = 1e-3;
/// The confidence parameter of the probabilistic bound: the bound fails by chance with
/// probability below 2K exp(-LAMBDA^2/2) per element (1e-17 at K = 65536).
pub const LAMBDA: f64 = 10.0;
const U32: f64 = 5.960_464_477_539_063e-8; // 2^-24, unit roundoff of f32
const U64: f64 = 1.110_223_024_625_156_5e-16; // 2^-53, unit roundoff of f64

/// The relative error bound of an FP32 inner product of length `k`, as a multiple of
/// sum |a_ip| |b_pj|: Higham and Mary's probabilistic bound (SIAM J. Sci. Comput.
/// 41(5), 2019, Theorem 3.1), exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1, which
/// holds for any summation order under independent rounding errors; plus the f64
/// reference's own worst-case error k 2^-53. The deterministic bound k u / (1 - k u)
/// is `deterministic_bound`, reported beside it.
pub fn sampled_bound(k: usize) -> f64 {
    sampled_bound_for(k, Precision::F32)
}

/// `sampled_bound` for a result computed in `p`.
pub fn sampled_bound_for(k: usize, p: Precision) -> f64 {
    let u = unit_roundoff(p);
    let k = k as f64;
    (LAMBDA * k.sqrt() * u + k * u * u / (1.0 - u)).exp_m1() + k * U64
}

/// gamma_k = k u / (1 - k u): the worst case over every rounding, for reference.
pub fn deterministic_bound(k: usize) -> f64 {
    let ku = k as f64 * U32;
    if ku < 1.0 {
        ku / (1.0 - ku)
    } else {
        f64::INFINITY
    }
}

pub use crate::measure::CheckMode;

/// Largest M*N*K checked against the full CPU reference by default: 8192^3 takes
/// seconds on a many-core host; 32768^3 would take hours.
pub const FULL_CPU_MAX_MNK: u128 = 8192 * 8192 * 8192;

pub const CPU_SOURCE: &str = "f64 CPU reference (matrixmultiply dgemm)";

/// What a result is compared with.
#[derive(Debug, Clone)]
pub enum Reference {
    /// Every element of C in f64; `source` says how it was computed.
    Full { c: Vec<f64>, source: String },
    /// Some elements of C in f64 with the sum of |a||b| behind each.
    Sampled(Samples),
}

impl Reference {
    /// The full f64 reference computed on the host.
    /// With alpha and beta: alpha A B + beta C0, in f64.
    pub fn cpu(ops: &super::Operands) -> Reference {
        let mut c = super::reference_gemm(ops.m, ops.n, ops.k, &ops.a, &ops.b);
        let (alpha, beta) = (ops.problem.alpha, ops.problem.beta);
        if alpha != 1.0 || beta != 0.0 {
            for (i, v) in c.iter_mut().enumerate() {
                let c0 = if beta != 0.0 {
                    f64::from(ops.c0[i])
                } else {
                    0.0
                };
                *v = alpha * *v + beta * c0;
            }
        }
        Reference::Full {
            c,
            source: CPU_SOURCE.into(),
        }
    }

    /// The sampled f64 reference computed on the host; alpha and beta scale each
    /// sample and its bound (|alpha| sum|a||b| + |beta c0|).
    pub fn sampled(ops: &super::Operands) -> Reference {
        let mut s = super::sampled_reference(ops.m, ops.n, ops.k, &ops.a, &ops.b, ops.seed);
        let (alpha, beta) = (ops.problem.alpha, ops.problem.beta);
        if alpha != 1.0 || beta != 0.0 {
            for ((&(i, j), v), abs) in s.points.iter().zip(&mut s.values).zip(&mut s.abs_sums) {
                let c0 = if beta != 0.0 {
                    f64::from(ops.c0[j * ops.m + i])
                } else {
                    0.0
                };
                *v = alpha * *v + beta * c0;
                *abs = alpha.abs() * *abs + (beta * c0).abs();
            }
        }
        Reference::Sampled(s)
    }

    pub fn method(&self) -> String {
        match self {
            Reference::Full { source, .. } => format!("full: {source}"),
            Reference::Sampled(s) => s.description.clone(),
        }
    }
}

/// Sampled elements of C = A * B: `(row, column)`, the f64 value, sum |a||b|.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    pub k: usize,
    pub points: Vec<(usize, usize)>,
    pub values: Vec<f64>,
    pub abs_sums: Vec<f64>,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub rel_frobenius: f64,
    /// Largest |C - Cref| divided by rms(Cref).
    pub max_err_over_rms: f64,
    pub non_finite: usize,
    pub worst_index: Option<(usize, usize)>,
    pub passed: bool,
    /// Which check ran: "full: f64 CPU reference", "full: cuBLAS DGEMM ...", "sampled: ...".
    #[serde(default)]
    pub method: Option<String>,
    /// Elements compared with a reference value (all of C for a full check).
    #[serde(default)]
    pub compared: Option<usize>,
    /// Sampled check: the largest |C - Cref| over its derived bound (pass: <= 1).
    #[serde(default)]
    pub max_err_over_bound: Option<f64>,
    /// The precision of the result checked (its limits); absent in older files: f32.
    #[serde(default)]
    pub precision: Option<Precision>,
    /// "tf32" where the result was judged by TF32's limits (products of operands
    /// rounded to TF32: 1xTF32, cuBLAS's TF32 mode); absent: the precision's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<String>,
}

/// `CheckReport::method` of a result downloaded but not checked yet (see `Session::take_unchecked`).
pub const DEFERRED: &str = "deferred: checked by the caller while it times the kernel";

impl CheckReport {
    /// A report standing for a check the caller runs itself, later.
    pub fn deferred() -> CheckReport {
        CheckReport {
            rel_frobenius: 0.0,
            max_err_over_rms: 0.0,
            non_finite: 0,
            worst_index: None,
            passed: true,
            method: Some(DEFERRED.into()),
            compared: None,
            max_err_over_bound: None,
            precision: None,
            arithmetic: None,
        }
    }

    /// The same comparison judged by TF32's limits: for results whose products were
    /// formed from TF32 operands, which FP32's limits would call wrong. A full check
    /// passes within `TF32_LIMITS`; a sampled one within its bound scaled from FP32's
    /// unit roundoff to TF32's (the bound is first-order in it). Non-finite values
    /// still fail, and so does any other failure recorded in `method`.
    pub fn judged_as_tf32(mut self) -> CheckReport {
        self.arithmetic = Some("tf32".into());
        if self.is_deferred() || self.non_finite > 0 || self.passed {
            return self;
        }
        self.passed = match self.max_err_over_bound {
            Some(r) => r * (U32 / U_TF32) <= 1.0,
            None => self.rel_frobenius <= TF32_LIMITS.0 && self.max_err_over_rms <= TF32_LIMITS.1,
        };
        self
    }

    pub fn is_deferred(&self) -> bool {
        self.method.as_deref() == Some(DEFERRED)
    }

    pub fn summary(&self) -> String {
        if self.non_finite > 0 {
            return format!(
                "{} non-finite elements (NaN/inf; unwritten or overflowed), first at {:?}",
                self.non_finite, self.worst_index
            );
        }
        match self.max_err_over_bound {
            Some(r) => format!(
                "{} of {} sampled elements: worst error {r:.2} x its rounding-error bound at {:?} (limit 1), relative Frobenius error over the samples {:.2e}",
                self.method.as_deref().unwrap_or("sampled"),
                self.compared.unwrap_or(0),
                self.worst_index,
                self.rel_frobenius
            ),
            None => {
                let (fro, elem) = match self.arithmetic.as_deref() {
                    Some("tf32") => TF32_LIMITS,
                    _ => limits(self.precision.unwrap_or_default()),
                };
                format!(
                    "relative Frobenius error {:.2e} (limit {fro:.0e}), worst element error {:.2e} x rms at {:?} (limit {elem:.0e})",
                    self.rel_frobenius, self.max_err_over_rms, self.worst_index
                )
            }
        }
    }
}

/// Compares a column-major M x N result with whatever reference the problem has.
pub fn check_against<T: Real>(m: usize, c: &[T], reference: &Reference) -> CheckReport {
    let mut r = match reference {
        Reference::Full { c: full, .. } => check(m, c, full),
        Reference::Sampled(s) => check_sampled(m, c, s),
    };
    r.method = Some(reference.method());
    r
}

/// `check_against` for a result computed in `precision` and widened to f64 (an
/// f32 result narrows back exactly), so the precision's limits apply.
pub fn check_widened(
    m: usize,
    c: &[f64],
    reference: &Reference,
    precision: Precision,
) -> CheckReport {
    match precision {
        Precision::F64 => check_against(m, c, reference),
        Precision::F32 => {
            let narrow: Vec<f32> = c.iter().map(|&v| v as f32).collect();
            check_against(m, &narrow, reference)
        }
    }
}

/// Partial sums of one chunk of a full comparison.
#[derive(Clone, Default)]
struct Partial {
    diff2: f64,
    ref2: f64,
    worst: f64,
    worst_at: Option<usize>,
    non_finite: usize,
    first_non_finite: Option<usize>,
}

/// Compares a column-major M x N result with the full reference.
pub fn check<T: Real>(m: usize, c: &[T], reference: &[f64]) -> CheckReport {
    // A few chunks per core, none too small to be worth a thread.
    let len = c.len().min(reference.len());
    let chunk = len.div_ceil(4 * parallel::threads()).max(1 << 16);
    let chunks = len.div_ceil(chunk);
    let parts = parallel::map_range(chunks, |ci| {
        let lo = ci * chunk;
        let hi = (lo + chunk).min(len);
        let mut p = Partial::default();
        for (off, (&got, &want)) in c[lo..hi].iter().zip(&reference[lo..hi]).enumerate() {
            let got = got.wide();
            if !got.is_finite() {
                if p.non_finite == 0 {
                    p.first_non_finite = Some(lo + off);
                }
                p.non_finite += 1;
                continue;
            }
            let d = got - want;
            p.diff2 += d * d;
            p.ref2 += want * want;
            if d.abs() > p.worst {
                p.worst = d.abs();
                p.worst_at = Some(lo + off);
            }
        }
        p
    });
    let t = Partial::sum(parts);
    judge(m, &t, (c.len(), reference.len()), T::PRECISION)
}

impl Partial {
    /// The partials of consecutive chunks added up: the worst of the first chunk
    /// that holds it, the first non-finite element of the whole.
    fn sum(parts: impl IntoIterator<Item = Partial>) -> Partial {
        let mut t = Partial::default();
        for p in parts {
            t.diff2 += p.diff2;
            t.ref2 += p.ref2;
            if p.worst > t.worst {
                t.worst = p.worst;
                t.worst_at = p.worst_at;
            }
            t.first_non_finite = match (t.first_non_finite, p.first_non_finite) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            t.non_finite += p.non_finite;
        }
        t
    }
}

/// Number of f64 values each work-group of the device check writes
/// (kernels-cl/check.cl): sum of squared errors, sum of squared references,
/// largest error, its index, non-finite elements, the first one's index.
pub const DEVICE_PARTIAL: usize = 6;

/// The full check from the device check's partials (`DEVICE_PARTIAL` per work-group)
/// of a column-major result with `m` rows and `len` elements against a reference of
/// `len` elements: the same criteria as `check`.
pub fn check_partials(m: usize, len: usize, partials: &[f64], precision: Precision) -> CheckReport {
    let index = |v: f64| (v >= 0.0).then_some(v as usize);
    let parts = partials.chunks_exact(DEVICE_PARTIAL).map(|p| Partial {
        diff2: p[0],
        ref2: p[1],
        worst: p[2],
        worst_at: index(p[3]),
        non_finite: p[4] as usize,
        first_non_finite: index(p[5]),
    });
    judge(m, &Partial::sum(parts), (len, len), precision)
}

/// The verdict on summed partials of a result of `c_len` elements against a
/// reference of `ref_len`.
fn judge(
    m: usize,
    t: &Partial,
    (c_len, ref_len): (usize, usize),
    precision: Precision,
) -> CheckReport {
    let (max_fro, max_elem) = limits(precision);
    let at = |i: usize| (i % m.max(1), i / m.max(1));
    let rms = (t.ref2 / ref_len.max(1) as f64).sqrt();
    let rel = if t.ref2 > 0.0 {
        (t.diff2 / t.ref2).sqrt()
    } else {
        t.diff2.sqrt()
    };
    let max_rel = if rms > 0.0 { t.worst / rms } else { t.worst };
    let worst_index = if t.non_finite > 0 {
        t.first_non_finite.map(at)
    } else {
        t.worst_at.map(at)
    };
    CheckReport {
        rel_frobenius: rel,
        max_err_over_rms: max_rel,
        non_finite: t.non_finite,
        worst_index,
        passed: c_len == ref_len && t.non_finite == 0 && rel <= max_fro && max_rel <= max_elem,
        method: None,
        compared: Some(c_len.min(ref_len)),
        max_err_over_bound: None,
        precision: Some(precision),
        arithmetic: None,
    }
}

/// Scans all of C for non-finite values (cost M*N) and compares the sampled
/// elements with their bounds (cost: the samples).
pub fn check_sampled<T: Real>(m: usize, c: &[T], s: &Samples) -> CheckReport {
    const CHUNK: usize = 1 << 22;
    let counts = parallel::map_range(c.len().div_ceil(CHUNK), |ci| {
        let lo = ci * CHUNK;
        let hi = (lo + CHUNK).min(c.len());
        let bad = c[lo..hi].iter().filter(|v| !v.wide().is_finite()).count();
        let first = c[lo..hi]
            .iter()
            .position(|v| !v.wide().is_finite())
            .map(|i| lo + i);
        (bad, first)
    });
    let non_finite: usize = counts.iter().map(|(n, _)| n).sum();
    let first_bad = counts.iter().find_map(|(_, f)| *f);
    let bound = sampled_bound_for(s.k, T::PRECISION);
    let (mut diff2, mut ref2, mut worst_ratio, mut worst_abs) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut worst_at = None;
    let mut in_range = true;
    for ((&(i, j), &want), &abs) in s.points.iter().zip(&s.values).zip(&s.abs_sums) {
        let Some(got) = c.get(j * m + i).map(|v| v.wide()) else {
            in_range = false;
            continue;
        };
        if !got.is_finite() {
            continue;
        }
        let d = (got - want).abs();
        diff2 += d * d;
        ref2 += want * want;
        worst_abs = worst_abs.max(d);
        let limit = bound * abs;
        let ratio = if limit > 0.0 {
            d / limit
        } else if d == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        if ratio > worst_ratio || worst_at.is_none() {
            worst_ratio = ratio;
            worst_at = Some((i, j));
        }
    }
    let rms = (ref2 / s.values.len().max(1) as f64).sqrt();
    CheckReport {
        rel_frobenius: if ref2 > 0.0 {
            (diff2 / ref2).sqrt()
        } else {
            diff2.sqrt()
        },
        max_err_over_rms: if rms > 0.0 {
            worst_abs / rms
        } else {
            worst_abs
        },
        non_finite,
        worst_index: if non_finite > 0 {
            first_bad.map(|x| (x % m.max(1), x / m.max(1)))
        } else {
            worst_at
        },
        passed: in_range && non_finite == 0 && worst_ratio <= 1.0,
        method: None,
        compared: Some(s.points.len()),
        max_err_over_bound: Some(worst_ratio),
        precision: Some(T::PRECISION),
        arithmetic: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The device kernel's partials for `c` against `r`, as `groups` work-groups of
    /// `lanes` work-items striding over the elements (check.cl's loop and reduction).
    fn device_partials(c: &[f32], r: &[f64], groups: usize, lanes: usize) -> Vec<f64> {
        let mut out = Vec::new();
        for g in 0..groups {
            let mut p = Partial::default();
            let mut i = g * lanes;
            while i < c.len() {
                for i in i..(i + lanes).min(c.len()) {
                    let got = f64::from(c[i]);
                    if !got.is_finite() {
                        p.first_non_finite = Some(p.first_non_finite.map_or(i, |f| f.min(i)));
                        p.non_finite += 1;
                        continue;
                    }
                    let d = got - r[i];
                    p.diff2 += d * d;
                    p.ref2 += r[i] * r[i];
                    if d.abs() > p.worst {
                        p.worst = d.abs();
                        p.worst_at = Some(i);
                    }
                }
                i += groups * lanes;
            }
            let idx = |v: Option<usize>| v.map_or(-1.0, |v| v as f64);
            out.extend([
                p.diff2,
                p.ref2,
                p.worst,
                idx(p.worst_at),
                p.non_finite as f64,
                idx(p.first_non_finite),
            ]);
        }
        out
    }

    #[test]
    fn device_partials_are_judged_as_the_host_check_judges() {
        let (m, n) = (13, 11);
        let r: Vec<f64> = (0..m * n)
            .map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0)
            .collect();
        let good: Vec<f32> = r.iter().map(|&v| v as f32).collect();
        let mut off = good.clone();
        off[40] += 0.25;
        let mut nan = good.clone();
        nan[100] = f32::NAN;
        nan[30] = f32::INFINITY;
        for (c, passes) in [(&good, true), (&off, false), (&nan, false)] {
            let host = check(m, c, &r);
            let device = check_partials(m, c.len(), &device_partials(c, &r, 3, 4), Precision::F32);
            assert_eq!(host.passed, passes);
            assert_eq!(device.passed, passes);
            assert_eq!(device.worst_index, host.worst_index);
            assert_eq!(device.non_finite, host.non_finite);
            assert!((device.rel_frobenius - host.rel_frobenius).abs() <= 1e-12);
            assert!((device.max_err_over_rms - host.max_err_over_rms).abs() <= 1e-12);
        }
        assert_eq!(
            check_partials(
                m,
                nan.len(),
                &device_partials(&nan, &r, 3, 4),
                Precision::F32
            )
            .worst_index,
            Some((30 % m, 30 / m))
        );
    }

    fn sample() -> (Vec<f32>, Vec<f64>) {
        let r: Vec<f64> = (0..10_000)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0)
            .collect();
        (r.iter().map(|&x| x as f32).collect(), r)
    }

    #[test]
    fn rounding_passes() {
        let (c, r) = sample();
        let rep = check(100, &c, &r);
        assert!(rep.passed, "{rep:?}");
        assert!(rep.rel_frobenius < 1e-7);
    }

    #[test]
    fn nan_fails() {
        let (mut c, r) = sample();
        c[123] = f32::NAN;
        let rep = check(100, &c, &r);
        assert!(!rep.passed);
        assert_eq!(rep.non_finite, 1);
        assert_eq!(rep.worst_index, Some((23, 1)));
    }

    #[test]
    fn one_wrong_element_among_many_fails() {
        let (mut c, r) = sample();
        c[9_999] += 0.01;
        let rep = check(100, &c, &r);
        assert!(
            rep.rel_frobenius < MAX_REL_FROBENIUS,
            "Frobenius alone would miss it"
        );
        assert!(!rep.passed, "{rep:?}");
        assert_eq!(rep.worst_index, Some((99, 99)));
    }

    #[test]
    fn wrong_length_fails() {
        let (c, r) = sample();
        assert!(!check(100, &c[..9_000], &r).passed);
    }

    /// An FP32 GEMM as a kernel computes it: f32 accumulation in order over k.
    fn f32_gemm(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0.0f32; m * n];
        for j in 0..n {
            for i in 0..m {
                let mut acc = 0.0f32;
                for p in 0..k {
                    acc = a[p * m + i].mul_add(b[j * k + p], acc);
                }
                c[j * m + i] = acc;
            }
        }
        c
    }

    /// The sampled check and the full one agree: both pass a right FP32 result and
    /// both fail each kind of wrong one.
    #[test]
    fn sampled_check_agrees_with_the_full_one() {
        let (m, n, k) = (150, 130, 400);
        let ops = crate::gemm::Operands::new(m, n, k, 11);
        let full = Reference::cpu(&ops);
        let sampled = Reference::sampled(&ops);
        let right = f32_gemm(m, n, k, &ops.a, &ops.b);
        let both = |c: &[f32]| {
            (
                check_against(m, c, &full).passed,
                check_against(m, c, &sampled).passed,
            )
        };
        let ok = check_against(m, &right, &sampled);
        assert!(ok.passed, "{}", ok.summary());
        assert!(ok
            .method
            .as_deref()
            .is_some_and(|s| s.starts_with("sampled")));
        assert!(ok.max_err_over_bound.is_some_and(|r| r < 0.1), "{ok:?}");
        assert_eq!(both(&right), (true, true));

        // A wrong element in the last row (where padding bugs land).
        let mut c = right.clone();
        c[77 * m + (m - 1)] += 0.05;
        assert_eq!(both(&c), (false, false));
        // An unwritten tile nowhere near a sampled row or column: the NaN scan sees it.
        let mut c = right.clone();
        for j in 40..48 {
            for i in 30..38 {
                c[j * m + i] = f32::NAN;
            }
        }
        assert_eq!(both(&c), (false, false));
        // An indexing bug: C transposed-ish (two columns swapped).
        let mut c = right.clone();
        for i in 0..m {
            c.swap(i, (n - 1) * m + i);
        }
        assert_eq!(both(&c), (false, false));
        // B read with the wrong stride (a classic border bug): everything is off.
        let shifted = f32_gemm(
            m,
            n,
            k,
            &ops.a,
            &ops.b[1..]
                .iter()
                .chain([0.5f32].iter())
                .copied()
                .collect::<Vec<_>>(),
        );
        assert_eq!(both(&shifted), (false, false));
    }

    #[test]
    fn bounds_are_ordered_and_grow_like_sqrt_k() {
        for k in [1usize, 77, 4096, 65536] {
            assert!(sampled_bound(k) < deterministic_bound(k) * 11.0);
            assert!(sampled_bound(k) > 0.0);
        }
        // lambda sqrt(k) u: 10 * 64 * 2^-24 at k = 4096.
        assert!((sampled_bound(4096) / (640.0 * U32) - 1.0).abs() < 1e-3);
        assert!(sampled_bound(65536) < deterministic_bound(65536));
    }
}
