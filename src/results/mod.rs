//! Result records and their files. A run writes `environment.json` first, then
//! appends one JSON line per measurement to `measurements.jsonl` as soon as it
//! exists (an interrupted run loses nothing already measured), and at the end
//! `results.json` (environment + measurements) and `results.csv`.

pub mod bests;
pub mod engine;
pub mod evidence;
pub mod ptx_archive;
pub mod table;

pub mod ncu;
pub mod reading;
pub mod set;

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, DeviceInfo, KernelResources, Toolchain};
use crate::error::{Error, Result};
use crate::gemm::driver::{Session, Status};
use crate::gemm::CheckReport;
use crate::kernel::builtin::{Config, Hints};
use crate::measure::clocks::{ClockReading, ClockWindow, NvmlInfo};
use crate::measure::{CacheState, Plan, Stats};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    pub gemmlab_version: String,
    pub git_commit: String,
    pub command: Vec<String>,
    pub started_utc: String,
    pub hostname: String,
    pub os: String,
    pub host_cpus: usize,
    pub devices: Vec<DeviceInfo>,
    pub vendor_blas: Option<String>,
    pub seed: u64,
    pub plan: Plan,
    pub notes: Vec<String>,
    /// The NVML that read the clocks, when any session had a monitor; why not is in `notes`.
    #[serde(default)]
    pub nvml: Option<NvmlInfo>,
}

impl Environment {
    pub fn capture(devices: Vec<DeviceInfo>, seed: u64, plan: Plan) -> Environment {
        Environment {
            gemmlab_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: env!("GEMMLAB_GIT_COMMIT").to_string(),
            command: std::env::args().collect(),
            started_utc: utc_now(),
            hostname: crate::util::process::hostname(),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            host_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            devices,
            vendor_blas: None,
            seed,
            plan,
            notes: Vec::new(),
            nvml: None,
        }
    }

    /// Records the NVML that reads the sessions' clocks, and why a session has none.
    pub fn record_clocks(&mut self, sessions: &[Session]) {
        for s in sessions {
            if let Some(m) = &s.monitor {
                self.nvml.get_or_insert_with(|| m.nvml_info().clone());
                let info = s.backend.borrow().info().label();
                self.notes
                    .push(format!("clocks of {info}: {}", m.describe()));
            }
            if let Some(why) = &s.monitor_note {
                self.notes.push(why.clone());
            }
        }
    }
}

/// One cell of an experiment: a kernel configuration on one toolchain at one size.
/// A measurement's `variant` for NVIDIA OpenCL's PTX loaded as PTX (`sweep jit`):
/// through the CUDA driver's JIT on a CUDA row, as a program binary through NVIDIA's
/// OpenCL runtime on an OpenCL row. The row's toolchain names the runtime.
pub const OPENCL_PTX: &str = "opencl-ptx";
/// A measurement's `variant` for NVRTC's own PTX loaded the same ways.
pub const NVRTC_PTX: &str = "nvrtc-ptx";
/// Clang's PTX (its OpenCL and CUDA front ends) through NVIDIA's OpenCL runtime;
/// through the CUDA driver it is the clang toolchain's own row.
pub const CLANG_OPENCL_PTX: &str = "clang-opencl-ptx";
pub const CLANG_CUDA_PTX: &str = "clang-cuda-ptx";

/// The `variant` of a row that ran `front`'s PTX loaded as PTX.
pub fn ptx_variant(front: Toolchain) -> &'static str {
    match front {
        Toolchain::OpenCl => OPENCL_PTX,
        Toolchain::Cuda => NVRTC_PTX,
        Toolchain::ClangOpenCl => CLANG_OPENCL_PTX,
        Toolchain::ClangCuda => CLANG_CUDA_PTX,
    }
}

