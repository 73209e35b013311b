//! `gemmlab sweep registers|tiling|hints|jit`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use gemmlab::experiment::Recording;

use gemmlab::experiment::sweep::{self, run_sweep, SweepKind};
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::measure::progress::Progress;
use gemmlab::measure::Plan;
use gemmlab::results::table::sweep_table;
use gemmlab::results::{Environment, Measurement, ResultWriter};
use gemmlab::util::words::plural;
use gemmlab::{Backend, Result, Toolchain};

use super::compare::{parse_size, progress, seed_or_random, DeviceArgs};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Kind {
    /// Register caps (--caps): registers used, spills, occupancy, speed per cap.
    Registers,
    /// Kernel 11's register tile RX x RY (RK = RY) over 2, 4, 8.
    Tiling,
    /// Compiler hints, one at a time: launch bounds, unroll, volatile index, fast math.
    Hints,
    /// NVIDIA OpenCL's PTX loaded through the CUDA JIT next to both native builds:
    /// separates front-end (PTX) from back-end (ptxas) effects.
    Jit,
}

impl Kind {
    /// The library's sweep of this kind.
    fn sweep_kind(self) -> SweepKind {
        match self {
            Kind::Registers => SweepKind::Registers,
            Kind::Tiling => SweepKind::Tiling,
            Kind::Hints => SweepKind::Hints,
            Kind::Jit => SweepKind::Jit,
        }
    }
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// What to sweep.
    #[arg(value_enum)]
    pub kind: Kind,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub offline: super::build::OfflineArgs,
    #[command(flatten)]
    pub isolation: super::isolation::IsolationArgs,
    /// Kernels (comma-separated ids or numbers); default all (tiling: gemm11; none with --spec).
    #[arg(long)]
    pub kernels: Option<String>,
    /// A kernel spec file (your own kernel); repeatable. `registers` sweeps its caps,
    /// `hints` its fast-math switch (a spec has no source switches).
    #[arg(long = "spec", value_name = "FILE")]
    pub specs: Vec<PathBuf>,
    /// Register caps for `registers`: none and numbers 24-255, comma-separated.
    /// Default: none,255,168,128,96,80,64,48,40,32.
    #[arg(long, value_delimiter = ',')]
    pub caps: Vec<String>,
    /// For `jit`: shared-memory carveout preferences (percent of L1/shared, 0-100,
    /// comma-separated) to run the CUDA driver's lanes again with: a runtime factor
    /// on the same binaries, beside NVIDIA OpenCL's rows of the same run.
    #[arg(long, value_delimiter = ',', value_name = "PCT")]
    pub carveout: Vec<u32>,
    /// Sizes: N or MxNxK, comma-separated. Default 4096 on a GPU, 256 on a CPU.
    /// For spec kernels: NAME=VALUE,... per point (see compare --help).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// f32 (SGEMM) or f64 (DGEMM), for kernels that take both.
    #[arg(long, default_value = "f32", value_parser = |s: &str| gemmlab::kernel::builtin::Precision::parse(s))]
    pub precision: gemmlab::kernel::builtin::Precision,
    /// Timed repetitions per point and toolchain.
    #[arg(long, default_value_t = 10, value_parser = gemmlab::error::parse_reps)]
    pub reps: usize,
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Kernel parameter or hint switch applied to every point, NAME=VALUE; repeatable.
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Register cap applied to every point (not for `registers`).
    #[arg(long, value_parser = gemmlab::error::parse_register_cap)]
    pub max_registers: Option<u32>,
    #[arg(long)]
    pub cold: bool,
    #[command(flatten)]
    pub timing: super::compare::TimingArgs,
    /// Keep the PTX of every build measured under OUT/ptx/ (one file per distinct listing).
    #[arg(long)]
    pub keep_ptx: bool,
    /// Output directory (default gemmlab-results/sweep-KIND).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: SweepArgs) -> Result<super::Outcome> {
    if let Some(out) = &args.out {
        gemmlab::error::check_out_dir(out, "--out")?;
    }
    let kind = args.kind.sweep_kind();
    if !args.carveout.is_empty() && kind != SweepKind::Jit {
        return Err(gemmlab::Error::invalid(
            "--carveout is a runtime factor of `sweep jit` (the CUDA driver's lanes run again with it)",
        ));
    }
    if !args.specs.is_empty() {
        return run_specs(args, kind);
    }
    let explicit_sizes: Vec<(usize, usize, usize)> = args
        .sizes
        .iter()
        .map(|s| parse_size(s))
        .collect::<Result<_>>()?;
    let points = builtin_points(&args, kind)?;
    if let Some(target) = args.offline.target(&args.device)? {
        return run_offline(&args, kind, &target, &points);
    }
    let out = out_dir(&args, kind);
    if let Some(done) = args.isolation.supervise(&out, args.seed)? {
        return Ok(done);
    }
    let mut sessions = args.device.sessions()?;
    let infos: Vec<_> = sessions
        .iter()
        .map(|s| s.backend.borrow().info().clone())
        .collect();
    let sizes = super::compare::sizes_or_default(explicit_sizes, &infos, 256);
    let seed = seed_or_random(args.seed);
    let plan = args.timing.plan(args.warmup, args.reps, args.cold);
    println!(
        "sweep {}: {} points x {} sizes",
        kind.name(),
        points.len(),
        sizes.len()
    );
    let recording = recording(&args, &out, seed, plan, format!("sweep {}", kind.name()));
    let mut writer = recording.start(&mut sessions)?;
    let pb = progress((points.len() * sizes.len()) as u64);
    let result = run_sweep(
        &mut sessions,
        kind,
        &points,
        &sizes,
        args.precision,
        &plan,
        seed,
        &mut writer,
        &pb,
        |rows| print_sweep_rows(kind, rows, &pb),
    );
    let all = recording.finish(writer, &pb, result)?;
    Ok(super::Outcome::from_measurements(&all))
}

