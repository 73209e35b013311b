//! The kernel for thin calls (`thin`) on the OpenCL device (PoCL in CI): both
//! short sides, every BLAS case (both layouts, the four transpose cases,
//! offsets, leading dimensions with and without alignment, alpha and beta),
//! sizes that are multiples of no tile, short sides of 1 to 70, thin tiles of
//! 4 to 64, one to four long-side indices per work-item, split-K, prefetched
//! batches, work-items along K and the switches, checked against the f64 reference. On CUDA (`--features cuda`,
//! skipped visibly without a GPU) the same matrix runs.

mod common;

use gemmlab::gemm::driver::Session;
use gemmlab::gemm::Operands;
use gemmlab::kernel::builtin::{self as kernels, Config, Hints, KernelSpec};
use gemmlab::Backend;

fn thin() -> &'static KernelSpec {
    kernels::find("thin").expect("thin is in the registry")
}

fn config(values: &[(&str, i64)]) -> Config {
    let d: Vec<(String, i64)> = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let c = thin()
        .config(&d)
        .unwrap_or_else(|e| panic!("{values:?}: {e}"));
    thin()
        .validate(&c)
        .unwrap_or_else(|e| panic!("{values:?}: {e}"));
    c
}

/// Every configuration on every BLAS call of its sizes (split-K only with
/// `split`: NVIDIA): the failures and the run count.
fn matrix(session: &mut Session, split: bool) -> (usize, Vec<String>) {
    let mut runs = 0;
    let mut failures = Vec::new();
    let mut run = |session: &mut Session, cfg: &Config, hints: &Hints, m, n, k, seed: u64| {
        for (j, p) in common::blas_calls(m, n, k).into_iter().enumerate() {
            runs += 1;
            let ops = Operands::for_problem(p, seed + j as u64);
            failures.extend(common::check_kernel(session, thin(), cfg, hints, &ops).err());
        }
    };
    let plain = Hints::default();
    // (configuration, sizes): M short with SIDE 0, N short with SIDE 1; K cut
    // short of a chunk, over several, and split unevenly.
    let cases: Vec<(Config, (usize, usize, usize))> = vec![
        (thin().defaults(), (1, 1, 1)),
        (thin().defaults(), (16, 300, 129)),
        (
            config(&[("BT", 4), ("TL", 1), ("THREADS", 64)]),
            (5, 97, 70),
        ),
        (
            config(&[("BT", 8), ("TL", 4), ("KC", 16), ("KV", 4)]),
            (19, 261, 45),
        ),
        (config(&[("BT", 32), ("SPLITK", 3)]), (70, 133, 300)),
        (
            config(&[("SPLITK", 8), ("KC", 64), ("KV", 16), ("TL", 1)]),
            (16, 70, 511),
        ),
        (config(&[("SIDE", 1)]), (300, 16, 129)),
        (
            config(&[("SIDE", 1), ("BT", 4), ("TL", 4), ("SPLITK", 2)]),
            (261, 3, 77),
        ),
        (
            config(&[("SIDE", 1), ("BT", 32), ("THREADS", 256), ("SPLITK", 6)]),
            (129, 33, 400),
        ),
        (config(&[("SIDE", 1), ("BT", 48)]), (90, 47, 200)),
        // Tiles between the powers of two: 12, 20 and 24 rows, 40 and 56 columns.
        (config(&[("BT", 12), ("TL", 4)]), (11, 150, 100)),
        (config(&[("BT", 20), ("SPLITK", 2)]), (20, 300, 129)),
        (config(&[("BT", 24)]), (23, 261, 77)),
        (config(&[("SIDE", 1), ("BT", 40), ("TL", 1)]), (200, 37, 64)),
        (
            config(&[("SIDE", 1), ("BT", 56), ("TL", 1), ("SPLITK", 3)]),
            (129, 56, 300),
        ),
        (
            config(&[("BT", 64), ("TL", 1), ("SPLITK", 4)]),
            (64, 130, 70),
        ),
        // The large operand staged in local memory (XS=1): GEMV-like, a partial
        // chunk of K; TL 2 with shallow chunks; N short; split-K.
        (config(&[("XS", 1), ("BT", 4), ("TL", 1)]), (1, 300, 129)),
        (
            config(&[("XS", 1), ("TL", 2), ("KC", 16), ("KV", 4), ("THREADS", 64)]),
            (19, 261, 45),
        ),
        (
            config(&[("XS", 1), ("SIDE", 1), ("BT", 8), ("TL", 1)]),
            (261, 5, 77),
        ),
        (
            config(&[("XS", 1), ("TL", 1), ("SPLITK", 3)]),
            (16, 200, 300),
        ),
        // Batches prefetched (PIPE=1): K shared by whole batches, a short last
        // chunk, K shorter than a batch, chunks of 128 and 256, N short, split-K.
        (
            config(&[("PIPE", 1), ("TL", 1), ("KV", 16), ("KC", 64)]),
            (16, 300, 129),
        ),
        (
            config(&[("PIPE", 1), ("BT", 8), ("TL", 4), ("KV", 4)]),
            (5, 261, 3),
        ),
        (
            config(&[
                ("PIPE", 1),
                ("SIDE", 1),
                ("BT", 40),
                ("TL", 1),
                ("KV", 16),
                ("KC", 128),
            ]),
            (261, 33, 300),
        ),
        (
            config(&[
                ("PIPE", 1),
                ("BT", 24),
                ("TL", 1),
                ("KC", 256),
                ("THREADS", 256),
            ]),
            (23, 200, 600),
        ),
        (
            config(&[
                ("PIPE", 1),
                ("SIDE", 1),
                ("BT", 40),
                ("TL", 1),
                ("KV", 16),
                ("KC", 128),
                ("SPLITK", 16),
            ]),
            (300, 33, 2049),
        ),
        (
            config(&[("PIPE", 1), ("TL", 2), ("KV", 8), ("SPLITK", 3)]),
            (19, 150, 77),
        ),
        // Work-items along K (KL): both sides, with and without prefetching, a
        // short last batch, K shorter than one lane's share, padded chunk rows
        // (BT 8, 16, 32), 2 to 8 along K, split-K over the narrower tile.
        (
            config(&[("KL", 4), ("BT", 36), ("TL", 2), ("KV", 8), ("PIPE", 1)]),
            (33, 261, 205),
        ),
        (
            config(&[("KL", 2), ("BT", 8), ("TL", 1), ("KV", 4)]),
            (5, 150, 3),
        ),
        (
            config(&[("KL", 8), ("BT", 16), ("TL", 4), ("KV", 4), ("KC", 64)]),
            (16, 97, 300),
        ),
        (
            config(&[
                ("KL", 4),
                ("SIDE", 1),
                ("BT", 32),
                ("TL", 2),
                ("KV", 8),
                ("PIPE", 1),
                ("THREADS", 64),
            ]),
            (200, 29, 129),
        ),
        (
            config(&[
                ("KL", 4),
                ("BT", 36),
                ("TL", 2),
                ("KV", 8),
                ("PIPE", 1),
                ("SPLITK", 12),
            ]),
            (33, 300, 2049),
        ),
        (
            config(&[("KL", 4), ("SIDE", 1), ("BT", 12), ("KV", 4), ("SPLITK", 3)]),
            (150, 10, 400),
        ),
    ];
    for (i, (cfg, (m, n, k))) in cases.iter().enumerate() {
        if split || cfg.get("SPLITK") == 1 {
            run(session, cfg, &plain, *m, *n, *k, 100 * i as u64);
        }
    }
    let switches = [
        plain.clone().with_switch("VEC_LOADS", false),
        plain
            .clone()
            .with_switch("USE_BOUNDS", false)
            .with_switch("USE_RESTRICT", false),
    ];
    for (i, hints) in switches.iter().enumerate() {
        let sk = if split { 2 } else { 1 };
        run(
            session,
            &config(&[("SPLITK", sk)]),
            hints,
            21,
            150,
            90,
            5000 + 100 * i as u64,
        );
    }
    // Work-items along K with one float at a time (as they read anyway) and
    // without bounds or restrict.
    for (i, hints) in switches.iter().enumerate() {
        run(
            session,
            &config(&[("KL", 4), ("BT", 20), ("TL", 2), ("KV", 4), ("PIPE", 1)]),
            hints,
            17,
            90,
            77,
            6000 + 100 * i as u64,
        );
    }
    // Staged, with one float at a time from global memory.
    run(
        session,
        &config(&[("XS", 1), ("TL", 1)]),
        &switches[0],
        21,
        150,
        90,
        7000,
    );
    (runs, failures)
}

