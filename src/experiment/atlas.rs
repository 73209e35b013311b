//! The register-allocation atlas: every tutorial kernel at its published
//! defaults compiled for each architecture by each NVRTC that supports it, and
//! NVIDIA OpenCL's PTX (captured on a GPU by `compare --keep-ptx`) assembled
//! for the same architectures by the ptxas of a CUDA release. Everything is
//! offline: registers, spills, stack, shared memory and occupancy by the
//! architecture's rules; nothing is run, checked or timed.
//!
//! NVIDIA OpenCL needs its device to compile, but its PTX is plain text. To ask
//! "what would an older back end make of OpenCL's front end", the listing's
//! `.version` is lowered to the newest PTX ISA the ptxas accepts (it says which
//! when it refuses) and its `.target` set to the architecture; every row says
//! what was changed. Where ptxas still refuses, the row carries its reason.

use std::path::Path;
use std::sync::Arc;

use crate::backend::nvrtc::{offline_device_named, Arch, Nvrtc};
use crate::backend::{ptxas::parse_ptxas_log, DeviceInfo, Toolchain};
use crate::error::{Error, Result};
use crate::experiment::offline::{run_points, Target};
use crate::experiment::{failed_row, Point};
use crate::gemm::driver::Status;
use crate::kernel::builtin::{Hints, KernelSpec};
use crate::measure::progress::Progress;
use crate::results::ptx_archive::PtxStore;
use crate::results::{load_dir, Measurement};

/// The experiment name of atlas rows.
pub const EXPERIMENT: &str = "atlas";

/// The architectures of the atlas by default: one per generation step since
/// Kepler where registers, shared memory or scheduling changed.
pub const ARCHS: &[&str] = &[
    "sm_35", "sm_37", "sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86",
    "sm_89", "sm_90", "sm_100", "sm_120",
];

/// A compiler and architecture the atlas could not pair, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub compiler: String,
    pub arch: String,
    pub why: String,
}

/// Every kernel point compiled for every (compiler, architecture) target: the
/// rows of each target that could be made, and why the others could not.
fn target_rows(
    targets: impl Iterator<Item = (String, Arch, Result<Target>)>,
    points: &[Point],
    jobs: usize,
    progress: &Progress,
) -> (Vec<Measurement>, Vec<Skipped>) {
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let wrapped: Vec<std::result::Result<Point, (String, Status)>> =
        points.iter().cloned().map(Ok).collect();
    for (compiler, arch, target) in targets {
        match target {
            Ok(t) => rows.extend(run_points(&t, EXPERIMENT, &wrapped, jobs, None, progress)),
            Err(e) => skipped.push(Skipped {
                compiler,
                arch: arch.to_string(),
                why: first_line(&e.to_string()),
            }),
        }
    }
    (rows, skipped)
}

/// Every kernel point compiled by every NVRTC for every architecture it supports.
pub fn cuda_rows(
    nvrtcs: &[Arc<Nvrtc>],
    archs: &[Arch],
    points: &[Point],
    jobs: usize,
    progress: &Progress,
) -> (Vec<Measurement>, Vec<Skipped>) {
    let targets = nvrtcs.iter().flat_map(|n| {
        archs
            .iter()
            .map(move |a| (n.label(), a.clone(), Target::with(Arc::clone(n), a)))
    });
    target_rows(targets, points, jobs, progress)
}

/// Every kernel point compiled by both clang toolchains for every architecture a
/// cached ptxas takes (the newest such ptxas assembles): the same sources through
/// LLVM's NVPTX back end instead of NVVM.
pub fn clang_rows(
    archs: &[Arch],
    points: &[Point],
    jobs: usize,
    progress: &Progress,
) -> (Vec<Measurement>, Vec<Skipped>) {
    let targets = [Toolchain::ClangCuda, Toolchain::ClangOpenCl]
        .into_iter()
        .flat_map(|tc| {
            archs.iter().map(move |a| {
                let t = Target::for_toolchain(tc, None, None, &a.name());
                (tc.label().to_string(), a.clone(), t)
            })
        });
    target_rows(targets, points, jobs, progress)
}

