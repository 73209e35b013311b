//! `compare`: every kernel, built-in or a user's, at every point on every
//! session, one row per kernel, point and toolchain, written as measured.

use super::gemm::{
    base, check_defines, config_for, measure_items, measure_point, measure_vendor, refused_size,
    Lane, Point, Problem,
};
use super::user::{self, SpecCompare};
use crate::backend::{Backend, Toolchain};
use crate::error::{Error, Result};
use crate::gemm::driver::{Session, Source};
use crate::gemm::problem::Template;
use crate::kernel::builtin::{Hints, KernelSpec};
use crate::kernel::user::{Dims, UserKernel};
use crate::measure::progress::Progress;
use crate::measure::Plan;
use crate::results::{Measurement, ResultWriter};

/// `gemmlab compare`: every kernel at every point on every toolchain. Built-in
/// GEMMs run at `sizes` (cuBLAS first at each size), users' kernels at their
/// dimension `points`; both through the one measuring core.
pub struct CompareOptions<'a> {
    pub kernels: Vec<&'static KernelSpec>,
    /// Users' kernels (spec files).
    pub user: Vec<&'a UserKernel>,
    /// Their size points from `--sizes NAME=VALUE,...`; empty: each kernel's defaults.
    pub points: Vec<Dims>,
    pub defines: Vec<(String, i64)>,
    pub hints: Hints,
    pub sizes: Vec<(usize, usize, usize)>,
    /// The GEMM call at each size (layout, transposes, alpha/beta, ld, precision).
    pub call: Template,
    pub plan: Plan,
    pub seed: u64,
    /// `compare --tuned`: each toolchain runs the configuration the database of
    /// bests holds for it (tuned at the nearest size), else the published defaults.
    pub tuned: Option<crate::results::bests::Database>,
}

impl CompareOptions<'_> {
    /// The users' part of the run, as sweeps over users' kernels take it too.
    pub fn user_part(&self) -> SpecCompare<'_> {
        SpecCompare {
            kernels: self.user.clone(),
            points: self.points.clone(),
            defines: self.defines.clone(),
            hints: Hints {
                switches: Default::default(),
                ..self.hints.clone()
            },
            plan: self.plan,
            seed: self.seed,
            tuned: self.tuned.clone(),
        }
    }

    /// Everything that can be checked before a device is opened: every define
    /// belongs to a selected kernel, and every user kernel's lengths, launches and
    /// constraints hold at each of its points. Returns the run's steps (kernel x
    /// point), for a progress bar.
    pub fn check(&self) -> Result<usize> {
        check_defines_of(&self.kernels, &self.user, &self.defines)?;
        let user_points: usize = self
            .user_part()
            .plan_points()?
            .iter()
            .map(|(_, p)| p.len())
            .sum();
        Ok(self.sizes.len() * self.kernels.len() + user_points)
    }
}

/// Every define must be a parameter (or a switch) of some selected kernel,
/// built-in or a user's; each kernel takes its own and ignores the others.
pub fn check_defines_of(
    kernels: &[&'static KernelSpec],
    user: &[&UserKernel],
    defines: &[(String, i64)],
) -> Result<()> {
    let theirs: Vec<(String, i64)> = defines
        .iter()
        .filter(|(n, _)| !user.iter().any(|k| k.params.iter().any(|p| &p.name == n)))
        .cloned()
        .collect();
    let Some((name, _)) = theirs.first() else {
        return Ok(());
    };
    if !kernels.is_empty() {
        return check_defines(kernels, &theirs);
    }
    let mut names: Vec<&str> = user
        .iter()
        .flat_map(|k| k.params.iter().map(|p| p.name.as_str()))
        .collect();
    names.sort();
    names.dedup();
    Err(Error::invalid(format!(
        "--define {name}: no selected spec has a parameter {name} (parameters: {})",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// `gemmlab compare`: users' kernels at each of their points, then the built-in
/// kernels at each size. `on_point_done` gets each point's rows (a GEMM size's
/// with cuBLAS first) as they are written.
pub fn run_compare(
    sessions: &mut [Session],
    opts: &CompareOptions,
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_point_done: impl FnMut(&[Measurement]),
) -> Result<()> {
    opts.check()?;
    if !opts.user.is_empty() {
        user::run_spec_compare(
            sessions,
            &opts.user_part(),
            writer,
            progress,
            &mut on_point_done,
        )?;
    }
    if !opts.kernels.is_empty() {
        compare_gemm(sessions, opts, writer, progress, on_point_done)?;
    }
    Ok(())
}

fn compare_gemm(
    sessions: &mut [Session],
    opts: &CompareOptions,
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_size_done: impl FnMut(&[Measurement]),
) -> Result<()> {
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
    db: &crate::results::bests::Database,
    spec: &'static KernelSpec,
    toolchain: Toolchain,
    size: (usize, usize, usize),
    precision: crate::gemm::problem::Precision,
    progress: &Progress,
) -> Point {
    let ask = crate::results::bests::Ask {
        kernel: spec.id,
        toolchain,
        precision,
        size,
        source: Some(crate::util::keys::fnv1a(&spec.source(toolchain))),
    };
    let found = db.lookup_ranked(&ask, |b| spec.validate(&b.config).is_ok());
    let (config, hints, label) = match found {
        Some(served) => {
            let b = served.entry;
            let label = format!("tuned at {}x{}x{}", b.m, b.n, b.k);
            let evidence = format!("{} tried by {}", b.tried, b.strategy);
            let why = served.why.map(|w| format!(" ({w})")).unwrap_or_default();
            progress.suspend(|| {
                println!(
                    "{} {toolchain}: {label}, {evidence}{why}: {} {}",
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
