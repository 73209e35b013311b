//! The compare, BLAS-call and lecture sections' analysis: typed findings from
//! the compare fixture, and from rows of it turned into other calls and into
//! the lecture's kernels. Needs no GPU.

use std::path::Path;

use gemmlab::analysis::compare::{self, Kind as C};
use gemmlab::analysis::lecture::{self, Kind as L};
use gemmlab::analysis::{blas, data, Data, Kind, Topic};
use gemmlab::backend::Toolchain::{Cuda, OpenCl};
use gemmlab::gemm::problem::{Precision, Problem};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report/compare");

fn fixture() -> Data {
    data::load(&[Path::new(FIXTURE).to_path_buf()]).unwrap()
}

fn kinds<T: Clone>(a: &[gemmlab::analysis::Finding], f: impl Fn(&Kind) -> Option<&T>) -> Vec<T> {
    a.iter().filter_map(|x| f(&x.kind)).cloned().collect()
}

fn compare_kinds(a: &compare::Compare) -> Vec<C> {
    kinds(&a.findings, |k| match k {
        Kind::Compare(c) => Some(c),
        _ => None,
    })
}

#[test]
fn the_best_kernel_per_toolchain_at_the_largest_size_and_at_the_others() {
    let d = fixture();
    let a = compare::analyse(&d, None).unwrap();
    assert_eq!(a.sizes, vec![(4096, 4096, 4096), (1024, 1024, 1024)]);
    assert_eq!(a.bar_size, Some((4096, 4096, 4096)));
    let C::BestPerToolchain {
        size,
        vendor,
        best,
        others,
    } = &compare_kinds(&a)[0]
    else {
        panic!("{:?}", a.findings[0]);
    };
    assert_eq!(*size, (4096, 4096, 4096));
    assert!(vendor.is_some_and(|v| (v - 51042.15).abs() < 0.01));
    assert_eq!(
        best.iter().map(|b| b.toolchain).collect::<Vec<_>>(),
        [Cuda, OpenCl]
    );
    let share = best.iter().filter_map(|b| b.vs_vendor).fold(0.0, f64::max);
    assert_eq!(a.findings[0].topic, Topic::VsVendor);
    assert!(
        (a.findings[0].weight - (1.0 - share)).abs() < 1e-12,
        "what is left to cuBLAS"
    );
    assert_eq!(a.findings[0].chart.as_deref(), Some("perf-4096"));
    assert_eq!(others.len(), 1);
    assert_eq!(others[0].0, (1024, 1024, 1024));
}

#[test]
fn registers_against_speed_between_the_toolchains() {
    let d = fixture();
    let a = compare::analyse(&d, None).unwrap();
    let ks = compare_kinds(&a);
    assert_eq!(ks.len(), 4, "{ks:?}");
    let C::RegistersDiffer {
        pairs,
        kernels,
        top,
        top_is_widest,
        ..
    } = &ks[1]
    else {
        panic!("{ks:?}");
    };
    assert_eq!(*kernels, 11);
    // Largest register difference first.
    let names: Vec<&str> = pairs.iter().map(|p| p.kernel.as_str()).collect();
    assert_eq!(names, ["gemm3", "gemm5", "gemm11", "gemm2"]);
    assert_eq!(pairs[0].registers, (40, 32));
    assert_eq!(pairs[0].occupancy, (Some(0.75), Some(1.0)));
    let top = &pairs[top.unwrap()];
    assert_eq!(top.kernel, "gemm3");
    assert!(*top_is_widest);
    assert!((a.findings[1].weight - top.change.unwrap()).abs() < 1e-12);
    let C::SameRegistersDifferentSpeed {
        pairs, least, most, ..
    } = &ks[2]
    else {
        panic!("{ks:?}");
    };
    let names: Vec<&str> = pairs.iter().map(|p| p.kernel.as_str()).collect();
    assert_eq!(names, ["gemm7", "gemm8", "gemm9", "gemm10"]);
    assert!(pairs
        .iter()
        .all(|p| p.registers == (96, 96) && p.change.unwrap() > 0.03));
    assert!(least <= most && (a.findings[2].weight - most).abs() < 1e-12);
    let C::Alike { kernels, .. } = &ks[3] else {
        panic!("{ks:?}");
    };
    assert_eq!(kernels, &["gemm1", "gemm4", "gemm6"]);
    assert!(a.findings[1..].iter().all(|f| f.topic == Topic::Toolchains));
}

