//! Every registry kernel on the OpenCL device, at awkward sizes, against the f64 reference.

mod common;

use gemmlab::gemm::driver::{prepare, Session};
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::Backend;

const SIZES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (17, 17, 17),
    (100, 100, 100),
    (129, 129, 129),
    (70, 200, 33),
];

#[test]
fn every_kernel_verifies_at_every_size() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    common::say(&format!("kernels on {}", info.label()));
    let mut failures = Vec::new();
    for &(m, n, k) in SIZES {
        let ops = Operands::new(m, n, k, 42 + m as u64);
        let reference = Reference::cpu(&ops);
        for spec in kernels::all() {
            // The published defaults are plain OpenCL C and run everywhere, but for the
            // tensor-core family's inline PTX, which needs an NVIDIA GPU of sm_80 or later.
            if let Some(why) = spec.unavailable(&info, &Hints::default()) {
                assert_eq!(
                    spec.family,
                    kernels::Family::TensorCore,
                    "{}: {why}",
                    spec.id
                );
                continue;
            }
            let attempt = prepare(
                &mut session,
                spec,
                &spec.defaults(),
                &Hints::default(),
                &ops,
                &reference,
                false,
            );
            match attempt.prepared {
                Some(p) => {
                    assert!(p.check.passed);
                    p.release(&session);
                }
                None => failures.push(format!("{} at {m}x{n}x{k}: {:?}", spec.id, attempt.status)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn non_default_configurations_verify() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    let (m, n, k) = (96, 160, 72);
    let ops = Operands::new(m, n, k, 9);
    let reference = Reference::cpu(&ops);
    let cases: &[(&str, &[(&str, i64)])] = &[
        ("gemm2", &[("TS", 16)]),
        ("gemm3", &[("TS", 16), ("WPT", 4)]),
        ("gemm4", &[("TS", 16), ("WIDTH", 2)]),
        ("gemm4", &[("TS", 32), ("WIDTH", 8)]),
        ("gemm5", &[("TS", 16), ("WPT", 4), ("TSDK", 8)]),
        (
            "gemm6",
            &[("TSM", 64), ("TSN", 64), ("WPTM", 4), ("WPTN", 4)],
        ),
        (
            "gemm7",
            &[
                ("TSM", 64),
                ("TSN", 64),
                ("WPTM", 4),
                ("WPTN", 4),
                ("WIDTH", 2),
            ],
        ),
        ("gemm9", &[("TSM", 64), ("TSN", 64), ("TSK", 32)]),
        ("gemm10", &[("TSM", 128), ("TSN", 64)]),
        ("gemm11", &[("RX", 4), ("RY", 4), ("RK", 4)]),
        ("gemm11", &[("RX", 2), ("RY", 8), ("RK", 8)]),
        ("gemm11", &[("RX", 8), ("RY", 2), ("RK", 2)]),
    ];
    for (id, defines) in cases {
        let spec = kernels::find(id).unwrap();
        let d: Vec<(String, i64)> = defines.iter().map(|(a, b)| (a.to_string(), *b)).collect();
        let config = spec.config(&d).unwrap_or_else(|e| panic!("{id}: {e}"));
        for hints in [Hints::default(), every_portable_switch_flipped(spec)] {
            let attempt = prepare(&mut session, spec, &config, &hints, &ops, &reference, false);
            let p = attempt.prepared.unwrap_or_else(|| {
                panic!(
                    "{id} {} on {}: {:?}",
                    config.describe(),
                    info.name,
                    attempt.status
                )
            });
            p.release(&session);
        }
    }
}

/// Every switch that plain OpenCL C can express, moved away from its published state.
fn every_portable_switch_flipped(spec: &kernels::KernelSpec) -> Hints {
    let mut h = Hints::default();
    for s in spec
        .switches
        .iter()
        .filter(|s| !s.switch.opencl_needs_nvidia)
    {
        h = h.with_switch(s.name(), !s.published_opencl);
    }
    h
}

#[test]
fn each_switch_alone_verifies() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    let (m, n, k) = (130, 70, 40);
    let ops = Operands::new(m, n, k, 5);
    let reference = Reference::cpu(&ops);
    let mut failures = Vec::new();
    for spec in kernels::all() {
        if let Some(why) = spec.unavailable(&info, &Hints::default()) {
            common::say(&format!("{} not on {}: {why}", spec.id, info.name));
            continue;
        }
        for s in spec.switches {
            let flipped = Hints::default().with_switch(s.name(), !s.published_opencl);
            // A switch that means something only beside another setting gets it.
            let (config, hints) = common::admitting(spec, &flipped, info.toolchain)
                .unwrap_or_else(|| panic!("{} {}: no configuration admits it", spec.id, s.name()));
            if let Some(why) = spec.unavailable(&info, &hints) {
                assert!(
                    s.switch.opencl_needs_nvidia,
                    "{} {}: {why}",
                    spec.id,
                    s.name()
                );
                assert!(why.contains(s.name()), "{why}");
                common::say(&format!(
                    "{} {}=1 not on {}: {why}",
                    spec.id,
                    s.name(),
                    info.name
                ));
                continue;
            }
            let attempt = prepare(&mut session, spec, &config, &hints, &ops, &reference, false);
            match attempt.prepared {
                Some(p) => p.release(&session),
                None => failures.push(format!(
                    "{} {}: {:?}",
                    spec.id,
                    hints.describe(false),
                    attempt.status
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_violated_constraint_is_reported_not_compiled() {
    let mut session = Session::new(common::opencl());
    let ops = Operands::new(64, 64, 64, 1);
    let reference = Reference::cpu(&ops);
    let spec = kernels::find("gemm4").unwrap();
    let mut bad = spec.defaults();
    bad.0.insert("WIDTH".into(), 3);
    let attempt = prepare(
        &mut session,
        spec,
        &bad,
        &Hints::default(),
        &ops,
        &reference,
        false,
    );
    let reason = attempt.status.reason().unwrap_or_default().to_string();
    assert!(
        reason.contains("WIDTH") && reason.contains("WIDTH=3"),
        "{reason}"
    );
    assert!(attempt.build.is_none(), "must not reach the compiler");
}
