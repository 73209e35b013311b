//! clang as a second front end for the same sources: OpenCL C (with libclc's
//! NVPTX work-item functions) and CUDA C++ (with NVIDIA's headers and libdevice
//! from the pip wheels) to PTX through LLVM's NVPTX back end, independent of
//! NVIDIA's NVVM. The PTX is assembled by a standalone ptxas from gemmlab's
//! cache or left to the CUDA driver's JIT at load time, and runs on the CUDA
//! driver with the kernel's own argument layout. Needs no GPU to compile.
//!
//! What is used, and how to override it:
//! - clang: `GEMMLAB_CLANG`, else the newest `clang-NN` (then `clang`) on PATH;
//! - libclc: `GEMMLAB_LIBCLC` (the `nvptx64--nvidiacl.bc` file), else beside
//!   clang (`<clang>/../../clc/`) or where Debian's `libclc-NN` installs it;
//! - the CUDA headers and libdevice: `GEMMLAB_CUDA_PATH`, else the cache's
//!   `cuda/<version>/` (`scripts/nvrtc/fetch.sh --with-cuda-headers`);
//! - `GEMMLAB_CLANG_PTX=DIR`: a folder of clang's PTX keyed by what determines it
//!   (toolchain, architecture, clang's version, defines, flags, source). Where
//!   clang runs, every PTX it makes is written there too; on a machine without
//!   clang (a GPU machine that cannot install it), or with `GEMMLAB_CLANG=none`,
//!   compiles are answered from it, and a source not in it is a compile error
//!   that says so.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::nvrtc::{cache, Arch};
use super::ptxas::{parse_ptxas_log, Ptxas};
use super::{Artefact, BuildReport, CompileOptions, Compiler, Image, Language, Toolchain};
use crate::error::{Error, Result};

/// What to install when clang or libclc is missing.
pub const INSTALL_CLANG: &str =
    "install clang and libclc (Debian/Ubuntu: apt-get install clang-19 libclc-19), or set GEMMLAB_CLANG";
/// What to run when the CUDA headers are missing.
pub const INSTALL_CUDA_HEADERS: &str =
    "fetch NVIDIA's CUDA headers and libdevice with scripts/nvrtc/fetch.sh --with-cuda-headers, or set GEMMLAB_CUDA_PATH to a CUDA installation";

/// A clang binary and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clang {
    pub path: PathBuf,
    /// "19.1.7"
    pub version: String,
    /// No clang here: PTX comes from `GEMMLAB_CLANG_PTX`, made by this version elsewhere.
    pub replay: Option<PathBuf>,
}

