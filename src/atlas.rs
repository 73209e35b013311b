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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use crate::backend::nvrtc::{cache, offline_device_named, Arch, Nvrtc};
use crate::backend::{ptxas::parse_ptxas_log, DeviceInfo, Toolchain};
use crate::error::{Error, Result};
use crate::experiment::{failed_row, Point};
use crate::gemm::driver::Status;
use crate::kernels::{Hints, KernelSpec};
use crate::offline::{run_points, Target};
use crate::progress::Progress;
use crate::ptx_archive::PtxStore;
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

/// Every kernel point compiled by every NVRTC for every architecture it supports.
pub fn cuda_rows(
    nvrtcs: &[Arc<Nvrtc>],
    archs: &[Arch],
    points: &[Point],
    jobs: usize,
    progress: &Progress,
) -> (Vec<Measurement>, Vec<Skipped>) {
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let wrapped: Vec<std::result::Result<Point, (String, Status)>> =
        points.iter().cloned().map(Ok).collect();
    for nvrtc in nvrtcs {
        for arch in archs {
            match Target::with(Arc::clone(nvrtc), arch) {
                Ok(target) => rows.extend(run_points(
                    &target, EXPERIMENT, &wrapped, jobs, None, progress,
                )),
                Err(e) => skipped.push(Skipped {
                    compiler: nvrtc.label(),
                    arch: arch.to_string(),
                    why: first_line(&e.to_string()),
                }),
            }
        }
    }
    (rows, skipped)
}

/// How many compilations `cuda_rows` will make (for a progress bar).
pub fn cuda_count(nvrtcs: &[Arc<Nvrtc>], archs: &[Arch], points: usize) -> usize {
    nvrtcs
        .iter()
        .map(|n| archs.iter().filter(|a| n.check_arch(a).is_ok()).count() * points)
        .sum()
}

/// One kernel's PTX as NVIDIA's OpenCL compiler wrote it on a GPU.
#[derive(Debug, Clone)]
pub struct OpenClListing {
    pub spec: &'static KernelSpec,
    pub ptx: String,
    /// Where it came from: run directory, listing and driver.
    pub origin: String,
}

