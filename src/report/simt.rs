//! "The SIMT family against cuBLAS": the family at each toolchain's tuned
//! configuration next to cuBLAS and CLBlast's xgemm, per device, a chart of
//! the ratios, and Nsight Compute's view below it ([`super::simt_profile`]).

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::analysis::simt::{Cell, Device, Kind, Simt, CHART, CLBLAST};
use crate::backend::Toolchain;
use crate::error::Result;

use super::data::{self, is_vendor};
use super::{color, VENDOR_COLOR};
use super::{md, simt_profile, Ctx, Section, Words};
use crate::plot::{Bars, Figure, Panel, RefLine, Style, XAxis};

pub const SIMT: &str = "The SIMT family against cuBLAS: where the rest goes";

const HEAD: [&str; 10] = [
    "size",
    "toolchain",
    "kernel",
    "GFLOP/s",
    "x cuBLAS",
    "% of FP32 peak",
    "registers",
    "occupancy",
    "FMA share (PTX)",
    "configuration + switches",
];

fn table_row(size: &str, c: &Cell) -> Vec<String> {
    let m = c.rec.m;
    let configuration = if is_vendor(m) {
        "cuBLAS SGEMM".to_string()
    } else {
        let label = m
            .label
            .as_ref()
            .map_or(String::new(), |l| format!(" ({l})"));
        format!(
            "{}; {}{label}",
            m.config.describe_params(),
            m.hints.describe(true)
        )
    };
    let toolchain = if is_vendor(m) {
        "CUDA"
    } else {
        data::toolchain_name(m.toolchain)
    };
    let of_peak = match data::gflops(m) {
        None => md::MISSING.to_string(),
        Some(_) => md::pct_or_unknown(c.of_peak),
    };
    vec![
        size.to_string(),
        toolchain.into(),
        c.kernel.clone(),
        md::gflops(Some(m)),
        md::ratio(c.ratio, Some(1.0)),
        of_peak,
        md::or_missing(data::registers(m).map(|r| r.to_string()).as_deref()),
        md::pct(m.occupancy),
        md::pct(c.fma_share),
        configuration,
    ]
}

