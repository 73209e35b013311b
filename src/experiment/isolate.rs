//! A kernel that crashes, faults or hangs costs its row, not the run.
//!
//! A segmentation fault in a CPU device's compiled kernel takes the process with
//! it, a CUDA illegal address poisons the context for every later kernel, and a
//! kernel that never ends cannot be stopped from the thread that launched it.
//! So `compare` and `sweep` run as a supervisor and a child (this same command):
//!
//! - the child says in a marker file which kernel it is compiling and checking
//!   (or which point's kernels it is timing) and since when;
//! - the supervisor kills a child past its limit and blames the kernel in flight
//!   ("timed out"), blames it when the child dies of a signal ("crashed", with the
//!   signal and the stage), and starts the child again;
//! - a child that finds its device lost after a kernel failed blames that kernel
//!   itself, with the driver's words, and asks for a fresh process;
//! - a restarted child runs the same command with the same seed and answers every
//!   blamed kernel with its failure instead of running it, so the run finishes
//!   with one row per kernel and the exit status of any failed row.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::gemm::driver::{Session, Status};
use crate::results::Measurement;
use crate::util::process::{signal_name, signal_of, unix_now};

/// The marker file the child keeps up to date.
pub const ENV_MARKER: &str = "GEMMLAB_ISOLATE_MARKER";
/// The file of kernels blamed so far, one JSON line each.
pub const ENV_BLAMED: &str = "GEMMLAB_ISOLATE_BLAMED";
/// Seconds a kernel's compile and first checked run may take.
pub const ENV_LIMIT: &str = "GEMMLAB_ISOLATE_LIMIT";
/// The seed every restart runs with (the first run's, drawn by the supervisor).
pub const ENV_SEED: &str = "GEMMLAB_ISOLATE_SEED";
/// Where compute-sanitizer writes its report, in a `--sanitize` run's child.
pub const ENV_SANITIZE_LOG: &str = "GEMMLAB_SANITIZE_LOG";
/// The child's exit status that asks for a fresh process (its device was lost).
pub const EXIT_RESTART: i32 = 75;
/// The default of `--kernel-timeout`.
pub const DEFAULT_LIMIT_S: f64 = 600.0;
/// Restarts in a row with nothing to blame before the supervisor gives up.
const BLAMELESS_RESTARTS: usize = 2;

/// What the child is doing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct InFlight {
    /// The rows it concerns (one kernel while preparing; every kernel of a point
    /// while they are timed interleaved).
    keys: Vec<String>,
    /// For the person watching: "xgemm on opencl at 1024".
    what: String,
    /// "compiling and checking", "timing".
    stage: String,
    started: f64,
    limit_s: Option<f64>,
}

/// A kernel that failed in an earlier child, and how.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Blamed {
    key: String,
    status: Status,
}

/// The child's side, where this process is one.
struct Supervised {
    marker: PathBuf,
    blamed_file: PathBuf,
    blamed: Vec<Blamed>,
    limit_s: f64,
}

fn supervised() -> Option<&'static Supervised> {
    static S: OnceLock<Option<Supervised>> = OnceLock::new();
    S.get_or_init(|| {
        let marker = PathBuf::from(std::env::var_os(ENV_MARKER)?);
        let blamed_file = PathBuf::from(std::env::var_os(ENV_BLAMED)?);
        let blamed = std::fs::read_to_string(&blamed_file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let limit_s = std::env::var(ENV_LIMIT)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(DEFAULT_LIMIT_S);
        Some(Supervised {
            marker,
            blamed_file,
            blamed,
            limit_s,
        })
    })
    .as_ref()
}

/// Whether this process is a supervised child.
pub fn is_child() -> bool {
    supervised().is_some()
}

/// Whether an earlier child of this run failed (its files are this run's own).
pub fn restarted() -> bool {
    supervised().is_some_and(|s| !s.blamed.is_empty())
}

/// The seed the supervisor chose for every child of this run.
pub fn seed() -> Option<u64> {
    std::env::var(ENV_SEED).ok()?.parse().ok()
}

/// A row's identity across the processes of one supervised run.
pub fn row_key(r: &Measurement) -> String {
    format!(
        "{}|{}|{}|{:?}|{:?}|{}x{}x{}|{:?}|{:?}|{:?}|{:?}|{:?}",
        r.experiment,
        r.kernel,
        r.toolchain,
        r.variant,
        r.label,
        r.m,
        r.n,
        r.k,
        r.dims,
        r.problem,
        r.config,
        r.hints,
        r.cache
    )
}

