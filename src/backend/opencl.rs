//! OpenCL backend (opencl3, libOpenCL loaded at run time).
//!
//! On NVIDIA platforms the program is built with `-cl-nv-verbose`, whose build
//! log carries ptxas's resource lines, and the program binary is PTX. Elsewhere
//! (PoCL, ...) only what the API reports is known; the rest stays `None`.
//! An architecture-specific source (sm_90a) is built from source, then its PTX
//! re-targeted and built as the program (`build_arch_specific`).

use std::collections::HashMap;
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::ClError;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::platform::{get_platforms, Platform};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_mem, CL_BLOCKING};

use super::{
    check_len, ptxas, Arg, Artefact, Backend, Buffer, BuildReport, CompileOptions, Compiler,
    DeviceInfo, DeviceKind, Elem, HostData, HostDataMut, Image, KernelParam, KernelResources,
    Launch, Program, Toolchain,
};
use crate::error::{Error, Result};

const CL_MEM_OBJECT_ALLOCATION_FAILURE: i32 = -4;
const CL_OUT_OF_RESOURCES: i32 = -5;
const CL_OUT_OF_HOST_MEMORY: i32 = -6;

fn api(call: &str, e: ClError) -> Error {
    Error::Api {
        toolchain: "OpenCL".into(),
        call: call.into(),
        message: format!("{e} (code {})", e.0),
    }
}

/// Variables that loading the OpenCL platforms rewrites in this process's
/// environment (seen on the H200 machine, PoCL and NVIDIA's ICDs both listed:
/// OCL_ICD_FILENAMES cut to PoCL's library alone, HWLOC_PLUGINS_PATH set), as
/// they were before. A child process started afterwards gets them back
/// (`restore_env`), or it would not see the platforms this one sees.
const REWRITTEN: [&str; 2] = ["OCL_ICD_FILENAMES", "HWLOC_PLUGINS_PATH"];
static ENV_BEFORE: std::sync::OnceLock<Vec<(&'static str, Option<std::ffi::OsString>)>> =
    std::sync::OnceLock::new();

/// Gives `cmd` the environment this process had before OpenCL loaded.
pub(crate) fn restore_env(cmd: &mut std::process::Command) {
    for (k, v) in ENV_BEFORE.get().into_iter().flatten() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
}

/// Registers, spills, stack and barriers as ptxas reported them for `from`.
fn take_ptxas_report(k: &mut KernelResources, from: &KernelResources) {
    k.registers = from.registers;
    k.spill_stores_bytes = from.spill_stores_bytes;
    k.spill_loads_bytes = from.spill_loads_bytes;
    k.stack_frame_bytes = from.stack_frame_bytes;
    k.barriers = from.barriers;
}

/// Loads the ICD loader, or says why it cannot.
fn ensure_runtime() -> Result<()> {
    ENV_BEFORE.get_or_init(|| {
        REWRITTEN
            .iter()
            .map(|&k| (k, std::env::var_os(k)))
            .collect()
    });
    match cl3::load_library() {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::OpenClUnavailable(format!(
            "libOpenCL.so.1 could not be loaded ({e}); install an ICD loader and a platform, e.g. `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`"
        ))),
    }
}

struct Located {
    platform_index: usize,
    device_index: usize,
    platform: Platform,
    device: Device,
}

/// The ICD loader's first platform query is not safe to race (seen with
/// ocl-icd + PoCL: a concurrent caller got no devices), so discovery is serialised.
static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// PoCL 3.1's default work-group method (`loopvec`, LLVM 15's loop vectorizer over
/// the work-item loops) corrupted PoCL's own heap on an AVX-512 CPU (AMD EPYC): the
/// lecture kernels, safe as written and clean under valgrind (which serialises PoCL's
/// threads), ended in "corrupted size vs. prev_size" at the next `clReleaseProgram`
/// every run; with `auto` or `loops` they ran checked (`cbs` is not a method of 3.1:
/// it falls back to `auto` with a warning). PoCL reads the method once, when its
/// platform is first queried: unless the user chose one, gemmlab asks for `auto`.
/// Other OpenCL platforms ignore the variable.
fn choose_pocl_work_group_method() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("POCL_WORK_GROUP_METHOD").is_none() {
            std::env::set_var("POCL_WORK_GROUP_METHOD", "auto");
        }
    });
}

fn all_devices() -> Result<Vec<Located>> {
    ensure_runtime()?;
    let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    choose_pocl_work_group_method();
    let platforms = match get_platforms() {
        Ok(p) => p,
        // -1001 (CL_PLATFORM_NOT_FOUND_KHR): the loader found no ICD.
        Err(e) if e.0 == -1001 => {
            return Err(Error::OpenClUnavailable(
                "the OpenCL loader found no platform (no ICD registered under /etc/OpenCL/vendors); install one, e.g. `apt-get install pocl-opencl-icd`".into(),
            ))
        }
        Err(e) => return Err(api("clGetPlatformIDs", e)),
    };
    let mut out = Vec::new();
    for (pi, platform) in platforms.into_iter().enumerate() {
        // A platform with no device answers CL_DEVICE_NOT_FOUND: skip it.
        let ids = platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for (di, id) in ids.into_iter().enumerate() {
            out.push(Located {
                platform_index: pi,
                device_index: di,
                platform,
                device: Device::new(id),
            });
        }
    }
    Ok(out)
}

/// Every OpenCL device of every platform.
pub fn enumerate() -> Result<Vec<DeviceInfo>> {
    Ok(all_devices()?.iter().map(describe).collect())
}

