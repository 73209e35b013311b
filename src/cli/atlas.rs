//! `gemmlab atlas`: every tutorial kernel at its published defaults, for each
//! architecture, under each NVRTC that supports it (and NVIDIA OpenCL's PTX
//! assembled by each cached ptxas): registers, spills, occupancy. No GPU.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use gemmlab::backend::nvrtc::{cache, offline_device, Arch, Nvrtc};
use gemmlab::backend::Toolchain;
use gemmlab::experiment::atlas::{self, OpenClListing, Ptxas, Skipped};
use gemmlab::experiment::Point;
use gemmlab::kernel::builtin::{self as kernels, Hints, KernelSpec};
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
    let atlas = Atlas::from_args(&args)?;
    atlas.say(&args.out);
    let mut writer = ResultWriter::create(&args.out, atlas.environment())?;
    let rows = atlas.compile();
    for r in rows.cuda.iter().chain(&rows.opencl).chain(&rows.clang) {
        writer.push(r.clone())?;
    }
    rows.print(&atlas.archs);
    let all = writer.finish()?;
    println!("wrote {} rows to {}", all.len(), args.out.display());
    // A kernel NVRTC cannot compile is a failure; ptxas refusing adapted OpenCL PTX is a finding.
    let compiled: Vec<Measurement> = rows.cuda.into_iter().chain(rows.clang).collect();
    Ok(super::Outcome::from_measurements(&compiled))
}

/// What an atlas compiles, and with what, checked before anything is compiled.
struct Atlas {
    archs: Vec<Arch>,
    nvrtcs: Vec<Arc<Nvrtc>>,
    /// Each NVRTC described, in `nvrtcs`' order.
    compilers: Vec<String>,
    /// Every kernel at its published defaults.
    points: Vec<Point>,
    listings: Vec<OpenClListing>,
    ptxases: Vec<Ptxas>,
    clang: bool,
    jobs: usize,
}

impl Atlas {
    fn from_args(args: &AtlasArgs) -> Result<Atlas> {
        let specs = kernels::select(args.kernels.as_deref())?;
        let archs = parse_archs(&args.archs)?;
        let nvrtcs = choose_nvrtcs(&args.nvrtc)?;
        let points = published_points(&specs)?;
        let listings = match &args.opencl_ptx {
            Some(run) => atlas::opencl_listings(run, &specs)?,
            None => Vec::new(),
        };
        let ptxases = ptxases_for(&listings)?;
        let jobs = args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        Ok(Atlas {
            compilers: nvrtcs.iter().map(|n| n.describe()).collect(),
            archs,
            nvrtcs,
            points,
            listings,
            ptxases,
            clang: args.clang,
            jobs,
        })
    }

    /// The line that says what the atlas compiles, and each NVRTC under it.
    fn say(&self, out: &Path) {
        println!(
            "atlas: {} kernels x {} architectures under {} NVRTC(s){}; offline, nothing is run; results in {}",
            self.points.len(),
            self.archs.len(),
            self.nvrtcs.len(),
            if self.listings.is_empty() {
                String::new()
            } else {
                format!(
                    ", and NVIDIA OpenCL's PTX of {} kernels through ptxas {}",
                    self.listings.len(),
                    (self.ptxases.iter())
                        .map(|p| p.release.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            out.display()
        );
        for c in &self.compilers {
            println!("  {c}");
        }
    }

    /// One offline device per architecture and NVRTC, and notes naming the compilers.
    fn environment(&self) -> Environment {
        let devices = (self.archs.iter())
            .flat_map(|a| self.nvrtcs.iter().map(move |n| offline_device(n, a)))
            .collect();
        let mut env = Environment::capture(devices, 0, Plan::default());
        env.notes
            .push("atlas: offline, every kernel at its published defaults".into());
        env.notes
            .extend(self.compilers.iter().map(|c| format!("NVRTC: {c}")));
        env.notes.extend(
            (self.ptxases.iter()).map(|p| format!("ptxas {}: {}", p.release, p.path.display())),
        );
        env
    }

    /// Every compilation, under one progress bar.
    fn compile(&self) -> Rows {
        let (archs, points) = (&self.archs, &self.points);
        let clang_count = if self.clang {
            2 * archs.len() * points.len()
        } else {
            0
        };
        let total = atlas::cuda_count(&self.nvrtcs, archs, points.len())
            + atlas::opencl_count(self.listings.len(), &self.ptxases, archs)
            + clang_count;
        let pb = progress(total as u64);
        let (cuda, mut skipped) = atlas::cuda_rows(&self.nvrtcs, archs, points, self.jobs, &pb);
        let opencl = atlas::opencl_rows(&self.listings, &self.ptxases, archs, &pb);
        let clang = if self.clang {
            let (rows, s) = atlas::clang_rows(archs, points, self.jobs, &pb);
            skipped.extend(s);
            rows
        } else {
            Vec::new()
        };
        pb.finish_and_clear();
        Rows {
            cuda,
            opencl,
            clang,
            skipped,
        }
    }
}

/// The atlas's rows per compiler family, and the architectures a compiler skipped.
struct Rows {
    cuda: Vec<Measurement>,
    opencl: Vec<Measurement>,
    clang: Vec<Measurement>,
    skipped: Vec<Skipped>,
}

impl Rows {
    /// The clang count, the register matrix, what was skipped and what ptxas refused.
    fn print(&self, archs: &[Arch]) {
        if !self.clang.is_empty() {
            let ok = self.clang.iter().filter(|m| m.resources.is_some()).count();
            println!(
                "clang: {ok} of {} kernel x architecture x toolchain rows compiled",
                self.clang.len()
            );
        }
        print!("{}", matrix(archs, &self.cuda, &self.opencl));
        print_skipped(&self.skipped);
        let refused = (self.opencl.iter())
            .filter(|m| !matches!(m.status, gemmlab::gemm::driver::Status::Unavailable(_)))
            .count();
        if refused > 0 {
            println!(
                "{refused} OpenCL listings were refused by ptxas (their rows say why); they are data, not failures"
            );
        }
    }
}

/// The architectures asked for, or the atlas's default list.
fn parse_archs(asked: &[String]) -> Result<Vec<Arch>> {
    let names: Vec<String> = if asked.is_empty() {
        atlas::ARCHS.iter().map(|s| s.to_string()).collect()
    } else {
        asked.to_vec()
    };
    names.iter().map(|a| Arch::parse(a)).collect()
}

/// Every kernel at its published defaults.
fn published_points(specs: &[&'static KernelSpec]) -> Result<Vec<Point>> {
    (specs.iter())
        .map(|spec| {
            Ok(Point {
                spec,
                config: spec.config(&[])?,
                hints: Hints::default(),
                label: Some("published".into()),
            })
        })
        .collect()
}

/// The cached ptxas releases that assemble OpenCL's listings (none without listings).
fn ptxases_for(listings: &[OpenClListing]) -> Result<Vec<Ptxas>> {
    if listings.is_empty() {
        return Ok(Vec::new());
    }
    let p = Ptxas::cached();
    if p.is_empty() {
        return Err(Error::invalid(format!(
            "--opencl-ptx needs a ptxas: none in {} (scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas fetches them)",
            cache::describe_dir()
        )));
    }
    Ok(p)
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
