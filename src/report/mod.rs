//! Tables, charts and the Markdown report, all built from result records.
//!
//! [`generate`] reads result directories written by gemmlab (nothing else:
//! no device is needed) and writes `report.md` with its charts under
//! `charts/` as SVG and, when a TrueType font is found on the system, PNG.

pub mod charts;
pub mod data;
pub mod fonts;
pub mod md;
pub mod table;

mod blas;
mod clocks;
mod compare;
mod lecture;
mod ncu;
mod offline;
mod simt;
mod simt_profile;
mod sweeps;
mod tune;
mod user;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use crate::backend::Toolchain;
use crate::error::{Error, Result};

use charts::{Figure, Written};
use data::Data;

/// Relative speed changes at or below this are reported as no change.
pub const SAME_SPEED: f64 = 0.03;

#[derive(Debug, Clone)]
pub struct Options {
    /// Result directories, or parents of several.
    pub from: Vec<PathBuf>,
    /// Where report.md and charts/ go (created if missing).
    pub out: PathBuf,
    /// Write PNG charts (needs a TrueType font; skipped with a note if none).
    pub png: bool,
    /// The font for PNG text; default: searched on the system.
    pub font: Option<PathBuf>,
    /// The size of the per-kernel bar chart ("4096" or "MxNxK"); default the largest measured.
    pub size: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub markdown: PathBuf,
    pub charts: Vec<Written>,
    /// Why no PNGs were written, if they were not.
    pub png_skipped: Option<String>,
    pub findings: usize,
    pub runs: usize,
    pub measurements: usize,
}

/// What the sections share: the data, where charts go, and the charts written.
pub(crate) struct Ctx<'a> {
    pub data: &'a Data,
    pub toolchains: Vec<Toolchain>,
    /// The device named in chart titles, when all runs used one.
    pub device: Option<String>,
    pub chosen_size: Option<(usize, usize, usize)>,
    out: PathBuf,
    /// The font for PNG text and SVG layout; PNGs are written only with one.
    font: Option<fonts::ChartFont>,
    png: bool,
    pub written: Vec<Written>,
}

impl Ctx<'_> {
    /// Writes a figure; returns the Markdown that shows it and the SVG's path.
    pub fn chart(&mut self, fig: &Figure, stem: &str, alt: &str) -> Result<Chart> {
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = self.out.join("charts");
        let w = charts::write(fig, &dir, &stem, self.font.as_ref(), self.png)?;
        let svg = format!("charts/{stem}.svg");
        let markdown = if w.png.is_some() {
            let png = format!("charts/{stem}.png");
            format!(
                "![{alt}]({})\n\nVector version: [{svg}]({})\n\n",
                md::link(&png),
                md::link(&svg)
            )
        } else {
            format!("![{alt}]({})\n\n", md::link(&svg))
        };
        self.written.push(w);
        Ok(Chart { markdown, svg })
    }

    pub fn title_suffix(&self) -> String {
        self.device
            .as_ref()
            .map_or(String::new(), |d| format!(" on {d}"))
    }
}

/// A chart written for the report.
pub(crate) struct Chart {
    /// The Markdown that shows it.
    pub markdown: String,
    /// The SVG, relative to report.md: written with or without a font, so
    /// findings link to it rather than to the PNG.
    pub svg: String,
}

/// What a finding is about. The summary takes the largest finding of each
/// topic first, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Topic {
    VsVendor,
    Toolchains,
    /// The SIMT family against cuBLAS, and where its time goes (ncu).
    Simt,
    Tuning,
    /// Users' kernels from spec files.
    UserKernels,
    RegisterCaps,
    Tiling,
    Hints,
    Jit,
    Failures,
    Clocks,
    /// The tutorial's Kepler claims, from rows compiled offline for sm_35.
    Kepler,
    /// Compilers across architectures: the atlas, compiled offline.
    Offline,
}

impl Topic {
    const ALL: [Topic; 13] = [
        Topic::VsVendor,
        Topic::Toolchains,
        Topic::Simt,
        Topic::Tuning,
        Topic::UserKernels,
        Topic::RegisterCaps,
        Topic::Tiling,
        Topic::Hints,
        Topic::Jit,
        Topic::Failures,
        Topic::Clocks,
        Topic::Kepler,
        Topic::Offline,
    ];

    fn name(self) -> &'static str {
        match self {
            Topic::VsVendor => "speed against cuBLAS",
            Topic::Toolchains => "toolchain gap",
            Topic::Simt => "the SIMT family against cuBLAS",
            Topic::Tuning => "tuning",
            Topic::RegisterCaps => "register caps",
            Topic::Tiling => "tiling",
            Topic::Hints => "hints",
            Topic::Jit => "JIT",
            Topic::Failures => "measurements without a speed",
            Topic::Clocks => "throttling",
            Topic::Kepler => "Kepler claims (offline)",
            Topic::Offline => "compilers across architectures (offline)",
            Topic::UserKernels => "your kernels",
        }
    }
}

