//! "Your kernels (spec files)": every row with its speed from the spec's work and
//! its share of the device's peak; a chart of each toolchain's fastest row.

use std::fmt::Write as _;

use crate::analysis::stats::distinct;
use crate::analysis::user::{Kind, Share, User, UserFastest, CHART};
use crate::analysis::{Kind as AnyKind, Rec};
use crate::error::Result;

use super::bar_panel;
use super::data::toolchain_name as name;
use super::{color, md, Ctx, Section, Words, SAME_SPEED};
use crate::plot::{Figure, Style};

pub(crate) const HEADING: &str = "Your kernels (spec files)";

/// A value of a row that passed its check, one decimal.
fn ok(r: &Rec, v: Option<f64>) -> String {
    (v.filter(|_| r.m.status.is_ok())).map_or(md::MISSING.into(), |g| format!("{g:.1}"))
}

type Column = (&'static str, fn(&(Rec, Share)) -> String);

const COLUMNS: [Column; 12] = [
    ("kernel", |(r, _)| r.m.kernel.clone()),
    ("size", |(r, _)| r.m.size_label()),
    ("toolchain", |(r, _)| name(r.m.toolchain).into()),
    ("experiment", |(r, _)| r.m.experiment.clone()),
    ("configuration", |(r, _)| match r.m.config.0.is_empty() {
        true => md::MISSING.into(),
        false => r.m.config.describe(),
    }),
    ("time us (median ±IQR)", |(r, _)| {
        match (r.m.status.is_ok(), r.m.time) {
            (true, Some(t)) => format!("{:.2} ±{:.1}%", t.median_ns / 1e3, t.spread_pct()),
            _ => r.m.status.label().into(),
        }
    }),
    ("GFLOP/s", |(r, _)| ok(r, r.m.gflops)),
    ("GB/s", |(r, _)| ok(r, r.m.gbs)),
    ("share of peak", |(_, share)| match share {
        Share::Bandwidth(v) => format!("{} of bandwidth", md::pct(Some(*v))),
        Share::Fp32Peak(v) => format!("{} of FP32 peak", md::pct(Some(*v))),
        Share::None => md::MISSING.into(),
    }),
    ("registers", |(r, _)| md::registers(Some(r.m))),
    ("occupancy", |(r, _)| md::occupancy(Some(r.m))),
    ("check", |(r, _)| {
        let status = r.m.status.label();
        let method = r.m.check.as_ref().and_then(|c| c.method.as_ref());
        method.map_or(status.into(), |c| format!("{status} ({c})"))
    }),
];

pub(crate) fn section(ctx: &mut Ctx, a: &User) -> Result<Section> {
    if a.rows.is_empty() {
        return Ok(Section::default());
    }
    let mut s = format!("## {HEADING}\n\n");
    let _ = writeln!(
        s,
        "Kernels described by spec files (`--spec FILE`), measured like the built-in ones (checked \
         against their spec's reference before timing, device-event timing, medians with their spread). \
         GFLOP/s and GB/s come from the spec's work and the median time; \"% of bandwidth\" is GB/s \
         over the device's peak memory bandwidth as its driver reports it (memory clock x bus width), \
         \"% of FP32 peak\" GFLOP/s over SMs x FP32 lanes x 2 x the reported clock.\n\n{}",
        md::table_of(&COLUMNS, &a.rows)
    );
    let styles: Vec<Style> = (a.toolchains.iter())
        .map(|t| Style::new(name(*t), color(*t)))
        .collect();
    // A panel per kernel: each toolchain's fastest row per size, as its findings give it.
    let fastest: Vec<&UserFastest> = (a.findings.iter())
        .filter_map(|f| match &f.kind {
            AnyKind::User(Kind::UserFastest(k)) => Some(k),
            _ => None,
        })
        .collect();
    let panels: Vec<_> = (distinct(fastest.iter().map(|k| &k.kernel)).into_iter())
        .map(|kernel| {
            let of: Vec<_> = fastest.iter().filter(|k| k.kernel == *kernel).collect();
            let sizes = distinct(of.iter().map(|k| k.size.clone()));
            let rate =
                |s: &String, t| Some(of.iter().find(|k| k.size == *s && k.toolchain == t)?.rate);
            let values = (sizes.iter())
                .map(|s| a.toolchains.iter().map(|t| rate(s, *t)).collect())
                .collect();
            let title = format!("{kernel}{}", ctx.title_suffix());
            let unit = of.last().map_or("", |k| k.unit);
            let y = format!("{unit} (fastest row per toolchain)");
            bar_panel(title, sizes, "size", &y, &styles, values)
        })
        .collect();
    if !panels.is_empty() {
        let fig = Figure {
            title: "Your kernels: each toolchain's fastest row per size".into(),
            legend: styles,
            cols: panels.len().min(2),
            panels,
            panel_w: 560,
            panel_h: 320,
        };
        s.push_str(
            &ctx.chart(&fig, CHART, "your kernels per toolchain")?
                .markdown,
        );
    }
    Ok(Section::of(HEADING, s, &a.findings))
}

pub(crate) fn words(k: &Kind) -> Words {
    let same = SAME_SPEED * 100.0;
    let text = match k {
        Kind::UserFastest(k) => format!(
            "Your kernel {} at {} on {}: {:.1} {} at its fastest ({}).",
            k.kernel,
            k.size,
            name(k.toolchain),
            k.rate,
            k.unit,
            k.config.as_deref().unwrap_or("no parameters")
        ),
        Kind::UserGap(k) => {
            let (f, s, unit) = (k.fast_rate, k.slow_rate, k.unit);
            let (fast, slow) = (name(k.fast), name(k.slow));
            match k.same {
                true => format!(
                    "Your kernel {} at {}: {fast} and {slow} run at the same speed ({f:.1} and {s:.1} {unit}, within {same:.0}%).",
                    k.kernel, k.size
                ),
                false => format!(
                    "Your kernel {} at {}: {fast} is {} faster than {slow} ({f:.1} against {s:.1} {unit}, each toolchain's fastest row).",
                    k.kernel,
                    k.size,
                    md::times(Some(f / s))
                ),
            }
        }
        Kind::UserBandwidth(k) => format!(
            "Your kernel {} at {} on {}: {} GB/s, {:.0}% of the device's {} GB/s memory bandwidth.",
            k.kernel,
            k.size,
            name(k.toolchain),
            md::speed(k.gbs),
            100.0 * k.gbs / k.peak_gbs,
            md::speed(k.peak_gbs)
        ),
        Kind::UserTuning(k) => {
            let (tuned, plain, unit) = (k.tuned, k.plain, k.unit);
            let (tc, tuned_config, plain_config) =
                (name(k.toolchain), &k.tuned_config, &k.plain_config);
            match k.same {
                true => format!(
                    "Tuning your kernel {} at {} on {tc}: nothing more than {same:.0}% faster than {plain_config} as compare ran it ({plain:.1} {unit}; the search's best, {tuned_config}, {tuned:.1}).",
                    k.kernel, k.size
                ),
                false => format!(
                    "Tuning your kernel {} at {} on {tc}: {tuned:.1} {unit} with {tuned_config} against {plain:.1} with {plain_config} as compare ran it ({}).",
                    k.kernel,
                    k.size,
                    md::change(Some(tuned), Some(plain))
                ),
            }
        }
    };
    Words {
        short: text.clone(),
        text,
    }
}
