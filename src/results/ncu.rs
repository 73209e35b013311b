//! Nsight Compute's CSV (`ncu --csv --metrics a,b,c <program>`): the launches
//! and their metrics. ncu writes its rows into the program's own output, so a
//! line that is not a row of the header's shape is passed over, not refused.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::backend::Toolchain::{self, Cuda, OpenCl};

/// The metrics the SIMT section asks ncu for.
pub const TIME: &str = "gpu__time_duration.sum";
pub const REGISTERS: &str = "launch__registers_per_thread";
pub const OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
pub const ISSUE: &str = "smsp__issue_active.avg.pct_of_peak_sustained_active";
pub const FMA_PIPE: &str = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
pub const FFMA: &str = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
pub const INSTRUCTIONS: &str = "smsp__inst_executed.sum";
pub const CONFLICTS_LD: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
pub const CONFLICTS_ST: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
pub const CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
pub const STALL_PREFIX: &str = "smsp__average_warps_issue_stalled_";
pub const STALL_SUFFIX: &str = "_per_issue_active.ratio";

/// One profiled kernel launch and its metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuLaunch {
    /// ncu's launch ID, in the order the launches ran.
    pub id: u64,
    pub kernel: String,
    /// "(256, 1, 1)" as ncu writes it.
    pub block: String,
    pub grid: String,
    /// The "CC" column ("9.0"), where the CSV has one.
    pub compute_capability: Option<(u32, u32)>,
    /// Metric name -> (value, unit as written); "n/a" is left out.
    pub metrics: BTreeMap<String, (f64, String)>,
}

/// How ncu's header line starts (the columns after these vary by version).
const HEADER_START: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name""#;

/// The fields of one line of quoted CSV; None for anything else (the
/// program's output, ncu's notes, a line cut short or holding a line break).
fn fields(line: &str) -> Option<Vec<String>> {
    if !line.starts_with('"') {
        return None;
    }
    let mut builder = csv::ReaderBuilder::new();
    builder.has_headers(false).flexible(true);
    let mut reader = builder.from_reader(line.as_bytes());
    let record = reader.records().next()?.ok()?;
    match reader.records().next() {
        Some(_) => None,
        None => Some(record.iter().map(str::to_string).collect()),
    }
}

/// "1,234,567" (thousands separators inside the quotes) or "0.5"; None for "n/a".
fn number(s: &str) -> Option<f64> {
    let t: String = s.trim().chars().filter(|c| *c != ',').collect();
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Every launch in ncu's CSV output, in ID order; a repeated header (a second
/// profiled process) starts over its columns.
pub fn parse(text: &str) -> Vec<NcuLaunch> {
    let mut header: Vec<String> = Vec::new();
    let mut launches: BTreeMap<u64, NcuLaunch> = BTreeMap::new();
    for line in text.lines().map(|l| l.trim_end_matches('\r')) {
        if line.starts_with(HEADER_START) {
            header = fields(line).unwrap_or_default();
            continue;
        }
        let Some(f) = fields(line).filter(|f| f.len() == header.len()) else {
            continue;
        };
        let get = |name: &str| header.iter().position(|h| h == name).map(|i| &f[i]);
        let cell = |n: &str| get(n).cloned().unwrap_or_default();
        let id = get("ID").and_then(|v| number(v));
        let (Some(id), Some(kernel), Some(name), Some(value)) = (
            id.filter(|v| *v >= 0.0 && v.fract() == 0.0),
            get("Kernel Name"),
            get("Metric Name"),
            get("Metric Value"),
        ) else {
            continue;
        };
        let cc = get("CC").and_then(|s| s.trim().split_once('.'));
        let launch = launches.entry(id as u64).or_insert_with(|| NcuLaunch {
            id: id as u64,
            kernel: kernel.clone(),
            block: cell("Block Size"),
            grid: cell("Grid Size"),
            compute_capability: cc.and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))),
            metrics: BTreeMap::new(),
        });
        if let Some(v) = number(value) {
            let unit = cell("Metric Unit");
            launch.metrics.insert(name.clone(), (v, unit));
        }
    }
    launches.into_values().collect()
}

/// ncu's own error lines (`==ERROR== ...`): why a profile holds no rows.
pub fn errors(text: &str) -> Vec<String> {
    let lines = text.lines().map(str::trim).map(str::to_string);
    lines.filter(|l| l.starts_with("==ERROR==")).collect()
}

