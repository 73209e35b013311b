//! What a supervisor and its child process need on both sides: the time, the
//! signal a child died of, and a child that dies with its supervisor.

use std::process::ExitStatus;
use std::time::{SystemTime, UNIX_EPOCH};

/// Unix seconds now.
/// This host's name (empty where the system does not say).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Called first in a supervised child: it dies when its supervisor dies (killed,
/// or a terminal closed) instead of measuring on as an orphan.
pub fn die_with_parent() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_PDEATHSIG takes one integer argument, a signal number.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        }
        // A supervisor that died before the call left this process to init: no signal
        // will come, so it goes now.
        if std::os::unix::process::parent_id() == 1 {
            std::process::exit(1);
        }
    }
}

/// The signal that ended a process, if one did.
#[cfg(unix)]
pub fn signal_of(status: &ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

#[cfg(not(unix))]
pub fn signal_of(_: &ExitStatus) -> Option<i32> {
    None
}

/// "signal 11 (SIGSEGV)".
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        _ => return format!("signal {sig}"),
    };
    format!("signal {sig} ({name})")
}
