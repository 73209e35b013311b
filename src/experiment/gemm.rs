//! Experiments: one point (kernel configuration + hints) measured on every
//! toolchain at one size, interleaved; the vendor BLAS at the same size; and
//! `compare`, which walks sizes x kernels. Sweeps reuse `measure_point`.

use super::measuring::{self, Rates, Workload};
use crate::backend::{Backend, BuildReport, DeviceInfo, KernelResources};
use crate::error::{Error, Result};
use crate::gemm::check::{CheckMode, FULL_CPU_MAX_MNK};
use crate::gemm::driver::device_reference;
use crate::gemm::driver::{
    prepare_job, Attempt, Job, KernelRunner, Prepared, Session, Source, Status, VendorCall,
    VendorRunner,
};
use crate::gemm::memory::{self, RefKind};
use crate::gemm::problem::Problem as GemmCall;
use crate::gemm::{Operands, Reference};
use crate::kernel::builtin::{Config, Hints, KernelSpec};
use crate::measure::clocks::ClockWindow;
use crate::measure::progress::Progress;
use crate::measure::{gflops, interleaved, Plan, Stats, Timed};
use crate::results::{row_on, Measurement, ResultWriter};

/// What is measured at one point of an experiment.
#[derive(Debug, Clone)]
pub struct Point {
    pub spec: &'static KernelSpec,
    pub config: Config,
    pub hints: Hints,
    pub label: Option<String>,
}

/// A problem size and its f64 reference, computed once.
pub struct Problem {
    pub ops: Operands,
    pub reference: Reference,
}

impl Problem {
    /// Inputs and the full CPU reference (what tests and small runs use).
    pub fn new(m: usize, n: usize, k: usize, seed: u64) -> Problem {
        let ops = Operands::new(m, n, k, seed);
        let reference = Reference::cpu(&ops);
        Problem { ops, reference }
    }

    /// Inputs and the reference `mode` asks for, after checking that the size fits
    /// in host and device memory. `Err(status)` says why the size cannot be run.
    pub fn prepare(
        sessions: &[Session],
        call: &GemmCall,
        seed: u64,
        plan: &Plan,
        progress: &Progress,
    ) -> std::result::Result<Problem, Status> {
        let (m, n, k) = (call.m, call.n, call.k);
        // The backend says whether it has a vendor BLAS (cuBLAS where it loaded).
        let has_blas = |s: &Session| s.backend.borrow().vendor_blas().is_some();
        let kind =
            match plan.check {
                CheckMode::Cpu => RefKind::Cpu,
                CheckMode::Sampled => RefKind::Sampled,
                CheckMode::Dgemm if sessions.iter().any(has_blas) => RefKind::Dgemm,
                CheckMode::Dgemm => return Err(Status::InvalidConfig(
                    "--check dgemm needs a CUDA session (cuBLAS DGEMM); use --check sampled or cpu"
                        .into(),
                )),
                CheckMode::Auto if (m * n) as u128 * k as u128 <= FULL_CPU_MAX_MNK => RefKind::Cpu,
                CheckMode::Auto if sessions.iter().any(has_blas) => RefKind::Dgemm,
                CheckMode::Auto => RefKind::Sampled,
            };
        let label = format!("{m}x{n}x{k}");
        check_memory(sessions, (m, n, k), kind, plan, call.precision)?;
        progress.set_message(format!("{label}: random inputs (seed {seed})"));
        let ops = Operands::for_problem(*call, seed);
        let reference = match kind {
            RefKind::Cpu => {
                progress.set_message(format!("{label}: f64 CPU reference (full)"));
                Reference::cpu(&ops)
            }
            RefKind::Sampled => {
                progress.set_message(format!("{label}: sampled f64 reference"));
                Reference::sampled(&ops)
            }
            RefKind::Dgemm => {
                progress.set_message(format!("{label}: f64 reference by cuBLAS DGEMM"));
                let session = sessions.iter().find(|s| has_blas(s));
                let got = session.map(|s| device_reference(s, &ops));
                match got {
                    Some(Ok(Some(c))) => {
                        let blas = session
                            .and_then(|s| s.backend.borrow().vendor_blas())
                            .unwrap_or_else(|| "cuBLAS".into());
                        Reference::Full {
                            c,
                            source: format!("f64 reference by {blas} DGEMM on the device"),
                        }
                    }
                    Some(Err(e)) => {
                        progress.suspend(|| {
                            eprintln!("note: {label}: the cuBLAS DGEMM reference failed ({e}); checking against a sampled f64 reference instead")
                        });
                        Reference::sampled(&ops)
                    }
                    _ => Reference::sampled(&ops),
                }
            }
        };
        Ok(Problem { ops, reference })
    }
}

