//! The sweeps: register caps, gemm11 tiling, compiler hints, and OpenCL's PTX
//! through the CUDA JIT; each section is empty without its experiment.

use std::fmt::Write as _;

use crate::analysis::stats::is_same;
use crate::analysis::sweeps::{
    is_baseline, Block, CapSpeed, CapToolchain, Effect, Jit, JitRow, Kind, Like,
};
use crate::analysis::sweeps::{Series, Size, Spills, Sweep, Tile};
use crate::backend::Toolchain;
use crate::error::Result;
use crate::plot::{Figure, Line, Panel, RefLine, Style, XAxis};
use crate::results::Measurement as M;

use super::compare::styles;
use super::data::{self, gflops, registers as regs, size_label, toolchain_name as name};
use super::md::{self, join_and, size_label_long, speed};
use super::{bar_panel, Ctx, Section, Words, SAME_SPEED, VENDOR_COLOR};

const REGISTERS: &str = "Register cap sweep (registers)";
const TILING: &str = "Register tiling: RX x RY (tiling)";
pub(crate) const HINTS: &str = "Compiler hints (hints)";
const JIT: &str = "OpenCL's PTX through the CUDA driver JIT (jit)";

fn same() -> String {
    format!("{:.0}%", SAME_SPEED * 100.0)
}

/// A leading column: its name and its cell (block, point).
type Lead<'f, P> = (&'f str, &'f dyn Fn(&Block<P>, usize) -> String);
/// A column of each toolchain: its name and its cell (block, point, toolchain).
type Col<'f, P> = (&'f str, &'f dyn Fn(&Block<P>, usize, usize) -> String);
/// A chart's metric: its label, its axis and its value of a row.
type Metric<'f> = (&'f str, &'f str, &'f dyn Fn(&M) -> Option<f64>);
type JitColumn<'f> = (&'f str, &'f dyn Fn(&JitRow) -> String);

/// A column showing one value of the row.
fn each<P>(f: fn(Option<&M>) -> String) -> impl Fn(&Block<P>, usize, usize) -> String {
    move |b, p, t| f(b.cells[p][t])
}

/// A sweep's section: heading and introduction, then each block of each series
/// as a table of the `lead` columns and the `cols` of each toolchain, its
/// `notes`, and after a series' first block its `chart`.
fn sweep_section<P>(
    a: &Sweep<P>,
    (title, intro): (&str, &str),
    head: impl Fn(&Series<P>) -> String,
    (lead, cols): (&[Lead<P>], &[Col<P>]),
    notes: impl Fn(&Block<P>) -> String,
    mut chart: impl FnMut(&Series<P>, &Block<P>) -> Result<String>,
) -> Result<Section> {
    if a.series.is_empty() {
        return Ok(Section::default());
    }
    let named = |&t: &Toolchain| cols.iter().map(move |c| format!("{} {}", name(t), c.0));
    let header: Vec<String> = lead.iter().map(|c| c.0.to_string()).collect();
    let header = [header, a.toolchains.iter().flat_map(named).collect()].concat();
    let mut s = format!("## {title}\n\n{intro}\n\n");
    for se in &a.series {
        for (i, b) in se.blocks.iter().enumerate() {
            let rows: Vec<Vec<String>> = (0..b.points.len())
                .map(|p| {
                    let each = |t| cols.iter().map(move |c| c.1(b, p, t));
                    let cells = (0..a.toolchains.len()).flat_map(each);
                    lead.iter().map(|c| c.1(b, p)).chain(cells).collect()
                })
                .collect();
            let (at, table) = (size_label_long(b.size), md::table(&header, &rows));
            let _ = writeln!(s, "### {}, {at}\n\n{table}{}", head(se), notes(b));
            if i == 0 {
                s.push_str(&chart(se, b)?);
            }
        }
    }
    Ok(Section::of(title, s, &a.findings))
}

/// A bulleted list after a line of its own, when there is anything to list.
fn list(title: &str, items: impl Iterator<Item = String>) -> String {
    let items: String = items.map(|n| format!("- {}\n", md::escape(&n))).collect();
    match items.is_empty() {
        true => items,
        false => format!("\n{title}:\n\n{items}"),
    }
}

