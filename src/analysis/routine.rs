//! The GEMM routine across shapes (`gemmlab gemm --suite ... --out`): each call's whole
//! time against cuBLAS's, what the routine chose, and the geometric mean of the ratios.

use crate::backend::Toolchain;
use crate::gemm::problem::Precision;
use crate::results::Measurement;
use crate::routine::shape::{call_label, ShapeClass};

use super::data::{self, is_vendor, Rec};
use super::{stats, Data, Finding, Topic};

/// A call at or above this ratio to cuBLAS counts as "at cuBLAS's speed".
pub const AT_VENDOR: f64 = 0.95;

/// One call as the routine of one toolchain ran it.
pub struct Row<'a> {
    /// "4097x33x2049 col NN".
    pub call: String,
    pub class: ShapeClass,
    pub m: &'a Measurement,
    /// cuBLAS's median for the same call in the same run, nanoseconds.
    pub vendor_ns: Option<f64>,
    pub ratio: Option<f64>,
}

pub struct Routine<'a> {
    pub toolchain: Toolchain,
    pub rows: Vec<Row<'a>>,
}

pub struct Suite<'a> {
    pub precision: Precision,
    pub routines: Vec<Routine<'a>>,
    /// Every call, in the order first measured: the chart's categories.
    pub calls: Vec<String>,
    /// Whether short calls were timed in batches of back-to-back calls (`time.batch`
    /// above 1 in some row): data recorded since `--batch`; before it, one call a sample.
    pub batched: bool,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    Geomean(Geomean),
}

/// A toolchain's routine over `calls` calls: the geometric mean of its ratios to
/// cuBLAS, the lowest and where, how many reach `AT_VENDOR`, the kernels chosen.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Geomean {
    pub toolchain: Toolchain,
    pub precision: Precision,
    pub geomean: f64,
    pub calls: usize,
    pub lowest: f64,
    pub lowest_call: String,
    pub at_vendor: usize,
    pub kernels: Vec<(String, usize)>,
}

fn call_of(m: &Measurement) -> String {
    match &m.problem {
        Some(p) => format!("{}x{}x{} {}", p.m, p.n, p.k, call_label(p)),
        None => format!("{} col NN", m.size_label()),
    }
}

/// The geometric mean of positive ratios, `None` for none.
pub fn geomean(ratios: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = (ratios.iter().filter(|r| r.is_finite() && **r > 0.0))
        .map(|r| r.ln())
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// One suite per precision measured, f32 first.
pub fn analyse(data: &Data) -> Vec<Suite<'_>> {
    let all = data.routine_calls();
    let suites = Precision::ALL.into_iter().map(|p| suite(p, &all));
    suites.filter(|s| !s.calls.is_empty()).collect()
}

fn suite<'a>(precision: Precision, all: &[Rec<'a>]) -> Suite<'a> {
    let recs: Vec<&Measurement> = (all.iter().map(|r| r.m))
        .filter(|m| m.precision() == precision)
        .collect();
    let (vendor, ours): (Vec<&Measurement>, _) = recs.iter().partition(|m| is_vendor(m));
    let vendor_ns = |call: &str| {
        let v = (vendor.iter()).find(|v| v.status.is_ok() && call_of(v) == call)?;
        Some(v.time.as_ref()?.median_ns)
    };
    let mut toolchains = stats::distinct(ours.iter().map(|m| m.toolchain));
    toolchains.sort_by_key(|t| t.as_str());
    let row = |&m: &&'a Measurement| Row {
        call: call_of(m),
        class: ShapeClass::of(m.m, m.n, m.k),
        m,
        vendor_ns: vendor_ns(&call_of(m)),
        ratio: data::vs_vendor(m),
    };
    let routines: Vec<Routine> = (toolchains.into_iter())
        .map(|toolchain| {
            let rows = ours.iter().filter(|m| m.toolchain == toolchain);
            let rows = rows.map(row).collect();
            Routine { toolchain, rows }
        })
        .collect();
    Suite {
        precision,
        findings: (routines.iter().filter_map(|r| finding(precision, r))).collect(),
        routines,
        calls: stats::distinct(recs.iter().map(|m| call_of(m))),
        batched: (recs.iter()).any(|m| m.time.as_ref().is_some_and(|t| t.batch > 1)),
    }
}

fn finding(precision: Precision, r: &Routine) -> Option<Finding> {
    let ratios: Vec<f64> = r.rows.iter().filter_map(|x| x.ratio).collect();
    let geomean = geomean(&ratios)?;
    let (lowest, lowest_call) = (r.rows.iter())
        .filter_map(|x| Some((x.ratio?, x.call.clone())))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let ok = r.rows.iter().filter(|x| x.m.status.is_ok());
    let kind = Kind::Geomean(Geomean {
        toolchain: r.toolchain,
        precision,
        geomean,
        calls: ratios.len(),
        lowest,
        lowest_call,
        at_vendor: ratios.iter().filter(|r| **r >= AT_VENDOR).count(),
        kernels: stats::tally(ok.map(|x| chosen_kernel(x.m))),
    });
    let f = Finding::new(Topic::Routine, super::Kind::Routine(kind));
    Some(f.weight(1.0 - geomean).chart(Some(chart_stem(precision))))
}

/// The stem of a precision's chart: "routine-shapes" (f32), "routine-shapes-f64".
pub fn chart_stem(precision: Precision) -> String {
    match precision {
        Precision::F32 => "routine-shapes".into(),
        p => format!("routine-shapes-{p}"),
    }
}

/// The kernel a routine row ran, "(3xTF32)" added where it emulated FP32
/// (`gemm --fp32-emulation`), so an emulated choice is never read as FP32 arithmetic.
pub fn chosen_kernel(m: &Measurement) -> String {
    match crate::kernel::builtin::emulates_fp32(&m.kernel, &m.config, &m.hints) {
        true => format!("{} (3xTF32)", m.kernel),
        false => m.kernel.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::geomean;

    #[test]
    fn the_geometric_mean_of_ratios() {
        assert!((geomean(&[0.5, 2.0, 1.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((geomean(&[0.25, 1.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[f64::NAN, 0.0]), None);
    }
}
