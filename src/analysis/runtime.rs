//! Where a CUDA-OpenCL gap comes from: the same kernel's two PTX builds (NVRTC's
//! and NVIDIA OpenCL's), each loaded through both runtimes (the CUDA driver's JIT
//! and NVIDIA's OpenCL runtime as a program binary) by `sweep jit`. With the four
//! cells, the gap between the native rows splits into what the PTX does (the
//! same runtime, the other front end's PTX) and what the runtime does (the same
//! PTX, the other runtime). Both are averaged over the other factor, in logs, so
//! the two parts add up to the gap between the PTX-loaded corner cells exactly;
//! what is left of the native gap is the native build path (source build against
//! loaded PTX) and noise.

use crate::results::{Measurement as M, NVRTC_PTX, OPENCL_PTX};
use crate::Toolchain::{self, Cuda, OpenCl};

use super::{stats, Data, Finding, Topic};

/// A native gap below this (5%) is not split: the threshold, and above
/// what run-to-run noise moves a median on the H200.
pub const GAP_MIN: f64 = 0.05;

/// The front ends whose PTX the 2 x 2 takes, in its row order.
pub const FRONTS: [Toolchain; 2] = [Cuda, OpenCl];
/// The runtimes, in its column order: the CUDA driver, NVIDIA's OpenCL runtime.
pub const RUNTIMES: [Toolchain; 2] = [Cuda, OpenCl];

/// One kernel at one size: the native rows and the 2 x 2.
pub struct Split<'a> {
    pub kernel: String,
    pub size: String,
    pub cuda: Option<&'a M>,
    pub opencl: Option<&'a M>,
    /// `cells[front][runtime]` in [`FRONTS`] x [`RUNTIMES`] order.
    pub cells: [[Option<&'a M>; 2]; 2],
    /// Clang's PTX through NVIDIA's OpenCL runtime, where the run had clang.
    pub clang: Vec<&'a M>,
    pub parts: Option<Parts>,
    /// The runtime factors tried on the CUDA driver's lanes (`--carveout`).
    pub factors: Vec<Factor<'a>>,
    /// The median SM clock (MHz, NVML, after the timed launches) of the rows
    /// run by each runtime, in [`RUNTIMES`] order: the clocks as a factor.
    pub sm_mhz: [Option<f64>; 2],
}

/// One runtime factor set on the CUDA driver's lanes of a split: how much of
/// the gap it reproduces by making CUDA as slow as OpenCL (or more).
pub struct Factor<'a> {
    /// "carveout 100%".
    pub name: String,
    /// CUDA's own build under the factor.
    pub cuda: Option<&'a M>,
    /// NVIDIA OpenCL's PTX through the CUDA driver under the factor.
    pub opencl_ptx: Option<&'a M>,
    pub effect: FactorEffect,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FactorEffect {
    /// CUDA's build under the factor over without it, minus one.
    pub cuda_change: Option<f64>,
    /// The share of the native gap that change reproduces (1: CUDA falls to
    /// OpenCL's speed), in logs: ln(base / factor) / ln(CUDA / OpenCL).
    pub of_gap: Option<f64>,
    /// The share of the runtime's part on OpenCL's PTX it reproduces: OpenCL's
    /// PTX through the CUDA driver under the factor, against through OpenCL's runtime.
    pub of_runtime: Option<f64>,
}

/// A factor's share where it reproduces at least this much of a gap: the
/// issue's bar for naming it the mechanism.
pub const EXPLAINS: f64 = 0.8;

/// The gap and its parts, as relative speed differences (0.12: CUDA 12% faster);
/// `front` and `runtime` are exp of their log parts minus one, `rest` likewise.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Parts {
    /// CUDA native over OpenCL native, minus one.
    pub gap: f64,
    /// The PTX's part: NVRTC's PTX over NVIDIA OpenCL's, same runtime.
    pub front: Option<f64>,
    /// The runtime's part: the CUDA driver over NVIDIA's OpenCL runtime, same PTX.
    pub runtime: Option<f64>,
    /// What neither explains: the native build path and noise.
    pub rest: f64,
    /// Shares of the gap in logs (sum 1 with `rest`'s share), where the gap is
    /// over [`GAP_MIN`].
    pub front_share: Option<f64>,
    pub runtime_share: Option<f64>,
}

