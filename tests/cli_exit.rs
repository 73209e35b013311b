//! The exit status of the gemmlab binary: 0 when every measurement is ok or not
//! applicable, 1 when any is invalid or failed (after writing everything), 2 for
//! usage errors. Runs real kernels on the OpenCL test device (PoCL in CI).

use std::path::PathBuf;
use std::process::{Command, Output};

fn gemmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gemmlab"))
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
        (&["compare", "--nonsense"], "--nonsense"),
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