#[test]
fn without_speeds_the_register_finding_names_the_largest_difference() {
    let mut d = fixture();
    for m in &mut d.runs[0].measurements {
        if m.kernel == "gemm3" || m.kernel == "gemm5" || m.kernel == "gemm11" || m.kernel == "gemm2"
        {
            m.gflops = None;
        }
    }
    let a = compare::analyse(&d, None).unwrap();
    let C::RegistersDiffer { pairs, top, .. } = &compare_kinds(&a)[1] else {
        panic!("{:?}", a.findings);
    };
    assert_eq!(*top, None);
    assert!(pairs.iter().all(|p| p.change.is_none()));
    assert_eq!(a.findings[1].weight, 0.0);
}

#[test]
fn a_size_asked_for_picks_the_bar_chart_and_the_findings_link_to_the_size_chart() {
    let d = fixture();
    let a = compare::analyse(&d, Some((1024, 1024, 1024))).unwrap();
    assert_eq!(a.bar_size, Some((1024, 1024, 1024)));
    assert_eq!(a.square, [1024, 4096]);
    assert!(a
        .findings
        .iter()
        .all(|f| f.chart.as_deref() == Some("perf-vs-size")));
    let a = compare::analyse(&d, Some((7, 7, 7))).unwrap();
    assert_eq!(a.unmeasured, Some((7, 7, 7)));
    assert_eq!(a.bar_size, Some((4096, 4096, 4096)));
}

#[test]
fn resources_prefer_the_largest_sizes_row() {
    let mut d = fixture();
    for m in &mut d.runs[0].measurements {
        if m.kernel == "gemm1" && m.m == 4096 {
            m.resources = None;
        }
    }
    let a = compare::analyse(&d, None).unwrap();
    let i = a.kernels.iter().position(|k| k == "gemm1").unwrap();
    let m = a.resources[i][0].unwrap();
    assert_eq!((m.m, data::registers(m)), (1024, Some(32)));
    let j = a.kernels.iter().position(|k| k == "gemm2").unwrap();
    assert_eq!(a.resources[j][0].unwrap().m, 4096);
}

/// The fixture's rows as another call: f64, alpha = 2.
fn as_blas_calls(d: &mut Data) {
    for m in &mut d.runs[0].measurements {
        let mut p = Problem::plain(m.m, m.n, m.k);
        p.precision = Precision::F64;
        p.alpha = 2.0;
        m.problem = Some(p);
    }
}

#[test]
fn other_calls_give_each_toolchains_range_against_cublas() {
    let mut d = fixture();
    assert!(
        blas::analyse(&d).is_none(),
        "the tutorial's call is not one of them"
    );
    as_blas_calls(&mut d);
    assert!(
        compare::analyse(&d, None).is_none(),
        "compare keeps to the tutorial's call"
    );
    let a = blas::analyse(&d).unwrap();
    assert_eq!(a.calls.len(), 1);
    assert_eq!(a.calls[0].vendor.len(), 2);
    assert_eq!(a.categories.len(), 2, "one per size");
    assert_eq!(a.findings.len(), 2);
    for (f, t) in a.findings.iter().zip([Cuda, OpenCl]) {
        let Kind::Blas(blas::Kind::Range {
            toolchain,
            low,
            high,
            kernel,
            call,
        }) = &f.kind
        else {
            panic!("{f:?}");
        };
        assert_eq!(*toolchain, t);
        let mine: Vec<f64> = a
            .best
            .iter()
            .filter(|b| b.toolchain == t)
            .map(|b| b.ratio)
            .collect();
        assert_eq!(*high, mine.iter().cloned().fold(0.0, f64::max));
        assert_eq!(*low, mine.iter().cloned().fold(f64::INFINITY, f64::min));
        assert!(a
            .best
            .iter()
            .any(|b| b.kernel == *kernel && b.call == *call && b.ratio == *high));
        assert!((f.weight - (1.0 - low)).abs() < 1e-12);
        assert_eq!(f.chart.as_deref(), Some("blas-calls"));
    }
}

