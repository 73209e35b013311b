//! "Clocks and throttling": what NVML read around the timed launches, per run,
//! and every measurement whose GPU was throttled (their speeds carry a T in
//! the tables above).

use std::fmt::Write as _;

use crate::clocks::ClockReading;
use crate::results::Measurement;

use super::data::{self, Data, Rec};
use super::{md, Section};

/// "1755-1980", or the one value, or "unknown".
fn range<T: PartialOrd + Copy + std::fmt::Display>(values: impl Iterator<Item = T>) -> String {
    let mut lo: Option<T> = None;
    let mut hi: Option<T> = None;
    for v in values {
        if lo.is_none_or(|l| v < l) {
            lo = Some(v);
        }
        if hi.is_none_or(|h| v > h) {
            hi = Some(v);
        }
    }
    match (lo, hi) {
        (Some(l), Some(h)) if l.to_string() == h.to_string() => l.to_string(),
        (Some(l), Some(h)) => format!("{l}-{h}"),
        _ => "unknown".into(),
    }
}

/// Both ends of every window of `ms`.
fn readings<'a>(ms: &'a [&'a Measurement]) -> impl Iterator<Item = &'a ClockReading> + 'a {
    ms.iter()
        .filter_map(|m| m.clocks.as_ref())
        .flat_map(|c| [&c.before, &c.after])
}

/// "before -> after" of one field, "unknown" for an end NVML did not give.
fn ends<T: std::fmt::Display>(m: &Measurement, f: impl Fn(&ClockReading) -> Option<T>) -> String {
    let one = |r: &ClockReading| f(r).map_or("unknown".into(), |v| v.to_string());
    m.clocks.as_ref().map_or("-".into(), |c| {
        format!("{} -> {}", one(&c.before), one(&c.after))
    })
}

