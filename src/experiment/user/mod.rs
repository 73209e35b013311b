//! Users' kernels (spec files) through the measuring core: a spec's dimensions
//! and its reference outputs are a [`Workload`] like a GEMM size, so every
//! protection and feature of the core serves both.

pub mod data;
mod describe;
pub mod run;
pub mod signature;

pub use describe::describe;

use crate::backend::{Backend, BuildReport, DeviceInfo, KernelResources};
use crate::error::{Error, Result};
use crate::gemm::driver::{Session, Source, Status};
use crate::kernel::builtin::{Config, Hints};
use crate::kernel::user::model::{Dims, Instance, Reference, UserKernel};
use crate::measure::progress::Progress;
use crate::measure::{Plan, Stats};
use crate::results::{row_on, Measurement, ResultWriter};
use run::{Attempt, Outputs};

use super::gemm::Lane;
use super::isolate;
use super::measuring::{self, Rates, Workload};

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

/// A plain GEMM size (`--sizes 4096`) where only users' kernels run is a
/// mistake, not a size to ignore: said with the dimensions each spec has.
pub fn refuse_plain_sizes(user: &[&UserKernel], plain: &[String]) -> Result<()> {
    if plain.is_empty() || user.is_empty() {
        return Ok(());
    }
    let dims: Vec<String> = user
        .iter()
        .map(|k| {
            let names: Vec<&str> = k.dims.iter().map(|(d, _)| d.as_str()).collect();
            format!(
                "{}: {}",
                k.id,
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )
        })
        .collect();
    let example = user
        .iter()
        .find_map(|k| k.dims.first())
        .map_or(String::new(), |(d, v)| format!(", e.g. --sizes {d}={v}"));
    Err(Error::invalid(format!(
        "--sizes {}: a plain size is a GEMM's, and no built-in kernel is selected; a spec's sizes are NAME=VALUE over its dimensions ({}){example}",
        plain.join(","),
        dims.join("; ")
    )))
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
    let mut row = row_on(
        experiment,
        s.backend.borrow().info(),
        &kernel.id,
        Status::Ok,
        (0, 0, 0),
    );
    row.dims = Some(dims.clone());
    row.cache = plan.cache;
    row
}

/// The reference outputs for every session: computed on each session (or, for
/// `reference = "toolchains"`, on the first and shared).
pub fn references(
    sessions: &[Session],
    kernel: &UserKernel,
    dims: &Dims,
    seed: u64,
) -> Vec<std::result::Result<Outputs, Status>> {
    let mut out: Vec<std::result::Result<Outputs, Status>> = Vec::new();
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
        let info = s.backend.borrow().info().clone();
        let tc = info.toolchain;
        if let Some(why) = kernel.requires.unmet(&info) {
            out.push(Err(Status::Unavailable(why)));
            continue;
        }
        if kernel.source(tc).is_none() && !matches!(kernel.check.reference, Reference::Spec(_)) {
            out.push(Err(Status::Unavailable(
                kernel.not_applicable(tc).unwrap_or_default(),
            )));
            continue;
        }
        // Its kernels run here for the first time: a crash or a hang costs this
        // session's reference, not the run.
        let key = format!("reference|{}|{tc}|{dims:?}", kernel.id);
        let what = format!("{}'s reference on {tc}", kernel.id);
        let computed = isolate::guard(&key, &what, || {
            let mut be = s.backend.borrow_mut();
            run::reference(&mut be, kernel, dims, seed).map_err(|e| Status::from_error(&e))
        });
        let r = computed.and_then(|r| r);
        if let Err(status) = &r {
            isolate::after_failure(&key, status, s);
        }
        out.push(r);
    }
    out
}

/// One configuration of a kernel, on one session, with the row's label.
#[derive(Debug, Clone)]
pub struct Item {
    pub config: Config,
    pub hints: Hints,
    pub label: Option<String>,
    /// Which session, and where the code comes from (its own source, or PTX
    /// another toolchain made, as `sweep jit` loads it).
    pub lane: Lane,
}

