//! The tensor-core family (`tc`): its speed next to cuBLAS per arithmetic, and its
//! accuracy against cuBLAS SGEMM (`gemmlab accuracy`) with the FP32 gate.

use crate::backend::ptx::{instruction_mix, PtxMix};
use crate::backend::Toolchain;
use crate::gemm::accuracy::{self, Arithmetic, FP32_FACTOR};
use crate::gemm::problem::Precision;
use crate::results::ptx_archive::PtxStore;
use crate::results::Measurement;
use crate::routine::ROUTINE;

use super::{data, stats, Data, Finding, Topic};

/// The kernel ids of the family: mma.sync (`tc`) and wgmma (`tcwg`, f32 only).
pub const KERNELS: &[&str] = &["tc", "tcwg"];

/// What a row computes, from its kernel, precision and switches.
pub fn arithmetic_of(m: &Measurement) -> &'static str {
    let on = |name: &str, v: bool| m.hints.switch(name) == Some(v);
    let (single, tc_acc) = (on("TF32_SINGLE", true), on("PROMOTE_ACC", false));
    match (m.precision(), single, tc_acc, m.kernel == "tcwg") {
        (Precision::F64, ..) => "FP64 tensor cores",
        (_, true, _, true) => "1xTF32 on wgmma (lower precision)",
        (_, true, _, false) => "1xTF32 (lower precision)",
        (_, _, true, true) => "3xTF32 on wgmma, tensor-core accumulation",
        (_, _, true, false) => "3xTF32, tensor-core accumulation",
        (.., true) => "3xTF32 on wgmma (FP32-accurate)",
        _ => "3xTF32 (FP32-accurate)",
    }
}

pub struct SpeedRow<'a> {
    pub m: &'a Measurement,
    pub arithmetic: &'static str,
    /// The instruction mix of the PTX the run kept for it (`--keep-ptx`), counted now.
    pub mix: Option<PtxMix>,
}

pub struct Tc<'a> {
    pub speed: Vec<SpeedRow<'a>>,
    pub accuracy: &'a [accuracy::Row],
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    TcSpeed(TcSpeed),
    TcGate(TcGate),
}

/// The family's fastest row of an arithmetic on a toolchain, next to cuBLAS.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TcSpeed {
    pub toolchain: Toolchain,
    pub arithmetic: String,
    /// The row's form: "published defaults", "tuned at ...", "published + ...".
    pub form: String,
    pub size: String,
    pub gflops: f64,
    pub ratio: f64,
}

/// The accuracy gate over every point measured, for one kernel setting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TcGate {
    pub kernel: String,
    pub hints: String,
    pub arithmetic: Arithmetic,
    pub points: usize,
    pub holding: usize,
    pub lowest: f64,
    pub highest: f64,
    pub fp32_factor: f64,
}

pub fn analyse(data: &Data) -> Option<Tc<'_>> {
    // The routine's rows time whole calls (packing too): its own section reads them.
    let ours = |m: &&Measurement| {
        KERNELS.contains(&m.kernel.as_str()) && m.experiment != ROUTINE && data::gflops(m).is_some()
    };
    let speed: Vec<SpeedRow> = (data.runs.iter())
        .flat_map(|run| {
            // A run without kept PTX (or an unreadable archive) has rows without a mix.
            let store = PtxStore::open(&run.dir).unwrap_or_default();
            run.measurements.iter().filter(ours).map(move |m| SpeedRow {
                m,
                arithmetic: arithmetic_of(m),
                mix: (m.ptx_file.as_deref().and_then(|f| store.get(f))).map(instruction_mix),
            })
        })
        .collect();
    if speed.is_empty() && data.accuracy.is_empty() {
        return None;
    }
    let mut findings = speed_findings(&speed);
    findings.extend(gate_findings(&accuracy::verdicts(&data.accuracy)));
    Some(Tc {
        speed,
        accuracy: &data.accuracy,
        findings,
    })
}

/// The fastest row of each (toolchain, arithmetic) with a ratio to cuBLAS.
fn speed_findings(rows: &[SpeedRow]) -> Vec<Finding> {
    // Against cuBLAS SGEMM (f32) or DGEMM (f64) in the same run.
    let rated = rows.iter().filter_map(|r| Some((r, data::vs_vendor(r.m)?)));
    let key = |r: &(&SpeedRow, f64)| (r.0.m.toolchain, r.0.arithmetic);
    let same = |a: &(&SpeedRow, f64), b: &(&SpeedRow, f64)| key(a) == key(b);
    let best = stats::best_of(rated, same, |r| r.1);
    // What a row computes: FP64, FP32-accurate (3xTF32, on mma.sync or wgmma), or less.
    let accurate = |a: &str| a.starts_with("FP64") || a.ends_with("(FP32-accurate)");
    let computes = |r: &SpeedRow| (r.m.toolchain, r.arithmetic.starts_with("FP64"));
    // Of a toolchain's accurate kernels computing the same, the closest to cuBLAS is the headline.
    let top = |r: &SpeedRow| {
        let peers = best
            .iter()
            .filter(|(p, _)| accurate(p.arithmetic) && computes(p) == computes(r));
        peers.map(|p| p.1).fold(f64::NEG_INFINITY, f64::max)
    };
    (best.iter())
        .filter_map(|&(r, ratio)| {
            let kind = Kind::TcSpeed(TcSpeed {
                toolchain: r.m.toolchain,
                arithmetic: r.arithmetic.into(),
                form: data::form(r.m),
                size: r.m.size_label(),
                gflops: data::gflops(r.m)?,
                ratio,
            });
            let f = Finding::new(Topic::TensorCores, super::Kind::Tc(kind)).weight(ratio - 1.0);
            // Not FP32-accurate (1xTF32, tensor-core accumulation): a detail, not an SGEMM's
            // speed; so is an accurate kernel that a faster one computing the same outdoes.
            let headline = accurate(r.arithmetic) && ratio >= top(r);
            Some(if headline { f } else { f.detail() })
        })
        .collect()
}

/// One finding per kernel setting: how many points its gate holds at.
fn gate_findings<'a>(verdicts: &'a [accuracy::Verdict]) -> Vec<Finding> {
    let key = |v: &'a accuracy::Verdict| (&v.kernel, &v.hints, v.arithmetic);
    (stats::distinct(verdicts.iter().map(key)).into_iter())
        .map(|at @ (kernel, hints, arithmetic)| {
            let of: Vec<_> = verdicts.iter().filter(|v| key(v) == at).collect();
            let k = TcGate {
                kernel: kernel.clone(),
                hints: hints.clone(),
                arithmetic,
                points: of.len(),
                holding: of.iter().filter(|v| v.holds).count(),
                lowest: of.iter().map(|v| v.factor).fold(f64::INFINITY, f64::min),
                highest: of.iter().map(|v| v.factor).fold(0.0, f64::max),
                fp32_factor: FP32_FACTOR,
            };
            // The headline: whether the published 3xTF32 is FP32-accurate; the other
            // settings (no promotion, 1xTF32, cuBLAS's TF32 mode) are details beside it.
            let w = k.highest.ln();
            let f = Finding::new(Topic::TensorCores, super::Kind::Tc(Kind::TcGate(k)));
            match arithmetic == Arithmetic::Tf32x3 && *hints == "published" {
                true => f.weight(1.0),
                false => f.weight(w).detail(),
            }
        })
        .collect()
}
