//! NVRTC, loaded at run time from a library the run chooses.
//!
//! NVRTC needs no GPU and no driver, and each CUDA release's NVRTC targets a
//! different range of architectures (11.8 is the last for Kepler sm_35/sm_37;
//! 13.x dropped sm_50 to sm_72). So the library is a choice, not a global:
//!
//! - the default is the first `libnvrtc.so*` the dynamic loader finds
//!   (LD_LIBRARY_PATH, the ldconfig cache), else the newest NVRTC in gemmlab's
//!   cache of NVIDIA's pip wheels;
//! - `--nvrtc 11.8` (or `12`, `13`, `12.9.86`) picks the newest cached wheel of
//!   that version (`scripts/nvrtc/fetch.sh` fills the cache), else a loader-path
//!   NVRTC of that version;
//! - `--nvrtc PATH` opens that libnvrtc file (or the NVRTC inside that folder).
//!
//! Each library is opened once per process and never unloaded; several
//! versions live side by side (their sonames differ, and each finds its own
//! libnvrtc-builtins next to itself through its `$ORIGIN` run path).
//! Compiling is safe from many threads at once: NVRTC programs are independent.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use libloading::Library;

use super::{
    ptxas, Artefact, BuildReport, CompileOptions, Compiler, DeviceInfo, DeviceKind, Image,
    KernelResources, Toolchain,
};
use crate::error::{Error, Result};

type Program = *mut c_void;

/// The NVRTC entry points gemmlab uses. The CUBIN calls appeared in NVRTC 11.1
/// and the supported-architecture list in 11.2; older libraries load without them.
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Program) -> c_int,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    cubin_size: Option<unsafe extern "C" fn(Program, *mut usize) -> c_int>,
    cubin: Option<unsafe extern "C" fn(Program, *mut c_char) -> c_int>,
    num_archs: Option<unsafe extern "C" fn(*mut c_int) -> c_int>,
    archs: Option<unsafe extern "C" fn(*mut c_int) -> c_int>,
}

const NVRTC_SUCCESS: c_int = 0;

/// Where a library came from, for people reading the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Found by the dynamic loader under this name.
    LoaderPath(String),
    /// From gemmlab's wheel cache: the wheel's version ("11.8.89").
    Cache(String),
    /// A file named on the command line.
    File,
}

/// One loaded libnvrtc.
pub struct Nvrtc {
    api: Api,
    /// The file that was mapped (for a loader-path name, where it was found).
    path: PathBuf,
    origin: Origin,
    version: (u32, u32),
    archs: Option<Vec<u32>>,
    // Last: the function pointers above point into it.
    _lib: Library,
}

impl fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nvrtc")
            .field("version", &self.version)
            .field("path", &self.path)
            .field("origin", &self.origin)
            .finish()
    }
}

/// The names the dynamic loader is asked for, newest first. CUDA 11.2-11.8 ship
/// libnvrtc.so.11.2; 12.x libnvrtc.so.12; 13.x libnvrtc.so.13.
pub const LOADER_NAMES: [&str; 7] = [
    "libnvrtc.so",
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
    "libnvrtc.so.11.1",
    "libnvrtc.so.11.0",
    "libnvrtc.so.11",
];

/// Every library opened so far, by the file it maps: one handle per file.
fn loaded() -> &'static Mutex<Vec<Arc<Nvrtc>>> {
    static LOADED: OnceLock<Mutex<Vec<Arc<Nvrtc>>>> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(Vec::new()))
}

fn nvrtc_err(call: &str, message: impl Into<String>) -> Error {
    Error::Api {
        toolchain: "NVRTC".into(),
        call: call.into(),
        message: message.into(),
    }
}

/// The first of `names` that `get` finds, with the name found. Lets a caller
/// prefer a newer entry point and fall back to an older one.
pub fn first_symbol<F>(
    names: &[&'static str],
    get: impl Fn(&str) -> Option<F>,
) -> Option<(F, &'static str)> {
    names.iter().find_map(|n| get(n).map(|f| (f, *n)))
}

/// The file mapped at `addr` in this process, from /proc/self/maps (Linux).
fn mapped_file(addr: usize) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        let (lo, hi) = parts.next()?.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        let path = parts.nth(4)?;
        (lo <= addr && addr < hi && path.starts_with('/')).then(|| PathBuf::from(path))
    })
}