fn describe(l: &Located) -> DeviceInfo {
    let d = &l.device;
    let vendor = d.vendor().unwrap_or_default().trim().to_string();
    let kind = match d.dev_type() {
        Ok(t) if t & CL_DEVICE_TYPE_GPU != 0 => DeviceKind::Gpu,
        Ok(t) if t & CL_DEVICE_TYPE_ACCELERATOR != 0 => DeviceKind::Accelerator,
        Ok(t) if t & CL_DEVICE_TYPE_CPU != 0 => DeviceKind::Cpu,
        _ => DeviceKind::Other,
    };
    let nvidia = vendor.to_ascii_lowercase().contains("nvidia");
    let cc = if nvidia {
        match (
            d.compute_capability_major_nv(),
            d.compute_capability_minor_nv(),
        ) {
            (Ok(a), Ok(b)) => Some((a, b)),
            _ => None,
        }
    } else {
        None
    };
    let platform_version = l.platform.version().ok();
    let device_version = d.version().ok();
    let runtime_version = match (platform_version, device_version) {
        (Some(p), Some(dv)) => Some(format!("{} / {}", p.trim(), dv.trim())),
        (p, dv) => p.or(dv),
    };
    DeviceInfo {
        toolchain: Toolchain::OpenCl,
        id: format!("opencl:{}:{}", l.platform_index, l.device_index),
        name: d.name().unwrap_or_default().trim().to_string(),
        vendor,
        platform: l.platform.name().unwrap_or_default().trim().to_string(),
        kind,
        driver_version: d.driver_version().ok().map(|s| s.trim().to_string()),
        runtime_version,
        compiler_version: d.opencl_c_version().ok().map(|s| s.trim().to_string()),
        compute_capability: cc,
        compute_units: d.max_compute_units().ok(),
        clock_mhz: d.max_clock_frequency().ok().filter(|&c| c > 0),
        global_mem_bytes: d.global_mem_size().ok(),
        local_mem_bytes: d.local_mem_size().ok(),
        local_mem_launch_bytes: None,
        shared_mem_per_sm_bytes: None,
        max_work_group_size: d.max_work_group_size().ok().map(|v| v as u64),
        registers_per_block: if nvidia {
            d.registers_per_block_nv().ok()
        } else {
            None
        },
        registers_per_sm: None,
        max_threads_per_sm: None,
        max_blocks_per_sm: None,
        warp_size: if nvidia { d.wrap_size_nv().ok() } else { None },
        l2_cache_bytes: d.global_mem_cache_size().ok().filter(|&c| c > 0),
        memory_bandwidth_gbs: None,
        pci_bus_id: if nvidia { nv_pci_bus_id(d) } else { None },
        dependent_launch: false,
    }
}

/// NVIDIA's PCI address queries (cl_nv_device_attribute_query, undocumented): the
/// slot is the PCI device number (function 0). Seen on the H200 (driver 580): slot 6
/// where CUDA and nvidia-smi give 0000:00:06.0; reading it as device << 3 | function
/// gave 00:00.6, which matched neither NVML nor the CUDA session of the same GPU.
/// Without the domain query (drivers before CUDA 10.2) the address is unknown rather
/// than guessed in domain 0.
fn nv_pci_bus_id(d: &Device) -> Option<String> {
    const CL_DEVICE_PCI_DOMAIN_ID_NV: u32 = 0x400A;
    let bus = d.pci_bus_id_nv().ok()?;
    let slot = d.pci_slot_id_nv().ok()?;
    let domain = match cl3::device::get_device_info(d.id(), CL_DEVICE_PCI_DOMAIN_ID_NV) {
        Ok(cl3::info_type::InfoType::VecUchar(v)) => u32::from_ne_bytes(v.try_into().ok()?),
        _ => return None,
    };
    Some(super::format_pci_bus_id([
        domain,
        bus & 0xff,
        slot & 0x1f,
        0,
    ]))
}

enum Mem {
    F32(ClBuffer<f32>),
    F64(ClBuffer<f64>),
    I32(ClBuffer<i32>),
    U32(ClBuffer<u32>),
}

impl Mem {
    fn raw(&self) -> cl_mem {
        match self {
            Mem::F32(b) => b.get(),
            Mem::F64(b) => b.get(),
            Mem::I32(b) => b.get(),
            Mem::U32(b) => b.get(),
        }
    }
}

struct Built {
    program: ClProgram,
    kernels: HashMap<String, Kernel>,
}

/// A program built for the device, not yet turned into kernels; or the binary a
/// build process made, built for this context when it is loaded (on the thread
/// that measures, so the build does not contend with it for the driver's lock).
pub(crate) enum BuiltProgram {
    Built(ClProgram),
    Binary(Vec<u8>),
}

/// Builds programs on the backend's context; shared by worker threads.
#[derive(Clone)]
pub struct OpenClCompiler {
    context: Arc<Context>,
    device: Device,
    /// "opencl:P:D", as a build process opens it.
    id: String,
    nvidia: bool,
    platform: String,
    name: String,
    /// "OpenCL C 1.2 (NVIDIA CUDA, driver 580.95.05)", recorded in build reports.
    version: Option<String>,
}

impl OpenClCompiler {
    fn flags(&self, options: &CompileOptions, notes: &mut Vec<String>) -> Vec<String> {
        let mut flags = Vec::new();
        for (name, value) in &options.defines {
            flags.push(format!("-D{name}={value}"));
        }
        if self.nvidia {
            // The sources guard NVIDIA inline PTX with this define.
            flags.push("-DGEMMLAB_NVIDIA_PTX=1".into());
            flags.push("-cl-nv-verbose".into());
            if let Some(r) = options.max_registers {
                flags.push(format!("-cl-nv-maxrregcount={r}"));
            }
        } else if let Some(r) = options.max_registers {
            notes.push(format!(
                "register cap {r} ignored: {} has no register-cap option",
                self.platform
            ));
        }
        if options.fast_math {
            flags.push("-cl-fast-relaxed-math".into());
            flags.push("-cl-mad-enable".into());
        }
        if options.arg_info {
            flags.push("-cl-kernel-arg-info".into());
        }
        flags.extend(options.extra_flags.iter().cloned());
        flags
    }

