//! "Where the rest goes": Nsight Compute's view of the SIMT family's launches
//! and cuBLAS's, and the fraction of the FP32 peak those numbers account for.

use std::fmt::Write as _;

use crate::analysis::simt::*;
use crate::analysis::stats::distinct;
use crate::backend::Toolchain;
use crate::results::ncu::*;
use crate::results::reading::LANES_ONE_FFMA_PER_CYCLE;

use super::{data, md, Words};

/// A profile's name: "CUDA", "OpenCL PTX via CUDA JIT", or "cuBLAS".
fn name(t: Toolchain, family: bool) -> &'static str {
    match (family, t) {
        (false, _) => "cuBLAS",
        (_, Toolchain::OpenCl) => "OpenCL PTX via CUDA JIT",
        (_, t) => data::toolchain_name(t),
    }
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or(md::UNKNOWN.into(), |v| format!("{v:.digits$}"))
}

fn ms(l: &NcuLaunch) -> String {
    (l.seconds(TIME)).map_or(md::UNKNOWN.into(), |t| format!("{:.3} ms", t * 1e3))
}

fn pct(v: f64) -> String {
    md::pct(Some(v))
}

/// Which of issue-slot use and the FFMA share loses more of the peak.
fn loser(x: &Share) -> &'static str {
    match x.issue_loses_more {
        true => "issue-slot use",
        false => "the FFMA share",
    }
}

fn fraction(r: &ProfileRow, metric: &str) -> String {
    md::pct_or_unknown(r.launch.fraction(metric))
}

type Row<'a> = (&'a ProfileRow, &'a NcuFile);

