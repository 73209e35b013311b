//! `gemmlab build`: compile one kernel on every toolchain and show what each compiler did.

use std::fs;
use std::path::PathBuf;

use clap::Args;

use gemmlab::experiment::offline::{self, Target};
use gemmlab::kernel::builtin::{self as kernels, Config, Hints};
use gemmlab::kernel::Kernel;
use gemmlab::{occupancy, Backend, BuildReport, Error, KernelResources, Result};

use super::compare::DeviceArgs;

#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub offline: OfflineArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Also write the build log, PTX and report per toolchain into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Compiling without a device (`build`, `sweep`, `ptx`, `tune`).
#[derive(Args, Debug, Clone)]
pub struct OfflineArgs {
    /// Compile for this architecture (sm_35, sm_37, sm_50 ... sm_90, sm_120) without a
    /// GPU or a driver: with NVRTC (--nvrtc's), or with clang and a cached ptxas for
    /// --backends clang-cuda or clang-opencl (GEMMLAB_ASSEMBLER picks the ptxas
    /// release). Registers, spills and occupancy for that architecture; nothing is
    /// run or timed. `tune --arch` compiles the points a random or exhaustive
    /// search would try, in its order (with GEMMLAB_CLANG_PTX, clang's PTX of them
    /// is kept for the same search on a machine without clang).
    #[arg(long, value_name = "sm_XX")]
    pub arch: Option<String>,
}

impl OfflineArgs {
    /// The offline target, when --arch is given; refuses the device options it
    /// makes meaningless, toolchains that need a device, and more than one toolchain.
    pub fn target(&self, device: &DeviceArgs) -> Result<Option<Target>> {
        let Some(arch) = &self.arch else {
            return Ok(None);
        };
        if device.device != "auto" {
            return Err(offline::refuse(
                &format!("--device {}", device.device),
                "--arch compiles without a device; drop one of them",
            ));
        }
        let toolchain = match device.backends.as_slice() {
            [] => gemmlab::Toolchain::Cuda,
            [b] => gemmlab::Toolchain::parse(b)
                .ok_or_else(|| offline::refuse(&format!("--backends {b}"), "unknown toolchain"))?,
            more => {
                return Err(offline::refuse(
                    &format!("--backends {}", more.join(",")),
                    "one toolchain per offline run (cuda, clang-cuda or clang-opencl)",
                ))
            }
        };
        let assembler = gemmlab::backend::select::assembler();
        Target::for_toolchain(
            toolchain,
            device.nvrtc.as_deref(),
            assembler.as_deref(),
            arch,
        )
        .map(Some)
    }
}

/// One line of resources, as `build` prints them for every toolchain.
pub fn resource_line(k: &KernelResources, occupancy: &str) -> String {
    let o = |v: Option<u64>| v.map_or("unknown".to_string(), |v| format!("{v} B"));
    format!(
        "{}: registers {}, spill stores {}, spill loads {}, stack {}, shared {}, private {}, max threads {}, occupancy {occupancy}",
        k.name,
        k.registers.map_or("unknown".into(), |v| v.to_string()),
        o(k.spill_stores_bytes),
        o(k.spill_loads_bytes),
        o(k.stack_frame_bytes),
        o(k.shared_bytes),
        o(k.private_bytes),
        k.max_threads_per_block
            .map_or("unknown".into(), |v| v.to_string()),
    )
}

/// Writes a build's log, PTX and report as STEM.log, STEM.ptx, STEM.json.
fn save(dir: &std::path::Path, stem: &str, report: &BuildReport) -> Result<()> {
    let w = |name: String, text: &str| {
        fs::write(dir.join(&name), text).map_err(|e| Error::io(dir.join(name), e))
    };
    w(format!("{stem}.log"), &report.log)?;
    if let Some(ptx) = &report.ptx {
        w(format!("{stem}.ptx"), ptx)?;
    }
    let json = serde_json::to_string_pretty(report).map_err(|e| Error::Data {
        path: dir.join(format!("{stem}.json")),
        message: e.to_string(),
    })?;
    w(format!("{stem}.json"), &json)
}

/// One kernel configuration on the command line (`build`, `ptx`).
#[derive(Args, Debug)]
pub struct KernelArgs {
    /// Kernel id or number.
    #[arg(long, required_unless_present = "spec", conflicts_with = "spec")]
    pub kernel: Option<String>,
    /// A kernel spec file (your own kernel) instead of a built-in kernel.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// Kernel parameter or hint switch, NAME=VALUE; repeatable.
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Register cap for both compilers.
    #[arg(long, value_parser = gemmlab::error::parse_register_cap)]
    pub max_registers: Option<u32>,
}

