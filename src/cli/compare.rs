//! `gemmlab compare`: every kernel through every toolchain on one device.

use std::path::PathBuf;

use clap::Args;

use gemmlab::backend::select::unavailable;
use gemmlab::experiment::{run_compare, toolchains, CompareOptions, Recording};
use gemmlab::gemm::check::CheckMode;
use gemmlab::gemm::driver::Session;
use gemmlab::gemm::problem::Template;
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::measure::clocks::{Monitor, Nvml};
use gemmlab::measure::progress::Progress;
use gemmlab::measure::{CacheState, Plan};
use gemmlab::results::table::compare_table;
use gemmlab::{
    open_with, resolve, Backend, DeviceKind, DeviceSpec, Error, Inventory, Layout, Nvrtc,
    Precision, Result, Toolchain, Trans,
};

#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    /// Device: auto, cuda, opencl, a name or vendor substring (h200, nvidia, pocl), cuda:N or opencl:P:D.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Toolchains to use (comma-separated): cuda, opencl, clang-cuda, clang-opencl.
    /// Default: every available one. clang's assemble with the newest cached ptxas
    /// for the device unless GEMMLAB_ASSEMBLER names a release (11.8, 13) or jit.
    #[arg(long, value_delimiter = ',')]
    pub backends: Vec<String>,
    /// The NVRTC that compiles CUDA: a version from gemmlab's wheel cache (11.8, 12,
    /// 13, 12.9.86; scripts/nvrtc/fetch.sh fetches them) or a path to a libnvrtc.so.
    /// Default: the first libnvrtc on the loader path, else the newest cached one.
    #[arg(long, value_name = "VERSION|PATH")]
    pub nvrtc: Option<String>,
}

impl DeviceArgs {
    /// Resolves and opens one session per toolchain, all on the same device.
    pub fn sessions(&self) -> Result<Vec<Session>> {
        let toolchains: Vec<Toolchain> = if self.backends.is_empty() {
            Toolchain::ALL.to_vec()
        } else {
            self.backends
                .iter()
                .map(|b| {
                    Toolchain::parse(b).ok_or_else(|| {
                        let known: Vec<&str> = Toolchain::ALL.iter().map(|t| t.as_str()).collect();
                        Error::invalid(format!("unknown backend '{b}' (use {})", known.join(", ")))
                    })
                })
                .collect::<Result<_>>()?
        };
        let spec = DeviceSpec::parse(&self.device)?;
        // A named NVRTC must exist before any device is opened.
        let nvrtc = match &self.nvrtc {
            Some(n) => Some(Nvrtc::choose(Some(n))?),
            None => None,
        };
        let inv = Inventory::discover();
        // A toolchain asked for by name that cannot run here is an error; where
        // others were asked for too, they run and the command exits 1 at the end.
        let mut missing = Vec::new();
        for tc in &toolchains {
            let asked = !self.backends.is_empty() || spec == DeviceSpec::Toolchain(*tc);
            if asked && !inv.devices.iter().any(|d| d.toolchain == *tc) {
                if let Some((_, why)) = inv.unavailable.iter().find(|(t, _)| t == tc) {
                    missing.push((*tc, unavailable(*tc, why)));
                }
            }
        }
        if !missing.is_empty() && missing.len() == toolchains.len() {
            return Err(missing.remove(0).1);
        }
        for (_, e) in &missing {
            super::missing_toolchain(e);
        }
        let toolchains: Vec<Toolchain> = toolchains
            .into_iter()
            .filter(|t| missing.iter().all(|(m, _)| m != t))
            .collect();
        let devices = resolve(&spec, &inv, &toolchains)?;
        for (tc, why) in &inv.unavailable {
            if toolchains.contains(tc) && self.backends.is_empty() {
                eprintln!("note: {tc} not used: {why}");
            }
        }
        if let Some(n) = &nvrtc {
            if devices.iter().all(|d| d.toolchain != Toolchain::Cuda) {
                eprintln!(
                    "note: --nvrtc {}: no CUDA device is used, so it compiles nothing here (--arch compiles without one)",
                    n.label()
                );
            }
        }
        let mut sessions: Vec<Session> = devices
            .iter()
            .map(|d| open_with(d, nvrtc.as_ref()).map(Session::new))
            .collect::<Result<_>>()?;
        // One NVML for the run: sessions on the same GPU share its handle.
        let nvml = if devices
            .iter()
            .any(|d| d.is_nvidia() && d.kind == DeviceKind::Gpu)
        {
            Nvml::load()
        } else {
            Err("no NVIDIA GPU among the devices".into())
        };
        for (s, d) in sessions.iter_mut().zip(&devices) {
            match Monitor::open(&nvml, d) {
                Ok(m) => s.monitor = Some(m),
                Err(note) => s.monitor_note = Some(note),
            }
        }
        Ok(sessions)
    }
}

