//! Compilers that print to the process's stderr. NVIDIA's OpenCL compiler runs
//! inside the process and writes "1 warning generated." straight to file
//! descriptor 2, without the warning (that is in the build log): on a suite of
//! builds, dozens of bare lines over the progress display. Builds run with
//! descriptor 2 pointed at a temporary file; what a compiler says there comes
//! back to the build, and anything else that was written meanwhile (another
//! thread's message) is passed on to the real stderr afterwards.

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

/// The redirection shared by builds that overlap (threads building at once):
/// how many are inside it, the saved descriptor, the file.
struct Redirect {
    inside: usize,
    saved: i32,
    file: Option<std::fs::File>,
}

static REDIRECT: Mutex<Redirect> = Mutex::new(Redirect {
    inside: 0,
    saved: -1,
    file: None,
});

/// Whether a line of stderr is a compiler's count of its diagnostics.
pub fn is_chatter(line: &str) -> bool {
    // "1 warning generated.", "2 warnings and 1 error generated."
    let t = line.trim();
    let first = t.split(' ').next().unwrap_or_default();
    first.parse::<u32>().is_ok()
        && t.ends_with(" generated.")
        && (t.contains(" warning") || t.contains(" error"))
}

fn enter() {
    let Ok(mut r) = REDIRECT.lock() else { return };
    r.inside += 1;
    if r.inside > 1 {
        return;
    }
    let path = std::env::temp_dir().join(format!("gemmlab-stderr-{}", std::process::id()));
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
    else {
        return;
    };
    let _ = std::fs::remove_file(&path);
    let _ = std::io::stderr().flush();
    // SAFETY: dup and dup2 on descriptor 2 and a file this function owns; the
    // saved descriptor is restored by `leave`.
    unsafe {
        use std::os::fd::AsRawFd;
        let saved = libc::dup(2);
        if saved < 0 {
            return;
        }
        if libc::dup2(file.as_raw_fd(), 2) < 0 {
            libc::close(saved);
            return;
        }
        r.saved = saved;
    }
    r.file = Some(file);
}

/// Leaves the redirection; the last one out restores stderr and gets the chatter.
fn leave() -> Vec<String> {
    let Ok(mut r) = REDIRECT.lock() else {
        return Vec::new();
    };
    r.inside = r.inside.saturating_sub(1);
    if r.inside > 0 {
        return Vec::new();
    }
    let Some(mut file) = r.file.take() else {
        return Vec::new();
    };
    // SAFETY: puts back the descriptor `enter` saved, then closes the copy.
    unsafe {
        libc::dup2(r.saved, 2);
        libc::close(r.saved);
    }
    r.saved = -1;
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    let (chatter, other): (Vec<&str>, Vec<&str>) = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .partition(|l| is_chatter(l));
    if !other.is_empty() {
        let mut err = std::io::stderr();
        for l in other {
            let _ = writeln!(err, "{l}");
        }
    }
    chatter.into_iter().map(str::to_string).collect()
}

/// Runs `f` (a build) with stderr captured; returns what it gave and the
/// compiler's count lines it printed.
pub fn stderr_of<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    enter();
    let out = f();
    (out, leave())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_chatter_and_other_lines_are_not() {
        assert!(is_chatter("1 warning generated."));
        assert!(is_chatter("12 warnings generated."));
        assert!(is_chatter("2 warnings and 1 error generated."));
        assert!(!is_chatter("warning: unused variable 'x'"));
        assert!(!is_chatter("note: 3 kernels generated."));
    }

    #[test]
    fn a_build_s_chatter_comes_back_and_stderr_is_restored() {
        let line = b"1 warning generated.\n";
        let (v, chatter) = stderr_of(|| {
            // SAFETY: a write of a byte string to descriptor 2.
            unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
            7
        });
        assert_eq!(v, 7);
        assert_eq!(chatter, vec!["1 warning generated.".to_string()]);
        // Restored: the redirection is gone.
        assert_eq!(REDIRECT.lock().map(|r| r.inside).unwrap_or(1), 0);
    }
}
