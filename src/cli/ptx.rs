//! `gemmlab ptx`: both toolchains' PTX of one kernel, its instruction mix side by side, and a diff.

use std::fs;
use std::path::PathBuf;

use clap::Args;

use gemmlab::ptx::{diff, instruction_mix, mix_table, PtxMix};
use gemmlab::{Backend, Error, Result};

use super::build::KernelArgs;
use super::compare::DeviceArgs;

#[derive(Args, Debug)]
pub struct PtxArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Print the differences of the two listings (register and label numbering ignored).
    #[arg(long)]
    pub diff: bool,
    /// Lines of context around each difference.
    #[arg(long, default_value_t = 2)]
    pub context: usize,
    /// Write KERNEL-TOOLCHAIN.ptx files here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: PtxArgs) -> Result<()> {
    let (spec, config, hints) = args.kernel.resolve()?;
    let sessions = args.device.sessions()?;
    let mut listings: Vec<(String, String)> = Vec::new();
    for s in &sessions {
        let mut b = s.backend.borrow_mut();
        let info = b.info().clone();
        if let Some(why) = spec.unavailable(&info) {
            eprintln!("{}: {} unavailable: {why}", info.toolchain, spec.id);
            continue;
        }
        let (program, report) = b.compile(
            spec.entry,
            &spec.source(info.toolchain),
            &spec.compile_options(&config, &hints),
        )?;
        b.release_program(program);
        match report.ptx {
            Some(ptx) => listings.push((format!("{}-{}", spec.id, info.toolchain), ptx)),
            None => eprintln!("{} on {} gives no PTX", info.toolchain, info.name),
        }
    }
    if listings.is_empty() {
        return Err(Error::invalid(
            "no toolchain gave PTX (PTX comes from NVRTC and from NVIDIA's OpenCL)",
        ));
    }
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for (name, ptx) in &listings {
            let path = dir.join(format!("{name}.ptx"));
            fs::write(&path, ptx).map_err(|e| Error::io(&path, e))?;
        }
    }
    println!(
        "{} {} (lines of PTX: {})",
        spec.id,
        config.describe(),
        listings
            .iter()
            .map(|(n, p)| format!("{n} {}", p.lines().count()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mixes: Vec<PtxMix> = listings.iter().map(|(_, p)| instruction_mix(p)).collect();
    let names: Vec<&str> = listings.iter().map(|(n, _)| n.as_str()).collect();
    print!("{}", mix_table(&names, &mixes.iter().collect::<Vec<_>>()));
    if args.diff {
        match listings.as_slice() {
            [(an, a), (bn, b)] => print!("\n{}", diff(an, a, bn, b, args.context)),
            _ => {
                return Err(Error::invalid(
                    "--diff needs PTX from two toolchains (CUDA and NVIDIA OpenCL on one GPU)",
                ))
            }
        }
    }
    Ok(())
}
