//! Tuning beyond one device: every process that tunes the same device model
//! through one shared store (SQLite on a host, PostgreSQL across hosts) splits
//! the searches point by point (`store::sql`'s claims). Two ways to start them:
//! - `gemmlab tune ... --devices cuda:0,cuda:1`: one `gemmlab tune` process per
//!   device of this host, the host's cores divided between their compile threads;
//! - `gemmlab tune ... --publish` writes the tuning as a job into the store, and
//!   `gemmlab worker --store URL --device D`, started by any scheduler (Slurm,
//!   Kubernetes, ssh), takes the jobs its device model has not finished, runs each
//!   as a `gemmlab tune` process of its own, and records it done.
//!
//! Every process walks the same search (same strategy, seed and budget in
//! points) and tells the strategy its outcomes in the order it asked, whoever
//! measured them, so N processes measure the points one would and pick the
//! same best.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::results::engine::{Engine, Url, Value};
use crate::util::keys::device_slug;

/// The environment variable that names a tuning process in the store (its
/// claims and rows): `host:device` for the processes this module starts.
pub const WORKER_NAME_ENV: &str = "GEMMLAB_WORKER_NAME";

/// Options a job's or a device's `gemmlab tune` must not inherit: each process
/// gets its own device, output folder and store address; `--publish` and
/// `--devices` are what started it. (option, takes a value)
const NOT_INHERITED: [(&str, bool); 5] = [
    ("--devices", true),
    ("--device", true),
    ("--out", true),
    ("--store", true),
    ("--publish", false),
];

/// `args` without the options in [`NOT_INHERITED`] (as `--opt value` or `--opt=value`).
pub fn inherited_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let dropped = NOT_INHERITED
            .iter()
            .find(|(o, _)| a == o || a.strip_prefix(o).is_some_and(|rest| rest.starts_with('=')));
        match dropped {
            Some((o, takes_value)) => skip_value = *takes_value && a == o,
            None => out.push(a.clone()),
        }
    }
    out
}

/// The value of `--opt value` or `--opt=value` in `args`.
fn option_value<'a>(args: &'a [String], opt: &str) -> Option<&'a str> {
    let i = args
        .iter()
        .position(|a| a == opt || a.starts_with(&format!("{opt}=")))?;
    match args[i].split_once('=') {
        Some((_, v)) => Some(v),
        None => args.get(i + 1).map(String::as_str),
    }
}

/// One device's `gemmlab tune` process.
pub struct DeviceRun {
    pub device: String,
    pub out: PathBuf,
    pub log: PathBuf,
    pub exit_code: Option<i32>,
    pub seconds: f64,
}

/// A `gemmlab tune` process for `device`, its output into `out` and `out/tune.log`.
fn spawn_tune(
    exe: &Path,
    args: &[String],
    device: &str,
    (store, out): (&str, &Path),
    extra: &[String],
) -> Result<Child> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let log = out.join("tune.log");
    let file = std::fs::File::create(&log).map_err(|e| Error::io(&log, e))?;
    let err = file.try_clone().map_err(|e| Error::io(&log, e))?;
    let mut cmd = Command::new(exe);
    cmd.arg("tune").args(args);
    cmd.args(["--device", device, "--store", store]);
    cmd.arg("--out").arg(out).args(extra);
    let name = format!("{}:{device}", crate::util::process::hostname());
    cmd.env(WORKER_NAME_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(err));
    cmd.spawn()
        .map_err(|e| Error::invalid(format!("could not start {}: {e}", exe.display())))
}

