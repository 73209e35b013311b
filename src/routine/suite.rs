//! A suite of GEMM calls: the shapes (and layouts and transposes) `gemmlab tune
//! --suite` tunes the routine for and `gemmlab gemm --suite` measures it on.
//!
//! One call per line: `M x N x K` (or `N` for a cube), then optionally the layout
//! (`col` or `row`, default col) and the transposes of A and B (`NN`, `NT`, `TN`
//! or `TT`, default NN). `#` starts a comment.
//!
//! ```text
//! # shape          layout  transposes
//! 1024x1024x32768
//! 4097x33x2049     row     TN
//! ```

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::gemm::problem::{Layout, Trans};

/// One call of a suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteCall {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub layout: Layout,
    pub trans_a: Trans,
    pub trans_b: Trans,
    /// Its line in the file.
    pub line: usize,
}

impl SuiteCall {
    pub fn describe(&self) -> String {
        format!(
            "{}x{}x{} {} {}{}",
            self.m,
            self.n,
            self.k,
            self.layout.as_str(),
            self.trans_a.letter(),
            self.trans_b.letter()
        )
    }
}

/// The suite committed with gemmlab: the issue's sixteen shapes, and a subset in
/// row-major and in the four transpose cases.
pub const DEFAULT_SUITE: &str = "suites/routine.txt";

#[derive(Debug, Clone)]
pub struct Suite {
    pub path: PathBuf,
    pub calls: Vec<SuiteCall>,
}

impl Suite {
    pub fn load(path: &Path) -> Result<Suite> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid(format!("suite {}: {e}", path.display())))?;
        Suite::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Suite> {
        let mut calls = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let at = |msg: String| Error::invalid(format!("{}:{line}: {msg}", path.display()));
            let words: Vec<&str> = body.split_whitespace().collect();
            if words.len() > 3 {
                return Err(at(format!(
                    "'{body}': expected a shape, then optionally a layout (col, row) and transposes (NN, NT, TN, TT)"
                )));
            }
            let (m, n, k) = shape(words[0]).map_err(at)?;
            let layout = match words.get(1) {
                Some(w) => Layout::parse(w).map_err(|e| at(e.to_string()))?,
                None => Layout::ColMajor,
            };
            let (trans_a, trans_b) = match words.get(2) {
                Some(w) => transposes(w).map_err(at)?,
                None => (Trans::N, Trans::N),
            };
            calls.push(SuiteCall {
                m,
                n,
                k,
                layout,
                trans_a,
                trans_b,
                line,
            });
        }
        if calls.is_empty() {
            return Err(Error::invalid(format!(
                "suite {}: no calls (one per line: MxNxK [col|row] [NN|NT|TN|TT])",
                path.display()
            )));
        }
        Ok(Suite {
            path: path.to_path_buf(),
            calls,
        })
    }
}

