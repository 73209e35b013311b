//! `gemmlab tune`: each toolchain at its own best.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;

use gemmlab::kernel::builtin as kernels;
use gemmlab::measure::progress::Progress;
use gemmlab::results::bests::{self, Database};
use gemmlab::results::{Environment, Measurement, ResultWriter};
use gemmlab::routine::suite::Suite;
use gemmlab::tune::replay;
use gemmlab::tune::run::{run_tune, spaces, write_replay, TuneOptions};
use gemmlab::tune::search::{unguided_order, Budget, Limits, SearchOptions, SearchResult};
use gemmlab::tune::space::{Candidate, Space, SpaceRequest};
use gemmlab::tune::strategy;
use gemmlab::tune::watch;
use gemmlab::util::words::plural;
use gemmlab::{Backend, Error, Result, Toolchain};

use super::compare::{parse_size, seed_or_random, sizes_or_default, DeviceArgs, TimingArgs};

#[derive(Args, Debug)]
pub struct TuneArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub problem: super::compare::ProblemArgs,
    /// Kernels to tune (comma-separated ids or numbers, e.g. 6,10).
    #[arg(long)]
    pub kernels: Option<String>,
    /// A kernel spec file (your own kernel) to tune over its parameters' values; repeatable.
    #[arg(long = "spec", value_name = "FILE")]
    pub specs: Vec<PathBuf>,
    /// Sizes: N for N^3 or MxNxK, comma-separated. Default 4096 on a GPU, 256 on a CPU.
    /// For spec kernels: NAME=VALUE,... per point (see compare --help).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Tune the GEMM routine for every call of a suite file (one per line: MxNxK
    /// [col|row] [NN|NT|TN|TT]; suites/routine.txt is the default suite) instead of
    /// --sizes: per call, each family (--kernels, default xgemmdirect,xgemm,simt) is
    /// searched at its shape and call, seeded with its neighbours' choices, then the
    /// whole routine is timed with each and the fastest kept for `gemmlab gemm`.
    /// --time-limit and --max-configs apply per search; --switches and --caps too (the
    /// routine compiles each call's kernel with the switches and cap chosen for it).
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// With --suite: the routine may compute f32 calls by FP32 emulation (3xTF32 on
    /// the TF32 tensor cores, family `tc`), kept as each call's second choice beside
    /// its FP32-arithmetic one; `gemmlab gemm --fp32-emulation` takes it.
    #[arg(long, requires = "suite")]
    pub fp32_emulation: bool,
    /// Search strategy: exhaustive, random, anneal (simulated annealing), genetic.
    #[arg(long, default_value = "anneal")]
    pub strategy: String,
    /// Configurations each search may try (answered from the store or measured).
    #[arg(long, default_value_t = 200)]
    pub max_configs: usize,
    /// Wall seconds each search may take (compile included); no limit when absent. A search with nothing measured when its time is up waits for its first configuration (at most 120 s more), so that it always has one.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Values of a parameter to search, NAME=V1,V2,... (repeatable); others take every allowed value.
    #[arg(long = "values", value_name = "NAME=V1,V2")]
    pub values: Vec<String>,
    /// Pin a parameter, NAME=VALUE (repeatable): --values with one value.
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Hint switches to vary: all (every switch the kernel has), none (published state), or a list.
    #[arg(long, default_value = "all")]
    pub switches: String,
    /// Register caps to try besides none: default (32,64,96,128,168,255), none, or a list.
    #[arg(long, default_value = "default")]
    pub caps: String,
    /// Timed samples per configuration while searching (after one warm-up launch).
    #[arg(long, default_value_t = 3, value_parser = gemmlab::error::parse_reps)]
    pub search_reps: usize,
    /// Configurations per toolchain re-measured with the full timing method at the end.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Timed repetitions of the final round.
    #[arg(long, default_value_t = 20, value_parser = gemmlab::error::parse_reps)]
    pub reps: usize,
    /// Warm-up launches of the final round.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Compile threads (default: every host core). A compiler that builds one program
    /// at a time (NVIDIA's OpenCL and PoCL, measured) gets one whatever this says; 0
    /// compiles on the measuring thread, one configuration after another (no overlap).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Build processes for a compiler that builds one program at a time per process
    /// (NVIDIA's OpenCL: separate processes build in parallel). Default: one per
    /// compile thread, at most 8, where the compiler says they pay (NVIDIA's
    /// OpenCL); 0: none; N: N wherever the compiler can (PoCL too). The measuring
    /// process then builds each program's binary (PTX) for itself.
    #[arg(long, value_name = "N")]
    pub build_processes: Option<usize>,
    /// Stop timing a configuration whose checked run is this many times slower than the fastest
    /// checked run so far (single launches are compared with single launches: one carries
    /// costs a timed median does not).
    #[arg(long, default_value_t = 4.0)]
    pub prune: f64,
    /// Screen each configuration first on the same call with K cut by this factor
    /// (to a multiple of 256, where that saves three quarters of a launch or more):
    /// one checked launch there, and one that is --prune times slower than the fastest
    /// screen launch so far is pruned without its full-size run. 0: no screen
    #[arg(long, value_name = "FACTOR", default_value_t = gemmlab::tune::search::SCREEN_FACTOR)]
    pub screen: usize,
    /// Seconds a configuration's device work (load, checked run, timing) may take before
    /// it is stopped and recorded as timed out. Default: 100 times the fastest verified
    /// configuration's so far, at least 10 s and at least its launches at 1 TFLOP/s.
    #[arg(long, value_name = "SECONDS")]
    pub launch_timeout: Option<f64>,
    /// Seconds one build may take before it is stopped and recorded as timed out.
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0)]
    pub compile_timeout: f64,
    /// Search in this process, without a supervisor: a kernel that hangs then hangs the
    /// search, and one that crashes the process ends it (the store keeps what was measured).
    #[arg(long)]
    pub in_process: bool,
    /// Seed of the random inputs.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seed of the search (random and guided strategies).
    #[arg(long, default_value_t = 1)]
    pub search_seed: u64,
    /// Where every configuration's outcome is kept (a rerun resumes from it): an SQLite
    /// file (.sqlite, .db or sqlite:PATH; shared by the processes of a host), a PostgreSQL
    /// URL (postgres://user@host/db; shared by several hosts), or a folder of JSON-lines
    /// files, one per device.
    #[arg(long, default_value = gemmlab::tune::store::DEFAULT_STORE)]
    pub store: String,
    /// One `gemmlab tune` per device, together, splitting each search through the
    /// shared store (comma-separated, as --device takes them: cuda:0,cuda:1).
    #[arg(long, value_delimiter = ',', value_name = "DEVICE,...")]
    pub devices: Vec<String>,
    /// Write this tuning into the shared store as a job for `gemmlab worker`s (on any
    /// host, started by any scheduler) instead of running it here.
    #[arg(long)]
    pub publish: bool,
    /// Directory of the database of bests that tune updates and compare --tuned reads.
    #[arg(long, default_value = bests::DEFAULT_DIR)]
    pub db: PathBuf,
    /// Do not update the database of bests.
    #[arg(long)]
    pub no_db: bool,
    /// Print the database of bests (every device in --db) and exit; needs no device.
    #[arg(long)]
    pub show: bool,
    /// Write the strategies replayed over each exhaustive search that tried its whole space
    /// (replay-*.json next to its search-*.json, which the report reads) for the result
    /// directories under DIR (repeatable), and exit; needs no device. A search writes it itself.
    #[arg(long = "replay-only", value_name = "DIR")]
    pub replay_only: Vec<PathBuf>,
    /// Write the CUDA space of the first kernel (the points a search with these options
    /// would try, in order) as JSON for scripts/kernel_tuner, and exit without measuring.
    #[arg(long, value_name = "FILE")]
    pub export_space: Option<PathBuf>,
    /// A database file of bests (results/tuned/<device>.json): each search tries its
    /// entries first, after the published configuration, wherever they lie in the
    /// search's space (same precision, any toolchain or size; the routine's per-call
    /// entries left out), so a toolchain is tried where the others found their bests
    #[arg(long, value_name = "FILE")]
    pub start_at: Option<PathBuf>,
    /// Output directory: results.json/csv of the final round and one trace per search.
    #[arg(long, default_value = DEFAULT_OUT)]
    pub out: PathBuf,
    #[command(flatten)]
    pub offline: super::build::OfflineArgs,
}

