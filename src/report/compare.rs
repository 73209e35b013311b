//! The "compare" experiment: headline tables, the per-kernel bar chart, speed
//! against size, compiler resources, the PTX instruction mix, and the words of
//! what they show.

use std::fmt::Write as _;

use crate::analysis::compare::{Best, Compare, Kind, Pair, Size};
use crate::analysis::stats;
use crate::backend::Toolchain;
use crate::error::Result;

use super::data::{self, find, is_vendor, of_size, size_label, toolchain_name as name, vendor_at};
use super::{color, VENDOR_COLOR};
use super::{md, Ctx, Section, Shown, Topic, Words, SAME_SPEED};
use crate::plot::{Bars, Figure, Line, Panel, RefLine, Style, XAxis};

const SPEED: &str = "Speed: kernels x toolchains x sizes (compare)";
const RESOURCES: &str = "Registers, spills and occupancy (compare)";

pub(crate) fn section(ctx: &mut Ctx, a: &Compare) -> Result<Section> {
    let mut s = format!("## {SPEED}\n\n");
    s.push_str(
        "Median GFLOP/s (± the interquartile range as % of the median) of every kernel on every toolchain, \
         and the ratio to cuBLAS measured in the same run at the same size. A cell that failed its check \
         or did not run shows its status instead of a speed; \"-\" means not measured.\n\n",
    );
    if a.recs.iter().any(|r| !md::throttle_mark(r.m).is_empty()) {
        s.push_str("A speed ending in T was measured while the GPU was throttled (see Clocks and throttling).\n\n");
    }
    if a.repeats > 0 {
        let _ = writeln!(
            s,
            "{} measurements repeated in a later run were left out (the first run's are shown).\n",
            a.repeats
        );
    }
    for &size in &a.sizes {
        speed_table(&mut s, a, size);
    }
    if let Some(want) = a.unmeasured {
        let _ = writeln!(
            s,
            "(--size {} was not measured in the compare results; the chart uses the largest size.)\n",
            size_label(want)
        );
    }
    s.push_str("### Charts\n\n");
    if let Some(size) = a.bar_size {
        bar_chart(ctx, &mut s, a, size)?;
    }
    if !a.square.is_empty() {
        size_chart(ctx, &mut s, a)?;
    }
    let _ = writeln!(s, "## {RESOURCES}\n");
    s.push_str("What each compiler reported for the kernel (registers per thread, spill stores/loads in bytes, stack frame, static shared memory per block) and the theoretical occupancy that follows from it.\n\n");
    let cols = [
        "registers",
        "spill st/ld B",
        "stack B",
        "shared B",
        "occupancy",
    ];
    let mut header = vec!["kernel".to_string()];
    header.extend(cols.iter().flat_map(|c| {
        a.toolchains
            .iter()
            .map(move |t| format!("{c} {}", name(*t)))
    }));
    let rows: Vec<Vec<String>> = a
        .kernels
        .iter()
        .zip(&a.resources)
        .map(|(k, ms)| {
            let cells = [
                md::registers,
                md::spills,
                md::stack,
                md::shared,
                md::occupancy,
            ];
            let cells = cells.iter().flat_map(|f| ms.iter().map(move |m| f(*m)));
            std::iter::once(k.clone()).chain(cells).collect()
        })
        .collect();
    s.push_str(&md::table(&header, &rows));
    s.push('\n');
    ptx_mix(&mut s, a);
    let findings = a.findings.iter().map(|f| {
        let heading = if f.topic == Topic::VsVendor {
            SPEED
        } else {
            RESOURCES
        };
        Shown::new(f.clone(), heading)
    });
    Ok(Section {
        title: SPEED.into(),
        markdown: s,
        findings: findings.collect(),
    })
}