/// Refuses a size whose inputs, reference and working sets do not fit.
fn check_memory(
    sessions: &[Session],
    size: (usize, usize, usize),
    kind: RefKind,
    plan: &Plan,
    precision: crate::gemm::problem::Precision,
) -> std::result::Result<(), Status> {
    let infos: Vec<crate::DeviceInfo> = sessions
        .iter()
        .map(|s| s.backend.borrow().info().clone())
        .collect();
    let flush = if plan.cache == crate::measure::CacheState::Cold {
        infos
            .iter()
            .filter_map(|i| i.l2_cache_bytes)
            .max()
            .unwrap_or(0)
            .clamp(128 << 20, 1 << 30)
            * 2
    } else {
        0
    };
    let need = memory::estimate(size, sessions.len(), kind, flush, precision);
    // Free memory where a toolchain tells (CUDA), else the device's total.
    let free = sessions
        .iter()
        .filter_map(|s| s.backend.borrow().memory_info())
        .map(|(free, _)| (free, "free"))
        .min()
        .or_else(|| {
            infos
                .iter()
                .filter_map(|i| i.global_mem_bytes)
                .min()
                .map(|t| (t, "in all"))
        });
    memory::fits(&need, memory::host_available(), free).map_err(|why| {
        Status::OutOfMemory(format!(
            "{}x{}x{} refused before allocating: {why}",
            size.0, size.1, size.2
        ))
    })
}

pub(super) fn base(
    experiment: &str,
    session: &Session,
    problem: &Problem,
    plan: &Plan,
) -> Measurement {
    let ops = &problem.ops;
    let be = session.backend.borrow();
    let mut row = row_on(experiment, be.info(), "", Status::Ok, (ops.m, ops.n, ops.k));
    row.compiler = None;
    row.cache = plan.cache;
    row.problem = Some(problem.ops.problem);
    row
}

/// One row per session for a point that could not be set up, with the reason.
pub fn failed_rows(
    sessions: &[Session],
    kernel: &str,
    status: &Status,
    size: (usize, usize, usize),
    experiment: &str,
) -> Vec<Measurement> {
    sessions
        .iter()
        .map(|s| {
            let mut row = row_on(
                experiment,
                s.backend.borrow().info(),
                kernel,
                status.clone(),
                size,
            );
            row.compiler = None;
            row
        })
        .collect()
}

