//! Clocks and throttling: NVML's readings around the timed launches, per run, and
//! every measurement whose GPU was throttled.

use crate::results::Measurement;

use super::{stats, Data, Finding, Topic};

/// The smallest and largest of some readings; `None` without any.
pub type Span<T> = Option<(T, T)>;

fn span<T: PartialOrd + Copy>(values: impl Iterator<Item = T>) -> Span<T> {
    values.fold(None, |acc, v| {
        let (lo, hi) = acc.unwrap_or((v, v));
        Some((if v < lo { v } else { lo }, if v > hi { v } else { hi }))
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

pub fn analyse(data: &Data) -> Clocks<'_> {
    let with_clocks = data.measured().filter(|r| r.m.clocks.is_some()).count();
    let runs = (data.runs.iter().enumerate())
        .filter_map(|(i, run)| {
            let windows: Vec<_> = run.measurements.iter().flat_map(|m| &m.clocks).collect();
            let r: Vec<_> = windows.iter().flat_map(|c| [&c.before, &c.after]).collect();
            let nvml = run.env.nvml.as_ref();
            (!windows.is_empty()).then(|| RunClocks {
                run: i + 1,
                measurements: windows.len(),
                sm_mhz: span(r.iter().filter_map(|r| r.sm_mhz)),
                mem_mhz: span(r.iter().filter_map(|r| r.mem_mhz)),
                temperature_c: span(r.iter().filter_map(|r| r.temperature_c)),
                power_w: span(r.iter().filter_map(|r| r.power_w)),
                throttled: windows.iter().filter(|c| c.throttled()).count(),
                nvml: nvml.map(|n| (n.nvml_version.as_deref(), n.driver_version.as_deref())),
            })
        })
        .collect();
    let throttled: Vec<(&Measurement, Vec<String>)> = (data.measured().map(|r| r.m))
        .filter_map(|m| Some((m, m.clocks.as_ref().filter(|c| c.throttled())?)))
        .map(|(m, c)| (m, c.limiting_reasons()))
        .collect();
    let kind = Kind::Throttled {
        throttled: throttled.len(),
        with_clocks,
        reasons: stats::distinct(throttled.iter().flat_map(|(_, why)| why.iter().cloned())),
    };
    let f = Finding::new(Topic::Clocks, super::Kind::Clocks(kind))
        .weight(throttled.len() as f64 / with_clocks.max(1) as f64);
    Clocks {
        measured: data.measured().count(),
        with_clocks,
        missing_notes: (data.runs.iter().flat_map(|r| r.env.notes.iter()))
            .filter(|n| n.starts_with("no clock readings"))
            .map(String::as_str)
            .collect(),
        runs,
        findings: (!throttled.is_empty()).then_some(f).into_iter().collect(),
        throttled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Run;
    use crate::measure::clocks::test_window;

    /// Five measurements of the committed compare fixture, with `clocks` set.
    fn data(
        clocks: impl Fn(usize) -> Option<crate::measure::clocks::ClockWindow>,
        note: &str,
    ) -> Data {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/compare");
        let (mut env, measurements) = crate::results::load_dir(&dir).unwrap();
        env.notes.push(note.into());
        let mut measurements: Vec<Measurement> = measurements.into_iter().take(5).collect();
        for (i, m) in measurements.iter_mut().enumerate() {
            m.clocks = clocks(i);
        }
        let run = Run {
            dir,
            env,
            measurements,
        };
        let (runs, accuracy) = (vec![run], Vec::new());
        Data { runs, accuracy }
    }

    #[test]
    fn without_readings_the_notes_say_why_and_nothing_is_found() {
        let note = "no clock readings for NVIDIA H200: NVML not available (test)";
        let d = data(|_| None, note);
        let a = analyse(&d);
        assert_eq!((a.measured, a.with_clocks), (5, 0));
        assert_eq!(a.missing_notes, [note]);
        assert!(a.runs.is_empty() && a.findings.is_empty());
    }

    #[test]
    fn unthrottled_readings_are_spans_per_run() {
        let d = data(|_| Some(test_window(false)), "-");
        let a = analyse(&d);
        let r = &a.runs[0];
        assert_eq!((r.run, r.measurements, r.throttled), (1, 5, 0));
        assert_eq!(
            (r.sm_mhz, r.mem_mhz, r.temperature_c),
            (Some((1980, 1980)), Some((3201, 3201)), Some((45, 45)))
        );
        assert_eq!(r.power_w, Some((400.0, 400.0)));
        assert!(a.throttled.is_empty() && a.findings.is_empty());
    }

    #[test]
    fn a_throttled_measurement_is_listed_and_found() {
        let d = data(|i| (i != 4).then(|| test_window(i == 2)), "-");
        let a = analyse(&d);
        assert_eq!(a.with_clocks, 4);
        assert_eq!(a.runs[0].sm_mhz, Some((1755, 1980)));
        assert_eq!(a.throttled.len(), 1);
        assert_eq!(a.throttled[0].1, ["sw_power_cap"]);
        let f = &a.findings[0];
        assert_eq!(f.weight, 0.25);
        let json =
            r#"{"kind":"throttled","throttled":1,"with_clocks":4,"reasons":["sw_power_cap"]}"#;
        assert_eq!(serde_json::to_string(&f.kind).unwrap(), json);
    }
}
