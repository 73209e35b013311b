//! One search: a strategy walks a space on one session. Compiling is CPU work
//! and measuring is device work, so they are pipelined: worker threads (one per
//! host core by default) compile the points the strategy asked for with the
//! session's `Compiler`, while this thread loads, checks and times each finished
//! artefact on the device. Every outcome is appended to the store at once;
//! points the store already holds are answered from it without compiling.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::space::{Candidate, Space};
use super::store::{Key, Phase, Record, Store};
use super::strategy::{self, Rng};
use super::watch::Watch;
use crate::backend::{Artefact, Backend, BuildReport, Program};
use crate::error::{Error, Result};
use crate::experiment::user::run::Outputs;
use crate::experiment::Problem;
use crate::gemm::check::check_against;
use crate::gemm::driver::{prepare_job, Attempt, Code, Job, KernelRunner, Session, Status};
use crate::kernel::builtin::{Config, Hints, KernelSpec};
use crate::kernel::user::{Dims, UserKernel};
use crate::kernel::Kernel;
use crate::measure::progress::Progress;
use crate::measure::split::{Split, Step};
use crate::measure::{gflops, interleaved, CacheState, Plan, Stats, Timed};
use crate::occupancy;

/// When a search stops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Points to try (answered from the store or measured).
    pub configs: Option<usize>,
    /// Wall seconds of the search.
    pub seconds: Option<f64>,
}

impl Budget {
    /// A budget of nothing tries nothing: an error before anything runs.
    fn check(&self) -> Result<()> {
        if self.configs == Some(0) || self.seconds.is_some_and(|s| s <= 0.0) {
            return Err(Error::invalid(
                "a tuning budget of 0 tries nothing: give --budget above 0",
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchOptions {
    pub strategy: String,
    pub budget: Budget,
    pub seed: u64,
    /// Timed samples per point while searching (the checked run is the warm-up).
    pub reps: usize,
    /// Compile threads.
    pub workers: usize,
    /// A point whose checked run is this many times slower than the fastest
    /// checked run so far is not timed further: its one launch is its time, and it
    /// is marked pruned (see [`Fastest`]).
    pub prune: f64,
    /// K is cut by this factor for a screen (`screen_k`): before its full-size run a
    /// configuration runs once, checked, on the problem with the shorter K, and is
    /// pruned there when that launch is `prune` times slower than the fastest
    /// screen launch so far.
    /// 0 or 1: no screen.
    #[serde(default = "default_screen")]
    pub screen: usize,
    /// Time limits a supervisor enforces (see `tune::watch`).
    #[serde(default)]
    pub limits: Limits,
    /// The supervised `gemmlab tune` run this search belongs to (its records carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Where to tell a supervisor what is being compiled and measured.
    #[serde(skip)]
    pub watch: Option<std::path::PathBuf>,
    /// Build processes, for a compiler that builds one program at a time per
    /// process: `None` where the compiler says they pay (NVIDIA's OpenCL), with as
    /// many as there are compile threads up to `AUTO_PROCESSES`; `Some(0)` none;
    /// `Some(n)` n wherever the compiler can. A result records the number it had.
    #[serde(default)]
    pub build_processes: Option<usize>,
    /// The gemmlab binary build processes run (`gemmlab build-worker`); without
    /// one, builds stay in this process.
    #[serde(skip)]
    pub build_exe: Option<std::path::PathBuf>,
    /// Points tried first after the published one, where the space holds them
    /// (`tune --suite` seeds a call with its neighbours' bests, `tune --start-at`
    /// with a database's).
    #[serde(skip)]
    pub seeds: Vec<Candidate>,
}

fn default_screen() -> usize {
    SCREEN_FACTOR
}

/// The screen's default cut: a configuration 4x slower than the best spends an
/// eighth of a full launch proving it (random xgemm points at 4096 on the H200
/// took 38 ms a checked launch).
pub const SCREEN_FACTOR: usize = 8;

/// The screen's K is a multiple of this: every family's K-tile (BK, KWG, and BK
/// times SPLITK) divides it, so the screen pads no more than the full problem.
pub const SCREEN_K_STEP: usize = 256;

/// The K a screen runs at for a problem of `k`, cut by `factor`; none where the
/// cut would not save at least three quarters of a launch.
pub fn screen_k(k: usize, factor: usize) -> Option<usize> {
    if factor < 2 {
        return None;
    }
    let cut = (k / factor).div_ceil(SCREEN_K_STEP).max(1) * SCREEN_K_STEP;
    (cut * 4 <= k).then_some(cut)
}

/// Build processes when the compiler asks for them and the caller did not say:
/// eight NVIDIA OpenCL processes built about 60 xgemm programs/s together on the
/// H200's host, against 8-12/s in one (results/h200/tune/anchors).
pub const AUTO_PROCESSES: usize = 8;

/// How long one configuration may take before a supervisor stops it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Seconds of device work (load, checked run, timing) per configuration; when
    /// absent, `LAUNCH_FACTOR` times the fastest verified configuration's so far,
    /// and never less than `LAUNCH_FLOOR_S` nor than the work at `FLOOR_GFLOPS`.
    pub launch_timeout_s: Option<f64>,
    /// Seconds one build may take.
    pub compile_timeout_s: f64,
}

/// The default limit on a configuration's device work: this many times the
/// device time of the fastest verified configuration so far ...
pub const LAUNCH_FACTOR: f64 = 100.0;
/// ... and never less than this many seconds ...
pub const LAUNCH_FLOOR_S: f64 = 10.0;
/// ... nor than every launch of a configuration at this rate (a 32768^3 GEMM's first
/// configuration is not cut for being large).
pub const FLOOR_GFLOPS: f64 = 1000.0;
/// How long past its time budget a search that has no outcome yet waits for its
/// first build: at 7 s a search, `tune --suite`'s SIMT searches on the H200 ended
/// with nothing tried while their first builds (NVRTC, 16 at a time) ran on.
pub const FIRST_OUTCOME_GRACE_S: f64 = 120.0;

/// How often a search whose every asked point another process holds looks for
/// their outcomes in the shared store.
const WAIT_FOR_PEERS: std::time::Duration = std::time::Duration::from_millis(100);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            launch_timeout_s: None,
            compile_timeout_s: 120.0,
        }
    }
}

impl Limits {
    /// The limit on the next configuration's device work, given the device time
    /// of the fastest verified configuration so far.
    /// `work_s`: the device work of one configuration at `FLOOR_GFLOPS`, where known.
    pub fn device_deadline(&self, fastest_s: Option<f64>, work_s: f64) -> f64 {
        self.launch_timeout_s.unwrap_or_else(|| {
            let floor = LAUNCH_FLOOR_S.max(work_s);
            fastest_s.map_or(floor, |f| (f * LAUNCH_FACTOR).max(floor))
        })
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            strategy: "anneal".into(),
            budget: Budget {
                configs: Some(200),
                seconds: None,
            },
            seed: 1,
            reps: 3,
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            prune: 4.0,
            screen: SCREEN_FACTOR,
            limits: Limits::default(),
            run: None,
            watch: None,
            build_processes: None,
            build_exe: None,
            seeds: Vec::new(),
        }
    }
}

