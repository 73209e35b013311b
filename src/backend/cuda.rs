//! CUDA backend: cudarc's driver, NVRTC and cuBLAS bindings, all loaded at run
//! time, so gemmlab builds and starts on a machine without CUDA.
//!
//! NVRTC compiles for the device's real architecture (sm_XX) with
//! `--ptxas-options=-v`, so its log carries the same ptxas resource lines as
//! NVIDIA OpenCL's; the CUBIN is loaded and cuFuncGetAttribute cross-checks
//! registers and memory. cudarc panics when a library is missing, so every
//! entry point checks presence first and returns `Error::CudaUnavailable`.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Arc;
use std::time::Instant;

use cudarc::cublas::sys as cublas_sys;
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys as nvrtc_sys;

use super::{
    check_len, ptxas, Arg, Artefact, Backend, Buffer, BuildReport, CompileOptions, Compiler,
    DeviceInfo, DeviceKind, Elem, Geometry, HostData, HostDataMut, Image, KernelResources, Program,
    Toolchain,
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

fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { nvrtc_sys::is_culib_present() }
}

/// "13.0" from the NVRTC library, if it loads.
pub fn nvrtc_version() -> Option<String> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: library present; out-pointers are valid.
    let r = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
    (r == nvrtc_sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("NVRTC {major}.{minor}"))
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
    let nvrtc = nvrtc_version().or_else(|| Some("NVRTC not found (libnvrtc.so)".into()));
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
            pci_bus_id: pci_bus_id(dev),
        });
    }
    Ok(out)
}

/// What NVRTC produced for one source.
#[derive(Debug, Clone)]
pub struct NvrtcOutput {
    pub log: String,
    pub ptx: Option<String>,
    pub cubin: Option<Vec<u8>>,
    pub flags: Vec<String>,
}

fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid(format!("{what} contains a NUL byte")))
}

/// NVRTC flags for `arch` ("sm_90" for a CUBIN, "compute_90" for PTX only).
pub fn nvrtc_flags(arch: &str, options: &CompileOptions) -> Vec<String> {
    let mut flags = vec![format!("--gpu-architecture={arch}")];
    if arch.starts_with("sm_") {
        flags.push("--ptxas-options=-v".into());
    }
    for (name, value) in &options.defines {
        flags.push(format!("-D{name}={value}"));
    }
    if let Some(r) = options.max_registers {
        flags.push(format!("--maxrregcount={r}"));
    }
    if options.fast_math {
        flags.push("--use_fast_math".into());
    }
    flags.extend(options.extra_flags.iter().cloned());
    flags
}