/// A lighter shade of a toolchain's colour, for CLBlast's kernel beside the family.
fn light(c: RGBColor) -> RGBColor {
    let mix = |v: u8| ((u16::from(v) + 255) / 2) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

pub(crate) fn section(ctx: &mut Ctx, a: &Simt) -> Result<Section> {
    let mut sec = Section::default();
    if a.devices.is_empty() {
        return Ok(sec);
    }
    sec.title = SIMT.to_string();
    let sizes: Vec<String> = a.sizes.iter().map(|s| data::size_label(*s)).collect();
    let mut s = format!("## {SIMT}\n\n");
    let _ = writeln!(
        s,
        "gemmlab's SIMT SGEMM (`simt`: block, warp and thread tiles, 128-bit accesses, a copy pipeline, \
         rasterised blocks, split-K) on each toolchain at its own tuned configuration (`compare --tuned`: \
         the database of bests, nearest tuned size), with cuBLAS SGEMM measured in the same run at the same \
         size and CLBlast's tuned xgemm beside it where it was measured. Sizes: {}. \"x cuBLAS\" is the \
         median speed over cuBLAS's median in that run.\n",
        md::join_and(&sizes)
    );
    let chart = ctx.chart(
        &ratio_figure(&a.devices, sizes.len(), &ctx.title_suffix()),
        CHART,
        "the SIMT family against cuBLAS",
    )?;
    sec.show(&a.findings);
    if !sec.findings.is_empty() {
        s.push_str("**In short.**\n\n");
        for f in &sec.findings {
            let _ = writeln!(s, "- {}", f.text);
        }
        s.push('\n');
    }
    s.push_str(&chart.markdown);
    for d in &a.devices {
        let _ = writeln!(s, "### {}\n", d.name);
        let mut rows = Vec::new();
        for sr in &d.sizes {
            let label = data::size_label(sr.size);
            rows.extend(
                sr.cells
                    .iter()
                    .chain(&sr.vendor)
                    .map(|c| table_row(&label, c)),
            );
        }
        let _ = writeln!(s, "{}", md::table(&md::h(&HEAD), &rows));
    }
    let _ = writeln!(
        s,
        "% of FP32 peak: GFLOP/s over SMs x FP32 lanes per SM x 2 x clock, where the clock is the device's \
         reported maximum (`clock_mhz`), so it is the fraction of the peak at that clock; a GPU that runs \
         slower under load is further from it than its instructions alone explain. FMA share (PTX): fma/mad instructions over all instructions of the kernel's \
         PTX listing, counted once each as written, not as executed. \"{}\": not measured or no PTX; \
         \"{}\": the peak of a compute capability gemmlab does not know.\n",
        md::MISSING,
        md::UNKNOWN
    );
    if a.throttled {
        s.push_str("A speed ending in T was measured while the GPU was throttled (see Clocks and throttling).\n\n");
    }
    if a.hints {
        let h = super::sweeps::HINTS;
        let _ = writeln!(
            s,
            "Each switch of the family moved one at a time from the tuned configuration: [{h}](#{}).\n",
            md::anchor(h)
        );
    }
    s.push_str(&simt_profile::markdown(&a.profile));
    sec.markdown = s;
    Ok(sec)
}

/// The chart: every device a panel, the bars each kernel's and toolchain's
/// ratio to cuBLAS per size, a line at 1.
fn ratio_figure(devices: &[Device], sizes: usize, suffix: &str) -> Figure {
    let mut series: Vec<(String, Toolchain)> = Vec::new();
    for c in devices
        .iter()
        .flat_map(|d| &d.sizes)
        .flat_map(|sr| &sr.cells)
    {
        if !series.contains(&(c.kernel.clone(), c.toolchain)) {
            series.push((c.kernel.clone(), c.toolchain));
        }
    }
    // The family first, CUDA before OpenCL as everywhere in the report.
    let tc_order = |t: &Toolchain| Toolchain::ALL.iter().position(|x| x == t);
    series.sort_by_key(|(k, t)| (k == CLBLAST, k.clone(), tc_order(t)));
    let styles: Vec<Style> = series
        .iter()
        .map(|(k, t)| {
            let c = if k == CLBLAST {
                light(color(*t))
            } else {
                color(*t)
            };
            Style::new(format!("{k} {}", data::toolchain_name(*t)), c)
        })
        .collect();
    let mut panels = Vec::new();
    for d in devices {
        let cats: Vec<String> = d.sizes.iter().map(|r| data::size_label(r.size)).collect();
        let (mut values, mut notes) = (Vec::new(), Vec::new());
        for sr in &d.sizes {
            let cells: Vec<Option<&Cell>> = series
                .iter()
                .map(|(k, t)| {
                    sr.cells
                        .iter()
                        .find(|c| &c.kernel == k && c.toolchain == *t)
                })
                .collect();
            values.push(
                cells
                    .iter()
                    .map(|c| c.and_then(|c| data::vs_vendor(c.rec.m)))
                    .collect(),
            );
            notes.push(
                cells
                    .iter()
                    .map(|c| {
                        c.map(|c| match data::vs_vendor(c.rec.m) {
                            Some(x) => md::ratio(Some(x), Some(1.0)),
                            None => c.rec.m.status.label().to_string(),
                        })
                    })
                    .collect(),
            );
        }
        let title = if devices.len() > 1 { d.name } else { "" };
        let mut p = Panel::new(title, XAxis::Categories(cats), "size", "x cuBLAS (median)");
        p.bars = Some(Bars {
            styles: styles.clone(),
            values,
            notes,
        });
        p.refs.push(RefLine {
            label: "cuBLAS".into(),
            y: 1.0,
            color: VENDOR_COLOR,
        });
        panels.push(p);
    }
    let mut legend = styles;
    legend.push(Style::new("cuBLAS = 1", VENDOR_COLOR).dashed());
    let n = panels.len();
    Figure {
        title: format!("The SIMT family at its tuned best, against cuBLAS{suffix}"),
        legend,
        panels,
        cols: n.min(2),
        panel_w: (90 * sizes as u32 * series.len().max(1) as u32 / 2).clamp(640, 1400),
        panel_h: 420,
    }
}

pub(crate) fn words(k: &Kind) -> Words {
    let on = |d: &Option<String>| d.as_ref().map_or(String::new(), |d| format!(" on {d}"));
    let at = |v: f64, size| {
        format!(
            "{} cuBLAS at {}",
            md::times(Some(v)),
            data::size_label(size)
        )
    };
    match k {
        Kind::SimtVsCublas {
            kernel,
            toolchain,
            device,
            ratios,
        } => {
            let parts: Vec<String> = ratios.iter().map(|(s, r)| at(*r, *s)).collect();
            let (tc, on, parts) = (
                data::toolchain_name(*toolchain),
                on(device),
                md::join_and(&parts),
            );
            Words {
                text: format!(
                    "**{tc} {kernel}{on}** at its tuned configuration: {parts} (cuBLAS SGEMM in the same run)."
                ),
                short: format!("{tc} {kernel}{on} reaches {parts}."),
            }
        }
        Kind::SimtFurthest {
            device,
            size,
            ratio,
            toolchain,
            closest_size,
            closest,
        } => {
            let (on, size, tc) = (
                on(device),
                data::size_label(*size),
                data::toolchain_name(*toolchain),
            );
            let v = md::times(Some(*ratio));
            Words {
                text: format!(
                    "**The SIMT family{on} is furthest from cuBLAS at {size}**: {v} at best ({tc}), \
                     against {} at {}, its closest.",
                    md::times(Some(*closest)),
                    data::size_label(*closest_size)
                ),
                short: format!("The SIMT family{on} is furthest from cuBLAS at {size}: {v} at best ({tc})."),
            }
        }
        Kind::NcuShares { shares } => simt_profile::words(shares),
    }
}