pub(crate) fn registers(ctx: &mut Ctx, a: &Sweep<Option<u32>>) -> Result<Section> {
    let intro = "Each kernel compiled with a register cap (`--maxrregcount` for NVRTC, `-cl-nv-maxrregcount` for NVIDIA OpenCL; \
         \"none\" = no cap); \"registers\" is what the compiler used, \"(above cap)\" a cap not applied as asked.";
    let head = |se: &Series<_>| format!("{} ({})", se.kernel, se.switches);
    let lead: [Lead<Option<u32>>; 1] = [("cap asked", &|b, p| md::cap_label(b.points[p]))];
    let cols: [Col<Option<u32>>; 4] = [
        ("registers", &|b, p, t| {
            let m = b.cells[p][t];
            let above = (b.points[p].zip(m.and_then(regs))).is_some_and(|(c, u)| u > c);
            md::registers(m) + if above { " (above cap)" } else { "" }
        }),
        ("spill st/ld B", &each(md::spills)),
        ("occupancy", &each(md::occupancy)),
        ("GFLOP/s", &each(md::gflops)),
    ];
    let notes = |b: &Block<_>| {
        let notes = b.rows.iter().flat_map(|m| {
            let (t, cap) = (name(m.toolchain), md::cap_label(data::register_cap(m)));
            let note = move |n| md::short_reason(&format!("{t} cap {cap}: {n}"));
            m.build_notes.iter().map(note)
        });
        list("Build notes", notes)
    };
    let chart = |se: &Series<_>, b: &Block<Option<u32>>| {
        let cats = XAxis::Categories(b.points.iter().map(|c| md::cap_label(*c)).collect());
        let line = |style, y: &dyn Fn(usize) -> Option<f64>| {
            let points = (0..b.points.len()).map(|p| (p as f64, y(p))).collect();
            Line { style, points }
        };
        let used = |m: &M| regs(m).map(f64::from);
        let spilled = |m: &M| data::spill_bytes(m).map(|b| b as f64);
        let of: [Metric; 3] = [
            ("GFLOP/s", "GFLOP/s", &gflops),
            ("registers used", "registers per thread", &used),
            ("spill bytes (stores + loads)", "bytes", &spilled),
        ];
        let mut panels: Vec<Panel> = (of.iter().enumerate())
            .map(|(i, (title, y, f))| Panel {
                integer_y: i > 0,
                lines: (styles(&a.toolchains).into_iter().enumerate())
                    .map(|(t, style)| line(style, &|p| b.cells[p][t].and_then(f)))
                    .collect(),
                ..Panel::new(*title, cats.clone(), "register cap asked", y)
            })
            .collect();
        let asked = Style::new("cap asked", VENDOR_COLOR).dashed();
        let caps = |p: usize| b.points[p].map(f64::from);
        panels[1].lines.push(line(asked.clone(), &caps));
        let mut legend: Vec<Style> = styles(&a.toolchains).into_iter().map(Style::line).collect();
        legend.push(asked);
        let what = (head(se), "register cap sweep", b.size);
        let alt = "GFLOP/s, registers and spills against the register cap";
        draw(ctx, what, (&se.chart, alt, 420, 340), panels, legend)
    };
    sweep_section(a, (REGISTERS, intro), head, (&lead, &cols), notes, chart)
}

/// Writes a figure of `panels` titled "{k}: {what}, M = N = K = 4096 on H200"
/// to `stem`, `w` x `h` a panel; returns its Markdown.
fn draw(
    ctx: &mut Ctx,
    (k, what, size): (String, &str, Size),
    (stem, alt, w, h): (&str, &str, u32, u32),
    panels: Vec<Panel>,
    legend: Vec<Style>,
) -> Result<String> {
    let at = size_label_long(size) + &ctx.title_suffix();
    let fig = Figure {
        title: format!("{k}: {what}, {at}"),
        legend,
        cols: panels.len(),
        panels,
        panel_w: w,
        panel_h: h,
    };
    ctx.chart(&fig, stem, &format!("{k}: {alt}"))
}

