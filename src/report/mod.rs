//! Tables, charts and the Markdown report, all built from result records.
//!
//! [`generate`] reads result directories written by gemmlab (nothing else:
//! no device is needed) and writes `report.md` with its charts under
//! `charts/` as SVG and, when a TrueType font is found on the system, PNG.

pub mod md;

mod attribution;
mod blas;
mod clocks;
mod compare;
mod html;
mod lecture;
mod offline;
mod roofline;
mod routine;
mod runtime;
mod sections;
mod simt;
mod simt_profile;
mod sweeps;
mod tc;
pub mod tune;
mod user;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use crate::error::{Error, Result};

use crate::analysis::{self, stats, Finding, Kind, Topic, SUMMARY_MAX, SUMMARY_PER_TOPIC};
pub(crate) use crate::analysis::{data, SAME_SPEED};
use crate::plot::{fonts, Figure, Written};
use crate::results::Measurement;
use data::Data;
use plotters::style::RGBColor;

/// cuBLAS's colour in every chart; each toolchain's is in `backend::TOOLCHAINS`.
pub(crate) const VENDOR_COLOR: RGBColor = RGBColor(80, 80, 80);

pub(crate) fn color(t: crate::backend::Toolchain) -> RGBColor {
    let (r, g, b) = t.info().rgb;
    RGBColor(r, g, b)
}

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
    /// The device named in chart titles, when all runs used one.
    pub device: Option<String>,
    out: PathBuf,
    /// The font for PNG text and SVG layout; PNGs are written only with one.
    font: Option<fonts::ChartFont>,
    png: bool,
    pub written: Vec<Written>,
}

impl Ctx<'_> {
    /// Writes a figure; returns the Markdown that shows it.
    pub fn chart(&mut self, fig: &Figure, stem: &str, alt: &str) -> Result<String> {
        let stem = chart_stem(stem);
        let dir = self.out.join("charts");
        let w = crate::plot::write(fig, &dir, &stem, self.font.as_ref(), self.png)?;
        let svg = chart_path(&stem);
        let markdown = match w.png {
            Some(_) => format!(
                "![{alt}]({})\n\nVector version: [{svg}]({})\n\n",
                md::link(&format!("charts/{stem}.png")),
                md::link(&svg)
            ),
            None => format!("![{alt}]({})\n\n", md::link(&svg)),
        };
        self.written.push(w);
        Ok(markdown)
    }

    pub fn title_suffix(&self) -> String {
        self.device
            .as_ref()
            .map_or(String::new(), |d| format!(" on {d}"))
    }
}

/// A topic's name in the summary's rule.
fn topic_name(t: Topic) -> &'static str {
    match t {
        Topic::VsVendor => "speed against cuBLAS",
        Topic::Toolchains => "toolchain gap",
        Topic::Runtime => "where the CUDA-OpenCL gap comes from",
        Topic::Simt => "the SIMT family against cuBLAS",
        Topic::Routine => "the routine across shapes",
        Topic::TensorCores => "tensor cores",
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
        Topic::Attribution => "front end or assembler",
    }
}

/// What a finding says: in full (Markdown, under "All findings") and as one
/// short sentence with its number for the summary.
pub(crate) struct Words {
    pub text: String,
    pub short: String,
}

/// The words of every kind of finding: each section's renderer owns its kinds'.
fn words(kind: &Kind) -> Words {
    match kind {
        Kind::Clocks(k) => clocks::words(k),
        Kind::Failures(k) => failures_words(k),
        Kind::Simt(k) => simt::words(k),
        Kind::User(k) => user::words(k),
        Kind::Compare(k) => compare::words(k),
        Kind::Blas(k) => blas::words(k),
        Kind::Lecture(k) => lecture::words(k),
        Kind::Sweeps(k) => sweeps::words(k),
        Kind::Offline(k) => offline::words(k),
        Kind::Tune(k) => tune::words(k),
        Kind::Attribution(k) => attribution::words(k),
        Kind::Routine(k) => routine::words(k),
        Kind::Tc(k) => tc::words(k),
        Kind::Runtime(k) => runtime::words(k),
    }
}

