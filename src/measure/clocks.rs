//! GPU clocks, temperature, power and throttle reasons around each measurement,
//! read through NVML (nvml-wrapper, libnvidia-ml loaded at run time).
//!
//! NVML is optional: without the library, when it does not initialise, or when
//! no NVML device can be matched to a gemmlab device with certainty, there is no
//! monitor and a one-line note says why. Nothing here returns an error or panics.
//! NVML needs no CUDA backend: it also watches an NVIDIA GPU run through OpenCL.

use std::ffi::OsStr;
use std::sync::Arc;

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml as NvmlLib;
use serde::{Deserialize, Serialize};

use crate::backend::{parse_pci_bus_id, DeviceInfo, DeviceKind};

/// The clock state of a GPU at one moment. `None` where NVML did not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockReading {
    pub sm_mhz: Option<u32>,
    pub mem_mhz: Option<u32>,
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
    /// NVML's current clock-event (throttle) reasons, e.g. "sw_power_cap";
    /// empty when there are none, `None` when NVML did not say.
    pub throttle_reasons: Option<Vec<String>>,
    /// A performance-limiting reason was among them (see [`is_limiting`]).
    pub throttled: bool,
}

impl ClockReading {
    /// "SM 1980 MHz, memory 3201 MHz, 38 C, 92.1 W, not throttled".
    pub fn describe(&self) -> String {
        let mhz = |v: Option<u32>| v.map_or("unknown".into(), |v| format!("{v} MHz"));
        let state = match &self.throttle_reasons {
            None => "throttle reasons unknown".to_string(),
            Some(r) if self.throttled => format!("THROTTLED ({})", r.join(", ")),
            Some(r) if r.is_empty() => "not throttled".to_string(),
            Some(r) => format!("not throttled ({})", r.join(", ")),
        };
        format!(
            "SM {}, memory {}, {}, {}, {state}",
            mhz(self.sm_mhz),
            mhz(self.mem_mhz),
            self.temperature_c
                .map_or("temperature unknown".into(), |t| format!("{t} C")),
            self.power_w
                .map_or("power unknown".into(), |p| format!("{p:.1} W")),
        )
    }
}

/// Readings just before and just after the timed launches of one measurement
/// (the "before" reading precedes the warm-up launches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockWindow {
    pub before: ClockReading,
    pub after: ClockReading,
}

impl ClockWindow {
    /// A window needs both ends.
    pub fn new(before: Option<ClockReading>, after: Option<ClockReading>) -> Option<ClockWindow> {
        Some(ClockWindow {
            before: before?,
            after: after?,
        })
    }

    /// A performance-limiting reason at either end.
    pub fn throttled(&self) -> bool {
        self.before.throttled || self.after.throttled
    }

    /// The limiting reasons seen at either end, each once, in order.
    pub fn limiting_reasons(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in [&self.before, &self.after]
            .into_iter()
            .filter_map(|r| r.throttle_reasons.as_ref())
            .flatten()
        {
            if is_limiting(r) && !out.contains(r) {
                out.push(r.clone());
            }
        }
        out
    }
}

