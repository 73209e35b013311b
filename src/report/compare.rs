//! The "compare" experiment: kernels x toolchains x sizes next to cuBLAS.
//! Headline tables, the per-kernel bar chart, speed against size, compiler
//! resources, the PTX instruction mix, and what they show.

use std::fmt::Write as _;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::kernels::Hints;
use crate::results::Measurement;

use super::charts::{color, VENDOR_COLOR};
use super::charts::{Bars, Figure, Line, Panel, RefLine, Style, XAxis};
use super::data::{self, is_vendor, of_size, size_label, Rec};
use super::data::{find, vendor_at};
use super::{md, Ctx, Section, Shown, Topic, SAME_SPEED};

const SPEED: &str = "Speed: kernels x toolchains x sizes (compare)";
const RESOURCES: &str = "Registers, spills and occupancy (compare)";

pub(crate) fn section(ctx: &mut Ctx) -> Result<Section> {
    let recs: Vec<Rec> = ctx
        .data
        .experiment("compare")
        .into_iter()
        .filter(|r| r.m.variant.is_none())
        .collect();
    let mut sec = Section::default();
    if recs.is_empty() {
        return Ok(sec);
    }
    let tcs = ctx.toolchains.clone();
    let sizes = data::sizes(&recs);
    let kernels: Vec<String> = data::kernels(&recs)
        .into_iter()
        .filter(|k| k != data::VENDOR)
        .collect();
    let has_vendor = recs.iter().any(|r| is_vendor(r.m));
    sec.title = SPEED.to_string();
    let mut s = format!("## {SPEED}\n\n");
    let _ = writeln!(
        s,
        "Median GFLOP/s (± the interquartile range as % of the median) of every kernel on every toolchain, \
         and the ratio to cuBLAS measured in the same run at the same size. A cell that failed its check \
         or did not run shows its status instead of a speed; \"-\" means not measured.\n"
    );
    if recs.iter().any(|r| !md::throttle_mark(r.m).is_empty()) {
        let _ = writeln!(
            s,
            "A speed ending in T was measured while the GPU was throttled (see Clocks and throttling).\n"
        );
    }
    let repeats = ctx.data.repeats("compare");
    if repeats > 0 {
        let _ = writeln!(
            s,
            "{repeats} measurements repeated in a later run were left out (the first run's are shown).\n"
        );
    }

    for &size in &sizes {
        let _ = writeln!(s, "### {}\n", md::size_label_long(size));
        let mut header = vec!["kernel".to_string()];
        for t in &tcs {
            let n = data::toolchain_name(*t);
            header.push(format!("{n} GFLOP/s"));
            if has_vendor {
                header.push(format!("{n} % of cuBLAS"));
            }
        }
        if tcs.len() == 2 {
            header.push(format!(
                "{} / {}",
                data::toolchain_name(tcs[0]),
                data::toolchain_name(tcs[1])
            ));
        }
        let mut rows = Vec::new();
        let mut notes = Vec::new();
        for k in &kernels {
            let mut row = vec![k.clone()];
            let mut speeds = Vec::new();
            for t in &tcs {
                let m = find(&recs, k, *t, size);
                row.push(md::gflops_spread(m));
                if has_vendor {
                    row.push(md::vs_vendor(m));
                }
                speeds.push(m.and_then(data::gflops));
                if let Some(r) = m.and_then(|m| m.status.reason()) {
                    notes.push(format!(
                        "{k} on {}: {}",
                        data::toolchain_name(*t),
                        md::short_reason(r)
                    ));
                }
            }
            if tcs.len() == 2 {
                row.push(md::ratio(speeds[0], speeds[1]));
            }
            rows.push(row);
        }
        if let Some(v) = recs
            .iter()
            .map(|r| r.m)
            .find(|m| is_vendor(m) && of_size(m, size))
        {
            let mut row = vec!["cuBLAS (reference)".to_string()];
            for t in &tcs {
                if *t == v.toolchain {
                    row.push(md::gflops_spread(Some(v)));
                    row.push(if v.status.is_ok() {
                        "100.0%".into()
                    } else {
                        "-".into()
                    });
                } else {
                    row.push("-".into());
                    row.push("-".into());
                }
            }
            if tcs.len() == 2 {
                row.push("-".into());
            }
            if let Some(r) = v.status.reason() {
                notes.push(format!("cuBLAS: {}", md::short_reason(r)));
            }
            rows.push(row);
        }
        s.push_str(&md::table(&header, &rows));
        if !notes.is_empty() {
            s.push_str("\nWhy some cells have no speed:\n\n");
            for n in notes {
                let _ = writeln!(s, "- {}", md::escape(&n));
            }
        }
        s.push('\n');
    }

    // Chart 1: GFLOP/s per kernel at one size.
    let bar_size = ctx.chosen_size.filter(|c| sizes.contains(c)).or_else(|| {
        sizes.iter().copied().find(|&sz| {
            recs.iter()
                .any(|r| of_size(r.m, sz) && !is_vendor(r.m) && data::gflops(r.m).is_some())
        })
    });
    if let Some(want) = ctx.chosen_size.filter(|c| !sizes.contains(c)) {
        let _ = writeln!(
            s,
            "(--size {} was not measured in the compare results; the chart uses the largest size.)\n",
            size_label(want)
        );
    }
    s.push_str("### Charts\n\n");
    // Where the findings point: the bar chart at its size, the chart against size.
    let mut bar_chart: Option<((usize, usize, usize), String)> = None;
    let mut size_chart: Option<String> = None;
    if let Some(size) = bar_size {
        let vendor = vendor_at(&recs, size);
        let styles: Vec<Style> = tcs
            .iter()
            .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
            .collect();
        let mut values = Vec::new();
        let mut notes = Vec::new();
        for k in &kernels {
            let mut v = Vec::new();
            let mut n = Vec::new();
            for t in &tcs {
                let m = find(&recs, k, *t, size);
                v.push(m.and_then(data::gflops));
                n.push(match m {
                    None => None,
                    Some(m) if !m.status.is_ok() => Some(m.status.label().to_string()),
                    Some(m) => data::vs_vendor(m).map(|r| format!("{:.0}%", r * 100.0)),
                });
            }
            values.push(v);
            notes.push(n);
        }
        let mut panel = Panel::new(
            "",
            XAxis::Categories(kernels.clone()),
            "kernel",
            "GFLOP/s (median)",
        );
        panel.bars = Some(Bars {
            styles: styles.clone(),
            values,
            notes,
        });
        let mut legend = styles;
        if let Some(v) = vendor.and_then(data::gflops) {
            panel.refs.push(RefLine {
                label: format!("cuBLAS {v:.0}"),
                y: v,
                color: VENDOR_COLOR,
            });
            legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
        }
        let fig = Figure {
            title: format!(
                "Performance of the GEMM kernels, {}{}",
                md::size_label_long(size),
                ctx.title_suffix()
            ),
            legend,
            panels: vec![panel],
            cols: 1,
            panel_w: (110 * kernels.len() as u32).clamp(700, 1400),
            panel_h: 520,
        };
        let stem = format!("perf-{}", size_label(size));
        let chart = ctx.chart(
            &fig,
            &stem,
            &format!("GFLOP/s per kernel and toolchain at {}", size_label(size)),
        )?;
        s.push_str(&chart.markdown);
        bar_chart = Some((size, chart.svg));
        let _ = writeln!(
            s,
            "Bars: median GFLOP/s at {}; the number above a bar is its % of cuBLAS{}.\n",
            md::size_label_long(size),
            if vendor.is_some() {
                " (dashed line)"
            } else {
                " (no cuBLAS row here, so no percentages)"
            }
        );
    }

    // Chart 2: GFLOP/s against size, one panel per kernel.
    let square: Vec<(usize, usize, usize)> = sizes
        .iter()
        .copied()
        .filter(|&(m, n, k)| m == n && n == k)
        .collect();
    if square.len() >= 2 {
        let mut xs: Vec<f64> = square.iter().map(|s| s.0 as f64).collect();
        xs.sort_by(f64::total_cmp);
        let mut panels = Vec::new();
        let mut y_max: f64 = 0.0;
        for k in &kernels {
            let mut p = Panel::new(
                k.clone(),
                XAxis::Log2(xs.clone()),
                "N (M = N = K)",
                "GFLOP/s",
            );
            for t in &tcs {
                let pts: Vec<(f64, Option<f64>)> = xs
                    .iter()
                    .map(|&x| {
                        let n = x as usize;
                        (x, find(&recs, k, *t, (n, n, n)).and_then(data::gflops))
                    })
                    .collect();
                p.lines.push(Line {
                    style: Style::new(data::toolchain_name(*t), color(*t)),
                    points: pts,
                });
            }
            if has_vendor {
                let pts: Vec<(f64, Option<f64>)> = xs
                    .iter()
                    .map(|&x| {
                        let n = x as usize;
                        (x, vendor_at(&recs, (n, n, n)).and_then(data::gflops))
                    })
                    .collect();
                p.lines.push(Line {
                    style: Style::new("cuBLAS", VENDOR_COLOR).dashed(),
                    points: pts,
                });
            }
            y_max = y_max.max(p.data_max());
            panels.push(p);
        }
        let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
        for p in &mut panels {
            p.y_max = Some(y_max);
        }
        let mut legend: Vec<Style> = tcs
            .iter()
            .map(|t| Style::new(data::toolchain_name(*t), color(*t)).line())
            .collect();
        if has_vendor {
            legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
        }
        let cols = panels.len().clamp(1, 4);
        let fig = Figure {
            title: format!("GFLOP/s against problem size{}", ctx.title_suffix()),
            legend,
            panels,
            cols,
            panel_w: 340,
            panel_h: 280,
        };
        let chart = ctx.chart(&fig, "perf-vs-size", "GFLOP/s against size per kernel")?;
        s.push_str(&chart.markdown);
        size_chart = Some(chart.svg);
        let _ = writeln!(
            s,
            "One panel per kernel, the same y scale in all; x is N on a log2 scale (square problems only).\n"
        );
    }

    // Resources.
    let largest = sizes.first().copied();
    let res_row = |k: &str, t: Toolchain| -> Option<&Measurement> {
        // Resources do not depend on the size; prefer the largest size's row.
        largest
            .and_then(|sz| find(&recs, k, t, sz))
            .filter(|m| m.resources.is_some())
            .or_else(|| {
                recs.iter().map(|r| r.m).find(|m| {
                    m.kernel == k
                        && m.toolchain == t
                        && m.variant.is_none()
                        && m.resources.is_some()
                })
            })
            .or_else(|| largest.and_then(|sz| find(&recs, k, t, sz)))
    };
    let _ = writeln!(s, "## {RESOURCES}\n");
    let _ = writeln!(
        s,
        "What each compiler reported for the kernel (registers per thread, spill stores/loads in bytes, stack frame, static shared memory per block) and the theoretical occupancy that follows from it.\n"
    );
    let mut header = vec!["kernel".to_string()];
    for col in [
        "registers",
        "spill st/ld B",
        "stack B",
        "shared B",
        "occupancy",
    ] {
        for t in &tcs {
            header.push(format!("{col} {}", data::toolchain_name(*t)));
        }
    }
    let mut rows = Vec::new();
    for k in &kernels {
        let ms: Vec<Option<&Measurement>> = tcs.iter().map(|t| res_row(k, *t)).collect();
        let mut row = vec![k.clone()];
        for f in [
            md::registers,
            md::spills,
            md::stack,
            md::shared,
            md::occupancy,
        ] {
            for m in &ms {
                row.push(f(*m));
            }
        }
        rows.push(row);
    }
    s.push_str(&md::table(&header, &rows));
    s.push('\n');

    // PTX instruction mix.
    s.push_str(&ptx_mix(ctx, &kernels));

    sec.findings = findings(&recs, &tcs, &kernels, &sizes, res_row, |size| {
        // The bar chart shows the findings' size unless --size chose another;
        // the chart against size shows every size.
        bar_chart
            .as_ref()
            .filter(|(s, _)| *s == size)
            .map(|(_, p)| p.clone())
            .or_else(|| size_chart.clone())
    });
    sec.markdown = s;
    Ok(sec)
}

