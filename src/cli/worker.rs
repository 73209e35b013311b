//! `gemmlab worker`: a tuning process any scheduler can start (a Slurm job
//! array, a Kubernetes Job, a loop over ssh): it takes the jobs `tune --publish`
//! wrote into a shared store that its device model has not finished, runs each,
//! and repeats. Workers of one model split a job's points between them.

use std::path::PathBuf;

use clap::Args;

use gemmlab::results::engine::Url;
use gemmlab::tune::fleet::{self, WorkerEvent, WorkerOptions};
use gemmlab::{Backend, Error, Result, Toolchain};

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The shared store the jobs are in: an SQLite file (sqlite:PATH, *.sqlite) or a
    /// PostgreSQL URL (postgres://user@host/db).
    #[arg(long)]
    pub store: String,
    /// The device to tune on, as `tune --device` takes it (cuda:1, h200, opencl:1:0).
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Where each job's results go: OUT/job-N/<device>/ (its rows, log and search traces).
    #[arg(long, default_value = "gemmlab-results/worker")]
    pub out: PathBuf,
    /// Stop after this many seconds with no job to take (default: wait until stopped).
    #[arg(long, value_name = "SECONDS")]
    pub idle_exit: Option<f64>,
    /// Seconds between looks for a new job.
    #[arg(long, default_value_t = 10.0)]
    pub poll: f64,
}

pub fn run(args: WorkerArgs) -> Result<()> {
    let url = Url::parse(&args.store).ok_or_else(|| {
        Error::invalid(format!(
            "--store {}: a worker needs a shared store, an SQLite file (sqlite:PATH or *.sqlite) or a PostgreSQL URL",
            args.store
        ))
    })?;
    if !(args.poll.is_finite() && args.poll > 0.0) {
        return Err(Error::invalid(format!(
            "--poll {}: a number of seconds above 0",
            args.poll
        )));
    }
    // The device's model names whose outcomes it serves; the device is opened
    // again by each job's own process.
    let model = gemmlab::open_spec(&args.device, &Toolchain::ALL)?
        .first()
        .map(|b| b.info().name.clone())
        .ok_or_else(|| Error::invalid(format!("no device matches '{}'", args.device)))?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::invalid(format!("where this gemmlab is: {e}")))?;
    let o = WorkerOptions {
        url,
        device: args.device.clone(),
        device_model: model.clone(),
        out: args.out.clone(),
        idle_exit_s: args.idle_exit,
        poll_s: args.poll,
    };
    eprintln!(
        "gemmlab worker: {} ({model}), jobs from {}",
        args.device,
        o.url.describe()
    );
    let mut said_idle = false;
    let ran = fleet::work(&exe, &o, |ev| match ev {
        WorkerEvent::Started(job, out) => {
            said_idle = false;
            eprintln!(
                "job {}: tune {} -> {}",
                job.id,
                job.args.join(" "),
                out.display()
            );
        }
        WorkerEvent::Finished(job, code, secs) => {
            eprintln!("job {}: exit {code} after {secs:.1} s", job.id);
        }
        WorkerEvent::Idle if !said_idle => {
            said_idle = true;
            eprintln!("no job for {model}: waiting");
        }
        WorkerEvent::Idle => {}
    })?;
    eprintln!("gemmlab worker: {ran} job(s) run; none left for {model}");
    Ok(())
}