pub(crate) fn tiling(ctx: &mut Ctx, a: &Sweep<(i64, i64)>) -> Result<Section> {
    let intro = "The register-tiled kernel with RX x RY results per thread (RK = RY); 8x4 is the tutorial's clBlas tile. \
         Registers and spills are what each compiler used.";
    let lead: [Lead<(i64, i64)>; 3] = [
        ("RX", &|b, p| b.points[p].0.to_string()),
        ("RY", &|b, p| b.points[p].1.to_string()),
        ("RK", &|b, p| {
            let rk = b.cells[p]
                .iter()
                .find_map(|m| data::config_value((*m)?, "RK"));
            rk.map_or(md::MISSING.into(), |v| v.to_string())
        }),
    ];
    let cols: [Col<(i64, i64)>; 5] = [
        ("GFLOP/s", &each(md::gflops_spread)),
        ("% of cuBLAS", &each(md::vs_vendor)),
        ("registers", &each(md::registers)),
        ("spill st/ld B", &each(md::spills)),
        ("occupancy", &each(md::occupancy)),
    ];
    let note = |m: &M| match (m.status.is_ok(), regs(m), data::spill_bytes(m)) {
        (false, ..) => m.status.label().to_string(),
        (_, Some(r), Some(b)) if b > 0 => format!("{r}r+sp"),
        (_, Some(r), _) => format!("{r}r"),
        _ => String::new(),
    };
    let chart = |se: &Series<_>, b: &Block<(i64, i64)>| {
        let mut legend = styles(&a.toolchains);
        let values = (b.cells.iter())
            .map(|r| r.iter().map(|m| m.and_then(gflops)).collect())
            .collect();
        let cats = b.points.iter().map(|(x, y)| format!("{x}x{y}")).collect();
        let (x, y) = ("tile RX x RY (results per thread)", "GFLOP/s (median)");
        let mut panel = bar_panel(String::new(), cats, x, y, &legend, values);
        if let Some(bars) = panel.bars.as_mut() {
            bars.notes = (b.cells.iter())
                .map(|r| r.iter().map(|m| m.map(note)).collect())
                .collect();
        }
        if let Some(y) = b.vendor.and_then(gflops) {
            let (label, color) = (format!("cuBLAS {y:.0}"), VENDOR_COLOR);
            panel.refs.push(RefLine { label, y, color });
            legend.push(Style::new("cuBLAS", VENDOR_COLOR).dashed());
        }
        let w = (150 * b.points.len() as u32).clamp(700, 1300);
        let what = (se.kernel.clone(), "register tiles", b.size);
        let alt = "GFLOP/s per RX x RY tile";
        let chart = draw(ctx, what, (&se.chart, alt, w, 480), vec![panel], legend)?;
        Ok(chart + "Above each bar: registers per thread (\"r\"); \"+sp\" marks spills.\n\n")
    };
    let (head, none) = (
        |se: &Series<_>| se.kernel.clone(),
        |_: &Block<_>| String::new(),
    );
    sweep_section(a, (TILING, intro), head, (&lead, &cols), none, chart)
}