/// The built-in kernels' points of the sweep, with `--define`s and `--max-registers` on each.
fn builtin_points(args: &SweepArgs, kind: SweepKind) -> Result<Vec<SweepPoint>> {
    let kernels = kernels::select(args.kernels.as_deref())?;
    let defines = parse_defines(&args.defines)?;
    gemmlab::experiment::check_defines(&kernels, &defines)?;
    let base = Hints::from_defines(&defines, args.max_registers);
    let caps = sweep::parse_caps(&args.caps)?;
    let carveouts = sweep::parse_carveouts(&args.carveout)?;
    sweep::points(
        kind,
        &kernels,
        &defines,
        args.precision,
        &base,
        &caps,
        &carveouts,
    )
}

/// A point of a sweep, or why it cannot be measured.
type SweepPoint =
    std::result::Result<gemmlab::experiment::Point, (String, gemmlab::gemm::driver::Status)>;

/// `--define NAME=VALUE`s, parsed.
fn parse_defines(defines: &[String]) -> Result<Vec<(String, i64)>> {
    (defines.iter()).map(|d| kernels::parse_define(d)).collect()
}

/// `--out`, or gemmlab-results/sweep-KIND.
fn out_dir(args: &SweepArgs, kind: SweepKind) -> PathBuf {
    args.out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("gemmlab-results/sweep-{}", kind.name())))
}

/// How a measuring sweep is recorded: in `out`, noted as `note`.
fn recording<'a>(
    args: &SweepArgs,
    out: &'a Path,
    seed: u64,
    plan: Plan,
    note: String,
) -> Recording<'a> {
    Recording {
        out,
        seed,
        plan,
        note: Some(note),
        keep_ptx: args.keep_ptx,
    }
}

/// One size's table of a built-in sweep, as its rows come.
fn print_sweep_rows(kind: SweepKind, rows: &[Measurement], pb: &Progress) {
    if let Some(r) = rows.first() {
        pb.suspend(|| {
            println!("\n{} {} on {}", kind.name(), r.size_label(), r.device);
            print!("{}", sweep_table(rows));
            print!("{}", gemmlab::results::table::ignored_legend(rows));
        });
    }
}

