//! Rows compiled offline (`--arch`, `gemmlab atlas`): no device ran them, so
//! they hold what the compiler did (registers, spills, stack, shared memory)
//! and the occupancy the architecture's rules give, never a speed. These
//! sections read them, and nothing else in the report does
//! ([`super::data::is_offline`]):
//!
//! - [`kepler`]: the tutorial's Kepler claims, answered on sm_35 with NVRTC 11.8
//!   from the atlas and the offline sweeps, each with its number, or the command
//!   that produces the missing rows;
//! - [`atlas`]: every kernel at its published defaults on every architecture
//!   under every compiler (NVRTC 11.8, 12.9, 13.5, NVIDIA OpenCL's PTX assembled
//!   by ptxas), charted and tabled per kernel, with what changes between
//!   compiler generations and architectures;
//! - [`sweeps`]: every point of the offline sweeps, as tables.

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::gemm::driver::Status;
use crate::kernels;
use crate::occupancy::{self, Limits, Occupancy};
use crate::results::Measurement;

use super::charts::{Figure, Line, Panel, Style, XAxis};
use super::data::tile_of;
use super::data::{self, arch_of, arch_order, kernel_order, Rec};
use super::{md, Ctx, Section, Shown, Topic};

pub(crate) const ATLAS: &str = "Compilers across architectures (offline)";
pub(crate) const KEPLER: &str = "Kepler: the tutorial's claims on sm_35 (NVRTC 11.8, offline)";
pub(crate) const SWEEPS: &str = "Offline sweeps: every point compiled, none run";

/// The experiment name of the atlas's rows.
pub const ATLAS_EXPERIMENT: &str = "atlas";

/// The Kepler GPU of the tutorial (Tesla K40) and the last NVRTC that targets it.
const KEPLER_ARCH: &str = "sm_35";
const KEPLER_NVRTC: [u32; 2] = [11, 8];
/// The tutorial's lower bound on kernel 6's registers per thread.
const TUTORIAL_LOWER_BOUND: u32 = 73;
/// The tutorial's cap just under the two-work-group limit.
const CAP_127: u32 = 127;

const ATLAS_HINT: &str = "`gemmlab atlas` writes them (every tutorial kernel at its published defaults for sm_35 to sm_120 under every cached NVRTC, and NVIDIA OpenCL's PTX assembled by ptxas; see `gemmlab atlas --help`)";
const HINTS_CMD: &str = "gemmlab sweep hints --arch sm_35 --nvrtc 11.8";
const REGISTERS_CMD: &str =
    "gemmlab sweep registers --arch sm_35 --nvrtc 11.8 --caps none,255,168,128,127,96,80,64,48,40,32";
const TILING_CMD: &str = "gemmlab sweep tiling --arch sm_35 --nvrtc 11.8";

// ---------------------------------------------------------------------------
// Rows: architecture and compiler

/// The compiler of an offline row, as a chart series.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Compiler {
    /// "NVRTC 11.8", "OpenCL PTX + ptxas 11.8".
    name: String,
    opencl: bool,
    /// [11, 8]; empty when the label names none.
    version: Vec<u32>,
}

impl Compiler {
    /// From the row's `compiler` ("NVRTC 11.8", "NVIDIA OpenCL PTX + ptxas 11.8"),
    /// else from its note ("... with NVRTC 11.8; ...", "... by ptxas 11.8; ...").
    fn of(m: &Measurement) -> Option<Compiler> {
        let label = m
            .compiler
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .or_else(|| label_from_notes(m))?;
        let opencl = m.toolchain == Toolchain::OpenCl;
        let version = label
            .split_whitespace()
            .rev()
            .find_map(parse_version)
            .unwrap_or_default();
        let name = if opencl {
            match label.find("ptxas") {
                Some(i) => format!("OpenCL PTX + {}", &label[i..]),
                None => format!("OpenCL: {label}"),
            }
        } else {
            label
        };
        Some(Compiler {
            name,
            opencl,
            version,
        })
    }

    fn order(a: &Compiler, b: &Compiler) -> std::cmp::Ordering {
        (a.opencl, &a.version, &a.name).cmp(&(b.opencl, &b.version, &b.name))
    }

    /// The CUDA release (major.minor) it belongs to.
    fn release(&self) -> Option<(u32, u32)> {
        match self.version.as_slice() {
            [a, b, ..] => Some((*a, *b)),
            [a] => Some((*a, 0)),
            [] => None,
        }
    }

    fn is_kepler_nvrtc(&self) -> bool {
        !self.opencl && self.name.starts_with("NVRTC") && self.version.starts_with(&KEPLER_NVRTC)
    }
}

fn parse_version(w: &str) -> Option<Vec<u32>> {
    let w = w.trim_matches(|c: char| !c.is_ascii_digit());
    let v: Option<Vec<u32>> = w.split('.').map(|p| p.parse().ok()).collect();
    v.filter(|v| !v.is_empty())
}

fn label_from_notes(m: &Measurement) -> Option<String> {
    let texts = m
        .status
        .reason()
        .into_iter()
        .chain(m.build_notes.iter().map(String::as_str));
    for t in texts {
        for (pat, name) in [("with NVRTC ", "NVRTC"), ("by ptxas ", "ptxas")] {
            if let Some(i) = t.find(pat) {
                let v = t[i + pat.len()..]
                    .split([';', ' ', ','])
                    .next()
                    .unwrap_or("");
                if parse_version(v).is_some() {
                    return Some(format!("{name} {v}"));
                }
            }
        }
    }
    None
}

/// One offline row with its architecture and compiler.
#[derive(Clone)]
struct Cell<'a> {
    m: &'a Measurement,
    arch: String,
    compiler: Compiler,
}

/// The rows with an architecture and a compiler, and how many lacked one.
fn cells<'a>(recs: &[Rec<'a>]) -> (Vec<Cell<'a>>, usize) {
    let mut out = Vec::new();
    let mut lost = 0;
    for r in recs {
        match (arch_of(r.m), Compiler::of(r.m)) {
            (Some(arch), Some(compiler)) => out.push(Cell {
                m: r.m,
                arch,
                compiler,
            }),
            _ => lost += 1,
        }
    }
    (out, lost)
}

fn archs_of(cells: &[Cell]) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    for c in cells {
        if !a.contains(&c.arch) {
            a.push(c.arch.clone());
        }
    }
    a.sort_by(|x, y| arch_order(x, y));
    a
}

fn compilers_of(cells: &[Cell]) -> Vec<Compiler> {
    let mut v: Vec<Compiler> = Vec::new();
    for c in cells {
        if !v.contains(&c.compiler) {
            v.push(c.compiler.clone());
        }
    }
    v.sort_by(Compiler::order);
    v
}

fn kernels_of(cells: &[Cell]) -> Vec<String> {
    let mut k: Vec<String> = Vec::new();
    for c in cells {
        if !k.contains(&c.m.kernel) {
            k.push(c.m.kernel.clone());
        }
    }
    k.sort_by(|a, b| kernel_order(a, b));
    k
}

/// Whether a row is its kernel at the published defaults: the registry's
/// default configuration (or none recorded) and no switch, flag or cap.
fn is_published(m: &Measurement) -> bool {
    let config_ok = m.config.0.is_empty()
        || kernels::find(&m.kernel)
            .ok()
            .and_then(|s| s.config(&[]).ok())
            .is_none_or(|d| d == m.config);
    config_ok && m.hints.is_published()
}

/// (major, minor) of "sm_35", "sm_120", "sm_90a".
fn compute_capability(arch: &str) -> Option<(u32, u32)> {
    let rest = arch.strip_prefix("sm_")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: u32 = digits.parse().ok()?;
    Some((n / 10, n % 10))
}

fn limits_of(arch: &str) -> Option<Limits> {
    let (a, b) = compute_capability(arch)?;
    occupancy::limits(a, b)
}

fn threads_of(m: &Measurement) -> Option<u32> {
    let spec = kernels::find(&m.kernel).ok()?;
    let config = if m.config.0.is_empty() {
        spec.config(&[]).ok()?
    } else {
        m.config.clone()
    };
    u32::try_from(spec.threads_per_group(&config)).ok()
}

/// The occupancy of a row on its architecture: blocks per SM and what limits them.
fn occupancy_detail(m: &Measurement, arch: &str) -> Option<Occupancy> {
    let l = limits_of(arch)?;
    let r = m.resources.as_ref()?;
    let shared = u32::try_from(r.shared_bytes.unwrap_or(0)).ok()?;
    occupancy::occupancy(&l, threads_of(m)?, r.registers?, shared)
}

/// The most registers per thread with which `blocks` blocks of `threads` threads
/// fit on an SM as far as registers go (shared memory left aside).
fn registers_for_blocks(l: &Limits, threads: u32, blocks: u32) -> Option<u32> {
    (1..=l.max_registers_per_thread).rev().find(|&r| {
        occupancy::occupancy(l, threads, r, 0).is_some_and(|o| o.blocks_per_sm >= blocks)
    })
}

