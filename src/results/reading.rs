//! What a record says beyond its fields, read the same way wherever records
//! are read: its checked speed, resources, register tile and cap, whether (and
//! for which architecture and by which compiler) it was compiled offline, its
//! occupancy by an architecture's rules, and the FP32 peak of its GPU.

use super::Measurement;
use crate::backend::occupancy::{self, Limits, Occupancy};
use crate::backend::Toolchain;
use crate::kernel::builtin as kernels;

/// The kernel name of the vendor BLAS's rows.
pub const VENDOR: &str = "cublas";

/// Whether a row was compiled offline (`--arch`, the atlas): no device ran it,
/// so it has registers, spills and occupancy but no size and no speed. Told by
/// its device (`offline:sm_35`, what `backend::nvrtc::offline_device` writes),
/// its note ("no device: compiled offline for sm_35 ...") or its size of 0;
/// any one is enough, so rows from older or other writers are caught too.
pub fn is_offline(m: &Measurement) -> bool {
    // The notes read "no device: compiled offline for sm_35 with NVRTC 11.8; ...".
    let offline_note = |s: &str| s.contains("no device:") && s.contains("offline");
    m.device_id.starts_with("offline:")
        || (m.dims.is_none() && (m.m == 0 || m.n == 0 || m.k == 0))
        || m.status.reason().is_some_and(offline_note)
        || m.build_notes.iter().any(|n| offline_note(n))
}

/// The architecture an offline row was compiled for ("sm_35", "sm_90a"): from
/// its device id (`offline:sm_35`), else its device name ("sm_35 (no device)"),
/// else the first `sm_NN` its reason or notes name. `None` when none says.
pub fn arch_of(m: &Measurement) -> Option<String> {
    let from_id = m.device_id.strip_prefix("offline:");
    from_id.and_then(|a| arch_token(a.trim())).or_else(|| {
        std::iter::once(m.device.as_str())
            .chain(m.status.reason())
            .chain(m.build_notes.iter().map(String::as_str))
            .flat_map(|t| t.split(|c: char| c.is_whitespace() || ",;(".contains(c)))
            .find_map(arch_token)
    })
}

/// "35" and "a" from "35a": the leading digits and the rest.
fn split_digits(s: &str) -> (&str, &str) {
    s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()))
}

/// "sm_35" from "sm_35", "SM_90a", "sm_120:"; None for anything else.
fn arch_token(w: &str) -> Option<String> {
    let w = (w.trim_matches(|c: char| !c.is_ascii_alphanumeric())).to_ascii_lowercase();
    let (digits, suffix) = split_digits(w.strip_prefix("sm_")?);
    (digits.len() >= 2 && ["", "a", "f"].contains(&suffix)).then_some(w)
}

/// Orders architectures by compute capability: sm_35 < sm_37 < sm_90 < sm_90a < sm_100.
pub fn arch_order(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |s: &str| {
        let (digits, rest) = split_digits(s.strip_prefix("sm_").unwrap_or(s));
        (digits.parse().unwrap_or(u32::MAX), rest.to_string())
    };
    key(a).cmp(&key(b))
}

pub fn is_vendor(m: &Measurement) -> bool {
    m.kernel == VENDOR
}

/// The median GFLOP/s of a measurement that passed its check.
pub fn gflops(m: &Measurement) -> Option<f64> {
    m.gflops.filter(|g| m.status.is_ok() && g.is_finite())
}

/// Which form of its kernel a row measured, for words that quote its speed:
/// "tuned at 4096x4096x4096" (`compare --tuned`), "published defaults", or
/// "published + what changed" (parameters and switches set by hand).
pub fn form(m: &Measurement) -> String {
    if let Some(l) = m.label.as_deref().filter(|l| l.starts_with("tuned")) {
        return l.to_string();
    }
    let mut changed: Vec<String> = Vec::new();
    if let Ok(spec) = kernels::find(&m.kernel) {
        let defaults = spec.defaults();
        changed.extend(
            (m.config.0.iter())
                .filter(|(k, v)| {
                    k.as_str() != "PRECISION" && defaults.0.get(*k).is_some_and(|d| d != *v)
                })
                .map(|(k, v)| format!("{k}={v}")),
        );
    }
    let hints = m.hints.describe_from("", true);
    if let Some(h) = hints.strip_prefix(" + ") {
        changed.push(h.to_string());
    }
    match changed.is_empty() {
        true => "published defaults".into(),
        false => format!("published + {}", changed.join(", ")),
    }
}

