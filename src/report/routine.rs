//! "The routine against cuBLAS across shapes": per toolchain each call's choice and time, a chart.

use std::fmt::Write as _;

use crate::analysis::routine::{chart_stem, chosen_kernel, Kind, Row, Suite, AT_VENDOR};
use crate::analysis::Kind as AnyKind;
use crate::error::Result;
use crate::plot::{Figure, RefLine, Style};

use super::data::toolchain_name as name;
use super::{bar_panel, md, Ctx, Section, Words, VENDOR_COLOR};

pub const ROUTINE: &str = "The routine against cuBLAS across shapes";

fn us(ns: Option<f64>) -> String {
    ns.map_or(md::MISSING.into(), |v| format!("{:.1}", v / 1e3))
}

type Column = (&'static str, fn(&Row) -> String);

const COLUMNS: [Column; 10] = [
    ("call", |r| r.call.clone()),
    ("class", |r| r.class.as_str().into()),
    ("kernel", |r| match r.m.status.is_ok() {
        true => chosen_kernel(r.m),
        false => r.m.status.label().into(),
    }),
    ("configuration", |r| {
        // With the switches and register cap it was compiled with where not the published ones.
        let (params, h) = (r.m.config.describe_params(), &r.m.hints);
        match (h.is_published(), params.is_empty()) {
            (true, true) => md::MISSING.into(),
            (true, false) => params,
            (false, _) => format!("{params} {}", h.describe(true)),
        }
    }),
    ("us", |r| us(r.m.time.as_ref().map(|t| t.median_ns))),
    ("packing us", |r| {
        us(r.m.pre_ns.zip(r.m.post_ns).map(|(a, b)| (a + b) as f64))
    }),
    ("GFLOP/s", |r| {
        r.m.gflops.map_or(md::MISSING.into(), md::speed)
    }),
    ("cuBLAS us", |r| us(r.vendor_ns)),
    ("x cuBLAS", |r| md::times(r.ratio)),
    // What the record says was checked; a record without a check is not called checked.
    ("check", |r| match &r.m.check {
        Some(c) if c.passed => format!("ok ({:.0e})", c.rel_frobenius),
        Some(_) => "FAILED".into(),
        None => "not recorded".into(),
    }),
];

pub(crate) fn section(ctx: &mut Ctx, suites: &[Suite]) -> Result<Section> {
    if suites.is_empty() {
        return Ok(Section::default());
    }
    let samples = match suites.iter().any(|a| a.batched) {
        true => "median of samples after a checked call, whose pre- and post-processing is \"packing us\"; \
                 a sample is a batch of calls back to back lasting about 2 ms, timed as one device span \
                 and divided by the batch, cuBLAS's alike",
        false => "median of the timed calls after a checked one, whose pre- and post-processing is \"packing us\"",
    };
    let mut s = format!(
        "## {ROUTINE}\n\n`gemmlab gemm --suite FILE --out DIR`: each call through the GEMM routine, which \
         picks kernel and configuration from `gemmlab tune --suite`'s database (shape class, layout, \
         transposes, nearest tuned shape). A time is the whole call (packing, kernel, unpacking; {samples}), next \
         to cuBLAS with the same arguments in the same run (for OpenCL, the CUDA session's on the same GPU).\n\n"
    );
    let unrecorded: usize = (suites.iter().flat_map(|a| &a.routines))
        .flat_map(|r| &r.rows)
        .filter(|r| r.m.status.is_ok() && r.m.check.is_none())
        .count();
    if unrecorded > 0 {
        let _ = writeln!(
            s,
            "{} carry no check in their records (written before gemmlab kept the routine's check): the \
             check column says \"not recorded\" and this report does not call them checked.\n",
            md::plural(unrecorded, "call")
        );
    }
    for a in suites {
        for r in &a.routines {
            let _ = writeln!(s, "### {}, {}\n", name(r.toolchain), a.precision);
            s.push_str(&md::table_of(&COLUMNS, &r.rows));
            let geomean = a.findings.iter().find_map(|f| match &f.kind {
                AnyKind::Routine(Kind::Geomean(g)) => (g.toolchain == r.toolchain).then_some(g),
                _ => None,
            });
            let Some(g) = geomean else {
                s.push_str("\nNo cuBLAS times in these runs: run the CUDA toolchain beside it (`--backends cuda,...`) for the ratios.\n\n");
                continue;
            };
            let (mean, low, at) = (times(g.geomean), times(g.lowest), times(AT_VENDOR));
            let (calls, reach) = (md::plural(g.calls, "call"), md::plural(g.at_vendor, "call"));
            let _ = writeln!(s, "\nGeometric mean {mean} over {calls}; lowest {low} ({}); {reach} at {at} or above.\n", g.lowest_call);
        }
        if !a.findings.is_empty() {
            s.push_str(&chart(ctx, a)?);
        }
    }
    let findings: Vec<_> = suites.iter().flat_map(|a| a.findings.clone()).collect();
    Ok(Section::of(ROUTINE, s, &findings))
}

/// The ratio to cuBLAS of each toolchain's routine per call, with 1.0 marked.
fn chart(ctx: &mut Ctx, a: &Suite) -> Result<String> {
    let toolchains: Vec<_> = a.routines.iter().map(|r| r.toolchain).collect();
    let styles = super::compare::styles(&toolchains);
    let ratio = |c: &String, rows: &[Row]| rows.iter().find(|row| row.call == *c)?.ratio;
    let values = (a.calls.iter())
        .map(|c| a.routines.iter().map(|r| ratio(c, &r.rows)).collect())
        .collect();
    let mut panel = bar_panel(
        "the whole call, routine's choice per call".into(),
        a.calls.iter().map(|c| short_call(c)).collect(),
        "call (M x N x K; row-major and transposes where not column-major NN)",
        "x cuBLAS (same arguments, same run)",
        &styles,
        values,
    );
    let (label, y, color) = ("cuBLAS".into(), 1.0, VENDOR_COLOR);
    panel.refs.push(RefLine { label, y, color });
    let mut legend = styles;
    legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
    let suffix = ctx.title_suffix();
    let fig = Figure {
        title: format!("The GEMM routine against cuBLAS across shapes{suffix}"),
        legend,
        panels: vec![panel],
        cols: 1,
        panel_w: (110 * a.calls.len() as u32).clamp(640, 2800),
        panel_h: 460,
    };
    let alt = "the routine's ratio to cuBLAS per call";
    ctx.chart(&fig, &chart_stem(a.precision), alt)
}

/// A call as a chart's category: "1024^3" for a cube, the layout and transposes
/// only where not column-major NN ("4097x33x2049 row", "1024^3 TN").
fn short_call(call: &str) -> String {
    let mut parts = call.split_whitespace();
    let size = parts.next().unwrap_or_default();
    let size = match size.split('x').collect::<Vec<_>>()[..] {
        [m, n, k] if m == n && n == k => format!("{m}^3"),
        _ => size.to_string(),
    };
    let rest = parts.filter(|p| !matches!(*p, "col" | "NN"));
    rest.fold(size, |s, p| format!("{s} {p}"))
}

/// A multiple of cuBLAS's speed, "0.55x".
fn times(v: f64) -> String {
    md::times(Some(v))
}

pub(crate) fn words(k: &Kind) -> Words {
    let Kind::Geomean(k) = k;
    let chosen: Vec<String> = (k.kernels.iter())
        .map(|(kernel, n)| format!("{kernel} {}", md::plural(*n, "time")))
        .collect();
    let (tc, p, at) = (name(k.toolchain), k.precision, &k.lowest_call);
    let (g, low, floor) = (times(k.geomean), times(k.lowest), times(AT_VENDOR));
    let (over, chosen) = (md::plural(k.calls, "call"), md::join_and(&chosen));
    let (reach, of) = (k.at_vendor, k.calls);
    Words {
        short: format!(
            "The {tc} {p} GEMM routine runs at {g} cuBLAS's speed over {over} (geometric mean), {low} at the lowest ({at})."
        ),
        text: format!(
            "**The {tc} {p} GEMM routine: {g} cuBLAS over {over}** (geometric mean of the whole calls' ratios), \
             lowest {low} on {at}; {reach} of {of} at {floor} or above; kernels chosen: {chosen}."
        ),
    }
}
