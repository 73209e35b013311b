//! The Backend trait: compile, inspect, allocate, launch and time a kernel
//! the same way on every toolchain. Toolchain types (opencl3, cudarc) never
//! leave this module; everything above it sees only the types defined here.

pub mod ptx;

pub mod clang;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod guard;
pub mod nvrtc;
pub mod occupancy;
pub mod opencl;
pub mod opencl_pool;
pub mod opencl_ptx;
pub mod ptx_for_opencl;
pub mod ptxas;
pub mod quiet;
pub mod select;

use std::fmt;
use std::sync::Arc;

use enum_dispatch::enum_dispatch;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[cfg(feature = "cuda")]
pub use cuda::CudaBackend;
pub use opencl::OpenClBackend;

/// The toolchains gemmlab compares: a front end, an assembler and a runtime each
/// (see [`TOOLCHAINS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Toolchain {
    #[serde(rename = "opencl")]
    OpenCl,
    Cuda,
    /// clang's OpenCL C front end and LLVM's NVPTX back end, libclc's work-item
    /// functions; ptxas (or the driver JIT); the CUDA driver.
    #[serde(rename = "clang-opencl")]
    ClangOpenCl,
    /// clang's CUDA front end (NVIDIA's headers, libdevice) and LLVM's NVPTX back
    /// end; ptxas (or the driver JIT); the CUDA driver.
    #[serde(rename = "clang-cuda")]
    ClangCuda,
}

/// What runs a toolchain's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Runtime {
    /// The OpenCL runtime of the device's platform.
    OpenCl,
    /// The CUDA driver.
    Cuda,
}

/// What gemmlab knows of a toolchain, in one table: adding a toolchain adds a
/// row here (and its backend), not a `match` in every module that names one.
#[derive(Debug)]
pub struct ToolchainInfo {
    pub toolchain: Toolchain,
    /// The name on the command line and in result files.
    pub id: &'static str,
    /// Other names `--backends` accepts.
    pub aliases: &'static [&'static str],
    /// The name reports and tables show.
    pub label: &'static str,
    /// What `gemmlab devices` says it is made of.
    pub made_of: &'static str,
    /// The language its compiler takes.
    pub language: Language,
    /// Its front end (source to PTX) and its assembler (PTX to machine code).
    pub front_end: &'static str,
    pub assembler: &'static str,
    /// What loads and launches its kernels.
    pub runtime: Runtime,
    /// Its colour in every chart (RGB).
    pub rgb: (u8, u8, u8),
}

/// Every toolchain, in the order of tables, charts and `Toolchain::ALL`.
pub const TOOLCHAINS: [ToolchainInfo; 4] = [
    ToolchainInfo {
        toolchain: Toolchain::Cuda,
        id: "cuda",
        aliases: &["nvrtc", "cu"],
        label: "CUDA",
        made_of: "CUDA (driver + NVRTC)",
        language: Language::CudaCpp,
        front_end: "NVRTC (NVVM)",
        assembler: "NVRTC's ptxas",
        runtime: Runtime::Cuda,
        rgb: (118, 170, 0),
    },
    ToolchainInfo {
        toolchain: Toolchain::OpenCl,
        id: "opencl",
        aliases: &["cl", "ocl"],
        label: "OpenCL",
        made_of: "OpenCL",
        language: Language::OpenClC,
        front_end: "the OpenCL driver's compiler (NVVM on NVIDIA)",
        assembler: "the OpenCL driver's",
        runtime: Runtime::OpenCl,
        rgb: (31, 104, 180),
    },
    ToolchainInfo {
        toolchain: Toolchain::ClangCuda,
        id: "clang-cuda",
        aliases: &["clangcuda", "clang-cu"],
        label: "clang CUDA",
        made_of: "clang CUDA + ptxas + CUDA driver",
        language: Language::CudaCpp,
        front_end: "clang (LLVM NVPTX)",
        assembler: "ptxas from the wheels, or the CUDA driver's JIT",
        runtime: Runtime::Cuda,
        rgb: (214, 120, 20),
    },
    ToolchainInfo {
        toolchain: Toolchain::ClangOpenCl,
        id: "clang-opencl",
        aliases: &["clangopencl", "clang-cl", "clang-ocl"],
        label: "clang OpenCL",
        made_of: "clang OpenCL (libclc) + ptxas + CUDA driver",
        language: Language::OpenClC,
        front_end: "clang (LLVM NVPTX, libclc)",
        assembler: "ptxas from the wheels, or the CUDA driver's JIT",
        runtime: Runtime::Cuda,
        rgb: (150, 70, 170),
    },
];

impl Toolchain {
    pub const ALL: [Toolchain; 4] = [
        TOOLCHAINS[0].toolchain,
        TOOLCHAINS[1].toolchain,
        TOOLCHAINS[2].toolchain,
        TOOLCHAINS[3].toolchain,
    ];

