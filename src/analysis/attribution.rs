//! Where toolchains differ, from `gemmlab attribute` rows: per kernel, the
//! registers of each front end's PTX through each assembler, and for each pair
//! of toolchains whose own builds differ, whether the front ends (their PTX
//! differs through one common assembler) or the assemblers (the same
//! difference disappears through it) account for it. Speeds of the same
//! toolchains measured in one `compare` run sit beside them where present.

use crate::attribution::{EXPERIMENT, OWN};
use crate::backend::Toolchain;
use crate::results::Measurement;

use super::data::{self, Rec};
use super::stats::{self, distinct};
use super::{Data, Finding, Topic};

/// Why two toolchains' own builds of a kernel use different registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Their PTX differs by the same registers through one common assembler.
    FrontEnd,
    /// Their PTX takes the same registers through one common assembler.
    Assembler,
    /// Through one common assembler they still differ, by another amount.
    Both,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// `a` and `b` build `kernel` with `own` registers (each with its own
    /// assembler); through `assembler` their PTX takes `common`.
    Cause {
        kernel: String,
        arch: String,
        a: Toolchain,
        b: Toolchain,
        own: (u32, u32),
        assembler: String,
        common: (u32, u32),
        cause: Cause,
    },
    /// At `size`, `kernel` builds with equal registers under CUDA and NVIDIA
    /// OpenCL yet OpenCL runs `gap` slower; the same OpenCL source through clang,
    /// ptxas and the CUDA driver runs at `clang_opencl` (GFLOP/s, with CUDA's
    /// `cuda` and OpenCL's `opencl` from the same run): where that is CUDA's speed,
    /// the source is not the cause, NVIDIA OpenCL's front end or runtime is.
    EqualRegistersSpeedGap {
        kernel: String,
        size: usize,
        registers: u32,
        cuda: f64,
        opencl: f64,
        clang_opencl: f64,
        gap: f64,
        source_explains: bool,
    },
    /// One front end's PTX of each kernel assembled by two assemblers, each in its
    /// own compare run (`GEMMLAB_ASSEMBLER`) and timed there next to cuBLAS:
    /// per kernel the registers and the ratio to cuBLAS under each, and the
    /// largest relative change of that ratio.
    AssemblerSpeed {
        toolchain: Toolchain,
        size: usize,
        assemblers: (String, String),
        kernels: Vec<AsmPair>,
        largest: f64,
    },
    /// Through every assembler, every front end's PTX of `kernel` takes the
    /// same registers as through the others: the assembler decides nothing.
    AssemblersAgree {
        kernels: Vec<String>,
        arch: String,
        assemblers: Vec<String>,
    },
}

/// One kernel under two assemblers: registers and x cuBLAS under each.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AsmPair {
    pub kernel: String,
    pub registers: (Option<u32>, Option<u32>),
    pub vs_vendor: (f64, f64),
}

/// One kernel's matrix: per front end, per assembler, the row.
pub struct Matrix<'a> {
    pub kernel: String,
    pub cells: Vec<Vec<Option<&'a Measurement>>>,
}

#[derive(Default)]
pub struct Attribution<'a> {
    pub arch: String,
    pub fronts: Vec<Toolchain>,
    pub assemblers: Vec<String>,
    pub kernels: Vec<Matrix<'a>>,
    pub findings: Vec<Finding>,
}

/// The pairs a reader asks about, in order: NVIDIA's two toolchains, then each
/// language's NVIDIA and clang builds, then clang's two.
const PAIRS: [(Toolchain, Toolchain); 4] = [
    (Toolchain::Cuda, Toolchain::OpenCl),
    (Toolchain::Cuda, Toolchain::ClangCuda),
    (Toolchain::OpenCl, Toolchain::ClangOpenCl),
    (Toolchain::ClangCuda, Toolchain::ClangOpenCl),
];

fn finding(kind: Kind) -> Finding {
    Finding::new(Topic::Attribution, super::Kind::Attribution(kind))
}

