//! Device discovery and the one `--device` syntax used everywhere:
//!
//! - `auto` (default): the best GPU, under every toolchain that sees it; a CPU
//!   OpenCL device only where there is no GPU;
//! - a toolchain: `cuda`, `opencl` (its best device: a GPU before PoCL);
//! - explicit indices: `cuda:0`, `opencl:1:0` (platform 1, device 0);
//! - anything else: a case-insensitive substring of name, vendor or platform
//!   (`nvidia`, `h200`, `pocl`), or a kind (`gpu`, `cpu`).

use super::{AnyBackend, DeviceInfo, DeviceKind, Runtime, Toolchain};
use crate::error::{Error, Result};

/// Every device gemmlab can see, and why a toolchain shows none.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub devices: Vec<DeviceInfo>,
    pub unavailable: Vec<(Toolchain, String)>,
}

impl Inventory {
    /// Asks both toolchains. Never panics when a library is missing.
    pub fn discover() -> Inventory {
        let mut inv = Inventory::default();
        for tc in Toolchain::ALL {
            match enumerate(tc) {
                Ok(d) if d.is_empty() => inv.unavailable.push((tc, "no device found".to_string())),
                Ok(d) => inv.devices.extend(d),
                Err(
                    Error::CudaUnavailable(why)
                    | Error::OpenClUnavailable(why)
                    | Error::ToolchainUnavailable { reason: why, .. },
                ) => inv.unavailable.push((tc, why)),
                Err(e) => inv.unavailable.push((tc, e.to_string())),
            }
        }
        inv
    }

    /// One line per device and per unavailable toolchain, for error messages.
    pub fn summary(&self) -> String {
        let mut lines: Vec<String> = self
            .devices
            .iter()
            .map(|d| format!("  {:<12} {} ({}, {})", d.id, d.name, d.kind, d.platform))
            .collect();
        for (tc, why) in &self.unavailable {
            lines.push(format!("  {tc}: {why}"));
        }
        if lines.is_empty() {
            lines.push("  (none)".into());
        }
        lines.join("\n")
    }
}

fn enumerate(tc: Toolchain) -> Result<Vec<DeviceInfo>> {
    match tc.runtime() {
        Runtime::OpenCl => super::opencl::enumerate(),
        #[cfg(feature = "cuda")]
        Runtime::Cuda if tc.is_clang() => {
            // The CUDA driver's devices, compiled for by clang where it is here.
            if let Some(reason) = super::clang::unavailable(tc) {
                return Err(Error::ToolchainUnavailable {
                    toolchain: tc.to_string(),
                    reason,
                });
            }
            let mut devices = super::cuda::enumerate()?;
            let clang = super::clang::Clang::find().ok().map(|c| c.label());
            for d in &mut devices {
                d.toolchain = tc;
                d.compiler_version = clang.clone();
            }
            Ok(devices)
        }
        #[cfg(feature = "cuda")]
        Runtime::Cuda => super::cuda::enumerate(),
        #[cfg(not(feature = "cuda"))]
        Runtime::Cuda => Err(Error::CudaUnavailable(
            "this gemmlab was built without the `cuda` feature (rebuild with --features cuda)"
                .into(),
        )),
    }
}

/// A parsed `--device` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    Auto,
    Toolchain(Toolchain),
    Cuda(usize),
    OpenCl(usize, usize),
    Text(String),
}

