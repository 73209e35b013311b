//! The "compare" experiment: speed tables, the per-kernel bar chart, speed
//! against size, compiler resources, the PTX instruction mix, and their words.

use std::fmt::Write as _;
use std::iter::once;

use crate::analysis::compare::{Best, Compare, Kind, Listing, Pair, Size};
use crate::analysis::stats::{distinct, is_same};
use crate::backend::ptx::PtxMix;
use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::Measurement;

use super::data::{self, find, is_vendor, of_size, size_label, toolchain_name as name, vendor_at};
use super::{color, md, Ctx, Section, Shown, Topic, Words, SAME_SPEED, VENDOR_COLOR};
use crate::plot::{Bars, Figure, Line, Panel, RefLine, Style, XAxis};

const SPEED: &str = "Speed: kernels x toolchains x sizes (compare)";
const RESOURCES: &str = "Registers, spills and occupancy (compare)";
pub(super) const THROTTLED: &str =
    "A speed ending in T was measured while the GPU was throttled (see Clocks and throttling).\n\n";

pub(crate) fn section(ctx: &mut Ctx, a: &Compare) -> Result<Section> {
    let mut s = format!("## {SPEED}\n\n");
    s.push_str("Median GFLOP/s (± the interquartile range as % of the median) and the share of cuBLAS in the same run at the same size; a cell that failed its check or did not run shows its status, \"-\" was not measured.\n\n");
    if a.vendor_paired {
        s.push_str("The share of cuBLAS is against cuBLAS timed in the same interleaved repetitions as the row (A B cuBLAS A B cuBLAS ...), so clock and thermal drift fall on both alike; the cuBLAS row is the call timed alone, before them.\n\n");
    }
    if a.recs.iter().any(|r| !md::throttle_mark(r.m).is_empty()) {
        s.push_str(THROTTLED);
    }
    if a.repeats > 0 {
        let n = a.repeats;
        let _ = writeln!(
            s,
            "{n} measurements repeated in a later run were left out (the first run's are shown).\n"
        );
    }
    for &size in &a.sizes {
        speed_table(&mut s, a, size);
    }
    if let Some(want) = a.unmeasured.map(size_label) {
        let _ = writeln!(s, "(--size {want} was not measured in the compare results; the chart uses the largest size.)\n");
    }
    s.push_str("### Charts\n\n");
    if let Some(size) = a.bar_size {
        bar_chart(ctx, &mut s, a, size)?;
    }
    if !a.square.is_empty() {
        size_chart(ctx, &mut s, a)?;
    }
    let _ = writeln!(s, "## {RESOURCES}\n");
    s.push_str("Registers per thread, spill stores/loads, stack frame and static shared memory per block as each compiler reported them, and the theoretical occupancy that follows.\n\n");
    let cols: [Resource; 5] = [
        ("registers", md::registers),
        ("spill st/ld B", md::spills),
        ("stack B", md::stack),
        ("shared B", md::shared),
        ("occupancy", md::occupancy),
    ];
    let tcs = &a.toolchains;
    let header = (cols.iter()).flat_map(|c| tcs.iter().map(|t| format!("{} {}", c.0, name(*t))));
    let header: Vec<String> = once("kernel".to_string()).chain(header).collect();
    let row = |(k, ms): (&String, &Vec<Option<&Measurement>>)| {
        let cells = cols.iter().flat_map(|c| ms.iter().map(|m| (c.1)(*m)));
        once(k.clone()).chain(cells).collect()
    };
    let rows: Vec<Vec<String>> = a.kernels.iter().zip(&a.resources).map(row).collect();
    let _ = writeln!(s, "{}", md::table(&header, &rows));
    ptx_mix(&mut s, a);
    let mut sec = Section::of(SPEED, s, &[]);
    for f in &a.findings {
        let speed = f.topic == Topic::VsVendor;
        let heading = if speed { SPEED } else { RESOURCES };
        sec.findings.push(Shown::new(f.clone(), heading));
    }
    Ok(sec)
}

