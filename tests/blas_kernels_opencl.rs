//! Every kernel written for `real` (CLBlast's and the lecture's) through the
//! driver on BLAS calls other than the tutorial's: both precisions, row- and
//! column-major, transposes, leading dimensions above the minimum (the
//! lecture's strides), offsets, alpha and beta, at sizes that are multiples of
//! no block size; the lecture's kernels at every BLOCK_SIZE. Each run is the
//! driver's checked run (C poisoned, gaps guarded, f64 reference).

mod common;

use gemmlab::experiment::Problem as Checked;
use gemmlab::gemm::driver::{prepare, Session};
use gemmlab::gemm::problem::{Layout, Precision, Problem, Trans};
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Family, Hints};
use gemmlab::Backend;

fn calls() -> Vec<Problem> {
    let mut out = Vec::new();
    for precision in Precision::ALL {
        for (layout, ta, tb, (m, n, k), loose, (alpha, beta)) in [
            (
                Layout::RowMajor,
                Trans::N,
                Trans::N,
                (33, 65, 17),
                true,
                (1.0, 0.0),
            ),
            (
                Layout::ColMajor,
                Trans::N,
                Trans::N,
                (100, 37, 129),
                false,
                (1.0, 0.0),
            ),
            (
                Layout::RowMajor,
                Trans::T,
                Trans::N,
                (47, 9, 70),
                true,
                (1.5, 0.5),
            ),
            (
                Layout::ColMajor,
                Trans::N,
                Trans::T,
                (9, 140, 31),
                true,
                (-1.0, 1.0),
            ),
            (
                Layout::RowMajor,
                Trans::T,
                Trans::T,
                (1, 1, 1),
                false,
                (1.0, 0.0),
            ),
        ] {
            let mut p = Problem {
                layout,
                trans_a: ta,
                trans_b: tb,
                alpha,
                beta,
                precision,
                ..Problem::plain(m, n, k)
            }
            .tight();
            if loose {
                p.lda += 3;
                p.ldb += 5;
                p.ldc += 2;
            }
            if beta != 0.0 {
                p.a_offset = 1;
                p.c_offset = 4;
            }
            out.push(p);
        }
    }
    out
}

#[test]
fn real_kernels_verify_on_blas_calls_in_both_precisions() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    // Kernels this device cannot run (the tensor-core family off NVIDIA GPUs) say why, once.
    let specs: Vec<_> = kernels::all()
        .iter()
        .filter(|k| k.multi_precision())
        .filter(|k| match k.unavailable(&info, &Hints::default()) {
            Some(why) => {
                common::say(&format!("{} not run here: {why}", k.id));
                false
            }
            None => true,
        })
        .collect();
    assert!(specs.iter().any(|k| k.family == Family::Lecture));
    let mut runs = 0;
    let mut failures = Vec::new();
    for (i, p) in calls().into_iter().enumerate() {
        let ops = Operands::for_problem(p, 100 + i as u64);
        let reference = Reference::cpu(&ops);
        for spec in &specs {
            let blocks: &[i64] = if spec.family == Family::Lecture {
                &[8, 16, 32]
            } else {
                &[0]
            };
            for &bs in blocks {
                let defines = if bs > 0 {
                    vec![("BLOCK_SIZE".to_string(), bs)]
                } else {
                    Vec::new()
                };
                let config = spec.config(&defines).unwrap();
                let a = prepare(
                    &mut session,
                    spec,
                    &config,
                    &Hints::default(),
                    &ops,
                    &reference,
                    false,
                );
                runs += 1;
                match a.prepared {
                    Some(prep) => prep.release(&session),
                    None => failures.push(format!(
                        "{} BLOCK_SIZE={bs} on {}: {}",
                        spec.id,
                        p.describe(),
                        a.status.reason().unwrap_or("failed")
                    )),
                }
            }
        }
    }
    common::say(&format!(
        "{runs} checked runs of real kernels on BLAS calls, {} failed",
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_tutorial_kernels_refuse_other_calls_with_the_reason() {
    let mut session = Session::new(common::opencl());
    let p = Problem {
        precision: Precision::F64,
        ..Problem::plain(16, 16, 16)
    };
    let checked = Checked {
        ops: Operands::for_problem(p, 1),
        reference: Reference::cpu(&Operands::for_problem(p, 1)),
    };
    let spec = kernels::find("gemm6").unwrap();
    let a = prepare(
        &mut session,
        spec,
        &spec.defaults(),
        &Hints::default(),
        &checked.ops,
        &checked.reference,
        false,
    );
    assert!(a.prepared.is_none());
    let why = a.status.reason().unwrap_or_default().to_string();
    assert!(why.contains("f32 only"), "{why}");
}