    /// This toolchain's row of [`TOOLCHAINS`].
    pub fn info(self) -> &'static ToolchainInfo {
        TOOLCHAINS
            .iter()
            .find(|i| i.toolchain == self)
            .unwrap_or(&TOOLCHAINS[0])
    }

    pub fn as_str(self) -> &'static str {
        self.info().id
    }

    /// The name reports and tables show: "CUDA", "OpenCL".
    pub fn label(self) -> &'static str {
        self.info().label
    }

    pub fn parse(s: &str) -> Option<Toolchain> {
        let s = s.to_ascii_lowercase();
        TOOLCHAINS
            .iter()
            .find(|i| i.id == s || i.aliases.contains(&s.as_str()))
            .map(|i| i.toolchain)
    }

    /// The language this toolchain's compiler takes.
    pub fn language(self) -> Language {
        self.info().language
    }

    pub fn runtime(self) -> Runtime {
        self.info().runtime
    }

    /// clang's toolchains: LLVM's NVPTX back end in place of NVIDIA's NVVM.
    pub fn is_clang(self) -> bool {
        matches!(self, Toolchain::ClangOpenCl | Toolchain::ClangCuda)
    }

    /// Whether a difference between two toolchains has one cause to trace: they
    /// compile the same language's source (NVRTC and clang on CUDA C++), or they
    /// are one compiler family (NVIDIA's two, clang's two).
    pub fn differs_once_from(self, other: Toolchain) -> bool {
        self != other
            && (self.language() == other.language() || self.is_clang() == other.is_clang())
    }
}

/// The language a source is written in: kernels are found by language, and each
/// toolchain compiles one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Language {
    /// OpenCL C.
    OpenClC,
    /// CUDA C++.
    CudaCpp,
}

impl Language {
    pub fn name(self) -> &'static str {
        match self {
            Language::OpenClC => "OpenCL C",
            Language::CudaCpp => "CUDA C++",
        }
    }

    /// Whether `source` takes its local memory at launch: a CUDA twin that declares
    /// `extern __shared__` (the only way past 48 KiB). OpenCL C would take it as a
    /// `__local` pointer argument, which no kernel here does.
    pub fn takes_local_at_launch(self, source: &str) -> bool {
        self == Language::CudaCpp && source.contains("extern __shared__")
    }
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Gpu,
    Accelerator,
    Cpu,
    Other,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "GPU",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Other => "other",
        })
    }
}

/// Everything gemmlab knows about a device. Unknown values are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub toolchain: Toolchain,
    /// Explicit selector that picks exactly this device: "cuda:0", "opencl:1:0".
    pub id: String,
    pub name: String,
    pub vendor: String,
    /// OpenCL platform name; "CUDA driver" for CUDA.
    pub platform: String,
    pub kind: DeviceKind,
    pub driver_version: Option<String>,
    /// OpenCL platform/device version; CUDA driver API version.
    pub runtime_version: Option<String>,
    /// OpenCL C version; NVRTC version.
    pub compiler_version: Option<String>,
    pub compute_capability: Option<(u32, u32)>,
    pub compute_units: Option<u32>,
    pub clock_mhz: Option<u32>,
    pub global_mem_bytes: Option<u64>,
    /// Local (OpenCL) / shared (CUDA) memory one work-group may declare statically.
    pub local_mem_bytes: Option<u64>,
    /// CUDA: the shared memory a block may take at launch once the kernel opts in
    /// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); None elsewhere.
    #[serde(default)]
    pub local_mem_launch_bytes: Option<u64>,
    pub shared_mem_per_sm_bytes: Option<u64>,
    pub max_work_group_size: Option<u64>,
    pub registers_per_block: Option<u32>,
    pub registers_per_sm: Option<u32>,
    pub max_threads_per_sm: Option<u32>,
    pub max_blocks_per_sm: Option<u32>,
    pub warp_size: Option<u32>,
    pub l2_cache_bytes: Option<u64>,
    /// Peak memory bandwidth in GB/s (10^9 bytes/s) as the driver's memory clock and bus
    /// width give it (2 transfers per clock); `None` where the toolchain does not say.
    #[serde(default)]
    pub memory_bandwidth_gbs: Option<f64>,
    /// PCI address "dddd:bb:dd.f" (lowercase hex): how NVML finds this GPU for clock readings.
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    /// CUDA on sm_90 and later: kernels that wait for the previous grid
    /// (`griddepcontrol.wait`, the routine's own kernels) are launched with
    /// programmatic stream serialization, so that a launch overlaps the end of the
    /// one before it. `GEMMLAB_PDL=0` turns it off; false elsewhere.
    #[serde(default)]
    pub dependent_launch: bool,
}

