//! `gemmlab ptx`: both toolchains' PTX of one kernel, its instruction mix side by side, and a diff.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;

use gemmlab::backend::ptx::{diff, instruction_mix, mix_table, PtxMix};
use gemmlab::kernel::builtin::Hints;
use gemmlab::results::load_dir;
use gemmlab::results::ptx_archive::{self, PtxStore};
use gemmlab::{Backend, Error, Result};

use super::build::KernelArgs;
use super::compare::DeviceArgs;

#[derive(Args, Debug)]
pub struct PtxArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub offline: super::build::OfflineArgs,
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
    /// Read the listings a run kept (`--keep-ptx`: RUN/ptx.tar.gz or RUN/ptx/)
    /// instead of compiling; no device needed. The kernel's measurements with the
    /// given switches (published by default), or with `--label`, are shown.
    #[arg(long, value_name = "RUN")]
    pub from: Option<PathBuf>,
    /// With --from: the measurement label to show, e.g. "UNROLL_K=1" in a hints sweep.
    #[arg(long, requires = "from")]
    pub label: Option<String>,
}

pub fn run(args: PtxArgs) -> Result<()> {
    if let Some(dir) = &args.out {
        gemmlab::error::check_out_dir(dir, "--out")?;
    }
    let (spec, config, hints) = args.kernel.resolve()?;
    if let Some(run) = &args.from {
        let listings = kept_listings(run, spec.id(), &hints, args.label.as_deref())?;
        return show(
            &args,
            &format!("{} from {}", spec.id(), run.display()),
            &listings,
        );
    }
    if let Some(target) = args.offline.target(&args.device)? {
        let build = gemmlab::experiment::offline::compile_kernel(&target, spec, &config, &hints)?;
        let ptx = build.report.ptx.ok_or_else(|| {
            Error::invalid(format!(
                "{} gave no PTX for {}",
                target.compiler_label(),
                target.arch()
            ))
        })?;
        let name = format!("{}-{}-{}", spec.id(), target.toolchain(), target.arch());
        return show(
            &args,
            &format!(
                "{} {} for {}",
                spec.id(),
                config.describe(),
                target.describe()
            ),
            &[(name, ptx)],
        );
    }
    let sessions = args.device.sessions()?;
    let mut listings: Vec<(String, String)> = Vec::new();
    for s in &sessions {
        let mut b = s.backend.borrow_mut();
        let info = b.info().clone();
        if let Some(why) = spec.unavailable(&info, &hints) {
            eprintln!("{}: {} unavailable: {why}", info.toolchain, spec.id());
            continue;
        }
        let Some(source) = spec.source(info.toolchain) else {
            continue;
        };
        let (program, report) = b.compile(
            spec.entry(),
            &source,
            &spec.compile_options(&config, &hints, info.toolchain),
        )?;
        b.release_program(program);
        match report.ptx {
            Some(ptx) => listings.push((format!("{}-{}", spec.id(), info.toolchain), ptx)),
            None => eprintln!("{} on {} gives no PTX", info.toolchain, info.name),
        }
    }
    if listings.is_empty() {
        // Not a usage error (exit 1): the command was right, this machine lacks the toolchain.
        return Err(Error::ToolchainUnavailable {
            toolchain: "PTX".into(),
            reason: "no toolchain here gave PTX (PTX comes from NVRTC and from NVIDIA's OpenCL); without an NVIDIA GPU, \
                     `--arch sm_90` compiles the CUDA source through NVRTC offline, and `--from RUN` reads a run's kept listings"
                .into(),
        });
    }
    show(
        &args,
        &format!("{} {}", spec.id(), config.describe()),
        &listings,
    )
}

/// One listing per toolchain (and variant) from a run's kept PTX.
fn kept_listings(
    run: &Path,
    kernel: &str,
    hints: &Hints,
    label: Option<&str>,
) -> Result<Vec<(String, String)>> {
    let (_, rows) = load_dir(run)?;
    let store = PtxStore::open(run)?;
    if store.is_empty() {
        return Err(Error::invalid(format!(
            "{} kept no PTX (run it with --keep-ptx)",
            run.display()
        )));
    }
    let mut listings: Vec<(String, String)> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.kernel == kernel) {
        let Some(file) = &r.ptx_file else { continue };
        if let Some(l) = &r.label {
            if !labels.contains(l) {
                labels.push(l.clone());
            }
        }
        let wanted = match label {
            Some(l) => r.label.as_deref() == Some(l),
            None => r.hints == *hints,
        };
        let name = format!(
            "{}-{}{}",
            r.kernel,
            r.toolchain,
            r.variant
                .as_deref()
                .map_or(String::new(), |v| format!("-{v}"))
        );
        if !wanted || listings.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let text = store.get(file).ok_or_else(|| Error::Data {
            path: run.join(ptx_archive::ARCHIVE),
            message: format!("{file}, named by a {kernel} measurement, is not in the archive"),
        })?;
        listings.push((name, text.to_string()));
    }
    if listings.is_empty() {
        return Err(Error::invalid(format!(
            "{} holds no PTX of {kernel} with {}{}",
            run.display(),
            label.map_or_else(|| hints.describe(true), |l| format!("label '{l}'")),
            if labels.is_empty() {
                String::new()
            } else {
                format!(" (labels there: {})", labels.join(", "))
            }
        )));
    }
    Ok(listings)
}

/// The listings' instruction mix side by side, optionally saved and diffed.
fn show(args: &PtxArgs, title: &str, listings: &[(String, String)]) -> Result<()> {
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for (name, ptx) in listings {
            let path = dir.join(format!("{name}.ptx"));
            fs::write(&path, ptx).map_err(|e| Error::io(&path, e))?;
        }
    }
    println!(
        "{title} (lines of PTX: {})",
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
        match listings {
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