/// The attribution of the newest run of `gemmlab attribute` (one architecture),
/// and what compare runs say of assemblers and runtimes.
pub fn analyse(data: &Data) -> Option<Attribution<'_>> {
    // Attribution rows have no size: they are offline rows, not in `experiment`.
    let all: Vec<Rec> = data
        .all()
        .filter(|r| r.m.experiment == EXPERIMENT)
        .collect();
    // Without a run of `gemmlab attribute`, the speed findings alone.
    let mut a = match all.iter().map(|r| r.run).max() {
        None => Attribution::default(),
        Some(last) => {
            let rows: Vec<&Measurement> =
                all.iter().filter(|r| r.run == last).map(|r| r.m).collect();
            let owned: Vec<Measurement> = rows.iter().map(|m| (*m).clone()).collect();
            let (fronts, assemblers) = crate::attribution::axes(&owned);
            let arch = rows
                .iter()
                .find_map(|m| data::arch_of(m))
                .unwrap_or_default();
            let kernels = matrices(&rows, &fronts, &assemblers);
            let findings = register_findings(&kernels, &fronts, &assemblers, &arch);
            Attribution {
                arch,
                fronts,
                assemblers,
                kernels,
                findings,
            }
        }
    };
    a.findings.extend(speed_gaps(data));
    a.findings.extend(assembler_speeds(data));
    (!a.kernels.is_empty() || !a.findings.is_empty()).then_some(a)
}

/// Kernels that NVIDIA's two toolchains build with the same registers but run at
/// different speeds, with the clang OpenCL build of the same source from the same
/// compare run: it separates the OpenCL source from NVIDIA OpenCL's PTX and runtime.
fn speed_gaps(data: &Data) -> Vec<Finding> {
    let rows = data.experiment("compare");
    let Some(size) = rows.iter().map(|r| r.m.m).max() else {
        return Vec::new();
    };
    let find = |k: &str, t: Toolchain| {
        let at = |r: &&Rec| r.m.kernel == k && r.m.toolchain == t && r.m.m == size;
        rows.iter().rev().find(|r| at(r) && r.m.status.is_ok())
    };
    let kernels = distinct(rows.iter().map(|r| r.m.kernel.as_str()));
    (kernels.into_iter())
        .filter_map(|k| {
            let cu = find(k, Toolchain::Cuda)?;
            let (cl, ccl) = (
                find(k, Toolchain::OpenCl)?,
                find(k, Toolchain::ClangOpenCl)?,
            );
            // One run: ratios of speeds measured side by side.
            if cu.run != cl.run || cu.run != ccl.run {
                return None;
            }
            let registers = data::registers(cu.m).filter(|r| Some(*r) == data::registers(cl.m))?;
            let (cuda, opencl) = (data::gflops(cu.m)?, data::gflops(cl.m)?);
            let clang_opencl = data::gflops(ccl.m)?;
            let gap = stats::change(Some(opencl), Some(cuda))
                .filter(|g| !stats::is_same(*g) && *g < 0.0)?;
            let clang_gap = stats::change(Some(clang_opencl), Some(cuda)).unwrap_or(0.0);
            let kind = Kind::EqualRegistersSpeedGap {
                kernel: k.to_string(),
                size,
                registers,
                cuda,
                opencl,
                clang_opencl,
                gap,
                source_explains: !stats::is_same(clang_gap) && clang_gap < 0.0,
            };
            Some(finding(kind).weight(gap))
        })
        .collect()
}

/// Compare rows of one toolchain and size whose builds name two assemblers (the
/// same front end's PTX through a ptxas and through the driver's JIT, in two
/// runs): each kernel's ratio to cuBLAS under each, from its own run.
fn assembler_speeds(data: &Data) -> Vec<Finding> {
    let rows: Vec<&Measurement> = data
        .measured()
        .filter(|r| r.m.experiment == "compare" && r.m.status.is_ok() && r.m.vs_vendor.is_some())
        .map(|r| r.m)
        .collect();
    let groups = distinct(rows.iter().map(|m| (m.toolchain, m.m)));
    (groups.into_iter())
        .filter_map(|(toolchain, size)| {
            let of: Vec<&Measurement> = (rows.iter().copied())
                .filter(|m| m.toolchain == toolchain && m.m == size)
                .collect();
            let labels = distinct(of.iter().filter_map(|m| m.compiler.as_deref()));
            // Two builds that differ in the assembler alone: "clang 19.1.7 + ptxas 13.0"
            // and "clang 19.1.7 + CUDA driver JIT" (two NVRTC releases differ in both).
            let [a, b] = labels[..] else { return None };
            let front = |l: &str| l.split_once(" + ").map(|(f, _)| f.to_string());
            if front(a).is_none() || front(a) != front(b) {
                return None;
            }
            let under = |m: &Measurement, l: &str| m.compiler.as_deref() == Some(l);
            let kernels: Vec<AsmPair> = (of.iter().filter(|m| under(m, a)))
                .filter_map(|x| {
                    let same = |y: &&&Measurement| y.kernel == x.kernel && y.label == x.label;
                    let y = of.iter().find(|y| under(y, b) && same(y))?;
                    Some(AsmPair {
                        kernel: x.kernel.clone(),
                        registers: (data::registers(x), data::registers(y)),
                        vs_vendor: (x.vs_vendor?, y.vs_vendor?),
                    })
                })
                .collect();
            if kernels.is_empty() {
                return None;
            }
            let largest = (kernels.iter())
                .map(|k| (k.vs_vendor.1 / k.vs_vendor.0 - 1.0).abs())
                .fold(0.0, f64::max);
            let kind = Kind::AssemblerSpeed {
                toolchain,
                size,
                assemblers: (a.to_string(), b.to_string()),
                kernels,
                largest,
            };
            Some(finding(kind).weight(largest))
        })
        .collect()
}

