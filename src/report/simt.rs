//! "The SIMT family against cuBLAS": the family at each toolchain's tuned
//! configuration (else its published defaults) next to cuBLAS and CLBlast's xgemm, per device, a chart of
//! the ratios, and Nsight Compute's view below it ([`super::simt_profile`]).

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::analysis::simt::{Cell, Configs, Kind, Simt, CHART, CLBLAST};
use crate::analysis::stats::distinct;
use crate::backend::Toolchain;
use crate::error::Result;

use super::data::{self, is_vendor, size_label, toolchain_name as name};
use super::{color, md, simt_profile, Ctx, Section, Words, VENDOR_COLOR};
use crate::plot::{Bars, Figure, Panel, RefLine, Style, XAxis};

pub const SIMT: &str = "The SIMT family against cuBLAS: where the rest goes";

/// "at its tuned configuration", or what else the rows ran.
fn configured(c: Configs) -> &'static str {
    match c {
        Configs::Tuned => "at its tuned configuration",
        Configs::Published => "at its published defaults",
        Configs::Both => {
            "at its tuned configuration where one was measured, else its published defaults"
        }
    }
}

type Column = (&'static str, fn(&&Cell) -> String);

const COLUMNS: [Column; 10] = [
    ("size", |c| size_label((c.rec.m.m, c.rec.m.n, c.rec.m.k))),
    ("toolchain", |c| name(c.rec.m.toolchain).into()),
    ("kernel", |c| c.kernel.clone()),
    ("GFLOP/s", |c| md::gflops(Some(c.rec.m))),
    ("x cuBLAS", |c| md::ratio(c.ratio, Some(1.0))),
    ("% of FP32 peak", |c| {
        data::gflops(c.rec.m).map_or(md::MISSING.into(), |_| md::pct_or_unknown(c.of_peak))
    }),
    ("registers", |c| {
        data::registers(c.rec.m).map_or(md::MISSING.into(), |r| r.to_string())
    }),
    ("occupancy", |c| md::pct(c.rec.m.occupancy)),
    ("FMA share (PTX)", |c| md::pct(c.fma_share)),
    ("configuration + switches", |c| {
        let m = c.rec.m;
        let label = m.label.as_ref().map(|l| format!(" ({l})"));
        let (params, hints) = (m.config.describe_params(), m.hints.describe(true));
        match is_vendor(m) {
            true => "cuBLAS SGEMM".into(),
            false => format!("{params}; {hints}{}", label.unwrap_or_default()),
        }
    }),
];

pub(crate) fn section(ctx: &mut Ctx, a: &Simt) -> Result<Section> {
    if a.devices.is_empty() {
        return Ok(Section::default());
    }
    let sizes: Vec<String> = a.sizes.iter().map(|s| size_label(*s)).collect();
    let sizes = md::join_and(&sizes);
    let how = match a.configs {
        Configs::Tuned => "at its own tuned configuration (`compare --tuned`)",
        Configs::Published => "at its published defaults (`compare` without `--tuned`)",
        Configs::Both => "at its own tuned configuration where `compare --tuned` measured one, else at its published defaults (the last column says which)",
    };
    let mut s = format!("## {SIMT}\n\ngemmlab's SIMT SGEMM (`simt`) on each toolchain {how}, with cuBLAS SGEMM of the same run and size (\"x cuBLAS\": median over cuBLAS's median) and CLBlast's tuned xgemm where it was measured. Sizes: {sizes}.\n\n");
    let fig = ratio_figure(a, &ctx.title_suffix());
    s += &ctx.chart(&fig, CHART, "the SIMT family against cuBLAS")?;
    for d in &a.devices {
        let rows = d
            .sizes
            .iter()
            .flat_map(|sr| sr.cells.iter().chain(&sr.vendor));
        let rows: Vec<&Cell> = rows.collect();
        let _ = writeln!(s, "### {}\n\n{}", d.name, md::table_of(&COLUMNS, &rows));
    }
    let _ = writeln!(s, "% of FP32 peak: GFLOP/s over SMs x FP32 lanes per SM x 2 x the device's reported maximum clock (`clock_mhz`); a GPU that runs slower under load is further from it than its instructions explain. FMA share (PTX): fma/mad over all instructions of the PTX listing, as written, not as executed. \"{}\": not measured or no PTX; \"{}\": a compute capability whose peak gemmlab does not know.\n", md::MISSING, md::UNKNOWN);
    if a.throttled {
        s.push_str(super::compare::THROTTLED);
    }
    if a.hints {
        let h = super::sweeps::HINTS;
        let _ = writeln!(s, "Each switch of the family moved one at a time from the tuned configuration: [{h}](#{}).\n", md::anchor(h));
    }
    s.push_str(&simt_profile::markdown(&a.profile));
    Ok(Section::of(SIMT, s, &a.findings))
}

/// Every device a panel, the bars each kernel's and toolchain's ratio to
/// cuBLAS per size (CLBlast's in a lighter shade), a line at 1.
fn ratio_figure(a: &Simt, suffix: &str) -> Figure {
    let best = match a.configs {
        Configs::Tuned => "at its tuned best",
        Configs::Published => "at its published defaults",
        Configs::Both => "tuned where measured",
    };
    let sizes = a.devices.iter().flat_map(|d| &d.sizes);
    let cells = sizes.flat_map(|sr| &sr.cells);
    let mut series = distinct(cells.map(|c| (c.kernel.as_str(), c.toolchain)));
    // The family first, CUDA before OpenCL as everywhere in the report.
    let tc_order = |t: &Toolchain| Toolchain::ALL.iter().position(|x| x == t);
    series.sort_by_key(|(k, t)| (*k == CLBLAST, *k, tc_order(t)));
    let light = |c: RGBColor| {
        let mix = |v: u8| ((u16::from(v) + 255) / 2) as u8;
        RGBColor(mix(c.0), mix(c.1), mix(c.2))
    };
    let styles: Vec<Style> = (series.iter())
        .map(|&(k, t)| {
            let c = color(t);
            let c = if k == CLBLAST { light(c) } else { c };
            Style::new(format!("{k} {}", name(t)), c)
        })
        .collect();
    let panels: Vec<Panel> = (a.devices.iter())
        .map(|d| {
            let cats = d.sizes.iter().map(|r| size_label(r.size)).collect();
            // Per size, per series: the ratio, and its label (the status where it has none).
            let (values, notes) = (d.sizes.iter())
                .map(|sr| {
                    let bar = |&(k, t): &(&str, Toolchain)| {
                        let c = sr.cells.iter().find(|c| c.kernel == k && c.toolchain == t);
                        let v = c.and_then(|c| data::vs_vendor(c.rec.m));
                        let status = c.map(|c| c.rec.m.status.label().to_string());
                        (v, v.map(|x| md::ratio(Some(x), Some(1.0))).or(status))
                    };
                    series.iter().map(bar).unzip()
                })
                .unzip();
            let title = if a.devices.len() > 1 { d.name } else { "" };
            let mut p = Panel::new(title, XAxis::Categories(cats), "size", "x cuBLAS (median)");
            p.bars = Some(Bars {
                styles: styles.clone(),
                values,
                notes,
            });
            let (label, y, color) = ("cuBLAS".into(), 1.0, VENDOR_COLOR);
            p.refs.push(RefLine { label, y, color });
            p
        })
        .collect();
    let mut legend = styles;
    legend.push(Style::new("cuBLAS = 1", VENDOR_COLOR).dashed());
    let width = 90 * a.sizes.len() as u32 * series.len().max(1) as u32 / 2;
    Figure {
        title: format!("The SIMT family {best}, against cuBLAS{suffix}"),
        legend,
        cols: panels.len().min(2),
        panels,
        panel_w: width.clamp(640, 1400),
        panel_h: 420,
    }
}

pub(crate) fn words(k: &Kind) -> Words {
    let on = |d: &Option<String>| d.as_ref().map_or(String::new(), |d| format!(" on {d}"));
    let x = |v: f64| md::times(Some(v));
    let (text, short) = match k {
        Kind::SimtVsCublas {
            kernel,
            toolchain,
            device,
            ratios,
            configuration,
        } => {
            let parts: Vec<String> = (ratios.iter())
                .map(|(s, r)| format!("{} cuBLAS at {}", x(*r), size_label(*s)))
                .collect();
            let (tc, on, parts) = (name(*toolchain), on(device), md::join_and(&parts));
            (
                format!(
                    "**{tc} {kernel}{on}** {}: {parts} (cuBLAS SGEMM in the same run).",
                    configured(*configuration)
                ),
                format!("{tc} {kernel}{on} reaches {parts}."),
            )
        }
        Kind::SimtFurthest {
            device,
            size,
            ratio,
            toolchain,
            closest_size,
            closest,
        } => {
            let (on, size, tc) = (on(device), size_label(*size), name(*toolchain));
            let head = format!("The SIMT family{on} is furthest from cuBLAS at {size}");
            let tail = format!("{} at best ({tc})", x(*ratio));
            let closest = format!("{} at {}", x(*closest), size_label(*closest_size));
            (
                format!("**{head}**: {tail}, against {closest}, its closest."),
                format!("{head}: {tail}."),
            )
        }
        Kind::NcuShares { shares } => return simt_profile::words(shares),
    };
    Words { text, short }
}
