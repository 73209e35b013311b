//! Calls other than the tutorial's C = A * B in f32 (f64, layouts, transposes, alpha and
//! beta, leading dimensions), each against cuBLAS with the same arguments.

use crate::backend::Toolchain;
use crate::results::Measurement;

use super::data::{self, is_vendor};
use super::{stats, Data, Finding, Topic};

/// The rows of one call ("f64 col NN alpha=1 beta=0", any size).
pub struct Call<'a> {
    pub call: String,
    /// Every kernel's row but cuBLAS's, in record order.
    pub rows: Vec<&'a Measurement>,
    /// cuBLAS's rows that passed their check.
    pub vendor: Vec<&'a Measurement>,
}

/// The best ratio to cuBLAS of a toolchain on a call at a size.
pub struct BestRatio {
    /// The call and its size, "f64 col NN alpha=1 beta=0 4096".
    pub call: String,
    pub toolchain: Toolchain,
    pub ratio: f64,
    pub kernel: String,
}

pub struct Blas<'a> {
    pub toolchains: Vec<Toolchain>,
    pub calls: Vec<Call<'a>>,
    pub best: Vec<BestRatio>,
    /// The calls with sizes of `best`, sorted: the chart's categories.
    pub categories: Vec<String>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A toolchain's best kernels span `low` to `high` times cuBLAS over the calls.
    Range {
        toolchain: Toolchain,
        low: f64,
        high: f64,
        kernel: String,
        call: String,
    },
}

/// "f64 col NN alpha=1 beta=0" without the size: what groups rows into one call.
fn call_of(m: &Measurement) -> String {
    m.problem.map_or_else(String::new, |p| {
        p.describe()
            .replacen(&format!(" {}x{}x{}", p.m, p.n, p.k), "", 1)
    })
}

pub fn analyse(data: &Data) -> Option<Blas<'_>> {
    let recs: Vec<&Measurement> = (data.blas_calls().into_iter().map(|r| r.m))
        .filter(|m| m.variant.is_none() && m.experiment != "tune")
        .collect();
    let mut names = stats::distinct(recs.iter().map(|m| call_of(m)));
    names.sort();
    let calls: Vec<Call> = (names.into_iter())
        .map(|call| {
            let of_call = recs.iter().copied().filter(|m| call_of(m) == call);
            let (vendor, rows): (Vec<_>, Vec<_>) = of_call.partition(|m| is_vendor(m));
            let vendor = vendor.into_iter().filter(|m| m.status.is_ok()).collect();
            Call { call, rows, vendor }
        })
        .collect();
    let rated = calls.iter().flat_map(|c| {
        c.rows.iter().filter_map(|m| {
            Some(BestRatio {
                call: format!("{} {}", c.call, m.size_label()),
                toolchain: m.toolchain,
                ratio: data::vs_vendor(m)?,
                kernel: m.kernel.clone(),
            })
        })
    });
    let same = |a: &BestRatio, b: &BestRatio| a.call == b.call && a.toolchain == b.toolchain;
    let best = stats::best_of(rated, same, |b| b.ratio);
    let mut categories = stats::distinct(best.iter().map(|b| b.call.clone()));
    categories.sort();
    let toolchains = data.toolchains();
    let findings = (toolchains.iter())
        .filter_map(|t| {
            let mine = best.iter().filter(|b| b.toolchain == *t);
            let top = mine.clone().max_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
            let low = mine.map(|b| b.ratio).fold(top.ratio, f64::min);
            let k = Kind::Range {
                toolchain: *t,
                low,
                high: top.ratio,
                kernel: top.kernel.clone(),
                call: top.call.clone(),
            };
            let f = Finding::new(Topic::VsVendor, super::Kind::Blas(k));
            Some(f.weight(1.0 - low).chart(Some("blas-calls".into())))
        })
        .collect();
    (!calls.is_empty()).then_some(Blas {
        categories,
        toolchains,
        calls,
        best,
        findings,
    })
}