pub(crate) fn hints(a: &Sweep<String>) -> Result<Section> {
    let intro = "One switch changed at a time (e.g. `UNROLL_K=1`, see the switch table in docs/src/kernels.md) against the baseline, the published kernel \
         with no extra compiler flags; \"change\" is the speed relative to the baseline on the same toolchain.";
    let lead: [Lead<String>; 2] = [
        ("point", &|b, p| b.points[p].clone()),
        ("hints", &|b, p| {
            let hints = b.cells[p]
                .iter()
                .find_map(|m| Some(m.as_ref()?.hints.describe(true)));
            md::or_missing(hints.as_deref())
        }),
    ];
    let cols: [Col<String>; 4] = [
        ("GFLOP/s", &each(md::gflops_spread)),
        ("change", &|b, p, t| match b.cells[p][t] {
            Some(m) if is_baseline(m) => "baseline".into(),
            m => md::change(m.and_then(gflops), b.base[t].and_then(gflops)),
        }),
        ("registers", &each(md::registers)),
        ("spill st/ld B", &each(md::spills)),
    ];
    let (head, none) = (
        |se: &Series<_>| se.kernel.clone(),
        |_: &Block<_>| String::new(),
    );
    sweep_section(a, (HINTS, intro), head, (&lead, &cols), none, |_, _| {
        Ok(String::new())
    })
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
        return Ok(Section::of(JIT, s, &a.findings));
    }
    // The same PTX through two assemblers, where the run has that lane.
    let has_nvrtc = a.rows.iter().any(|r| r.nvrtc_jit.is_some());
    let nvrtc = match has_nvrtc {
        true => " NVRTC's own PTX through the same JIT beside NVRTC's build of it: the same PTX through two assemblers.",
        false => "",
    };
    let _ = write!(s, "NVIDIA OpenCL's PTX for the kernel, loaded with the CUDA driver (cuModuleLoadData: the driver's JIT compiles it) and run like the CUDA kernel, \
         next to the kernel built natively by each toolchain: it separates what the front end (the PTX) does from what the back end does.{nvrtc}\n\n");
    let g = |x: Option<&M>| match x {
        Some(_) => format!("{} ({} regs)", md::gflops(x), md::registers(x)),
        None => md::MISSING.into(),
    };
    let ratio =
        |r: &JitRow, x: Option<(&M, &str)>| md::ratio(gflops(r.jit), x.and_then(|x| gflops(x.0)));
    let from = |r: &JitRow| match (r.opencl.map(|x| x.1), r.cuda.map(|x| x.1)) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (a, b) => format!("{} / {}", md::or_missing(a), md::or_missing(b)),
    };
    const NVRTC: &str = "NVRTC PTX via CUDA JIT";
    let all: [JitColumn; 9] = [
        ("kernel", &|r| r.jit.kernel.clone()),
        ("size", &|r| r.jit.size_label()),
        ("OpenCL native", &|r| g(r.opencl.map(|x| x.0))),
        ("OpenCL PTX via CUDA JIT", &|r| g(Some(r.jit))),
        ("CUDA (NVRTC)", &|r| g(r.cuda.map(|x| x.0))),
        (NVRTC, &|r| g(r.nvrtc_jit)),
        ("JIT / OpenCL", &|r| ratio(r, r.opencl)),
        ("JIT / CUDA", &|r| ratio(r, r.cuda)),
        ("native rows from", &from),
    ];
    let cols: Vec<_> = (all.into_iter())
        .filter(|c| has_nvrtc || c.0 != NVRTC)
        .collect();
    let notes = a.rows.iter().filter_map(|r| {
        let why = md::short_reason(r.jit.status.reason()?);
        Some(format!("{} at {}: {why}", r.jit.kernel, r.jit.size_label()))
    });
    let table = md::table_of(&cols, &a.rows);
    let _ = writeln!(s, "{table}{}", list("Why some cells have no speed", notes));
    Ok(Section::of(JIT, s, &a.findings))
}

