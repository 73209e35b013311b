//! gemmlab's SIMT kernel on the OpenCL device (PoCL in CI): every pipeline depth,
//! split-K factor, stream-K grid and portable switch at sizes that are multiples of no tile, on
//! BLAS calls (transposes, alpha/beta, offsets), repeated split-K launches (the
//! tile counters must come back to zero), and the variants that cannot run
//! outside NVIDIA's OpenCL reported as unavailable, not attempted. On NVIDIA's
//! OpenCL and on CUDA (`--features cuda`, skipped visibly without a GPU) the
//! same matrix runs with cp.async (ASYNC_COPY) as well.

mod common;

use gemmlab::gemm::driver::{prepare, read_c, KernelRunner, Session};
use gemmlab::gemm::problem::{Layout, Problem, Trans};
use gemmlab::gemm::{check::check_widened, Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Config, Hints, KernelSpec};
use gemmlab::measure::Timed;
use gemmlab::Backend;

fn simt() -> &'static KernelSpec {
    kernels::find("simt").expect("simt is in the registry")
}

fn config(extra: &[(&str, i64)]) -> Config {
    common::small_simt_config(simt(), extra)
}

fn check(
    session: &mut Session,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
) -> Result<(), String> {
    common::check_kernel(session, simt(), config, hints, ops)
}

/// The sizes of the odd-size matrix: multiples of no tile.
const ODD_SIZES: [(usize, usize, usize); 3] = [(1, 1, 1), (33, 65, 17), (70, 45, 300)];

/// Every configuration as published, and every switch set on the plain, the
/// unpipelined, a split-K and a stream-K configuration (which share all code
/// paths of the rest), at sizes that are multiples of no tile. The failures, and
/// the run count.
fn odd_size_matrix(session: &mut Session, with_async: bool) -> (usize, Vec<String>) {
    let sizes = ODD_SIZES;
    let configs: Vec<Vec<(&str, i64)>> = vec![
        vec![],
        vec![("STAGES", 1)],
        vec![("STAGES", 3)],
        vec![("STAGES", 4), ("BK", 16)],
        vec![("SPLITK", 2)],
        vec![("SPLITK", 3), ("STAGES", 3)],
        vec![("SPLITK", 16), ("STAGES", 1)],
        vec![("STREAMK", 1)],
        vec![("STREAMK", 2), ("STAGES", 3)],
        vec![("STREAMK", 3), ("STAGES", 1)],
        vec![("STREAMK", 4), ("STAGES", 4), ("BK", 16)],
        vec![("BM", 64), ("WM", 32), ("TM", 8), ("GROUP", 2)],
        vec![
            ("BM", 64),
            ("BN", 64),
            ("WM", 32),
            ("WN", 32),
            ("TN", 8),
            ("BK", 16),
        ],
        // Narrow tiles (48 and 96): the last round of each tile's copy leaves threads idle.
        vec![("BM", 64), ("BN", 48), ("WM", 32), ("WN", 16)],
        vec![
            ("BM", 48),
            ("BN", 64),
            ("WM", 16),
            ("STAGES", 3),
            ("SPLITK", 2),
        ],
        common::NARROW_STREAM_K.to_vec(),
        // Split-K summed by a kernel of its own (REDUCE): splits without a K tile too.
        vec![("SPLITK", 2), ("REDUCE", 1)],
        vec![("SPLITK", 32), ("REDUCE", 1), ("STAGES", 3)],
        // Slice-K: groups of warps on one tile, their sums added through local memory,
        // alone and with each way of sharing K among work-groups.
        vec![("SLICEK", 2)],
        vec![("SLICEK", 4), ("STAGES", 3)],
        vec![("SLICEK", 2), ("SPLITK", 3)],
        vec![("SLICEK", 4), ("STREAMK", 2), ("BK", 16)],
        vec![("SLICEK", 2), ("SPLITK", 4), ("REDUCE", 1)],
        vec![
            ("BM", 64),
            ("BN", 64),
            ("WM", 32),
            ("WN", 32),
            ("TN", 8),
            ("BK", 16),
            ("SLICEK", 4),
        ],
        // Operands read K-contiguous (no cp.async: their tiles go through registers).
        vec![("KMAJOR_A", 1)],
        vec![("KMAJOR_B", 1), ("STAGES", 3)],
        vec![("KMAJOR_A", 1), ("KMAJOR_B", 1), ("SPLITK", 3), ("BK", 16)],
        vec![("KMAJOR_A", 1), ("STREAMK", 2)],
        vec![("KMAJOR_B", 1), ("SLICEK", 2), ("BK", 16)],
    ];
    // Every switch on these: plain, unpipelined, split-K, stream-K, slice-K.
    let all_switches = [0, 1, 4, 7, 18];
    // The first K-major configuration: every switch but cp.async.
    let k_major = configs.len() - 5;
    let mut switch_sets: Vec<Hints> = vec![
        Hints::default(),
        Hints::default().with_switch("VEC_LOADS", false),
        Hints::default().with_switch("SMEM_PAD", true),
        Hints::default().with_switch("RASTER", false),
        Hints::default()
            .with_switch("USE_BOUNDS", false)
            .with_switch("USE_RESTRICT", false),
    ];
    if with_async {
        let on = Hints::default().with_switch("ASYNC_COPY", true);
        switch_sets.push(on.clone());
        switch_sets.push(on.clone().with_switch("CP_CA", true));
        switch_sets.push(on.with_switch("VEC_LOADS", false));
    }
    let mut runs = 0;
    let mut failures = Vec::new();
    for (i, &(m, n, k)) in sizes.iter().enumerate() {
        let ops = Operands::new(m, n, k, 300 + i as u64);
        for (j, c) in configs.iter().enumerate() {
            let cfg = config(c);
            let hints = if all_switches.contains(&j) {
                &switch_sets[..]
            } else if j == k_major {
                &switch_sets[..5]
            } else {
                &switch_sets[..1]
            };
            for h in hints {
                runs += 1;
                if let Err(e) = check(session, &cfg, h, &ops) {
                    failures.push(e);
                }
            }
            if j >= k_major {
                // Each K run across consecutive work-items; with cp.async for the
                // operand read along M or N where only one is read along K.
                let along_k = c.iter().filter(|(n, v)| n.starts_with("KMAJOR") && *v == 1);
                let b_along_k = c.contains(&("KMAJOR_B", 1));
                let a_along_k = c.contains(&("KMAJOR_A", 1));
                let runs_on = Hints::default().with_switch("KMAJOR_RUNS", true);
                let mut more = vec![runs_on.clone()];
                if b_along_k {
                    // B kept K-contiguous in its local tile, through registers and
                    // (on NVIDIA) by 16-byte cp.async, padded or not.
                    let ktile = Hints::default().with_switch("KTILE_B", true);
                    more.push(ktile.clone());
                    more.push(ktile.clone().with_switch("SMEM_PAD", true));
                    if a_along_k {
                        more.push(ktile.clone().with_switch("KMAJOR_RUNS", true));
                    }
                    if with_async {
                        let on = ktile.with_switch("ASYNC_COPY", true);
                        more.push(on.clone());
                        more.push(on.with_switch("SMEM_PAD", true));
                    }
                }
                if with_async {
                    // cp.async copying the operands read along K too, 4 bytes at a time.
                    let along = Hints::default()
                        .with_switch("ASYNC_COPY", true)
                        .with_switch("ASYNC_ALONG_K", true);
                    more.push(along.clone().with_switch("SMEM_PAD", true));
                    more.push(along.with_switch("VEC_LOADS", false));
                }
                if with_async && along_k.count() == 1 {
                    let on = Hints::default().with_switch("ASYNC_COPY", true);
                    more.push(on.clone());
                    more.push(on.with_switch("KMAJOR_RUNS", true));
                }
                for h in &more {
                    runs += 1;
                    if let Err(e) = check(session, &cfg, h, &ops) {
                        failures.push(e);
                    }
                }
            }
            if with_async && j >= 2 && j < k_major {
                // cp.async at every pipeline depth and split.
                runs += 1;
                let h = Hints::default().with_switch("ASYNC_COPY", true);
                if let Err(e) = check(session, &cfg, &h, &ops) {
                    failures.push(e);
                }
            }
        }
    }
    (runs, failures)
}