impl DeviceInfo {
    /// A device known only by name: every property unknown (`None`); tests and
    /// offline targets fill in what they know with struct update syntax.
    pub fn new(
        toolchain: Toolchain,
        id: impl Into<String>,
        name: impl Into<String>,
        vendor: impl Into<String>,
        platform: impl Into<String>,
        kind: DeviceKind,
    ) -> DeviceInfo {
        DeviceInfo {
            toolchain,
            id: id.into(),
            name: name.into(),
            vendor: vendor.into(),
            platform: platform.into(),
            kind,
            driver_version: None,
            runtime_version: None,
            compiler_version: None,
            compute_capability: None,
            compute_units: None,
            clock_mhz: None,
            global_mem_bytes: None,
            local_mem_bytes: None,
            local_mem_launch_bytes: None,
            shared_mem_per_sm_bytes: None,
            max_work_group_size: None,
            registers_per_block: None,
            registers_per_sm: None,
            max_threads_per_sm: None,
            max_blocks_per_sm: None,
            warp_size: None,
            l2_cache_bytes: None,
            memory_bandwidth_gbs: None,
            pci_bus_id: None,
            dependent_launch: false,
        }
    }

    /// Whether the compiler drops a register cap on a kernel that fixes its work-group
    /// size (reqd_work_group_size): NVIDIA's OpenCL compiler does. Measured on the H200,
    /// driver 580: 298 of 300 capped SIMT builds with it used more registers than the
    /// cap, all 29 without it kept to the cap (results/h200/routine/switches).
    pub fn ignores_caps_with_bounds(&self) -> bool {
        self.toolchain == Toolchain::OpenCl && self.is_nvidia()
    }

    /// The local memory one work-group may use: declared statically, or taken at
    /// launch where the kernel does that and the device lets it.
    pub fn local_limit(&self, at_launch: bool) -> Option<u64> {
        match at_launch {
            true => self.local_mem_launch_bytes.or(self.local_mem_bytes),
            false => self.local_mem_bytes,
        }
    }

    pub fn is_nvidia(&self) -> bool {
        let v = self.vendor.to_ascii_lowercase();
        v.contains("nvidia") || self.toolchain.runtime() == Runtime::Cuda
    }

    /// "NVIDIA H200 (cuda:0, CUDA driver)"
    pub fn label(&self) -> String {
        format!("{} [{} {}]", self.name, self.toolchain, self.id)
    }
}

/// A PCI address as [domain, bus, device, function], from any of its usual
/// spellings: CUDA's "0000:3B:00.0", NVML's "00000000:3B:00.0", or without a domain.
/// `value` as an f32 for a buffer fill, a NaN's payload kept (its top 22 bits):
/// an `as` conversion may give the canonical NaN, and the poison checks read
/// the payload back to tell "never written" from "wrote NaN".
pub fn fill_f32(value: f64) -> f32 {
    if !value.is_nan() {
        return value as f32;
    }
    let b = value.to_bits();
    let sign = ((b >> 63) as u32) << 31;
    let payload = ((b >> 29) & 0x003F_FFFF) as u32;
    f32::from_bits(sign | 0x7FC0_0000 | payload)
}

pub fn parse_pci_bus_id(s: &str) -> Option<[u32; 4]> {
    let s = s.trim();
    let (head, function) = s.rsplit_once('.')?;
    let parts: Vec<&str> = head.split(':').collect();
    let (domain, bus, device) = match parts[..] {
        [d, b, v] => (d, b, v),
        [b, v] => ("0", b, v),
        _ => return None,
    };
    let hex = |t: &str| u32::from_str_radix(t, 16).ok();
    let a = [hex(domain)?, hex(bus)?, hex(device)?, hex(function)?];
    (a[1] <= 0xff && a[2] <= 0x1f && a[3] <= 7).then_some(a)
}

/// The one spelling gemmlab records: "0000:3b:00.0".
pub fn format_pci_bus_id([domain, bus, device, function]: [u32; 4]) -> String {
    format!("{domain:04x}:{bus:02x}:{device:02x}.{function:x}")
}

/// How to compile a source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileOptions {
    /// Preprocessor defines, passed as -D NAME=VALUE on both toolchains.
    pub defines: Vec<(String, String)>,
    /// Register cap: `-cl-nv-maxrregcount` (NVIDIA OpenCL) or `--maxrregcount` (NVRTC).
    /// Ignored, and reported so, where the toolchain has no such option.
    pub max_registers: Option<u32>,
    /// OpenCL `-cl-fast-relaxed-math -cl-mad-enable`, NVRTC `--use_fast_math`.
    pub fast_math: bool,
    /// Raw flags appended as they are.
    pub extra_flags: Vec<String>,
    /// The source uses instructions of the architecture-specific feature set
    /// (`sm_90a`: wgmma). NVRTC and clang compile for `sm_XXa`. NVIDIA OpenCL,
    /// whose PTX always declares `.target sm_XX`, cannot accept them in a source
    /// build, so the OpenCL twin writes each inside inline asm behind the PTX
    /// comment marker `//sm_90a `; the backend un-comments the markers,
    /// re-targets the PTX to `sm_XXa` and builds that PTX as the program binary.
    #[serde(default)]
    pub arch_specific: bool,
    /// Keep the kernels' argument names and types for the host to read
    /// (OpenCL `-cl-kernel-arg-info`), so a user's launch is checked against
    /// them; PTX says them anyway.
    #[serde(default)]
    pub arg_info: bool,
}

