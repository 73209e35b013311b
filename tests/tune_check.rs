//! The tuner checks every configuration while it times it (the check runs beside
//! the timed samples): a result that does not match the reference is recorded as
//! wrong, with no speed, however fast it ran. Here the reference is made wrong on
//! purpose (every element shifted), so every configuration must fail its check;
//! with the true reference every one passes.

mod common;

use gemmlab::experiment::Problem;
use gemmlab::gemm::check::Reference;
use gemmlab::gemm::driver::{Session, Status};
use gemmlab::kernel::Kernel;
use gemmlab::measure::progress::Progress;
use gemmlab::measure::split::Step;
use gemmlab::tune::search::{screen_k, search, Budget, SearchOptions, Workload};
use gemmlab::tune::space::{Space, SpaceRequest};
use gemmlab::tune::store::{Record, Store};
use gemmlab::Backend;

fn tune_with(problem: &Problem, name: &str) -> Vec<Status> {
    status_of(tune_on(common::opencl(), (problem, None), 4.0, name))
}

fn status_of(records: Vec<Record>) -> Vec<Status> {
    records.into_iter().map(|r| r.status).collect()
}

/// Four random xgemm points searched at `problem` (screened at `screen`).
fn tune_on(
    backend: gemmlab::AnyBackend,
    (problem, screen): (&Problem, Option<&Problem>),
    prune: f64,
    name: &str,
) -> Vec<Record> {
    let mut session = Session::new(backend);
    let info = session.backend.borrow().info().clone();
    let spec = gemmlab::kernel::builtin::select(Some("xgemm")).unwrap()[0];
    let request = SpaceRequest {
        switches: Some(Vec::new()),
        caps: Some(Vec::new()),
        ..Default::default()
    };
    let space = Space::build(Kernel::Builtin(spec), &info, &request).unwrap();
    let dir =
        std::env::temp_dir().join(format!("gemmlab-tune-check-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut store = Store::open(&dir.join("store.jsonl"), &info).unwrap();
    let opts = SearchOptions {
        strategy: "random".into(),
        budget: Budget {
            configs: Some(4),
            seconds: None,
        },
        workers: 1,
        prune,
        ..Default::default()
    };
    let r = search(
        &mut session,
        &space,
        &Workload::Gemm(problem, screen),
        &mut store,
        &opts,
        &Progress::hidden(),
    )
    .unwrap();
    assert!(
        !session.defer_checks,
        "the search leaves the session checking again"
    );
    let _ = std::fs::remove_dir_all(&dir);
    r.tried.into_iter().map(|t| t.record).collect()
}

/// The same problem with every element of its reference shifted by one.
fn wrong_reference(m: usize, n: usize, k: usize) -> Problem {
    let mut bad = Problem::new(m, n, k, 5);
    if let Reference::Full { c, .. } = &mut bad.reference {
        for v in c.iter_mut() {
            *v += 1.0;
        }
    } else {
        panic!("a {m}x{n}x{k} problem has a full reference");
    }
    bad
}

#[test]
fn a_result_that_fails_its_check_is_wrong_even_while_timed() {
    let good = Problem::new(96, 80, 64, 5);
    let statuses = tune_with(&good, "good");
    assert_eq!(statuses.len(), 4);
    assert!(statuses.iter().all(Status::is_ok), "{statuses:?}");

    let statuses = tune_with(&wrong_reference(96, 80, 64), "bad");
    assert_eq!(statuses.len(), 4);
    assert!(
        statuses
            .iter()
            .all(|s| matches!(s, Status::WrongResult(r) if r.contains("result check failed"))),
        "{statuses:?}"
    );
}

/// The screen (`tune --screen`): each configuration, the first included (its
/// launch is the later ones' reference), runs first on the call with K cut short.
/// Its result there is checked like any other: against a wrong reference every
/// point is wrong at the screen.
#[test]
fn a_screen_checks_its_own_result() {
    let (m, n, k) = (96, 80, 1024);
    let cut = screen_k(k, 8).expect("K = 1024 is screened");
    let records = tune_on(
        common::opencl(),
        (&Problem::new(m, n, k, 5), Some(&wrong_reference(m, n, cut))),
        4.0,
        "screen-bad",
    );
    assert_eq!(records.len(), 4);
    for r in &records {
        assert_eq!(r.screen_k, Some(cut), "{r:?}");
        assert!(
            matches!(&r.status, Status::WrongResult(w) if w.contains("result check failed")),
            "{r:?}"
        );
        assert!(r.gflops.is_none());
    }
}

/// A point slower at the screen than the fastest screen launch before it by the
/// prune factor is pruned there: its one checked launch at the cut K is its time
/// and its speed. With a factor that prunes everything, every point after the
/// first (which has none before it) stops there.
#[test]
fn a_point_slow_at_the_screen_is_pruned_there_with_the_screen_s_speed() {
    let (m, n, k) = (96, 80, 1024);
    let cut = screen_k(k, 8).unwrap();
    let records = tune_on(
        common::opencl(),
        (&Problem::new(m, n, k, 5), Some(&Problem::new(m, n, cut, 6))),
        1e-12,
        "screen-prune",
    );
    assert_eq!(records.len(), 4);
    let (first, rest) = records.split_first().unwrap();
    assert!(first.status.is_ok() && !first.pruned && first.screen_k.is_none());
    for r in rest {
        assert!(r.status.is_ok() && r.pruned, "{r:?}");
        assert_eq!(r.screen_k, Some(cut));
        let t = r.time.as_ref().expect("the screen's launch is its time");
        assert_eq!(t.reps, 1);
        let at_cut = 2.0 * (m * n * cut) as f64 / t.median_ns;
        assert!((r.gflops.unwrap() - at_cut).abs() < 1e-9 * at_cut, "{r:?}");
        // Nothing after the screen: no full-size checked run, no timing.
        assert!(r.split.get(Step::Screen) > 0.0);
        assert_eq!(
            r.split.get(Step::CheckedRun) + r.split.get(Step::Timing),
            0.0
        );
    }
}

/// On CUDA a C of a million elements or more lands in page-locked host memory
/// (`Backend::host_f32`): the check still reads every element of it.
#[cfg(feature = "cuda")]
#[test]
fn on_cuda_a_wrong_result_is_wrong_from_page_locked_memory_too() {
    let test = "on_cuda_a_wrong_result_is_wrong_from_page_locked_memory_too";
    let Some(be) = common::cuda(test) else {
        return;
    };
    let (m, n, k) = (1024, 1088, 32);
    let statuses = status_of(tune_on(
        be,
        (&Problem::new(m, n, k, 5), None),
        4.0,
        "cuda-good",
    ));
    assert_eq!(statuses.len(), 4);
    assert!(statuses.iter().all(Status::is_ok), "{statuses:?}");
    let Some(be) = common::cuda(test) else {
        return;
    };
    let statuses = status_of(tune_on(
        be,
        (&wrong_reference(m, n, k), None),
        4.0,
        "cuda-bad",
    ));
    assert!(
        statuses
            .iter()
            .all(|s| matches!(s, Status::WrongResult(r) if r.contains("result check failed"))),
        "{statuses:?}"
    );
}

/// An unguided search tries exactly the points `unguided_order` lists, in that
/// order, whatever its compile threads do: what `tune --arch` compiles ahead for
/// a machine without clang and `--export-space` hands to kernel_tuner.
#[test]
fn a_random_search_tries_the_unguided_order() {
    use gemmlab::tune::search::unguided_order;
    let mut session = Session::new(common::opencl());
    let info = session.backend.borrow().info().clone();
    let spec = gemmlab::kernel::builtin::select(Some("gemm4")).unwrap()[0];
    let space = Space::build(Kernel::Builtin(spec), &info, &SpaceRequest::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("gemmlab-tune-order-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut store = Store::open(&dir.join("store.jsonl"), &info).unwrap();
    for (strategy, seed) in [("random", 3), ("exhaustive", 1)] {
        let opts = SearchOptions {
            strategy: strategy.into(),
            seed,
            budget: Budget {
                configs: Some(7),
                seconds: None,
            },
            workers: 2,
            ..Default::default()
        };
        let r = search(
            &mut session,
            &space,
            &Workload::Gemm(&Problem::new(64, 48, 32, 9), None),
            &mut store,
            &opts,
            &Progress::hidden(),
        )
        .unwrap();
        let tried: Vec<usize> = r.tried.iter().map(|t| t.point).collect();
        let order = unguided_order(&space, strategy, seed, &[], 7).unwrap();
        assert_eq!(tried, order, "{strategy}");
        assert_eq!(Some(order[0]), space.published_point(), "published first");
    }
    let err = unguided_order(&space, "anneal", 1, &[], 7).unwrap_err();
    assert!(err.contains("measured speeds"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
