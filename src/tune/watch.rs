//! A search that survives kernels that crash, fault or hang.
//!
//! A kernel that never finishes cannot be stopped from inside the process that
//! launched it, and one that faults can take the device context (CUDA) or the
//! whole process (a segmentation fault on a CPU device) with it. So `gemmlab
//! tune` runs its searches in a child process and watches it:
//!
//! - the child tells its supervisor, through a small marker file rewritten on
//!   every change, which configuration the device is measuring (with its time
//!   limit) and which ones are being compiled (`Watch`);
//! - the supervisor (`supervise`) kills a child whose configuration runs past its
//!   limit, and records that configuration as timed out; records one whose child
//!   died of a signal as crashed; and starts the child again, which resumes from
//!   the store: what was measured is answered at once, the walk goes on where it
//!   stopped, and the records of this run still count as measured by it;
//! - a fault the child sees itself (an illegal address poisons a CUDA context)
//!   is recorded by the child as a failed configuration with the driver's words,
//!   after which it exits with `EXIT_RESTART` for a fresh process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::store::{Record, StoreRef};
use crate::error::{Error, Result};
use crate::gemm::driver::Status;
use crate::util::process::{signal_name, signal_of, unix_now};

/// The child's exit status that asks for a fresh process (its device session was lost).
pub const EXIT_RESTART: i32 = 75;
/// Set in the child's environment: the run id its records carry.
pub const ENV_RUN: &str = "GEMMLAB_TUNE_RUN";
/// Set in the child's environment: the marker file it keeps up to date.
pub const ENV_WATCH: &str = "GEMMLAB_TUNE_WATCH";
/// Restarts in a row that find nothing to blame before the supervisor gives up.
const BLAMELESS_RESTARTS: usize = 2;

/// Called first in the child: it dies when its supervisor dies.
pub fn die_with_supervisor() {
    crate::util::process::die_with_parent();
}

/// A configuration in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InFlight {
    /// Its record as it will be stored if it fails here.
    pub record: Record,
    /// Unix seconds when it started.
    pub started: f64,
    /// Seconds it may take.
    pub limit_s: f64,
}

/// What the child is doing, as the supervisor reads it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Marker {
    /// The store the configurations belong to.
    pub store: Option<StoreRef>,
    /// On the device: loading, checking and timing.
    pub device: Option<InFlight>,
    /// Being compiled, by point.
    pub compiles: Vec<(usize, InFlight)>,
}

/// The child's side: keeps the marker file up to date.
pub struct Watch {
    path: PathBuf,
    state: Mutex<Marker>,
}

impl Watch {
    pub fn new(path: &Path, store: StoreRef) -> Watch {
        let w = Watch {
            path: path.to_path_buf(),
            state: Mutex::new(Marker {
                store: Some(store),
                ..Default::default()
            }),
        };
        w.update(|_| {});
        w
    }

    /// Changes the marker and writes it (to a temporary file renamed over the
    /// marker, so the supervisor never reads half of one). A marker that cannot
    /// be written costs only the supervision of this configuration.
    fn update(&self, f: impl FnOnce(&mut Marker)) {
        let Ok(mut m) = self.state.lock() else { return };
        f(&mut m);
        let Ok(text) = serde_json::to_vec(&*m) else {
            return;
        };
        let tmp = self.path.with_extension("tmp");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &self.path);
        }
    }

    pub fn device_start(&self, record: &Record, limit_s: f64) {
        let f = InFlight {
            record: record.clone(),
            started: unix_now(),
            limit_s,
        };
        self.update(|m| m.device = Some(f));
    }

    pub fn device_end(&self) {
        self.update(|m| m.device = None);
    }

    pub fn compile_start(&self, point: usize, record: &Record, limit_s: f64) {
        let f = InFlight {
            record: record.clone(),
            started: unix_now(),
            limit_s,
        };
        self.update(|m| m.compiles.push((point, f)));
    }

    pub fn compile_end(&self, point: usize) {
        self.update(|m| m.compiles.retain(|(p, _)| *p != point));
    }
}

/// What became of one child process.
enum Ended {
    /// It finished with this exit status.
    Exited(i32),
    /// It asked for a fresh process.
    Restart,
    /// The supervisor stopped it, or it died: the configuration to blame (if the
    /// marker named one) has been recorded.
    Stopped { blamed: bool },
}

