//! What the benches run on and with: environment variables, device
//! discovery, defaults by device kind, operands and references.
//!
//! A bad environment value is a message on stderr and exit status 2; no
//! device at all is a message and exit status 0 (nothing to measure is not a
//! failure on a machine without a GPU).

use std::process;

use gemmlab::gemm::driver::Session;
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, KernelSpec};
use gemmlab::{resolve, Backend, DeviceInfo, DeviceKind, DeviceSpec, Inventory, Toolchain};

pub const ENV_KERNELS: &str = "GEMMLAB_BENCH_KERNELS";
pub const ENV_SIZES: &str = "GEMMLAB_BENCH_SIZES";
pub const ENV_DEVICE: &str = "GEMMLAB_BENCH_DEVICE";
pub const ENV_BACKENDS: &str = "GEMMLAB_BENCH_BACKENDS";
/// A database of bests (`gemmlab tune`): each toolchain also runs its tuned configuration.
pub const ENV_TUNED: &str = "GEMMLAB_BENCH_TUNED";

/// Defaults where every chosen device is a GPU (about ten minutes on an H200).
pub const GPU_KERNELS: &str = "all";
pub const GPU_SIZES: &str = "4096";
/// Defaults otherwise (PoCL on a two-core CPU: under a minute): the naive,
/// the 2D register-blocked and the clBlas-style kernel.
pub const CPU_KERNELS: &str = "1,6,11";
pub const CPU_SIZES: &str = "256,512";

/// Inputs are random in [-1, 1) from this seed (printed at the start).
pub const SEED: u64 = 20240611;

/// One GEMM problem: M, N, K.
pub type Size = (usize, usize, usize);

/// "4096" for a cube, "1000x300x77" otherwise: the benchmark parameter.
pub fn size_label((m, n, k): Size) -> String {
    if m == n && n == k {
        m.to_string()
    } else {
        format!("{m}x{n}x{k}")
    }
}

/// 2*M*N*K.
pub fn flops((m, n, k): Size) -> u64 {
    2 * m as u64 * n as u64 * k as u64
}

/// A note on stderr, where criterion does not write.
pub fn note(msg: impl AsRef<str>) {
    eprintln!("gemmlab bench: {}", msg.as_ref());
}

/// A failure after setup (a launch that worked before fails now): exit 1.
pub fn fail(msg: impl AsRef<str>) -> ! {
    eprintln!("gemmlab bench: error: {}", msg.as_ref());
    process::exit(1)
}

fn bad_env(var: &str, msg: impl AsRef<str>) -> ! {
    eprintln!("gemmlab bench: {var}: {}", msg.as_ref());
    process::exit(2)
}

/// An environment variable; unset or blank is `None`, non-UTF-8 is exit 2.
fn env(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if v.trim().is_empty() => None,
        Ok(v) => Some(v.trim().to_string()),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(_)) => bad_env(var, "value is not valid UTF-8"),
    }
}

/// N or MxNxK, positive, at most 65536 (the kernels index with 32-bit ints).
pub fn parse_sizes(list: &str) -> Result<Vec<Size>, String> {
    let mut sizes = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let size = gemmlab::gemm::parse_size(item).map_err(|e| e.to_string())?;
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    if sizes.is_empty() {
        return Err(format!("no size in '{list}'"));
    }
    Ok(sizes)
}

fn parse_toolchains(list: &str) -> Result<Vec<Toolchain>, String> {
    if list.eq_ignore_ascii_case("all") {
        return Ok(Toolchain::ALL.to_vec());
    }
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let tc = Toolchain::parse(item)
            .ok_or_else(|| format!("unknown toolchain '{item}' (expected cuda, opencl or all)"))?;
        if !out.contains(&tc) {
            out.push(tc);
        }
    }
    if out.is_empty() {
        return Err(format!("no toolchain in '{list}'"));
    }
    Ok(out)
}

/// A problem's operands and its f64 reference, computed once per size.
pub struct Problem {
    pub size: Size,
    pub ops: Operands,
    pub reference: Reference,
}

/// Everything the benches share: one session per toolchain on the same device.
pub struct Bench {
    pub sessions: Vec<Session>,
    pub on_gpu: bool,
    pub kernels: Vec<&'static KernelSpec>,
    pub sizes: Vec<Size>,
    /// The device's database of bests, when GEMMLAB_BENCH_TUNED names a directory.
    pub tuned: Option<gemmlab::results::bests::Database>,
    problems: Vec<Problem>,
}