/// One thing the data shows, with the numbers and where to see them.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Finding {
    pub topic: Topic,
    /// The finding in full (Markdown), as listed under "All findings".
    pub text: String,
    /// One short sentence with its number, for the summary; `None` for a
    /// detail that only the full list needs (a roll-up finding covers it).
    pub short: Option<String>,
    /// The chart that shows it, relative to report.md.
    pub chart: Option<String>,
    /// The anchor of the section with its numbers; the link when there is no chart.
    pub anchor: String,
    /// The size of the effect it reports, a relative speed difference
    /// (0.25 = 25%); ranks findings for the summary.
    pub weight: f64,
}

impl Finding {
    /// A finding that links to the section headed `heading`.
    pub fn new(topic: Topic, text: String, heading: &str) -> Finding {
        Finding {
            topic,
            text,
            short: None,
            chart: None,
            anchor: md::anchor(heading),
            weight: 0.0,
        }
    }

    pub fn short(mut self, s: String) -> Finding {
        self.short = Some(s);
        self
    }

    pub fn chart(mut self, path: Option<String>) -> Finding {
        self.chart = path;
        self
    }

    pub fn weight(mut self, w: f64) -> Finding {
        // A ratio of missing or zero speeds ranks last rather than first.
        self.weight = if w.is_finite() { w.abs() } else { 0.0 };
        self
    }

    /// "[chart](charts/x.svg)", or "[table](#section)" without a chart.
    pub fn link(&self) -> String {
        match &self.chart {
            Some(c) => format!("[chart]({})", md::link(c)),
            None => format!("[table](#{})", self.anchor),
        }
    }
}

/// A part of the report: its Markdown and the findings it supports.
#[derive(Default)]
pub(crate) struct Section {
    /// The heading the section starts with; "All findings" groups by it.
    pub title: String,
    pub markdown: String,
    pub findings: Vec<Finding>,
}

/// The most findings the summary shows.
pub const SUMMARY_MAX: usize = 10;
/// The most summary findings of one topic, so no topic crowds out the others.
const SUMMARY_PER_TOPIC: usize = 2;

/// The summary: the largest finding of each topic in `Topic` order, then the
/// next largest by weight, at most `SUMMARY_PER_TOPIC` of a topic and
/// `SUMMARY_MAX` in all; shown grouped by topic, largest first. With findings
/// in more topics than places, the topics late in the order (the offline ones
/// last) are left to "All findings".
fn summary<'a>(findings: &[&'a Finding]) -> Vec<&'a Finding> {
    let mut ranked: Vec<&Finding> = findings
        .iter()
        .copied()
        .filter(|f| f.short.is_some())
        .collect();
    // Stable: equal weights keep the order the sections gave them.
    ranked.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let mut chosen: Vec<usize> = Vec::new();
    for t in Topic::ALL {
        if let Some(i) = ranked.iter().position(|f| f.topic == t) {
            chosen.push(i);
        }
    }
    for (i, f) in ranked.iter().enumerate() {
        if chosen.len() >= SUMMARY_MAX {
            break;
        }
        let of_topic = chosen
            .iter()
            .filter(|&&c| ranked[c].topic == f.topic)
            .count();
        if !chosen.contains(&i) && of_topic < SUMMARY_PER_TOPIC {
            chosen.push(i);
        }
    }
    chosen.truncate(SUMMARY_MAX);
    chosen.sort_by_key(|&i| (ranked[i].topic, i));
    chosen.into_iter().map(|i| ranked[i]).collect()
}

/// Every finding as data, next to report.md: `findings.json`, one object per
/// finding with its topic, section, words, chart, anchor, weight and whether the
/// summary shows it, so a reader can query them without parsing the Markdown.
fn write_findings(out: &std::path::Path, sections: &[Section], chosen: &[&Finding]) -> Result<()> {
    #[derive(serde::Serialize)]
    struct Entry<'a> {
        section: &'a str,
        topic_name: &'static str,
        in_summary: bool,
        #[serde(flatten)]
        finding: &'a Finding,
    }
    let entries: Vec<Entry> = sections
        .iter()
        .flat_map(|s| {
            s.findings.iter().map(move |f| Entry {
                section: &s.title,
                topic_name: f.topic.name(),
                in_summary: chosen.iter().any(|c| std::ptr::eq(*c, f)),
                finding: f,
            })
        })
        .collect();
    let path = out.join("findings.json");
    let text = serde_json::to_string_pretty(&entries).map_err(|e| Error::Data {
        path: path.clone(),
        message: e.to_string(),
    })?;
    fs::write(&path, text).map_err(|e| Error::io(&path, e))
}