impl KernelArgs {
    /// The kernel, its validated configuration and the hints.
    pub fn resolve(&self) -> Result<(Kernel, Config, Hints)> {
        let spec: Kernel = match (&self.kernel, &self.spec) {
            (_, Some(path)) => Kernel::User(
                gemmlab::kernel::user::load_static(std::slice::from_ref(path))?.remove(0),
            ),
            (Some(name), None) => Kernel::Builtin(kernels::find(name)?),
            (None, None) => return Err(Error::invalid("give --kernel ID or --spec FILE")),
        };
        let defines: Vec<(String, i64)> = self
            .defines
            .iter()
            .map(|d| kernels::parse_define(d))
            .collect::<Result<_>>()?;
        // A built-in kernel's config skips its switches; a spec has none, so every
        // define must be one of its parameters.
        let config = spec.config(&defines)?;
        let hints = match spec {
            Kernel::User(_) => Hints::from_defines(&[], self.max_registers),
            Kernel::Builtin(_) => Hints::from_defines(&defines, self.max_registers),
        };
        if let Some(name) = hints.switches.keys().find(|n| !spec.has_switch(n)) {
            let own = spec.switch_names();
            return Err(Error::invalid(format!(
                "--define {name}: {} has no switch {name} (its switches: {})",
                spec.id(),
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
    let cap = args
        .kernel
        .max_registers
        .map_or(String::new(), |r| format!("-cap{r}"));
    if let Some(target) = args.offline.target(&args.device)? {
        return run_offline(&args, &target, spec, &config, &hints, &cap);
    }
    let sessions = args.device.sessions()?;
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mut failed = None;
    for s in sessions {
        let mut b = s.backend.borrow_mut();
        let info = b.info().clone();
        println!(
            "== {} {} on {} [{}{}]",
            spec.id(),
            config.describe(),
            info.name,
            info.toolchain,
            info.compiler_version
                .as_deref()
                .map_or(String::new(), |c| format!(", {c}"))
        );
        if let Some(why) = spec.unavailable(&info, &hints) {
            println!("   unavailable: {why}");
            continue;
        }
        if let Some(k) = spec.builtin() {
            k.validate_with_switches(&config, &hints, info.toolchain)?;
        }
        let options = spec.compile_options(&config, &hints, info.toolchain);
        let stem = format!("{}-{}{cap}", spec.id(), info.toolchain);
        let Some(source) = spec.source(info.toolchain) else {
            continue;
        };
        match b.compile(spec.entry(), &source, &options) {
            Ok((program, mut report)) => {
                if let Some(k) = spec.builtin() {
                    k.count_launch_local(&mut report, &config, info.toolchain.language());
                }
                println!("   flags: {}", report.flags.join(" "));
                println!("   compile time: {:.1} ms", report.compile_ms);
                for k in &report.kernels {
                    let occ =
                        occupancy::for_kernel_detail(&info, k, spec.threads_per_group(&config));
                    let occ = occ.map_or("unknown".into(), |o| o.describe());
                    println!("   {}", resource_line(k, &occ));
                }
                for n in &report.notes {
                    println!("   note: {n}");
                }
                if let Some(dir) = &args.out {
                    save(dir, &stem, &report)?;
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

/// `build --arch`: NVRTC alone, for the architecture asked.
fn run_offline(
    args: &BuildArgs,
    target: &Target,
    spec: Kernel,
    config: &Config,
    hints: &Hints,
    cap: &str,
) -> Result<()> {
    println!(
        "== {} {} for {} [{}, offline]",
        spec.id(),
        config.describe(),
        target.describe(),
        target.toolchain()
    );
    // A built-in kernel this architecture cannot take is not applicable, with the
    // reason: not a failed build (a spec without a source in the language still fails).
    if let Some(why) = spec
        .builtin()
        .and_then(|k| k.unavailable_at(config, target.device(), hints))
    {
        println!("   not applicable for {}: {why}", target.arch().name());
        return Ok(());
    }
    if let Some(k) = spec.builtin() {
        k.validate_with_switches(config, hints, target.toolchain())?;
    }
    let build = offline::compile_kernel(target, spec, config, hints)?;
    let report = &build.report;
    println!("   flags: {}", report.flags.join(" "));
    println!(
        "   compile time: {:.1} ms, CUBIN {} bytes",
        report.compile_ms, build.cubin_bytes
    );
    for k in &report.kernels {
        let occ = occupancy::for_kernel_detail(target.device(), k, build.threads);
        let occ = occ.map_or("unknown".into(), |o| o.describe());
        println!("   {}", resource_line(k, &occ));
    }
    for n in &report.notes {
        println!("   note: {n}");
    }
    println!("   note: {}", target.note());
    if spec.has_source_in(gemmlab::backend::Language::OpenClC) {
        println!("   opencl: not compiled (NVIDIA's OpenCL compiler needs its device)");
    }
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let stem = format!(
            "{}-{}-{}{cap}",
            spec.id(),
            target.toolchain(),
            target.arch()
        );
        save(dir, &stem, report)?;
        println!("   wrote {}/{stem}.{{log,ptx,json}}", dir.display());
    }
    Ok(())
}
