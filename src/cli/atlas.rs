//! `gemmlab atlas`: every tutorial kernel at its published defaults, for each
//! architecture, under each NVRTC that supports it (and NVIDIA OpenCL's PTX
//! assembled by each cached ptxas): registers, spills, occupancy. No GPU.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use gemmlab::backend::nvrtc::{cache, offline_device, Arch, Nvrtc};
use gemmlab::backend::Toolchain;
use gemmlab::experiment::atlas::{self, Ptxas, Skipped};
use gemmlab::experiment::Point;
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::measure::Plan;
use gemmlab::results::{Environment, Measurement, ResultWriter};
use gemmlab::{Error, Result};

use super::compare::progress;

#[derive(Args, Debug)]
pub struct AtlasArgs {
    /// Kernels (comma-separated ids or numbers); default all.
    #[arg(long)]
    pub kernels: Option<String>,
    /// Architectures, comma-separated (sm_35, 35 or 3.5). Default: sm_35, 37, 50, 52,
    /// 60, 61, 70, 75, 80, 86, 89, 90, 100, 120.
    #[arg(long, value_delimiter = ',')]
    pub archs: Vec<String>,
    /// NVRTC versions or library paths, comma-separated (11.8, 12, 13, /path/libnvrtc.so).
    /// Default: every NVRTC in the wheel cache and the one on the loader path.
    #[arg(long, value_delimiter = ',')]
    pub nvrtc: Vec<String>,
    /// A run of `gemmlab compare --keep-ptx` on an NVIDIA GPU (e.g. results/h200/compare):
    /// its OpenCL PTX of each published kernel is assembled for every architecture by
    /// each ptxas in the cache (`scripts/nvrtc/fetch.sh --with-ptxas`).
    #[arg(long, value_name = "RUN")]
    pub opencl_ptx: Option<PathBuf>,
    /// Also both clang toolchains (clang-cuda, clang-opencl), each architecture's PTX
    /// assembled by the newest cached ptxas that takes it.
    #[arg(long)]
    pub clang: bool,
    /// Compile threads (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Output directory.
    #[arg(long, default_value = "gemmlab-results/atlas")]
    pub out: PathBuf,
}

pub fn run(args: AtlasArgs) -> Result<super::Outcome> {
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    let specs = kernels::select(args.kernels.as_deref())?;
    let names: Vec<String> = if args.archs.is_empty() {
        atlas::ARCHS.iter().map(|s| s.to_string()).collect()
    } else {
        args.archs.clone()
    };
    let archs: Vec<Arch> = names
        .iter()
        .map(|a| Arch::parse(a))
        .collect::<Result<_>>()?;
    let nvrtcs = choose_nvrtcs(&args.nvrtc)?;
    let points: Vec<Point> = specs
        .iter()
        .map(|spec| {
            Ok(Point {
                spec,
                config: spec.config(&[])?,
                hints: Hints::default(),
                label: Some("published".into()),
            })
        })
        .collect::<Result<_>>()?;
    let listings = match &args.opencl_ptx {
        Some(run) => atlas::opencl_listings(run, &specs)?,
        None => Vec::new(),
    };
    let ptxases = if listings.is_empty() {
        Vec::new()
    } else {
        let p = Ptxas::cached();
        if p.is_empty() {
            return Err(Error::invalid(format!(
                "--opencl-ptx needs a ptxas: none in {} (scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas fetches them)",
                cache::describe_dir()
            )));
        }
        p
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);

    let compilers: Vec<String> = nvrtcs.iter().map(|n| n.describe()).collect();
    println!(
        "atlas: {} kernels x {} architectures under {} NVRTC(s){}; offline, nothing is run; results in {}",
        specs.len(),
        archs.len(),
        nvrtcs.len(),
        if listings.is_empty() {
            String::new()
        } else {
            format!(
                ", and NVIDIA OpenCL's PTX of {} kernels through ptxas {}",
                listings.len(),
                ptxases.iter().map(|p| p.release.as_str()).collect::<Vec<_>>().join(", ")
            )
        },
        args.out.display()
    );
    for c in &compilers {
        println!("  {c}");
    }

    let devices = archs
        .iter()
        .flat_map(|a| nvrtcs.iter().map(move |n| offline_device(n, a)))
        .collect();
    let mut env = Environment::capture(devices, 0, Plan::default());
    env.notes
        .push("atlas: offline, every kernel at its published defaults".into());
    env.notes
        .extend(compilers.iter().map(|c| format!("NVRTC: {c}")));
    env.notes.extend(
        ptxases
            .iter()
            .map(|p| format!("ptxas {}: {}", p.release, p.path.display())),
    );
    let mut writer = ResultWriter::create(&args.out, env)?;

    let clang_count = if args.clang {
        2 * archs.len() * points.len()
    } else {
        0
    };
    let total = atlas::cuda_count(&nvrtcs, &archs, points.len())
        + atlas::opencl_count(listings.len(), &ptxases, &archs)
        + clang_count;
    let pb = progress(total as u64);
    let (cuda, mut skipped) = atlas::cuda_rows(&nvrtcs, &archs, &points, jobs, &pb);
    let opencl = atlas::opencl_rows(&listings, &ptxases, &archs, &pb);
    let clang = if args.clang {
        let (rows, s) = atlas::clang_rows(&archs, &points, jobs, &pb);
        skipped.extend(s);
        rows
    } else {
        Vec::new()
    };
    pb.finish_and_clear();
    for r in cuda.iter().chain(&opencl).chain(&clang) {
        writer.push(r.clone())?;
    }
    if !clang.is_empty() {
        let ok = clang.iter().filter(|m| m.resources.is_some()).count();
        println!(
            "clang: {ok} of {} kernel x architecture x toolchain rows compiled",
            clang.len()
        );
    }
    print!("{}", matrix(&archs, &cuda, &opencl));
    print_skipped(&skipped);
    let refused = opencl
        .iter()
        .filter(|m| !matches!(m.status, gemmlab::gemm::driver::Status::Unavailable(_)))
        .count();
    if refused > 0 {
        println!(
            "{refused} OpenCL listings were refused by ptxas (their rows say why); they are data, not failures"
        );
    }
    let all = writer.finish()?;
    println!("wrote {} rows to {}", all.len(), args.out.display());
    // A kernel NVRTC cannot compile is a failure; ptxas refusing adapted OpenCL PTX is a finding.
    let compiled: Vec<Measurement> = cuda.into_iter().chain(clang).collect();
    Ok(super::Outcome::from_measurements(&compiled))
}