    /// Per kernel: ptxas's lines where NVIDIA printed them, then what the API says.
    fn resources(&self, program: &ClProgram, log: &str) -> Result<Vec<KernelResources>> {
        let from_log = if self.nvidia {
            ptxas::parse_ptxas_log(log)
        } else {
            Vec::new()
        };
        let id = self.device.id();
        let names = program.get_kernel_names().unwrap_or_default();
        let mut names: Vec<&str> = names
            .split(';')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        names.sort_unstable();
        let mut out = Vec::new();
        for name in names {
            let kernel = Kernel::create(program, name).map_err(|e| api("clCreateKernel", e))?;
            let mut r = from_log
                .iter()
                .find(|k| k.name == name)
                .cloned()
                .unwrap_or_else(|| KernelResources {
                    name: name.to_string(),
                    ..Default::default()
                });
            if let Ok(local) = kernel.get_local_mem_size(id) {
                r.shared_bytes = r.shared_bytes.or(Some(local));
            }
            if let Ok(private) = kernel.get_private_mem_size(id) {
                r.private_bytes = r.private_bytes.or(Some(private));
            }
            r.max_threads_per_block = kernel.get_work_group_size(id).ok().map(|v| v as u64);
            out.push(r);
        }
        Ok(out)
    }
}

impl Compiler for OpenClCompiler {
    fn toolchain(&self) -> Toolchain {
        Toolchain::OpenCl
    }

    fn target(&self) -> &str {
        &self.name
    }

    /// Measured (examples/opencl_builds.rs, results/h200/tune/anchors): NVIDIA's
    /// OpenCL builds xgemm at 12 programs/s from one thread and 13-16/s from 4 or
    /// 16, and 16 concurrent builds stall the measuring thread's calls (a tuner ran
    /// 3.1 configurations/s with 16 compile threads, 4.5/s with one); PoCL's
    /// builds do not overlap either.
    fn parallel_builds(&self) -> bool {
        false
    }

    fn compile(&self, what: &str, source: &str, options: &CompileOptions) -> Result<Artefact> {
        let (program, report) = self.build_source(what, source, options)?;
        Ok(Artefact {
            report,
            image: Image::OpenCl(BuiltProgram::Built(program)),
        })
    }

    fn in_processes(
        &self,
        n: usize,
        exe: &std::path::Path,
        forced: bool,
    ) -> Result<Option<Arc<dyn Compiler>>> {
        super::opencl_pool::pooled(self, n, exe, forced)
    }
}

impl OpenClCompiler {
    pub(crate) fn device_id(&self) -> &str {
        &self.id
    }

    /// NVIDIA's OpenCL builds one program at a time per process, so builds in
    /// separate processes pay, as long as the driver's compute cache hands the
    /// measuring process what a build process assembled: with CUDA_CACHE_DISABLE=1
    /// it assembles every PTX again and the pool gains nothing (xgemm on the
    /// H200: 3.1 configurations/s with the pool, 3.2 without, 15.8 with pool and
    /// cache; see `opencl_pool`).
    pub(crate) fn builds_pay_in_processes(&self) -> bool {
        self.nvidia && std::env::var("CUDA_CACHE_DISABLE").map_or(true, |v| v.trim() != "1")
    }

    pub(crate) fn compile_error(&self, what: &str, log: String, options: &CompileOptions) -> Error {
        let flags = self.flags(options, &mut Vec::new());
        self.build_error(what, &log, "flags", &flags)
    }

    /// A failed build: the compiler's log, then what failed and the flags.
    fn build_error(&self, what: &str, log: &str, failed: &str, flags: &[String]) -> Error {
        Error::Compile {
            toolchain: format!("OpenCL ({})", self.platform),
            what: what.to_string(),
            log: format!("{}\n({failed}: {})", log.trim_end(), flags.join(" ")),
        }
    }

