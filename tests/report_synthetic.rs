//! The whole report on synthetic results: what its summary, sections and
//! findings say of made-up measurements with known answers. Needs no GPU.

use std::fs;
use std::path::Path;

use gemmlab::backend::Toolchain;
use gemmlab::report::{generate, Options};

use gemmlab::backend::KernelResources;
use gemmlab::gemm::driver::Status;
use gemmlab::kernel::builtin::Hints;
use gemmlab::measure::{Plan, Stats};
use gemmlab::results::{Environment, Measurement, ResultWriter};

/// A made-up measurement that passed its check.
fn row(exp: &str, kernel: &str, t: Toolchain, n: usize, gflops: f64, regs: u32) -> Measurement {
    let ns = 2.0 * (n as f64).powi(3) / gflops;
    Measurement {
        experiment: exp.into(),
        kernel: kernel.into(),
        variant: None,
        label: None,
        toolchain: t,
        device: "Made-up GPU".into(),
        device_id: format!("{t:?}:0"),
        m: n,
        n,
        k: n,
        problem: None,
        padded: None,
        config: Default::default(),
        hints: Hints::default(),
        cache: gemmlab::measure::CacheState::Warm,
        status: Status::Ok,
        check: None,
        time: Some(Stats {
            reps: 10,
            median_ns: ns,
            min_ns: ns,
            max_ns: ns,
            q1_ns: ns,
            q3_ns: ns,
            batch: 1,
        }),
        gflops: Some(gflops),
        gflops_best: Some(gflops),
        vs_vendor: Some(gflops / 50000.0),
        vendor_paired: None,
        pre_ns: None,
        post_ns: None,
        resources: Some(KernelResources {
            registers: Some(regs),
            spill_stores_bytes: Some(0),
            spill_loads_bytes: Some(0),
            ..Default::default()
        }),
        compiler: None,
        compile_ms: None,
        build_notes: Vec::new(),
        occupancy: Some(0.5),
        ptx_mix: None,
        ptx_file: None,
        clocks: None,
        dims: None,
        gbs: None,
    }
}

fn write_run(dir: &Path, rows: Vec<Measurement>) {
    let mut env = Environment::capture(Vec::new(), 1, Plan::default());
    env.notes.push("synthetic: made up for a unit test".into());
    let mut w = ResultWriter::create(dir, env).unwrap();
    for m in rows {
        w.push(m).unwrap();
    }
    w.finish().unwrap();
}

/// More findings than the summary takes: twelve kernels compared, six
/// register sweeps, tiles, hints, the JIT and a failed cell.
fn synthetic_results(root: &Path) {
    use Toolchain::{Cuda, OpenCl};
    let mut compare = Vec::new();
    for n in [1024, 4096] {
        let mut cublas = row("compare", "cublas", Cuda, n, 50000.0, 0);
        cublas.resources = None;
        compare.push(cublas);
        for i in 1..=12u32 {
            let k = format!("gemm{i}");
            let cu = 2000.0 * i as f64;
            // Every third kernel alike, every third with more CUDA registers,
            // the rest with the same registers but a slower OpenCL.
            let (cl, cl_regs) = match i % 3 {
                0 => (cu * 1.01, 32 + i),
                1 => (cu / (1.0 + 0.1 * i as f64), 32 + i - 8),
                _ => (cu / 1.2, 32 + i),
            };
            compare.push(row("compare", &k, Cuda, n, cu, 32 + i));
            compare.push(row("compare", &k, OpenCl, n, cl, cl_regs));
        }
    }
    let mut failed = row("compare", "gemm13", OpenCl, 4096, 1.0, 40);
    failed.status = Status::WrongResult("max error 1e3".into());
    compare.push(failed);
    write_run(&root.join("compare"), compare);

    let mut regs = Vec::new();
    for i in 1..=6u32 {
        let k = format!("gemm{i}");
        for t in [Cuda, OpenCl] {
            for (cap, gain, used) in [
                (None, 1.0, 96),
                (Some(128), 1.0 + 0.05 * i as f64, 120),
                (Some(64), 0.5, 64),
            ] {
                let mut m = row("registers", &k, t, 4096, 10000.0 * gain, used);
                m.hints.max_registers = cap;
                regs.push(m);
            }
        }
    }
    write_run(&root.join("registers"), regs);

    let mut tiles = Vec::new();
    for (t, g84, g44) in [(Cuda, 9000.0, 12000.0), (OpenCl, 11000.0, 10000.0)] {
        for ((rx, ry), g) in [((8, 4), g84), ((4, 4), g44)] {
            let mut m = row("tiling", "gemm11", t, 4096, g, 8 * rx * ry as u32);
            m.config.0.insert("RX".into(), rx.into());
            m.config.0.insert("RY".into(), ry.into());
            tiles.push(m);
        }
    }
    write_run(&root.join("tiling"), tiles);

    let mut hints = Vec::new();
    for i in 1..=4u32 {
        let k = format!("gemm{i}");
        for t in [Cuda, OpenCl] {
            let mut base = row("hints", &k, t, 4096, 10000.0, 64);
            base.label = Some("baseline".into());
            let mut unroll = row("hints", &k, t, 4096, 10000.0 * (1.0 - 0.1 * i as f64), 80);
            unroll.hints = Hints::default().with_switch("UNROLL_K", true);
            unroll.label = Some("UNROLL_K=1".into());
            let mut fast = row("hints", &k, t, 4096, 10050.0, 64);
            fast.hints.fast_math = true;
            fast.label = Some("fast math".into());
            hints.extend([base, unroll, fast]);
        }
    }
    write_run(&root.join("hints"), hints);

    let mut jit = Vec::new();
    for i in [1u32, 2, 4] {
        let mut m = row(
            "jit",
            &format!("gemm{i}"),
            Cuda,
            4096,
            2000.0 * i as f64,
            32 + i,
        );
        m.variant = Some("opencl-ptx".into());
        m.build_notes = vec!["PTX loaded through the CUDA driver JIT (cuModuleLoadDataEx)".into()];
        jit.push(m);
    }
    write_run(&root.join("jit"), jit);
}