/// `gemmlab tune --devices`: one process per device, together; `on_tick` is
/// called about every second while they run (for a progress line), and each
/// device's outcome is returned when all have finished.
pub fn run_devices(
    exe: &Path,
    args: &[String],
    devices: &[String],
    store: &str,
    out: &Path,
    mut on_tick: impl FnMut(&[DeviceRun]),
) -> Result<Vec<DeviceRun>> {
    if Url::parse(store).is_none() {
        return Err(Error::invalid(format!(
            "--devices needs a store every process can share: an SQLite file (--store {}) or a PostgreSQL URL, not the folder {store}",
            super::store::DEFAULT_STORE
        )));
    }
    let args = inherited_args(args);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let each = (cores / devices.len().max(1)).max(1);
    let mut extra = Vec::new();
    if !args.iter().any(|a| a.starts_with("--workers")) {
        extra.extend(["--workers".to_string(), each.to_string()]);
    }
    // Bests saved by several processes to one folder of JSON files would race (the
    // last save wins): there the first process keeps them (every process walks the
    // same searches); an engine merges each process's save instead.
    let db_merges = option_value(&args, "--db").is_some_and(|d| Url::parse(d).is_some());
    let no_db = args.iter().any(|a| a == "--no-db");
    let started = Instant::now();
    let mut runs = Vec::new();
    let mut children = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        // The same device twice (two processes on one GPU) gets two folders.
        let twice = devices[..i].iter().filter(|x| *x == d).count();
        let dir = match twice {
            0 => out.join(device_slug(d)),
            n => out.join(format!("{}-{}", device_slug(d), n + 1)),
        };
        let mut extra = extra.clone();
        if i > 0 && !db_merges && !no_db {
            extra.push("--no-db".into());
        }
        children.push(Some(spawn_tune(exe, &args, d, (store, &dir), &extra)?));
        runs.push(DeviceRun {
            device: d.clone(),
            log: dir.join("tune.log"),
            out: dir,
            exit_code: None,
            seconds: 0.0,
        });
    }
    while children.iter().any(Option::is_some) {
        for (c, run) in children.iter_mut().zip(runs.iter_mut()) {
            let Some(child) = c else { continue };
            if let Ok(Some(status)) = child.try_wait() {
                run.exit_code = Some(status.code().unwrap_or(-1));
                run.seconds = started.elapsed().as_secs_f64();
                *c = None;
            }
        }
        on_tick(&runs);
        std::thread::sleep(Duration::from_millis(250));
    }
    Ok(runs)
}

/// The device models a store holds outcomes of (for this gemmlab).
pub fn models(url: &Url) -> Result<Vec<String>> {
    let mut e = Engine::open(url)?;
    let rows = e.query(
        "SELECT DISTINCT device FROM tune_records WHERE gemmlab = $1 ORDER BY device",
        &[env!("CARGO_PKG_VERSION").into()],
    )?;
    Ok(rows
        .iter()
        .filter_map(|r| r[0].text().map(str::to_string))
        .collect())
}

/// How many outcomes each process wrote for `device_model` (by worker name).
pub fn measured_by(url: &Url, device_model: &str) -> Result<Vec<(String, i64)>> {
    let mut e = Engine::open(url)?;
    let rows = e.query(
        "SELECT worker, COUNT(*) FROM tune_records WHERE device = $1 AND gemmlab = $2 AND phase = 'search' GROUP BY worker ORDER BY worker",
        &[device_model.into(), env!("CARGO_PKG_VERSION").into()],
    )?;
    Ok((rows.iter())
        .map(|r| {
            (
                r[0].text().unwrap_or("").to_string(),
                r[1].int().unwrap_or(0),
            )
        })
        .collect())
}

/// What a store holds: outcomes by (device model, worker) as (search, final)
/// counts, and the claims held now as (device model, worker, seconds left).
pub struct Summary {
    pub outcomes: Vec<(String, String, i64, i64)>,
    pub claims: Vec<(String, String, f64)>,
}

pub fn summary(url: &Url) -> Result<Summary> {
    let mut e = Engine::open(url)?;
    let rows = e.query(
        "SELECT device, worker, SUM(CASE WHEN phase = 'search' THEN 1 ELSE 0 END), \
         SUM(CASE WHEN phase = 'final' THEN 1 ELSE 0 END) FROM tune_records \
         GROUP BY device, worker ORDER BY device, worker",
        &[],
    )?;
    let t = |r: &[Value], i: usize| r[i].text().unwrap_or("").to_string();
    let outcomes = (rows.iter())
        .map(|r| {
            (
                t(r, 0),
                t(r, 1),
                r[2].int().unwrap_or(0),
                r[3].int().unwrap_or(0),
            )
        })
        .collect();
    let now = e.now_sql();
    let rows = e.query(
        &format!("SELECT device, worker, expires - {now} FROM tune_claims WHERE expires > {now} AND expires < 1e17 ORDER BY device, worker"),
        &[],
    )?;
    let claims = (rows.iter())
        .map(|r| (t(r, 0), t(r, 1), r[2].real().unwrap_or(0.0)))
        .collect();
    Ok(Summary { outcomes, claims })
}

