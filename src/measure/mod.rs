//! The timing method, in one place.
//!
//! Warm-up launches first (module load, JIT and caches stay out of the
//! numbers), then N device-event-timed repetitions; the median is reported
//! with min, max and the interquartile range. Where several runners are
//! compared their repetitions are interleaved (A B A B ...) so clock and
//! thermal drift fall on all alike. "Warm" reuses the inputs back to back;
//! "cold" overwrites a scratch buffer larger than the L2 before each
//! repetition so operands come from device memory.
//!
//! Two adaptations keep the method honest at both ends of the size range:
//! - short kernels: when one launch takes less than `BATCH_BELOW_NS`, each sample
//!   is a batch of back-to-back launches between one pair of events, sized so the
//!   sample lasts about `BATCH_TARGET_NS`, divided by the batch size (`--batch 1`
//!   keeps one launch per sample; cold timing always does, since a flush between
//!   launches is the point of it);
//! - long kernels: warm-up stops after `WARMUP_BUDGET_NS` (at least one launch),
//!   and the repetitions are cut to what fits the point's time budget, never below
//!   `MIN_REPS`, so a 32768^3 product does not spend minutes on 20 repetitions.

pub mod clocks;
pub mod progress;
pub mod split;

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
    /// Launches per sample: each sample is a batch's time divided by this.
    #[serde(default = "one")]
    pub batch: usize,
}

fn one() -> usize {
    1
}

impl Stats {
    pub fn from_samples(samples: &[u64]) -> Option<Stats> {
        let v: Vec<f64> = samples.iter().map(|&s| s as f64).collect();
        Stats::from_sample_ns(&v)
    }

    /// From per-launch times in nanoseconds (batched samples are fractional).
    pub fn from_sample_ns(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Stats {
            reps: v.len(),
            median_ns: quantile(&v, 0.5),
            min_ns: v[0],
            max_ns: v[v.len() - 1],
            q1_ns: quantile(&v, 0.25),
            q3_ns: quantile(&v, 0.75),
            batch: 1,
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

/// Below this one-launch time, samples are batches of launches.
pub const BATCH_BELOW_NS: f64 = 100_000.0;
/// A batched sample lasts about this long: far past the event timer's resolution
/// (0.5 us for CUDA events, about 1 us on NVIDIA OpenCL).
pub const BATCH_TARGET_NS: f64 = 2_000_000.0;
pub const MAX_BATCH: usize = 1000;
/// The last warm-up round launches a runner this many times back to back where one
/// launch took under `PROBE_BELOW_NS`, and sizes its batches from that span: a single
/// launch on an idle device carries the host's work before it (cuBLAS's call set-up),
/// which back-to-back launches hide. On the H200 a lone cuBLAS call beside four
/// JIT-loaded lanes timed 154 us where its calls back to back took 57, and was timed
/// one a sample (results/h200/routine/thin-cap/, call E).
const PROBE: usize = 4;
const PROBE_BELOW_NS: f64 = 4.0 * BATCH_BELOW_NS;
/// `--batch`: `auto` (None) or launches per sample, at least 1.
pub fn parse_batch(s: &str) -> std::result::Result<Option<usize>, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    match s.parse::<usize>() {
        Ok(0) => Err("a batch of 0 launches times nothing: give auto or 1 or more".into()),
        Ok(v) if v > MAX_BATCH => Err(format!(
            "{v} launches per sample is more than the {} gemmlab allows",
            MAX_BATCH
        )),
        Ok(v) => Ok(Some(v)),
        Err(_) => Err(format!("'{s}' is neither auto nor a count of launches")),
    }
}

/// Warm-up stops once it has taken this long (after at least one launch).
pub const WARMUP_BUDGET_NS: f64 = 2e9;
/// Fewest timed repetitions a time budget may leave.
pub const MIN_REPS: usize = 5;

/// How many launches and how.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub warmup: usize,
    /// Timed repetitions asked for (the most that are made).
    pub reps: usize,
    pub cache: CacheState,
    /// Launches per sample: `None` chooses (batches for short kernels), `Some(n)` fixes it.
    #[serde(default)]
    pub batch: Option<usize>,
    /// Seconds of device time the repetitions of one point may take before they are
    /// cut (to no fewer than `MIN_REPS`); `None` never cuts.
    #[serde(default)]
    pub budget_s: Option<f64>,
    /// How results are checked before they are timed.
    #[serde(default)]
    pub check: CheckMode,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            warmup: 3,
            reps: 20,
            cache: CacheState::Warm,
            batch: None,
            budget_s: Some(20.0),
            check: CheckMode::Auto,
        }
    }
}

