//! "Tensor cores: speed and accuracy": the tc family next to cuBLAS, and the accuracy gate.

use std::fmt::Write as _;

use crate::analysis::tc::{Kind, SpeedRow, Tc};
use crate::error::Result;
use crate::gemm::accuracy::{Arithmetic, Row, FP32_FACTOR};
use crate::results::Measurement;

use super::data::{self, toolchain_name as name};
use super::{md, Section, Words};

pub const TC: &str = "Tensor cores: speed and accuracy";

type Speed = (&'static str, fn(&SpeedRow) -> String);

const SPEED: [Speed; 11] = [
    ("toolchain", |r| name(r.m.toolchain).into()),
    ("size", |r| r.m.size_label()),
    ("precision", |r| r.m.precision().to_string()),
    ("computes", |r| r.arithmetic.into()),
    ("switches", |r| switches(r.m)),
    ("GFLOP/s", |r| md::gflops_spread(Some(r.m))),
    ("x cuBLAS", |r| md::times(data::vs_vendor(r.m))),
    ("registers", |r| md::registers(Some(r.m))),
    ("spill st/ld B", |r| md::spills(Some(r.m))),
    ("PTX mma / cp.async / cvt", |r| {
        (r.mix.as_ref()).map_or(md::MISSING.into(), |x| {
            format!("{} / {} / {}", x.mma, x.cp_async, x.conversions)
        })
    }),
    ("configuration", |r| r.m.config.describe_params()),
];

/// An accuracy row with cuBLAS SGEMM's largest error at its point.
type Accuracy<'a> = (&'a Row, Option<f64>);

type Column = (&'static str, fn(&Accuracy) -> String);

const ACCURACY: [Column; 9] = [
    ("toolchain", |(r, _)| r.toolchain.clone()),
    ("size", |(r, _)| format!("{}x{}x{}", r.m, r.n, r.k)),
    ("inputs", |(r, _)| r.inputs.name().into()),
    ("kernel", |(r, _)| r.kernel.clone()),
    ("switches", |(r, _)| r.hints.clone()),
    ("computes", |(r, _)| r.arithmetic.label().into()),
    ("largest error", |(r, _)| match r.errors {
        Some(e) if r.kernel == "cublas" => {
            format!("{:.2e} ({:.1} u)", e.max_abs, e.over_unit_roundoff)
        }
        Some(e) => format!("{:.2e}", e.max_abs),
        None => md::escape(&md::short_reason(&r.status)),
    }),
    ("x cuBLAS SGEMM", |(r, base)| {
        md::times(r.errors.zip(*base).map(|(e, b)| e.max_abs / b))
    }),
    ("FP32 check", |(r, _)| {
        let pass =
            |e: crate::gemm::accuracy::Errors| if e.f32_full_check { "passes" } else { "fails" };
        r.errors.map_or(md::MISSING, pass).into()
    }),
];

pub(crate) fn section(a: &Tc) -> Result<Section> {
    let mut s = format!(
        "## {TC}\n\nThe `tc` family runs `mma.sync` through inline PTX in both toolchains (`tcwg`: its \
         3xTF32 on Hopper's `wgmma`, sm_90a): DGEMM on the FP64 tensor cores, SGEMM from TF32 products. 3xTF32 splits each operand into a TF32 high and \
         low part and sums three products per step, each step's tensor-core sum added to FP32 \
         accumulators (`PROMOTE_ACC`); 1xTF32 (`TF32_SINGLE=1`) keeps one product, a **lower \
         precision** than FP32 checked with TF32's limits. Ratios are to cuBLAS SGEMM (f32) or DGEMM \
         (f64) in the same run.\n\n"
    );
    if !a.speed.is_empty() {
        let _ = writeln!(
            s,
            "### Speed\n\nPTX counts are static, in the listing the run kept (`--keep-ptx`); cvt \
             includes the TF32 splits' cvt.rna.tf32.\n\n{}",
            md::table_of(&SPEED, &a.speed)
        );
    }
    if !a.accuracy.is_empty() {
        let base = |r: &Row| {
            let cublas = |b: &&Row| b.kernel == "cublas" && b.point() == r.point();
            a.accuracy.iter().find(cublas)?.errors.map(|e| e.max_abs)
        };
        let rows: Vec<Accuracy> = a.accuracy.iter().map(|r| (r, base(r))).collect();
        let _ = writeln!(
            s,
            "### Accuracy against cuBLAS SGEMM (`gemmlab accuracy`)\n\n\
             Each result's largest error against the f64 reference of the same inputs, as a multiple of \
             cuBLAS SGEMM's (whose own is given in absolute terms and in units of u32 (|A||B|)ij). \
             3xTF32 counts as FP32-accurate where the multiple is at most {FP32_FACTOR}; a larger one \
             tells a result apart from FP32. \"FP32 check\": whether FP32's full check (relative \
             Frobenius error at most 1e-4) passes it.\n\n{}",
            md::table_of(&ACCURACY, &rows)
        );
    }
    Ok(Section::of(TC, s, &a.findings))
}

/// The switches a row set against the published kernel, "published" where none.
fn switches(m: &Measurement) -> String {
    let h = &m.hints;
    let set: Vec<String> = (h.switches.iter())
        .map(|(n, on)| format!("{n}={}", u8::from(*on)))
        .chain(h.fast_math.then(|| "fast math".into()))
        .chain(h.max_registers.map(|r| format!("--max-registers {r}")))
        .collect();
    match set.is_empty() {
        true => "published".into(),
        false => set.join(" "),
    }
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
        Kind::TcSpeed(k) => {
            let (x, size, gflops) = (md::times(Some(k.ratio)), &k.size, md::speed(k.gflops));
            // The arithmetic's label names wgmma for the family's wgmma kernel (analysis::tc).
            let wgmma = k.arithmetic.contains("wgmma");
            let kernel = if wgmma { "tcwg" } else { "tc" };
            let tc = format!(
                "{kernel} ({}) on {} with {}",
                k.form,
                name(k.toolchain),
                k.arithmetic
            );
            Words {
                text: format!(
                    "**{tc}** reaches {gflops} GFLOP/s at {size}: {x} cuBLAS in the same run."
                ),
                short: format!("{tc}: {x} cuBLAS at {size}."),
            }
        }
        Kind::TcGate(k) => {
            let points = md::plural(k.points, "point");
            let verdict = match k.arithmetic {
                Arithmetic::Tf32x3 => "is FP32-accurate",
                _ => "is told apart from FP32",
            };
            let what = match k.holding == k.points {
                true => format!("{verdict} at every one of {points}"),
                false => format!("{verdict} at {} of {points}", k.holding),
            };
            let (low, high) = (md::times(Some(k.lowest)), md::times(Some(k.highest)));
            let setting = format!("{} {} ({})", k.kernel, k.hints, k.arithmetic.label());
            Words {
                text: format!("**{setting}** {what}: its largest error is {low}-{high} cuBLAS SGEMM's on the same inputs (gate: within {}x).", k.fp32_factor),
                short: format!("{setting} {what}: {low}-{high} cuBLAS SGEMM's error."),
            }
        }
    }
}
