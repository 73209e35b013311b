//! Front end, assembler or runtime: the `gemmlab attribute` matrices (each
//! front end's PTX through each assembler) and which one explains each
//! difference between two toolchains' own builds.

use std::fmt::Write as _;

use crate::analysis::attribution::{Attribution, Cause, Kind};
use crate::analysis::stats::is_same;

use super::data::{spill_bytes, toolchain_name as name};
use super::md::{self, join_and, plural};
use super::{Section, Words};
use crate::results::Measurement as M;

pub const ATTRIBUTION: &str = "Front end, assembler or runtime: attribution";

pub(crate) fn section(a: Option<&Attribution>) -> Section {
    let Some(a) = a else {
        return Section::default();
    };
    let mut s = format!("## {ATTRIBUTION}\n\n");
    // Without matrices, compare runs alone: the assemblers' and runtimes' share of speed.
    let kinds = a.findings.iter().filter_map(|f| match &f.kind {
        super::Kind::Attribution(k) if a.kernels.is_empty() => Some(k),
        _ => None,
    });
    for k in kinds {
        let _ = writeln!(s, "{}\n", words(k).text);
        if let Kind::AssemblerSpeed {
            kernels,
            assemblers: (x, y),
            ..
        } = k
        {
            let head =
                format!("kernel|registers, {x}|registers, {y}|x cuBLAS, {x}|x cuBLAS, {y}|change");
            let head: Vec<String> = head.split('|').map(String::from).collect();
            let rows: Vec<Vec<String>> = (kernels.iter())
                .map(|k| {
                    let (r, (v0, v1)) = (k.registers, k.vs_vendor);
                    let [t0, t1] = [v0, v1].map(|v| md::times(Some(v)));
                    let change = md::change(Some(v1), Some(v0));
                    let [r0, r1] = [r.0, r.1].map(md::or_unknown);
                    vec![k.kernel.clone(), r0, r1, t0, t1, change]
                })
                .collect();
            let _ = writeln!(s, "{}", md::table(&head, &rows));
        }
    }
    if !a.kernels.is_empty() {
        let arch = &a.arch;
        let _ = writeln!(s, "Registers (with spill bytes where there are any) of each front end's PTX of each kernel at its published defaults, assembled for {arch} by each assembler (`gemmlab attribute`); \"own\" is the toolchain's own build (NVRTC's built-in ptxas, NVIDIA OpenCL's driver); clang has none, its PTX goes through a ptxas. A difference between two toolchains that stays through one ptxas comes from the front ends, one that disappears from the assemblers; where NVIDIA's two toolchains use equal registers but run at different speeds, clang's build of the same OpenCL source in the same compare run tells the source from NVIDIA OpenCL's PTX and runtime. The verdicts are under [All findings](#all-findings).\n");
        let header = [md::h(&["kernel", "front end"]), a.assemblers.clone()].concat();
        let cell = |m: &Option<&M>| match *m {
            None => md::MISSING.to_string(),
            Some(m) if m.resources.is_none() => m.status.label().to_string(),
            Some(m) => match spill_bytes(m).filter(|b| *b > 0) {
                Some(b) => format!("{} ({b} B spill)", md::registers(Some(m))),
                None => md::registers(Some(m)),
            },
        };
        let rows: Vec<Vec<String>> = (a.kernels.iter())
            .flat_map(|mx| a.fronts.iter().zip(&mx.cells).map(move |r| (mx, r)))
            .filter(|(_, (_, cells))| cells.iter().any(Option::is_some))
            .map(|(mx, (f, cells))| {
                let lead = [mx.kernel.clone(), name(*f).to_string()];
                lead.into_iter().chain(cells.iter().map(cell)).collect()
            })
            .collect();
        let _ = writeln!(s, "{}", md::table(&header, &rows));
    }
    Section::of(ATTRIBUTION, s, &a.findings)
}

pub(crate) fn words(k: &Kind) -> Words {
    let (text, short) = match k {
        Kind::Cause {
            kernel,
            arch,
            a,
            b,
            own: (oa, ob),
            assembler,
            common: (ca, cb),
            cause,
        } => {
            let (na, nb) = (name(*a), name(*b));
            let why = match cause {
                Cause::FrontEnd => "the front ends",
                Cause::Assembler => "the assemblers",
                Cause::Both => "both the front ends and the assemblers",
            };
            (
                format!("{kernel} on {arch}: {na} builds it with {oa} registers, {nb} with {ob}; through {assembler} their PTX takes {ca} and {cb}, so the difference comes from {why}."),
                format!("{kernel}: {na} {oa} vs {nb} {ob} registers, from {why}"),
            )
        }
        Kind::EqualRegistersSpeedGap {
            kernel,
            size,
            registers,
            cuda,
            opencl,
            clang_opencl,
            gap,
            source_explains,
        } => {
            let (verdict, brief) = match source_explains {
                true => ("slower than CUDA too, so the OpenCL source itself accounts for part of the gap", "slower too"),
                false => ("as fast as CUDA, so the gap is not in the OpenCL source: it is NVIDIA OpenCL's front end (its PTX) or its runtime", "as fast as CUDA"),
            };
            let change = md::change(Some(1.0 + gap), Some(1.0));
            let [cl, cu, clang] = [opencl, cuda, clang_opencl].map(|v| md::speed(*v));
            (
                format!("{kernel} at {size}: CUDA and OpenCL both use {registers} registers, yet OpenCL runs at {cl} against CUDA's {cu} ({change}); the same OpenCL source through clang, ptxas and the CUDA driver runs at {clang}, {verdict}."),
                format!("{kernel}: OpenCL {change} at equal registers; clang's OpenCL build {brief}"),
            )
        }
        Kind::AssemblerSpeed {
            toolchain,
            size,
            assemblers: (a, b),
            kernels,
            largest,
        } => {
            let regs = match kernels.iter().filter(|k| k.registers.0 != k.registers.1).count() {
                0 => "the same registers for every kernel".to_string(),
                n => format!("different registers for {}", plural(n, "kernel")),
            };
            let (pct, tc) = (md::pct(Some(*largest)), name(*toolchain));
            let n = plural(kernels.len(), "kernel");
            let speed = match is_same(*largest) {
                true => format!("their speeds against cuBLAS differ by {pct} at most: the same"),
                false => format!("their speeds against cuBLAS differ by up to {pct}"),
            };
            (
                format!("**Assemblers, by speed ({tc}, {size})**: the same PTX of {n} through {a} and through {b}, each run next to cuBLAS, gives {regs}, and {speed}."),
                format!("{tc}: {a} and {b} agree within {pct}"),
            )
        }
        Kind::AssemblersAgree {
            kernels,
            arch,
            assemblers,
        } => (
            format!("On {arch}, {} agree on every front end's PTX of {}: there the assembler decides nothing.", join_and(assemblers), join_and(kernels)),
            format!("assemblers agree on {} of the kernels", kernels.len()),
        ),
    };
    Words { text, short }
}
