//! The SIMT kernel in place (`simtdirect`) on the OpenCL device (PoCL in CI):
//! every BLAS case (both layouts, the four transpose cases, offsets, leading
//! dimensions with and without 16-byte alignment, alpha and beta) at sizes that
//! are multiples of no tile, at pipeline depths and with its switches, checked
//! against the f64 reference; no launch but the kernel's own. On CUDA
//! (`--features cuda`, skipped visibly without a GPU) the same matrix runs.

mod common;

use gemmlab::backend::{AnyBackend, Arg, Elem};
use gemmlab::gemm::driver::{prepare, Session};
use gemmlab::gemm::problem::{Problem, Trans};
use gemmlab::gemm::stage;
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Config, Hints, KernelSpec};
use gemmlab::Backend;

fn direct() -> &'static KernelSpec {
    kernels::find("simtdirect").expect("simtdirect is in the registry")
}

fn config(extra: &[(&str, i64)]) -> Config {
    common::small_simt_config(direct(), extra)
}

fn check(session: &mut Session, config: &Config, hints: &Hints, ops: &Operands) -> Option<String> {
    common::check_kernel(session, direct(), config, hints, ops).err()
}

/// Where split-K and stream-K run: both share tiles among work-groups here
/// (stream-K on any device of 1 to 8 compute units, `stream_k_shares_tiles`).
const SHARED_SIZES: [(usize, usize, usize); 2] = [(70, 45, 300), (200, 128, 64)];

/// Calls whose leading dimensions and offsets are multiples of 4 (cp.async copies
/// their operands read along M or N) at sizes that are not: the edge chunks are
/// partly past the matrix. Every BLAS case at 132x68x44, and 130x66x42 with
/// aligned padded leading dimensions and offsets.
fn aligned_calls() -> Vec<Problem> {
    let mut calls = common::blas_calls(132, 68, 44);
    calls.truncate(8);
    for (trans_a, trans_b) in [
        (Trans::N, Trans::N),
        (Trans::N, Trans::T),
        (Trans::T, Trans::T),
    ] {
        let mut p = Problem {
            trans_a,
            trans_b,
            alpha: 0.75,
            beta: 0.5,
            ..Problem::plain(130, 66, 42)
        }
        .tight();
        (p.a_offset, p.b_offset, p.c_offset) = (4, 8, 0);
        p.lda = p.lda.next_multiple_of(4) + 4;
        p.ldb = p.ldb.next_multiple_of(4);
        p.ldc += 3;
        calls.push(p);
    }
    calls
}