/// A tuning waiting for workers: the arguments of its `gemmlab tune`.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub args: Vec<String>,
    pub created_utc: String,
}

/// `gemmlab tune ... --publish`: the tuning as a job in the store; its number.
pub fn publish(url: &Url, args: &[String]) -> Result<i64> {
    let args = inherited_args(args);
    let text = serde_json::to_string(&args).map_err(|e| Error::invalid(e.to_string()))?;
    let mut e = Engine::open(url)?;
    let by = super::store::sql::worker_id();
    e.transaction(|e| {
        e.execute(
            "INSERT INTO tune_jobs (gemmlab, args, created_utc, created_by) VALUES ($1, $2, $3, $4)",
            &[env!("CARGO_PKG_VERSION").into(), text.into(), crate::results::utc_now().into(), by.into()],
        )?;
        let rows = e.query("SELECT MAX(id) FROM tune_jobs", &[])?;
        (rows.first().and_then(|r| r[0].int()))
            .ok_or_else(|| Error::invalid("the job was not written"))
    })
}

/// The oldest job of this gemmlab that no worker of `device_model` has finished.
pub fn next_job(e: &mut Engine, device_model: &str) -> Result<Option<Job>> {
    let rows = e.query(
        "SELECT j.id, j.args, j.created_utc FROM tune_jobs j WHERE j.gemmlab = $1 AND NOT EXISTS \
         (SELECT 1 FROM tune_jobs_done d WHERE d.job = j.id AND d.device = $2 AND d.gemmlab = $1) \
         ORDER BY j.id LIMIT 1",
        &[env!("CARGO_PKG_VERSION").into(), device_model.into()],
    )?;
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    let id = r[0].int().unwrap_or(0);
    let args: Vec<String> = serde_json::from_str(r[1].text().unwrap_or("[]"))
        .map_err(|e| Error::invalid(format!("job {id}: its arguments do not read: {e}")))?;
    let created_utc = r[2].text().unwrap_or("").to_string();
    Ok(Some(Job {
        id,
        args,
        created_utc,
    }))
}

/// Records a job finished for a device model (the first worker to finish it says).
pub fn mark_done(
    e: &mut Engine,
    job: i64,
    device_model: &str,
    worker: &str,
    code: i32,
) -> Result<()> {
    e.execute(
        "INSERT INTO tune_jobs_done (job, device, gemmlab, worker, exit_code, done_utc) VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (job, device, gemmlab) DO NOTHING",
        &[
            job.into(),
            device_model.into(),
            env!("CARGO_PKG_VERSION").into(),
            worker.into(),
            i64::from(code).into(),
            crate::results::utc_now().into(),
        ],
    )?;
    Ok(())
}

/// A job's end for one device model: (model, worker, exit code).
pub type Done = (String, String, i64);

/// Every job and, per device model, who finished it with which exit code.
pub fn jobs(url: &Url) -> Result<Vec<(Job, Vec<Done>)>> {
    let mut e = Engine::open(url)?;
    let rows = e.query(
        "SELECT id, args, created_utc FROM tune_jobs WHERE gemmlab = $1 ORDER BY id",
        &[env!("CARGO_PKG_VERSION").into()],
    )?;
    let mut out = Vec::new();
    for r in rows {
        let id = r[0].int().unwrap_or(0);
        let args = serde_json::from_str(r[1].text().unwrap_or("[]")).unwrap_or_default();
        let done = e.query(
            "SELECT device, worker, exit_code FROM tune_jobs_done WHERE job = $1 ORDER BY device",
            &[Value::Int(id)],
        )?;
        let done = (done.iter())
            .map(|d| {
                let t = |i: usize| d[i].text().unwrap_or("").to_string();
                (t(0), t(1), d[2].int().unwrap_or(0))
            })
            .collect();
        let created_utc = r[2].text().unwrap_or("").to_string();
        out.push((
            Job {
                id,
                args,
                created_utc,
            },
            done,
        ));
    }
    Ok(out)
}

