//! CUDA backend: cudarc's driver and cuBLAS bindings and gemmlab's own NVRTC
//! loader (`super::nvrtc`), all loaded at run time, so gemmlab builds and starts
//! on a machine without CUDA.
//!
//! NVRTC compiles for the device's real architecture (sm_XX) with
//! `--ptxas-options=-v`, so its log carries the same ptxas resource lines as
//! NVIDIA OpenCL's; the CUBIN is loaded and cuFuncGetAttribute cross-checks
//! registers and memory. cudarc panics when a library is missing, so every
//! entry point checks presence first and returns `Error::CudaUnavailable`.
//!
//! Old drivers. Kepler's last driver is the 470 series (CUDA 11.4), and cudarc
//! is built against the CUDA 13.0 API, where it panics ("Missing symbol") on an
//! entry point the driver lacks. Every driver and cuBLAS entry point this file
//! reaches is listed in `AUDITED` with the CUDA release that introduced it; the
//! one newer than 11.4, `cuEventElapsedTime_v2` (CUDA 12.8), is looked up at run
//! time with `cuEventElapsedTime` as the fallback (`event_elapsed`). Calls newer
//! than 11.4 that only a newer GPU reaches are listed in `GUARDED` with their
//! guard. A test checks that every call in this file is in one of the lists.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Arc;
use std::time::Instant;

use cudarc::cublas::sys as cublas_sys;
use cudarc::driver::result as drv;
use cudarc::driver::sys;

use super::clang::ClangCompiler;
use super::nvrtc::{first_symbol, Arch, MissingCompiler, Nvrtc, NvrtcCompiler, STATIC_SHARED_MAX};
use super::{
    check_len, ptxas, Arg, Artefact, Backend, Buffer, BuildReport, Compiler, DeviceInfo,
    DeviceKind, Elem, GemmCall, HostData, HostDataMut, HostF32, HostF64, HostVec, Image,
    KernelResources, Launch, Locked, Program, Toolchain,
};
use crate::error::{Error, Result};

fn driver_err(call: &str, e: drv::DriverError) -> Error {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error::Api {
        toolchain: "CUDA".into(),
        call: call.into(),
        message: format!("{name}: {text}"),
    }
}

/// Checks that libcuda can be loaded and initialised.
fn ensure_driver() -> Result<()> {
    // SAFETY: only tries to dlopen the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "libcuda.so.1 not found (no NVIDIA driver on this machine)".into(),
        ));
    }
    drv::init().map_err(|e| Error::CudaUnavailable(format!("cuInit failed: {:?}", e.0)))
}

/// Every driver and cuBLAS entry point this backend calls (directly, or through
/// the cudarc wrapper named after it), with the CUDA release that introduced it.
/// Kepler's newest driver is the 470 series, CUDA 11.4: anything newer must be
/// looked up at run time with a fallback, as `event_elapsed` does.
pub const AUDITED: &[(&str, &str, (u32, u32))] = &[
    // (what this file calls, the symbol it resolves to, introduced in CUDA)
    ("init", "cuInit", (2, 0)),
    ("device::get_count", "cuDeviceGetCount", (2, 0)),
    ("device::get", "cuDeviceGet", (2, 0)),
    ("device::get_name", "cuDeviceGetName", (2, 0)),
    ("device::get_attribute", "cuDeviceGetAttribute", (2, 0)),
    ("device::total_mem", "cuDeviceTotalMem_v2", (3, 2)),
    ("cuDriverGetVersion", "cuDriverGetVersion", (2, 2)),
    ("cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId", (4, 1)),
    ("primary_ctx::retain", "cuDevicePrimaryCtxRetain", (7, 0)),
    (
        "primary_ctx::release",
        "cuDevicePrimaryCtxRelease_v2",
        (11, 0),
    ),
    ("ctx::set_current", "cuCtxSetCurrent", (4, 0)),
    ("stream::create", "cuStreamCreate", (2, 0)),
    ("stream::synchronize", "cuStreamSynchronize", (2, 0)),
    ("stream::destroy", "cuStreamDestroy_v2", (4, 0)),
    ("event::create", "cuEventCreate", (2, 0)),
    ("event::record", "cuEventRecord", (2, 0)),
    ("event::synchronize", "cuEventSynchronize", (2, 0)),
    ("event::destroy", "cuEventDestroy_v2", (4, 0)),
    // cudarc's event::elapsed calls cuEventElapsedTime_v2 (CUDA 12.8) under
    // cuda-13000: not called; event_elapsed() falls back to cuEventElapsedTime.
    ("event_elapsed", "cuEventElapsedTime", (2, 0)),
    ("module::load_data", "cuModuleLoadData", (2, 0)),
    ("cuModuleLoadDataEx", "cuModuleLoadDataEx", (2, 1)),
    ("module::get_function", "cuModuleGetFunction", (2, 0)),
    ("module::unload", "cuModuleUnload", (2, 0)),
    (
        "function::get_function_attribute",
        "cuFuncGetAttribute",
        (2, 2),
    ),
    (
        "function::set_function_attribute",
        "cuFuncSetAttribute",
        (9, 0),
    ),
    ("malloc_sync", "cuMemAlloc_v2", (3, 2)),
    ("free_sync", "cuMemFree_v2", (3, 2)),
    ("memcpy_htod_sync", "cuMemcpyHtoD_v2", (3, 2)),
    ("memcpy_dtoh_sync", "cuMemcpyDtoH_v2", (3, 2)),
    ("malloc_host", "cuMemHostAlloc", (2, 2)),
    ("free_host", "cuMemFreeHost", (2, 0)),
    ("cuMemsetD32Async", "cuMemsetD32Async", (3, 2)),
    ("mem_get_info", "cuMemGetInfo_v2", (3, 2)),
    ("launch_kernel", "cuLaunchKernel", (4, 0)),
    ("error_name", "cuGetErrorName", (6, 0)),
    ("error_string", "cuGetErrorString", (6, 0)),
    // cuBLAS, libcublas.so.11 on a CUDA 11 system (cudarc's candidates include it).
    ("create_handle", "cublasCreate_v2", (4, 0)),
    ("set_stream", "cublasSetStream_v2", (4, 0)),
    ("cublasSetMathMode", "cublasSetMathMode", (9, 0)),
    ("sgemm", "cublasSgemm_v2", (4, 0)),
    ("dgemm", "cublasDgemm_v2", (4, 0)),
    ("cublasGetVersion_v2", "cublasGetVersion_v2", (4, 0)),
    ("destroy_handle", "cublasDestroy_v2", (4, 0)),
];

type ElapsedFn = unsafe extern "C" fn(*mut f32, sys::CUevent, sys::CUevent) -> sys::CUresult;

