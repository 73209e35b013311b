//! Host data of a user's kernel: inputs generated from the seed and the spec's
//! fill, outputs read back, and the element-wise check against a reference.

use crate::backend::{Backend, Buffer, Elem, HostData, HostDataMut};
use crate::error::Result;
use crate::gemm::check::CheckReport;

use crate::kernel::user::model::{Fill, Tolerance};

/// One buffer's contents on the host, in its element type.
#[derive(Debug, Clone, PartialEq)]
pub enum HostBuf {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
}

/// What an `out` buffer holds before a checked run: a value a kernel that writes
/// the buffer overwrites (a NaN with its own payload for floats, a sentinel for
/// integers).
pub const POISON_INT: i64 = 0x5EEDBAD5;

/// The f32 poison's bits: a quiet NaN whose payload no arithmetic makes (a
/// computed NaN is 0x7FC00000 or 0xFFC00000), so that an element the kernel
/// never wrote and a NaN it wrote are told apart. The f64 poison is this value
/// widened (its payload moves up, and narrows back to the same bits).
pub const POISON_F32_BITS: u32 = 0x7FC0_DEAD;

/// How an output's poison is recognised after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poison {
    /// The buffer was not poisoned (an inout buffer holds its inputs).
    None,
    /// By its exact bits: the device kept the NaN's payload, so a NaN the kernel
    /// wrote is told apart from an element it never wrote.
    Exact,
    /// As any NaN: the device rewrote the payload when it filled the buffer
    /// (NVIDIA's OpenCL fill does), so the two look alike there.
    AnyNan,
}

/// The poison of `elem` in words, for the messages that name it.
pub fn poison_words(elem: Elem, p: Poison) -> String {
    match (elem.is_float(), p) {
        (true, Poison::AnyNan) => {
            "NaN; this device rewrites a NaN's payload when it fills a buffer, so a NaN the kernel wrote would look the same".into()
        }
        (true, _) => format!("NaN with payload 0x{POISON_F32_BITS:08X}"),
        (false, _) => format!("0x{POISON_INT:08X}"),
    }
}

impl HostBuf {
    pub fn len(&self) -> usize {
        match self {
            HostBuf::F32(v) => v.len(),
            HostBuf::F64(v) => v.len(),
            HostBuf::I32(v) => v.len(),
            HostBuf::U32(v) => v.len(),
        }
    }

    /// The element type it holds.
    pub fn elem(&self) -> Elem {
        match self {
            HostBuf::F32(_) => Elem::F32,
            HostBuf::F64(_) => Elem::F64,
            HostBuf::I32(_) => Elem::I32,
            HostBuf::U32(_) => Elem::U32,
        }
    }

    /// One element of `elem` holding `v`.
    pub fn from_value(elem: Elem, v: f64) -> HostBuf {
        match elem {
            Elem::F32 => HostBuf::F32(vec![v as f32]),
            Elem::F64 => HostBuf::F64(vec![v]),
            Elem::I32 => HostBuf::I32(vec![v as i32]),
            Elem::U32 => HostBuf::U32(vec![v as u32]),
        }
    }

