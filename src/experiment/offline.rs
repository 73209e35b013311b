//! Compiling without a device: NVRTC for any architecture the chosen library
//! supports, on any machine (no GPU, no driver). What the compiler says
//! (registers, spills, stack, shared memory, PTX) and the occupancy the
//! architecture's rules give are real; nothing is run, checked or timed.
//!
//! One call answers "kernel K, configuration C, architecture A, NVRTC N":
//! [`Target::new`] picks N and A (refusing an A that N cannot compile for, with
//! the list of those it can), [`compile_kernel`] compiles K with C and returns
//! ptxas's report, the occupancy and the PTX. `gemmlab build|sweep|ptx --arch`
//! are built on it.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::backend::clang::{Assembler, ClangCompiler};
use crate::backend::nvrtc::{offline_device, offline_device_named, Arch, Nvrtc, NvrtcCompiler};
use crate::backend::{BuildReport, Compiler, DeviceInfo, KernelResources, Toolchain};
use crate::error::{Error, Result};
use crate::experiment::{failed_row, Point};
use crate::gemm::driver::Status;
use crate::kernel::builtin::{Config, Hints};
use crate::kernel::Kernel;
use crate::measure::progress::Progress;
use crate::occupancy::{self, Occupancy};
use crate::results::Measurement;

/// An architecture and a compiler that needs no device for it: NVRTC (the
/// CUDA toolchain) or clang with a cached ptxas (the clang toolchains).
pub struct Target {
    toolchain: Toolchain,
    compiler: Arc<dyn Compiler>,
    arch: Arch,
    /// "NVRTC 11.8", "clang 19.1.7 + ptxas 11.8"
    label: String,
    /// The label with where each part comes from.
    describe: String,
    nvrtc: Option<Arc<Nvrtc>>,
    device: DeviceInfo,
}

impl Target {
    /// From the command line's `--nvrtc` (None: the default library) and `--arch`.
    pub fn new(nvrtc: Option<&str>, arch: &str) -> Result<Target> {
        let arch = Arch::parse(arch)?;
        let (chosen, note) = Nvrtc::choose_for(nvrtc, &arch)?;
        if let Some(n) = note {
            eprintln!("note: {n}");
        }
        Target::with(chosen, &arch)
    }

    /// A loaded NVRTC and an architecture; an error, listing the architectures the
    /// library supports, when it cannot compile for this one.
    pub fn with(nvrtc: Arc<Nvrtc>, arch: &Arch) -> Result<Target> {
        let device = offline_device(&nvrtc, arch);
        let compiler = Arc::new(NvrtcCompiler::new(Arc::clone(&nvrtc), arch)?);
        Ok(Target {
            toolchain: Toolchain::Cuda,
            compiler,
            arch: arch.clone(),
            label: nvrtc.label(),
            describe: nvrtc.describe(),
            nvrtc: Some(nvrtc),
            device,
        })
    }

    /// `toolchain` for `arch` without a device: CUDA through NVRTC (`nvrtc`), a
    /// clang toolchain through clang and a cached ptxas (`assembler`: a release
    /// such as "11.8", else the newest that assembles for the architecture).
    /// OpenCL compilers need their device and are refused.
    pub fn for_toolchain(
        toolchain: Toolchain,
        nvrtc: Option<&str>,
        assembler: Option<&str>,
        arch: &str,
    ) -> Result<Target> {
        if toolchain == Toolchain::Cuda {
            return Target::new(nvrtc, arch);
        }
        if !toolchain.is_clang() {
            return Err(refuse(
                &format!("--backends {toolchain}"),
                "OpenCL compilers need their device; cuda, clang-cuda and clang-opencl compile offline",
            ));
        }
        let arch = Arch::parse(arch)?;
        if assembler == Some("jit") {
            return Err(refuse(
                "GEMMLAB_ASSEMBLER=jit",
                "the CUDA driver's JIT needs a device; name a cached ptxas release (11.8, 13)",
            ));
        }
        let c = ClangCompiler::for_arch(toolchain, &arch, assembler)?;
        let label = c.label();
        let describe = match c.assembler() {
            Assembler::Ptxas(p) => format!("{label} ({})", p.path.display()),
            Assembler::DriverJit => label.clone(),
        };
        let mut device = offline_device_named(label.clone(), &arch);
        device.toolchain = toolchain;
        device.platform = "clang offline".into();
        Ok(Target {
            toolchain,
            compiler: Arc::new(c),
            arch,
            label,
            describe,
            nvrtc: None,
            device,
        })
    }