static EARLIER: OnceLock<HashMap<String, Measurement>> = OnceLock::new();

/// Keeps the rows earlier children of this run wrote (a restarted child reads
/// them before it starts the run's files again), by row; how many.
pub fn remember_earlier(measurements: &Path) -> usize {
    let text = std::fs::read_to_string(measurements).unwrap_or_default();
    let rows: HashMap<String, Measurement> = (text.lines())
        .filter_map(|l| serde_json::from_str::<Measurement>(l).ok())
        .map(|m| (row_key(&m), m))
        .collect();
    let n = rows.len();
    let _ = EARLIER.set(rows);
    n
}

/// The row an earlier child of this run measured, if it did.
pub fn earlier(key: &str) -> Option<Measurement> {
    EARLIER.get()?.get(key).cloned()
}

/// How an earlier child of this run ended on the row `key`, if it did.
pub fn blamed(key: &str) -> Option<Status> {
    let s = supervised()?;
    s.blamed
        .iter()
        .find(|b| b.key == key)
        .map(|b| b.status.clone())
}

fn write_marker(s: &Supervised, m: &InFlight) {
    let Ok(text) = serde_json::to_vec(m) else {
        return;
    };
    // Written whole and renamed over the marker: the supervisor never reads half.
    let tmp = s.marker.with_extension("tmp");
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, &s.marker);
    }
}

/// The kernel of row `key` is being compiled and run once checked: a crash or a
/// hang from here to [`end`] is its row's failure.
fn begin_prepare(key: &str, what: &str) {
    if let Some(s) = supervised() {
        let m = InFlight {
            keys: vec![key.to_string()],
            what: what.to_string(),
            stage: "compiling and running it once checked".into(),
            started: unix_now(),
            limit_s: Some(s.limit_s),
        };
        write_marker(s, &m);
    }
}

/// Runs `f`, the risky step of row `key` (compile and first checked run), where a
/// crash or a hang costs that row: `Err` with the failure where an earlier process
/// of this run died on it.
pub fn guard<T>(key: &str, what: &str, f: impl FnOnce() -> T) -> std::result::Result<T, Status> {
    if let Some(status) = blamed(key) {
        return Err(status);
    }
    begin_prepare(key, what);
    let r = f();
    end();
    Ok(r)
}

/// After a step of row `key` failed with `status` on `session`: where the failure
/// took the device with it (a CUDA context an illegal address poisoned), a
/// supervised child blames the row and leaves for a fresh process.
pub fn after_failure(key: &str, status: &Status, session: &Session) {
    let on_device = matches!(
        status,
        Status::LaunchError(_) | Status::WrongResult(_) | Status::OutOfBounds(_)
    );
    if !on_device || !is_child() {
        return;
    }
    if let Err(e) = session.healthy() {
        let reason = status.reason().unwrap_or("it failed");
        let lost = Status::LaunchError(format!("{reason}; the device was lost after it ({e})"));
        device_lost(key, &lost);
    }
}

/// The kernels of rows `keys` are timed interleaved (each passed its checked run).
pub fn begin_timing(keys: &[String], what: &str) {
    if let Some(s) = supervised() {
        let m = InFlight {
            keys: keys.to_vec(),
            what: what.to_string(),
            stage: "timing its kernels interleaved (each had passed its checked run)".into(),
            started: unix_now(),
            limit_s: None,
        };
        write_marker(s, &m);
    }
}

/// Nothing risky in flight.
pub fn end() {
    if let Some(s) = supervised() {
        write_marker(s, &InFlight::default());
    }
}

/// The device was lost after the kernel of row `key` failed with `status`: a
/// supervised child blames it and exits for a fresh process; otherwise nothing
/// (every later kernel on the session will fail too, each saying so).
fn device_lost(key: &str, status: &Status) {
    let Some(s) = supervised() else { return };
    append_blamed(&s.blamed_file, key, status.clone());
    eprintln!(
        "gemmlab: the device was lost after this kernel failed; continuing in a fresh process"
    );
    std::process::exit(EXIT_RESTART);
}