/// One point of this search and what became of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tried {
    pub point: usize,
    pub candidate: Candidate,
    pub record: Record,
    /// Answered from the store, not measured in this run.
    pub cached: bool,
    /// Seconds since the search started when the outcome was known.
    pub elapsed_s: f64,
}

/// A finished search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchResult {
    pub toolchain: crate::backend::Toolchain,
    pub device: String,
    pub kernel: String,
    pub size: (usize, usize, usize),
    pub strategy: String,
    pub options: SearchOptions,
    pub space_summary: String,
    pub space_size: usize,
    pub tried: Vec<Tried>,
    pub wall_s: f64,
    /// Sum of compile times over the worker threads (CPU seconds of compiling).
    pub compile_s: f64,
    /// Seconds the device thread spent loading, checking and timing.
    pub device_s: f64,
    /// Seconds the device thread sat idle waiting for a compiled point: a search
    /// that waits most of its wall time is compile-bound, one that never waits
    /// device-bound.
    #[serde(default)]
    pub wait_s: f64,
    /// `device_s` step by step (see `split::Step`).
    #[serde(default)]
    pub split: Split,
    /// Why it stopped: budget, time, space exhausted, strategy done.
    pub stopped: String,
    /// A user kernel's size (its `size` is then 0x0x0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<Dims>,
    /// What the records' `gflops` measure: "GFLOP/s" (GEMMs, and specs that state
    /// FLOPs), "GB/s" (specs that state only bytes) or "runs/s" (specs that state neither).
    #[serde(default = "default_unit")]
    pub unit: String,
}

fn default_unit() -> String {
    "GFLOP/s".into()
}

/// The compiler a search builds with, and its build processes (0: it builds in
/// this process). Compiling on the measuring thread (`workers` 0) starts none.
fn in_processes(
    compiler: Arc<dyn crate::backend::Compiler>,
    opts: &SearchOptions,
) -> Result<(Arc<dyn crate::backend::Compiler>, usize)> {
    let (Some(exe), n) = (&opts.build_exe, opts.build_processes) else {
        return Ok((compiler, 0));
    };
    if opts.workers == 0 || compiler.parallel_builds() || n == Some(0) {
        return Ok((compiler, 0));
    }
    let count = n.unwrap_or(opts.workers.min(AUTO_PROCESSES));
    match compiler.in_processes(count, exe, n.is_some())? {
        Some(pooled) => Ok((pooled, count)),
        None => Ok((compiler, 0)),
    }
}

/// What a search measures at: a GEMM problem (and the same call with K cut short
/// for the screen, see `screen_k`), or a user kernel's size with its inputs' seed
/// and the reference outputs (computed once, on this session).
pub enum Workload<'a> {
    Gemm(&'a Problem, Option<&'a Problem>),
    Spec {
        dims: &'a Dims,
        seed: u64,
        reference: &'a Outputs,
    },
}

impl Workload<'_> {
    /// (m, n, k) of a GEMM; 0x0x0 for a spec (its dims say the size).
    pub fn size(&self) -> (usize, usize, usize) {
        match self {
            Workload::Gemm(p, _) => (p.ops.m, p.ops.n, p.ops.k),
            Workload::Spec { .. } => (0, 0, 0),
        }
    }

    /// The store key's tag for everything the size alone does not say.
    pub fn call_tag(&self) -> Option<String> {
        match self {
            Workload::Gemm(p, _) => call_tag(&p.ops.problem),
            Workload::Spec { dims, .. } => Some(UserKernel::describe_dims(dims)),
        }
    }
}

/// The unit a user kernel's rate is given in (see `SearchResult::unit`).
pub fn spec_unit(k: &UserKernel) -> &'static str {
    if k.flops.is_some() {
        "GFLOP/s"
    } else if k.bytes.is_some() {
        "GB/s"
    } else {
        "runs/s"
    }
}

/// A user kernel's rate in its unit (`spec_unit`) from a time.
fn spec_rate(inst: &crate::kernel::user::Instance, ns: f64) -> f64 {
    let secs = ns * 1e-9;
    match (inst.flops, inst.bytes) {
        (Some(f), _) => f / secs * 1e-9,
        (None, Some(b)) => b / secs * 1e-9,
        (None, None) => 1.0 / secs,
    }
}

