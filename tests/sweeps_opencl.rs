//! The sweeps on the OpenCL device at small sizes: they complete, and what the
//! toolchain does not report stays unknown (None), never 0.

mod common;

use gemmlab::experiment::sweep::{
    hint_points, register_points, run_sweep, tiling_points, SweepKind,
};
use gemmlab::gemm::driver::Session;
use gemmlab::kernel::builtin::{self as kernels, Hints, Precision};
use gemmlab::measure::progress::Progress;
use gemmlab::measure::{CacheState, Plan};
use gemmlab::results::{load_dir, Environment, ResultWriter};
use gemmlab::Backend;

fn run(
    kind: SweepKind,
    points: &[Result<gemmlab::experiment::Point, (String, gemmlab::gemm::driver::Status)>],
    dir: &std::path::Path,
) -> Vec<gemmlab::results::Measurement> {
    run_in(kind, points, dir, Precision::F32)
}

fn run_in(
    kind: SweepKind,
    points: &[Result<gemmlab::experiment::Point, (String, gemmlab::gemm::driver::Status)>],
    dir: &std::path::Path,
    precision: Precision,
) -> Vec<gemmlab::results::Measurement> {
    let mut sessions = vec![Session::new(common::opencl())];
    let info = sessions[0].backend.borrow().info().clone();
    let plan = Plan {
        warmup: 1,
        reps: 3,
        cache: CacheState::Warm,
        ..Plan::default()
    };
    let mut w = ResultWriter::create(dir, Environment::capture(vec![info], 5, plan)).unwrap();
    run_sweep(
        &mut sessions,
        kind,
        points,
        &[(64, 96, 40)],
        precision,
        &plan,
        5,
        &mut w,
        &Progress::hidden(),
        |_| {},
    )
    .unwrap();
    w.finish().unwrap()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gemmlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn register_sweep_completes_and_keeps_unknowns_unknown() {
    let ks = kernels::select(Some("2,6,11")).unwrap();
    let points = register_points(
        &ks,
        &[],
        Precision::F32,
        &Hints::default(),
        &[None, Some(64), Some(32)],
    );
    let dir = tmp("registers");
    let rows = run(SweepKind::Registers, &points, &dir);
    assert_eq!(rows.len(), 9);
    let nvidia = rows[0].device.contains("NVIDIA");
    for r in &rows {
        assert!(
            r.status.is_ok(),
            "{} {:?}: {:?}",
            r.kernel,
            r.label,
            r.status
        );
        assert!(r.gflops.is_some_and(|g| g > 0.0));
        let res = r.resources.as_ref().expect("resources");
        if !nvidia {
            assert_eq!(
                res.registers, None,
                "registers must be unknown on {}",
                r.device
            );
            assert_eq!(res.spill_stores_bytes, None);
            assert_eq!(r.occupancy, None);
        }
    }
    assert!(rows
        .iter()
        .any(|r| r.label.as_deref() == Some("cap=32") && r.hints.max_registers == Some(32)));
    // The files say the same as the run.
    let (_, back) = load_dir(&dir).unwrap();
    assert_eq!(back.len(), rows.len());
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(csv.lines().count() == rows.len() + 1);
}

#[test]
fn tiling_and_hint_sweeps_complete() {
    let rows = run(
        SweepKind::Tiling,
        &tiling_points(&Hints::default()).unwrap(),
        &tmp("tiling"),
    );
    assert_eq!(rows.len(), 9);
    assert!(rows.iter().all(|r| r.status.is_ok()), "{rows:?}");
    assert!(rows
        .iter()
        .any(|r| r.label.as_deref() == Some("RX=8 RY=4") && r.config.get("RK") == 4));
    let ks = kernels::select(Some("6")).unwrap();
    let rows = run(
        SweepKind::Hints,
        &hint_points(&ks, &[], Precision::F32, &Hints::default()),
        &tmp("hints"),
    );
    let labels: Vec<&str> = rows.iter().filter_map(|r| r.label.as_deref()).collect();
    // Kernel 6 as published has none of these: each point adds one.
    assert_eq!(
        labels,
        [
            "baseline",
            "USE_BOUNDS=1",
            "USE_RESTRICT=1",
            "UNROLL_K=1",
            "VOLATILE_IDX=1",
            "fast math"
        ]
    );
    assert!(rows.iter().all(|r| r.status.is_ok()), "{rows:?}");
    assert!(rows[0].hints.is_published());
    assert_eq!(rows[3].hints.switch("UNROLL_K"), Some(true));
    assert_eq!(rows[3].hints.describe(false), "published + UNROLL_K=1");
    // Kernel 9's USE_LDG is published on in CUDA, off in OpenCL: both values are points,
    // and on PoCL the "on" point is not applicable (NVIDIA inline PTX) rather than wrong.
    let ks = kernels::select(Some("9")).unwrap();
    let points = hint_points(&ks, &[], Precision::F32, &Hints::default());
    let labels: Vec<String> = points
        .iter()
        .filter_map(|p| p.as_ref().ok().and_then(|p| p.label.clone()))
        .collect();
    assert!(
        labels.contains(&"USE_LDG=0".to_string()) && labels.contains(&"UNROLL_K=0".to_string()),
        "{labels:?}"
    );
}

#[test]
fn an_interrupted_run_keeps_what_it_measured() {
    let dir = tmp("interrupted");
    let mut sessions = vec![Session::new(common::opencl())];
    let info = sessions[0].backend.borrow().info().clone();
    let plan = Plan {
        warmup: 0,
        reps: 2,
        cache: CacheState::Warm,
        ..Plan::default()
    };
    let mut w = ResultWriter::create(&dir, Environment::capture(vec![info], 1, plan)).unwrap();
    let ks = kernels::select(Some("1,2")).unwrap();
    let points = register_points(&ks, &[], Precision::F32, &Hints::default(), &[None]);
    run_sweep(
        &mut sessions,
        SweepKind::Registers,
        &points,
        &[(32, 32, 32)],
        Precision::F32,
        &plan,
        1,
        &mut w,
        &Progress::hidden(),
        |_| {},
    )
    .unwrap();
    // No finish(): as if the process had been killed here.
    drop(w);
    let (_, rows) = load_dir(&dir).unwrap();
    assert_eq!(rows.len(), 2);
}

/// `sweep --precision f64`: every point runs as a DGEMM, checked in f64.
#[test]
fn a_hints_sweep_runs_in_double_precision() {
    let dir = tmp("sweep-f64");
    let ks = kernels::select(Some("xgemm")).unwrap();
    let points = hint_points(&ks, &[], Precision::F32, &Hints::default());
    let rows = run_in(SweepKind::Hints, &points, &dir, Precision::F64);
    let ours: Vec<_> = rows.iter().filter(|r| r.kernel == "xgemm").collect();
    assert!(ours.len() >= 2, "{} rows", ours.len());
    for r in ours {
        assert_eq!(
            r.problem.as_ref().map(|p| p.precision),
            Some(Precision::F64),
            "{:?}",
            r.label
        );
        assert!(
            r.check.as_ref().is_some_and(|c| c.passed),
            "{:?}: {:?}",
            r.label,
            r.status
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
