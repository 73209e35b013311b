//! "Where the rest goes": Nsight Compute's view of the SIMT family's launches
//! and cuBLAS's (issue slots, FFMA share, stalls, clock), and the fraction of
//! the FP32 peak those numbers account for.

use std::fmt::Write as _;

use crate::analysis::ncu::{NcuFile, NcuLaunch};
use crate::analysis::simt::*;
use crate::backend::Toolchain;

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
    l.seconds(TIME)
        .map_or(md::UNKNOWN.into(), |t| format!("{:.3} ms", t * 1e3))
}

/// A kernel name for a table cell: cuBLAS's run long; the notes give them whole.
fn short_name(kernel: &str) -> String {
    const MAX: usize = 40;
    let head: String = kernel.chars().take(MAX).collect();
    if kernel.chars().count() <= MAX {
        head
    } else {
        format!("{head}...")
    }
}

fn cells(r: &ProfileRow, f: &NcuFile) -> Vec<String> {
    let l = &r.launch;
    let stalls: Vec<String> = r
        .stalls
        .iter()
        .map(|(k, v)| format!("{k} {v:.2}"))
        .collect();
    let (ld, st) = (num(l.count(CONFLICTS_LD), 0), num(l.count(CONFLICTS_ST), 0));
    vec![
        format!("`{}`", f.name),
        name(f.toolchain, r.family).into(),
        short_name(&l.kernel),
        l.id.to_string(),
        ms(l),
        num(l.count(REGISTERS), 0),
        md::pct_or_unknown(l.fraction(OCCUPANCY)),
        md::pct_or_unknown(l.fraction(ISSUE)),
        md::pct_or_unknown(l.fraction(FMA_PIPE)),
        md::pct_or_unknown(r.ffma),
        format!("{ld} / {st}"),
        num(l.ghz(CLOCK), 3),
        if stalls.is_empty() {
            md::UNKNOWN.into()
        } else {
            stalls.join(", ")
        },
    ]
}

/// The bullet that explains a row, from its numbers.
fn explain(r: &ProfileRow, f: &NcuFile) -> String {
    let (l, title) = (&r.launch, name(f.toolchain, r.family));
    let title = if r.family {
        format!("{title} {ENTRY}")
    } else {
        title.to_string()
    };
    let mut s = format!(
        "- **{title}** (`{}`, launch {}, block {}, grid {}): ",
        f.name, l.id, l.block, l.grid
    );
    let ghz = l.ghz(CLOCK);
    if let Some(x) = &r.share {
        let (issue, ffma, product) = (
            md::pct(Some(x.issue)),
            md::pct(Some(x.ffma)),
            md::pct(Some(x.product)),
        );
        let _ = write!(s, "issue slots busy {issue} x FFMA share {ffma} = **{product}** of the FP32 peak at the measured clock");
        match (r.measured, r.gpu.and_then(|g| g.sms)) {
            (Some(m), Some(sms)) => {
                let _ = write!(
                    s,
                    "; measured over the launch's time: {} (the FFMA work ncu counted, 2 FLOPs each, \
                     against {sms} SMs x {} lanes x 2 x {:.3} GHz)",
                    md::pct(Some(m)),
                    r.lanes.unwrap_or(0),
                    ghz.unwrap_or(0.0)
                );
            }
            _ => s.push_str(
                "; measured: unknown (needs the time, the FFMA count, the clock and the SM count)",
            ),
        }
        let _ = write!(
            s,
            ". {} loses more: the schedulers issue nothing in {} of the active cycles, and {} of what they issue is not FFMA.",
            if x.issue_loses_more { "Issue-slot use" } else { "The FFMA share" },
            md::pct(Some(1.0 - x.issue)),
            md::pct(Some(1.0 - x.ffma))
        );
    } else {
        let (issue, ffma) = (
            md::pct_or_unknown(l.fraction(ISSUE)),
            md::pct_or_unknown(r.ffma),
        );
        let _ = write!(
            s,
            "issue slots busy {issue}, FFMA share {ffma}; their product is unknown"
        );
        let _ = match r.lanes {
            Some(x) if x != LANES_ONE_FFMA_PER_CYCLE => write!(
                s,
                " as a fraction of peak: it is one only where an SM has {LANES_ONE_FFMA_PER_CYCLE} FP32 lanes, this GPU {x}."
            ),
            None => write!(s, " (the FP32 lanes of this GPU are not known)."),
            Some(_) => write!(s, " (a metric is missing)."),
        };
    }
    if let Some(g) = ghz {
        let _ = match r.gpu.and_then(|x| x.clock_mhz) {
            Some(max) => write!(
                s,
                " SM clock {g:.3} GHz, {} of the reported maximum {max} MHz.",
                md::pct(Some(g * 1e3 / f64::from(max)))
            ),
            None => write!(s, " SM clock {g:.3} GHz (no reported maximum to compare)."),
        };
    }
    s
}