/// The points `--start-at`'s database names, in its order, each once.
pub(super) fn start_at(args: &TuneArgs) -> Result<Vec<Candidate>> {
    let Some(path) = &args.start_at else {
        return Ok(Vec::new());
    };
    let db = Database::read(path)?;
    let mut seeds: Vec<Candidate> = Vec::new();
    for e in &db.entries {
        if e.call.is_some() || e.precision != args.problem.precision {
            continue;
        }
        let c = Candidate {
            config: e.config.clone(),
            hints: e.hints.clone(),
        };
        if !seeds.contains(&c) {
            seeds.push(c);
        }
    }
    Ok(seeds)
}

/// Where `tune` writes unless `--out` says.
pub const DEFAULT_OUT: &str = "gemmlab-results/tune";

fn parse_list<T: std::str::FromStr>(what: &str, s: &str) -> Result<Vec<T>> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| Error::invalid(format!("{what}: '{x}' is not a number")))
        })
        .collect()
}

pub(super) fn request(args: &TuneArgs) -> Result<SpaceRequest> {
    let mut values: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for v in &args.values {
        let (name, list) = v
            .split_once('=')
            .ok_or_else(|| Error::invalid(format!("--values expects NAME=V1,V2, got '{v}'")))?;
        let list: Vec<i64> = parse_list(&format!("--values {name}"), list)?;
        if list.is_empty() {
            return Err(Error::invalid(format!("--values {name}: no values")));
        }
        values.insert(name.trim().to_string(), list);
    }
    for d in &args.defines {
        let (name, v) = kernels::parse_define(d)?;
        values.insert(name, vec![v]);
    }
    let switches = match args.switches.trim() {
        "all" => None,
        "none" => Some(Vec::new()),
        list => Some(
            list.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        ),
    };
    let caps = match args.caps.trim() {
        "default" => None,
        "none" => Some(Vec::new()),
        list => Some(parse_list::<u32>("--caps", list)?),
    };
    Ok(SpaceRequest {
        values,
        switches,
        caps,
        precision: args.problem.precision,
    })
}