impl Bench {
    /// Reads the environment and opens the devices; exits on bad values (2)
    /// or when there is nothing to benchmark (0).
    pub fn from_env() -> Bench {
        // Values first: a typo should not wait for device discovery.
        let device = env(ENV_DEVICE).unwrap_or_else(|| "auto".to_string());
        let spec =
            DeviceSpec::parse(&device).unwrap_or_else(|e| bad_env(ENV_DEVICE, e.to_string()));
        let toolchains = match env(ENV_BACKENDS) {
            Some(l) => parse_toolchains(&l).unwrap_or_else(|e| bad_env(ENV_BACKENDS, e)),
            None => Toolchain::ALL.to_vec(),
        };
        let kernels_env = env(ENV_KERNELS);
        if let Some(l) = &kernels_env {
            if let Err(e) = kernels::select(Some(l)) {
                bad_env(ENV_KERNELS, e.to_string());
            }
        }
        let sizes_env =
            env(ENV_SIZES).map(|l| parse_sizes(&l).unwrap_or_else(|e| bad_env(ENV_SIZES, e)));

        let inventory = Inventory::discover();
        let infos = match resolve(&spec, &inventory, &toolchains) {
            Ok(i) => i,
            Err(e) => {
                note(format!("nothing to benchmark ({ENV_DEVICE}={device}): {e}"));
                process::exit(0)
            }
        };
        let mut sessions = Vec::new();
        for info in &infos {
            match gemmlab::open(info) {
                Ok(b) => sessions.push(Session::new(b)),
                Err(e) => note(format!(
                    "{} ids absent: cannot open {}: {e}",
                    info.toolchain,
                    info.label()
                )),
            }
        }
        for tc in &toolchains {
            if infos.iter().any(|d| d.toolchain == *tc) {
                continue;
            }
            let why = match inventory.unavailable.iter().find(|(t, _)| t == tc) {
                Some((_, why)) => why.clone(),
                None => format!("no {tc} device matches '{device}' (of the kind picked)"),
            };
            note(format!("{tc} ids absent: {why}"));
        }
        if sessions.is_empty() {
            note("nothing to benchmark: no device could be opened");
            process::exit(0)
        }
        let infos: Vec<DeviceInfo> = sessions
            .iter()
            .map(|s| s.backend.borrow().info().clone())
            .collect();
        let on_gpu = infos.iter().all(|d| d.kind == DeviceKind::Gpu);
        let kernels = kernels::select(Some(kernels_env.as_deref().unwrap_or(if on_gpu {
            GPU_KERNELS
        } else {
            CPU_KERNELS
        })))
        .unwrap_or_else(|e| bad_env(ENV_KERNELS, e.to_string()));
        let sizes = match sizes_env {
            Some(s) => s,
            None => parse_sizes(if on_gpu { GPU_SIZES } else { CPU_SIZES })
                .unwrap_or_else(|e| bad_env(ENV_SIZES, e)),
        };
        for d in &infos {
            note(format!(
                "{} via {} ({}, {}; {})",
                d.name,
                d.toolchain,
                d.id,
                d.kind,
                d.compiler_version
                    .as_deref()
                    .unwrap_or("compiler version unknown")
            ));
        }
        note(format!(
            "kernels {}; sizes {}; seed {SEED}; {} defaults",
            kernels.iter().map(|k| k.id).collect::<Vec<_>>().join(","),
            sizes
                .iter()
                .map(|s| size_label(*s))
                .collect::<Vec<_>>()
                .join(","),
            if on_gpu { "GPU" } else { "CPU" }
        ));
        let tuned = env(ENV_TUNED).map(|dir| {
            let name = sessions
                .first()
                .map(|s| s.backend.borrow().info().name.clone())
                .unwrap_or_default();
            let db = gemmlab::results::bests::Database::load(std::path::Path::new(&dir), &name)
                .unwrap_or_else(|e| bad_env(ENV_TUNED, e.to_string()));
            note(format!(
                "{} tuned configurations for {name} from {dir} (ids ending in -tuned)",
                db.entries.len()
            ));
            db
        });
        Bench {
            sessions,
            on_gpu,
            kernels,
            sizes,
            tuned,
            problems: Vec::new(),
        }
    }

    /// The sessions and the problem of one size (computed on first use),
    /// borrowed together.
    pub fn sessions_and_problem(&mut self, size: Size) -> (&mut [Session], &Problem) {
        let i = match self.problems.iter().position(|p| p.size == size) {
            Some(i) => i,
            None => {
                let (m, n, k) = size;
                let ops = Operands::new(m, n, k, SEED);
                let reference = Reference::cpu(&ops);
                self.problems.push(Problem {
                    size,
                    ops,
                    reference,
                });
                self.problems.len() - 1
            }
        };
        (&mut self.sessions, &self.problems[i])
    }
}