/// NVML's reasons by name, and whether each limits performance. Idle, the
/// applications-clocks setting, the display clock and sync boost are settings or
/// states, not a GPU slowing itself down under load.
const REASONS: [(ThrottleReasons, &str, bool); 9] = [
    (ThrottleReasons::GPU_IDLE, "gpu_idle", false),
    (
        ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
        "applications_clocks_setting",
        false,
    ),
    (ThrottleReasons::SW_POWER_CAP, "sw_power_cap", true),
    (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown", true),
    (ThrottleReasons::SYNC_BOOST, "sync_boost", false),
    (
        ThrottleReasons::SW_THERMAL_SLOWDOWN,
        "sw_thermal_slowdown",
        true,
    ),
    (
        ThrottleReasons::HW_THERMAL_SLOWDOWN,
        "hw_thermal_slowdown",
        true,
    ),
    (
        ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
        "hw_power_brake_slowdown",
        true,
    ),
    (
        ThrottleReasons::DISPLAY_CLOCK_SETTING,
        "display_clock_setting",
        false,
    ),
];

/// The names of the reasons set in NVML's bit mask; bits gemmlab does not know
/// are kept as "unknown_0x..." so no reason is lost.
pub fn reason_names(bits: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut known = 0u64;
    for (flag, name, _) in REASONS {
        known |= flag.bits();
        if bits & flag.bits() != 0 {
            out.push(name.to_string());
        }
    }
    if bits & !known != 0 {
        out.push(format!("unknown_{:#x}", bits & !known));
    }
    out
}

/// Whether a reason (by name) means the GPU slowed itself down: power cap,
/// hardware slowdown, thermal slowdown (software or hardware), power brake.
pub fn is_limiting(reason: &str) -> bool {
    REASONS
        .iter()
        .any(|(_, n, limiting)| *n == reason && *limiting)
}

/// A reading from NVML's answers: `None` where a query failed.
fn reading(
    sm_mhz: Option<u32>,
    mem_mhz: Option<u32>,
    temperature_c: Option<u32>,
    power_mw: Option<u32>,
    reasons: Option<u64>,
) -> ClockReading {
    let throttle_reasons = reasons.map(reason_names);
    ClockReading {
        sm_mhz,
        mem_mhz,
        temperature_c,
        power_w: power_mw.map(|mw| f64::from(mw) / 1000.0),
        throttled: throttle_reasons
            .as_ref()
            .is_some_and(|r| r.iter().any(|n| is_limiting(n))),
        throttle_reasons,
    }
}

/// What a run records about NVML in its environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvmlInfo {
    pub nvml_version: Option<String>,
    pub driver_version: Option<String>,
}

/// An initialised NVML, shared by every monitor of a run.
pub struct Nvml {
    lib: NvmlLib,
    info: NvmlInfo,
}

impl std::fmt::Debug for Nvml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvml").field("info", &self.info).finish()
    }
}

impl Nvml {
    /// Loads and initialises NVML, or says why not. The driver installs
    /// `libnvidia-ml.so.1`, often without the unversioned name nvml-wrapper looks
    /// for by default, so the versioned name is tried first.
    pub fn load() -> Result<Arc<Nvml>, String> {
        let versioned = NvmlLib::builder()
            .lib_path(OsStr::new("libnvidia-ml.so.1"))
            .init();
        let lib = match versioned {
            Ok(lib) => lib,
            Err(first) => NvmlLib::init().map_err(|e| {
                format!("NVML not available (libnvidia-ml.so.1: {first}; libnvidia-ml.so: {e})")
            })?,
        };
        let info = NvmlInfo {
            nvml_version: lib.sys_nvml_version().ok(),
            driver_version: lib.sys_driver_version().ok(),
        };
        Ok(Arc::new(Nvml { lib, info }))
    }

    pub fn info(&self) -> &NvmlInfo {
        &self.info
    }

    /// Every NVML device with what matching needs; devices NVML cannot open are skipped.
    fn candidates(&self) -> Result<Vec<Candidate>, String> {
        let count = self
            .lib
            .device_count()
            .map_err(|e| format!("NVML could not count devices: {e}"))?;
        Ok((0..count)
            .filter_map(|index| {
                let d = self.lib.device_by_index(index).ok()?;
                Some(Candidate {
                    index,
                    name: d.name().ok(),
                    pci: d.pci_info().ok().and_then(|p| parse_pci_bus_id(&p.bus_id)),
                })
            })
            .collect())
    }
}

/// One NVML device as matching sees it.
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    index: u32,
    name: Option<String>,
    pci: Option<[u32; 4]>,
}

/// Which NVML device is `info`'s: by PCI address; else the only one of that exact
/// name; else the only one there is. Anything less certain is no match, with why.
fn choose(info: &DeviceInfo, candidates: &[Candidate]) -> Result<(u32, &'static str), String> {
    if let Some(pci) = info.pci_bus_id.as_deref().and_then(parse_pci_bus_id) {
        if let Some(c) = candidates.iter().find(|c| c.pci == Some(pci)) {
            return Ok((c.index, "PCI bus id"));
        }
    }
    let named: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.name.as_deref() == Some(info.name.as_str()))
        .collect();
    match (named.as_slice(), candidates) {
        ([one], _) => Ok((one.index, "name")),
        (_, [only]) => Ok((only.index, "the only NVIDIA GPU")),
        ([], []) => Err("NVML lists no device".into()),
        ([], _) => Err(format!(
            "none of NVML's {} devices has the PCI bus id or the name \"{}\"",
            candidates.len(),
            info.name
        )),
        (many, _) => Err(format!(
            "{} NVML devices are named \"{}\" and the PCI bus id is {}",
            many.len(),
            info.name,
            if info.pci_bus_id.is_some() {
                "none of theirs"
            } else {
                "unknown"
            }
        )),
    }
}