pub fn run(args: TuneArgs) -> Result<super::Outcome> {
    if args.show {
        return show(&args);
    }
    if !args.replay_only.is_empty() {
        return replay_only(&args.replay_only);
    }
    check_budget(&args)?;
    if args.publish {
        return super::tune_fleet::publish(&args);
    }
    if !args.devices.is_empty() {
        return super::tune_fleet::devices(&args);
    }
    if let Some(target) = args.offline.target(&args.device)? {
        return super::tune_offline::run(&args, &target);
    }
    check_limits(&args)?;
    let supervised = std::env::var_os(watch::ENV_RUN).is_some();
    if supervised {
        watch::die_with_supervisor();
    }
    if !supervised && !args.in_process && args.export_space.is_none() {
        return supervise(&args.out);
    }
    tune_here(&args, supervised)
}

/// The run itself, in this process: opens the devices, builds the spaces and
/// searches them (or exports the first), then says what it wrote.
fn tune_here(args: &TuneArgs, supervised: bool) -> Result<super::Outcome> {
    strategy::by_name(&args.strategy).map_err(Error::invalid)?;
    let chosen = Chosen::from_args(args)?;
    let mut sessions = args.device.sessions()?;
    let infos: Vec<_> = sessions
        .iter()
        .map(|s| s.backend.borrow().info().clone())
        .collect();
    let sizes = sizes_or_default(chosen.explicit.clone(), &infos, 256);
    let spaces = chosen.spaces(&sessions)?;
    let search = search_options(args)?;
    if let Some(path) = &args.export_space {
        return export_space(path, &sessions, &spaces, &search, sizes[0])
            .map(|_| super::Outcome::from_measurements(&[]));
    }
    let seed = seed_or_random(args.seed);
    let plan = args.timing.plan(args.warmup, args.reps, false);
    let mut writer = start(args, &sessions, &search, seed, plan, supervised)?;
    let steps = chosen.steps(&spaces, sizes.len(), args.max_configs);
    let pb = super::compare::progress(steps as u64);
    let call = args.problem.template_for(&sizes)?;
    let suite = chosen.suite;
    let opts = TuneOptions {
        kernels: chosen.kernels,
        sizes,
        specs: chosen.specs,
        spec_points: chosen.spec_points,
        call,
        request: chosen.request,
        search,
        plan,
        top: args.top,
        seed,
        store_dir: PathBuf::from(&args.store),
        db_dir: (!args.no_db).then(|| args.db.clone()),
        out: args.out.clone(),
    };
    let suite = suite.as_ref();
    let (result, empty) = search_all(&mut sessions, &opts, &spaces, &mut writer, &pb, suite, args);
    pb.finish_and_clear();
    let all = writer.finish()?;
    for line in &empty {
        eprintln!("{line}");
    }
    finish(args, &all, result, supervised, empty.len())
}

