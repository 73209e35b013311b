//! Users' kernels from spec files, end to end through the gemmlab binary on the
//! OpenCL test device (PoCL in CI): every shipped spec compared, tuned and
//! reported; bad spec files refused with file, line and exit 2; wrong and
//! unwritten outputs caught. With a CUDA device (--features cuda on a GPU
//! machine) both toolchains run every spec and a one-language spec is "not
//! applicable" on the other.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gemmlab(args: &[&str]) -> Output {
    Command::new(common::gemmlab_bin())
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

/// The CUDA GPU's name, found by a child `gemmlab devices --json` so that this
/// process opens no GPU of its own; a visible skip (a failure under
/// GEMMLAB_REQUIRE_CUDA=1) without one.
fn cuda_gpu_name(test: &str) -> Option<String> {
    let o = gemmlab(&["devices", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let name = v["devices"].as_array().and_then(|d| {
        d.iter()
            .find(|d| d["toolchain"] == "cuda")
            .and_then(|d| d["name"].as_str().map(str::to_string))
    });
    if name.is_none() {
        let why = format!("no CUDA device ({})", v["unavailable"]);
        if common::cuda_required() {
            panic!("{test}: GEMMLAB_REQUIRE_CUDA=1 but {why}");
        }
        common::say(&format!("SKIPPED {test}: {why}"));
    }
    name
}

/// `gemmlab ARGS --device <the test device> --out OUT`.
fn on_device(args: &[&str], out: &Path) -> Output {
    let dev = device();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--device", &dev, "--out", out.to_str().unwrap_or_default()]);
    gemmlab(&all)
}

fn device() -> String {
    std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemmlab-spec-{name}-{}", std::process::id()));
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

fn rows(out: &Path) -> Vec<serde_json::Value> {
    let t = std::fs::read_to_string(out.join("results.json")).expect("results.json written");
    let v: serde_json::Value = serde_json::from_str(&t).expect("results.json parses");
    v["measurements"].as_array().cloned().unwrap_or_default()
}

/// Every shipped spec with small sizes for a 2-core CPU (the GEMMs at 128^3 or so).
fn shipped() -> Vec<(&'static str, &'static str)> {
    vec![
        ("specs/saxpy/saxpy.toml", "n=65536"),
        ("specs/reduction/reduction.toml", "n=65536"),
        ("specs/stencil/stencil.toml", "nx=256,ny=128"),
        ("specs/tutorial-transpose/transpose.toml", "p=256,q=128"),
        (
            "specs/tutorial-padding/padding.toml",
            "p=100,q=60,p_xl=128,q_xl=64",
        ),
        ("specs/gemm-tutorial/myGEMM1.toml", "m=128,n=128,k=128"),
        ("specs/gemm-tutorial/myGEMM6.toml", "m=128,n=128,k=128"),
        ("specs/gemm-tutorial/gemm-reference.toml", "m=64,n=32,k=48"),
        ("specs/tile-stream/tile-stream.toml", "n=256"),
    ]
}

#[test]
fn every_shipped_spec_is_read_and_understood() {
    let mut found = 0;
    for entry in walk(Path::new("specs")) {
        if entry.extension().is_some_and(|e| e == "toml") {
            found += 1;
            let p = entry.to_string_lossy().into_owned();
            let o = gemmlab(&["spec", "--check", &p]);
            assert_eq!(o.status.code(), Some(0), "{p}: {}", text(&o));
            let t = text(&o);
            assert!(
                t.contains("launch ") && t.contains("check: against"),
                "{p}: {t}"
            );
        }
    }
    assert!(found >= 8, "the shipped specs are there ({found})");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_shipped_spec_compares_tunes_and_reports() {
    let dev = device();
    let root = tmp("shipped");
    for (spec, sizes) in shipped() {
        let name = Path::new(spec)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let cmp = root.join(format!("compare-{name}"));
        let o = gemmlab(&[
            "compare",
            "--device",
            &dev,
            "--backends",
            "opencl",
            "--spec",
            spec,
            "--sizes",
            sizes,
            "--reps",
            "2",
            "--warmup",
            "1",
            "--seed",
            "7",
            "--out",
            cmp.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", text(&o));
        let r = rows(&cmp);
        assert_eq!(r.len(), 1, "{spec}: one row on one toolchain");
        assert_eq!(r[0]["status"], "ok", "{spec}: {}", r[0]);
        assert!(r[0]["check"]["passed"].as_bool().unwrap_or(false), "{spec}");
        assert!(r[0]["dims"].is_object(), "{spec}: the row has its dims");
        assert!(
            r[0]["gflops"].is_number() || r[0]["gbs"].is_number(),
            "{spec}: a rate from its work"
        );
        let tune = root.join(format!("tune-{name}"));
        let o = gemmlab(&[
            "tune",
            "--device",
            &dev,
            "--backends",
            "opencl",
            "--spec",
            spec,
            "--sizes",
            sizes,
            "--max-configs",
            "20",
            "--top",
            "2",
            "--reps",
            "2",
            "--warmup",
            "1",
            "--seed",
            "7",
            "--store",
            root.join("store").to_str().unwrap(),
            "--db",
            root.join("db").to_str().unwrap(),
            "--out",
            tune.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", text(&o));
        let finals = rows(&tune);
        assert!(!finals.is_empty(), "{spec}: a final round");
        assert!(
            finals.iter().all(|r| r["status"] == "ok"),
            "{spec}: {finals:?}"
        );
        // A user's kernel is not published: its unchanged form is its defaults.
        assert!(
            finals.iter().all(|r| {
                let label = r["label"].as_str().unwrap_or("");
                !label.contains("published")
                    && (label.contains('=') || label.starts_with("defaults"))
            }),
            "{spec}: {finals:?}"
        );
        let traces = std::fs::read_dir(&tune)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("search-"))
            .count();
        assert_eq!(traces, 1, "{spec}: one search trace");
    }
    let report = root.join("report");
    let o = gemmlab(&[
        "report",
        "--from",
        root.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
        "--no-png",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    let section = &md[md
        .find("## Your kernels (spec files)")
        .expect("the section")..];
    for id in [
        "saxpy",
        "reduction",
        "stencil",
        "tutorial-transpose",
        "tutorial-padding",
        "tutorial-gemm1",
        "tutorial-gemm6",
    ] {
        assert!(
            section.contains(&format!("| {id} |")),
            "{id} in the report's table"
        );
        assert!(
            md.contains(&format!("Your kernel {id} at ")),
            "{id} has a finding"
        );
    }
    // Each spec kernel's search is in the tuning section, at its dimensions.
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("findings.json")).unwrap())
            .unwrap();
    let rates: Vec<&serde_json::Value> = (findings.as_array().unwrap().iter())
        .filter(|f| f["kind"] == "search_rate")
        .collect();
    assert_eq!(rates.len(), shipped().len(), "one search each: {rates:?}");
    for (spec, sizes) in shipped() {
        // "m=128,n=128,k=128" as results name dimensions: "k=128 m=128 n=128".
        let mut dims: Vec<&str> = sizes.split(',').collect();
        dims.sort();
        let r = rates.iter().find(|f| f["size"] == dims.join(" "));
        let r = r.unwrap_or_else(|| panic!("{spec}: no search rate at {sizes}: {rates:?}"));
        assert_eq!(r["section"], "Tuning (tune)", "{r}");
        let (kernel, at) = (r["kernel"].as_str().unwrap(), r["size"].as_str().unwrap());
        assert!(md.contains(&format!("### {kernel}, {at}\n")), "{spec}");
    }
    // The GEMM sections do not take the spec rows for GEMMs of size 0.
    assert!(
        !md.contains("M = N = K = 0") && !md.contains(" at 0 "),
        "no size-0 GEMM findings"
    );
    let db = std::fs::read_dir(root.join("db")).unwrap().count();
    assert_eq!(db, 1, "the database of bests holds the device");
    // compare --tuned runs what tune kept, at the nearest tuned size.
    let tuned = tmp("tuned-compare");
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--sizes",
        "n=131072",
        "--tuned",
        "--db",
        root.join("db").to_str().unwrap(),
        "--reps",
        "2",
        "--out",
        tuned.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = rows(&tuned);
    assert_eq!(r[0]["label"], "tuned at n=65536", "{}", r[0]);
    assert_eq!(r[0]["status"], "ok");
}

/// A copy of the saxpy spec folder with `edit` applied to its TOML.
fn mutated(name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let dir = tmp(&format!("bad-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["saxpy.cl", "saxpy.cu"] {
        std::fs::copy(Path::new("specs/saxpy").join(f), dir.join(f)).unwrap();
    }
    let toml = std::fs::read_to_string("specs/saxpy/saxpy.toml").unwrap();
    let p = dir.join("saxpy.toml");
    std::fs::write(&p, edit(&toml)).unwrap();
    p
}

fn line_of(toml: &str, needle: &str) -> usize {
    toml.lines()
        .position(|l| l.contains(needle))
        .expect("needle in the spec")
        + 1
}

/// A bad spec: its name, the edit that breaks saxpy.toml, words the error must
/// hold, and the line (by the original text on it) the error must name.
type BadCase = (
    &'static str,
    Box<dyn Fn(&str) -> String>,
    &'static str,
    Option<&'static str>,
);

#[test]
fn bad_spec_files_are_refused_with_file_line_and_exit_2() {
    let original = std::fs::read_to_string("specs/saxpy/saxpy.toml").unwrap();
    let cases: Vec<BadCase> = vec![
        (
            "syntax",
            Box::new(|t: &str| t.replace("n = 1048576", "n = = 1")),
            "",
            Some("n = 1048576"),
        ),
        (
            "unknown-field",
            Box::new(|t: &str| t.replace("title = ", "titel = ")),
            "unknown field `titel`",
            Some("title = "),
        ),
        (
            "missing-field",
            Box::new(|t: &str| t.replace("id = \"saxpy\"", "")),
            "missing field `id`",
            None,
        ),
        (
            "unknown-name",
            Box::new(|t: &str| t.replace("global = [\"n / WPT\"]", "global = [\"n / WPTT\"]")),
            "names WPTT",
            Some("global = [\"n / WPT\"]"),
        ),
        (
            "division-by-zero",
            Box::new(|t: &str| t.replace("global = [\"n / WPT\"]", "global = [\"n / (WPT - 4)\"]")),
            "division by zero",
            Some("global = [\"n / WPT\"]"),
        ),
        (
            "negative-length",
            Box::new(|t: &str| t.replacen("len = \"n\"", "len = \"n - 2 * n\"", 1)),
            "negative",
            Some("len = \"n\""),
        ),
        (
            "not-a-multiple",
            Box::new(|t: &str| t.replace("local = [\"TS\"]", "local = [\"TS + 1\"]")),
            "not a multiple of the local size",
            None,
        ),
        (
            // The reference launches run at every size too: checked before any device work.
            "reference-not-a-multiple",
            Box::new(|t: &str| {
                t.replace("global = [\"(n + 63) / 64 * 64\"]", "global = [\"n + 1\"]")
            }),
            "launch of saxpy_naive: global size 1048577",
            Some("[[check.launches]]"),
        ),
        (
            "missing-source",
            Box::new(|t: &str| t.replace("opencl = \"saxpy.cl\"", "opencl = \"nowhere.cl\"")),
            "nowhere.cl",
            Some("opencl = \"saxpy.cl\""),
        ),
        (
            "unsatisfiable",
            Box::new(|t: &str| {
                t.replace("[[constraints]]", "[[constraints]]\nholds = \"TS > 4096\"\nmessage = \"impossible\"\n[[constraints]]")
            }),
            "no combination of the parameters' values satisfies",
            None,
        ),
        (
            "bad-type",
            Box::new(|t: &str| t.replacen("type = \"f32\"", "type = \"half\"", 1)),
            "not one of f32, f64, i32, u32",
            None,
        ),
        (
            "no-tolerance",
            Box::new(|t: &str| t.replace("abs = 1e-6\nrel = 1e-6", "")),
            "states no tolerance",
            None,
        ),
        (
            "out-with-fill",
            Box::new(|t: &str| t.replace("access = \"inout\"", "access = \"out\"")),
            "out buffer is poisoned",
            None,
        ),
    ];
    for (name, edit, message, line_needle) in cases {
        let p = mutated(name, edit);
        let o = gemmlab(&[
            "compare",
            "--device",
            &device(),
            "--backends",
            "opencl",
            "--spec",
            p.to_str().unwrap(),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        assert!(t.contains("saxpy.toml"), "{name}: names the file: {t}");
        assert!(t.contains(message), "{name}: says '{message}': {t}");
        if let Some(needle) = line_needle {
            let line = line_of(&original, needle);
            assert!(
                t.contains(&format!("saxpy.toml:{line}:")),
                "{name}: names line {line}: {t}"
            );
        }
        assert!(!t.contains("panicked"), "{name}: {t}");
        // Nothing was measured, so nothing was written.
    }
    // An unknown dimension and a define no spec has are usage errors too.
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--sizes",
        "q=4",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no selected spec has a dimension q"));
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--define",
        "TSS=4",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--sizes",
        "n=1000",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("n must be a multiple of TS*WPT"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_wrong_or_unwritten_output_is_never_a_speed() {
    let dev = device();
    // A kernel that skips the last element of each work-item's share: the poison survives.
    let p = mutated("unwritten", |t| t.to_string());
    let dir = p.parent().unwrap().to_path_buf();
    std::fs::write(
        dir.join("saxpy.cl"),
        "__kernel void saxpy(const int n, const float a, __global const float* x, __global float* y) {}\n\
         __kernel void saxpy_naive(const int n, const float a, __global const float* x, __global float* y) {\n\
           int i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }\n",
    )
    .unwrap();
    let out = tmp("unwritten-out");
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--spec",
        p.to_str().unwrap(),
        "--sizes",
        "n=4096",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = rows(&out);
    assert_eq!(r[0]["status"], "wrong_result", "{}", r[0]);
    assert!(
        r[0]["reason"].as_str().unwrap().contains("buffer y"),
        "{}",
        r[0]
    );
    assert!(r[0]["gflops"].is_null() && r[0]["gbs"].is_null() && r[0]["time"].is_null());

    // An out buffer the kernel never writes: said in words.
    let p = mutated("never-written", |t| {
        t.replace("access = \"inout\"\nfill = \"random\"", "access = \"inout\"\nfill = \"random\"\n\n[[args]]\nname = \"z\"\ntype = \"f32\"\nlen = \"n\"\naccess = \"out\"")
            .replace("local = [\"TS\"]", "local = [\"TS\"]\nargs = [\"n\", \"a\", \"x\", \"y\"]")
            .replace("local = [\"64\"]", "local = [\"64\"]\nargs = [\"n\", \"a\", \"x\", \"y\"]")
    });
    let out = tmp("never-written-out");
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--spec",
        p.to_str().unwrap(),
        "--sizes",
        "n=4096",
        "--out",
        out.to_str().unwrap(),
    ]);
    let r = rows(&out);
    // The reference does not write z either: both hold the poison, so z passes only if
    // the reference wrote it. Here neither did: the check names the buffer.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        r[0]["reason"].as_str().unwrap().contains("buffer z"),
        "{}",
        r[0]
    );

    // An entry point that is not in the source: the toolchain's words, exit 1.
    let p = mutated("no-entry", |t| {
        t.replace("entry = \"saxpy\"", "entry = \"saxpy_missing\"")
    });
    let out = tmp("no-entry-out");
    let o = gemmlab(&[
        "compare",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--spec",
        p.to_str().unwrap(),
        "--sizes",
        "n=4096",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("saxpy_missing"), "{}", text(&o));
    let r = rows(&out);
    let why = r[0]["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("entry point saxpy_missing is not in the opencl program")
            && why.contains("saxpy.toml:"),
        "{why}"
    );
}

#[test]
fn build_and_ptx_take_a_spec_and_its_parameters() {
    let o = gemmlab(&[
        "build",
        "--device",
        &device(),
        "--backends",
        "opencl",
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--define",
        "WPT=8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("-DWPT=8") || text(&o).contains("WPT=8"),
        "{}",
        text(&o)
    );
    let o = gemmlab(&[
        "build",
        "--device",
        &device(),
        "--backends",
        "opencl",
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--define",
        "WPT=3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("WPT must be one of"), "{}", text(&o));
}

#[test]
fn a_spec_with_one_language_is_not_applicable_on_the_other_toolchain() {
    // Both toolchains on that GPU, chosen by its name.
    let Some(name) =
        cuda_gpu_name("a_spec_with_one_language_is_not_applicable_on_the_other_toolchain")
    else {
        return;
    };
    let p = mutated("opencl-only", |t| t.replace("cuda = \"saxpy.cu\"", ""));
    let out = tmp("opencl-only-out");
    let o = gemmlab(&[
        "compare",
        "--device",
        &name,
        "--spec",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = rows(&out);
    let cuda = r
        .iter()
        .find(|r| r["toolchain"] == "cuda")
        .expect("a CUDA row");
    assert_eq!(cuda["status"], "unavailable", "{cuda}");
    assert!(
        cuda["reason"]
            .as_str()
            .unwrap()
            .contains("no source in CUDA C++"),
        "{cuda}"
    );
}

#[test]
fn every_twin_spec_runs_checked_on_both_toolchains() {
    let Some(name) = cuda_gpu_name("every_twin_spec_runs_checked_on_both_toolchains") else {
        return;
    };
    for (spec, sizes) in shipped() {
        let out = tmp(&format!(
            "both-{}",
            Path::new(spec).file_stem().unwrap().to_string_lossy()
        ));
        let o = gemmlab(&[
            "compare",
            "--device",
            &name,
            "--spec",
            spec,
            "--sizes",
            sizes,
            "--reps",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", text(&o));
        let r = rows(&out);
        assert_eq!(r.len(), 2, "{spec}: both toolchains: {}", text(&o));
        assert!(r.iter().all(|r| r["status"] == "ok"), "{spec}: {r:?}");
    }
}

/// One pipeline: a user's kernel goes through every sweep the built-in kernels
/// do (tiling over its parameters; jit where CUDA and NVIDIA OpenCL share a GPU,
/// refused with the reason elsewhere), and one `compare` measures built-in GEMMs
/// and a spec side by side, every row checked.
#[test]
fn a_spec_goes_through_every_sweep_and_a_mixed_compare() {
    let spec = "specs/saxpy/saxpy.toml";
    let out = tmp("sweep-tiling");
    let o = on_device(
        &[
            "sweep", "tiling", "--spec", spec, "--sizes", "n=65536", "--reps", "3",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = rows(&out);
    // saxpy's TS x WPT: 4 x 4 combinations, each checked, each labelled by its values.
    assert_eq!(r.len(), 16, "{}", text(&o));
    assert!(
        r.iter()
            .all(|m| m["experiment"] == "tiling" && m["status"] == "ok"),
        "{r:?}"
    );
    assert!(r.iter().any(|m| m["label"] == "TS=512 WPT=8"), "{r:?}");
    for kind in ["registers", "hints"] {
        let out = tmp(&format!("sweep-{kind}"));
        let o = on_device(
            &[
                "sweep", kind, "--spec", spec, "--sizes", "n=65536", "--reps", "3",
            ],
            &out,
        );
        assert!(o.status.success(), "{kind}: {}", text(&o));
        assert!(rows(&out).iter().all(|m| m["status"] == "ok"), "{kind}");
    }
    let o = gemmlab(&[
        "sweep",
        "jit",
        "--device",
        &device(),
        "--spec",
        spec,
        "--sizes",
        "n=65536",
        "--out",
        tmp("sweep-jit").to_str().unwrap(),
    ]);
    if !device().contains("h200") && !device().contains("nvidia") {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("needs CUDA and NVIDIA OpenCL"),
            "{}",
            text(&o)
        );
    }
    let out = tmp("mixed");
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--kernels",
        "1,6",
        "--spec",
        spec,
        "--sizes",
        "128,n=65536",
        "--reps",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r = rows(&out);
    let kernels: Vec<&str> = r.iter().filter_map(|m| m["kernel"].as_str()).collect();
    for k in ["gemm1", "gemm6", "saxpy"] {
        assert!(kernels.contains(&k), "{k} missing: {kernels:?}");
    }
    assert!(
        r.iter()
            .all(|m| m["status"] == "ok" && m["check"]["passed"] == true),
        "{r:?}"
    );
}

/// Guard zones: a kernel that writes one element past the end of its output,
/// one before its start, or past the end of an input is that row's OUT OF
/// BOUNDS, named by buffer and index, exit 1; a computed NaN is WRONG; the run
/// goes on, and the tuner keeps only the right configuration.
#[test]
fn writes_outside_a_buffer_are_caught_and_named() {
    let spec = "tests/fixtures/specs/wrong/wrong.toml";
    // At its defaults a kernel that is its own reference is checked for the poison only.
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--spec",
        spec,
        "--reps",
        "3",
        "--out",
        tmp("wrong-0").to_str().unwrap(),
    ]);
    assert!(
        o.status.success() && text(&o).contains("ok (poison only)"),
        "{}",
        text(&o)
    );
    let cases = [
        (
            "1",
            "OUT OF BOUNDS",
            "buffer `y` 1 element past its end (index 4096",
        ),
        (
            "2",
            "OUT OF BOUNDS",
            "buffer `y` 1 element before its start (index -1",
        ),
        ("3", "WRONG", "got NaN"),
        ("4", "OUT OF BOUNDS", "buffer `x` 1 element past its end"),
    ];
    for (mode, label, words) in cases {
        let out = tmp(&format!("wrong-{mode}"));
        let define = format!("MODE={mode}");
        let o = gemmlab(&[
            "compare",
            "--device",
            &device(),
            "--spec",
            spec,
            "--define",
            &define,
            "--reps",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "MODE={mode}: {t}");
        assert!(t.contains(label) && t.contains(words), "MODE={mode}: {t}");
        let r = rows(&out);
        assert!(
            !r.is_empty() && r.iter().all(|m| m["status"] != "ok"),
            "MODE={mode}: {r:?}"
        );
    }
    let out = tmp("wrong-tune");
    let o = gemmlab(&[
        "tune",
        "--device",
        &device(),
        "--spec",
        spec,
        "--strategy",
        "exhaustive",
        "--top",
        "5",
        "--no-db",
        "--store",
        tmp("wrong-store").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let finals: Vec<_> = rows(&out)
        .into_iter()
        .filter(|m| m["status"] == "ok")
        .map(|m| m["config"]["MODE"].as_i64())
        .collect();
    // On NVIDIA the space has register caps too: every kept configuration is MODE=0.
    assert!(
        !finals.is_empty() && finals.iter().all(|m| *m == Some(0)),
        "only right configurations are kept: {}",
        text(&o)
    );
}

/// A spec whose arguments do not fit the kernel's own signature (one too many,
/// a scalar of another type, a buffer of another element type) is refused
/// before any launch with the file, the line, the argument, what the kernel
/// declares and what the spec gives: exit 2, never a panic or a crash.
#[test]
fn arguments_that_do_not_fit_the_kernel_are_named_with_exit_2() {
    let extra = mutated("args-extra", |t| {
        t.replacen(
            "[[args]]\nname = \"n\"",
            "[[args]]\nname = \"extra\"\ntype = \"i32\"\nvalue = 3\n\n[[args]]\nname = \"n\"",
            1,
        )
    });
    let scalar = mutated("args-scalar", |t| {
        let i = t.find("name = \"a\"").unwrap();
        let j = i + t[i..].find("[[args]]").unwrap();
        format!(
            "{}name = \"a\"\ntype = \"i32\"\nvalue = 2\n\n{}",
            &t[..i],
            &t[j..]
        )
    });
    let elem = mutated("args-elem", |t| {
        t.replacen(
            "name = \"x\"\ntype = \"f32\"",
            "name = \"x\"\ntype = \"i32\"",
            1,
        )
    });
    let cases = [
        (
            extra,
            "the kernel declares 4 parameters",
            "the spec gives 5 arguments",
        ),
        (
            scalar,
            "argument 1 `a`: the spec gives an i32 scalar",
            "float",
        ),
        (
            elem,
            "argument 2 `x`: the spec gives an i32 buffer",
            "float*",
        ),
    ];
    for (spec, words, declared) in cases {
        let out = tmp("args-out");
        let o = gemmlab(&[
            "compare",
            "--device",
            &device(),
            "--spec",
            spec.to_str().unwrap(),
            "--reps",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {t}", spec.display());
        assert!(
            t.contains(words) && t.contains(declared),
            "{}: {t}",
            spec.display()
        );
        assert!(t.contains("saxpy.toml:"), "the file and line: {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
}

/// The tuning store keys a user's whole kernel: the same spec answers from the
/// store, a spec whose check (or launch, or arguments) changed is measured anew.
#[test]
fn a_changed_spec_never_reuses_an_old_store() {
    let spec = mutated("store-key", |t| t.to_string());
    let store = tmp("store-key-store");
    let tune = |out: &str| {
        let o = gemmlab(&[
            "tune",
            "--device",
            &device(),
            "--spec",
            spec.to_str().unwrap(),
            "--strategy",
            "random",
            "--max-configs",
            "3",
            "--sizes",
            "n=65536",
            "--no-db",
            "--store",
            store.to_str().unwrap(),
            "--out",
            tmp(out).to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    assert!(tune("store-key-1").contains("(3 measured, 0 from the store)"));
    assert!(tune("store-key-2").contains("(0 measured, 3 from the store)"));
    let t = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, t.replacen("rel = 1e-6", "rel = 1e-5", 1)).unwrap();
    let third = tune("store-key-3");
    assert!(third.contains("(3 measured, 0 from the store)"), "{third}");
}

/// A tune in which every configuration fails exits 1 and says why, grouped
/// by kind with the first line of the compiler's complaint.
#[test]
fn a_tune_that_measures_nothing_fails_and_says_why() {
    let dir = tmp("allfail");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["saxpy.cl", "saxpy.cu", "saxpy.toml"] {
        std::fs::copy(Path::new("specs/saxpy").join(f), dir.join(f)).unwrap();
    }
    let broken = std::fs::read_to_string("specs/saxpy/saxpy.cl")
        .unwrap()
        .replace("y[i] = ", "y[i] = undefined_name + ");
    std::fs::write(dir.join("broken.cl"), broken).unwrap();
    let toml = std::fs::read_to_string("specs/saxpy/saxpy.toml").unwrap();
    let toml = toml
        .replace("id = \"saxpy\"", "id = \"allfail\"")
        .replace("opencl = \"saxpy.cl\"", "opencl = \"broken.cl\"")
        .replace("cuda = \"saxpy.cu\"\n", "");
    let check = toml.find("[check]").unwrap();
    let toml = format!(
        "{}[check]\nreference = \"spec\"\nspec = \"saxpy.toml\"\nabs = 1e-6\nrel = 1e-6\n",
        &toml[..check]
    );
    let spec = dir.join("allfail.toml");
    std::fs::write(&spec, toml).unwrap();
    let o = gemmlab(&[
        "tune",
        "--device",
        &device(),
        "--spec",
        spec.to_str().unwrap(),
        "--strategy",
        "random",
        "--max-configs",
        "4",
        "--no-db",
        "--store",
        tmp("allfail-store").to_str().unwrap(),
        "--out",
        tmp("allfail-out").to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("nothing measured of 4 tried (4 compile error"),
        "{t}"
    );
    assert!(t.contains("undefined_name"), "the compiler's words: {t}");
}

/// `[requires]`: a kernel written for one kind of GPU is not applicable, with
/// the reason, on a device that is not one (exit 0: nothing failed); a
/// malformed requirement is refused with the file and line.
#[test]
fn a_requirement_the_device_does_not_meet_is_not_applicable() {
    let spec = mutated("requires", |t| {
        format!("{t}\n[requires]\nvendor = \"no-such-vendor\"\ncompute_capability = \"9.0\"\n")
    });
    let out = tmp("requires-out");
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--spec",
        spec.to_str().unwrap(),
        "--sizes",
        "n=65536",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("requires a device of vendor 'no-such-vendor'"),
        "{t}"
    );
    assert!(
        rows(&out).iter().all(|m| m["status"] == "unavailable"),
        "{t}"
    );
    let bad = mutated("requires-bad", |t| {
        format!("{t}\n[requires]\ncompute_capability = \"nine\"\n")
    });
    let o = gemmlab(&["spec", "--check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("compute_capability 'nine'"),
        "{}",
        text(&o)
    );
}

/// `access = "local"`: host-sized work-group local memory, an OpenCL __local
/// pointer argument (CUDA: the launch's dynamic shared memory), runs checked.
#[test]
fn local_memory_arguments_run_checked() {
    let spec = "tests/fixtures/specs/local/local.toml";
    let o = gemmlab(&["spec", "--check", spec]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o)
        .contains("scratch: f32 buffer of 64 elements (256 bytes), work-group local memory"));
    let out = tmp("local");
    let o = gemmlab(&[
        "compare",
        "--device",
        &device(),
        "--spec",
        spec,
        "--reps",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r = rows(&out);
    assert!(
        !r.is_empty() && r.iter().all(|m| m["status"] == "ok"),
        "{r:?}"
    );
}

/// A kernel that faults (a segmentation fault on PoCL, an illegal address on a
/// GPU) or never finishes costs its own row, in its reference or in its checked
/// run: the rows before and after it are measured, and the run exits 1.
#[test]
fn a_kernel_that_crashes_or_hangs_costs_its_row_not_the_run() {
    let dir = "tests/fixtures/specs/faults";
    let specs = [
        "specs/misbehave/misbehave.toml".to_string(),
        format!("{dir}/crash.toml"),
        format!("{dir}/hang.toml"),
        "tests/fixtures/specs/wrong/wrong.toml".to_string(),
    ];
    let out = tmp("faults");
    let mut args = vec!["compare", "--kernel-timeout", "10", "--reps", "3"];
    for s in &specs {
        args.extend(["--spec", s.as_str()]);
    }
    let o = on_device(&args, &out);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    // The restarted process keeps what its predecessor measured (misbehave's row).
    assert!(t.contains("restarted: 1 row measured before kept"), "{t}");
    let status_of = |kernel: &str| -> String {
        let r = rows(&out);
        let row = r.iter().find(|m| m["kernel"] == kernel);
        row.map(said).unwrap_or_default()
    };
    assert_eq!(status_of("misbehave"), "ok: ", "{t}");
    assert_eq!(status_of("wrong"), "ok: ", "{t}");
    let crash = status_of("crash");
    assert!(
        crash.contains("crashed: ") && crash.contains("SIGSEGV")
            || crash.starts_with("launch_error"),
        "{crash}\n{t}"
    );
    let hang = status_of("hang");
    assert!(
        hang.starts_with("timed_out: ") && hang.contains("past its limit of 10 s"),
        "{hang}\n{t}"
    );

    // In the measured run itself (its reference, at the default, is right).
    for (mode, words) in [
        ("1", "SIGSEGV"),
        ("2", "running it once checked took past its limit"),
    ] {
        let out = tmp(&format!("faults-{mode}"));
        let define = format!("MODE={mode}");
        let spec = "specs/misbehave/misbehave.toml".to_string();
        let o = on_device(
            &[
                "compare",
                "--spec",
                &spec,
                "--define",
                &define,
                "--kernel-timeout",
                "10",
                "--reps",
                "3",
            ],
            &out,
        );
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "MODE={mode}: {t}");
        let status = status_of_row(&out);
        // A GPU reports the fault itself (an illegal address) as a launch error.
        let said = status.contains(words) || (mode == "1" && status.starts_with("launch_error"));
        assert!(said, "MODE={mode}: {status}\n{t}");
    }
}

fn status_of_row(out: &Path) -> String {
    rows(out).first().map(said).unwrap_or_default()
}

/// A row's status and reason: "crashed: the process died of ...".
fn said(m: &serde_json::Value) -> String {
    format!(
        "{}: {}",
        m["status"].as_str().unwrap_or_default(),
        m["reason"].as_str().unwrap_or_default()
    )
}

/// `--sanitize` runs each checked run under compute-sanitizer's memcheck and
/// puts its report in the row; where the tool is not installed (here, CI), it
/// says what to install, exit 2.
#[test]
fn sanitize_puts_the_memcheck_report_in_the_row_or_says_what_is_missing() {
    let out = tmp("sanitize");
    let spec = "specs/misbehave/misbehave.toml";
    let args = [
        "compare",
        "--spec",
        spec,
        "--define",
        "MODE=1",
        "--sanitize",
    ];
    let o = on_device(&args, &out);
    let t = text(&o);
    match gemmlab::experiment::isolate::find_sanitizer() {
        None => {
            assert_eq!(o.status.code(), Some(2), "{t}");
            assert!(t.contains("compute-sanitizer is not on the PATH"), "{t}");
        }
        Some(_) => {
            assert_eq!(o.status.code(), Some(1), "{t}");
            let status = status_of_row(&out);
            assert!(
                status.contains("compute-sanitizer memcheck: "),
                "{status}\n{t}"
            );
        }
    }
}