impl CompileOptions {
    pub fn new() -> Self {
        CompileOptions::default()
    }

    pub fn define(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.defines.push((name.into(), value.to_string()));
        self
    }
}

/// Resource use of one compiled kernel. `None` means the toolchain did not say.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelResources {
    pub name: String,
    pub registers: Option<u32>,
    pub spill_stores_bytes: Option<u64>,
    pub spill_loads_bytes: Option<u64>,
    pub stack_frame_bytes: Option<u64>,
    /// Shared (CUDA) / local (OpenCL) memory per block: the compiler's static
    /// count, plus what a CUDA twin takes at launch (`KernelSpec::resources`).
    pub shared_bytes: Option<u64>,
    /// Private / local (thread-private, off-chip) memory per thread.
    pub private_bytes: Option<u64>,
    pub max_threads_per_block: Option<u64>,
    pub barriers: Option<u32>,
}

/// What the compiler produced and said.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildReport {
    pub toolchain: Option<Toolchain>,
    /// The compiler and its version: "NVRTC 11.8", "OpenCL C 1.2 (NVIDIA 580.95)".
    #[serde(default)]
    pub compiler: Option<String>,
    /// Flags exactly as handed to the compiler.
    pub flags: Vec<String>,
    pub log: String,
    pub compile_ms: f64,
    /// PTX, where the toolchain gives it.
    pub ptx: Option<String>,
    pub kernels: Vec<KernelResources>,
    /// Disagreements between the compiler log and the API, options ignored, ...
    pub notes: Vec<String>,
}

impl BuildReport {
    pub fn kernel(&self, name: &str) -> Option<&KernelResources> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Notes every kernel that uses more registers than the cap asked for: the
    /// compiler did not apply it (NVIDIA OpenCL with reqd_work_group_size, NVRTC
    /// with launch bounds that need more), which a reader of the cap's row must know.
    pub(crate) fn note_ignored_cap(mut self, cap: Option<u32>) -> Self {
        let Some(cap) = cap else { return self };
        for k in &self.kernels {
            if let Some(used) = k.registers.filter(|&r| r > cap) {
                self.notes.push(format!(
                    "{}: uses {used} registers although the cap asked for at most {cap}: the compiler did not apply the cap",
                    k.name
                ));
            }
        }
        self
    }
}

/// Element type of a device buffer: the GEMMs' f32/f64, and the integers a user's
/// kernel may take (indices, counts, histograms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Elem {
    F32,
    F64,
    I32,
    U32,
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 => 8,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
        }
    }

    pub fn parse(s: &str) -> Option<Elem> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "float" => Some(Elem::F32),
            "f64" | "double" => Some(Elem::F64),
            "i32" | "int" => Some(Elem::I32),
            "u32" | "uint" => Some(Elem::U32),
            _ => None,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F64)
    }
}

/// A device buffer owned by a backend; only the backend that made it can use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub(crate) id: u64,
    pub len: usize,
    pub elem: Elem,
}

/// A compiled program owned by a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    pub(crate) id: u64,
}