/// Every search (or the suite's, call by call), each printed as it ends, then each
/// final round's table. Beside the result, the searches in which nothing was
/// measured, with why: the run fails with them.
fn search_all(
    sessions: &mut [gemmlab::gemm::driver::Session],
    opts: &TuneOptions,
    spaces: &[Vec<Space>],
    writer: &mut ResultWriter,
    pb: &Progress,
    suite: Option<&Suite>,
    args: &TuneArgs,
) -> (Result<()>, Vec<String>) {
    let mut empty: Vec<String> = Vec::new();
    let mut on_search = |r: &SearchResult| {
        empty.extend(measured_nothing(r));
        pb.suspend(|| print_search(r))
    };
    let mut on_final = |rows: &[Measurement]| pb.suspend(|| print!("{}", final_table(rows)));
    let result = match suite {
        Some(suite) => {
            let run = super::tune_suite::SuiteRun {
                suite,
                opts,
                spaces,
                reps: args.reps,
                fp32_emulation: args.fp32_emulation,
            };
            super::tune_suite::run(sessions, &run, writer, pb, &mut on_search, &mut on_final)
        }
        None => run_tune(
            sessions,
            opts,
            spaces,
            writer,
            pb,
            &mut on_search,
            &mut on_final,
        )
        .map(|_| ()),
    };
    (result, empty)
}

/// A search in which nothing was measured, with why: the run fails with it.
fn measured_nothing(r: &gemmlab::tune::search::SearchResult) -> Option<String> {
    if r.tried.is_empty() || r.any_ok() {
        return None;
    }
    let why: Vec<String> = (r.failures().into_iter())
        .map(|(label, n, first)| format!("{n} {label}: {first}"))
        .collect();
    Some(format!(
        "{} on {}: nothing measured of {} tried ({})",
        r.kernel,
        r.toolchain,
        r.tried.len(),
        why.join("; ")
    ))
}

/// A budget of nothing is a usage error, said before anything else.
fn check_budget(args: &TuneArgs) -> Result<()> {
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    if args.max_configs == 0 || args.time_limit.is_some_and(|t| t <= 0.0) {
        return Err(Error::invalid(
            "a tuning budget of 0 tries nothing: give --max-configs and --time-limit above 0",
        ));
    }
    Ok(())
}

/// The pruning factor and the time limits of one launch and one compile.
fn check_limits(args: &TuneArgs) -> Result<()> {
    if args.prune.is_nan() || args.prune <= 1.0 {
        return Err(Error::invalid(
            "--prune must be above 1 (a factor of the fastest checked launch so far)",
        ));
    }
    for (flag, v) in [
        ("--launch-timeout", args.launch_timeout),
        ("--compile-timeout", Some(args.compile_timeout)),
    ] {
        if v.is_some_and(|t| t.is_nan() || t <= 0.0) {
            return Err(Error::invalid(format!(
                "{flag} must be a positive number of seconds"
            )));
        }
    }
    Ok(())
}

/// Runs this same command in a child process this one watches (see
/// tune::watch): a kernel that kills its process costs its configuration, not
/// the run. An earlier run's files are replaced once, not at each restart.
fn supervise(out: &std::path::Path) -> Result<super::Outcome> {
    gemmlab::results::replace_earlier_run(out)?;
    let program = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = watch::supervise(&program, &argv, &|line| eprintln!("{line}"))?;
    if code != 0 {
        std::process::exit(code);
    }
    Ok(super::Outcome::from_measurements(&[]))
}

