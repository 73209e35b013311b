//! The lecture's question, answered from data: which mix of techniques
//! (transposed operands, explicit vectors, local tiles, prefetching, wide tiles)
//! wins on which device, toolchain and precision, by how much, and why
//! (registers, occupancy, loads per FMA in the PTX).

use std::fmt::Write as _;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::gemm::problem::Precision;
use crate::kernels::Family;
use crate::results::Measurement;

use super::charts::color;
use super::charts::{Bars, Figure, Panel, Style, XAxis};
use super::data::{self, is_vendor};
use super::{md, Ctx, Section, Shown, Topic};

pub const LECTURE: &str = "The lecture's kernels: which variant wins where";

fn is_lecture(m: &Measurement) -> bool {
    crate::kernels::find(&m.kernel).is_ok_and(|k| k.family == Family::Lecture)
}

/// Static loads (global and shared) per FMA in the kernel's PTX, where there is PTX.
fn loads_per_fma(m: &Measurement) -> Option<f64> {
    let mix = m.ptx_mix.as_ref()?;
    (mix.fma > 0).then(|| f64::from(mix.ld_global_total() + mix.ld_shared) / f64::from(mix.fma))
}

/// Whole GFLOP/s on a GPU, one decimal below 100 (a CPU).
fn gflops_text(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// One group of rows: a device, a toolchain, a precision and a size.
struct Group<'a> {
    device: String,
    toolchain: Toolchain,
    precision: Precision,
    size: String,
    rows: Vec<&'a Measurement>,
    vendor: Option<f64>,
}

