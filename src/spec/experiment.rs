//! Users' kernels through the experiment machinery: each size point on every
//! session, repetitions interleaved by `measure::interleaved`, one
//! `results::Measurement` per kernel, size and toolchain, written as measured.

use crate::backend::Backend;
use crate::clocks::ClockWindow;
use crate::error::{Error, Result};
use crate::experiment::failed_row;
use crate::gemm::driver::{Session, Status};
use crate::kernels::{Config, Hints};
use crate::measure::{interleaved, CacheState, Plan, Stats, Timed};
use crate::occupancy;
use crate::progress::Progress;
use crate::results::{Measurement, ResultWriter};

use super::model::{Dims, Instance, Reference, UserKernel};
use super::run::{self, Attempt, Outputs};

/// Every size point a kernel runs at: each point's own dimensions (names other
/// kernels have are theirs), the defaults for the rest. A name no selected kernel
/// has is an error.
pub fn points_for(kernel: &UserKernel, all: &[&UserKernel], given: &[Dims]) -> Result<Vec<Dims>> {
    for p in given {
        for name in p.keys() {
            if !all.iter().any(|k| k.dims.iter().any(|(d, _)| d == name)) {
                let known: Vec<String> = all
                    .iter()
                    .map(|k| {
                        format!(
                            "{}: {}",
                            k.id,
                            k.dims
                                .iter()
                                .map(|(d, _)| d.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    })
                    .collect();
                return Err(Error::invalid(format!(
                    "--sizes {name}=...: no selected spec has a dimension {name} ({})",
                    known.join("; ")
                )));
            }
        }
    }
    if given.is_empty() {
        return Ok(vec![kernel.dims_at(&Dims::new())?]);
    }
    let mut out: Vec<Dims> = Vec::new();
    for p in given {
        let own: Dims = p
            .iter()
            .filter(|(n, _)| kernel.dims.iter().any(|(d, _)| d == *n))
            .map(|(n, v)| (n.clone(), *v))
            .collect();
        let d = kernel.dims_at(&own)?;
        if !out.contains(&d) {
            out.push(d);
        }
    }
    Ok(out)
}

/// The configuration a kernel runs under the command line's defines: those it
/// declares apply, others belong to other kernels.
pub fn config_for(kernel: &UserKernel, defines: &[(String, i64)]) -> Result<Config> {
    let own: Vec<(String, i64)> = defines
        .iter()
        .filter(|(n, _)| kernel.params.iter().any(|p| &p.name == n))
        .cloned()
        .collect();
    kernel.config(&own)
}

/// A row for a kernel at a size on a session, filled in as far as known.
pub fn base_row(
    experiment: &str,
    s: &Session,
    kernel: &UserKernel,
    dims: &Dims,
    plan: &Plan,
) -> Measurement {
    let be = s.backend.borrow();
    let info = be.info();
    let mut row = failed_row(
        experiment,
        &info.name,
        &info.id,
        info.toolchain,
        &kernel.id,
        Status::Ok,
        (0, 0, 0),
    );
    row.dims = Some(dims.clone());
    row.cache = plan.cache;
    row.compiler = info.compiler_version.clone();
    row
}

/// What the compiler said about the measured entry point, on a row.
pub fn fill_build(
    row: &mut Measurement,
    s: &Session,
    kernel: &UserKernel,
    inst: &Instance,
    a: &Attempt,
) {
    let Some(b) = &a.build else { return };
    let entry = kernel
        .launches
        .first()
        .map(|l| l.entry.as_str())
        .unwrap_or_default();
    row.resources = b.kernel(entry).cloned();
    row.compile_ms = Some(b.compile_ms);
    row.build_notes = b.notes.clone();
    if let Some(c) = &b.compiler {
        row.compiler = Some(c.clone());
    }
    row.ptx_mix = b.ptx.as_deref().map(crate::ptx::instruction_mix);
    if let (Some(dir), Some(ptx)) = (&s.keep_ptx, &b.ptx) {
        row.ptx_file = crate::experiment::keep_ptx(dir, row, ptx);
    }
    if let (Some(r), Some((_, g, _))) = (&row.resources, inst.launches.first()) {
        let info = s.backend.borrow().info().clone();
        row.occupancy = occupancy::for_kernel(&info, r, g.threads_per_group());
    }
}

/// Rates from a median time: GFLOP/s and GB/s where the spec states the work.
pub fn fill_rates(row: &mut Measurement, inst: &Instance, stats: &Stats) {
    let secs = stats.median_ns * 1e-9;
    if secs > 0.0 {
        row.gflops = inst.flops.map(|f| f / secs * 1e-9);
        row.gbs = inst.bytes.map(|b| b / secs * 1e-9);
        row.gflops_best = inst.flops.map(|f| f / (stats.min_ns * 1e-9) * 1e-9);
    }
    row.time = Some(*stats);
}

/// The reference outputs for every session: computed on each session (or, for
/// `reference = "toolchains"`, on the first and shared).
pub fn references(
    sessions: &[Session],
    kernel: &UserKernel,
    dims: &Dims,
    seed: u64,
) -> Vec<std::result::Result<Outputs, String>> {
    let mut out: Vec<std::result::Result<Outputs, String>> = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let shared = matches!(kernel.check.reference, Reference::Toolchains) && i > 0;
        if shared {
            // The first toolchain's defaults serve every toolchain; where it has no
            // source, each computes its own.
            if let Some(Ok(first)) = out.first() {
                out.push(Ok(first.clone()));
                continue;
            }
        }
        let tc = s.backend.borrow().info().toolchain;
        if kernel.source(tc).is_none() && !matches!(kernel.check.reference, Reference::Spec(_)) {
            out.push(Err(kernel.not_applicable(tc).unwrap_or_default()));
            continue;
        }
        let mut be = s.backend.borrow_mut();
        out.push(run::reference(&mut be, kernel, dims, seed).map_err(|e| e.to_string()));
    }
    out
}

/// A scratch buffer for cold repetitions: twice the L2, at least 256 MiB.
fn flush_buffer(s: &Session) -> Option<crate::backend::Buffer> {
    let mut be = s.backend.borrow_mut();
    let l2 = be
        .info()
        .l2_cache_bytes
        .unwrap_or(0)
        .clamp(128 << 20, 1 << 30);
    be.alloc(crate::backend::Elem::F32, (2 * l2 as usize) / 4)
        .ok()
}

/// One configuration of a kernel, on one session, with the row's label.
#[derive(Debug, Clone)]
pub struct Item {
    pub config: Config,
    pub hints: Hints,
    pub session: usize,
    pub label: Option<String>,
}

/// One configuration of one kernel at one size on every session, timed interleaved.
#[allow(clippy::too_many_arguments)]
pub fn measure_spec_point(
    sessions: &[Session],
    kernel: &UserKernel,
    config: &Config,
    hints: &Hints,
    dims: &Dims,
    refs: &[std::result::Result<Outputs, String>],
    plan: &Plan,
    seed: u64,
    experiment: &str,
) -> Vec<Measurement> {
    let items: Vec<Item> = (0..sessions.len())
        .map(|session| Item {
            config: config.clone(),
            hints: hints.clone(),
            session,
            label: None,
        })
        .collect();
    measure_spec_items(sessions, kernel, &items, dims, refs, plan, seed, experiment)
}

/// Several configurations of one kernel at one size, each on its session, all
/// their repetitions interleaved (A B C A B C ...); one row per item. `refs` holds
/// the reference outputs per session.
#[allow(clippy::too_many_arguments)]
pub fn measure_spec_items(
    sessions: &[Session],
    kernel: &UserKernel,
    items: &[Item],
    dims: &Dims,
    refs: &[std::result::Result<Outputs, String>],
    plan: &Plan,
    seed: u64,
    experiment: &str,
) -> Vec<Measurement> {
    let insts: Vec<Result<Instance>> = items
        .iter()
        .map(|it| kernel.instantiate(&it.config, dims))
        .collect();
    let attempts: Vec<Option<Attempt>> = items
        .iter()
        .zip(&insts)
        .map(|(it, inst)| {
            let inst = inst.as_ref().ok()?;
            let s = &sessions[it.session];
            let data = run::inputs(kernel, inst, seed);
            Some(match &refs[it.session] {
                Ok(reference) => run::prepare(
                    s, kernel, &it.config, &it.hints, inst, &data, reference, None,
                ),
                Err(why) => {
                    let tc = s.backend.borrow().info().toolchain;
                    Attempt {
                        prepared: None,
                        status: if kernel.source(tc).is_none() {
                            Status::Unavailable(why.clone())
                        } else {
                            Status::WrongResult(format!("no reference to check against: {why}"))
                        },
                        build: None,
                        check: None,
                    }
                }
            })
        })
        .collect();
    let cold = plan.cache == CacheState::Cold;
    let flushes: Vec<Option<crate::backend::Buffer>> = items
        .iter()
        .zip(&attempts)
        .map(|(it, a)| {
            let ready = a.as_ref().is_some_and(|a| a.prepared.is_some());
            if cold && ready {
                flush_buffer(&sessions[it.session])
            } else {
                None
            }
        })
        .collect();
    let mut runners: Vec<run::Runner> = Vec::new();
    for ((it, a), f) in items.iter().zip(&attempts).zip(&flushes) {
        if let Some(p) = a.as_ref().and_then(|a| a.prepared.as_ref()) {
            runners.push(run::Runner {
                session: &sessions[it.session],
                prepared: p,
                flush: *f,
            });
        }
    }
    let mut timed_refs: Vec<&mut dyn Timed> =
        runners.iter_mut().map(|r| r as &mut dyn Timed).collect();
    let before = crate::gemm::driver::read_clocks(sessions);
    let timed = interleaved(&mut timed_refs, plan);
    let after = crate::gemm::driver::read_clocks(sessions);
    drop(timed_refs);
    drop(runners);
    let mut timed = timed.into_iter();
    let mut rows = Vec::new();
    for ((it, inst), a) in items.iter().zip(&insts).zip(attempts) {
        let s = &sessions[it.session];
        let mut row = base_row(experiment, s, kernel, dims, plan);
        row.config = it.config.clone();
        row.hints = it.hints.clone();
        row.label = it.label.clone();
        let (inst, a) = match (inst, a) {
            (Ok(inst), Some(a)) => (inst, a),
            (Err(e), _) => {
                row.status = Status::from_error(e);
                rows.push(row);
                continue;
            }
            (Ok(_), None) => {
                row.status = Status::LaunchError("internal: no attempt".into());
                rows.push(row);
                continue;
            }
        };
        row.status = a.status.clone();
        row.check = a.check.clone();
        fill_build(&mut row, s, kernel, inst, &a);
        if let Some(p) = a.prepared {
            row.clocks = ClockWindow::new(before[it.session].clone(), after[it.session].clone());
            match timed.next() {
                Some(Ok(stats)) => fill_rates(&mut row, inst, &stats),
                Some(Err(e)) => row.status = Status::LaunchError(e.to_string()),
                None => row.status = Status::LaunchError("internal: no timing result".into()),
            }
            p.release(s);
        }
        rows.push(row);
    }
    for (it, f) in items.iter().zip(flushes) {
        if let Some(f) = f {
            sessions[it.session].backend.borrow_mut().free(f);
        }
    }
    rows
}

/// What `compare --spec` runs.
pub struct SpecCompare<'a> {
    pub kernels: Vec<&'a UserKernel>,
    /// Size points from `--sizes NAME=VALUE,...`; empty: each kernel's defaults.
    pub points: Vec<Dims>,
    pub defines: Vec<(String, i64)>,
    pub hints: Hints,
    pub plan: Plan,
    pub seed: u64,
    /// `compare --tuned`: each toolchain runs the configuration the database of
    /// bests holds for it (tuned at these dims, else the nearest), else the defaults.
    pub tuned: Option<crate::bests::Database>,
}