/// cuEventElapsedTime_v2 where the driver has it (CUDA 12.8 and later), else
/// cuEventElapsedTime (every driver, Kepler's 470 series included). cudarc's own
/// `event::elapsed` calls only the first and panics on a driver without it.
fn event_elapsed(start: sys::CUevent, stop: sys::CUevent) -> Result<f32> {
    static ELAPSED: std::sync::OnceLock<Option<ElapsedFn>> = std::sync::OnceLock::new();
    let f = ELAPSED.get_or_init(|| {
        // SAFETY: libcuda is loaded (ensure_driver ran before any backend exists);
        // both symbols have this prototype.
        let lib = unsafe { sys::culib() };
        first_symbol(&["cuEventElapsedTime_v2", "cuEventElapsedTime"], |name| {
            unsafe { lib.get::<ElapsedFn>(name) }.ok().map(|s| *s)
        })
        .map(|(f, _)| f)
    });
    let f = f.ok_or_else(|| Error::Api {
        toolchain: "CUDA".into(),
        call: "cuEventElapsedTime".into(),
        message: "the driver has neither cuEventElapsedTime_v2 nor cuEventElapsedTime".into(),
    })?;
    let mut ms = 0f32;
    // SAFETY: both events were recorded on this context and the stop event synchronised.
    let r = unsafe { f(&mut ms, start, stop) };
    r.result()
        .map_err(|e| driver_err("cuEventElapsedTime", e))?;
    Ok(ms)
}

/// The NVIDIA kernel-module version ("580.159.04"), read where Linux exposes it.
fn kernel_driver_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    let line = text.lines().next()?;
    line.split_whitespace()
        .find(|w| {
            w.chars().filter(|c| *c == '.').count() >= 1
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
        .map(str::to_string)
}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Option<i64> {
    // SAFETY: dev is a valid device ordinal handle from cuDeviceGet.
    unsafe { drv::device::get_attribute(dev, a) }
        .ok()
        .map(i64::from)
}

/// "0000:3b:00.0": lets NVML find the same GPU for clock readings.
fn pci_bus_id(dev: sys::CUdevice) -> Option<String> {
    let mut buf = [0 as std::ffi::c_char; 32];
    // One byte short of the buffer, so the string always ends in NUL.
    let len = (buf.len() - 1) as i32;
    // SAFETY: valid device handle; the driver writes at most `len` bytes into `buf`.
    let r = unsafe { sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), len, dev) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    // SAFETY: `buf` is NUL-terminated (zeroed, and the driver wrote less than all of it).
    let text = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
    super::parse_pci_bus_id(&text).map(super::format_pci_bus_id)
}

pub fn enumerate() -> Result<Vec<DeviceInfo>> {
    ensure_driver()?;
    let count = drv::device::get_count().map_err(|e| driver_err("cuDeviceGetCount", e))?;
    let mut api_version = 0;
    // SAFETY: library present and initialised; out-pointer is valid.
    unsafe { sys::cuDriverGetVersion(&mut api_version) };
    let nvrtc = Some(match Nvrtc::default_library() {
        Ok(n) => n.label(),
        Err(_) => "NVRTC not found (libnvrtc.so)".into(),
    });
    let mut out = Vec::new();
    for i in 0..count {
        let dev = drv::device::get(i).map_err(|e| driver_err("cuDeviceGet", e))?;
        use sys::CUdevice_attribute::*;
        let a = |x| attr(dev, x);
        let cc = match (
            a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        ) {
            (Some(x), Some(y)) => Some((x as u32, y as u32)),
            _ => None,
        };
        out.push(DeviceInfo {
            toolchain: Toolchain::Cuda,
            id: format!("cuda:{i}"),
            name: drv::device::get_name(dev).unwrap_or_default(),
            vendor: "NVIDIA".into(),
            platform: "CUDA driver".into(),
            kind: DeviceKind::Gpu,
            driver_version: kernel_driver_version(),
            runtime_version: Some(format!(
                "CUDA driver API {}.{}",
                api_version / 1000,
                (api_version % 1000) / 10
            )),
            compiler_version: nvrtc.clone(),
            compute_capability: cc,
            compute_units: a(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map(|v| v as u32),
            clock_mhz: a(CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|khz| (khz / 1000) as u32),
            // SAFETY: valid device handle.
            global_mem_bytes: unsafe { drv::device::total_mem(dev) }
                .ok()
                .map(|v| v as u64),
            local_mem_bytes: a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK).map(|v| v as u64),
            local_mem_launch_bytes: a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
                .map(|v| v as u64),
            shared_mem_per_sm_bytes: a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
                .map(|v| v as u64),
            max_work_group_size: a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).map(|v| v as u64),
            registers_per_block: a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK).map(|v| v as u32),
            registers_per_sm: a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)
                .map(|v| v as u32),
            max_threads_per_sm: a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
                .map(|v| v as u32),
            max_blocks_per_sm: a(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
                .map(|v| v as u32),
            warp_size: a(CU_DEVICE_ATTRIBUTE_WARP_SIZE).map(|v| v as u32),
            l2_cache_bytes: a(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).map(|v| v as u64),
            memory_bandwidth_gbs: match (
                a(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                a(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
            ) {
                // kHz x 2 transfers x bytes per transfer.
                (Some(khz), Some(bits)) if khz > 0 && bits > 0 => {
                    Some(2.0 * khz as f64 * 1e3 * bits as f64 / 8.0 * 1e-9)
                }
                _ => None,
            },
            pci_bus_id: pci_bus_id(dev),
            dependent_launch: cc.is_some_and(|(major, _)| major >= 9) && dependent_launch_wanted(),
        });
    }
    Ok(out)
}

fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid(format!("{what} contains a NUL byte")))
}

/// The JIT's outcome: the module or the driver's error, with its info and error logs.
type Jit = (
    std::result::Result<sys::CUmodule, sys::CUresult>,
    String,
    String,
);

/// Loads PTX through the driver's JIT (in the bound context) with its verbose log.
fn jit_load(ptx: &str, max_registers: Option<u32>) -> Result<Jit> {
    let image = c_string("the PTX", ptx)?;
    const LOG: usize = 64 * 1024;
    let mut info_log = vec![0u8; LOG];
    let mut error_log = vec![0u8; LOG];
    use sys::CUjit_option::*;
    let mut options = vec![
        CU_JIT_INFO_LOG_BUFFER,
        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CU_JIT_ERROR_LOG_BUFFER,
        CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        CU_JIT_LOG_VERBOSE,
    ];
    // Option values are passed by value in pointer-sized slots.
    let mut values: Vec<*mut c_void> = vec![
        info_log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(LOG),
        error_log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(LOG),
        std::ptr::without_provenance_mut(1),
    ];
    if let Some(r) = max_registers {
        options.push(CU_JIT_MAX_REGISTERS);
        values.push(std::ptr::without_provenance_mut(r as usize));
    }
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: the image is NUL-terminated PTX; log buffers outlive the call.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    let text = |b: &[u8]| {
        String::from_utf8_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
            .into_owned()
    };
    let outcome = match r {
        sys::CUresult::CUDA_SUCCESS => Ok(module),
        r => Err(r),
    };
    Ok((outcome, text(&info_log), text(&error_log)))
}