pub(crate) fn words(k: &Kind) -> Words {
    let (same, at_size) = (same(), |size: &Option<Size>, word| {
        // "at 4096" (with `word` "size ", "at size 4096"), or at each kernel's largest size.
        size.map_or("at each kernel's largest size".into(), |s| {
            format!("at {word}{}", size_label(s))
        })
    });
    let (text, short) = match k {
        Kind::RegisterCaps { .. } => return cap_words(k),
        Kind::TileClaim { .. } => return tile_words(k),
        Kind::JitRollup { .. } => return jit_words(k),
        Kind::HintEffects { size, effects } => {
            let c = |e: &Effect| e.gflops / e.base_gflops - 1.0;
            let from_to =
                |e: &Effect, unit| format!("{} -> {}{unit}", speed(e.base_gflops), speed(e.gflops));
            let items: Vec<String> = (effects.iter())
                .map(|e| {
                    let regs = match (e.base_registers, e.registers) {
                        (Some(a), Some(b)) if a != b => format!(", registers {a} -> {b}"),
                        (Some(a), Some(_)) => format!(", registers unchanged ({a})"),
                        _ => String::new(),
                    };
                    let (t, speeds, change) = (name(e.toolchain), from_to(e, " GFLOP/s"), c(e));
                    let Effect { point, kernel, .. } = e;
                    format!(
                        "{point} on {kernel} {t} {:+.0}% ({speeds}{regs})",
                        change * 100.0
                    )
                })
                .collect();
            // The same switch on the same kernel on every toolchain where it changes speed, the largest first.
            let Effect { point, kernel, .. } = &effects[0];
            let parts: Vec<String> = (effects.iter())
                .filter(|e| e.kernel == *kernel && e.point == *point)
                .enumerate()
                .map(|(i, e)| {
                    let speeds = from_to(e, if i == 0 { " GFLOP/s" } else { "" });
                    format!("{} on {} ({speeds})", md::faster(c(e)), name(e.toolchain))
                })
                .collect();
            let (at, items, parts) = (at_size(size, ""), items.join("; "), join_and(&parts));
            let at_size = at_size(size, "size ");
            (
                format!("**Hints that change speed by more than {same}** ({at}): {items}."),
                format!("{point} has the largest effect of any switch: it makes {kernel} {parts} {at_size}."),
            )
        }
        Kind::HintsIdle { size, points, idle } => {
            let items: Vec<String> = (points.iter())
                .map(|(p, w)| {
                    let w: Vec<String> =
                        w.iter().map(|(k, t)| format!("{k} {}", name(*t))).collect();
                    format!("{p} ({})", w.join(", "))
                })
                .collect();
            let (at, items) = (at_size(size, ""), items.join("; "));
            let text = format!("**Hints with no effect beyond {same}** ({at}): {items}.");
            let (it, at) = (
                md::verb(idle.len(), "it was", "they were"),
                at_size(size, "size "),
            );
            let short = match idle.is_empty() {
                true => text.clone(),
                false => format!(
                    "No effect beyond {same} on any kernel {it} tried on {at}: {}.",
                    join_and(idle)
                ),
            };
            (text, short)
        }
        Kind::JitKernel(t) => {
            let r = |v: Option<u32>| v.map_or(String::new(), |v| format!(", {v} registers"));
            let [jr, or, cr] = t.registers.map(r);
            let [jit, ocl, cuda] = [t.jit, t.opencl, t.cuda].map(speed);
            let (k, at) = (&t.kernel, size_label(t.size));
            let why = match t.like {
                Like::OpenCl => "The same PTX runs at the same speed whichever driver compiles it, so the gap between the toolchains comes from the PTX each front end emits.".into(),
                Like::Cuda => "OpenCL's PTX runs like the CUDA kernel when the CUDA driver compiles and launches it, so the gap comes from OpenCL's back end or launch, not from its PTX.".into(),
                Like::Neither => format!("The JIT run differs from OpenCL native by {:+.0}%: the final compile step or the launch matters, not only the PTX.", (t.jit / t.opencl - 1.0) * 100.0),
                Like::Both => "All three are within a few percent.".into(),
            };
            let assembler = t.nvrtc_jit.map_or(String::new(), |n| {
                let than = match md::faster(n / t.cuda - 1.0) {
                    same if is_same(n / t.cuda - 1.0) => format!("{same} as"),
                    other => format!("{other} than"),
                };
                format!(" NVRTC's own PTX through the same JIT: {} GFLOP/s, {than} NVRTC's own build (the assembler's part).", speed(n))
            });
            let text = format!("**{k} through the CUDA JIT** at {at}: OpenCL's PTX run by CUDA {jit} GFLOP/s{jr}; OpenCL native {ocl}{or}; CUDA (NVRTC) {cuda}{cr}. {why}{assembler}");
            (text.clone(), text)
        }
    };
    Words { text, short }
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
    // "gemm6" for the published kernel, "gemm6 with USE_BOUNDS=1" otherwise.
    let who = match switches.strip_prefix("published + ") {
        Some(rest) => format!("{kernel} with {rest}"),
        None if switches == "published" => kernel.to_string(),
        None => format!("{kernel} ({switches})"),
    };
    let (at, same) = (size_label(*size), same());
    let parts: Vec<String> = (toolchains.iter())
        .filter_map(|t| {
            let spills = t.spills.iter().map(spill_words);
            let p: Vec<String> = spills.chain(t.speed.iter().map(speed_words)).collect();
            (!p.is_empty()).then(|| format!("{}: {}", name(t.toolchain), p.join("; ")))
        })
        .collect();
    let asked: Vec<String> = (not_as_asked.iter())
        .map(|n| {
            let (t, cap, used, need) = (name(n.toolchain), n.cap, n.used, n.uncapped.unwrap_or(0));
            let why = match n.uncapped {
                _ if used <= cap => format!(" (below the cap although it needs {need} uncapped)"),
                Some(u) if u == used => ", the same as without a cap".into(),
                _ => String::new(),
            };
            format!("{t} cap {cap} -> {used} registers{why}")
        })
        .collect();
    let (parts, how) = (parts.join(". "), match asked.is_empty() {
        true => "Every cap was applied as asked (registers used = the cap, or fewer where the kernel needs fewer).".to_string(),
        false => format!("Not as asked: {}.", asked.join("; ")),
    });
    let text = format!("**Register caps, {kernel} ({switches})** at {at}: {parts}. {how}");
    // For the summary: what a cap gains, else that caps were not applied, else that no cap helps.
    let short = if let Some(g) = top {
        let regs = match (g.registers, g.uncapped_registers) {
            (Some(r), Some(u)) if r != u => format!(", with {r} registers instead of {u}"),
            (Some(r), Some(_)) => format!(", with the same {r} registers"),
            _ => String::new(),
        };
        let gain = (g.gflops / g.uncapped - 1.0) * 100.0;
        let (t, from, to) = (name(g.toolchain), speed(g.uncapped), speed(g.gflops));
        format!("A register cap of {} makes {who} {gain:.0}% faster on {t} at size {at} ({from} -> {to} GFLOP/s{regs}).", g.cap)
    } else if let Some(first) = asked.first() {
        let more = match asked.len() {
            1 => String::new(),
            n => format!(", and {} more", n - 1),
        };
        format!("Register caps are not applied as asked for {who} at size {at}: {first}{more}.")
    } else {
        let uncapped = |t: &CapToolchain| match t.speed.as_ref()? {
            CapSpeed::Faster { uncapped, .. } | CapSpeed::NoGain { uncapped } => Some(*uncapped),
            CapSpeed::NoBase { .. } => None,
        };
        let on = |t| {
            Some(format!(
                "{} GFLOP/s on {}",
                speed(uncapped(t)?),
                name(t.toolchain)
            ))
        };
        let without = match join_and(&toolchains.iter().filter_map(on).collect::<Vec<_>>()) {
            s if s.is_empty() => s,
            s => format!(" (without a cap: {s})"),
        };
        format!("No register cap makes {who} more than {same} faster than no cap at size {at}{without}.")
    };
    Words { text, short }
}

