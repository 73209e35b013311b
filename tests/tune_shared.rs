//! Tuning beyond one process, on the OpenCL test device (PoCL in CI): two
//! `gemmlab tune` processes (`--devices opencl,opencl`) sharing one SQLite store
//! measure every point once between them, walk the same search as one process
//! and agree on its best; `--publish` and `gemmlab worker` run a job; the store's
//! status, import and export. With GEMMLAB_TEST_POSTGRES=postgres://... the
//! shared search runs on that PostgreSQL database too.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use gemmlab::results::engine::{Engine, Url};

fn gemmlab(args: &[&str]) -> Output {
    common::run_gemmlab(args)
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

fn device() -> String {
    std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into())
}

fn dir(name: &str) -> PathBuf {
    let d = common::temp_dir("shared", name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A search of 8 points (kernel 2's TS x two switch states) that a random walk
/// visits in an order only its seed decides.
const SEARCH: [&str; 16] = [
    "--backends",
    "opencl",
    "--kernels",
    "2",
    "--sizes",
    "64",
    "--values",
    "TS=4,8,16,32",
    "--switches",
    "USE_RESTRICT",
    "--caps",
    "none",
    "--strategy",
    "random",
    "--max-configs",
    "6",
];

fn tune(extra: &[&str]) -> Output {
    let mut a = vec!["tune"];
    a.extend_from_slice(&SEARCH);
    a.extend_from_slice(&["--top", "2", "--reps", "3", "--warmup", "1"]);
    a.extend_from_slice(extra);
    gemmlab(&a)
}

/// The points a search trace under `out` tried, in order, and its best point
/// (by GFLOP/s among the checked ones).
fn walk(out: &Path) -> (Vec<u64>, Option<u64>) {
    let trace = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.starts_with("search-gemm2-opencl") && n.ends_with(".json")
        })
        .unwrap_or_else(|| panic!("no search trace in {}", out.display()));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    let tried = v["search"]["tried"].as_array().expect("tried").clone();
    let points = tried.iter().map(|t| t["point"].as_u64().unwrap()).collect();
    let best = (tried.iter())
        .filter(|t| t["record"]["status"]["status"] == "ok")
        .max_by(|a, b| {
            let g = |t: &serde_json::Value| t["record"]["gflops"].as_f64().unwrap_or(0.0);
            g(a).total_cmp(&g(b))
        })
        .and_then(|t| t["point"].as_u64());
    (points, best)
}

/// Search outcomes per configuration key in a store, and who wrote them.
fn outcomes(url: &Url) -> BTreeMap<String, Vec<String>> {
    let mut e = Engine::open(url).unwrap();
    let rows = e
        .query(
            "SELECT key_id, worker FROM tune_records WHERE phase = 'search' ORDER BY id",
            &[],
        )
        .unwrap();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in rows {
        let (k, w) = (r[0].text().unwrap(), r[1].text().unwrap());
        out.entry(k.to_string()).or_default().push(w.to_string());
    }
    out
}

fn split_search_agrees(store: &str, root: &Path) {
    let dev = device();
    let devices = format!("{dev},{dev}");
    let out = root.join("two");
    let db = root.join("db");
    let o = tune(&[
        "--devices",
        &devices,
        "--store",
        store,
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("measured"), "{t}");
    let url = Url::parse(store).unwrap();
    let by_key = outcomes(&url);
    assert_eq!(by_key.len(), 6, "six points between them: {by_key:?}");
    assert!(
        by_key.values().all(|w| w.len() == 1),
        "a point measured twice: {by_key:?}"
    );
    let dirs: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 2, "one output folder per process: {dirs:?}");
    let (a, b) = (walk(&dirs[0]), walk(&dirs[1]));
    assert_eq!(
        a, b,
        "the two processes walked the same search to the same best"
    );

    // One process, its own fresh store: the same points in the same order.
    let alone = root.join("alone");
    let o = tune(&[
        "--device",
        &dev,
        "--store",
        root.join("alone.sqlite").to_str().unwrap(),
        "--no-db",
        "--out",
        alone.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(walk(&alone).0, a.0, "one process asks the points two did");
}

#[test]
fn two_processes_split_one_search_on_sqlite() {
    let root = dir("sqlite");
    let store = root.join("store.sqlite");
    split_search_agrees(store.to_str().unwrap(), &root);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn two_processes_split_one_search_on_postgres() {
    let Ok(url) = std::env::var("GEMMLAB_TEST_POSTGRES") else {
        common::say("SKIPPED two_processes_split_one_search_on_postgres: GEMMLAB_TEST_POSTGRES is not set (a postgres:// URL of an empty database)");
        return;
    };
    let root = dir("postgres");
    let mut e = Engine::open(&Url::parse(&url).expect("a postgres:// URL")).unwrap();
    for t in ["tune_records", "tune_claims", "bests"] {
        e.execute(&format!("DELETE FROM {t}"), &[]).unwrap();
    }
    split_search_agrees(&url, &root);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_published_job_is_run_by_a_worker_once_per_device_model() {
    let root = dir("worker");
    let store = root.join("s.sqlite");
    let s = store.to_str().unwrap();
    let o = tune(&["--store", s, "--no-db", "--publish"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("job 1"), "{t}");
    assert!(
        outcomes(&Url::parse(s).unwrap()).is_empty(),
        "published, not run"
    );
    let out = root.join("w");
    let worker = |idle: &str| {
        gemmlab(&[
            "worker",
            "--store",
            s,
            "--device",
            &device(),
            "--idle-exit",
            idle,
            "--poll",
            "0.2",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let o = worker("0.5");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("job 1: exit 0"), "{t}");
    assert!(t.contains("1 job(s) run"), "{t}");
    assert_eq!(outcomes(&Url::parse(s).unwrap()).len(), 6);
    // Done for this device model: a second worker finds nothing to do.
    let t = text(&worker("0.2"));
    assert!(t.contains("0 job(s) run"), "{t}");
    let o = gemmlab(&["store", "status", "--store", s]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("jobs: 1") && t.contains("done for") && t.contains("6 search"),
        "{t}"
    );
    // A folder is not a shared store: refused with the reason, exit 2.
    let o = gemmlab(&[
        "worker",
        "--store",
        root.to_str().unwrap(),
        "--idle-exit",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("shared store"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn earlier_stores_and_databases_move_in_and_out() {
    let root = dir("move");
    let files = root.join("files");
    let o = tune(&[
        "--device",
        &device(),
        "--store",
        files.to_str().unwrap(),
        "--no-db",
        "--out",
        root.join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = root.join("s.sqlite");
    let s = s.to_str().unwrap();
    let db = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/tuned");
    let o = gemmlab(&[
        "store",
        "import",
        "--store",
        s,
        "--tune-store",
        files.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    // Six search outcomes and the two final ones (--top 2).
    assert!(t.contains("1 file(s), 8 record(s), 0 already there"), "{t}");
    let back = root.join("back");
    let o = gemmlab(&[
        "store",
        "export",
        "--store",
        s,
        "--tune-store",
        back.to_str().unwrap(),
        "--db",
        back.join("db").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let read = |p: PathBuf| gemmlab::results::bests::Database::read(&p).unwrap();
    assert_eq!(
        read(back.join("db/nvidia-h200.json")),
        read(db.join("nvidia-h200.json")),
        "the committed database comes back as it went in"
    );
    // The exported store resumes a search: nothing is measured again.
    let o = tune(&[
        "--device",
        &device(),
        "--store",
        back.to_str().unwrap(),
        "--no-db",
        "--out",
        root.join("o2").to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(t.contains("(0 measured, 6 from the store)"), "{t}");
    let _ = std::fs::remove_dir_all(&root);
}
