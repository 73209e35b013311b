//! Every kernel through CUDA, and the twins against each other on the same input.
//! Skips visibly without a GPU; fails instead under GEMMLAB_REQUIRE_CUDA=1.
#![cfg(feature = "cuda")]

mod common;

use gemmlab::gemm::driver::{prepare, run_once_result, Attempt, Session};
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::Backend;

const SIZES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (17, 17, 17),
    (100, 100, 100),
    (129, 129, 129),
    (70, 200, 33),
    (512, 512, 512),
];

#[test]
fn cuda_every_kernel_verifies_at_every_size() {
    let Some(b) = common::cuda("cuda_every_kernel_verifies_at_every_size") else {
        return;
    };
    let mut session = Session::new(b);
    let mut failures = Vec::new();
    for &(m, n, k) in SIZES {
        let ops = Operands::new(m, n, k, 7 + m as u64);
        let reference = Reference::cpu(&ops);
        for spec in kernels::all() {
            let a = prepare(
                &mut session,
                spec,
                &spec.defaults(),
                &Hints::default(),
                &ops,
                &reference,
                false,
            );
            match a.prepared {
                Some(p) => p.release(&session),
                None => failures.push(format!("{} at {m}x{n}x{k}: {:?}", spec.id, a.status)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cuda_and_opencl_twins_agree_within_rounding() {
    let Some(cu) = common::cuda("cuda_and_opencl_twins_agree_within_rounding") else {
        return;
    };
    let mut cuda = Session::new(cu);
    let mut cl = Session::new(common::opencl());
    let cl_info = cl.backend.borrow().info().clone();
    common::say(&format!(
        "twins: {} vs {}",
        cuda.backend.borrow().info().label(),
        cl_info.label()
    ));
    let (m, n, k) = (257, 130, 300);
    let ops = Operands::new(m, n, k, 99);
    let full = gemmlab::gemm::reference_gemm(m, n, k, &ops.a, &ops.b);
    let rms = (full.iter().map(|x| x * x).sum::<f64>() / full.len() as f64).sqrt();
    let reference = Reference::Full {
        c: full,
        source: "f64 CPU reference".into(),
    };
    for spec in kernels::all() {
        if let Some(why) = spec.unavailable(&cl_info, &Hints::default()) {
            common::say(&format!(
                "SKIPPED twin comparison of {} on {}: {why}",
                spec.id, cl_info.name
            ));
            continue;
        }
        let c = spec.defaults();
        let x = run_once_result(&mut cuda, spec, &c, &Hints::default(), &ops, &reference)
            .unwrap_or_else(|e| panic!("{} cuda: {e}", spec.id));
        let y = run_once_result(&mut cl, spec, &c, &Hints::default(), &ops, &reference)
            .unwrap_or_else(|e| panic!("{} opencl: {e}", spec.id));
        let worst = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (*a - *b).abs())
            .fold(0.0, f64::max);
        // Same algorithm, same order of operations: differences come only from
        // FMA contraction and rounding, far below the checking threshold.
        assert!(
            worst <= 1e-5 * rms.max(1.0),
            "{}: twins differ by {worst:e} (rms {rms:e})",
            spec.id
        );
    }
}

#[test]
fn cuda_each_switch_alone_verifies_on_both_toolchains() {
    let Some(cu) = common::cuda("cuda_each_switch_alone_verifies_on_both_toolchains") else {
        return;
    };
    let mut sessions = [Session::new(cu), Session::new(common::opencl())];
    let (m, n, k) = (300, 260, 70);
    let ops = Operands::new(m, n, k, 3);
    let reference = Reference::cpu(&ops);
    let mut failures = Vec::new();
    for spec in kernels::all() {
        for s in spec.switches {
            for on in [false, true] {
                let wanted = Hints::default().with_switch(s.name(), on);
                for session in sessions.iter_mut() {
                    let info = session.backend.borrow().info().clone();
                    // A switch that means something only beside another setting gets it.
                    let Some((config, hints)) = common::admitting(spec, &wanted, info.toolchain)
                    else {
                        failures.push(format!(
                            "{} {}: no configuration admits it",
                            spec.id,
                            s.name()
                        ));
                        continue;
                    };
                    if let Some(why) = spec.unavailable(&info, &hints) {
                        common::say(&format!(
                            "{} {}={} not on {}: {why}",
                            spec.id,
                            s.name(),
                            u8::from(on),
                            info.label()
                        ));
                        continue;
                    }
                    let a = prepare(session, spec, &config, &hints, &ops, &reference, false);
                    match a.prepared {
                        Some(p) => p.release(session),
                        None => failures.push(format!(
                            "{} {} on {}: {:?}",
                            spec.id,
                            hints.describe(false),
                            info.label(),
                            a.status
                        )),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The tensor-core kernel at `defines` over its defaults.
fn tc_config(defines: &[(&str, i64)]) -> gemmlab::kernel::builtin::Config {
    let d: Vec<(String, i64)> = defines.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    kernels::find("tc").unwrap().config(&d).unwrap()
}

/// tc at `config` run checked at `ops`; panics with the status where it does not verify.
fn tc_verifies(
    session: &mut Session,
    config: &gemmlab::kernel::builtin::Config,
    ops: &Operands,
) -> Attempt {
    let spec = kernels::find("tc").unwrap();
    let reference = Reference::cpu(ops);
    let mut a = prepare(
        session,
        spec,
        config,
        &Hints::default(),
        ops,
        &reference,
        false,
    );
    match a.prepared.take() {
        Some(p) => p.release(session),
        None => panic!(
            "tc {} at {}x{}x{}: {:?}",
            config.describe(),
            ops.m,
            ops.n,
            ops.k,
            a.status
        ),
    }
    a
}

/// The tensor-core kernel's CUDA twin takes its tiles at launch: a DGEMM pipeline
/// of 66 KiB (past the 48 KiB a kernel may declare) runs checked at odd sizes and
/// its row counts that memory; one past the device's per-block limit is refused
/// with both numbers, not launched.
#[test]
fn cuda_tc_takes_local_memory_past_48_kib_at_launch() {
    let Some(b) = common::cuda("cuda_tc_takes_local_memory_past_48_kib_at_launch") else {
        return;
    };
    let info = b.info().clone();
    if info.compute_capability.is_none_or(|cc| cc < (9, 0)) {
        common::say("SKIPPED cuda_tc_takes_local_memory_past_48_kib_at_launch: needs sm_90");
        return;
    }
    let spec = kernels::find("tc").unwrap();
    let mut session = Session::new(b);
    let big = tc_config(&[
        ("PRECISION", 64),
        ("BM", 128),
        ("BN", 128),
        ("WM", 64),
        ("WN", 32),
        ("STAGES", 4),
        ("BK", 8),
    ]);
    assert_eq!((spec.local_bytes)(&big), 4 * 8 * 8 * (128 + 128 + 8));
    let f64_ops = |m, n, k, seed| {
        let mut problem = gemmlab::gemm::problem::Problem::plain(m, n, k);
        problem.precision = gemmlab::kernel::builtin::Precision::F64;
        Operands::for_problem(problem, seed)
    };
    for (m, n, k) in [(200, 130, 70), (1000, 999, 1001), (17, 17, 17)] {
        let a = tc_verifies(&mut session, &big, &f64_ops(m, n, k, 11));
        let shared = a
            .build
            .as_ref()
            .and_then(|b| spec.resources(b, &big, info.toolchain.language()));
        assert_eq!(shared.and_then(|r| r.shared_bytes), Some(67584));
    }
    let max = info
        .local_mem_launch_bytes
        .expect("the opt-in limit is read from the device");
    let huge = tc_config(&[
        ("PRECISION", 64),
        ("BM", 256),
        ("BN", 256),
        ("WM", 64),
        ("WN", 64),
        ("STAGES", 6),
        ("BK", 16),
    ]);
    assert!((spec.local_bytes)(&huge) as u64 > max);
    let ops = f64_ops(256, 256, 64, 5);
    let reference = Reference::cpu(&ops);
    let a = prepare(
        &mut session,
        spec,
        &huge,
        &Hints::default(),
        &ops,
        &reference,
        false,
    );
    let status = format!("{:?}", a.status);
    assert!(a.prepared.is_none(), "a pipeline past {max} bytes ran");
    assert!(status.contains(&format!("allows {max}")), "{status}");
}

/// Split-K (SPLITK > 1) in both precisions passes its check at odd sizes, with
/// more splits than K has tiles too (blocks with no tile of K add zeros), and
/// again on the same counters (the kernel leaves them zero); with the tile
/// copies through L1 (CP_CA=1) too, with and without split-K.
#[test]
fn cuda_tc_split_k_verifies() {
    let Some(b) = common::cuda("cuda_tc_split_k_verifies") else {
        return;
    };
    let spec = kernels::find("tc").unwrap();
    if let Some(why) = spec.unavailable(b.info(), &Hints::default()) {
        common::say(&format!("SKIPPED cuda_tc_split_k_verifies: {why}"));
        return;
    }
    let mut session = Session::new(b);
    let mut runs = 0;
    // (SPLITK, CP_CA): tile copies through L1 too, with and without split-K.
    let cases = [(2, 0), (3, 0), (8, 0), (1, 1), (3, 1)];
    for precision in [32, 64] {
        for (split, ca) in cases {
            let config = tc_config(&[("PRECISION", precision), ("SPLITK", split), ("CP_CA", ca)]);
            for (m, n, k) in [
                (200, 130, 70),
                (1000, 999, 1001),
                (17, 17, 17),
                (128, 4096, 4096),
            ] {
                let mut problem = gemmlab::gemm::problem::Problem::plain(m, n, k);
                if precision == 64 {
                    problem.precision = gemmlab::kernel::builtin::Precision::F64;
                }
                tc_verifies(&mut session, &config, &Operands::for_problem(problem, 17));
                runs += 1;
            }
        }
    }
    common::say(&format!("cuda_tc_split_k_verifies: {runs} checked runs"));
}

/// The last wave's split along K (TAILK > 1) in both precisions passes its
/// check: at odd sizes, on calls with full waves of whole tiles before the
/// shared last one, with a wave larger than the whole call (every tile shared),
/// with more pieces than K has tiles (pieces with none add zeros), and through
/// L1 too.
#[test]
fn cuda_tc_tail_split_verifies() {
    let Some(b) = common::cuda("cuda_tc_tail_split_verifies") else {
        return;
    };
    let spec = kernels::find("tc").unwrap();
    if let Some(why) = spec.unavailable(b.info(), &Hints::default()) {
        common::say(&format!("SKIPPED cuda_tc_tail_split_verifies: {why}"));
        return;
    }
    let mut session = Session::new(b);
    let mut runs = 0;
    for precision in [32, 64] {
        for (tail_k, wave, ca) in [(3, 1, 0), (8, 2, 1), (32, 4, 0)] {
            let config = tc_config(&[
                ("PRECISION", precision),
                ("TAILK", tail_k),
                ("WAVE", wave),
                ("CP_CA", ca),
            ]);
            for (m, n, k) in [
                (200, 130, 70),
                (1000, 999, 1001),
                (17, 17, 17),
                (2200, 2100, 300),
                (4096, 4096, 64),
                (128, 4096, 4096),
            ] {
                let mut problem = gemmlab::gemm::problem::Problem::plain(m, n, k);
                if precision == 64 {
                    problem.precision = gemmlab::kernel::builtin::Precision::F64;
                }
                tc_verifies(&mut session, &config, &Operands::for_problem(problem, 23));
                runs += 1;
            }
        }
    }
    common::say(&format!("cuda_tc_tail_split_verifies: {runs} checked runs"));
}

/// 3xTF32 with the operands split once per tile in local memory (SPLIT=1)
/// passes FP32's check at odd sizes, with pipelines past 48 KiB too.
#[test]
fn cuda_tc_split_in_local_memory_verifies() {
    let Some(b) = common::cuda("cuda_tc_split_in_local_memory_verifies") else {
        return;
    };
    let spec = kernels::find("tc").unwrap();
    if let Some(why) = spec.unavailable(b.info(), &Hints::default()) {
        common::say(&format!(
            "SKIPPED cuda_tc_split_in_local_memory_verifies: {why}"
        ));
        return;
    }
    let mut session = Session::new(b);
    for defines in [
        &[("SPLIT", 1)][..],
        &[
            ("SPLIT", 1),
            ("BM", 256),
            ("BN", 128),
            ("WM", 64),
            ("WN", 64),
            ("STAGES", 4),
        ][..],
    ] {
        let config = tc_config(defines);
        for (m, n, k) in [(200, 130, 70), (1000, 999, 1001), (17, 17, 17)] {
            tc_verifies(&mut session, &config, &Operands::new(m, n, k, 13));
        }
    }
}

/// The wgmma kernel (tcwg, sm_90a) verifies at odd sizes on CUDA and, where the
/// OpenCL test device is NVIDIA's, through NVIDIA OpenCL (its PTX re-targeted to
/// sm_90a by the backend): the published defaults, both toolchains' tuned tiles
/// (four warpgroups, tile copies through L1), N=256 and every PROMOTE_K; 1xTF32
/// (TF32_SINGLE) against TF32's limits.
#[test]
fn cuda_tcwg_verifies_on_both_toolchains() {
    let Some(b) = common::cuda("cuda_tcwg_verifies_on_both_toolchains") else {
        return;
    };
    let spec = kernels::find("tcwg").unwrap();
    let mut sessions = vec![Session::new(b)];
    let cl = common::opencl();
    if cl.info().is_nvidia() {
        sessions.push(Session::new(cl));
    }
    let mut runs = 0;
    let cases: &[&[(&str, i64)]] = &[
        &[],
        &[
            ("BM", 256),
            ("BN", 64),
            ("BK", 32),
            ("PROMOTE_K", 16),
            ("STAGES", 4),
            ("CP_CA", 1),
        ],
        &[
            ("BM", 128),
            ("BN", 64),
            ("BK", 16),
            ("PROMOTE_K", 16),
            ("STAGES", 3),
            ("CP_CA", 1),
        ],
        &[
            ("BM", 64),
            ("BN", 256),
            ("BK", 8),
            ("PROMOTE_K", 32),
            ("STAGES", 2),
            ("TF32_SINGLE", 1),
        ],
        &[
            ("BM", 128),
            ("BN", 128),
            ("BK", 32),
            ("PROMOTE_K", 8),
            ("STAGES", 2),
        ],
    ];
    for session in &mut sessions {
        let info = session.backend.borrow().info().clone();
        let c0 = spec.defaults();
        if let Some(why) = spec.unavailable_at(&c0, &info, &Hints::default()) {
            common::say(&format!(
                "SKIPPED cuda_tcwg_verifies_on_both_toolchains on {}: {why}",
                info.toolchain
            ));
            continue;
        }
        for defines in cases {
            // Switches go in as hints (TF32_SINGLE's check is TF32's), parameters as the configuration.
            let mut hints = Hints::default();
            let mut d: Vec<(String, i64)> = Vec::new();
            for (name, v) in defines.iter() {
                if spec.has_switch(name) {
                    hints.switches.insert((*name).to_string(), *v == 1);
                } else {
                    d.push((name.to_string(), *v));
                }
            }
            let config = spec.config(&d).unwrap();
            for (m, n, k) in [
                (17, 17, 17),
                (200, 130, 70),
                (1000, 999, 1001),
                (4097, 33, 2049),
            ] {
                let ops = Operands::new(m, n, k, 29);
                let reference = Reference::cpu(&ops);
                let mut a = prepare(session, spec, &config, &hints, &ops, &reference, false);
                match a.prepared.take() {
                    Some(p) => p.release(session),
                    None => panic!(
                        "tcwg {} {:?} on {} at {m}x{n}x{k}: {:?}",
                        config.describe(),
                        hints.switches,
                        info.toolchain,
                        a.status
                    ),
                }
                runs += 1;
            }
        }
    }
    common::say(&format!(
        "cuda_tcwg_verifies_on_both_toolchains: {runs} checked runs"
    ));
}

/// Each row's share of cuBLAS is against cuBLAS timed in the row's own interleaved
/// repetitions: the ratio is that pair's medians, not the lone cuBLAS row's.
#[test]
fn cuda_ratio_to_cublas_is_timed_interleaved_with_the_row() {
    use gemmlab::experiment::{measure_point, measure_vendor, Point, Problem};
    use gemmlab::measure::Plan;
    let Some(b) = common::cuda("cuda_ratio_to_cublas_is_timed_interleaved_with_the_row") else {
        return;
    };
    let mut sessions = vec![Session::new(b)];
    let problem = Problem::new(256, 192, 160, 11);
    let plan = Plan {
        warmup: 1,
        reps: 5,
        ..Default::default()
    };
    let spec = kernels::find("simt").unwrap();
    let point = Point {
        spec,
        config: spec.defaults(),
        hints: Hints::default(),
        label: None,
    };
    let vendor = measure_vendor(&mut sessions, &problem, &plan, "compare");
    assert!(vendor.iter().any(|v| v.status.is_ok()), "{vendor:?}");
    let rows = measure_point(&mut sessions, &point, &problem, &plan, "compare", &vendor);
    for r in &rows {
        assert!(r.status.is_ok(), "{:?}", r.status);
        let (paired, own) = (r.vendor_paired.unwrap(), r.time.unwrap());
        assert_eq!(
            paired.reps, own.reps,
            "one cuBLAS repetition per kernel repetition"
        );
        let want = paired.median_ns / own.median_ns;
        assert!((r.vs_vendor.unwrap() - want).abs() < 1e-12 * want);
    }
    // Without a vendor row at this size nothing is paired, and there is no ratio.
    let alone = measure_point(&mut sessions, &point, &problem, &plan, "compare", &[]);
    assert!(alone
        .iter()
        .all(|r| r.vendor_paired.is_none() && r.vs_vendor.is_none()));
}