fn pct(f: Option<f64>) -> String {
    f.filter(|f| f.is_finite())
        .map_or("?".into(), |f| format!("{:.0}%", f * 100.0))
}

/// The row's own occupancy, else the one its architecture's rules give.
fn occ_of(c: &Cell) -> Option<f64> {
    c.m.occupancy
        .filter(|o| o.is_finite())
        .or_else(|| occupancy_detail(c.m, &c.arch).map(|o| o.fraction))
}

/// "126 / 0 / 25%": registers / spill bytes (stores + loads) / occupancy; the
/// status word where the row has no report ("ptxas refused", "invalid").
fn cell_text(c: Option<&Cell>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    match (&c.m.resources, data::registers(c.m)) {
        (Some(_), Some(r)) => format!(
            "{r} / {} / {}",
            data::spill_bytes(c.m).map_or("?".into(), |b| b.to_string()),
            pct(occ_of(c))
        ),
        _ => status_word(c.m),
    }
}

fn status_word(m: &Measurement) -> String {
    match &m.status {
        Status::CompileError(_) if m.toolchain == Toolchain::OpenCl => "ptxas refused".into(),
        s => s.label().to_string(),
    }
}

/// "126", "96 (+168 B spills)", or the status word.
fn regs_text(m: &Measurement) -> String {
    match (data::registers(m), data::spill_bytes(m)) {
        (Some(r), Some(b)) if b > 0 => format!("{r} (+{b} B spills)"),
        (Some(r), _) => r.to_string(),
        (None, _) => status_word(m),
    }
}

/// The colour of a compiler's series: greens for NVRTC (lighter for older),
/// blues for OpenCL's PTX through ptxas.
fn compiler_color(c: &Compiler, all: &[Compiler]) -> RGBColor {
    const GREENS: [RGBColor; 4] = [
        RGBColor(166, 206, 57),
        RGBColor(90, 160, 30),
        RGBColor(30, 110, 20),
        RGBColor(10, 70, 10),
    ];
    const BLUES: [RGBColor; 4] = [
        RGBColor(120, 170, 230),
        RGBColor(31, 104, 180),
        RGBColor(20, 50, 120),
        RGBColor(90, 60, 160),
    ];
    let same: Vec<&Compiler> = all.iter().filter(|x| x.opencl == c.opencl).collect();
    let i = same.iter().position(|x| *x == c).unwrap_or(0);
    let palette = if c.opencl { &BLUES } else { &GREENS };
    palette[i.min(palette.len() - 1)]
}

/// Distinct colours for up to a dozen kernels.
const KERNEL_COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(255, 187, 120),
];

/// The registers of `kernel` on `arch` under `comp`, where a row has them.
fn registers_at(cells: &[Cell], kernel: &str, arch: &str, comp: &Compiler) -> Option<u32> {
    find_cell(cells, kernel, arch, comp).and_then(|x| data::registers(x.m))
}

/// The registers of `kernel` under `comp` along `archs`, skipping architectures without a row.
fn registers_along<'s>(
    cells: &[Cell],
    kernel: &str,
    archs: &'s [String],
    comp: &Compiler,
) -> Vec<(&'s String, u32)> {
    archs
        .iter()
        .filter_map(|a| registers_at(cells, kernel, a, comp).map(|r| (a, r)))
        .collect()
}

fn find_cell<'c, 'a>(
    cells: &'c [Cell<'a>],
    kernel: &str,
    arch: &str,
    comp: &Compiler,
) -> Option<&'c Cell<'a>> {
    let mut of = cells
        .iter()
        .filter(|c| c.m.kernel == kernel && c.arch == arch && c.compiler == *comp);
    let first = of.clone().next();
    of.find(|c| is_published(c.m)).or(first)
}

/// "+12%" of `new` against `old`.
fn rel(new: u32, old: u32) -> String {
    if old == 0 {
        return "-".into();
    }
    format!("{:+.0}%", (f64::from(new) / f64::from(old) - 1.0) * 100.0)
}

// ---------------------------------------------------------------------------
// Compilers across architectures

pub(crate) fn atlas(ctx: &mut Ctx) -> Result<Section> {
    let offline = ctx.data.offline();
    let mut sec = Section::default();
    if offline.is_empty() {
        return Ok(sec);
    }
    sec.title = ATLAS.to_string();
    let mut s = format!("## {ATLAS}\n\n");
    let recs: Vec<Rec> = offline
        .iter()
        .copied()
        .filter(|r| r.m.experiment == ATLAS_EXPERIMENT)
        .collect();
    if recs.is_empty() {
        let _ = writeln!(
            s,
            "No atlas rows (experiment \"{ATLAS_EXPERIMENT}\") in these results: {ATLAS_HINT}. \
             The offline rows here come from sweeps: see \"{SWEEPS}\" and \"{KEPLER}\".\n"
        );
        sec.markdown = s;
        return Ok(sec);
    }
    let (cells, lost) = cells(&recs);
    let archs = archs_of(&cells);
    let comps = compilers_of(&cells);
    let kernels = kernels_of(&cells);
    let span = |c: &Compiler| -> String {
        let a: Vec<&str> = archs
            .iter()
            .filter(|a| cells.iter().any(|x| x.compiler == *c && x.arch == **a))
            .map(String::as_str)
            .collect();
        match a.as_slice() {
            [] => "none".into(),
            [one] => (*one).to_string(),
            [first, .., last] => format!("{first} to {last}, {} architectures", a.len()),
        }
    };
    let _ = writeln!(
        s,
        "{} rows of `gemmlab atlas`: {} kernel{} at {} published defaults, compiled for {} architecture{} by {} compiler{} \
         ({}). Registers, spills and stack are what ptxas reported; occupancy follows from the architecture's rules. \
         **Nothing was run, checked or timed: no number here is a speed.** \"-\": that compiler does not target that architecture.\n",
        recs.len(),
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        if kernels.len() == 1 { "its" } else { "their" },
        archs.len(),
        if archs.len() == 1 { "" } else { "s" },
        comps.len(),
        if comps.len() == 1 { "" } else { "s" },
        comps
            .iter()
            .map(|c| format!("{}: {}", c.name, span(c)))
            .collect::<Vec<_>>()
            .join("; ")
    );
    if lost > 0 {
        let _ = writeln!(
            s,
            "{lost} atlas row{} left out: no architecture or compiler could be read from {}.\n",
            if lost == 1 { " is" } else { "s are" },
            if lost == 1 { "it" } else { "them" }
        );
    }
    s.push_str(&opencl_origin(&cells, &comps));
    let refused = refusals(&cells);

    // The overview: each kernel at each architecture with the newest NVRTC for it.
    let newest: Vec<(String, Option<Compiler>)> = archs
        .iter()
        .map(|a| {
            let c = comps
                .iter()
                .filter(|c| !c.opencl && cells.iter().any(|x| x.compiler == **c && x.arch == *a))
                .max_by(|x, y| x.version.cmp(&y.version))
                .cloned();
            (a.clone(), c)
        })
        .collect();
    let _ = writeln!(
        s,
        "### Overview: every kernel with the newest NVRTC for each architecture\n"
    );
    let mut header = vec!["kernel".to_string()];
    for (a, c) in &newest {
        header.push(match c {
            Some(c) => format!("{a} ({})", c.name.trim_start_matches("NVRTC ")),
            None => a.clone(),
        });
    }
    let mut rows = Vec::new();
    let mut overview = Panel::new(
        "",
        XAxis::Categories(archs.clone()),
        "architecture",
        "registers per thread",
    );
    overview.integer_y = true;
    let mut legend = Vec::new();
    for (ki, k) in kernels.iter().enumerate() {
        let mut row = vec![k.clone()];
        let mut points = Vec::new();
        for (i, (a, c)) in newest.iter().enumerate() {
            let cell = c.as_ref().and_then(|c| find_cell(&cells, k, a, c));
            row.push(cell.map_or("-".into(), |c| regs_text(c.m)));
            points.push((
                i as f64,
                cell.and_then(|c| data::registers(c.m)).map(f64::from),
            ));
        }
        rows.push(row);
        let st = Style::new(k.clone(), KERNEL_COLORS[ki % KERNEL_COLORS.len()]).line();
        legend.push(st.clone());
        overview.lines.push(Line { style: st, points });
    }
    s.push_str("Registers per thread (spill bytes where ptxas spilled); the column names the NVRTC used.\n\n");
    s.push_str(&md::table(&header, &rows));
    s.push('\n');
    let fig = Figure {
        title: "Registers of every kernel, newest NVRTC per architecture (offline)".into(),
        legend,
        panels: vec![overview],
        cols: 1,
        panel_w: (70 * archs.len() as u32).clamp(800, 1300),
        panel_h: 480,
    };
    let overview_chart = ctx.chart(
        &fig,
        "offline-overview",
        "registers of every kernel against architecture, newest NVRTC for each",
    )?;
    s.push_str(&overview_chart.markdown);

    // Per kernel: a chart and a table.
    let mut kernel_charts: Vec<(String, String)> = Vec::new();
    for k in &kernels {
        let _ = writeln!(s, "### {k}\n");
        let kcells: Vec<&Cell> = cells.iter().filter(|c| c.m.kernel == *k).collect();
        let kcomps: Vec<Compiler> = comps
            .iter()
            .filter(|c| kcells.iter().any(|x| x.compiler == **c))
            .cloned()
            .collect();
        let any_spill = kcells
            .iter()
            .any(|c| data::spill_bytes(c.m).is_some_and(|b| b > 0));
        let mut regs = Panel::new(
            "registers per thread",
            XAxis::Categories(archs.clone()),
            "architecture",
            "registers",
        );
        regs.integer_y = true;
        let mut spill = Panel::new(
            "spill bytes (stores + loads)",
            XAxis::Categories(archs.clone()),
            "architecture",
            "bytes",
        );
        spill.integer_y = true;
        let mut legend = Vec::new();
        for c in &kcomps {
            let mut st = Style::new(c.name.clone(), compiler_color(c, &comps)).line();
            if c.opencl {
                st = st.dashed();
            }
            legend.push(st.clone());
            let at = |f: &dyn Fn(&Measurement) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
                archs
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (i as f64, find_cell(&cells, k, a, c).and_then(|x| f(x.m))))
                    .collect()
            };
            regs.lines.push(Line {
                style: st.clone(),
                points: at(&|m| data::registers(m).map(f64::from)),
            });
            spill.lines.push(Line {
                style: st,
                points: at(&|m| data::spill_bytes(m).map(|b| b as f64)),
            });
        }
        let (panels, cols, title) = if any_spill {
            (
                vec![regs, spill],
                2,
                format!("{k}: registers and spills per architecture and compiler (offline)"),
            )
        } else {
            (
                vec![regs],
                1,
                format!(
                    "{k}: registers per architecture and compiler (offline; no spills anywhere)"
                ),
            )
        };
        let fig = Figure {
            title,
            legend,
            panels,
            cols,
            panel_w: if cols == 1 { 900 } else { 640 },
            panel_h: 420,
        };
        let chart = ctx.chart(
            &fig,
            &format!("offline-{k}"),
            &format!("{k}: registers against architecture, one line per compiler"),
        )?;
        s.push_str(&chart.markdown);
        kernel_charts.push((k.clone(), chart.svg.clone()));

        let mut header = vec!["architecture".to_string()];
        header.extend(kcomps.iter().map(|c| c.name.clone()));
        let mut rows = Vec::new();
        let mut why = Vec::new();
        for a in &archs {
            let mut row = vec![a.clone()];
            for c in &kcomps {
                let cell = find_cell(&cells, k, a, c);
                row.push(cell_text(cell));
                if let Some(x) = cell.filter(|x| x.m.resources.is_none()) {
                    if let Some(r) = x.m.status.reason() {
                        why.push(format!("{a}, {}: {}", c.name, quote_first_line(r)));
                    }
                }
            }
            rows.push(row);
        }
        s.push_str("Cells: registers / spill bytes (stores + loads) / occupancy.\n\n");
        s.push_str(&md::table(&header, &rows));
        if !why.is_empty() {
            s.push_str("\nWhy some cells have no registers:\n\n");
            for w in why {
                let _ = writeln!(s, "- {w}");
            }
        }
        s.push('\n');
        if let Some(f) = kernel_finding(k, &cells, &archs, &kcomps) {
            sec.findings.push(f.chart(Some(chart.svg)));
        }
    }
    let chart_of = |k: &str| {
        kernel_charts
            .iter()
            .find(|(x, _)| x == k)
            .map(|(_, p)| p.clone())
    };
    if let Some(f) = generation_finding(&cells, &kernels, &archs, &comps) {
        let k = f.1.clone();
        sec.findings.push(f.0.chart(chart_of(&k)));
    }
    if let Some(f) = arch_finding(&cells, &kernels, &archs, &comps) {
        let k = f.1.clone();
        sec.findings.push(f.0.chart(chart_of(&k)));
    }
    if let Some(f) = front_end_finding(&cells, &kernels, &archs, &comps) {
        let k = f.1.clone();
        sec.findings.push(f.0.chart(chart_of(&k)));
    }
    sec.findings
        .push(spill_finding(&cells, &archs, &comps).chart(Some(overview_chart.svg.clone())));
    if let Some(f) = refused {
        sec.findings.push(f);
    }
    sec.markdown = s;
    Ok(sec)
}