/// How many compilations `cuda_rows` will make (for a progress bar).
pub fn cuda_count(nvrtcs: &[Arc<Nvrtc>], archs: &[Arch], points: usize) -> usize {
    nvrtcs
        .iter()
        .map(|n| archs.iter().filter(|a| n.check_arch(a).is_ok()).count() * points)
        .sum()
}

/// One kernel's PTX as a toolchain wrote it on a GPU.
#[derive(Debug, Clone)]
pub struct OpenClListing {
    pub spec: &'static KernelSpec,
    pub ptx: String,
    /// Where it came from: run directory, listing and driver.
    pub origin: String,
    /// What the toolchain's own assembler made of it on that GPU.
    pub resources: Option<crate::backend::KernelResources>,
    /// The toolchain's compiler there ("NVRTC 13.0", "OpenCL C 1.2").
    pub compiler: Option<String>,
    /// The GPU's compute capability, where the run recorded it.
    pub compute_capability: Option<(u32, u32)>,
}

/// The OpenCL PTX of each kernel at its published defaults in a run made with
/// `--keep-ptx` on an NVIDIA GPU (one listing per kernel, the first row's).
pub fn opencl_listings(run: &Path, kernels: &[&'static KernelSpec]) -> Result<Vec<OpenClListing>> {
    let out = kept_listings(run, Toolchain::OpenCl, kernels)?;
    if out.is_empty() {
        return Err(Error::invalid(format!(
            "--opencl-ptx {}: no OpenCL PTX of a published kernel there; it reads a run of \
             `gemmlab compare --keep-ptx` on an NVIDIA GPU (e.g. results/h200/compare)",
            run.display()
        )));
    }
    Ok(out)
}

/// `toolchain`'s PTX of each kernel at its published defaults in a run made
/// with `--keep-ptx` on an NVIDIA GPU (the first such row's), with what its own
/// assembler made of it there.
pub fn kept_listings(
    run: &Path,
    toolchain: Toolchain,
    kernels: &[&'static KernelSpec],
) -> Result<Vec<OpenClListing>> {
    let (env, rows) = load_dir(run)?;
    let store = PtxStore::open(run)?;
    let device = env
        .devices
        .iter()
        .find(|d| d.toolchain == toolchain && d.is_nvidia());
    let driver = device
        .and_then(|d| d.driver_version.clone())
        .unwrap_or_else(|| "driver unknown".into());
    let mut out = Vec::new();
    for spec in kernels {
        let found = rows.iter().find_map(|m| {
            let published = m.toolchain == toolchain
                && m.kernel == spec.id
                && spec.is_published(&m.config)
                && m.hints == Hints::default();
            let file = m.ptx_file.as_deref().filter(|_| published)?;
            store
                .get(file)
                .map(|ptx| (file.to_string(), ptx.to_string(), m))
        });
        if let Some((file, ptx, m)) = found {
            out.push(OpenClListing {
                spec,
                ptx,
                origin: format!(
                    "{} {file} ({}, driver {driver})",
                    run.display(),
                    toolchain.label()
                ),
                resources: m.resources.clone(),
                compiler: m
                    .compiler
                    .clone()
                    .or_else(|| device.and_then(|d| d.compiler_version.clone())),
                compute_capability: device.and_then(|d| d.compute_capability),
            });
        }
    }
    Ok(out)
}

pub use crate::backend::ptxas::Ptxas;

/// "NVIDIA OpenCL PTX + ptxas 11.8": the compiler an atlas OpenCL row names.
pub fn opencl_label(ptxas: &Ptxas) -> String {
    format!("NVIDIA OpenCL PTX + {}", ptxas.label())
}

/// The device record of an architecture for OpenCL rows assembled by `ptxas`.
fn opencl_device(ptxas: &Ptxas, arch: &Arch) -> DeviceInfo {
    let mut d = offline_device_named(opencl_label(ptxas), arch);
    d.toolchain = Toolchain::OpenCl;
    d
}

/// Every OpenCL listing assembled by every ptxas for every architecture of
/// `archs` it supports: one row each; a listing ptxas refuses is a row with
/// the reason (`Status::CompileError`).
pub fn opencl_rows(
    listings: &[OpenClListing],
    ptxases: &[Ptxas],
    archs: &[Arch],
    progress: &Progress,
) -> Vec<Measurement> {
    let jobs: Vec<(&Ptxas, &Arch, &OpenClListing)> = ptxases
        .iter()
        .flat_map(|p| {
            archs
                .iter()
                .filter(|a| p.archs.contains(&a.number) && a.suffix.is_empty())
                .flat_map(move |a| listings.iter().map(move |l| (p, a, l)))
        })
        .collect();
    crate::gemm::parallel::map_range(jobs.len(), |i| {
        let (ptxas, arch, listing) = jobs[i];
        progress.set_message(format!(
            "{} for {} by ptxas {}",
            listing.spec.id, arch, ptxas.release
        ));
        let row = opencl_row(ptxas, arch, listing);
        progress.inc(1);
        Some(row)
    })
    .into_iter()
    .flatten()
    .collect()
}

/// How many assemblies `opencl_rows` will make.
pub fn opencl_count(listings: usize, ptxases: &[Ptxas], archs: &[Arch]) -> usize {
    ptxases
        .iter()
        .map(|p| {
            archs
                .iter()
                .filter(|a| p.archs.contains(&a.number) && a.suffix.is_empty())
                .count()
        })
        .sum::<usize>()
        * listings
}

fn opencl_row(ptxas: &Ptxas, arch: &Arch, listing: &OpenClListing) -> Measurement {
    let device = opencl_device(ptxas, arch);
    let spec = listing.spec;
    let note = format!(
        "no device: NVIDIA OpenCL's PTX assembled offline for {arch} by ptxas {}; not run, checked or timed",
        ptxas.release
    );
    let mut row = failed_row(
        EXPERIMENT,
        &device.name,
        &device.id,
        Toolchain::OpenCl,
        spec.id,
        Status::Unavailable(note.clone()),
        (0, 0, 0),
    );
    row.config = spec.config(&[]).unwrap_or_default();
    row.compiler = Some(opencl_label(ptxas));
    row.build_notes.push(format!("PTX from {}", listing.origin));
    match ptxas.assemble(&listing.ptx, arch, None) {
        Ok(a) => {
            row.build_notes.extend(a.notes);
            row.build_notes.push(note);
            row.resources = parse_ptxas_log(&a.log)
                .into_iter()
                .find(|r| r.name == spec.entry);
            let threads = spec.threads_per_group(&row.config);
            row.occupancy = row
                .resources
                .as_ref()
                .and_then(|r| crate::occupancy::for_kernel(&device, r, threads));
            row.ptx_mix = Some(crate::backend::ptx::instruction_mix(&listing.ptx));
        }
        Err(why) => row.status = Status::CompileError(refusal(&why)),
    }
    row
}

/// ptxas's refusal in one line: its header and the first error or fatal line of its log.
fn refusal(why: &str) -> String {
    let mut lines = why.lines();
    let head = lines.next().unwrap_or("").trim_end_matches(':');
    let log: Vec<&str> = lines.collect();
    let line = log
        .iter()
        .find(|l| l.contains("error") || l.contains("fatal"))
        .or(log.first())
        .map_or("no output", |l| l.trim());
    format!("{head}: {line}")
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_architectures_parse_and_are_in_order() {
        let nums: Vec<u32> = ARCHS
            .iter()
            .map(|a| Arch::parse(a).unwrap().number)
            .collect();
        let mut sorted = nums.clone();
        sorted.sort_unstable();
        assert_eq!(nums, sorted);
        assert_eq!(nums.len(), 14);
    }
}