impl SpecCompare<'_> {
    /// Every (kernel, size) the run will measure, checked before any device work:
    /// unknown dimensions, bad defines, lengths, geometry and per-size constraints.
    pub fn plan_points(&self) -> Result<Vec<(&UserKernel, Vec<Dims>)>> {
        let mut out = Vec::new();
        for k in &self.kernels {
            let points = points_for(k, &self.kernels, &self.points)?;
            let config = config_for(k, &self.defines)?;
            for d in &points {
                k.instantiate(&config, d)?;
            }
            out.push((*k, points));
        }
        Ok(out)
    }
}

/// The configuration each session runs under `compare --tuned`, said aloud.
fn tuned_items(
    sessions: &[Session],
    db: &crate::bests::Database,
    k: &UserKernel,
    dims: &Dims,
    progress: &Progress,
) -> Vec<Item> {
    (0..sessions.len())
        .map(|session| {
            let tc = sessions[session].backend.borrow().info().toolchain;
            let found = db.lookup_dims(&k.id, tc, dims).filter(|b| {
                k.param_violation(&b.config).is_none() && k.instantiate(&b.config, dims).is_ok()
            });
            match found {
                Some(b) => {
                    let label = format!("tuned at {}", b.call.as_deref().unwrap_or("?"));
                    progress.suspend(|| {
                        println!(
                            "{} {tc}: {label}: {}",
                            k.id,
                            (b.hints).describe_with(&b.config, crate::kernel::unchanged_name(true))
                        )
                    });
                    Item {
                        config: b.config.clone(),
                        hints: b.hints.clone(),
                        session,
                        label: Some(label),
                    }
                }
                None => {
                    progress.suspend(|| {
                        println!(
                            "{} {tc}: no tuned entry in the database that fits, defaults",
                            k.id
                        )
                    });
                    Item {
                        config: k.defaults(),
                        hints: Hints::default(),
                        session,
                        label: Some(format!(
                            "{} (not tuned)",
                            crate::kernel::unchanged_name(true)
                        )),
                    }
                }
            }
        })
        .collect()
}

