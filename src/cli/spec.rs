//! `gemmlab spec --check FILE`: reads a kernel spec without a device and prints
//! what gemmlab understood of it.

use std::path::PathBuf;

use clap::Args;

use gemmlab::experiment::user::describe;
use gemmlab::kernel::user::{parse_dim_points, UserKernel};
use gemmlab::Result;

#[derive(Args, Debug)]
pub struct SpecArgs {
    /// Validate the spec file(s) and print what was understood (no device is opened).
    #[arg(long = "check", value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Sizes to evaluate lengths and launches at: NAME=VALUE,... (default: the spec's dims).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Parameter values to evaluate at, NAME=VALUE (default: the spec's defaults).
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
}

pub fn run(args: SpecArgs) -> Result<()> {
    let points = parse_dim_points(&args.sizes)?;
    let defines: Vec<(String, i64)> = args
        .defines
        .iter()
        .map(|d| gemmlab::kernel::builtin::parse_define(d))
        .collect::<Result<_>>()?;
    let kernels = gemmlab::kernel::user::load_all(&args.files)?;
    let all: Vec<&UserKernel> = kernels.iter().collect();
    // The defines and sizes as compare and tune judge them: same messages, same exits.
    gemmlab::experiment::check_defines_of(&[], &all, &defines)?;
    for k in &kernels {
        print!("{}", describe(k, &all, &points, &defines)?);
    }
    Ok(())
}