impl DeviceSpec {
    pub fn parse(s: &str) -> Result<DeviceSpec> {
        let t = s.trim();
        let bad = |reason: &str| Error::BadDeviceSpec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        if t.is_empty() || t.eq_ignore_ascii_case("auto") {
            return Ok(DeviceSpec::Auto);
        }
        if let Some(tc) = Toolchain::parse(t) {
            return Ok(DeviceSpec::Toolchain(tc));
        }
        let parts: Vec<&str> = t.split(':').collect();
        if parts.len() > 1 {
            let num = |p: &str| {
                p.trim()
                    .parse::<usize>()
                    .map_err(|_| bad("indices must be non-negative integers"))
            };
            // Devices are named by their runtime: a clang toolchain's device is "cuda:N".
            return match (
                Toolchain::parse(parts[0]).map(Toolchain::runtime),
                parts.len(),
            ) {
                (Some(Runtime::Cuda), 2) => Ok(DeviceSpec::Cuda(num(parts[1])?)),
                (Some(Runtime::OpenCl), 3) => {
                    Ok(DeviceSpec::OpenCl(num(parts[1])?, num(parts[2])?))
                }
                (Some(Runtime::OpenCl), 2) => {
                    Err(bad("write opencl:PLATFORM:DEVICE, e.g. opencl:1:0"))
                }
                _ => Err(bad("expected cuda:N or opencl:P:D")),
            };
        }
        Ok(DeviceSpec::Text(t.to_ascii_lowercase()))
    }

    fn matches(&self, d: &DeviceInfo) -> bool {
        match self {
            DeviceSpec::Auto => true,
            DeviceSpec::Toolchain(tc) => d.toolchain == *tc,
            DeviceSpec::Cuda(i) => d.id == format!("cuda:{i}"),
            DeviceSpec::OpenCl(p, i) => d.id == format!("opencl:{p}:{i}"),
            DeviceSpec::Text(t) => match t.as_str() {
                "gpu" => d.kind == DeviceKind::Gpu,
                "cpu" => d.kind == DeviceKind::Cpu,
                // PoCL calls its platform "Portable Computing Language".
                "pocl" => d
                    .platform
                    .to_ascii_lowercase()
                    .contains("portable computing language"),
                _ => [&d.name, &d.vendor, &d.platform]
                    .iter()
                    .any(|f| f.to_ascii_lowercase().contains(t)),
            },
        }
    }
}

/// The devices a spec selects: at most one per toolchain, all the same kind,
/// and, where the pick is a GPU, the same GPU (by name) under every toolchain.
pub fn resolve(
    spec: &DeviceSpec,
    inventory: &Inventory,
    toolchains: &[Toolchain],
) -> Result<Vec<DeviceInfo>> {
    let candidates: Vec<&DeviceInfo> = inventory
        .devices
        .iter()
        .filter(|d| toolchains.contains(&d.toolchain) && spec.matches(d))
        .collect();
    let no_match = || {
        let mut available = inventory.summary();
        if toolchains.len() < Toolchain::ALL.len() {
            let names: Vec<&str> = toolchains.iter().map(|t| t.as_str()).collect();
            available.push_str(&format!(
                "\n(only toolchains {} were asked for)",
                names.join(", ")
            ));
        }
        let spec_text = match spec {
            DeviceSpec::Auto => "auto".to_string(),
            DeviceSpec::Toolchain(t) => t.to_string(),
            DeviceSpec::Cuda(i) => format!("cuda:{i}"),
            DeviceSpec::OpenCl(p, i) => format!("opencl:{p}:{i}"),
            DeviceSpec::Text(t) => t.clone(),
        };
        Error::NoSuchDevice {
            spec: spec_text,
            available,
        }
    };
    let best_kind = candidates
        .iter()
        .map(|d| d.kind)
        .min()
        .ok_or_else(no_match)?;
    // The reference device: the first of the best kind, CUDA's view first.
    let reference = candidates
        .iter()
        .filter(|d| d.kind == best_kind)
        .min_by_key(|d| d.toolchain)
        .ok_or_else(no_match)?;
    let mut picked = Vec::new();
    for tc in toolchains {
        let same = candidates.iter().find(|d| {
            d.toolchain == *tc
                && d.kind == best_kind
                && (best_kind != DeviceKind::Gpu || d.name == reference.name)
        });
        if let Some(d) = same {
            picked.push((*d).clone());
        }
    }
    if picked.is_empty() {
        return Err(no_match());
    }
    Ok(picked)
}

