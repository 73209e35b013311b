//! Result directories for a report: finding them, loading them, and the
//! lookups the report's sections share.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::backend::{KernelResources, Toolchain};
use crate::error::{Error, Result};
use crate::results::{load_dir, Environment, Measurement};

/// One result directory: what one gemmlab command wrote.
#[derive(Debug, Clone)]
pub struct Run {
    pub dir: PathBuf,
    pub env: Environment,
    pub measurements: Vec<Measurement>,
}

/// A measurement and the run it came from (index into `Data::runs`).
#[derive(Debug, Clone, Copy)]
pub struct Rec<'a> {
    pub run: usize,
    pub m: &'a Measurement,
}

#[derive(Debug, Clone)]
pub struct Data {
    pub runs: Vec<Run>,
}

const MAX_DEPTH: usize = 4;

/// The result directories under each `--from`: the directory itself if it
/// holds `environment.json`, else every directory below it that does.
pub fn discover(from: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if from.is_empty() {
        return Err(Error::invalid(
            "no input: give --from DIR (a directory written by gemmlab, or a parent of several)",
        ));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = BTreeSet::new();
    for dir in from {
        if !dir.exists() {
            return Err(Error::invalid(format!(
                "--from {}: no such directory",
                dir.display()
            )));
        }
        if !dir.is_dir() {
            return Err(Error::invalid(format!(
                "--from {}: not a directory (give the directory that holds environment.json)",
                dir.display()
            )));
        }
        let mut found = Vec::new();
        collect(dir, 0, &mut found);
        if found.is_empty() {
            return Err(Error::invalid(format!(
                "--from {}: holds no gemmlab results (no environment.json in it or in its subdirectories, {MAX_DEPTH} levels down)",
                dir.display()
            )));
        }
        for f in found {
            let key = fs::canonicalize(&f).unwrap_or_else(|_| f.clone());
            if seen.insert(key) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if dir.join("environment.json").is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut subs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    for s in subs {
        collect(&s, depth + 1, out);
    }
}

/// Loads every result directory under `from`. Fails when a directory cannot
/// be read or parsed, or when there is not a single measurement in all of them.
pub fn load(from: &[PathBuf]) -> Result<Data> {
    let dirs = discover(from)?;
    let mut runs = Vec::new();
    for dir in dirs {
        let (env, measurements) = load_dir(&dir)?;
        if measurements.is_empty() {
            eprintln!(
                "note: {}: no measurements (the run stopped before its first one?)",
                dir.display()
            );
        }
        runs.push(Run {
            dir,
            env,
            measurements,
        });
    }
    if runs.iter().all(|r| r.measurements.is_empty()) {
        let names: Vec<String> = runs.iter().map(|r| r.dir.display().to_string()).collect();
        return Err(Error::invalid(format!(
            "no measurements in {}: nothing to report",
            names.join(", ")
        )));
    }
    Ok(Data { runs })
}

impl Data {
    /// Every measurement of an experiment, in run order, without repeats:
    /// a cell measured again (same kernel, variant, label, toolchain, size,
    /// configuration and hints) in a later run is left out.
    pub fn experiment(&self, name: &str) -> Vec<Rec<'_>> {
        let mut out: Vec<Rec> = Vec::new();
        for (ri, run) in self.runs.iter().enumerate() {
            for m in run.measurements.iter().filter(|m| m.experiment == name) {
                if !out.iter().any(|o| same_cell(o.m, m)) {
                    out.push(Rec { run: ri, m });
                }
            }
        }
        out
    }

    /// Measurements of an experiment left out as repeats.
    pub fn repeats(&self, name: &str) -> usize {
        let all = self
            .runs
            .iter()
            .flat_map(|r| r.measurements.iter())
            .filter(|m| m.experiment == name)
            .count();
        all - self.experiment(name).len()
    }

    pub fn experiments(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for r in &self.runs {
            for m in &r.measurements {
                if !names.contains(&m.experiment) {
                    names.push(m.experiment.clone());
                }
            }
        }
        names
    }

    pub fn toolchains(&self) -> Vec<Toolchain> {
        Toolchain::ALL
            .into_iter()
            .filter(|t| {
                self.runs
                    .iter()
                    .any(|r| r.measurements.iter().any(|m| m.toolchain == *t))
            })
            .collect()
    }

    pub fn all(&self) -> impl Iterator<Item = Rec<'_>> {
        self.runs
            .iter()
            .enumerate()
            .flat_map(|(ri, r)| r.measurements.iter().map(move |m| Rec { run: ri, m }))
    }
}

fn same_cell(a: &Measurement, b: &Measurement) -> bool {
    a.kernel == b.kernel
        && a.variant == b.variant
        && a.label == b.label
        && a.toolchain == b.toolchain
        && (a.m, a.n, a.k) == (b.m, b.n, b.k)
        && a.config == b.config
        && a.hints == b.hints
}

pub const VENDOR: &str = "cublas";

pub fn is_vendor(m: &Measurement) -> bool {
    m.kernel == VENDOR
}

/// gemm1, gemm2, ..., gemm10, gemm11, other names alphabetically, cuBLAS last.
pub fn kernel_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(k: &str) -> (u8, String, u64, String) {
        if k == VENDOR {
            return (2, String::new(), 0, k.to_string());
        }
        let digits = k.len() - k.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, num) = k.split_at(k.len() - digits);
        match num.parse::<u64>() {
            Ok(n) => (0, prefix.to_string(), n, k.to_string()),
            Err(_) => (1, k.to_string(), 0, k.to_string()),
        }
    }
    key(a).cmp(&key(b))
}

