//! "Your kernels (spec files)": every row with its speed from the spec's work and
//! its share of the device's peak; a chart of each toolchain's fastest row.

use crate::analysis::user::{configuration, Kind, Share, User, UserFastest, CHART};
use crate::analysis::{stats::distinct, Kind as AnyKind, Rec};
use crate::error::Result;
use crate::plot::Figure;

use super::data::toolchain_name as name;
use super::{bar_panel, md, Ctx, Section, Words, SAME_SPEED};

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
    ("configuration", |(r, _)| configuration(r.m)),
    ("time us (median ±IQR)", |(r, _)| {
        match (r.m.status.is_ok(), r.m.time) {
            (true, Some(t)) => format!("{:.2} ±{:.1}%", t.median_ns / 1e3, t.spread_pct()),
            _ => r.m.status.label().into(),
        }
    }),
    ("GFLOP/s", |(r, _)| ok(r, r.m.gflops)),
    ("GB/s", |(r, _)| ok(r, r.m.gbs)),
    ("share of peak", |(_, share)| {
        share.map_or(md::MISSING.into(), |(v, of)| {
            format!("{} of {of}", md::pct(Some(v)))
        })
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
    let mut s = format!(
        "## {HEADING}\n\nKernels described by spec files (`--spec FILE`), measured like the built-in \
         ones (checked against their spec's reference before timing, device-event timing, medians \
         with their spread). GFLOP/s and GB/s come from the spec's work and the median time; \"% of \
         bandwidth\" is GB/s over the device's peak memory bandwidth as its driver reports it (memory \
         clock x bus width), \"% of FP32 peak\" GFLOP/s over SMs x FP32 lanes x 2 x the reported \
         clock.\n\n{}\n",
        md::table_of(&COLUMNS, &a.rows)
    );
    let styles = super::compare::styles(&a.toolchains);
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
        s.push_str(&ctx.chart(&fig, CHART, "your kernels per toolchain")?);
    }
    Ok(Section::of(HEADING, s, &a.findings))
}

pub(crate) fn words(k: &Kind) -> Words {
    let same = SAME_SPEED * 100.0;
    let text = match k {
        Kind::UserFastest(k) => {
            let (kernel, size, tc, rate, unit) =
                (&k.kernel, &k.size, name(k.toolchain), k.rate, k.unit);
            let config = &k.config;
            format!("Your kernel {kernel} at {size} on {tc}: {rate:.1} {unit} at its fastest ({config}).")
        }
        Kind::UserGap(k) => {
            let (kernel, size, f, s, unit) = (&k.kernel, &k.size, k.fast_rate, k.slow_rate, k.unit);
            let (fast, slow, x) = (name(k.fast), name(k.slow), md::times(Some(f / s)));
            match k.same {
                true => format!("Your kernel {kernel} at {size}: {fast} and {slow} run at the same speed ({f:.1} and {s:.1} {unit}, within {same:.0}%)."),
                false => format!("Your kernel {kernel} at {size}: {fast} is {x} faster than {slow} ({f:.1} against {s:.1} {unit}, each toolchain's fastest row)."),
            }
        }
        Kind::UserBandwidth(k) => {
            let (kernel, size, tc) = (&k.kernel, &k.size, name(k.toolchain));
            let (gbs, peak) = (md::speed(k.gbs), md::speed(k.peak_gbs));
            let share = 100.0 * k.gbs / k.peak_gbs;
            format!("Your kernel {kernel} at {size} on {tc}: {gbs} GB/s, {share:.0}% of the device's {peak} GB/s memory bandwidth.")
        }
        Kind::UserTuning(k) => {
            let (kernel, size, tc) = (&k.kernel, &k.size, name(k.toolchain));
            let (tuned, plain, unit) = (k.tuned, k.plain, k.unit);
            let (tuned_config, plain_config) = (&k.tuned_config, &k.plain_config);
            let at = format!("Tuning your kernel {kernel} at {size} on {tc}");
            match k.same {
                true => format!("{at}: nothing more than {same:.0}% faster than {plain_config} as compare ran it ({plain:.1} {unit}; the search's best, {tuned_config}, {tuned:.1})."),
                false => {
                    let change = md::change(Some(tuned), Some(plain));
                    format!("{at}: {tuned:.1} {unit} with {tuned_config} against {plain:.1} with {plain_config} as compare ran it ({change}).")
                }
            }
        }
    };
    let short = text.clone();
    Words { text, short }
}