impl Nvrtc {
    /// Opens a libnvrtc by file name or loader name, once per process.
    fn load(name: &Path, origin: Origin) -> Result<Arc<Nvrtc>> {
        let mut all = loaded().lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(real) = name.canonicalize() {
            if let Some(n) = all
                .iter()
                .find(|n| n.path.canonicalize().ok().as_ref() == Some(&real))
            {
                return Ok(n.clone());
            }
        }
        let shown = name.display().to_string();
        // SAFETY: loading runs the library's initialisers; libnvrtc's only set up
        // its own state. Nothing else is assumed of the file yet.
        let lib = unsafe { Library::new(name.as_os_str()) }
            .map_err(|e| Error::invalid(format!("cannot load NVRTC from {shown}: {e}")))?;
        let api = Self::bind(&lib, &shown)?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints.
        let r = unsafe { (api.version)(&mut major, &mut minor) };
        if r != NVRTC_SUCCESS {
            return Err(nvrtc_err("nvrtcVersion", format!("{shown}: error {r}")));
        }
        let archs = match (api.num_archs, api.archs) {
            (Some(num), Some(list)) => {
                let mut n: c_int = 0;
                // SAFETY: writes one int.
                let ok = unsafe { num(&mut n) } == NVRTC_SUCCESS && n > 0 && n < 1024;
                if ok {
                    let mut v = vec![0 as c_int; n as usize];
                    // SAFETY: the buffer holds the n ints nvrtcGetNumSupportedArchs announced.
                    (unsafe { list(v.as_mut_ptr()) } == NVRTC_SUCCESS)
                        .then(|| v.into_iter().map(|a| a.max(0) as u32).collect())
                } else {
                    None
                }
            }
            _ => None,
        };
        let path = mapped_file(api.version as usize).unwrap_or_else(|| name.to_path_buf());
        if let Some(n) = all.iter().find(|n| n.path == path) {
            // A loader name that resolved to a file already open under another name.
            return Ok(n.clone());
        }
        let n = Arc::new(Nvrtc {
            api,
            path,
            origin,
            version: (major.max(0) as u32, minor.max(0) as u32),
            archs,
            _lib: lib,
        });
        all.push(n.clone());
        Ok(n)
    }

