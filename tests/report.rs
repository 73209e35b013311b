//! `gemmlab report` on the committed fixture (tests/fixtures/report): real
//! compare data plus synthetic sweeps. Needs no GPU. PNGs are checked only
//! where a TrueType font exists (CI installs fonts-dejavu-core).

use std::fs;
use std::path::{Path, PathBuf};

use gemmlab::report::{self, Options};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report");

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{name}"));
    let _ = fs::remove_dir_all(&d);
    d
}

fn options(from: Vec<PathBuf>, out: &Path, png: bool) -> Options {
    Options {
        from,
        out: out.to_path_buf(),
        png,
        font: None,
        size: None,
    }
}

/// Image targets of `![..](..)` and `[..](..)` links to chart files.
fn chart_links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = md;
    while let Some(i) = rest.find("](charts/") {
        let tail = &rest[i + 2..];
        let end = tail.find(')').expect("unclosed link");
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

fn fixture_kernels() -> Vec<String> {
    let mut kernels = Vec::new();
    for dir in ["compare", "registers", "tiling", "hints", "jit"] {
        let (_, ms) = gemmlab::results::load_dir(&Path::new(FIXTURE).join(dir)).unwrap();
        for m in ms {
            if m.kernel != "cublas" && !kernels.contains(&m.kernel) {
                kernels.push(m.kernel);
            }
        }
    }
    kernels
}

fn check_image(path: &Path) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(bytes.len() > 200, "{} is nearly empty", path.display());
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => {
            let head = String::from_utf8_lossy(&bytes[..64]);
            assert!(
                head.starts_with("<svg") || head.starts_with("<?xml"),
                "{} is not an SVG: {head}",
                path.display()
            );
        }
        Some("png") => assert_eq!(
            &bytes[..8],
            b"\x89PNG\r\n\x1a\n",
            "{} is not a PNG",
            path.display()
        ),
        other => panic!("unexpected chart file type {other:?}"),
    }
}

#[test]
fn report_from_the_fixture() {
    let out = out_dir("fixture");
    let outcome = report::generate(&options(vec![PathBuf::from(FIXTURE)], &out, true)).unwrap();
    assert_eq!(
        outcome.runs, 5,
        "a parent directory loads every result directory under it"
    );
    let md = fs::read_to_string(out.join("report.md")).unwrap();

    for k in fixture_kernels() {
        assert!(md.contains(&k), "report does not name kernel {k}");
    }
    // A short summary first, every finding in full after it.
    let (summary_at, all_at, env_at) = (
        md.find("## Summary").expect("a summary"),
        md.find("## All findings").expect("the full list"),
        md.find("## Environment").expect("the environment"),
    );
    assert!(summary_at < all_at && all_at < env_at, "{md}");
    let items: Vec<&str> = md[summary_at..all_at]
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(
        (1..=report::SUMMARY_MAX).contains(&items.len()),
        "{items:#?}"
    );
    for i in &items {
        assert!(
            i.contains(".svg)") || i.contains("](#"),
            "no chart or table link: {i}"
        );
    }
    for section in [
        "## Environment",
        "## Speed: kernels x toolchains x sizes",
        "## Registers, spills and occupancy",
        "## PTX instruction mix",
        "## Register cap sweep",
        "## Register tiling",
        "## Compiler hints",
        "## OpenCL's PTX through the CUDA driver JIT",
        "## Measurements without a speed",
        "## Clocks and throttling",
    ] {
        assert!(md.contains(section), "missing section {section}");
    }
    // The fixture predates clock readings: the report says so rather than "not throttled".
    assert!(md.contains("No clock data was recorded"), "{md}");
    // Findings computed from the data, with their numbers.
    assert!(md.contains("**Best kernel per toolchain** at 4096"), "{md}");
    assert!(md.contains("gemm3: CUDA 40 vs OpenCL 32 registers"), "{md}");
    assert!(md.contains("8x4 tile claim does not hold"), "{md}");
    assert!(md.contains("CUDA cap 32 -> 72 registers"), "{md}");
    assert!(
        md.contains("OpenCL cap 32 -> 80 registers, the same as without a cap"),
        "{md}"
    );
    assert!(
        md.contains("**Hints that change speed by more than 3%**"),
        "{md}"
    );
    // Every switch is compared with the published baseline and named in the finding.
    assert!(md.contains("USE_BOUNDS=1 (gemm6 CUDA"), "{md}");
    assert!(md.contains("VOLATILE_IDX=1 on gemm6"), "{md}");
    assert!(
        !md.contains("gemm6 (published + USE_BOUNDS=1)"),
        "a hint point is not a register-sweep series of its own"
    );
    assert!(
        md.contains("marked synthetic"),
        "synthetic inputs must be flagged"
    );

    let links = chart_links(&md);
    assert!(links.len() >= 5, "charts referenced: {links:?}");
    for l in &links {
        check_image(&out.join(l));
    }
    let font = gemmlab::report::fonts::ensure(None);
    match font {
        Ok(_) => {
            assert!(outcome.png_skipped.is_none());
            assert!(links.iter().any(|l| l.ends_with(".png")));
            for c in &outcome.charts {
                check_image(c.png.as_ref().expect("a PNG for every chart"));
                check_image(&c.svg);
            }
        }
        Err(why) => {
            eprintln!("no system font ({why}): PNG checks skipped; install fonts-dejavu-core");
            assert!(outcome.png_skipped.is_some());
            assert!(md.contains("fonts-dejavu-core"));
        }
    }
}

#[test]
fn svg_only_report() {
    let out = out_dir("svg-only");
    let from = vec![
        Path::new(FIXTURE).join("compare"),
        Path::new(FIXTURE).join("tiling"),
    ];
    let outcome = report::generate(&options(from, &out, false)).unwrap();
    assert_eq!(outcome.runs, 2);
    assert!(outcome.charts.iter().all(|c| c.png.is_none()));
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("--no-png"));
    assert!(
        !md.contains("## Register cap sweep"),
        "no registers data, no section"
    );
    let links = chart_links(&md);
    assert!(!links.is_empty());
    for l in &links {
        assert!(l.ends_with(".svg"), "{l}");
        check_image(&out.join(l));
    }
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let out = out_dir("bad");
    let missing = Path::new(FIXTURE).join("no-such-dir");
    let e = report::generate(&options(vec![missing], &out, false)).unwrap_err();
    assert!(e.to_string().contains("no such directory"), "{e}");

    let empty = out_dir("empty-input");
    fs::create_dir_all(empty.join("sub")).unwrap();
    let e = report::generate(&options(vec![empty.clone()], &out, false)).unwrap_err();
    assert!(e.to_string().contains("holds no gemmlab results"), "{e}");

    let file = Path::new(FIXTURE).join("README.md");
    let e = report::generate(&options(vec![file], &out, false)).unwrap_err();
    assert!(e.to_string().contains("not a directory"), "{e}");

    // A broken results file is a data error naming the file.
    let broken = out_dir("broken-input");
    fs::create_dir_all(&broken).unwrap();
    fs::write(broken.join("environment.json"), "{ not json").unwrap();
    let e = report::generate(&options(vec![broken], &out, false)).unwrap_err();
    assert!(e.to_string().contains("environment.json"), "{e}");
}
