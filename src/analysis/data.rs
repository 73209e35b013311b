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
    /// `gemmlab accuracy`'s rows (`accuracy.json`), from every directory that holds one.
    pub accuracy: Vec<crate::accuracy::Row>,
}

/// The file `gemmlab accuracy` writes.
pub const ACCURACY_FILE: &str = "accuracy.json";

/// The rows of every `accuracy.json` in or below `from` (as deep as result directories).
fn accuracy_rows(from: &[PathBuf]) -> Result<Vec<crate::accuracy::Row>> {
    #[derive(serde::Deserialize)]
    struct File {
        rows: Vec<crate::accuracy::Row>,
    }
    let mut files = Vec::new();
    for dir in from {
        let mut dirs = Vec::new();
        collect_holding(dir, ACCURACY_FILE, 0, &mut dirs);
        files.extend(dirs.into_iter().map(|d| d.join(ACCURACY_FILE)));
    }
    files.dedup();
    let mut rows = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).map_err(|e| Error::io(&f, e))?;
        let file: File = serde_json::from_str(&text).map_err(|e| Error::Data {
            path: f.clone(),
            message: format!("not an accuracy file: {e}"),
        })?;
        rows.extend(file.rows);
    }
    Ok(rows)
}

const MAX_DEPTH: usize = 4;

/// The result directories under each `--from`: the directory itself if it
/// holds `environment.json`, else every directory below it that does.
pub fn discover(from: &[PathBuf]) -> Result<Vec<PathBuf>> {
    discover_for("--from", from)
}

