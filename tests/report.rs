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

mod tuning {
    //! A made-up tuning run: one exhaustive CUDA search over its whole space,
    //! an annealing OpenCL search, the final round, cuBLAS and compare rows
    //! of the published defaults, plus a broken and an empty trace.

    use std::fs;
    use std::path::Path;

    use gemmlab::backend::Toolchain;
    use gemmlab::gemm::driver::Status;
    use gemmlab::kernels::{Config, Hints};
    use gemmlab::measure::{CacheState, Plan, Stats};
    use gemmlab::results::{Environment, Measurement, ResultWriter};
    use gemmlab::tune::run::{trace_name, SpaceInfo, Trace};
    use gemmlab::tune::search::{Budget, SearchOptions, SearchResult, Tried};
    use gemmlab::tune::space::{Axis, Candidate};
    use gemmlab::tune::store::{Key, Phase, Record};

    use super::{chart_links, check_image, options, out_dir};

    const N: usize = 4096;
    const DEVICE: &str = "Made-up GPU";

    fn stats(gflops: f64) -> Stats {
        let ns = 2.0 * (N as f64).powi(3) / gflops;
        Stats {
            reps: 20,
            median_ns: ns,
            min_ns: ns * 0.98,
            max_ns: ns * 1.05,
            q1_ns: ns * 0.99,
            q3_ns: ns * 1.01,
            batch: 1,
        }
    }

    fn row(exp: &str, kernel: &str, t: Toolchain, gflops: f64, vendor: f64) -> Measurement {
        Measurement {
            experiment: exp.into(),
            kernel: kernel.into(),
            variant: None,
            label: None,
            toolchain: t,
            device: DEVICE.into(),
            device_id: format!("{t}:0"),
            m: N,
            n: N,
            k: N,
            padded: None,
            config: Config::default(),
            hints: Hints::default(),
            cache: CacheState::Warm,
            status: Status::Ok,
            check: None,
            time: Some(stats(gflops)),
            gflops: Some(gflops),
            gflops_best: Some(gflops * 1.02),
            vs_vendor: Some(gflops / vendor),
            pre_ns: None,
            post_ns: None,
            resources: None,
            compiler: None,
            compile_ms: Some(300.0),
            build_notes: Vec::new(),
            occupancy: None,
            ptx_mix: None,
            ptx_file: None,
            clocks: None,
        }
    }

    fn write_run(dir: &Path, rows: Vec<Measurement>) {
        let mut env = Environment::capture(Vec::new(), 1, Plan::default());
        env.notes
            .push("synthetic: made up for the tuning report test".into());
        let mut w = ResultWriter::create(dir, env).unwrap();
        for m in rows {
            w.push(m).unwrap();
        }
        w.finish().unwrap();
    }

    /// A smooth made-up speed with its peak at TSM=64, WPTM=4, UNROLL_K on, no cap.
    fn speed(peak: f64, tsm: i64, wptm: i64, unroll: bool, cap: Option<u32>) -> f64 {
        let d = ((tsm as f64).log2() - 6.0).abs() + ((wptm as f64).log2() - 2.0).abs();
        peak / (1.0 + 0.8 * d)
            * if unroll { 1.0 } else { 0.85 }
            * if cap.is_some() { 0.9 } else { 1.0 }
    }

    struct Made {
        trace: Trace,
        /// The three fastest candidates, fastest first.
        top: Vec<(Candidate, f64)>,
    }