pub fn vs_vendor(m: &Measurement) -> Option<f64> {
    m.vs_vendor.filter(|v| m.status.is_ok() && v.is_finite())
}

pub fn registers(m: &Measurement) -> Option<u32> {
    m.resources.as_ref()?.registers
}

/// Spill stores + loads in bytes, if both are known.
pub fn spill_bytes(m: &Measurement) -> Option<u64> {
    let r = m.resources.as_ref()?;
    Some(r.spill_stores_bytes? + r.spill_loads_bytes?)
}

/// "CUDA", "OpenCL", or for another front end's PTX "OpenCL PTX via CUDA JIT",
/// "NVRTC PTX via OpenCL runtime" (the row's toolchain is the runtime).
pub fn series_name(m: &Measurement) -> String {
    let Some(v) = m.variant.as_deref() else {
        return m.toolchain.label().to_string();
    };
    match super::ptx_front_end(v) {
        Some(front) => format!(
            "{} PTX via {}",
            ptx_source_name(front),
            runtime_name(m.toolchain)
        ),
        None => format!("{} ({v})", m.toolchain.label()),
    }
}

/// A front end as the source of a PTX: "OpenCL" (NVIDIA's), "NVRTC", "clang OpenCL".
pub fn ptx_source_name(front: Toolchain) -> &'static str {
    match front {
        Toolchain::OpenCl => "OpenCL",
        Toolchain::Cuda => "NVRTC",
        Toolchain::ClangOpenCl => "clang OpenCL",
        Toolchain::ClangCuda => "clang CUDA",
    }
}

/// What a row of `toolchain` ran on when it loaded PTX: the CUDA driver's JIT or
/// NVIDIA's OpenCL runtime.
pub fn runtime_name(toolchain: Toolchain) -> &'static str {
    match toolchain {
        Toolchain::OpenCl => "OpenCL runtime",
        _ => "CUDA JIT",
    }
}

/// A config value (RX, RY, ...) if the configuration sets it.
pub fn config_value(m: &Measurement, name: &str) -> Option<i64> {
    m.config.0.get(name).copied()
}

/// Reads `cap=64` / `cap=none` labels when `hints.max_registers` is absent.
pub fn register_cap(m: &Measurement) -> Option<u32> {
    let from_label = || {
        m.label
            .as_deref()?
            .trim()
            .strip_prefix("cap=")?
            .trim()
            .parse()
            .ok()
    };
    m.hints.max_registers.or_else(from_label)
}

/// A GEMM row's register tile (RX, RY), from its configuration or its label
/// ("RX=4 RY=8", the last of each counting).
pub fn tile_of(m: &Measurement) -> Option<(i64, i64)> {
    if let (Some(x), Some(y)) = (config_value(m, "RX"), config_value(m, "RY")) {
        return Some((x, y));
    }
    let l = m.label.as_deref()?;
    let value = |name: &str| {
        (l.split([' ', ',']).filter_map(|p| p.split_once('=')))
            .rfind(|(k, _)| k.trim() == name)
            .and_then(|(_, v)| v.trim().parse().ok())
    };
    Some((value("RX")?, value("RY")?))
}

/// The compiler of an offline row, as a chart series; ordered NVRTC first, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Compiler {
    pub opencl: bool,
    /// [11, 8]; empty when the label names none.
    pub version: Vec<u32>,
    /// "NVRTC 11.8", "OpenCL PTX + ptxas 11.8".
    pub name: String,
}