impl Plan {
    /// The batch size for a kernel whose one launch took `one_ns`.
    pub fn batch_for(&self, one_ns: f64) -> usize {
        if self.cache == CacheState::Cold {
            return 1;
        }
        match self.batch {
            Some(n) => n.max(1),
            None if one_ns < BATCH_BELOW_NS => {
                ((BATCH_TARGET_NS / one_ns.max(1.0)).ceil() as usize).clamp(1, MAX_BATCH)
            }
            None => 1,
        }
    }

    /// The batch size for a whole call (the routine's launches, a library's call)
    /// whose one warm run took `one_ns`: as many as fill a sample of about
    /// `BATCH_TARGET_NS`, whatever one takes. A single call carries one-off
    /// latencies (the first launch on an idle device, a runtime's wait between
    /// dependent launches) that calls back to back do not, so unlike `batch_for`
    /// there is no size above which one call stands alone.
    pub fn batch_to_fill(&self, one_ns: f64) -> usize {
        match (self.cache, self.batch) {
            (CacheState::Cold, _) => 1,
            (_, Some(n)) => n.max(1),
            (_, None) => ((BATCH_TARGET_NS / one_ns.max(1.0)).ceil() as usize).clamp(1, MAX_BATCH),
        }
    }

    /// Repetitions for a round of samples (one per runner) lasting `round_ns`.
    pub fn reps_for(&self, round_ns: f64) -> usize {
        match self.budget_s {
            Some(b) if round_ns > 0.0 => {
                let fit = (b * 1e9 / round_ns).floor() as usize;
                self.reps.min(fit.max(MIN_REPS))
            }
            _ => self.reps,
        }
    }

    /// One line for a run's header: what this plan does.
    pub fn describe(&self) -> String {
        let batch = match (self.cache, self.batch) {
            (CacheState::Cold, _) => "one launch per sample (cold)".to_string(),
            (_, Some(1)) => "one launch per sample".to_string(),
            (_, Some(n)) => format!("{n} launches per sample"),
            (_, None) => format!(
                "launches under {:.0} us batched to ~{:.0} ms samples",
                BATCH_BELOW_NS / 1e3,
                BATCH_TARGET_NS / 1e6
            ),
        };
        let budget = match self.budget_s {
            Some(b) => format!(", repetitions cut to fit {b} s per point (at least {MIN_REPS})"),
            None => String::new(),
        };
        format!(
            "{} warm-up + {} timed samples, {batch}{budget}",
            self.warmup, self.reps
        )
    }
}