/// Compiles with NVRTC. Needs only libnvrtc, no GPU.
pub fn nvrtc_compile(
    what: &str,
    source: &str,
    arch: &str,
    options: &CompileOptions,
) -> Result<NvrtcOutput> {
    if !nvrtc_present() {
        return Err(Error::CudaUnavailable(
            "libnvrtc.so not found (install the CUDA toolkit's NVRTC or put it on LD_LIBRARY_PATH)"
                .into(),
        ));
    }
    let flags = nvrtc_flags(arch, options);
    for f in &flags {
        c_string("a compiler flag", f)?;
    }
    let src = c_string("the source", source)?;
    let name = c_string("the program name", &format!("{what}.cu"))?;
    let prog = nvrtc::create_program(&src, Some(&name)).map_err(|e| Error::Api {
        toolchain: "NVRTC".into(),
        call: "nvrtcCreateProgram".into(),
        message: format!("{e:?}"),
    })?;
    // SAFETY: prog is live until destroy_program below; flags have no NUL.
    let compiled = unsafe { nvrtc::compile_program(prog, &flags) };
    // SAFETY: as above.
    let log = unsafe { nvrtc::get_program_log(prog) }
        .map(|v| {
            let bytes: Vec<u8> = v.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .unwrap_or_default();
    let result = if let Err(e) = compiled {
        Err(Error::Compile {
            toolchain: "NVRTC".into(),
            what: what.to_string(),
            log: format!(
                "{}\n(nvrtcCompileProgram: {e:?}; flags: {})",
                log.trim_end(),
                flags.join(" ")
            ),
        })
    } else {
        // SAFETY: compiled program; buffers sized by the matching Size calls.
        let ptx = unsafe { nvrtc::get_ptx(prog) }.ok().map(|v| {
            let bytes: Vec<u8> = v.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        });
        let cubin = if arch.starts_with("sm_") {
            // SAFETY: as above.
            unsafe { get_cubin(prog) }
        } else {
            None
        };
        Ok(NvrtcOutput {
            log,
            ptx: ptx.filter(|p| !p.is_empty()),
            cubin,
            flags,
        })
    };
    // SAFETY: prog came from create_program and is destroyed once.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    result
}

unsafe fn get_cubin(prog: nvrtc_sys::nvrtcProgram) -> Option<Vec<u8>> {
    let mut size = 0usize;
    if unsafe { nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size) }
        != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS
        || size == 0
    {
        return None;
    }
    let mut buf = vec![0u8; size];
    if unsafe { nvrtc_sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast()) }
        != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS
    {
        return None;
    }
    Some(buf)
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

/// NVRTC for one architecture: needs neither a GPU nor a driver, and may be
/// called from many threads at once (NVRTC programs are independent).
pub struct NvrtcCompiler {
    arch: String,
}

impl NvrtcCompiler {
    /// A compiler for a real architecture, "sm_90".
    pub fn new(arch: &str) -> NvrtcCompiler {
        NvrtcCompiler {
            arch: arch.to_string(),
        }
    }
}

impl Compiler for NvrtcCompiler {
    fn toolchain(&self) -> Toolchain {
        Toolchain::Cuda
    }

    fn target(&self) -> &str {
        &self.arch
    }

    fn compile(&self, what: &str, source: &str, options: &CompileOptions) -> Result<Artefact> {
        let started = Instant::now();
        let out = nvrtc_compile(what, source, &self.arch, options)?;
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        // PTX is kept for comparison; when NVRTC gives none for a real
        // architecture, compile once more for the virtual one.
        let ptx = match out.ptx {
            Some(p) => Some(p),
            None => {
                let virt = self.arch.replace("sm_", "compute_");
                nvrtc_compile(what, source, &virt, options)
                    .ok()
                    .and_then(|o| o.ptx)
            }
        };
        let cubin = out.cubin.ok_or_else(|| Error::Api {
            toolchain: "NVRTC".into(),
            call: "nvrtcGetCUBIN".into(),
            message: format!("no CUBIN for {}", self.arch),
        })?;
        let report = BuildReport {
            toolchain: Some(Toolchain::Cuda),
            flags: out.flags,
            kernels: ptxas::parse_ptxas_log(&out.log),
            log: out.log,
            compile_ms,
            ptx,
            notes: Vec::new(),
        }
        .note_ignored_cap(options.max_registers);
        Ok(Artefact {
            report,
            image: Image::Cubin(cubin),
        })
    }
}

struct Module {
    module: sys::CUmodule,
    functions: HashMap<String, sys::CUfunction>,
}

pub struct CudaBackend {
    info: DeviceInfo,
    device: sys::CUdevice,
    context: sys::CUcontext,
    stream: sys::CUstream,
    start: sys::CUevent,
    stop: sys::CUevent,
    arch: String,
    next_id: u64,
    buffers: HashMap<u64, sys::CUdeviceptr>,
    modules: HashMap<u64, Module>,
    cublas: Option<cublas_sys::cublasHandle_t>,
}

impl CudaBackend {
    /// Opens "cuda:N".
    pub fn open(id: &str) -> Result<Self> {
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
        Ok(CudaBackend {
            info,
            device,
            context,
            stream,
            start,
            stop,
            arch: format!("sm_{major}{minor}"),
            next_id: 1,
            buffers: HashMap::new(),
            modules: HashMap::new(),
            cublas: None,
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
            .copied()
            .ok_or_else(|| Error::invalid("buffer does not belong to this CUDA backend"))
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

    fn timed<F: FnOnce(&Self) -> Result<()>>(&self, what: &str, work: F) -> Result<u64> {
        // SAFETY: events and stream belong to this backend's context.
        unsafe { drv::event::record(self.start, self.stream) }
            .map_err(|e| driver_err("cuEventRecord", e))?;
        work(self)?;
        unsafe { drv::event::record(self.stop, self.stream) }
            .map_err(|e| driver_err("cuEventRecord", e))?;
        unsafe { drv::event::synchronize(self.stop) }
            .map_err(|e| driver_err(&format!("cuEventSynchronize after {what}"), e))?;
        let ms = unsafe { drv::event::elapsed(self.start, self.stop) }
            .map_err(|e| driver_err("cuEventElapsedTime", e))?;
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

impl Backend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compiler(&self) -> Arc<dyn Compiler> {
        Arc::new(NvrtcCompiler::new(&self.arch))
    }

    fn load(&mut self, what: &str, artefact: Artefact) -> Result<(Program, BuildReport)> {
        #[allow(irrefutable_let_patterns)]
        let Image::Cubin(cubin) = artefact.image
        else {
            return Err(Error::invalid(format!(
                "internal: {what}: an artefact of another toolchain given to CUDA"
            )));
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
        let id = self.id();
        self.modules.insert(id, Module { module, functions });
        Ok((Program { id }, report))
    }

    fn load_ptx(
        &mut self,
        what: &str,
        ptx: &str,
        max_registers: Option<u32>,
    ) -> Result<(Program, BuildReport)> {
        self.bind()?;
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
        let started = Instant::now();
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
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        let text = |b: &[u8]| {
            String::from_utf8_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
                .into_owned()
        };
        let (info_text, error_text) = (text(&info_log), text(&error_log));
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(Error::Compile {
                toolchain: "CUDA driver JIT".into(),
                what: what.to_string(),
                log: format!("{error_text}\n{info_text}\n(cuModuleLoadDataEx: {r:?})"),
            });
        }
        let from_log = ptxas::parse_ptxas_log(&info_text);
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
        let id = self.id();
        self.modules.insert(id, Module { module, functions });
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

    fn free(&mut self, buffer: Buffer) {
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
        }
        .map_err(|e| driver_err("cuMemcpyHtoD", e))
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
        }
        .map_err(|e| driver_err("cuMemcpyDtoH", e))
    }

    fn fill(&mut self, buffer: &Buffer, value: f64) -> Result<()> {
        self.bind()?;
        let p = self.ptr(buffer)?;
        match buffer.elem {
            Elem::F32 => {
                // SAFETY: len 4-byte words inside the allocation.
                unsafe {
                    sys::cuMemsetD32Async(p, (value as f32).to_bits(), buffer.len, self.stream)
                        .result()
                }
                .map_err(|e| driver_err("cuMemsetD32Async", e))?;
                // SAFETY: stream of this backend.
                unsafe { drv::stream::synchronize(self.stream) }
                    .map_err(|e| driver_err("cuStreamSynchronize", e))
            }
            // Every 32-bit word 0x7FF87FF8 makes every f64 a quiet NaN: poisoning a
            // large f64 buffer needs no host copy.
            Elem::F64 if value.is_nan() => {
                // SAFETY: 2 * len 4-byte words inside the allocation of len f64.
                unsafe {
                    sys::cuMemsetD32Async(p, 0x7FF8_7FF8, 2 * buffer.len, self.stream).result()
                }
                .map_err(|e| driver_err("cuMemsetD32Async", e))?;
                // SAFETY: stream of this backend.
                unsafe { drv::stream::synchronize(self.stream) }
                    .map_err(|e| driver_err("cuStreamSynchronize", e))
            }
            Elem::F64 => self.upload(buffer, HostData::F64(&vec![value; buffer.len])),
        }
    }

    fn launch_batch(
        &mut self,
        program: &Program,
        kernel: &str,
        geometry: &Geometry,
        args: &[Arg],
        count: usize,
    ) -> Result<u64> {
        geometry.validate()?;
        self.bind()?;
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
        // Argument values live in `store` while the launch reads them.
        let mut store: Vec<u64> = Vec::with_capacity(args.len());
        for a in args {
            store.push(match *a {
                Arg::I32(v) => v as u32 as u64,
                Arg::U32(v) => v as u64,
                Arg::F32(v) => v.to_bits() as u64,
                Arg::F64(v) => v.to_bits(),
                Arg::Buf(b) => self.ptr(&b)?,
            });
        }
        // Little-endian: a pointer to the u64 is also a pointer to its low 4 bytes.
        let mut params: Vec<*mut c_void> = store
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        let groups = geometry.groups();
        let block = geometry.local;
        let stream = self.stream;
        self.timed(kernel, |_| {
            for _ in 0..count.max(1) {
                // SAFETY: f belongs to a loaded module; params point into `store`.
                unsafe {
                    drv::launch_kernel(
                        f,
                        (groups[0] as u32, groups[1] as u32, groups[2] as u32),
                        (block[0] as u32, block[1] as u32, block[2] as u32),
                        0,
                        stream,
                        &mut params,
                    )
                }
                .map_err(|e| {
                    driver_err(
                        &format!("cuLaunchKernel({kernel}, grid {groups:?}, block {block:?})"),
                        e,
                    )
                })?;
            }
            Ok(())
        })
    }

    fn vendor_gemm(
        &mut self,
        m: usize,
        n: usize,
        k: usize,
        a: &Buffer,
        b: &Buffer,
        c: &Buffer,
        count: usize,
    ) -> Result<Option<u64>> {
        self.bind()?;
        let h = self.ensure_cublas()?;
        let elem = c.elem;
        if a.elem != elem || b.elem != elem {
            return Err(Error::invalid("cuBLAS GEMM: operands of mixed precision"));
        }
        let (pa, pb, pc) = (self.ptr(a)?, self.ptr(b)?, self.ptr(c)?);
        let dim =
            |v: usize| i32::try_from(v).map_err(|_| Error::invalid("matrix dimension exceeds i32"));
        let (mi, ni, ki) = (dim(m)?, dim(n)?, dim(k)?);
        let op = cublas_sys::cublasOperation_t::CUBLAS_OP_N;
        let call = match elem {
            Elem::F32 => "cublasSgemm",
            Elem::F64 => "cublasDgemm",
        };
        let t = self.timed(call, |_| {
            for _ in 0..count.max(1) {
                // SAFETY: column-major buffers of m*k, k*n, m*n elements of `elem` on this
                // context (checked by the buffers' element type above).
                unsafe {
                    match elem {
                        Elem::F32 => cudarc::cublas::result::sgemm(
                            h,
                            op,
                            op,
                            mi,
                            ni,
                            ki,
                            &1.0f32,
                            pa as *const f32,
                            mi.max(1),
                            pb as *const f32,
                            ki.max(1),
                            &0.0f32,
                            pc as *mut f32,
                            mi.max(1),
                        ),
                        Elem::F64 => cudarc::cublas::result::dgemm(
                            h,
                            op,
                            op,
                            mi,
                            ni,
                            ki,
                            &1.0f64,
                            pa as *const f64,
                            mi.max(1),
                            pb as *const f64,
                            ki.max(1),
                            &0.0f64,
                            pc as *mut f64,
                            mi.max(1),
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
        })?;
        Ok(Some(t))
    }

    fn memory_info(&self) -> Option<(u64, u64)> {
        self.bind().ok()?;
        let (free, total) = drv::mem_get_info().ok()?;
        Some((free as u64, total as u64))
    }

    fn vendor_blas(&self) -> Option<String> {
        let h = self.cublas?;
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
    fn finds_ptx_entries() {
        let ptx = ".version 9.0\n.target sm_90\n.visible .entry myGEMM1(\n .param .u32 a\n)\n.visible .entry transpose(\n";
        assert_eq!(ptx_entries(ptx), ["myGEMM1", "transpose"]);
    }

    #[test]
    fn flags_carry_defines_and_cap() {
        let o = CompileOptions {
            max_registers: Some(64),
            ..CompileOptions::new().define("TS", 32)
        };
        let f = nvrtc_flags("sm_90", &o);
        assert!(f.contains(&"--gpu-architecture=sm_90".to_string()));
        assert!(f.contains(&"--ptxas-options=-v".to_string()));
        assert!(f.contains(&"-DTS=32".to_string()));
        assert!(f.contains(&"--maxrregcount=64".to_string()));
        // Defines pass as given: the backend adds no switch of its own.
        assert!(!f.iter().any(|x| x.starts_with("-DUSE_")));
    }
}
