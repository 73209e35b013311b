//! The tensor-core family (`tc`): its speed next to cuBLAS per precision and
//! arithmetic (FP64 tensor cores, 3xTF32, 1xTF32), and its accuracy from
//! `gemmlab accuracy` against cuBLAS SGEMM on the same inputs, with the gate.

use crate::accuracy::{self, Arithmetic, Verdict, FP32_FACTOR};
use crate::backend::Toolchain;
use crate::gemm::problem::Precision;
use crate::ptx::{instruction_mix, PtxMix};
use crate::ptx_archive::PtxStore;
use crate::results::Measurement;

use super::data;
use super::{Data, Finding, Topic};

/// The kernel id of the family.
pub const KERNEL: &str = "tc";

/// What a row computes, from its precision and switches.
pub fn arithmetic_of(m: &Measurement) -> &'static str {
    let on = |name: &str| m.hints.switch(name);
    match m.precision() {
        Precision::F64 => "FP64 tensor cores",
        _ if on("TF32_SINGLE") == Some(true) => "1xTF32 (lower precision)",
        _ if on("PROMOTE_ACC") == Some(false) => "3xTF32, tensor-core accumulation",
        _ => "3xTF32 (FP32-accurate)",
    }
}

/// One timed row of the family.
pub struct SpeedRow<'a> {
    pub m: &'a Measurement,
    pub arithmetic: &'static str,
    /// Against cuBLAS SGEMM (f32) or DGEMM (f64) in the same run.
    pub ratio: Option<f64>,
    /// The instruction mix of the PTX the run kept for it (`--keep-ptx`), counted now.
    pub mix: Option<PtxMix>,
}

pub struct Tc<'a> {
    pub speed: Vec<SpeedRow<'a>>,
    pub accuracy: &'a [accuracy::Row],
    pub verdicts: Vec<Verdict>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// The family's fastest row of an arithmetic on a toolchain, next to cuBLAS.
    TcSpeed {
        toolchain: Toolchain,
        arithmetic: String,
        size: String,
        gflops: f64,
        ratio: f64,
    },
    /// The accuracy gate over every point measured, for one kernel setting.
    TcGate {
        kernel: String,
        hints: String,
        arithmetic: Arithmetic,
        points: usize,
        holding: usize,
        lowest: f64,
        highest: f64,
        fp32_factor: f64,
    },
}

pub fn analyse(data: &Data) -> Option<Tc<'_>> {
    let mut speed: Vec<SpeedRow> = Vec::new();
    for run in &data.runs {
        let rows = run
            .measurements
            .iter()
            // The routine's rows time whole calls (packing too): its own section reads them.
            .filter(|m| m.kernel == KERNEL && m.experiment != crate::routine::ROUTINE)
            .filter(|m| m.status.is_ok() && data::gflops(m).is_some());
        // A run without kept PTX (or an unreadable archive) has rows without a mix.
        let store = PtxStore::open(&run.dir).unwrap_or_default();
        for m in rows {
            let mix = m
                .ptx_file
                .as_deref()
                .and_then(|f| store.get(f))
                .map(instruction_mix);
            speed.push(SpeedRow {
                m,
                arithmetic: arithmetic_of(m),
                ratio: data::vs_vendor(m),
                mix,
            });
        }
    }
    if speed.is_empty() && data.accuracy.is_empty() {
        return None;
    }
    let verdicts = accuracy::verdicts(&data.accuracy);
    let mut findings = speed_findings(&speed);
    findings.extend(gate_findings(&verdicts));
    Some(Tc {
        speed,
        accuracy: &data.accuracy,
        verdicts,
        findings,
    })
}

/// The fastest row of each (toolchain, arithmetic) with a ratio to cuBLAS.
fn speed_findings(rows: &[SpeedRow]) -> Vec<Finding> {
    let mut best: Vec<&SpeedRow> = Vec::new();
    for r in rows.iter().filter(|r| r.ratio.is_some()) {
        match best
            .iter_mut()
            .find(|b| b.m.toolchain == r.m.toolchain && b.arithmetic == r.arithmetic)
        {
            Some(b) if b.ratio < r.ratio => *b = r,
            Some(_) => {}
            None => best.push(r),
        }
    }
    best.into_iter()
        .filter_map(|r| {
            let ratio = r.ratio?;
            let kind = Kind::TcSpeed {
                toolchain: r.m.toolchain,
                arithmetic: r.arithmetic.into(),
                size: r.m.size_label(),
                gflops: data::gflops(r.m)?,
                ratio,
            };
            let f =
                Finding::new(Topic::TensorCores, super::Kind::Tc(kind)).weight((ratio - 1.0).abs());
            // Rows that are not FP32-accurate (1xTF32, tensor-core accumulation) are
            // details: their speed is not an FP32 SGEMM's.
            let accurate =
                r.arithmetic.starts_with("FP64") || r.arithmetic.ends_with("(FP32-accurate)");
            Some(if accurate { f } else { f.detail() })
        })
        .collect()
}

/// One finding per kernel setting: how many points its gate holds at.
fn gate_findings(verdicts: &[Verdict]) -> Vec<Finding> {
    let mut keys: Vec<(String, String, Arithmetic)> = Vec::new();
    for v in verdicts {
        let k = (v.kernel.clone(), v.hints.clone(), v.arithmetic);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(kernel, hints, arithmetic)| {
            let published = arithmetic == Arithmetic::Tf32x3 && hints == "published";
            let of: Vec<&Verdict> = verdicts
                .iter()
                .filter(|v| v.kernel == kernel && v.hints == hints && v.arithmetic == arithmetic)
                .collect();
            let factors = of.iter().map(|v| v.factor);
            let lowest = factors.clone().fold(f64::INFINITY, f64::min);
            let highest = factors.fold(0.0, f64::max);
            let kind = Kind::TcGate {
                holding: of.iter().filter(|v| v.holds).count(),
                points: of.len(),
                kernel,
                hints,
                arithmetic,
                lowest,
                highest,
                fp32_factor: FP32_FACTOR,
            };
            let f = Finding::new(Topic::TensorCores, super::Kind::Tc(kind));
            // The headline is whether the published 3xTF32 is FP32-accurate; the other
            // settings (no promotion, 1xTF32, cuBLAS's TF32 mode) are details beside it.
            if published {
                f.weight(1.0)
            } else {
                f.weight(highest.ln().abs()).detail()
            }
        })
        .collect()
}