/// Entry names declared in PTX (`.entry name(`).
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let l = l.trim();
            let i = l.find(".entry ")?;
            let rest = l[i + 7..].trim();
            let end = rest
                .find(|c: char| c == '(' || c.is_whitespace())
                .unwrap_or(rest.len());
            Some(rest[..end].to_string())
        })
        .filter(|n| !n.is_empty())
        .collect()
}

struct Module {
    module: sys::CUmodule,
    functions: HashMap<String, sys::CUfunction>,
    /// Its PTX declares `.extern .shared` (memory taken at launch). PTX of a twin
    /// that declares its tiles (NVIDIA OpenCL's, through the JIT) takes none, so a
    /// launch passes it no `launch_local`.
    launch_local: bool,
    /// Its kernels are launched with programmatic stream serialization
    /// ([`DeviceInfo::dependent_launch`] and [`waits_for_previous_grid`]).
    dependent: bool,
    /// The carveout preference last set on its kernels (`Geometry::carveout`), so
    /// a launch without one puts the driver's default back.
    carveout: std::cell::Cell<Option<u32>>,
}

/// The shared-memory carveout preference a launch asks for, set on `f` where it
/// differs from what `module` last set: a percentage, or the driver's default (-1).
fn apply_carveout(
    module: &Module,
    f: sys::CUfunction,
    kernel: &str,
    wanted: Option<u32>,
) -> Result<()> {
    if module.carveout.get() == wanted {
        return Ok(());
    }
    let value = wanted.map_or(-1, |p| p.min(100) as i32);
    // SAFETY: f belongs to a loaded module of this context.
    unsafe {
        drv::function::set_function_attribute(
            f,
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            value,
        )
    }
    .map_err(|e| {
        driver_err(
            &format!("cuFuncSetAttribute({kernel}, carveout {value})"),
            e,
        )
    })?;
    module.carveout.set(wanted);
    Ok(())
}

/// Whether a module's kernels wait for the previous grid before touching memory
/// (the prelude's `GEMMLAB_WAIT_PREVIOUS_GRID`): only such a kernel may be
/// launched before its predecessor has finished. A module known only by its
/// CUBIN is not.
fn waits_for_previous_grid(ptx: Option<&str>) -> bool {
    ptx.is_some_and(|p| p.contains("griddepcontrol.wait"))
}

/// Programmatic dependent launch unless `GEMMLAB_PDL=0` (to measure without it).
fn dependent_launch_wanted() -> bool {
    std::env::var("GEMMLAB_PDL").map_or(true, |v| v.trim() != "0")
}

/// Whether a module's PTX takes shared memory at launch; a module known only by
/// its CUBIN takes what the launch asks.
fn takes_launch_local(ptx: Option<&str>) -> bool {
    ptx.is_none_or(|p| p.contains(".extern .shared"))
}

pub struct CudaBackend {
    info: DeviceInfo,
    device: sys::CUdevice,
    context: sys::CUcontext,
    stream: sys::CUstream,
    start: sys::CUevent,
    stop: sys::CUevent,
    compiler: Arc<dyn Compiler>,
    next_id: u64,
    buffers: HashMap<u64, sys::CUdeviceptr>,
    /// Views into buffers (guard zones): pointers into an allocation, never freed.
    views: HashMap<u64, sys::CUdeviceptr>,
    modules: HashMap<u64, Module>,
    cublas: Option<cublas_sys::cublasHandle_t>,
    /// Whether this session measures cuBLAS: the CUDA toolchain's does; clang's
    /// sessions on the same device leave it to that one.
    blas: bool,
}

impl CudaBackend {
    /// Opens "cuda:N" with the default NVRTC.
    pub fn open(id: &str) -> Result<Self> {
        Self::open_with(id, None)
    }

    /// Opens "cuda:N", compiling with `nvrtc` (the default library when None). An
    /// NVRTC that cannot compile for the device's architecture is an error that
    /// lists the architectures it can.
    pub fn open_with(id: &str, nvrtc: Option<Arc<Nvrtc>>) -> Result<Self> {
        Self::open_for(id, Toolchain::Cuda, nvrtc, None)
    }