/// [`discover`], naming the option the directories were given with in errors.
pub fn discover_for(flag: &str, from: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if from.is_empty() {
        return Err(Error::invalid(format!(
            "no input: give {flag} DIR (a directory written by gemmlab, or a parent of several)"
        )));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = BTreeSet::new();
    for dir in from {
        if !dir.exists() {
            return Err(Error::invalid(format!(
                "{flag} {}: no such directory",
                dir.display()
            )));
        }
        if !dir.is_dir() {
            return Err(Error::invalid(format!(
                "{flag} {}: not a directory (give the directory that holds environment.json)",
                dir.display()
            )));
        }
        let mut found = Vec::new();
        collect(dir, 0, &mut found);
        if found.is_empty() {
            return Err(Error::invalid(format!(
                "{flag} {}: holds no gemmlab results (no environment.json in it or in its subdirectories, {MAX_DEPTH} levels down)",
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
    collect_holding(dir, "environment.json", depth, out);
}

/// `dir` if it holds `file`, else every directory below it that does (to `MAX_DEPTH`).
fn collect_holding(dir: &Path, file: &str, depth: usize, out: &mut Vec<PathBuf>) {
    if dir.join(file).is_file() {
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
        collect_holding(&s, file, depth + 1, out);
    }
}

/// Loads every result directory under `from`. Fails when a directory cannot
/// be read or parsed, or when there is not a single measurement in all of them.
pub fn load(from: &[PathBuf]) -> Result<Data> {
    if from.is_empty() {
        discover(from)?;
    }
    let accuracy = accuracy_rows(from)?;
    // A directory of accuracy rows alone is a report's input too.
    let result_dirs: Vec<PathBuf> = from
        .iter()
        .filter(|d| {
            let (mut results, mut rows) = (Vec::new(), Vec::new());
            collect(d, 0, &mut results);
            collect_holding(d, ACCURACY_FILE, 0, &mut rows);
            // Kept where it has results, or nothing at all (so discover says so).
            !results.is_empty() || rows.is_empty()
        })
        .cloned()
        .collect();
    let dirs = if result_dirs.is_empty() {
        Vec::new()
    } else {
        discover(&result_dirs)?
    };
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
    if runs.iter().all(|r| r.measurements.is_empty()) && accuracy.is_empty() {
        let names: Vec<String> = runs.iter().map(|r| r.dir.display().to_string()).collect();
        return Err(Error::invalid(format!(
            "no measurements in {}: nothing to report",
            names.join(", ")
        )));
    }
    Ok(Data { runs, accuracy })
}

impl Data {
    /// Every measurement of an experiment made on a device, in run order,
    /// without repeats: a cell measured again (same kernel, variant, label,
    /// toolchain, size, configuration and hints) in a later run is left out.
    /// Rows compiled offline ([`is_offline`]) are never here: they have no
    /// size and no speed, and only the offline sections read them ([`Data::offline`]).
    /// Neither are calls other than the tutorial's C = A * B in f32 (f64, transposes,
    /// alpha/beta, ...): the BLAS section reads those ([`Data::blas_calls`]).
    pub fn experiment(&self, name: &str) -> Vec<Rec<'_>> {
        self.experiment_where(name, |m| m.is_plain_problem() && m.dims.is_none())
    }

    /// Every row of a user's kernel (a spec file's), any experiment, without repeats.
    pub fn user_rows(&self) -> Vec<Rec<'_>> {
        let mut out = Vec::new();
        for name in self.experiments() {
            out.extend(self.experiment_where(&name, |m| m.dims.is_some()));
        }
        out
    }

    /// Every measurement of any experiment but the routine's on a call other than
    /// the tutorial's (f64, transposes, alpha/beta, leading dimensions, offsets),
    /// without repeats.
    pub fn blas_calls(&self) -> Vec<Rec<'_>> {
        let mut out = Vec::new();
        for name in self.experiments() {
            if name != crate::routine::ROUTINE {
                out.extend(self.experiment_where(&name, |m| !m.is_plain_problem()));
            }
        }
        out
    }

    /// The GEMM routine's rows (`gemmlab gemm --out`), every call, without repeats.
    pub fn routine_calls(&self) -> Vec<Rec<'_>> {
        self.experiment_where(crate::routine::ROUTINE, |_| true)
    }

    fn experiment_where(&self, name: &str, keep: impl Fn(&Measurement) -> bool) -> Vec<Rec<'_>> {
        let mut out: Vec<Rec> = Vec::new();
        for (ri, run) in self.runs.iter().enumerate() {
            for m in run
                .measurements
                .iter()
                .filter(|m| m.experiment == name && !is_offline(m) && keep(m))
            {
                if !out.iter().any(|o| same_cell(o.m, m)) {
                    out.push(Rec { run: ri, m });
                }
            }
        }
        out
    }

    /// Measurements of an experiment left out as repeats.
    pub fn repeats(&self, name: &str) -> usize {
        let all = self.measured().filter(|r| r.m.experiment == name).count();
        all - self.experiment(name).len()
    }

    /// Every row made on a device (run, or refused with a reason): all but the
    /// offline ones.
    pub fn measured(&self) -> impl Iterator<Item = Rec<'_>> {
        self.all().filter(|r| !is_offline(r.m))
    }

    /// Every row compiled offline (no device: registers, spills and occupancy,
    /// nothing run), in run order, without repeats: the same experiment,
    /// kernel, point, architecture and compiler again in a later run is left out.
    pub fn offline(&self) -> Vec<Rec<'_>> {
        let mut out: Vec<Rec> = Vec::new();
        // Attribution rows are offline too, but a section of their own.
        let offline = |r: &Rec| is_offline(r.m) && r.m.experiment != crate::attribution::EXPERIMENT;
        for r in self.all().filter(offline) {
            let same = |o: &Rec| {
                o.m.experiment == r.m.experiment
                    && same_cell(o.m, r.m)
                    && o.m.device_id == r.m.device_id
                    && arch_of(o.m) == arch_of(r.m)
                    && o.m.compiler == r.m.compiler
            };
            if !out.iter().any(same) {
                out.push(r);
            }
        }
        out
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

    /// The toolchains of the rows made on a device (offline rows name the
    /// toolchain of their source, not a device that ran it).
    pub fn toolchains(&self) -> Vec<Toolchain> {
        Toolchain::ALL
            .into_iter()
            .filter(|t| self.measured().any(|r| r.m.toolchain == *t))
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
        && a.problem == b.problem
        && a.dims == b.dims
}

pub const VENDOR: &str = "cublas";

/// Whether a row was compiled offline (`--arch`, the atlas): no device ran it,
/// so it has registers, spills and occupancy but no size and no speed. Told by
/// its device (`offline:sm_35`, what `backend::nvrtc::offline_device` writes),
/// its note ("no device: compiled offline for sm_35 ...") or its size of 0;
/// any one is enough, so rows from older or other writers are caught too.
pub fn is_offline(m: &Measurement) -> bool {
    m.device_id.starts_with("offline:")
        || (m.dims.is_none() && (m.m == 0 || m.n == 0 || m.k == 0))
        || m.status.reason().is_some_and(offline_note)
        || m.build_notes.iter().any(|n| offline_note(n))
}

/// "no device: compiled offline for sm_35 with NVRTC 11.8; not run, checked or
/// timed", "no device: NVIDIA OpenCL's PTX assembled offline for sm_35 by ...".
fn offline_note(s: &str) -> bool {
    s.contains("no device:") && s.contains("offline")
}

/// The architecture an offline row was compiled for ("sm_35", "sm_90a"): from
/// its device id (`offline:sm_35`), else its device name ("sm_35 (no device)"),
/// else the first `sm_NN` its reason or notes name. `None` when none says.
pub fn arch_of(m: &Measurement) -> Option<String> {
    let from_id = m
        .device_id
        .strip_prefix("offline:")
        .and_then(|a| arch_token(a.trim()));
    if from_id.is_some() {
        return from_id;
    }
    let texts = std::iter::once(m.device.as_str())
        .chain(m.status.reason())
        .chain(m.build_notes.iter().map(String::as_str));
    for t in texts {
        for word in t.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '(') {
            if let Some(a) = arch_token(word) {
                return Some(a);
            }
        }
    }
    None
}