impl SearchResult {
    /// Its kernel's unchanged form in a label ([`Kernel::unchanged`]): a
    /// user's kernel (searched at dims) has "defaults", a registry one is "published".
    pub fn unchanged(&self) -> &'static str {
        crate::kernel::unchanged_name(self.dims.is_some())
    }

    /// Points measured in this run (not answered from the store).
    pub fn measured(&self) -> usize {
        self.tried.iter().filter(|t| !t.cached).count()
    }

    /// Measured points per wall second, compile included.
    pub fn rate(&self) -> Option<f64> {
        (self.wall_s > 0.0 && self.measured() > 0).then(|| self.measured() as f64 / self.wall_s)
    }

    /// Points pruned for being far slower than the best so far.
    pub fn pruned(&self) -> usize {
        self.tried.iter().filter(|t| t.record.pruned).count()
    }

    /// Of those, pruned at the screen (one checked launch with K cut short).
    pub fn screened(&self) -> usize {
        let at_screen = |t: &&Tried| t.record.pruned && t.record.screen_k.is_some();
        self.tried.iter().filter(at_screen).count()
    }

    /// An exhaustive search that tried every point of its space.
    pub fn covers_space(&self) -> bool {
        self.strategy == "exhaustive" && self.stopped.starts_with("every point")
    }

    /// What held the search back: the device thread waiting for compiles most
    /// of the wall time means the compiler, otherwise the device.
    pub fn bound(&self) -> &'static str {
        if self.wait_s > 0.5 * self.wall_s {
            "compile-bound"
        } else {
            "device-bound"
        }
    }

    /// Whether any configuration it tried was checked and measured.
    pub fn any_ok(&self) -> bool {
        self.tried.iter().any(|t| t.record.status.is_ok())
    }

    /// Why its configurations failed, grouped: each kind of failure with how
    /// many, and the first line of the first one's reason ("8 compile error:
    /// error: use of undeclared identifier 'x'").
    pub fn failures(&self) -> Vec<(&'static str, usize, String)> {
        let mut out: Vec<(&'static str, usize, String)> = Vec::new();
        for t in self.tried.iter().filter(|t| !t.record.status.is_ok()) {
            let label = t.record.status.label();
            match out.iter_mut().find(|(l, _, _)| *l == label) {
                Some((_, n, _)) => *n += 1,
                None => {
                    let reason = t.record.status.reason().unwrap_or("");
                    let mut lines = reason.lines().map(str::trim).filter(|l| !l.is_empty());
                    let mut first = lines.next().unwrap_or("").to_string();
                    // "compiler rejected X:" introduces the log: its first line says why.
                    if first.ends_with(':') {
                        if let Some(next) = lines.next() {
                            first = format!("{first} {next}");
                        }
                    }
                    out.push((label, 1, first));
                }
            }
        }
        out
    }

    /// The best verified points, fastest first.
    pub fn ranked(&self) -> Vec<&Tried> {
        let mut ok: Vec<&Tried> = self
            .tried
            .iter()
            .filter(|t| t.record.status.is_ok() && t.record.gflops.is_some() && !t.record.pruned)
            .collect();
        ok.sort_by(|a, b| {
            b.record
                .gflops
                .partial_cmp(&a.record.gflops)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        ok
    }
}

/// The part of a store key that is the same for every point of one search
/// (device, compiler, kernel source, size): built once, the source hashed once.
pub fn key_base(session: &Session, space: &Space, size: (usize, usize, usize)) -> Key {
    let be = session.backend.borrow();
    let info = be.info();
    Key {
        toolchain: info.toolchain,
        driver: info.driver_version.clone(),
        compiler: info.compiler_version.clone(),
        kernel: space.kernel.id().to_string(),
        source: space.kernel.fingerprint(info.toolchain),
        m: size.0,
        n: size.1,
        k: size.2,
        call: None,
        config: Default::default(),
        hints: Default::default(),
    }
}

/// What a store key and a best say about a call other than C = A * B with tight
/// column-major operands (the precision is recorded on its own: in the
/// configuration of a `real` kernel, and in a best's `precision`).
pub fn call_tag(call: &crate::gemm::problem::Problem) -> Option<String> {
    let single = crate::gemm::problem::Problem {
        precision: crate::gemm::problem::Precision::F32,
        ..*call
    };
    (!single.is_plain()).then(|| call.describe())
}

impl Key {
    /// This key for another candidate.
    pub fn with(&self, c: &Candidate) -> Key {
        Key {
            config: c.config.clone(),
            hints: c.hints.clone(),
            ..self.clone()
        }
    }
}

type Compiled = (usize, Candidate, Key, Result<Artefact>, f64);

/// The points every search tries first: the published configuration (so each
/// search knows where the published kernel stood and a guided walk can start
/// there), then `seeds` that lie in the space.
fn start_points(space: &Space, seeds: &[Candidate]) -> Vec<usize> {
    let mut first: Vec<usize> = space.published_point().into_iter().collect();
    for c in seeds {
        if let Some(p) = space.find(c).filter(|p| !first.contains(p)) {
            first.push(p);
        }
    }
    first
}

/// The first `limit` points a search with an unguided strategy (random,
/// exhaustive) and `seed` tries, in its order: what `tune --arch` compiles ahead
/// and `tune --export-space` hands to kernel_tuner. A guided strategy has no
/// such order, since its later points depend on measured speeds.
pub fn unguided_order(
    space: &Space,
    strategy: &str,
    seed: u64,
    seeds: &[Candidate],
    limit: usize,
) -> std::result::Result<Vec<usize>, String> {
    let mut strat = strategy::by_name(strategy)?;
    if strat.guided() {
        return Err(format!(
            "strategy '{strategy}' picks its points from measured speeds, so they cannot be known without a device: use random or exhaustive"
        ));
    }
    let first = start_points(space, seeds);
    for &p in &first {
        strat.seed(&space.grid, p);
    }
    let limit = limit.min(space.len());
    let mut order: Vec<usize> = first.into_iter().take(limit).collect();
    let mut rng = Rng::new(seed);
    while order.len() < limit {
        let got = strat.ask(&space.grid, limit - order.len(), &mut rng);
        if got.is_empty() {
            break;
        }
        order.extend(got);
    }
    Ok(order)
}

/// Runs one search. Kernel-level failures are outcomes; errors are for the run
/// itself (an unknown strategy, a store that cannot be written).
pub fn search(
    session: &mut Session,
    space: &Space,
    workload: &Workload,
    store: &mut Store,
    opts: &SearchOptions,
    progress: &Progress,
) -> Result<SearchResult> {
    opts.budget.check()?;
    let mut strategy = strategy::by_name(&opts.strategy).map_err(Error::invalid)?;
    let size = workload.size();
    let info = session.backend.borrow().info().clone();
    // The screen's operands and the full problem's stay loaded side by side
    // (until the session unloads them).
    if let Workload::Gemm(_, Some(_)) = workload {
        session.keep_previous = true;
    }
    let spec = space.kernel;
    let source = source_for(spec, &info)?;
    let (compiler, processes, workers) = compilers(session, opts)?;
    let mut base = key_base(session, space, size);
    base.call = workload.call_tag();
    let mut walk = Walk::new(space, opts, strategy.as_mut(), workers);
    let watch = (opts.watch.as_deref()).map(|p| Watch::new(p, store.reference()));
    let watch = watch.as_ref();
    let cancel = AtomicBool::new(false);
    let (job_tx, job_rx) = mpsc::channel::<(usize, Candidate, Key)>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    let (done_tx, done_rx) = mpsc::channel::<Compiled>();

    // One configuration's build, on whichever thread compiles it.
    let compile_job = |point: usize, cand: Candidate, key: Key| -> Compiled {
        let options = spec.compile_options(&cand.config, &cand.hints, compiler.toolchain());
        if let Some(w) = watch {
            w.compile_start(
                point,
                &new_record(key.clone(), opts),
                opts.limits.compile_timeout_s,
            );
        }
        let t = Instant::now();
        let r = compiler.compile(spec.entry(), &source, &options);
        if let Some(w) = watch {
            w.compile_end(point);
        }
        (point, cand, key, r, t.elapsed().as_secs_f64())
    };
    let compile_job = &compile_job;

    // A C the device can check is checked there (nothing downloaded, no host core
    // taken from the compile threads); any other plain f32 C on another thread
    // while the kernel is timed.
    session.device_checks = true;
    session.defer_checks = true;
    // While builds take every core, the measuring thread sleeps through its
    // launches and wakes ahead of them (`sched`).
    let sleeps = workers > 0;
    if sleeps {
        session.backend.borrow_mut().sleep_while_waiting(true)?;
    }
    let mut device = OnDevice {
        session,
        space,
        workload,
        plan: search_plan(opts),
        opts,
        fastest: Fastest::default(),
        inputs: None,
        floor_work_s: floor_work_s(workload, opts),
        watch,
    };
    let outcome: Result<()> = std::thread::scope(|scope| {
        for _ in 0..workers {
            let rx = Arc::clone(&job_rx);
            let tx = done_tx.clone();
            let cancel = &cancel;
            scope.spawn(move || compile_worker(&rx, &tx, cancel, compile_job));
        }
        drop(done_tx);
        let jobs = Jobs {
            tx: &job_tx,
            rx: &job_rx,
            done: &done_rx,
            workers,
            compile: compile_job,
        };
        let result = drive(&mut walk, &mut device, store, &base, &jobs, progress);
        cancel.store(true, Ordering::Relaxed);
        drop(job_tx);
        // Drain so that no worker blocks on a full queue (the channel is unbounded; this only waits).
        for _ in done_rx.iter() {}
        result
    });
    let session = device.session;
    session.defer_checks = false;
    session.device_checks = false;
    // The search's own outcome first: after a fault that lost the device session,
    // restoring the wait fails too, and that error must not hide the loss (the
    // supervisor restarts the process on `DeviceLost` only).
    let restored = match sleeps {
        true => session.backend.borrow_mut().sleep_while_waiting(false),
        false => Ok(()),
    };
    outcome?;
    restored?;
    Ok(walk.result(&info, workload, workers, processes))
}

/// The source a search compiles, or why the kernel cannot run here.
fn source_for(spec: Kernel, info: &crate::backend::DeviceInfo) -> Result<String> {
    let unavailable = |reason: String| Error::Unavailable {
        kernel: spec.id().to_string(),
        toolchain: info.toolchain.to_string(),
        reason,
    };
    if let Some(why) = spec.unavailable(info, &Default::default()) {
        return Err(unavailable(why));
    }
    spec.source(info.toolchain)
        .ok_or_else(|| unavailable(String::new()))
}

/// The search's compiler (in build processes where asked), how many processes
/// it has, and its compile threads.
fn compilers(
    session: &Session,
    opts: &SearchOptions,
) -> Result<(Arc<dyn crate::backend::Compiler>, usize, usize)> {
    let compiler = session.backend.borrow().compiler();
    let (compiler, processes) = in_processes(compiler, opts)?;
    // A compiler that builds one program at a time gets one thread (see `parallel_builds`).
    // 0 compiles on this thread, one configuration after another, as CLBlast's tuner does.
    let workers = match opts.workers {
        0 => 0,
        _ if processes > 0 => processes,
        n if compiler.parallel_builds() => n,
        _ => 1,
    };
    Ok((compiler, processes, workers))
}

/// The search's channels to its compile threads (none: it builds on its own
/// thread), and the build of one point.
struct Jobs<'a> {
    tx: &'a mpsc::Sender<(usize, Candidate, Key)>,
    rx: &'a Mutex<mpsc::Receiver<(usize, Candidate, Key)>>,
    done: &'a mpsc::Receiver<Compiled>,
    workers: usize,
    compile: &'a (dyn Fn(usize, Candidate, Key) -> Compiled + Sync),
}

/// The search's loop: tell what is ready, stop at the budget, ask for more,
/// then measure the next point built, until the walk is over.
fn drive(
    walk: &mut Walk,
    device: &mut OnDevice,
    store: &mut Store,
    base: &Key,
    jobs: &Jobs,
    progress: &Progress,
) -> Result<()> {
    let spec = device.space.kernel;
    let tc = device.session.backend.borrow().info().toolchain;
    let label =
        |c: &Candidate| format!("{} {tc}: {}", spec.id(), c.describe_from(spec.unchanged()));
    loop {
        let told = walk.tell_next(progress);
        let over_time = walk.over_time();
        if over_time && walk.stop_for_time(progress) {
            return Ok(());
        }
        let answered = walk.ask(store, base, jobs.tx, over_time)?;
        let polled = walk.poll_waiting(store, jobs.tx)?;
        if told || answered || polled {
            continue;
        }
        if walk.finished() {
            return Ok(());
        }
        if walk.in_flight == 0 && !walk.waiting.is_empty() {
            // Every point asked is another process's: wait for its outcomes.
            std::thread::sleep(WAIT_FOR_PEERS);
            continue;
        }
        if walk.in_flight == 0 {
            return Err(Error::invalid("internal: the search waits for nothing"));
        }
        let waited = Instant::now();
        let next = if jobs.workers == 0 {
            // No compile threads: build the oldest asked configuration here.
            let job = jobs.rx.lock().ok().and_then(|rx| rx.try_recv().ok());
            Some(job.map(|(p, c, k)| (jobs.compile)(p, c, k)))
        } else {
            walk.wait_for_build(jobs.done, over_time)
        };
        let Some(next) = next else {
            walk.wait_s += waited.elapsed().as_secs_f64();
            continue;
        };
        let Some((point, cand, key, compiled, secs)) = next else {
            return Err(Error::invalid("internal: compile workers stopped"));
        };
        if jobs.workers > 0 {
            walk.wait_s += waited.elapsed().as_secs_f64();
        }
        walk.in_flight -= 1;
        walk.compile_s += secs;
        progress.set_message(label(&cand));
        let record = device.measure(walk, key, compiled, store)?;
        device.check_device(&record, &cand)?;
        walk.ready.insert(point, (cand, record, false));
    }
}

/// A compile thread: builds the configurations it is sent until the search
/// ends (cancelled ones are skipped), at a lower priority than the device thread.
fn compile_worker(
    rx: &Mutex<mpsc::Receiver<(usize, Candidate, Key)>>,
    tx: &mpsc::Sender<Compiled>,
    cancel: &AtomicBool,
    compile_job: &(dyn Fn(usize, Candidate, Key) -> Compiled + Sync),
) {
    crate::util::sched::lower_this_thread();
    loop {
        let job = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return,
        };
        let Ok((point, cand, key)) = job else { return };
        if cancel.load(Ordering::Relaxed) {
            continue;
        }
        if tx.send(compile_job(point, cand, key)).is_err() {
            return;
        }
    }
}