/// What a tuning run searches, checked before any device is opened.
struct Chosen {
    kernels: Vec<&'static gemmlab::kernel::builtin::KernelSpec>,
    specs: Vec<&'static gemmlab::kernel::user::UserKernel>,
    suite: Option<gemmlab::routine::suite::Suite>,
    request: SpaceRequest,
    spec_points: Vec<gemmlab::kernel::user::Dims>,
    explicit: Vec<(usize, usize, usize)>,
}

impl Chosen {
    fn from_args(args: &TuneArgs) -> Result<Chosen> {
        let specs = gemmlab::kernel::user::load_static(&args.specs)?;
        let suite = args
            .suite
            .as_deref()
            .map(gemmlab::routine::suite::Suite::load)
            .transpose()?;
        if suite.is_some() && (!args.sizes.is_empty() || !args.specs.is_empty()) {
            return Err(Error::invalid(
                "--suite gives the calls to tune: leave out --sizes and --spec",
            ));
        }
        let kernels =
            match args.kernels.as_deref() {
                Some(list) => kernels::select(Some(list))?,
                None if suite.is_some() => kernels::select(Some(super::tune_suite::FAMILIES))?,
                None if !specs.is_empty() => Vec::new(),
                None => return Err(Error::invalid(
                    "give the kernels to tune, e.g. --kernels 6 or --kernels 6,10, or --spec FILE",
                )),
            };
        let request = request(args)?;
        if suite.is_some() {
            routine_keeps_precision(&kernels, &request, args.fp32_emulation)?;
        }
        let (dim_sizes, gemm_sizes): (Vec<String>, Vec<String>) =
            args.sizes.iter().cloned().partition(|s| s.contains('='));
        if !dim_sizes.is_empty() && specs.is_empty() {
            return Err(Error::invalid(format!(
                "--sizes {}: NAME=VALUE sizes are for spec kernels (--spec FILE); a GEMM size is N or MxNxK",
                dim_sizes.join(",")
            )));
        }
        if kernels.is_empty() {
            let all: Vec<&gemmlab::kernel::user::UserKernel> = specs.to_vec();
            gemmlab::experiment::refuse_plain_sizes(&all, &gemm_sizes)?;
        }
        let spec_points = gemmlab::kernel::user::parse_dim_points(&dim_sizes)?;
        // Every spec at every point, at its defaults, before any device is opened.
        for k in &specs {
            for d in gemmlab::experiment::points_for(k, &specs, &spec_points)? {
                k.instantiate(&k.defaults(), &d)?;
            }
        }
        let explicit = gemm_sizes
            .iter()
            .map(|s| parse_size(s))
            .collect::<Result<_>>()?;
        Ok(Chosen {
            kernels,
            specs,
            suite,
            request,
            spec_points,
            explicit,
        })
    }

    /// The space of every kernel (built-in, then spec) on every session, each said as built.
    fn spaces(&self, sessions: &[gemmlab::gemm::driver::Session]) -> Result<Vec<Vec<Space>>> {
        let all: Vec<gemmlab::kernel::Kernel> = (self.kernels.iter())
            .map(|k| gemmlab::kernel::Kernel::Builtin(k))
            .chain(self.specs.iter().map(|k| gemmlab::kernel::Kernel::User(k)))
            .collect();
        let spaces = spaces(sessions, &all, &self.request)?;
        spaces.iter().flatten().for_each(print_space);
        Ok(spaces)
    }

    /// Configurations the run may try in all, for its progress bar.
    fn steps(&self, spaces: &[Vec<Space>], sizes: usize, max_configs: usize) -> usize {
        let per_point = |s: &Space| s.len().min(max_configs);
        let (gemm, user) = spaces.split_at(self.kernels.len().min(spaces.len()));
        let calls = self.suite.as_ref().map_or(sizes, |s| s.calls.len());
        gemm.iter().flatten().map(per_point).sum::<usize>() * calls
            + user.iter().flatten().map(per_point).sum::<usize>() * self.spec_points.len().max(1)
    }
}