fn append_blamed(path: &Path, key: &str, status: Status) {
    use std::io::Write;
    let b = Blamed {
        key: key.to_string(),
        status,
    };
    let written = serde_json::to_string(&b)
        .map_err(std::io::Error::other)
        .and_then(|line| {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            writeln!(f, "{line}")
        });
    if let Err(e) = written {
        eprintln!(
            "gemmlab: could not record the failed kernel in {}: {e}",
            path.display()
        );
    }
}

/// The log compute-sanitizer writes, where this child runs under it (`--sanitize`):
/// then each kernel runs its checked run only, never timed.
pub fn sanitizing() -> Option<PathBuf> {
    std::env::var_os(ENV_SANITIZE_LOG).map(PathBuf::from)
}

/// What compute-sanitizer reported since the last call: its error lines
/// ("Invalid __global__ write of size 4 bytes", "at fault+0x90", ...), empty
/// where it found nothing.
pub fn sanitizer_news() -> Vec<String> {
    static READ: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
    let Some(log) = sanitizing() else {
        return Vec::new();
    };
    let Ok(mut read) = READ.lock() else {
        return Vec::new();
    };
    let Ok(bytes) = std::fs::read(&log) else {
        return Vec::new();
    };
    let from = (*read as usize).min(bytes.len());
    *read = bytes.len() as u64;
    String::from_utf8_lossy(&bytes[from..])
        .lines()
        .map(|l| l.trim_start_matches('=').trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with("COMPUTE-SANITIZER"))
        .collect()
}

/// compute-sanitizer where it is installed: on the PATH, else in CUDA's folder.
pub fn find_sanitizer() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("compute-sanitizer"))
            .collect::<Vec<_>>()
    });
    on_path
        .chain([PathBuf::from("/usr/local/cuda/bin/compute-sanitizer")])
        .find(|p| p.is_file())
}

/// How the supervisor runs its children.
pub struct Supervision<'a> {
    /// The run's output directory: an earlier run's files there are replaced once.
    pub out: &'a Path,
    /// Seconds a kernel's compile and first checked run may take.
    pub limit_s: f64,
    /// The run's seed (drawn here when the command gave none, so restarts agree).
    pub seed: u64,
    /// Run each child under this compute-sanitizer (memcheck), checked runs only.
    pub sanitizer: Option<PathBuf>,
}

/// What became of one child.
enum Ended {
    Exited(i32),
    /// Stopped or dead with a kernel blamed (true) or with nothing to blame.
    Restart {
        blamed: bool,
    },
}

/// Runs this same command as a child, restarting it after a crash, a hang or a
/// lost device, and returns the exit status of the child that finished.
pub fn supervise(how: &Supervision) -> Result<i32> {
    crate::results::replace_earlier_run(how.out)?;
    let program = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let tag = format!("{}-{}", std::process::id(), unix_now() as u64);
    let marker = std::env::temp_dir().join(format!("gemmlab-run-{tag}.json"));
    let blamed_file = std::env::temp_dir().join(format!("gemmlab-run-{tag}.blamed.jsonl"));
    let cleanup = || {
        let _ = std::fs::remove_file(&marker);
        let _ = std::fs::remove_file(&blamed_file);
        let _ = std::fs::remove_file(marker.with_extension("tmp"));
    };
    let mut blameless = 0;
    let mut restarts = 0usize;
    loop {
        let _ = std::fs::remove_file(&marker);
        let mut command = match &how.sanitizer {
            Some(tool) => {
                let log = std::env::temp_dir()
                    .join(format!("gemmlab-run-{tag}-{restarts}.sanitizer.log"));
                let mut c = Command::new(tool);
                c.args(["--tool", "memcheck", "--print-limit", "20", "--log-file"])
                    .arg(&log)
                    .arg(&program)
                    .env(ENV_SANITIZE_LOG, &log);
                c
            }
            None => Command::new(&program),
        };
        let child = command
            .args(&args)
            .env(ENV_MARKER, &marker)
            .env(ENV_BLAMED, &blamed_file)
            .env(ENV_LIMIT, how.limit_s.to_string())
            .env(ENV_SEED, how.seed.to_string())
            .spawn()
            .map_err(|e| Error::io(&program, e));
        let ended = child.and_then(|c| watch(c, &marker, &blamed_file));
        let ended = match ended {
            Ok(e) => e,
            Err(e) => {
                cleanup();
                return Err(e);
            }
        };
        match ended {
            Ended::Exited(code) => {
                cleanup();
                return Ok(code);
            }
            Ended::Restart { blamed: true } => blameless = 0,
            Ended::Restart { blamed: false } => {
                blameless += 1;
                if blameless > BLAMELESS_RESTARTS {
                    cleanup();
                    eprintln!("gemmlab: the measuring process keeps dying outside any kernel; giving up (the rows written so far are kept)");
                    return Ok(1);
                }
            }
        }
        restarts += 1;
        eprintln!(
            "gemmlab: starting the run again in a fresh process (restart {restarts}); failed kernels are answered with their failure"
        );
    }
}