pub enum HostData<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    I32(&'a [i32]),
    U32(&'a [u32]),
}

pub enum HostDataMut<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    I32(&'a mut [i32]),
    U32(&'a mut [u32]),
}

/// Page-locked host memory a backend hands out (see [`HostVec`]).
pub trait Locked<T>: Send + Sync {
    fn as_slice(&self) -> &[T];
    fn as_mut_slice(&mut self) -> &mut [T];
}

/// A host buffer results are downloaded into, thousands of times in a search:
/// page-locked where the backend gives it (the CUDA driver copies into it at the
/// bus's speed, where into pageable memory it stages the copy: 7-8 ms for a
/// 4096^2 f32 C on the H200), else an ordinary vector.
pub enum HostVec<T> {
    Plain(Vec<T>),
    Locked(Box<dyn Locked<T>>),
}

pub type HostF32 = HostVec<f32>;
pub type HostF64 = HostVec<f64>;

impl<T> Default for HostVec<T> {
    fn default() -> Self {
        HostVec::Plain(Vec::new())
    }
}

impl<T> HostVec<T> {
    pub fn as_slice(&self) -> &[T] {
        match self {
            HostVec::Plain(v) => v,
            HostVec::Locked(l) => l.as_slice(),
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            HostVec::Plain(v) => v,
            HostVec::Locked(l) => l.as_mut_slice(),
        }
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl HostData<'_> {
    fn len(&self) -> usize {
        match self {
            HostData::F32(s) => s.len(),
            HostData::F64(s) => s.len(),
            HostData::I32(s) => s.len(),
            HostData::U32(s) => s.len(),
        }
    }
    fn elem(&self) -> Elem {
        match self {
            HostData::F32(_) => Elem::F32,
            HostData::F64(_) => Elem::F64,
            HostData::I32(_) => Elem::I32,
            HostData::U32(_) => Elem::U32,
        }
    }
}

impl HostDataMut<'_> {
    fn len(&self) -> usize {
        match self {
            HostDataMut::F32(s) => s.len(),
            HostDataMut::F64(s) => s.len(),
            HostDataMut::I32(s) => s.len(),
            HostDataMut::U32(s) => s.len(),
        }
    }
    fn elem(&self) -> Elem {
        match self {
            HostDataMut::F32(_) => Elem::F32,
            HostDataMut::F64(_) => Elem::F64,
            HostDataMut::I32(_) => Elem::I32,
            HostDataMut::U32(_) => Elem::U32,
        }
    }
}

/// Typed kernel argument.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    I32(i32),
    U32(u32),
    F32(f32),
    F64(f64),
    Buf(Buffer),
    /// An OpenCL `__local` pointer argument of this many bytes. CUDA has no such
    /// argument: its kernels declare `extern __shared__` and take the bytes at
    /// launch (`Geometry::launch_local`), so a CUDA launch refuses it.
    Local(usize),
}

/// One kernel launch, borrowed: an element of a sequence (`launch_sequence`).
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    pub program: &'a Program,
    pub kernel: &'a str,
    pub geometry: &'a Geometry,
    pub args: &'a [Arg],
}

/// Launch geometry in OpenCL terms: global = total work-items per dimension
/// (a multiple of local), local = work-group (CUDA block). CUDA grid = global / local.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    pub global: [usize; 3],
    pub local: [usize; 3],
    /// Bytes of local memory a CUDA twin declares `extern __shared__` and takes at
    /// launch (beyond the 48 KiB a kernel may declare statically). OpenCL twins
    /// declare theirs statically, so the OpenCL runtimes pass nothing.
    #[serde(default)]
    pub launch_local: usize,
    /// The shared-memory carveout preference for the launch, percent (CUDA only:
    /// `Hints::carveout`); None leaves the driver's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carveout: Option<u32>,
}

impl Geometry {
    pub fn d2(global: (usize, usize), local: (usize, usize)) -> Self {
        Geometry {
            global: [global.0, global.1, 1],
            local: [local.0, local.1, 1],
            launch_local: 0,
            carveout: None,
        }
    }

    pub fn threads_per_group(&self) -> usize {
        self.local.iter().product()
    }

    pub fn groups(&self) -> [usize; 3] {
        [
            self.global[0] / self.local[0].max(1),
            self.global[1] / self.local[1].max(1),
            self.global[2] / self.local[2].max(1),
        ]
    }

    /// Checks that the geometry is launchable everywhere: non-empty, global a multiple of local.
    pub fn validate(&self) -> Result<()> {
        for d in 0..3 {
            if self.local[d] == 0 || self.global[d] == 0 {
                return Err(Error::invalid(format!(
                    "launch geometry {:?}/{:?} has an empty dimension {d}",
                    self.global, self.local
                )));
            }
            if self.global[d] % self.local[d] != 0 {
                return Err(Error::invalid(format!(
                    "launch geometry: global size {} in dimension {d} is not a multiple of the work-group size {}",
                    self.global[d], self.local[d]
                )));
            }
        }
        Ok(())
    }
}

/// The compiling half of a toolchain: CPU work that needs no launch, shared by
/// worker threads (the tuner compiles on every core while the device measures).
/// NVRTC needs no GPU at all; OpenCL builds on the device's context, which the
/// OpenCL specification makes safe to share between threads.
pub trait Compiler: Send + Sync {
    fn toolchain(&self) -> Toolchain;

    /// What it compiles for: "sm_90", or the OpenCL device's name.
    fn target(&self) -> &str;

    /// Compiles `source` (which may hold several kernels) into an artefact the
    /// device side can load. A compiler error is `Error::Compile` with the full log.
    fn compile(&self, what: &str, source: &str, options: &CompileOptions) -> Result<Artefact>;

    /// Whether builds on several threads at once run in parallel. A compiler that
    /// builds one program at a time gets one compile thread from the tuner: more
    /// only queue behind it and stall the thread that measures.
    fn parallel_builds(&self) -> bool {
        true
    }

    /// The same compiler building in `n` helper processes (`exe`: a gemmlab binary
    /// that runs the `build-worker` command), where builds serialize within a
    /// process and the helpers pay (`forced`: wherever this compiler can), else
    /// `None`. A helper that cannot start is an error.
    fn in_processes(
        &self,
        _n: usize,
        _exe: &std::path::Path,
        _forced: bool,
    ) -> Result<Option<Arc<dyn Compiler>>> {
        Ok(None)
    }
}