fn search_options(args: &TuneArgs) -> Result<SearchOptions> {
    Ok(SearchOptions {
        strategy: args.strategy.clone(),
        budget: Budget {
            configs: Some(args.max_configs),
            seconds: args.time_limit,
        },
        seed: args.search_seed,
        reps: args.search_reps,
        workers: args
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
        prune: args.prune,
        screen: args.screen,
        limits: Limits {
            launch_timeout_s: args.launch_timeout,
            compile_timeout_s: args.compile_timeout,
        },
        run: std::env::var(watch::ENV_RUN).ok(),
        watch: std::env::var_os(watch::ENV_WATCH).map(PathBuf::from),
        build_processes: args.build_processes,
        build_exe: std::env::current_exe().ok(),
        seeds: start_at(args)?,
    })
}

/// Says what the run does and opens its writer (a supervised child resumes
/// the rows its earlier incarnations wrote).
fn start(
    args: &TuneArgs,
    sessions: &[gemmlab::gemm::driver::Session],
    search: &SearchOptions,
    seed: u64,
    plan: gemmlab::measure::Plan,
    supervised: bool,
) -> Result<ResultWriter> {
    let infos: Vec<_> = sessions
        .iter()
        .map(|s| s.backend.borrow().info().clone())
        .collect();
    gemmlab::experiment::say_devices(sessions);
    println!(
        "strategy {} (seed {}), at most {} configurations{} per search, {} compile threads; search timing: 1 warm-up + {} samples; final round: top {} per toolchain, {}; input seed {seed}",
        search.strategy,
        search.seed,
        args.max_configs,
        args.time_limit.map_or(String::new(), |t| format!(" or {t} s")),
        search.workers,
        search.reps,
        args.top,
        plan.describe()
    );
    let mut env = Environment::capture(infos, seed, plan);
    env.record_clocks(sessions);
    match supervised {
        true => ResultWriter::create_resumed(&args.out, env),
        false => ResultWriter::create(&args.out, env),
    }
}

/// What the run wrote, or its error; a supervised child that lost its device
/// asks its supervisor for a fresh process, which resumes from the store.
fn finish(
    args: &TuneArgs,
    all: &[gemmlab::results::Measurement],
    result: Result<()>,
    supervised: bool,
    failed_searches: usize,
) -> Result<super::Outcome> {
    if let (true, Err(e @ Error::DeviceLost { .. })) = (supervised, &result) {
        eprintln!("error: {e}");
        std::process::exit(watch::EXIT_RESTART);
    }
    result?;
    println!(
        "\nwrote {} and the search traces to {}; store in {}",
        plural(all.len(), "measurement"),
        args.out.display(),
        args.store
    );
    if !args.no_db {
        println!("database of bests: {}", args.db.display());
    }
    let mut outcome = super::Outcome::from_measurements(all);
    if failed_searches > 0 {
        outcome.add_failures(failed_searches, "search measured nothing");
    }
    Ok(outcome)
}

fn print_space(s: &Space) {
    println!("space {}", s.summary());
    for r in &s.removals {
        println!("  removed {:>8}: {}", r.removed, r.rule);
    }
    for n in &s.notes {
        println!("  note: {n}");
    }
}

fn print_search(r: &SearchResult) {
    let ranked = r.ranked();
    let failed = r.tried.iter().filter(|t| !t.record.status.is_ok()).count();
    let pruned = match r.screened() {
        0 => r.pruned().to_string(),
        s => format!("{} ({s} at the screen)", r.pruned()),
    };
    let at = match &r.dims {
        Some(d) => gemmlab::kernel::user::UserKernel::describe_dims(d),
        None => format!("{}x{}x{}", r.size.0, r.size.1, r.size.2),
    };
    println!(
        "\n{} on {} at {at}: {} tried ({} measured, {} from the store), {} failed, {} pruned, {:.1} s, {}; {}",
        r.kernel,
        r.toolchain,
        r.tried.len(),
        r.measured(),
        r.tried.len() - r.measured(),
        failed,
        pruned,
        r.wall_s,
        r.rate().map_or("no new measurements".into(), |v| format!("{v:.1} configurations/s")),
        r.stopped
    );
    if r.measured() > 0 {
        if r.options.workers == 0 {
            println!(
                "  device busy {:.1} s, compiling {:.1} s, one after the other on one thread",
                r.device_s, r.compile_s
            );
        } else {
            let processes = match r.options.build_processes {
                Some(n) if n > 0 => format!(" in {n} build processes"),
                _ => String::new(),
            };
            println!(
                "  device busy {:.1} s, waited {:.1} s for the compiler ({} CPU s compiling on {} threads{processes}): {}",
                r.device_s,
                r.wait_s,
                r.compile_s.round(),
                r.options.workers,
                r.bound()
            );
        }
        if !r.split.is_empty() {
            println!(
                "  device thread per configuration: {}",
                r.split.describe_per(r.measured())
            );
        }
    }
    if let Some(b) = ranked.first() {
        println!(
            "  best while searching: {:.1} {}  {}",
            b.record.gflops.unwrap_or(0.0),
            r.unit,
            b.candidate.describe_from(r.unchanged())
        );
    }
}