/// The first line of a reason, quoted.
fn quote_first_line(r: &str) -> String {
    format!("\"{}\"", md::escape(&md::short_reason(r)))
}

/// Where OpenCL's PTX came from and how it was adapted for each ptxas.
fn opencl_origin(cells: &[Cell], comps: &[Compiler]) -> String {
    let mut s = String::new();
    let ocl: Vec<&Compiler> = comps.iter().filter(|c| c.opencl).collect();
    if ocl.is_empty() {
        return s;
    }
    let mut origins: Vec<String> = Vec::new();
    for c in cells.iter().filter(|c| c.compiler.opencl) {
        for n in &c.m.build_notes {
            if let Some(o) = n.strip_prefix("PTX from ") {
                // One origin per run and driver, not per kernel listing.
                let short = o.split_whitespace().next().unwrap_or(o).to_string();
                let driver = o.find('(').map(|i| o[i..].to_string()).unwrap_or_default();
                let line = format!("{short} {driver}").trim().to_string();
                if !origins.contains(&line) {
                    origins.push(line);
                }
            }
        }
    }
    let _ = writeln!(
        s,
        "The OpenCL rows are NVIDIA OpenCL's PTX{} (NVIDIA's OpenCL compiler needs its device), assembled offline by the ptxas of a CUDA release \
         for each architecture it targets. How the PTX was adapted:\n",
        if origins.is_empty() {
            String::new()
        } else {
            format!(", captured on a GPU ({})", origins.join("; "))
        }
    );
    for c in ocl {
        let rows: Vec<&Cell> = cells.iter().filter(|x| x.compiler == *c).collect();
        let mut changes: Vec<(String, usize)> = Vec::new();
        for x in &rows {
            let mut seen = Vec::new();
            for n in &x.m.build_notes {
                let n = n.trim();
                let key = if let Some(rest) = n.strip_prefix(".target ") {
                    let from = rest.split("->").next().unwrap_or("").trim();
                    format!(".target {from} -> the architecture")
                } else if n.starts_with(".version ") {
                    n.to_string()
                } else {
                    continue;
                };
                if !seen.contains(&key) {
                    seen.push(key.clone());
                    match changes.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, count)) => *count += 1,
                        None => changes.push((key, 1)),
                    }
                }
            }
        }
        let what = if changes.is_empty() {
            "used as captured (no change noted)".to_string()
        } else {
            changes
                .iter()
                .map(|(k, n)| format!("`{k}` ({n} of {} rows)", rows.len()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(s, "- {}: {what}", c.name);
    }
    s.push('\n');
    s
}

/// The rows a compiler could not build, with the first line of its log.
fn refusals(cells: &[Cell]) -> Option<Shown> {
    let bad: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.m.resources.is_none() && !matches!(c.m.status, Status::Ok))
        .filter(|c| !matches!(c.m.status, Status::Unavailable(_)))
        .collect();
    if bad.is_empty() {
        return None;
    }
    let mut by: Vec<(String, Vec<&Cell>)> = Vec::new();
    for c in &bad {
        match by.iter_mut().find(|(n, _)| *n == c.compiler.name) {
            Some((_, v)) => v.push(c),
            None => by.push((c.compiler.name.clone(), vec![c])),
        }
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(n, v)| {
            let total = cells.iter().filter(|c| c.compiler.name == *n).count();
            let archs: Vec<String> = {
                let mut a: Vec<String> = Vec::new();
                for c in v {
                    if !a.contains(&c.arch) {
                        a.push(c.arch.clone());
                    }
                }
                a.sort_by(|x, y| arch_order(x, y));
                a
            };
            let first = v[0];
            format!(
                "{n} built {} of {total} (on {}); e.g. {} for {}: {}",
                total - v.len(),
                archs.join(", "),
                first.m.kernel,
                first.arch,
                first
                    .m
                    .status
                    .reason()
                    .map_or_else(|| first.m.status.label().to_string(), quote_first_line)
            )
        })
        .collect();
    let text = format!(
        "**Rows the compiler refused** ({} of {}): {}.",
        bad.len(),
        cells.len(),
        parts.join("; ")
    );
    let (n, v) = &by[0];
    let first = v[0];
    let short = format!(
        "{n} refused {} of the atlas's rows, e.g. {} for {}: {}.",
        v.len(),
        first.m.kernel,
        first.arch,
        first.m.status.reason().map_or_else(
            || first.m.status.label().to_string(),
            |r| md::short_reason(r).trim_end_matches('.').to_string()
        )
    );
    Some(
        Shown::legacy(Topic::Offline, text, ATLAS)
            .short(short)
            .weight(bad.len() as f64 / cells.len().max(1) as f64),
    )
}