    pub fn toolchain(&self) -> Toolchain {
        self.toolchain
    }

    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// The NVRTC of a CUDA target.
    pub fn nvrtc(&self) -> Option<&Arc<Nvrtc>> {
        self.nvrtc.as_ref()
    }

    /// "NVRTC 11.8", "clang 19.1.7 + ptxas 11.8"
    pub fn compiler_label(&self) -> &str {
        &self.label
    }

    /// The device results record: the architecture, no hardware, the compiler.
    pub fn device(&self) -> &DeviceInfo {
        &self.device
    }

    /// The compiler, for callers that compile sources of their own.
    pub fn compiler(&self) -> Arc<dyn Compiler> {
        self.compiler.clone()
    }

    /// "sm_35 with NVRTC 11.8 (wheel 11.8.89, /root/.cache/...)"
    pub fn describe(&self) -> String {
        format!("{} with {}", self.arch(), self.describe)
    }

    /// What every offline result says about its missing timing.
    pub fn note(&self) -> String {
        format!(
            "no device: compiled offline for {} with {}; not run, checked or timed",
            self.arch(),
            self.label
        )
    }
}

/// One kernel compiled offline.
#[derive(Debug, Clone)]
pub struct OfflineBuild {
    /// Flags, log, compile time, PTX, every kernel's resources, notes; `compiler`
    /// says which NVRTC.
    pub report: BuildReport,
    /// The resources of the kernel's entry point, from ptxas's report.
    pub resources: Option<KernelResources>,
    /// Threads per block of the configuration.
    pub threads: usize,
    /// Occupancy on the architecture, from the registers and shared memory.
    pub occupancy: Option<Occupancy>,
    /// Size of the CUBIN the compiler produced.
    pub cubin_bytes: usize,
}

impl OfflineBuild {
    pub fn ptx(&self) -> Option<&str> {
        self.report.ptx.as_deref()
    }
}

/// Compiles `spec` with `config` and `hints` (its CUDA twin, the same defines and
/// flags as on a device) for the target: ptxas's report, occupancy, PTX.
/// A compiler error is `Error::Compile` with NVRTC's log; an invalid
/// configuration is `Error::Constraint`.
pub fn compile_kernel(
    target: &Target,
    spec: impl Into<Kernel>,
    config: &Config,
    hints: &Hints,
) -> Result<OfflineBuild> {
    let spec: Kernel = spec.into();
    let tc = target.toolchain;
    if let Some(k) = spec.builtin() {
        k.validate(config)?;
        // Which architectures can take it: the tensor-core family says, not ptxas.
        if let Some(why) = k.unavailable_at(config, &target.device, hints) {
            return Err(crate::Error::Unavailable {
                kernel: k.id.into(),
                toolchain: tc.to_string(),
                reason: why,
            });
        }
    }
    let source = spec.source(tc).ok_or_else(|| crate::Error::Unavailable {
        kernel: spec.id().to_string(),
        toolchain: tc.to_string(),
        reason: format!("no {} source for {tc}", tc.language().name()),
    })?;
    let options = spec.compile_options(config, hints, tc);
    let artefact = target.compiler.compile(spec.entry(), &source, &options)?;
    let cubin_bytes = artefact.cubin().map_or(0, <[u8]>::len);
    let mut report = artefact.report;
    if let Some(k) = spec.builtin() {
        k.count_launch_local(&mut report, config, tc.language());
    }
    let resources = report.kernel(spec.entry()).cloned();
    let threads = spec.threads_per_group(config);
    let occupancy = resources
        .as_ref()
        .and_then(|r| occupancy::for_kernel_detail(&target.device, r, threads));
    Ok(OfflineBuild {
        report,
        resources,
        threads,
        occupancy,
        cubin_bytes,
    })
}

impl Target {
    /// A row of this target with no size (nothing run), `status` its outcome.
    fn row(&self, experiment: &str, kernel: &str, status: Status) -> Measurement {
        let d = &self.device;
        let at = (0, 0, 0);
        failed_row(
            experiment,
            &d.name,
            &d.id,
            self.toolchain,
            kernel,
            status,
            at,
        )
    }
}