/// The front end whose PTX a `variant` row ran ([`ptx_variant`]'s inverse).
pub fn ptx_front_end(variant: &str) -> Option<Toolchain> {
    [
        Toolchain::OpenCl,
        Toolchain::Cuda,
        Toolchain::ClangOpenCl,
        Toolchain::ClangCuda,
    ]
    .into_iter()
    .find(|&t| ptx_variant(t) == variant)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    /// "compare", "registers", "tiling", "hints", ...
    pub experiment: String,
    pub kernel: String,
    /// How the kernel was built when not natively by its toolchain: another front
    /// end's PTX ([`ptx_variant`]).
    #[serde(default)]
    pub variant: Option<String>,
    /// Free-form label of the experiment point ("cap=64", "RX=4 RY=4").
    pub label: Option<String>,
    pub toolchain: Toolchain,
    pub device: String,
    pub device_id: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The GEMM call measured (layout, transposes, alpha/beta, ld, offsets, precision);
    /// absent in files written before gemmlab took more than C = A * B in f32.
    #[serde(default)]
    pub problem: Option<crate::gemm::problem::Problem>,
    pub padded: Option<[usize; 3]>,
    pub config: Config,
    pub hints: Hints,
    pub cache: CacheState,
    #[serde(flatten)]
    pub status: Status,
    pub check: Option<CheckReport>,
    pub time: Option<Stats>,
    /// From the median kernel time.
    pub gflops: Option<f64>,
    /// From the fastest repetition.
    pub gflops_best: Option<f64>,
    /// Median GFLOP/s over the vendor BLAS's median in the same run, same size:
    /// over `vendor_paired`'s where the row has it.
    pub vs_vendor: Option<f64>,
    /// The vendor BLAS on the same call, timed in the same interleaved repetitions
    /// as this row (A B cuBLAS A B cuBLAS ...), so clock and thermal drift fall on
    /// both alike. The `cublas` row of the same size is the call timed alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_paired: Option<Stats>,
    pub pre_ns: Option<u64>,
    pub post_ns: Option<u64>,
    pub resources: Option<KernelResources>,
    /// The compiler that built it and its version: "NVRTC 11.8", "OpenCL C 1.2 (...)".
    #[serde(default)]
    pub compiler: Option<String>,
    pub compile_ms: Option<f64>,
    pub build_notes: Vec<String>,
    pub occupancy: Option<f64>,
    /// Static instruction mix of the kernel's PTX, where the toolchain gives PTX.
    #[serde(default)]
    pub ptx_mix: Option<crate::backend::ptx::PtxMix>,
    /// The PTX of this build, relative to the result directory (with `--keep-ptx`).
    #[serde(default)]
    pub ptx_file: Option<String>,
    /// NVML readings just before and just after the timed launches, where NVML read them.
    #[serde(default)]
    pub clocks: Option<ClockWindow>,
    /// A user kernel's size: its dimensions by name (`m`, `n`, `k` are 0 then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<std::collections::BTreeMap<String, i64>>,
    /// Bytes moved per second (10^9) by the median time, where the kernel states its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbs: Option<f64>,
}

impl Measurement {
    /// The precision computed: f32 for every row written before f64 existed.
    pub fn precision(&self) -> crate::gemm::problem::Precision {
        self.problem.map(|p| p.precision).unwrap_or_default()
    }

    /// C = A * B column-major f32 (the tutorial's problem), also for old rows.
    pub fn is_plain_problem(&self) -> bool {
        self.problem.is_none_or(|p| p.is_plain())
    }

    /// `(registers used, cap asked)` when the compiler used more than the cap.
    pub fn cap_exceeded(&self) -> Option<(u32, u32)> {
        let cap = self.hints.max_registers?;
        let used = self.resources.as_ref()?.registers?;
        (used > cap).then_some((used, cap))
    }

    pub fn size_label(&self) -> String {
        if let Some(d) = &self.dims {
            return dims_label(d);
        }
        if self.m == self.n && self.n == self.k {
            self.m.to_string()
        } else {
            format!("{}x{}x{}", self.m, self.n, self.k)
        }
    }
}

/// Replacing a run is what --out asks for, but never silently, and never in
/// part: the earlier run's files go too, so nothing of it (a finished run's
/// results.json, which a report prefers to measurements.jsonl; its search
/// traces, replays or PTX) is read as this run's when this one is interrupted
/// or writes less. Files gemmlab does not write stay.
pub fn replace_earlier_run(dir: &Path) -> Result<()> {
    let earlier =
        fs::read_to_string(dir.join("measurements.jsonl")).map_or(0, |s| s.lines().count());
    let entries = fs::read_dir(dir).into_iter().flatten().flatten();
    let names: Vec<String> = (entries.filter_map(|e| e.file_name().into_string().ok()))
        .filter(|n| is_run_artefact(n))
        .collect();
    let traces = names.iter().filter(|n| n.starts_with("search-")).count();
    for n in &names {
        let p = dir.join(n);
        let removed = match p.is_dir() {
            true => fs::remove_dir_all(&p),
            false => fs::remove_file(&p),
        };
        removed.map_err(|e| Error::io(&p, e))?;
    }
    if earlier > 0 || traces > 0 {
        let what = [(earlier, "measurement"), (traces, "search trace")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, w)| crate::util::words::plural(*n, w))
            .collect::<Vec<_>>()
            .join(" and ");
        let them = crate::util::words::verb(earlier + traces, "it", "them");
        let d = dir.display();
        eprintln!("note: {d} held {what} of an earlier run; this run replaces {them} (another --out keeps both)");
    }
    Ok(())
}