    fn bind(lib: &Library, shown: &str) -> Result<Api> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the type is the NVRTC prototype of this entry point.
                unsafe { lib.get($name) }
                    .map(|s| *s)
                    .map_err(|e| Error::invalid(format!("{shown} is not a usable libnvrtc: {e}")))?
            };
        }
        macro_rules! opt {
            ($name:literal) => {
                // SAFETY: as above; absent in older NVRTC releases.
                unsafe { lib.get($name) }.ok().map(|s| *s)
            };
        }
        Ok(Api {
            version: sym!("nvrtcVersion"),
            error_string: sym!("nvrtcGetErrorString"),
            create: sym!("nvrtcCreateProgram"),
            compile: sym!("nvrtcCompileProgram"),
            destroy: sym!("nvrtcDestroyProgram"),
            log_size: sym!("nvrtcGetProgramLogSize"),
            log: sym!("nvrtcGetProgramLog"),
            ptx_size: sym!("nvrtcGetPTXSize"),
            ptx: sym!("nvrtcGetPTX"),
            cubin_size: opt!("nvrtcGetCUBINSize"),
            cubin: opt!("nvrtcGetCUBIN"),
            num_archs: opt!("nvrtcGetNumSupportedArchs"),
            archs: opt!("nvrtcGetSupportedArchs"),
        })
    }

    /// The default NVRTC: the first on the loader path, else the newest cached
    /// wheel. Looked up once per process; `Err` says where it was looked for.
    pub fn default_library() -> std::result::Result<Arc<Nvrtc>, String> {
        static DEFAULT: OnceLock<std::result::Result<Arc<Nvrtc>, String>> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                if let Some(n) = Self::on_loader_path() {
                    return Ok(n);
                }
                if let Some(c) = cache::cached().into_iter().rev().find_map(|c| c.open().ok()) {
                    return Ok(c);
                }
                Err(format!(
                    "no libnvrtc found: none of {} on the loader path (LD_LIBRARY_PATH, ldconfig) and none in {} \
                     (fetch NVIDIA's NVRTC wheels with scripts/nvrtc/fetch.sh, or give --nvrtc PATH)",
                    LOADER_NAMES.join(", "),
                    cache::describe_dir()
                ))
            })
            .clone()
    }

    /// The first libnvrtc the dynamic loader finds under its usual names.
    pub fn on_loader_path() -> Option<Arc<Nvrtc>> {
        LOADER_NAMES
            .iter()
            .find_map(|n| Self::load(Path::new(n), Origin::LoaderPath(n.to_string())).ok())
    }

    /// Opens the libnvrtc at `path` (a file, or a folder holding one, such as a
    /// cache entry).
    pub fn open(path: &Path) -> Result<Arc<Nvrtc>> {
        if path.is_dir() {
            let lib = cache::library_in(path).ok_or_else(|| {
                Error::invalid(format!(
                    "--nvrtc {}: the folder holds no libnvrtc.so* (looked in it, lib/, lib64/ and nvidia/*/lib/)",
                    path.display()
                ))
            })?;
            return Self::load(&lib, Origin::File);
        }
        if !path.exists() {
            return Err(Error::invalid(format!(
                "--nvrtc {}: no such file",
                path.display()
            )));
        }
        // A path inside the cache keeps its wheel version in the output.
        let real = path.canonicalize().ok();
        let origin = cache::cached()
            .into_iter()
            .find(|c| real.is_some() && c.library.canonicalize().ok() == real)
            .map_or(Origin::File, |c| Origin::Cache(c.version));
        Self::load(path, origin)
    }

    /// `--nvrtc`: None is the default library; a value is a version ("11.8",
    /// "12", "13", "12.9.86") or a path to a libnvrtc (or a folder holding one).
    pub fn choose(spec: Option<&str>) -> Result<Arc<Nvrtc>> {
        let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty()) else {
            return Self::default_library().map_err(Error::CudaUnavailable);
        };
        if looks_like_path(spec) {
            return Self::open(Path::new(spec));
        }
        let wanted = parse_version(spec).ok_or_else(|| {
            Error::invalid(format!(
                "--nvrtc {spec}: give a version (11.8, 12, 13, 12.9.86) or a path to a libnvrtc.so"
            ))
        })?;
        if let Some(c) = cache::find(&wanted) {
            return c.open();
        }
        if let Some(n) =
            Self::on_loader_path().filter(|n| version_matches(&n.version_parts(), &wanted))
        {
            return Ok(n);
        }
        let have: Vec<String> = cache::cached().iter().map(|c| c.version.clone()).collect();
        let loader = Self::on_loader_path().map_or("none".to_string(), |n| {
            format!("{} ({})", n.label(), n.path.display())
        });
        Err(Error::invalid(format!(
            "--nvrtc {spec}: no NVRTC {spec} in {} (cached: {}) nor on the loader path (found: {loader}); \
             scripts/nvrtc/fetch.sh fetches NVIDIA's NVRTC wheels 11.8, 12 and 13 into the cache",
            cache::describe_dir(),
            if have.is_empty() { "none".to_string() } else { have.join(", ") },
        )))
    }

    fn version_parts(&self) -> Vec<u32> {
        match &self.origin {
            Origin::Cache(v) => {
                parse_version(v).unwrap_or_else(|| vec![self.version.0, self.version.1])
            }
            _ => vec![self.version.0, self.version.1],
        }
    }

    /// (major, minor) as NVRTC reports it.
    pub fn version(&self) -> (u32, u32) {
        self.version
    }

    /// "NVRTC 11.8": what results record as the compiler version.
    pub fn label(&self) -> String {
        format!("NVRTC {}.{}", self.version.0, self.version.1)
    }

    /// "NVRTC 11.8 (wheel 11.8.89, /root/.cache/...)", for people.
    pub fn describe(&self) -> String {
        match &self.origin {
            Origin::Cache(v) => format!("{} (wheel {v}, {})", self.label(), self.path.display()),
            Origin::LoaderPath(_) | Origin::File => {
                format!("{} ({})", self.label(), self.path.display())
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The real architectures it compiles for (35, 37, 50, ... 90), where it says
    /// (NVRTC 11.2 and later).
    pub fn supported_archs(&self) -> Option<&[u32]> {
        self.archs.as_deref()
    }

    /// "sm_35 sm_37 ... sm_90", or why unknown.
    pub fn archs_text(&self) -> String {
        match &self.archs {
            Some(list) => list
                .iter()
                .map(|a| format!("sm_{a}"))
                .collect::<Vec<_>>()
                .join(" "),
            None => "unknown (nvrtcGetSupportedArchs needs NVRTC 11.2 or later)".into(),
        }
    }

    /// The NVRTC for compiling offline for `arch`: the one `--nvrtc` names; else the
    /// default where it takes `arch`; else the newest cached one that does, with a
    /// note saying which and why (None: the default served).
    pub fn choose_for(spec: Option<&str>, arch: &Arch) -> Result<(Arc<Nvrtc>, Option<String>)> {
        if spec.is_some_and(|s| !s.trim().is_empty()) {
            return Ok((Self::choose(spec)?, None));
        }
        let default = Self::choose(None);
        let refused = match &default {
            Ok(n) => match n.check_arch(arch) {
                Ok(()) => return Ok((Arc::clone(n), None)),
                Err(e) => e,
            },
            Err(e) => Error::invalid(e.to_string()),
        };
        for c in cache::cached().iter().rev() {
            let Ok(n) = c.open() else { continue };
            if n.check_arch(arch).is_ok() {
                let instead = default
                    .as_ref()
                    .map_or("no default NVRTC".to_string(), |d| {
                        format!("the default, {}, does not", d.label())
                    });
                let note = format!(
                    "{arch}: compiling with {}, the newest cached NVRTC that targets it ({instead}; --nvrtc picks another)",
                    n.label()
                );
                return Ok((n, Some(note)));
            }
        }
        Err(refused)
    }

    /// Refuses an architecture this NVRTC does not compile for, listing those it does.
    pub fn check_arch(&self, arch: &Arch) -> Result<()> {
        let Some(list) = &self.archs else {
            return Ok(());
        };
        if list.contains(&arch.number) {
            return Ok(());
        }
        let hint = if matches!(arch.number, 35 | 37) && self.version.0 >= 12 {
            " NVRTC 11.8 is the last that targets Kepler (sm_35, sm_37): --nvrtc 11.8 (scripts/nvrtc/fetch.sh 11.8)."
        } else if (50..75).contains(&arch.number) && self.version.0 >= 13 {
            " CUDA 13 dropped sm_50 to sm_72: use --nvrtc 12 or --nvrtc 11.8."
        } else if list.iter().all(|a| *a < arch.number) && self.version.0 < 13 {
            " A newer NVRTC is needed: --nvrtc 13 (scripts/nvrtc/fetch.sh 13)."
        } else {
            ""
        };
        Err(Error::invalid(format!(
            "{} cannot compile for {arch}: it supports {}.{hint}",
            self.describe(),
            self.archs_text()
        )))
    }

    fn error_text(&self, r: c_int) -> String {
        // SAFETY: nvrtcGetErrorString returns a static string for any code.
        let p = unsafe { (self.api.error_string)(r) };
        if p.is_null() {
            return format!("NVRTC error {r}");
        }
        // SAFETY: a NUL-terminated static string from NVRTC.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Reads one of NVRTC's sized outputs (log, PTX, CUBIN).
    ///
    /// # Safety
    /// `prog` is a live program of this library; `size`/`get` are a matching pair.
    unsafe fn read(
        &self,
        prog: Program,
        size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
        get: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    ) -> Option<Vec<u8>> {
        let mut n = 0usize;
        if unsafe { size(prog, &mut n) } != NVRTC_SUCCESS || n == 0 {
            return None;
        }
        let mut buf = vec![0u8; n];
        (unsafe { get(prog, buf.as_mut_ptr().cast()) } == NVRTC_SUCCESS).then_some(buf)
    }

    /// Compiles `source` for `arch` ("sm_35" for a CUBIN with ptxas's report,
    /// "compute_35" for PTX only). Needs no GPU.
    pub fn compile(
        &self,
        what: &str,
        source: &str,
        arch: &str,
        options: &CompileOptions,
    ) -> Result<NvrtcOutput> {
        let flags = nvrtc_flags(arch, options);
        let cflags: Vec<CString> = flags
            .iter()
            .map(|f| c_string("a compiler flag", f))
            .collect::<Result<_>>()?;
        let src = c_string("the source", source)?;
        let name = c_string("the program name", &format!("{what}.cu"))?;
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: valid NUL-terminated strings; no headers.
        let r = unsafe {
            (self.api.create)(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != NVRTC_SUCCESS {
            return Err(nvrtc_err("nvrtcCreateProgram", self.error_text(r)));
        }
        let ptrs: Vec<*const c_char> = cflags.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: prog is live; the option strings outlive the call.
        let compiled = unsafe { (self.api.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr()) };
        let text = |b: Vec<u8>| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        };
        // SAFETY: prog is live until destroyed below; matching size/get pairs.
        let log = unsafe { self.read(prog, self.api.log_size, self.api.log) }
            .map(text)
            .unwrap_or_default();
        let result = if compiled != NVRTC_SUCCESS {
            Err(Error::Compile {
                toolchain: self.label(),
                what: what.to_string(),
                log: format!(
                    "{}\n(nvrtcCompileProgram: {}; flags: {})",
                    log.trim_end(),
                    self.error_text(compiled),
                    flags.join(" ")
                ),
            })
        } else {
            // SAFETY: as above.
            let ptx = unsafe { self.read(prog, self.api.ptx_size, self.api.ptx) }
                .map(text)
                .filter(|p| !p.is_empty());
            let cubin = match (arch.starts_with("sm_"), self.api.cubin_size, self.api.cubin) {
                // SAFETY: as above.
                (true, Some(size), Some(get)) => unsafe { self.read(prog, size, get) },
                _ => None,
            };
            Ok(NvrtcOutput {
                log,
                ptx,
                cubin,
                flags,
            })
        };
        // SAFETY: created above, destroyed once.
        unsafe { (self.api.destroy)(&mut prog) };
        result
    }
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/') || s.contains(".so")
}

/// "11.8.89" -> [11, 8, 89]; None unless dot-separated numbers.
pub fn parse_version(s: &str) -> Option<Vec<u32>> {
    let v: Option<Vec<u32>> = s.split('.').map(|p| p.parse().ok()).collect();
    v.filter(|v| !v.is_empty())
}

/// Whether `have` ("11.8.89") is the version `wanted` ("11.8", "11") names.
pub fn version_matches(have: &[u32], wanted: &[u32]) -> bool {
    wanted.len() <= have.len() && have[..wanted.len()] == *wanted
}

fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid(format!("{what} contains a NUL byte")))
}

/// What NVRTC produced for one source.
#[derive(Debug, Clone)]
pub struct NvrtcOutput {
    pub log: String,
    pub ptx: Option<String>,
    pub cubin: Option<Vec<u8>>,
    pub flags: Vec<String>,
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

/// A real GPU architecture: `sm_35`, `sm_90a`, `sm_120`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Arch {
    /// 35, 90, 120: major * 10 + minor.
    pub number: u32,
    /// "a" or "f" for the architecture-specific variants, else empty.
    pub suffix: String,
}

impl Arch {
    /// `sm_35`, `sm35`, `35` or `3.5`; `sm_90a` keeps its suffix.
    pub fn parse(s: &str) -> Result<Arch> {
        let t = s.trim().to_ascii_lowercase();
        let bad = || {
            Error::invalid(format!(
                "--arch {s}: give a real architecture such as sm_35, sm_37, sm_50, sm_90 or sm_120"
            ))
        };
        let (number, suffix) = if let Some((major, minor)) = t.split_once('.') {
            let major: u32 = major.parse().map_err(|_| bad())?;
            let minor: u32 = minor.parse().map_err(|_| bad())?;
            if minor > 9 {
                return Err(bad());
            }
            (major * 10 + minor, String::new())
        } else {
            let body = t
                .strip_prefix("sm_")
                .or_else(|| t.strip_prefix("sm"))
                .unwrap_or(&t);
            let digits: String = body.chars().take_while(char::is_ascii_digit).collect();
            let suffix = &body[digits.len()..];
            if !matches!(suffix, "" | "a" | "f") {
                return Err(bad());
            }
            (digits.parse().map_err(|_| bad())?, suffix.to_string())
        };
        if !(10..=199).contains(&number) {
            return Err(bad());
        }
        Ok(Arch { number, suffix })
    }

    pub fn from_compute_capability(major: u32, minor: u32) -> Arch {
        Arch {
            number: major * 10 + minor,
            suffix: String::new(),
        }
    }

    /// (3, 5) for sm_35, (12, 0) for sm_120.
    pub fn compute_capability(&self) -> (u32, u32) {
        (self.number / 10, self.number % 10)
    }

    /// "sm_35"
    pub fn name(&self) -> String {
        format!("sm_{}{}", self.number, self.suffix)
    }

    /// The virtual architecture of the same features: "compute_90a" for sm_90a.
    pub fn virtual_name(&self) -> String {
        format!("compute_{}{}", self.number, self.suffix)
    }

    /// The architecture a source is compiled for: this one, or its `a` variant
    /// where the source uses architecture-specific instructions
    /// (`CompileOptions::arch_specific`), which exist from sm_90 on. `Err` is
    /// the reason this architecture cannot take such a source.
    pub fn target_for(&self, arch_specific: bool) -> std::result::Result<Arch, String> {
        if !arch_specific {
            return Ok(self.clone());
        }
        if self.number < 90 {
            return Err(format!(
                "the source needs the architecture-specific features of sm_90a (wgmma); this target is {self}"
            ));
        }
        Ok(Arch {
            number: self.number,
            suffix: "a".into(),
        })
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A compiler for one architecture through one NVRTC: needs neither a GPU nor a
/// driver, and may be called from many threads at once.
pub struct NvrtcCompiler {
    nvrtc: Arc<Nvrtc>,
    arch: Arch,
    target: String,
}

impl NvrtcCompiler {
    /// Refuses an architecture the library does not compile for, listing those it does.
    pub fn new(nvrtc: Arc<Nvrtc>, arch: &Arch) -> Result<NvrtcCompiler> {
        nvrtc.check_arch(arch)?;
        Ok(NvrtcCompiler {
            nvrtc,
            arch: arch.clone(),
            target: arch.name(),
        })
    }

    pub fn nvrtc(&self) -> &Arc<Nvrtc> {
        &self.nvrtc
    }

    pub fn arch(&self) -> &Arch {
        &self.arch
    }
}

impl Compiler for NvrtcCompiler {
    fn toolchain(&self) -> Toolchain {
        Toolchain::Cuda
    }

    fn target(&self) -> &str {
        &self.target
    }

    fn compile(&self, what: &str, source: &str, options: &CompileOptions) -> Result<Artefact> {
        let arch = self
            .arch
            .target_for(options.arch_specific)
            .map_err(|reason| Error::Unavailable {
                kernel: what.to_string(),
                toolchain: self.nvrtc.label(),
                reason,
            })?;
        let target = arch.name();
        let mut notes = Vec::new();
        if target != self.target {
            notes.push(format!(
                "compiled for {target}, not {}: the source uses architecture-specific instructions (wgmma)",
                self.target
            ));
        }
        let started = Instant::now();
        let out = self.nvrtc.compile(what, source, &target, options)?;
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut kernels = ptxas::parse_ptxas_log(&out.log);
        if out.cubin.is_some() {
            let (label, opts) = (self.nvrtc.label(), format!("{options:?}"));
            kernels = super::ptxas_report(&[&label, &target, &opts, source], kernels, || {
                self.assemble_uncached(what, source, &target, options)
            });
        }
        // PTX is kept for comparison; when NVRTC gives none for a real
        // architecture, compile once more for the virtual one.
        let ptx = match out.ptx {
            Some(p) => Some(p),
            None => {
                let virt = arch.virtual_name();
                self.nvrtc
                    .compile(what, source, &virt, options)
                    .ok()
                    .and_then(|o| o.ptx)
            }
        };
        let cubin = out.cubin.ok_or_else(|| {
            nvrtc_err(
                "nvrtcGetCUBIN",
                format!(
                    "{} gave no CUBIN for {target} (nvrtcGetCUBIN needs NVRTC 11.1 or later)",
                    self.nvrtc.label(),
                ),
            )
        })?;
        let report = BuildReport {
            toolchain: Some(Toolchain::Cuda),
            compiler: Some(self.nvrtc.label()),
            flags: out.flags,
            kernels,
            log: out.log,
            compile_ms,
            ptx,
            notes,
        }
        .note_ignored_cap(options.max_registers);
        Ok(Artefact {
            report,
            image: Image::Cubin(cubin),
        })
    }
}

impl NvrtcCompiler {
    /// NVRTC's ptxas goes through the driver's compute cache: PTX it assembled
    /// before (in this process or another, with the same options) comes back
    /// without ptxas's lines, so spills and stack would go unrecorded. The source
    /// is then compiled once more with an empty entry point that makes its PTX new
    /// to the cache, for the report of its own kernels alone (ptxas allocates each
    /// entry on its own; the extra one changes nothing of theirs).
    fn assemble_uncached(
        &self,
        what: &str,
        source: &str,
        target: &str,
        options: &CompileOptions,
    ) -> Vec<KernelResources> {
        let nonce = format!("gemmlab_ptxas_report_{}", super::cache_nonce());
        let stamped = format!("{source}\nextern \"C\" __global__ void {nonce}() {{}}\n");
        let again = self.nvrtc.compile(what, &stamped, target, options);
        let found = again.map_or(Vec::new(), |o| ptxas::parse_ptxas_log(&o.log));
        found.into_iter().filter(|k| k.name != nonce).collect()
    }
}

/// A compiler that cannot compile, and says why (no libnvrtc on this machine).
pub struct MissingCompiler {
    pub target: String,
    pub reason: String,
}

impl Compiler for MissingCompiler {
    fn toolchain(&self) -> Toolchain {
        Toolchain::Cuda
    }

    fn target(&self) -> &str {
        &self.target
    }

    fn compile(&self, _what: &str, _source: &str, _options: &CompileOptions) -> Result<Artefact> {
        Err(Error::CudaUnavailable(self.reason.clone()))
    }
}

/// The device an offline compilation targets: no hardware, only what the
/// architecture's compute capability fixes (the per-SM limits of the occupancy
/// rules) and the compiler. Unknown values are `None`.
pub fn offline_device(nvrtc: &Nvrtc, arch: &Arch) -> DeviceInfo {
    offline_device_named(nvrtc.label(), arch)
}

/// The shared memory a kernel may declare statically (`__shared__`, `__local`).
pub(super) const STATIC_SHARED_MAX: u32 = 48 * 1024;

/// As `offline_device`, for any compiler by its label ("NVRTC 11.8", a ptxas).
pub fn offline_device_named(compiler: String, arch: &Arch) -> DeviceInfo {
    let (major, minor) = arch.compute_capability();
    let l = super::occupancy::limits(major, minor);
    DeviceInfo {
        toolchain: Toolchain::Cuda,
        id: format!("offline:{}", arch.name()),
        name: format!("{} (no device)", arch.name()),
        vendor: "NVIDIA".into(),
        platform: "NVRTC offline".into(),
        kind: DeviceKind::Gpu,
        driver_version: None,
        runtime_version: None,
        compiler_version: Some(compiler),
        compute_capability: Some((major, minor)),
        compute_units: None,
        clock_mhz: None,
        global_mem_bytes: None,
        // What CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK says on a device: the
        // 48 KiB a kernel may declare statically, on every architecture (more needs
        // dynamic shared memory and an opt-in), so a space filters as on the GPU.
        local_mem_bytes: l.map(|l| u64::from(l.shared_per_block.min(STATIC_SHARED_MAX))),
        local_mem_launch_bytes: l.map(|l| u64::from(l.shared_per_block)),
        shared_mem_per_sm_bytes: l.map(|l| u64::from(l.shared_bytes)),
        max_work_group_size: l.map(|l| u64::from(l.max_threads_per_block)),
        registers_per_block: l.map(|l| l.registers_per_block),
        registers_per_sm: l.map(|l| l.registers),
        max_threads_per_sm: l.map(|l| l.max_warps * 32),
        max_blocks_per_sm: l.map(|l| l.max_blocks),
        warp_size: Some(32),
        l2_cache_bytes: None,
        memory_bandwidth_gbs: None,
        pci_bus_id: None,
        dependent_launch: false,
    }
}

/// gemmlab's cache of NVIDIA's NVRTC pip wheels, as `scripts/nvrtc/fetch.sh`
/// lays it out: `${GEMMLAB_CACHE:-$HOME/.cache/gemmlab}/nvrtc/<wheel version>/`
/// holding the wheel's files (`nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2` for 11.8,
/// `nvidia/cuda_nvrtc/lib/libnvrtc.so.12` for 12.x, `nvidia/cu13/lib/libnvrtc.so.13`
/// for 13.x, the builtins beside it) and, when fetched with `--with-ptxas`, the
/// nvcc wheel's `ptxas` (`nvidia/cuda_nvcc/bin/ptxas`, `nvidia/cu13/bin/ptxas`).
pub mod cache {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use super::{parse_version, version_matches, Nvrtc, Origin};
    use crate::error::Result;

    /// The cache's nvrtc folder, None where neither GEMMLAB_CACHE nor HOME is set.
    pub fn dir() -> Option<PathBuf> {
        let root = match std::env::var_os("GEMMLAB_CACHE").filter(|v| !v.is_empty()) {
            Some(v) => PathBuf::from(v),
            None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?)
                .join(".cache")
                .join("gemmlab"),
        };
        Some(root.join("nvrtc"))
    }

    pub fn describe_dir() -> String {
        dir().map_or_else(
            || "the cache (GEMMLAB_CACHE and HOME are unset)".to_string(),
            |d| d.display().to_string(),
        )
    }

    /// One cached wheel.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Cached {
        /// The wheel's version, "11.8.89".
        pub version: String,
        pub dir: PathBuf,
        pub library: PathBuf,
        /// The nvcc wheel's ptxas of the same release, where fetched.
        pub ptxas: Option<PathBuf>,
    }

    impl Cached {
        pub fn open(&self) -> Result<Arc<Nvrtc>> {
            Nvrtc::load(&self.library, Origin::Cache(self.version.clone()))
        }
    }

    /// The libnvrtc in a folder: the folder itself, lib/, lib64/, or a wheel's nvidia/*/lib/.
    pub fn library_in(dir: &Path) -> Option<PathBuf> {
        let mut places = vec![dir.to_path_buf(), dir.join("lib"), dir.join("lib64")];
        if let Ok(entries) = std::fs::read_dir(dir.join("nvidia")) {
            let mut subs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("lib")).collect();
            subs.sort();
            places.extend(subs);
        }
        places.iter().find_map(|p| {
            let mut libs: Vec<PathBuf> = std::fs::read_dir(p)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .filter(|f| {
                    f.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("libnvrtc.so")
                            && !n.contains("builtins")
                            && !n.contains(".alt.")
                    })
                })
                .collect();
            // libnvrtc.so.12 before a libnvrtc.so symlink: the versioned file is the library.
            libs.sort_by_key(|f| std::cmp::Reverse(f.to_string_lossy().len()));
            libs.into_iter().next()
        })
    }

    fn ptxas_in(dir: &Path) -> Option<PathBuf> {
        let entries = std::fs::read_dir(dir.join("nvidia")).ok()?;
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("bin").join("ptxas"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.into_iter().next()
    }

    /// Every cached NVRTC, oldest version first.
    pub fn cached() -> Vec<Cached> {
        let Some(root) = dir() else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(&root) else {
            return Vec::new();
        };
        let mut out: Vec<(Vec<u32>, Cached)> = entries
            .flatten()
            .filter_map(|e| {
                let version = e.file_name().to_str()?.to_string();
                let parsed = parse_version(&version)?;
                let dir = e.path();
                let library = library_in(&dir)?;
                let ptxas = ptxas_in(&dir);
                Some((
                    parsed,
                    Cached {
                        version,
                        dir,
                        library,
                        ptxas,
                    },
                ))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, c)| c).collect()
    }

    /// The newest cached wheel whose version starts with `wanted` ([11, 8] finds 11.8.89).
    pub fn find(wanted: &[u32]) -> Option<Cached> {
        cached()
            .into_iter()
            .rev()
            .find(|c| parse_version(&c.version).is_some_and(|have| version_matches(&have, wanted)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_parse_in_every_spelling() {
        for s in ["sm_35", "SM_35", "sm35", "35", "3.5"] {
            let a = Arch::parse(s).unwrap();
            assert_eq!((a.number, a.compute_capability()), (35, (3, 5)), "{s}");
            assert_eq!(a.name(), "sm_35");
        }
        let a = Arch::parse("sm_120").unwrap();
        assert_eq!(
            (a.compute_capability(), a.name()),
            ((12, 0), "sm_120".into())
        );
        let a = Arch::parse("sm_90a").unwrap();
        assert_eq!(
            (a.compute_capability(), a.name()),
            ((9, 0), "sm_90a".into())
        );
        for bad in [
            "",
            "sm_",
            "compute_35",
            "sm_35x",
            "3.15",
            "kepler",
            "sm_5",
            "sm_2000",
        ] {
            let e = Arch::parse(bad).unwrap_err();
            assert!(e.to_string().contains("sm_35"), "{bad}: {e}");
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }

    #[test]
    fn versions_match_by_prefix() {
        assert_eq!(parse_version("11.8.89"), Some(vec![11, 8, 89]));
        assert_eq!(parse_version("13"), Some(vec![13]));
        assert_eq!(parse_version("11.x"), None);
        assert!(version_matches(&[11, 8, 89], &[11, 8]));
        assert!(version_matches(&[11, 8, 89], &[11]));
        assert!(!version_matches(&[11, 8, 89], &[11, 2]));
        assert!(!version_matches(&[12, 9], &[12, 9, 86]));
        assert!(!version_matches(&[1, 1, 8], &[11, 8]));
    }

    #[test]
    fn the_first_symbol_found_wins_in_order() {
        let have =
            |names: &'static [&'static str]| move |n: &str| names.contains(&n).then_some(n.len());
        let both = first_symbol(&["f_v2", "f"], have(&["f", "f_v2"]));
        assert_eq!(both, Some((4, "f_v2")));
        let old = first_symbol(&["f_v2", "f"], have(&["f"]));
        assert_eq!(old, Some((1, "f")));
        assert_eq!(first_symbol(&["f_v2", "f"], have(&["g"])), None);
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
        // A virtual architecture gives PTX only: no ptxas, so no ptxas options.
        assert!(!nvrtc_flags("compute_90", &o)
            .iter()
            .any(|x| x.contains("ptxas")));
    }

    #[test]
    fn arch_specific_sources_target_the_a_variant_from_sm_90() {
        let sm90 = Arch::parse("sm_90").unwrap();
        assert_eq!(sm90.target_for(false).unwrap().name(), "sm_90");
        let a = sm90.target_for(true).unwrap();
        assert_eq!(a.name(), "sm_90a");
        assert_eq!(a.compute_capability(), (9, 0));
        assert!(nvrtc_flags(&a.name(), &CompileOptions::new())
            .contains(&"--gpu-architecture=sm_90a".to_string()));
        // The PTX fallback's virtual architecture keeps the suffix.
        assert_eq!(a.virtual_name(), "compute_90a");
        // Already architecture-specific: unchanged.
        let given = Arch::parse("sm_90a").unwrap();
        assert_eq!(given.target_for(true).unwrap(), given);
        assert_eq!(given.target_for(false).unwrap(), given);
        assert_eq!(
            Arch::parse("sm_120")
                .unwrap()
                .target_for(true)
                .unwrap()
                .name(),
            "sm_120a"
        );
        let e = Arch::parse("sm_80").unwrap().target_for(true).unwrap_err();
        assert!(
            e.contains("sm_90a") && e.contains("this target is sm_80"),
            "{e}"
        );
        assert_eq!(
            Arch::parse("sm_80")
                .unwrap()
                .target_for(false)
                .unwrap()
                .name(),
            "sm_80"
        );
    }

    #[test]
    fn a_missing_or_foreign_library_is_a_clear_error() {
        let e = Nvrtc::open(Path::new("/no/such/libnvrtc.so.11.2")).unwrap_err();
        assert!(e.to_string().contains("no such file"), "{e}");
        assert_eq!(e.exit_code(), 2);
        // A shared library that is not NVRTC: every Linux process maps libc.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let libc = maps
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .find(|p| p.contains("/libc.so") || p.contains("/libc-"));
        if let Some(libc) = libc {
            let e = Nvrtc::open(Path::new(libc)).unwrap_err();
            assert!(e.to_string().contains("not a usable libnvrtc"), "{e}");
        }
        let e = Nvrtc::choose(Some("eleven")).unwrap_err();
        assert!(e.to_string().contains("give a version"), "{e}");
        let e = Nvrtc::choose(Some("7.5")).unwrap_err();
        assert!(
            e.to_string().contains("no NVRTC 7.5")
                && e.to_string().contains("scripts/nvrtc/fetch.sh"),
            "{e}"
        );
    }

    #[test]
    fn cache_layouts_of_the_three_wheel_generations_are_found() {
        let root =
            std::env::temp_dir().join(format!("gemmlab-nvrtc-layout-{}", std::process::id()));
        let make = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"").unwrap();
            p
        };
        let cu11 = make("11.8.89/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2");
        make("11.8.89/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.11.8");
        let cu12 = make("12.9.86/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
        make("12.9.86/nvidia/cuda_nvrtc/lib/libnvrtc.alt.so.12");
        let cu13 = make("13.5.37/nvidia/cu13/lib/libnvrtc.so.13");
        make("13.5.37/nvidia/cu13/lib/libnvrtc-builtins.so.13.5");
        assert_eq!(cache::library_in(&root.join("11.8.89")), Some(cu11));
        assert_eq!(cache::library_in(&root.join("12.9.86")), Some(cu12));
        assert_eq!(cache::library_in(&root.join("13.5.37")), Some(cu13));
        assert_eq!(cache::library_in(&root), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