    /// Opens "cuda:N" for a toolchain that runs on the CUDA driver: CUDA itself
    /// (NVRTC, `nvrtc` or the default library) or a clang toolchain (clang and
    /// the assembler `assembler` names: a ptxas release, "jit", or the newest
    /// cached ptxas for the device).
    pub fn open_for(
        id: &str,
        toolchain: Toolchain,
        nvrtc: Option<Arc<Nvrtc>>,
        assembler: Option<&str>,
    ) -> Result<Self> {
        let devices = enumerate()?;
        let info = devices
            .iter()
            .find(|d| d.id == id)
            .cloned()
            .ok_or_else(|| Error::NoSuchDevice {
                spec: id.to_string(),
                available: devices
                    .iter()
                    .map(|d| format!("  {}  {}", d.id, d.name))
                    .collect::<Vec<_>>()
                    .join("\n"),
            })?;
        let ordinal: i32 = id
            .trim_start_matches("cuda:")
            .parse()
            .map_err(|_| Error::invalid(format!("bad CUDA id {id}")))?;
        let device = drv::device::get(ordinal).map_err(|e| driver_err("cuDeviceGet", e))?;
        // SAFETY: valid device; the primary context is released in Drop.
        let context = unsafe { drv::primary_ctx::retain(device) }
            .map_err(|e| driver_err("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: context just retained.
        unsafe { drv::ctx::set_current(context) }.map_err(|e| driver_err("cuCtxSetCurrent", e))?;
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking)
            .map_err(|e| driver_err("cuStreamCreate", e))?;
        let start = drv::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map_err(|e| driver_err("cuEventCreate", e))?;
        let stop = drv::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map_err(|e| driver_err("cuEventCreate", e))?;
        let (major, minor) = info.compute_capability.unwrap_or((0, 0));
        let arch = Arch::from_compute_capability(major, minor);
        let mut info = info;
        info.toolchain = toolchain;
        let compiler: Arc<dyn Compiler> = if toolchain.is_clang() {
            let c = ClangCompiler::for_arch(toolchain, &arch, assembler)?;
            info.compiler_version = Some(c.label());
            Arc::new(c)
        } else {
            let chosen = match nvrtc {
                Some(n) => Ok(n),
                None => Nvrtc::default_library(),
            };
            match chosen {
                Ok(n) => {
                    info.compiler_version = Some(n.label());
                    Arc::new(NvrtcCompiler::new(n, &arch)?)
                }
                Err(reason) => Arc::new(MissingCompiler {
                    target: arch.name(),
                    reason,
                }),
            }
        };
        Ok(CudaBackend {
            info,
            device,
            context,
            stream,
            start,
            stop,
            compiler,
            next_id: 1,
            buffers: HashMap::new(),
            views: HashMap::new(),
            modules: HashMap::new(),
            cublas: None,
            blas: toolchain == Toolchain::Cuda,
        })
    }

    fn bind(&self) -> Result<()> {
        // SAFETY: the context lives as long as self.
        unsafe { drv::ctx::set_current(self.context) }.map_err(|e| driver_err("cuCtxSetCurrent", e))
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn ptr(&self, b: &Buffer) -> Result<sys::CUdeviceptr> {
        self.buffers
            .get(&b.id)
            .or_else(|| self.views.get(&b.id))
            .copied()
            .ok_or_else(|| Error::invalid("buffer does not belong to this CUDA backend"))
    }

    /// Keeps a loaded module under a new program id, noting whether its PTX takes
    /// shared memory at launch.
    fn keep_module(
        &mut self,
        module: sys::CUmodule,
        functions: HashMap<String, sys::CUfunction>,
        ptx: Option<&str>,
    ) -> u64 {
        let id = self.id();
        let launch_local = takes_launch_local(ptx);
        let dependent = self.info.dependent_launch && waits_for_previous_grid(ptx);
        self.modules.insert(
            id,
            Module {
                module,
                functions,
                launch_local,
                dependent,
                carveout: std::cell::Cell::new(None),
            },
        );
        id
    }

    fn function_resources(
        &self,
        name: &str,
        f: sys::CUfunction,
        from_log: &[KernelResources],
        notes: &mut Vec<String>,
    ) -> KernelResources {
        use sys::CUfunction_attribute::*;
        // SAFETY: f is a function of a loaded module.
        let get = |a| {
            unsafe { drv::function::get_function_attribute(f, a) }
                .ok()
                .map(|v| v as u64)
        };
        let mut r = from_log
            .iter()
            .find(|k| k.name == name)
            .cloned()
            .unwrap_or_else(|| KernelResources {
                name: name.to_string(),
                ..Default::default()
            });
        let regs = get(CU_FUNC_ATTRIBUTE_NUM_REGS).map(|v| v as u32);
        let local = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
        let shared = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
        match (r.registers, regs) {
            (Some(l), Some(a)) if l != a => notes.push(format!(
                "{name}: ptxas log says {l} registers, cuFuncGetAttribute says {a}"
            )),
            (None, a) => r.registers = a,
            _ => {}
        }
        match (r.shared_bytes, shared) {
            (Some(l), Some(a)) if l != a => notes.push(format!(
                "{name}: ptxas log says {l} bytes shared, cuFuncGetAttribute says {a}"
            )),
            (None, a) => r.shared_bytes = a,
            _ => {}
        }
        r.private_bytes = local;
        r.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        r
    }

    /// A launch checked and looked up, ready to queue: its function, grid, block,
    /// shared memory, and argument values (pointers are 64-bit words).
    fn resolve(&self, launch: &Launch<'_>) -> Result<(Ready, Vec<u64>)> {
        let Launch {
            program,
            kernel,
            geometry,
            args,
        } = *launch;
        geometry.validate()?;
        let m = self
            .modules
            .get(&program.id)
            .ok_or_else(|| Error::invalid("program does not belong to this CUDA backend"))?;
        let f = *m.functions.get(kernel).ok_or_else(|| {
            let mut names: Vec<&String> = m.functions.keys().collect();
            names.sort();
            Error::invalid(format!(
                "the program has no kernel '{kernel}' (it has {names:?})"
            ))
        })?;
        apply_carveout(m, f, kernel, geometry.carveout)?;
        // Argument values live in `store` while the launch reads them.
        let mut store: Vec<u64> = Vec::with_capacity(args.len());
        for a in args {
            store.push(match *a {
                Arg::I32(v) => v as u32 as u64,
                Arg::U32(v) => v as u64,
                Arg::F32(v) => v.to_bits() as u64,
                Arg::F64(v) => v.to_bits(),
                Arg::Buf(b) => self.ptr(&b)?,
                Arg::Local(_) => {
                    return Err(Error::invalid(
                        "internal: a __local argument on CUDA (its bytes go to the launch's shared memory)",
                    ))
                }
            });
        }
        let asked = if m.launch_local {
            geometry.launch_local
        } else {
            0
        };
        let launch_local = u32::try_from(asked).map_err(|_| {
            Error::invalid(format!(
                "{kernel}: {} bytes of shared memory",
                geometry.launch_local
            ))
        })?;
        if let Some(max) = self.info().local_mem_launch_bytes {
            if u64::from(launch_local) > max {
                return Err(Error::invalid(format!(
                    "{kernel}: its local tiles need {launch_local} bytes of shared memory; this device allows {max} per block"
                )));
            }
        }
        if launch_local > STATIC_SHARED_MAX {
            // Past 48 KiB a kernel must opt in; the driver refuses a size beyond the device's.
            // SAFETY: f belongs to a loaded module.
            unsafe {
                drv::function::set_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    launch_local as i32,
                )
            }
            .map_err(|e| {
                driver_err(
                    &format!("cuFuncSetAttribute({kernel}, {launch_local} bytes of shared memory)"),
                    e,
                )
            })?;
        }
        let [gx, gy, gz] = geometry.groups().map(|g| g as u32);
        let [bx, by, bz] = geometry.local.map(|b| b as u32);
        let ready = Ready {
            f,
            grid: (gx, gy, gz),
            block: (bx, by, bz),
            shared: launch_local,
            dependent: m.dependent,
        };
        Ok((ready, store))
    }

    fn timed<F: FnOnce(&Self) -> Result<()>>(&self, what: &str, work: F) -> Result<u64> {
        // SAFETY: events and stream belong to this backend's context.
        unsafe { drv::event::record(self.start, self.stream) }
            .map_err(|e| driver_err("cuEventRecord", e))?;
        work(self)?;
        unsafe { drv::event::record(self.stop, self.stream) }
            .map_err(|e| driver_err("cuEventRecord", e))?;
        unsafe { drv::event::synchronize(self.stop) }
            .map_err(|e| driver_err(&format!("cuEventSynchronize after {what}"), e))?;
        let ms = event_elapsed(self.start, self.stop)?;
        Ok((f64::from(ms) * 1e6).round() as u64)
    }

    fn ensure_cublas(&mut self) -> Result<cublas_sys::cublasHandle_t> {
        if let Some(h) = self.cublas {
            return Ok(h);
        }
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cublas_sys::is_culib_present() } {
            return Err(Error::CudaUnavailable(
                "libcublas.so not found: cuBLAS cannot be measured".into(),
            ));
        }
        let h = cudarc::cublas::result::create_handle().map_err(|e| Error::Api {
            toolchain: "cuBLAS".into(),
            call: "cublasCreate".into(),
            message: format!("{e:?}"),
        })?;
        // SAFETY: valid handle and stream. Default math: plain FP32, no TF32 tensor cores.
        unsafe {
            cudarc::cublas::result::set_stream(h, self.stream as _).map_err(|e| Error::Api {
                toolchain: "cuBLAS".into(),
                call: "cublasSetStream".into(),
                message: format!("{e:?}"),
            })?;
            cublas_sys::cublasSetMathMode(h, cublas_sys::cublasMath_t::CUBLAS_DEFAULT_MATH);
        }
        self.cublas = Some(h);
        Ok(h)
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // SAFETY: every handle was created by this backend and is released once.
        unsafe {
            let _ = drv::ctx::set_current(self.context);
            let _ = drv::stream::synchronize(self.stream);
            if let Some(h) = self.cublas.take() {
                let _ = cudarc::cublas::result::destroy_handle(h);
            }
            for (_, p) in self.buffers.drain() {
                let _ = drv::free_sync(p);
            }
            for (_, m) in self.modules.drain() {
                let _ = drv::module::unload(m.module);
            }
            let _ = drv::event::destroy(self.start);
            let _ = drv::event::destroy(self.stop);
            let _ = drv::stream::destroy(self.stream);
            let _ = drv::primary_ctx::release(self.device);
        }
    }
}