type Column = (&'static str, fn(&Row) -> String);

const COLUMNS: [Column; 13] = [
    ("file", |(_, f)| format!("`{}`", f.name)),
    ("profile", |(r, f)| name(f.toolchain, r.family).into()),
    // cuBLAS's names run long; the list of launches gives them whole.
    ("kernel", |(r, _)| {
        let k = &r.launch.kernel;
        let cut = k.char_indices().nth(40);
        cut.map_or(k.clone(), |(i, _)| format!("{}...", &k[..i]))
    }),
    ("launch", |(r, _)| r.launch.id.to_string()),
    ("time", |(r, _)| ms(&r.launch)),
    ("registers", |(r, _)| num(r.launch.count(REGISTERS), 0)),
    ("achieved occupancy", |(r, _)| fraction(r, OCCUPANCY)),
    ("issue slots busy", |(r, _)| fraction(r, ISSUE)),
    ("FMA pipe busy", |(r, _)| fraction(r, FMA_PIPE)),
    ("FFMA share", |(r, _)| md::pct_or_unknown(r.ffma)),
    ("bank conflicts ld / st", |(r, _)| {
        let n = |metric| num(r.launch.count(metric), 0);
        format!("{} / {}", n(CONFLICTS_LD), n(CONFLICTS_ST))
    }),
    ("SM clock GHz", |(r, _)| num(r.launch.ghz(CLOCK), 3)),
    ("top stalls (warps per issue)", |(r, _)| {
        let s = r.stalls.iter().map(|(k, v)| format!("{k} {v:.2}"));
        let s = s.collect::<Vec<_>>().join(", ");
        md::or_unknown((!s.is_empty()).then_some(s))
    }),
];

/// The bullet that explains a row: the share of the peak its numbers account for.
fn explain(r: &ProfileRow, f: &NcuFile) -> String {
    let (l, ghz) = (&r.launch, r.launch.ghz(CLOCK));
    let entry = if r.family { ENTRY } else { "" };
    let body = match &r.share {
        Some(x) => {
            let measured = match (r.measured, r.gpu.and_then(|g| g.sms), r.lanes, ghz) {
                (Some(m), Some(sms), Some(lanes), Some(g)) => {
                    let m = pct(m);
                    format!("{m} of it over the launch's whole time (ncu's FFMA count against {sms} SMs x {lanes} lanes x 2 x {g:.3} GHz)")
                }
                _ => "unknown over the launch's whole time".into(),
            };
            let (issue, ffma, product) = (pct(x.issue), pct(x.ffma), pct(x.product));
            format!("issue slots busy {issue} x FFMA share {ffma} = **{product}** of the FP32 peak at the measured clock, {measured}; {} loses more.", loser(x))
        }
        None => {
            let why = match r.lanes {
                Some(x) if x != LANES_ONE_FFMA_PER_CYCLE => format!(": the product is a fraction of the peak only where an SM has {LANES_ONE_FFMA_PER_CYCLE} FP32 lanes, this GPU {x}"),
                None => " (the FP32 lanes of this GPU are not known)".into(),
                Some(_) => " (a metric is missing)".into(),
            };
            let (issue, ffma) = (fraction(r, ISSUE), md::pct_or_unknown(r.ffma));
            format!("issue slots busy {issue}, FFMA share {ffma}; their product is unknown{why}.")
        }
    };
    let clock = match (ghz, r.gpu.and_then(|x| x.clock_mhz)) {
        (Some(g), Some(max)) => {
            let of = pct(g * 1e3 / f64::from(max));
            format!(" SM clock {g:.3} GHz, {of} of the reported maximum {max} MHz.")
        }
        (Some(g), None) => format!(" SM clock {g:.3} GHz (no reported maximum)."),
        (None, _) => String::new(),
    };
    let (id, block, grid) = (l.id, &l.block, &l.grid);
    let at = format!("`{}`, launch {id}, block {block}, grid {grid}", f.name);
    let title = format!("{} {entry}", name(f.toolchain, r.family));
    format!("- **{}** ({at}): {body}{clock}", title.trim_end())
}

/// "- `f` (CUDA's own build): 3 launches: `simt_gemm` (ID 2: 2.861 ms); `k` (IDs 0: ..., 1: ...)".
fn file_note(f: &NcuFile) -> String {
    let whose = match f.toolchain {
        Toolchain::OpenCl => "OpenCL's PTX through the CUDA JIT".to_string(),
        t => format!("{}'s own build", data::toolchain_name(t)),
    };
    let mut names = distinct(f.launches.iter().map(|l| l.kernel.as_str()));
    names.sort_by_key(|k| (is_family_launch(k) != Some(true), *k));
    let part = |k: &&str| {
        let of = f.launches.iter().filter(|l| l.kernel == *k);
        let each: Vec<String> = of.map(|l| format!("{}: {}", l.id, ms(l))).collect();
        let ids = md::verb(each.len(), "ID", "IDs");
        format!("`{k}` ({ids} {})", each.join(", "))
    };
    let parts: Vec<String> = names.iter().map(part).collect();
    let launches = match f.launches.len() {
        0 => "no launches (the profile did not run, or its output is not ncu's CSV)".to_string(),
        n => format!("{n} launches: {}", parts.join("; ")),
    };
    let errors = f.errors.iter().take(2).map(|e| md::short_reason(e));
    let errors: String = errors.map(|e| format!("; {e}")).collect();
    format!("- `{}` ({whose}): {launches}{errors}\n", f.name)
}

pub(super) fn markdown(p: &Profile) -> String {
    let mut s = String::from("### Where the rest goes (Nsight Compute)\n\n");
    if p.files.is_empty() {
        return s + "No Nsight Compute output (`ncu-*.csv`) next to these results: every metric of this part is unknown. `scripts/gpu-batch.sh simt-measure` writes it.\n\n";
    }
    s.push_str("Nsight Compute's metrics from the `ncu-*.csv` files next to the results: of each file the longest launch of the family's (`simt_gemm`) and of cuBLAS's (another `gemm`), every launch listed below the table. ncu cannot profile OpenCL: a file named for OpenCL holds OpenCL's PTX run through the CUDA driver's JIT.\n\n");
    let rows: Vec<Row> = p.rows.iter().map(|r| (r, &p.files[r.file])).collect();
    s += &md::table_of(&COLUMNS, &rows);
    s += "\nLaunches per file:\n\n";
    s.extend(p.files.iter().map(file_note));
    let _ = writeln!(s, "\nMetrics: achieved occupancy `{OCCUPANCY}`; issue slots busy `{ISSUE}`; FMA pipe busy `{FMA_PIPE}`; FFMA share `{FFMA}` / 32 / `{INSTRUCTIONS}`; bank conflicts `{CONFLICTS_LD}`, `{CONFLICTS_ST}`; SM clock `{CLOCK}`; stalls `{STALL_PREFIX}<reason>{STALL_SUFFIX}`, the three largest but \"selected\". {}: not in the profile.\n", md::UNKNOWN);
    if p.rows.is_empty() {
        return s;
    }
    s.push_str("**Why.** With 128 FP32 lanes per SM, one FFMA warp instruction per scheduler per cycle is the FP32 peak, so issue-slot use x FFMA share is about the fraction of the peak; the measured fraction also counts the time the SMs sat idle (the last wave, launch and drain).\n\n");
    s.extend(rows.iter().map(|&(r, f)| explain(r, f) + "\n"));
    s + "\n"
}

/// The words of the profile's finding: what the family's rows account for.
pub(super) fn words(shares: &[Share]) -> Words {
    let whole = |v: f64| format!("{:.0}%", v * 100.0);
    let (parts, shorts): (Vec<String>, Vec<String>) = (shares.iter())
        .map(|x| {
            let (n, l) = (name(x.toolchain, true), loser(x));
            let (issue, ffma, product) = (pct(x.issue), pct(x.ffma), pct(x.product));
            let (wi, wf, wp) = (whole(x.issue), whole(x.ffma), whole(x.product));
            (
                format!("{n} issues in {issue} of active cycles, {ffma} of it FFMA ({product} of peak; {l} loses more)"),
                format!("{n} {wi} x {wf} = {wp} ({l} loses more)"),
            )
        })
        .unzip();
    Words {
        text: format!("**Nsight Compute on simt_gemm**: {}.", md::join_and(&parts)),
        short: format!(
            "In Nsight Compute, simt_gemm's issue-slot use x FFMA share of the FP32 peak: {}.",
            md::join_and(&shorts)
        ),
    }
}