/// GB/s at two transfers per cycle of a `mhz` memory clock across a `bits`-wide
/// bus; `None` for a zero clock or bus.
pub fn peak_bandwidth_gbs(mhz: u32, bits: u32) -> Option<f64> {
    (mhz > 0 && bits > 0).then(|| 2.0 * f64::from(mhz) * 1e6 * f64::from(bits) / 8.0 / 1e9)
}

/// Reads one GPU's clocks through a shared NVML.
#[derive(Debug, Clone)]
pub struct Monitor {
    nvml: Arc<Nvml>,
    index: u32,
    matched_by: &'static str,
}

impl Monitor {
    /// The monitor of `info`'s GPU, or a one-line note saying why there is none.
    /// `nvml` is the outcome of [`Nvml::load`], shared by a run's sessions.
    pub fn open(nvml: &Result<Arc<Nvml>, String>, info: &DeviceInfo) -> Result<Monitor, String> {
        if !(info.is_nvidia() && info.kind == DeviceKind::Gpu) {
            return Err(format!(
                "no clock readings for {}: not an NVIDIA GPU",
                info.label()
            ));
        }
        let nvml = match nvml {
            Ok(n) => n,
            Err(why) => return Err(format!("no clock readings for {}: {why}", info.label())),
        };
        let candidates = nvml
            .candidates()
            .map_err(|why| format!("no clock readings for {}: {why}", info.label()))?;
        let (index, matched_by) = choose(info, &candidates)
            .map_err(|why| format!("no clock readings for {}: {why}", info.label()))?;
        Ok(Monitor {
            nvml: Arc::clone(nvml),
            index,
            matched_by,
        })
    }

    /// "NVML device 0, matched by PCI bus id, NVML 12.580.82, driver 580.82.07".
    pub fn describe(&self) -> String {
        let i = self.nvml.info();
        format!(
            "NVML device {}, matched by {}, NVML {}, driver {}",
            self.index,
            self.matched_by,
            i.nvml_version.as_deref().unwrap_or("version unknown"),
            i.driver_version.as_deref().unwrap_or("unknown")
        )
    }

    pub fn nvml_info(&self) -> &NvmlInfo {
        self.nvml.info()
    }

    /// Whether two monitors read the same GPU.
    pub fn same_gpu(&self, other: &Monitor) -> bool {
        Arc::ptr_eq(&self.nvml, &other.nvml) && self.index == other.index
    }

    /// The GPU's peak memory bandwidth in GB/s, as the CUDA driver's attributes give
    /// it: two transfers per cycle of its highest memory clock across its bus (on the
    /// H200, 3201 MHz and 6144 bits: 4917 GB/s). `None` where NVML does not say.
    pub fn memory_bandwidth_gbs(&self) -> Option<f64> {
        let d = self.nvml.lib.device_by_index(self.index).ok()?;
        let mhz = d.max_clock_info(Clock::Memory).ok()?;
        let bits = d.memory_bus_width().ok()?;
        peak_bandwidth_gbs(mhz, bits)
    }

    /// The GPU's state now. A query NVML cannot answer leaves its field `None`.
    pub fn read(&self) -> ClockReading {
        let Ok(d) = self.nvml.lib.device_by_index(self.index) else {
            return ClockReading::default();
        };
        reading(
            d.clock_info(Clock::SM).ok(),
            d.clock_info(Clock::Memory).ok(),
            d.temperature(TemperatureSensor::Gpu).ok(),
            d.power_usage().ok(),
            self.event_reasons(&d),
        )
    }