/// The timing method while searching: no warm-up (the checked run is one),
/// `reps` samples, warm cache.
fn search_plan(opts: &SearchOptions) -> Plan {
    Plan {
        warmup: 0,
        reps: opts.reps.max(1),
        cache: CacheState::Warm,
        batch: None,
        budget_s: None,
        check: Default::default(),
    }
}

/// Every launch of one configuration (checked run and samples) at FLOOR_GFLOPS:
/// the least time a device deadline allows.
fn floor_work_s(workload: &Workload, opts: &SearchOptions) -> f64 {
    match workload {
        Workload::Gemm(p, _) => {
            p.ops.problem.flops() / (FLOOR_GFLOPS * 1e9) * (opts.reps as f64 + 1.0)
        }
        Workload::Spec { .. } => 0.0,
    }
}

/// The walk of one search: what the strategy asked, what is ready to tell it,
/// what was tried, and where the time went.
struct Walk<'a> {
    space: &'a Space,
    opts: &'a SearchOptions,
    strategy: &'a mut dyn strategy::Strategy,
    rng: Rng,
    /// Points tried before anything is asked (the published configuration).
    seeds: Vec<usize>,
    limit: usize,
    /// Points asked ahead of the outcomes told, and builds in flight at most.
    depth: usize,
    max_in_flight: usize,
    /// Outcomes are told to the strategy in the order it asked for the points,
    /// one outcome per refill of the queue, whatever order and speed compiling
    /// and measuring finish in: the sequence of asks and tells, and so the walk,
    /// depends only on the outcomes. A rerun over a store (whose answers are
    /// instant) replays it exactly and goes on where the last run stopped.
    queue: VecDeque<usize>,
    ready: HashMap<usize, (Candidate, Record, bool)>,
    /// Points another process holds (a shared store): their outcomes are read
    /// from the store when written, or the points claimed here if the holder dies.
    waiting: Vec<(usize, Candidate, Key)>,
    in_flight: usize,
    strategy_done: bool,
    asked: usize,
    tried: Vec<Tried>,
    stopped: String,
    started: Instant,
    /// Seconds of this run spent before a restart (its records in the store say).
    offset: f64,
    compile_s: f64,
    device_s: f64,
    wait_s: f64,
    split: Split,
    /// The device time of the fastest verified configuration: what the limit on
    /// the next is made of.
    fastest_s: Option<f64>,
}

