//! Progress of long work: an indicatif bar with a ticking spinner on a terminal,
//! plain time-stamped lines on stderr otherwise (CI logs, `| tee`, the GPU
//! machine), so every step that can take seconds (inputs, reference, compile,
//! each size) is visible either way.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    plain: bool,
    started: Instant,
}

impl Progress {
    /// A bar of `len` steps: drawn on a terminal, plain lines elsewhere.
    pub fn new(len: u64) -> Progress {
        Progress::with_mode(len, !std::io::stderr().is_terminal())
    }

    /// Says nothing at all (tests, library callers that print their own).
    pub fn hidden() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            plain: false,
            started: Instant::now(),
        }
    }

    fn with_mode(len: u64, plain: bool) -> Progress {
        let bar = if plain {
            ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
        } else {
            let pb = ProgressBar::new(len);
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} {msg}",
            ) {
                pb.set_style(style.progress_chars("=> "));
            }
            pb.enable_steady_tick(Duration::from_millis(120));
            pb
        };
        Progress {
            bar,
            plain,
            started: Instant::now(),
        }
    }

    /// The step now under way.
    pub fn set_message(&self, msg: impl Into<String>) {
        let msg = msg.into();
        if self.plain {
            let t = self.started.elapsed().as_secs();
            eprintln!(
                "[{:02}:{:02}:{:02} {}/{}] {msg}",
                t / 3600,
                t / 60 % 60,
                t % 60,
                self.bar.position(),
                self.bar.length().unwrap_or(0)
            );
        } else {
            self.bar.set_message(msg);
        }
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Runs `f` with the bar out of the way (for printing tables).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_mode_counts_steps_without_drawing() {
        let p = Progress::with_mode(3, true);
        p.set_message("inputs");
        p.inc(2);
        assert_eq!(p.bar.position(), 2);
        assert!(p.bar.is_hidden());
        p.finish_and_clear();
    }
}
