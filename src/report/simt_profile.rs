//! "Where the rest goes": Nsight Compute's view of the SIMT family's launches
//! and cuBLAS's (issue slots, FFMA share, stalls, clock), and the fraction of
//! the FP32 peak those numbers account for.

use std::fmt::Write as _;

use crate::backend::Toolchain;

use super::ncu::{NcuFile, NcuLaunch};
use super::simt::{fp32_lanes, GpuFacts};
use super::{data, md};

/// The family's entry point, as ncu names its launches.
const ENTRY: &str = "simt_gemm";

const TIME: &str = "gpu__time_duration.sum";
const REGISTERS: &str = "launch__registers_per_thread";
const OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
const ISSUE: &str = "smsp__issue_active.avg.pct_of_peak_sustained_active";
const FMA_PIPE: &str = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
const FFMA: &str = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
const INSTRUCTIONS: &str = "smsp__inst_executed.sum";
const CONFLICTS_LD: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
const CONFLICTS_ST: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
const CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
const STALL_PREFIX: &str = "smsp__average_warps_issue_stalled_";
const STALL_SUFFIX: &str = "_per_issue_active.ratio";

/// The lanes per SM at which one FFMA warp instruction per scheduler per cycle
/// (4 schedulers of 32 lanes) is the FP32 peak.
const LANES_ONE_FFMA_PER_CYCLE: u32 = 128;

/// What ncu's launches say, as Markdown, and the finding it supports.
pub(super) struct Profile {
    pub markdown: String,
    /// (text, short, weight) of the finding, when the numbers give one.
    pub finding: Option<(String, String, f64)>,
}

/// Whose launch it is: the family's, cuBLAS's (another GEMM), or neither.
fn label(kernel: &str) -> Option<&'static str> {
    if kernel.contains(ENTRY) {
        Some(ENTRY)
    } else if kernel.to_ascii_lowercase().contains("gemm") {
        Some("cuBLAS")
    } else {
        None
    }
}

fn profile_name(file: &NcuFile, label: &str) -> String {
    match (label, file.toolchain) {
        ("cuBLAS", _) => "cuBLAS".into(),
        (_, Toolchain::OpenCl) => "OpenCL PTX via CUDA JIT".into(),
        (_, t) => data::toolchain_name(t).into(),
    }
}

fn ms(l: &NcuLaunch) -> String {
    l.seconds(TIME)
        .map_or("n/a".into(), |t| format!("{:.3} ms", t * 1e3))
}

/// The launch ncu took longest over: the measured one rather than a warm-up,
/// a check or a smaller call in the same file.
fn longest<'a>(group: &[&'a NcuLaunch]) -> Option<&'a NcuLaunch> {
    group.iter().copied().max_by(|a, b| {
        let t = |l: &NcuLaunch| l.seconds(TIME).unwrap_or(f64::NEG_INFINITY);
        t(a).total_cmp(&t(b)).then(a.id.cmp(&b.id))
    })
}

/// A kernel name for a table cell: cuBLAS's run long; the notes give them whole.
fn short_name(kernel: &str) -> String {
    const MAX: usize = 40;
    if kernel.chars().count() <= MAX {
        kernel.to_string()
    } else {
        let head: String = kernel.chars().take(MAX).collect();
        format!("{head}...")
    }
}

/// FFMA warp instructions (thread instructions / 32) over warp instructions issued.
fn ffma_share(l: &NcuLaunch) -> Option<f64> {
    let inst = l.count(INSTRUCTIONS).filter(|v| *v > 0.0)?;
    Some(l.count(FFMA)? / 32.0 / inst)
}

fn stalls(l: &NcuLaunch) -> String {
    let top: Vec<String> = l
        .ranked(STALL_PREFIX, STALL_SUFFIX)
        .into_iter()
        .filter(|(k, _)| k != "selected")
        .take(3)
        .map(|(k, v)| format!("{k} {v:.2}"))
        .collect();
    if top.is_empty() {
        "n/a".into()
    } else {
        top.join(", ")
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{:.1}%", v * 100.0))
}

fn num(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.0}"))
}

