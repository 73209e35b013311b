//! Front end, assembler or runtime: the `gemmlab attribute` matrices (each
//! front end's PTX through each assembler) and which one explains each
//! difference between two toolchains' own builds.

use std::fmt::Write as _;

use crate::analysis::attribution::{AsmPair, Attribution, Cause, Kind};

use super::data::toolchain_name as name;
use super::{md, Section, Words};

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
        let mut sec = Section {
            title: ATTRIBUTION.into(),
            markdown: s,
            ..Default::default()
        };
        sec.show(&a.findings);
        return sec;
    }
    let _ = writeln!(
        s,
        "Each front end's PTX of each kernel at its published defaults, assembled for {} by each \
         assembler (`gemmlab attribute`): registers, with spill stores where there are any. \
         \"own\" is the toolchain's own build (NVRTC's built-in ptxas, NVIDIA OpenCL's driver); \
         clang has none and is assembled by a ptxas. A difference between two toolchains that \
         stays when both PTX go through one ptxas comes from the front ends; one that disappears \
         comes from the assemblers. Where NVIDIA's two toolchains use equal registers but run at \
         different speeds, clang's build of the same OpenCL source, run on the CUDA driver in the \
         same compare run, tells the source apart from NVIDIA OpenCL's PTX and runtime.\n",
        a.arch
    );
    if !a.findings.is_empty() {
        s.push_str("**Where the differences come from.**\n\n");
        for f in &a.findings {
            if let super::Kind::Attribution(k) = &f.kind {
                let _ = writeln!(s, "- {}", words(k).text);
            }
        }
        s.push('\n');
    }
    let mut header = vec!["kernel".to_string(), "front end".to_string()];
    header.extend(a.assemblers.iter().cloned());
    let mut rows = Vec::new();
    for mx in &a.kernels {
        for (fi, f) in a.fronts.iter().enumerate() {
            let cells = &mx.cells[fi];
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let mut r = vec![mx.kernel.clone(), name(*f).to_string()];
            r.extend(cells.iter().map(|m| match m {
                None => md::MISSING.to_string(),
                Some(m) if m.resources.is_none() => m.status.label().to_string(),
                Some(m) => {
                    let spill = super::data::spill_bytes(m).filter(|b| *b > 0);
                    let regs = md::registers(Some(m));
                    spill.map_or(regs.clone(), |b| format!("{regs} ({b} B spill)"))
                }
            }));
            rows.push(r);
        }
    }
    s.push_str(&md::table(&header, &rows));
    s.push('\n');
    let mut sec = Section {
        title: ATTRIBUTION.into(),
        markdown: s,
        ..Default::default()
    };
    sec.show(&a.findings);
    sec
}

/// Per kernel: registers and x cuBLAS under each of two assemblers.
fn assembler_table(kernels: &[AsmPair], (a, b): &(String, String)) -> String {
    let head = [
        "kernel".to_string(),
        format!("registers, {a}"),
        format!("registers, {b}"),
        format!("x cuBLAS, {a}"),
        format!("x cuBLAS, {b}"),
        "change".to_string(),
    ];
    let rows: Vec<Vec<String>> = (kernels.iter())
        .map(|k| {
            let r = |v: Option<u32>| md::or_unknown(v);
            vec![
                k.kernel.clone(),
                r(k.registers.0),
                r(k.registers.1),
                md::times(Some(k.vs_vendor.0)),
                md::times(Some(k.vs_vendor.1)),
                md::change(Some(k.vs_vendor.1), Some(k.vs_vendor.0)),
            ]
        })
        .collect();
    format!("{}\n", md::table(&head, &rows))
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
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
            Words {
                text: format!(
                    "{kernel} on {arch}: {na} builds it with {} registers, {nb} with {}; through \
                     {assembler} their PTX takes {} and {}, so the difference comes from {why}.",
                    own.0, own.1, common.0, common.1
                ),
                short: format!(
                    "{kernel}: {na} {} vs {nb} {} registers, from {why}",
                    own.0, own.1
                ),
            }
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
            let verdict = if *source_explains {
                "slower than CUDA too, so the OpenCL source itself accounts for part of the gap"
            } else {
                "as fast as CUDA, so the gap is not in the OpenCL source: it is NVIDIA OpenCL's front end (its PTX) or its runtime"
            };
            Words {
                text: format!(
                    "{kernel} at {size}: CUDA and OpenCL both use {registers} registers, yet OpenCL runs at \
                     {} against CUDA's {} ({}); the same OpenCL source through clang, ptxas and the CUDA \
                     driver runs at {}, {verdict}.",
                    md::speed(*opencl),
                    md::speed(*cuda),
                    md::change(Some(1.0 + gap), Some(1.0)),
                    md::speed(*clang_opencl)
                ),
                short: format!(
                    "{kernel}: OpenCL {} at equal registers; clang's OpenCL build {}",
                    md::change(Some(1.0 + gap), Some(1.0)),
                    if *source_explains { "slower too" } else { "as fast as CUDA" }
                ),
            }
        }
        Kind::AssemblerSpeed {
            toolchain,
            size,
            assemblers: (a, b),
            kernels,
            largest,
        } => {
            let same = kernels.iter().all(|k| k.registers.0 == k.registers.1);
            let regs = if same {
                "the same registers for every kernel".to_string()
            } else {
                let n = kernels
                    .iter()
                    .filter(|k| k.registers.0 != k.registers.1)
                    .count();
                format!("different registers for {}", md::plural(n, "kernel"))
            };
            let speed = if crate::analysis::stats::is_same(*largest) {
                format!(
                    "their speeds against cuBLAS differ by {} at most: the same",
                    md::pct(Some(*largest))
                )
            } else {
                format!(
                    "their speeds against cuBLAS differ by up to {}",
                    md::pct(Some(*largest))
                )
            };
            Words {
                text: format!(
                    "**Assemblers, by speed ({}, {size})**: the same PTX of {} through {a} and through {b}, each run next to cuBLAS, gives {regs}, and {speed}.",
                    name(*toolchain),
                    md::plural(kernels.len(), "kernel")
                ),
                short: format!("{}: {a} and {b} agree within {}", name(*toolchain), md::pct(Some(*largest))),
            }
        }
        Kind::AssemblersAgree {
            kernels,
            arch,
            assemblers,
        } => Words {
            text: format!(
                "On {arch}, {} agree on every front end's PTX of {}: there the assembler decides \
                 nothing.",
                md::join_and(assemblers),
                md::join_and(kernels),
            ),
            short: format!("assemblers agree on {} of the kernels", kernels.len()),
        },
    }
}