pub struct Runtime<'a> {
    pub splits: Vec<Split<'a>>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// One kernel's gap split into PTX and runtime.
    GapSplit {
        kernel: String,
        size: String,
        parts: Parts,
    },
    /// A split's runtime factor that reproduces the most of its gap.
    FactorTried {
        kernel: String,
        size: String,
        factor: String,
        gap: f64,
        effect: FactorEffect,
        /// The other factors tried on it.
        others: Vec<(String, FactorEffect)>,
    },
    /// Across kernels: which part explains the gaps, the Kepler-era question
    /// ("is OpenCL slower on NVIDIA?") answered for this GPU.
    GapVerdict(Verdict),
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Verdict {
    /// The GPU the rows ran on.
    pub device: String,
    /// Kernels split (at a size each).
    pub kernels: usize,
    /// "kernel at size" for each gap over [`GAP_MIN`].
    pub with_gap: Vec<String>,
    /// Of those, where the runtime's share is over half...
    pub runtime_led: Vec<String>,
    /// ... and where the PTX's is.
    pub ptx_led: Vec<String>,
    /// CUDA over OpenCL, the median over every split.
    pub median_gap: Option<f64>,
    /// The runtime's share, the median over the gaps.
    pub median_runtime_share: Option<f64>,
    /// The runtime factors tried (`--carveout`).
    pub factors_tried: Vec<String>,
    /// For each gap, the factor that reproduces at least [`EXPLAINS`] of it (of the
    /// runtime's part where measured): (kernel at size, factor, share).
    pub mechanisms: Vec<(String, String, f64)>,
    /// The median SM clock of each runtime's rows over every split, MHz.
    pub sm_mhz: [Option<f64>; 2],
}

/// Speed as the inverse of the median time, of a row that passed its check
/// (users' kernels have no GFLOP/s; a time compares any two rows of one kernel).
fn speed(m: Option<&M>) -> Option<f64> {
    let m = m.filter(|m| m.status.is_ok())?;
    let t = m.time.as_ref()?.median_ns;
    (t > 0.0).then(|| 1.0 / t)
}

fn ln_ratio(a: Option<&M>, b: Option<&M>) -> Option<f64> {
    Some((speed(a)? / speed(b)?).ln())
}