/// A finding as the report shows it: the data, its words, where it links; in
/// findings.json, with the fields in this order.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Shown {
    /// The anchor of the section with its numbers; the link when there is no chart.
    pub anchor: String,
    /// The chart's SVG, relative to report.md.
    #[serde(rename = "chart_svg")]
    pub chart: Option<String>,
    pub text: String,
    pub short: String,
    #[serde(flatten)]
    pub finding: Finding,
}

impl Shown {
    /// A finding with its words, linking to the section headed `heading`.
    pub fn new(finding: Finding, heading: &str) -> Shown {
        let Words { text, short } = words(&finding.kind);
        Shown {
            anchor: md::anchor(heading),
            chart: finding.chart.as_deref().map(chart_path),
            text,
            short,
            finding,
        }
    }

    /// "[chart](charts/x.svg), [table](#section)": the chart that shows it and
    /// the section whose table holds its rows; the table alone without a chart.
    pub fn link(&self) -> String {
        let table = format!("[table](#{})", self.anchor);
        match &self.chart {
            Some(c) => format!("[chart]({}), {table}", md::link(c)),
            None => table,
        }
    }
}

/// The SVG a chart stem is written to, relative to report.md.
pub(crate) fn chart_path(stem: &str) -> String {
    format!("charts/{}.svg", chart_stem(stem))
}

/// Any character but letters, digits, '-' and '_' becomes '_'.
fn chart_stem(stem: &str) -> String {
    stem.replace(
        |c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "_",
    )
}

/// A part of the report: its Markdown and the findings it supports.
#[derive(Default)]
pub(crate) struct Section {
    /// The heading the section starts with; "All findings" groups by it.
    pub title: String,
    pub markdown: String,
    pub findings: Vec<Shown>,
}

impl Section {
    /// A section headed `title`, its Markdown and findings.
    pub fn of(title: &str, markdown: String, findings: &[Finding]) -> Section {
        let findings = findings.iter().map(|f| Shown::new(f.clone(), title));
        let (title, findings) = (title.to_string(), findings.collect());
        Section {
            title,
            markdown,
            findings,
        }
    }
}

/// A panel of grouped bars, `values[category][series]`, without notes.
pub(crate) fn bar_panel(
    title: String,
    categories: Vec<String>,
    x: &str,
    y: &str,
    styles: &[crate::plot::Style],
    values: Vec<Vec<Option<f64>>>,
) -> crate::plot::Panel {
    let notes = vec![vec![None; styles.len()]; categories.len()];
    let axis = crate::plot::XAxis::Categories(categories);
    let mut p = crate::plot::Panel::new(title, axis, x, y);
    p.bars = Some(crate::plot::Bars {
        styles: styles.to_vec(),
        values,
        notes,
    });
    p
}

/// Every finding as data, next to report.md: `findings.json`, one object per
/// finding with its section, topic, kind and numbers, weight, chart, anchor,
/// words and whether the summary shows it and as which item, so a reader can
/// query them without parsing the Markdown.
fn write_findings(out: &std::path::Path, sections: &[Section], chosen: &[usize]) -> Result<()> {
    #[derive(serde::Serialize)]
    struct Entry<'a> {
        section: &'a str,
        topic_name: &'static str,
        in_summary: bool,
        /// Its number in the summary (from 1), where the summary shows it.
        #[serde(skip_serializing_if = "Option::is_none")]
        summary_item: Option<usize>,
        #[serde(flatten)]
        shown: &'a Shown,
    }
    let shown = sections
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s, f)));
    let entries: Vec<Entry> = (shown.enumerate())
        .map(|(i, (s, f))| Entry {
            section: &s.title,
            topic_name: topic_name(f.finding.topic),
            in_summary: chosen.contains(&i),
            summary_item: chosen.iter().position(|&c| c == i).map(|p| p + 1),
            shown: f,
        })
        .collect();
    let path = out.join("findings.json");
    let text = serde_json::to_string_pretty(&entries).map_err(|e| Error::Data {
        path: path.clone(),
        message: e.to_string(),
    })?;
    fs::write(&path, text).map_err(|e| Error::io(&path, e))
}

