//! `gemmlab tune --devices` and `--publish`: the tuning spread over several
//! processes sharing one store (`gemmlab::tune::fleet` does the work).

use gemmlab::results::engine::Url;
use gemmlab::tune::fleet;
use gemmlab::{Error, Result};

use super::tune::TuneArgs;

/// The arguments after `gemmlab tune`, as the user gave them.
fn tune_args() -> Vec<String> {
    let all: Vec<String> = std::env::args().collect();
    let at = all
        .iter()
        .position(|a| a == "tune")
        .map_or(all.len(), |i| i + 1);
    all[at..].to_vec()
}

fn shared(args: &TuneArgs, what: &str) -> Result<Url> {
    Url::parse(&args.store).ok_or_else(|| {
        Error::invalid(format!(
            "{what} needs a store every process can share: an SQLite file (--store {}) or a PostgreSQL URL, not the folder {}",
            gemmlab::tune::store::DEFAULT_STORE,
            args.store
        ))
    })
}

/// `--publish`: the tuning as a job for `gemmlab worker`s.
pub fn publish(args: &TuneArgs) -> Result<super::Outcome> {
    let url = shared(args, "--publish")?;
    let id = fleet::publish(&url, &tune_args())?;
    println!(
        "job {id} published to {}: start a worker per GPU, e.g.\n  gemmlab worker --store {} --device cuda:0",
        url.describe(),
        url.describe()
    );
    Ok(super::Outcome::from_measurements(&[]))
}

/// `--devices A,B,...`: one `gemmlab tune` per device, together, on one store.
pub fn devices(args: &TuneArgs) -> Result<super::Outcome> {
    let url = shared(args, "--devices")?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::invalid(format!("where this gemmlab is: {e}")))?;
    eprintln!(
        "{} processes, one per device, sharing {}; each one's log: {}/<device>/tune.log",
        args.devices.len(),
        url.describe(),
        args.out.display()
    );
    let bar = indicatif::ProgressBar::new_spinner();
    let runs = fleet::run_devices(
        &exe,
        &tune_args(),
        &args.devices,
        &args.store,
        &args.out,
        |runs| {
            let left: Vec<&str> = (runs.iter())
                .filter(|r| r.exit_code.is_none())
                .map(|r| r.device.as_str())
                .collect();
            bar.set_message(format!("tuning on {}", left.join(", ")));
            bar.tick();
        },
    )?;
    bar.finish_and_clear();
    let mut failed = 0;
    for r in &runs {
        let code = r.exit_code.unwrap_or(-1);
        failed += usize::from(code != 0);
        println!(
            "{}: exit {code} after {:.1} s; rows in {}, log {}",
            r.device,
            r.seconds,
            r.out.display(),
            r.log.display()
        );
    }
    // Who measured what, per device model (the names the processes gave the store).
    let models = fleet::models(&url)?;
    for m in models {
        for (worker, n) in fleet::measured_by(&url, &m)? {
            println!("{m}: {worker} measured {n} points");
        }
    }
    Ok(super::Outcome::verdict(
        failed,
        format!(
            "{failed} of the {} processes failed (see their logs)",
            runs.len()
        ),
    ))
}
