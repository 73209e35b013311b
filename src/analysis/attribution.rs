//! Where toolchains differ, from `gemmlab attribute` rows: per kernel the
//! registers of each front end's PTX through each assembler, and for each pair
//! of toolchains whose own builds differ, whether the front ends (the
//! difference stays through one common assembler) or the assemblers (it
//! disappears) account for it. Compare runs add the speeds of the same builds.

use crate::backend::Toolchain::{self, ClangOpenCl, Cuda, OpenCl};
use crate::experiment::attribution::{EXPERIMENT, OWN};
use crate::results::Measurement as M;

use super::data::{self, gflops, registers as regs, Rec};
use super::stats::{change, distinct, is_same};
use super::{Data, Finding, Topic};

/// Why two toolchains' own builds of a kernel use different registers: through
/// one common assembler their PTX differs by the same registers (the front
/// ends), takes the same (the assemblers), or differs by another amount (both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    FrontEnd,
    Assembler,
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
    /// OpenCL yet OpenCL runs `gap` slower; the same OpenCL source through
    /// clang, ptxas and the CUDA driver runs at `clang_opencl` (GFLOP/s, one
    /// run): where that is CUDA's speed, the source is not the cause.
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
    /// One front end's PTX of each kernel through two assemblers, each in its
    /// own compare run (`GEMMLAB_ASSEMBLER`) next to cuBLAS; `largest` the
    /// largest relative change of the ratio to cuBLAS.
    AssemblerSpeed {
        toolchain: Toolchain,
        size: usize,
        assemblers: (String, String),
        kernels: Vec<AsmPair>,
        largest: f64,
    },
    /// Every assembler gives every front end's PTX of `kernels` the same registers.
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
    pub cells: Vec<Vec<Option<&'a M>>>,
}

#[derive(Default)]
pub struct Attribution<'a> {
    pub arch: String,
    pub fronts: Vec<Toolchain>,
    pub assemblers: Vec<String>,
    pub kernels: Vec<Matrix<'a>>,
    pub findings: Vec<Finding>,
}

fn finding(kind: Kind) -> Finding {
    Finding::new(Topic::Attribution, super::Kind::Attribution(kind))
}

/// The newest run of `gemmlab attribute` (one architecture), and what compare
/// runs say of assemblers and runtimes.
pub fn analyse(data: &Data) -> Option<Attribution<'_>> {
    // Attribution rows have no size: they are offline rows, not in `experiment`.
    let ours = |r: &Rec| r.m.experiment == EXPERIMENT;
    let all: Vec<Rec> = data.all().filter(ours).collect();
    let mut a = Attribution::default();
    if let Some(last) = all.iter().map(|r| r.run).max() {
        let rows: Vec<&M> = all.iter().filter(|r| r.run == last).map(|r| r.m).collect();
        let owned: Vec<M> = rows.iter().map(|m| (*m).clone()).collect();
        (a.fronts, a.assemblers) = crate::experiment::attribution::axes(&owned);
        let arch = rows.iter().find_map(|m| data::arch_of(m));
        a.arch = arch.unwrap_or_default();
        let mut names = distinct(rows.iter().map(|m| m.kernel.clone()));
        names.sort_by(|a, b| data::kernel_order(a, b));
        let row = |k: &str, f, a: &String| {
            let of = |m: &&M| m.kernel == k && m.toolchain == f && m.label.as_ref() == Some(a);
            rows.iter().copied().find(of)
        };
        let front = |k: &str, f: &Toolchain| a.assemblers.iter().map(|x| row(k, *f, x)).collect();
        a.kernels = (names.into_iter())
            .map(|kernel| Matrix {
                cells: a.fronts.iter().map(|f| front(&kernel, f)).collect(),
                kernel,
            })
            .collect();
        a.findings = register_findings(&a);
    }
    a.findings.extend(speed_gaps(data));
    a.findings.extend(assembler_speeds(data));
    (!a.kernels.is_empty() || !a.findings.is_empty()).then_some(a)
}

/// Kernels that NVIDIA's two toolchains build with the same registers but run
/// at different speeds, with the clang OpenCL build of the same source from the
/// same compare run: it tells the OpenCL source from NVIDIA OpenCL's PTX and runtime.
fn speed_gaps(data: &Data) -> Vec<Finding> {
    let rows = data.experiment("compare");
    let size = rows.iter().map(|r| r.m.m).max().unwrap_or(0);
    let find = |k: &str, t| {
        let at = |r: &&Rec| r.m.kernel == k && r.m.toolchain == t && r.m.m == size;
        rows.iter().rev().find(|r| at(r) && r.m.status.is_ok())
    };
    let slower = |x, y| change(Some(x), Some(y)).filter(|g| !is_same(*g) && *g < 0.0);
    (distinct(rows.iter().map(|r| r.m.kernel.as_str())).into_iter())
        .filter_map(|k| {
            let rs = [Cuda, OpenCl, ClangOpenCl].map(|t| find(k, t));
            let [cu, cl, ccl] = [rs[0]?, rs[1]?, rs[2]?];
            // One run: ratios of speeds measured side by side.
            let one_run = cu.run == cl.run && cu.run == ccl.run;
            let registers = regs(cu.m).filter(|r| one_run && Some(*r) == regs(cl.m))?;
            let [cuda, opencl, clang_opencl] = [gflops(cu.m)?, gflops(cl.m)?, gflops(ccl.m)?];
            let gap = slower(opencl, cuda)?;
            let kind = Kind::EqualRegistersSpeedGap {
                kernel: k.to_string(),
                size,
                registers,
                cuda,
                opencl,
                clang_opencl,
                gap,
                source_explains: slower(clang_opencl, cuda).is_some(),
            };
            Some(finding(kind).weight(gap))
        })
        .collect()
}