/// A compiled program not yet loaded on a device, with what the compiler said.
/// Its report holds what the compiler alone knows; loading adds what the
/// device's API says about each kernel.
pub struct Artefact {
    pub report: BuildReport,
    pub(crate) image: Image,
}

/// The loadable part of an artefact, per toolchain.
pub(crate) enum Image {
    OpenCl(opencl::BuiltProgram),
    Cubin(Vec<u8>),
    /// PTX the CUDA driver's JIT assembles when it loads it, under a register cap
    /// (read only by the CUDA backend: without it a clang build is not loadable here).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Ptx {
        ptx: String,
        max_registers: Option<u32>,
    },
}

impl Artefact {
    /// The CUBIN NVRTC or ptxas produced, for saving or loading elsewhere.
    pub fn cubin(&self) -> Option<&[u8]> {
        match &self.image {
            Image::Cubin(c) => Some(c),
            Image::OpenCl(_) | Image::Ptx { .. } => None,
        }
    }
}

/// One toolchain on one device.
#[enum_dispatch]
pub trait Backend {
    fn info(&self) -> &DeviceInfo;

    /// This device's compiler, to be used from any thread.
    fn compiler(&self) -> Arc<dyn Compiler>;

    /// Loads an artefact made by this backend's compiler; returns the program and
    /// the build report completed with what the device's API says.
    fn load(&mut self, what: &str, artefact: Artefact) -> Result<(Program, BuildReport)>;

    /// Compiles and loads `source`. A compiler error is `Error::Compile` carrying the full log.
    fn compile(
        &mut self,
        what: &str,
        source: &str,
        options: &CompileOptions,
    ) -> Result<(Program, BuildReport)> {
        let artefact = self.compiler().compile(what, source, options)?;
        self.load(what, artefact)
    }

    fn release_program(&mut self, program: Program);

    /// Loads PTX produced elsewhere (NVIDIA OpenCL's through the CUDA driver, NVRTC's
    /// or clang's through NVIDIA's OpenCL runtime as a program binary), with its log
    /// parsed like a build log. Other platforms cannot.
    fn load_ptx(
        &mut self,
        what: &str,
        _ptx: &str,
        _max_registers: Option<u32>,
    ) -> Result<(Program, BuildReport)> {
        Err(Error::Unavailable {
            kernel: what.to_string(),
            toolchain: self.info().toolchain.to_string(),
            reason: "only the CUDA driver and NVIDIA's OpenCL runtime load PTX".into(),
        })
    }