impl<'a> Walk<'a> {
    fn new(
        space: &'a Space,
        opts: &'a SearchOptions,
        strategy: &'a mut dyn strategy::Strategy,
        workers: usize,
    ) -> Walk<'a> {
        // Points asked ahead of the outcomes told: enough to keep every compile thread
        // busy, few enough that a guided strategy's asks still follow what it learns. A
        // strategy whose asks ignore outcomes is bounded only by the builds in flight,
        // so that one slow build at the front of the line (NVRTC takes up to 16 s on
        // some) idles no compile thread: with 8 points per thread asked ahead, random
        // 150 s searches on the H200 waited 77-94 s for the compiler, in gaps of 10-16 s.
        let (depth, max_in_flight) = if strategy.guided() {
            (2 * workers.max(1), 2 * workers.max(1))
        } else {
            (usize::MAX, 4 * workers.max(1))
        };
        let seeds = start_points(space, &opts.seeds);
        for &p in &seeds {
            strategy.seed(&space.grid, p);
        }
        Walk {
            space,
            opts,
            strategy,
            rng: Rng::new(opts.seed),
            seeds,
            limit: opts.budget.configs.unwrap_or(usize::MAX).min(space.len()),
            depth,
            max_in_flight,
            queue: VecDeque::new(),
            ready: HashMap::new(),
            waiting: Vec::new(),
            in_flight: 0,
            strategy_done: false,
            asked: 0,
            tried: Vec::new(),
            stopped: String::new(),
            started: Instant::now(),
            offset: 0.0,
            compile_s: 0.0,
            device_s: 0.0,
            wait_s: 0.0,
            split: Split::default(),
            fastest_s: None,
        }
    }

    /// What the search found, and what it cost.
    fn result(
        self,
        info: &crate::backend::DeviceInfo,
        workload: &Workload,
        workers: usize,
        processes: usize,
    ) -> SearchResult {
        let wall_s = self.elapsed();
        let spec = self.space.kernel;
        let size = workload.size();
        SearchResult {
            toolchain: info.toolchain,
            device: info.name.clone(),
            kernel: spec.id().to_string(),
            size,
            strategy: self.strategy.name().to_string(),
            // The compile threads it really had.
            options: SearchOptions {
                workers,
                build_processes: Some(processes),
                ..self.opts.clone()
            },
            space_summary: self.space.summary(),
            space_size: self.space.len(),
            tried: self.tried,
            wall_s,
            compile_s: self.compile_s,
            device_s: self.device_s,
            wait_s: self.wait_s,
            split: self.split,
            stopped: self.stopped,
            dims: match workload {
                Workload::Spec { dims, .. } => Some((*dims).clone()),
                Workload::Gemm(..) => None,
            },
            unit: match spec {
                Kernel::User(k) => spec_unit(k).to_string(),
                Kernel::Builtin(_) => default_unit(),
            },
        }
    }

    fn elapsed(&self) -> f64 {
        self.offset + self.started.elapsed().as_secs_f64()
    }

    /// An outcome as tried. When it was known: a record this run measured before a
    /// restart keeps its own time; anything else (new, or the store's) is known now.
    fn as_tried(
        &self,
        point: usize,
        (candidate, record, cached): (Candidate, Record, bool),
    ) -> Tried {
        let elapsed_s = match (cached, record.elapsed_s) {
            (false, Some(e)) if record.run.is_some() && record.run == self.opts.run => e,
            _ => self.elapsed(),
        };
        Tried {
            point,
            candidate,
            record,
            cached,
            elapsed_s,
        }
    }

    /// Tells the strategy the outcome at the front of the queue, if it is ready.
    fn tell_next(&mut self, progress: &Progress) -> bool {
        let Some(&p) = self.queue.front() else {
            return false;
        };
        let Some(outcome) = self.ready.remove(&p) else {
            return false;
        };
        self.queue.pop_front();
        self.strategy
            .tell(&self.space.grid, p, score_of(&outcome.1));
        let t = self.as_tried(p, outcome);
        self.tried.push(t);
        progress.inc(1);
        true
    }

    fn over_time(&self) -> bool {
        self.opts
            .budget
            .seconds
            .is_some_and(|s| self.elapsed() >= s)
    }

    /// Past its time: whether the search stops now. It stops at its time only
    /// once it has an outcome: one whose first builds outlast the budget waits
    /// for the first (`FIRST_OUTCOME_GRACE_S`), rather than end with nothing
    /// tried after building for all of it.
    fn stop_for_time(&mut self, progress: &Progress) -> bool {
        let has_outcome = !self.tried.is_empty() || !self.ready.is_empty();
        let grace_over =
            (self.opts.budget.seconds).is_some_and(|s| self.elapsed() >= s + FIRST_OUTCOME_GRACE_S);
        if !(has_outcome || grace_over) {
            return false;
        }
        // Points compiled or in flight are dropped unmeasured, so unrecorded;
        // those measured behind one still building count, in the order asked.
        let queue: Vec<usize> = self.queue.drain(..).collect();
        for p in queue {
            if let Some(outcome) = self.ready.remove(&p) {
                let t = self.as_tried(p, outcome);
                self.tried.push(t);
                progress.inc(1);
            }
        }
        self.stopped = match has_outcome {
            true => "time budget reached".into(),
            false => "time budget reached with no configuration built".into(),
        };
        true
    }

    /// Asks the strategy for as many points as the queue and the compile
    /// threads take; answers those the store holds and sends the others to be
    /// built. Whether any was answered at once.
    fn ask(
        &mut self,
        store: &mut Store,
        base: &Key,
        job_tx: &mpsc::Sender<(usize, Candidate, Key)>,
        over_time: bool,
    ) -> Result<bool> {
        let mut answered = false;
        // Past its time, a search without an outcome asks for one point at most.
        while !self.strategy_done
            && (!over_time || self.queue.is_empty())
            && self.queue.len() < self.depth
            && self.in_flight < self.max_in_flight
            && self.asked < self.limit
        {
            let want = (self.depth - self.queue.len())
                .min(self.limit - self.asked)
                .min(self.max_in_flight - self.in_flight)
                .min(if over_time { 1 } else { usize::MAX });
            let points = if self.seeds.is_empty() {
                self.strategy.ask(&self.space.grid, want, &mut self.rng)
            } else if over_time {
                vec![self.seeds.remove(0)]
            } else {
                std::mem::take(&mut self.seeds)
            };
            if points.is_empty() {
                // With nothing pending, an empty answer means the strategy is finished.
                self.strategy_done = self.queue.is_empty();
                break;
            }
            let take = self.limit - self.asked;
            for p in points.into_iter().take(take) {
                self.asked += 1;
                self.queue.push_back(p);
                let cand = self.space.candidate(p);
                let key = base.with(&cand);
                answered |= self.place(store, job_tx, (p, cand, key))?;
            }
        }
        Ok(answered)
    }

    /// One asked point: answered from the store, built here once claimed, or
    /// left waiting for the process that holds it. Whether it was answered.
    fn place(
        &mut self,
        store: &mut Store,
        job_tx: &mpsc::Sender<(usize, Candidate, Key)>,
        (p, cand, key): (usize, Candidate, Key),
    ) -> Result<bool> {
        if let Some(r) = store.lookup(&key) {
            // Measured by this run before a restart: its own, not the store's.
            let ours = r.run.is_some() && r.run == self.opts.run;
            if ours {
                self.absorb_own(r);
            }
            self.ready.insert(p, (cand, r.clone(), !ours));
            return Ok(true);
        }
        match store.claim(&key)? {
            true => self.build(job_tx, (p, cand, key))?,
            false => self.waiting.push((p, cand, key)),
        }
        Ok(false)
    }

    fn build(
        &mut self,
        job_tx: &mpsc::Sender<(usize, Candidate, Key)>,
        job: (usize, Candidate, Key),
    ) -> Result<()> {
        job_tx
            .send(job)
            .map_err(|_| Error::invalid("internal: compile workers stopped"))?;
        self.in_flight += 1;
        Ok(())
    }

    /// Points other processes hold: those whose outcome the store now has are
    /// ready, those whose holder's lease ran out are claimed and built here.
    /// Whether any became ready.
    fn poll_waiting(
        &mut self,
        store: &mut Store,
        job_tx: &mpsc::Sender<(usize, Candidate, Key)>,
    ) -> Result<bool> {
        let mut answered = false;
        for point in std::mem::take(&mut self.waiting) {
            answered |= self.place(store, job_tx, point)?;
        }
        Ok(answered)
    }

    /// A record this run measured before a restart: its time is this run's.
    fn absorb_own(&mut self, r: &Record) {
        self.offset = self.offset.max(r.elapsed_s.unwrap_or(0.0));
        self.device_s += r.device_s;
        self.compile_s += r.compile_ms.unwrap_or(0.0) / 1e3;
        self.split.absorb(&r.split);
        self.note_fastest(r);
    }

    fn note_fastest(&mut self, r: &Record) {
        if r.status.is_ok() && !r.pruned {
            self.fastest_s = Some(self.fastest_s.map_or(r.device_s, |f| f.min(r.device_s)));
        }
    }

    /// With nothing queued, the search is over: says why.
    fn finished(&mut self) -> bool {
        if !self.queue.is_empty() {
            return false;
        }
        self.stopped = if self.asked >= self.space.len() {
            "every point of the space tried".into()
        } else if self.asked >= self.limit {
            "budget of configurations reached".into()
        } else {
            "the strategy finished".into()
        };
        true
    }

    /// The next finished build, waiting no longer than the time budget has
    /// left: `None` when that ran out (a build still running then is not waited
    /// for), `Some(None)` when the compile threads stopped.
    fn wait_for_build(
        &self,
        done_rx: &mpsc::Receiver<Compiled>,
        over_time: bool,
    ) -> Option<Option<Compiled>> {
        let left = self.opts.budget.seconds.map(|s| {
            let end = if over_time {
                s + FIRST_OUTCOME_GRACE_S
            } else {
                s
            };
            std::time::Duration::from_secs_f64((end - self.elapsed()).max(0.0))
        });
        match left {
            None => Some(done_rx.recv().ok()),
            Some(left) => match done_rx.recv_timeout(left) {
                Ok(x) => Some(Some(x)),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => Some(None),
            },
        }
    }
}

