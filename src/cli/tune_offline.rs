//! `gemmlab tune --arch sm_XX`: the points an unguided search would try,
//! compiled without a device. Registers, spills and occupancy of every
//! configuration a random or exhaustive search reaches, for an architecture
//! no machine here has (Kepler's sm_35 through NVRTC 11.8), and, with
//! `GEMMLAB_CLANG_PTX`, clang's PTX of exactly those points, so the same
//! search on a GPU machine without clang is answered from it.

use std::path::PathBuf;

use gemmlab::experiment::offline::{refuse, run_points, Target};
use gemmlab::experiment::Point;
use gemmlab::kernel::builtin::{self as kernels, KernelSpec};
use gemmlab::results::{Environment, Measurement, ResultWriter};
use gemmlab::tune::search::unguided_order;
use gemmlab::tune::space::{Candidate, Space, SpaceRequest};
use gemmlab::{Error, Result};

use super::tune::TuneArgs;

pub fn run(args: &TuneArgs, target: &Target) -> Result<super::Outcome> {
    refuse_options(args)?;
    let kernels = kernels::select(Some(args.kernels.as_deref().ok_or_else(|| {
        Error::invalid("give the kernels whose space to compile, e.g. --kernels 6,10")
    })?))?;
    let request = super::tune::request(args)?;
    let seeds = super::tune::start_at(args)?;
    let searches: Vec<(Space, Vec<Point>)> = (kernels.iter())
        .map(|&k| search_points(args, target, k, &request, &seeds))
        .collect::<Result<_>>()?;
    let out = if args.out.as_os_str() == super::tune::DEFAULT_OUT {
        PathBuf::from(format!("gemmlab-results/tune-{}", target.arch()))
    } else {
        args.out.clone()
    };
    let jobs = args
        .workers
        .filter(|&w| w > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let total: usize = searches.iter().map(|(_, p)| p.len()).sum();
    println!(
        "tune offline: at most {} points per kernel of a {} search (seed {}), {total} in all, for {}; {}; compiling on {jobs} threads; results in {}",
        args.max_configs,
        args.strategy,
        args.search_seed,
        target.describe(),
        target.note(),
        out.display()
    );
    let mut writer = ResultWriter::create(&out, environment(args, target))?;
    let mut none_compiled = Vec::new();
    for (space, points) in &searches {
        let rows = compile_space(args, target, &seeds, space, points, jobs);
        for r in &rows {
            writer.push(r.clone())?;
        }
        println!("  {}: {}", space.kernel.id(), summary(&rows));
        if !rows.iter().any(|r| r.resources.is_some()) {
            none_compiled.push(space.kernel.id().to_string());
        }
    }
    let all = writer.finish()?;
    println!("wrote {} results to {}", all.len(), out.display());
    if none_compiled.is_empty() {
        Ok(super::Outcome::from_measurements(&[]))
    } else {
        Ok(super::Outcome::from_failures(
            none_compiled.len(),
            "spaces of which no point compiled",
        ))
    }
}

/// The options that mean nothing offline, refused before anything is built.
fn refuse_options(args: &TuneArgs) -> Result<()> {
    if !args.specs.is_empty() || args.suite.is_some() {
        return Err(refuse(
            "--spec/--suite",
            "tune --arch compiles a built-in kernel's space; compile one spec configuration with gemmlab build --spec FILE --arch sm_XX",
        ));
    }
    if !args.sizes.is_empty() {
        return Err(refuse(
            "--sizes",
            "nothing runs offline, so there is no size to run at (the space does not depend on it)",
        ));
    }
    Ok(())
}

/// Kernel `k`'s space on the target, and the points an unguided search would try in it.
fn search_points(
    args: &TuneArgs,
    target: &Target,
    k: &'static KernelSpec,
    request: &SpaceRequest,
    seeds: &[Candidate],
) -> Result<(Space, Vec<Point>)> {
    let space = Space::build(k, target.device(), request)?;
    let order = unguided_order(
        &space,
        &args.strategy,
        args.search_seed,
        seeds,
        args.max_configs,
    )
    .map_err(|why| refuse(&format!("--strategy {}", args.strategy), &why))?;
    let points = order
        .into_iter()
        .map(|p| {
            let c = space.candidate(p);
            Point {
                spec: k,
                label: Some(c.describe()),
                config: c.config,
                hints: c.hints,
            }
        })
        .collect();
    Ok((space, points))
}

/// The run's environment: the target's device and notes on the search and compiler.
fn environment(args: &TuneArgs, target: &Target) -> Environment {
    let mut env = Environment::capture(vec![target.device().clone()], 0, Default::default());
    env.notes.push(format!(
        "tune offline: {} search, seed {}, at most {} points per kernel",
        args.strategy, args.search_seed, args.max_configs
    ));
    env.notes.push(target.note());
    env.notes.push(format!("compiler: {}", target.describe()));
    if let Some(dir) = gemmlab::backend::clang::ptx_cache() {
        env.notes.push(format!(
            "clang's PTX kept in {} (GEMMLAB_CLANG_PTX)",
            dir.display()
        ));
    }
    env
}

/// Every point of one space compiled, after the space's summary.
fn compile_space(
    args: &TuneArgs,
    target: &Target,
    seeds: &[Candidate],
    space: &Space,
    points: &[Point],
    jobs: usize,
) -> Vec<Measurement> {
    println!("{}", space.summary());
    let starts = seeds.iter().filter(|c| space.find(c).is_some()).count();
    if args.start_at.is_some() {
        println!("  {starts} of --start-at's points lie in this space and go first, after the published one");
    }
    let points: Vec<_> = points.iter().cloned().map(Ok).collect();
    let pb = super::compare::progress(points.len() as u64);
    let rows = run_points(target, "tune-offline", &points, jobs, None, &pb);
    pb.finish_and_clear();
    rows
}

/// "197 compiled, 3 failed (compile error), registers 40-255 (median 128),
/// 12 spilling, occupancy up to 50.0%"
fn summary(rows: &[Measurement]) -> String {
    let mut regs: Vec<u32> = rows
        .iter()
        .filter_map(|r| r.resources.as_ref()?.registers)
        .collect();
    regs.sort_unstable();
    let failed: Vec<&Measurement> = rows.iter().filter(|r| r.resources.is_none()).collect();
    let spill = rows
        .iter()
        .filter(|r| {
            r.resources.as_ref().is_some_and(|k| {
                k.spill_stores_bytes.unwrap_or(0) + k.spill_loads_bytes.unwrap_or(0) > 0
            })
        })
        .count();
    let best_occupancy = rows
        .iter()
        .filter_map(|r| r.occupancy)
        .fold(None::<f64>, |m, o| Some(m.map_or(o, |m| m.max(o))));
    let mut parts = vec![format!("{} compiled", rows.len() - failed.len())];
    if !failed.is_empty() {
        let mut labels: Vec<&str> = failed.iter().map(|r| r.status.label()).collect();
        labels.sort_unstable();
        labels.dedup();
        parts.push(format!("{} failed ({})", failed.len(), labels.join(", ")));
    }
    if let (Some(lo), Some(hi)) = (regs.first(), regs.last()) {
        parts.push(format!(
            "registers {lo}-{hi} (median {})",
            regs[regs.len() / 2]
        ));
        parts.push(format!("{spill} spilling"));
    }
    if let Some(o) = best_occupancy {
        parts.push(format!("occupancy up to {:.1}%", o * 100.0));
    }
    parts.join(", ")
}
