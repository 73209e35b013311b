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

/// Where the columns are, found by name in the header.
struct Columns {
    count: usize,
    id: usize,
    kernel: usize,
    block: Option<usize>,
    grid: Option<usize>,
    cc: Option<usize>,
    name: usize,
    unit: Option<usize>,
    value: usize,
}

impl Columns {
    fn from_header(fields: &[String]) -> Option<Columns> {
        let at = |n: &str| fields.iter().position(|f| f == n);
        Some(Columns {
            count: fields.len(),
            id: at("ID")?,
            kernel: at("Kernel Name")?,
            block: at("Block Size"),
            grid: at("Grid Size"),
            cc: at("CC"),
            name: at("Metric Name")?,
            unit: at("Metric Unit"),
            value: at("Metric Value")?,
        })
    }
}

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
    let mut cols: Option<Columns> = None;
    let mut launches: BTreeMap<u64, NcuLaunch> = BTreeMap::new();
    for raw in text.lines() {
        let line = raw.trim_end_matches('\r');
        if line.starts_with(HEADER_START) {
            cols = fields(line).and_then(|f| Columns::from_header(&f));
            continue;
        }
        let (Some(c), Some(f)) = (cols.as_ref(), fields(line)) else {
            continue;
        };
        if f.len() != c.count {
            continue;
        }
        let Some(id) = number(&f[c.id])
            .filter(|v| *v >= 0.0 && v.fract() == 0.0)
            .map(|v| v as u64)
        else {
            continue;
        };
        let cell = |i: Option<usize>| i.and_then(|i| f.get(i)).cloned().unwrap_or_default();
        let launch = launches.entry(id).or_insert_with(|| NcuLaunch {
            id,
            kernel: f[c.kernel].clone(),
            block: cell(c.block),
            grid: cell(c.grid),
            compute_capability: c.cc.and_then(|i| compute_capability(&f[i])),
            metrics: BTreeMap::new(),
        });
        if let Some(v) = number(&f[c.value]) {
            launch.metrics.insert(f[c.name].clone(), (v, cell(c.unit)));
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
/// large values when it prints units automatically.
fn prefix_scale(unit: &str) -> f64 {
    let mut chars = unit.chars();
    let scale = match chars.next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        _ => return 1.0,
    };
    // "Kinst" is a prefix on "inst"; a unit that is all capitals is not.
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

fn is_ncu_name(name: &str) -> bool {
    name.starts_with("ncu-") && name.ends_with(".csv")
}

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
        if p.is_dir() {
            if depth < MAX_DEPTH {
                collect(&p, depth + 1, out);
            }
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_ncu_name)
        {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// ncu's rows with the profiled program's output and ncu's notes between them.
    const OUTPUT: &str = r#"==PROF== Connected to process 902 (/work/.gpu/gemmlab)
device: NVIDIA H200 via cuda (cuda:0; NVRTC 13.0)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","902","gemmlab","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)","1","13","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","2,861,024"
kernel  cuda GFLOP/s (IQR)  cuda %cuBLAS
"0","902","gemmlab","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)","1","13","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","launch__registers_per_thread","register/thread","n/a"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","3,012.5"
==PROF== Disconnected from process 902
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed.sum","Minst","1.5"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics"
"x","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","a","b","1"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","ratio","0.8"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","ratio","1.2"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","sm__cycles_elapsed.avg.per_second","cycle/nsecond","1.75"
== exit 0
"#;

    #[test]
    fn launches_with_their_metrics_between_the_program_output() {
        let launches = parse(OUTPUT);
        assert_eq!(launches.len(), 2, "{launches:#?}");
        let (cublas, simt) = (&launches[0], &launches[1]);
        assert_eq!(cublas.id, 0);
        assert!(
            cublas.kernel.contains("cutlass_80_simt_sgemm"),
            "commas inside quotes"
        );
        assert_eq!(cublas.block, "(256, 1, 1)");
        assert_eq!(cublas.grid, "(32, 32, 1)");
        assert_eq!(cublas.compute_capability, Some((9, 0)));
        // Thousands separators inside the quotes.
        assert_eq!(cublas.seconds("gpu__time_duration.sum"), Some(2.861024e-3));
        // "n/a" is no value.
        assert_eq!(cublas.metric("launch__registers_per_thread"), None);
        assert_eq!(cublas.metrics.len(), 1);

        assert_eq!(simt.id, 1);
        assert_eq!(simt.kernel, "simt_gemm");
        let t = simt.seconds("gpu__time_duration.sum").unwrap();
        assert!((t - 3.0125e-3).abs() < 1e-12, "{t}");
        assert_eq!(simt.count("smsp__inst_executed.sum"), Some(1.5e6));
        assert_eq!(simt.ghz("sm__cycles_elapsed.avg.per_second"), Some(1.75));
        // The cut-short row and the row with a non-numeric ID added nothing.
        assert!(!simt.metrics.contains_key("a"));
        assert_eq!(simt.metrics.len(), 5);
        let stalls = simt.ranked(
            "smsp__average_warps_issue_stalled_",
            "_per_issue_active.ratio",
        );
        assert_eq!(
            stalls,
            [
                ("long_scoreboard".to_string(), 1.2),
                ("barrier".to_string(), 0.8)
            ]
        );
    }

    #[test]
    fn output_without_a_header_or_rows_has_no_launches() {
        assert!(parse("").is_empty());
        assert!(parse("==PROF== Connected\n\"0\",\"1\"\n").is_empty());
        let header_only = OUTPUT.lines().take(3).collect::<Vec<_>>().join("\n");
        assert!(parse(&header_only).is_empty());
        let err = "==ERROR== ERR_NVGPUCTRPERM - no permission\n==PROF== x\n";
        assert_eq!(errors(err), ["==ERROR== ERR_NVGPUCTRPERM - no permission"]);
    }

    #[test]
    fn units_it_does_not_know_are_no_value() {
        let mut l = parse(OUTPUT).remove(1);
        l.metrics.insert("t".into(), (5.0, "fortnight".into()));
        l.metrics.insert("f".into(), (5.0, "byte/second".into()));
        assert_eq!(l.seconds("t"), None);
        assert_eq!(l.ghz("f"), None);
        assert_eq!(l.fraction("t"), None);
        assert_eq!(l.seconds("missing"), None);
    }

    #[test]
    fn files_found_by_name_and_toolchain_told_by_name() {
        let root = std::env::temp_dir().join(format!("gemmlab-ncu-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let deep = root.join("a/b/c");
        let too_deep = deep.join("d");
        fs::create_dir_all(&too_deep).unwrap();
        for p in [
            root.join("ncu-cuda.csv"),
            deep.join("ncu-opencl-jit.csv"),
            too_deep.join("ncu-cuda.csv"),
            root.join("other.csv"),
            root.join("ncu-cuda.txt"),
        ] {
            fs::write(&p, OUTPUT).unwrap();
        }
        // Named twice, found once; named by the path below the directory given.
        let found = discover(&[root.clone(), root.clone()]);
        assert_eq!(
            found,
            [
                (
                    deep.join("ncu-opencl-jit.csv"),
                    "a/b/c/ncu-opencl-jit.csv".to_string()
                ),
                (root.join("ncu-cuda.csv"), "ncu-cuda.csv".to_string()),
            ]
        );
        let f = load(&found[0].0, &found[0].1);
        assert_eq!(f.toolchain, Toolchain::OpenCl);
        assert_eq!(f.name, "a/b/c/ncu-opencl-jit.csv");
        assert_eq!(f.launches.len(), 2);
        assert_eq!(load(&found[1].0, "x").toolchain, Toolchain::Cuda);
        let missing = load(&root.join("ncu-gone.csv"), "ncu-gone.csv");
        assert!(missing.launches.is_empty());
        assert!(
            missing.errors[0].contains("could not be read"),
            "{missing:?}"
        );
        let _ = fs::remove_dir_all(&root);
    }
}
