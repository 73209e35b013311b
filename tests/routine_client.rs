//! The GEMM routine's test client, in the manner of CLBlast's: every
//! combination of layout, transposes, precision and alpha/beta over small, odd,
//! tall, wide and degenerate shapes, with leading dimensions above the minimum
//! and offsets, through both kernels, against the f64 reference. C's elements
//! outside the matrix hold a sentinel that must survive; where beta is 0, C
//! holds NaN that must not. Half the cases run as the routine is timed
//! (`Gemm::time_calls`: the call's launches as one sequence).
//!
//! OpenCL runs on whatever `GEMMLAB_TEST_DEVICE` names (PoCL in CI); the CUDA
//! twins run on a GPU (skipped visibly without one, failing under
//! GEMMLAB_REQUIRE_CUDA=1).

mod common;

use gemmlab::gemm::check::check_widened;
use gemmlab::gemm::data::C_GAP;
use gemmlab::gemm::driver::{read_c, Session};
use gemmlab::gemm::problem::{Layout, Matrix, Precision, Problem, Trans};
use gemmlab::gemm::{Operands, Reference};
use gemmlab::routine::{upload_operand, Gemm, Path};
use gemmlab::{AnyBackend, Backend};

const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (7, 5, 3),
    (33, 65, 17),
    (130, 9, 70), // tall
    (9, 140, 70), // wide
    (64, 64, 64), // whole tiles
    (0, 5, 3),    // degenerate: nothing to do
    (5, 0, 3),
    (5, 7, 0), // K = 0: C = beta C
];

const SCALARS: &[(f64, f64)] = &[(1.0, 0.0), (1.5, 0.5), (-0.75, 1.0), (0.0, 0.5)];