/// Stream-K's grid depends on the device's compute units: at least one of the
/// odd sizes must give a tile of C to more than one work-group, or the matrix
/// would not check the partial sums.
fn assert_stream_k_shares_tiles(session: &Session) {
    let units = session.backend.borrow().info().compute_units.unwrap_or(1) as usize;
    let shared = ODD_SIZES.iter().any(|&(m, n, k)| {
        (1..=4).any(|per_unit| {
            common::stream_k_shares_a_tile(
                units,
                m.div_ceil(32) * n.div_ceil(32),
                k.div_ceil(8),
                per_unit,
            )
        })
    });
    assert!(
        shared,
        "no odd size shares a tile among stream-K work-groups on {units} compute units"
    );
}

#[test]
fn stages_split_k_and_switches_verify_at_odd_sizes() {
    let mut session = Session::new(common::opencl());
    assert_stream_k_shares_tiles(&session);
    let info = session.backend.borrow().info().clone();
    let (runs, failures) = odd_size_matrix(&mut session, info.is_nvidia());
    common::say(&format!(
        "simt on {}: {runs} checked runs at odd sizes, {} failed",
        info.label(),
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_stages_split_k_and_switches_verify_at_odd_sizes() {
    let Some(b) = common::cuda("cuda_stages_split_k_and_switches_verify_at_odd_sizes") else {
        return;
    };
    let mut session = Session::new(b);
    assert_stream_k_shares_tiles(&session);
    let label = session.backend.borrow().info().label();
    let (runs, failures) = odd_size_matrix(&mut session, true);
    common::say(&format!(
        "simt on {label}: {runs} checked runs at odd sizes, {} failed",
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn blas_calls_verify_with_and_without_split_k_stream_k_and_k_major_operands() {
    let mut session = Session::new(common::opencl());
    // On NVIDIA, the operands read along K copied by cp.async as well.
    let mut copies = vec![Hints::default()];
    if session.backend.borrow().info().is_nvidia() {
        copies.push(
            Hints::default()
                .with_switch("ASYNC_COPY", true)
                .with_switch("ASYNC_ALONG_K", true),
        );
    }
    // B read along K kept K-contiguous in its local tile (cp.async on NVIDIA).
    let ktile = match session.backend.borrow().info().is_nvidia() {
        true => Hints::default()
            .with_switch("KTILE_B", true)
            .with_switch("ASYNC_COPY", true),
        false => Hints::default().with_switch("KTILE_B", true),
    };
    let mut failures = Vec::new();
    for (layout, ta, tb, (m, n, k), (alpha, beta)) in [
        (
            Layout::RowMajor,
            Trans::T,
            Trans::N,
            (47, 9, 70),
            (1.5, 0.5),
        ),
        (
            Layout::ColMajor,
            Trans::N,
            Trans::T,
            (9, 140, 31),
            (-1.0, 1.0),
        ),
        (
            Layout::ColMajor,
            Trans::T,
            Trans::T,
            (64, 96, 200),
            (2.0, -0.5),
        ),
    ] {
        let mut p = Problem {
            layout,
            trans_a: ta,
            trans_b: tb,
            alpha,
            beta,
            ..Problem::plain(m, n, k)
        }
        .tight();
        p.lda += 3;
        p.ldc += 2;
        p.c_offset = 4;
        let ops = Operands::for_problem(p, 7);
        for share in [("SPLITK", 1), ("SPLITK", 4), ("STREAMK", 3)] {
            for (ka, kb) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let c = config(&[share, ("KMAJOR_A", ka), ("KMAJOR_B", kb)]);
                let with_ktile = (kb == 1).then_some(&ktile);
                let hints = copies.iter().take(if ka + kb > 0 { 2 } else { 1 });
                for h in hints.chain(with_ktile) {
                    if let Err(e) = check(&mut session, &c, h, &ops) {
                        failures.push(e);
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The last block of each tile resets its counter: launch after launch gives the
/// same C, with C poisoned in between (beta = 0, so C is never read); for
/// split-K and for stream-K.
#[test]
fn split_k_counters_return_to_zero_between_launches() {
    let mut session = Session::new(common::opencl());
    // 15 tiles of 32 x 32, 33 deep: stream-K's work-groups share tiles unless
    // their count divides 15.
    let (m, n, k) = (96, 160, 264);
    let units = session.backend.borrow().info().compute_units.unwrap_or(1) as usize;
    assert!(common::stream_k_shares_a_tile(units, 15, 33, 4));
    let ops = Operands::new(m, n, k, 11);
    let reference = Reference::cpu(&ops);
    for cfg in [config(&[("SPLITK", 4)]), config(&[("STREAMK", 4)])] {
        counters_return_to_zero(&mut session, &cfg, &ops, &reference);
    }
}

fn counters_return_to_zero(
    session: &mut Session,
    cfg: &Config,
    ops: &Operands,
    reference: &Reference,
) {
    let m = ops.problem.m;
    let a = prepare(
        session,
        simt(),
        cfg,
        &Hints::default(),
        ops,
        reference,
        false,
    );
    let p = a.prepared.expect("the checked run passes");
    for round in 0..3 {
        session
            .backend
            .borrow_mut()
            .fill(&p.c, f64::NAN)
            .expect("poison C");
        KernelRunner {
            session,
            prepared: &p,
        }
        .run_batch(3)
        .expect("three launches");
        let (c, gap) = read_c(session, p.c, &ops.problem).expect("read C");
        assert_eq!(gap, None);
        let r = check_widened(m, &c, reference, ops.problem.precision);
        assert!(
            r.passed,
            "{} round {round}: {}",
            cfg.describe(),
            r.summary()
        );
    }
    p.release(session);
}

#[test]
fn unavailable_and_oversized_variants_are_refused_with_reasons() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    let cp_async = Hints::default().with_switch("ASYNC_COPY", true);
    if !info.is_nvidia() {
        let why = simt()
            .unavailable(&info, &cp_async)
            .expect("cp.async is NVIDIA inline PTX in OpenCL");
        assert!(why.contains("ASYNC_COPY"), "{why}");
    }
    // 3 stages of 16 x (128 + 128) floats fill 48 KiB exactly; padding does not fit.
    let big = simt().config(&[("STAGES".into(), 3)]).expect("48 KiB fits");
    let ops = Operands::new(128, 128, 64, 3);
    let reference = Reference::cpu(&ops);
    let a = prepare(
        &mut session,
        simt(),
        &big,
        &Hints::default().with_switch("SMEM_PAD", true),
        &ops,
        &reference,
        false,
    );
    assert!(a.prepared.is_none());
    let why = a.status.reason().unwrap_or_default().to_string();
    assert!(why.contains("SMEM_PAD") && why.contains("48 KiB"), "{why}");
    // A configuration the constraints refuse says which and why.
    let e = simt().config(&[("TM".into(), 16)]).unwrap_err().to_string();
    assert!(e.contains("32 lanes") && e.contains("TM=16"), "{e}");
}
