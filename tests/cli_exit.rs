//! The exit status of the gemmlab binary: 0 when every measurement is ok or not
//! applicable, 1 when any is invalid or failed (after writing everything), 2 for
//! usage errors. Runs real kernels on the OpenCL test device (PoCL in CI).

mod common;

use gemmlab::util::words::plural;
use std::path::PathBuf;
use std::process::{Command, Output};

fn gemmlab(args: &[&str]) -> Output {
    Command::new(common::gemmlab_bin())
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

fn device() -> String {
    std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into())
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemmlab-exit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_verified_run_exits_0() {
    let out = out_dir("ok");
    let dev = device();
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--sizes",
        "64",
        "--kernels",
        "1,2",
        "--reps",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn an_invalid_configuration_exits_1_after_writing_everything() {
    // Kernel 11 requires RK == RY: the row is "invalid" with its reason, kernel 1 is ok.
    let out = out_dir("invalid");
    let dev = device();
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--sizes",
        "64",
        "--kernels",
        "1,11",
        "--define",
        "RK=8",
        "--reps",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 invalid"), "{}", stderr(&o));
    let written = std::fs::read_to_string(out.join("measurements.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 2, "both rows written: {written}");
    assert!(out.join("results.json").exists());
}

#[test]
fn a_constraint_on_a_switch_is_judged_before_anything_is_compiled() {
    // SMEM_PAD=1 pads each tile row: these tiles fit 48 KiB only without it.
    let tiles = [
        "--define",
        "SMEM_PAD=1",
        "--define",
        "STAGES=2",
        "--define",
        "BK=32",
        "--define",
        "BM=128",
        "--define",
        "BN=64",
    ];
    let dev = device();
    let o = gemmlab(&[&["build", "--device", &dev, "--kernel", "simt"][..], &tiles].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("SMEM_PAD=1 pads each tile row") && stderr(&o).contains("48 KiB"),
        "{}",
        stderr(&o)
    );
    let out = out_dir("switch-constraint");
    let o = gemmlab(
        &[
            &[
                "compare",
                "--device",
                &dev,
                "--backends",
                "opencl",
                "--sizes",
                "64",
            ][..],
            &[
                "--kernels",
                "simt",
                "--reps",
                "1",
                "--out",
                out.to_str().unwrap(),
            ],
            &tiles,
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let written = std::fs::read_to_string(out.join("measurements.jsonl")).unwrap();
    assert!(
        written.contains("invalid") && written.contains("SMEM_PAD=1 pads each tile row"),
        "{written}"
    );
}

#[test]
fn usage_errors_exit_2_and_name_the_option() {
    let file = out_dir("file");
    std::fs::write(&file, "not a directory").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["compare", "--reps", "0"], "--reps"),
        (&["sweep", "hints", "--reps", "0"], "--reps"),
        (&["compare", "--max-registers", "3"], "--max-registers"),
        (
            &["build", "--kernel", "6", "--max-registers", "256"],
            "--max-registers",
        ),
        (&["compare", "--kernels", "99"], "unknown kernel"),
        (&["compare", "--batch", "0"], "--batch"),
        (&["sweep", "tiling", "--batch", "many"], "--batch"),
        (&["compare", "--budget", "0"], "--budget"),
        (&["compare", "--check", "maybe"], "--check"),
        (&["compare", "--nonsense"], "--nonsense"),
        (&["sweep", "registers", "--carveout", "50"], "--carveout"),
        (&["sweep", "jit", "--carveout", "150"], "--carveout"),
        (&["compare", "--out", file.to_str().unwrap()], "--out"),
        (
            &["report", "--from", ".", "--out", file.to_str().unwrap()],
            "--out",
        ),
    ];
    for (args, names) in cases {
        let o = gemmlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(names), "{args:?}: {}", stderr(&o));
    }
    let _ = std::fs::remove_file(&file);
}

fn measurements(out: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("measurements.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_result_says_which_check_ran_and_how_it_was_timed() {
    let dev = device();
    for (mode, starts) in [("sampled", "sampled:"), ("cpu", "full: f64 CPU")] {
        let out = out_dir(mode);
        let o = gemmlab(&[
            "compare",
            "--device",
            &dev,
            "--backends",
            "opencl",
            "--sizes",
            "100x70x33",
            "--kernels",
            "1,10",
            "--reps",
            "3",
            "--check",
            mode,
            "--batch",
            "4",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let rows = measurements(&out);
        assert_eq!(rows.len(), 2);
        for r in rows {
            let method = r["check"]["method"].as_str().unwrap_or_default();
            assert!(method.starts_with(starts), "{mode}: {method}");
            assert_eq!(r["time"]["batch"], 4, "{r}");
        }
    }
}

#[test]
fn a_size_that_cannot_fit_is_refused_with_the_numbers() {
    // 65536^3 needs 80 GiB of host memory for its f32 inputs and output alone.
    let host = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let avail_kib: u64 = host
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    if avail_kib > 60 << 20 {
        eprintln!(
            "SKIPPED a_size_that_cannot_fit_is_refused_with_the_numbers: this host has {} GiB free",
            avail_kib >> 20
        );
        return;
    }
    let out = out_dir("huge");
    let dev = device();
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--sizes",
        "65536",
        "--kernels",
        "6",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("refused before allocating"), "{text}");
    assert!(text.contains("GiB of host memory"), "{text}");
    let rows = measurements(&out);
    assert_eq!(rows[0]["status"], "out_of_memory");
}

#[test]
fn a_run_that_replaces_another_in_its_out_directory_says_so_and_leaves_none_of_it() {
    let out = out_dir("replaced");
    let dev = device();
    let o = out.to_str().unwrap();
    let small = [
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--sizes",
        "64",
        "--reps",
        "2",
    ];
    let run = |cmd: &[&str]| gemmlab(&[cmd, &small[..], &["--out", o]].concat());
    // A tune leaves a search trace and a finished run's results.json.
    // Its store and database stay out of the repository.
    let store = out_dir("replaced-store");
    let first = run(&[
        "tune",
        "--kernels",
        "1",
        "--max-configs",
        "2",
        "--top",
        "1",
        "--in-process",
        "--no-db",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(
        !stderr(&first).contains("earlier run"),
        "{}",
        stderr(&first)
    );
    let traces = || {
        let names = std::fs::read_dir(&out).unwrap().flatten();
        (names.map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.starts_with("search-"))
            .count()
    };
    assert_eq!(traces(), 1);
    let tuned = measurements(&out).len();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let second = run(&["compare", "--kernels", "1"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let note = format!(
        "note: {o} held {} and 1 search trace of an earlier run; this run replaces them",
        plural(tuned, "measurement")
    );
    assert!(stderr(&second).contains(&note), "{}", stderr(&second));
    assert_eq!(traces(), 0, "the earlier run's search trace is gone");
    assert!(
        out.join("notes.txt").exists(),
        "a file gemmlab did not write stays"
    );
    let rows = measurements(&out);
    assert!(
        rows.iter().all(|r| r["experiment"] == "compare"),
        "{rows:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ptx_without_a_toolchain_that_gives_ptx_is_a_failure_not_a_usage_error() {
    let o = gemmlab(&["ptx", "--kernel", "6", "--device", &device()]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    match o.status.code() {
        // An NVIDIA device (GEMMLAB_TEST_DEVICE on a GPU machine) gives PTX.
        Some(0) => assert!(text.contains("gemm6"), "{text}"),
        // PoCL gives none: the command was right, the machine lacks the toolchain.
        Some(1) => {
            assert!(text.contains("PTX unavailable"), "{text}");
            assert!(text.contains("--arch sm_90"), "{text}");
        }
        other => panic!("exit {other:?}: {text}"),
    }
}