/// Per kernel (in the report's order), per front end, per assembler: the row.
fn matrices<'a>(
    rows: &[&'a Measurement],
    fronts: &[Toolchain],
    assemblers: &[String],
) -> Vec<Matrix<'a>> {
    let mut names = distinct(rows.iter().map(|m| m.kernel.clone()));
    names.sort_by(|a, b| data::kernel_order(a, b));
    let row = |k: &str, f: Toolchain, a: &String| {
        let of =
            |m: &&&Measurement| m.kernel == k && m.toolchain == f && m.label.as_ref() == Some(a);
        rows.iter().find(of).copied()
    };
    (names.into_iter())
        .map(|kernel| Matrix {
            cells: (fronts.iter())
                .map(|f| assemblers.iter().map(|a| row(&kernel, *f, a)).collect())
                .collect(),
            kernel,
        })
        .collect()
}

/// For each pair of toolchains whose own builds differ in registers, the cause;
/// and the kernels on which every assembler agrees.
fn register_findings(
    kernels: &[Matrix],
    fronts: &[Toolchain],
    assemblers: &[String],
    arch: &str,
) -> Vec<Finding> {
    // The common assembler: the newest ptxas (the last column that is not the JIT).
    let common = assemblers
        .iter()
        .rposition(|a| a.starts_with("ptxas"))
        .filter(|&i| i > 0);
    let mut findings = Vec::new();
    let mut agree = Vec::new();
    for mx in kernels {
        let at = |f: Toolchain, a: usize| {
            let fi = fronts.iter().position(|x| *x == f)?;
            mx.cells[fi][a].and_then(data::registers)
        };
        // A toolchain's own build: its own assembler's, or for clang the common ptxas.
        let own = |f: Toolchain| match f.is_clang() {
            true => common.and_then(|c| at(f, c)),
            false => at(f, 0),
        };
        for (c, (a, b)) in common.iter().flat_map(|&c| PAIRS.map(|p| (c, p))) {
            let (Some(oa), Some(ob), Some(ca), Some(cb)) = (own(a), own(b), at(a, c), at(b, c))
            else {
                continue;
            };
            if oa == ob {
                continue;
            }
            let cause = match (ca == cb, ca as i64 - cb as i64 == oa as i64 - ob as i64) {
                (true, _) => Cause::Assembler,
                (false, true) => Cause::FrontEnd,
                (false, false) => Cause::Both,
            };
            let f = finding(Kind::Cause {
                kernel: mx.kernel.clone(),
                arch: arch.to_string(),
                a,
                b,
                own: (oa, ob),
                assembler: assemblers[c].clone(),
                common: (ca, cb),
                cause,
            })
            .weight(f64::from(oa.abs_diff(ob)) / f64::from(oa.max(ob).max(1)));
            // NVIDIA's pair leads; the clang pairs are details of it.
            findings.push(if (a, b) == PAIRS[0] { f } else { f.detail() });
        }
        // Do the assemblers (every ptxas and the JIT) agree on every front end's PTX?
        let cols: Vec<usize> = (1..assemblers.len()).collect();
        let same = fronts.iter().all(|f| {
            let v: Vec<Option<u32>> = cols.iter().map(|&a| at(*f, a)).collect();
            v.iter().flatten().all(|x| Some(*x) == v[0])
        });
        if same && cols.len() > 1 {
            agree.push(mx.kernel.clone());
        }
    }
    if !agree.is_empty() {
        let assemblers = assemblers.iter().filter(|a| *a != OWN).cloned().collect();
        let kind = Kind::AssemblersAgree {
            kernels: agree,
            arch: arch.to_string(),
            assemblers,
        };
        findings.push(finding(kind).detail());
    }
    findings
}