    fn build_source(
        &self,
        what: &str,
        source: &str,
        options: &CompileOptions,
    ) -> Result<(ClProgram, BuildReport)> {
        self.check_arch_specific(what, options)?;
        let mut notes = Vec::new();
        let flags = self.flags(options, &mut notes);
        let started = Instant::now();
        let mut program = ClProgram::create_from_source(&self.context, source)
            .map_err(|e| api("clCreateProgramWithSource", e))?;
        let (built, chatter) =
            super::quiet::stderr_of(|| program.build(&[self.device.id()], &flags.join(" ")));
        notes.extend(
            chatter
                .into_iter()
                .map(|c| format!("the compiler printed: {c}")),
        );
        let mut compile_ms = started.elapsed().as_secs_f64() * 1e3;
        let log = program.get_build_log(self.device.id()).unwrap_or_default();
        if let Err(e) = built {
            let failed = format!("clBuildProgram: {e}; flags");
            return Err(self.build_error(what, &log, &failed, &flags));
        }
        if options.arch_specific {
            let started = Instant::now();
            let (live, ptx, live_log) =
                self.build_arch_specific(what, &program, &flags, &mut notes)?;
            compile_ms += started.elapsed().as_secs_f64() * 1e3;
            // Resources from the re-targeted build alone: the source build's ptxas
            // lines are of the program without its marked instructions.
            let mut kernels = self.resources(&live, &live_log)?;
            self.fill_ptxas_report(&ptx, &flags, &live_log, &mut kernels);
            let report = BuildReport {
                toolchain: Some(Toolchain::OpenCl),
                compiler: self.version.clone(),
                flags,
                compile_ms,
                ptx: Some(ptx),
                kernels,
                log: format!("{}\n{live_log}", log.trim_end()),
                notes,
            }
            .note_ignored_cap(options.max_registers);
            return Ok((live, report));
        }
        let ptx = if self.nvidia {
            program
                .get_binaries()
                .ok()
                .and_then(|b| b.into_iter().next())
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .trim_end_matches('\0')
                        .to_string()
                })
        } else {
            None
        };
        let mut kernels = self.resources(&program, &log)?;
        if let Some(ptx) = ptx.as_deref() {
            self.fill_ptxas_report(ptx, &flags, &log, &mut kernels);
        }
        let report = BuildReport {
            toolchain: Some(Toolchain::OpenCl),
            compiler: self.version.clone(),
            flags,
            compile_ms,
            ptx,
            kernels,
            log,
            notes,
        }
        .note_ignored_cap(options.max_registers);
        Ok((program, report))
    }

    /// An architecture-specific source's marked instructions are NVIDIA PTX that
    /// only NVIDIA's OpenCL build makes live (`build_arch_specific`).
    pub(crate) fn check_arch_specific(&self, what: &str, options: &CompileOptions) -> Result<()> {
        if options.arch_specific && !self.nvidia {
            return Err(Error::Unavailable {
                kernel: what.to_string(),
                toolchain: format!("OpenCL ({})", self.platform),
                reason: "it uses sm_90a's architecture-specific instructions (wgmma) as NVIDIA inline PTX, \
                         made live only in NVIDIA OpenCL's PTX; this platform cannot run them"
                    .into(),
            });
        }
        Ok(())
    }

    /// NVIDIA's OpenCL declares `.target sm_XX` and refuses sm_90a's instructions,
    /// so the source carries them as PTX comments (`opencl_ptx::ARCH_SPECIFIC_MARKER`):
    /// the source build's PTX, un-commented and re-targeted to `sm_XXa`, is built
    /// as the program binary. Returns that program, its PTX and its build log.
    fn build_arch_specific(
        &self,
        what: &str,
        source_build: &ClProgram,
        flags: &[String],
        notes: &mut Vec<String>,
    ) -> Result<(ClProgram, String, String)> {
        let binary = source_build
            .get_binaries()
            .map_err(|e| api("clGetProgramInfo(CL_PROGRAM_BINARIES)", e))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::invalid(format!("{what}: the OpenCL build gave no binary")))?;
        let text = String::from_utf8_lossy(&binary);
        let live =
            super::opencl_ptx::arch_specific(text.trim_end_matches('\0')).map_err(|reason| {
                Error::Unavailable {
                    kernel: what.to_string(),
                    toolchain: format!("OpenCL ({})", self.platform),
                    reason,
                }
            })?;
        let (program, built, log) = self.build_from_binary(live.ptx.as_bytes(), flags)?;
        if let Err(e) = built {
            let failed = format!(
                "clBuildProgram of the PTX re-targeted to {} ({} marked instructions un-commented): {e}; flags",
                live.target, live.uncommented
            );
            return Err(self.build_error(what, &log, &failed, flags));
        }
        notes.push(match live.uncommented {
            0 => format!(
                "PTX re-targeted to {}, but it holds no `{}` marker: no instruction was un-commented",
                live.target,
                super::opencl_ptx::ARCH_SPECIFIC_MARKER.trim_end()
            ),
            n => format!(
                "PTX re-targeted to {}: {n} marked architecture-specific instructions un-commented",
                live.target
            ),
        });
        Ok((program, live.ptx, log))
    }

    /// A program made from `binary` (PTX on NVIDIA) and built with `flags`: the
    /// program, the build's outcome as the "what failed" words, and its log.
    fn build_from_binary(
        &self,
        binary: &[u8],
        flags: &[String],
    ) -> Result<(ClProgram, std::result::Result<(), String>, String)> {
        // SAFETY: the device belongs to the context (both come from this compiler).
        let mut program =
            unsafe { ClProgram::create_from_binary(&self.context, &[self.device.id()], &[binary]) }
                .map_err(|e| api("clCreateProgramWithBinary", e))?;
        let (built, _) =
            super::quiet::stderr_of(|| program.build(&[self.device.id()], &flags.join(" ")));
        let log = program.get_build_log(self.device.id()).unwrap_or_default();
        Ok((program, built.map(|_| ()).map_err(|e| e.to_string()), log))
    }

    /// A build the driver served from its compute cache (PTX it assembled before,
    /// in this process or another, with the same options) prints no ptxas lines,
    /// so registers and spills would go unrecorded. They are then this process's
    /// report of the same build, or, where it made none, the PTX is assembled
    /// once more with a comment that makes it new to the cache, for its log.
    fn fill_ptxas_report(
        &self,
        ptx: &str,
        flags: &[String],
        log: &str,
        kernels: &mut [KernelResources],
    ) {
        if !self.nvidia {
            return;
        }
        let again = || {
            let text = format!(
                "{ptx}\n// gemmlab: assembled again for its ptxas report ({})\n",
                super::cache_nonce()
            );
            match self.build_from_binary(text.as_bytes(), flags) {
                Ok((_, Ok(()), log)) => ptxas::parse_ptxas_log(&log),
                _ => Vec::new(),
            }
        };
        let (target, flags) = (self.target(), flags.join(" "));
        let key = [
            self.version.as_deref().unwrap_or("OpenCL"),
            target,
            &flags,
            ptx,
        ];
        for found in super::ptxas_report(&key, ptxas::parse_ptxas_log(log), again) {
            if let Some(k) = kernels
                .iter_mut()
                .find(|k| k.name == found.name && k.registers.is_none())
            {
                take_ptxas_report(k, &found);
            }
        }
    }

    /// Builds from source and returns the program's binary with the report: what
    /// a build process sends back.
    pub(crate) fn compile_binary(
        &self,
        what: &str,
        source: &str,
        options: &CompileOptions,
    ) -> Result<(BuildReport, Vec<u8>)> {
        let (program, report) = self.build_source(what, source, options)?;
        if options.arch_specific {
            // The re-targeted PTX the program was built from, not the source
            // build's: its marked instructions are live.
            let ptx = report.ptx.clone().ok_or_else(|| {
                Error::invalid(format!("{what}: the re-targeted build kept no PTX"))
            })?;
            return Ok((report, ptx.into_bytes()));
        }
        let binary = program
            .get_binaries()
            .map_err(|e| api("clGetProgramInfo(CL_PROGRAM_BINARIES)", e))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::invalid(format!("{what}: the OpenCL build gave no binary")))?;
        Ok((report, binary))
    }

    /// Builds a binary another process built from source (same device, same
    /// flags) on this context. Registers and spills come from this build's log
    /// where it has them: they are the program this process runs. Its time is
    /// not the compile time (`compile_ms` stays the build process's): it is
    /// spent loading.
    pub(crate) fn build_binary(
        &self,
        what: &str,
        binary: &[u8],
        mut report: BuildReport,
    ) -> Result<(ClProgram, BuildReport)> {
        let (program, built, log) = self.build_from_binary(binary, &report.flags)?;
        if let Err(e) = built {
            let failed = format!("clBuildProgram from the build process's binary: {e}; flags");
            return Err(self.build_error(what, &log, &failed, &report.flags));
        }
        let from_worker = std::mem::take(&mut report.kernels);
        report.kernels = self.resources(&program, &log)?;
        for k in &mut report.kernels {
            let Some(w) = from_worker.iter().find(|w| w.name == k.name) else {
                continue;
            };
            if k.registers.is_none() {
                take_ptxas_report(k, w);
            }
        }
        if !log.trim().is_empty() {
            report.log = format!("{}\n{}", report.log.trim_end(), log);
        }
        Ok((program, report))
    }
}