/// `GEMMLAB_CLANG_PTX`, where set.
pub fn ptx_cache() -> Option<PathBuf> {
    std::env::var_os("GEMMLAB_CLANG_PTX")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl Clang {
    /// The clang this process uses (looked up once). `Err` says what to install.
    pub fn find() -> std::result::Result<&'static Clang, String> {
        static FOUND: OnceLock<std::result::Result<Clang, String>> = OnceLock::new();
        FOUND
            .get_or_init(Clang::locate)
            .as_ref()
            .map_err(Clone::clone)
    }

    fn locate() -> std::result::Result<Clang, String> {
        let replay = || {
            let d = ptx_cache()?;
            let v = std::fs::read_to_string(d.join("clang-version.txt")).ok()?;
            Some(Clang {
                path: PathBuf::new(),
                version: v.trim().to_string(),
                replay: Some(d),
            })
        };
        let wanted = std::env::var_os("GEMMLAB_CLANG").filter(|v| !v.is_empty());
        if wanted.as_deref() == Some(std::ffi::OsStr::new("none")) {
            // Asked not to run clang even where one is installed: replay only.
            return replay().ok_or_else(|| {
                "GEMMLAB_CLANG=none needs GEMMLAB_CLANG_PTX, a folder of clang's PTX made elsewhere".to_string()
            });
        }
        if let Some(p) = wanted {
            let path = PathBuf::from(p);
            return Clang::at(&path).ok_or_else(|| {
                format!(
                    "GEMMLAB_CLANG={} does not run as clang (`--version` failed)",
                    path.display()
                )
            });
        }
        let names = (15..=30).rev().map(|v| format!("clang-{v}"));
        let found = names
            .chain(["clang".to_string()])
            .find_map(|n| on_path(&n).and_then(|p| Clang::at(&p)));
        if let Some(c) = found {
            return Ok(c);
        }
        // No clang: the PTX a clang elsewhere wrote into GEMMLAB_CLANG_PTX.
        replay().ok_or_else(|| format!("no clang on PATH: {INSTALL_CLANG}"))
    }

    fn at(path: &Path) -> Option<Clang> {
        let out = Command::new(path).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .lines()
            .next()?
            .split("version ")
            .nth(1)?
            .split_whitespace()
            .next()?
            .to_string();
        out.status.success().then(|| Clang {
            path: path.to_path_buf(),
            version,
            replay: None,
        })
    }

    /// The NVPTX architectures this clang targets ("sm_35" ... "sm_90a"), asked
    /// once; empty where it does not say.
    pub fn archs(&self) -> &[String] {
        static ARCHS: OnceLock<Vec<String>> = OnceLock::new();
        ARCHS.get_or_init(|| {
            let Ok(out) = Command::new(&self.path)
                .args(["-target", "nvptx64-nvidia-cuda", "--print-supported-cpus"])
                .output()
            else {
                return Vec::new();
            };
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            text.split_whitespace()
                .filter(|w| w.starts_with("sm_"))
                .map(str::to_string)
                .collect()
        })
    }

    /// The major version: 19.
    pub fn major(&self) -> u32 {
        self.version
            .split('.')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    pub fn label(&self) -> String {
        format!("clang {}", self.version)
    }
}

/// The key of one PTX in `GEMMLAB_CLANG_PTX`: everything that determines it (clang's
/// version, its flags with defines among them, the source) but the paths of this
/// machine, so PTX made under other flags is never replayed.
fn ptx_key(
    toolchain: Toolchain,
    arch: &Arch,
    clang: &Clang,
    source: &str,
    flags: &[String],
) -> String {
    crate::util::keys::fnv1a(&format!(
        "{toolchain}|{arch}|{}|{}|{source}",
        clang.version,
        flags.join(" ")
    ))
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// libclc's bitcode for NVPTX with NVIDIA's OpenCL conventions.
pub fn libclc(clang: &Clang) -> std::result::Result<PathBuf, String> {
    const FILE: &str = "nvptx64--nvidiacl.bc";
    if let Some(p) = std::env::var_os("GEMMLAB_LIBCLC").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("GEMMLAB_LIBCLC={} is not a file", p.display()))
        };
    }
    let major = clang.major();
    let beside = clang
        .path
        .canonicalize()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("clc")));
    let places = beside.into_iter().chain(
        [
            "/usr/lib/clc".to_string(),
            format!("/usr/lib/llvm-{major}/lib/clc"),
            format!("/usr/lib/llvm-{major}/share/clc"),
            "/usr/share/clc".to_string(),
            "/usr/local/lib/clc".to_string(),
        ]
        .map(PathBuf::from),
    );
    for dir in places {
        let f = dir.join(FILE);
        if f.is_file() {
            return Ok(f);
        }
    }
    Err(format!(
        "libclc's {FILE} not found (needed by clang's OpenCL C for NVPTX): {INSTALL_CLANG}"
    ))
}

/// A CUDA installation for clang's CUDA mode: `include/cuda.h` and
/// `nvvm/libdevice/libdevice.10.bc` under one folder.
pub fn cuda_path() -> std::result::Result<PathBuf, String> {
    let complete = |d: &Path| {
        d.join("include").join("cuda.h").is_file()
            && d.join("nvvm")
                .join("libdevice")
                .join("libdevice.10.bc")
                .is_file()
    };
    if let Some(p) = std::env::var_os("GEMMLAB_CUDA_PATH").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return if complete(&p) {
            Ok(p)
        } else {
            Err(format!(
                "GEMMLAB_CUDA_PATH={} lacks include/cuda.h or nvvm/libdevice/libdevice.10.bc",
                p.display()
            ))
        };
    }
    let root = cache::dir()
        .and_then(|d| Some(d.parent()?.join("cuda")))
        .ok_or_else(|| format!("no cache folder (HOME unset): {INSTALL_CUDA_HEADERS}"))?;
    let mut found: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = super::nvrtc::parse_version(e.file_name().to_str()?)?;
            complete(&e.path()).then(|| (v, e.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p).ok_or_else(|| {
        format!(
            "no CUDA headers in {} (clang's CUDA mode needs them): {INSTALL_CUDA_HEADERS}",
            root.display()
        )
    })
}