/// `compare` for users' kernels: every kernel at every size on every session.
pub fn run_spec_compare(
    sessions: &[Session],
    opts: &SpecCompare,
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_point_done: impl FnMut(&[Measurement]),
) -> Result<()> {
    let planned = opts.plan_points()?;
    for (k, points) in planned {
        let config = config_for(k, &opts.defines)?;
        for dims in points {
            let size = UserKernel::describe_dims(&dims);
            progress.set_message(format!(
                "{}: {size}: reference ({})",
                k.id,
                k.check.reference.describe()
            ));
            let refs = references(sessions, k, &dims, opts.seed);
            progress.set_message(format!("{}: {size}", k.id));
            let rows = match &opts.tuned {
                None => measure_spec_point(
                    sessions,
                    k,
                    &config,
                    &opts.hints,
                    &dims,
                    &refs,
                    &opts.plan,
                    opts.seed,
                    "compare",
                ),
                Some(db) => {
                    let items = tuned_items(sessions, db, k, &dims, progress);
                    measure_spec_items(
                        sessions, k, &items, &dims, &refs, &opts.plan, opts.seed, "compare",
                    )
                }
            };
            for r in &rows {
                writer.push(r.clone())?;
            }
            progress.inc(1);
            on_point_done(&rows);
        }
    }
    Ok(())
}