/// A file or folder a run writes into its directory.
fn is_run_artefact(name: &str) -> bool {
    let json = |prefix: &str| name.starts_with(prefix) && name.ends_with(".json");
    matches!(
        name,
        "measurements.jsonl" | "environment.json" | "results.json" | "results.csv"
    ) || name == crate::results::ptx_archive::ARCHIVE
        || name == crate::results::ptx_archive::DIR
        || json("search-")
        || json("replay-")
}

/// A spec kernel's dimensions as results and reports name them: "m=512 n=4096".
pub fn dims_label(d: &std::collections::BTreeMap<String, i64>) -> String {
    let each: Vec<String> = d.iter().map(|(k, v)| format!("{k}={v}")).collect();
    each.join(" ")
}

pub struct ResultWriter {
    dir: PathBuf,
    lines: BufWriter<File>,
    env: Environment,
    all: Vec<Measurement>,
}

impl ResultWriter {
    /// Starts a run in `dir`, replacing an earlier run's files and saying so.
    pub fn create(dir: &Path, env: Environment) -> Result<ResultWriter> {
        replace_earlier_run(dir)?;
        ResultWriter::create_resumed(dir, env)
    }

    /// Starts a run again in `dir` (a supervised tune child after a restart): the
    /// files there are its own; its supervisor replaced the earlier run's.
    pub fn create_resumed(dir: &Path, env: Environment) -> Result<ResultWriter> {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join("measurements.jsonl");
        write_json(&dir.join("environment.json"), &env)?;
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        Ok(ResultWriter {
            dir: dir.to_path_buf(),
            lines: BufWriter::new(file),
            env,
            all: Vec::new(),
        })
    }

    pub fn env_mut(&mut self) -> &mut Environment {
        &mut self.env
    }

    pub fn measurements(&self) -> &[Measurement] {
        &self.all
    }

    /// Appends and flushes at once.
    pub fn push(&mut self, m: Measurement) -> Result<()> {
        let path = self.dir.join("measurements.jsonl");
        let line = serde_json::to_string(&m).map_err(|e| Error::Data {
            path: path.clone(),
            message: e.to_string(),
        })?;
        writeln!(self.lines, "{line}")
            .and_then(|_| self.lines.flush())
            .map_err(|e| Error::io(&path, e))?;
        self.all.push(m);
        Ok(())
    }

    pub fn finish(mut self) -> Result<Vec<Measurement>> {
        let _ = self.lines.flush();
        write_json(&self.dir.join("environment.json"), &self.env)?;
        let doc = serde_json::json!({"environment": self.env, "measurements": self.all});
        write_json(&self.dir.join("results.json"), &doc)?;
        write_csv(&self.dir.join("results.csv"), &self.all)?;
        // The listings of --keep-ptx: one archive instead of hundreds of files.
        crate::results::ptx_archive::pack(&self.dir)?;
        Ok(self.all)
    }
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Error::Data {
        path: path.into(),
        message: e.to_string(),
    })?;
    fs::write(path, text + "\n").map_err(|e| Error::io(path, e))
}

const CSV_HEADER: [&str; 40] = [
    "experiment",
    "kernel",
    "label",
    "toolchain",
    "device",
    "m",
    "n",
    "k",
    "config",
    "cache",
    "status",
    "reason",
    "median_ns",
    "min_ns",
    "max_ns",
    "iqr_pct",
    "gflops",
    "gflops_best",
    "vs_vendor",
    "registers",
    "spill_stores",
    "spill_loads",
    "occupancy",
    "rel_error",
    "check_method",
    "batch",
    "reps",
    // NVML readings before and after the timed launches; empty without clock data.
    "sm_mhz_before",
    "sm_mhz_after",
    "mem_mhz_before",
    "mem_mhz_after",
    "temperature_c_before",
    "temperature_c_after",
    "power_w_before",
    "power_w_after",
    "throttled",
    "throttled_by",
    "compiler",
    "precision",
    "problem",
];