#[test]
fn every_blas_case_verifies_on_thin_calls() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    let label = info.label();
    let (runs, failures) = matrix(&mut session, info.is_nvidia());
    common::say(&format!(
        "thin on {label}: {runs} checked runs, {} failed",
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_every_blas_case_verifies_on_thin_calls() {
    let Some(b) = common::cuda("cuda_every_blas_case_verifies_on_thin_calls") else {
        return;
    };
    let mut session = Session::new(b);
    let label = session.backend.borrow().info().label();
    let (runs, failures) = matrix(&mut session, true);
    common::say(&format!(
        "thin on {label}: {runs} checked runs, {} failed",
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Off NVIDIA, split-K is refused with its reason, not attempted.
#[test]
fn split_k_is_refused_off_nvidia_with_the_reason() {
    let mut session = Session::new(common::opencl());
    if session.backend.borrow().info().is_nvidia() {
        common::say("thin's split-K runs on NVIDIA's OpenCL: the matrix checks it");
        return;
    }
    let ops = Operands::new(21, 150, 90, 5);
    let reference = gemmlab::gemm::Reference::cpu(&ops);
    let cfg = config(&[("SPLITK", 2)]);
    let a = gemmlab::gemm::driver::prepare(
        &mut session,
        thin(),
        &cfg,
        &Hints::default(),
        &ops,
        &reference,
        false,
    );
    assert!(a.prepared.is_none());
    let why = a.status.reason().unwrap_or_default().to_string();
    assert!(why.contains("SPLITK=2") && why.contains("NVIDIA"), "{why}");
}
