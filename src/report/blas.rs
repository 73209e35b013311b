//! Calls other than the tutorial's C = A * B in f32: a table per call against cuBLAS, a chart.

use std::fmt::Write as _;

use crate::analysis::blas::{Blas, Kind};
use crate::error::Result;
use crate::results::Measurement;

use super::data::{self, is_vendor, toolchain_name as name};
use super::{md, Ctx, Section, Words};
use crate::plot::Figure;

pub const BLAS: &str = "Other BLAS calls: double precision, layouts, transposes, alpha and beta";

type Column = (&'static str, fn(&&Measurement) -> String);

/// cuBLAS's rows (the baseline) after the kernels'.
const COLUMNS: [Column; 8] = [
    ("size", |m| m.size_label()),
    ("kernel", |m| match is_vendor(m) {
        true => "cuBLAS".into(),
        false => m.kernel.clone(),
    }),
    ("toolchain", |m| match is_vendor(m) {
        true => "cuda".into(),
        false => name(m.toolchain).into(),
    }),
    ("GFLOP/s", |m| match m.status.is_ok() {
        true => data::gflops(m).map_or(md::MISSING.into(), md::speed),
        false => m.status.label().into(),
    }),
    ("x cuBLAS", |m| match is_vendor(m) {
        true => "1.000".into(),
        false => data::vs_vendor(m).map_or(md::MISSING.into(), |v| format!("{v:.3}")),
    }),
    ("registers", |m| vendorless(m, data::registers(m))),
    ("pre us", |m| {
        vendorless(m, m.pre_ns.map(|v| v as f64 / 1e3))
    }),
    ("post us", |m| {
        vendorless(m, m.post_ns.map(|v| v as f64 / 1e3))
    }),
];

/// A kernel's value, whole; "-" for cuBLAS and where there is none.
fn vendorless<T: Into<f64>>(m: &Measurement, v: Option<T>) -> String {
    (v.filter(|_| !is_vendor(m))).map_or(md::MISSING.into(), |v| format!("{:.0}", v.into()))
}

pub(crate) fn section(ctx: &mut Ctx, a: &Blas) -> Result<Section> {
    let mut s = format!(
        "## {BLAS}\n\nEach row is one kernel on one call: its median kernel time as GFLOP/s (2MNK) and as a \
         ratio to cuBLAS (SGEMM or DGEMM with the same arguments, same run). Packing and transposes \
         before and after are timed apart, in microseconds.\n\n"
    );
    for c in &a.calls {
        let rows: Vec<&Measurement> = c.rows.iter().chain(&c.vendor).copied().collect();
        let _ = writeln!(s, "### {}\n\n{}", c.call, md::table_of(&COLUMNS, &rows));
    }
    if !a.categories.is_empty() {
        let styles = super::compare::styles(&a.toolchains);
        let ratio = |c: &String, t| {
            let b = a.best.iter().find(|b| b.call == *c && b.toolchain == t);
            b.map(|b| b.ratio)
        };
        let values = (a.categories.iter())
            .map(|c| a.toolchains.iter().map(|t| ratio(c, *t)).collect())
            .collect();
        let (x, y) = ("call and size", "x cuBLAS (same arguments)");
        let title = "best kernel per toolchain".to_string();
        let panel = super::bar_panel(title, a.categories.clone(), x, y, &styles, values);
        let fig = Figure {
            title: "Other BLAS calls against cuBLAS".into(),
            legend: styles,
            panels: vec![panel],
            cols: 1,
            panel_w: (160 * a.categories.len() as u32).clamp(640, 1800),
            panel_h: 420,
        };
        let alt = "best ratio to cuBLAS per call";
        s.push_str(&ctx.chart(&fig, "blas-calls", alt)?);
    }
    Ok(Section::of(BLAS, s, &a.findings))
}

pub(crate) fn words(k: &Kind) -> Words {
    let Kind::Range {
        toolchain,
        low,
        high,
        kernel,
        call,
    } = k;
    let text = format!(
        "**{}: {low:.2}-{high:.2} x cuBLAS on calls other than C = A * B in f32** (best: {kernel} on {call} at {high:.3}).",
        name(*toolchain)
    );
    let short = text.clone();
    Words { text, short }
}
