//! `gemmlab build`: compile one kernel on every toolchain and show what each compiler did.

use std::fs;
use std::path::PathBuf;

use clap::Args;

use gemmlab::kernels::{self, Config, Hints, KernelSpec};
use gemmlab::{occupancy, Backend, Error, Result};

use super::compare::DeviceArgs;

#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Also write the build log, PTX and report per toolchain into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One kernel configuration on the command line (`build`, `ptx`).
#[derive(Args, Debug)]
pub struct KernelArgs {
    /// Kernel id or number.
    #[arg(long)]
    pub kernel: String,
    /// Kernel parameter or hint switch, NAME=VALUE; repeatable.
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Register cap for both compilers.
    #[arg(long, value_parser = gemmlab::error::parse_register_cap)]
    pub max_registers: Option<u32>,
}

impl KernelArgs {
    /// The kernel, its validated configuration and the hints.
    pub fn resolve(&self) -> Result<(&'static KernelSpec, Config, Hints)> {
        let spec = kernels::find(&self.kernel)?;
        let defines: Vec<(String, i64)> = self
            .defines
            .iter()
            .map(|d| kernels::parse_define(d))
            .collect::<Result<_>>()?;
        let config = spec.config(&defines)?;
        let hints = Hints::from_defines(&defines, self.max_registers);
        if let Some(name) = hints.switches.keys().find(|n| !spec.has_switch(n)) {
            let own: Vec<&str> = spec.switches.iter().map(|s| s.name()).collect();
            return Err(Error::invalid(format!(
                "--define {name}: {} has no switch {name} (its switches: {})",
                spec.id,
                own.join(", ")
            )));
        }
        Ok((spec, config, spec.own_hints(&hints)))
    }
}

pub fn run(args: BuildArgs) -> Result<()> {
    if let Some(dir) = &args.out {
        gemmlab::error::check_out_dir(dir, "--out")?;
    }
    let (spec, config, hints) = args.kernel.resolve()?;
    let sessions = args.device.sessions()?;
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mut failed = None;
    for s in sessions {
        let mut b = s.backend.borrow_mut();
        let info = b.info().clone();
        println!(
            "== {} {} on {} [{}]",
            spec.id,
            config.describe(),
            info.name,
            info.toolchain
        );
        if let Some(why) = spec.unavailable(&info, &hints) {
            println!("   unavailable: {why}");
            continue;
        }
        let options = spec.compile_options(&config, &hints, info.toolchain);
        let stem = format!(
            "{}-{}{}",
            spec.id,
            info.toolchain,
            args.kernel
                .max_registers
                .map_or(String::new(), |r| format!("-cap{r}"))
        );
        match b.compile(spec.entry, &spec.source(info.toolchain), &options) {
            Ok((program, report)) => {
                println!("   flags: {}", report.flags.join(" "));
                println!("   compile time: {:.1} ms", report.compile_ms);
                for k in &report.kernels {
                    let occ = occupancy::for_kernel(&info, k, spec.threads_per_group(&config));
                    let o = |v: Option<u64>| v.map_or("unknown".to_string(), |v| format!("{v} B"));
                    println!(
                        "   {}: registers {}, spill stores {}, spill loads {}, stack {}, shared {}, private {}, max threads {}, occupancy {}",
                        k.name,
                        k.registers.map_or("unknown".into(), |v| v.to_string()),
                        o(k.spill_stores_bytes),
                        o(k.spill_loads_bytes),
                        o(k.stack_frame_bytes),
                        o(k.shared_bytes),
                        o(k.private_bytes),
                        k.max_threads_per_block.map_or("unknown".into(), |v| v.to_string()),
                        occ.map_or("unknown".into(), |v| format!("{:.0}%", v * 100.0))
                    );
                }
                for n in &report.notes {
                    println!("   note: {n}");
                }
                if let Some(dir) = &args.out {
                    let w = |name: String, text: &str| {
                        fs::write(dir.join(&name), text).map_err(|e| Error::io(dir.join(name), e))
                    };
                    w(format!("{stem}.log"), &report.log)?;
                    if let Some(ptx) = &report.ptx {
                        w(format!("{stem}.ptx"), ptx)?;
                    }
                    w(
                        format!("{stem}.json"),
                        &serde_json::to_string_pretty(&report).unwrap_or_default(),
                    )?;
                }
                b.release_program(program);
            }
            Err(e) => {
                println!("   {e}");
                failed = Some(e);
            }
        }
    }
    failed.map_or(Ok(()), Err)
}
