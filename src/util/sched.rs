//! Compiling shares the host's cores with the thread that measures. Builds run
//! at a lower priority, so that the measuring thread, woken when the device
//! finishes, gets a core at once instead of after a build's time slice.

/// How much lower than the process a build thread or process runs (nice steps).
pub const BUILD_NICENESS: i32 = 5;

/// Lowers the calling thread's priority by `BUILD_NICENESS` (Linux, where the
/// nice value is a thread's); elsewhere, or where the system refuses, nothing.
pub fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, (now + BUILD_NICENESS).min(19));
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lowered_thread_is_nicer_and_others_are_not() {
        let nice = || unsafe {
            libc::getpriority(
                libc::PRIO_PROCESS,
                libc::syscall(libc::SYS_gettid) as libc::id_t,
            )
        };
        let before = nice();
        let inside = std::thread::spawn(move || {
            super::lower_this_thread();
            nice()
        })
        .join()
        .unwrap();
        assert_eq!(inside, (before + super::BUILD_NICENESS).min(19));
        assert_eq!(nice(), before);
    }
}
