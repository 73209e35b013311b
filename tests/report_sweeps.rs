//! The sweeps' analysis (register caps, tiling, hints, JIT) on the committed
//! fixture (tests/fixtures/report): typed findings, not prose.

use std::path::Path;

use gemmlab::analysis::data::{self, Data};
use gemmlab::analysis::sweeps::{self, CapSpeed, Kind, Like, Spills};
use gemmlab::analysis::Kind as Any;
use gemmlab::backend::Toolchain::{Cuda, OpenCl};

fn load(dirs: &[&str]) -> Data {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report");
    data::load(&dirs.iter().map(|d| root.join(d)).collect::<Vec<_>>()).unwrap()
}

fn kinds(fs: &[gemmlab::analysis::Finding]) -> Vec<&Kind> {
    fs.iter()
        .map(|f| match &f.kind {
            Any::Sweeps(k) => k,
            other => panic!("not a sweep finding: {other:?}"),
        })
        .collect()
}

#[test]
fn register_caps_not_applied_as_asked_and_what_a_cap_gains() {
    let d = load(&["registers"]);
    let a = sweeps::registers(&d);
    let names: Vec<(&str, &str)> = a
        .series
        .iter()
        .map(|s| (s.kernel.as_str(), s.switches.as_str()))
        .collect();
    assert_eq!(names, [("gemm6", "published"), ("gemm11", "published")]);
    assert_eq!(a.series[1].chart, "registers-gemm11-4096");
    let b = &a.series[1].blocks[0];
    assert_eq!(b.points.first(), Some(&Some(32)));
    assert_eq!(b.points.last(), Some(&None), "caps ascending, none last");
    assert_eq!(
        a.findings[1].chart.as_deref(),
        Some("registers-gemm11-4096")
    );
    let Kind::RegisterCaps {
        kernel,
        toolchains,
        not_as_asked,
        top,
        ..
    } = kinds(&a.findings)[1]
    else {
        panic!()
    };
    assert_eq!(kernel, "gemm11");
    // CUDA cap 32 -> 72 registers; OpenCL cap 32 -> 80, the same as without a cap.
    let n: Vec<_> = not_as_asked
        .iter()
        .map(|n| (n.toolchain, n.cap, n.used, n.uncapped))
        .collect();
    assert_eq!(n, [(Cuda, 32, 72, Some(78)), (OpenCl, 32, 80, Some(80))]);
    assert!(matches!(
        toolchains[0].spills,
        Some(Spills::From {
            clean_to: Some(64),
            cap: Some(48),
            bytes: 192,
            most: None
        })
    ));
    assert!(matches!(
        toolchains[0].speed,
        Some(CapSpeed::Faster { cap: 64, .. })
    ));
    let top = top.as_ref().unwrap();
    assert_eq!(
        (top.toolchain, top.cap, top.gflops, top.uncapped),
        (Cuda, 64, 23900.0, 22501.0)
    );
    assert!((a.findings[1].weight - (23900.0 / 22501.0 - 1.0)).abs() < 1e-12);
}

#[test]
fn the_tile_claim_is_judged_at_the_largest_size() {
    let d = load(&["compare", "tiling"]);
    let a = sweeps::tiling(&d, Some("NVIDIA H200"));
    assert_eq!(a.series.len(), 1);
    assert!(
        a.series[0].blocks[0].vendor.is_some(),
        "cuBLAS from the tiling run's vendor rows"
    );
    assert_eq!(a.findings.len(), 1);
    assert_eq!(a.findings[0].chart.as_deref(), Some("tiling-gemm11-4096"));
    let Kind::TileClaim {
        cuda,
        opencl,
        cuda_slower,
        opencl_fine,
        fastest,
        device,
        ..
    } = kinds(&a.findings)[0]
    else {
        panic!()
    };
    // Does not hold: CUDA's 8x4 is not slower than its 4x4.
    assert!(!cuda_slower && *opencl_fine);
    assert_eq!(
        (cuda[0].gflops, cuda[0].registers, cuda[1].gflops),
        (22501.0, Some(78), 21400.0)
    );
    assert_eq!((opencl[0].gflops, opencl[1].gflops), (19606.0, 18200.0));
    assert_eq!(
        fastest,
        &[(Cuda, (4, 8), 23300.0), (OpenCl, (4, 8), 20100.0)]
    );
    assert_eq!(device.as_deref(), Some("NVIDIA H200"));
}

#[test]
fn every_switch_is_compared_with_the_published_baseline() {
    let d = load(&["hints", "registers"]);
    let a = sweeps::hints(&d);
    assert_eq!(
        a.series[0].blocks[0].points[0], "baseline",
        "the baseline first"
    );
    let k = kinds(&a.findings);
    let Kind::HintEffects { size, effects } = k[0] else {
        panic!()
    };
    assert_eq!(*size, Some((4096, 4096, 4096)));
    let e = &effects[0];
    assert_eq!(
        (e.kernel.as_str(), e.toolchain, e.point.as_str()),
        ("gemm6", OpenCl, "VOLATILE_IDX=1")
    );
    assert_eq!(
        (e.base_gflops, e.gflops, e.base_registers, e.registers),
        (36102.0, 6400.0, Some(128), Some(82))
    );
    let c = |e: &sweeps::Effect| (e.gflops / e.base_gflops - 1.0).abs();
    assert!(
        effects.windows(2).all(|w| c(&w[0]) >= c(&w[1])),
        "largest first"
    );
    let Kind::HintsIdle { points, idle, .. } = k[1] else {
        panic!()
    };
    assert_eq!(idle, &["USE_BOUNDS=1", "fast math"]);
    assert!(points[0].1.contains(&("gemm6".to_string(), Cuda)));
    assert!(a.findings[1].headline);
    // A hint point is not a register-sweep series of its own.
    assert!(sweeps::registers(&d)
        .series
        .iter()
        .all(|s| s.switches == "published"));
}

#[test]
fn the_jit_rollup_says_which_native_build_the_ptx_runs_like() {
    let d = load(&["compare", "jit"]);
    let a = sweeps::jit(&d);
    assert_eq!(a.left_out, 0);
    assert_eq!(a.rows.len(), 4, "gemm8's failed row is listed too");
    let from: Vec<_> = a
        .rows
        .iter()
        .map(|r| (r.jit.kernel.as_str(), r.opencl.map(|x| x.1)))
        .collect();
    assert_eq!(
        from[0],
        ("gemm6", Some("jit")),
        "the jit run's own native rows first"
    );
    let k = kinds(&a.findings);
    let Kind::JitRollup {
        kernels,
        groups,
        differ,
        lean,
        leaning,
        example,
        ..
    } = k[0]
    else {
        panic!()
    };
    assert_eq!(
        (*kernels, *differ, *lean, *leaning),
        (3, 3, Like::OpenCl, 2)
    );
    assert_eq!(groups[0], (Like::Cuda, vec!["gemm11".to_string()]));
    assert_eq!(
        example.as_ref().map(|e| e.kernel.as_str()),
        Some("gemm6"),
        "the widest gap"
    );
    let Kind::JitKernel(t) = k[3] else { panic!() };
    assert_eq!(
        (t.kernel.as_str(), t.like, t.jit, t.opencl, t.cuda),
        ("gemm11", Like::Cuda, 21950.0, 19606.0, 22501.0)
    );
    assert!(
        a.findings[0].headline && !a.findings[1].headline,
        "per-kernel findings are details"
    );
}
