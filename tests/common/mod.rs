//! Shared test helpers: device selection for tests and visible skips.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::Output;

use gemmlab::{open_spec, AnyBackend, Toolchain};

/// The gemmlab binary under test: cargo's, or `GEMMLAB_BIN` where the test
/// executable was carried to another machine (the GPU batches) without its build tree.
pub fn gemmlab_bin() -> PathBuf {
    std::env::var_os("GEMMLAB_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_gemmlab")),
        PathBuf::from,
    )
}

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

/// This build's gemmlab run with `args`, finished.
pub fn run_gemmlab(args: &[&str]) -> Output {
    std::process::Command::new(gemmlab_bin())
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

/// The README and every page of the book under docs/src, in order.
pub fn doc_pages() -> Vec<PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut md: Vec<PathBuf> = std::fs::read_dir(root.join("docs/src"))
        .expect("docs/src exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    md.sort();
    md.insert(0, root.join("README.md"));
    md
}

/// Writes the README's own-kernel example (vadd.cl, vadd.cu, vadd.toml, as a
/// reader would copy them out of it) into `dir`.
pub fn write_readme_vadd(dir: &std::path::Path) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let part = &readme[readme.find("## Your own kernel").expect("the section")..];
    for (file, fence) in [
        ("vadd.cl", "```c\n"),
        ("vadd.cu", "```cuda\n"),
        ("vadd.toml", "```toml\n"),
    ] {
        let start = part.find(fence).expect(fence) + fence.len();
        let end = start + part[start..].find("```").expect("the fence's end");
        std::fs::write(dir.join(file), &part[start..end]).expect("a writable folder");
    }
}

/// A finished command's stdout and stderr, for assertion messages.
pub fn output_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `spec` (a SIMT kernel) at small tiles that keep PoCL quick, with the GPU's
/// structure (warps of 32 lanes, 4-wide chunks): 32 x 32 blocks of 16 x 32 warp
/// tiles, 4 x 4 thread tiles, BK 8; `extra` replaces or adds parameters.
/// A 96 x 48 SIMT tile under stream-K: both tiles' copies end in a partial round
/// (96 x 16 and 48 x 16 floats for 288 work-items), and tiles of C are shared.
pub const NARROW_STREAM_K: [(&str, i64); 6] = [
    ("BM", 96),
    ("BN", 48),
    ("WM", 32),
    ("WN", 16),
    ("BK", 16),
    ("STREAMK", 2),
];

pub fn small_simt_config(
    spec: &gemmlab::kernel::builtin::KernelSpec,
    extra: &[(&str, i64)],
) -> gemmlab::kernel::builtin::Config {
    let mut d: Vec<(String, i64)> = [
        ("BM", 32),
        ("BN", 32),
        ("WM", 16),
        ("WN", 32),
        ("TM", 4),
        ("TN", 4),
        ("BK", 8),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), *v))
    .collect();
    for (n, v) in extra {
        d.retain(|(m, _)| m != n);
        d.push((n.to_string(), *v));
    }
    spec.config(&d)
        .unwrap_or_else(|e| panic!("{} {extra:?}: {e}", spec.id))
}

/// One checked run of `spec` at `config` with `hints` on `ops` against the full
/// f64 reference: the reason it failed, if it did.
pub fn check_kernel(
    session: &mut gemmlab::gemm::driver::Session,
    spec: &gemmlab::kernel::builtin::KernelSpec,
    config: &gemmlab::kernel::builtin::Config,
    hints: &gemmlab::kernel::builtin::Hints,
    ops: &gemmlab::gemm::Operands,
) -> Result<(), String> {
    let reference = gemmlab::gemm::Reference::cpu(ops);
    let a = gemmlab::gemm::driver::prepare(session, spec, config, hints, ops, &reference, false);
    match a.prepared {
        Some(p) => {
            p.release(session);
            Ok(())
        }
        None => Err(format!(
            "{} {} {} on {}: {}",
            spec.id,
            config.describe(),
            hints.describe(false),
            ops.problem.describe(),
            a.status.reason().unwrap_or("failed")
        )),
    }
}