/// "## Summary", led by the chart of its first finding that has one, and "## All findings".
fn findings_markdown(sections: &[Section], chosen: &[usize], written: &[Written]) -> String {
    let all: Vec<&Shown> = sections.iter().flat_map(|s| s.findings.iter()).collect();
    let mut doc = String::from("## Summary\n\n");
    if all.is_empty() {
        doc.push_str("No findings: the results hold none of the data they are computed from.\n\n");
        return doc;
    }
    let topics: Vec<&str> = Topic::ALL.iter().map(|&t| topic_name(t)).collect();
    let _ = writeln!(
        doc,
        "Chosen by one rule: the largest finding of each topic ({}) first, then the largest of the rest by the size of its effect (on speed, or on registers and spills in the offline topics), \
         at most {SUMMARY_PER_TOPIC} per topic and {SUMMARY_MAX} in all. \
         Speeds are medians in GFLOP/s; a change of {:.0}% or less counts as none. {}: [All findings](#all-findings).\n",
        topics.join(", "),
        SAME_SPEED * 100.0,
        match all.len() {
            1 => "The one finding".to_string(),
            n => format!("All {n} findings"),
        }
    );
    for (i, &c) in chosen.iter().enumerate() {
        let f = all[c];
        let _ = writeln!(doc, "{}. {} {}", i + 1, f.short, f.link());
    }
    let charted = chosen
        .iter()
        .enumerate()
        .map(|(i, &c)| (i + 1, all[c].chart.as_ref()));
    if let Some((n, svg)) = charted.into_iter().find_map(|(n, c)| Some((n, c?))) {
        // The PNG where one was written, as the sections embed their charts.
        let png = svg.strip_suffix(".svg").map(|s| format!("{s}.png"));
        let png = png.filter(|p| {
            written
                .iter()
                .any(|w| w.png.as_ref().is_some_and(|w| w.ends_with(p)))
        });
        let path = md::link(png.as_ref().unwrap_or(svg));
        let _ = writeln!(doc, "\n![the chart of summary finding {n}]({path})");
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
    let chosen_size = opts.size.as_deref().map(parse_size).transpose()?;
    let charts_dir = opts.out.join("charts");
    fs::create_dir_all(&charts_dir).map_err(|e| Error::io(&charts_dir, e))?;

    let png_skipped = png_status(&font, opts)?;

    let mut ctx = Ctx {
        data: &data,
        device: the_device(&data),
        out: opts.out.clone(),
        png: png_skipped.is_none(),
        font: font.ok(),
        written: Vec::new(),
    };

    let input = sections::Input {
        data: &data,
        size: chosen_size,
        device: ctx.device.clone(),
        from: &opts.from,
    };
    let sections: Vec<Section> = sections::SECTIONS
        .iter()
        .map(|build| build(&mut ctx, &input))
        .collect::<Result<_>>()?;
    let findings: usize = sections.iter().map(|s| s.findings.len()).sum();

    let mut doc = preamble(opts, &data, png_skipped.as_deref());
    // The summary is chosen once: the Markdown and findings.json say the same.
    let all: Vec<&Finding> = sections
        .iter()
        .flat_map(|s| s.findings.iter().map(|f| &f.finding))
        .collect();
    let chosen = analysis::summary(&all);
    doc.push_str(&findings_markdown(&sections, &chosen, &ctx.written));
    doc.push_str(&environment(&data));
    for s in &sections {
        doc.push_str(&s.markdown);
    }

    let path = opts.out.join("report.md");
    fs::write(&path, &doc).map_err(|e| Error::io(&path, e))?;
    // The same report as one page for a browser, its charts inline.
    let page = opts.out.join("report.html");
    fs::write(&page, html::page(&doc, &opts.out)).map_err(|e| Error::io(&page, e))?;
    write_findings(&opts.out, &sections, &chosen)?;
    Ok(Outcome {
        markdown: path,
        charts: ctx.written,
        png_skipped,
        findings,
        runs: data.runs.len(),
        measurements: data.all().count(),
    })
}

/// The title, what the report was made from and how to make it again, and
/// what the reader should know before the findings.
fn preamble(opts: &Options, data: &Data, png_skipped: Option<&str>) -> String {
    let word = |p: &std::path::Path| shell_word(&p.display().to_string());
    let froms: String = (opts.from.iter())
        .map(|f| format!(" --from {}", word(f)))
        .collect();
    let runs = data.runs.len();
    let mut doc = format!(
        "# gemmlab report\n\n\
         Generated by gemmlab {} (commit {}) from {} ({}). \
         Everything below is computed from those files; regenerate it without a GPU with:\n\n\
         ```sh\ngemmlab report{froms} --out {}\n```\n\n",
        env!("CARGO_PKG_VERSION"),
        env!("GEMMLAB_GIT_COMMIT"),
        md::plural(runs, "result directory"),
        md::plural(data.all().count(), "measurement"),
        word(&opts.out),
    );
    let offline_rows = data.all().filter(|r| data::is_offline(r.m)).count();
    if offline_rows > 0 {
        let _ = writeln!(
            doc,
            "{offline_rows} of the measurements were compiled offline (no device: registers, spills and occupancy, nothing run or timed); \
             only the sections marked offline use them, and none of them counts as a speed or as a measurement without one.\n"
        );
    }
    if let Some(why) = png_skipped {
        let _ = writeln!(
            doc,
            "PNG charts were not written ({why}); the charts below are SVG. To get PNGs, {} and run the command again.\n",
            fonts::INSTALL_HINT
        );
    }
    let mut notes = data.runs.iter().flat_map(|r| r.env.notes.iter());
    if notes.any(|n| n.to_ascii_lowercase().contains("synthetic")) {
        doc.push_str("**Some of these results are marked synthetic by their notes** (see Environment); findings from them describe made-up numbers.\n\n");
    }
    doc
}

/// Why no PNGs are written, if they are not; an error for a `--font` that cannot be used.
fn png_status(
    font: &std::result::Result<fonts::ChartFont, String>,
    opts: &Options,
) -> Result<Option<String>> {
    let hint = fonts::INSTALL_HINT;
    Ok(match (font, opts.png) {
        (_, false) => Some("PNG output turned off (--no-png)".to_string()),
        (Err(why), true) if opts.font.is_some() => {
            return Err(Error::invalid(format!("--font: {why}; {hint}")))
        }
        (Err(why), true) => {
            eprintln!("note: PNG charts skipped: {why}; {hint}. The SVG charts and the report are written.");
            Some(why.clone())
        }
        (Ok(_), true) => None,
    })
}

/// The device named in chart titles, when all runs that ran something used
/// one: an offline run's "device" is an architecture, named in its own sections
/// (`backend::nvrtc::offline_device` writes its record).
fn the_device(data: &Data) -> Option<String> {
    let devices = data.runs.iter().flat_map(|r| r.env.devices.iter());
    let names = stats::distinct(
        devices
            .filter(|d| !(d.id.starts_with("offline:") || d.platform.contains("offline")))
            .map(|d| d.name.as_str()),
    );
    (names.len() == 1).then(|| names[0].to_string())
}

fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=,:@".contains(c);
    match !s.is_empty() && s.chars().all(plain) {
        true => s.to_string(),
        false => format!("'{}'", s.replace('\'', "'\\''")),
    }
}