/// Per kernel: each compiler's registers at its first and last architecture,
/// its range, and the spills.
fn kernel_finding(k: &str, cells: &[Cell], archs: &[String], comps: &[Compiler]) -> Option<Shown> {
    let mut parts = Vec::new();
    for c in comps {
        let at = registers_along(cells, k, archs, c);
        let (Some(first), Some(last)) = (at.first(), at.last()) else {
            continue;
        };
        let mut p = if at.len() == 1 {
            format!("{} gives {} registers on {}", c.name, first.1, first.0)
        } else {
            format!(
                "{} gives {} registers on {} and {} on {}",
                c.name, first.1, first.0, last.1, last.0
            )
        };
        let lo = at.iter().min_by_key(|x| x.1).map_or(first.1, |x| x.1);
        let hi = at.iter().max_by_key(|x| x.1).map_or(first.1, |x| x.1);
        if at.len() > 2 && (lo < first.1.min(last.1) || hi > first.1.max(last.1)) {
            let _ = write!(p, " ({lo} to {hi} over {} architectures)", at.len());
        }
        parts.push(p);
    }
    if parts.is_empty() {
        return None;
    }
    let spills: Vec<String> = cells
        .iter()
        .filter(|c| c.m.kernel == k)
        .filter_map(|c| {
            data::spill_bytes(c.m)
                .filter(|b| *b > 0)
                .map(|b| format!("{b} B on {} with {}", c.arch, c.compiler.name))
        })
        .collect();
    let spill = if spills.is_empty() {
        "no spills with any compiler".to_string()
    } else {
        format!("spills: {}", spills.join(", "))
    };
    Some(Shown::legacy(
        Topic::Offline,
        format!(
            "**{k} across architectures** (published defaults, offline): {}; {spill}.",
            parts.join("; ")
        ),
        ATLAS,
    ))
}

/// The largest change of registers between two NVRTC generations on the same
/// architecture. Returns the finding and its kernel.
fn generation_finding(
    cells: &[Cell],
    kernels: &[String],
    archs: &[String],
    comps: &[Compiler],
) -> Option<(Shown, String)> {
    let nvrtc: Vec<&Compiler> = comps.iter().filter(|c| !c.opencl).collect();
    if nvrtc.len() < 2 {
        return None;
    }
    // (|change|, kernel, arch, older, newer, old regs, new regs)
    type Change<'x> = (
        f64,
        &'x String,
        &'x String,
        &'x Compiler,
        &'x Compiler,
        u32,
        u32,
    );
    let mut best: Option<Change> = None;
    let mut pairs = 0;
    let mut differ = 0;
    for k in kernels {
        for a in archs {
            let at: Vec<(&Compiler, u32)> = nvrtc
                .iter()
                .filter_map(|c| registers_at(cells, k, a, c).map(|r| (*c, r)))
                .collect();
            for w in at.windows(2) {
                let ((c0, r0), (c1, r1)) = (w[0], w[1]);
                pairs += 1;
                if r0 != r1 {
                    differ += 1;
                }
                let ch = (f64::from(r1) / f64::from(r0.max(1)) - 1.0).abs();
                if r0 != r1 && best.is_none_or(|b| ch > b.0) {
                    best = Some((ch, k, a, c0, c1, r0, r1));
                }
            }
        }
    }
    if pairs == 0 {
        return None;
    }
    let Some((ch, k, a, c0, c1, r0, r1)) = best else {
        let text = format!(
            "**NVRTC generations on the same architecture**: all {pairs} pairs of consecutive NVRTC versions give the same registers."
        );
        let short = format!(
            "Consecutive NVRTC versions give the same registers in all {pairs} (kernel, architecture) pairs the atlas has."
        );
        return Some((
            Shown::legacy(Topic::Offline, text, ATLAS).short(short),
            kernels.first().cloned().unwrap_or_default(),
        ));
    };
    let text = format!(
        "**Largest change between NVRTC generations on the same architecture**: {k} on {a}, {r0} registers with {} and {r1} with {} ({}). \
         Consecutive NVRTC versions give different registers in {differ} of {pairs} (kernel, architecture) pairs.",
        c0.name,
        c1.name,
        rel(r1, r0)
    );
    let short = format!(
        "The largest register change between NVRTC generations on one architecture is {k} on {a}: {r0} with {} and {r1} with {} ({}).",
        c0.name,
        c1.name,
        rel(r1, r0)
    );
    Some((
        Shown::legacy(Topic::Offline, text, ATLAS)
            .short(short)
            .weight(ch),
        k.clone(),
    ))
}

/// The largest spread of registers across architectures with one compiler.
fn arch_finding(
    cells: &[Cell],
    kernels: &[String],
    archs: &[String],
    comps: &[Compiler],
) -> Option<(Shown, String)> {
    // (spread, kernel, compiler, (arch, regs) low, (arch, regs) high)
    type Spread<'x> = (
        f64,
        &'x String,
        &'x Compiler,
        (&'x String, u32),
        (&'x String, u32),
    );
    let mut best: Option<Spread> = None;
    for k in kernels {
        for c in comps {
            let at = registers_along(cells, k, archs, c);
            let (Some(lo), Some(hi)) = (
                at.iter().min_by_key(|x| x.1).copied(),
                at.iter().max_by_key(|x| x.1).copied(),
            ) else {
                continue;
            };
            let spread = f64::from(hi.1) / f64::from(lo.1.max(1)) - 1.0;
            if hi.1 > lo.1 && best.as_ref().is_none_or(|b| spread > b.0) {
                best = Some((spread, k, c, lo, hi));
            }
        }
    }
    let (spread, k, c, lo, hi) = best?;
    let text = format!(
        "**Largest spread across architectures with one compiler**: {k} with {}, from {} registers on {} to {} on {} ({:+.0}%): the same source and compiler, a different back end per architecture.",
        c.name,
        lo.1,
        lo.0,
        hi.1,
        hi.0,
        spread * 100.0
    );
    let short = format!(
        "With one compiler the same kernel's registers vary most for {k} with {}: {} on {} to {} on {}.",
        c.name, lo.1, lo.0, hi.1, hi.0
    );
    Some((
        Shown::legacy(Topic::Offline, text, ATLAS)
            .short(short)
            .weight(spread),
        k.clone(),
    ))
}

/// OpenCL's front end against NVRTC of the same CUDA release on the same architecture.
fn front_end_finding(
    cells: &[Cell],
    kernels: &[String],
    archs: &[String],
    comps: &[Compiler],
) -> Option<(Shown, String)> {
    let mut fewer = 0;
    let mut more = 0;
    let mut same = 0;
    // (|change|, kernel, arch, nvrtc, opencl, nvrtc regs, opencl regs)
    let mut best: Option<(f64, &String, &String, &Compiler, &Compiler, u32, u32)> = None;
    for o in comps.iter().filter(|c| c.opencl) {
        let Some(n) = comps
            .iter()
            .find(|c| !c.opencl && c.release().is_some() && c.release() == o.release())
        else {
            continue;
        };
        for k in kernels {
            for a in archs {
                let (Some(rn), Some(ro)) = (
                    find_cell(cells, k, a, n).and_then(|x| data::registers(x.m)),
                    find_cell(cells, k, a, o).and_then(|x| data::registers(x.m)),
                ) else {
                    continue;
                };
                match ro.cmp(&rn) {
                    std::cmp::Ordering::Less => fewer += 1,
                    std::cmp::Ordering::Greater => more += 1,
                    std::cmp::Ordering::Equal => same += 1,
                }
                let ch = (f64::from(ro) / f64::from(rn.max(1)) - 1.0).abs();
                if ro != rn && best.is_none_or(|b| ch > b.0) {
                    best = Some((ch, k, a, n, o, rn, ro));
                }
            }
        }
    }
    let total = fewer + more + same;
    if total == 0 {
        return None;
    }
    let counts = format!(
        "OpenCL's PTX needs fewer registers than NVRTC's in {fewer}, more in {more} and the same in {same} of {total} (kernel, architecture) pairs"
    );
    let Some((ch, k, a, n, o, rn, ro)) = best else {
        let text = format!("**OpenCL's front end against NVRTC, same ptxas release**: {counts}.");
        return Some((
            Shown::legacy(Topic::Offline, text, ATLAS)
                .short(format!("Assembled by the same CUDA release's ptxas, OpenCL's PTX and NVRTC give the same registers in all {total} (kernel, architecture) pairs.")),
            kernels.first().cloned().unwrap_or_default(),
        ));
    };
    let text = format!(
        "**OpenCL's front end against NVRTC, same CUDA release, same architecture**: {counts}. The largest difference: {k} on {a}, {} {rn} registers, {} {ro} ({}).",
        n.name,
        o.name,
        rel(ro, rn)
    );
    let short = format!(
        "Through the same release's ptxas, OpenCL's PTX differs most from NVRTC's for {k} on {a}: {ro} registers against {rn} with {}.",
        n.name
    );
    Some((
        Shown::legacy(Topic::Offline, text, ATLAS)
            .short(short)
            .weight(ch),
        k.clone(),
    ))
}

fn spill_finding(cells: &[Cell], archs: &[String], comps: &[Compiler]) -> Shown {
    let with_report: Vec<&Cell> = cells
        .iter()
        .filter(|c| data::spill_bytes(c.m).is_some())
        .collect();
    let spilling: Vec<&Cell> = with_report
        .iter()
        .copied()
        .filter(|c| data::spill_bytes(c.m).is_some_and(|b| b > 0))
        .collect();
    if spilling.is_empty() {
        let text = format!(
            "**Where spills appear**: nowhere. No kernel spills at its published defaults on any of {} architectures with any of {} compilers ({} rows with a ptxas report).",
            archs.len(),
            comps.len(),
            with_report.len()
        );
        let short = format!(
            "No kernel spills at its published defaults on any of {} architectures with any of {} compilers ({} rows).",
            archs.len(),
            comps.len(),
            with_report.len()
        );
        return Shown::legacy(Topic::Offline, text, ATLAS).short(short);
    }
    let items: Vec<String> = spilling
        .iter()
        .map(|c| {
            format!(
                "{} on {} with {} ({} registers, {} B)",
                c.m.kernel,
                c.arch,
                c.compiler.name,
                data::registers(c.m).map_or("?".into(), |r| r.to_string()),
                data::spill_bytes(c.m).unwrap_or(0)
            )
        })
        .collect();
    let worst = spilling
        .iter()
        .max_by_key(|c| data::spill_bytes(c.m).unwrap_or(0))
        .copied();
    let text = format!(
        "**Where spills appear** ({} of {} rows): {}.",
        spilling.len(),
        with_report.len(),
        items.join("; ")
    );
    let short = match worst {
        Some(w) => format!(
            "{} of {} atlas rows spill at the published defaults, most {} on {} with {} ({} B).",
            spilling.len(),
            with_report.len(),
            w.m.kernel,
            w.arch,
            w.compiler.name,
            data::spill_bytes(w.m).unwrap_or(0)
        ),
        None => format!("{} atlas rows spill.", spilling.len()),
    };
    Shown::legacy(Topic::Offline, text, ATLAS)
        .short(short)
        .weight(spilling.len() as f64 / with_report.len().max(1) as f64)
}

// ---------------------------------------------------------------------------
// Kepler

/// Rows compiled for sm_35 by NVRTC 11.8.
fn kepler_cells<'a>(offline: &[Rec<'a>]) -> Vec<Cell<'a>> {
    cells(offline)
        .0
        .into_iter()
        .filter(|c| c.arch == KEPLER_ARCH && c.compiler.is_kepler_nvrtc())
        .collect()
}