    /// A search over TSM x WPTM x UNROLL_K (published off) x caps, trying
    /// `points` (indices into the full product) in that order.
    fn search(
        t: Toolchain,
        strategy: &str,
        peak: f64,
        caps: &[Option<u32>],
        points: &[usize],
        stopped: &str,
    ) -> Made {
        let tsm = [16i64, 32, 64];
        let wptm = [1i64, 2, 4, 8];
        let axes = vec![
            Axis::Param {
                name: "TSM".into(),
                values: tsm.to_vec(),
            },
            Axis::Param {
                name: "WPTM".into(),
                values: wptm.to_vec(),
            },
            Axis::Switch {
                name: "UNROLL_K".into(),
                values: vec![false, true],
            },
            Axis::Cap {
                values: caps.to_vec(),
            },
        ];
        let total = tsm.len() * wptm.len() * 2 * caps.len();
        let mut tried = Vec::new();
        let mut ok = Vec::new();
        for (n, &p) in points.iter().enumerate() {
            let (c, rest) = (p % caps.len(), p / caps.len());
            let (u, rest) = (rest % 2, rest / 2);
            let (w, s) = (rest % wptm.len(), rest / wptm.len());
            let mut hints = Hints {
                max_registers: caps[c],
                ..Hints::default()
            };
            if u == 1 {
                hints.switches.insert("UNROLL_K".into(), true);
            }
            let config = Config(
                [("TSM".to_string(), tsm[s]), ("WPTM".to_string(), wptm[w])]
                    .into_iter()
                    .collect(),
            );
            let candidate = Candidate {
                config: config.clone(),
                hints: hints.clone(),
            };
            let g = speed(peak, tsm[s], wptm[w], u == 1, caps[c]);
            // TSM=16 with WPTM=8 does not compile; slow points are pruned.
            let failed = tsm[s] == 16 && wptm[w] == 8;
            let pruned = !failed && g < peak / 4.0;
            if !failed && !pruned {
                ok.push((candidate.clone(), g));
            }
            tried.push(Tried {
                point: p,
                candidate,
                record: Record {
                    key: Key {
                        toolchain: t,
                        driver: Some("1.0".into()),
                        compiler: Some("made-up".into()),
                        kernel: "gemm6".into(),
                        source: "0".into(),
                        m: N,
                        n: N,
                        k: N,
                        config,
                        hints,
                    },
                    phase: Phase::Search,
                    status: if failed {
                        Status::CompileError("ptxas: too many resources".into())
                    } else {
                        Status::Ok
                    },
                    gflops: (!failed).then_some(g),
                    time: None,
                    pruned,
                    resources: None,
                    occupancy: None,
                    compile_ms: (!failed).then_some(400.0),
                    device_s: if failed { 0.0 } else { 0.2 },
                    strategy: strategy.into(),
                    at_utc: "2026-01-01T00:00:00Z".into(),
                },
                cached: n < 2,
                elapsed_s: 0.3 * (n + 1) as f64,
            });
        }
        ok.sort_by(|a, b| b.1.total_cmp(&a.1));
        ok.truncate(3);
        let measured = tried.iter().filter(|t| !t.cached).count() as f64;
        Made {
            trace: Trace {
                search: SearchResult {
                    toolchain: t,
                    device: DEVICE.into(),
                    kernel: "gemm6".into(),
                    size: (N, N, N),
                    strategy: strategy.into(),
                    options: SearchOptions {
                        strategy: strategy.into(),
                        budget: Budget {
                            configs: Some(200),
                            seconds: None,
                        },
                        seed: 1,
                        reps: 3,
                        workers: 2,
                        prune: 4.0,
                    },
                    space_summary: format!("gemm6 on {t}: {total} points"),
                    space_size: total,
                    tried,
                    wall_s: 0.3 * points.len() as f64,
                    compile_s: 0.4 * measured,
                    device_s: 0.2 * measured,
                    wait_s: 0.1 * measured,
                    stopped: stopped.into(),
                },
                space: SpaceInfo {
                    axes,
                    before: total as u128,
                    after: total,
                    removals: Vec::new(),
                    notes: Vec::new(),
                },
            },
            top: ok,
        }
    }

    fn synthetic(root: &Path) {
        let cublas = 50000.0;
        // CUDA: every point of its 48, in order. OpenCL: annealing, 20 of its 24.
        let cuda = search(
            Toolchain::Cuda,
            "exhaustive",
            40000.0,
            &[None, Some(64)],
            &(0..48).collect::<Vec<_>>(),
            "every point of the space tried",
        );
        let opencl_points: Vec<usize> = (0..24).rev().take(20).collect();
        let opencl = search(
            Toolchain::OpenCl,
            "anneal",
            30000.0,
            &[None],
            &opencl_points,
            "budget of configurations reached",
        );

        let tune = root.join("tune");
        let mut rows = vec![row("tune", "cublas", Toolchain::Cuda, cublas, cublas)];
        for (t, made) in [(Toolchain::Cuda, &cuda), (Toolchain::OpenCl, &opencl)] {
            for (c, g) in &made.top {
                let mut m = row("tune", "gemm6", t, *g * 1.01, cublas);
                m.label = Some(c.describe());
                m.config = c.config.clone();
                m.hints = c.hints.clone();
                rows.push(m);
            }
        }
        write_run(&tune, rows);
        for made in [&cuda, &opencl] {
            let path = tune.join(trace_name(&made.trace.search));
            fs::write(path, serde_json::to_string(&made.trace).unwrap()).unwrap();
        }
        // An empty search of another kernel, and a trace that is not one.
        let mut empty = search(
            Toolchain::Cuda,
            "exhaustive",
            1.0,
            &[None],
            &[],
            "every point of the space tried",
        )
        .trace;
        empty.search.kernel = "gemm7".into();
        fs::write(
            tune.join(trace_name(&empty.search)),
            serde_json::to_string(&empty).unwrap(),
        )
        .unwrap();
        fs::write(tune.join("search-broken.json"), "{ \"search\": 1 }").unwrap();

        // The published defaults, measured by compare on the same device.
        write_run(
            &root.join("compare"),
            vec![
                row("compare", "cublas", Toolchain::Cuda, cublas, cublas),
                row("compare", "gemm6", Toolchain::Cuda, 20000.0, cublas),
                row("compare", "gemm6", Toolchain::OpenCl, 12000.0, cublas),
            ],
        );
    }

