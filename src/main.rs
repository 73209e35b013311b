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
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices { json } => cli::devices::run(json),
        Command::Compare(args) => cli::compare::run(args),
        Command::Build(args) => cli::build::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
