//! Prints criterion's results as a Markdown table:
//!
//! ```sh
//! cargo bench --bench toolchains
//! cargo run --release --example criterion_table -- target/criterion > table.md
//! ```
//!
//! Reads `<dir>/<group>/<toolchain>/<size>/new/{benchmark.json,estimates.json}`
//! (any depth) and prints one row per benchmark: group, clock, toolchain, size,
//! median with its confidence interval, and GFLOP/s at the median for the
//! device-time groups (from the throughput in benchmark.json, else from the
//! size in the id). The groups `end_to_end_*` and `launch_overhead` of the
//! toolchains bench are timed on the host's wall clock; the others by device
//! events.

use std::cmp::Ordering;
use std::fs;
use std::path::{Path, PathBuf};
use std::process;

use serde_json::Value;

/// Groups of the toolchains bench that use criterion's WallTime.
const WALL_GROUPS: [&str; 2] = ["end_to_end", "launch_overhead"];

struct Row {
    group: String,
    toolchain: String,
    size: Option<String>,
    median_ns: f64,
    lower_ns: f64,
    upper_ns: f64,
    confidence: f64,
    flops: Option<f64>,
    wall: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") || args.len() > 1 {
        eprintln!("usage: criterion_table [CRITERION_DIR]   (default target/criterion)");
        process::exit(if args.len() > 1 { 2 } else { 0 });
    }
    let dir = PathBuf::from(args.first().map_or("target/criterion", String::as_str));
    if !dir.is_dir() {
        eprintln!(
            "criterion_table: {} is not a directory (run `cargo bench --bench toolchains` first)",
            dir.display()
        );
        process::exit(2);
    }
    let mut files = Vec::new();
    find_benchmarks(&dir, &mut files);
    let mut rows: Vec<Row> = files
        .iter()
        .filter_map(|f| match read_row(f) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("criterion_table: skipping {}: {e}", f.display());
                None
            }
        })
        .collect();
    if rows.is_empty() {
        eprintln!(
            "criterion_table: no criterion results under {} (run `cargo bench --bench toolchains` first)",
            dir.display()
        );
        process::exit(1);
    }
    rows.sort_by(order);
    print!("{}", table(&rows));
}

/// Every `new/benchmark.json` below `dir`.
fn find_benchmarks(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "new") {
                let b = path.join("benchmark.json");
                if b.is_file() {
                    out.push(b);
                }
            } else {
                find_benchmarks(&path, out);
            }
        }
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_row(benchmark: &Path) -> Result<Row, String> {
    let id = read_json(benchmark)?;
    let estimates_path = benchmark.with_file_name("estimates.json");
    let est = read_json(&estimates_path)?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let group = text(&id, "group_id").ok_or("no group_id in benchmark.json")?;
    let function = text(&id, "function_id");
    let value = text(&id, "value_str");
    let median = est
        .get("median")
        .ok_or_else(|| format!("no median in {}", estimates_path.display()))?;
    let num = |v: &Value, path: &[&str]| {
        path.iter()
            .try_fold(v, |v, k| v.get(k))
            .and_then(Value::as_f64)
            .ok_or_else(|| {
                format!(
                    "no median {} in {}",
                    path.join("."),
                    estimates_path.display()
                )
            })
    };
    let wall = WALL_GROUPS.iter().any(|w| group.starts_with(w));
    // Throughput::Elements(n) is serialized as {"Elements": n}: n flops per iteration.
    let from_throughput = id
        .get("throughput")
        .and_then(|t| t.get("Elements"))
        .and_then(Value::as_f64);
    let flops = if wall {
        None
    } else {
        from_throughput.or_else(|| value.as_deref().and_then(flops_of_size))
    };
    let (toolchain, size) = match (function, value) {
        (Some(f), v) => (f, v),
        (None, v) => (v.unwrap_or_default(), None),
    };
    Ok(Row {
        group,
        toolchain,
        size,
        median_ns: num(median, &["point_estimate"])?,
        lower_ns: num(median, &["confidence_interval", "lower_bound"])?,
        upper_ns: num(median, &["confidence_interval", "upper_bound"])?,
        confidence: num(median, &["confidence_interval", "confidence_level"]).unwrap_or(0.95),
        flops,
        wall,
    })
}

/// "4096" or "1000x300x77" as 2*M*N*K.
fn flops_of_size(s: &str) -> Option<f64> {
    let dims: Vec<f64> = s
        .split(['x', 'X'])
        .map(|p| p.trim().parse::<u64>().ok().map(|v| v as f64))
        .collect::<Option<_>>()?;
    match dims.as_slice() {
        [n] => Some(2.0 * n * n * n),
        [m, n, k] => Some(2.0 * m * n * k),
        _ => None,
    }
}

/// Device groups first (gemm2 before gemm10), then the wall-clock groups;
/// within a group by toolchain, then by problem size.
fn order(a: &Row, b: &Row) -> Ordering {
    let key = |r: &Row| {
        let digits = r.group.trim_start_matches(|c: char| !c.is_ascii_digit());
        let number = digits
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u64>()
            .unwrap_or(0);
        let prefix = r.group[..r.group.len() - digits.len()].to_string();
        (r.wall, prefix, number, r.group.clone(), r.toolchain.clone())
    };
    key(a).cmp(&key(b)).then_with(|| {
        let f = |r: &Row| r.size.as_deref().and_then(flops_of_size).unwrap_or(0.0);
        f(a).total_cmp(&f(b)).then_with(|| a.size.cmp(&b.size))
    })
}

/// ns/µs/ms/s with three significant digits, the unit chosen by `typical`.
fn time_unit(typical_ns: f64) -> (f64, &'static str) {
    if typical_ns < 1e3 {
        (1.0, "ns")
    } else if typical_ns < 1e6 {
        (1e3, "µs")
    } else if typical_ns < 1e9 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    }
}

fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn table(rows: &[Row]) -> String {
    let confidence = rows.first().map_or(0.95, |r| r.confidence);
    let mut out = String::new();
    out.push_str(&format!(
        "| group | clock | toolchain | size | median [{:.0}% CI] | GFLOP/s |\n",
        confidence * 100.0
    ));
    out.push_str("|---|---|---|---|---:|---:|\n");
    for r in rows {
        let (div, unit) = time_unit(r.median_ns);
        let median = format!(
            "{} {unit} [{}, {}]",
            sig3(r.median_ns / div),
            sig3(r.lower_ns / div),
            sig3(r.upper_ns / div)
        );
        let gflops = match r.flops {
            Some(f) if r.median_ns > 0.0 => sig3(f / r.median_ns),
            _ => "-".to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {median} | {gflops} |\n",
            r.group,
            if r.wall { "wall" } else { "device" },
            r.toolchain,
            r.size.as_deref().unwrap_or("-"),
        ));
    }
    out.push_str(
        "\nclock: device = kernel time from device events (OpenCL profiling events, CUDA events); \
         wall = host wall clock. GFLOP/s = 2MNK / median kernel time.\n",
    );
    out
}
