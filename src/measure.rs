//! The timing method, in one place.
//!
//! Warm-up launches first (module load, JIT and caches stay out of the
//! numbers), then N device-event-timed repetitions; the median is reported
//! with min, max and the interquartile range. Where several runners are
//! compared their repetitions are interleaved (A B A B ...) so clock and
//! thermal drift fall on all alike. "Warm" reuses the inputs back to back;
//! "cold" overwrites a scratch buffer larger than the L2 before each
//! repetition so operands come from device memory.

use serde::{Deserialize, Serialize};

use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CacheState {
    #[default]
    Warm,
    Cold,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub reps: usize,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub q1_ns: f64,
    pub q3_ns: f64,
}

impl Stats {
    pub fn from_samples(samples: &[u64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = samples.iter().map(|&s| s as f64).collect();
        v.sort_by(f64::total_cmp);
        Some(Stats {
            reps: v.len(),
            median_ns: quantile(&v, 0.5),
            min_ns: v[0],
            max_ns: v[v.len() - 1],
            q1_ns: quantile(&v, 0.25),
            q3_ns: quantile(&v, 0.75),
        })
    }

    /// Interquartile range relative to the median, in percent.
    pub fn spread_pct(&self) -> f64 {
        if self.median_ns > 0.0 {
            100.0 * (self.q3_ns - self.q1_ns) / self.median_ns
        } else {
            0.0
        }
    }
}

/// Linear interpolation between order statistics of sorted data.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// GFLOP/s of a GEMM: 2*M*N*K / time.
pub fn gflops(m: usize, n: usize, k: usize, ns: f64) -> f64 {
    if ns <= 0.0 {
        return 0.0;
    }
    2.0 * m as f64 * n as f64 * k as f64 / ns
}

/// How many launches and how.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub warmup: usize,
    pub reps: usize,
    pub cache: CacheState,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            warmup: 3,
            reps: 20,
            cache: CacheState::Warm,
        }
    }
}

/// Something that can be launched once and timed: returns device nanoseconds.
/// `flush` is called before each timed repetition when timing cold.
pub trait Timed {
    fn run_once(&mut self) -> Result<u64>;
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Times several runners with interleaved repetitions; one result per runner.
/// A runner that fails is reported as its error; the others go on.
pub fn interleaved(runners: &mut [&mut dyn Timed], plan: &Plan) -> Vec<Result<Stats>> {
    let mut failed: Vec<Option<crate::Error>> = runners.iter().map(|_| None).collect();
    let mut samples: Vec<Vec<u64>> = runners
        .iter()
        .map(|_| Vec::with_capacity(plan.reps))
        .collect();
    for _ in 0..plan.warmup {
        for (i, r) in runners.iter_mut().enumerate() {
            if failed[i].is_none() {
                if let Err(e) = r.run_once() {
                    failed[i] = Some(e);
                }
            }
        }
    }
    for _ in 0..plan.reps {
        for (i, r) in runners.iter_mut().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            let result = match plan.cache {
                CacheState::Cold => r.flush().and_then(|_| r.run_once()),
                CacheState::Warm => r.run_once(),
            };
            match result {
                Ok(ns) => samples[i].push(ns),
                Err(e) => failed[i] = Some(e),
            }
        }
    }
    failed
        .into_iter()
        .zip(samples)
        .map(|(f, s)| match f {
            Some(e) => Err(e),
            None => Stats::from_samples(&s)
                .ok_or_else(|| crate::Error::invalid("no repetitions were asked for (--reps 0)")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_quartiles() {
        let s = Stats::from_samples(&[5, 1, 3, 2, 4]).unwrap();
        assert_eq!(s.median_ns, 3.0);
        assert_eq!(s.min_ns, 1.0);
        assert_eq!(s.max_ns, 5.0);
        assert_eq!(s.q1_ns, 2.0);
        assert_eq!(s.q3_ns, 4.0);
        assert!((s.spread_pct() - 66.666).abs() < 0.01);
        let even = Stats::from_samples(&[1, 2, 3, 4]).unwrap();
        assert_eq!(even.median_ns, 2.5);
        assert!(Stats::from_samples(&[]).is_none());
    }

    #[test]
    fn gflops_is_2mnk_over_time() {
        // 2 * 1024^3 flops in 1 ms = 2147.48 GFLOP/s
        assert!((gflops(1024, 1024, 1024, 1e6) - 2147.483648).abs() < 1e-6);
    }

    struct Fake {
        next: u64,
        calls: Vec<u64>,
        log: std::rc::Rc<std::cell::RefCell<Vec<char>>>,
        name: char,
        fail_at: Option<usize>,
    }
    impl Timed for Fake {
        fn run_once(&mut self) -> Result<u64> {
            self.log.borrow_mut().push(self.name);
            if self.fail_at == Some(self.calls.len()) {
                return Err(crate::Error::invalid("boom"));
            }
            self.next += 1;
            self.calls.push(self.next);
            Ok(self.next)
        }
    }

    #[test]
    fn interleaves_and_isolates_failures() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut a = Fake {
            next: 0,
            calls: vec![],
            log: log.clone(),
            name: 'a',
            fail_at: None,
        };
        let mut b = Fake {
            next: 100,
            calls: vec![],
            log: log.clone(),
            name: 'b',
            fail_at: Some(2),
        };
        let plan = Plan {
            warmup: 1,
            reps: 3,
            cache: CacheState::Warm,
        };
        let r = interleaved(&mut [&mut a, &mut b], &plan);
        assert_eq!(&log.borrow()[..4], &['a', 'b', 'a', 'b']);
        let sa = r[0].as_ref().unwrap();
        assert_eq!(sa.reps, 3);
        assert_eq!(sa.median_ns, 3.0, "warm-up sample 1 is not counted");
        assert!(r[1].is_err());
    }
}