    fn alloc(&mut self, elem: Elem, len: usize) -> Result<Buffer>;
    /// `len` elements of `parent` from element `offset`, as a buffer of its own
    /// that kernels take like any other and that shares the parent's memory:
    /// what guard zones are made of. `offset` bytes must be a multiple of
    /// [`VIEW_ALIGN_BYTES`]; free the view before its parent.
    fn view(&mut self, parent: &Buffer, offset: usize, len: usize) -> Result<Buffer>;
    /// The parameters of `entry` in a loaded program, where the toolchain tells
    /// them without a launch (OpenCL's kernel argument info); None elsewhere
    /// (the PTX of the build says them: `ptx::entry_params`).
    fn kernel_params(&mut self, _program: &Program, _entry: &str) -> Option<Vec<KernelParam>> {
        None
    }
    fn free(&mut self, buffer: Buffer);
    fn upload(&mut self, buffer: &Buffer, data: HostData<'_>) -> Result<()>;
    fn download(&mut self, buffer: &Buffer, data: HostDataMut<'_>) -> Result<()>;
    /// Sets every element to `value` on the device.
    fn fill(&mut self, buffer: &Buffer, value: f64) -> Result<()>;

    /// Launches a kernel and waits for it; returns its device-event time in nanoseconds.
    fn launch(
        &mut self,
        program: &Program,
        kernel: &str,
        geometry: &Geometry,
        args: &[Arg],
    ) -> Result<u64> {
        self.launch_batch(program, kernel, geometry, args, 1)
    }

    /// Launches a kernel `count` times back to back (at least once) and waits;
    /// returns the device time of the whole batch between one pair of events, in
    /// nanoseconds: for kernels shorter than the timer resolves.
    fn launch_batch(
        &mut self,
        program: &Program,
        kernel: &str,
        geometry: &Geometry,
        args: &[Arg],
        count: usize,
    ) -> Result<u64> {
        let one = Launch {
            program,
            kernel,
            geometry,
            args,
        };
        self.launch_sequence(&[one], count)
    }

    /// Runs `launches` in order, the whole sequence `count` times back to back
    /// (at least once), and waits. Returns the device time of all of it as one
    /// span, in nanoseconds: between one pair of events on CUDA, from the first
    /// launch's start to the last one's end on OpenCL. Every launch is resolved
    /// before the first is queued, so a bad one queues nothing.
    fn launch_sequence(&mut self, launches: &[Launch<'_>], count: usize) -> Result<u64>;

    /// The vendor library's GEMM (SGEMM on f32 buffers, DGEMM on f64) as `call`
    /// states it, `count` calls back to back (at least one) timed by one pair of
    /// device events: the batch's nanoseconds. `Ok(None)` where the toolchain has none.
    fn vendor_gemm(&mut self, _call: &GemmCall, _count: usize) -> Result<Option<u64>> {
        Ok(None)
    }

    /// Free and total device memory in bytes, where the toolchain tells.
    fn memory_info(&self) -> Option<(u64, u64)> {
        None
    }

    /// Name and version of the vendor BLAS, if any.
    fn vendor_blas(&self) -> Option<String> {
        None
    }

    /// Whether waiting for a timed launch to end puts the thread to sleep (true)
    /// or keeps it spinning on a core (false, the driver's choice where it makes
    /// one): a tuner that compiles on every core wants its measuring thread
    /// asleep. Device times are the same either way.
    fn sleep_while_waiting(&mut self, _sleep: bool) -> Result<()> {
        Ok(())
    }

    /// A host buffer of `len` f32 (zeros) that downloads from this device are
    /// fastest into; an ordinary vector where the toolchain has nothing faster.
    fn host_f32(&mut self, len: usize) -> HostF32 {
        HostVec::Plain(vec![0.0; len])
    }

    /// `host_f32` for f64.
    fn host_f64(&mut self, len: usize) -> HostF64 {
        HostVec::Plain(vec![0.0; len])
    }
}

/// One column-major BLAS GEMM call on device buffers:
/// C = alpha op(A) op(B) + beta C, element (i, j) of a stored matrix at `offset + j * ld + i`.
#[derive(Clone, Copy, Debug)]
pub struct GemmCall {
    pub trans_a: bool,
    pub trans_b: bool,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f64,
    pub beta: f64,
    pub a: Buffer,
    pub a_offset: usize,
    pub lda: usize,
    pub b: Buffer,
    pub b_offset: usize,
    pub ldb: usize,
    pub c: Buffer,
    pub c_offset: usize,
    pub ldc: usize,
    /// f32 through the vendor's TF32 tensor-core mode (cuBLAS CUBLAS_TF32_TENSOR_OP_MATH):
    /// operands rounded to TF32, a lower precision than FP32. Off: plain FP32.
    pub tf32: bool,
}

impl GemmCall {
    /// C = A * B with tight leading dimensions, no offsets.
    pub fn plain(m: usize, n: usize, k: usize, a: Buffer, b: Buffer, c: Buffer) -> GemmCall {
        GemmCall {
            trans_a: false,
            trans_b: false,
            m,
            n,
            k,
            alpha: 1.0,
            beta: 0.0,
            a,
            a_offset: 0,
            lda: m.max(1),
            b,
            b_offset: 0,
            ldb: k.max(1),
            c,
            c_offset: 0,
            ldc: m.max(1),
            tf32: false,
        }
    }
}

/// One parameter of a kernel's entry point as its compiler declared it, as far
/// as the toolchain tells (OpenCL's kernel argument info, PTX's `.entry` list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelParam {
    /// The parameter's name in the source, where known.
    pub name: Option<String>,
    /// global, local, constant or private (a value); None where unknown.
    pub space: Option<&'static str>,
    /// The declared type ("float*", "int", PTX ".f32"), where known.
    pub type_name: Option<String>,
    /// Bytes a value takes (a PTX parameter's width), where known.
    pub bytes: Option<usize>,
}

/// The alignment of a view's start within its parent: a multiple of every
/// OpenCL device's base address alignment (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`,
/// 1024 to 4096 bits on the devices seen) and of CUDA's 256-byte allocations.
pub const VIEW_ALIGN_BYTES: usize = 4096;

/// Why a view cannot be made of `parent`, if it cannot.
pub(crate) fn view_misfit(parent: &Buffer, offset: usize, len: usize) -> Option<String> {
    if offset.checked_add(len).is_none_or(|end| end > parent.len) {
        return Some(format!(
            "a view of elements {offset}..{} of a buffer of {}",
            offset.saturating_add(len),
            parent.len
        ));
    }
    if (offset * parent.elem.size()) % VIEW_ALIGN_BYTES != 0 {
        return Some(format!(
            "a view at element {offset}: its start is not a multiple of {VIEW_ALIGN_BYTES} bytes"
        ));
    }
    None
}

/// Static dispatch over the toolchains compiled in.
#[enum_dispatch(Backend)]
pub enum AnyBackend {
    OpenCl(OpenClBackend),
    #[cfg(feature = "cuda")]
    Cuda(CudaBackend),
}

impl AnyBackend {
    pub fn toolchain(&self) -> Toolchain {
        self.info().toolchain
    }
}

/// ptxas's report of a build, from the compiler's log or, where the compute cache
/// served the build again without one (the same input, assembled before), from
/// this process's earlier build of it; only when this process never saw one is
/// it assembled once more (`again`, made new to the cache with [`cache_nonce`]).
/// So a repeated build costs a lookup, not a second assembly. `key`: everything
/// the report depends on (compiler, target or device, options, source or PTX).
pub(crate) fn ptxas_report(
    key: &[&str],
    from_log: Vec<KernelResources>,
    again: impl FnOnce() -> Vec<KernelResources>,
) -> Vec<KernelResources> {
    type Seen = std::sync::Mutex<std::collections::HashMap<u64, Vec<KernelResources>>>;
    static SEEN: std::sync::OnceLock<Seen> = std::sync::OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let key = crate::util::keys::fnv1a_bytes(key.join("\0").as_bytes());
    let remember = |r: &Vec<KernelResources>| {
        if let Ok(mut m) = seen.lock() {
            m.insert(key, r.clone());
        }
    };
    if !from_log.is_empty() {
        remember(&from_log);
        return from_log;
    }
    if let Some(r) = seen.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return r;
    }
    let r = again();
    if !r.is_empty() {
        remember(&r);
    }
    r
}

/// Text no earlier build in any process had (process, time, a counter): what makes
/// a program new to the driver's compute cache, which answers a PTX it assembled
/// before without ptxas's report.
pub(crate) fn cache_nonce() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}_{stamp}_{n}", std::process::id())
}

