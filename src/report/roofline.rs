//! "Roofline": each device's roofs and every kernel's fastest checked point,
//! one chart and one table per device.

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::analysis::roofline::{Device, Point, Roofline};
use crate::kernel::builtin::Precision;
use crate::plot::{Figure, Line, Panel, Style, XAxis};

use super::data::{self, is_vendor};
use super::{color, md, Ctx, Section, VENDOR_COLOR};
use crate::error::Result;

const TITLE: &str = "Roofline";
const ROOF_COLOR: RGBColor = RGBColor(20, 20, 20);

fn point_color(p: &Point) -> RGBColor {
    match is_vendor(p.rec.m) {
        true => VENDOR_COLOR,
        false => color(p.rec.m.toolchain),
    }
}

fn series(p: &Point) -> String {
    match is_vendor(p.rec.m) {
        true => "cuBLAS".to_string(),
        false => data::series_name(p.rec.m),
    }
}

type Column = (&'static str, fn(&Point) -> String);

const COLUMNS: [Column; 8] = [
    ("kernel", |p| p.rec.m.kernel.clone()),
    ("form", |p| data::form(p.rec.m)),
    ("toolchain", series),
    ("precision", |p| p.rec.m.precision().as_str().to_string()),
    ("size", |p| p.rec.m.size_label()),
    ("FLOP/byte", |p| md::speed(p.flop_per_byte)),
    ("GFLOP/s", |p| md::speed(p.gflops)),
    ("of the roof", |p| md::pct_or_unknown(p.of_roof())),
];

/// The x axis: powers of four from below the smallest intensity (or the ridge)
/// to above the largest.
fn x_axis(d: &Device) -> (XAxis, f64, f64) {
    let xs = d.points.iter().map(|p| p.flop_per_byte).chain(d.ridge());
    let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |(l, h), x| (l.min(x), h.max(x)));
    // Two powers of four below the ridge at least, so the bandwidth roof shows.
    let lo = lo.min(d.ridge().map_or(lo, |r| r / 16.0));
    let lo = (lo.log2() / 2.0).floor() * 2.0;
    let hi = ((hi.log2() / 2.0).ceil() * 2.0).max(lo + 2.0);
    let ticks = (0..=((hi - lo) / 2.0) as usize).map(|i| (lo + 2.0 * i as f64).exp2());
    (XAxis::Log2(ticks.collect()), lo.exp2(), hi.exp2())
}

fn roof_line(d: &Device, p: Precision, x: (f64, f64)) -> Option<Line> {
    let peak = d.peak(p)?;
    let fp = match p {
        Precision::F32 => "FP32",
        Precision::F64 => "FP64",
    };
    let name = format!("{fp} roof ({} GFLOP/s)", md::speed(peak));
    let style = match p {
        Precision::F32 => Style::new(name, ROOF_COLOR).plain(),
        Precision::F64 => Style::new(name, ROOF_COLOR).plain().dashed(),
    };
    let (l0, l1) = (x.0.log2(), x.1.log2());
    let points = (0..=64)
        .map(|i| (l0 + (l1 - l0) * f64::from(i) / 64.0).exp2())
        .map(|x| (x, d.roof(p, x)));
    Some(Line {
        style,
        points: points.collect(),
    })
}

fn chart(ctx: &mut Ctx, d: &Device) -> Result<String> {
    let (axis, x0, x1) = x_axis(d);
    let mut panel = Panel::new("", axis, "FLOP per byte (log)", "GFLOP/s (log)");
    panel.log_y = true;
    let mut legend: Vec<Style> = Vec::new();
    for p in d.precisions() {
        if let Some(l) = roof_line(d, p, (x0, x1)) {
            legend.push(l.style.clone());
            panel.lines.push(l);
        }
    }
    for p in &d.points {
        let style = Style::new(series(p), point_color(p)).line();
        if !legend.iter().any(|s| s.name == style.name) {
            legend.push(style.clone());
        }
        panel.lines.push(Line {
            style,
            points: vec![(p.flop_per_byte, Some(p.gflops))],
        });
    }
    let fig = Figure {
        title: format!("Roofline of {}", d.name),
        legend,
        panels: vec![panel],
        cols: 1,
        panel_w: 900,
        panel_h: 560,
    };
    let alt = format!(
        "each kernel's GFLOP/s against its FLOP per byte on {}",
        d.name
    );
    ctx.chart(&fig, &format!("roofline-{}", d.name), &alt)
}

/// What the roofs are made of, or why there are none.
fn roofs(d: &Device) -> String {
    let f = &d.facts;
    let Some(peak) = d.peak(Precision::F32) else {
        return format!(
            "gemmlab knows no peak for {} (a CPU, or a GPU whose FP32 lanes per SM it does not know): the points without roofs.",
            d.name
        );
    };
    let (sms, mhz) = (f.sms.unwrap_or(0), f.clock_mhz.unwrap_or(0));
    let mut s = format!(
        "FP32 FMA peak {} GFLOP/s ({sms} SMs x {} lanes x 2 x {mhz} MHz, the reported maximum clock)",
        md::speed(peak),
        (f.compute_capability).and_then(data::fp32_lanes).unwrap_or(0)
    );
    if let Some(p64) = d.peak(Precision::F64) {
        let _ = write!(s, ", FP64 {} GFLOP/s", md::speed(p64));
    }
    match (f.bandwidth_gbs, d.ridge()) {
        (Some(bw), Some(ridge)) => {
            let (bw, ridge) = (md::speed(bw), md::speed(ridge));
            let _ = write!(
                s,
                ", DRAM {bw} GB/s: the FP32 ridge is at {ridge} FLOP/byte."
            );
        }
        _ => s.push_str("; no DRAM bandwidth was recorded, so the roofs are flat."),
    }
    s
}

pub(crate) fn section(ctx: &mut Ctx, a: &Roofline) -> Result<Section> {
    let mut s = format!("## {TITLE}\n\n");
    s.push_str("Each kernel's fastest checked row per toolchain and precision, at its arithmetic intensity: a GEMM's 2mnk FLOP over the bytes it cannot avoid moving (A and B read once, C written once and read too where beta is not 0), a user kernel's FLOP over the bytes its spec states. Tensor-core kernels can pass the FMA roof.\n\n");
    for d in &a.devices {
        let _ = write!(s, "### {}\n\n{}\n\n", d.name, roofs(d));
        s.push_str(&chart(ctx, d)?);
        s.push_str(&md::table_of(&COLUMNS, &d.points));
        s.push('\n');
    }
    Ok(Section::of(TITLE, s, &[]))
}
