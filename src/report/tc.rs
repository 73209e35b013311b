//! "Tensor cores: speed and accuracy": the tc family's rows next to cuBLAS, each
//! labelled with what it computes, and `gemmlab accuracy`'s errors against cuBLAS
//! SGEMM's on the same inputs with the FP32-accuracy gate.

use std::fmt::Write as _;

use crate::accuracy::Arithmetic;
use crate::analysis::tc::{Kind, Tc};
use crate::error::Result;

use super::data::toolchain_name as name;
use super::{md, Section, Words};

pub const TC: &str = "Tensor cores: speed and accuracy";

pub(crate) fn section(a: &Tc) -> Result<Section> {
    let mut s = format!("## {TC}\n\n");
    s.push_str(
        "The `tc` family runs `mma.sync` through inline PTX in both toolchains: DGEMM on the FP64 \
         tensor cores, and SGEMM from TF32 products. 3xTF32 splits every operand into a TF32 high \
         and low part and sums three products per step, with each step's tensor-core sum added to \
         FP32 accumulators (`PROMOTE_ACC`). 1xTF32 (`TF32_SINGLE=1`) keeps one product and is a \
         **lower precision** than FP32; its check uses TF32's limits. Ratios are to cuBLAS SGEMM \
         (f32) or DGEMM (f64) in the same run.\n\n",
    );
    speed_table(&mut s, a);
    accuracy_table(&mut s, a);
    let mut sec = Section {
        title: TC.into(),
        markdown: s,
        findings: Vec::new(),
    };
    sec.show(&a.findings);
    Ok(sec)
}

fn speed_table(s: &mut String, a: &Tc) {
    if a.speed.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = a
        .speed
        .iter()
        .map(|r| {
            vec![
                name(r.m.toolchain).to_string(),
                r.m.size_label(),
                r.m.precision().to_string(),
                r.arithmetic.to_string(),
                switches(r.m),
                md::gflops_spread(Some(r.m)),
                md::times(r.ratio),
                md::registers(Some(r.m)),
                md::spills(Some(r.m)),
                r.mix.as_ref().map_or(md::MISSING.into(), |x| {
                    format!("{} / {} / {}", x.mma, x.cp_async, x.conversions)
                }),
                r.m.config.describe_params(),
            ]
        })
        .collect();
    let header = md::h(&[
        "toolchain",
        "size",
        "precision",
        "computes",
        "switches",
        "GFLOP/s",
        "x cuBLAS",
        "registers",
        "spill st/ld B",
        "PTX mma / cp.async / cvt",
        "configuration",
    ]);
    s.push_str("### Speed\n\n");
    s.push_str(
        "PTX counts are static (instructions as written) in the listing the run kept (`--keep-ptx`); \
         cvt includes the TF32 splits' cvt.rna.tf32.\n\n",
    );
    s.push_str(&md::table(&header, &rows));
    s.push('\n');
}

/// The switches a row set against the published kernel, "published" where none.
fn switches(m: &crate::results::Measurement) -> String {
    let mut set: Vec<String> = m
        .hints
        .switches
        .iter()
        .map(|(n, on)| format!("{n}={}", u8::from(*on)))
        .collect();
    if m.hints.fast_math {
        set.push("fast math".into());
    }
    if let Some(r) = m.hints.max_registers {
        set.push(format!("--max-registers {r}"));
    }
    if set.is_empty() {
        "published".into()
    } else {
        set.join(" ")
    }
}

fn accuracy_table(s: &mut String, a: &Tc) {
    if a.accuracy.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "### Accuracy against cuBLAS SGEMM (`gemmlab accuracy`)\n\n\
         Each result's largest error against the f64 reference of the same inputs, as a multiple of \
         cuBLAS SGEMM's; cuBLAS SGEMM's own in absolute terms and in units of u32 (|A||B|)ij. \
         3xTF32 counts as FP32-accurate where the multiple is at most {}; a larger one tells a \
         result apart from FP32. \"FP32 check\": whether FP32's full check (relative Frobenius \
         error at most 1e-4) passes it.\n",
        crate::accuracy::FP32_FACTOR
    );
    let header = md::h(&[
        "toolchain",
        "size",
        "inputs",
        "kernel",
        "switches",
        "computes",
        "largest error",
        "x cuBLAS SGEMM",
        "FP32 check",
    ]);
    let rows: Vec<Vec<String>> = a
        .accuracy
        .iter()
        .map(|r| {
            let base = a
                .accuracy
                .iter()
                .find(|b| b.kernel == "cublas" && b.point() == r.point())
                .and_then(|b| b.errors);
            let (err, times, check) = match r.errors {
                Some(e) => (
                    if r.kernel == "cublas" {
                        format!("{:.2e} ({:.1} u)", e.max_abs, e.over_unit_roundoff)
                    } else {
                        format!("{:.2e}", e.max_abs)
                    },
                    md::times(base.map(|b| e.max_abs / b.max_abs)),
                    if e.f32_full_check { "passes" } else { "fails" }.to_string(),
                ),
                None => (
                    md::escape(&md::short_reason(&r.status)),
                    md::MISSING.into(),
                    md::MISSING.into(),
                ),
            };
            vec![
                r.toolchain.clone(),
                format!("{}x{}x{}", r.m, r.n, r.k),
                r.inputs.name().into(),
                r.kernel.clone(),
                r.hints.clone(),
                r.arithmetic.label().into(),
                err,
                times,
                check,
            ]
        })
        .collect();
    s.push_str(&md::table(&header, &rows));
    s.push('\n');
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
        Kind::TcSpeed {
            toolchain,
            arithmetic,
            size,
            gflops,
            ratio,
        } => Words {
            text: format!(
                "**tc on {} ({arithmetic})** reaches {} GFLOP/s at {size}: {} cuBLAS in the same run.",
                name(*toolchain),
                md::speed(*gflops),
                md::times(Some(*ratio))
            ),
            short: format!(
                "tc on {} ({arithmetic}): {} cuBLAS at {size}.",
                name(*toolchain),
                md::times(Some(*ratio))
            ),
        },
        Kind::TcGate {
            kernel,
            hints,
            arithmetic,
            points,
            holding,
            lowest,
            highest,
            fp32_factor,
        } => {
            let what = match arithmetic {
                Arithmetic::Tf32x3 if holding == points => "is FP32-accurate".to_string(),
                Arithmetic::Tf32x3 => format!(
                    "is FP32-accurate at {holding} of {}",
                    md::plural(*points, "point")
                ),
                _ if holding == points => "is told apart from FP32".to_string(),
                _ => format!("is told apart from FP32 at {holding} of {}", md::plural(*points, "point")),
            };
            let every = if holding == points {
                format!(" at every one of {}", md::plural(*points, "point"))
            } else {
                String::new()
            };
            Words {
                text: format!(
                    "**{kernel} {hints} ({})** {what}{every}: its largest error is {}-{} cuBLAS SGEMM's on the same inputs (gate: within {fp32_factor}x).",
                    arithmetic.label(),
                    md::times(Some(*lowest)),
                    md::times(Some(*highest))
                ),
                short: format!(
                    "{kernel} {hints} ({}) {what}{every}: {}-{} cuBLAS SGEMM's error.",
                    arithmetic.label(),
                    md::times(Some(*lowest)),
                    md::times(Some(*highest))
                ),
            }
        }
    }
}