/// The final round: cuBLAS, then each toolchain's configurations, fastest first.
pub fn final_table(rows: &[Measurement]) -> String {
    let mut out = String::new();
    let Some(first) = rows.first() else {
        return out;
    };
    if first.dims.is_some() {
        out += &format!(
            "\nfinal round, {} at {} on {} (interleaved)\n",
            first.kernel,
            first.size_label(),
            first.device
        );
        let tcs: Vec<gemmlab::Toolchain> = {
            let mut v: Vec<_> = rows.iter().map(|r| r.toolchain).collect();
            v.sort();
            v.dedup();
            v
        };
        let mut labelled: Vec<Measurement> = rows.to_vec();
        // Fastest first per toolchain, by this round's median; rows without a time last.
        let median = |m: &Measurement| {
            (m.time.as_ref().filter(|_| m.status.is_ok())).map_or(f64::INFINITY, |t| t.median_ns)
        };
        labelled
            .sort_by(|a, b| (a.toolchain.cmp(&b.toolchain)).then(median(a).total_cmp(&median(b))));
        for r in &mut labelled {
            r.kernel = format!("{} [{}]", r.config.describe(), r.toolchain);
        }
        out += &gemmlab::results::table::spec_table(&labelled, &tcs);
        return out;
    }
    out += &format!(
        "\nfinal round, {} on {} (GFLOP/s = 2MNK / median kernel time, interleaved; xcuBLAS against cuBLAS timed among these repetitions where it was, the cublas row its call timed alone)\n",
        first.size_label(),
        first.device
    );
    out += &format!(
        "  {:<8} {:<7} {:>18} {:>8} {:>5}  {}\n",
        "kernel", "tc", "GFLOP/s", "xcuBLAS", "regs", "configuration"
    );
    let mut sorted: Vec<&Measurement> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        (a.kernel != "cublas", a.toolchain)
            .cmp(&(b.kernel != "cublas", b.toolchain))
            .then(
                b.gflops
                    .partial_cmp(&a.gflops)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
    });
    for m in sorted {
        let speed = match (m.status.is_ok(), m.gflops, m.time) {
            (true, Some(g), Some(t)) => format!("{g:.1} ±{:.1}%", t.spread_pct()),
            _ => m.status.label().to_string(),
        };
        out += &format!(
            "  {:<8} {:<7} {:>18} {:>8} {:>5}  {}\n",
            m.kernel,
            m.toolchain.as_str(),
            speed,
            m.vs_vendor.map_or("-".into(), |v| format!("{v:.3}")),
            m.resources
                .as_ref()
                .and_then(|r| r.registers)
                .map_or("?".into(), |r| r.to_string()),
            m.label.as_deref().unwrap_or("")
        );
    }
    out
}

/// `--replay-only DIR`: a replay record for every complete search traced under DIR.
fn replay_only(from: &[PathBuf]) -> Result<super::Outcome> {
    let mut written = 0;
    for dir in gemmlab::results::set::discover_for("--replay-only", from)? {
        let (traces, bad) = gemmlab::tune::run::load_traces(&dir);
        for b in bad {
            eprintln!("note: left out: {b}");
        }
        for (file, trace) in traces
            .iter()
            .filter(|(_, t)| replay::is_complete(&t.search))
        {
            let path = write_replay(&dir, trace, file)?;
            println!("wrote {}", path.display());
            written += 1;
        }
    }
    println!("{written} replay records written");
    Ok(super::Outcome::from_measurements(&[]))
}