impl Compiler {
    /// From the row's `compiler` ("NVRTC 11.8", "NVIDIA OpenCL PTX + ptxas 11.8"),
    /// else from its note ("... with NVRTC 11.8; ...", "... by ptxas 11.8; ...").
    pub fn of(m: &Measurement) -> Option<Compiler> {
        let given = (m.compiler.as_deref().map(str::trim)).filter(|c| !c.is_empty());
        let label = given.map(str::to_string).or_else(|| label_from_notes(m))?;
        let opencl = m.toolchain == Toolchain::OpenCl;
        let version = label.split_whitespace().rev().find_map(parse_version);
        let name = match (opencl, m.toolchain.is_clang(), label.find("ptxas")) {
            // "clang OpenCL + ptxas 11.8": the two clang toolchains share a compiler label.
            (_, true, Some(i)) => format!("{} + {}", m.toolchain.label(), &label[i..]),
            (_, true, None) => format!("{}: {label}", m.toolchain.label()),
            (false, _, _) => label,
            (true, _, Some(i)) => format!("OpenCL PTX + {}", &label[i..]),
            (true, _, None) => format!("OpenCL: {label}"),
        };
        let version = version.unwrap_or_default();
        Some(Compiler {
            name,
            opencl,
            version,
        })
    }

    /// The CUDA release (major.minor) it belongs to.
    pub fn release(&self) -> Option<(u32, u32)> {
        let minor = self.version.get(1).copied().unwrap_or(0);
        self.version.first().map(|&major| (major, minor))
    }

    /// An NVRTC (not NVIDIA OpenCL's PTX, not clang).
    pub fn is_nvrtc(&self) -> bool {
        !self.opencl && self.name.starts_with("NVRTC")
    }

    pub fn is_kepler_nvrtc(&self) -> bool {
        self.is_nvrtc() && self.version.starts_with(&[11, 8])
    }
}

fn parse_version(w: &str) -> Option<Vec<u32>> {
    let w = w.trim_matches(|c: char| !c.is_ascii_digit());
    w.split('.').map(|p| p.parse().ok()).collect()
}

fn label_from_notes(m: &Measurement) -> Option<String> {
    let notes = m.build_notes.iter().map(String::as_str);
    let pats = [("with NVRTC ", "NVRTC"), ("by ptxas ", "ptxas")];
    m.status.reason().into_iter().chain(notes).find_map(|t| {
        pats.into_iter().find_map(|(pat, name)| {
            let rest = &t[t.find(pat)? + pat.len()..];
            let v = rest.split([';', ' ', ',']).next()?;
            parse_version(v).map(|_| format!("{name} {v}"))
        })
    })
}

/// Its kernel at the published defaults: the registry's default configuration
/// (or none recorded) and no switch, flag or cap.
pub fn is_published(m: &Measurement) -> bool {
    let default = || kernels::find(&m.kernel).ok()?.config(&[]).ok();
    (m.config.0.is_empty() || default().is_none_or(|d| d == m.config)) && m.hints.is_published()
}

/// (major, minor) of "sm_35", "sm_120", "sm_90a".
pub fn compute_capability(arch: &str) -> Option<(u32, u32)> {
    let rest = arch.strip_prefix("sm_")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: u32 = digits.parse().ok()?;
    Some((n / 10, n % 10))
}

pub fn limits_of(arch: &str) -> Option<Limits> {
    let (a, b) = compute_capability(arch)?;
    occupancy::limits(a, b)
}

pub fn threads_of(m: &Measurement) -> Option<u32> {
    let spec = kernels::find(&m.kernel).ok()?;
    let config = match m.config.0.is_empty() {
        true => spec.config(&[]).ok()?,
        false => m.config.clone(),
    };
    u32::try_from(spec.threads_per_group(&config)).ok()
}

/// Its occupancy by the rules of `arch` (a compute capability's limits).
pub fn occupancy_on(m: &Measurement, arch: &str) -> Option<Occupancy> {
    let r = m.resources.as_ref()?;
    let shared = u32::try_from(r.shared_bytes.unwrap_or(0)).ok()?;
    occupancy::occupancy(&limits_of(arch)?, threads_of(m)?, r.registers?, shared)
}

/// The lanes per SM at which one FFMA warp instruction per scheduler per cycle
/// (4 schedulers of 32 lanes) is the FP32 peak.
pub const LANES_ONE_FFMA_PER_CYCLE: u32 = 128;

/// FP32 lanes per SM by compute capability (CUDA C Programming Guide,
/// arithmetic instruction throughput); None where gemmlab does not know it.
pub fn fp32_lanes(cc: (u32, u32)) -> Option<u32> {
    match cc {
        (3, _) => Some(192),
        (6, 0) | (7, _) | (8, 0) => Some(64),
        (5 | 9 | 10 | 12, _) | (6, 1 | 2) | (8, 6 | 7 | 9) => Some(128),
        _ => None,
    }
}