/// Page-locked host memory from `cuMemHostAlloc`. It keeps its own reference
/// to the device's primary context, so it may outlive the backend that made it.
struct PageLocked<T> {
    ptr: *mut T,
    len: usize,
    device: sys::CUdevice,
    context: sys::CUcontext,
}

// SAFETY: the allocation is plain host memory owned by this value alone; shared
// access only reads it.
unsafe impl<T: Send> Send for PageLocked<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for PageLocked<T> {}

impl<T: Copy + Default> PageLocked<T> {
    /// Buffers this small gain nothing from being page-locked.
    const FROM_BYTES: usize = 4 << 20;

    /// `len` zeros in page-locked memory, or a vector where that is small or fails.
    fn host_vec(device: sys::CUdevice, len: usize) -> HostVec<T>
    where
        T: Send + Sync + 'static,
    {
        let locked = (len * std::mem::size_of::<T>() >= Self::FROM_BYTES)
            .then(|| PageLocked::new(device, len))
            .flatten();
        match locked {
            Some(l) => HostVec::Locked(Box::new(l)),
            None => HostVec::Plain(vec![T::default(); len]),
        }
    }

    fn new(device: sys::CUdevice, len: usize) -> Option<PageLocked<T>> {
        // SAFETY: retained here, released in drop.
        let context = unsafe { drv::primary_ctx::retain(device) }.ok()?;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        // SAFETY: the context is current while allocating; the memory is filled before use.
        let ptr = unsafe {
            drv::ctx::set_current(context).ok().and_then(|_| {
                drv::malloc_host(bytes, sys::CU_MEMHOSTALLOC_PORTABLE)
                    .ok()
                    .map(|p| p as *mut T)
            })
        };
        let Some(ptr) = ptr.filter(|p| !p.is_null()) else {
            // SAFETY: retained above.
            let _ = unsafe { drv::primary_ctx::release(device) };
            return None;
        };
        for i in 0..len {
            // SAFETY: inside the `bytes` just allocated, suitably aligned (page-aligned start).
            unsafe { ptr.add(i).write(T::default()) };
        }
        Some(PageLocked {
            ptr,
            len,
            device,
            context,
        })
    }
}

impl<T: Send + Sync> Locked<T> for PageLocked<T> {
    fn as_slice(&self) -> &[T] {
        // SAFETY: len initialised values at ptr, owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, borrowed mutably through self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for PageLocked<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc in this context, freed once.
        unsafe {
            let _ = drv::ctx::set_current(self.context);
            let _ = drv::free_host(self.ptr as *mut c_void);
            let _ = drv::primary_ctx::release(self.device);
        }
    }
}

/// Entry points newer than Kepler's driver, called only where the GPU guarantees a
/// driver that has them: (call, symbol, introduced in CUDA, the guard).
pub const GUARDED: &[(&str, &str, (u32, u32), &str)] = &[(
    "cuLaunchKernelEx",
    "cuLaunchKernelEx",
    (11, 8),
    "dependent launches only, on compute capability 9.0 or later (drivers of CUDA 11.8 and later)",
)];

/// A resolved launch (`CudaBackend::resolve`).
struct Ready {
    f: sys::CUfunction,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared: u32,
    dependent: bool,
}

impl Ready {
    /// Queues the launch on `stream`; `params` points at its argument values.
    ///
    /// # Safety
    /// `f` belongs to a loaded module of the current context and `params` holds one
    /// valid pointer per kernel parameter, alive until the launch has read them.
    unsafe fn queue(
        &self,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
    ) -> std::result::Result<(), drv::DriverError> {
        if !self.dependent {
            return drv::launch_kernel(self.f, self.grid, self.block, self.shared, stream, params);
        }
        // SAFETY: zero is a valid bit pattern for the attribute (a C struct and union).
        let mut attr: sys::CUlaunchAttribute = std::mem::zeroed();
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: self.grid.0,
            gridDimY: self.grid.1,
            gridDimZ: self.grid.2,
            blockDimX: self.block.0,
            blockDimY: self.block.1,
            blockDimZ: self.block.2,
            sharedMemBytes: self.shared,
            hStream: stream,
            attrs: &mut attr,
            numAttrs: 1,
        };
        sys::cuLaunchKernelEx(&config, self.f, params.as_mut_ptr(), std::ptr::null_mut()).result()
    }
}