fn spill_words(s: &Spills) -> String {
    match *s {
        Spills::None { lowest } => {
            format!(
                "no spills at any cap tried (lowest {})",
                md::cap_label(lowest)
            )
        }
        Spills::AtHighest { cap, bytes } => {
            let cap = md::cap_label(cap);
            format!("spills even at the highest cap ({cap}: {bytes} B)")
        }
        Spills::From {
            clean_to,
            cap,
            bytes,
            most,
        } => {
            let most = most.map_or(String::new(), |(c, b)| {
                format!(" and reach {b} B at cap {}", md::cap_label(c))
            });
            let (clean_to, cap) = (md::cap_label(clean_to), md::cap_label(cap));
            format!("no spills down to cap {clean_to}; spills start at cap {cap} ({bytes} B stores + loads){most}")
        }
    }
}

fn speed_words(s: &CapSpeed) -> String {
    let fastest = |cap, g| {
        format!(
            "fastest at cap {}: {} GFLOP/s",
            md::cap_label(cap),
            speed(g)
        )
    };
    match *s {
        CapSpeed::Faster {
            cap,
            gflops,
            uncapped,
        } => {
            let gain = (gflops / uncapped - 1.0) * 100.0;
            let (best, uncapped) = (fastest(Some(cap), gflops), speed(uncapped));
            format!("{best} vs {uncapped} without a cap (+{gain:.0}%)")
        }
        CapSpeed::NoGain { uncapped } => {
            let (same, uncapped) = (same(), speed(uncapped));
            format!("no cap is more than {same} faster than no cap ({uncapped} GFLOP/s)")
        }
        CapSpeed::NoBase { cap, gflops } => fastest(cap, gflops),
    }
}