pub(crate) fn check_len(buffer: &Buffer, elem: Elem, len: usize) -> Result<()> {
    if buffer.elem != elem || buffer.len != len {
        return Err(Error::invalid(format!(
            "host data of {len} {elem:?} does not match device buffer of {} {:?}",
            buffer.len, buffer.elem
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_f32_keeps_a_nans_payload() {
        let nan = f32::from_bits(0xFFC0_1234);
        let wide = f64::from_bits(0xFFF8_0000_0000_0000 | (0x1234u64 << 29));
        assert_eq!(fill_f32(wide).to_bits(), nan.to_bits());
        assert_eq!(fill_f32(1.5), 1.5);
        assert_eq!(fill_f32(f64::INFINITY), f32::INFINITY);
    }

    #[test]
    fn pci_bus_ids_of_cuda_nvml_and_opencl_agree() {
        let cuda = parse_pci_bus_id("0000:3B:00.0");
        assert_eq!(cuda, Some([0, 0x3b, 0, 0]));
        assert_eq!(parse_pci_bus_id("00000000:3b:00.0"), cuda);
        assert_eq!(parse_pci_bus_id("3b:00.0"), cuda);
        assert_eq!(format_pci_bus_id([1, 0x3b, 0x1f, 7]), "0001:3b:1f.7");
        let back = parse_pci_bus_id(&format_pci_bus_id([1, 0x3b, 0x1f, 7]));
        assert_eq!(back, Some([1, 0x3b, 0x1f, 7]));
        for bad in [
            "",
            "3b",
            "0000:3b:00",
            "0000:zz:00.0",
            "0000:3b:20.0",
            "1:2:3:4.0",
        ] {
            assert_eq!(parse_pci_bus_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_build_the_cache_serves_again_takes_the_report_this_process_read() {
        let k = |name: &str, regs: u32| KernelResources {
            name: name.into(),
            registers: Some(regs),
            ..Default::default()
        };
        let never = || -> Vec<KernelResources> { panic!("assembled again") };
        let key = [
            "NVRTC 13.0",
            "sm_90",
            "options",
            "the source, a unique test one",
        ];
        // The first build's log has the report: kept, nothing assembled again.
        assert_eq!(
            ptxas_report(&key, vec![k("gemm", 96)], never),
            [k("gemm", 96)]
        );
        // Served from the compute cache (no report in the log): this process's report.
        assert_eq!(ptxas_report(&key, Vec::new(), never), [k("gemm", 96)]);
        // Another build (here, another option) this process never saw is assembled again,
        // once: its report is then remembered too.
        let other = [
            "NVRTC 13.0",
            "sm_90",
            "maxrregcount=64",
            "the source, a unique test one",
        ];
        assert_eq!(
            ptxas_report(&other, Vec::new(), || vec![k("gemm", 64)]),
            [k("gemm", 64)]
        );
        assert_eq!(ptxas_report(&other, Vec::new(), never), [k("gemm", 64)]);
        // Nothing known and nothing found: unknown stays unknown, and is asked again next time.
        let none = [
            "NVRTC 13.0",
            "sm_90",
            "",
            "a source with no entry, a unique test one",
        ];
        assert!(ptxas_report(&none, Vec::new(), Vec::new).is_empty());
        assert_eq!(
            ptxas_report(&none, Vec::new(), || vec![k("x", 8)]),
            [k("x", 8)]
        );
    }
}
