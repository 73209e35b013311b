//! `gemmlab attribute`: each front end's PTX through each assembler, per kernel,
//! to tell front end, assembler and runtime differences apart (src/attribution.rs).

use std::path::PathBuf;

use clap::Args;

use gemmlab::backend::nvrtc::{offline_device_named, Arch};
use gemmlab::backend::ptxas::Ptxas;
use gemmlab::experiment::attribution::{self, Assembler, Listing, Missing};
use gemmlab::kernel::builtin::{self as kernels, KernelSpec};
use gemmlab::measure::Plan;
use gemmlab::results::{Environment, Measurement, ResultWriter};
use gemmlab::{Error, Nvrtc, Result, Toolchain};

use super::compare::{progress, DeviceArgs};

#[derive(Args, Debug)]
pub struct AttributeArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Compile for this architecture without a device (sm_35 ... sm_90); the
    /// assemblers are the cached ptxas releases that take it. Without it, the
    /// device's: NVIDIA OpenCL compiles there and the CUDA driver's JIT assembles too.
    #[arg(long, value_name = "sm_XX")]
    pub arch: Option<String>,
    /// Kernels (comma-separated ids or numbers); default all.
    #[arg(long)]
    pub kernels: Option<String>,
    /// NVIDIA's toolchains' PTX (NVIDIA OpenCL's and NVRTC's) from a run of `gemmlab
    /// compare --keep-ptx` on an NVIDIA GPU (e.g. results/h200/compare), with the
    /// registers their own assemblers gave there: for a run without that GPU. NVRTC's
    /// PTX then comes from the run instead of the NVRTC here.
    #[arg(long, value_name = "RUN")]
    pub ptx: Option<PathBuf>,
    /// Output directory.
    #[arg(long, default_value = "gemmlab-results/attribution")]
    pub out: PathBuf,
}

pub fn run(args: AttributeArgs) -> Result<super::Outcome> {
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    let specs = kernels::select(args.kernels.as_deref())?;
    match &args.arch {
        Some(arch) => offline(&args, &specs, &Arch::parse(arch)?),
        None => on_device(&args, &specs),
    }
}

fn nvrtc(args: &AttributeArgs) -> std::result::Result<std::sync::Arc<Nvrtc>, String> {
    Nvrtc::choose(args.device.nvrtc.as_deref()).map_err(|e| e.to_string())
}

fn ptxases(arch: &Arch) -> Vec<Ptxas> {
    Ptxas::cached()
        .into_iter()
        .filter(|p| p.archs.contains(&arch.number))
        .collect()
}

