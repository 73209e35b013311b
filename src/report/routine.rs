//! "The routine against cuBLAS across shapes": per toolchain, what the GEMM
//! routine chose for every call of a suite and how its whole call compares
//! with cuBLAS's, a chart of the ratios, and the geometric mean.

use std::fmt::Write as _;

use crate::analysis::routine::{chart_stem, Kind, Suite, AT_VENDOR};
use crate::error::Result;

use super::data::toolchain_name as name;
use super::VENDOR_COLOR;
use super::{md, Ctx, Section, Words};
use crate::plot::{Bars, Figure, Panel, RefLine, Style, XAxis};

pub const ROUTINE: &str = "The routine against cuBLAS across shapes";

pub(crate) fn section(ctx: &mut Ctx, suites: &[Suite]) -> Result<Section> {
    if suites.is_empty() {
        return Ok(Section::default());
    }
    let mut s = format!("## {ROUTINE}\n\n");
    s.push_str(
        "`gemmlab gemm --suite FILE --out DIR`: every call of the suite through the GEMM routine as a \
         library user calls it. The routine picks the kernel and configuration per call from the \
         database `gemmlab tune --suite` wrote (by the call's shape class, layout and transposes, then \
         the nearest tuned shape). A time is the whole call: packing, the kernel and unpacking, the sum \
         of their device-event times, median of the timed calls after a checked one. cuBLAS runs with \
         the same arguments in the same run; an OpenCL routine's ratio uses the CUDA session's cuBLAS \
         time on the same GPU.\n\n",
    );
    let mut sec = Section {
        title: ROUTINE.into(),
        markdown: String::new(),
        findings: Vec::new(),
    };
    for a in suites {
        suite(ctx, &mut s, a)?;
        sec.show(&a.findings);
    }
    sec.markdown = s;
    Ok(sec)
}

/// One precision's tables, geometric means and chart.
fn suite(ctx: &mut Ctx, s: &mut String, a: &Suite) -> Result<()> {
    for r in &a.routines {
        let _ = writeln!(s, "### {}, {}\n", name(r.toolchain), a.precision);
        let rows: Vec<Vec<String>> = r
            .rows
            .iter()
            .map(|row| {
                let m = row.m;
                let us =
                    |ns: Option<f64>| ns.map_or(md::MISSING.into(), |v| format!("{:.1}", v / 1e3));
                let parts = match (m.pre_ns, m.post_ns) {
                    (Some(a), Some(b)) => format!("{:.1}", (a + b) as f64 / 1e3),
                    _ => md::MISSING.into(),
                };
                vec![
                    row.call.clone(),
                    row.class.as_str().to_string(),
                    if m.status.is_ok() {
                        crate::analysis::routine::chosen_kernel(m)
                    } else {
                        m.status.label().to_string()
                    },
                    md::or_missing(
                        Some(&configuration(m))
                            .filter(|c| !c.is_empty())
                            .map(|c| c.as_str()),
                    ),
                    us(m.time.as_ref().map(|t| t.median_ns)),
                    parts,
                    m.gflops.map_or(md::MISSING.into(), md::speed),
                    us(row.vendor_ns),
                    md::times(row.ratio),
                ]
            })
            .collect();
        let head = [
            "call",
            "class",
            "kernel",
            "configuration",
            "us",
            "packing us",
            "GFLOP/s",
            "cuBLAS us",
            "x cuBLAS",
        ];
        s.push_str(&md::table(&md::h(&head), &rows));
        match (r.geomean, &r.lowest) {
            (Some(g), Some((low, at))) => {
                let _ = writeln!(
                    s,
                    "\nGeometric mean {} over {}; lowest {} ({at}); {} at {} or above. \
                     \"packing us\" is the pre- and post-processing of the checked call.\n",
                    md::times(Some(g)),
                    md::plural(r.with_ratio, "call"),
                    md::times(Some(*low)),
                    md::plural(r.at_vendor, "call"),
                    md::times(Some(AT_VENDOR)),
                );
            }
            _ => s.push_str(
                "\nNo cuBLAS times in these runs: run the CUDA toolchain beside it (`--backends cuda,...`) for the ratios.\n\n",
            ),
        }
    }
    if a.routines.iter().any(|r| r.geomean.is_some()) {
        s.push_str(&chart(ctx, a)?);
    }
    Ok(())
}

