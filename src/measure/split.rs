//! Where a measuring thread's time goes, step by step: a tuner spends most of
//! its wall time on the device thread, and "device-bound" alone does not say
//! whether that is the kernels, loading modules, moving C or checking it.
//!
//! A `Laps` clock is restarted before a configuration is measured; each step
//! ends with `lap(step)`, which adds the time since the previous lap to that
//! step. The sum of a configuration's laps is its device-thread time.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// A step of measuring one configuration, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// A tuner's screen before all the rest: the configuration loaded, run once and
    /// checked on the problem with K cut short (`tune --screen`).
    Screen,
    /// Making the compiled program a loaded one (module load, kernel objects).
    Load,
    /// Buffers for this configuration: padding, transposing, C with its gaps.
    Setup,
    /// Filling C with NaN so that an unwritten element fails the check.
    Poison,
    /// The checked launch (also the first launch: lazy module loading, JIT).
    CheckedRun,
    /// Bringing C (or the part the check reads) to the host.
    Download,
    /// Comparing with the f64 reference.
    Check,
    /// The timed samples.
    Timing,
    /// Freeing this configuration's buffers and program.
    Release,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Screen => "screen",
            Step::Load => "load",
            Step::Setup => "setup",
            Step::Poison => "poison",
            Step::CheckedRun => "checked run",
            Step::Download => "download",
            Step::Check => "check",
            Step::Timing => "timing",
            Step::Release => "release",
        }
    }
}

/// Seconds per step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Split(BTreeMap<Step, f64>);

impl Split {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn add(&mut self, step: Step, seconds: f64) {
        *self.0.entry(step).or_default() += seconds;
    }

    /// Adds every step of `other` to this one.
    pub fn absorb(&mut self, other: &Split) {
        for (&s, &v) in &other.0 {
            self.add(s, v);
        }
    }

    pub fn get(&self, step: Step) -> f64 {
        self.0.get(&step).copied().unwrap_or(0.0)
    }

    pub fn total(&self) -> f64 {
        self.0.values().sum()
    }

    /// The steps that took time, in order.
    pub fn steps(&self) -> impl Iterator<Item = (Step, f64)> + '_ {
        self.0.iter().map(|(&s, &v)| (s, v))
    }

    /// "load 1.2 ms, checked run 3.4 ms, ..." per configuration, over `n` of them.
    pub fn describe_per(&self, n: usize) -> String {
        let n = n.max(1) as f64;
        self.steps()
            .filter(|(_, v)| *v > 0.0)
            .map(|(s, v)| format!("{} {:.1} ms", s.as_str(), v / n * 1e3))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The clock that fills a `Split`.
#[derive(Debug, Clone)]
pub struct Laps {
    last: Instant,
    split: Split,
}

impl Default for Laps {
    fn default() -> Self {
        Laps {
            last: Instant::now(),
            split: Split::default(),
        }
    }
}

impl Laps {
    /// Forgets what was recorded and starts timing the next step now.
    pub fn restart(&mut self) {
        *self = Laps::default();
    }

    /// Ends `step`: the time since the previous lap (or restart) is its.
    pub fn lap(&mut self, step: Step) {
        let now = Instant::now();
        self.split
            .add(step, now.duration_since(self.last).as_secs_f64());
        self.last = now;
    }

    /// Counts everything since the restart as `step`, whatever laps it held.
    pub fn fold(&mut self, step: Step) {
        self.lap(step);
        let total = std::mem::take(&mut self.split).total();
        self.split.add(step, total);
    }

    /// What was recorded since the restart; the clock restarts.
    pub fn take(&mut self) -> Split {
        let split = std::mem::take(&mut self.split);
        self.last = Instant::now();
        split
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laps_add_up_per_step() {
        let mut laps = Laps::default();
        std::thread::sleep(std::time::Duration::from_millis(3));
        laps.lap(Step::Load);
        laps.lap(Step::Check);
        std::thread::sleep(std::time::Duration::from_millis(2));
        laps.lap(Step::Load);
        let s = laps.take();
        assert!(s.get(Step::Load) >= 0.005, "{s:?}");
        assert!(s.get(Step::Check) < s.get(Step::Load));
        assert_eq!(s.get(Step::Timing), 0.0);
        assert!((s.total() - s.get(Step::Load) - s.get(Step::Check)).abs() < 1e-12);
    }

    #[test]
    fn a_fold_moves_every_lap_so_far_into_one_step() {
        let mut laps = Laps::default();
        std::thread::sleep(std::time::Duration::from_millis(2));
        laps.lap(Step::Load);
        std::thread::sleep(std::time::Duration::from_millis(2));
        laps.fold(Step::Screen);
        laps.lap(Step::Timing);
        let s = laps.take();
        assert_eq!(s.get(Step::Load), 0.0);
        assert!(s.get(Step::Screen) >= 0.004, "{s:?}");
        assert!(s.get(Step::Timing) < s.get(Step::Screen));
        assert!(laps.take().is_empty());
    }

    #[test]
    fn splits_absorb_and_describe_per_configuration() {
        let mut a = Split::default();
        a.add(Step::Timing, 0.010);
        let mut b = Split::default();
        b.add(Step::Timing, 0.030);
        b.add(Step::Load, 0.002);
        a.absorb(&b);
        assert_eq!(a.describe_per(2), "load 1.0 ms, timing 20.0 ms");
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, r#"{"load":0.002,"timing":0.04}"#);
        let back: Split = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
    }
}