fn show(args: &TuneArgs) -> Result<super::Outcome> {
    let dbs = Database::all(&args.db)?;
    if dbs.is_empty() {
        println!(
            "no database of bests in {} (gemmlab tune writes one per device)",
            args.db.display()
        );
    }
    for (path, db) in dbs {
        println!("{}:", path.display());
        print!("{}", db.table());
    }
    Ok(super::Outcome::from_measurements(&[]))
}

/// The space for kernel_tuner: the CUDA source, the size, and the points a
/// search with these options would try first (all of them for exhaustive).
fn export_space(
    path: &std::path::Path,
    sessions: &[gemmlab::gemm::driver::Session],
    spaces: &[Vec<Space>],
    search: &SearchOptions,
    size: (usize, usize, usize),
) -> Result<()> {
    let (_, space) = spaces
        .first()
        .and_then(|row| {
            row.iter()
                .enumerate()
                .find(|(i, _)| sessions[*i].backend.borrow().toolchain() == Toolchain::Cuda)
        })
        .ok_or_else(|| {
            Error::invalid("--export-space needs a CUDA session (kernel_tuner runs CUDA)")
        })?;
    let limit = search.budget.configs.unwrap_or(usize::MAX);
    let order = unguided_order(space, &search.strategy, search.seed, &search.seeds, limit)
        .map_err(Error::invalid)?;
    let spec = space.kernel.builtin().ok_or_else(|| {
        Error::invalid("--export-space writes a built-in GEMM kernel's space for scripts/kernel_tuner; a spec kernel has no such script")
    })?;
    let points: Vec<serde_json::Value> = order
        .iter()
        .map(|&p| {
            let c = space.candidate(p);
            let options = spec.compile_options(&c.config, &c.hints, Toolchain::Cuda);
            let defines: serde_json::Map<String, serde_json::Value> = options
                .defines
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        serde_json::Value::from(v.parse::<i64>().unwrap_or(0)),
                    )
                })
                .collect();
            let g = spec.geometry(&c.config, size.0, size.1);
            serde_json::json!({
                "defines": defines,
                "max_registers": c.hints.max_registers,
                "block": [g.local[0], g.local[1]],
                "grid": [g.groups()[0], g.groups()[1]],
                "label": c.describe(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "kernel": spec.id,
        "entry": spec.entry,
        "toolchain": "cuda",
        "source": spec.source(Toolchain::Cuda),
        "size": [size.0, size.1, size.2],
        "b_transposed": spec.operands.b_transposed,
        "iterations": search.reps,
        "seed": search.seed,
        "strategy": search.strategy,
        "points": points,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| Error::invalid(e.to_string()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::invalid(format!("{}: {e}", dir.display())))?;
    }
    std::fs::write(path, text).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
    println!(
        "wrote {} points of {} to {}",
        order.len(),
        spec.id,
        path.display()
    );
    Ok(())
}

/// The routine computes at the call's precision: a suite's searches turn no
/// switch that lowers it, and search FP32 emulation only where it is allowed.
fn routine_keeps_precision(
    kernels: &[&'static gemmlab::kernel::builtin::KernelSpec],
    request: &SpaceRequest,
    fp32_emulation: bool,
) -> Result<()> {
    for k in kernels {
        if let Some(s) = (k.switches.iter())
            .filter(|s| s.switch.lowers_precision)
            .find(|s| {
                request
                    .switches
                    .as_ref()
                    .is_some_and(|l| l.iter().any(|n| n == s.name()))
            })
        {
            return Err(Error::invalid(format!(
                "--suite --switches {}: turned, it lowers {}'s result below the call's precision, and the routine computes at the call's precision",
                s.name(),
                k.id
            )));
        }
        let at_precision = k.with_precision(&k.defaults(), request.precision);
        let emulates = at_precision.is_ok_and(|c| {
            k.arithmetic(&c, &Default::default())
                == gemmlab::kernel::builtin::Arithmetic::EmulatedFp32
        });
        if emulates && !fp32_emulation {
            return Err(Error::invalid(format!(
                "--suite --kernels {}: in f32 it computes from TF32 tensor-core products (3xTF32), not in FP32 arithmetic; \
                 add --fp32-emulation to let the routine choose it (FP32-accurate as `gemmlab accuracy` measures it)",
                k.id
            )));
        }
    }
    Ok(())
}