/// Rows for a size that cannot be run at all (it does not fit): one per kernel and
/// session, each with the reason, written as they are made.
pub fn refused_size(
    sessions: &[Session],
    kernels: impl Iterator<Item = String>,
    status: &Status,
    size: (usize, usize, usize),
    experiment: &str,
    writer: &mut ResultWriter,
) -> Result<Vec<Measurement>> {
    let mut rows = Vec::new();
    for kernel in kernels {
        for row in failed_rows(sessions, &kernel, status, size, experiment) {
            writer.push(row.clone())?;
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The vendor BLAS (cuBLAS) on every session that has one. Returns its rows.
pub fn measure_vendor(
    sessions: &mut [Session],
    problem: &Problem,
    plan: &Plan,
    experiment: &str,
) -> Vec<Measurement> {
    let mut out = Vec::new();
    for s in sessions.iter_mut() {
        let mut row = base(experiment, s, problem, plan);
        row.kernel = "cublas".into();
        let cold = plan.cache == crate::measure::CacheState::Cold;
        // Borrow juggling: the runner borrows the session; the row needs it before and after.
        let outcome = match VendorRunner::prepare(s, &problem.ops, &problem.reference, cold) {
            Ok(None) => continue,
            Ok(Some((mut runner, check))) => {
                let passed = check.passed;
                let summary = check.summary();
                row.check = Some(check);
                if !passed {
                    runner.release();
                    Err(Status::WrongResult(format!(
                        "cuBLAS result check failed: {summary}"
                    )))
                } else {
                    let monitor = runner.session.monitor.as_ref();
                    let before = monitor.map(|m| m.read());
                    let stats = interleaved(&mut [&mut runner as &mut dyn Timed], plan).remove(0);
                    row.clocks = ClockWindow::new(before, monitor.map(|m| m.read()));
                    runner.release();
                    stats.map_err(|e| Status::LaunchError(e.to_string()))
                }
            }
            Err(e) => Err(Status::LaunchError(e.to_string())),
        };
        match outcome {
            Ok(stats) => {
                let (m, n, k) = (problem.ops.m, problem.ops.n, problem.ops.k);
                row.gflops = Some(gflops(m, n, k, stats.median_ns));
                row.gflops_best = Some(gflops(m, n, k, stats.min_ns));
                row.vs_vendor = Some(1.0);
                row.time = Some(stats);
            }
            Err(status) => row.status = status,
        }
        out.push(row);
    }
    out
}

/// One way of running a point: which session, and where its code comes from.
#[derive(Debug, Clone)]
pub struct Lane {
    pub session: usize,
    pub source: Source,
    pub variant: Option<String>,
}

impl Lane {
    /// A session compiling the kernel's own source.
    pub fn native(session: usize) -> Lane {
        Lane {
            session,
            source: Source::Native,
            variant: None,
        }
    }
}

/// One point on every session (natively), their repetitions interleaved.
pub fn measure_point(
    sessions: &mut [Session],
    point: &Point,
    problem: &Problem,
    plan: &Plan,
    experiment: &str,
    vendor: &[Measurement],
) -> Vec<Measurement> {
    let lanes: Vec<Lane> = (0..sessions.len())
        .map(|i| Lane {
            session: i,
            source: Source::Native,
            variant: None,
        })
        .collect();
    measure_lanes(sessions, point, &lanes, problem, plan, experiment, vendor)
}

/// One point along several lanes, their repetitions interleaved; one row per lane.
pub fn measure_lanes(
    sessions: &mut [Session],
    point: &Point,
    lanes: &[Lane],
    problem: &Problem,
    plan: &Plan,
    experiment: &str,
    vendor: &[Measurement],
) -> Vec<Measurement> {
    let items: Vec<(&Point, Lane)> = lanes.iter().map(|l| (point, l.clone())).collect();
    measure_items(sessions, &items, problem, plan, experiment, vendor)
}

/// Several points, each along its lane, all their repetitions interleaved (A B C
/// A B C ...), so drift falls on all alike; one row per item. The tuner's final
/// round measures each toolchain's top configurations this way.
pub fn measure_items(
    sessions: &mut [Session],
    items: &[(&Point, Lane)],
    problem: &Problem,
    plan: &Plan,
    experiment: &str,
    vendor: &[Measurement],
) -> Vec<Measurement> {
    measuring::measure(sessions, problem, items, plan, experiment, vendor)
}

/// A GEMM size through the measuring core: its items are a point (kernel,
/// configuration, hints) along a lane (session, where the code comes from).
impl<'p> Workload<(&'p Point, Lane)> for Problem {
    type Ready = Prepared;

    fn session(&self, (_, lane): &(&'p Point, Lane)) -> usize {
        lane.session
    }

    fn prepare(
        &self,
        sessions: &mut [Session],
        (point, lane): &(&'p Point, Lane),
        cold: bool,
    ) -> Attempt {
        let point_of = (&point.config, &point.hints);
        let job = Job::new(point.spec, point_of, (&self.ops, &self.reference), cold);
        prepare_job(&mut sessions[lane.session], &job, lane.source.code())
    }

    fn launch(&self, session: &Session, ready: &Prepared, count: usize) -> Result<u64> {
        KernelRunner {
            session,
            prepared: ready,
        }
        .run_batch(count)
    }

    fn flush(&self, session: &Session, ready: &Prepared) -> Result<()> {
        KernelRunner {
            session,
            prepared: ready,
        }
        .flush()
    }

    fn release(&self, session: &Session, ready: Prepared) {
        ready.release(session);
    }

    fn row(
        &self,
        experiment: &str,
        s: &Session,
        (point, lane): &(&'p Point, Lane),
        plan: &Plan,
    ) -> Measurement {
        let mut row = base(experiment, s, self, plan);
        row.kernel = point.spec.id.to_string();
        row.variant = lane.variant.clone();
        row.label = point.label.clone();
        // As computed: a `real` kernel's configuration carries the problem's precision.
        row.config = point
            .spec
            .with_precision(&point.config, self.ops.problem.precision)
            .unwrap_or_else(|_| point.config.clone());
        row.hints = point.hints.clone();
        row.compiler = s.backend.borrow().info().compiler_version.clone();
        row
    }

    fn resources(
        &self,
        (point, _): &(&'p Point, Lane),
        build: &BuildReport,
        info: &DeviceInfo,
    ) -> (Option<KernelResources>, Option<usize>) {
        (
            point
                .spec
                .resources(build, &point.config, info.toolchain.language()),
            Some(point.spec.threads_per_group(&point.config)),
        )
    }

    fn fill_ready(&self, row: &mut Measurement, p: &Prepared) {
        row.padded = Some(p.padded);
        row.pre_ns = Some(p.pre_ns);
        row.post_ns = Some(p.post_ns);
    }

    fn rates(&self, _: &Prepared, stats: &Stats) -> Rates {
        let (m, n, k) = (self.ops.m, self.ops.n, self.ops.k);
        Rates {
            gflops: Some(gflops(m, n, k, stats.median_ns)),
            gflops_best: Some(gflops(m, n, k, stats.min_ns)),
            gbs: None,
        }
    }

    fn paired_vendor(&self, sessions: &mut [Session], cold: bool) -> Option<(usize, VendorCall)> {
        pair_vendor(sessions, self, cold)
    }
}

/// The vendor BLAS's call at `problem`, checked, on the first session that has
/// one: `(session, call)`. None where no session has one or its check fails (the
/// caller's own vendor row already says why).
fn pair_vendor(
    sessions: &mut [Session],
    problem: &Problem,
    cold: bool,
) -> Option<(usize, VendorCall)> {
    for (i, s) in sessions.iter_mut().enumerate() {
        match VendorCall::prepare(s, &problem.ops, &problem.reference, cold, false) {
            Ok(Some((call, check))) if check.passed => return Some((i, call)),
            Ok(Some((call, _))) => call.release(s),
            Ok(None) | Err(_) => {}
        }
    }
    None
}

/// The configuration of a kernel under user defines at `precision`: those it
/// declares apply, others are ignored (they belong to other kernels); a kernel
/// written for both precisions is judged at the call's (its constraints differ by
/// precision); an invalid value is the cell's status, not the run's end.
pub fn config_for(
    spec: &KernelSpec,
    defines: &[(String, i64)],
    precision: crate::kernel::builtin::Precision,
) -> std::result::Result<Config, Status> {
    let mut own: Vec<(String, i64)> = defines
        .iter()
        .filter(|(n, _)| spec.params.iter().any(|p| p.name == n))
        .cloned()
        .collect();
    if spec.multi_precision() {
        own.push((crate::kernel::builtin::PRECISION.into(), precision.define()));
    }
    spec.config(&own)
        .map_err(|e| Status::InvalidConfig(e.to_string()))
}

/// Every define must be a parameter or a switch of some selected kernel.
pub fn check_defines(kernels: &[&KernelSpec], defines: &[(String, i64)]) -> Result<()> {
    for (name, _) in defines {
        let known = kernels
            .iter()
            .any(|k| k.params.iter().any(|p| p.name == name) || k.has_switch(name));
        if !known {
            let mut names: Vec<&str> = kernels
                .iter()
                .flat_map(|k| k.params.iter().map(|p| p.name))
                .collect();
            names.sort();
            names.dedup();
            let mut switches: Vec<&str> = kernels
                .iter()
                .flat_map(|k| k.switches.iter().map(|s| s.name()))
                .collect();
            switches.sort();
            switches.dedup();
            return Err(Error::invalid(format!(
                "--define {name}: no selected kernel has a parameter or switch {name} (parameters: {}; switches: {})",
                names.join(", "),
                switches.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::builtin::Precision;

    /// A define valid only in one precision is judged at the call's: tc's f64
    /// shapes are refused for f32 and taken for f64.
    #[test]
    fn defines_are_judged_at_the_calls_precision() {
        let tc = crate::kernel::builtin::find("tc").unwrap();
        let defines = vec![("MMA".to_string(), 1684), ("BK".to_string(), 4)];
        let c = config_for(tc, &defines, Precision::F64).unwrap();
        assert_eq!(c.get("PRECISION"), 64);
        assert!(matches!(
            config_for(tc, &defines, Precision::F32),
            Err(Status::InvalidConfig(e)) if e.contains("MMA must be 1688")
        ));
        // A kernel of one precision is not given PRECISION.
        let simt = crate::kernel::builtin::find("simt").unwrap();
        assert!(!config_for(simt, &[], Precision::F32)
            .unwrap()
            .0
            .contains_key("PRECISION"));
    }
}
