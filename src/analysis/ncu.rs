//! Nsight Compute's CSV (`ncu --csv --metrics a,b,c <program>`): the launches it
//! profiled and their metrics. ncu writes its rows to the same stream as the
//! profiled program's own output and its `==PROF==` notes, so every line that
//! is not a row of the header's shape is passed over rather than refused.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::backend::Toolchain;

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
    /// Metric name -> (value, unit as written). A value of "n/a" is left out.
    pub metrics: BTreeMap<String, (f64, String)>,
}

/// How ncu's header line starts (the columns after these vary by version).
const HEADER_START: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name""#;

/// The fields of one CSV line, or None when it is not one well-formed line of
/// quoted CSV (the program's output, ncu's notes, a line cut short).
fn fields(line: &str) -> Option<Vec<String>> {
    // ncu quotes every field; a line that does not start with a quote is not a row.
    if !line.starts_with('"') {
        return None;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    let record = reader.records().next()?.ok()?;
    // A second record means the line held a line break inside quotes: not ncu's.
    if reader.records().next().is_some() {
        return None;
    }
    Some(record.iter().map(str::to_string).collect())
}

/// A metric value: "1,234,567" (thousands separators inside the quotes), "0.5",
/// or None for "n/a", an empty field or anything else that is not a number.
fn number(s: &str) -> Option<f64> {
    let t: String = s.trim().chars().filter(|c| *c != ',').collect();
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn compute_capability(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Every launch in ncu's CSV output, in ID order. Lines before the header, and
/// lines that are not rows with the header's field count, are skipped; a
/// repeated header (a second profiled process) starts over its columns.
pub fn parse(text: &str) -> Vec<NcuLaunch> {
    let mut header: Vec<String> = Vec::new();
    let mut launches: BTreeMap<u64, NcuLaunch> = BTreeMap::new();
    for raw in text.lines() {
        let line = raw.trim_end_matches('\r');
        if line.starts_with(HEADER_START) {
            header = fields(line).unwrap_or_default();
            continue;
        }
        let Some(f) = fields(line).filter(|f| f.len() == header.len()) else {
            continue;
        };
        // A cell by its column's name in the header.
        let get = |name: &str| header.iter().position(|h| h == name).map(|i| &f[i]);
        let (Some(id), Some(kernel), Some(name), Some(value)) = (
            get("ID").and_then(|v| number(v)),
            get("Kernel Name"),
            get("Metric Name"),
            get("Metric Value"),
        ) else {
            continue;
        };
        if id < 0.0 || id.fract() != 0.0 {
            continue;
        }
        let cell = |n: &str| get(n).cloned().unwrap_or_default();
        let launch = launches.entry(id as u64).or_insert_with(|| NcuLaunch {
            id: id as u64,
            kernel: kernel.clone(),
            block: cell("Block Size"),
            grid: cell("Grid Size"),
            compute_capability: get("CC").and_then(|c| compute_capability(c)),
            metrics: BTreeMap::new(),
        });
        if let Some(v) = number(value) {
            launch
                .metrics
                .insert(name.clone(), (v, cell("Metric Unit")));
        }
    }
    launches.into_values().collect()
}

/// ncu's own error lines (`==ERROR== ...`): why a profile holds no rows.
pub fn errors(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("==ERROR=="))
        .map(str::to_string)
        .collect()
}

/// The multiplier of an SI prefix on a unit ("Kinst", "Mbyte"): ncu scales
/// large values when it prints units automatically; a unit that is all
/// capitals has no prefix.
fn prefix_scale(unit: &str) -> f64 {
    let mut chars = unit.chars();
    let scale = match chars.next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        _ => return 1.0,
    };
    if chars.next().is_some_and(|c| c.is_ascii_lowercase()) {
        scale
    } else {
        1.0
    }
}

impl NcuLaunch {
    pub fn metric(&self, name: &str) -> Option<(f64, &str)> {
        self.metrics.get(name).map(|(v, u)| (*v, u.as_str()))
    }

    /// A count (instructions, conflicts, registers), SI prefixes undone.
    pub fn count(&self, name: &str) -> Option<f64> {
        self.metric(name).map(|(v, u)| v * prefix_scale(u))
    }

    /// A percentage metric, as a fraction 0..1.
    pub fn fraction(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        (u.is_empty() || u == "%").then_some(v / 100.0)
    }

    /// A duration metric in seconds; None for a unit it does not know.
    pub fn seconds(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        let scale = match u {
            "s" | "second" => 1.0,
            "ms" | "msecond" => 1e-3,
            "us" | "usecond" => 1e-6,
            "ns" | "nsecond" => 1e-9,
            _ => return None,
        };
        Some(v * scale)
    }

    /// A frequency metric in GHz ("cycle/nsecond", "cycle/second", "MHz", ...).
    pub fn ghz(&self, name: &str) -> Option<f64> {
        let (v, u) = self.metric(name)?;
        let scale = match u.to_ascii_lowercase().as_str() {
            "cycle/second" | "hz" => 1e-9,
            "cycle/msecond" | "khz" => 1e-6,
            "cycle/usecond" | "mhz" => 1e-3,
            "cycle/nsecond" | "ghz" => 1.0,
            _ => return None,
        };
        Some(v * scale)
    }

    /// Metrics `<prefix><key><suffix>` as (key, value), largest first.
    pub fn ranked(&self, prefix: &str, suffix: &str) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .metrics
            .iter()
            .filter_map(|(n, (v, _))| {
                let key = n.strip_prefix(prefix)?.strip_suffix(suffix)?;
                Some((key.to_string(), *v))
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

/// A file of ncu output found next to the results.
#[derive(Debug, Clone)]
pub struct NcuFile {
    /// Its path below the `--from` directory it was found in, as the report names it.
    pub name: String,
    /// Whose kernel the file profiles (see [`toolchain_of`]).
    pub toolchain: Toolchain,
    pub launches: Vec<NcuLaunch>,
    /// ncu's `==ERROR==` lines, or why the file could not be read.
    pub errors: Vec<String>,
}

/// Files this deep below a `--from` directory are found.
const MAX_DEPTH: usize = 3;

/// A file named for OpenCL holds OpenCL's PTX run through the CUDA driver's
/// JIT (ncu cannot profile OpenCL); any other holds CUDA's own build.
pub fn toolchain_of(name: &str) -> Toolchain {
    if name.to_ascii_lowercase().contains("opencl") {
        Toolchain::OpenCl
    } else {
        Toolchain::Cuda
    }
}

/// The `ncu-*.csv` files in each directory of `from` and up to three levels
/// below it, each once, in path order, with their paths below that directory.
pub fn discover(from: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
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

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() && depth < MAX_DEPTH {
            collect(&p, depth + 1, out);
        } else if !p.is_dir() && name.starts_with("ncu-") && name.ends_with(".csv") {
            out.push(p);
        }
    }
}

/// Reads one file; a file that cannot be read is kept with the reason, so the
/// report says so instead of leaving it out.
pub fn load(path: &Path, name: &str) -> NcuFile {
    let file_name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let (launches, errors) = match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            (parse(&text), errors(&text))
        }
        Err(e) => (Vec::new(), vec![format!("could not be read: {e}")]),
    };
    NcuFile {
        name: name.to_string(),
        toolchain: toolchain_of(&file_name),
        launches,
        errors,
    }
}