pub(crate) fn section(ctx: &mut Ctx) -> Result<Section> {
    let all: Vec<&Measurement> = ctx
        .data
        .measured()
        .map(|r| r.m)
        .filter(|m| m.variant.is_none() && (is_lecture(m) || is_vendor(m)))
        .collect();
    let mut sec = Section::default();
    if !all.iter().any(|m| is_lecture(m)) {
        return Ok(sec);
    }
    sec.title = LECTURE.to_string();
    let mut groups: Vec<Group> = Vec::new();
    for m in all.iter().filter(|m| is_lecture(m) && m.status.is_ok()) {
        let key = (m.device.clone(), m.toolchain, m.precision(), m.size_label());
        let g = match groups
            .iter_mut()
            .position(|g| (g.device.clone(), g.toolchain, g.precision, g.size.clone()) == key)
        {
            Some(i) => &mut groups[i],
            None => {
                let vendor = all
                    .iter()
                    .filter(|v| {
                        is_vendor(v)
                            && v.status.is_ok()
                            && v.device == key.0
                            && v.precision() == key.2
                            && v.size_label() == key.3
                    })
                    .filter_map(|v| data::gflops(v))
                    .fold(None, |a: Option<f64>, g| Some(a.map_or(g, |x| x.max(g))));
                groups.push(Group {
                    device: key.0,
                    toolchain: key.1,
                    precision: key.2,
                    size: key.3,
                    rows: Vec::new(),
                    vendor,
                });
                groups.last_mut().expect("just pushed")
            }
        };
        g.rows.push(m);
    }
    groups.sort_by(|a, b| {
        (&a.device, a.precision.define(), &a.size, a.toolchain).cmp(&(
            &b.device,
            b.precision.define(),
            &b.size,
            b.toolchain,
        ))
    });
    let mut s = format!("## {LECTURE}\n\n");
    s.push_str(
        "The lecture's variants on the same row-major problem (operands a variant reads transposed \
         or vector-padded are prepared by the pack kernel, timed apart). Each variant at its best \
         BLOCK_SIZE (and vector width) measured; \"x best\" is its speed over the group's fastest \
         variant. Loads per FMA: global and shared loads over FMA instructions in the kernel's \
         PTX (static counts; no PTX from PoCL).\n\n",
    );
    let kernel_ids: Vec<&str> = crate::kernels::all()
        .iter()
        .filter(|k| k.family == Family::Lecture)
        .map(|k| k.id)
        .collect();
    // Chart: per (device, precision, size) a panel, bars = variants x toolchains.
    let mut panels: Vec<Panel> = Vec::new();
    let toolchains = ctx.toolchains.clone();
    let mut winners: Vec<String> = Vec::new();
    for g in &groups {
        let best_of = |id: &str| -> Option<&Measurement> {
            g.rows
                .iter()
                .copied()
                .filter(|m| m.kernel == id)
                .max_by(|a, b| {
                    data::gflops(a)
                        .partial_cmp(&data::gflops(b))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
        };
        let bests: Vec<&Measurement> = kernel_ids.iter().filter_map(|id| best_of(id)).collect();
        let top = bests
            .iter()
            .filter_map(|m| data::gflops(m))
            .fold(0.0f64, f64::max);
        let _ = writeln!(
            s,
            "### {} via {}, {}, {}\n",
            g.device,
            data::toolchain_name(g.toolchain),
            g.precision,
            g.size
        );
        let mut rows = Vec::new();
        let mut ranked = bests.clone();
        ranked.sort_by(|a, b| {
            data::gflops(b)
                .partial_cmp(&data::gflops(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        for m in &ranked {
            rows.push(vec![
                m.kernel.trim_start_matches("lecture_").to_string(),
                m.config.describe_params(),
                data::gflops(m).map_or("-".into(), gflops_text),
                data::gflops(m).map_or("-".into(), |v| format!("{:.2}", v / top.max(1e-9))),
                g.vendor
                    .zip(data::gflops(m))
                    .map_or("-".into(), |(v, x)| format!("{:.3}", x / v)),
                data::registers(m).map_or("-".into(), |r| r.to_string()),
                m.occupancy
                    .map_or("-".into(), |o| format!("{:.0}%", o * 100.0)),
                loads_per_fma(m).map_or("-".into(), |l| format!("{l:.2}")),
            ]);
        }
        s.push_str(&md::table(
            &md::h(&[
                "variant",
                "best configuration",
                "GFLOP/s",
                "x best",
                "x cuBLAS",
                "registers",
                "occupancy",
                "loads/FMA",
            ]),
            &rows,
        ));
        s.push('\n');
        if let (Some(w), Some(second)) = (ranked.first(), ranked.get(1)) {
            let (gw, g2) = (
                data::gflops(w).unwrap_or(0.0),
                data::gflops(second).unwrap_or(0.0),
            );
            let mut parts = Vec::new();
            if let Some(r) = data::registers(w) {
                parts.push(format!("{r} registers"));
            }
            if let Some(o) = w.occupancy {
                parts.push(format!("{:.0}% occupancy", o * 100.0));
            }
            if let Some(l) = loads_per_fma(w) {
                parts.push(format!("{l:.2} loads per FMA"));
            }
            let why = if parts.is_empty() {
                "no registers or PTX from this toolchain".to_string()
            } else {
                parts.join(", ")
            };
            let line = format!(
                "{} via {}, {} at {}: **{}** wins ({} GFLOP/s, {:.2}x the next, {}; {})",
                g.device,
                data::toolchain_name(g.toolchain),
                g.precision,
                g.size,
                w.kernel.trim_start_matches("lecture_"),
                gflops_text(gw),
                gw / g2.max(1e-9),
                second.kernel.trim_start_matches("lecture_"),
                why
            );
            sec.findings.push(
                Shown::legacy(
                    Topic::Toolchains,
                    format!("The lecture on {line}."),
                    LECTURE,
                )
                .weight(gw / g2.max(1e-9) - 1.0),
            );
            winners.push(line);
        }
        // Panel per group, one bar per variant for this toolchain.
        let title = format!("{}, {}, {}", g.device, g.precision, g.size);
        let panel = match panels.iter_mut().position(|p| p.title == title) {
            Some(i) => &mut panels[i],
            None => {
                let mut p = Panel::new(
                    title,
                    XAxis::Categories(
                        kernel_ids
                            .iter()
                            .map(|k| k.trim_start_matches("lecture_").to_string())
                            .collect(),
                    ),
                    "variant",
                    "GFLOP/s (best configuration)",
                );
                p.bars = Some(Bars {
                    styles: toolchains
                        .iter()
                        .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
                        .collect(),
                    values: vec![vec![None; toolchains.len()]; kernel_ids.len()],
                    notes: vec![vec![None; toolchains.len()]; kernel_ids.len()],
                });
                panels.push(p);
                panels.last_mut().expect("just pushed")
            }
        };
        if let (Some(bars), Some(ti)) = (
            panel.bars.as_mut(),
            toolchains.iter().position(|t| *t == g.toolchain),
        ) {
            for (ki, id) in kernel_ids.iter().enumerate() {
                bars.values[ki][ti] = best_of(id).and_then(data::gflops);
            }
        }
    }
    if !winners.is_empty() {
        let mut w = String::from("**Winners.**\n\n");
        for line in &winners {
            let _ = writeln!(w, "- {line}");
        }
        w.push('\n');
        s.insert_str(s.find("### ").unwrap_or(s.len()), &w);
    }
    if !panels.is_empty() {
        let legend: Vec<Style> = toolchains
            .iter()
            .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
            .collect();
        let n = panels.len();
        let fig = Figure {
            title: "The lecture's variants per device, precision and size".into(),
            legend,
            panels,
            cols: n.min(2),
            panel_w: 640,
            panel_h: 340,
        };
        let chart = ctx.chart(&fig, "lecture", "the lecture's variants")?;
        s.push_str(&chart.markdown);
        for f in &mut sec.findings {
            f.chart = Some(chart.svg.clone());
        }
    }
    sec.markdown = s;
    Ok(sec)
}