    /// Whether element `i` has the same bits as `one`'s first element.
    pub fn same_at(&self, i: usize, one: &HostBuf) -> bool {
        match (self, one) {
            (HostBuf::F32(a), HostBuf::F32(b)) => a[i].to_bits() == b[0].to_bits(),
            (HostBuf::F64(a), HostBuf::F64(b)) => a[i].to_bits() == b[0].to_bits(),
            (HostBuf::I32(a), HostBuf::I32(b)) => a[i] == b[0],
            (HostBuf::U32(a), HostBuf::U32(b)) => a[i] == b[0],
            _ => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn zeros(elem: Elem, n: usize) -> HostBuf {
        match elem {
            Elem::F32 => HostBuf::F32(vec![0.0; n]),
            Elem::F64 => HostBuf::F64(vec![0.0; n]),
            Elem::I32 => HostBuf::I32(vec![0; n]),
            Elem::U32 => HostBuf::U32(vec![0; n]),
        }
    }

    /// `n` elements as the spec's fill says; random fills from `seed` (the same
    /// seed and name give the same data on every toolchain and in every run).
    pub fn generate(elem: Elem, n: usize, fill: Fill, seed: u64) -> HostBuf {
        let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            // splitmix64
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let value = |i: usize, u: u64| -> f64 {
            match fill {
                Fill::Random { lo, hi } => {
                    if elem.is_float() {
                        // 24 random bits: exact in f32, so every toolchain sees the same inputs.
                        lo + (hi - lo) * ((u >> 40) as f64 / (1u64 << 24) as f64)
                    } else {
                        let lo = if elem == Elem::U32 { lo.max(0.0) } else { lo };
                        let (a, b) = (lo.ceil() as i64, hi.floor() as i64);
                        let span = (b - a + 1).max(1) as u64;
                        (a + (u % span) as i64) as f64
                    }
                }
                Fill::Constant(c) => c,
                Fill::Ramp { start, step } => start + step * i as f64,
            }
        };
        match elem {
            Elem::F32 => HostBuf::F32((0..n).map(|i| value(i, next()) as f32).collect()),
            Elem::F64 => HostBuf::F64((0..n).map(|i| value(i, next())).collect()),
            Elem::I32 => HostBuf::I32((0..n).map(|i| value(i, next()) as i32).collect()),
            Elem::U32 => HostBuf::U32((0..n).map(|i| value(i, next()).max(0.0) as u32).collect()),
        }
    }

    pub fn upload(&self, be: &mut impl Backend, b: &Buffer) -> Result<()> {
        match self {
            HostBuf::F32(v) => be.upload(b, HostData::F32(v)),
            HostBuf::F64(v) => be.upload(b, HostData::F64(v)),
            HostBuf::I32(v) => be.upload(b, HostData::I32(v)),
            HostBuf::U32(v) => be.upload(b, HostData::U32(v)),
        }
    }

    pub fn download(be: &mut impl Backend, b: &Buffer) -> Result<HostBuf> {
        let mut h = HostBuf::zeros(b.elem, b.len);
        match &mut h {
            HostBuf::F32(v) => be.download(b, HostDataMut::F32(v))?,
            HostBuf::F64(v) => be.download(b, HostDataMut::F64(v))?,
            HostBuf::I32(v) => be.download(b, HostDataMut::I32(v))?,
            HostBuf::U32(v) => be.download(b, HostDataMut::U32(v))?,
        }
        Ok(h)
    }

    fn get(&self, i: usize) -> f64 {
        match self {
            HostBuf::F32(v) => v[i] as f64,
            HostBuf::F64(v) => v[i],
            HostBuf::I32(v) => v[i] as f64,
            HostBuf::U32(v) => v[i] as f64,
        }
    }

    /// Element `i` still holds the poison `fill` put there.
    fn poisoned(&self, i: usize, p: Poison) -> bool {
        match (self, p) {
            (_, Poison::None) => false,
            (HostBuf::F32(v), Poison::Exact) => v[i].to_bits() == POISON_F32_BITS,
            (HostBuf::F64(v), Poison::Exact) => v[i].to_bits() == poison_value(Elem::F64).to_bits(),
            (HostBuf::F32(v), Poison::AnyNan) => v[i].is_nan(),
            (HostBuf::F64(v), Poison::AnyNan) => v[i].is_nan(),
            (HostBuf::I32(v), _) => v[i] as i64 == POISON_INT,
            (HostBuf::U32(v), _) => v[i] as i64 == POISON_INT,
        }
    }

    /// Units in the last place between two elements of the same float type.
    fn ulps(&self, other: &HostBuf, i: usize) -> Option<u64> {
        let key32 = |x: f32| {
            let b = x.to_bits() as i64;
            if b < 0x8000_0000 {
                b
            } else {
                0x8000_0000 - b
            }
        };
        let key64 = |x: f64| {
            let b = x.to_bits() as i128;
            if b < (1i128 << 63) {
                b
            } else {
                (1i128 << 63) - b
            }
        };
        match (self, other) {
            (HostBuf::F32(a), HostBuf::F32(b)) => Some(key32(a[i]).abs_diff(key32(b[i]))),
            (HostBuf::F64(a), HostBuf::F64(b)) => {
                Some(u64::try_from(key64(a[i]).abs_diff(key64(b[i]))).unwrap_or(u64::MAX))
            }
            _ => None,
        }
    }
}

/// The value `fill` on the device uses to poison a buffer of `elem`.
pub fn poison_value(elem: Elem) -> f64 {
    if elem.is_float() {
        // Widened by hand: the payload sits in the top mantissa bits (a conversion
        // may give the canonical NaN).
        let mantissa = u64::from(POISON_F32_BITS & 0x007F_FFFF) << 29;
        f64::from_bits(0x7FF0_0000_0000_0000 | mantissa)
    } else {
        POISON_INT as f64
    }
}

/// What one range of a comparison found; ranges merge in order.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    diff2: f64,
    ref2: f64,
    worst: f64,
    worst_index: Option<usize>,
    failures: usize,
    first_fail: Option<usize>,
    unwritten: usize,
    unwritten_by_both: usize,
    non_finite: usize,
    /// NaN or infinity written where the reference has a finite value.
    non_finite_written: usize,
    first_non_finite: Option<usize>,
}

impl Tally {
    fn merge(self, o: Tally) -> Tally {
        let (worst, worst_index) = if o.worst > self.worst {
            (o.worst, o.worst_index)
        } else {
            (self.worst, self.worst_index)
        };
        Tally {
            diff2: self.diff2 + o.diff2,
            ref2: self.ref2 + o.ref2,
            worst,
            worst_index,
            failures: self.failures + o.failures,
            first_fail: self.first_fail.or(o.first_fail),
            unwritten: self.unwritten + o.unwritten,
            unwritten_by_both: self.unwritten_by_both + o.unwritten_by_both,
            non_finite: self.non_finite + o.non_finite,
            non_finite_written: self.non_finite_written + o.non_finite_written,
            first_non_finite: self.first_non_finite.or(o.first_non_finite),
        }
    }
}

fn tally(
    got: &HostBuf,
    want: &HostBuf,
    tol: Tolerance,
    poison: Poison,
    range: std::ops::Range<usize>,
) -> Tally {
    let mut t = Tally::default();
    for i in range {
        let (g, w) = (got.get(i), want.get(i));
        if got.poisoned(i, poison) {
            t.unwritten += 1;
            if want.poisoned(i, poison) {
                t.unwritten_by_both += 1;
            }
            t.first_fail.get_or_insert(i);
            continue;
        }
        if !g.is_finite() && g.to_bits() != w.to_bits() {
            t.non_finite += 1;
            if w.is_finite() {
                t.non_finite_written += 1;
                t.first_non_finite.get_or_insert(i);
            }
        }
        let d = (g - w).abs();
        let ok = match tol {
            Tolerance::Exact => g == w || (g.is_nan() && w.is_nan()),
            Tolerance::Within { abs, rel, ulp } => {
                d <= abs + rel * w.abs()
                    || ulp.is_some_and(|u| got.ulps(want, i).is_some_and(|x| x <= u))
                    || (g.is_nan() && w.is_nan())
            }
        };
        if d.is_finite() {
            t.diff2 += d * d;
            if d > t.worst {
                t.worst = d;
                t.worst_index = Some(i);
            }
        }
        t.ref2 += w * w;
        if !ok {
            t.failures += 1;
            t.first_fail.get_or_insert(i);
        }
    }
    t
}

/// Compares one output buffer with its reference. The report's `worst_index` is
/// (element, 0); its `method` says the reference and the tolerance.
pub fn compare(
    name: &str,
    got: &HostBuf,
    want: &HostBuf,
    tol: Tolerance,
    poison: Poison,
    method: &str,
) -> (CheckReport, Option<String>) {
    let n = got.len().min(want.len());
    let mut report = CheckReport {
        rel_frobenius: 0.0,
        max_err_over_rms: 0.0,
        non_finite: 0,
        worst_index: None,
        passed: true,
        method: Some(format!("{method}; {}", tol.describe())),
        compared: Some(n),
        max_err_over_bound: None,
        precision: None,
        arithmetic: None,
    };
    if got.len() != want.len() {
        report.passed = false;
        return (
            report,
            Some(format!(
                "buffer {name}: {} elements, the reference has {}",
                got.len(),
                want.len()
            )),
        );
    }
    // Split over the host's cores: a tuner checks every configuration of outputs
    // of 10^8 elements.
    let threads = if n >= 1 << 20 {
        std::thread::available_parallelism().map_or(1, |t| t.get())
    } else {
        1
    };
    let chunk = n.div_ceil(threads.max(1)).max(1);
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|start| {
                let end = (start + chunk).min(n);
                scope.spawn(move || tally(got, want, tol, poison, start..end))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let t = tallies.into_iter().fold(Tally::default(), Tally::merge);
    let Tally {
        diff2,
        ref2,
        worst,
        worst_index,
        failures,
        first_fail,
        unwritten,
        unwritten_by_both,
        non_finite,
        non_finite_written,
        first_non_finite,
    } = t;
    report.non_finite = non_finite;
    report.worst_index = worst_index.map(|i| (i, 0));
    report.rel_frobenius = if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else {
        diff2.sqrt()
    };
    let rms = (ref2 / n.max(1) as f64).sqrt();
    report.max_err_over_rms = if rms > 0.0 { worst / rms } else { worst };
    let why = if unwritten > 0 {
        let i = first_fail.unwrap_or(0);
        let also = if unwritten_by_both == unwritten {
            " (nor did the reference)"
        } else {
            ""
        };
        Some(format!(
            "buffer {name}: {unwritten} of {n} elements still hold the poison written before the run ({}; first at {i}): the kernel never wrote them{also}",
            poison_words(got.elem(), poison)
        ))
    } else if non_finite_written > 0 {
        let i = first_non_finite.unwrap_or(0);
        Some(format!(
            "buffer {name}: the kernel wrote NaN or infinity at {non_finite_written} of {n} elements where the reference is finite; first at {i}: got {}, reference {}",
            got.get(i),
            want.get(i)
        ))
    } else if failures > 0 {
        let i = first_fail.unwrap_or(0);
        Some(format!(
            "buffer {name}: {failures} of {n} elements outside the tolerance ({}); first at {i}: got {}, reference {}",
            tol.describe(),
            got.get(i),
            want.get(i)
        ))
    } else {
        None
    };
    if why.is_some() {
        report.passed = false;
        report.worst_index = first_fail.map(|i| (i, 0)).or(report.worst_index);
    }
    (report, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_inputs_are_seeded_and_in_range() {
        let a = HostBuf::generate(Elem::F32, 1000, Fill::Random { lo: -1.0, hi: 1.0 }, 7);
        let b = HostBuf::generate(Elem::F32, 1000, Fill::Random { lo: -1.0, hi: 1.0 }, 7);
        assert_eq!(a, b);
        let HostBuf::F32(v) = &a else { panic!() };
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(
            v.iter().filter(|x| **x == 0.0).count() < 5,
            "random, never zeros"
        );
        let r = HostBuf::generate(
            Elem::I32,
            4,
            Fill::Ramp {
                start: 3.0,
                step: 2.0,
            },
            0,
        );
        assert_eq!(r, HostBuf::I32(vec![3, 5, 7, 9]));
        let HostBuf::U32(u) =
            HostBuf::generate(Elem::U32, 500, Fill::Random { lo: 0.0, hi: 9.0 }, 1)
        else {
            panic!()
        };
        assert!(u.iter().all(|x| *x <= 9) && u.contains(&9));
    }

    #[test]
    fn compare_tells_unwritten_wrong_and_close() {
        let want = HostBuf::F32(vec![1.0, 2.0, 3.0]);
        let tol = Tolerance::Within {
            abs: 0.0,
            rel: 1e-6,
            ulp: None,
        };
        let (r, why) = compare(
            "y",
            &HostBuf::F32(vec![1.0, 2.0, 3.0]),
            &want,
            tol,
            Poison::Exact,
            "m",
        );
        assert!(r.passed && why.is_none());
        let poison = f32::from_bits(POISON_F32_BITS);
        let (r, why) = compare(
            "y",
            &HostBuf::F32(vec![1.0, poison, 3.0]),
            &want,
            tol,
            Poison::Exact,
            "m",
        );
        let why = why.unwrap();
        assert!(
            !r.passed && why.contains("never wrote") && why.contains("0x7FC0DEAD"),
            "{why}"
        );
        // A NaN the kernel computed is not the poison: it is said as what it is.
        let (r, why) = compare(
            "y",
            &HostBuf::F32(vec![1.0, f32::NAN, 3.0]),
            &want,
            tol,
            Poison::Exact,
            "m",
        );
        let why = why.unwrap();
        assert!(
            !r.passed && why.contains("wrote NaN or infinity at 1 of 3"),
            "{why}"
        );
        // Where the device rewrote the payload, any NaN counts as unwritten.
        let (_, why) = compare(
            "y",
            &HostBuf::F32(vec![1.0, f32::NAN, 3.0]),
            &want,
            tol,
            Poison::AnyNan,
            "m",
        );
        assert!(why.unwrap().contains("never wrote"));
        // The f64 poison narrows back to the f32 poison's bits.
        assert_eq!(
            crate::backend::fill_f32(poison_value(Elem::F64)).to_bits(),
            POISON_F32_BITS
        );
        let (r, why) = compare(
            "y",
            &HostBuf::F32(vec![1.0, 2.5, 3.0]),
            &want,
            tol,
            Poison::Exact,
            "m",
        );
        assert!(!r.passed && why.unwrap().contains("1 of 3"));
        let one_ulp = f32::from_bits(2.0f32.to_bits() + 1);
        let (r, _) = compare(
            "y",
            &HostBuf::F32(vec![1.0, one_ulp, 3.0]),
            &want,
            Tolerance::Within {
                abs: 0.0,
                rel: 0.0,
                ulp: Some(1),
            },
            Poison::Exact,
            "m",
        );
        assert!(r.passed);
        let (r, _) = compare(
            "c",
            &HostBuf::I32(vec![4]),
            &HostBuf::I32(vec![5]),
            Tolerance::Exact,
            Poison::None,
            "m",
        );
        assert!(!r.passed);
    }
}
