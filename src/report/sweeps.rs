//! The sweeps: register caps, gemm11 tiling, compiler hints, and OpenCL's PTX
//! through the CUDA JIT. Each section is empty when its experiment is not in
//! the results.

use std::fmt::Write as _;

use crate::analysis::sweeps::{Block, CapSpeed, Jit, Kind, Like, Spills, Sweep, Tile};
use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::Measurement;

use super::data::{self, size_label, toolchain_name as name};
use super::md::{self, join_and, size_label_long, speed};
use super::{color, VENDOR_COLOR};
use super::{Ctx, Section, Words, SAME_SPEED};
use crate::analysis::stats::is_same;
use crate::plot::{Bars, Figure, Line, Panel, RefLine, Style, XAxis};

const REGISTERS: &str = "Register cap sweep (registers)";
const TILING: &str = "Register tiling: RX x RY (tiling)";
pub(crate) const HINTS: &str = "Compiler hints (hints)";
const JIT: &str = "OpenCL's PTX through the CUDA driver JIT (jit)";

fn same() -> String {
    format!("{:.0}%", SAME_SPEED * 100.0)
}

fn cap_label(c: Option<u32>) -> String {
    c.map_or("none".into(), |c| c.to_string())
}

/// The section's heading and introduction, or `None` for a section without rows.
fn open<P>(a: &Sweep<P>, title: &str, intro: &str) -> Option<(Section, String)> {
    let sec = Section {
        title: title.into(),
        ..Default::default()
    };
    (!a.series.is_empty()).then(|| (sec, format!("## {title}\n\n{intro}\n\n")))
}

fn close(mut sec: Section, s: String, a: &[crate::analysis::Finding]) -> Result<Section> {
    sec.markdown = s;
    sec.show(a);
    Ok(sec)
}

/// A number a chart shows of a measurement.
type Value<'f> = &'f dyn Fn(&Measurement) -> Option<f64>;

type Cells<'f> = &'f dyn Fn(usize, usize, Option<&Measurement>) -> Vec<String>;

/// A block's table: the leading columns of each point, then `cols` for each toolchain.
fn grid<P>(
    s: &mut String,
    k: &str,
    b: &Block<P>,
    tcs: &[Toolchain],
    lead: (&[&str], &dyn Fn(usize) -> Vec<String>),
    cols: &[&str],
    cells: Cells,
) {
    let _ = writeln!(s, "### {k}, {}\n", size_label_long(b.size));
    let mut header = md::h(lead.0);
    header.extend(
        tcs.iter()
            .flat_map(|t| cols.iter().map(move |c| format!("{} {c}", name(*t)))),
    );
    let rows: Vec<Vec<String>> = (0..b.points.len())
        .map(|p| {
            let mut r = lead.1(p);
            r.extend((0..tcs.len()).flat_map(|t| cells(p, t, b.cells[p][t])));
            r
        })
        .collect();
    s.push_str(&md::table(&header, &rows));
}

