//! The gemmlab command line.

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "gemmlab",
    version,
    about = "The same GEMM kernels through OpenCL and CUDA (NVRTC) on one device: speed, registers, spills, occupancy, PTX",
    after_help = "Exit status: 0 when every requested measurement is ok or not applicable for a stated reason \
(a toolchain that cannot run a kernel); 1 when any was invalid, failed to compile or launch, ran out of \
memory or failed its check (after printing and writing everything), or when a command failed; \
2 for usage errors (unknown option, kernel or device, a value out of range, a parameter constraint)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every device of both toolchains, or why a toolchain has none.
    Devices {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the kernels through every toolchain on one device, check them, time them, compare with cuBLAS.
    Compare(cli::compare::CompareArgs),
    /// Each SGEMM's errors against the f64 reference on the same inputs (sizes, K, input
    /// distributions), next to cuBLAS SGEMM and cuBLAS's TF32 mode: where 3xTF32 is
    /// FP32-accurate and where 1xTF32 is not.
    Accuracy(cli::accuracy::AccuracyArgs),
    /// Compile one kernel on every toolchain: flags, registers, spills, occupancy, log and PTX.
    Build(cli::build::BuildArgs),
    /// Write a Markdown report with SVG/PNG charts from result directories (no device needed).
    Report(cli::report::ReportArgs),
    /// Sweep register caps, kernel 11's register tile, compiler hints, or OpenCL PTX through the CUDA JIT.
    Sweep(cli::sweep::SweepArgs),
    /// Tune kernels per toolchain: search the registry's space (parameters, switches, register
    /// caps), compile on every core while the device measures, re-measure the best, keep the bests.
    Tune(Box<cli::tune::TuneArgs>),
    /// The complete BLAS-style GEMM routine (C = alpha op(A) op(B) + beta C, any layout,
    /// transposes, ld, offsets, f32/f64) on one call per size: checked, timed, next to cuBLAS.
    Gemm(Box<cli::routine::GemmArgs>),
    /// The database of bests with its evidence: list, check (stale, shallow, beaten),
    /// retune what check names, prune what no lookup should serve.
    Db(cli::db::DbArgs),
    /// The shared tuning store on a database engine (SQLite, PostgreSQL): its jobs,
    /// outcomes and claims; import from and export to the JSON files of earlier runs.
    Store(cli::store::StoreArgs),
    /// Take the tuning jobs `tune --publish` wrote into a shared store, run them on
    /// this device, repeat: start one per GPU from any scheduler (Slurm, Kubernetes, ssh).
    Worker(cli::worker::WorkerArgs),
    /// Measure where the GEMM routine should switch from the direct to the indirect kernel,
    /// per toolchain and precision, and keep it in the database of bests.
    Crossover(cli::crossover::CrossoverArgs),
    /// Both toolchains' PTX of a kernel: instruction mix side by side, --diff for the differences.
    Ptx(cli::ptx::PtxArgs),
    /// The register-allocation atlas, offline: every kernel at its published defaults for each
    /// architecture under each NVRTC that supports it (and NVIDIA OpenCL's PTX through each
    /// cached ptxas with --opencl-ptx): registers, spills, occupancy. No GPU needed.
    Atlas(cli::atlas::AtlasArgs),
    /// Where toolchains differ: each front end's PTX (NVRTC, clang CUDA, clang OpenCL,
    /// NVIDIA OpenCL) through each assembler (cached ptxas releases, the CUDA driver's
    /// JIT on a device): registers and spills per kernel. --arch needs no GPU.
    Attribute(cli::attribute::AttributeArgs),
    /// Read a kernel spec file (your own kernel) without a device and print what was
    /// understood: sources, dimensions, parameters, constraints, arguments and launches at a size.
    Spec(cli::spec::SpecArgs),
    /// The NVRTC libraries gemmlab can compile with (loader path and wheel cache):
    /// version, path, supported architectures. `scripts/nvrtc/fetch.sh` fills the cache.
    Nvrtc {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Internal: one of the tuner's OpenCL build processes (requests on stdin).
    #[command(name = "build-worker", hide = true)]
    BuildWorker {
        #[arg(long)]
        device: String,
    },
}

fn main() {
    // A closed pipe (`gemmlab nvrtc | head`) ends the process quietly, as it does
    // every command-line tool, instead of a panic in println!.
    // SAFETY: restoring the default disposition of one signal at start, before
    // any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices { json } => cli::devices::run(json).map(|_| None),
        Command::Compare(args) => cli::compare::run(args).map(|o| o.failure()),
        Command::Accuracy(args) => cli::accuracy::run(args).map(|o| o.failure()),
        Command::Build(args) => cli::build::run(args).map(|_| None),
        Command::Report(args) => cli::report::run(args).map(|_| None),
        Command::Sweep(args) => cli::sweep::run(args).map(|o| o.failure()),
        Command::Tune(args) => cli::tune::run(*args).map(|o| o.failure()),
        Command::Gemm(args) => cli::routine::run(*args).map(|_| None),
        Command::Db(args) => cli::db::run(args).map(|o| o.failure()),
        Command::Store(args) => cli::store::run(args).map(|_| None),
        Command::Worker(args) => cli::worker::run(args).map(|_| None),
        Command::Crossover(args) => cli::crossover::run(args).map(|_| None),
        Command::Ptx(args) => cli::ptx::run(args).map(|_| None),
        Command::Atlas(args) => cli::atlas::run(args).map(|o| o.failure()),
        Command::Attribute(args) => cli::attribute::run(args).map(|o| o.failure()),
        Command::Spec(args) => cli::spec::run(args).map(|_| None),
        Command::Nvrtc { json } => cli::nvrtc::run(json).map(|_| None),
        Command::BuildWorker { device } => {
            gemmlab::backend::opencl_pool::serve(&device).map(|_| None)
        }
    };
    let missing = cli::missing_toolchains();
    match result {
        Ok(None) if missing.is_empty() => {}
        Ok(None) => {
            eprintln!("not run: {}", missing.join("; "));
            std::process::exit(1);
        }
        Ok(Some((failure, code))) => {
            eprintln!("{failure}");
            std::process::exit(code);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