/// The device side of a search: loads, checks and times each built point.
struct OnDevice<'a, 'w> {
    session: &'a mut Session,
    space: &'a Space,
    workload: &'a Workload<'w>,
    plan: Plan,
    opts: &'a SearchOptions,
    fastest: Fastest,
    /// A user kernel's inputs, generated once for every configuration whose buffers
    /// have the same lengths (generating 10^8 random values costs more than a launch).
    inputs: InputsCache,
    floor_work_s: f64,
    watch: Option<&'a Watch>,
}

impl OnDevice<'_, '_> {
    /// Measures one built point and appends its record to the store.
    fn measure(
        &mut self,
        walk: &mut Walk,
        key: Key,
        compiled: Result<Artefact>,
        store: &mut Store,
    ) -> Result<Record> {
        let t = Instant::now();
        if let Some(w) = self.watch {
            let mut r = new_record(key.clone(), self.opts);
            r.elapsed_s = Some(walk.elapsed());
            let deadline = (self.opts.limits).device_deadline(walk.fastest_s, self.floor_work_s);
            w.device_start(&r, deadline);
        }
        let mut record = match self.workload {
            Workload::Gemm(problem, screen) => measure(
                self.session,
                self.space,
                (problem, *screen),
                &self.plan,
                self.opts,
                key,
                compiled,
                &mut self.fastest,
            ),
            Workload::Spec {
                dims,
                seed,
                reference,
            } => {
                let k = self.space.kernel.user().ok_or_else(|| {
                    Error::invalid("internal: a spec workload for a built-in kernel")
                })?;
                measure_spec(
                    self.session,
                    k,
                    (dims, *seed, reference),
                    &mut self.inputs,
                    &self.plan,
                    self.opts,
                    key,
                    compiled,
                    &mut self.fastest,
                )
            }
        };
        walk.device_s += t.elapsed().as_secs_f64();
        walk.split.absorb(&record.split);
        walk.note_fastest(&record);
        record.elapsed_s = Some(walk.elapsed());
        store.append(record.clone())?;
        if let Some(w) = self.watch {
            w.device_end();
        }
        Ok(record)
    }

    /// A configuration that failed on the device may have taken the session
    /// with it (an illegal address poisons a CUDA context): every later one
    /// would fail too, so the search stops there, the failure recorded.
    fn check_device(&self, record: &Record, cand: &Candidate) -> Result<()> {
        if !failed_on_device(&record.status) {
            return Ok(());
        }
        let spec = self.space.kernel;
        self.session.healthy().map_err(|e| Error::DeviceLost {
            what: format!("{} {}", spec.id(), cand.describe_from(spec.unchanged())),
            reason: format!(
                "{}; then: {e}",
                record.status.reason().unwrap_or("it failed")
            ),
        })
    }
}

/// A failure of the kernel on the device (not of its compile or its configuration).
fn failed_on_device(s: &Status) -> bool {
    matches!(s, Status::LaunchError(_) | Status::WrongResult(_))
}

/// The score a strategy sees: verified GFLOP/s; pruned points count with their
/// one launch (they are slow, and the strategy should learn that).
fn score_of(r: &Record) -> Option<f64> {
    r.status.is_ok().then_some(r.gflops).flatten()
}

fn new_record(key: Key, opts: &SearchOptions) -> Record {
    Record {
        key,
        phase: Phase::Search,
        status: Status::Ok,
        gflops: None,
        time: None,
        pruned: false,
        screen_k: None,
        resources: None,
        occupancy: None,
        compile_ms: None,
        device_s: 0.0,
        split: Default::default(),
        run: opts.run.clone(),
        elapsed_s: None,
        strategy: opts.strategy.clone(),
        at_utc: crate::results::utc_now(),
    }
}

