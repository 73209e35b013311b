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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::data::Run;
    use crate::clocks::test_window;
    use crate::results::Environment;

    fn fixture() -> crate::analysis::Data {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/compare");
        let (env, measurements) = crate::results::load_dir(&dir).unwrap();
        crate::analysis::Data {
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
        let sec = section(&crate::analysis::clocks::analyse(&d));
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
        let sec = section(&crate::analysis::clocks::analyse(&d));
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
        let sec = section(&crate::analysis::clocks::analyse(&d));
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
