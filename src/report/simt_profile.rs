//! "Where the rest goes": Nsight Compute's view of the SIMT family's launches
//! and cuBLAS's (issue slots, FFMA share, stalls, clock), and the fraction of
//! the FP32 peak those numbers account for.

use std::fmt::Write as _;

use crate::analysis::ncu::{NcuFile, NcuLaunch};
use crate::analysis::simt::*;
use crate::analysis::stats::distinct;
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
    match kernel.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &kernel[..i]),
        None => kernel.to_string(),
    }
}

/// The table's columns: a launch's row and its file.
type Row<'a> = (&'a ProfileRow, &'a NcuFile);

/// A column: its header, and its cell of a row.
type Column = (&'static str, fn(&Row) -> String);

const COLUMNS: [Column; 13] = [
    ("file", |(_, f)| format!("`{}`", f.name)),
    ("profile", |(r, f)| name(f.toolchain, r.family).into()),
    ("kernel", |(r, _)| short_name(&r.launch.kernel)),
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
    (
        "top stalls (warps per issue)",
        |(r, _)| match &r.stalls[..] {
            [] => md::UNKNOWN.into(),
            s => s
                .iter()
                .map(|(k, v)| format!("{k} {v:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
        },
    ),
];

fn fraction(r: &ProfileRow, metric: &str) -> String {
    md::pct_or_unknown(r.launch.fraction(metric))
}

fn pct(v: f64) -> String {
    md::pct(Some(v))
}

/// The bullet that explains a row, from its numbers.
fn explain(r: &ProfileRow, f: &NcuFile) -> String {
    let (l, ghz) = (&r.launch, r.launch.ghz(CLOCK));
    let entry = if r.family {
        format!(" {ENTRY}")
    } else {
        String::new()
    };
    let title = format!("{}{entry}", name(f.toolchain, r.family));
    let body = match &r.share {
        Some(x) => {
            let measured = match (r.measured, r.gpu.and_then(|g| g.sms)) {
                (Some(m), Some(sms)) => format!(
                    "measured over the launch's time: {} (the FFMA work ncu counted, 2 FLOPs each, \
                     against {sms} SMs x {} lanes x 2 x {:.3} GHz)",
                    pct(m),
                    r.lanes.unwrap_or(0),
                    ghz.unwrap_or(0.0)
                ),
                _ => {
                    "measured: unknown (needs the time, the FFMA count, the clock and the SM count)"
                        .into()
                }
            };
            let loses = if x.issue_loses_more {
                "Issue-slot use"
            } else {
                "The FFMA share"
            };
            format!(
                "issue slots busy {} x FFMA share {} = **{}** of the FP32 peak at the measured clock; \
                 {measured}. {loses} loses more: the schedulers issue nothing in {} of the active \
                 cycles, and {} of what they issue is not FFMA.",
                pct(x.issue),
                pct(x.ffma),
                pct(x.product),
                pct(1.0 - x.issue),
                pct(1.0 - x.ffma)
            )
        }
        None => {
            let why = match r.lanes {
                Some(x) if x != LANES_ONE_FFMA_PER_CYCLE => format!(
                    " as a fraction of peak: it is one only where an SM has \
                     {LANES_ONE_FFMA_PER_CYCLE} FP32 lanes, this GPU {x}."
                ),
                None => " (the FP32 lanes of this GPU are not known).".into(),
                Some(_) => " (a metric is missing).".into(),
            };
            let issue = md::pct_or_unknown(l.fraction(ISSUE));
            let ffma = md::pct_or_unknown(r.ffma);
            format!("issue slots busy {issue}, FFMA share {ffma}; their product is unknown{why}")
        }
    };
    let clock = match (ghz, r.gpu.and_then(|x| x.clock_mhz)) {
        (Some(g), Some(max)) => format!(
            " SM clock {g:.3} GHz, {} of the reported maximum {max} MHz.",
            pct(g * 1e3 / f64::from(max))
        ),
        (Some(g), None) => format!(" SM clock {g:.3} GHz (no reported maximum to compare)."),
        (None, _) => String::new(),
    };
    let at = format!(
        "`{}`, launch {}, block {}, grid {}",
        f.name, l.id, l.block, l.grid
    );
    format!("- **{title}** ({at}): {body}{clock}")
}

/// "3 launches: simt_gemm 1 (ID 2: 2.861 ms), cuBLAS 2 (...), other 0".
fn file_note(f: &NcuFile) -> String {
    let whose = match f.toolchain {
        Toolchain::OpenCl => "OpenCL's PTX through the CUDA JIT".to_string(),
        t => format!("{}'s own build", data::toolchain_name(t)),
    };
    let kinds = [
        (Some(true), ENTRY),
        (Some(false), "cuBLAS"),
        (None, "other"),
    ];
    let parts: Vec<String> = (kinds.iter())
        .filter_map(|&(want, label)| {
            let of: Vec<&NcuLaunch> = (f.launches.iter())
                .filter(|l| is_family_launch(&l.kernel) == want)
                .collect();
            let each: Vec<String> = of.iter().map(|l| format!("{}: {}", l.id, ms(l))).collect();
            let ids = md::verb(of.len(), "ID", "IDs");
            let mut names = distinct(of.iter().map(|l| l.kernel.as_str()));
            names.sort_unstable();
            let names = match want {
                Some(true) => String::new(),
                _ => format!(" `{}`", names.join("`, `")),
            };
            let n = of.len();
            (n > 0).then(|| format!("{label} {n} ({ids} {}){names}", each.join(", ")))
        })
        .collect();
    let launches = match f.launches.len() {
        0 => "no launches (the profile did not run, or its output is not ncu's CSV)".to_string(),
        n => format!("{n} launches: {}", parts.join("; ")),
    };
    let errors: String = (f.errors.iter().take(2))
        .map(|e| format!("; {}", md::short_reason(e)))
        .collect();
    format!("- `{}` ({whose}): {launches}{errors}\n", f.name)
}

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
    let rows: Vec<Row> = p.rows.iter().map(|r| (r, &p.files[r.file])).collect();
    s.push_str(&md::table_of(&COLUMNS, &rows));
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
    let whole = |v: f64| format!("{:.0}%", v * 100.0);
    let (parts, shorts): (Vec<String>, Vec<String>) = (shares.iter())
        .map(|x| {
            let n = name(x.toolchain, true);
            let l = if x.issue_loses_more { "issue-slot use" } else { "the FFMA share" };
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