/// Rows with a PTX mix for each kernel and toolchain: the compare row, else
/// a default-hint row of another experiment.
fn ptx_mix(ctx: &Ctx, kernels: &[String]) -> String {
    let order = ["compare", "hints", "registers", "jit", "tiling"];
    let mut rows = Vec::new();
    let mut any = false;
    for k in kernels {
        for t in &ctx.toolchains {
            let mut found: Option<&Measurement> = None;
            'outer: for exp in order {
                for r in ctx.data.experiment(exp) {
                    let m = r.m;
                    if m.kernel == *k
                        && m.toolchain == *t
                        && m.variant.is_none()
                        && m.ptx_mix.is_some()
                        && m.hints == Hints::default()
                    {
                        found = Some(m);
                        break 'outer;
                    }
                }
            }
            let Some(m) = found else {
                continue;
            };
            let Some(x) = &m.ptx_mix else {
                continue;
            };
            any = true;
            let widths = if x.ld_global.is_empty() {
                "0".to_string()
            } else {
                x.ld_global
                    .iter()
                    .map(|(bits, n)| format!("{n}x{bits}b"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let from = match m.label.as_deref() {
                Some(l) => format!("{} ({l})", m.experiment),
                None => m.experiment.clone(),
            };
            rows.push(vec![
                k.clone(),
                data::toolchain_name(*t).to_string(),
                x.fma.to_string(),
                x.float_other.to_string(),
                widths,
                x.st_global.to_string(),
                x.ld_shared.to_string(),
                x.st_shared.to_string(),
                format!("{}/{}", x.ld_local, x.st_local),
                x.barriers.to_string(),
                x.shuffles.to_string(),
                x.moves.to_string(),
                x.conversions.to_string(),
                x.compares.to_string(),
                x.branches.to_string(),
                x.integer.to_string(),
                x.total.to_string(),
                from,
            ]);
        }
    }
    let mut s = String::from("## PTX instruction mix\n\n");
    if !any {
        s.push_str("These results hold no PTX instruction mix (runs before it was recorded, or toolchains that give no PTX).\n\n");
        return s;
    }
    s.push_str(
        "Static counts in each toolchain's PTX (instructions as written, not as executed), default hints. \
         ld.global is split by access width (count x bits); ld/st.local is thread-private memory \
         (spills, indexed arrays).\n\n",
    );
    s.push_str(&kept_listings(ctx, kernels));
    s.push_str(&md::table(
        &md::h(&[
            "kernel",
            "toolchain",
            "fma",
            "other fp",
            "ld.global",
            "st.global",
            "ld.shared",
            "st.shared",
            "ld/st.local",
            "barriers",
            "shuffles",
            "mov",
            "cvt",
            "setp",
            "branches",
            "integer",
            "total",
            "from",
        ]),
        &rows,
    ));
    s.push('\n');
    s
}

/// What the runs kept with --keep-ptx (RUN/ptx.tar.gz), read back: per kernel at
/// its published state, the size of each toolchain's listing and how many
/// normalized lines differ between them (`gemmlab ptx --from RUN --kernel K --diff`
/// prints the diff itself).
fn kept_listings(ctx: &Ctx, kernels: &[String]) -> String {
    let mut rows = Vec::new();
    for run in &ctx.data.runs {
        let Ok(store) = crate::ptx_archive::PtxStore::open(&run.dir) else {
            continue;
        };
        if store.is_empty() {
            continue;
        }
        for k in kernels {
            let listing = |t: Toolchain| {
                run.measurements
                    .iter()
                    .filter(|m| m.experiment == "compare" && m.kernel == *k && m.toolchain == t)
                    .filter(|m| !data::is_offline(m))
                    .filter(|m| m.variant.is_none() && m.hints.is_published())
                    .find_map(|m| store.get(m.ptx_file.as_deref()?))
            };
            if let (Some(cu), Some(cl)) = (listing(Toolchain::Cuda), listing(Toolchain::OpenCl)) {
                rows.push(vec![
                    k.clone(),
                    cu.lines().count().to_string(),
                    cl.lines().count().to_string(),
                    crate::ptx::changed_lines(cu, cl).to_string(),
                    format!("`{}`", run.dir.join(crate::ptx_archive::ARCHIVE).display()),
                ]);
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "The two toolchains' PTX of each published kernel, as kept in the compare run's archive: \
         lines of each listing and lines that differ once register and label numbering is ignored.\n\n",
    );
    s.push_str(&md::table(
        &md::h(&[
            "kernel",
            "CUDA lines",
            "OpenCL lines",
            "lines that differ",
            "archive",
        ]),
        &rows,
    ));
    s.push('\n');
    s
}

/// "CUDA is 61% faster" / "CUDA is 9% slower": `rel` is `a / b - 1`.
fn faster_words(a: &str, rel: f64) -> String {
    if rel >= 0.0 {
        format!("{a} is {:.0}% faster", rel * 100.0)
    } else {
        format!("{a} is {:.0}% slower", -rel * 100.0)
    }
}

/// Two toolchains' view of one kernel at the findings' size.
struct Pair {
    kernel: String,
    regs: (u32, u32),
    /// (GFLOP/s on the first, on the second, first / second - 1).
    speed: Option<(f64, f64, f64)>,
}

fn findings<'a>(
    recs: &[Rec<'a>],
    tcs: &[Toolchain],
    kernels: &[String],
    sizes: &[(usize, usize, usize)],
    res_row: impl Fn(&str, Toolchain) -> Option<&'a Measurement>,
    chart_of: impl Fn((usize, usize, usize)) -> Option<String>,
) -> Vec<Shown> {
    let mut out = Vec::new();
    let Some(&largest) = sizes.iter().find(|&&sz| {
        recs.iter()
            .any(|r| of_size(r.m, sz) && !is_vendor(r.m) && data::gflops(r.m).is_some())
    }) else {
        return out;
    };
    let chart = chart_of(largest);
    let at = size_label(largest);
    let vendor = vendor_at(recs, largest).and_then(data::gflops);

    // Best kernel per toolchain.
    let best_at = |t: Toolchain, sz| -> Option<&'a Measurement> {
        recs.iter()
            .map(|r| r.m)
            .filter(|m| {
                m.toolchain == t && !is_vendor(m) && of_size(m, sz) && data::gflops(m).is_some()
            })
            .max_by(|a, b| {
                data::gflops(a)
                    .unwrap_or(0.0)
                    .total_cmp(&data::gflops(b).unwrap_or(0.0))
            })
    };
    let mut parts = Vec::new();
    let mut short_parts = Vec::new();
    let mut best_share: Option<f64> = None;
    for t in tcs {
        if let Some(m) = best_at(*t, largest) {
            let g = data::gflops(m).unwrap_or(0.0);
            let n = data::toolchain_name(*t);
            match data::vs_vendor(m) {
                Some(v) => {
                    parts.push(format!(
                        "on {n} {} at {g:.0} GFLOP/s = {:.1}% of cuBLAS",
                        m.kernel,
                        v * 100.0
                    ));
                    short_parts.push(format!(
                        "{:.1}% of cuBLAS on {n} ({}, {g:.0} GFLOP/s)",
                        v * 100.0,
                        m.kernel
                    ));
                    best_share = Some(best_share.map_or(v, |b| b.max(v)));
                }
                None => {
                    parts.push(format!("on {n} {} at {g:.0} GFLOP/s", m.kernel));
                    short_parts.push(format!("{g:.0} GFLOP/s on {n} ({})", m.kernel));
                }
            }
        }
    }
    if !parts.is_empty() {
        let mut f = format!(
            "**Best kernel per toolchain** at {at}: {}",
            parts.join("; ")
        );
        if let Some(v) = vendor {
            let _ = write!(f, " (cuBLAS: {v:.0} GFLOP/s)");
        }
        f.push('.');
        let others: Vec<String> = sizes
            .iter()
            .filter(|&&sz| sz != largest)
            .filter_map(|&sz| {
                let p: Vec<String> = tcs
                    .iter()
                    .filter_map(|t| {
                        let m = best_at(*t, sz)?;
                        Some(format!(
                            "{} {} {}",
                            data::toolchain_name(*t),
                            m.kernel,
                            data::vs_vendor(m).map_or_else(
                                || format!("{:.0} GFLOP/s", data::gflops(m).unwrap_or(0.0)),
                                |v| format!("{:.1}%", v * 100.0)
                            )
                        ))
                    })
                    .collect();
                (!p.is_empty()).then(|| format!("{}: {}", size_label(sz), p.join(", ")))
            })
            .collect();
        if !others.is_empty() {
            let _ = write!(f, " Other sizes: {}.", others.join("; "));
        }
        out.push(
            Shown::legacy(Topic::VsVendor, f, SPEED)
                .short(format!(
                    "At size {at} the fastest kernel reaches {}.",
                    md::join_and(&short_parts)
                ))
                .chart(chart.clone())
                // What is left to cuBLAS.
                .weight(best_share.map_or(0.0, |b| 1.0 - b)),
        );
    }

    // Registers and speed, toolchain against toolchain.
    if tcs.len() == 2 {
        let (a, b) = (tcs[0], tcs[1]);
        let (na, nb) = (data::toolchain_name(a), data::toolchain_name(b));
        let mut diff: Vec<(u32, String, Pair)> = Vec::new();
        let mut same_regs_diff_speed: Vec<(String, Pair)> = Vec::new();
        let mut alike = Vec::new();
        // The largest speed gap of any kernel, wherever it is listed.
        let mut widest: Option<(String, f64)> = None;
        for k in kernels {
            let (ra, rb) = (res_row(k, a), res_row(k, b));
            let (ga, gb) = (
                find(recs, k, a, largest).and_then(data::gflops),
                find(recs, k, b, largest).and_then(data::gflops),
            );
            let (rga, rgb) = (ra.and_then(data::registers), rb.and_then(data::registers));
            let speed = match (ga, gb) {
                (Some(x), Some(y)) if y > 0.0 => {
                    let rel = x / y - 1.0;
                    Some((x, y, rel))
                }
                _ => None,
            };
            if let Some((_, _, rel)) = speed {
                if widest.as_ref().is_none_or(|(_, w)| rel.abs() > w.abs()) {
                    widest = Some((k.clone(), rel));
                }
            }
            let speed_text = speed.map(|(x, y, rel)| {
                if rel.abs() <= SAME_SPEED {
                    format!("speed alike ({na} {x:.0}, {nb} {y:.0} GFLOP/s)")
                } else if rel > 0.0 {
                    format!("{na} {:.0}% faster ({x:.0} vs {y:.0} GFLOP/s)", rel * 100.0)
                } else {
                    format!(
                        "{na} {:.0}% slower ({x:.0} vs {y:.0} GFLOP/s)",
                        -rel * 100.0
                    )
                }
            });
            match (rga, rgb) {
                (Some(x), Some(y)) if x != y => {
                    let occ = match (ra.and_then(|m| m.occupancy), rb.and_then(|m| m.occupancy)) {
                        (Some(oa), Some(ob)) if (oa - ob).abs() > 1e-9 => {
                            format!("occupancy {:.1}% vs {:.1}%", oa * 100.0, ob * 100.0)
                        }
                        (Some(oa), Some(_)) => format!("same occupancy ({:.1}%)", oa * 100.0),
                        _ => "occupancy unknown".into(),
                    };
                    let more = if x > y { na } else { nb };
                    let d = x.abs_diff(y);
                    let base = x.min(y).max(1);
                    diff.push((
                        d,
                        format!(
                            "{k}: {na} {x} vs {nb} {y} registers ({more} +{d}, +{:.0}%), {occ}; at {at} {}",
                            d as f64 * 100.0 / base as f64,
                            speed_text.clone().unwrap_or_else(|| "no speed on both".into())
                        ),
                        Pair {
                            kernel: k.clone(),
                            regs: (x, y),
                            speed,
                        },
                    ));
                }
                (Some(x), Some(y)) => match speed {
                    Some((_, _, rel)) if rel.abs() > SAME_SPEED => same_regs_diff_speed.push((
                        format!(
                            "{k}: {x} registers on both, {}",
                            speed_text.clone().unwrap_or_default()
                        ),
                        Pair {
                            kernel: k.clone(),
                            regs: (x, y),
                            speed,
                        },
                    )),
                    Some(_) => alike.push(k.clone()),
                    None => {}
                },
                _ => {}
            }
        }
        let widest = widest.map(|(k, _)| k);
        if !diff.is_empty() {
            diff.sort_by_key(|x| std::cmp::Reverse(x.0));
            let text = format!(
                "**Register counts differ between {na} and {nb}** on {} of {} kernels (largest difference first): {}.",
                diff.len(),
                kernels.len(),
                diff.iter().map(|(_, t, _)| t.as_str()).collect::<Vec<_>>().join("; ")
            );
            // The summary names the kernel whose speeds differ most.
            let top = diff
                .iter()
                .filter_map(|(_, _, p)| p.speed.map(|s| (p, s)))
                .max_by(|x, y| x.1 .2.abs().total_cmp(&y.1 .2.abs()));
            let (short, weight) = match top {
                Some((p, (x, y, rel))) => {
                    let k = &p.kernel;
                    let (ra, rb) = p.regs;
                    let short = if widest.as_ref() == Some(k) {
                        format!(
                            "{k} shows the largest gap between the toolchains: {} at size {at} ({x:.0} vs {y:.0} GFLOP/s), with {ra} registers on {na} and {rb} on {nb}.",
                            faster_words(na, rel)
                        )
                    } else {
                        format!(
                            "Of the {} kernels whose register counts differ between {na} and {nb}, {k} differs most in speed: {} at size {at} ({x:.0} vs {y:.0} GFLOP/s; {ra} vs {rb} registers).",
                            diff.len(),
                            faster_words(na, rel)
                        )
                    };
                    (short, rel)
                }
                None => {
                    let p = &diff[0].2;
                    (
                        format!(
                            "{na} and {nb} give {} of {} kernels different register counts, most {}: {} vs {}.",
                            diff.len(),
                            kernels.len(),
                            p.kernel,
                            p.regs.0,
                            p.regs.1
                        ),
                        0.0,
                    )
                }
            };
            out.push(
                Shown::legacy(Topic::Toolchains, text, RESOURCES)
                    .short(short)
                    .chart(chart.clone())
                    .weight(weight),
            );
        }
        if !same_regs_diff_speed.is_empty() {
            let text = format!(
                "**Same registers, different speed** at {at}: {}. The difference there is not register pressure; compare their PTX.",
                same_regs_diff_speed
                    .iter()
                    .map(|(t, _)| t.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            let pairs: Vec<&Pair> = same_regs_diff_speed.iter().map(|(_, p)| p).collect();
            let rels: Vec<f64> = pairs.iter().filter_map(|p| p.speed.map(|s| s.2)).collect();
            let (lo, hi) = rels.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
                (lo.min(r.abs()), hi.max(r.abs()))
            });
            let range = if (lo * 100.0).round() == (hi * 100.0).round() {
                format!("{:.0}%", hi * 100.0)
            } else {
                format!("{:.0}-{:.0}%", lo * 100.0, hi * 100.0)
            };
            let how = if rels.iter().all(|r| *r > 0.0) {
                format!("{na} is {range} faster")
            } else if rels.iter().all(|r| *r < 0.0) {
                format!("{na} is {range} slower")
            } else {
                format!("their speeds differ by {range}")
            };
            let names: Vec<String> = pairs.iter().map(|p| p.kernel.clone()).collect();
            let regs = match pairs.first().map(|p| p.regs.0) {
                Some(r) if pairs.iter().all(|p| p.regs.0 == r) => format!(" ({r})"),
                _ => String::new(),
            };
            let short = format!(
                "{} {} the same registers on both toolchains{regs}, yet {how} at size {at}.",
                md::join_and(&names),
                if names.len() == 1 { "has" } else { "have" }
            );
            out.push(
                Shown::legacy(Topic::Toolchains, text, RESOURCES)
                    .short(short)
                    .chart(chart.clone())
                    .weight(hi),
            );
        }
        if !alike.is_empty() {
            let text = format!(
                "**Alike on both toolchains** (same registers, speed within {:.0}% at {at}): {}.",
                SAME_SPEED * 100.0,
                alike.join(", ")
            );
            let short = format!(
                "{} {} alike on both toolchains: the same registers and speeds within {:.0}% at size {at}.",
                md::join_and(&alike),
                if alike.len() == 1 { "runs" } else { "run" },
                SAME_SPEED * 100.0
            );
            out.push(
                Shown::legacy(Topic::Toolchains, text, RESOURCES)
                    .short(short)
                    .chart(chart.clone()),
            );
        }
    }
    out
}