/// An option value that may be a word (auto, none) standing for "not fixed": clap
/// reads a plain `Option` field as "may be absent", so the word needs a type of its own.
#[derive(Debug, Clone, Copy)]
pub struct Auto<T>(pub Option<T>);

/// How samples are formed, shared by compare and sweep.
#[derive(Args, Debug, Clone)]
pub struct TimingArgs {
    /// Launches per timed sample: auto (kernels under 100 us are batched back to back
    /// between one pair of events, to ~2 ms samples) or a fixed count (1: one launch per sample).
    #[arg(long, default_value = "auto", value_parser = |s: &str| gemmlab::measure::parse_batch(s).map(Auto))]
    pub batch: Auto<usize>,
    /// Seconds of device time one point's repetitions may take before they are cut
    /// (never below 5), or none.
    #[arg(long, default_value = "20", value_parser = |s: &str| gemmlab::error::parse_budget(s).map(Auto))]
    pub budget: Auto<f64>,
    /// Reference every result is checked against: auto (full f64 CPU reference up to
    /// 8192^3; above it cuBLAS DGEMM on a CUDA device, else sampled), cpu, dgemm, sampled.
    #[arg(long, default_value = "auto", value_parser = parse_check)]
    pub check: CheckMode,
}

fn parse_check(s: &str) -> std::result::Result<CheckMode, String> {
    CheckMode::parse(s).ok_or_else(|| format!("'{s}': use auto, cpu, dgemm or sampled"))
}

impl TimingArgs {
    pub fn plan(&self, warmup: usize, reps: usize, cold: bool) -> Plan {
        Plan {
            warmup,
            reps,
            cache: if cold {
                CacheState::Cold
            } else {
                CacheState::Warm
            },
            batch: self.batch.0,
            budget_s: self.budget.0,
            check: self.check,
        }
    }
}

/// The GEMM call each size is run as, in BLAS terms. The defaults are the
/// tutorial's problem: column-major C = A * B in f32.
#[derive(Args, Debug, Clone)]
pub struct ProblemArgs {
    /// Storage order of A, B and C: col (column-major) or row (row-major).
    #[arg(long, default_value = "col", value_parser = |s: &str| Layout::parse(s))]
    pub layout: Layout,
    /// Use A transposed: n or t.
    #[arg(long, default_value = "n", value_parser = |s: &str| Trans::parse(s))]
    pub trans_a: Trans,
    /// Use B transposed: n or t.
    #[arg(long, default_value = "n", value_parser = |s: &str| Trans::parse(s))]
    pub trans_b: Trans,
    /// alpha in C = alpha op(A) op(B) + beta C.
    #[arg(long, allow_negative_numbers = true)]
    pub alpha: Option<f64>,
    /// beta in C = alpha op(A) op(B) + beta C (0: C is not read).
    #[arg(long, allow_negative_numbers = true)]
    pub beta: Option<f64>,
    /// f32 (SGEMM) or f64 (DGEMM).
    #[arg(long, default_value = "f32", value_parser = |s: &str| Precision::parse(s))]
    pub precision: Precision,
    /// Leading dimension of A (default: the smallest legal one at each size).
    #[arg(long)]
    pub lda: Option<usize>,
    /// Leading dimension of B.
    #[arg(long)]
    pub ldb: Option<usize>,
    /// Leading dimension of C.
    #[arg(long)]
    pub ldc: Option<usize>,
    /// Elements before A, B and C in their buffers: A,B,C (e.g. 1,3,0).
    #[arg(long, value_name = "A,B,C")]
    pub offsets: Option<String>,
}