/// Something that can be launched and timed: returns device nanoseconds.
/// `flush` is called before each timed repetition when timing cold.
pub trait Timed {
    /// `count` launches back to back between one pair of device events (at least one):
    /// the batch's nanoseconds.
    fn run_batch(&mut self, count: usize) -> Result<u64>;
    fn run_once(&mut self) -> Result<u64> {
        self.run_batch(1)
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Times several runners with interleaved repetitions; one result per runner.
/// A runner that fails is reported as its error; the others go on.
pub fn interleaved(runners: &mut [&mut dyn Timed], plan: &Plan) -> Vec<Result<Stats>> {
    let n = runners.len();
    let mut failed: Vec<Option<crate::Error>> = (0..n).map(|_| None).collect();
    // Each runner's last warm-up (a launch, or the probe's launches per launch):
    // what batch and budget are chosen from.
    let mut one_ns: Vec<f64> = vec![0.0; n];
    let mut warm_spent = 0.0f64;
    for w in 0..plan.warmup {
        if w > 0 && warm_spent > WARMUP_BUDGET_NS {
            break;
        }
        let last = w + 1 == plan.warmup;
        for (i, r) in runners.iter_mut().enumerate() {
            if failed[i].is_none() {
                let probe = match last && w > 0 && one_ns[i] < PROBE_BELOW_NS {
                    true if plan.batch.is_none() && plan.cache == CacheState::Warm => PROBE,
                    _ => 1,
                };
                match r.run_batch(probe) {
                    Ok(ns) => {
                        one_ns[i] = ns as f64 / probe as f64;
                        warm_spent += ns as f64;
                    }
                    Err(e) => failed[i] = Some(e),
                }
            }
        }
    }
    let batch: Vec<usize> = one_ns.iter().map(|&t| plan.batch_for(t)).collect();
    let round_ns: f64 = one_ns.iter().zip(&batch).map(|(t, b)| t * *b as f64).sum();
    let reps = if plan.warmup == 0 {
        plan.reps
    } else {
        plan.reps_for(round_ns)
    };
    let mut samples: Vec<Vec<f64>> = (0..n).map(|_| Vec::with_capacity(reps)).collect();
    for _ in 0..reps {
        for (i, r) in runners.iter_mut().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            let result = match plan.cache {
                CacheState::Cold => r.flush().and_then(|_| r.run_batch(batch[i])),
                CacheState::Warm => r.run_batch(batch[i]),
            };
            match result {
                Ok(ns) => samples[i].push(ns as f64 / batch[i] as f64),
                Err(e) => failed[i] = Some(e),
            }
        }
    }
    failed
        .into_iter()
        .zip(samples)
        .zip(batch)
        .map(|((f, s), b)| match f {
            Some(e) => Err(e),
            None => Stats::from_sample_ns(&s)
                .map(|st| Stats { batch: b, ..st })
                .ok_or_else(|| crate::Error::invalid("no repetitions were asked for (--reps 0)")),
        })
        .collect()
}

/// Which reference `compare` and `sweep` check against (`--check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckMode {
    /// Full CPU reference up to `FULL_CPU_MAX_MNK`; above it cuBLAS DGEMM where a CUDA
    /// session is open, else the sampled check.
    #[default]
    Auto,
    Cpu,
    Dgemm,
    Sampled,
}