pub(crate) fn registers(ctx: &mut Ctx, a: &Sweep<Option<u32>>) -> Result<Section> {
    let intro = "Each kernel compiled with a register cap (`--maxrregcount` for NVRTC, `-cl-nv-maxrregcount` for NVIDIA OpenCL; \
         \"none\" = no cap). \"registers\" is what the compiler used; \"(above cap)\" marks a cap that was not applied as asked.";
    let Some((sec, mut s)) = open(a, REGISTERS, intro) else {
        return Ok(Section::default());
    };
    for se in &a.series {
        let k = format!("{} ({})", se.kernel, se.switches);
        for (i, b) in se.blocks.iter().enumerate() {
            let cells = |p: usize, _, m: Option<&Measurement>| {
                let mut regs = md::registers(m);
                if b.points[p]
                    .zip(m.and_then(data::registers))
                    .is_some_and(|(c, u)| u > c)
                {
                    regs.push_str(" (above cap)");
                }
                vec![regs, md::spills(m), md::occupancy(m), md::gflops(m)]
            };
            let cols = ["registers", "spill st/ld B", "occupancy", "GFLOP/s"];
            grid(
                &mut s,
                &k,
                b,
                &a.toolchains,
                (&["cap asked"], &|p| vec![cap_label(b.points[p])]),
                &cols,
                &cells,
            );
            let notes: Vec<String> = b
                .rows
                .iter()
                .flat_map(|m| {
                    m.build_notes.iter().map(|n| {
                        format!(
                            "{} cap {}: {n}",
                            name(m.toolchain),
                            cap_label(data::register_cap(m))
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
            if i == 0 {
                s.push_str(&cap_chart(ctx, &k, &se.chart, b, &a.toolchains)?);
            }
        }
    }
    close(sec, s, &a.findings)
}

fn cap_chart(
    ctx: &mut Ctx,
    k: &str,
    stem: &str,
    b: &Block<Option<u32>>,
    tcs: &[Toolchain],
) -> Result<String> {
    let cats = XAxis::Categories(b.points.iter().map(|c| cap_label(*c)).collect());
    let panel = |title: &str, y: &str, int| Panel {
        integer_y: int,
        ..Panel::new(title, cats.clone(), "register cap asked", y)
    };
    let mut panels = [
        panel("GFLOP/s", "GFLOP/s", false),
        panel("registers used", "registers per thread", true),
        panel("spill bytes (stores + loads)", "bytes", true),
    ];
    let of: [Value; 3] = [
        &data::gflops,
        &|m| data::registers(m).map(f64::from),
        &|m| data::spill_bytes(m).map(|b| b as f64),
    ];
    for (ti, t) in tcs.iter().enumerate() {
        for (panel, f) in panels.iter_mut().zip(of) {
            let points = b
                .cells
                .iter()
                .enumerate()
                .map(|(i, r)| (i as f64, r[ti].and_then(f)))
                .collect();
            panel.lines.push(Line {
                style: Style::new(name(*t), color(*t)),
                points,
            });
        }
    }
    let asked = Style::new("cap asked", VENDOR_COLOR).dashed();
    let points = b
        .points
        .iter()
        .enumerate()
        .map(|(i, c)| (i as f64, c.map(f64::from)))
        .collect();
    panels[1].lines.push(Line {
        style: asked.clone(),
        points,
    });
    let mut legend: Vec<Style> = tcs
        .iter()
        .map(|t| Style::new(name(*t), color(*t)).line())
        .collect();
    legend.push(asked);
    let title = format!(
        "{k}: register cap sweep, {}{}",
        size_label_long(b.size),
        ctx.title_suffix()
    );
    let fig = Figure {
        title,
        legend,
        panels: panels.into(),
        cols: 3,
        panel_w: 420,
        panel_h: 340,
    };
    Ok(ctx
        .chart(
            &fig,
            stem,
            &format!("{k}: GFLOP/s, registers and spills against the register cap"),
        )?
        .markdown)
}

pub(crate) fn tiling(ctx: &mut Ctx, a: &Sweep<(i64, i64)>) -> Result<Section> {
    let intro = "The register-tiled kernel with RX x RY results per thread (RK = RY). 8x4 is the clBlas tile of the tutorial. \
         Registers and spills are what each compiler used.";
    let Some((sec, mut s)) = open(a, TILING, intro) else {
        return Ok(Section::default());
    };
    for se in &a.series {
        for (i, b) in se.blocks.iter().enumerate() {
            let lead = |p: usize| {
                let rk = b.cells[p]
                    .iter()
                    .find_map(|m| m.and_then(|m| data::config_value(m, "RK")));
                vec![
                    b.points[p].0.to_string(),
                    b.points[p].1.to_string(),
                    rk.map_or(md::MISSING.into(), |v| v.to_string()),
                ]
            };
            let cells = |_, _, m: Option<&Measurement>| {
                vec![
                    md::gflops_spread(m),
                    md::vs_vendor(m),
                    md::registers(m),
                    md::spills(m),
                    md::occupancy(m),
                ]
            };
            let cols = [
                "GFLOP/s",
                "% of cuBLAS",
                "registers",
                "spill st/ld B",
                "occupancy",
            ];
            grid(
                &mut s,
                &se.kernel,
                b,
                &a.toolchains,
                (&["RX", "RY", "RK"], &lead),
                &cols,
                &cells,
            );
            s.push('\n');
            if i == 0 {
                s.push_str(&tile_chart(ctx, &se.kernel, &se.chart, b, &a.toolchains)?);
                s.push_str(
                    "Above each bar: registers per thread (\"r\"); \"+sp\" marks spills.\n\n",
                );
            }
        }
    }
    close(sec, s, &a.findings)
}

fn tile_chart(
    ctx: &mut Ctx,
    k: &str,
    stem: &str,
    b: &Block<(i64, i64)>,
    tcs: &[Toolchain],
) -> Result<String> {
    let mut styles: Vec<Style> = tcs
        .iter()
        .map(|t| Style::new(name(*t), color(*t)))
        .collect();
    let values = b
        .cells
        .iter()
        .map(|r| r.iter().map(|m| m.and_then(data::gflops)).collect())
        .collect();
    let note = |m: &Measurement| match (m.status.is_ok(), data::registers(m), data::spill_bytes(m))
    {
        (false, ..) => m.status.label().to_string(),
        (_, Some(r), Some(b)) if b > 0 => format!("{r}r+sp"),
        (_, Some(r), _) => format!("{r}r"),
        _ => String::new(),
    };
    let notes = b
        .cells
        .iter()
        .map(|r| r.iter().map(|m| m.map(note)).collect())
        .collect();
    let cats = b.points.iter().map(|(x, y)| format!("{x}x{y}")).collect();
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
    if let Some(v) = b.vendor.and_then(data::gflops) {
        panel.refs.push(RefLine {
            label: format!("cuBLAS {v:.0}"),
            y: v,
            color: VENDOR_COLOR,
        });
        styles.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
    }
    let title = format!(
        "{k}: register tiles, {}{}",
        size_label_long(b.size),
        ctx.title_suffix()
    );
    let panel_w = (150 * b.points.len() as u32).clamp(700, 1300);
    let fig = Figure {
        title,
        legend: styles,
        panels: vec![panel],
        cols: 1,
        panel_w,
        panel_h: 480,
    };
    Ok(ctx
        .chart(&fig, stem, &format!("{k}: GFLOP/s per RX x RY tile"))?
        .markdown)
}

pub(crate) fn hints(a: &Sweep<String>) -> Result<Section> {
    let intro = "One factor changed at a time against the baseline, the published kernel (each of its switches at the published state, no extra compiler flags). \
         A point is named by the switch it sets, e.g. `UNROLL_K=1` (see the switch table in the README). \
         \"change\" is the speed relative to the baseline on the same toolchain.";
    let Some((sec, mut s)) = open(a, HINTS, intro) else {
        return Ok(Section::default());
    };
    for se in &a.series {
        for b in &se.blocks {
            let lead = |p: usize| {
                let hints = b.cells[p]
                    .iter()
                    .find_map(|m| m.map(|m| m.hints.describe(true)));
                vec![b.points[p].clone(), md::or_missing(hints.as_deref())]
            };
            let cells = |_, t: usize, m: Option<&Measurement>| {
                let change = match m {
                    Some(m) if crate::analysis::sweeps::is_baseline(m) => "baseline".into(),
                    _ => md::change(m.and_then(data::gflops), b.base[t].and_then(data::gflops)),
                };
                vec![
                    md::gflops_spread(m),
                    change,
                    md::registers(m),
                    md::spills(m),
                ]
            };
            let cols = ["GFLOP/s", "change", "registers", "spill st/ld B"];
            grid(
                &mut s,
                &se.kernel,
                b,
                &a.toolchains,
                (&["point", "hints"], &lead),
                &cols,
                &cells,
            );
            s.push('\n');
        }
    }
    close(sec, s, &a.findings)
}

pub(crate) fn jit(a: &Jit) -> Result<Section> {
    if a.rows.is_empty() && a.left_out == 0 {
        return Ok(Section::default());
    }
    let mut s = format!("## {JIT}\n\n");
    if a.left_out > 0 {
        let _ = writeln!(s, "{} of the jit sweep {} left out: their build was not loaded through the CUDA driver JIT (the PTX lane compiled the CUDA source by mistake before gemmlab fixed it), so they do not measure OpenCL's PTX.\n", md::plural(a.left_out, "row"), md::verb(a.left_out, "was", "were"));
    }
    if a.rows.is_empty() {
        return close(
            Section {
                title: JIT.into(),
                ..Default::default()
            },
            s,
            &[],
        );
    }
    s.push_str(
        "NVIDIA OpenCL's PTX for the kernel, loaded with the CUDA driver (cuModuleLoadData, so the driver's JIT compiles it) \
         and run like the CUDA kernel, next to the same kernel built natively by each toolchain. Same PTX as OpenCL, \
         final compile and launch by CUDA: it separates what the front end (the PTX) does from what the back end does.\n\n",
    );
    let g = |x: Option<&Measurement>| {
        x.map_or(md::MISSING.into(), |x| {
            format!("{} ({} regs)", md::gflops(Some(x)), md::registers(Some(x)))
        })
    };
    let rows: Vec<Vec<String>> = a
        .rows
        .iter()
        .map(|r| {
            let (o, c, j) = (
                r.opencl.map(|x| x.0),
                r.cuda.map(|x| x.0),
                data::gflops(r.jit),
            );
            let from = match (r.opencl.map(|x| x.1), r.cuda.map(|x| x.1)) {
                (Some(a), Some(b)) if a == b => a.to_string(),
                (a, b) => format!(
                    "{} / {}",
                    a.unwrap_or(md::MISSING),
                    b.unwrap_or(md::MISSING)
                ),
            };
            vec![
                r.jit.kernel.clone(),
                r.jit.size_label(),
                g(o),
                g(Some(r.jit)),
                g(c),
                md::ratio(j, o.and_then(data::gflops)),
                md::ratio(j, c.and_then(data::gflops)),
                from,
            ]
        })
        .collect();
    let head = [
        "kernel",
        "size",
        "OpenCL native",
        "OpenCL PTX via CUDA JIT",
        "CUDA (NVRTC)",
        "JIT / OpenCL",
        "JIT / CUDA",
        "native rows from",
    ];
    s.push_str(&md::table(&md::h(&head), &rows));
    let notes: Vec<String> = a
        .rows
        .iter()
        .filter_map(|r| {
            Some(format!(
                "{} at {}: {}",
                r.jit.kernel,
                r.jit.size_label(),
                md::short_reason(r.jit.status.reason()?)
            ))
        })
        .collect();
    if !notes.is_empty() {
        s.push_str("\nWhy some cells have no speed:\n\n");
        for n in notes {
            let _ = writeln!(s, "- {}", md::escape(&n));
        }
    }
    s.push('\n');
    let sec = Section {
        title: JIT.into(),
        ..Default::default()
    };
    close(sec, s, &a.findings)
}

/// "gemm6" for the published kernel, "gemm6 with USE_BOUNDS=1" otherwise.
fn kernel_with(kernel: &str, switches: &str) -> String {
    match switches.strip_prefix("published + ") {
        Some(rest) => format!("{kernel} with {rest}"),
        None if switches == "published" => kernel.to_string(),
        None => format!("{kernel} ({switches})"),
    }
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
        Kind::RegisterCaps { .. } => cap_words(k),
        Kind::TileClaim { .. } => tile_words(k),
        Kind::HintEffects { .. } => effect_words(k),
        Kind::HintsIdle { .. } => idle_words(k),
        Kind::JitKernel(..) => jit_kernel_words(k),
        Kind::JitRollup { .. } => jit_words(k),
    }
}

fn cap_words(k: &Kind) -> Words {
    let Kind::RegisterCaps {
        kernel,
        switches,
        size,
        toolchains,
        not_as_asked,
        top,
    } = k
    else {
        unreachable!()
    };
    let who = kernel_with(kernel, switches);
    let at = size_label(*size);
    let parts: Vec<String> = toolchains
        .iter()
        .filter_map(|t| {
            let p: Vec<String> = [
                t.spills.as_ref().map(spill_words),
                t.speed.as_ref().map(speed_words),
            ]
            .into_iter()
            .flatten()
            .collect();
            (!p.is_empty()).then(|| format!("{}: {}", name(t.toolchain), p.join("; ")))
        })
        .collect();
    let asked: Vec<String> = not_as_asked
        .iter()
        .map(|n| match n.used > n.cap {
            true => format!(
                "{} cap {} -> {} registers{}",
                name(n.toolchain),
                n.cap,
                n.used,
                if n.uncapped == Some(n.used) {
                    ", the same as without a cap"
                } else {
                    ""
                }
            ),
            false => format!(
                "{} cap {} -> {} registers (below the cap although it needs {} uncapped)",
                name(n.toolchain),
                n.cap,
                n.used,
                n.uncapped.unwrap_or(0)
            ),
        })
        .collect();
    let mut text = format!(
        "**Register caps, {kernel} ({switches})** at {at}: {}.",
        parts.join(". ")
    );
    match asked.is_empty() {
        true => text.push_str(" Every cap was applied as asked (registers used = the cap, or fewer where the kernel needs fewer)."),
        false => text.push_str(&format!(" Not as asked: {}.", asked.join("; "))),
    }
    // For the summary: what a cap gains, else that caps were not applied, else that no cap helps.
    let short = if let Some(g) = top {
        let regs = match (g.registers, g.uncapped_registers) {
            (Some(r), Some(u)) if r != u => format!(", with {r} registers instead of {u}"),
            (Some(r), Some(_)) => format!(", with the same {r} registers"),
            _ => String::new(),
        };
        let gain = (g.gflops / g.uncapped - 1.0) * 100.0;
        format!("A register cap of {} makes {who} {gain:.0}% faster on {} at size {at} ({} -> {} GFLOP/s{regs}).", g.cap, name(g.toolchain), speed(g.uncapped), speed(g.gflops))
    } else if let Some(first) = asked.first() {
        let more = if asked.len() > 1 {
            format!(", and {} more", asked.len() - 1)
        } else {
            String::new()
        };
        format!("Register caps are not applied as asked for {who} at size {at}: {first}{more}.")
    } else {
        let uncapped: Vec<String> = toolchains
            .iter()
            .filter_map(|t| match t.speed {
                Some(CapSpeed::Faster { uncapped, .. } | CapSpeed::NoGain { uncapped }) => Some(
                    format!("{} GFLOP/s on {}", speed(uncapped), name(t.toolchain)),
                ),
                _ => None,
            })
            .collect();
        let without = if uncapped.is_empty() {
            String::new()
        } else {
            format!(" (without a cap: {})", join_and(&uncapped))
        };
        format!(
            "No register cap makes {who} more than {} faster than no cap at size {at}{without}.",
            same()
        )
    };
    Words { text, short }
}

fn effect_words(k: &Kind) -> Words {
    let Kind::HintEffects { size, effects } = k else {
        unreachable!()
    };
    let (at, at_short) = hint_sizes(*size);
    let items: Vec<String> = effects
        .iter()
        .map(|e| {
            let regs = match (e.base_registers, e.registers) {
                (Some(a), Some(b)) if a != b => format!(", registers {a} -> {b}"),
                (Some(a), Some(_)) => format!(", registers unchanged ({a})"),
                _ => String::new(),
            };
            let c = (e.gflops / e.base_gflops - 1.0) * 100.0;
            format!(
                "{} on {} {} {c:+.0}% ({} -> {} GFLOP/s{regs})",
                e.point,
                e.kernel,
                name(e.toolchain),
                speed(e.base_gflops),
                speed(e.gflops)
            )
        })
        .collect();
    // The same switch on the same kernel on every toolchain where it changes speed, the largest first.
    let top = &effects[0];
    let parts: Vec<String> = effects
        .iter()
        .filter(|e| e.kernel == top.kernel && e.point == top.point)
        .enumerate()
        .map(|(i, e)| {
            let unit = if i == 0 { " GFLOP/s" } else { "" };
            format!(
                "{} on {} ({} -> {}{unit})",
                md::faster(e.gflops / e.base_gflops - 1.0),
                name(e.toolchain),
                speed(e.base_gflops),
                speed(e.gflops)
            )
        })
        .collect();
    Words {
        text: format!(
            "**Hints that change speed by more than {}** ({at}): {}.",
            same(),
            items.join("; ")
        ),
        short: format!(
            "{} has the largest effect of any switch: it makes {} {} {at_short}.",
            top.point,
            top.kernel,
            join_and(&parts)
        ),
    }
}

fn idle_words(k: &Kind) -> Words {
    let Kind::HintsIdle { size, points, idle } = k else {
        unreachable!()
    };
    let (at, at_short) = hint_sizes(*size);
    let items: Vec<String> = points
        .iter()
        .map(|(p, w)| {
            format!(
                "{p} ({})",
                w.iter()
                    .map(|(k, t)| format!("{k} {}", name(*t)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    let text = format!(
        "**Hints with no effect beyond {}** ({at}): {}.",
        same(),
        items.join("; ")
    );
    let short = match idle.len() {
        0 => text.clone(),
        n => format!(
            "No effect beyond {} on any kernel {} tried on {at_short}: {}.",
            same(),
            md::verb(n, "it was", "they were"),
            join_and(idle)
        ),
    };
    Words { text, short }
}

fn jit_kernel_words(k: &Kind) -> Words {
    let Kind::JitKernel(t) = k else {
        unreachable!()
    };
    let r = |v: Option<u32>| v.map_or(String::new(), |v| format!(", {v} registers"));
    let [jr, or, cr] = t.registers;
    let mut text = format!(
        "**{} through the CUDA JIT** at {}: OpenCL's PTX run by CUDA {} GFLOP/s{}; OpenCL native {}{}; CUDA (NVRTC) {}{}.",
        t.kernel, size_label(t.size), speed(t.jit), r(jr), speed(t.opencl), r(or), speed(t.cuda), r(cr)
    );
    text.push_str(&match t.like {
        Like::OpenCl => " The same PTX runs at the same speed whichever driver compiles it, so the gap between the toolchains comes from the PTX each front end emits.".into(),
        Like::Cuda => " OpenCL's PTX runs like the CUDA kernel when the CUDA driver compiles and launches it, so the gap comes from OpenCL's back end or launch, not from its PTX.".into(),
        Like::Neither => format!(" The JIT run differs from OpenCL native by {:+.0}%: the final compile step or the launch matters, not only the PTX.", (t.jit / t.opencl - 1.0) * 100.0),
        Like::Both => " All three are within a few percent.".into(),
    });
    Words {
        short: text.clone(),
        text,
    }
}

fn spill_words(s: &Spills) -> String {
    match *s {
        Spills::None { lowest } => {
            format!("no spills at any cap tried (lowest {})", cap_label(lowest))
        }
        Spills::AtHighest { cap, bytes } => format!(
            "spills even at the highest cap ({}: {bytes} B)",
            cap_label(cap)
        ),
        Spills::From {
            clean_to,
            cap,
            bytes,
            most,
        } => {
            let (clean_to, cap) = (cap_label(clean_to), cap_label(cap));
            let most = most.map_or(String::new(), |(c, b)| {
                format!(" and reach {b} B at cap {}", cap_label(c))
            });
            format!("no spills down to cap {clean_to}; spills start at cap {cap} ({bytes} B stores + loads){most}")
        }
    }
}

fn speed_words(s: &CapSpeed) -> String {
    match *s {
        CapSpeed::Faster {
            cap,
            gflops,
            uncapped,
        } => {
            let gain = (gflops / uncapped - 1.0) * 100.0;
            format!(
                "fastest at cap {cap}: {} GFLOP/s vs {} without a cap (+{gain:.0}%)",
                speed(gflops),
                speed(uncapped)
            )
        }
        CapSpeed::NoGain { uncapped } => format!(
            "no cap is more than {} faster than no cap ({} GFLOP/s)",
            same(),
            speed(uncapped)
        ),
        CapSpeed::NoBase { cap, gflops } => format!(
            "fastest at cap {}: {} GFLOP/s",
            cap_label(cap),
            speed(gflops)
        ),
    }
}

fn tile_words(k: &Kind) -> Words {
    let Kind::TileClaim {
        kernel,
        size,
        device,
        cuda,
        opencl,
        cuda_slower,
        opencl_fine,
        fastest,
    } = k
    else {
        unreachable!()
    };
    let verdict = if *cuda_slower && *opencl_fine {
        "holds"
    } else {
        "does not hold"
    };
    let c = |[a, b]: &[Tile; 2]| a.gflops / b.gflops - 1.0;
    let rel = |t| {
        if is_same(c(t)) {
            format!("within {}", same())
        } else {
            format!("8x4 {}", md::faster(c(t)))
        }
    };
    let than = |t| {
        if is_same(c(t)) {
            format!("within {} of", same())
        } else {
            format!("{} than", md::faster(c(t)))
        }
    };
    let regs = |t: &Tile| {
        t.registers
            .map_or(String::new(), |r| format!(" ({r} registers)"))
    };
    let tile = |t: &Tile| format!("{}{}", speed(t.gflops), regs(t));
    let [(c84, c44), (o84, o44)] = [(&cuda[0], &cuda[1]), (&opencl[0], &opencl[1])];
    let at = size_label(*size);
    let mut text = format!(
        "**The tutorial's 8x4 tile claim {verdict}** ({kernel}, {at}{}). On the K40 the clBlas 8x4 tile ran well in OpenCL but at about 300 GFLOPS in CUDA, and 4x4 rescued CUDA. \
         Here: CUDA 8x4 {} GFLOP/s{} vs 4x4 {}, {}; OpenCL 8x4 {} vs 4x4 {}, {}.",
        device.as_ref().map_or(String::new(), |d| format!(", {d}")),
        speed(c84.gflops), regs(c84), tile(c44), rel(cuda), tile(o84), tile(o44), rel(opencl)
    );
    let why: Vec<&str> = [
        (!cuda_slower, "CUDA's 8x4 is not slower than its 4x4"),
        (!opencl_fine, "OpenCL's 8x4 is slower than its 4x4"),
    ]
    .into_iter()
    .filter(|w| w.0)
    .map(|w| w.1)
    .collect();
    if !why.is_empty() {
        let _ = write!(text, " It does not hold because {}.", why.join(" and "));
    }
    let best: Vec<String> = fastest
        .iter()
        .map(|(t, (x, y), g)| format!("{} {x}x{y} ({})", name(*t), speed(*g)))
        .collect();
    if !best.is_empty() {
        let _ = write!(text, " Fastest tile: {}.", best.join(", "));
    }
    let short = format!(
        "The tutorial's claim that the 8x4 tile suits OpenCL but not CUDA {verdict} for {kernel} at size {at}{}: \
         8x4 is {} 4x4 on OpenCL ({} vs {} GFLOP/s) and {} 4x4 on CUDA ({} vs {}).",
        device.as_ref().map_or(String::new(), |d| format!(" on {d}")),
        than(opencl), speed(o84.gflops), speed(o44.gflops), than(cuda), speed(c84.gflops), speed(c44.gflops)
    );
    Words { text, short }
}

/// ("at 4096", "at size 4096"), or each kernel's largest size.
fn hint_sizes(size: Option<(usize, usize, usize)>) -> (String, String) {
    match size {
        Some(s) => (
            format!("at {}", size_label(s)),
            format!("at size {}", size_label(s)),
        ),
        None => (
            "at each kernel's largest size".into(),
            "at each kernel's largest size".into(),
        ),
    }
}

fn jit_words(k: &Kind) -> Words {
    let Kind::JitRollup {
        size,
        kernels,
        groups,
        differ,
        lean,
        leaning,
        example,
    } = k
    else {
        unreachable!()
    };
    let at = size_label(*size);
    let groups: Vec<String> = groups
        .iter()
        .map(|(like, ks)| {
            let what = match like {
                Like::Cuda => "like CUDA's own build, so the gap is OpenCL's back end or launch",
                Like::OpenCl => "like OpenCL's own build, so the gap is in the PTX",
                Like::Neither => "unlike OpenCL's own build and not explained by CUDA's",
                Like::Both => "all three builds alike",
            };
            format!("{what}: {}", join_and(ks))
        })
        .collect();
    let text = format!("**OpenCL's PTX through the CUDA JIT, all {kernels} kernels** at {at} (within {} counts as alike): {}.", same(), groups.join("; "));
    let how_many = if leaning == differ {
        format!("all {leaning}")
    } else {
        format!("{leaning} of the {differ}")
    };
    let those = if leaning == differ {
        ""
    } else {
        "for those kernels "
    };
    let where_ = format!(
        "kernels where the toolchains differ by more than {}",
        same()
    );
    let short = match (lean, example) {
        (Like::Cuda, Some(e)) => format!(
            "Through the CUDA JIT, OpenCL's PTX runs within {} of CUDA's own build on {how_many} {where_} ({}: {} vs {} GFLOP/s, OpenCL's own build {}): {those}the gap is OpenCL's back end or launch, not its PTX.",
            same(), e.kernel, speed(e.jit), speed(e.cuda), speed(e.opencl)
        ),
        (Like::OpenCl, Some(e)) => format!(
            "Through the CUDA JIT, OpenCL's PTX runs within {} of OpenCL's own build on {how_many} {where_} ({}: {} vs {} GFLOP/s, CUDA {}): {those}the gap is in the PTX each front end emits.",
            same(), e.kernel, speed(e.jit), speed(e.opencl), speed(e.cuda)
        ),
        (Like::Neither, Some(e)) => format!(
            "Through the CUDA JIT, OpenCL's PTX runs unlike OpenCL's own build on {leaning} of {kernels} kernels at size {at} ({}: {} vs {} GFLOP/s, CUDA {}).",
            e.kernel, speed(e.jit), speed(e.opencl), speed(e.cuda)
        ),
        _ => format!("Through the CUDA JIT, OpenCL's PTX runs within {} of both native builds on all {kernels} kernels at size {at}.", same()),
    };
    Words { text, short }
}
