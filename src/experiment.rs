//! Experiments: one point (kernel configuration + hints) measured on every
//! toolchain at one size, interleaved; the vendor BLAS at the same size; and
//! `compare`, which walks sizes x kernels. Sweeps reuse `measure_point`.

use crate::backend::{Backend, Toolchain};
use crate::clocks::ClockWindow;
use crate::error::{Error, Result};
use crate::gemm::check::{CheckMode, FULL_CPU_MAX_MNK};
use crate::gemm::driver::device_reference;
use crate::gemm::driver::{
    prepare_from, Attempt, KernelRunner, Session, Source, Status, VendorCall, VendorRunner,
};
use crate::gemm::memory::{self, RefKind};
use crate::gemm::problem::{Problem as GemmCall, Template};
use crate::gemm::{Operands, Reference};
use crate::kernels::{Config, Hints, KernelSpec};
use crate::measure::{gflops, interleaved, Plan, Timed};
use crate::occupancy;
use crate::progress::Progress;
use crate::results::{Measurement, ResultWriter};

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

fn base(experiment: &str, session: &Session, problem: &Problem, plan: &Plan) -> Measurement {
    let be = session.backend.borrow();
    let info = be.info();
    let mut row = failed_row(
        experiment,
        &info.name,
        &info.id,
        info.toolchain,
        "",
        Status::Ok,
        (problem.ops.m, problem.ops.n, problem.ops.k),
    );
    row.cache = plan.cache;
    row.problem = Some(problem.ops.problem);
    row
}

/// A row for a point that could not be set up (invalid configuration, ...).
pub fn failed_row(
    experiment: &str,
    device: &str,
    device_id: &str,
    toolchain: Toolchain,
    kernel: &str,
    status: Status,
    (m, n, k): (usize, usize, usize),
) -> Measurement {
    Measurement {
        experiment: experiment.to_string(),
        kernel: kernel.to_string(),
        variant: None,
        label: None,
        toolchain,
        device: device.to_string(),
        device_id: device_id.to_string(),
        m,
        n,
        k,
        problem: None,
        padded: None,
        config: Config::default(),
        hints: Hints::default(),
        cache: crate::measure::CacheState::Warm,
        status,
        check: None,
        time: None,
        gflops: None,
        gflops_best: None,
        vs_vendor: None,
        vendor_paired: None,
        pre_ns: None,
        post_ns: None,
        resources: None,
        compiler: None,
        compile_ms: None,
        build_notes: Vec::new(),
        occupancy: None,
        ptx_mix: None,
        ptx_file: None,
        clocks: None,
        dims: None,
        gbs: None,
    }
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
            let be = s.backend.borrow();
            let info = be.info();
            failed_row(
                experiment,
                &info.name,
                &info.id,
                info.toolchain,
                kernel,
                status.clone(),
                size,
            )
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
    let cold = plan.cache == crate::measure::CacheState::Cold;
    let attempts: Vec<Attempt> = items
        .iter()
        .map(|(point, l)| {
            prepare_from(
                &mut sessions[l.session],
                point.spec,
                &point.config,
                &point.hints,
                &problem.ops,
                &problem.reference,
                cold,
                &l.source,
            )
        })
        .collect();
    // Where the caller timed the vendor BLAS at this size, it is timed again inside
    // the interleaved repetitions, and each row's ratio is against that.
    let paired_call = match vendor.iter().any(|v| v.status.is_ok())
        && attempts.iter().any(|a| a.prepared.is_some())
    {
        true => pair_vendor(sessions, problem, cold),
        false => None,
    };
    let mut runners: Vec<KernelRunner> = Vec::new();
    for ((_, l), a) in items.iter().zip(&attempts) {
        if let Some(p) = &a.prepared {
            runners.push(KernelRunner {
                session: &sessions[l.session],
                prepared: p,
            });
        }
    }
    let mut paired = paired_call.map(|(i, call)| VendorRunner {
        session: &sessions[i],
        call,
    });
    let mut refs: Vec<&mut dyn Timed> = runners.iter_mut().map(|r| r as &mut dyn Timed).collect();
    if let Some(v) = paired.as_mut() {
        refs.push(v as &mut dyn Timed);
    }
    let before = crate::gemm::driver::read_clocks(sessions);
    let mut timed = interleaved(&mut refs, plan);
    let after = crate::gemm::driver::read_clocks(sessions);
    drop(refs);
    drop(runners);
    let vendor_paired = match paired {
        Some(v) => {
            v.release();
            timed.pop().and_then(|t| t.ok())
        }
        None => None,
    };
    let vendor_gflops = vendor
        .iter()
        .find(|v| v.status.is_ok())
        .and_then(|v| v.gflops);
    let (m, n, k) = (problem.ops.m, problem.ops.n, problem.ops.k);
    let mut out = Vec::new();
    let mut timed = timed.into_iter();
    for ((point, l), a) in items.iter().zip(attempts) {
        let s = &sessions[l.session];
        let mut row = base(experiment, s, problem, plan);
        row.kernel = point.spec.id.to_string();
        row.variant = l.variant.clone();
        row.label = point.label.clone();
        // As computed: a `real` kernel's configuration carries the problem's precision.
        row.config = point
            .spec
            .with_precision(&point.config, problem.ops.problem.precision)
            .unwrap_or_else(|_| point.config.clone());
        row.hints = point.hints.clone();
        row.status = a.status.clone();
        row.check = a.check.clone();
        if a.prepared.is_some() {
            row.clocks = ClockWindow::new(before[l.session].clone(), after[l.session].clone());
        }
        row.compiler = a
            .build
            .as_ref()
            .and_then(|b| b.compiler.clone())
            .or_else(|| s.backend.borrow().info().compiler_version.clone());
        let info = s.backend.borrow().info().clone();
        if let Some(b) = &a.build {
            row.resources = point
                .spec
                .resources(b, &point.config, info.toolchain.language());
            row.compile_ms = Some(b.compile_ms);
            row.build_notes = b.notes.clone();
            row.ptx_mix = b.ptx.as_deref().map(crate::ptx::instruction_mix);
            if let (Some(dir), Some(ptx)) = (&s.keep_ptx, &b.ptx) {
                row.ptx_file = keep_ptx(dir, &row, ptx);
            }
        }
        if let Some(r) = &row.resources {
            row.occupancy =
                occupancy::for_kernel(&info, r, point.spec.threads_per_group(&point.config));
        }
        if let Some(p) = a.prepared {
            row.padded = Some(p.padded);
            row.pre_ns = Some(p.pre_ns);
            row.post_ns = Some(p.post_ns);
            match timed.next() {
                Some(Ok(stats)) => {
                    row.gflops = Some(gflops(m, n, k, stats.median_ns));
                    row.gflops_best = Some(gflops(m, n, k, stats.min_ns));
                    row.vs_vendor = match (vendor_paired, row.gflops, vendor_gflops) {
                        (Some(v), _, _) => Some(v.median_ns / stats.median_ns),
                        (None, Some(g), Some(v)) if v > 0.0 => Some(g / v),
                        _ => None,
                    };
                    row.vendor_paired = vendor_paired;
                    row.time = Some(stats);
                }
                Some(Err(e)) => row.status = Status::LaunchError(e.to_string()),
                None => row.status = Status::LaunchError("internal: no timing result".into()),
            }
            p.release(s);
        }
        out.push(row);
    }
    out
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

/// Writes a build's PTX under `dir` (named by kernel, toolchain and content hash,
/// so identical listings are stored once) and returns its path relative to the
/// result directory. A write failure costs the file, not the measurement.
pub(crate) fn keep_ptx(dir: &std::path::Path, row: &Measurement, ptx: &str) -> Option<String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ptx.hash(&mut h);
    let variant = row
        .variant
        .as_deref()
        .map_or(String::new(), |v| format!("-{v}"));
    let name = format!(
        "{}-{}{variant}-{:016x}.ptx",
        row.kernel,
        row.toolchain,
        h.finish()
    );
    let path = dir.join(&name);
    if !path.exists() {
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, ptx)) {
            eprintln!("note: could not keep PTX in {}: {e}", path.display());
            return None;
        }
    }
    let folder = dir
        .file_name()
        .map_or("ptx".into(), |f| f.to_string_lossy().into_owned());
    Some(format!("{folder}/{name}"))
}