impl OpenClCompiler {
    /// Builds PTX another front end wrote (NVRTC's, clang's) as this device's program
    /// binary, rewritten for the runtime (`ptx_for_opencl`): the same PTX through
    /// NVIDIA's OpenCL runtime that `sweep jit` loads through the CUDA driver.
    fn build_foreign_ptx(
        &self,
        what: &str,
        ptx: &str,
        max_registers: Option<u32>,
    ) -> Result<(ClProgram, BuildReport)> {
        let unavailable = |reason: String| Error::Unavailable {
            kernel: what.to_string(),
            toolchain: format!("OpenCL ({})", self.platform),
            reason,
        };
        if !self.nvidia {
            return Err(unavailable(
                "only NVIDIA's OpenCL runtime takes PTX as a program binary".into(),
            ));
        }
        let rewritten = super::ptx_for_opencl::for_opencl_runtime(ptx).map_err(unavailable)?;
        let mut notes = vec![format!(
            "PTX of another front end loaded through clCreateProgramWithBinary: {} of its {} \
             entr{} 64-bit parameters declared global buffers (.ptr .global) for the runtime",
            rewritten.buffers,
            rewritten.entries,
            if rewritten.entries == 1 {
                "y's"
            } else {
                "ies'"
            }
        )];
        let options = CompileOptions {
            max_registers,
            ..CompileOptions::default()
        };
        let flags = self.flags(&options, &mut notes);
        let started = Instant::now();
        let (program, built, log) = self.build_from_binary(rewritten.ptx.as_bytes(), &flags)?;
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        if let Err(e) = built {
            let failed = format!("clBuildProgram of another front end's PTX: {e}; flags");
            return Err(self.build_error(what, &log, &failed, &flags));
        }
        let mut kernels = self.resources(&program, &log)?;
        self.fill_ptxas_report(&rewritten.ptx, &flags, &log, &mut kernels);
        let report = BuildReport {
            toolchain: Some(Toolchain::OpenCl),
            compiler: self.version.clone(),
            flags,
            compile_ms,
            ptx: Some(rewritten.ptx),
            kernels,
            log,
            notes,
        }
        .note_ignored_cap(max_registers);
        Ok((program, report))
    }
}

pub struct OpenClBackend {
    info: DeviceInfo,
    compiler: Arc<OpenClCompiler>,
    context: Arc<Context>,
    queue: CommandQueue,
    next_id: u64,
    buffers: HashMap<u64, Mem>,
    programs: HashMap<u64, Built>,
}

