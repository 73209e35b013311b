//! The offline sections (rows compiled with `--arch` or by `gemmlab atlas`:
//! registers, spills and occupancy, never a speed): the tutorial's Kepler
//! claims on sm_35, every kernel on every architecture under every compiler,
//! and every point of the offline sweeps.

use std::cmp::Ordering::{Equal, Greater, Less};
use std::fmt::{Display, Write as _};

use plotters::style::RGBColor;

use crate::analysis::offline::atlas::{Along, Refusal, RegChange};
use crate::analysis::offline::kepler::{Answers, Caps, Kernel6, Tiles, Volatile};
use crate::analysis::offline::kepler::{CAP_127, KEPLER_ARCH};
use crate::analysis::offline::{caps_of, occupancy_of, Atlas, Cell, Compiler, Kepler};
use crate::analysis::offline::{Kind, Occ, Resources, Sweeps};
use crate::analysis::stats::{distinct, tally};
use crate::analysis::{self, Finding};
use crate::backend::Toolchain;
use crate::error::Result;
use crate::gemm::driver::Status;
use crate::plot::{Figure, Line, Panel, Style, XAxis};
use crate::results::Measurement;

use super::data::{self, kernel_order, tile_of};
use super::{md, Ctx, Section};

const ATLAS: &str = "Compilers across architectures (offline)";
const KEPLER: &str = "Kepler: the tutorial's claims on sm_35 (NVRTC 11.8, offline)";
const SWEEPS: &str = "Offline sweeps: every point compiled, none run";

const ATLAS_HINT: &str = "`gemmlab atlas` writes them (every tutorial kernel at its published defaults for sm_35 to sm_120 under every cached NVRTC, and NVIDIA OpenCL's PTX assembled by ptxas; see `gemmlab atlas --help`)";
const HINTS_CMD: &str = "gemmlab sweep hints --arch sm_35 --nvrtc 11.8 --kernels 6";
const REGISTERS_CMD: &str = "gemmlab sweep registers --arch sm_35 --nvrtc 11.8 --caps none,255,168,128,127,96,80,64,48,40,32 --kernels 6";
const TILING_CMD: &str = "gemmlab sweep tiling --arch sm_35 --nvrtc 11.8";

/// Distinct colours for up to a dozen kernels (0xRRGGBB).
const KERNEL_RGB: [u32; 12] = [
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22,
    0x17becf, 0x000000, 0xffbb78,
];
/// Compilers' colours: greens for NVRTC (lighter for older), blues for OpenCL's PTX.
const GREENS: [u32; 4] = [0xa6ce39, 0x5aa01e, 0x1e6e14, 0x0a460a];
const BLUES: [u32; 4] = [0x78aae6, 0x1f68b4, 0x143278, 0x5a3ca0];

fn rgb(c: u32) -> RGBColor {
    RGBColor((c >> 16) as u8, (c >> 8) as u8, c as u8)
}

/// A table's column: its header and the cell of a row.
type Col<'f, T> = (&'static str, &'f dyn Fn(&T) -> String);

fn grid<T>(rows: &[T], cols: &[Col<T>]) -> String {
    md::table_of(cols, rows)
}

fn num<T: Display>(v: Option<T>) -> String {
    v.map_or(md::MISSING.into(), |v| v.to_string())
}

/// "126", "96 (+168 B spills)", or the status word ("ptxas refused").
fn regs_text(m: &Measurement) -> String {
    match (data::registers(m), data::spill_bytes(m), &m.status) {
        (Some(r), Some(b), _) if b > 0 => format!("{r} (+{b} B spills)"),
        (Some(r), ..) => r.to_string(),
        (None, _, Status::CompileError(_)) if m.toolchain == Toolchain::OpenCl => {
            "ptxas refused".into()
        }
        (None, _, s) => s.label().to_string(),
    }
}

/// A table's occupancy: the architecture's, else the recorded one.
fn occ_cell(o: Option<Occ>, m: &Measurement) -> String {
    o.map_or_else(|| md::occupancy(Some(m)), |o| o.0.describe())
}

/// "96", "96 (above cap)" where ptxas went over the cap asked.
fn capped(regs: String, cap: Option<u32>, m: &Measurement) -> String {
    match (cap, data::registers(m)) {
        (Some(cap), Some(u)) if u > cap => format!("{regs} (above cap)"),
        _ => regs,
    }
}

fn spill_words(b: Option<u64>) -> String {
    match b {
        Some(0) => "no spills".into(),
        Some(b) => format!("{b} B of spills"),
        None => "spills unknown".into(),
    }
}

fn of_experiment(exp: &str) -> &str {
    match exp {
        "atlas" => "the atlas",
        "hints" => "the hints sweep's baseline",
        "registers" => "the register sweep's uncapped point",
        "tiling" => "the tiling sweep",
        other => other,
    }
}

fn point_name(m: &Measurement) -> String {
    m.label.clone().unwrap_or_else(|| m.hints.describe(true))
}

fn pct(o: Option<Occ>) -> String {
    md::pct(o.map(|o| o.0.fraction))
}

/// "53 more" (a above b), "3 fewer", or `same`: the words by `[above, below, same]`.
fn than(a: u32, b: u32, w: [&str; 3]) -> String {
    match a.cmp(&b) {
        Greater => format!("{} {}", a - b, w[0]),
        Less => format!("{} {}", b - a, w[1]),
        Equal => w[2].to_string(),
    }
}

