//! The lecture's kernels: per device, toolchain, precision and size, each
//! variant at its best configuration, the winner and why, and one chart.

use std::fmt::Write as _;

use crate::analysis::lecture::{loads_per_fma, Kind, Lecture};
use crate::error::Result;

use super::data::{self, toolchain_name as name};
use super::{md, Ctx, Section, Words};
use crate::plot::{Bars, Figure, Panel, XAxis};

pub const LECTURE: &str = "The lecture's kernels: which variant wins where";

fn short(kernel: &str) -> String {
    kernel.trim_start_matches("lecture_").to_string()
}

pub(crate) fn section(ctx: &mut Ctx, a: &Lecture) -> Result<Section> {
    let mut s = format!("## {LECTURE}\n\n");
    s.push_str(
        "The lecture's variants on the same row-major problem (operands a variant reads transposed \
         or vector-padded are prepared by the pack kernel, timed apart). Each variant at its best \
         BLOCK_SIZE (and vector width) measured; \"x best\" is its speed over the group's fastest \
         variant. Loads per FMA: global and shared loads over FMA instructions in the kernel's \
         PTX (static counts; no PTX from PoCL).\n\n",
    );
    if !a.findings.is_empty() {
        s.push_str("**Winners.**\n\n");
        for f in &a.findings {
            let super::Kind::Lecture(k) = &f.kind else {
                continue;
            };
            let _ = writeln!(s, "- {}", line(k));
        }
        s.push('\n');
    }
    // Chart: per (device, precision, size) a panel, bars = variants x toolchains.
    let mut panels: Vec<Panel> = Vec::new();
    let nt = a.toolchains.len();
    for g in &a.groups {
        let _ = writeln!(
            s,
            "### {} via {}, {}, {}\n",
            g.device,
            name(g.toolchain),
            g.precision,
            g.size
        );
        let top = g
            .ranked
            .first()
            .and_then(|m| data::gflops(m))
            .unwrap_or(0.0);
        let rows: Vec<Vec<String>> = g
            .ranked
            .iter()
            .map(|m| {
                let speed = data::gflops(m);
                vec![
                    short(&m.kernel),
                    m.config.describe_params(),
                    speed.map_or(md::MISSING.into(), md::speed),
                    speed.map_or(md::MISSING.into(), |v| format!("{:.2}", v / top.max(1e-9))),
                    g.vendor
                        .zip(speed)
                        .map_or(md::MISSING.into(), |(v, x)| format!("{:.3}", x / v)),
                    data::registers(m).map_or(md::MISSING.into(), |r| r.to_string()),
                    m.occupancy
                        .map_or(md::MISSING.into(), |o| format!("{:.0}%", o * 100.0)),
                    loads_per_fma(m).map_or(md::MISSING.into(), |l| format!("{l:.2}")),
                ]
            })
            .collect();
        let head = [
            "variant",
            "best configuration",
            "GFLOP/s",
            "x best",
            "x cuBLAS",
            "registers",
            "occupancy",
            "loads/FMA",
        ];
        s.push_str(&md::table(&md::h(&head), &rows));
        s.push('\n');
        let title = format!("{}, {}, {}", g.device, g.precision, g.size);
        let i = panels
            .iter()
            .position(|p| p.title == title)
            .unwrap_or_else(|| {
                let cats = XAxis::Categories(a.variants.iter().map(|k| short(k)).collect());
                let mut p = Panel::new(title, cats, "variant", "GFLOP/s (best configuration)");
                p.bars = Some(Bars {
                    styles: super::compare::styles(&a.toolchains),
                    values: vec![vec![None; nt]; a.variants.len()],
                    notes: vec![vec![None; nt]; a.variants.len()],
                });
                panels.push(p);
                panels.len() - 1
            });
        if let (Some(bars), Some(ti)) = (
            panels[i].bars.as_mut(),
            a.toolchains.iter().position(|t| *t == g.toolchain),
        ) {
            for (ki, id) in a.variants.iter().enumerate() {
                bars.values[ki][ti] = g
                    .ranked
                    .iter()
                    .find(|m| m.kernel == *id)
                    .and_then(|m| data::gflops(m));
            }
        }
    }
    if !panels.is_empty() {
        let fig = Figure {
            title: "The lecture's variants per device, precision and size".into(),
            legend: super::compare::styles(&a.toolchains),
            cols: panels.len().min(2),
            panels,
            panel_w: 640,
            panel_h: 340,
        };
        s.push_str(
            &ctx.chart(&fig, "lecture", "the lecture's variants")?
                .markdown,
        );
    }
    let mut sec = Section {
        title: LECTURE.into(),
        markdown: s,
        findings: Vec::new(),
    };
    sec.show(&a.findings);
    Ok(sec)
}

/// "NVIDIA H200 via CUDA, f32 at 1023: **wide** wins (9669 GFLOP/s, 1.16x the next, ...)".
fn line(k: &Kind) -> String {
    let Kind::Winner {
        device,
        toolchain,
        precision,
        size,
        winner,
        gflops,
        next,
        over_next,
        registers,
        occupancy,
        loads_per_fma,
    } = k;
    let mut why = Vec::new();
    if let Some(r) = registers {
        why.push(format!("{r} registers"));
    }
    if let Some(o) = occupancy {
        why.push(format!("{:.0}% occupancy", o * 100.0));
    }
    if let Some(l) = loads_per_fma {
        why.push(format!("{l:.2} loads per FMA"));
    }
    let why = if why.is_empty() {
        "no registers or PTX from this toolchain".to_string()
    } else {
        why.join(", ")
    };
    format!(
        "{device} via {}, {precision} at {size}: **{}** wins ({} GFLOP/s, {over_next:.2}x the next, {}; {why})",
        name(*toolchain),
        short(winner),
        md::speed(*gflops),
        short(next)
    )
}

pub(crate) fn words(k: &Kind) -> Words {
    let text = format!("The lecture on {}.", line(k));
    Words {
        short: text.clone(),
        text,
    }
}