/// The scale of a value in `unit` among `units` (name, scale), None for another.
fn scale(unit: &str, units: &[(&str, &str, f64)]) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    let found = units.iter().find(|(a, b, _)| u == *a || u == *b);
    found.map(|x| x.2)
}

impl NcuLaunch {
    pub fn metric(&self, name: &str) -> Option<(f64, &str)> {
        self.metrics.get(name).map(|(v, u)| (*v, u.as_str()))
    }

    /// A count, the SI prefix ncu adds to large values ("Kinst", "Mbyte") undone;
    /// a unit all in capitals has no prefix.
    pub fn count(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        let mut c = u.chars();
        let prefix = c.next().and_then(|p| "KMGT".find(p));
        let prefix = prefix.filter(|_| c.next().is_some_and(|c| c.is_ascii_lowercase()));
        Some(v * prefix.map_or(1.0, |i| 1e3f64.powi(i as i32 + 1)))
    }

    /// A percentage metric, as a fraction 0..1.
    pub fn fraction(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        (u.is_empty() || u == "%").then_some(v / 100.0)
    }

    /// A duration in seconds; None for a unit it does not know.
    pub fn seconds(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        let units = [("s", "second", 1.0), ("ms", "msecond", 1e-3)];
        let units = [units, [("us", "usecond", 1e-6), ("ns", "nsecond", 1e-9)]];
        Some(v * scale(u, &units.concat())?)
    }

    /// A frequency in GHz ("cycle/nsecond", "cycle/second", "MHz", ...).
    pub fn ghz(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        let slow = [("cycle/second", "hz", 1e-9), ("cycle/msecond", "khz", 1e-6)];
        let fast = [
            ("cycle/usecond", "mhz", 1e-3),
            ("cycle/nsecond", "ghz", 1.0),
        ];
        Some(v * scale(u, &[slow, fast].concat())?)
    }

    /// Metrics `<prefix><key><suffix>` as (key, value), largest first.
    pub fn ranked(&self, prefix: &str, suffix: &str) -> Vec<(String, f64)> {
        let key = |n: &String| Some(n.strip_prefix(prefix)?.strip_suffix(suffix)?.to_string());
        let of = self
            .metrics
            .iter()
            .filter_map(|(n, (v, _))| Some((key(n)?, *v)));
        let mut out: Vec<(String, f64)> = of.collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

/// A file of ncu output found next to the results.
#[derive(Debug, Clone)]
pub struct NcuFile {
    /// Its path below the `--from` directory it was found in.
    pub name: String,
    /// A file named for OpenCL holds OpenCL's PTX run through the CUDA driver's
    /// JIT (ncu cannot profile OpenCL); any other CUDA's own build.
    pub toolchain: Toolchain,
    pub launches: Vec<NcuLaunch>,
    /// ncu's `==ERROR==` lines, or why the file could not be read.
    pub errors: Vec<String>,
}

/// The `ncu-*.csv` files in each directory of `from` and up to three levels
/// below it, each once, in path order, with their paths below that directory.
pub fn discover(from: &[PathBuf]) -> Vec<(PathBuf, String)> {
    fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() && depth < 3 {
                collect(&p, depth + 1, out);
            } else if !p.is_dir() && name.starts_with("ncu-") && name.ends_with(".csv") {
                out.push(p);
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut found = Vec::new();
    for dir in from {
        let mut here = Vec::new();
        collect(dir, 0, &mut here);
        for p in here {
            if seen.insert(fs::canonicalize(&p).unwrap_or_else(|_| p.clone())) {
                let name = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
                found.push((p, name));
            }
        }
    }
    found
}

/// Reads one file; one that cannot be read is kept with the reason.
pub fn load(path: &Path, name: &str) -> NcuFile {
    let file_name = path.file_name().map(|n| n.to_string_lossy().to_lowercase());
    let (launches, errors) = match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            (parse(&text), errors(&text))
        }
        Err(e) => (Vec::new(), vec![format!("could not be read: {e}")]),
    };
    let opencl = file_name.is_some_and(|n| n.contains("opencl"));
    NcuFile {
        name: name.to_string(),
        toolchain: if opencl { OpenCl } else { Cuda },
        launches,
        errors,
    }
}