/// Runs every case on one backend; returns the failures (empty: all passed).
fn client(backend: AnyBackend) -> (usize, Vec<String>) {
    let mut session = Session::new(backend);
    let mut gemm = Gemm::published().unwrap();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut seed = 1u64;
    for precision in Precision::ALL {
        for layout in [Layout::ColMajor, Layout::RowMajor] {
            for trans_a in [Trans::N, Trans::T] {
                for trans_b in [Trans::N, Trans::T] {
                    for (si, &(alpha, beta)) in SCALARS.iter().enumerate() {
                        for (hi, &(m, n, k)) in SHAPES.iter().enumerate() {
                            // Every other case: leading dimensions above the minimum, offsets.
                            let loose = (si + hi) % 2 == 1;
                            let mut p = Problem {
                                layout,
                                trans_a,
                                trans_b,
                                alpha,
                                beta,
                                precision,
                                ..Problem::plain(m, n, k)
                            }
                            .tight();
                            if loose {
                                p.lda += 3;
                                p.ldb += 1;
                                p.ldc += 2;
                                p.a_offset = 5;
                                p.b_offset = 1;
                                p.c_offset = 3;
                            }
                            for path in Path::ALL {
                                seed += 1;
                                cases += 1;
                                gemm.force = Some(path);
                                if let Err(e) = one(&mut session, &mut gemm, &p, seed) {
                                    failures.push(format!(
                                        "{} via {}: {e}",
                                        p.describe(),
                                        path.as_str()
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    gemm.release(&session);
    (cases, failures)
}

fn one(session: &mut Session, gemm: &mut Gemm, p: &Problem, seed: u64) -> Result<(), String> {
    let ops = Operands::for_problem(*p, seed);
    let reference = Reference::cpu(&ops);
    let a = upload_operand(session, &ops, Matrix::A, f32::NAN).map_err(|e| e.to_string())?;
    let b = upload_operand(session, &ops, Matrix::B, f32::NAN).map_err(|e| e.to_string())?;
    let c = upload_operand(session, &ops, Matrix::C, C_GAP).map_err(|e| e.to_string())?;
    // Every other case (both kernels alike) runs as the routine is timed: its
    // launches as one sequence, twice where beta is 0 (the second call repeats
    // the first's result), so the timed path computes what it times.
    let run = match (seed / 2) % 2 {
        0 => gemm.run(session, p, a, b, c).map(|_| ()),
        _ => {
            let count = if p.beta == 0.0 { 2 } else { 1 };
            gemm.time_calls(session, p, [a, b, c], count).map(|_| ())
        }
    };
    let read = read_c(session, c, p);
    {
        let mut be = session.backend.borrow_mut();
        for x in [a, b, c] {
            be.free(x);
        }
    }
    run.map_err(|e| e.to_string())?;
    let (logical, gap) = read.map_err(|e| e.to_string())?;
    if let Some(at) = gap {
        return Err(format!(
            "element {at} of C's buffer, outside the matrix, changed"
        ));
    }
    if p.m == 0 || p.n == 0 {
        return Ok(());
    }
    let report = check_widened(p.m, &logical, &reference, p.precision);
    if !report.passed {
        return Err(report.summary());
    }
    Ok(())
}

fn report(what: &str, (cases, failures): (usize, Vec<String>)) {
    common::say(&format!(
        "{what}: {cases} routine calls, {} failed",
        failures.len()
    ));
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The tensor-core family forced for every call (f64 on the FP64 tensor cores,
/// f32 by 3xTF32 with FP32 emulation allowed), over every layout, transpose pair
/// and scalar pair at odd shapes.
fn tc_client(backend: AnyBackend) -> (usize, Vec<String>) {
    let mut session = Session::new(backend);
    let mut gemm = Gemm::published().unwrap();
    gemm.fp32_emulation = true;
    let spec = gemmlab::kernel::builtin::find("tc").unwrap();
    let (mut cases, mut failures, mut seed) = (0, Vec::new(), 7u64);
    let split_k = spec.config(&[("SPLITK".to_string(), 3)]).unwrap();
    for (precision, config) in Precision::ALL
        .into_iter()
        .flat_map(|p| [(p, spec.defaults()), (p, split_k.clone())])
    {
        let config = spec.with_precision(&config, precision).unwrap();
        gemm.force_choice = Some(("tc".into(), config, Default::default()));
        for layout in [Layout::ColMajor, Layout::RowMajor] {
            for (trans_a, trans_b) in [
                (Trans::N, Trans::N),
                (Trans::N, Trans::T),
                (Trans::T, Trans::N),
                (Trans::T, Trans::T),
            ] {
                for (si, &(alpha, beta)) in SCALARS.iter().enumerate() {
                    let (m, n, k) = [(33, 65, 17), (130, 9, 70), (129, 257, 31)][si % 3];
                    let p = Problem {
                        layout,
                        trans_a,
                        trans_b,
                        alpha,
                        beta,
                        precision,
                        ..Problem::plain(m, n, k)
                    }
                    .tight();
                    seed += 1;
                    cases += 1;
                    if let Err(e) = one(&mut session, &mut gemm, &p, seed) {
                        failures.push(format!("{} via tc: {e}", p.describe()));
                    }
                }
            }
        }
    }
    gemm.release(&session);
    (cases, failures)
}

#[test]
fn tensor_cores_through_the_routine_on_cuda() {
    let Some(b) = common::cuda("tensor_cores_through_the_routine_on_cuda") else {
        return;
    };
    report("CUDA, tc", tc_client(b));
}

#[test]
fn tensor_cores_through_the_routine_on_nvidia_opencl() {
    let b = common::opencl();
    let spec = gemmlab::kernel::builtin::find("tc").unwrap();
    if let Some(why) = spec.unavailable(b.info(), &Default::default()) {
        common::say(&format!(
            "SKIPPED tensor_cores_through_the_routine_on_nvidia_opencl: {why}"
        ));
        return;
    }
    report("NVIDIA OpenCL, tc", tc_client(b));
}

#[test]
fn the_routine_refuses_fp32_emulation_unasked_and_tensor_cores_where_there_are_none() {
    let mut session = Session::new(common::opencl());
    let mut gemm = Gemm::published().unwrap();
    let spec = gemmlab::kernel::builtin::find("tc").unwrap();
    gemm.force_choice = Some(("tc".into(), spec.defaults(), Default::default()));
    let p = Problem::plain(33, 65, 17);
    let e = one(&mut session, &mut gemm, &p, 3).unwrap_err();
    assert!(e.contains("--fp32-emulation"), "{e}");
    let nvidia = session.backend.borrow().info().is_nvidia();
    if !nvidia {
        // PoCL: no tensor cores; the reason, not a fault.
        gemm.fp32_emulation = true;
        let e = one(&mut session, &mut gemm, &p, 3).unwrap_err();
        assert!(
            e.contains("tc") && e.to_lowercase().contains("nvidia"),
            "{e}"
        );
    }
    gemm.release(&session);
}

#[test]
fn every_blas_case_on_opencl() {
    report("OpenCL", client(common::opencl()));
}

#[test]
fn every_blas_case_on_cuda() {
    let Some(b) = common::cuda("every_blas_case_on_cuda") else {
        return;
    };
    report("CUDA", client(b));
}

#[test]
fn bad_arguments_are_named_and_nothing_runs() {
    let mut session = Session::new(common::opencl());
    let mut gemm = Gemm::published().unwrap();
    let p = Problem::plain(8, 6, 4);
    let ops = Operands::for_problem(p, 3);
    let a = upload_operand(&session, &ops, Matrix::A, f32::NAN).unwrap();
    let b = upload_operand(&session, &ops, Matrix::B, f32::NAN).unwrap();
    let c = upload_operand(&session, &ops, Matrix::C, C_GAP).unwrap();
    let mut bad = p;
    bad.lda = 7;
    let e = gemm
        .run(&mut session, &bad, a, b, c)
        .unwrap_err()
        .to_string();
    assert!(e.contains("argument 9 (lda)"), "{e}");
    // A buffer too small for the leading dimension asked.
    let mut big = p;
    big.ldc = 20;
    let e = gemm
        .run(&mut session, &big, a, b, c)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("argument 13 (C)") && e.contains("holds 48"),
        "{e}"
    );
    // f64 call on f32 buffers.
    let mut dp = p;
    dp.precision = Precision::F64;
    let e = gemm
        .run(&mut session, &dp, a, b, c)
        .unwrap_err()
        .to_string();
    assert!(e.contains("DGEMM") && e.contains("F32"), "{e}");
    let (logical, _) = read_c(&session, c, &p).unwrap();
    assert!(
        logical.iter().all(|v| v.is_nan()),
        "C was written by a refused call"
    );
    gemm.release(&session);
}

#[test]
fn host_matrices_round_trip_through_the_routine() {
    // The Rust example of docs/src/routine.md: row-major f64, B transposed, alpha and beta.
    let mut session = Session::new(common::opencl());
    let mut gemm = Gemm::published().unwrap();
    let p = Problem {
        layout: Layout::RowMajor,
        trans_b: Trans::T,
        alpha: 2.0,
        beta: -1.0,
        precision: Precision::F64,
        ..Problem::plain(3, 2, 4)
    }
    .tight();
    let a: Vec<f64> = (0..12).map(|x| x as f64).collect(); // 3 x 4, row-major
    let b: Vec<f64> = (0..8).map(|x| 1.0 - x as f64 / 4.0).collect(); // 2 x 4 (B^T), row-major
    let mut c = vec![1.0f64; 6];
    gemm.run_host(&mut session, &p, &a, &b, &mut c).unwrap();
    for i in 0..3 {
        for j in 0..2 {
            let dot: f64 = (0..4).map(|e| a[i * 4 + e] * b[j * 4 + e]).sum();
            assert_eq!(c[i * 2 + j], 2.0 * dot - 1.0, "C({i},{j})");
        }
    }
    let wrong: Vec<f32> = vec![0.0; 12];
    let mut cf = vec![0.0f32; 6];
    let e = gemm
        .run_host(&mut session, &p, &wrong, &wrong[..8], &mut cf)
        .unwrap_err()
        .to_string();
    assert!(e.contains("f32") && e.contains("f64"), "{e}");
    gemm.release(&session);
}
