//! The sweeps: register caps, gemm11 tiling, compiler hints, and OpenCL's
//! PTX through the CUDA JIT. Each section is empty when its experiment is
//! not in the results.

use std::fmt::Write as _;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::Measurement;

use super::charts::{color, VENDOR_COLOR};
use super::charts::{Bars, Figure, Line, Panel, Style, XAxis};
use super::data::{self, is_vendor, of_size, size_label, Rec};
use super::data::{find, tile_of, vendor_at};
use super::md::size_label_long;
use super::{md, Ctx, Section, Shown, Topic, SAME_SPEED};

const REGISTERS: &str = "Register cap sweep (registers)";
const TILING: &str = "Register tiling: RX x RY (tiling)";
pub(crate) const HINTS: &str = "Compiler hints (hints)";
const JIT: &str = "OpenCL's PTX through the CUDA driver JIT (jit)";

fn kernel_rows<'a>(ctx: &Ctx<'a>, exp: &str) -> (Vec<Rec<'a>>, Vec<Rec<'a>>) {
    let all = ctx.data.experiment(exp);
    let vendor: Vec<Rec> = all.iter().copied().filter(|r| is_vendor(r.m)).collect();
    let rows: Vec<Rec> = all
        .into_iter()
        .filter(|r| !is_vendor(r.m) && r.m.variant.is_none())
        .collect();
    (rows, vendor)
}

fn cap_label(c: Option<u32>) -> String {
    c.map_or("none".into(), |c| c.to_string())
}

// ---------------------------------------------------------------------------
// Register caps

pub(crate) fn registers(ctx: &mut Ctx) -> Result<Section> {
    let (recs, _) = kernel_rows(ctx, "registers");
    let mut sec = Section::default();
    if recs.is_empty() {
        return Ok(sec);
    }
    let tcs = ctx.toolchains.clone();
    sec.title = REGISTERS.to_string();
    let mut s = format!("## {REGISTERS}\n\n");
    s.push_str(
        "Each kernel compiled with a register cap (`--maxrregcount` for NVRTC, `-cl-nv-maxrregcount` for NVIDIA OpenCL; \
         \"none\" = no cap). \"registers\" is what the compiler used; \"(above cap)\" marks a cap that was not applied as asked.\n\n",
    );
    // Each set of switches is a series of its own: with launch bounds, for one,
    // the compilers may override a cap.
    let mut groups: Vec<(String, String)> = Vec::new();
    for kernel in data::kernels(&recs) {
        for r in recs.iter().filter(|r| r.m.kernel == kernel) {
            let g = (kernel.clone(), r.m.hints.describe(false));
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    for (kernel, switches) in groups {
        let krecs: Vec<Rec> = recs
            .iter()
            .copied()
            .filter(|r| r.m.kernel == kernel && r.m.hints.describe(false) == switches)
            .collect();
        if krecs.is_empty() {
            continue;
        }
        let k = if switches == "published" {
            format!("{kernel} (published)")
        } else {
            format!("{kernel} ({switches})")
        };
        let sizes = data::sizes(&krecs);
        // The chart of the largest size, the size of the finding.
        let mut chart = None;
        for (si, &size) in sizes.iter().enumerate() {
            let at: Vec<&Measurement> = krecs
                .iter()
                .map(|r| r.m)
                .filter(|m| of_size(m, size))
                .collect();
            let caps = caps_of(&at);
            let _ = writeln!(s, "### {k}, {}\n", size_label_long(size));
            let mut header = vec!["cap asked".to_string()];
            for t in &tcs {
                let n = data::toolchain_name(*t);
                for c in ["registers", "spill st/ld B", "occupancy", "GFLOP/s"] {
                    header.push(format!("{n} {c}"));
                }
            }
            let mut rows = Vec::new();
            for cap in &caps {
                let mut row = vec![cap_label(*cap)];
                for t in &tcs {
                    let m = at_cap(&at, *t, *cap);
                    let mut regs = md::registers(m);
                    if let (Some(c), Some(u)) = (cap, m.and_then(data::registers)) {
                        if u > *c {
                            regs.push_str(" (above cap)");
                        }
                    }
                    row.push(regs);
                    row.push(md::spills(m));
                    row.push(md::occupancy(m));
                    row.push(md::gflops(m));
                }
                rows.push(row);
            }
            s.push_str(&md::table(&header, &rows));
            let notes: Vec<String> = at
                .iter()
                .flat_map(|m| {
                    m.build_notes.iter().map(move |n| {
                        format!(
                            "{} cap {}: {}",
                            data::toolchain_name(m.toolchain),
                            cap_label(data::register_cap(m)),
                            n
                        )
                    })
                })
                .collect();
            if !notes.is_empty() {
                s.push_str("\nBuild notes:\n\n");
                for n in notes {
                    let _ = writeln!(s, "- {}", md::escape(&md::short_reason(&n)));
                }
            }
            s.push('\n');

            if si == 0 {
                let cats: Vec<String> = caps.iter().map(|c| cap_label(*c)).collect();
                let mut speed = Panel::new(
                    "GFLOP/s",
                    XAxis::Categories(cats.clone()),
                    "register cap asked",
                    "GFLOP/s",
                );
                let mut regs = Panel::new(
                    "registers used",
                    XAxis::Categories(cats.clone()),
                    "register cap asked",
                    "registers per thread",
                );
                regs.integer_y = true;
                let mut spill = Panel::new(
                    "spill bytes (stores + loads)",
                    XAxis::Categories(cats.clone()),
                    "register cap asked",
                    "bytes",
                );
                spill.integer_y = true;
                for t in &tcs {
                    let st = Style::new(data::toolchain_name(*t), color(*t));
                    let pts = |f: &dyn Fn(&Measurement) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
                        caps.iter()
                            .enumerate()
                            .map(|(i, c)| (i as f64, at_cap(&at, *t, *c).and_then(f)))
                            .collect()
                    };
                    speed.lines.push(Line {
                        style: st.clone(),
                        points: pts(&data::gflops),
                    });
                    regs.lines.push(Line {
                        style: st.clone(),
                        points: pts(&|m| data::registers(m).map(f64::from)),
                    });
                    spill.lines.push(Line {
                        style: st,
                        points: pts(&|m| data::spill_bytes(m).map(|b| b as f64)),
                    });
                }
                regs.lines.push(Line {
                    style: Style::new("cap asked", VENDOR_COLOR).dashed(),
                    points: caps
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (i as f64, c.map(f64::from)))
                        .collect(),
                });
                let mut legend: Vec<Style> = tcs
                    .iter()
                    .map(|t| Style::new(data::toolchain_name(*t), color(*t)).line())
                    .collect();
                legend.push(Style::new("cap asked", VENDOR_COLOR).dashed());
                let fig = Figure {
                    title: format!(
                        "{k}: register cap sweep, {}{}",
                        size_label_long(size),
                        ctx.title_suffix()
                    ),
                    legend,
                    panels: vec![speed, regs, spill],
                    cols: 3,
                    panel_w: 420,
                    panel_h: 340,
                };
                let c = ctx.chart(
                    &fig,
                    &format!(
                        "registers-{kernel}{}-{}",
                        chart_suffix(&switches),
                        size_label(size)
                    ),
                    &format!("{k}: GFLOP/s, registers and spills against the register cap"),
                )?;
                s.push_str(&c.markdown);
                chart = Some(c.svg);
            }
        }
        // Findings at the largest size.
        if let Some(&size) = sizes.first() {
            let at: Vec<&Measurement> = krecs
                .iter()
                .map(|r| r.m)
                .filter(|m| of_size(m, size))
                .collect();
            if let Some(f) = register_finding(&kernel, &switches, size, &at, &tcs) {
                sec.findings.push(f.chart(chart));
            }
        }
    }
    sec.markdown.push_str(&s);
    Ok(sec)
}

