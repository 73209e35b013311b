//! `gemmlab tune` on the OpenCL test device (PoCL in CI): exhaustive and guided
//! searches, the store's resume after a killed run, the database of bests, and
//! bad input. Spaces are kept to a few points: PoCL compiles take a second each.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gemmlab::backend::Backend;
use gemmlab::kernel::builtin as kernels;

fn gemmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

fn device() -> String {
    std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into())
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemmlab-tune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The search records of the store (lines after the header), as JSON values.
fn search_records(store: &Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(store).into_iter().flatten().flatten() {
        let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in body.lines().skip(1) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                if v["phase"] == "search" {
                    out.push(v);
                }
            }
        }
    }
    out
}

fn common_args<'a>(dev: &'a str, base: &'a [&'a str], d: &'a [String; 3]) -> Vec<&'a str> {
    let mut a = vec![
        "tune",
        "--device",
        dev,
        "--backends",
        "opencl",
        "--sizes",
        "64",
    ];
    a.extend_from_slice(base);
    a.extend_from_slice(&[
        "--store", &d[0], "--db", &d[1], "--out", &d[2], "--reps", "3", "--warmup", "1",
    ]);
    a
}

fn dirs(root: &Path) -> [String; 3] {
    ["store", "db", "out"].map(|s| root.join(s).to_string_lossy().into_owned())
}