/// `sweep --arch`: every point compiled with NVRTC for the architecture, on every
/// core; registers, spills and occupancy per point, written in the usual result
/// files with no size and no timing, each row saying why.
fn run_offline(
    args: &SweepArgs,
    kind: SweepKind,
    target: &gemmlab::experiment::offline::Target,
    points: &[SweepPoint],
) -> Result<super::Outcome> {
    use gemmlab::experiment::offline::{refuse, run_points, table};
    if kind == SweepKind::Jit {
        return Err(refuse(
            "sweep jit",
            "it loads NVIDIA OpenCL's PTX through the CUDA driver, which needs the GPU",
        ));
    }
    if !args.sizes.is_empty() || args.cold {
        return Err(refuse(
            "--sizes/--cold",
            "nothing runs offline, so there is no size to run at",
        ));
    }
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "gemmlab-results/sweep-{}-{}",
            kind.name(),
            target.arch()
        ))
    });
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "sweep {} offline: {} points for {}; {}; compiling on {jobs} threads; results in {}",
        kind.name(),
        points.len(),
        target.describe(),
        target.note(),
        out.display()
    );
    let plan = args.timing.plan(args.warmup, args.reps, args.cold);
    let mut env = Environment::capture(vec![target.device().clone()], args.seed.unwrap_or(0), plan);
    env.notes.push(format!("sweep {} offline", kind.name()));
    env.notes.push(target.note());
    env.notes.push(match target.nvrtc() {
        Some(n) => format!("NVRTC: {}", n.describe()),
        None => format!("compiler: {}", target.describe()),
    });
    let mut writer = ResultWriter::create(&out, env)?;
    let keep = args
        .keep_ptx
        .then(|| out.join(gemmlab::results::ptx_archive::DIR));
    let pb = progress(points.len() as u64);
    let rows = run_points(target, kind.name(), points, jobs, keep.as_deref(), &pb);
    pb.finish_and_clear();
    for r in &rows {
        writer.push(r.clone())?;
    }
    print!("{}", table(target, &rows));
    let all = writer.finish()?;
    println!("wrote {} to {}", plural(all.len(), "result"), out.display());
    Ok(super::Outcome::from_measurements(&all))
}

/// `sweep registers|hints --spec FILE`: a user's kernel under each register cap,
/// or with and without fast math, on every toolchain, interleaved.
fn run_specs(args: SweepArgs, kind: SweepKind) -> Result<super::Outcome> {
    use gemmlab::Error;
    let user = gemmlab::kernel::user::load_all(&args.specs)?;
    if args.kernels.is_some() {
        return Err(Error::invalid(
            "--spec and --kernels: sweep one kind of kernel at a time (the GEMM sizes and a spec's dims differ)",
        ));
    }
    let base = Hints::from_defines(&[], args.max_registers);
    let carveouts = sweep::parse_carveouts(&args.carveout)?;
    let caps = sweep::parse_caps(&args.caps)?;
    let variants = sweep::user_variants(kind, &base, &caps, &carveouts);
    if args.offline.arch.is_some() {
        return Err(Error::invalid(
            "sweep --arch with --spec: compile one configuration offline with gemmlab build --spec FILE --arch sm_XX [--max-registers N]",
        ));
    }
    let defines = parse_defines(&args.defines)?;
    let opts = gemmlab::experiment::SpecCompare {
        kernels: user.iter().collect(),
        points: gemmlab::kernel::user::parse_dim_points(&args.sizes)?,
        defines,
        hints: base,
        plan: args.timing.plan(args.warmup, args.reps, args.cold),
        seed: seed_or_random(args.seed),
        tuned: None,
    };
    let planned = opts.plan_points()?;
    let out = out_dir(&args, kind);
    if let Some(done) = args.isolation.supervise(&out, args.seed)? {
        return Ok(done);
    }
    let mut sessions = args.device.sessions()?;
    let note = format!("sweep {} of spec kernels", kind.name());
    let recording = recording(&args, &out, opts.seed, opts.plan, note);
    let mut writer = recording.start(&mut sessions)?;
    let tcs = gemmlab::experiment::toolchains(&sessions);
    let pb = progress(planned.iter().map(|(_, p)| p.len() as u64).sum());
    let result = gemmlab::experiment::sweep::run_user_sweep(
        &mut sessions,
        &opts,
        kind,
        &variants,
        &mut writer,
        &pb,
        |rows| print_spec_rows(kind, rows, &tcs, &pb),
    );
    let all = recording.finish(writer, &pb, result)?;
    Ok(super::Outcome::from_measurements(&all))
}

/// One spec kernel's table at one point, each row under its variant's name.
fn print_spec_rows(kind: SweepKind, rows: &[Measurement], tcs: &[Toolchain], pb: &Progress) {
    if let Some(r) = rows.first() {
        pb.suspend(|| {
            println!(
                "\n{} {} at {} on {}",
                kind.name(),
                r.kernel,
                r.size_label(),
                r.device
            );
            let mut labelled = rows.to_vec();
            for r in &mut labelled {
                r.kernel = r
                    .label
                    .clone()
                    .or(r.variant.clone())
                    .unwrap_or_else(|| "native".into());
            }
            print!("{}", gemmlab::results::table::spec_table(&labelled, tcs));
            print!("{}", gemmlab::results::table::ignored_legend(rows));
        });
    }
}