fn speed_table(s: &mut String, a: &Compare, size: Size) {
    let _ = writeln!(s, "### {}\n", md::size_label_long(size));
    let two = a.toolchains.len() == 2;
    let mut header = vec!["kernel".to_string()];
    for t in &a.toolchains {
        header.push(format!("{} GFLOP/s", name(*t)));
        if a.has_vendor {
            header.push(format!("{} % of cuBLAS", name(*t)));
        }
    }
    if two {
        header.push(format!(
            "{} / {}",
            name(a.toolchains[0]),
            name(a.toolchains[1])
        ));
    }
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for k in &a.kernels {
        let mut row = vec![k.clone()];
        let mut speeds = Vec::new();
        for t in &a.toolchains {
            let m = find(&a.recs, k, *t, size);
            row.push(md::gflops_spread(m));
            if a.has_vendor {
                row.push(md::vs_vendor(m));
            }
            speeds.push(m.and_then(data::gflops));
            if let Some(r) = m.and_then(|m| m.status.reason()) {
                notes.push(format!("{k} on {}: {}", name(*t), md::short_reason(r)));
            }
        }
        if two {
            row.push(md::ratio(speeds[0], speeds[1]));
        }
        rows.push(row);
    }
    if let Some(v) = a
        .recs
        .iter()
        .map(|r| r.m)
        .find(|m| is_vendor(m) && of_size(m, size))
    {
        let mut row = vec!["cuBLAS (reference)".to_string()];
        for t in &a.toolchains {
            let own = *t == v.toolchain;
            row.push(if own {
                md::gflops_spread(Some(v))
            } else {
                md::MISSING.into()
            });
            let share = (own && v.status.is_ok()).then_some(1.0);
            row.push(md::pct(share));
        }
        if two {
            row.push(md::MISSING.into());
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

/// A bar or line style per toolchain, in its colour.
pub(super) fn styles(tcs: &[Toolchain]) -> Vec<Style> {
    tcs.iter()
        .map(|t| Style::new(name(*t), color(*t)))
        .collect()
}

/// GFLOP/s per kernel at one size.
fn bar_chart(ctx: &mut Ctx, s: &mut String, a: &Compare, size: Size) -> Result<()> {
    let vendor = vendor_at(&a.recs, size);
    let styles = styles(&a.toolchains);
    let (mut values, mut notes) = (Vec::new(), Vec::new());
    for k in &a.kernels {
        let ms: Vec<_> = a
            .toolchains
            .iter()
            .map(|t| find(&a.recs, k, *t, size))
            .collect();
        values.push(ms.iter().map(|m| m.and_then(data::gflops)).collect());
        notes.push(
            ms.iter()
                .map(|m| match m {
                    None => None,
                    Some(m) if !m.status.is_ok() => Some(m.status.label().to_string()),
                    Some(m) => data::vs_vendor(m).map(|r| format!("{:.0}%", r * 100.0)),
                })
                .collect(),
        );
    }
    let mut panel = Panel::new(
        "",
        XAxis::Categories(a.kernels.clone()),
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
        let label = format!("cuBLAS {}", md::speed(v));
        panel.refs.push(RefLine {
            label,
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
        panel_w: (110 * a.kernels.len() as u32).clamp(700, 1400),
        panel_h: 520,
    };
    let alt = format!("GFLOP/s per kernel and toolchain at {}", size_label(size));
    s.push_str(
        &ctx.chart(&fig, &format!("perf-{}", size_label(size)), &alt)?
            .markdown,
    );
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
    Ok(())
}

/// GFLOP/s against size, one panel per kernel.
fn size_chart(ctx: &mut Ctx, s: &mut String, a: &Compare) -> Result<()> {
    let xs: Vec<f64> = a.square.iter().map(|&n| n as f64).collect();
    let line = |style: Style, f: &dyn Fn(Size) -> Option<f64>| Line {
        style,
        points: a.square.iter().map(|&n| (n as f64, f((n, n, n)))).collect(),
    };
    let vendor = Style::new("cuBLAS", VENDOR_COLOR).dashed();
    let mut panels: Vec<Panel> = a
        .kernels
        .iter()
        .map(|k| {
            let mut p = Panel::new(
                k.clone(),
                XAxis::Log2(xs.clone()),
                "N (M = N = K)",
                "GFLOP/s",
            );
            for t in &a.toolchains {
                let style = Style::new(name(*t), color(*t));
                p.lines.push(line(style, &|sz| {
                    find(&a.recs, k, *t, sz).and_then(data::gflops)
                }));
            }
            if a.has_vendor {
                p.lines.push(line(vendor.clone(), &|sz| {
                    vendor_at(&a.recs, sz).and_then(data::gflops)
                }));
            }
            p
        })
        .collect();
    let y_max = panels.iter().map(Panel::data_max).fold(0.0, f64::max);
    for p in &mut panels {
        p.y_max = Some(if y_max > 0.0 { y_max * 1.08 } else { 1.0 });
    }
    let mut legend: Vec<Style> = styles(&a.toolchains).into_iter().map(Style::line).collect();
    if a.has_vendor {
        legend.push(vendor);
    }
    let fig = Figure {
        title: format!("GFLOP/s against problem size{}", ctx.title_suffix()),
        legend,
        cols: panels.len().clamp(1, 4),
        panels,
        panel_w: 340,
        panel_h: 280,
    };
    s.push_str(
        &ctx.chart(&fig, "perf-vs-size", "GFLOP/s against size per kernel")?
            .markdown,
    );
    s.push_str("One panel per kernel, the same y scale in all; x is N on a log2 scale (square problems only).\n\n");
    Ok(())
}

fn ptx_mix(s: &mut String, a: &Compare) {
    s.push_str("## PTX instruction mix\n\n");
    if a.mix.is_empty() {
        s.push_str("These results hold no PTX instruction mix (runs before it was recorded, or toolchains that give no PTX).\n\n");
        return;
    }
    s.push_str(
        "Static counts in each toolchain's PTX (instructions as written, not as executed), default hints. \
         ld.global is split by access width (count x bits); ld/st.local is thread-private memory \
         (spills, indexed arrays).\n\n",
    );
    if !a.listings.is_empty() {
        s.push_str(
            "The two toolchains' PTX of each published kernel, as kept in the compare run's archive: \
             lines of each listing and lines that differ once register and label numbering is ignored.\n\n",
        );
        let rows: Vec<Vec<String>> = a
            .listings
            .iter()
            .map(|l| {
                let n = [l.cuda_lines, l.opencl_lines, l.differ].map(|n| n.to_string());
                let archive = format!("`{}`", l.archive.display());
                [vec![l.kernel.clone()], n.to_vec(), vec![archive]].concat()
            })
            .collect();
        let head = [
            "kernel",
            "CUDA lines",
            "OpenCL lines",
            "lines that differ",
            "archive",
        ];
        s.push_str(&md::table(&md::h(&head), &rows));
        s.push('\n');
    }
    let rows: Vec<Vec<String>> = a
        .mix
        .iter()
        .filter_map(|m| Some((m, m.ptx_mix.as_ref()?)))
        .map(|(m, x)| {
            let widths: Vec<String> = x
                .ld_global
                .iter()
                .map(|(bits, n)| format!("{n}x{bits}b"))
                .collect();
            let from = match m.label.as_deref() {
                Some(l) => format!("{} ({l})", m.experiment),
                None => m.experiment.clone(),
            };
            let mut row = vec![
                m.kernel.clone(),
                name(m.toolchain).into(),
                x.fma.to_string(),
                x.float_other.to_string(),
            ];
            row.push(if widths.is_empty() {
                "0".into()
            } else {
                widths.join(" ")
            });
            row.extend([x.st_global, x.ld_shared, x.st_shared].map(|n| n.to_string()));
            row.push(format!("{}/{}", x.ld_local, x.st_local));
            let counts = [
                x.barriers,
                x.shuffles,
                x.moves,
                x.conversions,
                x.compares,
                x.branches,
                x.integer,
                x.total,
            ];
            row.extend(counts.map(|n| n.to_string()));
            row.push(from);
            row
        })
        .collect();
    let head = "kernel,toolchain,fma,other fp,ld.global,st.global,ld.shared,st.shared,ld/st.local,\
                barriers,shuffles,mov,cvt,setp,branches,integer,total,from";
    s.push_str(&md::table(
        &head.split(',').map(String::from).collect::<Vec<_>>(),
        &rows,
    ));
    s.push('\n');
}

/// "gemm3: CUDA 40 vs OpenCL 32 registers (...)": a pair of the register findings.
fn speed_words(p: &Pair, na: &str, nb: &str) -> Option<String> {
    let ((x, y), c) = (p.gflops?, p.change?);
    Some(if stats::is_same(c) {
        format!("speed alike ({na} {x:.0}, {nb} {y:.0} GFLOP/s)")
    } else {
        format!("{na} {} ({x:.0} vs {y:.0} GFLOP/s)", md::faster(c))
    })
}

fn differ_words(p: &Pair, na: &str, nb: &str, at: &str) -> String {
    let (x, y) = p.registers;
    let occ = match p.occupancy {
        (Some(oa), Some(ob)) if (oa - ob).abs() > 1e-9 => {
            format!("occupancy {} vs {}", md::pct(Some(oa)), md::pct(Some(ob)))
        }
        (Some(oa), Some(_)) => format!("same occupancy ({})", md::pct(Some(oa))),
        _ => "occupancy unknown".into(),
    };
    let d = x.abs_diff(y);
    format!(
        "{}: {na} {x} vs {nb} {y} registers ({} +{d}, +{:.0}%), {occ}; at {at} {}",
        p.kernel,
        if x > y { na } else { nb },
        d as f64 * 100.0 / x.min(y).max(1) as f64,
        speed_words(p, na, nb).unwrap_or_else(|| "no speed on both".into())
    )
}

fn best_words(b: &Best) -> (String, String) {
    let (n, k, g) = (name(b.toolchain), &b.kernel, md::speed(b.gflops));
    match b.vs_vendor.map(|v| md::pct(Some(v))) {
        Some(v) => (
            format!("on {n} {k} at {g} GFLOP/s = {v} of cuBLAS"),
            format!("{v} of cuBLAS on {n} ({k}, {g} GFLOP/s)"),
        ),
        None => (
            format!("on {n} {k} at {g} GFLOP/s"),
            format!("{g} GFLOP/s on {n} ({k})"),
        ),
    }
}

fn joined<T>(items: &[T], sep: &str, f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(sep)
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
        Kind::BestPerToolchain {
            size,
            vendor,
            best,
            others,
        } => best_text(*size, *vendor, best, others),
        Kind::RegistersDiffer {
            size,
            toolchains,
            kernels,
            pairs,
            top,
            top_is_widest,
        } => differ_text(*size, *toolchains, *kernels, pairs, *top, *top_is_widest),
        Kind::SameRegistersDifferentSpeed {
            size,
            toolchains,
            pairs,
            least,
            most,
        } => same_text(*size, *toolchains, pairs, (*least, *most)),
        Kind::Alike { size, kernels } => {
            let (at, within) = (size_label(*size), SAME_SPEED * 100.0);
            let runs = md::verb(kernels.len(), "runs", "run");
            Words {
                text: format!("**Alike on both toolchains** (same registers, speed within {within:.0}% at {at}): {}.", kernels.join(", ")),
                short: format!("{} {runs} alike on both toolchains: the same registers and speeds within {within:.0}% at size {at}.", md::join_and(kernels)),
            }
        }
    }
}

fn best_text(
    size: Size,
    vendor: Option<f64>,
    best: &[Best],
    others: &[(Size, Vec<Best>)],
) -> Words {
    let at = size_label(size);
    let mut text = format!(
        "**Best kernel per toolchain** at {at}: {}",
        joined(best, "; ", |b| best_words(b).0)
    );
    if let Some(v) = vendor {
        let _ = write!(text, " (cuBLAS: {} GFLOP/s)", md::speed(v));
    }
    text.push('.');
    let other = |b: &Best| {
        let v = b.vs_vendor.map_or_else(
            || format!("{} GFLOP/s", md::speed(b.gflops)),
            |v| md::pct(Some(v)),
        );
        format!("{} {} {v}", name(b.toolchain), b.kernel)
    };
    if !others.is_empty() {
        let o = joined(others, "; ", |(sz, b)| {
            format!("{}: {}", size_label(*sz), joined(b, ", ", other))
        });
        let _ = write!(text, " Other sizes: {o}.");
    }
    let shorts: Vec<String> = best.iter().map(|b| best_words(b).1).collect();
    let short = format!(
        "At size {at} the fastest kernel reaches {}.",
        md::join_and(&shorts)
    );
    Words { text, short }
}

fn differ_text(
    size: Size,
    [a, b]: [Toolchain; 2],
    kernels: usize,
    pairs: &[Pair],
    top: Option<usize>,
    widest: bool,
) -> Words {
    let (na, nb, at, n) = (name(a), name(b), size_label(size), pairs.len());
    let text = format!(
        "**Register counts differ between {na} and {nb}** on {n} of {kernels} kernels (largest difference first): {}.",
        joined(pairs, "; ", |p| differ_words(p, na, nb, &at))
    );
    let short = match top.map(|i| &pairs[i]) {
        Some(
            p @ Pair {
                gflops: Some((x, y)),
                change: Some(c),
                ..
            },
        ) => {
            let (k, (ra, rb), faster) = (&p.kernel, p.registers, md::faster(*c));
            if widest {
                format!("{k} shows the largest gap between the toolchains: {na} is {faster} at size {at} ({x:.0} vs {y:.0} GFLOP/s), with {ra} registers on {na} and {rb} on {nb}.")
            } else {
                format!("Of the {n} kernels whose register counts differ between {na} and {nb}, {k} differs most in speed: {na} is {faster} at size {at} ({x:.0} vs {y:.0} GFLOP/s; {ra} vs {rb} registers).")
            }
        }
        _ => {
            let (k, (ra, rb)) = (&pairs[0].kernel, pairs[0].registers);
            format!("{na} and {nb} give {n} of {kernels} kernels different register counts, most {k}: {ra} vs {rb}.")
        }
    };
    Words { text, short }
}

fn same_text(
    size: Size,
    [a, b]: [Toolchain; 2],
    pairs: &[Pair],
    (least, most): (f64, f64),
) -> Words {
    let (na, nb, at) = (name(a), name(b), size_label(size));
    let item = |p: &Pair| {
        let speed = speed_words(p, na, nb).unwrap_or_default();
        format!("{}: {} registers on both, {speed}", p.kernel, p.registers.0)
    };
    let text = format!(
        "**Same registers, different speed** at {at}: {}. The difference there is not register pressure; compare their PTX.",
        joined(pairs, "; ", item)
    );
    let range = if (least * 100.0).round() == (most * 100.0).round() {
        format!("{:.0}%", most * 100.0)
    } else {
        format!("{:.0}-{:.0}%", least * 100.0, most * 100.0)
    };
    let changes = || pairs.iter().filter_map(|p| p.change);
    let how = if changes().all(|c| c > 0.0) {
        format!("{na} is {range} faster")
    } else if changes().all(|c| c < 0.0) {
        format!("{na} is {range} slower")
    } else {
        format!("their speeds differ by {range}")
    };
    let names: Vec<String> = pairs.iter().map(|p| p.kernel.clone()).collect();
    let r = pairs[0].registers.0;
    let regs = if pairs.iter().all(|p| p.registers.0 == r) {
        format!(" ({r})")
    } else {
        String::new()
    };
    let has = md::verb(names.len(), "has", "have");
    let short = format!(
        "{} {has} the same registers on both toolchains{regs}, yet {how} at size {at}.",
        md::join_and(&names)
    );
    Words { text, short }
}
