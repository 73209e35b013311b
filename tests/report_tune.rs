//! The tuning section's analysis on the committed H200 results: typed findings
//! and rows read from the search traces and the replay record, no words.

use std::path::PathBuf;

use gemmlab::analysis::tune::{analyse, At, Kind, Source, Verdict};
use gemmlab::analysis::{data, Kind as AnyKind, Topic};
use gemmlab::backend::Toolchain;
use plotters::style::RGBColor;

fn load(dirs: &[&str]) -> data::Data {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let from: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    data::load(&from).unwrap()
}

fn kinds(f: &[gemmlab::analysis::Finding]) -> Vec<&Kind> {
    f.iter()
        .map(|f| match &f.kind {
            AnyKind::Tune(k) => k,
            other => panic!("not a tune finding: {other:?}"),
        })
        .collect()
}

#[test]
fn an_exhaustive_search_is_replayed_from_its_record() {
    let d = load(&["results/h200/tune/exhaustive-6"]);
    let a = analyse(&d);
    assert_eq!(a.searches.len(), 1);
    assert!(a.searches[0].trace.search.covers_space() && a.searches[0].replays.is_some());
    let g = &a.groups[0];
    assert_eq!(
        (g.kernel.as_str(), &g.size),
        ("gemm6", &At::Gemm((4096, 4096, 4096)))
    );
    assert_eq!(g.replays.len(), 1);
    let replayed = kinds(&a.findings)
        .into_iter()
        .find_map(|k| match k {
            Kind::Replayed { space, replays, .. } => Some((
                *space,
                replays.runs,
                replays.tries,
                replays.reach,
                replays.strategies.clone(),
            )),
            _ => None,
        })
        .expect("a replay finding");
    let (space, runs, tries, reach, strategies) = replayed;
    assert!(space > tries, "the budget is smaller than the space");
    assert_eq!((runs, tries, reach), (25, 200, 0.95));
    let names: Vec<&str> = strategies.iter().map(|s| s.strategy.as_str()).collect();
    assert_eq!(names, ["exhaustive", "random", "anneal", "genetic"]);
    for s in &strategies {
        assert!((0.0..=1.0).contains(&s.found));
        assert!(s.configs.is_none_or(|c| c >= 1.0 && c <= tries as f64));
    }
    // The finding links the replay chart; the search spread covers the whole space.
    let f = a
        .findings
        .iter()
        .find(|f| matches!(f.kind, AnyKind::Tune(Kind::Replayed { .. })))
        .unwrap();
    assert_eq!(f.chart.as_deref(), Some(g.replays[0].stem.as_str()));
    assert!(g.spread.iter().all(|s| s.whole_space));
}

#[test]
fn both_toolchains_tuned_give_bests_gaps_and_rates() {
    let d = load(&["results/h200/compare", "results/h200/tune/both-8192"]);
    let a = analyse(&d);
    assert!(!a.empty && a.unreadable.is_empty());
    // gemm6 at 8192: tuned and default ratios, both within 3%: no gap either way.
    let g = a
        .groups
        .iter()
        .position(|g| g.kernel == "gemm6" && g.size == At::Gemm((8192, 8192, 8192)))
        .unwrap();
    let fs: Vec<&Kind> = kinds(&a.findings);
    let gap = fs
        .iter()
        .find_map(|k| match k {
            Kind::ToolchainGap {
                kernel,
                tuned,
                same,
                default,
                ..
            } if kernel == "gemm6" => Some((*tuned, *same, *default)),
            _ => None,
        })
        .unwrap();
    assert!(gap.1 && (gap.0 - 1.0).abs() <= 0.03);
    let (dr, sources, verdict) = gap.2.unwrap();
    assert!((dr - 1.0).abs() <= 0.03);
    assert_eq!(sources, [Source::Compare, Source::Compare]);
    assert!(matches!(verdict, Verdict::NoGap));
    // Tuned bests: from the final round, with a gain over the default as weight.
    let tuned = a
        .findings
        .iter()
        .find(|f| matches!(&f.kind, AnyKind::Tune(Kind::Tuned { kernel, .. }) if kernel == "gemm6"))
        .unwrap();
    assert_eq!(tuned.topic, Topic::Tuning);
    let AnyKind::Tune(Kind::Tuned { toolchains, .. }) = &tuned.kind else {
        unreachable!()
    };
    let gains: Vec<f64> = toolchains.iter().filter_map(|t| t.gain).collect();
    assert_eq!(tuned.weight, gains.iter().copied().fold(0.0, f64::max));
    assert!(toolchains
        .iter()
        .all(|t| t.best.as_ref().is_some_and(|b| b.final_round)));
    let rounds = &a.groups[g].rounds;
    assert_eq!(rounds[0].tuned.toolchain, Toolchain::Cuda);
    assert!(rounds[0].rows.len() <= 10);
    // Anneal searches: no replay; a rate for each, a headline.
    assert!(a.groups[g].replays.is_empty());
    let rate = a
        .findings
        .iter()
        .find(|f| matches!(&f.kind, AnyKind::Tune(Kind::SearchRate { kernel, .. }) if kernel == "gemm6"))
        .unwrap();
    assert!(rate.headline);
    let AnyKind::Tune(Kind::SearchRate { searches, .. }) = &rate.kind else {
        unreachable!()
    };
    assert_eq!(searches.len(), 2);
    assert!(searches.iter().all(|r| r.rate.is_some_and(|v| v > 0.0)));
}