/// What `gemmlab worker` is told.
pub struct WorkerOptions {
    pub url: Url,
    /// The device it tunes on, as `--device` takes it.
    pub device: String,
    /// Its model: the device's name, which outcomes are kept under.
    pub device_model: String,
    pub out: PathBuf,
    /// Stop when no job has been waiting this long; None: wait for jobs forever.
    pub idle_exit_s: Option<f64>,
    /// Seconds between looks for a new job.
    pub poll_s: f64,
}

/// What happened to a worker's job.
pub enum WorkerEvent<'a> {
    Started(&'a Job, &'a Path),
    Finished(&'a Job, i32, f64),
    Idle,
}

/// `gemmlab worker`: takes jobs until none comes for `idle_exit_s`; how many it ran.
pub fn work(exe: &Path, o: &WorkerOptions, mut on: impl FnMut(WorkerEvent)) -> Result<usize> {
    let mut e = Engine::open(&o.url)?;
    let worker = format!("{}:{}", crate::util::process::hostname(), o.device);
    let store = o.url.as_arg();
    let (mut ran, mut idle_since) = (0, Instant::now());
    loop {
        let Some(job) = next_job(&mut e, &o.device_model)? else {
            if o.idle_exit_s
                .is_some_and(|s| idle_since.elapsed().as_secs_f64() >= s)
            {
                return Ok(ran);
            }
            on(WorkerEvent::Idle);
            std::thread::sleep(Duration::from_secs_f64(o.poll_s));
            continue;
        };
        let out = o
            .out
            .join(format!("job-{}", job.id))
            .join(device_slug(&o.device));
        on(WorkerEvent::Started(&job, &out));
        let t = Instant::now();
        let mut child = spawn_tune(exe, &job.args, &o.device, (&store, &out), &[])?;
        let code = child
            .wait()
            .map_err(|err| Error::invalid(format!("job {}: {err}", job.id)))?
            .code()
            .unwrap_or(-1);
        mark_done(&mut e, job.id, &o.device_model, &worker, code)?;
        on(WorkerEvent::Finished(&job, code, t.elapsed().as_secs_f64()));
        ran += 1;
        idle_since = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_process_gets_its_own_device_store_and_output() {
        let args = s(&[
            "--kernels",
            "gemm2",
            "--devices",
            "a,b",
            "--out=x",
            "--store",
            "s.sqlite",
            "--publish",
            "--sizes",
            "256",
        ]);
        assert_eq!(
            inherited_args(&args),
            s(&["--kernels", "gemm2", "--sizes", "256"])
        );
        // A prefix of another option is not that option.
        assert_eq!(
            inherited_args(&s(&["--device-x", "1"])),
            s(&["--device-x", "1"])
        );
    }

    #[test]
    fn jobs_are_done_once_per_device_model() {
        let dir = std::env::temp_dir().join(format!("gemmlab-jobs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let url = Url::Sqlite(dir.join("s.sqlite"));
        let first = publish(&url, &s(&["--kernels", "gemm2", "--publish"])).unwrap();
        let second = publish(&url, &s(&["--kernels", "gemm3"])).unwrap();
        let mut e = Engine::open(&url).unwrap();
        let j = next_job(&mut e, "GPU A").unwrap().unwrap();
        assert_eq!((j.id, j.args.clone()), (first, s(&["--kernels", "gemm2"])));
        mark_done(&mut e, first, "GPU A", "w1", 0).unwrap();
        mark_done(&mut e, first, "GPU A", "w2", 0).unwrap();
        assert_eq!(next_job(&mut e, "GPU A").unwrap().unwrap().id, second);
        // Another model has both still to do.
        assert_eq!(next_job(&mut e, "GPU B").unwrap().unwrap().id, first);
        mark_done(&mut e, second, "GPU A", "w1", 2).unwrap();
        assert!(next_job(&mut e, "GPU A").unwrap().is_none());
        let all = jobs(&url).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].1, vec![("GPU A".to_string(), "w1".to_string(), 0)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