/// Every call of `calls` at odd sizes with the small tiles; pipeline depths and
/// switches on one size; the published tiles on one; stream-K on every call of
/// two sizes; with `nvidia`, split-K likewise and the cp.async copies (aligned and
/// unaligned calls, every depth, split-K and stream-K). The failures, and the run
/// count.
fn odd_size_matrix(session: &mut Session, nvidia: bool) -> (usize, Vec<String>) {
    let mut runs = 0;
    let mut failures = Vec::new();
    let mut run = |session: &mut Session, cfg: &Config, hints: &Hints, p: Problem, seed: u64| {
        runs += 1;
        let ops = Operands::for_problem(p, seed);
        failures.extend(check(session, cfg, hints, &ops));
    };
    let plain = config(&[]);
    for (i, &(m, n, k)) in [(1, 1, 1), (33, 65, 17), (70, 45, 300)].iter().enumerate() {
        for (j, p) in common::blas_calls(m, n, k).into_iter().enumerate() {
            run(session, &plain, &Hints::default(), p, (100 * i + j) as u64);
        }
    }
    let variants: Vec<(Config, Hints)> = vec![
        (config(&[("STAGES", 1)]), Hints::default()),
        (config(&[("STAGES", 3)]), Hints::default()),
        (config(&[("STAGES", 4), ("BK", 16)]), Hints::default()),
        (
            plain.clone(),
            Hints::default().with_switch("VEC_LOADS", false),
        ),
        (
            plain.clone(),
            Hints::default().with_switch("SMEM_PAD", true),
        ),
        (plain.clone(), Hints::default().with_switch("RASTER", false)),
        (
            plain.clone(),
            Hints::default().with_switch("KMAJOR_RUNS", true),
        ),
        (
            config(&[("STAGES", 3), ("BK", 16)]),
            Hints::default().with_switch("KMAJOR_RUNS", true),
        ),
        (
            plain.clone(),
            Hints::default()
                .with_switch("USE_BOUNDS", false)
                .with_switch("USE_RESTRICT", false),
        ),
        (direct().defaults(), Hints::default()),
        // K-contiguous operands transposed first (one pack or pack_pair), read along M and N.
        (config(&[("ALONG_MN", 1)]), Hints::default()),
        // Narrow tiles (48 and 96): the last round of each tile's copy leaves threads idle.
        (
            config(&[("BM", 64), ("BN", 48), ("WM", 32), ("WN", 16)]),
            Hints::default(),
        ),
        (
            config(&[("BM", 48), ("BN", 64), ("WM", 16), ("STAGES", 3)]),
            Hints::default(),
        ),
    ];
    for (cfg, hints) in &variants {
        for (j, p) in common::blas_calls(131, 67, 45)
            .into_iter()
            .enumerate()
            .step_by(3)
        {
            run(session, cfg, hints, p, 900 + j as u64);
        }
    }
    // B's tile kept along K (KTILE_B): B stored along K copied as it is, B stored along N
    // transposed on the way; every BLAS case, so both forms and both layouts.
    let ktile = Hints::default().with_switch("KTILE_B", true);
    let kept: Vec<(Config, Hints)> = vec![
        (plain.clone(), ktile.clone()),
        (
            config(&[("STAGES", 3), ("BK", 16)]),
            ktile.clone().with_switch("SMEM_PAD", true),
        ),
        (
            config(&[("BM", 48), ("BN", 64), ("WM", 16), ("STAGES", 1), ("BK", 8)]),
            ktile.clone().with_switch("KMAJOR_RUNS", true),
        ),
        (config(&[("SLICEK", 2), ("BK", 16)]), ktile.clone()),
    ];
    for (i, (cfg, hints)) in kept.iter().enumerate() {
        for (j, p) in common::blas_calls(131, 67, 45).into_iter().enumerate() {
            run(session, cfg, hints, p, (2000 + 40 * i + j) as u64);
        }
    }
    // Compiled for one form (FIXED_FORM): a call stored so and aligned is read as it is,
    // any other transposed or copied first; every BLAS case, aligned and not.
    let fixed = |a: i64, b: i64, extra: &[(&str, i64)]| {
        let form = [("FIXED_FORM", 1), ("KMAJOR_A", a), ("KMAJOR_B", b)];
        config(&[&form[..], extra].concat())
    };
    let mut forms: Vec<(Config, Hints)> = Vec::new();
    for (a, b) in [(1, 0), (0, 1), (1, 1)] {
        forms.push((fixed(a, b, &[]), Hints::default()));
        forms.push((fixed(a, b, &[("STAGES", 3), ("BK", 16)]), ktile.clone()));
    }
    if nvidia {
        let on = Hints::default().with_switch("ASYNC_COPY", true);
        forms.extend([
            (fixed(0, 1, &[]), on.clone()),
            (fixed(1, 0, &[("STAGES", 3)]), on.clone()),
            (
                fixed(0, 1, &[("SPLITK", 2)]),
                on.clone().with_switch("KTILE_B", true),
            ),
            (
                fixed(1, 1, &[("STAGES", 3), ("BK", 16)]),
                (on.clone().with_switch("KTILE_B", true)).with_switch("SMEM_PAD", true),
            ),
            (
                fixed(1, 1, &common::NARROW_STREAM_K),
                on.clone().with_switch("ASYNC_ALONG_K", true),
            ),
            (
                fixed(0, 1, &[("SLICEK", 2), ("BK", 16)]),
                on.with_switch("KTILE_B", true),
            ),
        ]);
    }
    for (i, (cfg, hints)) in forms.iter().enumerate() {
        let calls = aligned_calls()
            .into_iter()
            .chain(common::blas_calls(131, 67, 45));
        for (j, p) in calls.enumerate().skip(i % 2).step_by(2) {
            run(session, cfg, hints, p, (3000 + 40 * i + j) as u64);
        }
    }
    let mut shares = vec![
        config(&common::NARROW_STREAM_K),
        config(&[("STREAMK", 1)]),
        config(&[("STREAMK", 2), ("STAGES", 3)]),
        config(&[("STREAMK", 4), ("STAGES", 1)]),
        direct()
            .config(&[("STREAMK".into(), 3)])
            .expect("the published tiles take stream-K"),
        // Split-K summed by a kernel of its own (REDUCE): no work-group waits for
        // another, so it runs off NVIDIA too; splits without a K tile write zeros.
        config(&[("SPLITK", 2), ("REDUCE", 1)]),
        config(&[("SPLITK", 32), ("REDUCE", 1), ("STAGES", 3)]),
        config(&[("SPLITK", 3), ("REDUCE", 1), ("ALONG_MN", 1)]),
        // Slice-K: groups of warps on one tile, alone and with stream-K or REDUCE.
        config(&[("SLICEK", 2)]),
        config(&[("SLICEK", 4), ("STREAMK", 2), ("STAGES", 3)]),
        config(&[("SLICEK", 2), ("SPLITK", 4), ("REDUCE", 1), ("ALONG_MN", 1)]),
    ];
    if nvidia {
        let on = Hints::default().with_switch("ASYNC_COPY", true);
        let copies: Vec<(Config, Hints)> = vec![
            (plain.clone(), on.clone()),
            (config(&[("STAGES", 1)]), on.clone()),
            (config(&[("STAGES", 3), ("BK", 16)]), on.clone()),
            (plain.clone(), on.clone().with_switch("VEC_LOADS", false)),
            (plain.clone(), on.clone().with_switch("CP_CA", true)),
            (config(&[("SPLITK", 3), ("STAGES", 3)]), on.clone()),
            (config(&common::NARROW_STREAM_K), on.clone()),
            (config(&[("ALONG_MN", 1), ("STAGES", 3)]), on.clone()),
            (config(&[("ALONG_MN", 1), ("SPLITK", 2)]), on.clone()),
            (
                config(&[("SPLITK", 4), ("REDUCE", 1), ("STAGES", 3)]),
                on.clone(),
            ),
            (
                config(&[("BM", 48), ("BN", 64), ("WM", 16), ("STAGES", 3)]),
                on.clone().with_switch("KMAJOR_RUNS", true),
            ),
            // Operands the call stores along K copied by cp.async too, edges zero-filled.
            (plain.clone(), on.clone().with_switch("ASYNC_ALONG_K", true)),
            (
                config(&[("SPLITK", 3), ("STAGES", 3), ("BK", 32)]),
                (on.clone().with_switch("ASYNC_ALONG_K", true)).with_switch("SMEM_PAD", true),
            ),
            (
                config(&[("BM", 48), ("BN", 64), ("WM", 16), ("STAGES", 4), ("BK", 8)]),
                (on.clone().with_switch("ASYNC_ALONG_K", true)).with_switch("VEC_LOADS", false),
            ),
            (
                config(&common::NARROW_STREAM_K),
                on.clone().with_switch("ASYNC_ALONG_K", true),
            ),
            // B stored along K and aligned copied by cp.async into a tile kept along K,
            // zero-filled past K and N; unaligned or along N, through registers.
            (plain.clone(), on.clone().with_switch("KTILE_B", true)),
            (
                config(&[("SPLITK", 3), ("STAGES", 3), ("BK", 32)]),
                (on.clone().with_switch("KTILE_B", true)).with_switch("SMEM_PAD", true),
            ),
            (
                config(&[("BM", 48), ("BN", 64), ("WM", 16), ("STAGES", 4), ("BK", 8)]),
                on.clone().with_switch("KTILE_B", true),
            ),
            (
                config(&common::NARROW_STREAM_K),
                on.with_switch("KTILE_B", true),
            ),
        ];
        let unaligned = common::blas_calls(131, 67, 45);
        for (i, (cfg, hints)) in copies.iter().enumerate() {
            for (j, p) in aligned_calls().into_iter().enumerate() {
                run(session, cfg, hints, p, (1300 + 20 * i + j) as u64);
            }
            for (j, p) in unaligned.iter().enumerate().skip(i % 2).step_by(2) {
                run(session, cfg, hints, *p, (1600 + 20 * i + j) as u64);
            }
        }
    }
    if nvidia {
        shares.extend([
            config(&[("SLICEK", 4), ("SPLITK", 3), ("STAGES", 3)]),
            config(&[("SPLITK", 2)]),
            config(&[("SPLITK", 3), ("STAGES", 3)]),
            config(&[("SPLITK", 16), ("STAGES", 1)]),
            direct()
                .config(&[("SPLITK".into(), 4)])
                .expect("the published tiles split 4 ways"),
        ]);
    }
    for cfg in &shares {
        for (i, &(m, n, k)) in SHARED_SIZES.iter().enumerate() {
            for (j, p) in common::blas_calls(m, n, k).into_iter().enumerate() {
                run(
                    session,
                    cfg,
                    &Hints::default(),
                    p,
                    (500 + 100 * i + j) as u64,
                );
            }
        }
    }
    (runs, failures)
}

