//! A search over configurations that fault and hang finishes (issue 26): the
//! spec `specs/misbehave` behaves at MODE=0, stores through a bad address at
//! MODE=1 and never finishes at MODE=2. `gemmlab tune` runs its search in a
//! child process it watches; every configuration ends up in the store with its
//! outcome, and the behaving one is measured and reaches the final round.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/specs/misbehave/misbehave.toml"
);

fn gemmlab() -> Command {
    Command::new(common::gemmlab_bin())
}

/// The spec: beside the sources, or in `GEMMLAB_SPEC_DIR` (the GPU batches' copy of the tree).
fn spec() -> String {
    std::env::var("GEMMLAB_SPEC_DIR").map_or(SPEC.into(), |d| format!("{d}/misbehave.toml"))
}

fn dir(name: &str) -> PathBuf {
    common::temp_dir("faults", name)
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

/// MODE -> (status, reason) of the search records in the store.
fn outcomes(store: &Path) -> Vec<(i64, String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(store).into_iter().flatten().flatten() {
        let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in body.lines().skip(1) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if v["phase"] == "search" {
                out.push((
                    v["key"]["config"]["MODE"].as_i64().unwrap_or(-1),
                    v["status"]["status"].as_str().unwrap_or("").to_string(),
                    v["status"]["reason"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// Tunes the misbehaving spec on `backend` of `device` and checks every outcome.
fn search_survives(device: &str, backend: &str, name: &str) {
    let (store, out) = (dir(&format!("{name}-store")), dir(&format!("{name}-out")));
    let started = Instant::now();
    let o = gemmlab()
        .args([
            "tune",
            "--device",
            device,
            "--backends",
            backend,
            "--spec",
            &spec(),
        ])
        .args([
            "--strategy",
            "exhaustive",
            "--launch-timeout",
            "4",
            "--top",
            "1",
        ])
        // Register caps would multiply the three configurations on an NVIDIA GPU.
        .args(["--no-db", "--reps", "5", "--warmup", "1", "--caps", "none"])
        .arg("--store")
        .arg(&store)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("the gemmlab binary runs");
    let log = text(&o);
    assert!(o.status.success(), "tune failed:\n{log}");
    // Two misbehaving configurations, a few seconds each at most: nothing waits long.
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "took {:?}:\n{log}",
        started.elapsed()
    );
    let got = outcomes(&store);
    let modes: Vec<i64> = got.iter().map(|(m, _, _)| *m).collect();
    assert_eq!(
        modes,
        vec![0, 1, 2],
        "one record per configuration:\n{got:?}\n{log}"
    );
    assert_eq!(got[0].1, "ok", "MODE=0 behaves: {got:?}\n{log}");
    // A GPU reports the bad store (the driver's words); a CPU device's process dies of it.
    assert!(
        matches!(got[1].1.as_str(), "launch_error" | "crashed"),
        "MODE=1: {got:?}\n{log}"
    );
    assert!(!got[1].2.is_empty(), "MODE=1 says why: {got:?}");
    assert_eq!(
        got[2].1, "timed_out",
        "MODE=2 never finishes: {got:?}\n{log}"
    );
    assert!(
        got[2].2.contains("4.0 s"),
        "MODE=2 names its limit: {got:?}"
    );
    // The search's own account: all three tried and measured by this run, not the store.
    assert!(
        log.contains("3 tried (3 measured, 0 from the store), 2 failed"),
        "{log}"
    );
    assert!(log.contains("finished after"), "{log}");
    // The behaving configuration is in the final round's results.
    let results = std::fs::read_to_string(out.join("results.json")).unwrap_or_default();
    assert!(
        results.contains("\"MODE\": 0") || results.contains("\"MODE\":0"),
        "{results}"
    );
    let _ = std::fs::remove_dir_all(&store);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_search_over_crashing_and_hanging_kernels_finishes_on_opencl() {
    let device = std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into());
    search_survives(&device, "opencl", "opencl");
}

#[cfg(feature = "cuda")]
#[test]
fn a_search_over_faulting_and_hanging_kernels_finishes_on_cuda() {
    if common::cuda("a_search_over_faulting_and_hanging_kernels_finishes_on_cuda").is_none() {
        return;
    }
    search_survives("cuda", "cuda", "cuda");
}

#[test]
fn bad_limits_are_usage_errors() {
    for (flag, value) in [("--launch-timeout", "0"), ("--compile-timeout", "0")] {
        let o = gemmlab()
            .args(["tune", "--spec", &spec(), flag, value])
            .output()
            .expect("the gemmlab binary runs");
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", text(&o));
        assert!(text(&o).contains(flag), "{}", text(&o));
    }
}