/// The OpenCL PTX of each kernel at its published defaults in a run made with
/// `--keep-ptx` on an NVIDIA GPU (one listing per kernel, the first row's).
pub fn opencl_listings(run: &Path, kernels: &[&'static KernelSpec]) -> Result<Vec<OpenClListing>> {
    let (env, rows) = load_dir(run)?;
    let store = PtxStore::open(run)?;
    let driver = env
        .devices
        .iter()
        .find(|d| d.toolchain == Toolchain::OpenCl && d.vendor.contains("NVIDIA"))
        .and_then(|d| d.driver_version.clone())
        .unwrap_or_else(|| "driver unknown".into());
    let mut out = Vec::new();
    for spec in kernels {
        let Ok(defaults) = spec.config(&[]) else {
            continue;
        };
        let found = rows.iter().find_map(|m| {
            let published = m.toolchain == Toolchain::OpenCl
                && m.kernel == spec.id
                && m.config == defaults
                && m.hints == Hints::default();
            let file = m.ptx_file.as_deref().filter(|_| published)?;
            store
                .get(file)
                .map(|ptx| (file.to_string(), ptx.to_string()))
        });
        if let Some((file, ptx)) = found {
            out.push(OpenClListing {
                spec,
                ptx,
                origin: format!("{} {file} (NVIDIA OpenCL, driver {driver})", run.display()),
            });
        }
    }
    if out.is_empty() {
        return Err(Error::invalid(format!(
            "--opencl-ptx {}: no OpenCL PTX of a published kernel there; it reads a run of \
             `gemmlab compare --keep-ptx` on an NVIDIA GPU (e.g. results/h200/compare)",
            run.display()
        )));
    }
    Ok(out)
}

/// A ptxas from the wheel cache, with the architectures its release supports.
#[derive(Debug, Clone)]
pub struct Ptxas {
    pub path: PathBuf,
    /// "11.8": the CUDA release it belongs to.
    pub release: String,
    pub archs: Vec<u32>,
}

impl Ptxas {
    /// Every ptxas in the cache (`scripts/nvrtc/fetch.sh --with-ptxas`).
    pub fn cached() -> Vec<Ptxas> {
        cache::cached()
            .into_iter()
            .filter_map(|c| {
                let path = c.ptxas.clone()?;
                let nvrtc = c.open().ok()?;
                let (major, minor) = nvrtc.version();
                Some(Ptxas {
                    path,
                    release: format!("{major}.{minor}"),
                    archs: nvrtc.supported_archs()?.to_vec(),
                })
            })
            .collect()
    }

    pub fn label(&self) -> String {
        format!("NVIDIA OpenCL PTX + ptxas {}", self.release)
    }
}

/// `ptx` with its `.version` set to `isa` (when given) and its `.target`
/// architecture set to `arch`, and a note per change.
pub fn adapt(ptx: &str, arch: &Arch, isa: Option<&str>) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.lines() {
        let t = line.trim_start();
        if let (Some(old), Some(new)) = (t.strip_prefix(".version "), isa) {
            let old = old.trim();
            if old != new {
                notes.push(format!(".version {old} -> {new}"));
                out.push_str(&format!(".version {new}\n"));
                continue;
            }
        }
        if let Some(rest) = t.strip_prefix(".target ") {
            let (old, tail) = match rest.split_once(',') {
                Some((a, b)) => (a.trim(), format!(",{b}")),
                None => (rest.trim(), String::new()),
            };
            let new = arch.name();
            if old != new {
                notes.push(format!(".target {old} -> {new}"));
            }
            out.push_str(&format!(".target {new}{tail}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, notes)
}

/// The PTX ISA version ptxas says it supports when it refuses a newer one:
/// "Unsupported .version 9.0; current version is '7.8'" -> "7.8".
pub fn supported_isa(log: &str) -> Option<String> {
    let rest = log.split("current version is '").nth(1)?;
    let v = rest.split('\'').next()?;
    (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_string())
}

/// What ptxas made of one listing for one architecture.
#[derive(Debug, Clone)]
pub struct Assembled {
    pub log: String,
    pub notes: Vec<String>,
}

/// Assembles `listing` for `arch` with `ptxas -v`, lowering the PTX version once
/// if ptxas asks for it. `Err` carries ptxas's reason.
pub fn assemble(
    ptxas: &Ptxas,
    listing: &OpenClListing,
    arch: &Arch,
    scratch: &Path,
) -> std::result::Result<Assembled, String> {
    let mut isa: Option<String> = None;
    for _ in 0..2 {
        let (text, notes) = adapt(&listing.ptx, arch, isa.as_deref());
        let stem = format!("{}-{}-{}", listing.spec.id, arch.name(), ptxas.release);
        let input = scratch.join(format!("{stem}.ptx"));
        let output = scratch.join(format!("{stem}.cubin"));
        std::fs::write(&input, &text).map_err(|e| format!("{}: {e}", input.display()))?;
        let run = Command::new(&ptxas.path)
            .arg("-v")
            .arg(format!("--gpu-name={}", arch.name()))
            .arg("-o")
            .arg(&output)
            .arg(&input)
            .output()
            .map_err(|e| format!("{}: {e}", ptxas.path.display()))?;
        let _ = std::fs::remove_file(&output);
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        if run.status.success() {
            return Ok(Assembled { log, notes });
        }
        match supported_isa(&log) {
            Some(v) if isa.is_none() => isa = Some(v),
            _ => {
                let why = log
                    .lines()
                    .find(|l| l.contains("error") || l.contains("fatal"))
                    .unwrap_or_else(|| log.lines().next().unwrap_or("no output"));
                let changed = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" (after {})", notes.join(", "))
                };
                return Err(format!("ptxas {}{changed}: {}", ptxas.release, why.trim()));
            }
        }
    }
    Err(format!("ptxas {}: refused the PTX twice", ptxas.release))
}

/// The device record of an architecture for OpenCL rows assembled by `ptxas`.
fn opencl_device(ptxas: &Ptxas, arch: &Arch) -> DeviceInfo {
    let mut d = offline_device_named(ptxas.label(), arch);
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
    scratch: &Path,
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
        let row = opencl_row(ptxas, arch, listing, scratch);
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

fn opencl_row(ptxas: &Ptxas, arch: &Arch, listing: &OpenClListing, scratch: &Path) -> Measurement {
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
    row.compiler = Some(ptxas.label());
    row.build_notes.push(format!("PTX from {}", listing.origin));
    match assemble(ptxas, listing, arch, scratch) {
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
            row.ptx_mix = Some(crate::ptx::instruction_mix(&listing.ptx));
        }
        Err(why) => row.status = Status::CompileError(why),
    }
    row
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n.target sm_90, texmode_independent\n.address_size 64\n\n.entry k(\n)\n{\nret;\n}\n";

    #[test]
    fn adapt_changes_version_and_target_and_says_so() {
        let arch = Arch::parse("sm_35").unwrap();
        let (text, notes) = adapt(PTX, &arch, Some("7.8"));
        assert!(text.contains("\n.version 7.8\n"), "{text}");
        assert!(
            text.contains("\n.target sm_35, texmode_independent\n"),
            "{text}"
        );
        assert!(text.contains(".entry k("));
        assert_eq!(notes, vec![".version 9.0 -> 7.8", ".target sm_90 -> sm_35"]);
        // Same version and target: nothing to note, text unchanged in substance.
        let arch90 = Arch::parse("sm_90").unwrap();
        let (same, none) = adapt(PTX, &arch90, None);
        assert!(none.is_empty());
        assert_eq!(same.trim_end(), PTX.trim_end());
    }

    #[test]
    fn the_supported_isa_is_read_from_ptxas_refusal() {
        let log = "ptxas fatal   : Unsupported .version 9.0; current version is '7.8'\n";
        assert_eq!(supported_isa(log).as_deref(), Some("7.8"));
        assert_eq!(supported_isa("ptxas fatal : something else"), None);
        assert_eq!(supported_isa("current version is 'x; rm'"), None);
    }

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
