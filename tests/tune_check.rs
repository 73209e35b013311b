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
use gemmlab::progress::Progress;
use gemmlab::tune::search::{search, Budget, SearchOptions, Workload};
use gemmlab::tune::space::{Space, SpaceRequest};
use gemmlab::tune::store::Store;
use gemmlab::Backend;

fn tune_with(problem: &Problem, name: &str) -> Vec<Status> {
    tune_on(common::opencl(), problem, name)
}

fn tune_on(backend: gemmlab::AnyBackend, problem: &Problem, name: &str) -> Vec<Status> {
    let mut session = Session::new(backend);
    let info = session.backend.borrow().info().clone();
    let spec = gemmlab::kernels::select(Some("xgemm")).unwrap()[0];
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
        ..Default::default()
    };
    let r = search(
        &mut session,
        &space,
        &Workload::Gemm(problem),
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
    r.tried.into_iter().map(|t| t.record.status).collect()
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
    let statuses = tune_on(be, &Problem::new(m, n, k, 5), "cuda-good");
    assert_eq!(statuses.len(), 4);
    assert!(statuses.iter().all(Status::is_ok), "{statuses:?}");
    let Some(be) = common::cuda(test) else {
        return;
    };
    let statuses = tune_on(be, &wrong_reference(m, n, k), "cuda-bad");
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
    let spec = gemmlab::kernels::select(Some("gemm4")).unwrap()[0];
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
            &Workload::Gemm(&Problem::new(64, 48, 32, 9)),
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
