//! Users' kernels (spec files): per kernel and size, each toolchain's rows
//! (compare, and tune's final round) with time, GFLOP/s and GB/s from the
//! spec's work, the share of the device's memory bandwidth or FP32 peak,
//! registers, occupancy and the check; findings on the toolchain gap, the
//! share of the peak and what tuning gained.

use std::fmt::Write as _;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::Measurement;

use super::charts::color;
use super::charts::{Bars, Figure, Panel, Style, XAxis};
use super::data::{self, Rec};
use super::{md, Ctx, Section, Shown, Topic, SAME_SPEED};

pub(crate) const HEADING: &str = "Your kernels (spec files)";

/// The rate a row is ranked by: GFLOP/s where the spec states FLOPs, else GB/s,
/// else runs per second; with its unit.
fn rate(m: &Measurement) -> Option<(f64, &'static str)> {
    if !m.status.is_ok() {
        return None;
    }
    if let Some(g) = m.gflops.filter(|g| g.is_finite()) {
        return Some((g, "GFLOP/s"));
    }
    if let Some(b) = m.gbs.filter(|g| g.is_finite()) {
        return Some((b, "GB/s"));
    }
    m.time.map(|t| (1e9 / t.median_ns.max(1.0), "runs/s"))
}

/// The device's peak memory bandwidth as any run's record of it gives it.
fn bandwidth(ctx: &Ctx, m: &Measurement) -> Option<f64> {
    ctx.data
        .runs
        .iter()
        .flat_map(|r| r.env.devices.iter())
        .filter(|d| d.name == m.device)
        .find_map(|d| d.memory_bandwidth_gbs)
}

fn fastest<'a>(rows: &[Rec<'a>], t: Toolchain) -> Option<Rec<'a>> {
    rows.iter()
        .filter(|r| r.m.toolchain == t && rate(r.m).is_some())
        .max_by(|a, b| {
            let (x, y) = (rate(a.m).map(|v| v.0), rate(b.m).map(|v| v.0));
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        })
        .copied()
}

/// A finding of this section, shown in the summary as it is.
fn finding(text: String, weight: f64) -> Shown {
    Shown::legacy(Topic::UserKernels, text.clone(), HEADING)
        .short(text)
        .weight(weight)
}