fn shape(s: &str) -> std::result::Result<(usize, usize, usize), String> {
    let bad = || format!("'{s}': expected a size N or MxNxK with positive numbers");
    let v: Vec<usize> = s
        .split(['x', 'X'])
        .map(|p| p.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<std::result::Result<_, _>>()?;
    match v[..] {
        [n] if n > 0 => Ok((n, n, n)),
        [m, n, k] if m > 0 && n > 0 && k > 0 => Ok((m, n, k)),
        _ => Err(bad()),
    }
}

pub(crate) fn transposes(s: &str) -> std::result::Result<(Trans, Trans), String> {
    let c: Vec<char> = s.chars().collect();
    let one = |c: char| Trans::parse(&c.to_string()).map_err(|e| e.to_string());
    match c[..] {
        [a, b] => Ok((one(a)?, one(b)?)),
        _ => Err(format!(
            "'{s}': expected the transposes of A and B as two letters: NN, NT, TN or TT"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_shapes_layouts_and_transposes_with_comments() {
        let s = Suite::parse(
            Path::new("s.txt"),
            "# a comment\n\n1024\n128x4096x4096 row\n4097x33x2049 col TN # thin\n",
        )
        .unwrap();
        assert_eq!(s.calls.len(), 3);
        assert_eq!((s.calls[0].m, s.calls[0].k), (1024, 1024));
        assert_eq!(s.calls[1].layout, Layout::RowMajor);
        assert_eq!(s.calls[2].trans_a, Trans::T);
        assert_eq!(s.calls[2].trans_b, Trans::N);
        assert_eq!(s.calls[2].line, 5);
        assert_eq!(s.calls[2].describe(), "4097x33x2049 col TN");
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        for (text, want) in [
            ("1024\n10x0x5\n", "s.txt:2:"),
            ("12xx3\n", "s.txt:1:"),
            ("64 diagonal\n", "s.txt:1:"),
            ("64 col NX\n", "s.txt:1:"),
            ("64 col NN extra\n", "s.txt:1:"),
        ] {
            let e = Suite::parse(Path::new("s.txt"), text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = Suite::parse(Path::new("s.txt"), "# nothing\n").unwrap_err();
        assert!(e.to_string().contains("no calls"), "{e}");
    }

    #[test]
    fn the_committed_suite_reads() {
        let load = |name: &str| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("suites")
                .join(name);
            Suite::load(&path).unwrap()
        };
        let s = load("routine.txt");
        assert!(s.calls.len() >= 16, "{}", s.calls.len());
        // The coverage grid tunes other calls than the default suite.
        let mut tuned: Vec<String> = s.calls.iter().map(SuiteCall::describe).collect();
        let grid = load("grid.txt");
        assert!(grid.calls.len() >= 24, "{}", grid.calls.len());
        assert!(grid.calls.iter().all(|c| !tuned.contains(&c.describe())));
        tuned.extend(grid.calls.iter().map(SuiteCall::describe));
        // The held-out suites read, and share no call with the tuned ones.
        for name in [
            "holdout.txt",
            "holdout-2.txt",
            "holdout-3.txt",
            "holdout-4.txt",
            "holdout-5.txt",
        ] {
            let h = load(name);
            assert!(h.calls.len() >= 20, "{name}");
            assert!(
                h.calls.iter().all(|c| !tuned.contains(&c.describe())),
                "{name}"
            );
        }
        // The thin calls' suites: tuned for nowhere either, and apart.
        let thin = load("thin.txt");
        assert!(thin.calls.len() >= 12);
        assert!(thin.calls.iter().all(|c| !tuned.contains(&c.describe())));
        let gemv = load("gemv.txt");
        assert!(gemv.calls.len() >= 10);
        for c in &gemv.calls {
            assert!(!tuned.contains(&c.describe()), "{}", c.describe());
            assert!(!thin.calls.contains(c), "{}", c.describe());
        }
        let thin2 = load("thin-2.txt");
        assert!(thin2.calls.len() >= 12);
        for c in &thin2.calls {
            assert!(!tuned.contains(&c.describe()), "{}", c.describe());
            assert!(
                !thin.calls.contains(c) && !gemv.calls.contains(c),
                "{}",
                c.describe()
            );
        }
        let thin3 = load("thin-3.txt");
        assert!(thin3.calls.len() >= 10);
        for c in &thin3.calls {
            assert!(!tuned.contains(&c.describe()), "{}", c.describe());
            let elsewhere = [&thin, &gemv, &thin2].iter().any(|s| s.calls.contains(c));
            assert!(!elsewhere, "{}", c.describe());
        }
        let thin_k = load("thin-k.txt");
        assert!(thin_k.calls.len() >= 10);
        for c in &thin_k.calls {
            assert!(!tuned.contains(&c.describe()), "{}", c.describe());
            let elsewhere = [&thin, &gemv, &thin2, &thin3]
                .iter()
                .any(|s| s.calls.contains(c));
            assert!(!elsewhere, "{}", c.describe());
        }
    }
}