/// clang's CUDA wrapper header includes `curand_mtgp32_kernel.h` only to
/// neutralise its redeclarations of the built-in variables; gemmlab's sources
/// do not use cuRAND, so an empty header stands in for the cuRAND wheel.
fn curand_shim() -> std::result::Result<&'static Path, String> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        // One stable folder, so that the flags a build records are the same in every run.
        let dir = std::env::temp_dir().join("gemmlab-clang-shim");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let f = dir.join("curand_mtgp32_kernel.h");
        if !f.is_file() {
            // Written beside and renamed: processes starting together never see half a file.
            let part = dir.join(format!(".curand-{}", std::process::id()));
            std::fs::write(
                &part,
                "// gemmlab: cuRAND is not used; clang's CUDA wrapper only includes this.\n",
            )
            .and_then(|()| std::fs::rename(&part, &f))
            .map_err(|e| format!("{}: {e}", f.display()))?;
        }
        Ok(dir)
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(Clone::clone)
}

/// What turns clang's PTX into machine code.
#[derive(Debug, Clone)]
pub enum Assembler {
    /// A standalone ptxas from the cache.
    Ptxas(Ptxas),
    /// The CUDA driver's JIT, when the program is loaded.
    DriverJit,
}

impl Assembler {
    /// The assembler for `arch`: ptxas of release `wanted` ("11.8", "13"), the
    /// driver JIT for "jit", else the newest cached ptxas for the architecture.
    pub fn choose(arch: &Arch, wanted: Option<&str>) -> std::result::Result<Assembler, String> {
        match wanted {
            Some("jit") => Ok(Assembler::DriverJit),
            w => Ptxas::for_arch(arch, w).map(Assembler::Ptxas),
        }
    }

    pub fn label(&self) -> String {
        match self {
            Assembler::Ptxas(p) => p.label(),
            Assembler::DriverJit => "CUDA driver JIT".into(),
        }
    }
}

/// clang's PTX of one source, as [`ClangCompiler::ptx`] gives it.
#[derive(Debug, Clone)]
pub struct ClangPtx {
    /// For an architecture-specific OpenCL source, with its marked instructions
    /// (`opencl_ptx::ARCH_SPECIFIC_MARKER`) made live.
    pub ptx: String,
    /// clang's arguments.
    pub flags: Vec<String>,
    /// clang's diagnostics.
    pub log: String,
    /// The architecture compiled for: `sm_XXa` for an architecture-specific source.
    pub arch: Arch,
    /// What was compiled differently, and what changed in clang's PTX.
    pub notes: Vec<String>,
}

/// The source-language part of a clang compile.
#[derive(Debug, Clone)]
enum FrontEnd {
    OpenCl { libclc: PathBuf },
    Cuda { cuda_path: PathBuf, shim: PathBuf },
}

impl FrontEnd {
    /// The same front end with its paths named, not located: what a machine
    /// without clang has, and what the key of a kept PTX is made from.
    fn placeholders(&self) -> FrontEnd {
        match self {
            FrontEnd::OpenCl { .. } => FrontEnd::OpenCl {
                libclc: PathBuf::from("<libclc>"),
            },
            FrontEnd::Cuda { .. } => FrontEnd::Cuda {
                cuda_path: PathBuf::from("<cuda>"),
                shim: PathBuf::from("<shim>"),
            },
        }
    }
}

/// clang for one architecture and one language, with its assembler.
pub struct ClangCompiler {
    toolchain: Toolchain,
    clang: Clang,
    front: FrontEnd,
    arch: Arch,
    assembler: Assembler,
    target: String,
}

