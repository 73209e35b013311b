//! Result directories for a report: finding them, loading them, and the
//! lookups the report's sections share.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::stats::distinct;
use crate::backend::Toolchain;
use crate::error::{Error, Result};
use crate::results::{load_dir, Environment, Measurement, NVRTC_PTX, OPENCL_PTX};

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
const ACCURACY_FILE: &str = "accuracy.json";
/// The file that makes a directory a result directory.
const ENVIRONMENT_FILE: &str = "environment.json";
const MAX_DEPTH: usize = 4;

/// The rows of every `accuracy.json` in or below `from` (as deep as result directories).
fn accuracy_rows(from: &[PathBuf]) -> Result<Vec<crate::accuracy::Row>> {
    #[derive(serde::Deserialize)]
    struct File {
        rows: Vec<crate::accuracy::Row>,
    }
    let mut files: Vec<PathBuf> = (from.iter())
        .flat_map(|d| holding(d, ACCURACY_FILE, 0))
        .map(|d| d.join(ACCURACY_FILE))
        .collect();
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
        let fail = |why: String| Err(Error::invalid(format!("{flag} {}: {why}", dir.display())));
        if !dir.exists() {
            return fail("no such directory".into());
        }
        if !dir.is_dir() {
            return fail("not a directory (give the directory that holds environment.json)".into());
        }
        let found = holding(dir, ENVIRONMENT_FILE, 0);
        if found.is_empty() {
            return fail(format!("holds no gemmlab results (no environment.json in it or in its subdirectories, {MAX_DEPTH} levels down)"));
        }
        let mut new = |f: &PathBuf| seen.insert(fs::canonicalize(f).unwrap_or_else(|_| f.clone()));
        out.extend(found.into_iter().filter(|f| new(f)));
    }
    Ok(out)
}

