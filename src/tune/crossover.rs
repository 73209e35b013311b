//! Where the GEMM routine should switch from the direct kernel to the indirect
//! one: both are run as the routine runs them (the indirect one with its pack
//! and unpack kernels) on square problems of growing size, each checked once
//! against the f64 reference and then timed; the crossover is the smallest size
//! from which the indirect kernel is at least as fast at every larger size
//! measured. CLBlast keeps the same number (XGEMM_MIN_INDIRECT_SIZE) in its
//! database; gemmlab keeps it next to the tuned configurations.

use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::gemm::check::check_widened;
use crate::gemm::driver::{read_c, Session};
use crate::gemm::problem::{Matrix, Precision, Problem};
use crate::gemm::{Operands, Reference};
use crate::measure::progress::Progress;
use crate::measure::Stats;
use crate::routine::{upload_operand, Gemm, Path, Tuning};

use crate::results::bests::{Crossover, CrossoverPoint};

/// Edges measured by default: from where the direct kernel is the only sensible
/// choice to where the indirect one clearly wins on a GPU.
pub const DEFAULT_EDGES: &[usize] = &[64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048];

/// One edge, both kernels.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EdgeResult {
    pub size: usize,
    pub direct: Option<Stats>,
    pub indirect: Option<Stats>,
    /// Why a kernel has no time (a failed check, a launch error).
    pub notes: Vec<String>,
}

/// Times the routine with each kernel forced, at each edge, `reps` times after a warm-up.
pub fn measure(
    session: &mut Session,
    tuning: &Tuning,
    precision: Precision,
    edges: &[usize],
    reps: usize,
    seed: u64,
    progress: &Progress,
) -> Result<Vec<EdgeResult>> {
    if edges.is_empty() {
        return Err(Error::invalid("--edges: no sizes to measure"));
    }
    let mut gemm = Gemm::published()?;
    gemm.set_tuning(precision, tuning.clone());
    let mut out = Vec::new();
    for &e in edges {
        let mut problem = Problem::plain(e, e, e);
        problem.precision = precision;
        let ops = Operands::for_problem(problem, seed);
        progress.set_message(format!("{e}^3 {precision}: reference"));
        let reference = Reference::cpu(&ops);
        let mut row = EdgeResult {
            size: e,
            direct: None,
            indirect: None,
            notes: Vec::new(),
        };
        for path in Path::ALL {
            progress.set_message(format!("{e}^3 {precision}: {} kernel", path.as_str()));
            gemm.force = Some(path);
            match time_path(session, &mut gemm, &ops, &reference, reps) {
                Ok(stats) => match path {
                    Path::Direct => row.direct = Some(stats),
                    Path::Indirect => row.indirect = Some(stats),
                },
                Err(err) => row.notes.push(format!("{}: {err}", path.as_str())),
            }
        }
        progress.inc(1);
        out.push(row);
    }
    gemm.release(session);
    Ok(out)
}

fn time_path(
    session: &mut Session,
    gemm: &mut Gemm,
    ops: &Operands,
    reference: &Reference,
    reps: usize,
) -> Result<Stats> {
    let a = upload_operand(session, ops, Matrix::A, f32::NAN)?;
    let b = upload_operand(session, ops, Matrix::B, f32::NAN)?;
    let c = match upload_operand(session, ops, Matrix::C, f32::NAN) {
        Ok(c) => c,
        Err(e) => {
            let mut be = session.backend.borrow_mut();
            be.free(a);
            be.free(b);
            return Err(e);
        }
    };
    let result = (|| -> Result<Stats> {
        // Checked first (C poisoned: beta is 0), then warm-up and timed calls.
        gemm.run(session, &ops.problem, a, b, c)?;
        let (logical, _) = read_c(session, c, &ops.problem)?;
        let report = check_widened(ops.problem.m, &logical, reference, ops.problem.precision);
        if !report.passed {
            return Err(Error::Check {
                what: "routine".into(),
                detail: report.summary(),
            });
        }
        // Then timed as `gemmlab gemm` times the routine: a warm call sizes batches.
        let (p, bufs) = (&ops.problem, [a, b, c]);
        let n = crate::measure::Plan::default()
            .batch_to_fill(gemm.time_calls(session, p, bufs, 1)? as f64);
        let mut times = Vec::with_capacity(reps.max(1));
        for _ in 0..reps.max(1) {
            times.push(gemm.time_calls(session, p, bufs, n)? as f64 / n as f64);
        }
        Stats::from_sample_ns(&times)
            .map(|st| Stats { batch: n, ..st })
            .ok_or_else(|| Error::invalid("no timed repetitions"))
    })();
    let mut be = session.backend.borrow_mut();
    for buf in [a, b, c] {
        be.free(buf);
    }
    result
}

/// The smallest edge from which the indirect kernel is at least as fast at that
/// edge and every larger one; past the largest edge where it never is.
pub fn crossover_of(results: &[EdgeResult]) -> usize {
    let wins = |r: &EdgeResult| match (&r.direct, &r.indirect) {
        (Some(d), Some(i)) => i.median_ns <= d.median_ns,
        (None, Some(_)) => true,
        _ => false,
    };
    let mut edge = results.last().map_or(0, |r| r.size * 2);
    for r in results.iter().rev() {
        if wins(r) {
            edge = r.size;
        } else {
            break;
        }
    }
    edge
}

/// The database entry for what was measured.
pub fn entry(
    results: &[EdgeResult],
    toolchain: crate::backend::Toolchain,
    precision: Precision,
    compiler: Option<String>,
) -> Crossover {
    Crossover {
        toolchain,
        precision,
        compiler,
        min_indirect: crossover_of(results),
        measured: results
            .iter()
            .map(|r| CrossoverPoint {
                size: r.size,
                direct_ns: r.direct.map(|s| s.median_ns),
                indirect_ns: r.indirect.map(|s| s.median_ns),
            })
            .collect(),
        gemmlab: env!("CARGO_PKG_VERSION").to_string(),
        measured_utc: crate::results::utc_now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(size: usize, d: f64, i: f64) -> EdgeResult {
        let s = |v: f64| Stats::from_sample_ns(&[v]);
        EdgeResult {
            size,
            direct: s(d),
            indirect: s(i),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_crossover_is_where_indirect_keeps_winning() {
        let rs = vec![
            r(64, 1.0, 5.0),
            r(128, 2.0, 1.0), // a lucky win below the crossover does not count
            r(256, 4.0, 6.0),
            r(512, 9.0, 8.0),
            r(1024, 70.0, 40.0),
        ];
        assert_eq!(crossover_of(&rs), 512);
        assert_eq!(
            crossover_of(&rs[..3]),
            512,
            "never wins: past the largest edge"
        );
        assert_eq!(crossover_of(&[r(64, 2.0, 1.0), r(128, 3.0, 2.0)]), 64);
    }
}