impl ClangCompiler {
    /// clang for `toolchain` (clang-opencl or clang-cuda) and `arch`, assembled by
    /// `assembler`. `Err` is `ToolchainUnavailable` saying what to install.
    pub fn new(toolchain: Toolchain, arch: &Arch, assembler: Assembler) -> Result<ClangCompiler> {
        let missing = |reason: String| Error::ToolchainUnavailable {
            toolchain: toolchain.to_string(),
            reason,
        };
        let clang = Clang::find().map_err(missing)?.clone();
        let replay = clang.replay.is_some();
        let targets = if replay { &[][..] } else { clang.archs() };
        if !targets.is_empty() && !targets.contains(&arch.name()) {
            return Err(missing(format!(
                "{} cannot target {arch} (it targets {}); a newer clang can",
                clang.label(),
                targets.join(" ")
            )));
        }
        let front = match toolchain.language() {
            Language::OpenClC if replay => FrontEnd::OpenCl {
                libclc: PathBuf::new(),
            }
            .placeholders(),
            Language::CudaCpp if replay => FrontEnd::Cuda {
                cuda_path: PathBuf::new(),
                shim: PathBuf::new(),
            }
            .placeholders(),
            Language::OpenClC => FrontEnd::OpenCl {
                libclc: libclc(&clang).map_err(missing)?,
            },
            Language::CudaCpp => FrontEnd::Cuda {
                cuda_path: cuda_path().map_err(missing)?,
                shim: curand_shim().map_err(missing)?.to_path_buf(),
            },
        };
        Ok(ClangCompiler {
            toolchain,
            clang,
            front,
            arch: arch.clone(),
            assembler,
            target: arch.name(),
        })
    }

    /// clang and the assembler for `toolchain` on `arch`, the assembler chosen
    /// by [`Assembler::choose`].
    pub fn for_arch(toolchain: Toolchain, arch: &Arch, assembler: Option<&str>) -> Result<Self> {
        let assembler =
            Assembler::choose(arch, assembler).map_err(|reason| Error::ToolchainUnavailable {
                toolchain: toolchain.to_string(),
                reason,
            })?;
        ClangCompiler::new(toolchain, arch, assembler)
    }

    /// "clang 19.1.7 + ptxas 13.0"
    pub fn label(&self) -> String {
        format!("{} + {}", self.clang.label(), self.assembler.label())
    }

    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    pub fn assembler(&self) -> &Assembler {
        &self.assembler
    }

    /// The architecture `options` compile for: `sm_XXa` for an architecture-specific
    /// source (`CompileOptions::arch_specific`), else the compiler's.
    fn arch_for(&self, what: &str, options: &CompileOptions) -> Result<Arch> {
        self.arch
            .target_for(options.arch_specific)
            .map_err(|reason| Error::Unavailable {
                kernel: what.to_string(),
                toolchain: self.toolchain.to_string(),
                reason,
            })
    }