fn speed_table(s: &mut String, a: &Compare, size: Size) {
    let _ = writeln!(s, "### {}\n", md::size_label_long(size));
    let (tcs, vendor) = (&a.toolchains, a.has_vendor);
    let mut header = vec!["kernel".to_string()];
    for t in tcs {
        header.push(format!("{} GFLOP/s", name(*t)));
        header.extend(vendor.then(|| format!("{} % of cuBLAS", name(*t))));
    }
    header.extend(
        a.pairs
            .iter()
            .map(|[x, y]| format!("{} / {}", name(*x), name(*y))),
    );
    let mut notes = Vec::new();
    let mut rows: Vec<Vec<String>> = (a.kernels.iter())
        .map(|k| {
            let ms: Vec<_> = tcs.iter().map(|t| find(&a.recs, k, *t, size)).collect();
            let mut row = vec![k.clone()];
            for m in &ms {
                row.push(md::gflops_spread(*m));
                row.extend(vendor.then(|| md::vs_vendor(*m)));
                let why = m.and_then(|m| Some((name(m.toolchain), m.status.reason()?)));
                notes.extend(why.map(|(t, r)| format!("{k} on {t}: {}", md::short_reason(r))));
            }
            let speed = |t| find(&a.recs, k, t, size).and_then(data::gflops);
            row.extend(a.pairs.iter().map(|[x, y]| md::ratio(speed(*x), speed(*y))));
            row
        })
        .collect();
    let mut rows_at = a.recs.iter().map(|r| r.m).filter(|m| of_size(m, size));
    if let Some(v) = rows_at.find(|m| is_vendor(m)) {
        let cells = tcs.iter().flat_map(|t| {
            let own = (*t == v.toolchain).then_some(v);
            let ok = own.filter(|v| v.status.is_ok());
            [md::gflops_spread(own), md::pct(ok.map(|_| 1.0))]
        });
        let row = once("cuBLAS (reference)".to_string()).chain(cells);
        let ratios = a.pairs.iter().map(|_| md::MISSING.to_string());
        rows.push(row.chain(ratios).collect());
        let why = v.status.reason().map(md::short_reason);
        notes.extend(why.map(|r| format!("cuBLAS: {r}")));
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
    let style = |t: &Toolchain| Style::new(name(*t), color(*t));
    tcs.iter().map(style).collect()
}

/// GFLOP/s per kernel at one size, each bar's % of cuBLAS above it.
fn bar_chart(ctx: &mut Ctx, s: &mut String, a: &Compare, size: Size) -> Result<()> {
    let row = |k: &String| {
        (a.toolchains.iter())
            .map(|t| find(&a.recs, k, *t, size))
            .collect()
    };
    let cells: Vec<Vec<Option<&Measurement>>> = a.kernels.iter().map(row).collect();
    let note = |m: &Measurement| match m.status.is_ok() {
        false => Some(m.status.label().to_string()),
        true => data::vs_vendor(m).map(|r| format!("{:.0}%", r * 100.0)),
    };
    let cats = XAxis::Categories(a.kernels.clone());
    let mut panel = Panel::new("", cats, "kernel", "GFLOP/s (median)");
    let values = (cells.iter()).map(|ms| ms.iter().map(|m| m.and_then(data::gflops)).collect());
    let notes = (cells.iter()).map(|ms| ms.iter().map(|m| m.and_then(note)).collect());
    panel.bars = Some(Bars {
        styles: styles(&a.toolchains),
        values: values.collect(),
        notes: notes.collect(),
    });
    let mut legend = styles(&a.toolchains);
    let vendor = vendor_at(&a.recs, size);
    if let Some(y) = vendor.and_then(data::gflops) {
        let (label, color) = (format!("cuBLAS {}", md::speed(y)), VENDOR_COLOR);
        panel.refs.push(RefLine { label, y, color });
        legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
    }
    let (at, long) = (size_label(size), md::size_label_long(size));
    let suffix = ctx.title_suffix();
    let fig = Figure {
        title: format!("Performance of the GEMM kernels, {long}{suffix}"),
        legend,
        panels: vec![panel],
        cols: 1,
        panel_w: (110 * a.kernels.len() as u32).clamp(700, 1400),
        panel_h: 520,
    };
    let alt = format!("GFLOP/s per kernel and toolchain at {at}");
    s.push_str(&ctx.chart(&fig, &format!("perf-{at}"), &alt)?);
    let line = match vendor {
        Some(_) => " (dashed line)",
        None => " (no cuBLAS row here, so no percentages)",
    };
    let _ = writeln!(
        s,
        "Bars: median GFLOP/s at {long}; the number above a bar is its % of cuBLAS{line}.\n"
    );
    Ok(())
}

/// GFLOP/s against size, one panel per kernel, one y scale.
fn size_chart(ctx: &mut Ctx, s: &mut String, a: &Compare) -> Result<()> {
    let line = |style: Style, f: &dyn Fn(Size) -> Option<f64>| Line {
        style,
        points: a.square.iter().map(|&n| (n as f64, f((n, n, n)))).collect(),
    };
    let vendor = Style::new("cuBLAS", VENDOR_COLOR).dashed();
    let vendor_speed = |sz| vendor_at(&a.recs, sz).and_then(data::gflops);
    let mut panels: Vec<Panel> = (a.kernels.iter())
        .map(|k| {
            let x = XAxis::Log2(a.square.iter().map(|&n| n as f64).collect());
            let mut p = Panel::new(k.clone(), x, "N (M = N = K)", "GFLOP/s");
            for (t, style) in a.toolchains.iter().zip(styles(&a.toolchains)) {
                let speed = |sz| find(&a.recs, k, *t, sz).and_then(data::gflops);
                p.lines.push(line(style, &speed));
            }
            let vendor_line = a.has_vendor.then(|| line(vendor.clone(), &vendor_speed));
            p.lines.extend(vendor_line);
            p
        })
        .collect();
    let y_max = panels.iter().map(Panel::data_max).fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
    panels.iter_mut().for_each(|p| p.y_max = Some(y_max));
    let mut legend: Vec<Style> = styles(&a.toolchains).into_iter().map(Style::line).collect();
    legend.extend(a.has_vendor.then_some(vendor));
    let fig = Figure {
        title: format!("GFLOP/s against problem size{}", ctx.title_suffix()),
        legend,
        cols: panels.len().clamp(1, 4),
        panels,
        panel_w: 340,
        panel_h: 280,
    };
    let alt = "GFLOP/s against size per kernel";
    s.push_str(&ctx.chart(&fig, "perf-vs-size", alt)?);
    s.push_str("One panel per kernel, the same y scale in all; x is N on a log2 scale (square problems only).\n\n");
    Ok(())
}

/// The mix table's columns: a row and its PTX counts.
type MixRow<'a> = (&'a Measurement, &'a PtxMix);
type MixColumn = (&'static str, fn(&MixRow) -> String);
type Resource = (&'static str, fn(Option<&Measurement>) -> String);

const MIX: [MixColumn; 18] = [
    ("kernel", |(m, _)| m.kernel.clone()),
    ("toolchain", |(m, _)| name(m.toolchain).into()),
    ("fma", |(_, x)| x.fma.to_string()),
    ("other fp", |(_, x)| x.float_other.to_string()),
    ("ld.global", |(_, x)| {
        let w = x.ld_global.iter().map(|(b, n)| format!("{n}x{b}b"));
        w.reduce(|a, b| a + " " + &b).unwrap_or_else(|| "0".into())
    }),
    ("st.global", |(_, x)| x.st_global.to_string()),
    ("ld.shared", |(_, x)| x.ld_shared.to_string()),
    ("st.shared", |(_, x)| x.st_shared.to_string()),
    ("ld/st.local", |(_, x)| {
        format!("{}/{}", x.ld_local, x.st_local)
    }),
    ("barriers", |(_, x)| x.barriers.to_string()),
    ("shuffles", |(_, x)| x.shuffles.to_string()),
    ("mov", |(_, x)| x.moves.to_string()),
    ("cvt", |(_, x)| x.conversions.to_string()),
    ("setp", |(_, x)| x.compares.to_string()),
    ("branches", |(_, x)| x.branches.to_string()),
    ("integer", |(_, x)| x.integer.to_string()),
    ("total", |(_, x)| x.total.to_string()),
    ("from", |(m, _)| match m.label.as_deref() {
        Some(l) => format!("{} ({l})", m.experiment),
        None => m.experiment.clone(),
    }),
];

fn ptx_mix(s: &mut String, a: &Compare) {
    s.push_str("## PTX instruction mix\n\n");
    if a.mix.is_empty() {
        s.push_str("These results hold no PTX instruction mix (runs before it was recorded, or toolchains that give no PTX).\n\n");
        return;
    }
    s.push_str("Static counts in each toolchain's PTX (as written, not as executed), default hints; ld.global by access width (count x bits); ld/st.local is thread-private memory (spills, indexed arrays).\n\n");
    if !a.listings.is_empty() {
        let archive = |l: &Listing| format!("`{}`", l.archive.display());
        let archives = distinct(a.listings.iter().map(archive));
        let _ = writeln!(s, "Each published kernel's two PTX listings as kept in {}: their lines, and the lines that differ once register and label numbering is ignored.\n", md::join_and(&archives));
        // A table per pair of toolchains, its columns named by them.
        for pair in distinct(a.listings.iter().map(|l| l.toolchains)) {
            let lines = pair.map(|t| format!("{} lines", name(t)));
            let header = [
                "kernel".into(),
                lines[0].clone(),
                lines[1].clone(),
                "lines that differ".into(),
            ];
            let of_pair = a.listings.iter().filter(|l| l.toolchains == pair);
            let row = |l: &Listing| [l.lines[0], l.lines[1], l.differ].map(|n| n.to_string());
            let rows: Vec<Vec<String>> = of_pair
                .map(|l| [vec![l.kernel.clone()], row(l).to_vec()].concat())
                .collect();
            let _ = writeln!(s, "{}", md::table(&header, &rows));
        }
    }
    let rows = a.mix.iter().filter_map(|m| Some((*m, m.ptx_mix.as_ref()?)));
    let rows: Vec<MixRow> = rows.collect();
    let _ = writeln!(s, "{}", md::table_of(&MIX, &rows));
}

/// "CUDA 61% faster (40 vs 25 GFLOP/s)", or "speed alike (...)": a pair's speeds.
fn speed_words(p: &Pair, na: &str, nb: &str) -> Option<String> {
    let ((x, y), c) = (p.gflops?, p.change?);
    Some(match is_same(c) {
        true => format!("speed alike ({na} {x:.0}, {nb} {y:.0} GFLOP/s)"),
        false => format!("{na} {} ({x:.0} vs {y:.0} GFLOP/s)", md::faster(c)),
    })
}

/// "gemm3: CUDA 40 vs OpenCL 32 registers (CUDA +8, +25%), ...": a pair of the register findings.
fn differ_words(p: &Pair, na: &str, nb: &str, at: &str) -> String {
    let (x, y) = p.registers;
    let occ = match p.occupancy {
        (Some(oa), Some(ob)) if (oa - ob).abs() > 1e-9 => {
            format!("occupancy {} vs {}", md::pct(Some(oa)), md::pct(Some(ob)))
        }
        (Some(oa), Some(_)) => format!("same occupancy ({})", md::pct(Some(oa))),
        _ => "occupancy unknown".into(),
    };
    let (d, more) = (x.abs_diff(y), if x > y { na } else { nb });
    let rel = d as f64 * 100.0 / x.min(y).max(1) as f64;
    let speed = speed_words(p, na, nb).unwrap_or_else(|| "no speed on both".into());
    let k = &p.kernel;
    format!("{k}: {na} {x} vs {nb} {y} registers ({more} +{d}, +{rel:.0}%), {occ}; at {at} {speed}")
}

fn joined<T>(items: &[T], sep: &str, f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(sep)
}

pub(crate) fn words(k: &Kind) -> Words {
    let (text, short) = match k {
        Kind::BestPerToolchain {
            size,
            vendor,
            best,
            others,
        } => best_words(*size, *vendor, best, others),
        Kind::RegistersDiffer {
            size,
            toolchains: [a, b],
            kernels,
            pairs,
            top,
            top_is_widest,
        } => {
            let (na, nb, at, n) = (name(*a), name(*b), size_label(*size), pairs.len());
            let list = joined(pairs, "; ", |p| differ_words(p, na, nb, &at));
            let text = format!("**Register counts differ between {na} and {nb}** on {n} of {kernels} kernels (largest difference first): {list}.");
            let top = top.map(|i| &pairs[i]);
            let short = match top.and_then(|p| Some((p, p.gflops?, md::faster(p.change?)))) {
                Some((p, (x, y), faster)) => {
                    let (k, (ra, rb)) = (&p.kernel, p.registers);
                    let lead = match top_is_widest {
                        true => format!("{k} shows the largest gap between {na} and {nb}"),
                        false => format!("Of the {n} kernels whose register counts differ between {na} and {nb}, {k} differs most in speed"),
                    };
                    format!("{lead}: {na} is {faster} at size {at} ({x:.0} vs {y:.0} GFLOP/s; {ra} vs {rb} registers).")
                }
                None => {
                    let (k, (ra, rb)) = (&pairs[0].kernel, pairs[0].registers);
                    format!("{na} and {nb} give {n} of {kernels} kernels different register counts, most {k}: {ra} vs {rb}.")
                }
            };
            (text, short)
        }
        Kind::SameRegistersDifferentSpeed {
            size,
            toolchains: [a, b],
            pairs,
            least,
            most,
        } => {
            let (na, nb, at) = (name(*a), name(*b), size_label(*size));
            let item = |p: &Pair| {
                let speed = speed_words(p, na, nb).unwrap_or_default();
                format!("{}: {} registers on both, {speed}", p.kernel, p.registers.0)
            };
            let list = joined(pairs, "; ", item);
            let text = format!("**Same registers, different speed on {na} and {nb}** at {at}: {list}. The difference there is not register pressure; compare their PTX.");
            let (lo, hi) = (least * 100.0, most * 100.0);
            let range = match lo.round() == hi.round() {
                true => format!("{hi:.0}%"),
                false => format!("{lo:.0}-{hi:.0}%"),
            };
            let all = |f: fn(f64) -> bool| pairs.iter().filter_map(|p| p.change).all(f);
            let how = match (all(|c| c > 0.0), all(|c| c < 0.0)) {
                (true, _) => format!("{na} is {range} faster"),
                (_, true) => format!("{na} is {range} slower"),
                _ => format!("their speeds differ by {range}"),
            };
            let names: Vec<String> = pairs.iter().map(|p| p.kernel.clone()).collect();
            let r = pairs[0].registers.0;
            let regs = match pairs.iter().all(|p| p.registers.0 == r) {
                true => format!(" ({r})"),
                false => String::new(),
            };
            let (has, list) = (md::verb(names.len(), "has", "have"), md::join_and(&names));
            (text, format!("{list} {has} the same registers on {na} and {nb}{regs}, yet {how} at size {at}."))
        }
        Kind::Alike {
            size,
            toolchains: [a, b],
            kernels,
        } => {
            let (at, within) = (size_label(*size), SAME_SPEED * 100.0);
            let runs = md::verb(kernels.len(), "runs", "run");
            let (comma, and, on) = (
                kernels.join(", "),
                md::join_and(kernels),
                format!("{} and {}", name(*a), name(*b)),
            );
            (
                format!("**Alike on {on}** (same registers, speed within {within:.0}% at {at}): {comma}."),
                format!("{and} {runs} alike on {on}: the same registers and speeds within {within:.0}% at size {at}."),
            )
        }
    };
    Words { text, short }
}

/// The best kernel of each toolchain at `size`, and at the other sizes.
fn best_words(
    size: Size,
    vendor: Option<f64>,
    best: &[Best],
    others: &[(Size, Vec<Best>)],
) -> (String, String) {
    let at = size_label(size);
    let each = |b: &Best| {
        let (n, g) = (name(b.toolchain), md::speed(b.gflops));
        let k = format!("{} ({})", b.kernel, b.form);
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
    };
    let (text, short): (Vec<_>, Vec<_>) = best.iter().map(each).unzip();
    let vendor = vendor.map(|v| format!(" (cuBLAS: {} GFLOP/s)", md::speed(v)));
    let other = |b: &Best| {
        let speed = || format!("{} GFLOP/s", md::speed(b.gflops));
        let v = b.vs_vendor.map_or_else(speed, |v| md::pct(Some(v)));
        format!("{} {} ({}) {v}", name(b.toolchain), b.kernel, b.form)
    };
    let at_size =
        |(sz, b): &(Size, Vec<Best>)| format!("{}: {}", size_label(*sz), joined(b, ", ", other));
    let others = match others.is_empty() {
        true => String::new(),
        false => format!(" Other sizes: {}.", joined(others, "; ", at_size)),
    };
    let (text, vendor) = (text.join("; "), vendor.unwrap_or_default());
    let short = md::join_and(&short);
    (
        format!("**Best kernel per toolchain** at {at}: {text}{vendor}.{others}"),
        format!("At size {at} the fastest kernel reaches {short}."),
    )
}
