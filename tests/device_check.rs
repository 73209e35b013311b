//! The device check (`Session::device_checks`, kernels-*/check.*): a tuner checks
//! a gap-free C against its f64 reference on the device instead of downloading
//! it. Its verdict and numbers must be the host check's, for the tutorial's
//! kernels (a padded C, unpadded) and the CLBlast ones (the routine's C), in f32
//! and f64; a wrong result must fail there as on the host.

mod common;

use gemmlab::experiment::Problem as Checked;
use gemmlab::gemm::check::CheckReport;
use gemmlab::gemm::driver::{prepare, Session};
use gemmlab::gemm::problem::{Precision, Problem};
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Hints};

fn checked(p: Problem, seed: u64) -> Checked {
    let ops = Operands::for_problem(p, seed);
    let reference = Reference::cpu(&ops);
    Checked { ops, reference }
}

/// The checked run's report of `kernel` on `problem`, checked on the device or not.
fn report(session: &mut Session, kernel: &str, problem: &Checked, on_device: bool) -> CheckReport {
    session.device_checks = on_device;
    let spec = kernels::find(kernel).unwrap();
    let a = prepare(
        session,
        spec,
        &spec.defaults(),
        &Hints::default(),
        &problem.ops,
        &problem.reference,
        false,
    );
    if let Some(p) = a.prepared {
        p.release(session);
    }
    a.check
        .unwrap_or_else(|| panic!("{kernel}: {:?}", a.status))
}

fn assert_same(host: &CheckReport, device: &CheckReport, what: &str) {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300);
    assert!(
        device
            .method
            .as_deref()
            .unwrap_or("")
            .contains("on the device"),
        "{what}: {device:?}"
    );
    assert!(!host
        .method
        .as_deref()
        .unwrap_or("")
        .contains("on the device"));
    assert_eq!(host.passed, device.passed, "{what}");
    assert!(
        close(host.rel_frobenius, device.rel_frobenius),
        "{what}: {host:?} {device:?}"
    );
    assert!(
        close(host.max_err_over_rms, device.max_err_over_rms),
        "{what}: {host:?} {device:?}"
    );
    assert_eq!(host.non_finite, device.non_finite, "{what}");
    assert_eq!(host.compared, device.compared, "{what}");
    assert_eq!(host.precision, device.precision, "{what}");
}

#[test]
fn the_device_check_agrees_with_the_host_check() {
    agree_on(Session::new(common::opencl()));
}

#[cfg(feature = "cuda")]
#[test]
fn on_cuda_the_device_check_agrees_with_the_host_check() {
    if let Some(be) = common::cuda("on_cuda_the_device_check_agrees_with_the_host_check") {
        agree_on(Session::new(be));
    }
}

fn agree_on(mut session: Session) {
    for (kernel, precision, (m, n, k)) in [
        ("gemm6", Precision::F32, (100, 70, 33)),
        ("xgemm", Precision::F32, (96, 130, 40)),
        ("xgemmdirect", Precision::F64, (65, 33, 17)),
        ("simt", Precision::F32, (130, 97, 64)),
        ("xgemm", Precision::F32, (1024, 1024, 256)),
    ] {
        let problem = checked(
            Problem {
                precision,
                ..Problem::plain(m, n, k)
            },
            3,
        );
        let host = report(&mut session, kernel, &problem, false);
        let device = report(&mut session, kernel, &problem, true);
        let what = format!("{kernel} {precision:?} {m}x{n}x{k}");
        assert!(host.passed, "{what}: {host:?}");
        assert_same(&host, &device, &what);
    }
}

#[test]
fn a_wrong_result_fails_the_device_check_too() {
    let mut session = Session::new(common::opencl());
    for kernel in ["gemm6", "xgemm"] {
        let mut problem = checked(Problem::plain(64, 48, 32), 4);
        // One element off by a little: the element criterion, not the norm, catches it.
        if let Reference::Full { c, .. } = &mut problem.reference {
            c[7 * 64 + 5] += 0.5;
        }
        let host = report(&mut session, kernel, &problem, false);
        let device = report(&mut session, kernel, &problem, true);
        assert!(!host.passed, "{kernel}: {host:?}");
        assert_same(&host, &device, kernel);
        assert_eq!(device.worst_index, Some((5, 7)), "{kernel}: {device:?}");
    }
}