fn experiment_rows<'c, 'a>(cells: &'c [Cell<'a>], exp: &str) -> Vec<&'c Cell<'a>> {
    cells.iter().filter(|c| c.m.experiment == exp).collect()
}

fn of_experiment(exp: &str) -> &str {
    match exp {
        ATLAS_EXPERIMENT => "the atlas",
        "hints" => "the hints sweep's baseline",
        "registers" => "the register sweep's uncapped point",
        "tiling" => "the tiling sweep",
        other => other,
    }
}

pub(crate) fn kepler(ctx: &mut Ctx) -> Result<Section> {
    let offline = ctx.data.offline();
    let mut sec = Section::default();
    if offline.is_empty() {
        return Ok(sec);
    }
    let cells = kepler_cells(&offline);
    sec.title = KEPLER.to_string();
    let mut s = format!("## {KEPLER}\n\n");
    let count = |exp: &str| cells.iter().filter(|c| c.m.experiment == exp).count();
    let _ = writeln!(
        s,
        "The tutorial tuned its kernels on a Tesla K40 (compute capability 3.5). NVRTC 11.8 is the last NVRTC that compiles for it. \
         These answers come from the rows compiled offline for {KEPLER_ARCH} with NVRTC 11.8 ({} in all: {} from the atlas, {} from the register sweep, \
         {} from the hints sweep, {} from the tiling sweep). Registers, spills and occupancy are real; \
         **nothing was run, so no claim about speed can be checked here.**\n",
        cells.len(),
        count(ATLAS_EXPERIMENT),
        count("registers"),
        count("hints"),
        count("tiling"),
    );
    let limits = limits_of(KEPLER_ARCH);
    kernel6_registers(&mut s, &mut sec, &cells, limits.as_ref());
    volatile(&mut s, &mut sec, &cells);
    caps(&mut s, &mut sec, &cells);
    tiles(&mut s, &mut sec, &cells, &offline);
    sec.markdown = s;
    Ok(sec)
}

/// Kernel 6 at its published defaults: the atlas's row, else the hints sweep's
/// baseline, else the register sweep's uncapped point.
fn published_row<'c, 'a>(cells: &'c [Cell<'a>], kernel: &str) -> Option<&'c Cell<'a>> {
    let of = |exp: &str| {
        cells.iter().find(|c| {
            c.m.kernel == kernel
                && c.m.experiment == exp
                && is_published(c.m)
                && c.m.resources.is_some()
        })
    };
    of(ATLAS_EXPERIMENT)
        .or_else(|| of("hints"))
        .or_else(|| of("registers"))
        .or_else(|| {
            cells
                .iter()
                .find(|c| c.m.kernel == kernel && is_published(c.m) && c.m.resources.is_some())
        })
}

fn kernel6_registers(s: &mut String, sec: &mut Section, cells: &[Cell], limits: Option<&Limits>) {
    let _ = writeln!(
        s,
        "### Kernel 6: registers against the lower bound of 73 and the limit of 128\n"
    );
    let Some(row) = published_row(cells, "gemm6") else {
        let _ = writeln!(
            s,
            "No row of kernel 6 at its published defaults for {KEPLER_ARCH} with NVRTC 11.8 here. \
             `{HINTS_CMD} --kernels 6` produces one (its baseline), and so does the atlas: {ATLAS_HINT}.\n"
        );
        return;
    };
    let Some(regs) = data::registers(row.m) else {
        return;
    };
    let threads = threads_of(row.m);
    let config = row.m.config.describe();
    let mut t = format!(
        "Kernel 6 ({}{}) takes **{regs} registers** per thread on {KEPLER_ARCH} with NVRTC 11.8 (from {}; {} B of shared memory, {} B of spills). ",
        if config.is_empty() { "published defaults".to_string() } else { config },
        threads.map_or(String::new(), |t| format!(": {t} threads per work-group")),
        of_experiment(&row.m.experiment),
        row.m
            .resources
            .as_ref()
            .and_then(|r| r.shared_bytes)
            .map_or("?".into(), |b| b.to_string()),
        data::spill_bytes(row.m).map_or("?".into(), |b| b.to_string())
    );
    let others: Vec<(u32, &str)> = cells
        .iter()
        .filter(|c| c.m.kernel == "gemm6" && is_published(c.m) && !std::ptr::eq(c.m, row.m))
        .filter_map(|c| data::registers(c.m).map(|r| (r, of_experiment(&c.m.experiment))))
        .collect();
    if !others.is_empty() {
        let names: Vec<String> = others.iter().map(|(_, e)| e.to_string()).collect();
        if others.iter().all(|(r, _)| *r == regs) {
            let _ = write!(
                t,
                "{} give{} the same {regs}. ",
                md::join_and(&names),
                if names.len() == 1 { "s" } else { "" }
            );
        } else {
            let each: Vec<String> = others.iter().map(|(r, e)| format!("{r} in {e}")).collect();
            let _ = write!(
                t,
                "Other rows of the published kernel differ: {}. ",
                md::join_and(&each)
            );
        }
    }
    let _ = write!(
        t,
        "Against the tutorial's lower bound of {TUTORIAL_LOWER_BOUND}: {} ({:.2}x). ",
        match regs.cmp(&TUTORIAL_LOWER_BOUND) {
            std::cmp::Ordering::Greater => format!("{} more", regs - TUTORIAL_LOWER_BOUND),
            std::cmp::Ordering::Less => format!("{} fewer", TUTORIAL_LOWER_BOUND - regs),
            std::cmp::Ordering::Equal => "exactly it".to_string(),
        },
        f64::from(regs) / f64::from(TUTORIAL_LOWER_BOUND)
    );
    let mut short = format!(
        "On {KEPLER_ARCH} with NVRTC 11.8, kernel 6 takes {regs} registers, {} the tutorial's lower bound of {TUTORIAL_LOWER_BOUND}",
        if regs >= TUTORIAL_LOWER_BOUND { "above" } else { "below" }
    );
    if let (Some(l), Some(threads)) = (limits, threads) {
        let two = registers_for_blocks(l, threads, 2);
        let occ = occupancy_detail(row.m, KEPLER_ARCH);
        if let Some(two) = two {
            let _ = write!(
                t,
                "Against the limit for two {threads}-thread work-groups per SM: compute capability 3.5 has {} registers per SM, so two work-groups fit with at most **{two}** registers per thread ({} / (2 x {threads}), allocated per warp in units of {}); {regs} is {}. ",
                l.registers,
                l.registers,
                l.register_unit,
                match regs.cmp(&two) {
                    std::cmp::Ordering::Greater => format!("{} over it, so only one work-group fits", regs - two),
                    std::cmp::Ordering::Less => format!("{} under it", two - regs),
                    std::cmp::Ordering::Equal => "exactly at it".to_string(),
                }
            );
            let _ = write!(
                short,
                " and {} the {two} that fit two {threads}-thread work-groups per SM",
                if regs <= two { "within" } else { "over" }
            );
        }
        if let Some(o) = occ {
            let _ = write!(t, "Occupancy that follows: **{}**.", o.describe());
            let _ = write!(short, " (occupancy {:.0}%)", o.fraction * 100.0);
            // What a third work-group would need.
            let shared = row
                .m
                .resources
                .as_ref()
                .and_then(|r| r.shared_bytes)
                .unwrap_or(0);
            if let Some(three) = registers_for_blocks(l, threads, 3) {
                let smem_ok = u32::try_from(shared)
                    .ok()
                    .and_then(|sh| occupancy::occupancy(l, threads, 1, sh))
                    .is_some_and(|x| x.blocks_per_sm >= 3);
                let _ = write!(
                    t,
                    " A third work-group would need at most {three} registers per thread{}.",
                    if smem_ok {
                        String::new()
                    } else {
                        format!(
                            ", and its shared memory would not fit anyway (3 x {shared} B > {} B per SM)",
                            l.shared_bytes
                        )
                    }
                );
            }
        }
    }
    t.push('\n');
    s.push_str(&t);
    s.push('\n');
    short.push('.');
    sec.findings.push(
        Shown::legacy(
            Topic::Kepler,
            format!("**Kernel 6 on {KEPLER_ARCH} (NVRTC 11.8)**: {}", t.trim()),
            KEPLER,
        )
        .short(short)
        .weight(f64::from(regs.abs_diff(TUTORIAL_LOWER_BOUND)) / f64::from(TUTORIAL_LOWER_BOUND)),
    );
}