/// The supervisor's side: runs `program args` with `ENV_RUN` and `ENV_WATCH` set,
/// restarting it after a timeout, a crash or a lost device, and returns the exit
/// status of the run that finished. `say` prints a line for the person watching.
pub fn supervise(program: &Path, args: &[std::ffi::OsString], say: &dyn Fn(&str)) -> Result<i32> {
    let run = format!(
        "{}-{}",
        crate::results::utc_now().replace([':', '-'], ""),
        std::process::id()
    );
    let marker = std::env::temp_dir().join(format!("gemmlab-tune-{run}.json"));
    let mut blameless = 0;
    let mut restarts = 0;
    loop {
        let _ = std::fs::remove_file(&marker);
        let child = Command::new(program)
            .args(args)
            .env(ENV_RUN, &run)
            .env(ENV_WATCH, &marker)
            .spawn()
            .map_err(|e| Error::io(program, e))?;
        let ended = watch_child(child, &marker, say)?;
        match ended {
            Ended::Exited(code) => {
                let _ = std::fs::remove_file(&marker);
                if restarts > 0 {
                    let restarts = crate::util::words::plural(restarts, "restart");
                    say(&format!("gemmlab tune: finished after {restarts}"));
                }
                return Ok(code);
            }
            Ended::Restart => blameless = 0,
            Ended::Stopped { blamed: true } => blameless = 0,
            Ended::Stopped { blamed: false } => {
                blameless += 1;
                if blameless > BLAMELESS_RESTARTS {
                    let _ = std::fs::remove_file(&marker);
                    say("gemmlab tune: the search process keeps dying outside any configuration; giving up (the store keeps what was measured)");
                    return Ok(1);
                }
            }
        }
        restarts += 1;
        say(
            "gemmlab tune: starting the search again in a fresh process; it resumes from the store",
        );
    }
}

/// Waits for the child, enforcing the limits its marker states.
fn watch_child(mut child: Child, marker: &Path, say: &dyn Fn(&str)) -> Result<Ended> {
    let poll = Duration::from_millis(50);
    loop {
        if let Some(status) = child.try_wait().map_err(|e| Error::io(marker, e))? {
            return Ok(after_exit(status, marker, say));
        }
        let m = read_marker(marker);
        let now = unix_now();
        let late = m
            .device
            .iter()
            .map(|f| (f, "measuring"))
            .chain(m.compiles.iter().map(|(_, f)| (f, "compiling")))
            .find(|(f, _)| now - f.started > f.limit_s);
        if let Some((f, doing)) = late {
            let _ = child.kill();
            let _ = child.wait();
            let why = format!(
                "{doing} it ran past its limit of {:.1} s; its process was killed",
                f.limit_s
            );
            say(&format!("gemmlab tune: {}: {why}", describe(&f.record)));
            blame(&m, f, Status::TimedOut(why));
            return Ok(Ended::Stopped { blamed: true });
        }
        std::thread::sleep(poll);
    }
}

/// Classifies a finished child; a death by signal blames the configuration in flight.
fn after_exit(status: ExitStatus, marker: &Path, say: &dyn Fn(&str)) -> Ended {
    if let Some(code) = status.code() {
        return if code == EXIT_RESTART {
            Ended::Restart
        } else {
            Ended::Exited(code)
        };
    }
    let signal = signal_of(&status);
    // Interrupted by the person at the terminal: stop, do not restart.
    if matches!(signal, Some(2) | Some(15)) {
        return Ended::Exited(130);
    }
    let m = read_marker(marker);
    let what = signal.map_or("a signal".to_string(), signal_name);
    let flight = m
        .device
        .as_ref()
        .map(|f| (f, "measuring"))
        .or_else(|| m.compiles.first().map(|(_, f)| (f, "compiling")));
    match flight {
        Some((f, doing)) => {
            let why = format!("the process {doing} it died of {what}");
            say(&format!("gemmlab tune: {}: {why}", describe(&f.record)));
            blame(&m, f, Status::Crashed(why));
            Ended::Stopped { blamed: true }
        }
        None => {
            say(&format!(
                "gemmlab tune: the search process died of {what} outside any configuration"
            ));
            Ended::Stopped { blamed: false }
        }
    }
}