/// Distinct kernels in the order above.
pub fn kernels(recs: &[Rec]) -> Vec<String> {
    let mut k: Vec<String> = Vec::new();
    for r in recs {
        if !k.contains(&r.m.kernel) {
            k.push(r.m.kernel.clone());
        }
    }
    k.sort_by(|a, b| kernel_order(a, b));
    k
}

/// Distinct problem sizes, largest (by M*N*K) first.
pub fn sizes(recs: &[Rec]) -> Vec<(usize, usize, usize)> {
    let mut s: Vec<(usize, usize, usize)> = Vec::new();
    for r in recs {
        let t = (r.m.m, r.m.n, r.m.k);
        if !s.contains(&t) {
            s.push(t);
        }
    }
    s.sort_by_key(|&(m, n, k)| std::cmp::Reverse((m as u128) * (n as u128) * (k as u128)));
    s
}

pub fn size_label((m, n, k): (usize, usize, usize)) -> String {
    if m == n && n == k {
        m.to_string()
    } else {
        format!("{m}x{n}x{k}")
    }
}

pub fn of_size(m: &Measurement, s: (usize, usize, usize)) -> bool {
    (m.m, m.n, m.k) == s
}

/// The median GFLOP/s of a measurement that passed its check.
pub fn gflops(m: &Measurement) -> Option<f64> {
    if m.status.is_ok() {
        m.gflops.filter(|g| g.is_finite())
    } else {
        None
    }
}

pub fn vs_vendor(m: &Measurement) -> Option<f64> {
    if m.status.is_ok() {
        m.vs_vendor.filter(|g| g.is_finite())
    } else {
        None
    }
}

pub fn resources(m: &Measurement) -> Option<&KernelResources> {
    m.resources.as_ref()
}

pub fn registers(m: &Measurement) -> Option<u32> {
    m.resources.as_ref().and_then(|r| r.registers)
}

/// Spill stores + loads in bytes, if both are known.
pub fn spill_bytes(m: &Measurement) -> Option<u64> {
    let r = m.resources.as_ref()?;
    Some(r.spill_stores_bytes? + r.spill_loads_bytes?)
}

pub fn toolchain_name(t: Toolchain) -> &'static str {
    match t {
        Toolchain::Cuda => "CUDA",
        Toolchain::OpenCl => "OpenCL",
    }
}

/// "CUDA", "OpenCL", or "OpenCL PTX via CUDA JIT" for the JIT variant.
pub fn series_name(m: &Measurement) -> String {
    match m.variant.as_deref() {
        None => toolchain_name(m.toolchain).to_string(),
        Some("opencl-ptx") => "OpenCL PTX via CUDA JIT".to_string(),
        Some(v) => format!("{} ({v})", toolchain_name(m.toolchain)),
    }
}

/// A config value (RX, RY, ...) if the configuration sets it.
pub fn config_value(m: &Measurement, name: &str) -> Option<i64> {
    m.config.0.get(name).copied()
}

/// Reads `cap=64` / `cap=none` labels when `hints.max_registers` is absent.
pub fn register_cap(m: &Measurement) -> Option<u32> {
    if let Some(c) = m.hints.max_registers {
        return Some(c);
    }
    let l = m.label.as_deref()?;
    let v = l.trim().strip_prefix("cap=")?;
    v.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_ordering() {
        let mut v = vec!["gemm10", "cublas", "gemm2", "gemm1", "xgemm", "gemm11"];
        v.sort_by(|a, b| kernel_order(a, b));
        assert_eq!(v, ["gemm1", "gemm2", "gemm10", "gemm11", "xgemm", "cublas"]);
    }

    #[test]
    fn missing_directory_is_an_error() {
        let e = load(&[PathBuf::from("/nonexistent/gemmlab-results")]).unwrap_err();
        assert!(e.to_string().contains("no such directory"), "{e}");
        let e = load(&[]).unwrap_err();
        assert!(e.to_string().contains("--from"), "{e}");
    }
}