pub use crate::gemm::parse_size;

/// A device and the runs (numbered from 1) that used it.
type DeviceRuns<'a> = (&'a crate::backend::DeviceInfo, Vec<String>);
type DeviceColumn = (&'static str, fn(&DeviceRuns) -> String);

const DEVICES: [DeviceColumn; 12] = [
    ("toolchain", |(d, _)| d.toolchain.to_string()),
    ("id", |(d, _)| d.id.clone()),
    ("device", |(d, _)| d.name.clone()),
    ("platform", |(d, _)| d.platform.clone()),
    ("driver", |(d, _)| md::or_unknown(d.driver_version.as_ref())),
    ("runtime", |(d, _)| {
        md::or_unknown(d.runtime_version.as_ref())
    }),
    ("compiler", |(d, _)| {
        md::or_unknown(d.compiler_version.as_ref())
    }),
    ("compute capability", |(d, _)| {
        md::or_unknown(d.compute_capability.map(|(a, b)| format!("{a}.{b}")))
    }),
    ("SMs / CUs", |(d, _)| md::or_unknown(d.compute_units)),
    ("clock MHz", |(d, _)| md::or_unknown(d.clock_mhz)),
    ("memory GiB", |(d, _)| {
        let gib = |b: u64| format!("{:.1}", b as f64 / (1u64 << 30) as f64);
        md::or_unknown(d.global_mem_bytes.map(gib))
    }),
    ("runs", |(_, runs)| runs.join(", ")),
];

/// Every device once, with the runs that used them; then each run's record.
fn environment(data: &Data) -> String {
    let mut s = String::from("## Environment\n\n");
    let mut devs: Vec<DeviceRuns> = Vec::new();
    for (ri, r) in data.runs.iter().enumerate() {
        for d in &r.env.devices {
            match devs.iter_mut().find(|(x, _)| *x == d) {
                Some((_, runs)) => runs.push((ri + 1).to_string()),
                None => devs.push((d, vec![(ri + 1).to_string()])),
            }
        }
    }
    if !devs.is_empty() {
        let _ = writeln!(s, "{}", md::table_of(&DEVICES, &devs));
    }
    let dependent: Vec<&str> = devs
        .iter()
        .filter(|(d, _)| d.dependent_launch)
        .map(|(d, _)| d.id.as_str())
        .collect();
    if !dependent.is_empty() {
        let _ = writeln!(
            s,
            "Launches on {}: kernels whose PTX waits for the grid before them (`griddepcontrol.wait`) were launched with programmatic dependent launch, so that each launch overlaps the end of the one before; `GEMMLAB_PDL=0` measures without it.\n",
            dependent.join(", ")
        );
    }
    // One table for every run: a field all runs share is said once, the rest per run.
    if data.runs.len() > 1 {
        s.push_str(&runs_table(data));
        s.push('\n');
    }
    for (ri, r) in data.runs.iter().enumerate() {
        let _ = writeln!(s, "### Run {}: `{}`\n", ri + 1, r.dir.display());
        if data.runs.len() == 1 {
            let rows: Vec<Vec<String>> = run_fields(r).into_iter().map(Vec::from).collect();
            s.push_str(&md::table(&md::h(&["field", "value"]), &rows));
        }
        let cmd = r.env.command.join(" ");
        if !cmd.is_empty() {
            let gap = if data.runs.len() == 1 { "\n" } else { "" };
            let _ = writeln!(s, "{gap}Command:\n\n```sh\n{cmd}\n```");
        }
        if !r.env.notes.is_empty() {
            s.push_str("\nNotes:\n\n");
            for n in &r.env.notes {
                let _ = writeln!(s, "- {}", md::escape(n));
            }
        }
        s.push('\n');
    }
    s
}

/// Every run's fields in one table: "all runs" where they agree, else each run's
/// value ("1, 3: ...; 2: ...", runs with the same value together).
fn runs_table(data: &Data) -> String {
    let fields: Vec<[String; 2]> = data.runs.iter().flat_map(run_fields).collect();
    let per_run = data.runs.len();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (i, [name, _]) in fields
        .iter()
        .take(fields.len() / per_run.max(1))
        .enumerate()
    {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for run in 0..per_run {
            let v = fields[run * (fields.len() / per_run) + i][1].clone();
            match groups.iter_mut().find(|(x, _)| *x == v) {
                Some((_, runs)) => runs.push(run + 1),
                None => groups.push((v, vec![run + 1])),
            }
        }
        let value = match groups.len() {
            1 => format!("{} (all runs)", groups[0].0),
            _ => (groups.iter())
                .map(|(v, runs)| {
                    let r: Vec<String> = runs.iter().map(|n| n.to_string()).collect();
                    let word = if r.len() > 1 { "runs" } else { "run" };
                    format!("{word} {}: {v}", r.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; "),
        };
        rows.push(vec![name.clone(), value]);
    }
    md::table(&md::h(&["field", "runs"]), &rows)
}

/// A run's fields: its experiments, when, what, where, seed, timing plan and BLAS.
fn run_fields(r: &data::Run) -> Vec<[String; 2]> {
    let e = &r.env;
    let counts = stats::tally(r.measurements.iter().map(|m| m.experiment.as_str()));
    let exps: Vec<String> = (counts.iter())
        .map(|(n, c)| format!("{n} ({c} measurements)"))
        .collect();
    let exps = match exps.is_empty() {
        true => "none (no measurements)".to_string(),
        false => exps.join(", "),
    };
    let offline = !r.measurements.is_empty() && r.measurements.iter().all(data::is_offline);
    let (warmup, reps, cache) = (e.plan.warmup, e.plan.reps, format!("{:?}", e.plan.cache));
    let rows = [
        ["experiments", &exps],
        ["started (UTC)", &e.started_utc],
        [
            "gemmlab",
            &format!("{}, commit {}", e.gemmlab_version, e.git_commit),
        ],
        [
            "host",
            &format!("{}, {}, {} CPUs", e.hostname, e.os, e.host_cpus),
        ],
        ["seed", &e.seed.to_string()],
        [
            "timing",
            &match offline {
                true => "none: compiled offline, nothing run or timed".to_string(),
                false => format!(
                    "{warmup} warm-up + {reps} timed launches per cell, {} cache; median reported",
                    cache.to_lowercase()
                ),
            },
        ],
        ["vendor BLAS", &md::or_unknown(e.vendor_blas.as_ref())],
    ];
    rows.iter()
        .map(|[a, b]| [a.to_string(), b.to_string()])
        .collect()
}

const FAILURES: &str = "Measurements without a speed";

type FailedColumn = (&'static str, fn(&&Measurement) -> String);

const FAILED: [FailedColumn; 7] = [
    ("experiment", |m| m.experiment.clone()),
    ("kernel", |m| m.kernel.clone()),
    ("toolchain", |m| data::series_name(m)),
    ("point", |m| md::or_missing(m.label.as_deref())),
    ("size", |m| m.size_label()),
    ("status", |m| m.status.label().to_string()),
    ("reason", |m| {
        md::or_missing(m.status.reason().map(md::short_reason).as_deref())
    }),
];

/// Every measurement made on a device without a speed, with the reason.
fn failures(a: &analysis::failures::Failures) -> Section {
    if a.rows.is_empty() {
        return Section::default();
    }
    let markdown = format!("## {FAILURES}\n\n{}\n", md::table_of(&FAILED, &a.rows));
    Section::of(FAILURES, markdown, &a.findings)
}

fn failures_words(k: &analysis::failures::Kind) -> Words {
    let analysis::failures::Kind::NoSpeed {
        without,
        of,
        by_status,
        examples,
    } = k;
    let what: Vec<String> = by_status.iter().map(|(l, c)| format!("{c} {l}")).collect();
    let what = what.join(", ");
    let examples: Vec<String> = (examples.iter())
        .map(|[k, t, size, status]| format!("{k} on {t} at {size} ({status})"))
        .collect();
    let (has, is) = (
        md::verb(*without, "has", "have"),
        md::verb(*without, "is", "are"),
    );
    Words {
        text: format!(
            "**No speed for {without} of {of} measurements**: {what}; e.g. {}. They are listed with their reasons under \"{FAILURES}\" and left out of every comparison.",
            examples.join("; ")
        ),
        short: format!(
            "{without} of {of} measurements {has} no speed ({what}) and {is} left out of every comparison."
        ),
    }
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
    fn findings_link_to_their_chart_or_their_section() {
        let kind = Kind::Failures(analysis::failures::Kind::NoSpeed {
            without: 1,
            of: 2,
            by_status: vec![],
            examples: vec![],
        });
        let f = Finding::new(Topic::Hints, kind).weight(f64::NAN);
        assert_eq!(f.weight, 0.0, "no speed ranks last");
        let shown = Shown::new(f.clone(), "Compiler hints (hints)");
        assert_eq!(shown.link(), "[table](#compiler-hints-hints)");
        let shown = Shown::new(f.chart(Some("a b".into())), "x");
        assert_eq!(shown.link(), "[chart](charts/a_b.svg), [table](#x)");
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("results/h200"), "results/h200");
        assert_eq!(shell_word("a b"), "'a b'");
    }
}
