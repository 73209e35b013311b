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

mod clocks;
mod compare;
mod sweeps;

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
    /// Writes a figure and returns the Markdown that shows it.
    pub fn chart(&mut self, fig: &Figure, stem: &str, alt: &str) -> Result<String> {
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
        let md = if w.png.is_some() {
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
        Ok(md)
    }

    pub fn title_suffix(&self) -> String {
        self.device
            .as_ref()
            .map_or(String::new(), |d| format!(" on {d}"))
    }
}

/// A part of the report: its Markdown and the findings it supports.
#[derive(Default)]
pub(crate) struct Section {
    pub markdown: String,
    pub findings: Vec<String>,
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

    let devices: Vec<&str> = {
        let mut d: Vec<&str> = Vec::new();
        for r in &data.runs {
            for dev in &r.env.devices {
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
        sweeps::registers(&mut ctx)?,
        sweeps::tiling(&mut ctx)?,
        sweeps::hints(&mut ctx)?,
        sweeps::jit(&mut ctx)?,
        failures(&data),
        clocks::section(&data),
    ];
    let findings: Vec<&String> = sections.iter().flat_map(|s| s.findings.iter()).collect();

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

    let _ = writeln!(doc, "## Findings\n");
    if findings.is_empty() {
        let _ = writeln!(
            doc,
            "No findings: the results hold none of the data they are computed from.\n"
        );
    } else {
        let _ = writeln!(
            doc,
            "Computed from the data below. Speeds are medians in GFLOP/s; a change of {:.0}% or less counts as none.\n",
            SAME_SPEED * 100.0
        );
        for f in &findings {
            let _ = writeln!(doc, "- {f}");
        }
        doc.push('\n');
    }
    doc.push_str(&environment(&data));
    for s in &sections {
        doc.push_str(&s.markdown);
    }

    let path = opts.out.join("report.md");
    fs::write(&path, &doc).map_err(|e| Error::io(&path, e))?;
    Ok(Outcome {
        markdown: path,
        charts: ctx.written,
        png_skipped,
        findings: findings.len(),
        runs: data.runs.len(),
        measurements: data.all().count(),
    })
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
                format!(
                    "{} warm-up + {} timed launches per cell, {} cache; median reported",
                    e.plan.warmup,
                    e.plan.reps,
                    format!("{:?}", e.plan.cache).to_lowercase()
                ),
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

/// Every measurement without a speed, with the reason.
fn failures(data: &Data) -> Section {
    let bad: Vec<data::Rec> = data.all().filter(|r| !r.m.status.is_ok()).collect();
    let mut sec = Section::default();
    if bad.is_empty() {
        return sec;
    }
    let mut s = String::from("## Measurements without a speed\n\n");
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
    sec.findings.push(format!(
        "**No speed for {} of {} measurements**: {}; e.g. {}. They are listed with their reasons under \"Measurements without a speed\" and left out of every comparison.",
        bad.len(),
        data.all().count(),
        what.join(", "),
        examples.join("; ")
    ));
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

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("results/h200"), "results/h200");
        assert_eq!(shell_word("a b"), "'a b'");
    }
}
