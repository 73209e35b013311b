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
        (1..=gemmlab::analysis::SUMMARY_MAX).contains(&items.len()),
        "{items:#?}"
    );
    for i in &items {
        assert!(
            i.contains(".svg)") || i.contains("](#"),
            "no chart or table link: {i}"
        );
    }
    // The report leads with a chart: the first summary finding's that has one.
    let lead = md[summary_at..all_at].lines().find(|l| l.starts_with("!["));
    let lead = lead.expect("a chart after the summary");
    let first = items
        .iter()
        .find_map(|i| i.split("[chart](").nth(1)?.split(')').next());
    let first = first.expect("a summary finding with a chart");
    let target = &lead[lead.find("](").unwrap() + 2..lead.len() - 1];
    assert_eq!(
        target.trim_end_matches(".png"),
        first.trim_end_matches(".svg")
    );
    assert!(out.join(target).is_file(), "{lead}");
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
    let font = gemmlab::plot::fonts::ensure(None);
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
    use gemmlab::kernel::builtin::{Config, Hints};
    use gemmlab::measure::{CacheState, Plan, Stats};
    use gemmlab::results::{Environment, Measurement, ResultWriter};
    use gemmlab::tune::run::{trace_name, write_replay, SpaceInfo, Trace};
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
            problem: None,
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
            vendor_paired: None,
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
            dims: None,
            gbs: None,
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
                        call: None,
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
                    screen_k: None,
                    resources: None,
                    occupancy: None,
                    compile_ms: (!failed).then_some(400.0),
                    device_s: if failed { 0.0 } else { 0.2 },
                    split: Default::default(),
                    run: None,
                    elapsed_s: None,
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
                        ..Default::default()
                    },
                    space_summary: format!("gemm6 on {t}: {total} points"),
                    space_size: total,
                    tried,
                    wall_s: 0.3 * points.len() as f64,
                    compile_s: 0.4 * measured,
                    device_s: 0.2 * measured,
                    wait_s: 0.1 * measured,
                    split: Default::default(),
                    stopped: stopped.into(),
                    dims: None,
                    unit: "GFLOP/s".into(),
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
        // What tune writes after a search that tried its whole space.
        for t in [&cuda.trace, &empty] {
            write_replay(&tune, t, &trace_name(&t.search)).unwrap();
        }
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

mod offline {
    //! Real rows compiled offline (tests/fixtures/offline: the atlas and the
    //! sm_35 sweeps, NVRTC output, nothing run): the offline sections, their
    //! numbers read back from the rows, and offline rows kept out of every speed
    //! section and out of "measurements without a speed".

    use std::fs;
    use std::path::{Path, PathBuf};

    use gemmlab::analysis::data;
    use gemmlab::backend::Toolchain;
    use gemmlab::gemm::driver::Status;
    use gemmlab::report;
    use gemmlab::results::{load_dir, Environment, Measurement, ResultWriter};

    use super::{chart_links, check_image, options, out_dir, FIXTURE};

    const OFFLINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/offline");
    const KEPLER: &str = "\n## Kepler: the tutorial's claims on sm_35 (NVRTC 11.8, offline)\n";
    const ATLAS: &str = "\n## Compilers across architectures (offline)\n";
    const SWEEPS: &str = "\n## Offline sweeps: every point compiled, none run\n";

    fn rows(dir: &str) -> Vec<Measurement> {
        load_dir(&Path::new(OFFLINE).join(dir)).unwrap().1
    }