/// "sm_35" from "sm_35", "SM_90a", "sm_120:"; None for anything else.
fn arch_token(w: &str) -> Option<String> {
    let w = w
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase();
    let rest = w.strip_prefix("sm_")?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let suffix = &rest[digits..];
    (digits >= 2 && (suffix.is_empty() || suffix == "a" || suffix == "f")).then_some(w)
}

/// Orders architectures by compute capability: sm_35 < sm_37 < sm_90 < sm_90a < sm_100.
pub fn arch_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> (u32, String) {
        let rest = s.strip_prefix("sm_").unwrap_or(s);
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        (
            rest[..digits].parse().unwrap_or(u32::MAX),
            rest[digits..].to_string(),
        )
    }
    key(a).cmp(&key(b))
}

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
    t.label()
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

/// The native row of a kernel on a toolchain at a size.
pub fn find<'a>(
    recs: &[Rec<'a>],
    kernel: &str,
    t: Toolchain,
    size: (usize, usize, usize),
) -> Option<&'a Measurement> {
    recs.iter()
        .map(|r| r.m)
        .find(|m| m.kernel == kernel && m.toolchain == t && m.variant.is_none() && of_size(m, size))
}

pub fn vendor_at<'a>(recs: &[Rec<'a>], size: (usize, usize, usize)) -> Option<&'a Measurement> {
    recs.iter()
        .map(|r| r.m)
        .find(|m| is_vendor(m) && of_size(m, size) && m.status.is_ok())
}

/// A GEMM row's register tile (RX, RY), from its configuration or its label.
pub fn tile_of(m: &Measurement) -> Option<(i64, i64)> {
    if let (Some(x), Some(y)) = (config_value(m, "RX"), config_value(m, "RY")) {
        return Some((x, y));
    }
    let l = m.label.as_deref()?;
    let mut rx = None;
    let mut ry = None;
    for part in l.split([' ', ',']) {
        if let Some((k, v)) = part.split_once('=') {
            match k.trim() {
                "RX" => rx = v.trim().parse().ok(),
                "RY" => ry = v.trim().parse().ok(),
                _ => {}
            }
        }
    }
    Some((rx?, ry?))
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

    fn offline_row(device: &str, id: &str, note: &str, size: usize) -> Measurement {
        crate::experiment::failed_row(
            "atlas",
            device,
            id,
            Toolchain::Cuda,
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

    #[test]
    fn missing_directory_is_an_error() {
        let e = load(&[PathBuf::from("/nonexistent/gemmlab-results")]).unwrap_err();
        assert!(e.to_string().contains("no such directory"), "{e}");
        let e = load(&[]).unwrap_err();
        assert!(e.to_string().contains("--from"), "{e}");
    }
}