fn mean(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The parts of a split; `None` without both native rows.
pub fn parts(cuda: Option<&M>, opencl: Option<&M>, cells: &[[Option<&M>; 2]; 2]) -> Option<Parts> {
    let gap = ln_ratio(cuda, opencl)?;
    let [[nn_cu, nn_cl], [oo_cu, oo_cl]] = *cells;
    let front = mean([ln_ratio(nn_cu, oo_cu), ln_ratio(nn_cl, oo_cl)]);
    let runtime = mean([ln_ratio(nn_cu, nn_cl), ln_ratio(oo_cu, oo_cl)]);
    let rest = gap - front.unwrap_or(0.0) - runtime.unwrap_or(0.0);
    let share = |p: Option<f64>| p.filter(|_| gap.exp_m1().abs() > GAP_MIN).map(|p| p / gap);
    Some(Parts {
        gap: gap.exp_m1(),
        front: front.map(f64::exp_m1),
        runtime: runtime.map(f64::exp_m1),
        rest: rest.exp_m1(),
        front_share: share(front),
        runtime_share: share(runtime),
    })
}

pub fn analyse(data: &Data) -> Option<Runtime<'_>> {
    // The GEMMs' rows and users' kernels' (which have dims, not M, N, K).
    let users = data
        .user_rows()
        .into_iter()
        .filter(|r| r.m.experiment == "jit");
    let all: Vec<&M> = (data.experiment("jit").into_iter().chain(users))
        .map(|r| r.m)
        .collect();
    let (rows, factor_rows): (Vec<&M>, Vec<&M>) =
        all.into_iter().partition(|m| m.hints.carveout.is_none());
    // Only runs that loaded PTX through NVIDIA's OpenCL runtime have a 2 x 2.
    let loaded = |m: &M| m.toolchain == OpenCl && m.variant.is_some();
    if !rows.iter().any(|m| loaded(m)) {
        return None;
    }
    let mut keys: Vec<(String, String)> = Vec::new();
    for m in rows.iter().filter(|m| loaded(m)) {
        let key = (m.kernel.clone(), m.size_label());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let splits: Vec<Split> = (keys.into_iter())
        .map(|(kernel, size)| split(&rows, &factor_rows, kernel, size))
        .collect();
    let mut findings: Vec<Finding> = (splits.iter())
        .filter_map(|s| {
            let parts = s.parts?;
            let kind = Kind::GapSplit {
                kernel: s.kernel.clone(),
                size: s.size.clone(),
                parts,
            };
            Some(finding(kind).weight(parts.gap).detail())
        })
        .collect();
    findings.extend(splits.iter().filter_map(factor_finding));
    let device = rows.first().map(|m| m.device.clone()).unwrap_or_default();
    findings.insert(0, verdict(&splits, device));
    Some(Runtime { splits, findings })
}

fn finding(kind: Kind) -> Finding {
    Finding::new(Topic::Runtime, super::Kind::Runtime(kind))
}

fn split<'a>(rows: &[&'a M], factor_rows: &[&'a M], kernel: String, size: String) -> Split<'a> {
    let of = |tc: Toolchain, variant: Option<&str>| {
        (rows.iter().copied()).find(|m| {
            m.kernel == kernel
                && m.size_label() == size
                && m.toolchain == tc
                && m.variant.as_deref() == variant
        })
    };
    let front_variant = |f: Toolchain| if f == Cuda { NVRTC_PTX } else { OPENCL_PTX };
    let cells = FRONTS.map(|f| RUNTIMES.map(|r| of(r, Some(front_variant(f)))));
    let (cuda, opencl) = (of(Cuda, None), of(OpenCl, None));
    let clang = (rows.iter().copied())
        .filter(|m| m.kernel == kernel && m.size_label() == size && m.toolchain == OpenCl)
        .filter(|m| m.variant.as_deref().is_some_and(|v| v.starts_with("clang")))
        .collect();
    let parts = parts(cuda, opencl, &cells);
    let factors = factors(factor_rows, &kernel, &size, cuda, opencl, cells[1]);
    let clock = |runtime: Toolchain| {
        let native = if runtime == Cuda { cuda } else { opencl };
        let ran = cells.iter().map(|c| c[usize::from(runtime == OpenCl)]);
        stats::median(
            ran.chain([native])
                .flatten()
                .filter_map(|m| m.clocks.as_ref()?.after.sm_mhz)
                .map(f64::from),
        )
    };
    Split {
        parts,
        factors,
        sm_mhz: RUNTIMES.map(clock),
        kernel,
        size,
        cuda,
        opencl,
        cells,
        clang,
    }
}

/// Each carveout the run tried on this kernel and size, with its effect.
fn factors<'a>(
    factor_rows: &[&'a M],
    kernel: &str,
    size: &str,
    cuda: Option<&M>,
    opencl: Option<&M>,
    opencl_ptx: [Option<&M>; 2],
) -> Vec<Factor<'a>> {
    let mine: Vec<&M> = (factor_rows.iter().copied())
        .filter(|m| m.kernel == kernel && m.size_label() == size && m.toolchain == Cuda)
        .collect();
    let mut pcts: Vec<u32> = mine.iter().filter_map(|m| m.hints.carveout).collect();
    pcts.sort_unstable();
    pcts.dedup();
    let gap = ln_ratio(cuda, opencl);
    let runtime_gap = ln_ratio(opencl_ptx[0], opencl_ptx[1]);
    pcts.into_iter()
        .map(|pct| {
            let of = |variant: Option<&str>| {
                (mine.iter().copied())
                    .find(|m| m.hints.carveout == Some(pct) && m.variant.as_deref() == variant)
            };
            let (f_cuda, f_ptx) = (of(None), of(Some(OPENCL_PTX)));
            let share = |base: Option<f64>, moved: Option<f64>| {
                let (b, m) = (base?, moved?);
                (b.abs() > GAP_MIN.ln_1p()).then(|| m / b)
            };
            Factor {
                name: format!("carveout {pct}%"),
                effect: FactorEffect {
                    cuda_change: ln_ratio(f_cuda, cuda).map(f64::exp_m1),
                    of_gap: share(gap, ln_ratio(cuda, f_cuda)),
                    of_runtime: share(runtime_gap, ln_ratio(opencl_ptx[0], f_ptx)),
                },
                cuda: f_cuda,
                opencl_ptx: f_ptx,
            }
        })
        .collect()
}