pub fn write_csv(path: &Path, rows: &[Measurement]) -> Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(|e| Error::Data {
        path: path.into(),
        message: e.to_string(),
    })?;
    let err = |e: csv::Error| Error::Data {
        path: path.into(),
        message: e.to_string(),
    };
    w.write_record(CSV_HEADER).map_err(err)?;
    let o = |v: Option<String>| v.unwrap_or_default();
    for m in rows {
        let r = m.resources.as_ref();
        let c = m.clocks.as_ref();
        let ends = |f: fn(&ClockReading) -> Option<String>| {
            [
                o(c.and_then(|c| f(&c.before))),
                o(c.and_then(|c| f(&c.after))),
            ]
        };
        let [sm_before, sm_after] = ends(|r| r.sm_mhz.map(|v| v.to_string()));
        let [mem_before, mem_after] = ends(|r| r.mem_mhz.map(|v| v.to_string()));
        let [temp_before, temp_after] = ends(|r| r.temperature_c.map(|v| v.to_string()));
        let [power_before, power_after] = ends(|r| r.power_w.map(|v| format!("{v:.1}")));
        w.write_record([
            m.experiment.clone(),
            m.kernel.clone(),
            o(m.label.clone()),
            m.toolchain.to_string(),
            m.device.clone(),
            m.m.to_string(),
            m.n.to_string(),
            m.k.to_string(),
            m.config.describe(),
            format!("{:?}", m.cache).to_lowercase(),
            m.status.label().to_string(),
            o(m.status.reason().map(str::to_string)),
            o(m.time.map(|t| format!("{:.0}", t.median_ns))),
            o(m.time.map(|t| format!("{:.0}", t.min_ns))),
            o(m.time.map(|t| format!("{:.0}", t.max_ns))),
            o(m.time.map(|t| format!("{:.2}", t.spread_pct()))),
            o(m.gflops.map(|g| format!("{g:.1}"))),
            o(m.gflops_best.map(|g| format!("{g:.1}"))),
            o(m.vs_vendor.map(|g| format!("{g:.4}"))),
            o(r.and_then(|r| r.registers).map(|v| v.to_string())),
            o(r.and_then(|r| r.spill_stores_bytes).map(|v| v.to_string())),
            o(r.and_then(|r| r.spill_loads_bytes).map(|v| v.to_string())),
            o(m.occupancy.map(|v| format!("{v:.3}"))),
            o(m.check.as_ref().map(|c| format!("{:.3e}", c.rel_frobenius))),
            o(m.check.as_ref().and_then(|c| c.method.clone())),
            o(m.time.map(|t| t.batch.to_string())),
            o(m.time.map(|t| t.reps.to_string())),
            sm_before,
            sm_after,
            mem_before,
            mem_after,
            temp_before,
            temp_after,
            power_before,
            power_after,
            o(c.map(|c| c.throttled().to_string())),
            o(c.map(|c| c.limiting_reasons().join(" "))),
            o(m.compiler.clone()),
            m.precision().to_string(),
            o(m.problem.map(|p| p.describe())),
        ])
        .map_err(err)?;
    }
    w.flush().map_err(|e| Error::io(path, e))
}

/// Reads a result directory: `results.json` if the run finished, otherwise
/// `environment.json` plus whatever `measurements.jsonl` holds.
pub fn load_dir(dir: &Path) -> Result<(Environment, Vec<Measurement>)> {
    let full = dir.join("results.json");
    if full.exists() {
        let text = fs::read_to_string(&full).map_err(|e| Error::io(&full, e))?;
        #[derive(Deserialize)]
        struct Doc {
            environment: Environment,
            measurements: Vec<Measurement>,
        }
        let d: Doc = serde_json::from_str(&text).map_err(|e| Error::Data {
            path: full.clone(),
            message: e.to_string(),
        })?;
        return Ok((d.environment, d.measurements));
    }
    let envp = dir.join("environment.json");
    let text = fs::read_to_string(&envp).map_err(|e| Error::io(&envp, e))?;
    let env: Environment = serde_json::from_str(&text).map_err(|e| Error::Data {
        path: envp.clone(),
        message: e.to_string(),
    })?;
    let linesp = dir.join("measurements.jsonl");
    let f = File::open(&linesp).map_err(|e| Error::io(&linesp, e))?;
    let lines: Vec<String> = BufReader::new(f)
        .lines()
        .collect::<std::io::Result<_>>()
        .map_err(|e| Error::io(&linesp, e))?;
    let (all, cut) = parse_measurement_lines(&lines).map_err(|message| Error::Data {
        path: linesp.clone(),
        message,
    })?;
    if let Some(n) = cut {
        eprintln!(
            "note: {}: line {n} is incomplete (the run was interrupted while writing it); skipped it, kept the {} complete lines",
            linesp.display(),
            all.len()
        );
    }
    Ok((env, all))
}

