//! "The SIMT family against cuBLAS": the family at each toolchain's tuned
//! configuration next to cuBLAS and CLBlast's xgemm, per device, a chart of
//! the ratios, and Nsight Compute's view below it ([`super::simt_profile`]).

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::analysis::simt::{Cell, Device, Kind, Simt, SizeRows, CHART, CLBLAST};
use crate::analysis::stats::distinct;
use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::Measurement;

use super::data::{self, is_vendor};
use super::{color, VENDOR_COLOR};
use super::{md, simt_profile, Ctx, Section, Words};
use crate::plot::{Bars, Figure, Panel, RefLine, Style, XAxis};

pub const SIMT: &str = "The SIMT family against cuBLAS: where the rest goes";

/// A row of a device's table: the size's label and the cell.
type Row<'a> = (String, &'a Cell<'a>);

/// A column: its header, and its cell of a row.
type Column = (&'static str, fn(&Row) -> String);

const COLUMNS: [Column; 10] = [
    ("size", |(size, _)| size.clone()),
    ("toolchain", |(_, c)| match is_vendor(c.rec.m) {
        true => "CUDA".into(),
        false => data::toolchain_name(c.rec.m.toolchain).into(),
    }),
    ("kernel", |(_, c)| c.kernel.clone()),
    ("GFLOP/s", |(_, c)| md::gflops(Some(c.rec.m))),
    ("x cuBLAS", |(_, c)| md::ratio(c.ratio, Some(1.0))),
    ("% of FP32 peak", |(_, c)| {
        data::gflops(c.rec.m).map_or(md::MISSING.into(), |_| md::pct_or_unknown(c.of_peak))
    }),
    ("registers", |(_, c)| {
        data::registers(c.rec.m).map_or(md::MISSING.into(), |r| r.to_string())
    }),
    ("occupancy", |(_, c)| md::pct(c.rec.m.occupancy)),
    ("FMA share (PTX)", |(_, c)| md::pct(c.fma_share)),
    ("configuration + switches", |(_, c)| configuration(c.rec.m)),
];

fn configuration(m: &Measurement) -> String {
    if is_vendor(m) {
        return "cuBLAS SGEMM".into();
    }
    let label = m
        .label
        .as_ref()
        .map_or(String::new(), |l| format!(" ({l})"));
    let params = m.config.describe_params();
    format!("{params}; {}{label}", m.hints.describe(true))
}

/// A lighter shade of a toolchain's colour, for CLBlast's kernel beside the family.
fn light(c: RGBColor) -> RGBColor {
    let mix = |v: u8| ((u16::from(v) + 255) / 2) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

pub(crate) fn section(ctx: &mut Ctx, a: &Simt) -> Result<Section> {
    if a.devices.is_empty() {
        return Ok(Section::default());
    }
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
    let fig = ratio_figure(&a.devices, sizes.len(), &ctx.title_suffix());
    let chart = ctx.chart(&fig, CHART, "the SIMT family against cuBLAS")?;
    s.push_str(&chart.markdown);
    for d in &a.devices {
        let rows: Vec<Row> = (d.sizes.iter())
            .flat_map(|sr| {
                let cells = sr.cells.iter().chain(&sr.vendor);
                cells.map(|c| (data::size_label(sr.size), c))
            })
            .collect();
        let _ = writeln!(s, "### {}\n\n{}", d.name, md::table_of(&COLUMNS, &rows));
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
    let mut sec = Section {
        title: SIMT.to_string(),
        markdown: s,
        ..Default::default()
    };
    sec.show(&a.findings);
    Ok(sec)
}

/// The chart: every device a panel, the bars each kernel's and toolchain's
/// ratio to cuBLAS per size, a line at 1.
fn ratio_figure(devices: &[Device], sizes: usize, suffix: &str) -> Figure {
    let cells = devices
        .iter()
        .flat_map(|d| &d.sizes)
        .flat_map(|sr| &sr.cells);
    let mut series = distinct(cells.map(|c| (c.kernel.as_str(), c.toolchain)));
    // The family first, CUDA before OpenCL as everywhere in the report.
    let tc_order = |t: &Toolchain| Toolchain::ALL.iter().position(|x| x == t);
    series.sort_by_key(|(k, t)| (*k == CLBLAST, *k, tc_order(t)));
    let styles: Vec<Style> = (series.iter())
        .map(|&(k, t)| {
            let c = if k == CLBLAST {
                light(color(t))
            } else {
                color(t)
            };
            Style::new(format!("{k} {}", data::toolchain_name(t)), c)
        })
        .collect();
    // Per size, per series: the ratio, and its label (the status where it has none).
    let bar = |sr: &SizeRows, &(k, t): &(&str, Toolchain)| {
        let c = sr.cells.iter().find(|c| c.kernel == k && c.toolchain == t);
        let v = c.and_then(|c| data::vs_vendor(c.rec.m));
        let label = |c: &Cell| {
            v.map_or(c.rec.m.status.label().to_string(), |x| {
                md::ratio(Some(x), Some(1.0))
            })
        };
        (v, c.map(label))
    };
    let panels: Vec<Panel> = (devices.iter())
        .map(|d| {
            let cats = d.sizes.iter().map(|r| data::size_label(r.size)).collect();
            let (values, notes) = (d.sizes.iter())
                .map(|sr| series.iter().map(|x| bar(sr, x)).unzip())
                .unzip();
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
            p
        })
        .collect();
    let mut legend = styles;
    legend.push(Style::new("cuBLAS = 1", VENDOR_COLOR).dashed());
    Figure {
        title: format!("The SIMT family at its tuned best, against cuBLAS{suffix}"),
        legend,
        cols: panels.len().min(2),
        panels,
        panel_w: (90 * sizes as u32 * series.len().max(1) as u32 / 2).clamp(640, 1400),
        panel_h: 420,
    }
}

pub(crate) fn words(k: &Kind) -> Words {
    let on = |d: &Option<String>| d.as_ref().map_or(String::new(), |d| format!(" on {d}"));
    let x = |v: f64| md::times(Some(v));
    match k {
        Kind::SimtVsCublas {
            kernel,
            toolchain,
            device,
            ratios,
        } => {
            let parts: Vec<String> = (ratios.iter())
                .map(|(s, r)| format!("{} cuBLAS at {}", x(*r), data::size_label(*s)))
                .collect();
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
            let head = format!("The SIMT family{on} is furthest from cuBLAS at {size}");
            let tail = format!("{} at best ({tc})", x(*ratio));
            let closest = format!("{} at {}", x(*closest), data::size_label(*closest_size));
            Words {
                text: format!("**{head}**: {tail}, against {closest}, its closest."),
                short: format!("{head}: {tail}."),
            }
        }
        Kind::NcuShares { shares } => simt_profile::words(shares),
    }
}