/// The result row of one offline point, in the usual format: status "n/a" with
/// the note as its reason, no size, no timing, registers, spills and occupancy.
pub fn measurement(
    target: &Target,
    experiment: &str,
    point: &Point,
    outcome: &Result<OfflineBuild>,
) -> Measurement {
    let mut row = target.row(
        experiment,
        point.spec.id,
        Status::Unavailable(target.note()),
    );
    row.label = point.label.clone();
    row.config = point.config.clone();
    row.hints = point.hints.clone();
    row.compiler = Some(target.label.clone());
    match outcome {
        Ok(b) => {
            row.resources = b.resources.clone();
            row.compile_ms = Some(b.report.compile_ms);
            row.build_notes = b.report.notes.clone();
            row.build_notes.push(target.note());
            row.occupancy = b.occupancy.map(|o| o.fraction);
            row.ptx_mix = b.ptx().map(crate::backend::ptx::instruction_mix);
        }
        Err(e) => row.status = Status::from_error(e),
    }
    row
}

/// Compiles every point on `jobs` threads (NVRTC compiles in parallel) and
/// returns one row per point, in order; a point that could not be set up keeps
/// its reason. With `keep_ptx`, each distinct PTX is written under that folder.
pub fn run_points(
    target: &Target,
    experiment: &str,
    points: &[std::result::Result<Point, (String, Status)>],
    jobs: usize,
    keep_ptx: Option<&Path>,
    progress: &Progress,
) -> Vec<Measurement> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Measurement>>> = Mutex::new(vec![None; points.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, points.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = points.get(i) else { break };
                let row = match p {
                    Ok(point) => {
                        progress.set_message(format!(
                            "{} {} for {}",
                            point.spec.id,
                            point.label.as_deref().unwrap_or(""),
                            target.arch()
                        ));
                        let outcome =
                            compile_kernel(target, point.spec, &point.config, &point.hints);
                        let mut row = measurement(target, experiment, point, &outcome);
                        if let (Some(dir), Ok(b)) = (keep_ptx, &outcome) {
                            if let Some(ptx) = b.ptx() {
                                row.ptx_file = crate::experiment::keep_ptx(dir, &row, ptx);
                            }
                        }
                        row
                    }
                    Err((kernel, status)) => {
                        let mut row = target.row(experiment, kernel, status.clone());
                        row.compiler = Some(target.label.clone());
                        row
                    }
                };
                progress.inc(1);
                let mut all = done.lock().unwrap_or_else(|e| e.into_inner());
                all[i] = Some(row);
            });
        }
    });
    done.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

/// The terminal table of offline rows: per kernel and point, registers (with the
/// cap asked), spill stores/loads, stack, shared memory, and occupancy with the
/// blocks per SM and what limits them.
pub fn table(target: &Target, rows: &[Measurement]) -> String {
    let mut t: Vec<Vec<String>> = vec![[
        "kernel",
        "point",
        "regs",
        "spill st/ld",
        "stack",
        "smem",
        "occupancy",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    let mut notes = Vec::new();
    for r in rows {
        let res = r.resources.as_ref();
        let b = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
        let regs = match (r.cap_exceeded(), res.and_then(|x| x.registers)) {
            (Some((used, cap)), _) => format!("{used}>cap{cap}"),
            (None, v) => v.map_or("?".into(), |v| v.to_string()),
        };
        let occ = match (res, crate::kernel::builtin::find(&r.kernel)) {
            (Some(res), Ok(spec)) => {
                occupancy::for_kernel_detail(&target.device, res, spec.threads_per_group(&r.config))
                    .map_or("?".into(), |o| o.describe())
            }
            _ => "-".into(),
        };
        if res.is_none() {
            if let Some(why) = r.status.reason() {
                notes.push(format!(
                    "  {} {}: {}",
                    r.kernel,
                    r.label.as_deref().unwrap_or(""),
                    why.lines().next().unwrap_or(why)
                ));
            }
        }
        t.push(vec![
            r.kernel.clone(),
            r.label.clone().unwrap_or_default(),
            if res.is_some() {
                regs
            } else {
                r.status.label().to_string()
            },
            res.map_or("-".into(), |x| {
                format!("{}/{}", b(x.spill_stores_bytes), b(x.spill_loads_bytes))
            }),
            res.map_or("-".into(), |x| b(x.stack_frame_bytes)),
            res.map_or("-".into(), |x| b(x.shared_bytes)),
            occ,
        ]);
    }
    let last = t[0].len() - 1;
    crate::results::table::render(&t, |c| c < 2 || c == last, "", &notes)
}

/// Refuses what an offline run cannot do, before any work.
pub fn refuse(what: &str, why: &str) -> Error {
    Error::invalid(format!("{what} with --arch: {why}"))
}