    /// clang's arguments for this language and `arch` (the source is read from stdin).
    fn flags_for(&self, front: &FrontEnd, arch: &Arch, options: &CompileOptions) -> Vec<String> {
        let arch = arch.name();
        let mut f: Vec<String> = match front {
            FrontEnd::OpenCl { libclc } => vec![
                "-target".into(),
                "nvptx64-nvidia-nvcl".into(),
                format!("-march={arch}"),
                "-cl-std=CL1.2".into(),
                "-Xclang".into(),
                "-finclude-default-header".into(),
                "-Xclang".into(),
                "-mlink-builtin-bitcode".into(),
                "-Xclang".into(),
                libclc.display().to_string(),
                // libclc is built for the triple spelled nvptx64-unknown-nvidiacl;
                // the link warning about the spelling says nothing about the kernel.
                "-Wno-linker-warnings".into(),
                // The sources guard NVIDIA inline PTX with this, as for NVIDIA OpenCL.
                "-DGEMMLAB_NVIDIA_PTX=1".into(),
                // A plain `inline` (CLBlast's INLINE_FUNC on NVIDIA) is a hint to NVIDIA's
                // compiler. Under C99's rules it is only an inline definition, so a call
                // clang declines to inline (XgemmBody at large tiles) was left unresolved
                // for ptxas; GNU89's rules also emit the function.
                "-fgnu89-inline".into(),
                // NVIDIA's OpenCL takes `asm` for inline PTX (ld.global.nc, cp.async,
                // membar, shfl behind the NVIDIA-only switches); OpenCL C has no such
                // keyword, so clang needs the GNU keywords to accept the same source.
                "-fgnu-keywords".into(),
                "-x".into(),
                "cl".into(),
            ],
            FrontEnd::Cuda { cuda_path, shim } => vec![
                "-x".into(),
                "cuda".into(),
                "--cuda-device-only".into(),
                format!("--cuda-gpu-arch={arch}"),
                format!("--cuda-path={}", cuda_path.display()),
                // The wheels' CUDA may be newer than this clang knows, or too new
                // for an old architecture: the headers work either way.
                "--no-cuda-version-check".into(),
                "-Wno-unknown-cuda-version".into(),
                "-I".into(),
                shim.display().to_string(),
            ],
        };
        f.extend(["-O3".into(), "-S".into()]);
        for (name, value) in &options.defines {
            f.push(format!("-D{name}={value}"));
        }
        if options.fast_math {
            match front {
                FrontEnd::OpenCl { .. } => {
                    f.extend(["-cl-fast-relaxed-math".into(), "-cl-mad-enable".into()])
                }
                FrontEnd::Cuda { .. } => f.extend([
                    "-ffast-math".into(),
                    "-fcuda-flush-denormals-to-zero".into(),
                ]),
            }
        }
        f.extend(options.extra_flags.iter().cloned());
        f
    }

    /// clang's PTX for `source`, with the flags used and clang's log; an OpenCL
    /// source's architecture-specific instructions made live (see [`ClangPtx`]).
    /// `Err` is `Error::Compile` with clang's log.
    pub fn ptx(&self, what: &str, source: &str, options: &CompileOptions) -> Result<ClangPtx> {
        let arch = self.arch_for(what, options)?;
        let (ptx, flags, log) = self.clang_ptx(what, source, &arch, options)?;
        let mut out = ClangPtx {
            ptx,
            flags,
            log,
            arch,
            notes: Vec::new(),
        };
        if options.arch_specific && matches!(self.front, FrontEnd::OpenCl { .. }) {
            // The OpenCL twin writes them behind a PTX comment marker (for NVIDIA's
            // OpenCL): left as they are, the kernel would compute without them.
            let live = super::opencl_ptx::arch_specific(&out.ptx).map_err(|reason| {
                Error::Unavailable {
                    kernel: what.to_string(),
                    toolchain: self.toolchain.to_string(),
                    reason,
                }
            })?;
            out.notes.push(format!(
                "compiled for {}: the source uses architecture-specific instructions (wgmma); {} marked instructions un-commented in clang's PTX",
                out.arch, live.uncommented
            ));
            out.ptx = live.ptx;
        } else if options.arch_specific {
            out.notes.push(format!(
                "compiled for {}: the source uses architecture-specific instructions (wgmma)",
                out.arch
            ));
        }
        Ok(out)
    }

