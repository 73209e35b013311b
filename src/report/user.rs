//! "Your kernels (spec files)": per kernel and size each toolchain's rows with
//! time, GFLOP/s and GB/s from the spec's work, the share of the device's
//! memory bandwidth or FP32 peak, registers, occupancy and the check; a chart
//! of each toolchain's fastest row.

use std::fmt::Write as _;

use crate::analysis::user::{Kind, Share, User, CHART};
use crate::error::Result;
use crate::results::Measurement;

use super::color;
use super::data;
use super::{md, Ctx, Section, Words, SAME_SPEED};
use crate::plot::{Bars, Figure, Panel, Style, XAxis};

pub(crate) const HEADING: &str = "Your kernels (spec files)";

const HEAD: [&str; 12] = [
    "kernel",
    "size",
    "toolchain",
    "experiment",
    "configuration",
    "time us (median ±IQR)",
    "GFLOP/s",
    "GB/s",
    "share of peak",
    "registers",
    "occupancy",
    "check",
];

fn row(m: &Measurement, share: Share) -> Vec<String> {
    let ok = |v: Option<f64>| {
        v.filter(|_| m.status.is_ok())
            .map_or(md::MISSING.into(), |g| format!("{g:.1}"))
    };
    let share = match share {
        Share::Bandwidth(v) => format!("{} of bandwidth", md::pct(Some(v))),
        Share::Fp32Peak(v) => format!("{} of FP32 peak", md::pct(Some(v))),
        Share::None => md::MISSING.into(),
    };
    let status = m.status.label().to_string();
    vec![
        m.kernel.clone(),
        m.size_label(),
        data::toolchain_name(m.toolchain).into(),
        m.experiment.clone(),
        if m.config.0.is_empty() {
            md::MISSING.into()
        } else {
            m.config.describe()
        },
        match (m.status.is_ok(), m.time) {
            (true, Some(t)) => format!("{:.2} ±{:.1}%", t.median_ns / 1e3, t.spread_pct()),
            _ => status.clone(),
        },
        ok(m.gflops),
        ok(m.gbs),
        share,
        md::registers(Some(m)),
        md::occupancy(Some(m)),
        m.check
            .as_ref()
            .and_then(|c| c.method.as_ref())
            .map_or(status.clone(), |c| format!("{status} ({c})")),
    ]
}

pub(crate) fn section(ctx: &mut Ctx, a: &User) -> Result<Section> {
    let mut sec = Section {
        title: HEADING.into(),
        ..Section::default()
    };
    if a.rows.is_empty() {
        return Ok(sec);
    }
    let mut s = format!("## {HEADING}\n\n");
    let _ = writeln!(
        s,
        "Kernels described by spec files (`--spec FILE`), measured with the same method as the built-in ones: \
         each result checked against the reference its spec names before it is timed, device-event timing, \
         medians with their spread. GFLOP/s and GB/s come from the work the spec states and the median time; \
         \"% of bandwidth\" is GB/s over the device's peak memory bandwidth as its driver reports it \
         (memory clock x bus width), \"% of FP32 peak\" GFLOP/s over SMs x FP32 lanes x 2 x the reported clock.\n"
    );
    let rows: Vec<Vec<String>> = a.rows.iter().map(|(r, share)| row(r.m, *share)).collect();
    let _ = writeln!(s, "{}", md::table(&md::h(&HEAD), &rows));
    let styles: Vec<Style> = a
        .toolchains
        .iter()
        .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
        .collect();
    let panels: Vec<Panel> = a
        .kernels
        .iter()
        .map(|k| {
            let x = XAxis::Categories(k.sizes.clone());
            let y = format!("{} (fastest row per toolchain)", k.unit);
            let mut p = Panel::new(format!("{}{}", k.kernel, ctx.title_suffix()), x, "size", &y);
            let notes = vec![vec![None; styles.len()]; k.sizes.len()];
            p.bars = Some(Bars {
                styles: styles.clone(),
                values: k.values.clone(),
                notes,
            });
            p
        })
        .collect();
    let fig = Figure {
        title: "Your kernels: each toolchain's fastest row per size".into(),
        legend: styles,
        cols: panels.len().clamp(1, 2),
        panels,
        panel_w: 560,
        panel_h: 320,
    };
    s.push_str(
        &ctx.chart(&fig, CHART, "your kernels per toolchain")?
            .markdown,
    );
    sec.show(&a.findings);
    sec.markdown = s;
    Ok(sec)
}

pub(crate) fn words(k: &Kind) -> Words {
    let tc = |t| data::toolchain_name(t);
    let text = match k {
        Kind::UserFastest { kernel, size, toolchain, rate, unit, config } => format!(
            "Your kernel {kernel} at {size} on {}: {rate:.1} {unit} at its fastest ({}).",
            tc(*toolchain),
            config.as_deref().unwrap_or("no parameters")
        ),
        Kind::UserGap { kernel, size, fast, slow, fast_rate: f, slow_rate: s, unit, same: true } => format!(
            "Your kernel {kernel} at {size}: {} and {} run at the same speed ({f:.1} and {s:.1} {unit}, within {:.0}%).",
            tc(*fast),
            tc(*slow),
            SAME_SPEED * 100.0
        ),
        Kind::UserGap { kernel, size, fast, slow, fast_rate: f, slow_rate: s, unit, same: false } => format!(
            "Your kernel {kernel} at {size}: {} is {} faster than {} ({f:.1} against {s:.1} {unit}, each toolchain's fastest row).",
            tc(*fast),
            md::times(Some(f / s)),
            tc(*slow)
        ),
        Kind::UserBandwidth { kernel, size, toolchain, gbs, peak_gbs } => format!(
            "Your kernel {kernel} at {size} on {}: {} GB/s, {:.0}% of the device's {} GB/s memory bandwidth.",
            tc(*toolchain),
            md::speed(*gbs),
            100.0 * gbs / peak_gbs,
            md::speed(*peak_gbs)
        ),
        Kind::UserTuning { kernel, size, toolchain, tuned, plain, unit, tuned_config, plain_config, same: true } => format!(
            "Tuning your kernel {kernel} at {size} on {}: nothing more than {:.0}% faster than {plain_config} as compare ran it ({plain:.1} {unit}; the search's best, {tuned_config}, {tuned:.1}).",
            tc(*toolchain),
            SAME_SPEED * 100.0
        ),
        Kind::UserTuning { kernel, size, toolchain, tuned, plain, unit, tuned_config, plain_config, same: false } => format!(
            "Tuning your kernel {kernel} at {size} on {}: {tuned:.1} {unit} with {tuned_config} against {plain:.1} with {plain_config} as compare ran it ({}).",
            tc(*toolchain),
            md::change(Some(*tuned), Some(*plain))
        ),
    };
    Words {
        short: text.clone(),
        text,
    }
}