/// `gemmlab compare`: sizes x kernels x toolchains, cuBLAS first at each size.
pub struct CompareOptions {
    pub kernels: Vec<&'static KernelSpec>,
    pub defines: Vec<(String, i64)>,
    pub hints: Hints,
    pub sizes: Vec<(usize, usize, usize)>,
    /// The GEMM call at each size (layout, transposes, alpha/beta, ld, precision).
    pub call: Template,
    pub plan: Plan,
    pub seed: u64,
    /// `compare --tuned`: each toolchain runs the configuration the database of
    /// bests holds for it (tuned at the nearest size), else the published defaults.
    pub tuned: Option<crate::bests::Database>,
}

/// The configuration of a kernel under user defines at `precision`: those it
/// declares apply, others are ignored (they belong to other kernels); a kernel
/// written for both precisions is judged at the call's (its constraints differ by
/// precision); an invalid value is the cell's status, not the run's end.
pub fn config_for(
    spec: &KernelSpec,
    defines: &[(String, i64)],
    precision: crate::kernels::Precision,
) -> std::result::Result<Config, Status> {
    let mut own: Vec<(String, i64)> = defines
        .iter()
        .filter(|(n, _)| spec.params.iter().any(|p| p.name == n))
        .cloned()
        .collect();
    if spec.multi_precision() {
        own.push((crate::kernels::PRECISION.into(), precision.define()));
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

pub fn run_compare(
    sessions: &mut [Session],
    opts: &CompareOptions,
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_size_done: impl FnMut(&[Measurement]),
) -> Result<()> {
    check_defines(&opts.kernels, &opts.defines)?;
    for &(m, n, k) in &opts.sizes {
        let call = opts.call.at(m, n, k)?;
        let problem = match Problem::prepare(sessions, &call, opts.seed, &opts.plan, progress) {
            Ok(p) => p,
            Err(status) => {
                let ids = opts.kernels.iter().map(|spec| spec.id.to_string());
                let rows = refused_size(sessions, ids, &status, (m, n, k), "compare", writer)?;
                progress.inc(opts.kernels.len() as u64);
                on_size_done(&rows);
                continue;
            }
        };
        let mut size_rows = Vec::new();
        if sessions
            .iter()
            .any(|s| s.backend.borrow().vendor_blas().is_some())
        {
            progress.set_message(format!("{m}x{n}x{k}: cuBLAS"));
        }
        let vendor = measure_vendor(sessions, &problem, &opts.plan, "compare");
        if let Some(v) = sessions
            .iter()
            .find_map(|s| s.backend.borrow().vendor_blas())
        {
            writer.env_mut().vendor_blas = Some(v);
        }
        for row in &vendor {
            writer.push(row.clone())?;
            size_rows.push(row.clone());
        }
        for spec in &opts.kernels {
            progress.set_message(format!("{m}x{n}x{k}: {} ({})", spec.id, spec.title));
            let rows = if let Some(db) = &opts.tuned {
                let points: Vec<Point> = sessions
                    .iter()
                    .map(|s| {
                        tuned_point(
                            db,
                            spec,
                            s.backend.borrow().toolchain(),
                            (m, n, k),
                            call.precision,
                            progress,
                        )
                    })
                    .collect();
                let items: Vec<(&Point, Lane)> = points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        (
                            p,
                            Lane {
                                session: i,
                                source: Source::Native,
                                variant: None,
                            },
                        )
                    })
                    .collect();
                measure_items(sessions, &items, &problem, &opts.plan, "compare", &vendor)
            } else {
                match config_for(spec, &opts.defines, problem.ops.problem.precision) {
                    Ok(config) => {
                        let point = Point {
                            spec,
                            config,
                            hints: spec.own_hints(&opts.hints),
                            label: None,
                        };
                        measure_point(sessions, &point, &problem, &opts.plan, "compare", &vendor)
                    }
                    Err(status) => sessions
                        .iter()
                        .map(|s| {
                            let mut r = base("compare", s, &problem, &opts.plan);
                            r.kernel = spec.id.to_string();
                            r.status = status.clone();
                            r
                        })
                        .collect(),
                }
            };
            for row in rows {
                writer.push(row.clone())?;
                size_rows.push(row);
            }
            progress.inc(1);
        }
        for s in sessions.iter_mut() {
            s.unload();
        }
        on_size_done(&size_rows);
    }
    Ok(())
}

