//! Calls other than the tutorial's C = A * B in f32: double precision, the
//! other layouts and transposes, alpha and beta, leading dimensions (the GEMM
//! routine's kernels, issue 12). One table per call, cuBLAS with the same
//! arguments as the baseline, and a chart of the ratios.

use std::fmt::Write as _;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::Measurement;

use super::charts::color;
use super::charts::{Bars, Figure, Panel, Style, XAxis};
use super::data::{self, is_vendor, Rec};
use super::{md, Ctx, Section, Shown, Topic};

pub const BLAS: &str = "Other BLAS calls: double precision, layouts, transposes, alpha and beta";

/// "f64 col NN alpha=1 beta=0" without the size: what groups rows into one call.
fn call_of(m: &Measurement) -> String {
    m.problem.map_or_else(String::new, |p| {
        let d = p.describe();
        let size = format!(" {}x{}x{}", p.m, p.n, p.k);
        d.replacen(&size, "", 1)
    })
}

pub(crate) fn section(ctx: &mut Ctx) -> Result<Section> {
    let recs: Vec<Rec> = ctx
        .data
        .blas_calls()
        .into_iter()
        .filter(|r| r.m.variant.is_none() && r.m.experiment != "tune")
        .collect();
    let mut sec = Section::default();
    if recs.is_empty() {
        return Ok(sec);
    }
    sec.title = BLAS.to_string();
    let mut s = format!("## {BLAS}\n\n");
    s.push_str(
        "Each row is one kernel on one call, its median kernel time as GFLOP/s (2MNK) and as a ratio \
         to cuBLAS (SGEMM or DGEMM with the same arguments) measured in the same run. Pre- and \
         post-processing (packing, transposes) are timed apart and listed in microseconds.\n\n",
    );
    let mut calls: Vec<String> = recs.iter().map(|r| call_of(r.m)).collect();
    calls.sort();
    calls.dedup();
    let toolchains = ctx.toolchains.clone();
    let mut best: Vec<(String, Toolchain, f64, String)> = Vec::new();
    for call in &calls {
        let of_call: Vec<&Measurement> = recs
            .iter()
            .map(|r| r.m)
            .filter(|m| &call_of(m) == call)
            .collect();
        let _ = writeln!(s, "### {call}\n");
        let mut rows = Vec::new();
        for m in of_call.iter().filter(|m| !is_vendor(m)) {
            let us = |ns: Option<u64>| ns.map_or("-".into(), |v| format!("{:.0}", v as f64 / 1e3));
            rows.push(vec![
                m.size_label(),
                m.kernel.clone(),
                data::toolchain_name(m.toolchain).to_string(),
                if m.status.is_ok() {
                    data::gflops(m).map_or("-".into(), |g| format!("{g:.0}"))
                } else {
                    m.status.label().to_string()
                },
                data::vs_vendor(m).map_or("-".into(), |v| format!("{v:.3}")),
                data::registers(m).map_or("-".into(), |r| r.to_string()),
                us(m.pre_ns),
                us(m.post_ns),
            ]);
            if let (Some(v), true) = (data::vs_vendor(m), m.status.is_ok()) {
                let key = format!("{call} {}", m.size_label());
                match best
                    .iter_mut()
                    .find(|(c, t, _, _)| *c == key && *t == m.toolchain)
                {
                    Some(b) if b.2 >= v => {}
                    Some(b) => *b = (key, m.toolchain, v, m.kernel.clone()),
                    None => best.push((key, m.toolchain, v, m.kernel.clone())),
                }
            }
        }
        for v in of_call.iter().filter(|m| is_vendor(m) && m.status.is_ok()) {
            rows.push(vec![
                v.size_label(),
                "cuBLAS".into(),
                "cuda".into(),
                data::gflops(v).map_or("-".into(), |g| format!("{g:.0}")),
                "1.000".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        s.push_str(&md::table(
            &md::h(&[
                "size",
                "kernel",
                "toolchain",
                "GFLOP/s",
                "x cuBLAS",
                "registers",
                "pre us",
                "post us",
            ]),
            &rows,
        ));
        s.push('\n');
    }

    // One chart: the best ratio of each toolchain per call and size.
    let mut cats: Vec<String> = best.iter().map(|b| b.0.clone()).collect();
    cats.sort();
    cats.dedup();
    if !cats.is_empty() {
        let styles: Vec<Style> = toolchains
            .iter()
            .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
            .collect();
        let values: Vec<Vec<Option<f64>>> = cats
            .iter()
            .map(|c| {
                toolchains
                    .iter()
                    .map(|t| best.iter().find(|b| &b.0 == c && b.1 == *t).map(|b| b.2))
                    .collect()
            })
            .collect();
        let notes = vec![vec![None; toolchains.len()]; cats.len()];
        let mut panel = Panel::new(
            "best kernel per toolchain",
            XAxis::Categories(cats.clone()),
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
            panel_w: (160 * cats.len() as u32).clamp(640, 1800),
            panel_h: 420,
        };
        let chart = ctx.chart(&fig, "blas-calls", "best ratio to cuBLAS per call")?;
        s.push_str(&chart.markdown);
        for t in &toolchains {
            let mine: Vec<&(String, Toolchain, f64, String)> =
                best.iter().filter(|b| b.1 == *t).collect();
            if let Some(top) = mine
                .iter()
                .max_by(|a, b| a.2.partial_cmp(&b.2).unwrap_or(std::cmp::Ordering::Equal))
            {
                let low = mine
                    .iter()
                    .min_by(|a, b| a.2.partial_cmp(&b.2).unwrap_or(std::cmp::Ordering::Equal))
                    .map_or(top.2, |l| l.2);
                let text = format!(
                    "**{}: {:.2}-{:.2} x cuBLAS on calls other than C = A * B in f32** (best: {} on {} at {:.3}).",
                    data::toolchain_name(*t),
                    low,
                    top.2,
                    top.3,
                    top.0,
                    top.2
                );
                sec.findings.push(
                    Shown::legacy(Topic::VsVendor, text.clone(), BLAS)
                        .short(text)
                        .chart(Some(chart.svg.clone()))
                        .weight(1.0 - low),
                );
            }
        }
    }
    sec.markdown = s;
    Ok(sec)
}
