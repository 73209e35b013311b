pub mod accuracy;
pub mod atlas;
pub mod attribute;
pub mod build;
pub mod compare;
pub mod crossover;
pub mod db;
pub mod devices;
pub mod isolation;
pub mod nvrtc;
pub mod ptx;
pub mod report;
pub mod routine;
pub mod spec;
pub mod store;
pub mod sweep;
pub mod tune;
pub mod tune_fleet;
pub mod tune_offline;
pub mod tune_suite;
pub mod worker;

use std::sync::Mutex;

use gemmlab::gemm::driver::Status;
use gemmlab::results::Measurement;

/// Toolchains asked for on the command line that could not run here (clang
/// missing, say) while the others ran: the command still exits 1 for them.
static MISSING: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records a toolchain that was asked for and cannot run, and says so now.
pub fn missing_toolchain(e: &gemmlab::Error) {
    eprintln!("error: {e} (the other toolchains run; the exit status will be 1)");
    if let Ok(mut m) = MISSING.lock() {
        m.push(e.to_string());
    }
}

/// The toolchains recorded by [`missing_toolchain`].
pub fn missing_toolchains() -> Vec<String> {
    MISSING.lock().map(|m| m.clone()).unwrap_or_default()
}

/// What a measuring command did, for its exit status: every measurement ok or not
/// applicable (a toolchain that cannot run a kernel, with its reason) exits 0; any
/// invalid configuration, compile or launch error, out-of-memory or wrong result
/// exits 1, after everything was printed and written.
pub struct Outcome {
    failed: Vec<(&'static str, usize)>,
    /// Said instead of "not every measurement succeeded" (a check's verdict).
    verdict: Option<String>,
}

impl Outcome {
    pub fn from_measurements(all: &[Measurement]) -> Outcome {
        let mut failed: Vec<(&'static str, usize)> = Vec::new();
        for m in all {
            if matches!(m.status, Status::Ok | Status::Unavailable(_)) {
                continue;
            }
            let label = m.status.label();
            match failed.iter_mut().find(|(l, _)| *l == label) {
                Some((_, n)) => *n += 1,
                None => failed.push((label, 1)),
            }
        }
        Outcome {
            failed,
            verdict: None,
        }
    }

    /// Exit 1 with `line` where `count` is above 0 (a check that found something).
    pub fn verdict(count: usize, line: String) -> Outcome {
        Outcome {
            failed: if count > 0 {
                vec![("found", count)]
            } else {
                Vec::new()
            },
            verdict: Some(line),
        }
    }

    /// Adds `count` failures under `label`.
    pub fn add_failures(&mut self, count: usize, label: &'static str) {
        self.failed.push((label, count));
    }

    /// `count` results that failed, under `label`.
    pub fn from_failures(count: usize, label: &'static str) -> Outcome {
        Outcome {
            failed: if count > 0 {
                vec![(label, count)]
            } else {
                Vec::new()
            },
            verdict: None,
        }
    }

    /// The line to print and the exit status, or None for exit 0: 1 for a
    /// failed measurement, 2 where a user's spec does not fit its kernel (a
    /// usage error found at the kernel's signature).
    pub fn failure(&self) -> Option<(String, i32)> {
        if self.failed.is_empty() {
            return None;
        }
        if let Some(v) = &self.verdict {
            return Some((v.clone(), 1));
        }
        let bad_args = Status::BadArguments(String::new()).label();
        let code = if self.failed.iter().any(|(l, _)| *l == bad_args) {
            2
        } else {
            1
        };
        let parts: Vec<String> = self
            .failed
            .iter()
            .map(|(label, n)| format!("{n} {label}"))
            .collect();
        Some((
            format!(
                "not every measurement succeeded: {} (see the table; reasons are in the results)",
                parts.join(", ")
            ),
            code,
        ))
    }
}
