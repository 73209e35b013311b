//! Calls other than the tutorial's C = A * B in f32: one table per call, cuBLAS
//! with the same arguments as the baseline, and a chart of the ratios.

use std::fmt::Write as _;

use crate::analysis::blas::{Blas, Kind};
use crate::error::Result;

use super::data::{self, toolchain_name as name};
use super::{md, Ctx, Section, Words};
use crate::plot::{Bars, Figure, Panel, XAxis};

pub const BLAS: &str = "Other BLAS calls: double precision, layouts, transposes, alpha and beta";

pub(crate) fn section(ctx: &mut Ctx, a: &Blas) -> Result<Section> {
    let mut s = format!("## {BLAS}\n\n");
    s.push_str(
        "Each row is one kernel on one call, its median kernel time as GFLOP/s (2MNK) and as a ratio \
         to cuBLAS (SGEMM or DGEMM with the same arguments) measured in the same run. Pre- and \
         post-processing (packing, transposes) are timed apart and listed in microseconds.\n\n",
    );
    let us = |ns: Option<u64>| ns.map_or(md::MISSING.into(), |v| format!("{:.0}", v as f64 / 1e3));
    let speed = |m| data::gflops(m).map_or(md::MISSING.into(), md::speed);
    for c in &a.calls {
        let _ = writeln!(s, "### {}\n", c.call);
        let mut rows: Vec<Vec<String>> = c
            .rows
            .iter()
            .map(|m| {
                vec![
                    m.size_label(),
                    m.kernel.clone(),
                    name(m.toolchain).to_string(),
                    if m.status.is_ok() {
                        speed(m)
                    } else {
                        m.status.label().to_string()
                    },
                    data::vs_vendor(m).map_or(md::MISSING.into(), |v| format!("{v:.3}")),
                    md::or_missing(data::registers(m).map(|r| r.to_string()).as_deref()),
                    us(m.pre_ns),
                    us(m.post_ns),
                ]
            })
            .collect();
        for v in &c.vendor {
            let mut row = vec![
                v.size_label(),
                "cuBLAS".into(),
                "cuda".into(),
                speed(v),
                "1.000".into(),
            ];
            row.resize(8, md::MISSING.into());
            rows.push(row);
        }
        let head = [
            "size",
            "kernel",
            "toolchain",
            "GFLOP/s",
            "x cuBLAS",
            "registers",
            "pre us",
            "post us",
        ];
        s.push_str(&md::table(&md::h(&head), &rows));
        s.push('\n');
    }
    // One chart: the best ratio of each toolchain per call and size.
    if !a.categories.is_empty() {
        let styles = super::compare::styles(&a.toolchains);
        let value = |c: &String, t| {
            a.best
                .iter()
                .find(|b| b.call == *c && b.toolchain == t)
                .map(|b| b.ratio)
        };
        let values = a
            .categories
            .iter()
            .map(|c| a.toolchains.iter().map(|t| value(c, *t)).collect())
            .collect();
        let notes = vec![vec![None; a.toolchains.len()]; a.categories.len()];
        let cats = XAxis::Categories(a.categories.clone());
        let mut panel = Panel::new(
            "best kernel per toolchain",
            cats,
            "call and size",
            "x cuBLAS (same arguments)",
        );
        panel.bars = Some(Bars {
            styles: styles.clone(),
            values,
            notes,
        });
        let fig = Figure {
            title: "Other BLAS calls against cuBLAS".into(),
            legend: styles,
            panels: vec![panel],
            cols: 1,
            panel_w: (160 * a.categories.len() as u32).clamp(640, 1800),
            panel_h: 420,
        };
        s.push_str(
            &ctx.chart(&fig, "blas-calls", "best ratio to cuBLAS per call")?
                .markdown,
        );
    }
    let mut sec = Section {
        title: BLAS.into(),
        markdown: s,
        findings: Vec::new(),
    };
    sec.show(&a.findings);
    Ok(sec)
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
    Words {
        short: text.clone(),
        text,
    }
}
