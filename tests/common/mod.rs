//! Shared test helpers: device selection for tests and visible skips.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::Output;

use gemmlab::{open_spec, AnyBackend, Toolchain};

/// `GEMMLAB_REQUIRE_CUDA=1` turns a CUDA skip into a failure (how the tests run on the GPU machine).
pub fn cuda_required() -> bool {
    std::env::var("GEMMLAB_REQUIRE_CUDA").is_ok_and(|v| v == "1")
}

/// Written straight to the process's stderr, past libtest's capture, so a skip is always seen.
pub fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// The OpenCL device the tests use: `GEMMLAB_TEST_DEVICE` or the best OpenCL device
/// (a GPU before PoCL). OpenCL must be present: CI installs PoCL.
pub fn opencl() -> AnyBackend {
    let spec = std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into());
    match open_spec(&spec, &[Toolchain::OpenCl]) {
        Ok(mut v) if !v.is_empty() => v.remove(0),
        Ok(_) => panic!("no OpenCL device for '{spec}'"),
        Err(e) => panic!("OpenCL device '{spec}' could not be opened: {e}"),
    }
}

/// The CUDA device, or a visible skip (a failure under GEMMLAB_REQUIRE_CUDA=1).
pub fn cuda(test: &str) -> Option<AnyBackend> {
    match open_spec("cuda", &[Toolchain::Cuda]) {
        Ok(mut v) if !v.is_empty() => Some(v.remove(0)),
        Ok(_) => skip(test, "no CUDA device"),
        Err(e) => skip(test, &e.to_string()),
    }
}

fn skip(test: &str, why: &str) -> Option<AnyBackend> {
    if cuda_required() {
        panic!("GEMMLAB_REQUIRE_CUDA=1 but CUDA is unavailable: {why}");
    }
    say(&format!("SKIPPED {test}: {why}"));
    None
}

/// Deterministic inputs in [-1, 1), never all zeros.
pub fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// A fresh folder under the system's temporary directory for one test.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemmlab-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A finished command's stdout and stderr, for assertion messages.
pub fn output_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