impl OpenClBackend {
    /// Opens the device with the given "opencl:P:D" id.
    pub fn open(id: &str) -> Result<Self> {
        let located = all_devices()?;
        let l = located
            .iter()
            .find(|l| format!("opencl:{}:{}", l.platform_index, l.device_index) == id)
            .ok_or_else(|| Error::NoSuchDevice {
                spec: id.to_string(),
                available: located
                    .iter()
                    .map(|l| {
                        let i = describe(l);
                        format!("  {}  {}", i.id, i.name)
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            })?;
        let info = describe(l);
        let device = l.device;
        let context =
            Arc::new(Context::from_device(&device).map_err(|e| api("clCreateContext", e))?);
        #[allow(deprecated)]
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .or_else(|_| CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE))
                .map_err(|e| api("clCreateCommandQueue", e))?;
        let compiler = Arc::new(OpenClCompiler {
            context: Arc::clone(&context),
            device,
            id: info.id.clone(),
            nvidia: info.is_nvidia(),
            platform: info.platform.clone(),
            name: info.name.clone(),
            version: info.compiler_version.as_ref().map(|c| {
                format!(
                    "{c} ({}, driver {})",
                    info.platform,
                    info.driver_version.as_deref().unwrap_or("unknown")
                )
            }),
        });
        Ok(OpenClBackend {
            info,
            compiler,
            context,
            queue,
            next_id: 1,
            buffers: HashMap::new(),
            programs: HashMap::new(),
        })
    }

    /// The compiler as its own type (a build process serves builds with it).
    pub(crate) fn opencl_compiler(&self) -> Arc<OpenClCompiler> {
        Arc::clone(&self.compiler)
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A built program's kernels created and the program kept under a new id.
    fn keep(&mut self, program: ClProgram, report: BuildReport) -> Result<(Program, BuildReport)> {
        let mut kernels = HashMap::new();
        for k in &report.kernels {
            let kernel = Kernel::create(&program, &k.name).map_err(|e| api("clCreateKernel", e))?;
            kernels.insert(k.name.clone(), kernel);
        }
        let id = self.id();
        self.programs.insert(id, Built { program, kernels });
        Ok((Program { id }, report))
    }

    /// A failed kernel enqueue: out of memory as such, else the call and its geometry.
    fn enqueue_err(&self, e: ClError, l: &Launch<'_>) -> Error {
        if matches!(e.0, CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES) {
            return self.mem_err(
                "clEnqueueNDRangeKernel",
                e,
                format!("launching {}", l.kernel),
            );
        }
        Error::Api {
            toolchain: "OpenCL".into(),
            call: "clEnqueueNDRangeKernel".into(),
            message: format!(
                "{} with global {:?} local {:?}: {e} (code {})",
                l.kernel, l.geometry.global, l.geometry.local, e.0
            ),
        }
    }

    fn mem_err(&self, call: &str, e: ClError, what: String) -> Error {
        if matches!(
            e.0,
            CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES | CL_OUT_OF_HOST_MEMORY
        ) {
            Error::OutOfMemory {
                device: self.info.label(),
                what: format!("{what} ({call}: {e})"),
            }
        } else {
            api(call, e)
        }
    }
}

/// Enqueues a kernel with no event: `clEnqueueNDRangeKernel` with a null event
/// pointer, which opencl3's wrapper does not offer (it always asks for one).
fn enqueue_unobserved(
    queue: &CommandQueue,
    k: &Kernel,
    dims: u32,
    global: &[usize; 3],
    local: &[usize; 3],
) -> std::result::Result<(), ClError> {
    let lib = cl3::load_library()
        .as_ref()
        .map_err(|_| ClError(cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED))?;
    // The queue and kernel are live handles, the sizes outlive the call, and a
    // null event pointer is allowed by the OpenCL specification.
    let status = lib.clEnqueueNDRangeKernel(
        queue.get(),
        k.get(),
        dims,
        ptr::null(),
        global.as_ptr(),
        local.as_ptr(),
        0,
        ptr::null(),
        ptr::null_mut(),
    );
    match status {
        Some(0) => Ok(()),
        Some(code) => Err(ClError(code)),
        None => Err(ClError(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)),
    }
}

/// Sets a kernel's arguments: scalars by value with their exact C size, buffers as
/// the `cl_mem` handles of `mems`, in order.
fn set_args(k: &Kernel, mems: &[cl_mem], args: &[Arg]) -> Result<()> {
    let declared = k.num_args().map_err(|e| api("clGetKernelInfo", e))? as usize;
    if declared != args.len() {
        return Err(Error::invalid(format!(
            "the kernel takes {declared} arguments, the launch gives {}",
            args.len()
        )));
    }
    let mut mem_iter = mems.iter();
    for (i, a) in args.iter().enumerate() {
        let i = i as u32;
        // SAFETY: each argument is passed by value with its exact C size; buffers as
        // cl_mem; the index is below the kernel's count (checked above).
        let r = unsafe {
            match a {
                Arg::I32(v) => k.set_arg(i, v),
                Arg::U32(v) => k.set_arg(i, v),
                Arg::F32(v) => k.set_arg(i, v),
                Arg::F64(v) => k.set_arg(i, v),
                Arg::Buf(_) => match mem_iter.next() {
                    Some(m) => k.set_arg(i, m),
                    None => return Err(Error::invalid("internal: buffer argument list mismatch")),
                },
                Arg::Local(bytes) => k.set_arg_local_buffer(i, (*bytes).max(1)),
            }
        };
        r.map_err(|e| {
            Error::invalid(format!(
                "argument {i}: clSetKernelArg refused a {} ({e}): the kernel declares another type or size",
                match a {
                    Arg::I32(_) => "32-bit integer",
                    Arg::U32(_) => "32-bit unsigned integer",
                    Arg::F32(_) => "float",
                    Arg::F64(_) => "double",
                    Arg::Buf(_) => "buffer",
                    Arg::Local(_) => "__local buffer",
                }
            ))
        })?;
    }
    Ok(())
}

/// A kernel's parameters from OpenCL's argument info: the address space always
/// where the implementation tells it, names and types where the program kept them.
fn params_of(k: &Kernel) -> Option<Vec<KernelParam>> {
    use opencl3::kernel::{
        CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_LOCAL,
    };
    let n = k.num_args().ok()?;
    Some(
        (0..n)
            .map(|i| KernelParam {
                name: k.get_arg_name(i).ok().filter(|s| !s.is_empty()),
                space: k.get_arg_address_qualifier(i).ok().map(|q| match q {
                    CL_KERNEL_ARG_ADDRESS_GLOBAL => "global",
                    CL_KERNEL_ARG_ADDRESS_LOCAL => "local",
                    CL_KERNEL_ARG_ADDRESS_CONSTANT => "constant",
                    _ => "private",
                }),
                type_name: k.get_arg_type_name(i).ok().filter(|s| !s.is_empty()),
                bytes: None,
            })
            .collect(),
    )
}

impl Backend for OpenClBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compiler(&self) -> Arc<dyn Compiler> {
        self.compiler.clone()
    }

    fn load(&mut self, what: &str, artefact: Artefact) -> Result<(Program, BuildReport)> {
        #[allow(irrefutable_let_patterns)] // without the cuda feature OpenCL is the only image
        let Image::OpenCl(built) = artefact.image
        else {
            return Err(Error::invalid(
                "internal: an artefact of another toolchain given to OpenCL",
            ));
        };
        let (program, report) = match built {
            BuiltProgram::Built(p) => (p, artefact.report),
            BuiltProgram::Binary(b) => self.compiler.build_binary(what, &b, artefact.report)?,
        };
        self.keep(program, report)
    }

    fn load_ptx(
        &mut self,
        what: &str,
        ptx: &str,
        max_registers: Option<u32>,
    ) -> Result<(Program, BuildReport)> {
        let (program, report) = self.compiler.build_foreign_ptx(what, ptx, max_registers)?;
        self.keep(program, report)
    }

    fn release_program(&mut self, program: Program) {
        if let Some(b) = self.programs.remove(&program.id) {
            drop(b.kernels);
            drop(b.program);
        }
    }

    fn alloc(&mut self, elem: Elem, len: usize) -> Result<Buffer> {
        let n = len.max(1);
        let what = format!("a buffer of {len} {elem:?}");
        // SAFETY: no host pointer is given; the buffer is owned by this backend.
        let mem = unsafe {
            match elem {
                Elem::F32 => {
                    ClBuffer::<f32>::create(&self.context, CL_MEM_READ_WRITE, n, ptr::null_mut())
                        .map(Mem::F32)
                }
                Elem::F64 => {
                    ClBuffer::<f64>::create(&self.context, CL_MEM_READ_WRITE, n, ptr::null_mut())
                        .map(Mem::F64)
                }
                Elem::I32 => {
                    ClBuffer::<i32>::create(&self.context, CL_MEM_READ_WRITE, n, ptr::null_mut())
                        .map(Mem::I32)
                }
                Elem::U32 => {
                    ClBuffer::<u32>::create(&self.context, CL_MEM_READ_WRITE, n, ptr::null_mut())
                        .map(Mem::U32)
                }
            }
        }
        .map_err(|e| self.mem_err("clCreateBuffer", e, what))?;
        let id = self.id();
        self.buffers.insert(id, mem);
        Ok(Buffer { id, len, elem })
    }

    fn view(&mut self, parent: &Buffer, offset: usize, len: usize) -> Result<Buffer> {
        if let Some(why) = super::view_misfit(parent, offset, len) {
            return Err(Error::invalid(format!("internal: {why}")));
        }
        let mem = self
            .buffers
            .get(&parent.id)
            .ok_or_else(|| Error::invalid("buffer does not belong to this OpenCL backend"))?;
        let n = len.max(1).min(parent.len - offset);
        // SAFETY: a region inside the parent (checked above), aligned to every
        // device's base address alignment; the parent outlives it in OpenCL's
        // reference count.
        let sub = unsafe {
            match mem {
                Mem::F32(b) => b
                    .create_sub_buffer(CL_MEM_READ_WRITE, offset, n)
                    .map(Mem::F32),
                Mem::F64(b) => b
                    .create_sub_buffer(CL_MEM_READ_WRITE, offset, n)
                    .map(Mem::F64),
                Mem::I32(b) => b
                    .create_sub_buffer(CL_MEM_READ_WRITE, offset, n)
                    .map(Mem::I32),
                Mem::U32(b) => b
                    .create_sub_buffer(CL_MEM_READ_WRITE, offset, n)
                    .map(Mem::U32),
            }
        }
        .map_err(|e| self.mem_err("clCreateSubBuffer", e, format!("a view of {len} elements")))?;
        let id = self.id();
        self.buffers.insert(id, sub);
        Ok(Buffer {
            id,
            len,
            elem: parent.elem,
        })
    }

    fn kernel_params(&mut self, program: &Program, entry: &str) -> Option<Vec<KernelParam>> {
        let built = self.programs.get(&program.id)?;
        params_of(built.kernels.get(entry)?)
    }

    fn free(&mut self, buffer: Buffer) {
        self.buffers.remove(&buffer.id);
    }

    fn upload(&mut self, buffer: &Buffer, data: HostData<'_>) -> Result<()> {
        check_len(buffer, data.elem(), data.len())?;
        if data.len() == 0 {
            return Ok(());
        }
        let mem = self
            .buffers
            .get_mut(&buffer.id)
            .ok_or_else(|| Error::invalid("buffer does not belong to this OpenCL backend"))?;
        // SAFETY: blocking write of a host slice of exactly the buffer's length.
        let r = unsafe {
            match (mem, data) {
                (Mem::F32(b), HostData::F32(s)) => {
                    self.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                (Mem::F64(b), HostData::F64(s)) => {
                    self.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                (Mem::I32(b), HostData::I32(s)) => {
                    self.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                (Mem::U32(b), HostData::U32(s)) => {
                    self.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                _ => return Err(Error::invalid("element type mismatch")),
            }
        };
        r.map(|_| ()).map_err(|e| {
            self.mem_err(
                "clEnqueueWriteBuffer",
                e,
                format!("uploading {} elements", buffer.len),
            )
        })
    }

    fn download(&mut self, buffer: &Buffer, data: HostDataMut<'_>) -> Result<()> {
        check_len(buffer, data.elem(), data.len())?;
        if data.len() == 0 {
            return Ok(());
        }
        let mem = self
            .buffers
            .get(&buffer.id)
            .ok_or_else(|| Error::invalid("buffer does not belong to this OpenCL backend"))?;
        // SAFETY: blocking read into a host slice of exactly the buffer's length.
        let r = unsafe {
            match (mem, data) {
                (Mem::F32(b), HostDataMut::F32(s)) => {
                    self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                (Mem::F64(b), HostDataMut::F64(s)) => {
                    self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                (Mem::I32(b), HostDataMut::I32(s)) => {
                    self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                (Mem::U32(b), HostDataMut::U32(s)) => {
                    self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, s, &[])
                }
                _ => return Err(Error::invalid("element type mismatch")),
            }
        };
        r.map(|_| ()).map_err(|e| api("clEnqueueReadBuffer", e))
    }

    fn fill(&mut self, buffer: &Buffer, value: f64) -> Result<()> {
        if buffer.len == 0 {
            return Ok(());
        }
        let bytes = buffer.len * buffer.elem.size();
        let mem = self
            .buffers
            .get_mut(&buffer.id)
            .ok_or_else(|| Error::invalid("buffer does not belong to this OpenCL backend"))?;
        // SAFETY: the pattern and size match the buffer's element type and length.
        let r = unsafe {
            match mem {
                Mem::F32(b) => {
                    self.queue
                        .enqueue_fill_buffer(b, &[super::fill_f32(value)], 0, bytes, &[])
                }
                Mem::F64(b) => self.queue.enqueue_fill_buffer(b, &[value], 0, bytes, &[]),
                Mem::I32(b) => self
                    .queue
                    .enqueue_fill_buffer(b, &[value as i32], 0, bytes, &[]),
                Mem::U32(b) => self
                    .queue
                    .enqueue_fill_buffer(b, &[value as u32], 0, bytes, &[]),
            }
        };
        let event = r.map_err(|e| api("clEnqueueFillBuffer", e))?;
        event.wait().map_err(|e| api("clWaitForEvents", e))
    }

    fn launch_sequence(&mut self, launches: &[Launch<'_>], count: usize) -> Result<u64> {
        // Each launch's kernel, work dimensions and buffer handles, before anything is queued.
        let mut ready = Vec::with_capacity(launches.len());
        for l in launches {
            l.geometry.validate()?;
            let built = self
                .programs
                .get(&l.program.id)
                .ok_or_else(|| Error::invalid("program does not belong to this OpenCL backend"))?;
            let k = built.kernels.get(l.kernel).ok_or_else(|| {
                let mut names: Vec<&String> = built.kernels.keys().collect();
                names.sort();
                Error::invalid(format!(
                    "the program has no kernel '{}' (it has {names:?})",
                    l.kernel
                ))
            })?;
            let mut mems = Vec::with_capacity(l.args.len());
            for a in l.args {
                if let Arg::Buf(b) = a {
                    let m = self.buffers.get(&b.id).ok_or_else(|| {
                        Error::invalid("buffer does not belong to this OpenCL backend")
                    })?;
                    mems.push(m.raw());
                }
            }
            let g = l.geometry;
            let dims = if g.global[2] > 1 || g.local[2] > 1 {
                3
            } else {
                2
            };
            ready.push((k, mems, dims));
        }
        // An enqueue takes a kernel's arguments as they are set then. A kernel that
        // stands once in the sequence has them set once; one that stands twice (the
        // same pack for A and for B) has them set before each of its enqueues.
        let twice: Vec<bool> = (ready.iter())
            .map(|(k, ..)| ready.iter().filter(|(o, ..)| o.get() == k.get()).count() > 1)
            .collect();
        for (((k, mems, _), l), _) in ready.iter().zip(launches).zip(&twice).filter(|x| !x.1) {
            set_args(k, mems, l.args)?;
        }
        // A sequence is timed from the start of its first launch to the end of its
        // last: the OpenCL counterpart of one pair of CUDA events around it. The
        // launches between them ask for no event, as a caller's would not: on a
        // profiling queue each event is a timestamped command the runtime records.
        let total = launches.len() * count.max(1);
        let mut first = None;
        let mut last = None;
        let mut at = 0;
        for _ in 0..count.max(1) {
            for (((k, mems, dims), l), twice) in ready.iter().zip(launches).zip(&twice) {
                if *twice {
                    set_args(k, mems, l.args)?;
                }
                let g = l.geometry;
                let observed = at == 0 || at + 1 == total;
                at += 1;
                if !observed {
                    enqueue_unobserved(&self.queue, k, *dims, &g.global, &g.local)
                        .map_err(|e| self.enqueue_err(e, l))?;
                    continue;
                }
                // SAFETY: the arguments set above stay bound to the kernel object until
                // the enqueue takes them; global and local sizes live in `launches`.
                let event = unsafe {
                    self.queue.enqueue_nd_range_kernel(
                        k.get(),
                        *dims,
                        ptr::null(),
                        g.global.as_ptr(),
                        g.local.as_ptr(),
                        &[],
                    )
                }
                .map_err(|e| self.enqueue_err(e, l))?;
                if first.is_none() {
                    first = Some(event);
                } else {
                    last = Some(event);
                }
            }
        }
        let first = first.ok_or_else(|| Error::invalid("no launches to run"))?;
        let last = last.as_ref().unwrap_or(&first);
        last.wait().map_err(|e| api("clWaitForEvents", e))?;
        let start = first
            .profiling_command_start()
            .map_err(|e| api("clGetEventProfilingInfo", e))?;
        let end = last
            .profiling_command_end()
            .map_err(|e| api("clGetEventProfilingInfo", e))?;
        Ok(end.saturating_sub(start))
    }
}