/// `dir` if it holds `file`, else every directory below it that does (to `MAX_DEPTH`).
fn holding(dir: &Path, file: &str, depth: usize) -> Vec<PathBuf> {
    if dir.join(file).is_file() {
        return vec![dir.to_path_buf()];
    }
    if depth >= MAX_DEPTH {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut subs: Vec<PathBuf> = (entries.flatten().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    (subs.iter())
        .flat_map(|s| holding(s, file, depth + 1))
        .collect()
}

/// Loads every result directory under `from`. Fails when a directory cannot
/// be read or parsed, or when there is not a single measurement in all of them.
pub fn load(from: &[PathBuf]) -> Result<Data> {
    if from.is_empty() {
        discover(from)?;
    }
    let accuracy = accuracy_rows(from)?;
    // A directory of accuracy rows alone is a report's input too: a directory is
    // kept where it has results, or nothing at all (so discover says so).
    let result_dirs: Vec<PathBuf> = (from.iter())
        .filter(|d| {
            !holding(d, ENVIRONMENT_FILE, 0).is_empty() || holding(d, ACCURACY_FILE, 0).is_empty()
        })
        .cloned()
        .collect();
    let dirs = match result_dirs.is_empty() {
        true => Vec::new(),
        false => discover(&result_dirs)?,
    };
    let mut runs = Vec::new();
    for dir in dirs {
        let (env, measurements) = load_dir(&dir)?;
        if measurements.is_empty() {
            let d = dir.display();
            eprintln!("note: {d}: no measurements (the run stopped before its first one?)");
        }
        runs.push(Run {
            dir,
            env,
            measurements,
        });
    }
    if runs.iter().all(|r| r.measurements.is_empty()) && accuracy.is_empty() {
        let names: Vec<String> = runs.iter().map(|r| r.dir.display().to_string()).collect();
        let names = names.join(", ");
        return Err(Error::invalid(format!(
            "no measurements in {names}: nothing to report"
        )));
    }
    Ok(Data { runs, accuracy })
}

/// The first of each group of `same` records, in order.
fn first_of<'a>(
    recs: impl Iterator<Item = Rec<'a>>,
    same: impl Fn(&Rec, &Rec) -> bool,
) -> Vec<Rec<'a>> {
    let mut out: Vec<Rec> = Vec::new();
    for r in recs {
        if !out.iter().any(|o| same(o, &r)) {
            out.push(r);
        }
    }
    out
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
        (self.experiments().iter())
            .flat_map(|name| self.experiment_where(name, |m| m.dims.is_some()))
            .collect()
    }

    /// Every measurement of any experiment but the routine's on a call other than
    /// the tutorial's (f64, transposes, alpha/beta, leading dimensions, offsets),
    /// without repeats.
    pub fn blas_calls(&self) -> Vec<Rec<'_>> {
        (self.experiments().iter())
            .filter(|name| *name != crate::routine::ROUTINE)
            .flat_map(|name| self.experiment_where(name, |m| !m.is_plain_problem()))
            .collect()
    }

    /// The GEMM routine's rows (`gemmlab gemm --out`), every call, without repeats.
    pub fn routine_calls(&self) -> Vec<Rec<'_>> {
        self.experiment_where(crate::routine::ROUTINE, |_| true)
    }

    fn experiment_where(&self, name: &str, keep: impl Fn(&Measurement) -> bool) -> Vec<Rec<'_>> {
        let recs = self
            .measured()
            .filter(|r| r.m.experiment == name && keep(r.m));
        first_of(recs, |a, b| same_cell(a.m, b.m))
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
        // Attribution rows are offline too, but a section of their own.
        let offline = |r: &Rec| is_offline(r.m) && r.m.experiment != crate::attribution::EXPERIMENT;
        first_of(self.all().filter(offline), |o, r| {
            o.m.experiment == r.m.experiment
                && same_cell(o.m, r.m)
                && o.m.device_id == r.m.device_id
                && arch_of(o.m) == arch_of(r.m)
                && o.m.compiler == r.m.compiler
        })
    }

    pub fn experiments(&self) -> Vec<String> {
        distinct(self.all().map(|r| r.m.experiment.clone()))
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

/// gemm1, gemm2, ..., gemm10, gemm11, other names alphabetically, cuBLAS last.
pub fn kernel_order(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |k: &str| {
        let (prefix, num) = k.split_at(k.trim_end_matches(|c: char| c.is_ascii_digit()).len());
        match num.parse::<u64>() {
            _ if k == VENDOR => (2, String::new(), 0, k.to_string()),
            Ok(n) => (0, prefix.to_string(), n, k.to_string()),
            Err(_) => (1, k.to_string(), 0, k.to_string()),
        }
    };
    key(a).cmp(&key(b))
}

/// Distinct kernels in the order above.
pub fn kernels(recs: &[Rec]) -> Vec<String> {
    let mut k = distinct(recs.iter().map(|r| r.m.kernel.clone()));
    k.sort_by(|a, b| kernel_order(a, b));
    k
}

/// Distinct problem sizes, largest (by M*N*K) first.
pub fn sizes(recs: &[Rec]) -> Vec<(usize, usize, usize)> {
    let mut s = distinct(recs.iter().map(|r| (r.m.m, r.m.n, r.m.k)));
    s.sort_by_key(|&(m, n, k)| std::cmp::Reverse((m as u128) * (n as u128) * (k as u128)));
    s
}

pub fn size_label((m, n, k): (usize, usize, usize)) -> String {
    match m == n && n == k {
        true => m.to_string(),
        false => format!("{m}x{n}x{k}"),
    }
}

pub fn of_size(m: &Measurement, s: (usize, usize, usize)) -> bool {
    (m.m, m.n, m.k) == s
}

/// The median GFLOP/s of a measurement that passed its check.
pub fn gflops(m: &Measurement) -> Option<f64> {
    m.gflops.filter(|g| m.status.is_ok() && g.is_finite())
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

pub fn toolchain_name(t: Toolchain) -> &'static str {
    t.label()
}

/// "CUDA", "OpenCL", or "OpenCL PTX via CUDA JIT" (or NVRTC's) for a JIT variant.
pub fn series_name(m: &Measurement) -> String {
    match m.variant.as_deref() {
        None => toolchain_name(m.toolchain).to_string(),
        Some(OPENCL_PTX) => "OpenCL PTX via CUDA JIT".to_string(),
        Some(NVRTC_PTX) => "NVRTC PTX via CUDA JIT".to_string(),
        Some(v) => format!("{} ({v})", toolchain_name(m.toolchain)),
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