fn kind(f: &Option<Finding>) -> Option<&Kind> {
    match &f.as_ref()?.kind {
        analysis::Kind::Offline(k) => Some(k),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Kepler

pub(crate) fn kepler(a: Option<&Kepler>) -> Section {
    let Some(a) = a else {
        return Section::default();
    };
    let [n, atlas, regs, hints, tiling] = a.rows;
    let k6 = match kind(&a.kernel6) {
        Some(Kind::Kernel6(k)) => kernel6(k).0,
        _ => format!("No row of kernel 6 at its published defaults for {KEPLER_ARCH} with NVRTC 11.8 here. `{HINTS_CMD}` produces one (its baseline), and so does the atlas: {ATLAS_HINT}."),
    };
    let not_swept = |sweep: &str, swept: bool, there: &str, what: &str, cmd: &str| {
        let lacks = match swept {
            true => "lacks".to_string(),
            false => format!("is not in these results, so there {there} no"),
        };
        format!("The {sweep} sweep for {KEPLER_ARCH} with NVRTC 11.8 {lacks} {what}: `{cmd}` produces them.\n\n")
    };
    let point = "kernel 6's baseline and its `VOLATILE_IDX=1` point";
    let volatile = table_or(
        a.volatile_rows.as_deref(),
        not_swept("hints", a.hints_swept, "is", point, HINTS_CMD),
        "The tutorial made kernel 6's index variable `volatile` to stop the compiler hoisting index arithmetic into registers. Every point of kernel 6's hints sweep, one switch at a time against the published kernel:",
        &[
            ("point", &|&(m, ..)| point_name(m)),
            ("hints", &|&(m, ..)| m.hints.describe(true)),
            ("registers", &|&(m, ..)| md::registers(Some(m))),
            ("change", &|&(_, c, _)| num(c.map(|c| format!("{c:+}")))),
            ("spill st/ld B", &|&(m, ..)| md::spills(Some(m))),
            ("occupancy", &|&(m, _, o)| occ_cell(o, m)),
        ],
    );
    let caps = table_or(
        Some(&a.caps[..]).filter(|c| !c.is_empty()),
        format!("No register sweep of kernel 6 for {KEPLER_ARCH} with NVRTC 11.8 in these results: `{REGISTERS_CMD}` produces it.\n\n"),
        "Kernel 6, published, with each cap of the sweep (`--maxrregcount`):",
        &[
            ("cap asked", &|&(c, ..)| md::cap_label(c)),
            ("registers", &|&(c, m, _)| capped(md::registers(Some(m)), c, m)),
            ("spill st/ld B", &|&(_, m, _)| md::spills(Some(m))),
            ("stack B", &|&(_, m, _)| md::stack(Some(m))),
            ("occupancy", &|&(_, m, o)| occ_cell(o, m)),
        ],
    );
    let tile = "kernel 11's 8x4 and 4x4 tiles";
    let tiles = table_or(
        a.tiles.as_deref(),
        not_swept("tiling", a.tiling_swept, "are", tile, TILING_CMD),
        "On the K40 the tutorial's clBlas-style 8x4 tile ran well in OpenCL but at about 300 GFLOPS in CUDA; a 4x4 tile relieved the CUDA compiler's register pressure. **Speed cannot be measured offline**; what the compiler does with each tile can:",
        &[
            ("RX", &|&(m, _)| num(tile_of(m).map(|t| t.0))),
            ("RY", &|&(m, _)| num(tile_of(m).map(|t| t.1))),
            ("RK", &|&(m, _)| num(data::config_value(m, "RK"))),
            ("registers", &|&(m, _)| md::registers(Some(m))),
            ("spill st/ld B", &|&(m, _)| md::spills(Some(m))),
            ("occupancy", &|&(m, o)| occ_cell(o, m)),
        ],
    );
    let answers = match kind(&a.compilers) {
        Some(Kind::Compilers { answers }) => Some(&answers[..]),
        _ => None,
    };
    let cap = |a: &Answers| {
        let cell = |(r, b)| format!("{} ({} B spilled)", md::or_unknown(r), md::or_unknown(b));
        a.cap127.map_or(md::MISSING.into(), cell)
    };
    // One row per compiler with rows for sm_35.
    let per_compiler = table_or(
        answers,
        String::new(),
        &format!("### The same questions, per compiler\n\nRegisters per thread on {KEPLER_ARCH} from NVRTC 11.8 and from other front ends' PTX through ptxas 11.8 (clang's from `--backends clang-cuda|clang-opencl --arch {KEPLER_ARCH}`, NVIDIA OpenCL's from the atlas); \"-\": not compiled by that compiler."),
        &[
            ("compiler", &|a| a.compiler.clone()),
            ("kernel 6", &|a| num(a.kernel6)),
            ("VOLATILE_IDX=1", &|a| num(a.volatile)),
            ("cap 127", &cap),
            ("highest cap that spills", &|a| num(a.first_spill)),
            ("kernel 11 8x4", &|a| num(a.tiles.0)),
            ("4x4", &|a| num(a.tiles.1)),
        ],
    );
    let s = format!(
        "## {KEPLER}\n\nThe tutorial tuned its kernels on a Tesla K40 (compute capability 3.5), which NVRTC 11.8 is the last to compile for. \
         From the {n} rows compiled offline for {KEPLER_ARCH} with NVRTC 11.8 ({atlas} from the atlas, {regs} from the register sweep, {hints} from the hints sweep, {tiling} from the tiling sweep): \
         registers, spills and occupancy are real; **nothing was run, so no claim about speed can be checked here.**\n\n\
         ### Kernel 6: registers against the lower bound of 73 and the limit of 128\n\n{k6}\n\n\
         ### What `VOLATILE_IDX=1` does (hints sweep)\n\n{volatile}\
         ### Register caps: what 127 does, and every cap of the register sweep\n\n{caps}\
         ### Kernel 11: the 8x4 tile against 4x4 (tiling sweep)\n\n{tiles}{per_compiler}"
    );
    Section::of(KEPLER, s, &a.findings())
}

/// `intro` and the table of `rows`, or `missing` without rows.
fn table_or<T>(rows: Option<&[T]>, missing: String, intro: &str, cols: &[Col<T>]) -> String {
    rows.map_or(missing, |rows| format!("{intro}\n\n{}\n", grid(rows, cols)))
}

fn compilers_words(answers: &[Answers]) -> (String, String) {
    let list = |f: &dyn Fn(&Answers) -> Option<String>| {
        let parts: Vec<String> = (answers.iter())
            .filter_map(|a| Some(format!("{} ({})", f(a)?, a.compiler)))
            .collect();
        md::join_and(&parts)
    };
    let kernel6 = list(&|a| a.kernel6.map(|r| r.to_string()));
    let cap = list(&|a| {
        let (r, b) = a.cap127?;
        let spills = match b {
            Some(0) => "without spills".to_string(),
            b => format!("spilling {} B", md::or_unknown(b)),
        };
        Some(format!("{} registers {spills}", md::or_unknown(r)))
    });
    let tiles = list(&|a| Some(format!("{} against {}", a.tiles.0?, a.tiles.1?)));
    let mut text =
        format!("**Kepler's questions, per compiler**: kernel 6's registers are {kernel6}.");
    if !cap.is_empty() {
        let _ = write!(text, " Under a cap of {CAP_127}: {cap}.");
    }
    if !tiles.is_empty() {
        let tiles = format!("Kernel 11's 8x4 tile against its 4x4, in registers: {tiles}");
        let _ = write!(text, " {tiles}.");
    }
    let short = format!("On {KEPLER_ARCH}, kernel 6's registers are {kernel6}.");
    (text, short)
}

/// Kernel 6's paragraph and the summary's sentence.
fn kernel6(k: &Kernel6) -> (String, String) {
    let (regs, lb, others) = (k.registers, k.lower_bound, &k.others);
    let config = Some(k.config.as_str()).filter(|c| !c.is_empty());
    let config = config.unwrap_or("published defaults");
    let threads = (k.threads).map_or(String::new(), |t| format!(": {t} threads per work-group"));
    let (from, shared) = (of_experiment(&k.source), md::or_unknown(k.shared));
    let spills = md::or_unknown(k.spills);
    let mut t = format!("Kernel 6 ({config}{threads}) takes **{regs} registers** per thread on {KEPLER_ARCH} with NVRTC 11.8 (from {from}; {shared} B of shared memory, {spills} B of spills). ");
    if !others.is_empty() && others.iter().all(|(r, _)| *r == regs) {
        let names: Vec<String> = others.iter().map(|o| of_experiment(&o.1).into()).collect();
        let give = md::verb(names.len(), "gives", "give");
        let _ = write!(t, "{} {give} the same {regs}. ", md::join_and(&names));
    } else if !others.is_empty() {
        let each: Vec<String> = (others.iter())
            .map(|(r, e)| format!("{r} in {}", of_experiment(e)))
            .collect();
        let each = md::join_and(&each);
        let _ = write!(t, "Other rows of the published kernel differ: {each}. ");
    }
    let than_lb = than(regs, lb, ["more", "fewer", "exactly it"]);
    let times = md::times(Some(f64::from(regs) / f64::from(lb)));
    t += &format!("Against the tutorial's lower bound of {lb}: {than_lb} ({times}). ");
    let side = if regs >= lb { "above" } else { "below" };
    let mut short = format!("On {KEPLER_ARCH} with NVRTC 11.8, kernel 6 takes {regs} registers, {side} the tutorial's lower bound of {lb}");
    if let Some(f) = &k.fit {
        let (threads, per_sm, unit) = (f.threads, f.registers_per_sm, f.register_unit);
        if let Some(two) = f.two {
            let words = [
                "over it, so only one work-group fits",
                "under it",
                "exactly at it",
            ];
            let at = than(regs, two, words);
            let _ = write!(t, "Against the limit for two {threads}-thread work-groups per SM: compute capability 3.5 has {per_sm} registers per SM, so two work-groups fit with at most **{two}** registers per thread ({per_sm} / (2 x {threads}), allocated per warp in units of {unit}); {regs} is {at}. ");
            let within = if regs <= two { "within" } else { "over" };
            let fit = format!("the {two} that fit two {threads}-thread work-groups per SM");
            let _ = write!(short, " and {within} {fit}");
        }
        if let Some(o) = f.occupancy {
            let _ = write!(t, "Occupancy that follows: **{}**.", o.0.describe());
            let _ = write!(short, " (occupancy {})", pct(Some(o)));
            if let Some(three) = f.three {
                let (sh, per_sm) = (k.shared.unwrap_or(0), f.shared_per_sm);
                let smem = format!(
                    ", and its shared memory would not fit anyway (3 x {sh} B > {per_sm} B per SM)"
                );
                let smem = if f.third_shared_fits { "" } else { &smem };
                let _ = write!(
                    t,
                    " A third work-group would need at most {three} registers per thread{smem}."
                );
            }
        }
    }
    (t.trim().to_string(), format!("{short}."))
}

fn volatile_words(v: &Volatile) -> (String, String) {
    let (before, after, (o0, o1)) = (v.before, v.after, v.occupancy);
    let d = i64::from(after) - i64::from(before);
    let verb = match after.cmp(&before) {
        Less => format!("takes kernel 6 from {before} to {after} registers ({d:+})"),
        Greater => format!("raises kernel 6 from {before} to {after} registers ({d:+})"),
        Equal => format!("leaves kernel 6 at {before} registers"),
    };
    let (p0, p1) = (pct(o0), pct(o1));
    let blocks = |o: Option<Occ>| o.map(|o| o.0.blocks_per_sm);
    let occ = match (blocks(o0), blocks(o1)) {
        (Some(b0), Some(b1)) if b0 == b1 => {
            let n = md::plural(b1 as usize, "work-group");
            format!("occupancy stays {p1} ({n} per SM)")
        }
        (Some(b0), Some(b1)) => format!("occupancy {p0} -> {p1} ({b0} -> {b1} work-groups per SM)"),
        _ => "occupancy unknown".to_string(),
    };
    let what = format!("{verb}, with {}; {occ}.", spill_words(v.spills));
    let mut text = format!("**`VOLATILE_IDX=1` on {KEPLER_ARCH} (NVRTC 11.8)**: it {what}");
    if !v.others.is_empty() {
        let each: Vec<String> = (v.others.iter())
            .map(|(k, b, v)| format!("{k} {b} -> {v}"))
            .collect();
        let each = each.join(", ");
        let _ = write!(text, " On the other kernels that have the switch: {each}.");
    }
    let short = format!("On {KEPLER_ARCH} with NVRTC 11.8, `VOLATILE_IDX=1` {what}");
    (text, short)
}

fn caps_words(c: &Caps) -> (String, String) {
    let spill_text = match c.first_spill {
        Some((cap, b, r)) => {
            let r = md::or_unknown(r);
            format!("spills start at cap {cap} ({b} B stores + loads, {r} registers)")
        }
        None => format!("no cap down to {} spills", md::cap_label(c.lowest_cap)),
    };
    let head = format!("**Register caps on kernel 6, {KEPLER_ARCH} (NVRTC 11.8)**");
    let Some(at) = &c.at else {
        let text = format!(
            "{head}: the sweep has no cap of 127; {spill_text}. `{REGISTERS_CMD}` adds it."
        );
        return (text.clone(), text);
    };
    let uncapped =
        (at.uncapped).map_or("no uncapped point".into(), |u| format!("{u} without a cap"));
    let occ = match (at.occupancy, at.uncapped_occupancy) {
        (Some(x), Some(y)) if x.0.blocks_per_sm == y.0.blocks_per_sm => {
            format!("{} as without a cap", pct(Some(x)))
        }
        (Some(x), Some(y)) => format!("{} against {} without a cap", pct(Some(x)), pct(Some(y))),
        (Some(x), None) => pct(Some(x)),
        _ => md::UNKNOWN.to_string(),
    };
    let (regs, spills) = (md::or_unknown(at.registers), spill_words(at.spills));
    let what =
        format!("a cap of 127 gives {regs} registers ({uncapped}), {spills}, occupancy {occ}");
    let mut text = format!("{head}: {what}; {spill_text}.");
    let moved: Vec<String> = (at.moved.iter())
        .map(|(c, r)| format!("cap {c} -> {r}"))
        .collect();
    if !moved.is_empty() {
        let (u, moved) = (at.uncapped.unwrap_or(0), moved.join(", "));
        let _ = write!(text, " Caps above the {u} registers it takes without one still change the allocation: {moved}.");
    }
    let short = format!("On {KEPLER_ARCH} with NVRTC 11.8, {what} for kernel 6; {spill_text}.");
    (text, short)
}

fn tiles_words(t: &Tiles) -> (String, String) {
    let describe = |r: &Resources| {
        let occ = r.occupancy.map(|o| o.0.describe());
        let occ = occ.unwrap_or_else(|| md::pct_or_unknown(r.recorded_occupancy));
        let (regs, spills) = (md::or_unknown(r.registers), spill_words(r.spills));
        format!("{regs} registers, {spills}, occupancy {occ}")
    };
    let (wide, square) = (describe(&t.wide), describe(&t.square));
    let opencl = t.opencl.as_ref().map_or(String::new(), |(name, o)| {
        let (ptxas, o) = (name.trim_start_matches("OpenCL PTX + "), describe(o));
        format!(
            " OpenCL's 8x4 (its PTX assembled by {ptxas} for {KEPLER_ARCH}, from the atlas): {o}."
        )
    });
    let text = format!("**Kernel 11's tiles on {KEPLER_ARCH} (NVRTC 11.8)**: 8x4 {wide}; 4x4 {square}.{opencl} Whether 8x4 is slow in CUDA on Kepler needs a Kepler GPU to time: nothing here was run.");
    let (r84, o84) = (md::or_unknown(t.wide.registers), pct(t.wide.occupancy));
    let (r44, o44) = (md::or_unknown(t.square.registers), pct(t.square.occupancy));
    let short = format!("On {KEPLER_ARCH} with NVRTC 11.8, kernel 11's 8x4 tile takes {r84} registers ({o84} occupancy) and 4x4 {r44} ({o44}); speed needs a Kepler GPU.");
    (text, short)
}

// ---------------------------------------------------------------------------
// Compilers across architectures

fn along_words(a: &Along) -> String {
    let (c, (a0, r0), (a1, r1)) = (&a.compiler, &a.first, &a.last);
    let mut p = match a.archs {
        1 => format!("{c} gives {r0} registers on {a0}"),
        _ => format!("{c} gives {r0} registers on {a0} and {r1} on {a1}"),
    };
    if let Some((lo, hi)) = a.range {
        let _ = write!(p, " ({lo} to {hi} over {} architectures)", a.archs);
    }
    p
}

fn change(c: &RegChange) -> String {
    md::change(Some(c.to_registers.into()), Some(c.from_registers.into()))
}

fn quote_first_line(r: &str) -> String {
    format!("\"{}\"", md::escape(&md::short_reason(r)))
}

/// A refusal's reason: quoted in full, or short for the summary.
fn refusal_reason(r: &Refusal, full: bool) -> String {
    match (&r.reason, full) {
        (None, _) => r.status.clone(),
        (Some(x), true) => quote_first_line(x),
        (Some(x), false) => md::short_reason(x).trim_end_matches('.').to_string(),
    }
}

/// A finding's text and the summary's sentence.
pub(crate) fn words(k: &Kind) -> super::Words {
    let (text, short) = match k {
        Kind::Kernel6(k) => {
            let (body, short) = kernel6(k);
            let text = format!("**Kernel 6 on {KEPLER_ARCH} (NVRTC 11.8)**: {body}");
            (text, short)
        }
        Kind::Volatile(v) => volatile_words(v),
        Kind::Caps(c) => caps_words(c),
        Kind::Tiles(t) => tiles_words(t),
        Kind::Compilers { answers } => compilers_words(answers),
        Kind::KernelAcross { kernel, compilers, spills } => {
            let parts: Vec<String> = compilers.iter().map(along_words).collect();
            let spill = match spills.is_empty() {
                true => "no spills with any compiler".to_string(),
                false => {
                    let each = spills.iter().map(|s| format!("{} B on {} with {}", s.bytes, s.arch, s.compiler));
                    format!("spills: {}", each.collect::<Vec<_>>().join(", "))
                }
            };
            let text = format!("**{kernel} across architectures** (published defaults, offline): {}; {spill}.", parts.join("; "));
            (text.clone(), text)
        }
        Kind::Generations { pairs, largest: None, .. } => (
            format!("**NVRTC generations on the same architecture**: all {pairs} pairs of consecutive NVRTC versions give the same registers."),
            format!("Consecutive NVRTC versions give the same registers in all {pairs} (kernel, architecture) pairs the atlas has."),
        ),
        Kind::Generations { pairs, differ, largest: Some(c) } => {
            let RegChange { kernel: k, arch: a, from, to, from_registers: r0, to_registers: r1 } = c;
            let what = format!("{k} on {a}, {r0} registers with {from} and {r1} with {to} ({})", change(c));
            (
                format!("**Largest change between NVRTC generations on the same architecture**: {what}. Consecutive NVRTC versions give different registers in {differ} of {pairs} (kernel, architecture) pairs."),
                format!("The largest register change between NVRTC generations on one architecture: {what}."),
            )
        }
        Kind::ArchSpread { kernel: k, compiler: c, low: (a0, r0), high: (a1, r1), spread } => (
            format!("**Largest spread across architectures with one compiler**: {k} with {c}, from {r0} registers on {a0} to {r1} on {a1} ({}): the same source and compiler, a different back end per architecture.", md::change(Some(1.0 + spread), Some(1.0))),
            format!("With one compiler the same kernel's registers vary most for {k} with {c}: {r0} on {a0} to {r1} on {a1}."),
        ),
        Kind::FrontEnd { fewer, more, same, largest } => {
            let total = fewer + more + same;
            let counts = format!("OpenCL's PTX needs fewer registers than NVRTC's in {fewer}, more in {more} and the same in {same} of {total} (kernel, architecture) pairs");
            let head = "**OpenCL's front end against NVRTC, same CUDA release, same architecture**";
            match largest {
                None => (
                    format!("{head}: {counts}."),
                    format!("Assembled by the same CUDA release's ptxas, OpenCL's PTX and NVRTC give the same registers in all {total} (kernel, architecture) pairs."),
                ),
                Some(c) => {
                    let RegChange { kernel: k, arch: a, from, to, from_registers: r0, to_registers: r1 } = c;
                    (
                        format!("{head}: {counts}. The largest difference: {k} on {a}, {from} {r0} registers, {to} {r1} ({}).", change(c)),
                        format!("Through the same release's ptxas, OpenCL's PTX differs most from NVRTC's for {k} on {a}: {r1} registers against {r0} with {from}."),
                    )
                }
            }
        }
        Kind::Spills { archs, compilers, with_report, spilling, worst } => match worst.map(|w| &spilling[w]) {
            None => {
                let none = format!("No kernel spills at its published defaults on any of {archs} architectures with any of {compilers} compilers ({with_report} rows with a ptxas report).");
                (format!("**Where spills appear**: nowhere. {none}"), none)
            }
            Some(w) => {
                let each = spilling.iter().map(|s| format!("{} on {} with {} ({} registers, {} B)", s.kernel, s.arch, s.compiler, md::or_unknown(s.registers), s.bytes));
                let n = spilling.len();
                (
                    format!("**Where spills appear** ({n} of {with_report} rows): {}.", each.collect::<Vec<_>>().join("; ")),
                    format!("{n} of {with_report} atlas rows spill at the published defaults, most {} on {} with {} ({} B).", w.kernel, w.arch, w.compiler, w.bytes),
                )
            }
        },
        Kind::Refused { refused, of, by } => {
            let parts: Vec<String> = (by.iter())
                .map(|r| format!("{} built {} of {} (on {}); e.g. {} for {}: {}", r.compiler, r.built, r.total, r.archs.join(", "), r.kernel, r.arch, refusal_reason(r, true)))
                .collect();
            let f = &by[0];
            (
                format!("**Rows the compiler refused** ({refused} of {of}): {}.", parts.join("; ")),
                format!("{} refused {} of the atlas's rows, e.g. {} for {}: {}.", f.compiler, f.total - f.built, f.kernel, f.arch, refusal_reason(f, false)),
            )
        }
    };
    super::Words { text, short }
}

pub(crate) fn atlas(ctx: &mut Ctx, a: Option<&Atlas>) -> Result<Section> {
    let Some(a) = a else {
        return Ok(Section::default());
    };
    let mut s = format!("## {ATLAS}\n\n");
    if a.rows == 0 {
        let _ = writeln!(s, "No atlas rows (experiment \"atlas\") in these results: {ATLAS_HINT}. The offline rows here come from sweeps: see \"{SWEEPS}\" and \"{KEPLER}\".\n");
        return Ok(Section::of(ATLAS, s, &[]));
    }
    let spans: Vec<String> = (a.compilers.iter())
        .map(|c| match a.covered(c).as_slice() {
            [] => format!("{}: none", c.name),
            [one] => format!("{}: {one}", c.name),
            all @ [first, .., last] => {
                format!("{}: {first} to {last}, {} architectures", c.name, all.len())
            }
        })
        .collect();
    let (rows, nk, spans) = (a.rows, a.kernels.len(), spans.join("; "));
    let (kernels, their) = (md::plural(nk, "kernel"), md::verb(nk, "its", "their"));
    let archs = md::plural(a.archs.len(), "architecture");
    let compilers = md::plural(a.compilers.len(), "compiler");
    let _ = writeln!(s, "{rows} rows of `gemmlab atlas`: {kernels} at {their} published defaults, compiled for {archs} by {compilers} ({spans}). Registers, spills and stack as ptxas reported them, occupancy by the architecture's rules: **nothing was run, checked or timed.** \"-\": that compiler does not target that architecture.\n");
    s += &left_out(a.lost, "atlas row");
    s += &opencl_origin(&a.cells, &a.compilers);
    overview(ctx, &mut s, a)?;
    for k in &a.kernels {
        per_kernel(ctx, &mut s, a, k)?;
    }
    Ok(Section::of(ATLAS, s, &a.findings))
}

fn left_out(lost: usize, what: &str) -> String {
    if lost == 0 {
        return String::new();
    }
    let (n, them) = (md::plural(lost, what), md::verb(lost, "it", "them"));
    let are = md::verb(lost, "is", "are");
    format!("{n} {are} left out: no architecture or compiler could be read from {them}.\n\n")
}

/// Where OpenCL's PTX came from and, per OpenCL compiler, each change made to
/// it (".target sm_90", ".version 9.0 -> 7.8") with how many rows had it.
fn opencl_origin(cells: &[Cell], comps: &[Compiler]) -> String {
    let opencl = cells.iter().filter(|c| c.compiler.opencl);
    let notes = opencl.flat_map(|c| &c.m.build_notes);
    // One origin per run and driver, not per kernel listing.
    let origins = distinct(notes.filter_map(|n| n.strip_prefix("PTX from ")).map(|o| {
        let short = o.split_whitespace().next().unwrap_or(o);
        let driver = o.find('(').map_or("", |i| &o[i..]);
        format!("{short} {driver}").trim().to_string()
    }));
    let changes = |c: &Cell| {
        distinct(c.m.build_notes.iter().map(|n| n.trim()).filter_map(|n| {
            let Some(rest) = n.strip_prefix(".target ") else {
                return n.starts_with(".version ").then(|| n.to_string());
            };
            let arch = rest.split("->").next()?.trim();
            Some(format!(".target {arch} -> the architecture"))
        }))
    };
    let mut s = String::new();
    for comp in comps.iter().filter(|c| c.opencl) {
        let rows: Vec<&Cell> = cells.iter().filter(|x| x.compiler == *comp).collect();
        let what: Vec<String> = (tally(rows.iter().flat_map(|c| changes(c))).into_iter())
            .map(|(k, n)| format!("`{k}` ({n} of {} rows)", rows.len()))
            .collect();
        let what = match what.join(", ") {
            w if w.is_empty() => "used as captured (no change noted)".to_string(),
            w => w,
        };
        let _ = writeln!(s, "- {}: {what}", comp.name);
    }
    if s.is_empty() {
        return s;
    }
    let from = match origins.join("; ") {
        o if o.is_empty() => o,
        o => format!(", captured on a GPU ({o})"),
    };
    format!("The OpenCL rows are NVIDIA OpenCL's PTX{from} (its compiler needs its device), assembled offline by a CUDA release's ptxas for each architecture. How the PTX was adapted:\n\n{s}\n")
}

/// A table whose first column labels each row.
fn labelled<R>(first: &str, head: impl Iterator<Item = String>, rows: R) -> String
where
    R: Iterator<Item = (String, Vec<String>)>,
{
    let header: Vec<String> = std::iter::once(first.to_string()).chain(head).collect();
    let rows: Vec<Vec<String>> = rows.map(|(l, r)| [vec![l], r].concat()).collect();
    md::table(&header, &rows)
}

/// A chart's line through the atlas's architectures (x: their index).
fn line(style: Style, ys: impl Iterator<Item = Option<f64>>) -> Line {
    let points = ys.enumerate().map(|(i, y)| (i as f64, y)).collect();
    Line { style, points }
}

/// Writes the figure `offline-<name>` of panels (title, y label, lines) side by
/// side against the atlas's architectures, its legend from the first; returns its Markdown.
fn arch_chart(
    ctx: &mut Ctx,
    a: &Atlas,
    title: String,
    panels: Vec<(&str, &str, Vec<Line>)>,
    size: (u32, u32),
    name: &str,
    alt: &str,
) -> Result<String> {
    let panels: Vec<Panel> = (panels.into_iter())
        .map(|(title, y, lines)| Panel {
            integer_y: true,
            lines,
            ..Panel::new(title, XAxis::Categories(a.archs.clone()), "architecture", y)
        })
        .collect();
    let fig = Figure {
        title,
        legend: panels[0].lines.iter().map(|l| l.style.clone()).collect(),
        cols: panels.len(),
        panels,
        panel_w: size.0,
        panel_h: size.1,
    };
    ctx.chart(&fig, &format!("offline-{name}"), alt)
}

/// Each kernel with the newest NVRTC for each architecture: a table and a chart.
fn overview(ctx: &mut Ctx, s: &mut String, a: &Atlas) -> Result<()> {
    let newest: Vec<(&String, Option<&Compiler>)> = (a.archs.iter())
        .map(|arch| {
            let has = |c: &&Compiler| c.is_nvrtc() && a.covered(c).contains(&arch.as_str());
            let newest = (a.compilers.iter().filter(has)).max_by_key(|c| c.version.clone());
            (arch, newest)
        })
        .collect();
    let head = newest.iter().map(|(arch, c)| match c {
        Some(c) => format!("{arch} ({})", c.name.trim_start_matches("NVRTC ")),
        None => arch.to_string(),
    });
    let cells = |k: &String| -> Vec<Option<&Cell>> {
        (newest.iter())
            .map(|(arch, c)| c.and_then(|c| a.find(k, arch, c)))
            .collect()
    };
    let text = |c: Option<&Cell>| c.map_or(md::MISSING.into(), |c| regs_text(c.m));
    let rows = (a.kernels.iter()).map(|k| (k.clone(), cells(k).into_iter().map(text).collect()));
    let table = labelled("kernel", head, rows);
    let series = (a.kernels.iter().enumerate())
        .map(|(i, k)| {
            let ys = cells(k).into_iter();
            let ys = ys.map(|c| c.and_then(|c| data::registers(c.m)).map(f64::from));
            let style = Style::new(k.clone(), rgb(KERNEL_RGB[i % KERNEL_RGB.len()]));
            line(style.line(), ys)
        })
        .collect();
    let _ = writeln!(s, "### Overview: every kernel with the newest NVRTC for each architecture\n\nRegisters per thread (spill bytes where ptxas spilled); the column names the NVRTC used.\n\n{table}");
    let title = "Registers of every kernel, newest NVRTC per architecture (offline)".to_string();
    let size = ((70 * a.archs.len() as u32).clamp(800, 1300), 480);
    let alt = "registers of every kernel against architecture, newest NVRTC for each";
    let panels = vec![("", "registers per thread", series)];
    *s += &arch_chart(ctx, a, title, panels, size, "overview", alt)?;
    Ok(())
}

/// "126 / 0 / 25.0%": registers / spill bytes / occupancy (the recorded one,
/// else the architecture's); the status word where the row has no report.
fn cell_text(c: &Cell) -> String {
    let Some(r) = c.m.resources.as_ref().and(data::registers(c.m)) else {
        return regs_text(c.m);
    };
    let occ = (c.m.occupancy.filter(|o| o.is_finite()))
        .or_else(|| occupancy_of(c.m, &c.arch).map(|o| o.0.fraction))
        .filter(|f| f.is_finite());
    let spills = md::or_unknown(data::spill_bytes(c.m));
    format!("{r} / {spills} / {}", md::pct(occ))
}

/// One kernel: registers (and spills, where any) per architecture and compiler.
fn per_kernel(ctx: &mut Ctx, s: &mut String, a: &Atlas, k: &str) -> Result<()> {
    let comps: Vec<&Compiler> = (a.compilers.iter())
        .filter(|c| a.cells.iter().any(|x| x.m.kernel == k && x.compiler == **c))
        .collect();
    let any_spill =
        (a.cells.iter()).any(|c| c.m.kernel == k && data::spill_bytes(c.m).is_some_and(|b| b > 0));
    let series = |f: fn(&Measurement) -> Option<f64>| -> Vec<Line> {
        (comps.iter())
            .map(|c| {
                let mut same = a.compilers.iter().filter(|x| x.opencl == c.opencl);
                let i = same.position(|x| x == *c).unwrap_or(0).min(3);
                let color = rgb(if c.opencl { BLUES[i] } else { GREENS[i] });
                let st = Style::new(c.name.clone(), color).line();
                let st = if c.opencl { st.dashed() } else { st };
                let ys = (a.archs.iter()).map(|arch| a.find(k, arch, c).and_then(|x| f(x.m)));
                line(st, ys)
            })
            .collect()
    };
    let registers = series(|m| data::registers(m).map(f64::from));
    let mut panels = vec![("registers per thread", "registers", registers)];
    let title = match any_spill {
        true => "registers and spills per architecture and compiler (offline)",
        false => "registers per architecture and compiler (offline; no spills anywhere)",
    };
    if any_spill {
        let bytes = series(|m| data::spill_bytes(m).map(|b| b as f64));
        panels.push(("spill bytes (stores + loads)", "bytes", bytes));
    }
    let (title, size) = (format!("{k}: {title}"), if any_spill { 640 } else { 900 });
    let alt = format!("{k}: registers against architecture, one line per compiler");
    let chart = arch_chart(ctx, a, title, panels, (size, 420), k, &alt)?;
    let mut why = String::new();
    let rows: Vec<(String, Vec<String>)> = (a.archs.iter())
        .map(|arch| {
            let cells = comps.iter().map(|c| {
                let cell = a.find(k, arch, c);
                let reason = cell.filter(|x| x.m.resources.is_none());
                if let Some(r) = reason.and_then(|x| x.m.status.reason()) {
                    let _ = writeln!(why, "- {arch}, {}: {}", c.name, quote_first_line(r));
                }
                cell.map_or(md::MISSING.into(), cell_text)
            });
            (arch.clone(), cells.collect())
        })
        .collect();
    let head = comps.iter().map(|c| c.name.clone());
    let table = labelled("architecture", head, rows.into_iter());
    let why = match why.is_empty() {
        true => why,
        false => format!("\nWhy some cells have no registers:\n\n{why}"),
    };
    let cells = "Cells: registers / spill bytes (stores + loads) / occupancy.";
    let _ = writeln!(s, "### {k}\n\n{chart}{cells}\n\n{table}{why}");
    Ok(())
}

// ---------------------------------------------------------------------------
// Offline sweeps

pub(crate) fn sweeps(a: Option<&Sweeps>) -> Section {
    let Some(a) = a else {
        return Section::default();
    };
    let lost = left_out(a.lost, "offline row");
    let mut s = format!("## {SWEEPS}\n\nEvery point of the sweeps run with `--arch` (compiled with NVRTC for an architecture, no device): registers, spills and occupancy; nothing was run, checked or timed.\n\n{lost}");
    for (exp, arch, comp, g) in &a.groups {
        let mut ms: Vec<&Measurement> = g.iter().map(|c| c.m).collect();
        let table = match exp.as_str() {
            "registers" => register_grid(&ms),
            _ => {
                ms.sort_by(|a, b| kernel_order(&a.kernel, &b.kernel));
                grid(
                    &ms,
                    &[
                        ("kernel", &|&m| m.kernel.clone()),
                        ("point", &|&m| point_name(m)),
                        ("registers", &|&m| match m.resources {
                            Some(_) => md::registers(Some(m)),
                            None => regs_text(m),
                        }),
                        ("spill st/ld B", &|&m| md::spills(Some(m))),
                        ("stack B", &|&m| md::stack(Some(m))),
                        ("shared B", &|&m| md::shared(Some(m))),
                        ("occupancy", &|&m| occ_cell(occupancy_of(m, arch), m)),
                    ],
                )
            }
        };
        let _ = writeln!(s, "### {exp} sweep, {arch}, {}\n\n{table}", comp.name);
    }
    Section::of(SWEEPS, s, &[])
}

/// Rows: kernel (with its switches), columns: caps, uncapped first.
fn register_grid(g: &[&Measurement]) -> String {
    let caps = caps_of(g.iter().copied());
    let key = |m: &Measurement| (m.kernel.clone(), m.hints.describe(false));
    let mut series = distinct(g.iter().copied().map(key));
    series.sort_by(|a, b| kernel_order(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    let rows = (series.iter()).map(|ks| {
        let name = match ks {
            (k, sw) if sw == "published" => k.clone(),
            (k, sw) => format!("{k} ({sw})"),
        };
        let at = |cap| (g.iter()).find(|m| key(m) == *ks && data::register_cap(m) == cap);
        let cell = |&cap| at(cap).map_or(md::MISSING.into(), |m| capped(regs_text(m), cap, m));
        (name, caps.iter().map(cell).collect())
    });
    let head = caps.iter().map(|c| format!("cap {}", md::cap_label(*c)));
    let table = labelled("kernel", head, rows);
    format!("Registers per thread at each cap asked (`--maxrregcount`), spill bytes (stores + loads) where ptxas spilled.\n\n{table}")
}