fn tile_words(k: &Kind) -> Words {
    let Kind::TileClaim {
        kernel,
        size,
        device,
        cuda: cu @ [c84, c44],
        opencl: cl @ [o84, o44],
        cuda_slower,
        opencl_fine,
        fastest,
    } = k
    else {
        unreachable!()
    };
    let verdict = match cuda_slower & opencl_fine {
        true => "holds",
        false => "does not hold",
    };
    let c = |[a, b]: &[Tile; 2]| a.gflops / b.gflops - 1.0;
    // "8x4 6% slower" and "6% slower than", or "within 3%" and "within 3% of".
    let rel = |t, than: bool| match (is_same(c(t)), than) {
        (true, _) => format!("within {}{}", same(), if than { " of" } else { "" }),
        (false, false) => format!("8x4 {}", md::faster(c(t))),
        (false, true) => format!("{} than", md::faster(c(t))),
    };
    let regs = |t: &Tile| (t.registers).map_or(String::new(), |r| format!(" ({r} registers)"));
    let tile = |t: &Tile| format!("{}{}", speed(t.gflops), regs(t));
    let at = size_label(*size);
    let on = |sep| (device.as_ref()).map_or(String::new(), |d| format!("{sep}{d}"));
    let [c84s, c44s, o84s, o44s] = [c84, c44, o84, o44].map(|t| speed(t.gflops));
    let [c44t, o84t, o44t] = [c44, o84, o44].map(tile);
    let (on_dev, c84r, cuda_rel, ocl_rel) = (on(", "), regs(c84), rel(cu, false), rel(cl, false));
    let mut text = format!(
        "**The tutorial's 8x4 tile claim {verdict}** ({kernel}, {at}{on_dev}). On the K40 the clBlas 8x4 tile ran well in OpenCL but at about 300 GFLOPS in CUDA, and 4x4 rescued CUDA. \
         Here: CUDA 8x4 {c84s} GFLOP/s{c84r} vs 4x4 {c44t}, {cuda_rel}; OpenCL 8x4 {o84t} vs 4x4 {o44t}, {ocl_rel}."
    );
    let why = [
        (!cuda_slower, "CUDA's 8x4 is not slower than its 4x4"),
        (!opencl_fine, "OpenCL's 8x4 is slower than its 4x4"),
    ];
    let why: Vec<&str> = why.iter().filter(|w| w.0).map(|w| w.1).collect();
    if !why.is_empty() {
        let _ = write!(text, " It does not hold because {}.", why.join(" and "));
    }
    let best: Vec<String> = (fastest.iter())
        .map(|(t, (x, y), g)| format!("{} {x}x{y} ({})", name(*t), speed(*g)))
        .collect();
    if !best.is_empty() {
        let _ = write!(text, " Fastest tile: {}.", best.join(", "));
    }
    let (on_dev, ocl_than, cuda_than) = (on(" on "), rel(cl, true), rel(cu, true));
    let short = format!(
        "The tutorial's claim that the 8x4 tile suits OpenCL but not CUDA {verdict} for {kernel} at size {at}{on_dev}: \
         8x4 is {ocl_than} 4x4 on OpenCL ({o84s} vs {o44s} GFLOP/s) and {cuda_than} 4x4 on CUDA ({c84s} vs {c44s})."
    );
    Words { text, short }
}

const BACK_END: &str = "is OpenCL's back end or launch, not its PTX";
const IN_PTX: &str = "is in the PTX each front end emits";

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
    let (at, same) = (size_label(*size), same());
    let groups: Vec<String> = (groups.iter())
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
    let text = format!("**OpenCL's PTX through the CUDA JIT, all {kernels} kernels** at {at} (within {same} counts as alike): {}.", groups.join("; "));
    let (how_many, those) = match leaning == differ {
        true => (format!("all {leaning}"), ""),
        false => (format!("{leaning} of the {differ}"), "for those kernels "),
    };
    let short = match (lean, example) {
        (Like::Cuda | Like::OpenCl, Some(e)) => {
            let (own, vs, other, y, why) = match lean {
                Like::Cuda => ("CUDA", e.cuda, "OpenCL's own build", e.opencl, BACK_END),
                _ => ("OpenCL", e.opencl, "CUDA", e.cuda, IN_PTX),
            };
            let (k, jit, vs, y) = (&e.kernel, speed(e.jit), speed(vs), speed(y));
            format!("within {same} of {own}'s own build on {how_many} kernels where the toolchains differ by more than {same} ({k}: {jit} vs {vs} GFLOP/s, {other} {y}): {those}the gap {why}.")
        }
        (Like::Neither, Some(e)) => {
            let (k, [jit, ocl, cuda]) = (&e.kernel, [e.jit, e.opencl, e.cuda].map(speed));
            format!("unlike OpenCL's own build on {leaning} of {kernels} kernels at size {at} ({k}: {jit} vs {ocl} GFLOP/s, CUDA {cuda}).")
        }
        _ => format!("within {same} of both native builds on all {kernels} kernels at size {at}."),
    };
    Words {
        text,
        short: format!("Through the CUDA JIT, OpenCL's PTX runs {short}"),
    }
}