    /// The Markdown from a heading to the next heading of the same level.
    fn section<'a>(md: &'a str, heading: &str) -> &'a str {
        let at = md
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading:?} in\n{md}"));
        let body = &md[at + 1..];
        &body[..body.find("\n## ").map_or(body.len(), |i| i + 1)]
    }

    fn regs(m: &Measurement) -> u32 {
        m.resources.as_ref().and_then(|r| r.registers).unwrap()
    }

    fn spill(m: &Measurement) -> u64 {
        let r = m.resources.as_ref().unwrap();
        r.spill_stores_bytes.unwrap() + r.spill_loads_bytes.unwrap()
    }

    /// The row of `kernel` in `rows` for which `pick` holds.
    fn one<'a>(
        rows: &'a [Measurement],
        kernel: &str,
        pick: impl Fn(&Measurement) -> bool,
    ) -> &'a Measurement {
        let found: Vec<&Measurement> = rows
            .iter()
            .filter(|m| m.kernel == kernel && pick(m))
            .collect();
        assert_eq!(found.len(), 1, "{kernel}: {} rows", found.len());
        found[0]
    }

    fn atlas_cell<'a>(
        atlas: &'a [Measurement],
        kernel: &str,
        arch: &str,
        compiler: &str,
    ) -> &'a Measurement {
        one(atlas, kernel, |m| {
            data::arch_of(m).as_deref() == Some(arch) && m.compiler.as_deref() == Some(compiler)
        })
    }

    #[test]
    fn the_fixture_is_offline_rows_with_their_architecture() {
        for dir in [
            "atlas",
            "sweep-registers-sm_35",
            "sweep-hints-sm_35",
            "sweep-tiling-sm_35",
        ] {
            for m in rows(dir) {
                assert!(data::is_offline(&m), "{dir}: {m:?}");
                assert_eq!((m.m, m.n, m.k), (0, 0, 0));
                assert!(m.gflops.is_none() && m.time.is_none());
                assert!(
                    data::arch_of(&m).is_some(),
                    "{dir}: no architecture in {m:?}"
                );
            }
        }
        let atlas = rows("atlas");
        let archs: Vec<String> = {
            let mut a: Vec<String> = atlas.iter().filter_map(data::arch_of).collect();
            a.sort_by(|x, y| data::arch_order(x, y));
            a.dedup();
            a
        };
        assert_eq!(
            archs,
            [
                "sm_35", "sm_37", "sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80",
                "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"
            ]
        );
        // Rows made on a device are not offline.
        let (_, compare) = load_dir(&Path::new(FIXTURE).join("compare")).unwrap();
        assert!(compare.iter().all(|m| !data::is_offline(m)));
    }

    #[test]
    fn offline_sections_with_numbers_from_the_rows() {
        let out = out_dir("offline");
        let outcome =
            report::generate(&options(vec![PathBuf::from(OFFLINE)], &out, false)).unwrap();
        assert_eq!(outcome.runs, 4);
        let md = fs::read_to_string(out.join("report.md")).unwrap();
        let (kepler, atlas_md, sweeps) = (
            section(&md, KEPLER),
            section(&md, ATLAS),
            section(&md, SWEEPS),
        );

        // Nothing offline is a speed, a size or a failure.
        for gone in [
            "## Speed:",
            "## Register cap sweep",
            "## Register tiling",
            "## Compiler hints",
            "## Measurements without a speed",
            "## Clocks and throttling",
            "M = N = K = 0",
            "at size 0",
            " at 0",
            "GFLOP/s (",
        ] {
            assert!(!md.contains(gone), "{gone:?} in\n{md}");
        }
        assert!(
            md.contains("| timing | none: compiled offline, nothing run or timed")
                && !md.contains("warm-up + "),
            "{md}"
        );
        assert!(
            md.contains("200 of the measurements were compiled offline"),
            "{md}"
        );

        // (i) Kernel 6 against 73 and 128, from the atlas row.
        let atlas = rows("atlas");
        let k6 = atlas_cell(&atlas, "gemm6", "sm_35", "NVRTC 11.8");
        let r6 = regs(k6);
        assert_eq!(r6, 126, "the fixture's NVRTC 11.8 count");
        assert!(
            kepler.contains(&format!(
                "takes **{r6} registers** per thread on sm_35 with NVRTC 11.8 (from the atlas"
            )),
            "{kepler}"
        );
        assert!(
            kepler.contains(&format!(
                "Against the tutorial's lower bound of 73: {} more",
                r6 - 73
            )),
            "{kepler}"
        );
        assert!(
            kepler.contains(
                "two work-groups fit with at most **128** registers per thread (65536 / (2 x 256)"
            ),
            "{kepler}"
        );
        assert!(
            kepler.contains(&format!("{r6} is {} under it", 128 - r6)),
            "{kepler}"
        );
        assert_eq!(k6.occupancy, Some(0.25));
        assert!(kepler.contains("Occupancy that follows: **25% (2 blocks of 8 warps per SM, limited by registers)**"), "{kepler}");
        assert!(kepler.contains("the hints sweep's baseline and the register sweep's uncapped point give the same 126"), "{kepler}");

        // (ii) VOLATILE_IDX=1, from the hints sweep.
        let hints = rows("sweep-hints-sm_35");
        let base = one(&hints, "gemm6", |m| m.hints.is_published());
        let vol = one(&hints, "gemm6", |m| {
            m.hints.switches.get("VOLATILE_IDX") == Some(&true)
        });
        let (b, v) = (regs(base), regs(vol));
        assert_eq!((b, v), (126, 115));
        assert!(
            md.contains(&format!(
                "it takes kernel 6 from {b} to {v} registers (-{})",
                b - v
            )),
            "{md}"
        );
        assert!(
            md.contains("occupancy stays 25.0% (2 work-groups per SM)"),
            "{md}"
        );
        let b9 = regs(one(&hints, "gemm9", |m| m.hints.is_published()));
        let v9 = regs(one(&hints, "gemm9", |m| {
            m.hints.switches.get("VOLATILE_IDX") == Some(&true)
        }));
        assert!(
            md.contains(&format!(
                "On the other kernels that have the switch: gemm9 {b9} -> {v9}."
            )),
            "{md}"
        );
        assert!(
            kepler.contains(&format!(
                "| VOLATILE_IDX=1 | published + VOLATILE_IDX=1 | {v} | -{} | 0/0 |",
                b - v
            )),
            "{kepler}"
        );

        // (iii) A cap of 127, and every cap of the sweep in a table.
        let caps = rows("sweep-registers-sm_35");
        let at = |cap: Option<u32>| one(&caps, "gemm6", |m| m.hints.max_registers == cap);
        let c127 = at(Some(127));
        assert_eq!((regs(c127), spill(c127)), (124, 0));
        assert!(md.contains(&format!(
            "a cap of 127 gives {} registers ({} without a cap), no spills, occupancy 25.0% as without a cap",
            regs(c127),
            regs(at(None))
        )), "{md}");
        let first_spill = [255, 168, 128, 127, 96, 80, 64, 48, 40, 32]
            .into_iter()
            .find(|c| spill(at(Some(*c))) > 0)
            .unwrap();
        assert!(
            md.contains(&format!(
                "spills start at cap {first_spill} ({} B stores + loads, {} registers)",
                spill(at(Some(first_spill))),
                regs(at(Some(first_spill)))
            )),
            "{md}"
        );
        for cap in [
            None,
            Some(255),
            Some(168),
            Some(128),
            Some(127),
            Some(96),
            Some(80),
            Some(64),
            Some(48),
            Some(40),
            Some(32),
        ] {
            let m = at(cap);
            let r = m.resources.as_ref().unwrap();
            let row = format!(
                "| {} | {} | {}/{} | {} |",
                cap.map_or("none".into(), |c| c.to_string()),
                regs(m),
                r.spill_stores_bytes.unwrap(),
                r.spill_loads_bytes.unwrap(),
                r.stack_frame_bytes.unwrap()
            );
            assert!(kepler.contains(&row), "no {row} in\n{kepler}");
        }

        // (iv) Kernel 11's 8x4 against 4x4, and no speed.
        let tiles = rows("sweep-tiling-sm_35");
        let tile = |rx: i64, ry: i64| {
            one(&tiles, "gemm11", |m| {
                m.config.0.get("RX") == Some(&rx) && m.config.0.get("RY") == Some(&ry)
            })
        };
        let (t84, t44) = (tile(8, 4), tile(4, 4));
        assert_eq!((regs(t84), regs(t44)), (76, 62));
        assert!(md.contains(&format!(
            "8x4 {} registers, no spills, occupancy 38% (12 blocks of 2 warps per SM, limited by registers); 4x4 {} registers, no spills, occupancy 50% (16 blocks of 2 warps per SM, limited by blocks)",
            regs(t84),
            regs(t44)
        )), "{md}");
        let ocl84 = atlas_cell(&atlas, "gemm11", "sm_35", "NVIDIA OpenCL PTX + ptxas 11.8");
        assert!(md.contains(&format!("OpenCL's 8x4 (its PTX assembled by ptxas 11.8 for sm_35, from the atlas): {} registers", regs(ocl84))), "{md}");
        assert!(
            kepler.contains("**Speed cannot be measured offline**"),
            "{kepler}"
        );

        // The atlas: a table per kernel with every compiler, cells from the rows.
        assert!(atlas_md.contains("150 rows of `gemmlab atlas`: 3 kernels at their published defaults, compiled for 14 architectures by 5 compilers"), "{atlas_md}");
        assert!(atlas_md.contains("NVRTC 11.8: sm_35 to sm_90, 12 architectures; NVRTC 12.9: sm_50 to sm_120, 12 architectures; NVRTC 13.5: sm_75 to sm_120, 7 architectures"), "{atlas_md}");
        assert!(
            atlas_md.contains("`.version 9.0 -> 7.8`"),
            "the OpenCL PTX's adaptation: {atlas_md}"
        );
        let cell = |m: &Measurement| {
            format!(
                "{} / {} / {:.1}%",
                regs(m),
                spill(m),
                m.occupancy.unwrap() * 100.0
            )
        };
        let k6_100: Vec<String> = ["NVRTC 12.9", "NVRTC 13.5", "NVIDIA OpenCL PTX + ptxas 13.5"]
            .iter()
            .map(|c| cell(atlas_cell(&atlas, "gemm6", "sm_100", c)))
            .collect();
        let want = format!(
            "| sm_100 | - | {} | {} | - | {} |",
            k6_100[0], k6_100[1], k6_100[2]
        );
        let gemm6 = &atlas_md[atlas_md.find("### gemm6").unwrap()..];
        assert!(gemm6.contains(&want), "no {want} in\n{gemm6}");
        // Findings computed from the rows.
        let (old, new) = (
            regs(atlas_cell(&atlas, "gemm6", "sm_100", "NVRTC 12.9")),
            regs(atlas_cell(&atlas, "gemm6", "sm_100", "NVRTC 13.5")),
        );
        assert_eq!((old, new), (128, 96));
        assert!(md.contains(&format!(
            "**Largest change between NVRTC generations on the same architecture**: gemm6 on sm_100, {old} registers with NVRTC 12.9 and {new} with NVRTC 13.5 (-25.0%)"
        )), "{md}");
        assert!(md.contains(&format!(
            "**gemm6 across architectures** (published defaults, offline): NVRTC 11.8 gives {r6} registers on sm_35 and {} on sm_90",
            regs(atlas_cell(&atlas, "gemm6", "sm_90", "NVRTC 11.8"))
        )), "{md}");
        assert!(md.contains("No kernel spills at its published defaults on any of 14 architectures with any of 5 compilers (150 rows with a ptxas report)"), "{md}");
        // The overview names the newest NVRTC per architecture.
        assert!(
            atlas_md.contains("| kernel | sm_35 (11.8) | sm_37 (11.8) | sm_50 (12.9) |"),
            "{atlas_md}"
        );

        // The sweeps, every point.
        assert!(
            sweeps.contains("### registers sweep, sm_35, NVRTC 11.8"),
            "{sweeps}"
        );
        assert!(
            sweeps.contains("| gemm6 | 126 | 168 | 165 | 126 | 124 | 96 (+168 B spills) |"),
            "{sweeps}"
        );
        assert!(sweeps.contains("### hints sweep, sm_35, NVRTC 11.8"));
        assert!(sweeps.contains("### tiling sweep, sm_35, NVRTC 11.8"));

        // Summary: the Kepler answers lead.
        let summary = &md[md.find("## Summary").unwrap()..md.find("## All findings").unwrap()];
        assert!(summary.contains(&format!("On sm_35 with NVRTC 11.8, kernel 6 takes {r6} registers, above the tutorial's lower bound of 73 and within the 128 that fit two 256-thread work-groups per SM (occupancy 25.0%).")), "{summary}");

        // Charts: the overview and one per kernel, linked and written.
        let links = chart_links(&md);
        for stem in [
            "offline-overview",
            "offline-gemm6",
            "offline-gemm9",
            "offline-gemm11",
        ] {
            let svg = format!("charts/{stem}.svg");
            assert!(links.contains(&svg), "{svg} not linked: {links:?}");
            check_image(&out.join(&svg));
        }
    }

    #[test]
    fn offline_rows_stay_out_of_the_speed_sections() {
        let out = out_dir("offline-with-device-runs");
        let from = vec![PathBuf::from(FIXTURE), PathBuf::from(OFFLINE)];
        let outcome = report::generate(&options(from, &out, false)).unwrap();
        assert_eq!(outcome.runs, 9);
        let md = fs::read_to_string(out.join("report.md")).unwrap();
        // The device runs' sections are all there, the offline ones too.
        for h in [
            "\n## Speed: kernels x toolchains x sizes (compare)\n",
            "\n## Register cap sweep (registers)\n",
            "\n## Register tiling: RX x RY (tiling)\n",
            "\n## Compiler hints (hints)\n",
            "\n## Measurements without a speed\n",
            KEPLER,
            ATLAS,
            SWEEPS,
        ] {
            assert!(md.contains(h), "no {h:?}");
        }
        // No size 0 anywhere, no offline point in the speed sections.
        assert!(
            !md.contains("M = N = K = 0") && !md.contains("at size 0"),
            "{md}"
        );
        for h in [
            "\n## Speed: kernels x toolchains x sizes (compare)\n",
            "\n## Register cap sweep (registers)\n",
            "\n## Register tiling: RX x RY (tiling)\n",
            "\n## Compiler hints (hints)\n",
            "\n## Measurements without a speed\n",
            "\n## Clocks and throttling\n",
        ] {
            let s = section(&md, h);
            for word in ["sm_35", "offline", "n/a", "cap 127", "| 127 |"] {
                assert!(!s.contains(word), "{word:?} in {h:?}:\n{s}");
            }
        }
        // "Measurements without a speed": only the device run's failed row, counted among device rows.
        let measured: usize = ["compare", "registers", "tiling", "hints", "jit"]
            .iter()
            .map(|d| load_dir(&Path::new(FIXTURE).join(d)).unwrap().1.len())
            .sum();
        let failures = section(&md, "\n## Measurements without a speed\n");
        let table_rows = failures
            .lines()
            .filter(|l| {
                l.starts_with("| ") && !l.starts_with("| experiment") && !l.starts_with("| :")
            })
            .count();
        assert_eq!(table_rows, 1, "{failures}");
        assert!(
            md.contains(&format!("1 of {measured} measurements has no speed")),
            "{md}"
        );
        assert_eq!(outcome.measurements, measured + 200);
        // The device is named in the speed charts' titles: offline "devices" are not devices.
        let svg = fs::read_to_string(out.join("charts/perf-4096.svg")).unwrap();
        assert!(
            svg.contains("on NVIDIA H200"),
            "the chart title lost the device"
        );
    }

    fn write_run(dir: &Path, env: Environment, rows: Vec<Measurement>) {
        let _ = fs::remove_dir_all(dir);
        let mut w = ResultWriter::create(dir, env).unwrap();
        for m in rows {
            w.push(m).unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn refused_ptx_and_missing_rows_are_said_not_invented() {
        let root = out_dir("offline-refused-input");
        let (env, mut atlas) = load_dir(&Path::new(OFFLINE).join("atlas")).unwrap();
        // ptxas refusing OpenCL's PTX for one architecture, as the atlas records it.
        let log = "ptxas 11.8 (after .version 9.0 -> 7.8, .target sm_90 -> sm_50): ptxas fatal   : Unresolved extern function '__made_up_intrinsic'\nptxas info: more";
        let mut refused = 0;
        for m in atlas.iter_mut().filter(|m| {
            m.kernel == "gemm9"
                && m.toolchain == Toolchain::OpenCl
                && data::arch_of(m).as_deref() == Some("sm_50")
                && m.compiler.as_deref() == Some("NVIDIA OpenCL PTX + ptxas 11.8")
        }) {
            m.status = Status::CompileError(log.into());
            m.resources = None;
            m.occupancy = None;
            refused += 1;
        }
        assert_eq!(refused, 1);
        write_run(&root.join("atlas"), env, atlas);
        // Only the tiling sweep besides it: kernel 6's caps and hints are missing.
        let (tenv, tiles) = load_dir(&Path::new(OFFLINE).join("sweep-tiling-sm_35")).unwrap();
        write_run(&root.join("tiling"), tenv, tiles);

        let out = out_dir("offline-refused");
        report::generate(&options(vec![root.clone()], &out, false)).unwrap();
        let md = fs::read_to_string(out.join("report.md")).unwrap();
        let atlas_md = section(&md, ATLAS);
        let gemm9 = &atlas_md[atlas_md.find("### gemm9").unwrap()..];
        assert!(
            gemm9.contains("| sm_50 | 96 / 0 / 25.0% | 96 / 0 / 25.0% | - | ptxas refused | - |"),
            "{gemm9}"
        );
        assert!(gemm9.contains(
            "- sm_50, OpenCL PTX + ptxas 11.8: \"ptxas 11.8 (after .version 9.0 -> 7.8, .target sm_90 -> sm_50): ptxas fatal   : Unresolved extern function '__made_up_intrinsic'\""
        ), "{gemm9}");
        assert!(
            !gemm9.contains("ptxas info: more"),
            "only the first line is quoted"
        );
        assert!(md.contains("**Rows the compiler refused** (1 of 150): OpenCL PTX + ptxas 11.8 built 35 of 36 (on sm_50)"), "{md}");
        // A refused offline row is no measurement without a speed.
        assert!(!md.contains("## Measurements without a speed"), "{md}");

        // Missing rows: the command that makes them, never a number.
        let kepler = section(&md, KEPLER);
        assert!(
            kepler.contains(
                "`gemmlab sweep hints --arch sm_35 --nvrtc 11.8 --kernels 6` produces them"
            ),
            "{kepler}"
        );
        assert!(kepler.contains("No register sweep of kernel 6 for sm_35 with NVRTC 11.8 in these results: `gemmlab sweep registers --arch sm_35 --nvrtc 11.8 --caps none,255,168,128,127,96,80,64,48,40,32 --kernels 6` produces it."), "{kepler}");
        assert!(
            !kepler.contains("115") && !kepler.contains("124"),
            "no numbers of rows that are not there: {kepler}"
        );
        // Kernel 6's count comes from the atlas alone.
        assert!(
            kepler.contains(
                "takes **126 registers** per thread on sm_35 with NVRTC 11.8 (from the atlas"
            ),
            "{kepler}"
        );

        // Without the atlas, its section says what writes it.
        let out = out_dir("offline-no-atlas");
        report::generate(&options(vec![root.join("tiling")], &out, false)).unwrap();
        let md = fs::read_to_string(out.join("report.md")).unwrap();
        assert!(section(&md, ATLAS).contains("No atlas rows (experiment \"atlas\") in these results: `gemmlab atlas` writes them"), "{md}");
        let kepler = section(&md, KEPLER);
        assert!(
            kepler.contains(
                "No row of kernel 6 at its published defaults for sm_35 with NVRTC 11.8 here."
            ),
            "{kepler}"
        );
        assert!(
            kepler.contains("| 8 | 4 | 4 | 76 | 0/0 |") && md.contains("8x4 76 registers"),
            "the tiling sweep still answers (iv): {md}"
        );
    }
}
