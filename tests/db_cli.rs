//! `gemmlab db` on a crafted database: stale, shallow, refused and unknown
//! entries named by `check`; `--measure` times entries against their neighbours
//! on PoCL; `prune` removes only what no lookup should serve; a corrupt file, a
//! database of another device and an unknown kernel are clear errors that change
//! nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gemmlab::kernel::builtin;
use gemmlab::results::bests::{Best, Database};
use gemmlab::{Precision, Toolchain};

fn gemmlab(args: &[&str]) -> Output {
    Command::new(common::gemmlab_bin())
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

fn tmp(name: &str) -> PathBuf {
    let d = common::temp_dir("db", name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn entry(kernel: &str, size: usize, tried: usize, source: &str) -> Best {
    let spec = builtin::find("xgemm").unwrap();
    Best {
        kernel: kernel.into(),
        toolchain: Toolchain::OpenCl,
        compiler: None,
        driver: None,
        m: size,
        n: size,
        k: size,
        precision: Precision::F32,
        call: None,
        config: spec.defaults(),
        hints: Default::default(),
        gflops: 1.0,
        vs_vendor: None,
        source: source.into(),
        strategy: "anneal".into(),
        tried,
        search_s: Some(10.0),
        space: Some(100_000),
        gemmlab: "test".into(),
        tuned_utc: "2026-12-07T00:00:00Z".into(),
    }
}

/// The name of the OpenCL device the tests use, from `gemmlab devices --json`.
fn device_name() -> String {
    let o = gemmlab(&["devices", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let want = std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into());
    let devices = v["devices"].as_array().cloned().unwrap_or_default();
    let d = devices
        .iter()
        .filter(|d| d["toolchain"] == "opencl")
        .find(|d| want == "opencl" || d["id"] == want.as_str())
        .or_else(|| devices.iter().find(|d| d["toolchain"] == "opencl"))
        .expect("an OpenCL device");
    d["name"].as_str().unwrap_or_default().to_string()
}

/// A database with one sound entry, and a stale, a shallow, a refused and an unknown one.
fn crafted(dir: &Path, device: &str) -> PathBuf {
    let now =
        gemmlab::util::keys::fnv1a(&builtin::find("xgemm").unwrap().source(Toolchain::OpenCl));
    let mut other = entry("xgemm", 64, 300, &now);
    other.config.0.insert("KWI".into(), 8);
    let mut refused = entry("xgemm", 256, 300, &now);
    refused.config.0.insert("MWG".into(), 7);
    let db = Database {
        device: device.into(),
        entries: vec![
            entry("xgemm", 128, 300, &now),
            entry("xgemm", 128, 300, "0000000000000000"),
            other,
            Best {
                tried: 1,
                ..entry("xgemm", 192, 1, &now)
            },
            refused,
            entry("nosuch", 128, 300, "0000000000000000"),
        ],
        crossovers: vec![],
        routine: vec![],
    };
    db.save(dir).unwrap()
}

#[test]
fn check_names_every_doubt_and_prune_removes_only_what_no_lookup_serves() {
    let dir = tmp("check");
    let path = crafted(&dir, &device_name());
    let db = dir.to_str().unwrap();
    let o = gemmlab(&["db", "list", "--db", db]);
    assert!(o.status.success(), "{}", text(&o));
    let o = gemmlab(&["db", "check", "--db", db]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    for words in [
        "stale          xgemm opencl f32 at 128: tuned 2026-12-07 on source 0000000000000000",
        "shallow        xgemm opencl f32 at 192: its search (anneal) tried 1 of 100000",
        "invalid        xgemm opencl f32 at 256: the kernel refuses its configuration",
        "unknown kernel nosuch opencl f32 at 128",
    ] {
        assert!(t.contains(words), "{words}\n{t}");
    }
    // Retune's searches, printed, not run.
    let o = gemmlab(&["db", "retune", "--db", db, "--dry-run"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("--kernels xgemm --backends opencl --sizes 192x192x192"),
        "{t}"
    );

    let before = std::fs::read_to_string(&path).unwrap();
    let o = gemmlab(&["db", "prune", "--db", db, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "a dry run changes nothing"
    );
    let o = gemmlab(&["db", "prune", "--db", db]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let after = Database::read(&path).unwrap();
    // The stale 128 entry beside the current one and the refused one went.
    assert_eq!(after.entries.len(), 4, "{t}");
    assert!(after
        .entries
        .iter()
        .all(|e| e.source != "0000000000000000" || e.kernel == "nosuch"));
    assert!(after.entries.iter().all(|e| e.m != 256));
}

#[test]
fn measure_times_each_entry_against_its_neighbours_on_the_device() {
    let dir = tmp("measure");
    crafted(&dir, &device_name());
    let out = dir.join("out");
    let dev = std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into());
    let o = gemmlab(&[
        "db",
        "check",
        "--db",
        dir.to_str().unwrap(),
        "--measure",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--reps",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let rows = std::fs::read_to_string(out.join("measurements.jsonl")).unwrap_or_default();
    // The 128 entry against the 64 entry's configuration (and the reverse), checked.
    let ok = rows
        .lines()
        .filter(|l| l.contains("\"status\":\"ok\"") && l.contains("\"experiment\":\"db check\""))
        .count();
    assert!(ok >= 4, "{rows}\n{t}");
    assert!(t.contains("not timed: nosuch"), "{t}");
}

#[test]
fn bad_databases_are_clear_errors_and_nothing_is_written() {
    let dir = tmp("bad");
    let path = crafted(&dir, "NVIDIA H200");
    let db = dir.to_str().unwrap();
    // Another device's database is not measured here.
    let o = gemmlab(&[
        "db",
        "check",
        "--db",
        db,
        "--measure",
        "--device",
        "opencl",
        "--backends",
        "opencl",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("holds no database of"), "{t}");
    // An unknown kernel.
    let o = gemmlab(&["db", "list", "--db", db, "--kernels", "gemm99"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--kernels gemm99: no such kernel"));
    // A corrupt file: which file and which line; nothing written.
    let text_before = std::fs::read_to_string(&path).unwrap();
    let cut: String = text_before.lines().take(12).collect::<Vec<_>>().join("\n");
    std::fs::write(&path, &cut).unwrap();
    for args in [vec!["db", "list"], vec!["db", "prune"]] {
        let mut a = args.clone();
        a.extend(["--db", path.to_str().unwrap()]);
        let o = gemmlab(&a);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(
            t.contains("is not a gemmlab tuning database") && t.contains("line"),
            "{t}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), cut);
    }
}