pub(crate) fn section(data: &Data) -> Section {
    let mut sec = Section::default();
    // Only rows made on a device can have run at a clock; offline rows never did.
    let all: Vec<Rec> = data.measured().collect();
    if all.is_empty() {
        return sec;
    }
    let with: Vec<&Measurement> = all
        .iter()
        .map(|r| r.m)
        .filter(|m| m.clocks.is_some())
        .collect();
    let mut s = String::from("## Clocks and throttling\n\n");
    if with.is_empty() {
        let _ = writeln!(
            s,
            "No clock data was recorded: none of these measurements holds NVML readings (NVML was \
             not available where they ran, the device is not an NVIDIA GPU, or gemmlab did not \
             record clocks yet). Whether any was throttled is unknown.\n"
        );
        let notes: Vec<&String> = data
            .runs
            .iter()
            .flat_map(|r| r.env.notes.iter())
            .filter(|n| n.starts_with("no clock readings"))
            .collect();
        for n in notes {
            let _ = writeln!(s, "- {}", md::escape(n));
        }
        sec.markdown = s;
        return sec;
    }
    let _ = writeln!(
        s,
        "NVML read the SM and memory clocks, the temperature, the power draw and the throttle \
         reasons just before the warm-up and just after the timed launches of {} of {} \
         measurements. A measurement counts as **throttled** when NVML gave a performance-limiting \
         reason at either end (software power cap, hardware slowdown, software or hardware thermal \
         slowdown, hardware power brake; idle and clock settings do not count); its speed is \
         marked **T** in the tables above.\n",
        with.len(),
        all.len()
    );

    // Per run: the spread of the readings.
    let mut rows = Vec::new();
    for (ri, run) in data.runs.iter().enumerate() {
        let ms: Vec<&Measurement> = run
            .measurements
            .iter()
            .filter(|m| m.clocks.is_some())
            .collect();
        if ms.is_empty() {
            continue;
        }
        let nvml = run.env.nvml.as_ref().map_or("unknown".into(), |n| {
            format!(
                "NVML {}, driver {}",
                n.nvml_version.as_deref().unwrap_or("unknown"),
                n.driver_version.as_deref().unwrap_or("unknown")
            )
        });
        let throttled = ms
            .iter()
            .filter(|m| m.clocks.as_ref().is_some_and(|c| c.throttled()))
            .count();
        rows.push(vec![
            (ri + 1).to_string(),
            ms.len().to_string(),
            range(readings(&ms).filter_map(|r| r.sm_mhz)),
            range(readings(&ms).filter_map(|r| r.mem_mhz)),
            range(readings(&ms).filter_map(|r| r.temperature_c)),
            range(readings(&ms).filter_map(|r| r.power_w.map(|p| p.round() as i64))),
            throttled.to_string(),
            nvml,
        ]);
    }
    s.push_str(&md::table(
        &md::h(&[
            "run",
            "measurements with clocks",
            "SM MHz",
            "memory MHz",
            "temperature C",
            "power W",
            "throttled",
            "read by",
        ]),
        &rows,
    ));
    s.push('\n');

    let throttled: Vec<&Measurement> = with
        .iter()
        .copied()
        .filter(|m| m.clocks.as_ref().is_some_and(|c| c.throttled()))
        .collect();
    if throttled.is_empty() {
        let _ = writeln!(s, "None of the {} was throttled.\n", with.len());
        sec.markdown = s;
        return sec;
    }
    let mut reasons: Vec<String> = Vec::new();
    let rows: Vec<Vec<String>> = throttled
        .iter()
        .map(|m| {
            let why = m
                .clocks
                .as_ref()
                .map_or(Vec::new(), |c| c.limiting_reasons());
            for r in &why {
                if !reasons.contains(r) {
                    reasons.push(r.clone());
                }
            }
            vec![
                m.experiment.clone(),
                m.kernel.clone(),
                data::series_name(m),
                m.label.clone().unwrap_or_else(|| "-".into()),
                m.size_label(),
                md::gflops(Some(m)),
                ends(m, |r| r.sm_mhz),
                ends(m, |r| r.temperature_c),
                ends(m, |r| r.power_w.map(|p| format!("{p:.0}"))),
                why.join(", "),
            ]
        })
        .collect();
    let _ = writeln!(s, "### Throttled measurements\n");
    s.push_str(&md::table(
        &md::h(&[
            "experiment",
            "kernel",
            "toolchain",
            "point",
            "size",
            "GFLOP/s",
            "SM MHz before -> after",
            "C before -> after",
            "W before -> after",
            "limited by",
        ]),
        &rows,
    ));
    s.push('\n');
    let text = format!(
        "**{} of {} measurements with clock readings were throttled** ({}): their speeds, \
         marked T, may understate what the kernel does on an unthrottled GPU. They are listed \
         under \"Clocks and throttling\".",
        throttled.len(),
        with.len(),
        reasons.join(", ")
    );
    let short = format!(
        "{} of {} measurements were taken while the GPU was throttled ({}); they are marked T.",
        throttled.len(),
        with.len(),
        reasons.join(", ")
    );
    sec.findings.push(
        super::Finding::new(super::Topic::Clocks, text, "Clocks and throttling")
            .short(short)
            .weight(throttled.len() as f64 / with.len().max(1) as f64),
    );
    sec.markdown = s;
    sec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clocks::test_window;
    use crate::report::data::Run;
    use crate::results::Environment;

    fn fixture() -> Data {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/compare");
        let (env, measurements) = crate::results::load_dir(&dir).unwrap();
        Data {
            runs: vec![Run {
                dir,
                env,
                measurements: measurements.into_iter().take(5).collect(),
            }],
        }
    }

    fn env_with_note(mut env: Environment, note: &str) -> Environment {
        env.notes.push(note.into());
        env
    }

    #[test]
    fn without_clock_data_the_section_says_so() {
        let mut d = fixture();
        d.runs[0].env = env_with_note(
            d.runs[0].env.clone(),
            "no clock readings for NVIDIA H200 [cuda cuda:0]: NVML not available (test)",
        );
        let sec = section(&d);
        assert!(
            sec.markdown.contains("No clock data was recorded"),
            "{}",
            sec.markdown
        );
        assert!(sec.markdown.contains("NVML not available (test)"));
        assert!(sec.findings.is_empty());
    }

    #[test]
    fn unthrottled_clocks_are_summarised_and_said_to_be_unthrottled() {
        let mut d = fixture();
        for m in &mut d.runs[0].measurements {
            m.clocks = Some(test_window(false));
        }
        let sec = section(&d);
        assert!(
            sec.markdown
                .contains("| 1 | 5 | 1980 | 3201 | 45 | 400 | 0 |"),
            "{}",
            sec.markdown
        );
        assert!(sec.markdown.contains("None of the 5 was throttled."));
        assert!(sec.findings.is_empty());
    }

    #[test]
    fn throttled_measurements_are_listed_and_found() {
        let mut d = fixture();
        for m in &mut d.runs[0].measurements {
            m.clocks = Some(test_window(false));
        }
        d.runs[0].measurements[2].clocks = Some(test_window(true));
        d.runs[0].measurements[4].clocks = None;
        let sec = section(&d);
        let md = &sec.markdown;
        assert!(md.contains("of 4 of 5 measurements"), "{md}");
        assert!(
            md.contains("| 1 | 4 | 1755-1980 | 3201 | 45-68 | 400-700 | 1 |"),
            "{md}"
        );
        assert!(md.contains("### Throttled measurements"));
        assert!(
            md.contains("| 1980 -> 1755 | 45 -> 68 | 400 -> 700 | sw_power_cap |"),
            "{md}"
        );
        assert_eq!(sec.findings.len(), 1);
        assert!(
            sec.findings[0].text.starts_with("**1 of 4 measurements"),
            "{:?}",
            sec.findings
        );
    }
}