/// Caps present, ascending, "none" last.
fn caps_of(rows: &[&Measurement]) -> Vec<Option<u32>> {
    let mut caps: Vec<Option<u32>> = Vec::new();
    for m in rows {
        let c = data::register_cap(m);
        if !caps.contains(&c) {
            caps.push(c);
        }
    }
    caps.sort_by_key(|c| c.unwrap_or(u32::MAX));
    caps
}

fn at_cap<'a>(rows: &[&'a Measurement], t: Toolchain, cap: Option<u32>) -> Option<&'a Measurement> {
    rows.iter()
        .copied()
        .find(|m| m.toolchain == t && data::register_cap(m) == cap)
}

/// "gemm6" for the published kernel, "gemm6 with USE_BOUNDS=1" otherwise.
fn kernel_with(kernel: &str, switches: &str) -> String {
    match switches.strip_prefix("published + ") {
        Some(rest) => format!("{kernel} with {rest}"),
        None if switches == "published" => kernel.to_string(),
        None => format!("{kernel} ({switches})"),
    }
}

fn register_finding(
    kernel: &str,
    switches: &str,
    size: (usize, usize, usize),
    at: &[&Measurement],
    tcs: &[Toolchain],
) -> Option<Shown> {
    let k = if switches == "published" {
        format!("{kernel} (published)")
    } else {
        format!("{kernel} ({switches})")
    };
    let who = kernel_with(kernel, switches);
    let caps = caps_of(at);
    let mut parts = Vec::new();
    let mut not_as_asked = Vec::new();
    // The largest gain of a cap over no cap: (gain, toolchain, cap, GFLOP/s, uncapped
    // GFLOP/s, registers at the cap, registers uncapped).
    type Gain = (f64, &'static str, u32, f64, f64, Option<u32>, Option<u32>);
    let mut top_gain: Option<Gain> = None;
    let mut uncapped_speeds = Vec::new();
    for t in tcs {
        let n = data::toolchain_name(*t);
        let rows: Vec<(Option<u32>, &Measurement)> = caps
            .iter()
            .filter_map(|c| at_cap(at, *t, *c).map(|m| (*c, m)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let uncapped = rows.iter().find(|(c, _)| c.is_none()).map(|(_, m)| *m);
        let mut p = Vec::new();
        // Spills, walking down from the highest cap.
        let with_spills: Vec<(Option<u32>, u64)> = rows
            .iter()
            .rev()
            .filter_map(|(c, m)| data::spill_bytes(m).map(|b| (*c, b)))
            .collect();
        if !with_spills.is_empty() {
            match with_spills.iter().position(|(_, b)| *b > 0) {
                None => p.push(format!(
                    "no spills at any cap tried (lowest {})",
                    cap_label(with_spills.last().and_then(|x| x.0))
                )),
                Some(0) => p.push(format!(
                    "spills even at the highest cap ({}: {} B)",
                    cap_label(with_spills[0].0),
                    with_spills[0].1
                )),
                Some(i) => {
                    let (c, b) = with_spills[i];
                    let mut t = format!(
                        "no spills down to cap {}; spills start at cap {} ({b} B stores + loads)",
                        cap_label(with_spills[i - 1].0),
                        cap_label(c)
                    );
                    if let Some((lc, lb)) = with_spills[i..]
                        .iter()
                        .filter(|(_, b)| *b > 0)
                        .max_by_key(|(_, b)| *b)
                    {
                        if *lc != c {
                            let _ = write!(t, " and reach {lb} B at cap {}", cap_label(*lc));
                        }
                    }
                    p.push(t);
                }
            }
        }
        // Speed: the fastest cap against no cap.
        let best = rows
            .iter()
            .filter_map(|(c, m)| data::gflops(m).map(|g| (*c, g, data::registers(m))))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let base = uncapped.and_then(data::gflops);
        if let Some(b) = base {
            uncapped_speeds.push(format!("{b:.0} GFLOP/s on {n}"));
        }
        match (best, base) {
            (Some((Some(c), g, r)), Some(b)) if g > b * (1.0 + SAME_SPEED) => {
                p.push(format!(
                    "fastest at cap {c}: {g:.0} GFLOP/s vs {b:.0} without a cap (+{:.0}%)",
                    (g / b - 1.0) * 100.0
                ));
                let gain = g / b - 1.0;
                if top_gain.is_none_or(|t| gain > t.0) {
                    let full = uncapped.and_then(data::registers);
                    top_gain = Some((gain, n, c, g, b, r, full));
                }
            }
            (Some(_), Some(b)) => p.push(format!(
                "no cap is more than {:.0}% faster than no cap ({b:.0} GFLOP/s)",
                SAME_SPEED * 100.0
            )),
            (Some((c, g, _)), None) => {
                p.push(format!("fastest at cap {}: {g:.0} GFLOP/s", cap_label(c)))
            }
            _ => {}
        }
        // Asked against used.
        let full = uncapped.and_then(data::registers);
        for (c, m) in &rows {
            let (Some(c), Some(u)) = (c, data::registers(m)) else {
                continue;
            };
            if u > *c {
                let effect = if Some(u) == full {
                    ", the same as without a cap"
                } else {
                    ""
                };
                not_as_asked.push(format!("{n} cap {c} -> {u} registers{effect}"));
            } else if u < *c && full.is_some_and(|f| f > *c) {
                not_as_asked.push(format!(
                    "{n} cap {c} -> {u} registers (below the cap although it needs {} uncapped)",
                    full.unwrap_or(0)
                ));
            }
        }
        if !p.is_empty() {
            parts.push(format!("{n}: {}", p.join("; ")));
        }
    }
    if parts.is_empty() && not_as_asked.is_empty() {
        return None;
    }
    let at_size = size_label(size);
    let mut f = format!("**Register caps, {k}** at {at_size}: {}.", parts.join(". "));
    if not_as_asked.is_empty() {
        f.push_str(" Every cap was applied as asked (registers used = the cap, or fewer where the kernel needs fewer).");
    } else {
        let _ = write!(f, " Not as asked: {}.", not_as_asked.join("; "));
    }
    // For the summary: what a cap gains, else that caps were not applied, else
    // that no cap helps.
    let (short, weight) = if let Some((gain, n, c, g, b, r, full)) = top_gain {
        let regs = match (r, full) {
            (Some(r), Some(u)) if r != u => format!(", with {r} registers instead of {u}"),
            (Some(r), Some(_)) => format!(", with the same {r} registers"),
            _ => String::new(),
        };
        (
            format!(
                "A register cap of {c} makes {who} {:.0}% faster on {n} at size {at_size} ({b:.0} -> {g:.0} GFLOP/s{regs}).",
                gain * 100.0
            ),
            gain,
        )
    } else if let Some(first) = not_as_asked.first() {
        let more = match not_as_asked.len() - 1 {
            0 => String::new(),
            n => format!(", and {n} more"),
        };
        (
            format!(
                "Register caps are not applied as asked for {who} at size {at_size}: {first}{more}."
            ),
            0.0,
        )
    } else {
        let without = if uncapped_speeds.is_empty() {
            String::new()
        } else {
            format!(" (without a cap: {})", md::join_and(&uncapped_speeds))
        };
        (
            format!(
                "No register cap makes {who} more than {:.0}% faster than no cap at size {at_size}{without}.",
                SAME_SPEED * 100.0
            ),
            0.0,
        )
    };
    Some(
        Shown::legacy(Topic::RegisterCaps, f, REGISTERS)
            .short(short)
            .weight(weight),
    )
}

// ---------------------------------------------------------------------------
// Tiling

pub(crate) fn tiling(ctx: &mut Ctx) -> Result<Section> {
    let (recs, vendor) = kernel_rows(ctx, "tiling");
    let recs: Vec<Rec> = recs
        .into_iter()
        .filter(|r| tile_of(r.m).is_some())
        .collect();
    let mut sec = Section::default();
    if recs.is_empty() {
        return Ok(sec);
    }
    let tcs = ctx.toolchains.clone();
    sec.title = TILING.to_string();
    let mut s = format!("## {TILING}\n\n");
    s.push_str(
        "The register-tiled kernel with RX x RY results per thread (RK = RY). 8x4 is the clBlas tile of the tutorial. \
         Registers and spills are what each compiler used.\n\n",
    );
    for k in data::kernels(&recs) {
        let krecs: Vec<Rec> = recs.iter().copied().filter(|r| r.m.kernel == k).collect();
        let sizes = data::sizes(&krecs);
        // The chart of the largest size, and that size.
        let mut chart: Option<((usize, usize, usize), String)> = None;
        for (si, &size) in sizes.iter().enumerate() {
            let at: Vec<&Measurement> = krecs
                .iter()
                .map(|r| r.m)
                .filter(|m| of_size(m, size))
                .collect();
            let mut tiles: Vec<(i64, i64)> = Vec::new();
            for m in &at {
                if let Some(t) = tile_of(m) {
                    if !tiles.contains(&t) {
                        tiles.push(t);
                    }
                }
            }
            tiles.sort();
            let cell = |t: Toolchain, tile: (i64, i64)| -> Option<&Measurement> {
                at.iter()
                    .copied()
                    .find(|m| m.toolchain == t && tile_of(m) == Some(tile))
            };
            let _ = writeln!(s, "### {k}, {}\n", size_label_long(size));
            let mut header = md::h(&["RX", "RY", "RK"]);
            for t in &tcs {
                let n = data::toolchain_name(*t);
                for c in [
                    "GFLOP/s",
                    "% of cuBLAS",
                    "registers",
                    "spill st/ld B",
                    "occupancy",
                ] {
                    header.push(format!("{n} {c}"));
                }
            }
            let mut rows = Vec::new();
            for &tile in &tiles {
                let rk = tcs
                    .iter()
                    .find_map(|t| cell(*t, tile).and_then(|m| data::config_value(m, "RK")))
                    .map_or("-".into(), |v| v.to_string());
                let mut row = vec![tile.0.to_string(), tile.1.to_string(), rk];
                for t in &tcs {
                    let m = cell(*t, tile);
                    row.push(md::gflops_spread(m));
                    row.push(md::vs_vendor(m));
                    row.push(md::registers(m));
                    row.push(md::spills(m));
                    row.push(md::occupancy(m));
                }
                rows.push(row);
            }
            s.push_str(&md::table(&header, &rows));
            s.push('\n');
            if si == 0 {
                let styles: Vec<Style> = tcs
                    .iter()
                    .map(|t| Style::new(data::toolchain_name(*t), color(*t)))
                    .collect();
                let mut values = Vec::new();
                let mut notes = Vec::new();
                for &tile in &tiles {
                    let mut v = Vec::new();
                    let mut n = Vec::new();
                    for t in &tcs {
                        let m = cell(*t, tile);
                        v.push(m.and_then(data::gflops));
                        n.push(m.map(|m| {
                            if !m.status.is_ok() {
                                return m.status.label().to_string();
                            }
                            match (data::registers(m), data::spill_bytes(m)) {
                                (Some(r), Some(b)) if b > 0 => format!("{r}r+sp"),
                                (Some(r), _) => format!("{r}r"),
                                (None, _) => String::new(),
                            }
                        }));
                    }
                    values.push(v);
                    notes.push(n);
                }
                let cats: Vec<String> = tiles.iter().map(|(x, y)| format!("{x}x{y}")).collect();
                let mut panel = Panel::new(
                    "",
                    XAxis::Categories(cats),
                    "tile RX x RY (results per thread)",
                    "GFLOP/s (median)",
                );
                panel.bars = Some(Bars {
                    styles: styles.clone(),
                    values,
                    notes,
                });
                let mut legend = styles;
                if let Some(v) = vendor_at(&vendor, size).and_then(data::gflops) {
                    panel.refs.push(super::charts::RefLine {
                        label: format!("cuBLAS {v:.0}"),
                        y: v,
                        color: VENDOR_COLOR,
                    });
                    legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
                }
                let fig = Figure {
                    title: format!(
                        "{k}: register tiles, {}{}",
                        size_label_long(size),
                        ctx.title_suffix()
                    ),
                    legend,
                    panels: vec![panel],
                    cols: 1,
                    panel_w: (150 * tiles.len() as u32).clamp(700, 1300),
                    panel_h: 480,
                };
                let c = ctx.chart(
                    &fig,
                    &format!("tiling-{k}-{}", size_label(size)),
                    &format!("{k}: GFLOP/s per RX x RY tile"),
                )?;
                s.push_str(&c.markdown);
                chart = Some((size, c.svg));
                s.push_str(
                    "Above each bar: registers per thread (\"r\"); \"+sp\" marks spills.\n\n",
                );
            }
        }
        if let Some((size, f)) = tiling_finding(&k, &krecs, &tcs, ctx.device.as_deref()) {
            let shown = chart.as_ref().filter(|(s, _)| *s == size).map(|(_, p)| p);
            sec.findings.push(f.chart(shown.cloned()));
        }
    }
    sec.markdown.push_str(&s);
    Ok(sec)
}

/// The tutorial's K40 observation: 8x4 ran well in OpenCL but slowly in CUDA
/// (~300 GFLOPS), and 4x4 rescued CUDA. Returns the size it is about.
fn tiling_finding(
    k: &str,
    recs: &[Rec],
    tcs: &[Toolchain],
    device: Option<&str>,
) -> Option<((usize, usize, usize), Shown)> {
    let (cu, ocl) = (Toolchain::Cuda, Toolchain::OpenCl);
    if !tcs.contains(&cu) || !tcs.contains(&ocl) {
        return None;
    }
    let get = |t: Toolchain, tile: (i64, i64), size| {
        recs.iter()
            .map(|r| r.m)
            .find(|m| m.toolchain == t && tile_of(m) == Some(tile) && of_size(m, size))
            .and_then(|m| data::gflops(m).map(|g| (g, data::registers(m))))
    };
    for size in data::sizes(recs) {
        let (Some(c84), Some(c44), Some(o84), Some(o44)) = (
            get(cu, (8, 4), size),
            get(cu, (4, 4), size),
            get(ocl, (8, 4), size),
            get(ocl, (4, 4), size),
        ) else {
            continue;
        };
        let cuda_slower = c84.0 < c44.0 * (1.0 - SAME_SPEED);
        let ocl_fine = o84.0 >= o44.0 * (1.0 - SAME_SPEED);
        let verdict = if cuda_slower && ocl_fine {
            "holds"
        } else {
            "does not hold"
        };
        let rel = |a: f64, b: f64| {
            let r = a / b - 1.0;
            if r.abs() <= SAME_SPEED {
                format!("within {:.0}%", SAME_SPEED * 100.0)
            } else if r < 0.0 {
                format!("8x4 {:.0}% slower", -r * 100.0)
            } else {
                format!("8x4 {:.0}% faster", r * 100.0)
            }
        };
        let regs = |r: Option<u32>| r.map_or(String::new(), |r| format!(" ({r} registers)"));
        let mut why = Vec::new();
        if !cuda_slower {
            why.push("CUDA's 8x4 is not slower than its 4x4");
        }
        if !ocl_fine {
            why.push("OpenCL's 8x4 is slower than its 4x4");
        }
        let mut f = format!(
            "**The tutorial's 8x4 tile claim {verdict}** ({k}, {}{}). On the K40 the clBlas 8x4 tile ran well in OpenCL but at about 300 GFLOPS in CUDA, and 4x4 rescued CUDA. \
             Here: CUDA 8x4 {:.0} GFLOP/s{} vs 4x4 {:.0}{}, {}; OpenCL 8x4 {:.0}{} vs 4x4 {:.0}{}, {}.",
            size_label(size),
            device.map_or(String::new(), |d| format!(", {d}")),
            c84.0,
            regs(c84.1),
            c44.0,
            regs(c44.1),
            rel(c84.0, c44.0),
            o84.0,
            regs(o84.1),
            o44.0,
            regs(o44.1),
            rel(o84.0, o44.0),
        );
        if !why.is_empty() {
            let _ = write!(f, " It does not hold because {}.", why.join(" and "));
        }
        // The fastest tile per toolchain.
        let best: Vec<String> = [cu, ocl]
            .iter()
            .filter_map(|t| {
                recs.iter()
                    .map(|r| r.m)
                    .filter(|m| m.toolchain == *t && of_size(m, size))
                    .filter_map(|m| Some((tile_of(m)?, data::gflops(m)?)))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|((x, y), g)| format!("{} {x}x{y} ({g:.0})", data::toolchain_name(*t)))
            })
            .collect();
        if !best.is_empty() {
            let _ = write!(f, " Fastest tile: {}.", best.join(", "));
        }
        // "20% slower than", "within 3% of".
        let than = |a: f64, b: f64| {
            let r = a / b - 1.0;
            if r.abs() <= SAME_SPEED {
                format!("within {:.0}% of", SAME_SPEED * 100.0)
            } else if r < 0.0 {
                format!("{:.0}% slower than", -r * 100.0)
            } else {
                format!("{:.0}% faster than", r * 100.0)
            }
        };
        let short = format!(
            "The tutorial's claim that the 8x4 tile suits OpenCL but not CUDA {verdict} for {k} at size {}{}: \
             8x4 is {} 4x4 on OpenCL ({:.0} vs {:.0} GFLOP/s) and {} 4x4 on CUDA ({:.0} vs {:.0}).",
            size_label(size),
            device.map_or(String::new(), |d| format!(" on {d}")),
            than(o84.0, o44.0),
            o84.0,
            o44.0,
            than(c84.0, c44.0),
            c84.0,
            c44.0,
        );
        let weight = (o84.0 / o44.0 - 1.0).abs().max((c84.0 / c44.0 - 1.0).abs());
        return Some((
            size,
            Shown::legacy(Topic::Tiling, f, TILING)
                .short(short)
                .weight(weight),
        ));
    }
    None
}

// ---------------------------------------------------------------------------
// Hints

/// "" for the published kernel, else the switch set as a file-name suffix.
fn chart_suffix(switches: &str) -> String {
    match switches.strip_prefix("published + ") {
        None => String::new(),
        Some(rest) => {
            let mut out = String::from("-");
            for c in rest.chars() {
                match c {
                    c if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
                    '=' => {}
                    _ => {
                        if !out.ends_with('-') {
                            out.push('-');
                        }
                    }
                }
            }
            out.trim_end_matches('-').to_string()
        }
    }
}

fn point_name(m: &Measurement) -> String {
    m.label.clone().unwrap_or_else(|| m.hints.describe(true))
}

fn is_baseline(m: &Measurement) -> bool {
    match m.label.as_deref() {
        Some(l) => l.eq_ignore_ascii_case("baseline"),
        None => m.hints.is_published(),
    }
}

type Effect = (
    String,
    Toolchain,
    String,
    f64,
    f64,
    Option<u32>,
    Option<u32>,
);

pub(crate) fn hints(ctx: &mut Ctx) -> Result<Section> {
    let (recs, _) = kernel_rows(ctx, "hints");
    let mut sec = Section::default();
    if recs.is_empty() {
        return Ok(sec);
    }
    let tcs = ctx.toolchains.clone();
    sec.title = HINTS.to_string();
    let mut s = format!("## {HINTS}\n\n");
    s.push_str(
        "One factor changed at a time against the baseline, the published kernel (each of its switches at the published state, no extra compiler flags). \
         A point is named by the switch it sets, e.g. `UNROLL_K=1` (see the switch table in the README). \
         \"change\" is the speed relative to the baseline on the same toolchain.\n\n",
    );
    // (kernel, toolchain, point, base g, g, base regs, regs)
    // (kernel, toolchain, point, baseline GFLOP/s, GFLOP/s, baseline registers, registers)
    let mut effects: Vec<Effect> = Vec::new();
    let mut small: Vec<(String, String)> = Vec::new();
    let mut effect_sizes: Vec<(usize, usize, usize)> = Vec::new();
    for k in data::kernels(&recs) {
        let krecs: Vec<Rec> = recs.iter().copied().filter(|r| r.m.kernel == k).collect();
        let sizes = data::sizes(&krecs);
        for (si, &size) in sizes.iter().enumerate() {
            let at: Vec<&Measurement> = krecs
                .iter()
                .map(|r| r.m)
                .filter(|m| of_size(m, size))
                .collect();
            let mut points: Vec<String> = Vec::new();
            for m in at
                .iter()
                .filter(|m| is_baseline(m))
                .chain(at.iter().filter(|m| !is_baseline(m)))
            {
                let p = point_name(m);
                if !points.contains(&p) {
                    points.push(p);
                }
            }
            let cell = |t: Toolchain, p: &str| {
                at.iter()
                    .copied()
                    .find(|m| m.toolchain == t && point_name(m) == p)
            };
            let base = |t: Toolchain| {
                at.iter()
                    .copied()
                    .find(|m| m.toolchain == t && is_baseline(m))
            };
            let _ = writeln!(s, "### {k}, {}\n", size_label_long(size));
            let mut header = md::h(&["point", "hints"]);
            for t in &tcs {
                let n = data::toolchain_name(*t);
                for c in ["GFLOP/s", "change", "registers", "spill st/ld B"] {
                    header.push(format!("{n} {c}"));
                }
            }
            let mut rows = Vec::new();
            for p in &points {
                let hints_text = tcs
                    .iter()
                    .find_map(|t| cell(*t, p))
                    .map_or("-".into(), |m| m.hints.describe(true));
                let mut row = vec![p.clone(), hints_text];
                for t in &tcs {
                    let m = cell(*t, p);
                    let b = base(*t);
                    row.push(md::gflops_spread(m));
                    row.push(if m.is_some_and(is_baseline) {
                        "baseline".into()
                    } else {
                        md::change(m.and_then(data::gflops), b.and_then(data::gflops))
                    });
                    row.push(md::registers(m));
                    row.push(md::spills(m));
                    if si == 0 {
                        if let (Some(m), Some(b)) = (m, b) {
                            if !is_baseline(m) {
                                if let (Some(g), Some(bg)) = (data::gflops(m), data::gflops(b)) {
                                    if (g / bg - 1.0).abs() > SAME_SPEED {
                                        effects.push((
                                            k.clone(),
                                            *t,
                                            p.clone(),
                                            bg,
                                            g,
                                            data::registers(b),
                                            data::registers(m),
                                        ));
                                    } else {
                                        small.push((
                                            p.clone(),
                                            format!("{k} {}", data::toolchain_name(*t)),
                                        ));
                                    }
                                    if !effect_sizes.contains(&size) {
                                        effect_sizes.push(size);
                                    }
                                }
                            }
                        }
                    }
                }
                rows.push(row);
            }
            s.push_str(&md::table(&header, &rows));
            s.push('\n');
        }
    }
    if !effect_sizes.is_empty() {
        let (at, at_short) = if effect_sizes.len() == 1 {
            let l = size_label(effect_sizes[0]);
            (format!("at {l}"), format!("at size {l}"))
        } else {
            let l = "at each kernel's largest size".to_string();
            (l.clone(), l)
        };
        let change = |e: &Effect| e.4 / e.3 - 1.0;
        if !effects.is_empty() {
            effects.sort_by(|a, b| change(b).abs().total_cmp(&change(a).abs()));
            let items: Vec<String> = effects
                .iter()
                .map(|(k, t, p, bg, g, br, r)| {
                    let regs = match (br, r) {
                        (Some(a), Some(b)) if a != b => format!(", registers {a} -> {b}"),
                        (Some(a), Some(_)) => format!(", registers unchanged ({a})"),
                        _ => String::new(),
                    };
                    format!(
                        "{p} on {k} {} {:+.0}% ({bg:.0} -> {g:.0} GFLOP/s{regs})",
                        data::toolchain_name(*t),
                        (g / bg - 1.0) * 100.0
                    )
                })
                .collect();
            let text = format!(
                "**Hints that change speed by more than {:.0}%** ({at}): {}.",
                SAME_SPEED * 100.0,
                items.join("; ")
            );
            let (k, _, p, ..) = &effects[0];
            let c = change(&effects[0]);
            // The same switch on the same kernel on every toolchain where it
            // changes speed, the largest first.
            let parts: Vec<String> = effects
                .iter()
                .filter(|e| e.0 == *k && e.2 == *p)
                .enumerate()
                .map(|(i, e)| {
                    let c = change(e);
                    format!(
                        "{:.0}% {} on {} ({:.0} -> {:.0}{})",
                        c.abs() * 100.0,
                        if c < 0.0 { "slower" } else { "faster" },
                        data::toolchain_name(e.1),
                        e.3,
                        e.4,
                        if i == 0 { " GFLOP/s" } else { "" }
                    )
                })
                .collect();
            let short = format!(
                "{p} has the largest effect of any switch: it makes {k} {} {at_short}.",
                md::join_and(&parts)
            );
            sec.findings.push(
                Shown::legacy(Topic::Hints, text, HINTS)
                    .short(short)
                    .weight(c),
            );
        }
        if !small.is_empty() {
            let mut by_point: Vec<(String, Vec<String>)> = Vec::new();
            for (p, w) in small {
                match by_point.iter_mut().find(|(x, _)| *x == p) {
                    Some((_, v)) => v.push(w),
                    None => by_point.push((p, vec![w])),
                }
            }
            let items: Vec<String> = by_point
                .iter()
                .map(|(p, w)| format!("{p} ({})", w.join(", ")))
                .collect();
            let text = format!(
                "**Hints with no effect beyond {:.0}%** ({at}): {}.",
                SAME_SPEED * 100.0,
                items.join("; ")
            );
            // Switches without an effect anywhere; the others are in the list above.
            let idle: Vec<String> = by_point
                .iter()
                .map(|(p, _)| p.clone())
                .filter(|p| !effects.iter().any(|e| e.2 == *p))
                .collect();
            let mut f = Shown::legacy(Topic::Hints, text, HINTS);
            if !idle.is_empty() {
                f = f.short(format!(
                    "No effect beyond {:.0}% on any kernel {} tried on {at_short}: {}.",
                    SAME_SPEED * 100.0,
                    if idle.len() == 1 {
                        "it was"
                    } else {
                        "they were"
                    },
                    md::join_and(&idle)
                ));
            }
            sec.findings.push(f);
        }
    }
    sec.markdown.push_str(&s);
    Ok(sec)
}

// ---------------------------------------------------------------------------
// OpenCL PTX through the CUDA driver JIT

pub(crate) fn jit(ctx: &mut Ctx) -> Result<Section> {
    let all = ctx.data.experiment("jit");
    let lane_rows: Vec<&Measurement> = all
        .iter()
        .map(|r| r.m)
        .filter(|m| m.variant.is_some() && !is_vendor(m))
        .collect();
    // A JIT row is one whose build went through cuModuleLoadDataEx. Before the fix
    // of the PTX lane, the lane compiled the CUDA source instead: such rows are
    // not OpenCL's PTX and are left out, saying so.
    let (jit_rows, not_jit): (Vec<&Measurement>, Vec<&Measurement>) =
        lane_rows.into_iter().partition(|m| {
            m.build_notes
                .iter()
                .any(|n| n.contains("cuModuleLoadDataEx"))
        });
    let mut sec = Section::default();
    if !not_jit.is_empty() {
        sec.title = JIT.to_string();
        sec.markdown.push_str(&format!(
            "{} row(s) of the jit sweep were left out: their build was not loaded through the CUDA driver JIT (the PTX lane compiled the CUDA source by mistake before gemmlab fixed it), so they do not measure OpenCL's PTX.\n\n",
            not_jit.len()
        ));
    }
    if jit_rows.is_empty() {
        return Ok(sec);
    }
    let compare: Vec<Rec> = ctx
        .data
        .experiment("compare")
        .into_iter()
        .filter(|r| r.m.variant.is_none())
        .collect();
    // Native rows: the jit run's own first, then the compare run's.
    let native = |m: &Measurement, t: Toolchain| -> Option<(&Measurement, &'static str)> {
        let size = (m.m, m.n, m.k);
        all.iter()
            .map(|r| r.m)
            .find(|x| {
                x.kernel == m.kernel
                    && x.toolchain == t
                    && x.variant.is_none()
                    && of_size(x, size)
                    && x.config == m.config
            })
            .map(|x| (x, "jit"))
            .or_else(|| find(&compare, &m.kernel, t, size).map(|x| (x, "compare")))
    };
    sec.title = JIT.to_string();
    let mut s = format!("## {JIT}\n\n");
    s.push_str(
        "NVIDIA OpenCL's PTX for the kernel, loaded with the CUDA driver (cuModuleLoadData, so the driver's JIT compiles it) \
         and run like the CUDA kernel, next to the same kernel built natively by each toolchain. Same PTX as OpenCL, \
         final compile and launch by CUDA: it separates what the front end (the PTX) does from what the back end does.\n\n",
    );
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    // Every kernel with all three speeds, for the roll-up.
    let mut triples: Vec<Triple> = Vec::new();
    for m in &jit_rows {
        let ocl = native(m, Toolchain::OpenCl);
        let cu = native(m, Toolchain::Cuda);
        let g = |x: Option<&Measurement>| -> String {
            match x {
                None => "-".into(),
                Some(x) => format!("{} ({} regs)", md::gflops(Some(x)), md::registers(Some(x))),
            }
        };
        let jg = data::gflops(m);
        let og = ocl.and_then(|x| data::gflops(x.0));
        let cg = cu.and_then(|x| data::gflops(x.0));
        rows.push(vec![
            m.kernel.clone(),
            m.size_label(),
            g(ocl.map(|x| x.0)),
            g(Some(m)),
            g(cu.map(|x| x.0)),
            md::ratio(jg, og),
            md::ratio(jg, cg),
            match (ocl.map(|x| x.1), cu.map(|x| x.1)) {
                (Some(a), Some(b)) if a == b => a.to_string(),
                (a, b) => format!("{} / {}", a.unwrap_or("-"), b.unwrap_or("-")),
            },
        ]);
        if let Some(r) = m.status.reason() {
            notes.push(format!(
                "{} at {}: {}",
                m.kernel,
                m.size_label(),
                md::short_reason(r)
            ));
        }
        if let (Some(j), Some(o), Some(c)) = (jg, og, cg) {
            let jr = data::registers(m);
            let or = ocl.and_then(|x| data::registers(x.0));
            let cr = cu.and_then(|x| data::registers(x.0));
            let r = |v: Option<u32>| v.map_or(String::new(), |v| format!(", {v} registers"));
            let mut f = format!(
                "**{} through the CUDA JIT** at {}: OpenCL's PTX run by CUDA {j:.0} GFLOP/s{}; OpenCL native {o:.0}{}; CUDA (NVRTC) {c:.0}{}.",
                m.kernel,
                m.size_label(),
                r(jr),
                r(or),
                r(cr)
            );
            let like = JitLike::of(j, o, c);
            match like {
                JitLike::OpenCl => f.push_str(" The same PTX runs at the same speed whichever driver compiles it, so the gap between the toolchains comes from the PTX each front end emits."),
                JitLike::Cuda => f.push_str(" OpenCL's PTX runs like the CUDA kernel when the CUDA driver compiles and launches it, so the gap comes from OpenCL's back end or launch, not from its PTX."),
                JitLike::Neither => {
                    let _ = write!(
                        f,
                        " The JIT run differs from OpenCL native by {:+.0}%: the final compile step or the launch matters, not only the PTX.",
                        (j / o - 1.0) * 100.0
                    );
                }
                JitLike::Both => f.push_str(" All three are within a few percent."),
            }
            // A detail: the roll-up below speaks for all kernels in the summary.
            sec.findings
                .push(Shown::legacy(Topic::Jit, f, JIT).weight(j / o - 1.0));
            triples.push(Triple {
                kernel: m.kernel.clone(),
                size: (m.m, m.n, m.k),
                jit: j,
                opencl: o,
                cuda: c,
                like,
            });
        }
    }
    s.push_str(&md::table(
        &md::h(&[
            "kernel",
            "size",
            "OpenCL native",
            "OpenCL PTX via CUDA JIT",
            "CUDA (NVRTC)",
            "JIT / OpenCL",
            "JIT / CUDA",
            "native rows from",
        ]),
        &rows,
    ));
    if !notes.is_empty() {
        s.push_str("\nWhy some cells have no speed:\n\n");
        for n in notes {
            let _ = writeln!(s, "- {}", md::escape(&n));
        }
    }
    s.push('\n');
    // The roll-up first: the per-kernel findings are its details.
    if let Some(f) = jit_rollup(&triples) {
        sec.findings.insert(0, f);
    }
    sec.markdown.push_str(&s);
    Ok(sec)
}

/// Which native build the JIT run of OpenCL's PTX runs like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JitLike {
    /// Like OpenCL native, unlike CUDA: the gap is in the PTX.
    OpenCl,
    /// Like CUDA, unlike OpenCL native: the gap is OpenCL's back end or launch.
    Cuda,
    /// Unlike OpenCL native and not explained by CUDA either.
    Neither,
    /// All three alike.
    Both,
}

impl JitLike {
    fn of(jit: f64, opencl: f64, cuda: f64) -> JitLike {
        let near = |a: f64, b: f64| (a / b - 1.0).abs() <= SAME_SPEED;
        if near(jit, opencl) && !near(opencl, cuda) {
            JitLike::OpenCl
        } else if near(jit, cuda) && !near(opencl, cuda) {
            JitLike::Cuda
        } else if !near(jit, opencl) {
            JitLike::Neither
        } else {
            JitLike::Both
        }
    }
}

struct Triple {
    kernel: String,
    size: (usize, usize, usize),
    jit: f64,
    opencl: f64,
    cuda: f64,
    like: JitLike,
}

/// All kernels at the largest size in one finding: which native build the
/// JIT run is like, and so where the gap between the toolchains comes from.
fn jit_rollup(triples: &[Triple]) -> Option<Shown> {
    let size = triples
        .iter()
        .map(|t| t.size)
        .max_by_key(|&(m, n, k)| (m as u128) * (n as u128) * (k as u128))?;
    let at: Vec<&Triple> = triples.iter().filter(|t| t.size == size).collect();
    let at_size = size_label(size);
    let of =
        |like: JitLike| -> Vec<&Triple> { at.iter().copied().filter(|t| t.like == like).collect() };
    let names = |ts: &[&Triple]| -> String {
        md::join_and(&ts.iter().map(|t| t.kernel.clone()).collect::<Vec<_>>())
    };
    let gap = |t: &Triple| (t.opencl / t.cuda - 1.0).abs();
    let differ: Vec<&Triple> = at.iter().copied().filter(|t| gap(t) > SAME_SPEED).collect();
    let mut groups = Vec::new();
    for (like, what) in [
        (
            JitLike::Cuda,
            "like CUDA's own build, so the gap is OpenCL's back end or launch",
        ),
        (
            JitLike::OpenCl,
            "like OpenCL's own build, so the gap is in the PTX",
        ),
        (
            JitLike::Neither,
            "unlike OpenCL's own build and not explained by CUDA's",
        ),
        (JitLike::Both, "all three builds alike"),
    ] {
        let ts = of(like);
        if !ts.is_empty() {
            groups.push(format!("{what}: {}", names(&ts)));
        }
    }
    let text = format!(
        "**OpenCL's PTX through the CUDA JIT, all {} kernels** at {at_size} (within {:.0}% counts as alike): {}.",
        at.len(),
        SAME_SPEED * 100.0,
        groups.join("; ")
    );
    // The kernels that explain the most: those where the toolchains differ,
    // by the larger group; the example is the widest gap.
    let (cuda_like, ocl_like) = (of(JitLike::Cuda), of(JitLike::OpenCl));
    fn widest<'t>(ts: &[&'t Triple]) -> Option<&'t Triple> {
        let gap = |t: &Triple| (t.opencl / t.cuda - 1.0).abs();
        ts.iter().copied().max_by(|a, b| gap(a).total_cmp(&gap(b)))
    }
    let how_many = |n: usize| {
        if n == differ.len() {
            format!("all {n}")
        } else {
            format!("{n} of the {}", differ.len())
        }
    };
    let where_ = format!(
        "kernels where the toolchains differ by more than {:.0}%",
        SAME_SPEED * 100.0
    );
    let short = if !cuda_like.is_empty() && cuda_like.len() >= ocl_like.len() {
        let e = widest(&cuda_like)?;
        format!(
            "Through the CUDA JIT, OpenCL's PTX runs within {:.0}% of CUDA's own build on {} {where_} ({}: {:.0} vs {:.0} GFLOP/s, OpenCL's own build {:.0}): {}the gap is OpenCL's back end or launch, not its PTX.",
            SAME_SPEED * 100.0,
            how_many(cuda_like.len()),
            e.kernel,
            e.jit,
            e.cuda,
            e.opencl,
            if cuda_like.len() == differ.len() { "" } else { "for those kernels " }
        )
    } else if let Some(e) = widest(&ocl_like) {
        format!(
            "Through the CUDA JIT, OpenCL's PTX runs within {:.0}% of OpenCL's own build on {} {where_} ({}: {:.0} vs {:.0} GFLOP/s, CUDA {:.0}): {}the gap is in the PTX each front end emits.",
            SAME_SPEED * 100.0,
            how_many(ocl_like.len()),
            e.kernel,
            e.jit,
            e.opencl,
            e.cuda,
            if ocl_like.len() == differ.len() { "" } else { "for those kernels " }
        )
    } else if let Some(e) = widest(&of(JitLike::Neither)) {
        format!(
            "Through the CUDA JIT, OpenCL's PTX runs unlike OpenCL's own build on {} of {} kernels at size {at_size} ({}: {:.0} vs {:.0} GFLOP/s, CUDA {:.0}).",
            of(JitLike::Neither).len(),
            at.len(),
            e.kernel,
            e.jit,
            e.opencl,
            e.cuda
        )
    } else {
        format!(
            "Through the CUDA JIT, OpenCL's PTX runs within {:.0}% of both native builds on all {} kernels at size {at_size}.",
            SAME_SPEED * 100.0,
            at.len()
        )
    };
    let weight = differ.iter().map(|t| gap(t)).fold(0.0, f64::max);
    Some(
        Shown::legacy(Topic::Jit, text, JIT)
            .short(short)
            .weight(weight),
    )
}