/// The point `compare --tuned` runs for a kernel on a toolchain, said aloud.
fn tuned_point(
    db: &crate::bests::Database,
    spec: &'static KernelSpec,
    toolchain: Toolchain,
    size: (usize, usize, usize),
    precision: crate::gemm::problem::Precision,
    progress: &Progress,
) -> Point {
    let found = db
        .lookup_in(spec.id, toolchain, precision, size)
        .filter(|b| spec.validate(&b.config).is_ok());
    let (config, hints, label) = match found {
        Some(b) => {
            let label = format!("tuned at {}x{}x{}", b.m, b.n, b.k);
            let stale = if b.source != crate::keys::fnv1a(&spec.source(toolchain)) {
                " (the kernel source changed since)"
            } else {
                ""
            };
            progress.suspend(|| {
                println!(
                    "{} {toolchain}: {label}{stale}: {} {}",
                    spec.id,
                    b.config.describe(),
                    b.hints.describe(true)
                )
            });
            (b.config.clone(), b.hints.clone(), label)
        }
        None => {
            progress.suspend(|| {
                println!(
                    "{} {toolchain}: no tuned entry in the database, published defaults",
                    spec.id
                )
            });
            (
                spec.defaults(),
                Hints::default(),
                "published (not tuned)".to_string(),
            )
        }
    };
    Point {
        spec,
        config,
        hints,
        label: Some(label),
    }
}

/// Toolchains of the sessions, in order.
pub fn toolchains(sessions: &[Session]) -> Vec<Toolchain> {
    sessions
        .iter()
        .map(|s| s.backend.borrow().info().toolchain)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Precision;

    /// A define valid only in one precision is judged at the call's: tc's f64
    /// shapes are refused for f32 and taken for f64.
    #[test]
    fn defines_are_judged_at_the_calls_precision() {
        let tc = crate::kernels::find("tc").unwrap();
        let defines = vec![("MMA".to_string(), 1684), ("BK".to_string(), 4)];
        let c = config_for(tc, &defines, Precision::F64).unwrap();
        assert_eq!(c.get("PRECISION"), 64);
        assert!(matches!(
            config_for(tc, &defines, Precision::F32),
            Err(Status::InvalidConfig(e)) if e.contains("MMA must be 1688")
        ));
        // A kernel of one precision is not given PRECISION.
        let simt = crate::kernels::find("simt").unwrap();
        assert!(!config_for(simt, &[], Precision::F32)
            .unwrap()
            .0
            .contains_key("PRECISION"));
    }
}