/// A sweep over users' kernels: every kernel at every size, each variant of the
/// hints (register caps, fast math) on every session, all interleaved; one row
/// per variant and session, labelled with the variant.
#[allow(clippy::too_many_arguments)]
pub fn run_spec_sweep(
    sessions: &[Session],
    opts: &SpecCompare,
    variants: &[(String, Hints)],
    experiment: &str,
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_point_done: impl FnMut(&[Measurement]),
) -> Result<()> {
    let planned = opts.plan_points()?;
    for (k, points) in planned {
        let config = config_for(k, &opts.defines)?;
        for dims in points {
            let size = UserKernel::describe_dims(&dims);
            progress.set_message(format!("{}: {size}: reference", k.id));
            let refs = references(sessions, k, &dims, opts.seed);
            let items: Vec<Item> = variants
                .iter()
                .flat_map(|(label, hints)| {
                    (0..sessions.len()).map(move |session| (label, hints, session))
                })
                .map(|(label, hints, session)| Item {
                    config: config.clone(),
                    hints: hints.clone(),
                    session,
                    label: Some(label.clone()),
                })
                .collect();
            progress.set_message(format!("{}: {size}: {} variants", k.id, variants.len()));
            let rows = measure_spec_items(
                sessions, k, &items, &dims, &refs, &opts.plan, opts.seed, experiment,
            );
            for r in &rows {
                writer.push(r.clone())?;
            }
            progress.inc(1);
            on_point_done(&rows);
        }
    }
    Ok(())
}