    /// clang's own PTX, run here or replayed from `GEMMLAB_CLANG_PTX`.
    fn clang_ptx(
        &self,
        what: &str,
        source: &str,
        arch: &Arch,
        options: &CompileOptions,
    ) -> Result<(String, Vec<String>, String)> {
        let flags = self.flags_for(&self.front, arch, options);
        let compile_err = |log: String| Error::Compile {
            toolchain: format!("{} ({})", self.toolchain, self.clang.label()),
            what: what.to_string(),
            log,
        };
        let key_flags = self.flags_for(&self.front.placeholders(), arch, options);
        let key = ptx_key(self.toolchain, arch, &self.clang, source, &key_flags);
        if let Some(dir) = &self.clang.replay {
            let file = dir.join(format!("{key}.ptx"));
            return match std::fs::read_to_string(&file) {
                Ok(ptx) => Ok((ptx, flags, format!("PTX made by {} elsewhere: {}\n", self.clang.label(), file.display()))),
                Err(_) => Err(compile_err(format!(
                    "no clang here, and GEMMLAB_CLANG_PTX={} holds no PTX of this source with these \
                     flags ({key}): compile it where clang is, with GEMMLAB_CLANG_PTX set",
                    dir.display()
                ))),
            };
        }
        let mut child = Command::new(&self.clang.path)
            .args(&flags)
            .args(["-o", "-", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| compile_err(format!("{}: {e}", self.clang.path.display())))?;
        // Written from another thread: clang may fill its output pipes before
        // it has read all of a long source.
        let mut stdin = child.stdin.take();
        let text = source.to_string();
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(text.as_bytes());
            }
        });
        let out = child
            .wait_with_output()
            .map_err(|e| compile_err(format!("{}: {e}", self.clang.path.display())))?;
        let _ = writer.join();
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            return Err(compile_err(log));
        }
        let ptx = String::from_utf8_lossy(&out.stdout).into_owned();
        if let Some(dir) = ptx_cache() {
            // Kept for a machine without clang; a failure to keep it loses nothing here.
            let _ = std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(dir.join("clang-version.txt"), &self.clang.version))
                .and_then(|()| std::fs::write(dir.join(format!("{key}.ptx")), &ptx));
        }
        Ok((ptx, flags, log))
    }
}

impl Compiler for ClangCompiler {
    fn toolchain(&self) -> Toolchain {
        self.toolchain
    }

    fn target(&self) -> &str {
        &self.target
    }

    fn compile(&self, what: &str, source: &str, options: &CompileOptions) -> Result<Artefact> {
        let started = Instant::now();
        let ClangPtx {
            ptx,
            mut flags,
            log,
            arch,
            notes,
        } = self.ptx(what, source, options)?;
        let mut report = BuildReport {
            toolchain: Some(self.toolchain),
            compiler: Some(self.label()),
            log,
            ptx: Some(ptx.clone()),
            notes,
            ..Default::default()
        };
        let image = match &self.assembler {
            Assembler::Ptxas(p) => {
                // `arch`, not the compiler's: ptxas sets the PTX's .target to it.
                let a = p
                    .assemble(&ptx, &arch, options.max_registers)
                    .map_err(|log| Error::Compile {
                        toolchain: format!("{} ({})", self.toolchain, p.label()),
                        what: what.to_string(),
                        log,
                    })?;
                flags.extend(a.flags.iter().map(|f| format!("ptxas:{f}")));
                report.log.push_str(&a.log);
                report.kernels = parse_ptxas_log(&a.log);
                report.notes.extend(a.notes);
                Image::Cubin(a.cubin)
            }
            Assembler::DriverJit => {
                if let Some(r) = options.max_registers {
                    flags.push(format!("jit:CU_JIT_MAX_REGISTERS={r}"));
                }
                Image::Ptx {
                    ptx,
                    max_registers: options.max_registers,
                }
            }
        };
        report.flags = flags;
        report.compile_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(Artefact {
            report: report.note_ignored_cap(options.max_registers),
            image,
        })
    }
}

/// Why a clang toolchain cannot compile on this machine, or `None` where it can
/// (clang, and libclc or the CUDA headers as its language needs).
pub fn unavailable(toolchain: Toolchain) -> Option<String> {
    let clang = match Clang::find() {
        Ok(c) => c,
        Err(why) => return Some(why),
    };
    if clang.replay.is_some() {
        return None;
    }
    match toolchain.language() {
        Language::OpenClC => libclc(clang).err(),
        Language::CudaCpp => cuda_path().err(),
    }
}

/// What a clang toolchain compiles with here (clang, libclc or the CUDA
/// headers, the cached ptxas releases), or why it cannot compile.
pub fn describe(toolchain: Toolchain) -> std::result::Result<String, String> {
    let clang = Clang::find()?;
    if let Some(dir) = &clang.replay {
        return Ok(format!(
            "no clang here: PTX made by {} elsewhere, from GEMMLAB_CLANG_PTX={}",
            clang.label(),
            dir.display()
        ));
    }
    let lib = match toolchain.language() {
        Language::OpenClC => format!("libclc {}", libclc(clang)?.display()),
        Language::CudaCpp => format!("CUDA headers {}", cuda_path()?.display()),
    };
    let ptxas: Vec<String> = Ptxas::cached().iter().map(Ptxas::label).collect();
    let asm = if ptxas.is_empty() {
        "no cached ptxas (scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas): the CUDA driver's JIT assembles on a device".to_string()
    } else {
        format!("{} or the CUDA driver's JIT", ptxas.join(", "))
    };
    Ok(format!("{}, {lib}; assembled by {asm}", clang.label()))
}