/// Whether a stream-K launch (`per_unit` work-groups per compute unit of
/// `units`) over `tiles` tiles of C, each `k_tiles` deep, gives some tile to more
/// than one work-group, so that its partial sums are added by the last: the
/// kernel's grid as `gemm::stage` sizes it.
pub fn stream_k_shares_a_tile(units: usize, tiles: usize, k_tiles: usize, per_unit: usize) -> bool {
    let total = tiles * k_tiles;
    let groups = (per_unit * units).min(total).max(1);
    (1..groups).any(|b| (b * total / groups) % k_tiles != 0)
}

/// The BLAS calls of one size: both layouts and the four transpose cases, tight
/// and 16-byte aligned; then padded leading dimensions and offsets that break the
/// alignment of each operand in turn, with alpha and beta.
pub fn blas_calls(m: usize, n: usize, k: usize) -> Vec<gemmlab::gemm::problem::Problem> {
    use gemmlab::gemm::problem::{Layout, Problem, Trans};
    let mut out = Vec::new();
    for layout in [Layout::ColMajor, Layout::RowMajor] {
        for trans_a in [Trans::N, Trans::T] {
            for trans_b in [Trans::N, Trans::T] {
                out.push(
                    Problem {
                        layout,
                        trans_a,
                        trans_b,
                        ..Problem::plain(m, n, k)
                    }
                    .tight(),
                );
            }
        }
    }
    for (i, (offsets, pads)) in [
        ((0, 0, 0), (4, 8, 4)),
        ((1, 0, 0), (3, 0, 0)),
        ((0, 2, 0), (0, 1, 0)),
        ((0, 0, 3), (0, 0, 5)),
    ]
    .into_iter()
    .enumerate()
    {
        let mut p = Problem {
            trans_a: if i % 2 == 0 { Trans::N } else { Trans::T },
            alpha: 1.5,
            beta: if i == 0 { 0.0 } else { -0.5 },
            ..Problem::plain(m, n, k)
        }
        .tight();
        (p.a_offset, p.b_offset, p.c_offset) = offsets;
        p.lda += pads.0;
        p.ldb += pads.1;
        p.ldc += pads.2;
        out.push(p);
    }
    out
}

/// The published configuration and `hints`, or, where a switch in `hints` means
/// nothing there (a constraint involving it fails: `CP_CA` without `ASYNC_COPY`,
/// `KMAJOR_RUNS` without a K-major operand), the nearest that admits it: one
/// parameter moved to another allowed value, or one other switch flipped, or both
/// (`ASYNC_ALONG_K` needs `ASYNC_COPY` and a K-major operand).
#[allow(dead_code)]
pub fn admitting(
    spec: &gemmlab::kernel::builtin::KernelSpec,
    hints: &gemmlab::kernel::builtin::Hints,
    toolchain: Toolchain,
) -> Option<(
    gemmlab::kernel::builtin::Config,
    gemmlab::kernel::builtin::Hints,
)> {
    let defaults = spec.defaults();
    let valid = |c: &gemmlab::kernel::builtin::Config, h: &gemmlab::kernel::builtin::Hints| {
        spec.validate_with_switches(c, h, toolchain).is_ok()
    };
    if valid(&defaults, hints) {
        return Some((defaults, hints.clone()));
    }
    for p in spec.params {
        for &v in p.allowed {
            let mut c = defaults.clone();
            c.0.insert(p.name.to_string(), v);
            if valid(&c, hints) {
                return Some((c, hints.clone()));
            }
        }
    }
    let values = spec.switch_values(toolchain, hints);
    let flips: Vec<gemmlab::kernel::builtin::Hints> = (values.iter())
        .filter(|(s, _)| hints.switch(s.name()).is_none())
        .map(|(s, on)| hints.with_switch(s.name(), !on))
        .collect();
    if let Some(h) = flips.iter().find(|h| valid(&defaults, h)) {
        return Some((defaults, h.clone()));
    }
    for p in spec.params {
        for &v in p.allowed {
            let mut c = defaults.clone();
            c.0.insert(p.name.to_string(), v);
            if let Some(h) = flips.iter().find(|h| valid(&c, h)) {
                return Some((c, h.clone()));
            }
        }
    }
    None
}