/// The Markdown between a heading and the next one at the same level.
fn part<'a>(md: &'a str, heading: &str) -> &'a str {
    let start = md.find(heading).unwrap_or_else(|| panic!("no {heading}"));
    let body = &md[start + heading.len()..];
    &body[..body.find("\n## ").unwrap_or(body.len())]
}

/// The report (SVG charts only) of the results under `root/in`, written to `root/out`.
fn report_of(root: &Path) -> gemmlab::report::Outcome {
    generate(&Options {
        from: vec![root.join("in")],
        out: root.join("out"),
        png: false,
        font: None,
        size: None,
    })
    .unwrap()
}

#[test]
fn the_report_opens_with_a_short_linked_summary() {
    let root = std::env::temp_dir().join(format!("gemmlab-report-summary-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    synthetic_results(&root.join("in"));
    let out = root.join("out");
    let opts = Options {
        from: vec![root.join("in")],
        out: out.clone(),
        png: false,
        font: None,
        size: None,
    };
    let o = generate(&opts).unwrap();
    let md = fs::read_to_string(&o.markdown).unwrap();

    // The summary comes before the full lists and every section.
    let pos = |h: &str| md.find(h).unwrap_or_else(|| panic!("no {h} in\n{md}"));
    let summary_at = pos("\n## Summary\n");
    for later in [
        "\n## All findings\n",
        "\n## Environment\n",
        "\n## Speed: kernels x toolchains",
        "\n## Register cap sweep",
        "\n## Compiler hints",
        "\n## OpenCL's PTX through the CUDA driver JIT",
        "\n## Measurements without a speed",
    ] {
        assert!(summary_at < pos(later), "{later} before the summary");
    }
    assert!(!md.contains("## Findings"), "the old long list is gone");

    let anchors: Vec<String> = md
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(gemmlab::report::md::anchor)
        .collect();
    let items: Vec<&str> = part(&md, "## Summary")
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(
        o.findings > gemmlab::analysis::SUMMARY_MAX,
        "the data must give more findings ({}) than the summary takes",
        o.findings
    );
    assert_eq!(items.len(), gemmlab::analysis::SUMMARY_MAX, "{items:#?}");
    for item in &items {
        let rest = item.split_once(". ").map_or("", |(_, rest)| rest);
        // The links: "[chart](..), [table](#..)", or the table's alone.
        let at = (rest.find(" [chart](").or_else(|| rest.find(" [table](")))
            .unwrap_or_else(|| panic!("no link: {item}"));
        let (sentence, links) = (&rest[..at], &rest[at + 2..]);
        assert!(sentence.ends_with('.'), "{item}");
        assert!(
            !sentence.trim_end_matches('.').contains(". "),
            "one sentence: {item}"
        );
        assert!(
            sentence.contains(|c: char| c.is_ascii_digit()),
            "no number: {item}"
        );
        assert!(
            !sentence.contains("**"),
            "a long finding in the summary: {item}"
        );
        let table = match links.strip_prefix("chart](") {
            Some(l) => {
                let (path, table) = l
                    .split_once("), [")
                    .unwrap_or_else(|| panic!("a chart without its table: {item}"));
                assert!(out.join(path).is_file(), "{item}: {path} not written");
                table
            }
            None => links,
        };
        let a = table
            .strip_prefix("table](#")
            .and_then(|l| l.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not a chart or table link: {item}"));
        assert!(anchors.iter().any(|x| x == a), "{item}: no heading #{a}");
    }
    assert!(items[0].contains("fastest kernel reaches"), "{}", items[0]);
    assert!(items
        .iter()
        .any(|i| i.contains("8x4 tile suits OpenCL but not CUDA holds")));
    assert!(
        items
            .iter()
            .any(|i| i.contains("1 of 118 measurements has no speed (1 WRONG)")),
        "failures are a topic of their own: {items:#?}"
    );

    // Nothing is lost: every finding is listed in full below the summary.
    let full = part(&md, "## All findings");
    assert_eq!(
        full.lines().filter(|l| l.starts_with("- **")).count(),
        o.findings
    );
    assert!(full.contains("**Register caps, gemm6 (published)**"));
    let _ = fs::remove_dir_all(&root);
}

/// The routine across shapes (`gemm --suite --out`): per toolchain, each call's
/// ratio to cuBLAS, the geometric mean and the lowest call, as typed findings.
#[test]
fn the_routine_section_has_the_geometric_mean_of_each_toolchain() {
    let root = std::env::temp_dir().join(format!("gemmlab-report-routine-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let calls: [(usize, usize, usize); 3] =
        [(1024, 1024, 1024), (128, 4096, 4096), (4097, 33, 2049)];
    // Made-up whole-call times: cuBLAS 100 us each; CUDA 80/200/50 us, OpenCL 125/400/100 us.
    let (cuda_us, opencl_us) = ([80.0, 200.0, 50.0], [125.0, 400.0, 100.0]);
    let mut rows = Vec::new();
    for (i, &(m, n, k)) in calls.iter().enumerate() {
        let p = gemmlab::gemm::problem::Problem::plain(m, n, k);
        let flops = p.flops();
        let at = |exp: &str, kernel: &str, t: Toolchain, us: f64| {
            let mut r = row(exp, kernel, t, 1, flops / (us * 1e3), 0);
            (r.m, r.n, r.k) = (m, n, k);
            r.problem = Some(p);
            let ns = us * 1e3;
            r.time = Some(Stats {
                reps: 10,
                median_ns: ns,
                min_ns: ns,
                max_ns: ns,
                q1_ns: ns,
                q3_ns: ns,
                batch: 1,
            });
            r.vs_vendor = Some(100.0 / us);
            r.pre_ns = Some(1000);
            r.post_ns = Some(0);
            r
        };
        rows.push(at("routine", "simt", Toolchain::Cuda, cuda_us[i]));
        rows.push(at("routine", "xgemm", Toolchain::OpenCl, opencl_us[i]));
        rows.push(at("routine", "cublas", Toolchain::Cuda, 100.0));
    }
    write_run(&root.join("in"), rows);
    let out = root.join("out");
    let o = report_of(&root);
    let md = fs::read_to_string(&o.markdown).unwrap();
    let section = part(&md, "## The routine against cuBLAS across shapes");
    assert!(
        section.contains("| 128x4096x4096 col NN | thin-m | simt"),
        "{section}"
    );
    assert!(out.join("charts/routine-shapes.svg").is_file());
    let findings: Vec<serde_json::Value> =
        serde_json::from_str(&fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let geomeans: Vec<&serde_json::Value> =
        findings.iter().filter(|f| f["kind"] == "geomean").collect();
    assert_eq!(geomeans.len(), 2, "{findings:#?}");
    let of = |tc: &str| {
        *geomeans
            .iter()
            .find(|f| f["toolchain"] == tc)
            .unwrap_or_else(|| panic!("no {tc} finding"))
    };
    // CUDA: (1.25 * 0.5 * 2)^(1/3) = 1.25^(1/3); OpenCL: (0.8 * 0.25 * 1)^(1/3).
    let g = |f: &serde_json::Value| f["geomean"].as_f64().unwrap();
    assert!((g(of("cuda")) - 1.25f64.powf(1.0 / 3.0)).abs() < 1e-9);
    assert!((g(of("opencl")) - 0.2f64.powf(1.0 / 3.0)).abs() < 1e-9);
    assert_eq!(of("cuda")["lowest_call"], "128x4096x4096 col NN");
    assert_eq!(of("cuda")["at_vendor"], 2);
    assert_eq!(of("opencl")["at_vendor"], 1);
    assert_eq!(of("cuda")["topic"], "routine");
    // The routine's rows stay out of the BLAS section (they have its own).
    assert!(!md.contains("## Other BLAS calls"), "{md}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_jit_section_puts_nvrtc_ptx_through_the_same_jit_beside_opencls() {
    let root = std::env::temp_dir().join(format!("gemmlab-report-jit-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    // One kernel: CUDA native 10000, OpenCL native 9000, OpenCL's PTX through the
    // CUDA JIT 9000 (like OpenCL), NVRTC's PTX through the same JIT 11000.
    let jit_note = "PTX loaded through the CUDA driver JIT (cuModuleLoadDataEx)";
    let mut rows = vec![
        row("jit", "simt", Toolchain::Cuda, 1024, 10000.0, 124),
        row("jit", "simt", Toolchain::OpenCl, 1024, 9000.0, 123),
    ];
    for (lane, g) in [("opencl-ptx", 9000.0), ("nvrtc-ptx", 11000.0)] {
        let mut m = row("jit", "simt", Toolchain::Cuda, 1024, g, 123);
        m.variant = Some(lane.into());
        m.build_notes = vec![jit_note.into()];
        rows.push(m);
    }
    write_run(&root.join("in/jit"), rows);
    let out = root.join("out");
    let o = report_of(&root);
    // One JIT row (OpenCL's PTX), with NVRTC's lane as a column of it.
    let md = fs::read_to_string(&o.markdown).unwrap();
    let section = part(&md, "## OpenCL's PTX through the CUDA driver JIT");
    assert!(section.contains("| NVRTC PTX via CUDA JIT |"), "{section}");
    assert!(section.contains("two assemblers"), "{section}");
    assert_eq!(section.matches("| simt |").count(), 1, "{section}");
    let text = fs::read_to_string(out.join("findings.json")).unwrap();
    let findings: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kernel = (findings.as_array().unwrap().iter())
        .find(|f| f["kind"] == "jit_kernel")
        .unwrap_or_else(|| panic!("no jit_kernel finding in {text}"));
    assert_eq!(kernel["nvrtc_jit"], 11000.0, "{kernel}");
    assert_eq!(kernel["jit"], 9000.0, "{kernel}");
    assert_eq!(kernel["like"], "opencl", "{kernel}");
    assert!(
        kernel["text"].as_str().unwrap().contains("10% faster than"),
        "{kernel}"
    );
}

#[test]
fn a_spec_kernel_on_three_toolchains_gets_a_gap_for_each_pair_that_differs_once() {
    use gemmlab::analysis::{data, user, Kind};
    use Toolchain::{ClangCuda, Cuda, OpenCl};
    let root = std::env::temp_dir().join(format!("gemmlab-user-pairs-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let rows = [(Cuda, 300.0), (OpenCl, 200.0), (ClangCuda, 240.0)].map(|(t, g)| {
        let mut m = row("compare", "vadd", t, 1, g, 16);
        (m.m, m.n, m.k) = (0, 0, 0);
        m.dims = Some([("n".to_string(), 1 << 20)].into());
        m
    });
    write_run(&root.join("in/run"), rows.to_vec());
    let d = data::load(&[root.join("in")]).unwrap();
    let gaps: Vec<(Toolchain, Toolchain)> = (user::analyse(&d).findings.iter())
        .filter_map(|f| match &f.kind {
            Kind::User(user::Kind::UserGap(g)) => Some((g.fast, g.slow)),
            _ => None,
        })
        .collect();
    // NVIDIA's two, and CUDA's source through NVRTC and clang; not OpenCL against clang CUDA.
    assert_eq!(gaps, [(Cuda, OpenCl), (Cuda, ClangCuda)]);
    let _ = fs::remove_dir_all(&root);
}