/// A compiler shared by every thread of a session.
pub fn shared(
    toolchain: Toolchain,
    arch: &Arch,
    assembler: Option<&str>,
) -> Result<Arc<dyn Compiler>> {
    Ok(Arc::new(ClangCompiler::for_arch(
        toolchain, arch, assembler,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clang compiler that replays PTX from `dir`: needs no clang.
    fn replaying(toolchain: Toolchain, arch: &str, dir: &Path) -> ClangCompiler {
        let front = match toolchain.language() {
            Language::OpenClC => FrontEnd::OpenCl {
                libclc: PathBuf::new(),
            },
            Language::CudaCpp => FrontEnd::Cuda {
                cuda_path: PathBuf::new(),
                shim: PathBuf::new(),
            },
        }
        .placeholders();
        let arch = Arch::parse(arch).unwrap();
        ClangCompiler {
            toolchain,
            clang: Clang {
                path: PathBuf::new(),
                version: "19.1.7".into(),
                replay: Some(dir.to_path_buf()),
            },
            front,
            target: arch.name(),
            arch,
            assembler: Assembler::DriverJit,
        }
    }

    #[test]
    fn arch_specific_sources_compile_for_sm_90a_with_their_markers_live() {
        let dir = std::env::temp_dir().join(format!("gemmlab-clang-arch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let options = CompileOptions {
            arch_specific: true,
            ..CompileOptions::new()
        };
        let source = "__kernel void k() {}";
        let c = replaying(Toolchain::ClangOpenCl, "sm_90", &dir);
        let arch = c.arch_for("k", &options).unwrap();
        assert_eq!(arch.name(), "sm_90a");
        let flags = c.flags_for(&c.front, &arch, &options);
        assert!(flags.contains(&"-march=sm_90a".to_string()), "{flags:?}");
        // What clang 19 writes for the OpenCL twin: the marker kept in the comment.
        let key = ptx_key(c.toolchain, &arch, &c.clang, source, &flags);
        std::fs::write(
            dir.join(format!("{key}.ptx")),
            ".version 8.0\n.target sm_90a\n\t// begin inline asm\n\t//sm_90a wgmma.fence.sync.aligned;\n\t// end inline asm\n",
        )
        .unwrap();
        let a = c.compile("k", source, &options).unwrap();
        let ptx = a.report.ptx.as_deref().unwrap();
        assert!(ptx.contains("\n\twgmma.fence.sync.aligned;\n") && !ptx.contains("//sm_90a"));
        assert!(matches!(&a.image, Image::Ptx { ptx: p, .. } if p == ptx));
        assert!(
            a.report
                .notes
                .iter()
                .any(|n| n.contains("sm_90a") && n.contains("1 marked")),
            "{:?}",
            a.report.notes
        );
        // Not arch-specific: the compiler's own architecture, PTX as clang wrote it.
        let plain = c.flags_for(
            &c.front,
            &c.arch_for("k", &CompileOptions::new()).unwrap(),
            &options,
        );
        assert!(plain.contains(&"-march=sm_90".to_string()));
        // The CUDA twin writes its wgmma live: the architecture alone changes.
        let cu = replaying(Toolchain::ClangCuda, "sm_90", &dir);
        let f = cu.flags_for(&cu.front, &cu.arch_for("k", &options).unwrap(), &options);
        assert!(f.contains(&"--cuda-gpu-arch=sm_90a".to_string()), "{f:?}");
        // Below sm_90 there is no sm_90a feature set.
        let old = replaying(Toolchain::ClangOpenCl, "sm_80", &dir);
        let e = old.compile("k", source, &options).err().unwrap();
        assert!(matches!(e, Error::Unavailable { .. }), "{e}");
        assert!(e.to_string().contains("this target is sm_80"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