fn offline(
    args: &AttributeArgs,
    specs: &[&'static KernelSpec],
    arch: &Arch,
) -> Result<super::Outcome> {
    if args.device.device != "auto" {
        return Err(Error::invalid(format!(
            "--device {} with --arch: --arch compiles without a device; drop one of them",
            args.device.device
        )));
    }
    let mut assemblers: Vec<Assembler> = ptxases(arch).into_iter().map(Assembler::Ptxas).collect();
    if assemblers.is_empty() {
        return Err(Error::invalid(format!(
            "no cached ptxas assembles for {arch}: scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas"
        )));
    }
    let mut kept = Vec::new();
    if let Some(run) = &args.ptx {
        for tc in [Toolchain::Cuda, Toolchain::OpenCl] {
            kept.extend(attribution::kept_listings(run, tc, specs, arch)?);
        }
        // NVRTC's PTX of another architecture than the run's is compiled here instead,
        // with the NVRTC's own build for this one.
        kept.retain(|l| l.front != Toolchain::Cuda || l.own.is_some());
        if kept.is_empty() {
            return Err(Error::invalid(format!(
                "--ptx {}: no PTX of a published kernel there; it reads a run of `gemmlab compare \
                 --keep-ptx` on an NVIDIA GPU (e.g. results/h200/compare)",
                run.display()
            )));
        }
    }
    let cuda_kept = kept.iter().any(|l| l.front == Toolchain::Cuda);
    let pb = progress((specs.len() * 3) as u64);
    let nv = (!cuda_kept).then(|| nvrtc(args));
    let (mut listings, missing) = attribution::compile_listings(arch, nv, specs, &pb);
    pb.finish_and_clear();
    listings.extend(kept);
    let device = offline_device_named("front ends x assemblers".into(), arch);
    finish(
        args,
        &device,
        arch,
        &listings,
        &missing,
        &mut assemblers,
        Vec::new(),
    )
}

#[cfg(feature = "cuda")]
fn on_device(args: &AttributeArgs, specs: &[&'static KernelSpec]) -> Result<super::Outcome> {
    use gemmlab::backend::Backend;
    use gemmlab::{open, resolve, DeviceSpec, Inventory};
    let spec = DeviceSpec::parse(&args.device.device)?;
    let inv = Inventory::discover();
    let devices = resolve(&spec, &inv, &[Toolchain::Cuda, Toolchain::OpenCl])?;
    let cuda = devices
        .iter()
        .find(|d| d.toolchain == Toolchain::Cuda)
        .ok_or_else(|| {
            Error::invalid(
                "attribute on a device needs it under CUDA (the driver's JIT); without one, give --arch",
            )
        })?;
    let (major, minor) = cuda.compute_capability.unwrap_or((0, 0));
    let arch = Arch::from_compute_capability(major, minor);
    let pb = progress((specs.len() * 3) as u64);
    let (mut listings, mut missing) =
        attribution::compile_listings(&arch, Some(nvrtc(args)), specs, &pb);
    pb.finish_and_clear();
    let mut opencl_device = Vec::new();
    if let Some(d) = devices
        .iter()
        .find(|d| d.toolchain == Toolchain::OpenCl && d.is_nvidia())
    {
        let be = open(d)?;
        let label = format!(
            "NVIDIA OpenCL ({}, driver {})",
            d.compiler_version.as_deref().unwrap_or("OpenCL C"),
            d.driver_version.as_deref().unwrap_or("unknown")
        );
        let (l, m) = attribution::opencl_listings(be.compiler().as_ref(), &label, specs);
        listings.extend(l);
        missing.extend(m);
        opencl_device.push(d.clone());
    } else if let Some(run) = &args.ptx {
        listings.extend(attribution::kept_listings(
            run,
            Toolchain::OpenCl,
            specs,
            &arch,
        )?);
    }
    let mut jit = open(cuda)?;
    let mut assemblers: Vec<Assembler> = ptxases(&arch).into_iter().map(Assembler::Ptxas).collect();
    assemblers.push(Assembler::Jit(&mut jit));
    finish(
        args,
        cuda,
        &arch,
        &listings,
        &missing,
        &mut assemblers,
        opencl_device,
    )
}

#[cfg(not(feature = "cuda"))]
fn on_device(_args: &AttributeArgs, _specs: &[&'static KernelSpec]) -> Result<super::Outcome> {
    Err(Error::CudaUnavailable(
        "attribute on a device needs the `cuda` feature (the driver's JIT); give --arch to compile offline".into(),
    ))
}

fn finish(
    args: &AttributeArgs,
    device: &gemmlab::DeviceInfo,
    arch: &Arch,
    listings: &[Listing],
    missing: &[Missing],
    assemblers: &mut [Assembler],
    mut more_devices: Vec<gemmlab::DeviceInfo>,
) -> Result<super::Outcome> {
    for m in missing {
        eprintln!(
            "note: no {} PTX of {}: {}",
            m.front,
            m.kernel,
            first_line(&m.why)
        );
    }
    let labels: Vec<String> = assemblers.iter().map(Assembler::label).collect();
    println!(
        "attribute: {} listings x {} assemblers ({}) for {arch}; results in {}",
        listings.len(),
        assemblers.len(),
        labels.join(", "),
        args.out.display()
    );
    let pb = progress((listings.len() * assemblers.len()) as u64);
    let rows = attribution::rows(device, arch, listings, assemblers, &pb);
    pb.finish_and_clear();
    let mut devices = vec![device.clone()];
    devices.append(&mut more_devices);
    let mut env = Environment::capture(devices, 0, Plan::default());
    env.notes.push(format!(
        "attribute for {arch}: each front end's PTX at the published defaults through {}",
        labels.join(", ")
    ));
    let mut writer = ResultWriter::create(&args.out, env)?;
    for r in &rows {
        writer.push(r.clone())?;
    }
    writer.finish()?;
    print!("{}", matrix(&rows));
    Ok(super::Outcome::from_measurements(&rows))
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// Per kernel, one line per front end: registers (spill stores) per assembler.
fn matrix(rows: &[Measurement]) -> String {
    let (fronts, asm) = attribution::axes(rows);
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    let mut head = vec!["kernel".to_string(), "front end".to_string()];
    head.extend(asm.iter().cloned());
    let mut t = vec![head];
    for k in kernels {
        for f in &fronts {
            let cell = |a: &String| {
                rows.iter()
                    .find(|r| r.kernel == k && r.toolchain == *f && r.label.as_ref() == Some(a))
                    .map_or("-".to_string(), |r| match (&r.resources, &r.status) {
                        (Some(x), _) => match (x.registers, x.spill_stores_bytes) {
                            (Some(g), Some(s)) if s > 0 => format!("{g} ({s} B spill)"),
                            (Some(g), _) => g.to_string(),
                            _ => "?".into(),
                        },
                        (None, s) => s.label().to_string(),
                    })
            };
            if asm.iter().all(|a| cell(a) == "-") {
                continue;
            }
            let mut line = vec![k.to_string(), f.label().to_string()];
            line.extend(asm.iter().map(cell));
            t.push(line);
        }
    }
    gemmlab::results::table::render(
        &t,
        |c| c < 2,
        "registers per front end (rows) and assembler (columns)",
        &[],
    )
}