/// Parses measurements.jsonl lines. Only the LAST non-empty line may be broken: a run
/// writes one line at a time, so an interrupt or a crash can cut only the line being
/// written. That line is skipped and its number returned; a broken line before it is
/// an error (the file was damaged some other way).
pub fn parse_measurement_lines(
    lines: &[String],
) -> std::result::Result<(Vec<Measurement>, Option<usize>), String> {
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let mut all = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(m) => all.push(m),
            Err(_) if Some(i) == last => return Ok((all, Some(i + 1))),
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        }
    }
    Ok((all, None))
}

/// "2026-11-21T15:04:05Z" without a date crate.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc(secs)
}

pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A row on a device for `kernel` at `size`, with `status` and nothing measured.
pub fn row_on(
    experiment: &str,
    info: &DeviceInfo,
    kernel: &str,
    status: Status,
    size: (usize, usize, usize),
) -> Measurement {
    let mut row = failed_row(
        experiment,
        &info.name,
        &info.id,
        info.toolchain,
        kernel,
        status,
        size,
    );
    row.compiler = info.compiler_version.clone();
    row
}

/// A row for a point that could not be set up (invalid configuration, ...).
pub fn failed_row(
    experiment: &str,
    device: &str,
    device_id: &str,
    toolchain: Toolchain,
    kernel: &str,
    status: Status,
    (m, n, k): (usize, usize, usize),
) -> Measurement {
    Measurement {
        experiment: experiment.to_string(),
        kernel: kernel.to_string(),
        variant: None,
        label: None,
        toolchain,
        device: device.to_string(),
        device_id: device_id.to_string(),
        m,
        n,
        k,
        problem: None,
        padded: None,
        config: Config::default(),
        hints: Hints::default(),
        cache: crate::measure::CacheState::Warm,
        status,
        check: None,
        time: None,
        gflops: None,
        gflops_best: None,
        vs_vendor: None,
        vendor_paired: None,
        pre_ns: None,
        post_ns: None,
        resources: None,
        compiler: None,
        compile_ms: None,
        build_notes: Vec::new(),
        occupancy: None,
        ptx_mix: None,
        ptx_file: None,
        clocks: None,
        dims: None,
        gbs: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formatting() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_272_245), "2026-11-21T14:44:05Z");
    }

    const REAL: &str = include_str!("../../tests/fixtures/report/compare/measurements.jsonl");

    fn real_lines(n: usize) -> Vec<String> {
        REAL.lines().take(n).map(str::to_string).collect()
    }

    #[test]
    fn a_cut_last_line_is_skipped_and_reported() {
        let mut lines = real_lines(3);
        let whole = parse_measurement_lines(&lines).unwrap();
        assert_eq!((whole.0.len(), whole.1), (3, None));
        // An interrupt while the third line was written: half of it, then nothing.
        let cut = lines[2].len() / 2;
        lines[2].truncate(cut);
        lines.push(String::new());
        let (kept, skipped) = parse_measurement_lines(&lines).unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(skipped, Some(3));
        assert_eq!(kept[1].kernel, whole.0[1].kernel);
    }

    #[test]
    fn an_interrupted_run_that_replaced_a_finished_one_loads_as_itself() {
        let dir = std::env::temp_dir().join(format!("gemmlab-replace-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let env: Environment = serde_json::from_str(include_str!(
            "../../tests/fixtures/report/compare/environment.json"
        ))
        .unwrap();
        let all: Vec<Measurement> = parse_measurement_lines(&real_lines(3)).unwrap().0;
        let mut earlier = ResultWriter::create(&dir, env.clone()).unwrap();
        for m in &all {
            earlier.push(m.clone()).unwrap();
        }
        earlier.finish().unwrap();
        fs::write(dir.join("search-x-cuda-64x64x64-anneal.json"), "{}").unwrap();
        fs::write(dir.join("mine.txt"), "kept").unwrap();
        // The next run is interrupted after its first measurement: no finish().
        let mut next = ResultWriter::create(&dir, env).unwrap();
        next.push(all[2].clone()).unwrap();
        let (_, loaded) = load_dir(&dir).unwrap();
        assert_eq!(loaded.len(), 1, "the earlier run's results.json is gone");
        assert_eq!(loaded[0].kernel, all[2].kernel);
        assert!(!dir.join("search-x-cuda-64x64x64-anneal.json").exists());
        assert!(dir.join("mine.txt").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn old_lines_load_without_clocks_and_new_ones_keep_them() {
        let mut m: Measurement = serde_json::from_str(&real_lines(1)[0]).unwrap();
        assert_eq!(m.clocks, None);
        let at = |sm, reasons: u64| {
            let r = format!(
                r#"{{"sm_mhz":{sm},"mem_mhz":3201,"temperature_c":61,"power_w":655.26,"throttle_reasons":{},"throttled":{}}}"#,
                if reasons == 0 {
                    "[]"
                } else {
                    r#"["sw_power_cap"]"#
                },
                reasons != 0
            );
            serde_json::from_str::<ClockReading>(&r).unwrap()
        };
        m.clocks = ClockWindow::new(Some(at(1980, 0)), Some(at(1755, 4)));
        let back: Measurement = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back.clocks, m.clocks);

        let dir = std::env::temp_dir().join(format!("gemmlab-csv-clocks-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.csv");
        let mut plain = m.clone();
        plain.clocks = None;
        write_csv(&path, &[m, plain]).unwrap();
        let mut r = csv::Reader::from_path(&path).unwrap();
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        let col = |row: &csv::StringRecord, name: &str| {
            let i = header.iter().position(|h| h == name).unwrap();
            row[i].to_string()
        };
        assert_eq!(col(&rows[0], "sm_mhz_before"), "1980");
        assert_eq!(col(&rows[0], "sm_mhz_after"), "1755");
        assert_eq!(col(&rows[0], "power_w_after"), "655.3");
        assert_eq!(col(&rows[0], "throttled"), "true");
        assert_eq!(col(&rows[0], "throttled_by"), "sw_power_cap");
        // No clock data is empty cells, never 0 or false.
        assert_eq!(col(&rows[1], "sm_mhz_before"), "");
        assert_eq!(col(&rows[1], "throttled"), "");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_broken_line_before_the_last_is_an_error() {
        let mut lines = real_lines(3);
        lines[1].truncate(10);
        let e = parse_measurement_lines(&lines).unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
    }
}

/// Strategies replayed over the measured outcomes of a search that tried every
/// point of its space: written by `gemmlab tune` next to that search's trace
/// (`replay-*.json` beside `search-*.json`), read by the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replays {
    /// The trace replayed, a file name in the same directory.
    pub trace: String,
    /// Seeded runs per strategy (seeds `seed`, `seed + 1`, ...).
    pub runs: usize,
    /// The most configurations a run may try.
    pub budget: usize,
    /// The configurations each run tried at most: the budget, or the space's
    /// size when smaller; the length of the curves.
    pub tries: usize,
    pub seed: u64,
    /// Configurations in flight, as the tuner keeps them.
    pub in_flight: usize,
    /// The target: configurations and seconds until this fraction of the best.
    pub reach: f64,
    /// Why the search could not be replayed; `strategies` is then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub strategies: Vec<StrategyReplay>,
}

/// What one strategy's replays needed and found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategyReplay {
    pub strategy: String,
    /// Median configurations and seconds to reach `reach` of the best; `None`
    /// when most runs did not reach it within the budget.
    pub configs: Option<f64>,
    pub seconds: Option<f64>,
    /// Runs that reached it.
    pub reached: usize,
    /// The fraction of runs that found the space's best within the budget.
    pub found: f64,
    /// Quartiles over the runs of the best so far as a fraction of the
    /// space's best; entry k is after k + 1 configurations.
    pub q1: Vec<f64>,
    pub median: Vec<f64>,
    pub q3: Vec<f64>,
}

/// The replay record's file name for a search trace's (`search-X.json` -> `replay-X.json`).
pub fn replay_file(trace_file: &str) -> String {
    format!(
        "replay-{}",
        trace_file.strip_prefix("search-").unwrap_or(trace_file)
    )
}
