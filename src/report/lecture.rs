//! The lecture's kernels: each variant at its best configuration per group, and one chart.

use std::fmt::Write as _;

use crate::analysis::lecture::{loads_per_fma, Group, Kind, Lecture};
use crate::analysis::stats::distinct;
use crate::error::Result;
use crate::results::Measurement;

use super::bar_panel;
use super::data::{self, toolchain_name as name};
use super::{md, Ctx, Section, Words};
use crate::plot::Figure;

pub const LECTURE: &str = "The lecture's kernels: which variant wins where";

fn short(kernel: &str) -> String {
    kernel.trim_start_matches("lecture_").to_string()
}

/// A column that reads its group too.
type Cell<'a, T> = (&'static str, &'a dyn Fn(&T) -> String);

/// A number with `d` decimals, "-" without one.
fn num(v: Option<f64>, d: usize) -> String {
    v.map_or(md::MISSING.into(), |v| format!("{v:.d$}"))
}

pub(crate) fn section(ctx: &mut Ctx, a: &Lecture) -> Result<Section> {
    let mut s = format!(
        "## {LECTURE}\n\nThe lecture's variants on the same row-major problem (transposed or padded \
         operands prepared by the pack kernel, timed apart), each at its best BLOCK_SIZE (and vector \
         width); \"x best\" is its speed over the group's fastest. Loads per FMA: global and shared \
         loads over FMAs in the kernel's PTX (static counts; no PTX from PoCL).\n\n"
    );
    for g in &a.groups {
        let top = g.ranked.first().and_then(|m| data::gflops(m));
        let top = top.unwrap_or(0.0).max(1e-9);
        let columns: [Cell<&Measurement>; 8] = [
            ("variant", &|m| short(&m.kernel)),
            ("best configuration", &|m| m.config.describe_params()),
            ("GFLOP/s", &|m| {
                data::gflops(m).map_or(md::MISSING.into(), md::speed)
            }),
            ("x best", &|m| num(data::gflops(m).map(|v| v / top), 2)),
            ("x cuBLAS", &|m| {
                num(g.vendor.zip(data::gflops(m)).map(|(v, x)| x / v), 3)
            }),
            ("registers", &|m| num(data::registers(m).map(f64::from), 0)),
            ("occupancy", &|m| {
                (m.occupancy).map_or(md::MISSING.into(), |o| format!("{:.0}%", o * 100.0))
            }),
            ("loads/FMA", &|m| num(loads_per_fma(m), 2)),
        ];
        let (tc, p, rows) = (name(g.toolchain), g.precision, &g.ranked);
        let table = md::table_of(&columns, rows);
        let _ = writeln!(s, "### {} via {tc}, {p}, {}\n\n{table}", g.device, g.size);
    }
    // A panel per device, precision and size; bars: variants x toolchains.
    let title = |g: &Group| format!("{}, {}, {}", g.device, g.precision, g.size);
    let styles = super::compare::styles(&a.toolchains);
    let panels: Vec<_> = (distinct(a.groups.iter().map(title)).into_iter())
        .map(|t| {
            let speed = |id: &str, tc| {
                let g = (a.groups.iter()).find(|g| title(g) == t && g.toolchain == tc)?;
                data::gflops(g.ranked.iter().find(|m| m.kernel == id)?)
            };
            let values = (a.variants.iter())
                .map(|id| a.toolchains.iter().map(|tc| speed(id, *tc)).collect())
                .collect();
            let cats = a.variants.iter().map(|k| short(k)).collect();
            let y = "GFLOP/s (best configuration)";
            bar_panel(t, cats, "variant", y, &styles, values)
        })
        .collect();
    if !panels.is_empty() {
        let fig = Figure {
            title: "The lecture's variants per device, precision and size".into(),
            legend: styles,
            cols: panels.len().min(2),
            panels,
            panel_w: 640,
            panel_h: 340,
        };
        s.push_str(&ctx.chart(&fig, "lecture", "the lecture's variants")?);
    }
    Ok(Section::of(LECTURE, s, &a.findings))
}

/// "The lecture on NVIDIA H200 via CUDA, f32 at 1023: **wide** wins (9669 GFLOP/s, 1.16x the next, ...)".
pub(crate) fn words(k: &Kind) -> Words {
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
    let why = [
        registers.map(|r| format!("{r} registers")),
        occupancy.map(|o| format!("{:.0}% occupancy", o * 100.0)),
        loads_per_fma.map(|l| format!("{l:.2} loads per FMA")),
    ];
    let why = (why.into_iter().flatten()).reduce(|a, b| a + ", " + &b);
    let why = why.unwrap_or_else(|| "no registers or PTX from this toolchain".into());
    let text = format!(
        "The lecture on {device} via {}, {precision} at {size}: **{}** wins ({} GFLOP/s, {over_next:.2}x the next, {}; {why}).",
        name(*toolchain),
        short(winner),
        md::speed(*gflops),
        short(next)
    );
    let short = text.clone();
    Words { text, short }
}