#[test]
fn exhaustive_search_tries_every_point_and_keeps_the_best() {
    let root = dir("exhaustive");
    let d = dirs(&root);
    let dev = device();
    let base = [
        "--kernels",
        "2",
        "--strategy",
        "exhaustive",
        "--values",
        "TS=16,32",
        "--switches",
        "USE_RESTRICT",
        "--top",
        "2",
    ];
    let o = gemmlab(&common_args(&dev, &base, &d));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("= 4 points before filtering, 4 after"), "{t}");
    assert!(t.contains("4 tried (4 measured, 0 from the store)"), "{t}");
    assert!(t.contains("every point of the space tried"), "{t}");
    assert!(t.contains("final round"), "{t}");
    let records = search_records(Path::new(&d[0]));
    assert_eq!(records.len(), 4);
    assert!(
        records.iter().all(|r| r["status"]["status"] == "ok"),
        "{records:?}"
    );
    let traces: Vec<_> = std::fs::read_dir(&d[2])
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("search-gemm2-opencl-64x64x64")
        })
        .collect();
    assert_eq!(traces.len(), 1);
    // The published configuration (TS=32, switches as published) is tried first.
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(traces[0].path()).unwrap()).unwrap();
    let first = &trace["search"]["tried"][0]["candidate"];
    assert_eq!(first["config"]["TS"], 32, "{first}");
    assert!(
        first["hints"]["switches"]
            .as_object()
            .is_none_or(|m| m.is_empty()),
        "{first}"
    );
    // The database of bests holds the kernel, and --show prints it without a device.
    let show = gemmlab(&["tune", "--show", "--db", &d[1]]);
    let s = text(&show);
    assert_eq!(show.status.code(), Some(0), "{s}");
    assert!(
        s.contains("gemm2") && s.contains("64x64x64") && s.contains("TS="),
        "{s}"
    );
    // compare --tuned runs the tuned configuration.
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--sizes",
        "64",
        "--kernels",
        "2",
        "--tuned",
        "--db",
        &d[1],
        "--reps",
        "3",
        "--out",
        &format!("{}/cmp", d[2]),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("tuned at 64x64x64"), "{t}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_search_whose_time_ends_before_its_first_build_still_measures_one() {
    // 1 ms is over before any build finishes: the search waits for its first
    // outcome and stops there, instead of ending with nothing tried.
    let root = dir("first-outcome");
    let d = dirs(&root);
    let dev = device();
    let base = ["--kernels", "xgemm", "--time-limit", "0.001", "--top", "1"];
    let o = gemmlab(&common_args(&dev, &base, &d));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("1 tried (1 measured, 0 from the store)"), "{t}");
    assert!(t.contains("time budget reached"), "{t}");
    assert_eq!(search_records(Path::new(&d[0])).len(), 1);
    assert!(t.contains("final round"), "{t}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn builds_in_helper_processes_measure_the_same_points() {
    let root = dir("processes");
    let d = dirs(&root);
    let dev = device();
    let base = [
        "--kernels",
        "2",
        "--strategy",
        "exhaustive",
        "--values",
        "TS=8,16,32",
        "--max-configs",
        "3",
        "--build-processes",
        "2",
        "--top",
        "1",
    ];
    let o = gemmlab(&common_args(&dev, &base, &d));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("on 2 threads in 2 build processes"), "{t}");
    let records = search_records(Path::new(&d[0]));
    assert_eq!(records.len(), 3, "{t}");
    assert!(
        records.iter().all(|r| r["status"]["status"] == "ok"),
        "{records:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_killed_guided_search_resumes_and_measures_nothing_twice() {
    let root = dir("resume");
    let d = dirs(&root);
    let dev = device();
    let base = [
        "--kernels",
        "6",
        "--strategy",
        "genetic",
        "--max-configs",
        "10",
        "--values",
        "TSM=16,32",
        "--values",
        "TSN=16,32",
        "--define",
        "TSK=8",
        "--switches",
        "UNROLL_K",
        "--top",
        "2",
    ];
    let args = common_args(&dev, &base, &d);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gemmlab starts");
    let started = Instant::now();
    while search_records(Path::new(&d[0])).len() < 3 && started.elapsed() < Duration::from_secs(300)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    let before = search_records(Path::new(&d[0])).len();
    assert!((3..10).contains(&before), "killed after {before} records");

    let o = gemmlab(&args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let records = search_records(Path::new(&d[0]));
    assert_eq!(records.len(), 10, "{t}");
    let mut keys: Vec<String> = records.iter().map(|r| r["key"].to_string()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 10, "a configuration was measured twice");
    assert!(
        t.contains("from the store)") && t.contains("10 tried"),
        "{t}"
    );
    let resumed = format!("({} measured, {before} from the store)", 10 - before);
    assert!(t.contains(&resumed), "expected {resumed}: {t}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_finished_guided_search_replays_from_its_store_exactly() {
    // Annealing's proposals depend on every outcome before them; a rerun that
    // walked differently would measure new points instead of replaying.
    let root = dir("replay");
    let d = dirs(&root);
    let dev = device();
    let base = [
        "--kernels",
        "6",
        "--strategy",
        "anneal",
        "--max-configs",
        "14",
        "--values",
        "TSM=16,32,64",
        "--values",
        "TSN=16,32,64",
        "--define",
        "TSK=8",
        "--switches",
        "UNROLL_K",
        "--caps",
        "none",
        "--top",
        "1",
    ];
    let args = common_args(&dev, &base, &d);
    let first = gemmlab(&args);
    let t = text(&first);
    assert_eq!(first.status.code(), Some(0), "{t}");
    assert!(
        t.contains("14 tried (14 measured, 0 from the store)"),
        "{t}"
    );
    let again = gemmlab(&args);
    let t = text(&again);
    assert_eq!(again.status.code(), Some(0), "{t}");
    assert!(
        t.contains("14 tried (0 measured, 14 from the store)"),
        "{t}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn bad_tuning_input_is_refused_with_reasons() {
    let root = dir("bad");
    let d = dirs(&root);
    let dev = device();
    let run = |extra: &[&str]| {
        let mut a = common_args(&dev, &[], &d);
        a.extend_from_slice(extra);
        gemmlab(&a)
    };
    let cases: &[(&[&str], &str)] = &[
        (&["--kernels", "99"], "unknown kernel '99'"),
        (
            &["--kernels", "6", "--values", "BOGUS=1"],
            "no parameter BOGUS",
        ),
        (
            &["--kernels", "6", "--values", "TSM=100"],
            "TSM must be one of",
        ),
        (
            &[
                "--kernels",
                "6",
                "--values",
                "TSM=16",
                "--values",
                "TSN=256",
            ],
            "TSM must equal TSN",
        ),
        (&["--kernels", "6", "--max-configs", "0"], "budget of 0"),
        (&["--kernels", "6", "--switches", "NOPE"], "no switch NOPE"),
        (
            &["--kernels", "6", "--strategy", "magic"],
            "unknown strategy",
        ),
        (&["--kernels", "2", "--caps", "64"], "register-cap"),
    ];
    for (args, want) in cases {
        let o = run(args);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(want), "{args:?}: wanted '{want}' in {t}");
    }
    // A store of another device is refused; a corrupt line is skipped with a warning.
    // The first run makes the store, so the test finds its file as gemmlab names it.
    let small = [
        "--kernels",
        "2",
        "--values",
        "TS=8",
        "--switches",
        "none",
        "--top",
        "1",
    ];
    let o = run(&small);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let store = std::fs::read_dir(&d[0])
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("the run wrote a store");
    let body = std::fs::read_to_string(&store).unwrap();
    let header = body.lines().next().unwrap_or_default().to_string();
    let mut other: serde_json::Value = serde_json::from_str(&header).unwrap();
    other["device"] = "Another GPU".into();
    std::fs::write(&store, format!("{other}\n")).unwrap();
    let o = run(&small);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("Another GPU") && t.contains("never mixed"),
        "{t}"
    );
    std::fs::write(&store, format!("{header}\n{{not a record\n")).unwrap();
    let o = run(&small);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("warning") && t.contains("line 2: skipped"),
        "{t}"
    );
    assert_eq!(search_records(Path::new(&d[0])).len(), 1);
    let _ = std::fs::remove_dir_all(&root);
}

/// The registry's local-memory formula, which the tuner filters by, is what the
/// compiler reports for each kernel at its defaults.
#[test]
fn local_memory_formulas_match_the_compiler() {
    let mut be = common::opencl();
    for spec in kernels::all() {
        let c = spec.defaults();
        if spec.unavailable(be.info(), &Default::default()).is_some() {
            continue;
        }
        let tc = be.info().toolchain;
        let opts = spec.compile_options(&c, &Default::default(), tc);
        let (p, report) = be.compile(spec.entry, &spec.source(tc), &opts).unwrap();
        be.release_program(p);
        let reported = report.kernel(spec.entry).and_then(|k| k.shared_bytes);
        if let Some(r) = reported {
            assert_eq!(r as i64, (spec.local_bytes)(&c), "{}", spec.id);
        }
    }
}