/// The GPU a launch ran on, from the runs' devices: those of the launch's
/// compute capability (all, where ncu did not say it), when they agree.
fn gpu_of(l: &NcuLaunch, gpus: &[GpuFacts]) -> Option<GpuFacts> {
    let mut matching = gpus
        .iter()
        .filter(|g| l.compute_capability.is_none() || g.compute_capability == l.compute_capability);
    let first = *matching.next()?;
    matching.all(|g| *g == first).then_some(first)
}

/// One profiled launch and what its numbers account for.
struct Row<'a> {
    file: &'a NcuFile,
    label: &'static str,
    launch: &'a NcuLaunch,
}

impl Row<'_> {
    fn name(&self) -> String {
        profile_name(self.file, self.label)
    }

    /// "CUDA simt_gemm", "cuBLAS": what the row is, in its explanation.
    fn title(&self) -> String {
        if self.label == ENTRY {
            format!("{} {ENTRY}", self.name())
        } else {
            self.name()
        }
    }

    fn cells(&self) -> Vec<String> {
        let l = self.launch;
        vec![
            format!("`{}`", self.file.name),
            self.name(),
            short_name(&l.kernel),
            l.id.to_string(),
            ms(l),
            num(l.count(REGISTERS)),
            pct(l.fraction(OCCUPANCY)),
            pct(l.fraction(ISSUE)),
            pct(l.fraction(FMA_PIPE)),
            pct(ffma_share(l)),
            format!(
                "{} / {}",
                num(l.count(CONFLICTS_LD)),
                num(l.count(CONFLICTS_ST))
            ),
            l.ghz(CLOCK).map_or("n/a".into(), |g| format!("{g:.3}")),
            stalls(l),
        ]
    }

    /// Issue-slot use x FFMA share, the fraction of the FP32 peak it accounts
    /// for where one FFMA warp instruction per scheduler per cycle is the peak.
    fn product(&self, gpus: &[GpuFacts]) -> Option<(f64, f64, f64)> {
        let l = self.launch;
        let lanes = l
            .compute_capability
            .and_then(fp32_lanes)
            .or_else(|| gpu_of(l, gpus)?.lanes())?;
        if lanes != LANES_ONE_FFMA_PER_CYCLE {
            return None;
        }
        let (issue, share) = (l.fraction(ISSUE)?, ffma_share(l)?);
        Some((issue, share, issue * share))
    }

    /// The bullet that explains the row, computed from its numbers.
    fn explain(&self, gpus: &[GpuFacts]) -> String {
        let l = self.launch;
        let mut s = format!(
            "- **{}** (`{}`, launch {}, block {}, grid {}): ",
            self.title(),
            self.file.name,
            l.id,
            l.block,
            l.grid
        );
        let lanes = l
            .compute_capability
            .and_then(fp32_lanes)
            .or_else(|| gpu_of(l, gpus).and_then(|g| g.lanes()));
        let ghz = l.ghz(CLOCK);
        match self.product(gpus) {
            Some((issue, share, product)) => {
                let _ = write!(
                    s,
                    "issue slots busy {} x FFMA share {} = **{}** of the FP32 peak at the measured clock",
                    pct(Some(issue)),
                    pct(Some(share)),
                    pct(Some(product))
                );
                let gpu = gpu_of(l, gpus);
                let measured = (|| {
                    let sms = f64::from(gpu?.sms?);
                    let per_s = sms * f64::from(lanes?) * ghz? * 1e9;
                    Some(l.count(FFMA)? / (l.seconds(TIME)? * per_s))
                })();
                match (measured, gpu.and_then(|g| g.sms)) {
                    (Some(m), Some(sms)) => {
                        let _ = write!(
                            s,
                            "; measured over the launch's time: {} (the FFMA work ncu counted, 2 FLOPs each, \
                             against {sms} SMs x {} lanes x 2 x {:.3} GHz)",
                            pct(Some(m)),
                            lanes.unwrap_or(0),
                            ghz.unwrap_or(0.0)
                        );
                    }
                    _ => s.push_str("; measured: n/a (needs the time, the FFMA count, the clock and the SM count)"),
                }
                let (lost_issue, lost_share) = (1.0 - issue, 1.0 - share);
                let _ = write!(
                    s,
                    ". {} loses more: the schedulers issue nothing in {} of the active cycles, and {} of what they issue is not FFMA.",
                    if lost_issue >= lost_share {
                        "Issue-slot use"
                    } else {
                        "The FFMA share"
                    },
                    pct(Some(lost_issue)),
                    pct(Some(lost_share))
                );
            }
            None => {
                let _ = write!(
                    s,
                    "issue slots busy {}, FFMA share {}; their product is n/a",
                    pct(l.fraction(ISSUE)),
                    pct(ffma_share(l))
                );
                match lanes {
                    Some(x) if x != LANES_ONE_FFMA_PER_CYCLE => {
                        let _ = write!(
                            s,
                            " as a fraction of peak: it is one only where an SM has {LANES_ONE_FFMA_PER_CYCLE} FP32 lanes, this GPU {x}"
                        );
                    }
                    None => s.push_str(" (the FP32 lanes of this GPU are not known)"),
                    Some(_) => s.push_str(" (a metric is missing)"),
                }
                s.push('.');
            }
        }
        if let Some(g) = ghz {
            match gpu_of(l, gpus).and_then(|x| x.clock_mhz) {
                Some(max) => {
                    let _ = write!(
                        s,
                        " SM clock {g:.3} GHz, {} of the reported maximum {max} MHz.",
                        pct(Some(g * 1e3 / f64::from(max)))
                    );
                }
                None => {
                    let _ = write!(s, " SM clock {g:.3} GHz (no reported maximum to compare).");
                }
            }
        }
        s
    }
}