/// The ratio to cuBLAS of each toolchain's routine per call, with 1.0 marked.
fn chart(ctx: &mut Ctx, a: &Suite) -> Result<String> {
    let toolchains: Vec<_> = a.routines.iter().map(|r| r.toolchain).collect();
    let styles = super::compare::styles(&toolchains);
    let values: Vec<Vec<Option<f64>>> = a
        .calls
        .iter()
        .map(|c| {
            a.routines
                .iter()
                .map(|r| {
                    r.rows
                        .iter()
                        .find(|row| row.call == *c)
                        .and_then(|row| row.ratio)
                })
                .collect()
        })
        .collect();
    let notes = vec![vec![None; toolchains.len()]; a.calls.len()];
    let labels = a.calls.iter().map(|c| short_call(c)).collect();
    let mut panel = Panel::new(
        "the whole call, routine's choice per call",
        XAxis::Categories(labels),
        "call (M x N x K; row-major and transposes where not column-major NN)",
        "x cuBLAS (same arguments, same run)",
    );
    panel.bars = Some(Bars {
        styles: styles.clone(),
        values,
        notes,
    });
    panel.refs.push(RefLine {
        label: "cuBLAS".into(),
        y: 1.0,
        color: VENDOR_COLOR,
    });
    let mut legend = styles;
    legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
    let fig = Figure {
        title: format!(
            "The GEMM routine against cuBLAS across shapes{}",
            ctx.title_suffix()
        ),
        legend,
        panels: vec![panel],
        cols: 1,
        panel_w: (110 * a.calls.len() as u32).clamp(640, 2800),
        panel_h: 460,
    };
    Ok(ctx
        .chart(
            &fig,
            &chart_stem(a.precision),
            "the routine's ratio to cuBLAS per call",
        )?
        .markdown)
}

/// A call as a chart's category: "1024^3" for a cube, the layout and transposes
/// only where not column-major NN ("4097x33x2049 row", "1024^3 TN").
fn short_call(call: &str) -> String {
    let mut parts = call.split_whitespace();
    let size = parts.next().unwrap_or_default();
    let dims: Vec<&str> = size.split('x').collect();
    let size = match dims[..] {
        [m, n, k] if m == n && n == k => format!("{m}^3"),
        _ => size.to_string(),
    };
    let rest: Vec<&str> = parts.filter(|p| !matches!(*p, "col" | "NN")).collect();
    std::iter::once(size.as_str())
        .chain(rest)
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn words(k: &Kind) -> Words {
    let Kind::Geomean {
        toolchain,
        precision,
        geomean,
        calls,
        lowest,
        lowest_call,
        at_vendor,
        kernels,
    } = k;
    let chosen: Vec<String> = kernels
        .iter()
        .map(|(k, n)| format!("{k} {}", md::plural(*n, "time")))
        .collect();
    let (tc, g, low) = (
        name(*toolchain),
        md::times(Some(*geomean)),
        md::times(Some(*lowest)),
    );
    let over = md::plural(*calls, "call");
    let short = format!(
        "The {tc} {precision} GEMM routine runs at {g} cuBLAS's speed over {over} (geometric mean), {low} at the lowest ({lowest_call})."
    );
    let text = format!(
        "**The {tc} {precision} GEMM routine: {g} cuBLAS over {over}** (geometric mean of the whole calls' ratios), \
         lowest {low} on {lowest_call}; {at_vendor} of {calls} at {} or above; kernels chosen: {}.",
        md::times(Some(AT_VENDOR)),
        md::join_and(&chosen)
    );
    Words { text, short }
}

/// The chosen configuration, with the switches and register cap it was compiled
/// with where they are not the published ones.
fn configuration(m: &crate::results::Measurement) -> String {
    let params = m.config.describe_params();
    if m.hints.is_published() {
        params
    } else {
        format!("{params} {}", m.hints.describe(true))
    }
}
