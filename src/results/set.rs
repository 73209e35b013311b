//! Finding result directories and loading them as one set: every run under the
//! `--from` directories, and `gemmlab accuracy`'s rows beside them.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::reading::GpuFacts;
use super::{load_dir, Environment, Measurement};
use crate::error::{Error, Result};

/// One result directory: what one gemmlab command wrote.
#[derive(Debug, Clone)]
pub struct Run {
    pub dir: PathBuf,
    pub env: Environment,
    pub measurements: Vec<Measurement>,
}

/// Every run found under a set of directories, and the accuracy rows beside them.
#[derive(Debug, Clone)]
pub struct ResultSet {
    pub runs: Vec<Run>,
    /// `gemmlab accuracy`'s rows (`accuracy.json`), from every directory that holds one.
    pub accuracy: Vec<crate::gemm::accuracy::Row>,
}

impl ResultSet {
    /// The GPU a row of run `run` ran on as the runs describe it, what its own
    /// record lacks filled from another record of a device of the same name.
    pub fn gpu_facts(&self, run: usize, m: &Measurement) -> GpuFacts {
        let own = self.runs[run].env.devices.iter();
        let all = self.runs.iter().flat_map(|r| &r.env.devices);
        let own = own.filter(|d| d.id == m.device_id);
        own.chain(all.filter(|d| d.name == m.device))
            .fold(GpuFacts::default(), |f, d| GpuFacts {
                compute_capability: f.compute_capability.or(d.compute_capability),
                sms: f.sms.or(d.compute_units),
                clock_mhz: f.clock_mhz.or(d.clock_mhz),
                bandwidth_gbs: f.bandwidth_gbs.or(d.memory_bandwidth_gbs),
            })
    }
}

/// The file `gemmlab accuracy` writes.
const ACCURACY_FILE: &str = "accuracy.json";
/// The file that makes a directory a result directory.
const ENVIRONMENT_FILE: &str = "environment.json";
const MAX_DEPTH: usize = 4;

/// The rows of every `accuracy.json` in or below `from` (as deep as result directories).
fn accuracy_rows(from: &[PathBuf]) -> Result<Vec<crate::gemm::accuracy::Row>> {
    #[derive(serde::Deserialize)]
    struct File {
        rows: Vec<crate::gemm::accuracy::Row>,
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
pub fn load(from: &[PathBuf]) -> Result<ResultSet> {
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
    Ok(ResultSet { runs, accuracy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_directory_is_an_error() {
        let e = load(&[PathBuf::from("/nonexistent/gemmlab-results")]).unwrap_err();
        assert!(e.to_string().contains("no such directory"), "{e}");
        let e = load(&[]).unwrap_err();
        assert!(e.to_string().contains("--from"), "{e}");
    }
}
