//! Clocks and throttling: what NVML read around the timed launches, per run,
//! and every measurement whose GPU was throttled.

use crate::clocks::ClockReading;
use crate::results::Measurement;

use super::{Data, Finding, Topic};

/// The smallest and largest of some readings; `None` without any.
pub type Span<T> = Option<(T, T)>;

fn span<T: PartialOrd + Copy>(values: impl Iterator<Item = T>) -> Span<T> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((if v < lo { v } else { lo }, if v > hi { v } else { hi })),
    })
}

/// One run's readings, both ends of every timed window.
pub struct RunClocks<'a> {
    /// 1-based, as the Environment section numbers runs.
    pub run: usize,
    pub measurements: usize,
    pub sm_mhz: Span<u32>,
    pub mem_mhz: Span<u32>,
    pub temperature_c: Span<u32>,
    pub power_w: Span<f64>,
    pub throttled: usize,
    /// NVML's and the driver's versions, when the run recorded NVML.
    pub nvml: Option<(Option<&'a str>, Option<&'a str>)>,
}

pub struct Clocks<'a> {
    /// Measurements made on a device (offline rows never ran at a clock).
    pub measured: usize,
    pub with_clocks: usize,
    /// Why runs have no readings, as they noted it.
    pub missing_notes: Vec<&'a str>,
    pub runs: Vec<RunClocks<'a>>,
    /// Each throttled measurement with NVML's limiting reasons.
    pub throttled: Vec<(&'a Measurement, Vec<String>)>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// Some measurements ran on a throttled GPU.
    Throttled {
        throttled: usize,
        with_clocks: usize,
        reasons: Vec<String>,
    },
}

fn ends(ms: &[&Measurement]) -> Vec<ClockReading> {
    ms.iter()
        .filter_map(|m| m.clocks.as_ref())
        .flat_map(|c| [c.before.clone(), c.after.clone()])
        .collect()
}

fn is_throttled(m: &Measurement) -> bool {
    m.clocks.as_ref().is_some_and(|c| c.throttled())
}

pub fn analyse(data: &Data) -> Clocks<'_> {
    let measured = data.measured().count();
    let with_clocks = data.measured().filter(|r| r.m.clocks.is_some()).count();
    let missing_notes = data
        .runs
        .iter()
        .flat_map(|r| r.env.notes.iter())
        .filter(|n| n.starts_with("no clock readings"))
        .map(String::as_str)
        .collect();
    let runs = data
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, run)| {
            let ms: Vec<&Measurement> = run
                .measurements
                .iter()
                .filter(|m| m.clocks.is_some())
                .collect();
            if ms.is_empty() {
                return None;
            }
            let r = ends(&ms);
            Some(RunClocks {
                run: i + 1,
                measurements: ms.len(),
                sm_mhz: span(r.iter().filter_map(|r| r.sm_mhz)),
                mem_mhz: span(r.iter().filter_map(|r| r.mem_mhz)),
                temperature_c: span(r.iter().filter_map(|r| r.temperature_c)),
                power_w: span(r.iter().filter_map(|r| r.power_w)),
                throttled: ms.iter().filter(|m| is_throttled(m)).count(),
                nvml: run
                    .env
                    .nvml
                    .as_ref()
                    .map(|n| (n.nvml_version.as_deref(), n.driver_version.as_deref())),
            })
        })
        .collect();
    let throttled: Vec<(&Measurement, Vec<String>)> = data
        .measured()
        .map(|r| r.m)
        .filter(|m| is_throttled(m))
        .map(|m| {
            (
                m,
                m.clocks
                    .as_ref()
                    .map_or(Vec::new(), |c| c.limiting_reasons()),
            )
        })
        .collect();
    let mut findings = Vec::new();
    if !throttled.is_empty() {
        let mut reasons: Vec<String> = Vec::new();
        for r in throttled.iter().flat_map(|(_, why)| why) {
            if !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
        findings.push(
            Finding::new(
                Topic::Clocks,
                super::Kind::Clocks(Kind::Throttled {
                    throttled: throttled.len(),
                    with_clocks,
                    reasons,
                }),
            )
            .weight(throttled.len() as f64 / with_clocks.max(1) as f64),
        );
    }
    Clocks {
        measured,
        with_clocks,
        missing_notes,
        runs,
        throttled,
        findings,
    }
}