impl CheckMode {
    pub fn parse(s: &str) -> Option<CheckMode> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(CheckMode::Auto),
            "cpu" | "full" => Some(CheckMode::Cpu),
            "dgemm" | "device" | "gpu" => Some(CheckMode::Dgemm),
            "sampled" | "sample" => Some(CheckMode::Sampled),
            _ => None,
        }
    }
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
    fn whole_calls_fill_a_sample_at_any_size_kernels_only_below_the_threshold() {
        let plan = Plan::default();
        // A 150 us call is batched to ~2 ms; a 150 us kernel stands alone.
        assert_eq!(plan.batch_to_fill(150_000.0), 14);
        assert_eq!(plan.batch_for(150_000.0), 1);
        assert_eq!(plan.batch_to_fill(5_000_000.0), 1);
        assert_eq!(plan.batch_to_fill(10.0), MAX_BATCH);
        let fixed = Plan {
            batch: Some(1),
            ..Plan::default()
        };
        assert_eq!(fixed.batch_to_fill(20_000.0), 1);
        let cold = Plan {
            cache: CacheState::Cold,
            ..Plan::default()
        };
        assert_eq!(cold.batch_to_fill(20_000.0), 1);
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
        fn run_batch(&mut self, _count: usize) -> Result<u64> {
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
            batch: Some(1),
            budget_s: None,
            ..Plan::default()
        };
        let r = interleaved(&mut [&mut a, &mut b], &plan);
        assert_eq!(&log.borrow()[..4], &['a', 'b', 'a', 'b']);
        let sa = r[0].as_ref().unwrap();
        assert_eq!(sa.reps, 3);
        assert_eq!(sa.median_ns, 3.0, "warm-up sample 1 is not counted");
        assert!(r[1].is_err());
    }

    /// A kernel of fixed duration that counts its launches.
    struct Steady {
        ns: u64,
        batches: Vec<usize>,
    }
    impl Timed for Steady {
        fn run_batch(&mut self, count: usize) -> Result<u64> {
            self.batches.push(count);
            Ok(self.ns * count as u64)
        }
    }

    #[test]
    fn short_kernels_are_timed_in_batches() {
        let mut k = Steady {
            ns: 10_000,
            batches: vec![],
        };
        let plan = Plan::default();
        let s = interleaved(&mut [&mut k], &plan).remove(0).unwrap();
        // 10 us per launch: 200 launches make a 2 ms sample.
        assert_eq!(s.batch, 200);
        assert_eq!(s.median_ns, 10_000.0, "a batch is divided by its size");
        assert_eq!(s.reps, 20);
        assert_eq!(
            &k.batches[..3],
            &[1, 1, PROBE],
            "warm-up launches are single, but for the last round's probe"
        );
        assert!(k.batches[3..].iter().all(|&b| b == 200));
        // --batch 1 keeps one launch per sample, and cold timing always does.
        for plan in [
            Plan {
                batch: Some(1),
                ..Plan::default()
            },
            Plan {
                cache: CacheState::Cold,
                ..Plan::default()
            },
        ] {
            let mut k = Steady {
                ns: 10_000,
                batches: vec![],
            };
            let s = interleaved(&mut [&mut k], &plan).remove(0).unwrap();
            assert_eq!(s.batch, 1);
            assert!(k.batches.iter().all(|&b| b == 1));
        }
        // Long kernels are never batched.
        assert_eq!(Plan::default().batch_for(150_000.0), 1);
        assert_eq!(Plan::default().batch_for(1.0), MAX_BATCH);
    }

    /// A call with host work before its launch: alone on an idle device each
    /// one takes `setup_ns` more; back to back the device never waits for it.
    struct WithSetup {
        setup_ns: u64,
        ns: u64,
    }
    impl Timed for WithSetup {
        fn run_batch(&mut self, count: usize) -> Result<u64> {
            Ok(self.setup_ns + self.ns * count as u64)
        }
    }

    #[test]
    fn a_call_whose_lone_launch_is_slowed_by_host_work_is_still_batched() {
        // cuBLAS at 1024^3 beside four JIT lanes: 57 us a call, 97 us set-up.
        let mut v = WithSetup {
            setup_ns: 97_000,
            ns: 57_000,
        };
        let s = interleaved(&mut [&mut v], &Plan::default())
            .remove(0)
            .unwrap();
        assert!(s.batch > 1, "{s:?}");
        assert!(s.median_ns < 62_000.0, "{s:?}");
        // Long launches are not probed: a batch of one, as before.
        let mut long = Steady {
            ns: 1_000_000,
            batches: vec![],
        };
        let s = interleaved(&mut [&mut long], &Plan::default())
            .remove(0)
            .unwrap();
        assert_eq!(s.batch, 1);
        assert!(long.batches.iter().all(|&b| b == 1));
    }

    #[test]
    fn long_kernels_fit_the_time_budget() {
        // Two runners of 2 s each: a round costs 4 s, 20 s fit 5 rounds.
        let mut a = Steady {
            ns: 2_000_000_000,
            batches: vec![],
        };
        let mut b = Steady {
            ns: 2_000_000_000,
            batches: vec![],
        };
        let plan = Plan::default();
        let r = interleaved(&mut [&mut a, &mut b], &plan);
        assert_eq!(r[0].as_ref().unwrap().reps, 5);
        // Warm-up stopped after its 2 s budget: one launch each.
        assert_eq!(a.batches.len(), 1 + 5);
        // Never below MIN_REPS, never above what was asked.
        assert_eq!(plan.reps_for(1e12), MIN_REPS);
        assert_eq!(plan.reps_for(1.0), 20);
        let unbounded = Plan {
            budget_s: None,
            ..Plan::default()
        };
        assert_eq!(unbounded.reps_for(1e12), 20);
    }
}