fn point_name(m: &Measurement) -> String {
    m.label.clone().unwrap_or_else(|| m.hints.describe(true))
}

fn is_volatile(m: &Measurement) -> bool {
    m.hints.switches.get("VOLATILE_IDX") == Some(&true)
        && m.hints.switches.len() == 1
        && !m.hints.fast_math
        && m.hints.max_registers.is_none()
}

fn volatile(s: &mut String, sec: &mut Section, cells: &[Cell]) {
    let _ = writeln!(s, "### What `VOLATILE_IDX=1` does (hints sweep)\n");
    let hints = experiment_rows(cells, "hints");
    let base_of = |k: &str| {
        hints
            .iter()
            .copied()
            .find(|c| c.m.kernel == k && is_published(c.m))
    };
    let vol_of = |k: &str| {
        hints
            .iter()
            .copied()
            .find(|c| c.m.kernel == k && is_volatile(c.m))
    };
    let (Some(base), Some(vol)) = (base_of("gemm6"), vol_of("gemm6")) else {
        let _ = writeln!(
            s,
            "The hints sweep for {KEPLER_ARCH} with NVRTC 11.8 {} kernel 6's baseline and its `VOLATILE_IDX=1` point: `{HINTS_CMD} --kernels 6` produces them.\n",
            if hints.is_empty() { "is not in these results, so there is no" } else { "lacks" }
        );
        return;
    };
    let _ = writeln!(
        s,
        "The tutorial made kernel 6's index variable `volatile` to stop the compiler hoisting index arithmetic into registers. \
         Every point of kernel 6's hints sweep, one switch at a time against the published kernel:\n"
    );
    let b_regs = data::registers(base.m);
    let mut rows = Vec::new();
    for c in hints.iter().filter(|c| c.m.kernel == "gemm6") {
        let r = data::registers(c.m);
        rows.push(vec![
            point_name(c.m),
            c.m.hints.describe(true),
            md::registers(Some(c.m)),
            match (r, b_regs) {
                (Some(r), Some(b)) if !std::ptr::eq(c.m, base.m) => {
                    format!("{:+}", i64::from(r) - i64::from(b))
                }
                _ => "-".into(),
            },
            md::spills(Some(c.m)),
            occupancy_detail(c.m, KEPLER_ARCH)
                .map_or_else(|| md::occupancy(Some(c.m)), |o| o.describe()),
        ]);
    }
    s.push_str(&md::table(
        &md::h(&[
            "point",
            "hints",
            "registers",
            "change",
            "spill st/ld B",
            "occupancy",
        ]),
        &rows,
    ));
    s.push('\n');
    let (Some(b), Some(v)) = (b_regs, data::registers(vol.m)) else {
        return;
    };
    let occ = |m: &Measurement| occupancy_detail(m, KEPLER_ARCH);
    let occ_text = match (occ(base.m), occ(vol.m)) {
        (Some(x), Some(y)) if x.blocks_per_sm == y.blocks_per_sm => format!(
            "occupancy stays {:.0}% ({} work-group{} per SM)",
            y.fraction * 100.0,
            y.blocks_per_sm,
            if y.blocks_per_sm == 1 { "" } else { "s" }
        ),
        (Some(x), Some(y)) => format!(
            "occupancy {:.0}% -> {:.0}% ({} -> {} work-groups per SM)",
            x.fraction * 100.0,
            y.fraction * 100.0,
            x.blocks_per_sm,
            y.blocks_per_sm
        ),
        _ => "occupancy unknown".to_string(),
    };
    let spill = match data::spill_bytes(vol.m) {
        Some(0) => "no spills".to_string(),
        Some(x) => format!("{x} B of spills"),
        None => "spills unknown".to_string(),
    };
    let others: Vec<String> = {
        let mut k: Vec<String> = Vec::new();
        for c in &hints {
            if c.m.kernel != "gemm6" && is_volatile(c.m) && !k.contains(&c.m.kernel) {
                k.push(c.m.kernel.clone());
            }
        }
        k.sort_by(|a, b| kernel_order(a, b));
        k.iter()
            .filter_map(|k| {
                let b = base_of(k).and_then(|c| data::registers(c.m))?;
                let v = vol_of(k).and_then(|c| data::registers(c.m))?;
                Some(format!("{k} {b} -> {v}"))
            })
            .collect()
    };
    let verb = match v.cmp(&b) {
        std::cmp::Ordering::Less => format!(
            "takes kernel 6 from {b} to {v} registers ({:+})",
            i64::from(v) - i64::from(b)
        ),
        std::cmp::Ordering::Greater => format!(
            "raises kernel 6 from {b} to {v} registers ({:+})",
            i64::from(v) - i64::from(b)
        ),
        std::cmp::Ordering::Equal => format!("leaves kernel 6 at {b} registers"),
    };
    let mut text = format!(
        "**`VOLATILE_IDX=1` on {KEPLER_ARCH} (NVRTC 11.8)**: it {verb}, with {spill}; {occ_text}."
    );
    if !others.is_empty() {
        let _ = write!(
            text,
            " On the other kernels that have the switch: {}.",
            others.join(", ")
        );
    }
    s.push_str(&text);
    s.push_str("\n\n");
    sec.findings.push(
        Shown::legacy(Topic::Kepler, text, KEPLER)
            .short(format!(
                "On {KEPLER_ARCH} with NVRTC 11.8, `VOLATILE_IDX=1` {verb}, with {spill}; {occ_text}."
            ))
            .weight(f64::from(b.abs_diff(v)) / f64::from(b.max(1))),
    );
}

fn cap_label(c: Option<u32>) -> String {
    c.map_or("none".into(), |c| c.to_string())
}