/// The factor that reproduces the most of a split's gap, the others beside it;
/// none without a gap over [`GAP_MIN`] or without a factor tried.
fn factor_finding(s: &Split) -> Option<Finding> {
    let parts = s.parts.filter(|p| p.gap.abs() > GAP_MIN)?;
    let score = |f: &Factor| {
        f.effect
            .of_runtime
            .or(f.effect.of_gap)
            .unwrap_or(f64::NEG_INFINITY)
    };
    let best = s
        .factors
        .iter()
        .max_by(|a, b| score(a).total_cmp(&score(b)))?;
    let kind = Kind::FactorTried {
        kernel: s.kernel.clone(),
        size: s.size.clone(),
        factor: best.name.clone(),
        gap: parts.gap,
        effect: best.effect,
        others: (s.factors.iter())
            .filter(|f| f.name != best.name)
            .map(|f| (f.name.clone(), f.effect))
            .collect(),
    };
    let w = score(best).max(0.0) * parts.gap.abs();
    Some(finding(kind).weight(w).detail())
}

fn verdict(splits: &[Split], device: String) -> Finding {
    let split: Vec<(&Split, Parts)> = splits.iter().filter_map(|s| Some((s, s.parts?))).collect();
    let with_gap: Vec<&(&Split, Parts)> = split
        .iter()
        .filter(|(_, p)| p.gap.abs() > GAP_MIN)
        .collect();
    let named = |f: &dyn Fn(&Parts) -> bool| {
        (with_gap.iter())
            .filter(|(_, p)| f(p))
            .map(|(s, _)| format!("{} at {}", s.kernel, s.size))
            .collect::<Vec<_>>()
    };
    let kind = Kind::GapVerdict(Verdict {
        device,
        kernels: split.len(),
        with_gap: named(&|_| true),
        runtime_led: named(&|p| p.runtime_share.is_some_and(|s| s > 0.5)),
        ptx_led: named(&|p| p.front_share.is_some_and(|s| s > 0.5)),
        median_gap: stats::median(split.iter().map(|(_, p)| p.gap)),
        median_runtime_share: stats::median(with_gap.iter().filter_map(|(_, p)| p.runtime_share)),
        sm_mhz: [0, 1].map(|i| stats::median(splits.iter().filter_map(|s| s.sm_mhz[i]))),
        factors_tried: stats::distinct(
            splits
                .iter()
                .flat_map(|s| s.factors.iter().map(|f| f.name.clone())),
        ),
        mechanisms: (with_gap.iter())
            .filter_map(|(s, _)| {
                let explains = |f: &&Factor| {
                    let share = f.effect.of_runtime.or(f.effect.of_gap)?;
                    (share >= EXPLAINS).then_some(share)
                };
                let f = s.factors.iter().find(|f| explains(f).is_some())?;
                Some((
                    format!("{} at {}", s.kernel, s.size),
                    f.name.clone(),
                    explains(&f)?,
                ))
            })
            .collect(),
    });
    let weight = with_gap
        .iter()
        .map(|(_, p)| p.gap.abs())
        .fold(0.0, f64::max);
    finding(kind).weight(weight)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tc: Toolchain, variant: Option<&str>, median_ns: f64) -> M {
        let ok = crate::gemm::driver::Status::Ok;
        let mut m = crate::results::failed_row("jit", "GPU", "0", tc, "gemm7", ok, (64, 64, 64));
        m.variant = variant.map(str::to_string);
        m.time = Some(crate::measure::Stats {
            reps: 10,
            median_ns,
            min_ns: median_ns,
            max_ns: median_ns,
            q1_ns: median_ns,
            q3_ns: median_ns,
            batch: 1,
        });
        m
    }

    #[test]
    fn a_gap_made_by_the_runtime_is_the_runtimes() {
        // CUDA 1.00 ms, OpenCL 1.12 ms; either PTX through the OpenCL runtime
        // costs 12%, the PTX nothing.
        let (cu, cl) = (row(Cuda, None, 1.0e6), row(OpenCl, None, 1.12e6));
        let (nn_cu, nn_cl) = (
            row(Cuda, Some(NVRTC_PTX), 1.0e6),
            row(OpenCl, Some(NVRTC_PTX), 1.12e6),
        );
        let (oo_cu, oo_cl) = (
            row(Cuda, Some(OPENCL_PTX), 1.0e6),
            row(OpenCl, Some(OPENCL_PTX), 1.12e6),
        );
        let cells = [[Some(&nn_cu), Some(&nn_cl)], [Some(&oo_cu), Some(&oo_cl)]];
        let p = parts(Some(&cu), Some(&cl), &cells).unwrap();
        assert!((p.gap - 0.12).abs() < 1e-9, "{p:?}");
        assert!((p.runtime.unwrap() - 0.12).abs() < 1e-9);
        assert!(p.front.unwrap().abs() < 1e-9 && p.rest.abs() < 1e-9);
        assert!((p.runtime_share.unwrap() - 1.0).abs() < 1e-9);
        assert!(p.front_share.unwrap().abs() < 1e-9);
    }

    #[test]
    fn a_gap_made_by_the_ptx_and_one_cell_missing() {
        // OpenCL's PTX is 10% slower on either runtime; NVRTC's PTX did not load
        // through the OpenCL runtime, so the runtime's part comes from OpenCL's PTX.
        let (cu, cl) = (row(Cuda, None, 1.0e6), row(OpenCl, None, 1.1e6));
        let nn_cu = row(Cuda, Some(NVRTC_PTX), 1.0e6);
        let (oo_cu, oo_cl) = (
            row(Cuda, Some(OPENCL_PTX), 1.1e6),
            row(OpenCl, Some(OPENCL_PTX), 1.1e6),
        );
        let cells = [[Some(&nn_cu), None], [Some(&oo_cu), Some(&oo_cl)]];
        let p = parts(Some(&cu), Some(&cl), &cells).unwrap();
        assert!((p.front.unwrap() - 0.1).abs() < 1e-9, "{p:?}");
        assert!(p.runtime.unwrap().abs() < 1e-9);
        assert!((p.front_share.unwrap() - 1.0).abs() < 1e-9);
        // Without a native row there is nothing to split.
        assert!(parts(None, Some(&cl), &cells).is_none());
    }

    #[test]
    fn a_small_gap_has_no_shares_and_a_failed_cell_no_speed() {
        let (cu, cl) = (row(Cuda, None, 1.0e6), row(OpenCl, None, 1.02e6));
        let mut failed = row(OpenCl, Some(NVRTC_PTX), 1.0e6);
        failed.status = crate::gemm::driver::Status::CompileError("clBuildProgram".into());
        let cells = [[None, Some(&failed)], [None, None]];
        let p = parts(Some(&cu), Some(&cl), &cells).unwrap();
        assert!(p.front_share.is_none() && p.runtime_share.is_none());
        assert!(p.front.is_none() && p.runtime.is_none(), "{p:?}");
        assert!((p.rest - 0.02).abs() < 1e-9);
    }
}