pub(crate) fn section(ctx: &mut Ctx) -> Result<Section> {
    let mut sec = Section {
        title: HEADING.into(),
        ..Section::default()
    };
    let rows = ctx.data.user_rows();
    if rows.is_empty() {
        return Ok(sec);
    }
    let mut s = String::new();
    let _ = writeln!(s, "## {HEADING}\n");
    let _ = writeln!(
        s,
        "Kernels described by spec files (`--spec FILE`), measured with the same method as the built-in ones: \
         each result checked against the reference its spec names before it is timed, device-event timing, \
         medians with their spread. GFLOP/s and GB/s come from the work the spec states and the median time; \
         \"% of bandwidth\" is GB/s over the device's peak memory bandwidth as its driver reports it \
         (memory clock x bus width), \"% of FP32 peak\" GFLOP/s over SMs x FP32 lanes x 2 x the reported clock.\n"
    );
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let g = (r.m.kernel.clone(), r.m.size_label());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let mut kernels: Vec<String> = Vec::new();
    for (k, _) in &groups {
        if !kernels.contains(k) {
            kernels.push(k.clone());
        }
    }
    let toolchains = ctx.toolchains.clone();
    let mut table_rows: Vec<Vec<String>> = Vec::new();
    let mut panels: Vec<Panel> = Vec::new();
    for kernel in &kernels {
        let sizes: Vec<String> = groups
            .iter()
            .filter(|(k, _)| k == kernel)
            .map(|(_, s)| s.clone())
            .collect();
        let mut unit = "";
        let mut values = vec![vec![None; toolchains.len()]; sizes.len()];
        for (si, size) in sizes.iter().enumerate() {
            let group: Vec<Rec> = rows
                .iter()
                .filter(|r| &r.m.kernel == kernel && &r.m.size_label() == size)
                .copied()
                .collect();
            for r in &group {
                let m = r.m;
                let bw = bandwidth(ctx, m);
                let peak = super::simt::peak_of(ctx.data, r.run, m);
                let share = match (m.gbs, bw, data::gflops(m), peak) {
                    (Some(g), Some(b), _, _) if m.status.is_ok() => {
                        format!("{:.1}% of bandwidth", 100.0 * g / b)
                    }
                    (_, _, Some(g), Some(p)) => format!("{:.1}% of FP32 peak", 100.0 * g / p),
                    _ => "-".into(),
                };
                table_rows.push(vec![
                    kernel.clone(),
                    size.clone(),
                    data::toolchain_name(m.toolchain).into(),
                    m.experiment.clone(),
                    if m.config.0.is_empty() {
                        "-".into()
                    } else {
                        m.config.describe()
                    },
                    match (m.status.is_ok(), m.time) {
                        (true, Some(t)) => {
                            format!("{:.2} ±{:.1}%", t.median_ns / 1e3, t.spread_pct())
                        }
                        _ => m.status.label().to_string(),
                    },
                    m.gflops
                        .filter(|_| m.status.is_ok())
                        .map_or("-".into(), |g| format!("{g:.1}")),
                    m.gbs
                        .filter(|_| m.status.is_ok())
                        .map_or("-".into(), |g| format!("{g:.1}")),
                    share,
                    md::registers(Some(m)),
                    md::occupancy(Some(m)),
                    m.check
                        .as_ref()
                        .and_then(|c| c.method.clone())
                        .map_or(m.status.label().to_string(), |c| {
                            format!("{} ({c})", m.status.label())
                        }),
                ]);
            }
            let best: Vec<(Toolchain, Rec)> = toolchains
                .iter()
                .filter_map(|t| fastest(&group, *t).map(|r| (*t, r)))
                .collect();
            for (ti, t) in toolchains.iter().enumerate() {
                if let Some((_, r)) = best.iter().find(|(bt, _)| bt == t) {
                    if let Some((v, u)) = rate(r.m) {
                        values[si][ti] = Some(v);
                        unit = u;
                    }
                }
            }
            // Where each toolchain stands at its fastest.
            for (t, r) in &best {
                if let Some((v, u)) = rate(r.m) {
                    sec.findings.push(finding(
                        format!(
                            "Your kernel {kernel} at {size} on {}: {v:.1} {u} at its fastest ({}).",
                            data::toolchain_name(*t),
                            if r.m.config.0.is_empty() {
                                "no parameters".to_string()
                            } else {
                                r.m.config.describe()
                            }
                        ),
                        0.0,
                    ));
                }
            }
            // The toolchain gap, best against best.
            if let [(ta, a), (tb, b)] = best.as_slice() {
                let (va, u) = rate(a.m).unwrap_or((0.0, ""));
                let (vb, _) = rate(b.m).unwrap_or((0.0, ""));
                if va > 0.0 && vb > 0.0 {
                    let (fast, slow, vf, vs) = if va >= vb {
                        (ta, tb, va, vb)
                    } else {
                        (tb, ta, vb, va)
                    };
                    let ratio = vf / vs;
                    let text = if ratio - 1.0 <= SAME_SPEED {
                        format!(
                            "Your kernel {kernel} at {size}: {} and {} run at the same speed ({vf:.1} and {vs:.1} {u}, within {:.0}%).",
                            data::toolchain_name(*fast),
                            data::toolchain_name(*slow),
                            SAME_SPEED * 100.0
                        )
                    } else {
                        format!(
                            "Your kernel {kernel} at {size}: {} is {:.2}x faster than {} ({vf:.1} against {vs:.1} {u}, each toolchain's fastest row).",
                            data::toolchain_name(*fast),
                            ratio,
                            data::toolchain_name(*slow)
                        )
                    };
                    sec.findings.push(finding(text, ratio - 1.0));
                }
            }
            // The share of the memory bandwidth of a bandwidth-bound kernel.
            for (t, r) in &best {
                if let (Some(g), Some(b)) = (r.m.gbs, bandwidth(ctx, r.m)) {
                    sec.findings.push(finding(
                        format!(
                            "Your kernel {kernel} at {size} on {}: {g:.0} GB/s, {:.0}% of the device's {b:.0} GB/s memory bandwidth.",
                            data::toolchain_name(*t),
                            100.0 * g / b
                        ),
                        0.1 * g / b,
                    ));
                }
            }
            // What tuning gained over the kernel as compare ran it.
            for t in &toolchains {
                let tuned = fastest(
                    &group
                        .iter()
                        .filter(|r| r.m.experiment == "tune")
                        .copied()
                        .collect::<Vec<_>>(),
                    *t,
                );
                let plain = group.iter().find(|r| {
                    r.m.experiment == "compare" && r.m.toolchain == *t && rate(r.m).is_some()
                });
                if let (Some(tu), Some(pl)) = (tuned, plain) {
                    let (vt, u) = rate(tu.m).unwrap_or((0.0, ""));
                    let (vp, _) = rate(pl.m).unwrap_or((0.0, ""));
                    if vp > 0.0 {
                        let text = if (vt / vp - 1.0).abs() <= SAME_SPEED {
                            format!(
                                "Tuning your kernel {kernel} at {size} on {}: nothing more than {:.0}% faster than {} as compare ran it ({vp:.1} {u}; the search's best, {}, {vt:.1}).",
                                data::toolchain_name(*t),
                                SAME_SPEED * 100.0,
                                pl.m.config.describe(),
                                tu.m.config.describe()
                            )
                        } else {
                            format!(
                                "Tuning your kernel {kernel} at {size} on {}: {vt:.1} {u} with {} against {vp:.1} with {} as compare ran it ({}).",
                                data::toolchain_name(*t),
                                tu.m.config.describe(),
                                pl.m.config.describe(),
                                md::change(Some(vt), Some(vp))
                            )
                        };
                        sec.findings.push(finding(text, (vt / vp - 1.0).abs()));
                    }
                }
            }
        }
        let mut p = Panel::new(
            format!("{kernel}{}", ctx.title_suffix()),
            XAxis::Categories(sizes.clone()),
            "size",
            &format!("{unit} (fastest row per toolchain)"),
        );
        p.bars = Some(Bars {
            styles: toolchains
                .iter()
                .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
                .collect(),
            values,
            notes: vec![vec![None; toolchains.len()]; sizes.len()],
        });
        panels.push(p);
    }
    let _ = writeln!(
        s,
        "{}",
        md::table(
            &md::h(&[
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
            ]),
            &table_rows,
        )
    );
    let legend: Vec<Style> = toolchains
        .iter()
        .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
        .collect();
    let n = panels.len();
    let fig = Figure {
        title: "Your kernels: each toolchain's fastest row per size".into(),
        legend,
        panels,
        cols: n.clamp(1, 2),
        panel_w: 560,
        panel_h: 320,
    };
    let chart = ctx.chart(&fig, "user-kernels", "your kernels per toolchain")?;
    s.push_str(&chart.markdown);
    for f in &mut sec.findings {
        f.chart = Some(chart.svg.clone());
    }
    sec.markdown = s;
    Ok(sec)
}