fn caps(s: &mut String, sec: &mut Section, cells: &[Cell]) {
    let _ = writeln!(
        s,
        "### Register caps: what 127 does, and every cap of the register sweep\n"
    );
    let sweep: Vec<&Cell> = experiment_rows(cells, "registers")
        .into_iter()
        .filter(|c| c.m.kernel == "gemm6" && c.m.hints.switches.is_empty() && !c.m.hints.fast_math)
        .collect();
    if sweep.is_empty() {
        let _ = writeln!(
            s,
            "No register sweep of kernel 6 for {KEPLER_ARCH} with NVRTC 11.8 in these results: `{REGISTERS_CMD} --kernels 6` produces it.\n"
        );
        return;
    }
    let mut caps: Vec<Option<u32>> = Vec::new();
    for c in &sweep {
        let cap = data::register_cap(c.m);
        if !caps.contains(&cap) {
            caps.push(cap);
        }
    }
    // Uncapped first, then from the highest cap down.
    caps.sort_by_key(|c| std::cmp::Reverse(c.unwrap_or(u32::MAX)));
    let at = |cap: Option<u32>| {
        sweep
            .iter()
            .copied()
            .find(|c| data::register_cap(c.m) == cap)
    };
    let mut rows = Vec::new();
    for &cap in &caps {
        let Some(c) = at(cap) else { continue };
        let mut regs = md::registers(Some(c.m));
        if let (Some(cap), Some(u)) = (cap, data::registers(c.m)) {
            if u > cap {
                regs.push_str(" (above cap)");
            }
        }
        rows.push(vec![
            cap_label(cap),
            regs,
            md::spills(Some(c.m)),
            md::stack(Some(c.m)),
            occupancy_detail(c.m, KEPLER_ARCH)
                .map_or_else(|| md::occupancy(Some(c.m)), |o| o.describe()),
        ]);
    }
    let _ = writeln!(
        s,
        "Kernel 6, published, with each cap of the sweep (`--maxrregcount`):\n"
    );
    s.push_str(&md::table(
        &md::h(&[
            "cap asked",
            "registers",
            "spill st/ld B",
            "stack B",
            "occupancy",
        ]),
        &rows,
    ));
    s.push('\n');
    let uncapped = at(None).and_then(|c| data::registers(c.m));
    // Spills: the highest cap that spills.
    let first_spill = caps
        .iter()
        .filter_map(|&cap| cap.and_then(|_| at(cap)).map(|c| (cap, c)))
        .find(|(_, c)| data::spill_bytes(c.m).is_some_and(|b| b > 0));
    let spill_text = match first_spill {
        Some((cap, c)) => format!(
            "spills start at cap {} ({} B stores + loads, {} registers)",
            cap_label(cap),
            data::spill_bytes(c.m).unwrap_or(0),
            md::registers(Some(c.m))
        ),
        None => format!(
            "no cap down to {} spills",
            cap_label(caps.iter().rev().find(|c| c.is_some()).copied().flatten())
        ),
    };
    // Caps above the uncapped count that change the allocation anyway.
    let moved: Vec<String> = match uncapped {
        Some(u) => caps
            .iter()
            .filter_map(|&cap| {
                let c = at(cap)?;
                let r = data::registers(c.m)?;
                (cap.is_some_and(|x| x > u) && r != u)
                    .then(|| format!("cap {} -> {r}", cap_label(cap)))
            })
            .collect(),
        None => Vec::new(),
    };
    let Some(c127) = at(Some(CAP_127)) else {
        let text = format!(
            "**Register caps on kernel 6, {KEPLER_ARCH} (NVRTC 11.8)**: the sweep has no cap of {CAP_127}; {spill_text}. `{REGISTERS_CMD} --kernels 6` adds it."
        );
        let _ = writeln!(s, "{text}\n");
        sec.findings
            .push(Shown::legacy(Topic::Kepler, text, KEPLER));
        return;
    };
    let r127 = data::registers(c127.m);
    let b127 = data::spill_bytes(c127.m);
    let o127 = occupancy_detail(c127.m, KEPLER_ARCH);
    let o_none = at(None).and_then(|c| occupancy_detail(c.m, KEPLER_ARCH));
    let what = format!(
        "a cap of {CAP_127} gives {} registers ({}), {}, occupancy {}",
        r127.map_or("?".into(), |r| r.to_string()),
        match uncapped {
            Some(u) => format!("{u} without a cap"),
            None => "no uncapped point".to_string(),
        },
        match b127 {
            Some(0) => "no spills".to_string(),
            Some(b) => format!("{b} B of spills"),
            None => "spills unknown".to_string(),
        },
        match (o127, o_none) {
            (Some(x), Some(y)) if x.blocks_per_sm == y.blocks_per_sm => {
                format!("{:.0}% as without a cap", x.fraction * 100.0)
            }
            (Some(x), Some(y)) => format!(
                "{:.0}% against {:.0}% without a cap",
                x.fraction * 100.0,
                y.fraction * 100.0
            ),
            (Some(x), None) => format!("{:.0}%", x.fraction * 100.0),
            _ => "unknown".to_string(),
        }
    );
    let mut text =
        format!("**Register caps on kernel 6, {KEPLER_ARCH} (NVRTC 11.8)**: {what}; {spill_text}.");
    if !moved.is_empty() {
        let _ = write!(
            text,
            " Caps above the {} registers it takes without one still change the allocation: {}.",
            uncapped.unwrap_or(0),
            moved.join(", ")
        );
    }
    let _ = writeln!(s, "{text}\n");
    let mut short = format!("On {KEPLER_ARCH} with NVRTC 11.8, {what} for kernel 6");
    let _ = write!(short, "; {spill_text}.");
    sec.findings.push(
        Shown::legacy(Topic::Kepler, text, KEPLER)
            .short(short)
            .weight(b127.map_or(0.0, |b| if b > 0 { 1.0 } else { 0.0 })),
    );
}

fn tiles(s: &mut String, sec: &mut Section, cells: &[Cell], offline: &[Rec]) {
    let _ = writeln!(
        s,
        "### Kernel 11: the 8x4 tile against 4x4 (tiling sweep)\n"
    );
    let sweep: Vec<&Cell> = experiment_rows(cells, "tiling")
        .into_iter()
        .filter(|c| c.m.kernel == "gemm11" && tile_of(c.m).is_some())
        .collect();
    let at = |t: (i64, i64)| sweep.iter().copied().find(|c| tile_of(c.m) == Some(t));
    let (Some(t84), Some(t44)) = (at((8, 4)), at((4, 4))) else {
        let _ = writeln!(
            s,
            "The tiling sweep for {KEPLER_ARCH} with NVRTC 11.8 {} kernel 11's 8x4 and 4x4 tiles: `{TILING_CMD}` produces them.\n",
            if sweep.is_empty() { "is not in these results, so there are no" } else { "lacks" }
        );
        return;
    };
    let mut tiles: Vec<(i64, i64)> = sweep.iter().filter_map(|c| tile_of(c.m)).collect();
    tiles.sort();
    tiles.dedup();
    let rows: Vec<Vec<String>> = tiles
        .iter()
        .filter_map(|&t| at(t))
        .map(|c| {
            let (rx, ry) = tile_of(c.m).unwrap_or((0, 0));
            vec![
                rx.to_string(),
                ry.to_string(),
                data::config_value(c.m, "RK").map_or("-".into(), |v| v.to_string()),
                md::registers(Some(c.m)),
                md::spills(Some(c.m)),
                occupancy_detail(c.m, KEPLER_ARCH)
                    .map_or_else(|| md::occupancy(Some(c.m)), |o| o.describe()),
            ]
        })
        .collect();
    let _ = writeln!(
        s,
        "On the K40 the tutorial's clBlas-style 8x4 tile ran well in OpenCL but at about 300 GFLOPS in CUDA, and a 4x4 tile relieved \
         the CUDA compiler's register pressure. **Speed cannot be measured offline**; what the compiler does with each tile can:\n"
    );
    s.push_str(&md::table(
        &md::h(&["RX", "RY", "RK", "registers", "spill st/ld B", "occupancy"]),
        &rows,
    ));
    s.push('\n');
    let describe = |c: &Cell| -> String {
        format!(
            "{} registers, {}, occupancy {}",
            md::registers(Some(c.m)),
            match data::spill_bytes(c.m) {
                Some(0) => "no spills".to_string(),
                Some(b) => format!("{b} B of spills"),
                None => "spills unknown".to_string(),
            },
            occupancy_detail(c.m, KEPLER_ARCH)
                .map_or_else(|| md::occupancy(Some(c.m)), |o| o.describe())
        )
    };
    let mut text = format!(
        "**Kernel 11's tiles on {KEPLER_ARCH} (NVRTC 11.8)**: 8x4 {}; 4x4 {}.",
        describe(t84),
        describe(t44)
    );
    // OpenCL's 8x4 (the published tile) through the same release's ptxas, from the atlas.
    let all = cells_all(offline);
    let ocl = all.iter().find(|c| {
        c.m.kernel == "gemm11"
            && c.arch == KEPLER_ARCH
            && c.compiler.opencl
            && c.compiler.version.starts_with(&KEPLER_NVRTC)
            && is_published(c.m)
            && c.m.resources.is_some()
    });
    if let Some(o) = ocl {
        let _ = write!(
            text,
            " OpenCL's 8x4 (its PTX assembled by {} for {KEPLER_ARCH}, from the atlas): {}.",
            o.compiler.name.trim_start_matches("OpenCL PTX + "),
            describe(o)
        );
    }
    text.push_str(
        " Whether 8x4 is slow in CUDA on Kepler needs a Kepler GPU to time: nothing here was run.",
    );
    let _ = writeln!(s, "{text}\n");
    let (r84, r44) = (data::registers(t84.m), data::registers(t44.m));
    let o = |c: &Cell| occupancy_detail(c.m, KEPLER_ARCH).map(|o| o.fraction);
    let short = format!(
        "On {KEPLER_ARCH} with NVRTC 11.8, kernel 11's 8x4 tile takes {} registers ({} occupancy) and 4x4 {} ({}); speed needs a Kepler GPU.",
        r84.map_or("?".into(), |r| r.to_string()),
        pct(o(t84)),
        r44.map_or("?".into(), |r| r.to_string()),
        pct(o(t44)),
    );
    let weight = match (r84, r44) {
        (Some(a), Some(b)) => f64::from(a.abs_diff(b)) / f64::from(b.max(1)),
        _ => 0.0,
    };
    sec.findings.push(
        Shown::legacy(Topic::Kepler, text, KEPLER)
            .short(short)
            .weight(weight),
    );
}