impl Backend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compiler(&self) -> Arc<dyn Compiler> {
        Arc::clone(&self.compiler)
    }

    fn load(&mut self, what: &str, artefact: Artefact) -> Result<(Program, BuildReport)> {
        let cubin = match artefact.image {
            Image::Cubin(cubin) => cubin,
            Image::Ptx { ptx, max_registers } => {
                // clang's PTX assembled by the driver's JIT: the front end's report
                // completed with what the JIT said.
                let (program, jit) = self.load_ptx(what, &ptx, max_registers)?;
                let mut report = artefact.report;
                report.kernels = jit.kernels;
                report.log.push_str(&jit.log);
                report.notes.extend(jit.notes);
                report.compile_ms += jit.compile_ms;
                return Ok((program, report));
            }
            Image::OpenCl(_) => {
                return Err(Error::invalid(format!(
                    "internal: {what}: an artefact of another toolchain given to CUDA"
                )))
            }
        };
        self.bind()?;
        // SAFETY: cubin is a complete image from NVRTC for this device's architecture.
        let module = unsafe { drv::module::load_data(cubin.as_ptr().cast()) }
            .map_err(|e| driver_err("cuModuleLoadData", e))?;
        let mut report = artefact.report;
        let from_log = std::mem::take(&mut report.kernels);
        let mut names: Vec<String> = report.ptx.as_deref().map(ptx_entries).unwrap_or_default();
        if names.is_empty() {
            names = from_log.iter().map(|k| k.name.clone()).collect();
        }
        let mut functions = HashMap::new();
        for name in names {
            let cname = c_string("a kernel name", &name)?;
            // SAFETY: module loaded above; name is NUL-free.
            let f = match unsafe { drv::module::get_function(module, cname) } {
                Ok(f) => f,
                Err(e) => {
                    // SAFETY: loaded above, unloaded once.
                    let _ = unsafe { drv::module::unload(module) };
                    return Err(driver_err("cuModuleGetFunction", e));
                }
            };
            let r = self.function_resources(&name, f, &from_log, &mut report.notes);
            report.kernels.push(r);
            functions.insert(name, f);
        }
        let id = self.keep_module(module, functions, report.ptx.as_deref());
        Ok((Program { id }, report))
    }

    fn load_ptx(
        &mut self,
        what: &str,
        ptx: &str,
        max_registers: Option<u32>,
    ) -> Result<(Program, BuildReport)> {
        // NVIDIA OpenCL's PTX reads its launch environment from %envreg registers,
        // which only its runtime fills; run as it is, such a kernel computes garbage
        // addresses and faults, poisoning the context. Every caller (sweep jit,
        // attribute) gets the reads rewritten to a CUDA launch's values; a form that
        // cannot be rewritten is not applicable, with the reason.
        let rewritten = if ptx.contains("%envreg") {
            Some(
                super::opencl_ptx::for_cuda_jit(ptx).map_err(|reason| Error::Unavailable {
                    kernel: what.to_string(),
                    toolchain: "CUDA driver JIT".into(),
                    reason,
                })?,
            )
        } else {
            None
        };
        let ptx = rewritten.as_deref().unwrap_or(ptx);
        self.bind()?;
        let started = Instant::now();
        let jit = jit_load(ptx, max_registers)?;
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        let (module, info_text) = match jit {
            (Ok(module), info, _) => (module, info),
            (Err(r), info, error) => {
                return Err(Error::Compile {
                    toolchain: "CUDA driver JIT".into(),
                    what: what.to_string(),
                    log: format!("{error}\n{info}\n(cuModuleLoadDataEx: {r:?})"),
                })
            }
        };
        // Where the compute cache served this PTX (assembled before) without the
        // JIT's report: once more with a comment that makes it new, for the report.
        let again = || {
            let text = format!(
                "{ptx}\n// gemmlab: assembled again for its ptxas report ({})\n",
                super::cache_nonce()
            );
            match jit_load(&text, max_registers) {
                Ok((Ok(m), info, _)) => {
                    // SAFETY: loaded just above for its log alone, unloaded once.
                    let _ = unsafe { drv::module::unload(m) };
                    ptxas::parse_ptxas_log(&info)
                }
                _ => Vec::new(),
            }
        };
        let (device, cap) = (&self.info.id, format!("{max_registers:?}"));
        let from_log = super::ptxas_report(
            &["driver JIT", device, &cap, ptx],
            ptxas::parse_ptxas_log(&info_text),
            again,
        );
        let mut notes =
            vec!["PTX loaded through the CUDA driver JIT (cuModuleLoadDataEx)".to_string()];
        let mut functions = HashMap::new();
        let mut kernels = Vec::new();
        for name in ptx_entries(ptx) {
            let cname = c_string("a kernel name", &name)?;
            // SAFETY: module loaded above.
            let f = unsafe { drv::module::get_function(module, cname) }
                .map_err(|e| driver_err("cuModuleGetFunction", e))?;
            kernels.push(self.function_resources(&name, f, &from_log, &mut notes));
            functions.insert(name, f);
        }
        let id = self.keep_module(module, functions, Some(ptx));
        let mut flags = vec![
            "cuModuleLoadDataEx".to_string(),
            "CU_JIT_LOG_VERBOSE=1".to_string(),
        ];
        if let Some(r) = max_registers {
            flags.push(format!("CU_JIT_MAX_REGISTERS={r}"));
        }
        Ok((
            Program { id },
            BuildReport {
                toolchain: Some(Toolchain::Cuda),
                compiler: Some(format!(
                    "CUDA driver JIT ({})",
                    self.info
                        .driver_version
                        .as_deref()
                        .unwrap_or("driver version unknown")
                )),
                flags,
                log: info_text,
                compile_ms,
                ptx: Some(ptx.to_string()),
                kernels,
                notes,
            }
            .note_ignored_cap(max_registers),
        ))
    }

    fn release_program(&mut self, program: Program) {
        if let Some(m) = self.modules.remove(&program.id) {
            let _ = self.bind();
            // SAFETY: module loaded by this backend, unloaded once.
            let _ = unsafe { drv::module::unload(m.module) };
        }
    }

    fn alloc(&mut self, elem: Elem, len: usize) -> Result<Buffer> {
        self.bind()?;
        let bytes = (len * elem.size()).max(4);
        // SAFETY: plain device allocation, freed in free() or Drop.
        let p = unsafe { drv::malloc_sync(bytes) }.map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::OutOfMemory {
                    device: self.info.label(),
                    what: format!("a buffer of {len} {elem:?} ({bytes} bytes)"),
                }
            } else {
                driver_err("cuMemAlloc", e)
            }
        })?;
        let id = self.id();
        self.buffers.insert(id, p);
        Ok(Buffer { id, len, elem })
    }

    fn view(&mut self, parent: &Buffer, offset: usize, len: usize) -> Result<Buffer> {
        if let Some(why) = super::view_misfit(parent, offset, len) {
            return Err(Error::invalid(format!("internal: {why}")));
        }
        let p = self.ptr(parent)? + (offset * parent.elem.size()) as sys::CUdeviceptr;
        let id = self.id();
        self.views.insert(id, p);
        Ok(Buffer {
            id,
            len,
            elem: parent.elem,
        })
    }

    fn free(&mut self, buffer: Buffer) {
        if self.views.remove(&buffer.id).is_some() {
            return;
        }
        if let Some(p) = self.buffers.remove(&buffer.id) {
            let _ = self.bind();
            // SAFETY: allocated by this backend, freed once.
            let _ = unsafe { drv::free_sync(p) };
        }
    }

    fn upload(&mut self, buffer: &Buffer, data: HostData<'_>) -> Result<()> {
        check_len(buffer, data.elem(), data.len())?;
        self.bind()?;
        let p = self.ptr(buffer)?;
        // SAFETY: sizes checked; synchronous copy.
        match data {
            HostData::F32(s) => unsafe { drv::memcpy_htod_sync(p, s) },
            HostData::F64(s) => unsafe { drv::memcpy_htod_sync(p, s) },
            HostData::I32(s) => unsafe { drv::memcpy_htod_sync(p, s) },
            HostData::U32(s) => unsafe { drv::memcpy_htod_sync(p, s) },
        }
        .map_err(|e| driver_err("cuMemcpyHtoD", e))
    }

    fn host_f32(&mut self, len: usize) -> HostF32 {
        PageLocked::host_vec(self.device, len)
    }

    fn host_f64(&mut self, len: usize) -> HostF64 {
        PageLocked::host_vec(self.device, len)
    }

    fn download(&mut self, buffer: &Buffer, data: HostDataMut<'_>) -> Result<()> {
        check_len(buffer, data.elem(), data.len())?;
        self.bind()?;
        let p = self.ptr(buffer)?;
        // SAFETY: work on self.stream finishes before a synchronous copy reads.
        unsafe { drv::stream::synchronize(self.stream) }
            .map_err(|e| driver_err("cuStreamSynchronize", e))?;
        match data {
            HostDataMut::F32(s) => unsafe { drv::memcpy_dtoh_sync(s, p) },
            HostDataMut::F64(s) => unsafe { drv::memcpy_dtoh_sync(s, p) },
            HostDataMut::I32(s) => unsafe { drv::memcpy_dtoh_sync(s, p) },
            HostDataMut::U32(s) => unsafe { drv::memcpy_dtoh_sync(s, p) },
        }
        .map_err(|e| driver_err("cuMemcpyDtoH", e))
    }

    fn fill(&mut self, buffer: &Buffer, value: f64) -> Result<()> {
        self.bind()?;
        let p = self.ptr(buffer)?;
        let word = match buffer.elem {
            Elem::F32 => Some(super::fill_f32(value).to_bits()),
            Elem::I32 => Some(value as i32 as u32),
            Elem::U32 => Some(value as u32),
            Elem::F64 => None,
        };
        match (buffer.elem, word) {
            (_, Some(word)) => {
                // SAFETY: len 4-byte words inside the allocation.
                unsafe { sys::cuMemsetD32Async(p, word, buffer.len, self.stream).result() }
                    .map_err(|e| driver_err("cuMemsetD32Async", e))?;
                // SAFETY: stream of this backend.
                unsafe { drv::stream::synchronize(self.stream) }
                    .map_err(|e| driver_err("cuStreamSynchronize", e))
            }
            // Every 32-bit word 0x7FF87FF8 makes every f64 a quiet NaN: poisoning a
            // large f64 buffer needs no host copy.
            (_, None) if value.is_nan() => {
                // SAFETY: 2 * len 4-byte words inside the allocation of len f64.
                unsafe {
                    sys::cuMemsetD32Async(p, 0x7FF8_7FF8, 2 * buffer.len, self.stream).result()
                }
                .map_err(|e| driver_err("cuMemsetD32Async", e))?;
                // SAFETY: stream of this backend.
                unsafe { drv::stream::synchronize(self.stream) }
                    .map_err(|e| driver_err("cuStreamSynchronize", e))
            }
            (_, None) => self.upload(buffer, HostData::F64(&vec![value; buffer.len])),
        }
    }

    fn launch_sequence(&mut self, launches: &[Launch<'_>], count: usize) -> Result<u64> {
        self.bind()?;
        let (ready, mut stores): (Vec<Ready>, Vec<Vec<u64>>) = launches
            .iter()
            .map(|l| self.resolve(l))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        // Little-endian: a pointer to the u64 is also a pointer to its low 4 bytes.
        // The stores outlive every launch that reads them.
        let mut params: Vec<Vec<*mut c_void>> = stores
            .iter_mut()
            .map(|s| s.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect())
            .collect();
        let stream = self.stream;
        self.timed(launches.first().map_or("nothing", |l| l.kernel), |_| {
            for _ in 0..count.max(1) {
                for ((r, p), l) in ready.iter().zip(params.iter_mut()).zip(launches) {
                    // SAFETY: r.f belongs to a loaded module; p points into `stores`.
                    unsafe { r.queue(stream, p) }.map_err(|e| {
                        driver_err(
                            &format!(
                                "{}({}, grid {:?}, block {:?})",
                                if r.dependent {
                                    "cuLaunchKernelEx"
                                } else {
                                    "cuLaunchKernel"
                                },
                                l.kernel,
                                r.grid,
                                r.block
                            ),
                            e,
                        )
                    })?;
                }
            }
            Ok(())
        })
    }

    fn vendor_gemm(&mut self, g: &GemmCall, count: usize) -> Result<Option<u64>> {
        if !self.blas {
            return Ok(None);
        }
        self.bind()?;
        let h = self.ensure_cublas()?;
        let elem = g.c.elem;
        if g.a.elem != elem || g.b.elem != elem {
            return Err(Error::invalid("cuBLAS GEMM: operands of mixed precision"));
        }
        if !elem.is_float() {
            return Err(Error::invalid(format!(
                "cuBLAS GEMM: no GEMM on {} buffers",
                elem.as_str()
            )));
        }
        // Offsets become pointer arithmetic; the buffers' lengths bound every access
        // (the caller checked the problem's arguments against them).
        let at = |buf: &Buffer, off: usize| -> Result<u64> {
            if off > buf.len {
                return Err(Error::invalid("cuBLAS GEMM: offset beyond the buffer"));
            }
            Ok(self.ptr(buf)? + (off * elem.size()) as u64)
        };
        let (pa, pb, pc) = (
            at(&g.a, g.a_offset)?,
            at(&g.b, g.b_offset)?,
            at(&g.c, g.c_offset)?,
        );
        let dim =
            |v: usize| i32::try_from(v).map_err(|_| Error::invalid("matrix dimension exceeds i32"));
        let (mi, ni, ki) = (dim(g.m)?, dim(g.n)?, dim(g.k)?);
        let (lda, ldb, ldc) = (dim(g.lda)?, dim(g.ldb)?, dim(g.ldc)?);
        let op = |t: bool| {
            if t {
                cublas_sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                cublas_sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let (ta, tb) = (op(g.trans_a), op(g.trans_b));
        let call = match elem {
            Elem::F64 => "cublasDgemm",
            _ if g.tf32 => "cublasSgemm (TF32 tensor-op math)",
            _ => "cublasSgemm",
        };
        let tf32 = g.tf32 && elem == Elem::F32;
        if tf32 {
            // SAFETY: valid handle; the default mode is restored below.
            unsafe {
                cublas_sys::cublasSetMathMode(
                    h,
                    cublas_sys::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH,
                );
            }
        }
        let t = self.timed(call, |_| {
            for _ in 0..count.max(1) {
                // SAFETY: the buffers hold `elem` values on this context (checked above);
                // the offsets and leading dimensions lie within them (checked by the caller).
                unsafe {
                    match elem {
                        Elem::F32 | Elem::I32 | Elem::U32 => cudarc::cublas::result::sgemm(
                            h,
                            ta,
                            tb,
                            mi,
                            ni,
                            ki,
                            &(g.alpha as f32),
                            pa as *const f32,
                            lda,
                            pb as *const f32,
                            ldb,
                            &(g.beta as f32),
                            pc as *mut f32,
                            ldc,
                        ),
                        _ => cudarc::cublas::result::dgemm(
                            h,
                            ta,
                            tb,
                            mi,
                            ni,
                            ki,
                            &g.alpha,
                            pa as *const f64,
                            lda,
                            pb as *const f64,
                            ldb,
                            &g.beta,
                            pc as *mut f64,
                            ldc,
                        ),
                    }
                }
                .map_err(|e| Error::Api {
                    toolchain: "cuBLAS".into(),
                    call: call.into(),
                    message: format!("{e:?}"),
                })?;
            }
            Ok(())
        });
        if tf32 {
            // SAFETY: valid handle: back to plain FP32 for every other call.
            unsafe {
                cublas_sys::cublasSetMathMode(h, cublas_sys::cublasMath_t::CUBLAS_DEFAULT_MATH);
            }
        }
        Ok(Some(t?))
    }

    fn sleep_while_waiting(&mut self, sleep: bool) -> Result<()> {
        use sys::CUevent_flags::{CU_EVENT_BLOCKING_SYNC, CU_EVENT_DEFAULT};
        self.bind()?;
        // Only the wait on the stop event changes: with one context and more cores
        // than contexts, the driver's automatic choice is to spin.
        let flags = if sleep {
            CU_EVENT_BLOCKING_SYNC
        } else {
            CU_EVENT_DEFAULT
        };
        let stop = drv::event::create(flags).map_err(|e| driver_err("cuEventCreate", e))?;
        // SAFETY: the old stop event belongs to this context and no wait is pending.
        let _ = unsafe { drv::event::destroy(std::mem::replace(&mut self.stop, stop)) };
        Ok(())
    }

    fn memory_info(&self) -> Option<(u64, u64)> {
        self.bind().ok()?;
        let (free, total) = drv::mem_get_info().ok()?;
        Some((free as u64, total as u64))
    }

    fn vendor_blas(&self) -> Option<String> {
        let h = self.cublas.filter(|_| self.blas)?;
        let mut v = 0;
        // SAFETY: valid handle.
        unsafe { cublas_sys::cublasGetVersion_v2(h, &mut v) };
        Some(format!(
            "cuBLAS {}.{}.{}",
            v / 10000,
            (v % 10000) / 100,
            v % 100
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_is_launched_dependent_only_where_its_ptx_waits_for_the_grid_before() {
        assert!(waits_for_previous_grid(Some("\tgriddepcontrol.wait;\n")));
        assert!(!waits_for_previous_grid(Some(
            "\tgriddepcontrol.launch_dependents;\n"
        )));
        assert!(!waits_for_previous_grid(Some(".visible .entry k()")));
        assert!(!waits_for_previous_grid(None), "a CUBIN alone");
    }

    #[test]
    fn a_module_takes_launch_time_shared_memory_where_its_ptx_declares_it() {
        assert!(takes_launch_local(Some(
            ".extern .shared .align 16 .b8 tiles16[];"
        )));
        assert!(!takes_launch_local(Some(
            ".shared .align 16 .b8 tc_gemm_$_tiles16[34816];"
        )));
        assert!(takes_launch_local(None));
    }

    #[test]
    fn finds_ptx_entries() {
        let ptx = ".version 9.0\n.target sm_90\n.visible .entry myGEMM1(\n .param .u32 a\n)\n.visible .entry transpose(\n";
        assert_eq!(ptx_entries(ptx), ["myGEMM1", "transpose"]);
    }

    #[test]
    fn every_driver_call_in_this_file_is_audited_for_old_drivers() {
        let src = include_str!("cuda.rs");
        let body = &src[..src.find("#[cfg(test)]").unwrap_or(src.len())];
        let known: Vec<&str> = AUDITED
            .iter()
            .map(|(call, _, _)| *call)
            .chain(GUARDED.iter().map(|(call, ..)| *call))
            .collect();
        let mut calls: Vec<String> = Vec::new();
        for prefix in ["drv::", "sys::cu", "cublas_sys::cublas", "cublas::result::"] {
            for (i, _) in body.match_indices(prefix) {
                let rest = &body[i + prefix.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                if !rest[name.len()..].starts_with('(') {
                    continue; // a type or constant, not a call
                }
                let name = match prefix {
                    "sys::cu" => format!("cu{name}"),
                    "cublas_sys::cublas" => format!("cublas{name}"),
                    _ => name,
                };
                calls.push(name);
            }
        }
        calls.push("event_elapsed".into());
        assert!(calls.len() > 20, "found only {calls:?}");
        for c in &calls {
            // culib() and is_culib_present() open the library; they call no entry point.
            if c == "culib" || c == "is_culib_present" || c.ends_with("::culib") {
                continue;
            }
            assert!(
                known.contains(&c.as_str()),
                "{c} is called but not in AUDITED: check which CUDA release introduced it"
            );
        }
        // Kepler's driver (470, CUDA 11.4) has every audited entry point.
        for (call, symbol, since) in AUDITED {
            assert!(*since <= (11, 4), "{call} ({symbol}) needs CUDA {since:?}");
        }
        // Hopper's first driver (CUDA 11.8) has every guarded one.
        for (call, _, since, _) in GUARDED {
            assert!(*since <= (11, 8), "{call} needs CUDA {since:?}");
        }
        // cudarc's event::elapsed is the one that would need CUDA 12.8.
        assert!(!body.contains("drv::event::elapsed"));
    }

    #[test]
    fn cublas_candidates_find_the_cuda_11_library() {
        let names = cudarc::get_lib_name_candidates("cublas");
        assert!(names.iter().any(|n| n == "libcublas.so.11"), "{names:?}");
        assert!(names.iter().any(|n| n == "libcublas.so.12"), "{names:?}");
    }
}