/// "3 launches: simt_gemm 1 (ID 2: 2.861 ms), cuBLAS 2 (...), other 0".
fn file_note(f: &NcuFile) -> String {
    let whose = match f.toolchain {
        Toolchain::OpenCl => "OpenCL's PTX through the CUDA JIT".to_string(),
        t => format!("{}'s own build", data::toolchain_name(t)),
    };
    let mut s = format!("- `{}` ({whose}): ", f.name);
    if f.launches.is_empty() {
        s.push_str("no launches (the profile did not run, or its output is not ncu's CSV)");
    } else {
        let mut parts = Vec::new();
        for (want, label) in [
            (Some(true), ENTRY),
            (Some(false), "cuBLAS"),
            (None, "other"),
        ] {
            let of: Vec<&NcuLaunch> = f
                .launches
                .iter()
                .filter(|l| is_family_launch(&l.kernel) == want)
                .collect();
            if of.is_empty() {
                continue;
            }
            let each: Vec<String> = of.iter().map(|l| format!("{}: {}", l.id, ms(l))).collect();
            let ids = md::verb(of.len(), "ID", "IDs");
            let mut p = format!("{label} {} ({ids} {})", of.len(), each.join(", "));
            if want != Some(true) {
                let mut names: Vec<&str> = of.iter().map(|l| l.kernel.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                let _ = write!(p, " `{}`", names.join("`, `"));
            }
            parts.push(p);
        }
        let _ = write!(s, "{} launches: {}", f.launches.len(), parts.join("; "));
    }
    for e in f.errors.iter().take(2) {
        let _ = write!(s, "; {}", md::short_reason(e));
    }
    s.push('\n');
    s
}

const HEAD: [&str; 13] = [
    "file",
    "profile",
    "kernel",
    "launch",
    "time",
    "registers",
    "achieved occupancy",
    "issue slots busy",
    "FMA pipe busy",
    "FFMA share",
    "bank conflicts ld / st",
    "SM clock GHz",
    "top stalls (warps per issue)",
];

pub(super) fn markdown(p: &Profile) -> String {
    let mut s = String::from("### Where the rest goes (Nsight Compute)\n\n");
    if p.files.is_empty() {
        s.push_str(
            "No Nsight Compute output (`ncu-*.csv`) next to these results: every metric of this part is unknown. \
             `scripts/gpu-batch.sh simt-measure` writes it (`ncu --csv --metrics ...` on the tuned configurations).\n\n",
        );
        return s;
    }
    s.push_str(
        "Nsight Compute's metrics (`ncu --csv`, the files `ncu-*.csv` next to the results). ncu cannot profile \
         OpenCL: a file named for OpenCL holds OpenCL's PTX loaded through the CUDA driver's JIT, the instructions \
         NVIDIA OpenCL runs; any other file CUDA's own build. Launches named `simt_gemm` are the family's, other \
         launches with `gemm` in their name cuBLAS's. Of each kind in a file the longest launch is shown, and every \
         launch is listed below the table: a command that runs two builds of the kernel puts both in one file \
         under one name (`sweep jit` runs CUDA's own build before OpenCL's PTX), and their times tell them apart. \
         ncu does not record the problem's size, and nothing here needs it.\n\n",
    );
    let rows: Vec<Vec<String>> = p.rows.iter().map(|r| cells(r, &p.files[r.file])).collect();
    s.push_str(&md::table(&md::h(&HEAD), &rows));
    if !rows.is_empty() {
        s.push('\n');
    }
    s.push_str("Launches per file:\n\n");
    for f in &p.files {
        s.push_str(&file_note(f));
    }
    let _ = writeln!(
        s,
        "\nachieved occupancy: `{OCCUPANCY}`; issue slots busy: `{ISSUE}`; FMA pipe busy: `{FMA_PIPE}`; \
         FFMA share: FFMA warp instructions over warp instructions issued, `{FFMA}` / 32 / `{INSTRUCTIONS}`; \
         bank conflicts: `{CONFLICTS_LD}` and `{CONFLICTS_ST}`; SM clock: `{CLOCK}`; stalls: \
         `{STALL_PREFIX}<reason>{STALL_SUFFIX}`, warps waiting on the reason per instruction issued, the three \
         largest (\"selected\", the issuing warp itself, left out). {}: not in the profile.\n",
        md::UNKNOWN
    );
    if p.rows.is_empty() {
        return s;
    }
    s.push_str(
        "**Why.** Where an SM has 128 FP32 lanes, 32 per scheduler, one FFMA warp instruction per scheduler \
         per cycle is the FP32 peak, so the fraction of the peak at the measured clock is about issue-slot use \
         x FFMA share. Issue-slot use counts the cycles an SM was active; the measured fraction counts the \
         launch's whole time, so where it is lower the SMs sat idle for the difference (the last wave, \
         launch and drain).\n\n",
    );
    for r in &p.rows {
        let _ = writeln!(s, "{}", explain(r, &p.files[r.file]));
    }
    s.push('\n');
    s
}

/// The words of the profile's finding: what the family's rows account for.
pub(super) fn words(shares: &[Share]) -> Words {
    let loses = |x: &Share| {
        if x.issue_loses_more {
            "issue-slot use"
        } else {
            "the FFMA share"
        }
    };
    let whole = |v: f64| format!("{:.0}%", v * 100.0);
    let (mut parts, mut shorts) = (Vec::new(), Vec::new());
    for x in shares {
        let (n, l) = (name(x.toolchain, true), loses(x));
        let (issue, ffma, product) = (
            md::pct(Some(x.issue)),
            md::pct(Some(x.ffma)),
            md::pct(Some(x.product)),
        );
        parts.push(format!("{n} issues in {issue} of active cycles, {ffma} of it FFMA ({product} of peak; {l} loses more)"));
        shorts.push(format!(
            "{n} {} x {} = {} ({l} loses more)",
            whole(x.issue),
            whole(x.ffma),
            whole(x.product)
        ));
    }
    Words {
        text: format!("**Nsight Compute on simt_gemm**: {}.", md::join_and(&parts)),
        short: format!(
            "In Nsight Compute, simt_gemm's issue-slot use x FFMA share of the FP32 peak: {}.",
            md::join_and(&shorts)
        ),
    }
}