/// A point's record with its compile time, and its artefact; after a compile
/// error (no artefact) the record is finished.
fn start_record(
    key: Key,
    opts: &SearchOptions,
    compiled: Result<Artefact>,
) -> (Record, Option<Artefact>) {
    let mut record = new_record(key, opts);
    match compiled {
        Ok(a) => {
            record.compile_ms = Some(a.report.compile_ms);
            (record, Some(a))
        }
        Err(e) => {
            record.status = Status::CompileError(e.to_string());
            (record, None)
        }
    }
}

/// The fastest single checked launches of a search so far, at the full problem
/// and at the screen's shorter K: what a point's own single launch is pruned
/// against. A lone launch, checked right after its program is loaded, carries
/// fixed costs a timed median of batched launches does not: on the H200 a `thin`
/// launch at 4097x33x256 took 26-42 us where the
/// timed kernel at the full K=2049 ran 44, so against timed medians the screen
/// pruned 397 of 400 points. Launches are compared with launches only.
#[derive(Debug, Clone, Copy, Default)]
struct Fastest {
    check_ns: Option<u64>,
    screen_ns: Option<u64>,
}

impl Fastest {
    /// Whether a launch of `ns` is `prune` times slower than `fastest`.
    fn slower(fastest: Option<u64>, ns: u64, prune: f64) -> bool {
        fastest.is_some_and(|f| ns as f64 > prune * f as f64)
    }

    /// Records a launch whose result was checked and correct (a wrong result's
    /// speed says nothing, and a kernel that skips its work would prune the rest).
    fn note(fastest: &mut Option<u64>, ns: u64) {
        *fastest = Some(fastest.map_or(ns, |f| f.min(ns)));
    }
}

/// Times a checked, prepared point from its checked run on: pruned (its one
/// launch is its time) when that launch is `prune` times slower than the fastest
/// checked launch so far, else timed with `plan`'s samples. Returns (rate,
/// stats, pruned).
fn time_point(
    runner: &mut dyn Timed,
    check_ns: u64,
    rate: impl Fn(f64) -> f64,
    plan: &Plan,
    opts: &SearchOptions,
    fastest: Option<u64>,
) -> std::result::Result<(f64, Option<Stats>, bool), String> {
    if Fastest::slower(fastest, check_ns, opts.prune) {
        return Ok((
            rate(check_ns as f64),
            Stats::from_samples(&[check_ns]),
            true,
        ));
    }
    // The checked run was this kernel's warm-up launch: time from it on.
    let plan = Plan {
        warmup: 0,
        batch: Some(plan.batch_for(check_ns as f64)),
        ..*plan
    };
    match interleaved(&mut [runner], &plan).remove(0) {
        Ok(stats) => Ok((rate(stats.median_ns), Some(stats), false)),
        Err(e) => Err(e.to_string()),
    }
}

/// Inputs of a user kernel by the buffer lengths they were generated for.
type InputsCache = Option<(
    Vec<Option<usize>>,
    Vec<Option<crate::experiment::user::data::HostBuf>>,
)>;

/// What every measured configuration starts with: the session's laps restarted
/// and its record begun; `Err` is the record of one whose build failed.
fn begin(
    session: &Session,
    key: Key,
    opts: &SearchOptions,
    compiled: Result<Artefact>,
) -> std::result::Result<(Record, Artefact, Config, Hints), Box<Record>> {
    session.laps.borrow_mut().restart();
    let (record, artefact) = start_record(key, opts, compiled);
    let Some(artefact) = artefact else {
        return Err(Box::new(record));
    };
    let (config, hints) = (record.key.config.clone(), record.key.hints.clone());
    Ok((record, artefact, config, hints))
}

/// Loads, checks and times one compiled point of a user kernel.
#[allow(clippy::too_many_arguments)]
fn measure_spec(
    session: &mut Session,
    kernel: &UserKernel,
    (dims, seed, reference): (&Dims, u64, &Outputs),
    cache: &mut InputsCache,
    plan: &Plan,
    opts: &SearchOptions,
    key: Key,
    compiled: Result<Artefact>,
    fastest: &mut Fastest,
) -> Record {
    let t = Instant::now();
    let (mut record, artefact, config, hints) = match begin(session, key, opts, compiled) {
        Ok(begun) => begun,
        Err(failed) => return *failed,
    };
    let inst = match kernel.instantiate(&config, dims) {
        Ok(i) => i,
        Err(e) => {
            record.status = Status::InvalidConfig(e.to_string());
            return record;
        }
    };
    if cache.as_ref().is_none_or(|(lens, _)| *lens != inst.lens) {
        *cache = Some((
            inst.lens.clone(),
            crate::experiment::user::run::inputs(kernel, &inst, seed),
        ));
    }
    let data: &[Option<crate::experiment::user::data::HostBuf>] =
        cache.as_ref().map_or(&[], |(_, d)| d);
    let attempt = crate::experiment::user::run::prepare(
        session,
        kernel,
        &config,
        &hints,
        &inst,
        data,
        reference,
        crate::experiment::user::run::Code::Built(artefact),
    );
    let info = session.backend.borrow().info().clone();
    if let Some(b) = &attempt.build {
        let entry = kernel.launches.first().map_or("", |l| l.entry.as_str());
        record.resources = b.kernel(entry).cloned();
        if let (Some(r), Some((_, g, _))) = (&record.resources, inst.launches.first()) {
            record.occupancy = occupancy::for_kernel(&info, r, g.threads_per_group());
        }
    }
    record.status = attempt.status.clone();
    if let Some(p) = attempt.prepared {
        let mut runner = crate::experiment::user::run::Runner {
            session,
            prepared: &p,
            flush: None,
        };
        let rate = |ns: f64| spec_rate(&inst, ns);
        match time_point(&mut runner, p.check_ns, rate, plan, opts, fastest.check_ns) {
            Ok((g, stats, pruned)) => {
                record.gflops = Some(g);
                record.time = stats;
                record.pruned = pruned;
                if record.status.is_ok() {
                    Fastest::note(&mut fastest.check_ns, p.check_ns);
                }
            }
            Err(e) => record.status = Status::LaunchError(e),
        }
        session.lap(Step::Timing);
        p.release(session);
        session.lap(Step::Release);
    }
    record.device_s = t.elapsed().as_secs_f64();
    record.split = session.laps.borrow_mut().take();
    record
}

/// What a screen made of a configuration.
enum Screened {
    /// Slower than the fastest screen launch by the prune factor: its one
    /// checked launch, and what the build said.
    Pruned {
        check_ns: u64,
        build: Option<BuildReport>,
    },
    /// It failed at the screen's K (the attempt says how).
    Failed(Box<Attempt>),
    /// Fast enough: its program, still loaded, for the full-size run.
    Passed((Program, BuildReport)),
}