/// One configuration of one kernel at one size on every session, timed interleaved.
#[allow(clippy::too_many_arguments)]
pub fn measure_spec_point(
    sessions: &mut [Session],
    kernel: &UserKernel,
    config: &Config,
    hints: &Hints,
    dims: &Dims,
    refs: &[std::result::Result<Outputs, Status>],
    plan: &Plan,
    seed: u64,
    experiment: &str,
) -> Vec<Measurement> {
    let items: Vec<Item> = (0..sessions.len())
        .map(|session| Item {
            config: config.clone(),
            hints: hints.clone(),
            lane: Lane::native(session),
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
    sessions: &mut [Session],
    kernel: &UserKernel,
    items: &[Item],
    dims: &Dims,
    refs: &[std::result::Result<Outputs, Status>],
    plan: &Plan,
    seed: u64,
    experiment: &str,
) -> Vec<Measurement> {
    let at = UserPoint {
        kernel,
        dims,
        refs,
        seed,
    };
    measuring::measure(sessions, &at, items, plan, experiment, &[])
}

/// A user's kernel at one size point: its dimensions, its reference outputs per
/// session, and the seed its inputs are drawn from.
pub struct UserPoint<'a> {
    pub kernel: &'a UserKernel,
    pub dims: &'a Dims,
    pub refs: &'a [std::result::Result<Outputs, Status>],
    pub seed: u64,
}

/// A ready configuration: prepared, with the instance its rates come from.
pub struct UserReady {
    prepared: run::Prepared,
    inst: Instance,
    flush: Option<crate::backend::Buffer>,
}

impl Workload<Item> for UserPoint<'_> {
    type Ready = UserReady;

    fn session(&self, item: &Item) -> usize {
        item.lane.session
    }

    fn prepare(
        &self,
        sessions: &mut [Session],
        it: &Item,
        cold: bool,
    ) -> crate::gemm::driver::Attempt<UserReady> {
        let kernel = self.kernel;
        let inst = match kernel.instantiate(&it.config, self.dims) {
            Ok(i) => i,
            Err(e) => return not_prepared(Status::from_error(&e)),
        };
        let s = &mut sessions[it.lane.session];
        let tc = s.backend.borrow().info().toolchain;
        let a: Attempt = match &self.refs[it.lane.session] {
            Ok(reference) => {
                let data = run::inputs(kernel, &inst, self.seed);
                let code = match &it.lane.source {
                    Source::Native => run::Code::Source,
                    Source::Ptx(ptx) => run::Code::Ptx(ptx),
                };
                run::prepare(
                    s, kernel, &it.config, &it.hints, &inst, &data, reference, code,
                )
            }
            Err(why) if kernel.source(tc).is_none() => not_prepared(why.clone()),
            Err(why @ Status::Unavailable(_)) => not_prepared(why.clone()),
            // A spec that does not fit its kernel is that, also in its reference.
            Err(why @ (Status::BadArguments(_) | Status::CompileError(_))) => {
                not_prepared(why.clone())
            }
            // A crash, a hang or a fault is that, named as the reference's.
            Err(why @ (Status::Crashed(_) | Status::TimedOut(_) | Status::OutOfBounds(_))) => {
                let said = format!(
                    "its reference ({}): {}",
                    kernel.check.reference.describe(),
                    why.reason().unwrap_or("it failed")
                );
                not_prepared(match why {
                    Status::Crashed(_) => Status::Crashed(said),
                    Status::TimedOut(_) => Status::TimedOut(said),
                    _ => Status::OutOfBounds(said),
                })
            }
            Err(why) => not_prepared(Status::WrongResult(format!(
                "no reference to check against: {}",
                why.reason().unwrap_or("it failed")
            ))),
        };
        let flush = match (cold, &a.prepared) {
            (true, Some(_)) => s.flush_buffer().ok(),
            _ => None,
        };
        crate::gemm::driver::Attempt {
            prepared: a.prepared.map(|prepared| UserReady {
                prepared,
                inst,
                flush,
            }),
            status: a.status,
            build: a.build,
            check: a.check,
        }
    }

    fn launch(&self, session: &Session, ready: &UserReady, count: usize) -> Result<u64> {
        let mut be = session.backend.borrow_mut();
        ready.prepared.bound.run(&mut be, count)
    }

    fn flush(&self, session: &Session, ready: &UserReady) -> Result<()> {
        session.flush_l2(ready.flush)
    }

    fn release(&self, session: &Session, ready: UserReady) {
        ready.prepared.release(session);
    }

    fn row(&self, experiment: &str, s: &Session, it: &Item, plan: &Plan) -> Measurement {
        let mut row = base_row(experiment, s, self.kernel, self.dims, plan);
        row.config = it.config.clone();
        row.hints = it.hints.clone();
        row.label = it.label.clone();
        row.variant = it.lane.variant.clone();
        row
    }

    fn resources(
        &self,
        it: &Item,
        build: &BuildReport,
        _: &DeviceInfo,
    ) -> (Option<KernelResources>, Option<usize>) {
        let k = self.kernel;
        let entry = k.launches.first().map(|l| l.entry.as_str()).unwrap_or("");
        let threads = k
            .instantiate(&it.config, self.dims)
            .ok()
            .and_then(|i| i.launches.first().map(|(_, g, _)| g.threads_per_group()));
        (build.kernel(entry).cloned(), threads)
    }

    fn rates(&self, ready: &UserReady, stats: &Stats) -> Rates {
        let secs = stats.median_ns * 1e-9;
        let inst = &ready.inst;
        if secs <= 0.0 {
            return Rates::default();
        }
        Rates {
            gflops: inst.flops.map(|f| f / secs * 1e-9),
            gflops_best: inst.flops.map(|f| f / (stats.min_ns * 1e-9) * 1e-9),
            gbs: inst.bytes.map(|b| b / secs * 1e-9),
        }
    }
}

fn not_prepared<P>(status: Status) -> crate::gemm::driver::Attempt<P> {
    crate::gemm::driver::Attempt {
        prepared: None,
        status,
        build: None,
        check: None,
    }
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
    pub tuned: Option<crate::results::bests::Database>,
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
pub fn tuned_items(
    sessions: &mut [Session],
    db: &crate::results::bests::Database,
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
                        lane: Lane::native(session),
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
                        lane: Lane::native(session),
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
    sessions: &mut [Session],
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

/// Measures one configuration of `kernel` at `dims` on `backend`: compiled,
/// checked against the spec's reference, then timed (3 warm-up launches and
/// `reps` timed samples, warm cache). A kernel-level failure (compile error,
/// wrong result, fault) is the row's status; an error is for the request itself.
pub fn measure_on(
    backend: crate::AnyBackend,
    kernel: &UserKernel,
    config: &crate::kernel::builtin::Config,
    dims: &Dims,
    reps: usize,
    seed: u64,
) -> crate::Result<crate::results::Measurement> {
    let mut sessions = [crate::gemm::driver::Session::new(backend)];
    kernel.instantiate(config, dims)?;
    let plan = crate::measure::Plan {
        reps: reps.max(1),
        ..Default::default()
    };
    let refs = references(&sessions, kernel, dims, seed);
    let mut rows = measure_spec_point(
        &mut sessions,
        kernel,
        config,
        &Default::default(),
        dims,
        &refs,
        &plan,
        seed,
        "compare",
    );
    Ok(rows.remove(0))
}