fn read_marker(path: &Path) -> Marker {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn describe(r: &Record) -> String {
    format!(
        "{} on {}, {}",
        r.key.kernel,
        r.key.toolchain,
        r.key.config.describe()
    )
}

/// Stores the configuration in flight as failed, so the restarted search answers
/// it from the store instead of trying it again.
fn blame(m: &Marker, f: &InFlight, status: Status) {
    let Some(store) = &m.store else { return };
    let mut r = f.record.clone();
    r.status = status;
    r.device_s = (unix_now() - f.started).max(0.0);
    r.elapsed_s = r.elapsed_s.map(|e| e + r.device_s);
    r.at_utc = crate::results::utc_now();
    if let Err(e) = store.append(&r) {
        eprintln!("gemmlab tune: could not record the failed configuration: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_device_limit_grows_with_the_fastest_configuration() {
        use crate::tune::search::{Limits, LAUNCH_FLOOR_S};
        let l = Limits::default();
        assert_eq!(l.device_deadline(None, 0.0), LAUNCH_FLOOR_S);
        assert_eq!(l.device_deadline(Some(0.01), 0.0), LAUNCH_FLOOR_S);
        assert_eq!(l.device_deadline(Some(0.5), 0.0), 50.0);
        // A large problem's first configuration gets the time its launches need.
        assert_eq!(l.device_deadline(None, 280.0), 280.0);
        let fixed = Limits {
            launch_timeout_s: Some(3.0),
            ..l
        };
        assert_eq!(fixed.device_deadline(Some(0.5), 280.0), 3.0);
    }

    /// A stand-in child (a shell script) that reports a build in flight and then
    /// never finishes: the supervisor kills it at the build's limit, records the
    /// configuration as timed out, and starts it again; the second run finishes.
    #[cfg(unix)]
    #[test]
    fn a_build_past_its_limit_is_cut_recorded_and_the_search_restarted() {
        let dir = std::env::temp_dir().join(format!("gemmlab-supervise-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store_path = dir.join("s.jsonl");
        std::fs::write(&store_path, "{\"header\":1}\n").unwrap();
        let marker = Marker {
            store: Some(StoreRef::File(store_path.clone())),
            device: None,
            compiles: vec![(
                3,
                InFlight {
                    record: crate::tune::store::tests::sample(),
                    started: unix_now(),
                    limit_s: 0.3,
                },
            )],
        };
        let template = dir.join("marker.json");
        std::fs::write(&template, serde_json::to_vec(&marker).unwrap()).unwrap();
        let flag = dir.join("ran-once");
        let script = dir.join("child.sh");
        std::fs::write(
            &script,
            format!(
                "if [ -f {flag} ]; then exit 0; fi\ntouch {flag}\ncp {template} \"${ENV_WATCH}\"\nsleep 30\n",
                flag = flag.display(),
                template = template.display()
            ),
        )
        .unwrap();
        let said = std::sync::Mutex::new(Vec::new());
        let started = Instant::now();
        let code = supervise(Path::new("/bin/sh"), &[script.into_os_string()], &|l| {
            said.lock().unwrap().push(l.to_string())
        })
        .unwrap();
        assert_eq!(code, 0);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the child was not cut"
        );
        let said = said.into_inner().unwrap().join("\n");
        assert!(
            said.contains("compiling it ran past its limit of 0.3 s"),
            "{said}"
        );
        assert!(said.contains("finished after 1 restart"), "{said}");
        let text = std::fs::read_to_string(&store_path).unwrap();
        let last: Record = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert!(matches!(last.status, Status::TimedOut(_)), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn signals_are_named() {
        assert_eq!(signal_name(11), "signal 11 (SIGSEGV)");
        assert_eq!(signal_name(42), "signal 42");
    }

    #[test]
    fn the_marker_follows_what_is_in_flight() {
        let dir = std::env::temp_dir().join(format!("gemmlab-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("marker.json");
        let w = Watch::new(&path, StoreRef::File("/tmp/store.jsonl".into()));
        let record: Record = crate::tune::store::tests::sample();
        w.compile_start(3, &record, 60.0);
        w.device_start(&record, 10.0);
        let m = read_marker(&path);
        assert_eq!(m.compiles.len(), 1);
        assert_eq!(m.device.as_ref().map(|f| f.limit_s), Some(10.0));
        w.compile_end(3);
        w.device_end();
        let m = read_marker(&path);
        assert!(m.compiles.is_empty() && m.device.is_none());
        assert_eq!(m.store, Some(StoreRef::File("/tmp/store.jsonl".into())));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_blamed_configuration_lands_in_the_store() {
        let dir = std::env::temp_dir().join(format!("gemmlab-blame-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let store_path = dir.join("s.jsonl");
        // A partial last line (a child killed while writing) must not swallow the record.
        std::fs::write(&store_path, "{\"header\":1}\n{\"partial").unwrap();
        let record: Record = crate::tune::store::tests::sample();
        let m = Marker {
            store: Some(StoreRef::File(store_path.clone())),
            ..Default::default()
        };
        let f = InFlight {
            record,
            started: unix_now() - 2.0,
            limit_s: 1.0,
        };
        blame(&m, &f, Status::TimedOut("ran past 1 s".into()));
        let text = std::fs::read_to_string(&store_path).unwrap();
        let last: Record = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last.status, Status::TimedOut("ran past 1 s".into()));
        assert!(last.device_s >= 2.0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