fn cells_all<'a>(offline: &[Rec<'a>]) -> Vec<Cell<'a>> {
    cells(offline).0
}

// ---------------------------------------------------------------------------
// Offline sweeps

pub(crate) fn sweeps(ctx: &mut Ctx) -> Result<Section> {
    let offline = ctx.data.offline();
    let mut sec = Section::default();
    let recs: Vec<Rec> = offline
        .iter()
        .copied()
        .filter(|r| r.m.experiment != ATLAS_EXPERIMENT)
        .collect();
    if recs.is_empty() {
        return Ok(sec);
    }
    let (cells, lost) = cells(&recs);
    sec.title = SWEEPS.to_string();
    let mut s = format!("## {SWEEPS}\n\n");
    let _ = writeln!(
        s,
        "Every point of the sweeps run with `--arch` (compiled with NVRTC for an architecture, no device): \
         registers, spills and occupancy per point; nothing was run, checked or timed. \
         The sweep sections with speeds hold only sweeps run on a device.\n"
    );
    if lost > 0 {
        let _ = writeln!(
            s,
            "{lost} offline row{} left out: no architecture or compiler could be read from {}.\n",
            if lost == 1 { " is" } else { "s are" },
            if lost == 1 { "it" } else { "them" }
        );
    }
    // (experiment, arch, compiler) groups, sweeps in their usual order.
    let rank = |e: &str| match e {
        "registers" => 0,
        "tiling" => 1,
        "hints" => 2,
        _ => 3,
    };
    let mut groups: Vec<(String, String, Compiler)> = Vec::new();
    for c in &cells {
        let g = (c.m.experiment.clone(), c.arch.clone(), c.compiler.clone());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups.sort_by(|a, b| {
        rank(&a.0)
            .cmp(&rank(&b.0))
            .then_with(|| a.0.cmp(&b.0))
            .then_with(|| arch_order(&a.1, &b.1))
            .then_with(|| Compiler::order(&a.2, &b.2))
    });
    for (exp, arch, comp) in groups {
        let g: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.m.experiment == exp && c.arch == arch && c.compiler == comp)
            .collect();
        let _ = writeln!(s, "### {exp} sweep, {arch}, {}\n", comp.name);
        if exp == "registers" {
            s.push_str(&register_grid(&g));
        } else {
            s.push_str(&point_table(&g));
        }
        s.push('\n');
    }
    sec.markdown = s;
    Ok(sec)
}

/// Rows: kernel (with its switches), columns: caps, uncapped first.
fn register_grid(g: &[&Cell]) -> String {
    let mut caps: Vec<Option<u32>> = Vec::new();
    let mut series: Vec<(String, String)> = Vec::new();
    for c in g {
        let cap = data::register_cap(c.m);
        if !caps.contains(&cap) {
            caps.push(cap);
        }
        let k = (c.m.kernel.clone(), c.m.hints.describe(false));
        if !series.contains(&k) {
            series.push(k);
        }
    }
    caps.sort_by_key(|c| std::cmp::Reverse(c.unwrap_or(u32::MAX)));
    series.sort_by(|a, b| kernel_order(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    let mut header = vec!["kernel".to_string()];
    header.extend(caps.iter().map(|c| format!("cap {}", cap_label(*c))));
    let rows: Vec<Vec<String>> = series
        .iter()
        .map(|(k, sw)| {
            let mut row = vec![if sw == "published" {
                k.clone()
            } else {
                format!("{k} ({sw})")
            }];
            for &cap in &caps {
                let c = g.iter().find(|c| {
                    c.m.kernel == *k
                        && c.m.hints.describe(false) == *sw
                        && data::register_cap(c.m) == cap
                });
                row.push(c.map_or("-".into(), |c| {
                    let mut t = regs_text(c.m);
                    if let (Some(cap), Some(u)) = (cap, data::registers(c.m)) {
                        if u > cap {
                            t.push_str(" (above cap)");
                        }
                    }
                    t
                }));
            }
            row
        })
        .collect();
    let mut s = String::from("Registers per thread at each cap asked (`--maxrregcount`), spill bytes (stores + loads) where ptxas spilled.\n\n");
    s.push_str(&md::table(&header, &rows));
    s
}

fn point_table(g: &[&Cell]) -> String {
    let mut g: Vec<&&Cell> = g.iter().collect();
    g.sort_by(|a, b| kernel_order(&a.m.kernel, &b.m.kernel));
    let rows: Vec<Vec<String>> = g
        .iter()
        .map(|c| {
            vec![
                c.m.kernel.clone(),
                point_name(c.m),
                if c.m.resources.is_some() {
                    md::registers(Some(c.m))
                } else {
                    status_word(c.m)
                },
                md::spills(Some(c.m)),
                md::stack(Some(c.m)),
                md::shared(Some(c.m)),
                occupancy_detail(c.m, &c.arch)
                    .map_or_else(|| md::occupancy(Some(c.m)), |o| o.describe()),
            ]
        })
        .collect();
    md::table(
        &md::h(&[
            "kernel",
            "point",
            "registers",
            "spill st/ld B",
            "stack B",
            "shared B",
            "occupancy",
        ]),
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_limits_of_compute_capability_3_5() {
        let l = limits_of("sm_35").unwrap();
        // The tutorial's numbers: two 256-thread work-groups need at most 128 registers.
        assert_eq!(registers_for_blocks(&l, 256, 2), Some(128));
        assert_eq!(registers_for_blocks(&l, 256, 1), Some(255));
        // 3 x 8 warps x ceil(r * 32 / 256) * 256 <= 65536: r = 80 fits, 88 does not.
        let three = registers_for_blocks(&l, 256, 3).unwrap();
        assert!((80..88).contains(&three), "{three}");
        assert_eq!(compute_capability("sm_120"), Some((12, 0)));
        assert_eq!(compute_capability("sm_90a"), Some((9, 0)));
        assert_eq!(compute_capability("gfx90a"), None);
    }

    #[test]
    fn compilers_are_read_from_labels_or_notes() {
        let mut m = crate::experiment::failed_row(
            "atlas",
            "sm_35 (no device)",
            "offline:sm_35",
            Toolchain::OpenCl,
            "gemm6",
            Status::Unavailable(
                "no device: NVIDIA OpenCL's PTX assembled offline for sm_35 by ptxas 11.8; not run"
                    .into(),
            ),
            (0, 0, 0),
        );
        m.compiler = Some("NVIDIA OpenCL PTX + ptxas 11.8".into());
        let c = Compiler::of(&m).unwrap();
        assert_eq!(c.name, "OpenCL PTX + ptxas 11.8");
        assert!(c.opencl);
        assert_eq!(c.release(), Some((11, 8)));
        m.compiler = None;
        assert_eq!(Compiler::of(&m).unwrap().name, "OpenCL PTX + ptxas 11.8");
        m.toolchain = Toolchain::Cuda;
        m.status = Status::Unavailable(
            "no device: compiled offline for sm_35 with NVRTC 12.9; not run, checked or timed"
                .into(),
        );
        let c = Compiler::of(&m).unwrap();
        assert_eq!(c.name, "NVRTC 12.9");
        assert!(!c.is_kepler_nvrtc());
        m.compiler = Some("NVRTC 11.8".into());
        assert!(Compiler::of(&m).unwrap().is_kepler_nvrtc());
        m.status = Status::Unavailable("no reason that names one".into());
        m.compiler = None;
        assert!(Compiler::of(&m).is_none());
    }
}