impl ProblemArgs {
    pub fn template(&self) -> Result<Template> {
        let (a_offset, b_offset, c_offset) = match &self.offsets {
            None => (0, 0, 0),
            Some(list) => {
                let v: Vec<usize> = list
                    .split(',')
                    .map(|x| {
                        x.trim().parse::<usize>().map_err(|_| {
                            Error::invalid(format!(
                                "--offsets: '{x}' is not a non-negative integer"
                            ))
                        })
                    })
                    .collect::<Result<_>>()?;
                match v[..] {
                    [a, b, c] => (a, b, c),
                    _ => {
                        return Err(Error::invalid(format!(
                            "--offsets expects three values A,B,C, got '{list}'"
                        )))
                    }
                }
            }
        };
        Ok(Template {
            layout: self.layout,
            trans_a: self.trans_a,
            trans_b: self.trans_b,
            alpha: self.alpha,
            beta: self.beta,
            lda: self.lda,
            ldb: self.ldb,
            ldc: self.ldc,
            a_offset,
            b_offset,
            c_offset,
            precision: self.precision,
        })
    }

    /// The template, checked at every size before any device is opened.
    pub fn template_for(&self, sizes: &[(usize, usize, usize)]) -> Result<Template> {
        let t = self.template()?;
        for &(m, n, k) in sizes {
            t.at(m, n, k)?;
        }
        Ok(t)
    }
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub problem: ProblemArgs,
    #[command(flatten)]
    pub isolation: super::isolation::IsolationArgs,
    /// Kernels (comma-separated ids or numbers, e.g. 1,6,gemm11); default all (none when --spec is given).
    #[arg(long)]
    pub kernels: Option<String>,
    /// A kernel spec file (your own kernel, see docs/src/specs.md); repeatable.
    #[arg(long = "spec", value_name = "FILE")]
    pub specs: Vec<PathBuf>,
    /// Sizes: N for N^3 or MxNxK, comma-separated. Default 4096 on a GPU, 512 on a CPU.
    /// For spec kernels: NAME=VALUE,... per point (n=4096,m=512); a point ends at ';' or
    /// where a name repeats (n=1024,n=4096 is two points). Default: each spec's dims.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Timed repetitions per kernel and toolchain.
    #[arg(long, default_value_t = 20, value_parser = gemmlab::error::parse_reps)]
    pub reps: usize,
    /// Untimed warm-up launches before the timed ones.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Seed of the random inputs (printed; give it to reproduce a run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Kernel parameter or hint switch, NAME=VALUE; repeatable (e.g. --define TS=16 --define USE_UNROLL=0).
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Register cap for both compilers.
    #[arg(long, value_parser = gemmlab::error::parse_register_cap)]
    pub max_registers: Option<u32>,
    /// Flush the L2 before every repetition (operands come from device memory).
    #[arg(long)]
    pub cold: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Run each kernel in the configuration `gemmlab tune` found best for each toolchain on
    /// this device (the database of bests, nearest tuned size), instead of the published defaults.
    #[arg(long, conflicts_with_all = ["defines", "max_registers"])]
    pub tuned: bool,
    /// Directory of the database of bests that --tuned reads.
    #[arg(long, default_value = gemmlab::results::bests::DEFAULT_DIR)]
    pub db: PathBuf,
    /// Keep the PTX of every build measured under OUT/ptx/ (one file per distinct listing).
    #[arg(long)]
    pub keep_ptx: bool,
    /// Output directory for results.json, results.csv and the streaming measurements.jsonl.
    #[arg(long, default_value = "gemmlab-results/compare")]
    pub out: PathBuf,
}

pub use gemmlab::gemm::parse_size;

/// The sizes asked for, or one default: 4096^3 when every session is on a GPU,
/// else `cpu`^3 (a size PoCL on a CPU finishes in seconds).
pub fn sizes_or_default(
    explicit: Vec<(usize, usize, usize)>,
    infos: &[gemmlab::DeviceInfo],
    cpu: usize,
) -> Vec<(usize, usize, usize)> {
    if !explicit.is_empty() {
        return explicit;
    }
    let n = if infos.iter().all(|d| d.kind == DeviceKind::Gpu) {
        4096
    } else {
        cpu
    };
    vec![(n, n, n)]
}

pub fn seed_or_random(seed: Option<u64>) -> u64 {
    // A supervised child runs with its supervisor's seed, so restarts agree.
    seed.or_else(gemmlab::experiment::isolate::seed)
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1);
            t % 1_000_000
        })
}

pub fn progress(len: u64) -> Progress {
    Progress::new(len)
}