    #[test]
    fn the_tuning_section_from_traces_and_final_rows() {
        let root = out_dir("tuning-input");
        synthetic(&root);
        let out = out_dir("tuning");
        let outcome = gemmlab::report::generate(&options(vec![root.clone()], &out, false)).unwrap();
        assert_eq!(outcome.runs, 2);
        let md = fs::read_to_string(out.join("report.md")).unwrap();
        let at = md
            .find("\n## Tuning (tune)\n")
            .unwrap_or_else(|| panic!("no Tuning section in\n{md}"));
        let body = &md[at..];
        let section = &body[..body[1..].find("\n## ").map_or(body.len(), |i| i + 1)];

        // Tuned bests against cuBLAS and the published defaults of compare.
        assert!(section.contains("### gemm6, M = N = K = 4096"), "{section}");
        assert!(
            md.contains("**Tuned gemm6, M = N = K = 4096** (final round, median GFLOP/s): CUDA 40400 GFLOP/s = 0.81x cuBLAS"),
            "{md}"
        );
        assert!(
            md.contains(
                "(published default 20000 GFLOP/s = 0.40x cuBLAS from a compare row; tuning gains +102%)"
            ),
            "{md}"
        );
        // The gap: 20000/12000 at the defaults, 40400/30300 tuned.
        assert!(
            md.contains("CUDA/OpenCL = 1.67 at the published defaults (compare rows), 1.33 at each toolchain's tuned best (final round): the gap shrinks but survives tuning."),
            "{md}"
        );
        // The top table of each toolchain and the search table.
        assert!(section.contains("#### CUDA: the fastest of the final round"));
        assert!(section.contains("#### OpenCL: the fastest of the final round"));
        assert!(section.contains("| 1 | 40400 ±2.0% | 0.81 |"), "{section}");
        assert!(section.contains("every point of the space tried"));
        // Search rates and how much of each space is near its best.
        assert!(md.contains("**Search rate, gemm6 at 4096**"), "{md}");
        assert!(
            md.contains("CUDA exhaustive: 3.19 configurations/s (46 measured in 14.4 s wall"),
            "{md}"
        );
        assert!(
            md.contains("**How hard to tune, gemm6 at 4096**: CUDA:"),
            "{md}"
        );
        // The replay over CUDA's exhaustive search, with its chart.
        assert!(
            section.contains("This is a replay over measured outcomes"),
            "{section}"
        );
        assert!(
            md.contains("**Strategies replayed on CUDA's space, gemm6 at 4096** (48 configurations measured exhaustively; 25 replays per strategy, budget 48): median configurations to reach 95% of the best: exhaustive "),
            "{md}"
        );
        for s in ["random", "anneal", "genetic"] {
            assert!(
                section.contains(&format!("| {s} | ")),
                "no replay row for {s}"
            );
        }
        // OpenCL's annealing search is no exhaustive one: no replay of it.
        assert!(!md.contains("replayed on OpenCL's space"), "{md}");
        // Robust: the empty search and the broken trace are named, not fatal.
        assert!(section.contains("### gemm7, M = N = K = 4096"));
        assert!(
            section.contains("CUDA: no replay: the search tried nothing."),
            "{section}"
        );
        assert!(section.contains("search-broken.json"), "{section}");

        let links = chart_links(section);
        for stem in [
            "tune-progress-gemm6-4096",
            "tune-spread-gemm6-4096",
            "tune-replay-gemm6-4096-cuda-run2",
        ] {
            let svg = format!("charts/{stem}.svg");
            assert!(links.contains(&svg), "{svg} not linked: {links:?}");
            check_image(&out.join(&svg));
        }
        // The summary takes a tuning finding.
        let summary = &md[md.find("## Summary").unwrap()..md.find("## All findings").unwrap()];
        assert!(
            summary.contains("Tuned gemm6 at 4096 reaches CUDA 40400 GFLOP/s"),
            "{summary}"
        );
    }
}