/// "## Summary" and "## All findings".
fn findings_markdown(sections: &[Section], chosen: &[&Finding]) -> String {
    let all: Vec<&Finding> = sections.iter().flat_map(|s| s.findings.iter()).collect();
    let mut doc = String::from("## Summary\n\n");
    if all.is_empty() {
        doc.push_str("No findings: the results hold none of the data they are computed from.\n\n");
        return doc;
    }
    let topics: Vec<&str> = Topic::ALL.iter().map(|t| t.name()).collect();
    let _ = writeln!(
        doc,
        "Chosen by one rule: the largest finding of each topic ({}) first, then the largest of the rest by the size of its effect (on speed, or on registers and spills in the offline topics), \
         at most {SUMMARY_PER_TOPIC} per topic and {SUMMARY_MAX} in all. \
         Speeds are medians in GFLOP/s; a change of {:.0}% or less counts as none. All {} findings: [All findings](#all-findings).\n",
        topics.join(", "),
        SAME_SPEED * 100.0,
        all.len()
    );
    for (i, f) in chosen.iter().enumerate() {
        let _ = writeln!(
            doc,
            "{}. {} {}",
            i + 1,
            f.short.as_deref().unwrap_or(&f.text),
            f.link()
        );
    }
    doc.push_str("\n## All findings\n\nGrouped by the section that holds their numbers; each links to its chart, or to its table where it has no chart.\n\n");
    for s in sections.iter().filter(|s| !s.findings.is_empty()) {
        let _ = writeln!(doc, "**[{}](#{})**\n", s.title, md::anchor(&s.title));
        for f in &s.findings {
            let _ = writeln!(doc, "- {} {}", f.text, f.link());
        }
        doc.push('\n');
    }
    doc
}

pub fn generate(opts: &Options) -> Result<Outcome> {
    // The font: needed for PNG text; without it the SVGs are laid out from estimates.
    let font = fonts::ensure(opts.font.as_deref());
    generate_with(opts, font)
}

fn generate_with(
    opts: &Options,
    font: std::result::Result<fonts::ChartFont, String>,
) -> Result<Outcome> {
    let data = data::load(&opts.from)?;
    let chosen_size = match &opts.size {
        None => None,
        Some(s) => Some(parse_size(s)?),
    };
    let charts_dir = opts.out.join("charts");
    fs::create_dir_all(&charts_dir).map_err(|e| Error::io(&charts_dir, e))?;

    let png_skipped = match (&font, opts.png) {
        (_, false) => Some("PNG output turned off (--no-png)".to_string()),
        (Err(why), true) => {
            if opts.font.is_some() {
                return Err(Error::invalid(format!(
                    "--font: {why}; {}",
                    fonts::INSTALL_HINT
                )));
            }
            eprintln!(
                "note: PNG charts skipped: {why}; {}. The SVG charts and the report are written.",
                fonts::INSTALL_HINT
            );
            Some(why.clone())
        }
        (Ok(_), true) => None,
    };

    // The devices that ran something: an offline run's "device" is an
    // architecture, named in its own sections.
    let devices: Vec<&str> = {
        let mut d: Vec<&str> = Vec::new();
        for r in &data.runs {
            for dev in r.env.devices.iter().filter(|d| !is_offline_device(d)) {
                if !d.contains(&dev.name.as_str()) {
                    d.push(&dev.name);
                }
            }
        }
        d
    };
    let mut ctx = Ctx {
        data: &data,
        toolchains: data.toolchains(),
        device: (devices.len() == 1).then(|| devices[0].to_string()),
        chosen_size,
        out: opts.out.clone(),
        png: png_skipped.is_none(),
        font: font.ok(),
        written: Vec::new(),
    };

    let sections: Vec<Section> = vec![
        compare::section(&mut ctx)?,
        blas::section(&mut ctx)?,
        lecture::section(&mut ctx)?,
        simt::section(&mut ctx, &opts.from)?,
        sweeps::registers(&mut ctx)?,
        sweeps::tiling(&mut ctx)?,
        sweeps::hints(&mut ctx)?,
        sweeps::jit(&mut ctx)?,
        tune::section(&mut ctx)?,
        user::section(&mut ctx)?,
        offline::kepler(&mut ctx)?,
        offline::atlas(&mut ctx)?,
        offline::sweeps(&mut ctx)?,
        failures(&data),
        clocks::section(&data),
    ];
    let findings: usize = sections.iter().map(|s| s.findings.len()).sum();

    let mut doc = String::new();
    let _ = writeln!(doc, "# gemmlab report\n");
    let _ = writeln!(
        doc,
        "Generated by gemmlab {} (commit {}) from {} result director{} ({} measurements). \
         Everything below is computed from those files; regenerate it without a GPU with:\n",
        env!("CARGO_PKG_VERSION"),
        env!("GEMMLAB_GIT_COMMIT"),
        data.runs.len(),
        if data.runs.len() == 1 { "y" } else { "ies" },
        data.all().count(),
    );
    let mut cmd = String::from("gemmlab report");
    for f in &opts.from {
        let _ = write!(cmd, " --from {}", shell_word(&f.display().to_string()));
    }
    let _ = write!(
        cmd,
        " --out {}",
        shell_word(&opts.out.display().to_string())
    );
    let _ = writeln!(doc, "```sh\n{cmd}\n```\n");
    let offline_rows = data.all().filter(|r| data::is_offline(r.m)).count();
    if offline_rows > 0 {
        let _ = writeln!(
            doc,
            "{offline_rows} of the measurements were compiled offline (no device: registers, spills and occupancy, nothing run or timed); \
             only the sections marked offline use them, and none of them counts as a speed or as a measurement without one.\n"
        );
    }
    if let Some(why) = &png_skipped {
        let _ = writeln!(
            doc,
            "PNG charts were not written ({why}); the charts below are SVG. To get PNGs, {} and run the command again.\n",
            fonts::INSTALL_HINT
        );
    }
    let synthetic: Vec<&str> = data
        .runs
        .iter()
        .flat_map(|r| r.env.notes.iter())
        .filter(|n| n.to_ascii_lowercase().contains("synthetic"))
        .map(String::as_str)
        .collect();
    if !synthetic.is_empty() {
        let _ = writeln!(
            doc,
            "**Some of these results are marked synthetic by their notes** (see Environment); findings from them describe made-up numbers.\n"
        );
    }

    // The summary is chosen once: the Markdown and findings.json say the same.
    let all: Vec<&Finding> = sections.iter().flat_map(|s| s.findings.iter()).collect();
    let chosen = summary(&all);
    doc.push_str(&findings_markdown(&sections, &chosen));
    doc.push_str(&environment(&data));
    for s in &sections {
        doc.push_str(&s.markdown);
    }

    let path = opts.out.join("report.md");
    fs::write(&path, &doc).map_err(|e| Error::io(&path, e))?;
    write_findings(
        &opts.out,
        &sections,
        &summary(
            &sections
                .iter()
                .flat_map(|s| s.findings.iter())
                .collect::<Vec<_>>(),
        ),
    )?;
    Ok(Outcome {
        markdown: path,
        charts: ctx.written,
        png_skipped,
        findings,
        runs: data.runs.len(),
        measurements: data.all().count(),
    })
}