/// FP64 lanes per SM by compute capability where gemmlab knows them (the
/// data-centre parts; consumer parts run FP64 at 1/32 or 1/64 of FP32).
pub fn fp64_lanes(cc: (u32, u32)) -> Option<u32> {
    match cc {
        (3, 5 | 7) | (9, 0) | (10, 0) => Some(64),
        (6, 0) | (7, 0) | (8, 0) => Some(32),
        _ => None,
    }
}

/// What the FP32 peak of a GPU is computed from (the clock its reported maximum).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuFacts {
    pub compute_capability: Option<(u32, u32)>,
    pub sms: Option<u32>,
    pub clock_mhz: Option<u32>,
    /// DRAM bandwidth from the memory clock and bus width (the CUDA driver's).
    pub bandwidth_gbs: Option<f64>,
}

impl GpuFacts {
    /// SMs x FP32 lanes x 2 FLOPs (an FMA) x the reported maximum clock.
    pub fn peak_gflops(&self) -> Option<f64> {
        self.peak_with(fp32_lanes(self.compute_capability?)?)
    }

    /// The same with the FP64 lanes.
    pub fn peak_f64_gflops(&self) -> Option<f64> {
        self.peak_with(fp64_lanes(self.compute_capability?)?)
    }

    fn peak_with(&self, lanes: u32) -> Option<f64> {
        let per_sm = f64::from(lanes) * 2.0 * f64::from(self.clock_mhz?) * 1e-3;
        Some(f64::from(self.sms?) * per_sm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offline_row(device: &str, id: &str, note: &str, size: usize) -> Measurement {
        crate::results::failed_row(
            "atlas",
            device,
            id,
            crate::backend::Toolchain::Cuda,
            "gemm6",
            crate::gemm::driver::Status::Unavailable(note.into()),
            (size, size, size),
        )
    }

    #[test]
    fn offline_rows_are_told_by_device_note_or_size() {
        let note =
            "no device: compiled offline for sm_35 with NVRTC 11.8; not run, checked or timed";
        let m = offline_row("sm_35 (no device)", "offline:sm_35", note, 0);
        assert!(is_offline(&m));
        assert_eq!(arch_of(&m).as_deref(), Some("sm_35"));
        // Any one sign is enough.
        assert!(is_offline(&offline_row("x", "offline:sm_90", "", 4096)));
        assert!(is_offline(&offline_row("x", "cuda:0", note, 4096)));
        assert!(is_offline(&offline_row("x", "cuda:0", "", 0)));
        let mut noted = offline_row("x", "cuda:0", "", 4096);
        noted.status = crate::gemm::driver::Status::Ok;
        noted.build_notes.push(
            "no device: NVIDIA OpenCL's PTX assembled offline for sm_61 by ptxas 11.8; not run"
                .into(),
        );
        assert!(is_offline(&noted));
        assert_eq!(arch_of(&noted).as_deref(), Some("sm_61"));
        // A device that is unavailable, or a measured row, is not offline.
        let unavailable = offline_row(
            "NVIDIA H200",
            "cuda:0",
            "CUDA toolchain unavailable: no driver",
            4096,
        );
        assert!(!is_offline(&unavailable));
        assert_eq!(arch_of(&unavailable), None);
        // The architecture from the name when the id does not say, tolerant of case.
        let named = offline_row("SM_120 (no device)", "cuda:offline", "", 0);
        assert_eq!(arch_of(&named).as_deref(), Some("sm_120"));
        assert_eq!(
            arch_of(&offline_row("x", "offline:sm_90a", "", 0)).as_deref(),
            Some("sm_90a")
        );
        assert_eq!(arch_of(&offline_row("x", "offline:gfx90a", "", 0)), None);
    }

    #[test]
    fn architectures_order_by_compute_capability() {
        let mut v = vec!["sm_120", "sm_90a", "sm_35", "sm_100", "sm_90", "sm_37"];
        v.sort_by(|a, b| arch_order(a, b));
        assert_eq!(v, ["sm_35", "sm_37", "sm_90", "sm_90a", "sm_100", "sm_120"]);
    }
}
