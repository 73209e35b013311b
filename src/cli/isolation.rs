//! `--in-process` and `--kernel-timeout` of the measuring commands (`compare`,
//! `sweep`): by default each runs as a supervisor and a child (see
//! `gemmlab::experiment::isolate`), so a kernel that crashes, faults or hangs
//! costs its row, not the run.

use std::path::Path;

use clap::Args;

use gemmlab::experiment::isolate::{self, Supervision};
use gemmlab::{Error, Result};

#[derive(Args, Debug, Clone)]
pub struct IsolationArgs {
    /// Measure in this process, without a supervisor: a kernel that hangs then hangs
    /// the run, and one that crashes the process ends it (the rows written so far are kept).
    #[arg(long)]
    pub in_process: bool,
    /// Seconds a kernel's compile and first checked run may take before its process is
    /// stopped and its row is "timed out" (the run goes on in a fresh process).
    #[arg(long, value_name = "SECONDS", default_value_t = isolate::DEFAULT_LIMIT_S)]
    pub kernel_timeout: f64,
    /// Run every kernel's checked run under compute-sanitizer's memcheck (CUDA; not
    /// timed) and put its report in the kernel's row.
    #[arg(long)]
    pub sanitize: bool,
}

impl IsolationArgs {
    /// In a supervised child or with `--in-process`: None, measure here. Otherwise
    /// this process becomes the supervisor of a child running the same command,
    /// and what comes back is the run's outcome.
    pub fn supervise(&self, out: &Path, seed: Option<u64>) -> Result<Option<super::Outcome>> {
        if self.kernel_timeout.is_nan() || self.kernel_timeout <= 0.0 {
            return Err(Error::invalid(
                "--kernel-timeout must be a positive number of seconds",
            ));
        }
        if isolate::is_child() {
            gemmlab::util::process::die_with_parent();
            return Ok(None);
        }
        if self.in_process && self.sanitize {
            return Err(Error::invalid(
                "--sanitize runs the kernels in a child process under compute-sanitizer: drop --in-process",
            ));
        }
        if self.in_process {
            return Ok(None);
        }
        let sanitizer = match self.sanitize {
            true => Some(isolate::find_sanitizer().ok_or_else(|| {
                Error::invalid("--sanitize: compute-sanitizer is not on the PATH nor in /usr/local/cuda/bin (it comes with the CUDA toolkit)")
            })?),
            false => None,
        };
        let how = Supervision {
            out,
            limit_s: self.kernel_timeout,
            seed: super::compare::seed_or_random(seed),
            sanitizer,
        };
        let code = isolate::supervise(&how)?;
        if code != 0 {
            std::process::exit(code);
        }
        Ok(Some(super::Outcome::from_measurements(&[])))
    }
}