/// A run's device record for an architecture compiled for offline
/// (`backend::nvrtc::offline_device`), not hardware.
fn is_offline_device(d: &crate::backend::DeviceInfo) -> bool {
    d.id.starts_with("offline:") || d.platform.contains("offline")
}

fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=,:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub use crate::gemm::parse_size;

fn or_unknown<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or("unknown".into(), |v| v.to_string())
}

fn environment(data: &Data) -> String {
    let mut s = String::from("## Environment\n\n");
    // Devices, once each, with the runs that used them.
    let mut devs: Vec<(&crate::backend::DeviceInfo, Vec<usize>)> = Vec::new();
    for (ri, r) in data.runs.iter().enumerate() {
        for d in &r.env.devices {
            match devs.iter_mut().find(|(x, _)| *x == d) {
                Some((_, runs)) => runs.push(ri + 1),
                None => devs.push((d, vec![ri + 1])),
            }
        }
    }
    if !devs.is_empty() {
        let rows: Vec<Vec<String>> = devs
            .iter()
            .map(|(d, runs)| {
                vec![
                    d.toolchain.to_string(),
                    d.id.clone(),
                    d.name.clone(),
                    d.platform.clone(),
                    or_unknown(&d.driver_version),
                    or_unknown(&d.runtime_version),
                    or_unknown(&d.compiler_version),
                    d.compute_capability
                        .map_or("unknown".into(), |(a, b)| format!("{a}.{b}")),
                    or_unknown(&d.compute_units),
                    or_unknown(&d.clock_mhz),
                    d.global_mem_bytes.map_or("unknown".into(), |b| {
                        format!("{:.1}", b as f64 / (1u64 << 30) as f64)
                    }),
                    runs.iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                ]
            })
            .collect();
        s.push_str(&md::table(
            &md::h(&[
                "toolchain",
                "id",
                "device",
                "platform",
                "driver",
                "runtime",
                "compiler",
                "compute capability",
                "SMs / CUs",
                "clock MHz",
                "memory GiB",
                "runs",
            ]),
            &rows,
        ));
        s.push('\n');
    }
    for (ri, r) in data.runs.iter().enumerate() {
        let e = &r.env;
        let _ = writeln!(s, "### Run {}: `{}`\n", ri + 1, r.dir.display());
        let mut counts: Vec<(String, usize)> = Vec::new();
        for m in &r.measurements {
            match counts.iter_mut().find(|(n, _)| *n == m.experiment) {
                Some((_, c)) => *c += 1,
                None => counts.push((m.experiment.clone(), 1)),
            }
        }
        let exps = if counts.is_empty() {
            "none (no measurements)".to_string()
        } else {
            counts
                .iter()
                .map(|(n, c)| format!("{n} ({c} measurements)"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let rows = vec![
            vec!["experiments".into(), exps],
            vec!["started (UTC)".into(), e.started_utc.clone()],
            vec![
                "gemmlab".into(),
                format!("{}, commit {}", e.gemmlab_version, e.git_commit),
            ],
            vec![
                "host".into(),
                format!("{}, {}, {} CPUs", e.hostname, e.os, e.host_cpus),
            ],
            vec!["seed".into(), e.seed.to_string()],
            vec![
                "timing".into(),
                if !r.measurements.is_empty() && r.measurements.iter().all(data::is_offline) {
                    "none: compiled offline, nothing run or timed".to_string()
                } else {
                    format!(
                        "{} warm-up + {} timed launches per cell, {} cache; median reported",
                        e.plan.warmup,
                        e.plan.reps,
                        format!("{:?}", e.plan.cache).to_lowercase()
                    )
                },
            ],
            vec!["vendor BLAS".into(), or_unknown(&e.vendor_blas)],
        ];
        s.push_str(&md::table(&md::h(&["field", "value"]), &rows));
        let cmd = e.command.join(" ");
        if !cmd.is_empty() {
            let _ = writeln!(s, "\nCommand:\n\n```sh\n{cmd}\n```");
        }
        if !e.notes.is_empty() {
            let _ = writeln!(s, "\nNotes:\n");
            for n in &e.notes {
                let _ = writeln!(s, "- {}", md::escape(n));
            }
        }
        s.push('\n');
    }
    s
}

const FAILURES: &str = "Measurements without a speed";

/// Every measurement made on a device without a speed, with the reason
/// (offline rows have none by design: they are in the offline sections).
fn failures(data: &Data) -> Section {
    let bad: Vec<data::Rec> = data.measured().filter(|r| !r.m.status.is_ok()).collect();
    let mut sec = Section::default();
    if bad.is_empty() {
        return sec;
    }
    sec.title = FAILURES.to_string();
    let mut s = format!("## {FAILURES}\n\n");
    let rows: Vec<Vec<String>> = bad
        .iter()
        .map(|r| {
            let m = r.m;
            vec![
                m.experiment.clone(),
                m.kernel.clone(),
                data::series_name(m),
                m.label.clone().unwrap_or_else(|| "-".into()),
                m.size_label(),
                m.status.label().to_string(),
                m.status.reason().map_or("-".into(), md::short_reason),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &md::h(&[
            "experiment",
            "kernel",
            "toolchain",
            "point",
            "size",
            "status",
            "reason",
        ]),
        &rows,
    ));
    s.push('\n');
    sec.markdown = s;
    let mut by_status: Vec<(&str, usize)> = Vec::new();
    for r in &bad {
        let l = r.m.status.label();
        match by_status.iter_mut().find(|(x, _)| *x == l) {
            Some((_, c)) => *c += 1,
            None => by_status.push((l, 1)),
        }
    }
    let what: Vec<String> = by_status.iter().map(|(l, c)| format!("{c} {l}")).collect();
    let examples: Vec<String> = bad
        .iter()
        .take(4)
        .map(|r| {
            format!(
                "{} on {} at {} ({})",
                r.m.kernel,
                data::series_name(r.m),
                r.m.size_label(),
                r.m.status.label()
            )
        })
        .collect();
    let total = data.measured().count();
    let text = format!(
        "**No speed for {} of {total} measurements**: {}; e.g. {}. They are listed with their reasons under \"{FAILURES}\" and left out of every comparison.",
        bad.len(),
        what.join(", "),
        examples.join("; ")
    );
    let short = format!(
        "{} of {total} measurements {} no speed ({}) and {} left out of every comparison.",
        bad.len(),
        if bad.len() == 1 { "has" } else { "have" },
        what.join(", "),
        if bad.len() == 1 { "is" } else { "are" }
    );
    sec.findings.push(
        Finding::new(Topic::Failures, text, FAILURES)
            .short(short)
            .weight(bad.len() as f64 / total.max(1) as f64),
    );
    sec
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4096").unwrap(), (4096, 4096, 4096));
        assert_eq!(parse_size("10x20x30").unwrap(), (10, 20, 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("10x20").is_err());
        assert!(parse_size("abc").is_err());
    }

    #[test]
    fn without_a_font_the_report_has_svg_charts_and_says_how_to_get_pngs() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/compare");
        let out =
            std::env::temp_dir().join(format!("gemmlab-report-nofont-{}", std::process::id()));
        let opts = Options {
            from: vec![fixture],
            out: out.clone(),
            png: true,
            font: None,
            size: Some("1024".into()),
        };
        let o = generate_with(&opts, Err("no TrueType font found (test)".into())).unwrap();
        assert!(o.png_skipped.is_some());
        assert!(!o.charts.is_empty());
        for c in &o.charts {
            assert!(c.png.is_none());
            let svg = fs::read_to_string(&c.svg).unwrap();
            assert!(svg.starts_with("<svg"), "{}", c.svg.display());
        }
        let md = fs::read_to_string(&o.markdown).unwrap();
        assert!(md.contains("apt-get install fonts-dejavu-core"));
        assert!(
            md.contains("](charts/perf-1024.svg)"),
            "--size picks the bar chart's size"
        );
        assert!(!md.contains(".png"));
        let _ = fs::remove_dir_all(&out);
    }

    fn finding(topic: Topic, name: &str, weight: f64) -> Finding {
        Finding::new(topic, format!("**{name}** in full."), "Some section")
            .short(format!("{name} at {:.0}%.", weight * 100.0))
            .weight(weight)
    }

    #[test]
    fn summary_takes_each_topic_first_then_by_weight_at_most_ten() {
        // The nine topics of a run on a device without the SIMT family (the
        // offline ones below; with the family's, each of ten topics gets one place).
        let topics: Vec<Topic> = Topic::ALL
            .into_iter()
            .filter(|t| {
                !matches!(
                    t,
                    Topic::Kepler | Topic::Offline | Topic::Simt | Topic::UserKernels
                )
            })
            .collect();
        assert_eq!(topics.len(), 9);
        let mut all = Vec::new();
        for (ti, &t) in topics.iter().enumerate() {
            for j in 0..5 {
                // Topics late in the order carry the largest weights.
                all.push(finding(
                    t,
                    &format!("{t:?}{j}"),
                    (ti * 10 + j) as f64 / 100.0,
                ));
            }
        }
        // A detail without a short sentence is never chosen, however large.
        let mut detail = finding(Topic::Jit, "detail", 9.0);
        detail.short = None;
        all.push(detail);
        let refs: Vec<&Finding> = all.iter().collect();
        let chosen = summary(&refs);
        assert_eq!(chosen.len(), SUMMARY_MAX);
        for &t in &topics {
            let n = chosen.iter().filter(|f| f.topic == t).count();
            assert!(
                (1..=SUMMARY_PER_TOPIC).contains(&n),
                "{t:?}: {n} in the summary"
            );
        }
        assert!(chosen.iter().all(|f| f.short.is_some()));
        // Within a topic the largest comes first, and topics keep their order.
        assert_eq!(chosen[0].short.as_deref(), Some("VsVendor4 at 4%."));
        assert!(chosen.windows(2).all(|w| w[0].topic <= w[1].topic));
        // The one place after one per topic (nine topics) goes to the largest weight left.
        let seconds: Vec<Topic> = topics
            .iter()
            .copied()
            .filter(|t| chosen.iter().filter(|f| f.topic == *t).count() == 2)
            .collect();
        assert_eq!(seconds, [Topic::Clocks]);
    }

    #[test]
    fn with_more_topics_than_places_the_last_topics_wait_for_all_findings() {
        let mut all = Vec::new();
        for (ti, t) in Topic::ALL.into_iter().enumerate() {
            for j in 0..3 {
                all.push(finding(t, &format!("{t:?}{j}"), (ti * 10 + j) as f64));
            }
        }
        let refs: Vec<&Finding> = all.iter().collect();
        let chosen = summary(&refs);
        assert_eq!(chosen.len(), SUMMARY_MAX);
        let topics: Vec<Topic> = chosen.iter().map(|f| f.topic).collect();
        assert_eq!(topics, Topic::ALL[..SUMMARY_MAX].to_vec());
        assert_eq!(
            Topic::ALL[SUMMARY_MAX..],
            [Topic::Clocks, Topic::Kepler, Topic::Offline]
        );
        // Each is its topic's largest.
        assert!(chosen
            .iter()
            .all(|f| f.short.as_deref().is_some_and(|s| s.contains("2 at"))));
        // Only offline topics: up to two each.
        let offline: Vec<Finding> = all
            .iter()
            .filter(|f| matches!(f.topic, Topic::Kepler | Topic::Offline))
            .cloned()
            .collect();
        let refs: Vec<&Finding> = offline.iter().collect();
        let chosen = summary(&refs);
        assert_eq!(chosen.len(), 2 * SUMMARY_PER_TOPIC);
        assert_eq!(chosen[0].topic, Topic::Kepler);
    }

    #[test]
    fn a_summary_of_few_findings_takes_them_all() {
        let all = [
            finding(Topic::Tiling, "tiles", 0.2),
            finding(Topic::VsVendor, "best", 0.3),
        ];
        let refs: Vec<&Finding> = all.iter().collect();
        let chosen = summary(&refs);
        assert_eq!(chosen.len(), 2);
        assert_eq!(chosen[0].topic, Topic::VsVendor, "shown in topic order");
        assert_eq!(summary(&[]).len(), 0);
    }

    #[test]
    fn findings_link_to_their_chart_or_their_section() {
        let f = Finding::new(Topic::Hints, "x".into(), "Compiler hints (hints)");
        assert_eq!(f.link(), "[table](#compiler-hints-hints)");
        let f = f.chart(Some("charts/a b.svg".into()));
        assert_eq!(f.link(), "[chart](charts/a%20b.svg)");
        assert_eq!(f.weight(f64::NAN).weight, 0.0, "no speed ranks last");
    }

    use crate::backend::KernelResources;
    use crate::gemm::driver::Status;
    use crate::kernels::Hints;
    use crate::measure::{Plan, Stats};
    use crate::results::{Environment, Measurement, ResultWriter};

    /// A made-up measurement that passed its check.
    fn row(exp: &str, kernel: &str, t: Toolchain, n: usize, gflops: f64, regs: u32) -> Measurement {
        let ns = 2.0 * (n as f64).powi(3) / gflops;
        Measurement {
            experiment: exp.into(),
            kernel: kernel.into(),
            variant: None,
            label: None,
            toolchain: t,
            device: "Made-up GPU".into(),
            device_id: format!("{t:?}:0"),
            m: n,
            n,
            k: n,
            problem: None,
            padded: None,
            config: Default::default(),
            hints: Hints::default(),
            cache: crate::measure::CacheState::Warm,
            status: Status::Ok,
            check: None,
            time: Some(Stats {
                reps: 10,
                median_ns: ns,
                min_ns: ns,
                max_ns: ns,
                q1_ns: ns,
                q3_ns: ns,
                batch: 1,
            }),
            gflops: Some(gflops),
            gflops_best: Some(gflops),
            vs_vendor: Some(gflops / 50000.0),
            pre_ns: None,
            post_ns: None,
            resources: Some(KernelResources {
                registers: Some(regs),
                spill_stores_bytes: Some(0),
                spill_loads_bytes: Some(0),
                ..Default::default()
            }),
            compiler: None,
            compile_ms: None,
            build_notes: Vec::new(),
            occupancy: Some(0.5),
            ptx_mix: None,
            ptx_file: None,
            clocks: None,
            dims: None,
            gbs: None,
        }
    }

    fn write_run(dir: &Path, rows: Vec<Measurement>) {
        let mut env = Environment::capture(Vec::new(), 1, Plan::default());
        env.notes.push("synthetic: made up for a unit test".into());
        let mut w = ResultWriter::create(dir, env).unwrap();
        for m in rows {
            w.push(m).unwrap();
        }
        w.finish().unwrap();
    }

    /// More findings than the summary takes: twelve kernels compared, six
    /// register sweeps, tiles, hints, the JIT and a failed cell.
    fn synthetic_results(root: &Path) {
        use Toolchain::{Cuda, OpenCl};
        let mut compare = Vec::new();
        for n in [1024, 4096] {
            let mut cublas = row("compare", "cublas", Cuda, n, 50000.0, 0);
            cublas.resources = None;
            compare.push(cublas);
            for i in 1..=12u32 {
                let k = format!("gemm{i}");
                let cu = 2000.0 * i as f64;
                // Every third kernel alike, every third with more CUDA registers,
                // the rest with the same registers but a slower OpenCL.
                let (cl, cl_regs) = match i % 3 {
                    0 => (cu * 1.01, 32 + i),
                    1 => (cu / (1.0 + 0.1 * i as f64), 32 + i - 8),
                    _ => (cu / 1.2, 32 + i),
                };
                compare.push(row("compare", &k, Cuda, n, cu, 32 + i));
                compare.push(row("compare", &k, OpenCl, n, cl, cl_regs));
            }
        }
        let mut failed = row("compare", "gemm13", OpenCl, 4096, 1.0, 40);
        failed.status = Status::WrongResult("max error 1e3".into());
        compare.push(failed);
        write_run(&root.join("compare"), compare);

        let mut regs = Vec::new();
        for i in 1..=6u32 {
            let k = format!("gemm{i}");
            for t in [Cuda, OpenCl] {
                for (cap, gain, used) in [
                    (None, 1.0, 96),
                    (Some(128), 1.0 + 0.05 * i as f64, 120),
                    (Some(64), 0.5, 64),
                ] {
                    let mut m = row("registers", &k, t, 4096, 10000.0 * gain, used);
                    m.hints.max_registers = cap;
                    regs.push(m);
                }
            }
        }
        write_run(&root.join("registers"), regs);

        let mut tiles = Vec::new();
        for (t, g84, g44) in [(Cuda, 9000.0, 12000.0), (OpenCl, 11000.0, 10000.0)] {
            for ((rx, ry), g) in [((8, 4), g84), ((4, 4), g44)] {
                let mut m = row("tiling", "gemm11", t, 4096, g, 8 * rx * ry as u32);
                m.config.0.insert("RX".into(), rx.into());
                m.config.0.insert("RY".into(), ry.into());
                tiles.push(m);
            }
        }
        write_run(&root.join("tiling"), tiles);

        let mut hints = Vec::new();
        for i in 1..=4u32 {
            let k = format!("gemm{i}");
            for t in [Cuda, OpenCl] {
                let mut base = row("hints", &k, t, 4096, 10000.0, 64);
                base.label = Some("baseline".into());
                let mut unroll = row("hints", &k, t, 4096, 10000.0 * (1.0 - 0.1 * i as f64), 80);
                unroll.hints = Hints::default().with_switch("UNROLL_K", true);
                unroll.label = Some("UNROLL_K=1".into());
                let mut fast = row("hints", &k, t, 4096, 10050.0, 64);
                fast.hints.fast_math = true;
                fast.label = Some("fast math".into());
                hints.extend([base, unroll, fast]);
            }
        }
        write_run(&root.join("hints"), hints);

        let mut jit = Vec::new();
        for i in [1u32, 2, 4] {
            let mut m = row(
                "jit",
                &format!("gemm{i}"),
                Cuda,
                4096,
                2000.0 * i as f64,
                32 + i,
            );
            m.variant = Some("opencl-ptx".into());
            m.build_notes =
                vec!["PTX loaded through the CUDA driver JIT (cuModuleLoadDataEx)".into()];
            jit.push(m);
        }
        write_run(&root.join("jit"), jit);
    }

    /// The Markdown between a heading and the next one at the same level.
    fn part<'a>(md: &'a str, heading: &str) -> &'a str {
        let start = md.find(heading).unwrap_or_else(|| panic!("no {heading}"));
        let body = &md[start + heading.len()..];
        &body[..body.find("\n## ").unwrap_or(body.len())]
    }

    #[test]
    fn the_report_opens_with_a_short_linked_summary() {
        let root =
            std::env::temp_dir().join(format!("gemmlab-report-summary-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        synthetic_results(&root.join("in"));
        let out = root.join("out");
        let opts = Options {
            from: vec![root.join("in")],
            out: out.clone(),
            png: false,
            font: None,
            size: None,
        };
        let o = generate_with(&opts, Err("no font (test)".into())).unwrap();
        let md = fs::read_to_string(&o.markdown).unwrap();

        // The summary comes before the full lists and every section.
        let pos = |h: &str| md.find(h).unwrap_or_else(|| panic!("no {h} in\n{md}"));
        let summary_at = pos("\n## Summary\n");
        for later in [
            "\n## All findings\n",
            "\n## Environment\n",
            "\n## Speed: kernels x toolchains",
            "\n## Register cap sweep",
            "\n## Compiler hints",
            "\n## OpenCL's PTX through the CUDA driver JIT",
            "\n## Measurements without a speed",
        ] {
            assert!(summary_at < pos(later), "{later} before the summary");
        }
        assert!(!md.contains("## Findings"), "the old long list is gone");

        let anchors: Vec<String> = md
            .lines()
            .filter_map(|l| l.strip_prefix("## "))
            .map(md::anchor)
            .collect();
        let items: Vec<&str> = part(&md, "## Summary")
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        assert!(
            o.findings > SUMMARY_MAX,
            "the data must give more findings ({}) than the summary takes",
            o.findings
        );
        assert_eq!(items.len(), SUMMARY_MAX, "{items:#?}");
        for item in &items {
            let (sentence, link) = item
                .split_once(". ")
                .map(|(_, rest)| rest)
                .and_then(|rest| rest.rsplit_once(" ["))
                .unwrap_or_else(|| panic!("no link: {item}"));
            assert!(sentence.ends_with('.'), "{item}");
            assert!(
                !sentence.trim_end_matches('.').contains(". "),
                "one sentence: {item}"
            );
            assert!(
                sentence.contains(|c: char| c.is_ascii_digit()),
                "no number: {item}"
            );
            assert!(
                !sentence.contains("**"),
                "a long finding in the summary: {item}"
            );
            if let Some(path) = link
                .strip_prefix("chart](")
                .and_then(|l| l.strip_suffix(')'))
            {
                assert!(out.join(path).is_file(), "{item}: {path} not written");
            } else {
                let a = link
                    .strip_prefix("table](#")
                    .and_then(|l| l.strip_suffix(')'))
                    .unwrap_or_else(|| panic!("not a chart or table link: {item}"));
                assert!(anchors.iter().any(|x| x == a), "{item}: no heading #{a}");
            }
        }
        assert!(items[0].contains("fastest kernel reaches"), "{}", items[0]);
        assert!(items
            .iter()
            .any(|i| i.contains("8x4 tile suits OpenCL but not CUDA holds")));
        assert!(
            items
                .iter()
                .any(|i| i.contains("1 of 118 measurements has no speed (1 WRONG)")),
            "failures are a topic of their own: {items:#?}"
        );

        // Nothing is lost: every finding is listed in full below the summary.
        let full = part(&md, "## All findings");
        assert_eq!(
            full.lines().filter(|l| l.starts_with("- **")).count(),
            o.findings
        );
        assert!(full.contains("**Register caps, gemm6 (published)**"));
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("results/h200"), "results/h200");
        assert_eq!(shell_word("a b"), "'a b'");
    }
}