#[test]
fn the_lectures_winner_per_group_and_by_how_much() {
    let mut d = fixture();
    assert!(lecture::analyse(&d).is_none());
    let rename = [
        ("gemm1", "lecture_naive"),
        ("gemm3", "lecture_tiled"),
        ("gemm7", "lecture_wide"),
    ];
    for m in &mut d.runs[0].measurements {
        if let Some((_, to)) = rename.iter().find(|(from, _)| *from == m.kernel) {
            m.kernel = to.to_string();
        }
    }
    let a = lecture::analyse(&d).unwrap();
    // By device, precision, size (as labelled) and toolchain.
    let keys: Vec<_> = a
        .groups
        .iter()
        .map(|g| (&g.device, &g.size, g.toolchain))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    assert_eq!(a.groups.len(), 4);
    assert_eq!(a.findings.len(), 4);
    let g = a
        .groups
        .iter()
        .find(|g| g.size == "4096" && g.toolchain == Cuda)
        .unwrap();
    let ranked: Vec<&str> = g.ranked.iter().map(|m| m.kernel.as_str()).collect();
    assert_eq!(ranked, ["lecture_wide", "lecture_tiled", "lecture_naive"]);
    assert!(g.vendor.is_some());
    let f = &a.findings[a.groups.iter().position(|x| std::ptr::eq(x, g)).unwrap()];
    let Kind::Lecture(L::Winner {
        winner,
        next,
        over_next,
        registers,
        ..
    }) = &f.kind
    else {
        panic!("{f:?}");
    };
    assert_eq!(
        (winner.as_str(), next.as_str(), *registers),
        ("lecture_wide", "lecture_tiled", Some(96))
    );
    assert!((over_next - 39319.50011214611 / 20297.19332337763).abs() < 1e-9);
    assert!((f.weight - (over_next - 1.0)).abs() < 1e-12);
    assert!(!f.headline, "a detail");
    assert_eq!(f.chart.as_deref(), Some("lecture"));
}

#[test]
fn four_toolchains_are_compared_in_the_pairs_a_single_difference_separates() {
    use gemmlab::backend::Toolchain::{ClangCuda, ClangOpenCl};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/results/h200/clang/compare");
    let d = data::load(&[Path::new(dir).to_path_buf()]).unwrap();
    let a = compare::analyse(&d, None).unwrap();
    let pairs = [
        [Cuda, OpenCl],
        [Cuda, ClangCuda],
        [OpenCl, ClangOpenCl],
        [ClangCuda, ClangOpenCl],
    ];
    assert_eq!(a.pairs, pairs);
    // Each pair's register findings, in the pairs' order; never CUDA against clang OpenCL.
    let of = |k: &C| match k {
        C::RegistersDiffer { toolchains, .. }
        | C::SameRegistersDifferentSpeed { toolchains, .. }
        | C::Alike { toolchains, .. } => Some(*toolchains),
        C::BestPerToolchain { .. } => None,
    };
    let mut seen: Vec<[_; 2]> = compare_kinds(&a).iter().filter_map(of).collect();
    seen.dedup();
    assert_eq!(seen, pairs);
    // gemm3's CUDA and OpenCL builds differ in registers (40 against 32).
    let differ = compare_kinds(&a).into_iter().find_map(|k| match k {
        C::RegistersDiffer {
            toolchains: [Cuda, OpenCl],
            pairs,
            ..
        } => Some(pairs),
        _ => None,
    });
    let gemm3 = differ
        .unwrap()
        .into_iter()
        .find(|p| p.kernel == "gemm3")
        .unwrap();
    assert_eq!(gemm3.registers, (40, 32));
}