#[test]
fn stream_k_shares_tiles() {
    // The small tiles (32 x 32, BK 8) and the published ones (128 x 128, BK 16).
    for units in 1..=8 {
        for (tile, depth) in [(32, 8), (128, 16)] {
            let shared = SHARED_SIZES.iter().any(|&(m, n, k)| {
                let tiles = m.div_ceil(tile) * n.div_ceil(tile);
                (1..=4).any(|per_unit| {
                    common::stream_k_shares_a_tile(units, tiles, k.div_ceil(depth), per_unit)
                })
            });
            assert!(shared, "{units} compute units, {tile}-wide tiles");
        }
    }
}

#[test]
fn every_blas_case_verifies_in_place_at_odd_sizes() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    let (runs, failures) = odd_size_matrix(&mut session, info.is_nvidia());
    common::say(&format!(
        "simtdirect on {}: {runs} checked runs at odd sizes, {} failed",
        info.label(),
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Off NVIDIA, split-K in place is refused with its reason, not attempted.
#[test]
fn split_k_in_place_is_refused_off_nvidia_with_the_reason() {
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    if info.is_nvidia() {
        common::say("split-K in place runs on NVIDIA's OpenCL: the odd-size matrix checks it");
        return;
    }
    let ops = Operands::new(70, 45, 300, 5);
    let reference = Reference::cpu(&ops);
    let cfg = config(&[("SPLITK", 2)]);
    let a = prepare(
        &mut session,
        direct(),
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

#[cfg(feature = "cuda")]
#[test]
fn cuda_every_blas_case_verifies_in_place_at_odd_sizes() {
    let Some(b) = common::cuda("cuda_every_blas_case_verifies_in_place_at_odd_sizes") else {
        return;
    };
    let mut session = Session::new(b);
    let label = session.backend.borrow().info().label();
    let (runs, failures) = odd_size_matrix(&mut session, true);
    common::say(&format!(
        "simtdirect on {label}: {runs} checked runs at odd sizes, {} failed",
        failures.len()
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The plan reads the caller's buffers as they are: one launch, nothing packed,
/// A and B K-contiguous exactly where the call stores them so; split-K's buffers last.
#[test]
fn the_plan_is_one_launch_on_the_callers_buffers() {
    let mut be: AnyBackend = common::opencl();
    let spec = direct();
    let cfg = config(&[]);
    let along = config(&[("ALONG_MN", 1)]);
    let (program, _) = be
        .compile(
            "simtdirect",
            &spec.source(be.info().toolchain),
            &spec.compile_options(&cfg, &Hints::default(), be.info().toolchain),
        )
        .expect("simtdirect compiles");
    // The in-place plan needs no support kernels: the kernel's own program stands in.
    let support = program;
    let bufs: Vec<_> = (0..3)
        .map(|_| be.alloc(Elem::F32, 4096).expect("alloc"))
        .collect();
    for (trans_a, trans_b, kmajor) in [
        (Trans::N, Trans::N, (0, 1)),
        (Trans::T, Trans::N, (1, 1)),
        (Trans::N, Trans::T, (0, 0)),
        (Trans::T, Trans::T, (1, 0)),
    ] {
        let p = Problem {
            trans_a,
            trans_b,
            ..Problem::plain(37, 29, 41)
        }
        .tight();
        let s = stage::plan(
            &mut be, spec, &cfg, program, support, &p, bufs[0], bufs[1], bufs[2],
        )
        .expect("planned");
        // Nothing packed; the only buffers made are split-K's (unused at SPLITK=1).
        assert!(s.pre.is_empty() && s.post.is_empty() && s.owned.len() == 2);
        assert_eq!(s.padded, [37, 29, 41]);
        let n = s.main.args.len();
        let flags: Vec<i32> = s.main.args[n - 4..n - 2]
            .iter()
            .map(|a| match a {
                Arg::I32(v) => *v,
                _ => -1,
            })
            .collect();
        assert_eq!(flags, [kmajor.0, kmajor.1], "{trans_a:?}{trans_b:?}");

        // ALONG_MN: the K-contiguous operands transposed first, in one launch, into
        // copies whose ld is a multiple of 4; C and the rest in place. At 36x28x44 every
        // ld is a multiple of 4; with A one element in, A is copied wherever it is read.
        for a_offset in [0, 1] {
            let mut q = Problem {
                trans_a,
                trans_b,
                ..Problem::plain(36, 28, 44)
            }
            .tight();
            q.a_offset = a_offset;
            let s = stage::plan(
                &mut be, spec, &along, program, support, &q, bufs[0], bufs[1], bufs[2],
            )
            .expect("planned");
            let packed = (kmajor.0 == 1 || a_offset != 0, kmajor.1 == 1);
            let entries: Vec<&str> = s.pre.iter().map(|x| x.entry).collect();
            let expected: &[&str] = match packed {
                (false, false) => &[],
                (true, true) => &["pack_pair"],
                _ => &["pack_matrix"],
            };
            assert_eq!(entries, expected, "{trans_a:?}{trans_b:?} {a_offset}");
            let copies = usize::from(packed.0) + usize::from(packed.1);
            assert!(s.post.is_empty() && s.owned.len() == 2 + copies);
            let ints = |at: usize| match s.main.args[at] {
                Arg::I32(v) => v,
                _ => -1,
            };
            let n = s.main.args.len();
            assert_eq!([ints(n - 4), ints(n - 3)], [0, 0], "read along M and N");
            // A's and B's offsets and lds (arguments 6, 7 and 9, 10).
            let a = if packed.0 {
                [0, 36]
            } else {
                [a_offset as i32, 36]
            };
            assert_eq!([ints(6), ints(7), ints(9), ints(10)], [a[0], a[1], 0, 28]);
        }

        // FIXED_FORM for A along K and B along K (a column-major TN call's form): an
        // operand stored the other way is transposed first (in one launch where both
        // are), into a K-contiguous copy; one stored so goes as it is.
        let tn = config(&[("FIXED_FORM", 1), ("KMAJOR_A", 1), ("KMAJOR_B", 1)]);
        let q = Problem {
            trans_a,
            trans_b,
            ..Problem::plain(36, 28, 44)
        }
        .tight();
        let s = stage::plan(
            &mut be, spec, &tn, program, support, &q, bufs[0], bufs[1], bufs[2],
        )
        .expect("planned");
        let moved = (kmajor.0 == 0, kmajor.1 == 0);
        let entries: Vec<&str> = s.pre.iter().map(|x| x.entry).collect();
        let expected: &[&str] = match moved {
            (false, false) => &[],
            (true, true) => &["pack_pair"],
            _ => &["pack_matrix"],
        };
        assert_eq!(entries, expected, "{trans_a:?}{trans_b:?}");
        let copies = usize::from(moved.0) + usize::from(moved.1);
        assert!(s.post.is_empty() && s.owned.len() == 2 + copies);
        let ints = |at: usize| match s.main.args[at] {
            Arg::I32(v) => v,
            _ => -1,
        };
        let n = s.main.args.len();
        assert_eq!([ints(n - 4), ints(n - 3)], [1, 1], "read along K");
        // K-contiguous, each ld is K: a copy's, or the caller's as stored.
        assert_eq!([ints(7), ints(10)], [44, 44]);
        assert_eq!(s.operands[0] == bufs[0], !moved.0);
    }
}
