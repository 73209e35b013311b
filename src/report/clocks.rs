//! "Clocks and throttling": NVML's readings per run and every throttled measurement.

use std::fmt::Write as _;

use crate::analysis::clocks::{Clocks, Kind, RunClocks, Span};
use crate::measure::clocks::ClockReading;
use crate::results::Measurement;

use super::data;
use super::{md, Section, Words};

const TITLE: &str = "Clocks and throttling";

/// "1755-1980", or the one value, or "unknown".
fn span<T: std::fmt::Display>(s: &Span<T>) -> String {
    match s {
        Some((l, h)) if l.to_string() == h.to_string() => l.to_string(),
        Some((l, h)) => format!("{l}-{h}"),
        None => md::UNKNOWN.into(),
    }
}

/// "before -> after" of one field, "unknown" for an end NVML did not give.
fn ends<T: std::fmt::Display>(m: &Measurement, f: fn(&ClockReading) -> Option<T>) -> String {
    m.clocks.as_ref().map_or(md::MISSING.into(), |c| {
        let (before, after) = (md::or_unknown(f(&c.before)), md::or_unknown(f(&c.after)));
        format!("{before} -> {after}")
    })
}

type Run = (&'static str, fn(&RunClocks) -> String);

const RUNS: [Run; 8] = [
    ("run", |r| r.run.to_string()),
    ("measurements with clocks", |r| r.measurements.to_string()),
    ("SM MHz", |r| span(&r.sm_mhz)),
    ("memory MHz", |r| span(&r.mem_mhz)),
    ("temperature C", |r| span(&r.temperature_c)),
    ("power W", |r| {
        span(&r.power_w.map(|(l, h)| (l.round() as i64, h.round() as i64)))
    }),
    ("throttled", |r| r.throttled.to_string()),
    ("read by", |r| {
        r.nvml.map_or(md::UNKNOWN.into(), |(nvml, driver)| {
            let (n, d) = (md::or_unknown(nvml), md::or_unknown(driver));
            format!("NVML {n}, driver {d}")
        })
    }),
];

type Throttled = (&'static str, fn(&(&Measurement, Vec<String>)) -> String);

const THROTTLED: [Throttled; 10] = [
    ("experiment", |(m, _)| m.experiment.clone()),
    ("kernel", |(m, _)| m.kernel.clone()),
    ("toolchain", |(m, _)| data::series_name(m)),
    ("point", |(m, _)| md::or_missing(m.label.as_deref())),
    ("size", |(m, _)| m.size_label()),
    ("GFLOP/s", |(m, _)| md::gflops(Some(m))),
    ("SM MHz before -> after", |(m, _)| ends(m, |r| r.sm_mhz)),
    ("C before -> after", |(m, _)| ends(m, |r| r.temperature_c)),
    ("W before -> after", |(m, _)| {
        ends(m, |r| r.power_w.map(|p| format!("{p:.0}")))
    }),
    ("limited by", |(_, why)| why.join(", ")),
];

pub(crate) fn section(a: &Clocks) -> Section {
    if a.measured == 0 {
        return Section::default();
    }
    let mut s = format!("## {TITLE}\n\n");
    if a.with_clocks == 0 {
        s.push_str("No clock data was recorded: no measurement holds NVML readings (no NVML, not an NVIDIA GPU, or a gemmlab that did not record clocks), so whether any was throttled is unknown.\n\n");
        for n in &a.missing_notes {
            let _ = writeln!(s, "- {}", md::escape(n));
        }
    } else {
        let _ = writeln!(
            s,
            "NVML's clocks, temperature, power and throttle reasons just before the warm-up and just after \
             the timed launches of {} of {} measurements. A measurement is **throttled** (its speed marked \
             **T** above) when NVML gave a performance-limiting reason at either end (power cap, hardware \
             or thermal slowdown, power brake).\n\n{}",
            a.with_clocks,
            a.measured,
            md::table_of(&RUNS, &a.runs)
        );
        if a.throttled.is_empty() {
            let _ = writeln!(s, "None of the {} was throttled.\n", a.with_clocks);
        } else {
            let t = md::table_of(&THROTTLED, &a.throttled);
            let _ = writeln!(s, "### Throttled measurements\n\n{t}");
        }
    }
    Section::of(TITLE, s, &a.findings)
}

pub(crate) fn words(k: &Kind) -> Words {
    let Kind::Throttled {
        throttled,
        with_clocks,
        reasons,
    } = k;
    let reasons = reasons.join(", ");
    Words {
        text: format!(
            "**{throttled} of {with_clocks} measurements with clock readings were throttled** ({reasons}): their speeds, \
             marked T, may understate what the kernel does on an unthrottled GPU. They are listed \
             under \"{TITLE}\"."
        ),
        short: format!(
            "{throttled} of {with_clocks} measurements were taken while the GPU was throttled ({reasons}); they are marked T."
        ),
    }
}
