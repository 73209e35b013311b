//! Checking a result against the reference.
//!
//! Two criteria, both must hold:
//! - relative Frobenius error ||C - Cref||_F / ||Cref||_F <= 1e-4. FP32 GEMM with
//!   random inputs in [-1, 1) lands near sqrt(K) * 2^-24 (about 5e-6 at K = 8192);
//!   an indexing or synchronisation bug lands near 1e-1.
//! - every element within 1e-3 * rms(Cref) of the reference, so that a single wrong
//!   element in a large matrix, which the Frobenius norm would average away, still fails.
//!
//! Any NaN or infinity fails: outputs are poisoned with NaN before checked runs,
//! so an element the kernel never wrote shows up here.

use serde::{Deserialize, Serialize};

pub const MAX_REL_FROBENIUS: f64 = 1e-4;
pub const MAX_ELEMENT_ERR_RMS: f64 = 1e-3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub rel_frobenius: f64,
    /// Largest |C - Cref| divided by rms(Cref).
    pub max_err_over_rms: f64,
    pub non_finite: usize,
    pub worst_index: Option<(usize, usize)>,
    pub passed: bool,
}

impl CheckReport {
    pub fn summary(&self) -> String {
        if self.non_finite > 0 {
            format!(
                "{} non-finite elements (NaN/inf; unwritten or overflowed), first at {:?}",
                self.non_finite, self.worst_index
            )
        } else {
            format!(
                "relative Frobenius error {:.2e} (limit {MAX_REL_FROBENIUS:.0e}), worst element error {:.2e} x rms at {:?} (limit {MAX_ELEMENT_ERR_RMS:.0e})",
                self.rel_frobenius, self.max_err_over_rms, self.worst_index
            )
        }
    }
}

/// Compares a column-major M x N result with the reference.
pub fn check(m: usize, c: &[f32], reference: &[f64]) -> CheckReport {
    let mut diff2 = 0.0f64;
    let mut ref2 = 0.0f64;
    let mut worst = 0.0f64;
    let mut worst_index = None;
    let mut non_finite = 0usize;
    for (i, (&got, &want)) in c.iter().zip(reference).enumerate() {
        let at = (i % m.max(1), i / m.max(1));
        if !got.is_finite() {
            if non_finite == 0 {
                worst_index = Some(at);
            }
            non_finite += 1;
            continue;
        }
        let d = f64::from(got) - want;
        diff2 += d * d;
        ref2 += want * want;
        if non_finite == 0 && d.abs() > worst {
            worst = d.abs();
            worst_index = Some(at);
        }
    }
    let len_ok = c.len() == reference.len();
    let rms = (ref2 / reference.len().max(1) as f64).sqrt();
    let rel = if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else {
        diff2.sqrt()
    };
    let max_rel = if rms > 0.0 { worst / rms } else { worst };
    CheckReport {
        rel_frobenius: rel,
        max_err_over_rms: max_rel,
        non_finite,
        worst_index,
        passed: len_ok
            && non_finite == 0
            && rel <= MAX_REL_FROBENIUS
            && max_rel <= MAX_ELEMENT_ERR_RMS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