    /// The current clock-event (throttle) reasons as NVML's raw bit mask: through
    /// the call's current name (NVML 12.2 on), which keeps bits nvml-wrapper does not
    /// know, else through the deprecated name nvml-wrapper uses.
    fn event_reasons(&self, d: &nvml_wrapper::Device) -> Option<u64> {
        let lib = self.nvml.lib.lib();
        if let Ok(f) = lib.nvmlDeviceGetCurrentClocksEventReasons.as_ref() {
            let mut bits = 0u64;
            // SAFETY: the handle comes from this initialised NVML and outlives the
            // call; `bits` is a valid out-pointer.
            let r = unsafe { f(d.handle(), &mut bits) };
            return (r == 0).then_some(bits);
        }
        d.current_throttle_reasons().ok().map(|r| r.bits())
    }
}

/// Windows for other modules' tests.
#[cfg(test)]
pub(crate) fn test_window(throttled: bool) -> ClockWindow {
    let calm = reading(Some(1980), Some(3201), Some(45), Some(400_000), Some(0));
    let after = if throttled {
        reading(Some(1755), Some(3201), Some(68), Some(699_500), Some(0x4))
    } else {
        calm.clone()
    };
    ClockWindow {
        before: calm,
        after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Toolchain;

    #[test]
    fn limiting_reasons_are_power_thermal_and_slowdowns_only() {
        for r in [
            "sw_power_cap",
            "hw_slowdown",
            "sw_thermal_slowdown",
            "hw_thermal_slowdown",
            "hw_power_brake_slowdown",
        ] {
            assert!(is_limiting(r), "{r}");
        }
        for r in [
            "gpu_idle",
            "applications_clocks_setting",
            "sync_boost",
            "display_clock_setting",
            "unknown_0x1000",
        ] {
            assert!(!is_limiting(r), "{r}");
        }
    }

    #[test]
    fn reason_bits_are_named_and_unknown_bits_kept() {
        // NVML's values: idle 0x1, applications clocks 0x2, SW power cap 0x4, HW slowdown 0x8.
        assert_eq!(reason_names(0), Vec::<String>::new());
        assert_eq!(
            reason_names(0x1 | 0x2),
            ["gpu_idle", "applications_clocks_setting"]
        );
        assert_eq!(
            reason_names(0x4 | 0x1000),
            ["sw_power_cap", "unknown_0x1000"]
        );
        let idle = reading(Some(345), Some(1593), Some(30), Some(75_500), Some(0x1));
        assert!(!idle.throttled);
        assert_eq!(idle.power_w, Some(75.5));
        let capped = reading(Some(1755), None, None, None, Some(0x4));
        assert!(capped.throttled);
        let unknown = reading(None, None, None, None, None);
        assert_eq!(unknown.throttle_reasons, None);
        assert!(!unknown.throttled);
    }

    #[test]
    fn a_window_is_throttled_at_either_end_and_needs_both() {
        let calm = reading(Some(1980), Some(3201), Some(40), Some(300_000), Some(0));
        let hot = reading(
            Some(1755),
            Some(3201),
            Some(70),
            Some(700_000),
            Some(0x4 | 0x20),
        );
        assert_eq!(ClockWindow::new(Some(calm.clone()), None), None);
        assert_eq!(ClockWindow::new(None, Some(calm.clone())), None);
        let w = ClockWindow::new(Some(calm.clone()), Some(calm.clone())).unwrap();
        assert!(!w.throttled());
        assert!(w.limiting_reasons().is_empty());
        let w = ClockWindow::new(Some(calm.clone()), Some(hot.clone())).unwrap();
        assert!(w.throttled());
        let w = ClockWindow::new(Some(hot.clone()), Some(hot)).unwrap();
        assert_eq!(
            w.limiting_reasons(),
            ["sw_power_cap", "sw_thermal_slowdown"]
        );
        assert!(
            calm.describe().ends_with("not throttled"),
            "{}",
            calm.describe()
        );
    }

    #[test]
    fn windows_survive_a_json_round_trip() {
        let w = ClockWindow {
            before: reading(Some(1980), Some(3201), Some(41), Some(123_456), Some(0)),
            after: reading(None, Some(3201), None, None, None),
        };
        let text = serde_json::to_string(&w).unwrap();
        let back: ClockWindow = serde_json::from_str(&text).unwrap();
        assert_eq!(back, w);
        assert!(
            text.contains("\"sm_mhz\":null"),
            "unknown is null, not 0: {text}"
        );
    }

    fn device(name: &str, pci: Option<&str>) -> DeviceInfo {
        let mut d: DeviceInfo = serde_json::from_value(serde_json::json!({
            "toolchain": "cuda", "id": "cuda:0", "name": name, "vendor": "NVIDIA",
            "platform": "CUDA driver", "kind": "gpu", "driver_version": null,
            "runtime_version": null, "compiler_version": null, "compute_capability": null,
            "compute_units": null, "clock_mhz": null, "global_mem_bytes": null,
            "local_mem_bytes": null, "shared_mem_per_sm_bytes": null,
            "max_work_group_size": null, "registers_per_block": null, "registers_per_sm": null,
            "max_threads_per_sm": null, "max_blocks_per_sm": null, "warp_size": null,
            "l2_cache_bytes": null
        }))
        .unwrap();
        assert_eq!(d.pci_bus_id, None, "old files without the field still load");
        d.pci_bus_id = pci.map(str::to_string);
        d
    }

    fn candidate(index: u32, name: &str, pci: &str) -> Candidate {
        Candidate {
            index,
            name: Some(name.into()),
            pci: parse_pci_bus_id(pci),
        }
    }

    #[test]
    fn matching_prefers_pci_then_a_unique_name_then_the_only_gpu() {
        let two = [
            candidate(0, "NVIDIA H200", "00000000:19:00.0"),
            candidate(1, "NVIDIA H200", "00000000:3B:00.0"),
        ];
        let by_pci = choose(&device("NVIDIA H200", Some("0000:3b:00.0")), &two);
        assert_eq!(by_pci, Ok((1, "PCI bus id")));
        let ambiguous = choose(&device("NVIDIA H200", None), &two).unwrap_err();
        assert!(ambiguous.contains("2 NVML devices"), "{ambiguous}");
        let mixed = [
            candidate(0, "NVIDIA H200", "00000000:19:00.0"),
            candidate(1, "NVIDIA L4", "00000000:3B:00.0"),
        ];
        assert_eq!(choose(&device("NVIDIA L4", None), &mixed), Ok((1, "name")));
        assert!(choose(&device("Tesla V100", None), &mixed).is_err());
        let one = [candidate(0, "NVIDIA H200 NVL", "00000000:19:00.0")];
        assert_eq!(
            choose(&device("NVIDIA H200", None), &one),
            Ok((0, "the only NVIDIA GPU"))
        );
        assert!(choose(&device("NVIDIA H200", None), &[]).is_err());
    }

    #[test]
    fn without_nvml_or_an_nvidia_gpu_there_is_a_note_not_an_error() {
        let missing: Result<Arc<Nvml>, String> = Err("NVML not available (test)".into());
        let gpu = device("NVIDIA H200", None);
        let note = Monitor::open(&missing, &gpu).unwrap_err();
        assert!(note.contains("NVML not available (test)"), "{note}");
        let mut cpu = device("cpu-haswell", None);
        cpu.toolchain = Toolchain::OpenCl;
        cpu.vendor = "AuthenticAMD".into();
        cpu.kind = DeviceKind::Cpu;
        let note = Monitor::open(&missing, &cpu).unwrap_err();
        assert!(note.contains("not an NVIDIA GPU"), "{note}");
    }

    #[test]
    fn peak_bandwidth_is_two_transfers_a_cycle_across_the_bus() {
        // The H200: 3201 MHz, 6144 bits.
        let h200 = peak_bandwidth_gbs(3201, 6144).unwrap();
        assert!((h200 - 4917.0).abs() < 1.0, "{h200}");
        assert_eq!(peak_bandwidth_gbs(0, 6144), None);
        assert_eq!(peak_bandwidth_gbs(3201, 0), None);
    }

    #[test]
    fn loading_nvml_never_panics() {
        // On a machine without the driver this is the note; with one, a working NVML.
        match Nvml::load() {
            Ok(n) => assert!(n.info().nvml_version.is_some()),
            Err(why) => assert!(why.starts_with("NVML not available"), "{why}"),
        }
    }
}