/// Loads a configuration and runs it once, checked, on the screen's problem.
fn screen_point(
    session: &mut Session,
    spec: &KernelSpec,
    (config, hints): (&Config, &Hints),
    screen: &Problem,
    artefact: Artefact,
    opts: &SearchOptions,
    fastest: &mut Fastest,
) -> Screened {
    // The screen's result is checked here: a pruned point's speed is reported too.
    let defer = std::mem::replace(&mut session.defer_checks, false);
    let (ops, reference) = (&screen.ops, &screen.reference);
    let job = Job::new(spec, (config, hints), (ops, reference), false);
    let attempt = prepare_job(session, &job, Code::Built(artefact));
    session.defer_checks = defer;
    let Some(p) = attempt.prepared else {
        return Screened::Failed(Box::new(attempt));
    };
    // A prepared point's screen result was checked, and was right.
    let slower = Fastest::slower(fastest.screen_ns, p.check_ns, opts.prune);
    Fastest::note(&mut fastest.screen_ns, p.check_ns);
    if slower {
        let check_ns = p.check_ns;
        p.release(session);
        return Screened::Pruned {
            check_ns,
            build: attempt.build,
        };
    }
    Screened::Passed(p.into_program(session))
}

/// Loads, checks and times one compiled point on the device.
#[allow(clippy::too_many_arguments)]
fn measure(
    session: &mut Session,
    space: &Space,
    (problem, screen): (&Problem, Option<&Problem>),
    plan: &Plan,
    opts: &SearchOptions,
    key: Key,
    compiled: Result<Artefact>,
    fastest: &mut Fastest,
) -> Record {
    let (m, n, k) = (problem.ops.m, problem.ops.n, problem.ops.k);
    let Kernel::Builtin(spec) = space.kernel else {
        let mut r = new_record(key, opts);
        r.status = Status::InvalidConfig("internal: a GEMM problem for a user kernel".into());
        return r;
    };
    let info = session.backend.borrow().info().clone();
    let t = Instant::now();
    let (mut record, artefact, config, hints) = match begin(session, key, opts, compiled) {
        Ok(begun) => begun,
        Err(failed) => return *failed,
    };
    let resources = |record: &mut Record, build: Option<&BuildReport>| {
        record.resources =
            build.and_then(|b| spec.resources(b, &config, info.toolchain.language()));
        if let Some(r) = &record.resources {
            record.occupancy = occupancy::for_kernel(&info, r, spec.threads_per_group(&config));
        }
    };
    let (ops, reference) = (&problem.ops, &problem.reference);
    let job = Job::new(spec, (&config, &hints), (ops, reference), false);
    let attempt = match screen {
        None => prepare_job(session, &job, Code::Built(artefact)),
        Some(s) => {
            let screened =
                screen_point(session, spec, (&config, &hints), s, artefact, opts, fastest);
            session.laps.borrow_mut().fold(Step::Screen);
            match screened {
                Screened::Failed(attempt) => {
                    record.screen_k = Some(s.ops.k);
                    *attempt
                }
                Screened::Pruned { check_ns, build } => {
                    resources(&mut record, build.as_ref());
                    record.gflops = Some(gflops(m, n, s.ops.k, check_ns as f64));
                    record.time = Stats::from_samples(&[check_ns]);
                    record.pruned = true;
                    record.screen_k = Some(s.ops.k);
                    record.device_s = t.elapsed().as_secs_f64();
                    record.split = session.laps.borrow_mut().take();
                    return record;
                }
                Screened::Passed((program, build)) => {
                    prepare_job(session, &job, Code::Loaded(program, build))
                }
            }
        }
    };
    resources(&mut record, attempt.build.as_ref());
    record.status = attempt.status.clone();
    let unchecked = session.take_unchecked();
    if let Some(p) = attempt.prepared {
        let mut runner = KernelRunner {
            session,
            prepared: &p,
        };
        let rate = |ns: f64| gflops(m, n, k, ns);
        let reference = &problem.reference;
        // The check of the checked run's result runs beside the timing: the device
        // thread does not wait for the host to compare 16 million elements.
        let (timed, checked) = std::thread::scope(|sc| {
            let checker = unchecked.as_ref().map(|(rows, host)| {
                sc.spawn(move || check_against(*rows, host.as_slice(), reference))
            });
            let timed = time_point(&mut runner, p.check_ns, rate, plan, opts, fastest.check_ns);
            (timed, checker.map(|h| h.join()))
        });
        match (checked, timed) {
            (Some(Ok(report)), _) if !report.passed => {
                let e = Error::Check {
                    what: format!("{} on {}", spec.id, info.label()),
                    detail: report.summary(),
                };
                record.status = Status::from_error(&e);
            }
            (Some(Err(_)), _) => {
                record.status = Status::LaunchError("internal: the result check panicked".into())
            }
            (_, Ok((g, stats, pruned))) => {
                record.gflops = Some(g);
                record.time = stats;
                record.pruned = pruned;
                Fastest::note(&mut fastest.check_ns, p.check_ns);
            }
            (_, Err(e)) => record.status = Status::LaunchError(e),
        }
        session.lap(Step::Timing);
        p.release(session);
        session.lap(Step::Release);
    }
    if let Some((_, host)) = unchecked {
        session.return_host(host);
    }
    record.device_s = t.elapsed().as_secs_f64();
    record.split = session.laps.borrow_mut().take();
    record
}

#[cfg(test)]
mod tests {
    use super::{screen_k, Fastest, SCREEN_K_STEP};

    #[test]
    fn a_launch_is_pruned_against_the_fastest_checked_launch_only() {
        let mut f = Fastest::default();
        // Nothing to be slower than yet: the first launch is never pruned.
        assert!(!Fastest::slower(f.screen_ns, 40_000, 4.0));
        Fastest::note(&mut f.screen_ns, 40_000);
        // The H200's thin launches at the screen's K: 26-42 us each, none 4x slower.
        assert!(!Fastest::slower(f.screen_ns, 42_000, 4.0));
        Fastest::note(&mut f.screen_ns, 26_000);
        assert!(!Fastest::slower(f.screen_ns, 104_000, 4.0));
        assert!(Fastest::slower(f.screen_ns, 104_001, 4.0));
        // A slower launch does not move the reference; the two K keep their own.
        Fastest::note(&mut f.screen_ns, 90_000);
        assert_eq!(f.screen_ns, Some(26_000));
        assert_eq!(f.check_ns, None);
    }

    #[test]
    fn the_screen_cuts_k_to_a_multiple_of_its_step_and_only_where_it_pays() {
        assert_eq!(screen_k(4096, 8), Some(512));
        assert_eq!(screen_k(32768, 8), Some(4096));
        // 1024 / 8 rounds up to one step: a quarter of the launch.
        assert_eq!(screen_k(1024, 8), Some(SCREEN_K_STEP));
        assert_eq!(screen_k(4097, 8), Some(512));
        // Too short a K to save three quarters, or no screen asked.
        assert_eq!(screen_k(1000, 8), None);
        assert_eq!(screen_k(256, 8), None);
        assert_eq!(screen_k(4096, 1), None);
        assert_eq!(screen_k(4096, 0), None);
        for k in [1024, 2048, 3000, 4096, 8192, 50000] {
            let cut = screen_k(k, 8).unwrap();
            assert_eq!(cut % SCREEN_K_STEP, 0);
            assert!(cut * 4 <= k, "{k} -> {cut}");
        }
    }
}