/// Opens a device for work (CUDA with the default NVRTC).
pub fn open(info: &DeviceInfo) -> Result<AnyBackend> {
    open_with(info, None)
}

/// Opens a device for work; a CUDA device compiles with `nvrtc` where given
/// (`--nvrtc`), else with the default NVRTC. OpenCL ignores it.
pub fn open_with(
    info: &DeviceInfo,
    nvrtc: Option<&std::sync::Arc<super::nvrtc::Nvrtc>>,
) -> Result<AnyBackend> {
    match info.toolchain.runtime() {
        Runtime::OpenCl => Ok(AnyBackend::OpenCl(super::OpenClBackend::open(&info.id)?)),
        #[cfg(feature = "cuda")]
        Runtime::Cuda => Ok(AnyBackend::Cuda(super::CudaBackend::open_for(
            &info.id,
            info.toolchain,
            nvrtc.cloned(),
            assembler().as_deref(),
        )?)),
        #[cfg(not(feature = "cuda"))]
        Runtime::Cuda => {
            let _ = nvrtc;
            Err(Error::CudaUnavailable(
                "this gemmlab was built without the `cuda` feature".into(),
            ))
        }
    }
}

/// The clang toolchains' assembler when `GEMMLAB_ASSEMBLER` names one: a cached
/// ptxas release ("11.8", "13") or "jit" for the CUDA driver's; by default the
/// newest cached ptxas that assembles for the device.
pub fn assembler() -> Option<String> {
    std::env::var("GEMMLAB_ASSEMBLER")
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// The error for a toolchain that shows no device, with the reason.
pub fn unavailable(tc: Toolchain, why: &str) -> Error {
    match tc {
        Toolchain::Cuda => Error::CudaUnavailable(why.to_string()),
        Toolchain::OpenCl => Error::OpenClUnavailable(why.to_string()),
        _ => Error::ToolchainUnavailable {
            toolchain: tc.to_string(),
            reason: why.to_string(),
        },
    }
}

/// Discover, resolve and open in one step.
pub fn open_spec(spec: &str, toolchains: &[Toolchain]) -> Result<Vec<AnyBackend>> {
    let spec = DeviceSpec::parse(spec)?;
    let inv = Inventory::discover();
    if let DeviceSpec::Toolchain(tc) = spec {
        if let Some((_, why)) = inv.unavailable.iter().find(|(t, _)| *t == tc) {
            if !inv.devices.iter().any(|d| d.toolchain == tc) {
                return Err(unavailable(tc, why));
            }
        }
    }
    resolve(&spec, &inv, toolchains)?.iter().map(open).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(
        tc: Toolchain,
        id: &str,
        name: &str,
        vendor: &str,
        platform: &str,
        kind: DeviceKind,
    ) -> DeviceInfo {
        DeviceInfo::new(tc, id, name, vendor, platform, kind)
    }

    /// The H200 machine: PoCL is platform 0, NVIDIA OpenCL platform 1.
    fn h200_machine() -> Inventory {
        Inventory {
            devices: vec![
                dev(
                    Toolchain::OpenCl,
                    "opencl:0:0",
                    "cpu-sapphirerapids-AMD EPYC",
                    "AuthenticAMD",
                    "Portable Computing Language",
                    DeviceKind::Cpu,
                ),
                dev(
                    Toolchain::OpenCl,
                    "opencl:1:0",
                    "NVIDIA H200",
                    "NVIDIA Corporation",
                    "NVIDIA CUDA",
                    DeviceKind::Gpu,
                ),
                dev(
                    Toolchain::Cuda,
                    "cuda:0",
                    "NVIDIA H200",
                    "NVIDIA",
                    "CUDA driver",
                    DeviceKind::Gpu,
                ),
            ],
            unavailable: vec![],
        }
    }

    fn ids(v: &[DeviceInfo]) -> Vec<&str> {
        v.iter().map(|d| d.id.as_str()).collect()
    }

    const BOTH: [Toolchain; 2] = [Toolchain::Cuda, Toolchain::OpenCl];

    #[test]
    fn parses_specs() {
        assert_eq!(DeviceSpec::parse("").unwrap(), DeviceSpec::Auto);
        assert_eq!(
            DeviceSpec::parse("CUDA").unwrap(),
            DeviceSpec::Toolchain(Toolchain::Cuda)
        );
        assert_eq!(DeviceSpec::parse("cuda:1").unwrap(), DeviceSpec::Cuda(1));
        assert_eq!(
            DeviceSpec::parse("opencl:1:0").unwrap(),
            DeviceSpec::OpenCl(1, 0)
        );
        assert_eq!(
            DeviceSpec::parse("H200").unwrap(),
            DeviceSpec::Text("h200".into())
        );
        assert!(DeviceSpec::parse("opencl:x:0").is_err());
        assert!(DeviceSpec::parse("opencl:1").is_err());
        assert!(DeviceSpec::parse("vulkan:0").is_err());
    }

    #[test]
    fn auto_picks_the_gpu_under_both_toolchains() {
        let r = resolve(&DeviceSpec::Auto, &h200_machine(), &BOTH).unwrap();
        assert_eq!(ids(&r), ["cuda:0", "opencl:1:0"]);
    }

    #[test]
    fn opencl_alone_prefers_the_gpu_over_pocl_on_platform_0() {
        let r = resolve(
            &DeviceSpec::parse("opencl").unwrap(),
            &h200_machine(),
            &BOTH,
        )
        .unwrap();
        assert_eq!(ids(&r), ["opencl:1:0"]);
    }

    #[test]
    fn names_and_vendors_select() {
        let inv = h200_machine();
        assert_eq!(
            ids(&resolve(&DeviceSpec::parse("nvidia").unwrap(), &inv, &BOTH).unwrap()),
            ["cuda:0", "opencl:1:0"]
        );
        assert_eq!(
            ids(&resolve(&DeviceSpec::parse("pocl").unwrap(), &inv, &BOTH).unwrap()),
            ["opencl:0:0"]
        );
        assert_eq!(
            ids(&resolve(&DeviceSpec::parse("portable").unwrap(), &inv, &BOTH).unwrap()),
            ["opencl:0:0"]
        );
        assert_eq!(
            ids(&resolve(&DeviceSpec::parse("opencl:0:0").unwrap(), &inv, &BOTH).unwrap()),
            ["opencl:0:0"]
        );
        assert_eq!(
            ids(&resolve(&DeviceSpec::Auto, &inv, &[Toolchain::OpenCl]).unwrap()),
            ["opencl:1:0"]
        );
    }

    /// A machine with PoCL on its CPU and no CUDA driver.
    fn pocl_only() -> Inventory {
        Inventory {
            devices: vec![dev(
                Toolchain::OpenCl,
                "opencl:0:0",
                "pthread-skylake",
                "GenuineIntel",
                "Portable Computing Language",
                DeviceKind::Cpu,
            )],
            unavailable: vec![(Toolchain::Cuda, "libcuda.so.1 not found".into())],
        }
    }

    #[test]
    fn cpu_only_machine_falls_back_to_pocl() {
        let inv = pocl_only();
        assert_eq!(
            ids(&resolve(&DeviceSpec::Auto, &inv, &BOTH).unwrap()),
            ["opencl:0:0"]
        );
    }

    #[test]
    fn unknown_spec_lists_what_exists() {
        let inv = pocl_only();
        let e = resolve(&DeviceSpec::parse("mi300").unwrap(), &inv, &BOTH)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mi300"), "{e}");
        assert!(
            e.contains("opencl:0:0") && e.contains("pthread-skylake"),
            "{e}"
        );
        assert!(e.contains("libcuda.so.1 not found"), "{e}");
    }
}