/// "3 launches: simt_gemm 1 (ID 2: 2.861 ms), cuBLAS 2 (...), other 0".
fn file_note(f: &NcuFile) -> String {
    let mut s = format!(
        "- `{}` ({}): ",
        f.name,
        match f.toolchain {
            Toolchain::OpenCl => "OpenCL's PTX through the CUDA JIT",
            Toolchain::Cuda => "CUDA's own build",
        }
    );
    if f.launches.is_empty() {
        s.push_str("no launches (the profile did not run, or its output is not ncu's CSV)");
    } else {
        let _ = write!(s, "{} launches", f.launches.len());
        let mut parts = Vec::new();
        for want in [Some(ENTRY), Some("cuBLAS"), None] {
            let of: Vec<&NcuLaunch> = f
                .launches
                .iter()
                .filter(|l| label(&l.kernel) == want)
                .collect();
            if of.is_empty() {
                continue;
            }
            let each: Vec<String> = of.iter().map(|l| format!("{}: {}", l.id, ms(l))).collect();
            let ids = if of.len() == 1 { "ID" } else { "IDs" };
            let mut p = format!(
                "{} {} ({ids} {})",
                want.unwrap_or("other"),
                of.len(),
                each.join(", ")
            );
            if want != Some(ENTRY) {
                let mut names: Vec<&str> = of.iter().map(|l| l.kernel.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                let _ = write!(p, " `{}`", names.join("`, `"));
            }
            parts.push(p);
        }
        let _ = write!(s, ": {}", parts.join("; "));
    }
    for e in f.errors.iter().take(2) {
        let _ = write!(s, "; {}", md::short_reason(e));
    }
    s.push('\n');
    s
}

pub(super) fn where_the_rest_goes(files: &[NcuFile], gpus: &[GpuFacts]) -> Profile {
    let mut s = String::from("### Where the rest goes (Nsight Compute)\n\n");
    if files.is_empty() {
        s.push_str(
            "No Nsight Compute output (`ncu-*.csv`) next to these results: every metric of this part is n/a. \
             `scripts/gpu-batch.sh simt-measure` writes it (`ncu --csv --metrics ...` on the tuned configurations).\n\n",
        );
        return Profile {
            markdown: s,
            finding: None,
        };
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
    let mut rows: Vec<Row> = Vec::new();
    for f in files {
        for want in [ENTRY, "cuBLAS"] {
            let of: Vec<&NcuLaunch> = f
                .launches
                .iter()
                .filter(|l| label(&l.kernel) == Some(want))
                .collect();
            if let Some(launch) = longest(&of) {
                rows.push(Row {
                    file: f,
                    label: want,
                    launch,
                });
            }
        }
    }
    let table: Vec<Vec<String>> = rows.iter().map(Row::cells).collect();
    s.push_str(&md::table(
        &md::h(&[
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
        ]),
        &table,
    ));
    if !table.is_empty() {
        s.push('\n');
    }
    s.push_str("Launches per file:\n\n");
    for f in files {
        s.push_str(&file_note(f));
    }
    let _ = writeln!(
        s,
        "\nachieved occupancy: `{OCCUPANCY}`; issue slots busy: `{ISSUE}`; FMA pipe busy: `{FMA_PIPE}`; \
         FFMA share: FFMA warp instructions over warp instructions issued, `{FFMA}` / 32 / `{INSTRUCTIONS}`; \
         bank conflicts: `{CONFLICTS_LD}` and `{CONFLICTS_ST}`; SM clock: `{CLOCK}`; stalls: \
         `{STALL_PREFIX}<reason>{STALL_SUFFIX}`, warps waiting on the reason per instruction issued, the three \
         largest (\"selected\", the issuing warp itself, left out). n/a: not in the profile.\n"
    );
    if rows.is_empty() {
        return Profile {
            markdown: s,
            finding: None,
        };
    }
    s.push_str(
        "**Why.** Where an SM has 128 FP32 lanes, 32 per scheduler, one FFMA warp instruction per scheduler \
         per cycle is the FP32 peak, so the fraction of the peak at the measured clock is about issue-slot use \
         x FFMA share. Issue-slot use counts the cycles an SM was active; the measured fraction counts the \
         launch's whole time, so where it is lower the SMs sat idle for the difference (the last wave, \
         launch and drain).\n\n",
    );
    for r in &rows {
        let _ = writeln!(s, "{}", r.explain(gpus));
    }
    s.push('\n');

    // The finding: the family's rows, what each accounts for and which factor loses more.
    let mut parts = Vec::new();
    let mut shorts = Vec::new();
    let mut best: f64 = 0.0;
    for r in rows.iter().filter(|r| r.label == ENTRY) {
        if let Some((issue, share, product)) = r.product(gpus) {
            best = best.max(product);
            let loses = if 1.0 - issue >= 1.0 - share {
                "issue-slot use"
            } else {
                "the FFMA share"
            };
            parts.push(format!(
                "{} issues in {} of active cycles, {} of it FFMA ({} of peak; {loses} loses more)",
                r.name(),
                pct(Some(issue)),
                pct(Some(share)),
                pct(Some(product))
            ));
            shorts.push(format!(
                "{} {:.0}% x {:.0}% = {:.0}% ({loses} loses more)",
                r.name(),
                issue * 100.0,
                share * 100.0,
                product * 100.0
            ));
        }
    }
    let finding = (!parts.is_empty()).then(|| {
        (
            format!("**Nsight Compute on simt_gemm**: {}.", md::join_and(&parts)),
            format!(
                "In Nsight Compute, simt_gemm's issue-slot use x FFMA share of the FP32 peak: {}.",
                md::join_and(&shorts)
            ),
            1.0 - best,
        )
    });
    Profile {
        markdown: s,
        finding,
    }
}
