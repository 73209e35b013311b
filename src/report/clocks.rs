//! "Clocks and throttling": what NVML read around the timed launches, per run,
//! and every measurement whose GPU was throttled (their speeds carry a T in
//! the tables above).

use crate::analysis::clocks::{Clocks, Kind, Span};
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
fn ends<T: std::fmt::Display>(
    m: &Measurement,
    f: impl Fn(&crate::clocks::ClockReading) -> Option<T>,
) -> String {
    m.clocks.as_ref().map_or(md::MISSING.into(), |c| {
        format!(
            "{} -> {}",
            md::or_unknown(f(&c.before)),
            md::or_unknown(f(&c.after))
        )
    })
}

pub(crate) fn section(a: &Clocks) -> Section {
    let mut sec = Section::default();
    if a.measured == 0 {
        return sec;
    }
    sec.title = TITLE.into();
    let mut s = format!("## {TITLE}\n\n");
    if a.with_clocks == 0 {
        s.push_str(
            "No clock data was recorded: none of these measurements holds NVML readings (NVML was \
             not available where they ran, the device is not an NVIDIA GPU, or gemmlab did not \
             record clocks yet). Whether any was throttled is unknown.\n\n",
        );
        for n in &a.missing_notes {
            s.push_str(&format!("- {}\n", md::escape(n)));
        }
        sec.markdown = s;
        return sec;
    }
    s.push_str(&format!(
        "NVML read the SM and memory clocks, the temperature, the power draw and the throttle \
         reasons just before the warm-up and just after the timed launches of {} of {} \
         measurements. A measurement counts as **throttled** when NVML gave a performance-limiting \
         reason at either end (software power cap, hardware slowdown, software or hardware thermal \
         slowdown, hardware power brake; idle and clock settings do not count); its speed is \
         marked **T** in the tables above.\n\n",
        a.with_clocks, a.measured
    ));
    let rows: Vec<Vec<String>> = a
        .runs
        .iter()
        .map(|r| {
            vec![
                r.run.to_string(),
                r.measurements.to_string(),
                span(&r.sm_mhz),
                span(&r.mem_mhz),
                span(&r.temperature_c),
                span(&r.power_w.map(|(l, h)| (l.round() as i64, h.round() as i64))),
                r.throttled.to_string(),
                r.nvml.map_or(md::UNKNOWN.into(), |(nvml, driver)| {
                    format!(
                        "NVML {}, driver {}",
                        md::or_unknown(nvml),
                        md::or_unknown(driver)
                    )
                }),
            ]
        })
        .collect();
    let head = [
        "run",
        "measurements with clocks",
        "SM MHz",
        "memory MHz",
        "temperature C",
        "power W",
        "throttled",
        "read by",
    ];
    s.push_str(&md::table(&md::h(&head), &rows));
    s.push('\n');
    if a.throttled.is_empty() {
        s.push_str(&format!("None of the {} was throttled.\n\n", a.with_clocks));
        sec.markdown = s;
        return sec;
    }
    let rows: Vec<Vec<String>> = a
        .throttled
        .iter()
        .map(|(m, why)| {
            vec![
                m.experiment.clone(),
                m.kernel.clone(),
                data::series_name(m),
                md::or_missing(m.label.as_deref()),
                m.size_label(),
                md::gflops(Some(m)),
                ends(m, |r| r.sm_mhz),
                ends(m, |r| r.temperature_c),
                ends(m, |r| r.power_w.map(|p| format!("{p:.0}"))),
                why.join(", "),
            ]
        })
        .collect();
    let head = [
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
    ];
    s.push_str("### Throttled measurements\n\n");
    s.push_str(&md::table(&md::h(&head), &rows));
    s.push('\n');
    sec.markdown = s;
    sec.show(&a.findings);
    sec
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