pub fn run(args: CompareArgs) -> Result<super::Outcome> {
    // Arguments first: a typo should not wait for device discovery.
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    let (dim_sizes, gemm_sizes): (Vec<String>, Vec<String>) =
        args.sizes.iter().cloned().partition(|s| s.contains('='));
    let explicit_sizes: Vec<(usize, usize, usize)> = gemm_sizes
        .iter()
        .map(|s| parse_size(s))
        .collect::<Result<_>>()?;
    let user = gemmlab::kernel::user::load_all(&args.specs)?;
    let kernels = if user.is_empty() || args.kernels.is_some() {
        kernels::select(args.kernels.as_deref())?
    } else {
        Vec::new()
    };
    if kernels.is_empty() {
        let all: Vec<&gemmlab::kernel::user::UserKernel> = user.iter().collect();
        gemmlab::experiment::refuse_plain_sizes(&all, &gemm_sizes)?;
    }
    if !dim_sizes.is_empty() && user.is_empty() {
        return Err(Error::invalid(format!(
            "--sizes {}: NAME=VALUE sizes are for spec kernels (--spec FILE); a GEMM size is N or MxNxK",
            dim_sizes.join(",")
        )));
    }
    let defines: Vec<(String, i64)> = args
        .defines
        .iter()
        .map(|d| kernels::parse_define(d))
        .collect::<Result<_>>()?;
    let plan = args.timing.plan(args.warmup, args.reps, args.cold);
    let mut opts = CompareOptions {
        kernels,
        user: user.iter().collect(),
        points: gemmlab::kernel::user::parse_dim_points(&dim_sizes)?,
        hints: Hints::from_defines(&defines, args.max_registers),
        defines,
        sizes: Vec::new(),
        call: args.problem.template_for(&[])?,
        plan,
        seed: seed_or_random(args.seed),
        tuned: None,
    };
    // Defines, lengths, launches and per-size constraints, before any device is opened.
    opts.check()?;
    if let Some(done) = args.isolation.supervise(&args.out, args.seed)? {
        return Ok(done);
    }
    let mut sessions = args.device.sessions()?;
    let infos: Vec<_> = sessions
        .iter()
        .map(|s| s.backend.borrow().info().clone())
        .collect();
    if !opts.kernels.is_empty() {
        opts.sizes = sizes_or_default(explicit_sizes, &infos, 512);
        opts.call = args.problem.template_for(&opts.sizes)?;
    }
    let recording = Recording {
        out: &args.out,
        seed: opts.seed,
        plan,
        note: None,
        keep_ptx: args.keep_ptx,
    };
    let mut writer = recording.start(&mut sessions)?;
    if args.tuned {
        opts.tuned = Some(load_tuned(&args.db, &infos)?);
    }
    let tcs = toolchains(&sessions);
    let pb = progress(opts.check()? as u64);
    let result = run_compare(&mut sessions, &opts, &mut writer, &pb, |rows| {
        pb.suspend(|| print_point(rows, &tcs))
    });
    let all = recording.finish(writer, &pb, result)?;
    Ok(super::Outcome::from_measurements(&all))
}

/// The database of bests `compare --tuned` runs from, for the run's device.
fn load_tuned(
    db: &std::path::Path,
    infos: &[gemmlab::DeviceInfo],
) -> Result<gemmlab::results::bests::Database> {
    let name = infos.first().map(|d| d.name.clone()).unwrap_or_default();
    let loaded = gemmlab::results::bests::Database::load(db, &name)?;
    if loaded.entries.is_empty() {
        eprintln!(
            "note: no tuned configurations for {name} in {}: every kernel runs its published defaults",
            db.display()
        );
    }
    Ok(loaded)
}

/// One point's rows as a table: a user kernel's at its dimensions, a GEMM
/// size's with cuBLAS and the ratios.
fn print_point(rows: &[gemmlab::results::Measurement], tcs: &[Toolchain]) {
    let Some(r) = rows.first() else { return };
    if r.dims.is_some() {
        println!(
            "\n{} at {} on {} (GFLOP/s and GB/s from the spec's work and the median time)",
            r.kernel,
            r.size_label(),
            r.device
        );
        print!("{}", gemmlab::results::table::spec_table(rows, tcs));
        return;
    }
    let call = r
        .problem
        .filter(|p| !p.is_plain())
        .map(|p| format!(" [{}]", p.describe()))
        .unwrap_or_default();
    println!(
        "\n{}{call} on {} (GFLOP/s = 2MNK / median kernel time)",
        r.size_label(),
        r.device
    );
    print!("{}", compare_table(rows, tcs));
}