/// Compare rows of one toolchain and size whose builds name two assemblers (the
/// same front end's PTX through a ptxas and through the driver's JIT, in two
/// runs): each kernel's ratio to cuBLAS under each, from its own run.
fn assembler_speeds(data: &Data) -> Vec<Finding> {
    let timed = |m: &&M| m.experiment == "compare" && m.status.is_ok() && m.vs_vendor.is_some();
    let rows: Vec<&M> = data.measured().map(|r| r.m).filter(timed).collect();
    (distinct(rows.iter().map(|m| (m.toolchain, m.m))).into_iter())
        .filter_map(|(toolchain, size)| {
            let of = |m: &&&M| m.toolchain == toolchain && m.m == size;
            let of: Vec<&M> = rows.iter().filter(of).copied().collect();
            // Builds that differ in the assembler alone: "clang 19.1.7 + ptxas 13.0" and
            // "clang 19.1.7 + CUDA driver JIT" (two NVRTC releases differ in both).
            let [a, b] = distinct(of.iter().filter_map(|m| m.compiler.as_deref()))[..] else {
                return None;
            };
            let front = |l: &str| l.split_once(" + ").map(|(f, _)| f.to_string());
            let under = |m: &&&M, l| m.compiler.as_deref() == Some(l);
            let kernels: Vec<AsmPair> = (of.iter().filter(|m| under(m, a)))
                .filter_map(|x| {
                    let same = |y: &&&M| y.kernel == x.kernel && y.label == x.label;
                    let y = of.iter().filter(same).find(|y| under(y, b))?;
                    Some(AsmPair {
                        kernel: x.kernel.clone(),
                        registers: (regs(x), regs(y)),
                        vs_vendor: (x.vs_vendor?, y.vs_vendor?),
                    })
                })
                .collect();
            if front(a).is_none() || front(a) != front(b) || kernels.is_empty() {
                return None;
            }
            let change = |k: &AsmPair| (k.vs_vendor.1 / k.vs_vendor.0 - 1.0).abs();
            let largest = kernels.iter().map(change).fold(0.0, f64::max);
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

/// For each pair of toolchains whose own builds differ in registers, the cause;
/// and the kernels on which every assembler agrees.
fn register_findings(x: &Attribution) -> Vec<Finding> {
    let (fronts, assemblers, arch) = (&x.fronts, &x.assemblers, &x.arch);
    // The common assembler: the newest ptxas (the last column that is not the JIT).
    let common = assemblers.iter().rposition(|a| a.starts_with("ptxas"));
    let common = common.filter(|&i| i > 0);
    let mut findings: Vec<Finding> = Vec::new();
    for (mx, c) in x.kernels.iter().flat_map(|mx| common.map(|c| (mx, c))) {
        let at = |f, a: usize| mx.cells[fronts.iter().position(|x| *x == f)?][a].and_then(regs);
        // A toolchain's own build: its own assembler's, or for clang the common ptxas.
        let own = |f: Toolchain| at(f, if f.is_clang() { c } else { 0 });
        findings.extend(
            data::toolchain_pairs(fronts)
                .into_iter()
                .filter_map(|[a, b]| {
                    let [oa, ob, ca, cb] = [own(a)?, own(b)?, at(a, c)?, at(b, c)?];
                    let cause = match (ca == cb, ca as i64 - cb as i64 == oa as i64 - ob as i64) {
                        _ if oa == ob => return None,
                        (true, _) => Cause::Assembler,
                        (false, true) => Cause::FrontEnd,
                        (false, false) => Cause::Both,
                    };
                    let f = finding(Kind::Cause {
                        kernel: mx.kernel.clone(),
                        arch: arch.clone(),
                        a,
                        b,
                        own: (oa, ob),
                        assembler: assemblers[c].clone(),
                        common: (ca, cb),
                        cause,
                    })
                    .weight(f64::from(oa.abs_diff(ob)) / f64::from(oa.max(ob).max(1)));
                    // NVIDIA's pair leads; the clang pairs are details of it.
                    Some(if [a, b] == [Cuda, OpenCl] {
                        f
                    } else {
                        f.detail()
                    })
                }),
        );
    }
    // Do the assemblers (every ptxas and the JIT) agree on every front end's PTX?
    let same = |row: &Vec<Option<&M>>| {
        let v: Vec<Option<u32>> = row[1..].iter().map(|m| m.and_then(regs)).collect();
        v.iter().flatten().all(|x| Some(*x) == v[0])
    };
    let agree = x.kernels.iter().filter(|mx| mx.cells.iter().all(same));
    let kernels: Vec<String> = agree.map(|mx| mx.kernel.clone()).collect();
    if assemblers.len() > 2 && !kernels.is_empty() {
        let kind = Kind::AssemblersAgree {
            kernels,
            arch: arch.clone(),
            assemblers: assemblers.iter().filter(|a| *a != OWN).cloned().collect(),
        };
        findings.push(finding(kind).detail());
    }
    findings
}