/// The NVRTCs asked for, or every one gemmlab can find.
fn choose_nvrtcs(asked: &[String]) -> Result<Vec<Arc<Nvrtc>>> {
    let mut out: Vec<Arc<Nvrtc>> = if asked.is_empty() {
        let mut found: Vec<Arc<Nvrtc>> = cache::cached()
            .iter()
            .filter_map(|c| c.open().ok())
            .collect();
        found.extend(Nvrtc::on_loader_path());
        found
    } else {
        asked
            .iter()
            .map(|s| Nvrtc::choose(Some(s)))
            .collect::<Result<_>>()?
    };
    // One row set per NVRTC release.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|n| seen.insert(n.label()));
    if out.is_empty() {
        return Err(Error::CudaUnavailable(format!(
            "no NVRTC found (loader path or {}); scripts/nvrtc/fetch.sh 11.8 12 13 fetches NVIDIA's wheels",
            cache::describe_dir()
        )));
    }
    Ok(out)
}

/// Registers per kernel and architecture, one block per compiler; `*` marks spills,
/// `x` a failure, `-` an architecture the compiler does not serve.
fn matrix(archs: &[Arch], cuda: &[Measurement], opencl: &[Measurement]) -> String {
    let mut by: BTreeMap<(String, Toolchain), BTreeMap<(String, String), String>> = BTreeMap::new();
    for m in cuda.iter().chain(opencl) {
        let compiler = m.compiler.clone().unwrap_or_default();
        let arch = m.device.split_whitespace().next().unwrap_or("").to_string();
        let cell = match &m.resources {
            Some(r)
                if m.status
                    .reason()
                    .is_some_and(|w| w.starts_with("no device"))
                    || m.status.is_ok() =>
            {
                let spills = r.spill_stores_bytes.unwrap_or(0) + r.spill_loads_bytes.unwrap_or(0);
                format!(
                    "{}{}",
                    r.registers.map_or("?".into(), |n| n.to_string()),
                    if spills > 0 { "*" } else { "" }
                )
            }
            _ => "x".into(),
        };
        by.entry((compiler, m.toolchain))
            .or_default()
            .insert((m.kernel.clone(), arch), cell);
    }
    let mut s = String::new();
    for ((compiler, _), cells) in &by {
        s.push_str(&format!(
            "\nregisters, {compiler} (* spills, x failed, - not supported)\n"
        ));
        s.push_str(&format!("{:<8}", "kernel"));
        for a in archs {
            s.push_str(&format!("{:>7}", a.name()));
        }
        s.push('\n');
        let mut kernels: Vec<&String> = cells.keys().map(|(k, _)| k).collect();
        kernels.dedup();
        kernels.sort_by_key(|k| {
            k.trim_start_matches("gemm")
                .parse::<u32>()
                .unwrap_or(u32::MAX)
        });
        kernels.dedup();
        for k in kernels {
            s.push_str(&format!("{k:<8}"));
            for a in archs {
                let cell = cells
                    .get(&(k.clone(), a.name()))
                    .map_or("-", String::as_str);
                s.push_str(&format!("{cell:>7}"));
            }
            s.push('\n');
        }
    }
    s
}

fn print_skipped(skipped: &[Skipped]) {
    let mut by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in skipped {
        by.entry(s.compiler.as_str())
            .or_default()
            .push(s.arch.as_str());
    }
    for (compiler, archs) in by {
        println!(
            "{compiler} does not compile for {} (not in its architecture list)",
            archs.join(", ")
        );
    }
}
