//! Front end, assembler or runtime: the `gemmlab attribute` matrices (each
//! front end's PTX through each assembler) and which one explains each
//! difference between two toolchains' own builds.

use std::fmt::Write as _;

use crate::analysis::attribution::{AsmPair, Attribution, Cause, Kind};

use super::data::toolchain_name as name;
use super::{md, Section, Words};
use crate::results::Measurement;

pub const ATTRIBUTION: &str = "Front end, assembler or runtime: attribution";

pub(crate) fn section(a: Option<&Attribution>) -> Section {
    let Some(a) = a else {
        return Section::default();
    };
    let mut s = format!("## {ATTRIBUTION}\n\n");
    if a.kernels.is_empty() {
        // Compare runs alone: the assemblers' and runtimes' share of speed.
        for f in &a.findings {
            if let super::Kind::Attribution(k) = &f.kind {
                let _ = writeln!(s, "{}\n", words(k).text);
                if let Kind::AssemblerSpeed {
                    kernels,
                    assemblers,
                    ..
                } = k
                {
                    s.push_str(&assembler_table(kernels, assemblers));
                }
            }
        }
    } else {
        let _ = writeln!(
            s,
            "Each front end's PTX of each kernel at its published defaults, assembled for {} by each \
             assembler (`gemmlab attribute`): registers, with spill stores where there are any. \
             \"own\" is the toolchain's own build (NVRTC's built-in ptxas, NVIDIA OpenCL's driver); \
             clang has none and is assembled by a ptxas. A difference between two toolchains that \
             stays when both PTX go through one ptxas comes from the front ends; one that disappears \
             comes from the assemblers. Where NVIDIA's two toolchains use equal registers but run at \
             different speeds, clang's build of the same OpenCL source, run on the CUDA driver in the \
             same compare run, tells the source apart from NVIDIA OpenCL's PTX and runtime. Which one \
             explains each difference is under [All findings](#all-findings).\n",
            a.arch
        );
        let mut header = md::h(&["kernel", "front end"]);
        header.extend(a.assemblers.iter().cloned());
        let rows: Vec<Vec<String>> = (a.kernels.iter())
            .flat_map(|mx| a.fronts.iter().zip(&mx.cells).map(move |(f, c)| (mx, f, c)))
            .filter(|(_, _, cells)| cells.iter().any(Option::is_some))
            .map(|(mx, f, cells)| {
                let mut r = vec![mx.kernel.clone(), name(*f).to_string()];
                r.extend(cells.iter().map(|m| registers(*m)));
                r
            })
            .collect();
        let _ = writeln!(s, "{}", md::table(&header, &rows));
    }
    let mut sec = Section {
        title: ATTRIBUTION.into(),
        markdown: s,
        ..Default::default()
    };
    sec.show(&a.findings);
    sec
}

/// A matrix cell: registers, with the spill bytes where there are any.
fn registers(m: Option<&Measurement>) -> String {
    match m {
        None => md::MISSING.to_string(),
        Some(m) if m.resources.is_none() => m.status.label().to_string(),
        Some(m) => {
            let regs = md::registers(Some(m));
            match super::data::spill_bytes(m).filter(|b| *b > 0) {
                Some(b) => format!("{regs} ({b} B spill)"),
                None => regs,
            }
        }
    }
}

/// Per kernel: registers and x cuBLAS under each of two assemblers.
fn assembler_table(kernels: &[AsmPair], (a, b): &(String, String)) -> String {
    let mut head = md::h(&["kernel"]);
    head.extend([a, b].map(|x| format!("registers, {x}")));
    head.extend([a, b].map(|x| format!("x cuBLAS, {x}")));
    head.push("change".into());
    let rows: Vec<Vec<String>> = (kernels.iter())
        .map(|k| {
            let (r, v) = (k.registers, k.vs_vendor);
            vec![
                k.kernel.clone(),
                md::or_unknown(r.0),
                md::or_unknown(r.1),
                md::times(Some(v.0)),
                md::times(Some(v.1)),
                md::change(Some(v.1), Some(v.0)),
            ]
        })
        .collect();
    format!("{}\n", md::table(&head, &rows))
}

pub(crate) fn words(k: &Kind) -> Words {
    let (text, short) = match k {
        Kind::Cause {
            kernel,
            arch,
            a,
            b,
            own,
            assembler,
            common,
            cause,
        } => {
            let (na, nb) = (name(*a), name(*b));
            let why = match cause {
                Cause::FrontEnd => "the front ends",
                Cause::Assembler => "the assemblers",
                Cause::Both => "both the front ends and the assemblers",
            };
            let (o, c) = (own, common);
            (
                format!(
                    "{kernel} on {arch}: {na} builds it with {} registers, {nb} with {}; through \
                     {assembler} their PTX takes {} and {}, so the difference comes from {why}.",
                    o.0, o.1, c.0, c.1
                ),
                format!(
                    "{kernel}: {na} {} vs {nb} {} registers, from {why}",
                    o.0, o.1
                ),
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
            let (verdict, brief) = if *source_explains {
                ("slower than CUDA too, so the OpenCL source itself accounts for part of the gap", "slower too")
            } else {
                ("as fast as CUDA, so the gap is not in the OpenCL source: it is NVIDIA OpenCL's front end (its PTX) or its runtime", "as fast as CUDA")
            };
            let change = md::change(Some(1.0 + gap), Some(1.0));
            let (cl, cu, clang) = (
                md::speed(*opencl),
                md::speed(*cuda),
                md::speed(*clang_opencl),
            );
            (
                format!(
                    "{kernel} at {size}: CUDA and OpenCL both use {registers} registers, yet OpenCL runs at \
                     {cl} against CUDA's {cu} ({change}); the same OpenCL source through clang, ptxas and \
                     the CUDA driver runs at {clang}, {verdict}."
                ),
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
            let differ = kernels
                .iter()
                .filter(|k| k.registers.0 != k.registers.1)
                .count();
            let regs = match differ {
                0 => "the same registers for every kernel".to_string(),
                n => format!("different registers for {}", md::plural(n, "kernel")),
            };
            let (pct, tc) = (md::pct(Some(*largest)), name(*toolchain));
            let speed = if crate::analysis::stats::is_same(*largest) {
                format!("their speeds against cuBLAS differ by {pct} at most: the same")
            } else {
                format!("their speeds against cuBLAS differ by up to {pct}")
            };
            let n = md::plural(kernels.len(), "kernel");
            (
                format!(
                    "**Assemblers, by speed ({tc}, {size})**: the same PTX of {n} through {a} and \
                     through {b}, each run next to cuBLAS, gives {regs}, and {speed}."
                ),
                format!("{tc}: {a} and {b} agree within {pct}"),
            )
        }
        Kind::AssemblersAgree {
            kernels,
            arch,
            assemblers,
        } => (
            format!(
                "On {arch}, {} agree on every front end's PTX of {}: there the assembler decides \
                 nothing.",
                md::join_and(assemblers),
                md::join_and(kernels),
            ),
            format!("assemblers agree on {} of the kernels", kernels.len()),
        ),
    };
    Words { text, short }
}