#[test]
fn shades_differ() {
    let c = RGBColor(100, 150, 200);
    let shade = gemmlab::report::tune::shade;
    assert_eq!(shade(c, 0), c);
    assert_ne!(shade(c, 1), c);
    assert_ne!(shade(c, 2), shade(c, 1));
}

#[test]
fn four_toolchains_give_a_gap_for_each_pair_that_differs_once() {
    let dirs = ["tuned", "tune-6", "tune-10", "tune-xgemm", "tune-simt"];
    let dirs: Vec<String> = dirs
        .iter()
        .map(|d| format!("results/h200/clang-tune/{d}"))
        .collect();
    let d = load(&dirs.iter().map(String::as_str).collect::<Vec<_>>());
    let a = analyse(&d);
    let gaps: Vec<(&str, [Toolchain; 2], f64)> = kinds(&a.findings)
        .into_iter()
        .filter_map(|k| match k {
            Kind::ToolchainGap {
                kernel,
                toolchains,
                tuned,
                ..
            } => Some((kernel.as_str(), *toolchains, *tuned)),
            _ => None,
        })
        .collect();
    use Toolchain::{ClangCuda, ClangOpenCl, Cuda, OpenCl};
    // The same source through two compilers, or one family on both sources; never
    // a pair that differs in both (CUDA against clang OpenCL).
    let pairs = [
        [Cuda, OpenCl],
        [Cuda, ClangCuda],
        [OpenCl, ClangOpenCl],
        [ClangCuda, ClangOpenCl],
    ];
    for kernel in ["gemm6", "gemm10", "simt", "xgemm"] {
        let of: Vec<[Toolchain; 2]> = (gaps.iter().filter(|g| g.0 == kernel))
            .map(|g| g.1)
            .collect();
        assert_eq!(of, pairs, "{kernel}");
    }
    // xgemm: clang CUDA's tuned best trails CUDA's by more than a quarter.
    let xgemm = gaps
        .iter()
        .find(|g| g.0 == "xgemm" && g.1 == [Cuda, ClangCuda])
        .unwrap();
    assert!(xgemm.2 > 1.25, "{xgemm:?}");
    assert!(Cuda.differs_once_from(ClangCuda) && !Cuda.differs_once_from(ClangOpenCl));
}

#[test]
fn users_searches_are_grouped_by_their_dimensions_in_their_unit() {
    let d = load(&["results/h200/specs"]);
    let a = analyse(&d);
    let dims: Vec<&str> = (a.groups.iter())
        .filter_map(|g| match &g.size {
            At::Dims(d) => Some(d.as_str()),
            At::Gemm(_) => None,
        })
        .collect();
    assert!(dims.contains(&"p=8192 q=8192"), "{dims:?}");
    let transpose = a.groups.iter().find(|g| g.kernel == "tutorial-transpose");
    let transpose = transpose.expect("the transpose spec's searches");
    // Its spec states only bytes: the searches, the final round and the charts are in GB/s.
    assert_eq!(transpose.unit, "GB/s");
    assert_eq!(transpose.searches.len(), 2);
    assert!(transpose.rounds.iter().all(|r| !r.rows.is_empty()));
    let best = transpose.rounds[0].rows[0].speed;
    assert!(best > 1000.0 && best < 5000.0, "{best} GB/s");
    assert!(transpose.vendor.is_none());
    // A spec kernel's tuned best and toolchain gap are "Your kernels"' findings, not these.
    for k in kinds(&a.findings) {
        match k {
            Kind::Tuned { size, .. } | Kind::ToolchainGap { size, .. } => {
                assert!(matches!(size, At::Gemm(_)), "{k:?}")
            }
            Kind::HowHard { size, unit, .. } if *size == At::Dims("p=8192 q=8192".into()) => {
                assert_eq!(unit, "GB/s")
            }
            _ => {}
        }
    }
    let hard = kinds(&a.findings).into_iter().filter(|k| {
        matches!(
            k,
            Kind::HowHard {
                size: At::Dims(_),
                ..
            } | Kind::SearchRate {
                size: At::Dims(_),
                ..
            }
        )
    });
    assert!(hard.count() >= 2 * dims.len() - 2);
}
