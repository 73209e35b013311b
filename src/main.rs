//! The gemmlab command line.

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "gemmlab",
    version,
    about = "The same GEMM kernels through OpenCL and CUDA (NVRTC) on one device: speed, registers, spills, occupancy, PTX"
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
    /// Compile one kernel on every toolchain: flags, registers, spills, occupancy, log and PTX.
    Build(cli::build::BuildArgs),
    /// Write a Markdown report with SVG/PNG charts from result directories (no device needed).
    Report(cli::report::ReportArgs),
    /// Sweep register caps, kernel 11's register tile, compiler hints, or OpenCL PTX through the CUDA JIT.
    Sweep(cli::sweep::SweepArgs),
    /// Both toolchains' PTX of a kernel: instruction mix side by side, --diff for the differences.
    Ptx(cli::ptx::PtxArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices { json } => cli::devices::run(json),
        Command::Compare(args) => cli::compare::run(args),
        Command::Build(args) => cli::build::run(args),
        Command::Report(args) => cli::report::run(args),
        Command::Sweep(args) => cli::sweep::run(args),
        Command::Ptx(args) => cli::ptx::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