fn read_marker(path: &Path) -> InFlight {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Waits for the child, enforcing the limit its marker states.
fn watch(mut child: Child, marker: &Path, blamed_file: &Path) -> Result<Ended> {
    let poll = Duration::from_millis(50);
    loop {
        if let Some(status) = child.try_wait().map_err(|e| Error::io(marker, e))? {
            return Ok(after_exit(status, marker, blamed_file));
        }
        let m = read_marker(marker);
        if let Some(limit) = m.limit_s.filter(|l| unix_now() - m.started > *l) {
            let _ = child.kill();
            let _ = child.wait();
            let why = format!(
                "{} took past its limit of {limit:.0} s (--kernel-timeout); its process was killed",
                m.stage
            );
            eprintln!("gemmlab: {}: {why}", m.what);
            blame(&m, blamed_file, Status::TimedOut(why));
            return Ok(Ended::Restart { blamed: true });
        }
        std::thread::sleep(poll);
    }
}

/// A death by signal blames what the marker names.
fn after_exit(status: ExitStatus, marker: &Path, blamed_file: &Path) -> Ended {
    if let Some(code) = status.code() {
        return match code {
            EXIT_RESTART => Ended::Restart { blamed: true },
            c => Ended::Exited(c),
        };
    }
    let signal = signal_of(&status);
    // Interrupted at the terminal: stop, do not restart.
    if matches!(signal, Some(2) | Some(15)) {
        return Ended::Exited(130);
    }
    let what = signal.map_or("a signal".to_string(), signal_name);
    let m = read_marker(marker);
    if m.keys.is_empty() {
        eprintln!("gemmlab: the measuring process died of {what} outside any kernel");
        return Ended::Restart { blamed: false };
    }
    let why = format!("the process died of {what} while {}", m.stage);
    eprintln!("gemmlab: {}: {why}", m.what);
    blame(&m, blamed_file, Status::Crashed(why));
    Ended::Restart { blamed: true }
}

fn blame(m: &InFlight, blamed_file: &Path, status: Status) {
    for k in &m.keys {
        append_blamed(blamed_file, k, status.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_death_by_signal_blames_every_row_in_flight() {
        let dir = std::env::temp_dir().join(format!("gemmlab-isolate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("m.json");
        let blamed = dir.join("b.jsonl");
        let m = InFlight {
            keys: vec!["a".into(), "b".into()],
            what: "two kernels".into(),
            stage: "timing".into(),
            started: unix_now(),
            limit_s: None,
        };
        std::fs::write(&marker, serde_json::to_vec(&m).unwrap()).unwrap();
        // A child killed by SIGSEGV.
        let st = Command::new("sh")
            .args(["-c", "kill -11 $$"])
            .status()
            .unwrap();
        assert!(matches!(
            after_exit(st, &marker, &blamed),
            Ended::Restart { blamed: true }
        ));
        let lines = std::fs::read_to_string(&blamed).unwrap();
        assert_eq!(lines.lines().count(), 2);
        assert!(
            lines.contains("SIGSEGV") && lines.contains("timing"),
            "{lines}"
        );
        // Nothing in flight: nobody to blame.
        std::fs::write(&marker, b"{}").unwrap();
        let st = Command::new("sh")
            .args(["-c", "kill -6 $$"])
            .status()
            .unwrap();
        assert!(matches!(
            after_exit(st, &marker, &blamed),
            Ended::Restart { blamed: false }
        ));
        // An exit status passes through; the restart code asks for another child.
        let st = Command::new("sh").args(["-c", "exit 75"]).status().unwrap();
        assert!(matches!(
            after_exit(st, &marker, &blamed),
            Ended::Restart { .. }
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
