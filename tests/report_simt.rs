//! The SIMT family against cuBLAS, Nsight Compute's CSV and its profile, on
//! made-up results: typed rows and findings from `gemmlab::analysis`.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use gemmlab::analysis::data::{self, Data};
use gemmlab::analysis::simt::{analyse, Kind, Simt, CLBLAST};
use gemmlab::analysis::Kind as AnyKind;
use gemmlab::backend::ptx::PtxMix;
use gemmlab::backend::{DeviceInfo, DeviceKind, KernelResources, Toolchain};
use gemmlab::gemm::driver::Status;
use gemmlab::measure::Plan;
use gemmlab::results::ncu::{self, discover, errors, load, parse};
use gemmlab::results::reading::{fp32_lanes, GpuFacts};
use gemmlab::results::{Environment, Measurement, ResultWriter};

/// ncu's rows with the profiled program's output and ncu's notes between them.
const OUTPUT: &str = r#"==PROF== Connected to process 902 (/work/.gpu/gemmlab)
device: NVIDIA H200 via cuda (cuda:0; NVRTC 13.0)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","902","gemmlab","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)","1","13","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","2,861,024"
kernel  cuda GFLOP/s (IQR)  cuda %cuBLAS
"0","902","gemmlab","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)","1","13","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","launch__registers_per_thread","register/thread","n/a"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","3,012.5"
==PROF== Disconnected from process 902
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed.sum","Minst","1.5"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics"
"x","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","a","b","1"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","ratio","0.8"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","ratio","1.2"
"1","902","gemmlab","127.0.0.1","simt_gemm","1","13","(128, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","sm__cycles_elapsed.avg.per_second","cycle/nsecond","1.75"
== exit 0
"#;

#[test]
fn launches_with_their_metrics_between_the_program_output() {
    let launches = parse(OUTPUT);
    assert_eq!(launches.len(), 2, "{launches:#?}");
    let (cublas, simt) = (&launches[0], &launches[1]);
    assert_eq!(cublas.id, 0);
    assert!(
        cublas.kernel.contains("cutlass_80_simt_sgemm"),
        "commas inside quotes"
    );
    assert_eq!(cublas.block, "(256, 1, 1)");
    assert_eq!(cublas.grid, "(32, 32, 1)");
    assert_eq!(cublas.compute_capability, Some((9, 0)));
    // Thousands separators inside the quotes.
    assert_eq!(cublas.seconds("gpu__time_duration.sum"), Some(2.861024e-3));
    // "n/a" is no value.
    assert_eq!(cublas.metric("launch__registers_per_thread"), None);
    assert_eq!(cublas.metrics.len(), 1);

    assert_eq!(simt.id, 1);
    assert_eq!(simt.kernel, "simt_gemm");
    let t = simt.seconds("gpu__time_duration.sum").unwrap();
    assert!((t - 3.0125e-3).abs() < 1e-12, "{t}");
    assert_eq!(simt.count("smsp__inst_executed.sum"), Some(1.5e6));
    assert_eq!(simt.ghz("sm__cycles_elapsed.avg.per_second"), Some(1.75));
    // The cut-short row and the row with a non-numeric ID added nothing.
    assert!(!simt.metrics.contains_key("a"));
    assert_eq!(simt.metrics.len(), 5);
    let stalls = simt.ranked(
        "smsp__average_warps_issue_stalled_",
        "_per_issue_active.ratio",
    );
    assert_eq!(
        stalls,
        [
            ("long_scoreboard".to_string(), 1.2),
            ("barrier".to_string(), 0.8)
        ]
    );
}

#[test]
fn output_without_a_header_or_rows_has_no_launches() {
    assert!(parse("").is_empty());
    assert!(parse("==PROF== Connected\n\"0\",\"1\"\n").is_empty());
    let header_only = OUTPUT.lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(parse(&header_only).is_empty());
    let err = "==ERROR== ERR_NVGPUCTRPERM - no permission\n==PROF== x\n";
    assert_eq!(errors(err), ["==ERROR== ERR_NVGPUCTRPERM - no permission"]);
}

#[test]
fn units_it_does_not_know_are_no_value() {
    let mut l = parse(OUTPUT).remove(1);
    l.metrics.insert("t".into(), (5.0, "fortnight".into()));
    l.metrics.insert("f".into(), (5.0, "byte/second".into()));
    assert_eq!(l.seconds("t"), None);
    assert_eq!(l.ghz("f"), None);
    assert_eq!(l.fraction("t"), None);
    assert_eq!(l.seconds("missing"), None);
}

#[test]
fn files_found_by_name_and_toolchain_told_by_name() {
    let root = std::env::temp_dir().join(format!("gemmlab-ncu-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let deep = root.join("a/b/c");
    let too_deep = deep.join("d");
    fs::create_dir_all(&too_deep).unwrap();
    for p in [
        root.join("ncu-cuda.csv"),
        deep.join("ncu-opencl-jit.csv"),
        too_deep.join("ncu-cuda.csv"),
        root.join("other.csv"),
        root.join("ncu-cuda.txt"),
    ] {
        fs::write(&p, OUTPUT).unwrap();
    }
    // Named twice, found once; named by the path below the directory given.
    let found = discover(&[root.clone(), root.clone()]);
    assert_eq!(
        found,
        [
            (
                deep.join("ncu-opencl-jit.csv"),
                "a/b/c/ncu-opencl-jit.csv".to_string()
            ),
            (root.join("ncu-cuda.csv"), "ncu-cuda.csv".to_string()),
        ]
    );
    let f = load(&found[0].0, &found[0].1);
    assert_eq!(f.toolchain, Toolchain::OpenCl);
    assert_eq!(f.name, "a/b/c/ncu-opencl-jit.csv");
    assert_eq!(f.launches.len(), 2);
    assert_eq!(load(&found[1].0, "x").toolchain, Toolchain::Cuda);
    let missing = load(&root.join("ncu-gone.csv"), "ncu-gone.csv");
    assert!(missing.launches.is_empty());
    assert!(
        missing.errors[0].contains("could not be read"),
        "{missing:?}"
    );
    let _ = fs::remove_dir_all(&root);
}

const GPU: &str = "Made-up H200";

fn gpu(t: Toolchain) -> DeviceInfo {
    DeviceInfo {
        compute_capability: Some((9, 0)),
        compute_units: Some(132),
        clock_mhz: Some(1980),
        ..DeviceInfo::new(t, device_id(t), GPU, "NVIDIA", "p", DeviceKind::Gpu)
    }
}

fn device_id(t: Toolchain) -> &'static str {
    match t {
        Toolchain::OpenCl => "opencl:1:0",
        _ => "cuda:0",
    }
}

/// A made-up compare row; `vendor` is cuBLAS's GFLOP/s in the same run.
fn row(
    kernel: &str,
    t: Toolchain,
    size: (usize, usize, usize),
    g: f64,
    vendor: f64,
) -> Measurement {
    let mut m =
        gemmlab::experiment::failed_row("compare", GPU, device_id(t), t, kernel, Status::Ok, size);
    m.gflops = Some(g);
    m.vs_vendor = Some(g / vendor);
    if kernel != data::VENDOR {
        m.label = Some("tuned at 4096x4096x4096".into());
        m.config.0.insert("BM".into(), 128);
        m.config.0.insert("BN".into(), 128);
        m.hints = m.hints.with_switch("ASYNC_COPY", true);
        m.resources = Some(KernelResources {
            registers: Some(128),
            ..Default::default()
        });
        m.occupancy = Some(0.25);
        m.ptx_mix = Some(PtxMix {
            fma: 512,
            total: 1280,
            ..Default::default()
        });
    }
    m
}

fn write_run(dir: &Path, rows: Vec<Measurement>) {
    let env = Environment::capture(
        vec![gpu(Toolchain::Cuda), gpu(Toolchain::OpenCl)],
        1,
        Plan::default(),
    );
    let mut w = ResultWriter::create(dir, env).unwrap();
    for m in rows {
        w.push(m).unwrap();
    }
    w.finish().unwrap();
}

fn results(root: &Path) {
    use Toolchain::{Cuda, OpenCl};
    let mut rows = Vec::new();
    for (size, cublas, cu, cl) in [
        ((4096, 4096, 4096), 50000.0, 48000.0, 40000.0),
        ((8192, 8192, 8192), 52000.0, 46800.0, 41600.0),
        ((16384, 128, 2048), 20000.0, 9000.0, 8000.0),
    ] {
        rows.push(row(data::VENDOR, Cuda, size, cublas, cublas));
        rows.push(row("simt", Cuda, size, cu, cublas));
        rows.push(row("simt", OpenCl, size, cl, cublas));
        rows.push(row(CLBLAST, Cuda, size, cu * 0.8, cublas));
    }
    let mut failed = row("xgemm", OpenCl, (4096, 4096, 4096), 1.0, 1.0);
    failed.status = Status::WrongResult("max error 1e3".into());
    rows.push(failed);
    write_run(&root.join("compare-tuned"), rows);
}

/// ncu's rows for one launch: (metric, unit, value).
fn launch(id: u32, kernel: &str, metrics: &[(&str, &str, &str)]) -> String {
    let mut s = String::new();
    for (name, unit, value) in metrics {
        let _ = writeln!(
            s,
            r#""{id}","902","gemmlab","h","{kernel}","1","13","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","{name}","{unit}","{value}""#
        );
    }
    s
}

const HEADER: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value""#;

fn ncu_files(root: &Path) {
    let cuda = format!(
        "==PROF== Connected to process 902\n{HEADER}\n{}{}== exit 0\n",
        launch(
            0,
            "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32",
            &[
                ("gpu__time_duration.sum", "ns", "2,750,000"),
                (
                    "smsp__issue_active.avg.pct_of_peak_sustained_active",
                    "%",
                    "90"
                ),
            ]
        ),
        launch(
            1,
            "simt_gemm",
            &[
                ("gpu__time_duration.sum", "ns", "3,862,000"),
                ("launch__registers_per_thread", "register/thread", "128"),
                (
                    "sm__warps_active.avg.pct_of_peak_sustained_active",
                    "%",
                    "24.5"
                ),
                (
                    "smsp__issue_active.avg.pct_of_peak_sustained_active",
                    "%",
                    "85"
                ),
                (
                    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                    "%",
                    "62"
                ),
                (
                    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                    "inst",
                    "68,719,476,736"
                ),
                ("smsp__inst_executed.sum", "inst", "2,863,311,531"),
                (
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                    "",
                    "1,024"
                ),
                (
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                    "",
                    "0"
                ),
                (
                    "sm__cycles_elapsed.avg.per_second",
                    "cycle/nsecond",
                    "1.755"
                ),
                (
                    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
                    "ratio",
                    "1"
                ),
                (
                    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
                    "ratio",
                    "0.30"
                ),
                (
                    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                    "ratio",
                    "0.45"
                ),
                (
                    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
                    "ratio",
                    "0.20"
                ),
                (
                    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
                    "ratio",
                    "0.10"
                ),
            ]
        ),
    );
    fs::write(root.join("ncu-cuda.csv"), cuda).unwrap();
    // CUDA's build of the same configuration first, then OpenCL's PTX; no FFMA count.
    let opencl = format!(
        "{HEADER}\n{}wrote 3 measurements\n{}",
        launch(
            0,
            "simt_gemm",
            &[("gpu__time_duration.sum", "ns", "3,900,000")]
        ),
        launch(
            1,
            "simt_gemm",
            &[
                ("gpu__time_duration.sum", "ns", "4,800,000"),
                ("launch__registers_per_thread", "register/thread", "n/a"),
                (
                    "smsp__issue_active.avg.pct_of_peak_sustained_active",
                    "%",
                    "70"
                ),
            ]
        ),
    );
    fs::write(root.join("sub").join("ncu-opencl-jit.csv"), opencl).unwrap();
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("simt-{name}"));
    let _ = fs::remove_dir_all(&d);
    d
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-3
}

fn kinds<'a>(a: &'a Simt) -> Vec<&'a Kind> {
    a.findings
        .iter()
        .filter_map(|f| match &f.kind {
            AnyKind::Simt(k) => Some(k),
            _ => None,
        })
        .collect()
}

#[test]
fn fp32_lanes_by_compute_capability() {
    assert_eq!(fp32_lanes((9, 0)), Some(128));
    assert_eq!(fp32_lanes((8, 0)), Some(64));
    assert_eq!(fp32_lanes((8, 6)), Some(128));
    assert_eq!(fp32_lanes((6, 1)), Some(128));
    assert_eq!(fp32_lanes((3, 5)), Some(192));
    assert_eq!(fp32_lanes((2, 1)), None);
    let h200 = GpuFacts {
        compute_capability: Some((9, 0)),
        sms: Some(132),
        clock_mhz: Some(1980),
        bandwidth_gbs: Some(4814.3),
    };
    assert!((h200.peak_gflops().unwrap() - 66908.16).abs() < 1e-6);
    assert_eq!(GpuFacts::default().peak_gflops(), None);
}

#[test]
fn the_section_from_tuned_rows_and_ncu_files() {
    let root = tmp("full");
    results(&root.join("in"));
    fs::create_dir_all(root.join("in/sub")).unwrap();
    ncu_files(&root.join("in"));
    let from = vec![root.join("in")];
    let d: Data = data::load(&from).unwrap();
    let a = analyse(&d, &from, false);
    let sizes = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 128, 2048)];
    assert_eq!(a.sizes, sizes);
    assert_eq!(a.devices.len(), 1);
    let at4096 = &a.devices[0].sizes[0];
    // 48000 / (132 x 128 x 2 x 1.98 GHz) = 71.7% of the peak; FMA share 512/1280.
    let c = &at4096.cells[0];
    assert_eq!((c.kernel.as_str(), c.toolchain), ("simt", Toolchain::Cuda));
    assert!(close(c.ratio.unwrap(), 0.96) && close(c.of_peak.unwrap(), 0.7174));
    assert_eq!(c.fma_share, Some(0.4));
    assert_eq!(c.rec.m.label.as_deref(), Some("tuned at 4096x4096x4096"));
    let v = at4096.vendor.as_ref().unwrap();
    assert_eq!(v.ratio, Some(1.0));
    assert!(close(v.of_peak.unwrap(), 0.7473) && v.fma_share.is_none());
    // xgemm on OpenCL failed: its cell is there without a ratio.
    let x = at4096
        .cells
        .iter()
        .find(|c| c.kernel == CLBLAST && c.toolchain == Toolchain::OpenCl);
    let x = x.unwrap();
    assert!(!x.rec.m.status.is_ok() && x.ratio.is_none() && x.of_peak.is_none());

    // Findings: each toolchain at the headline sizes, the furthest size, ncu.
    let k = kinds(&a);
    assert_eq!(k.len(), 4, "{k:#?}");
    let Kind::SimtVsCublas {
        kernel,
        toolchain,
        device,
        ratios,
        configuration,
    } = k[0]
    else {
        panic!("{k:#?}")
    };
    assert_eq!(
        (kernel.as_str(), *toolchain, device),
        ("simt", Toolchain::Cuda, &None)
    );
    assert_eq!(ratios.iter().map(|r| r.0).collect::<Vec<_>>(), sizes[..2]);
    assert!(close(ratios[0].1, 0.96) && close(ratios[1].1, 0.90));
    assert_eq!(*configuration, gemmlab::analysis::simt::Configs::Tuned);
    assert_eq!(
        a.findings[0].chart.as_deref(),
        Some(gemmlab::analysis::simt::CHART)
    );
    let Kind::SimtFurthest {
        size,
        ratio,
        toolchain,
        closest_size,
        closest,
        ..
    } = k[2]
    else {
        panic!("{k:#?}")
    };
    assert_eq!((*size, *toolchain), ((16384, 128, 2048), Toolchain::Cuda));
    assert!(close(*ratio, 0.45) && close(*closest, 0.96) && *closest_size == sizes[0]);
    assert!(close(a.findings[2].weight, 0.55));

    // ncu: the longest launch of each kind, every launch listed, nothing where a metric is missing.
    let p = &a.profile;
    let names: Vec<&str> = p.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ncu-cuda.csv", "sub/ncu-opencl-jit.csv"]);
    assert_eq!(p.files[1].launches.len(), 2);
    let rows: Vec<(usize, bool, u64)> = p
        .rows
        .iter()
        .map(|r| (r.file, r.family, r.launch.id))
        .collect();
    assert_eq!(rows, [(0, true, 1), (0, false, 0), (1, true, 1)]);
    let cuda = &p.rows[0];
    assert!(close(cuda.launch.seconds(ncu::TIME).unwrap() * 1e3, 3.862));
    assert_eq!(cuda.launch.count(ncu::CONFLICTS_LD), Some(1024.0));
    let stalls: Vec<&str> = cuda.stalls.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(stalls, ["long_scoreboard", "barrier", "mio_throttle"]);
    assert!(close(cuda.ffma.unwrap(), 0.75));
    let share = cuda.share.as_ref().unwrap();
    assert!(close(share.product, 0.6375) && !share.issue_loses_more);
    assert!(close(cuda.measured.unwrap(), 0.60), "{:?}", cuda.measured);
    assert_eq!(cuda.gpu.and_then(|g| g.clock_mhz), Some(1980));
    assert_eq!(cuda.launch.ghz(ncu::CLOCK), Some(1.755));
    let jit = &p.rows[2];
    assert!(close(jit.launch.seconds(ncu::TIME).unwrap() * 1e3, 4.8));
    assert_eq!(jit.launch.count(ncu::REGISTERS), None);
    assert!(jit.ffma.is_none() && jit.share.is_none() && jit.stalls.is_empty());
    assert_eq!(jit.lanes, Some(128), "a metric is missing, not the lanes");
    let Kind::NcuShares { shares } = k[3] else {
        panic!("{k:#?}")
    };
    assert_eq!(shares.len(), 1);
    assert_eq!(shares[0].toolchain, Toolchain::Cuda);
    assert!(close(a.findings[3].weight, 1.0 - 0.6375) && a.findings[3].chart.is_none());

    // The report places the section after compare's and writes its chart.
    let out = root.join("out");
    let opts = gemmlab::report::Options {
        from,
        out: out.clone(),
        png: false,
        font: None,
        size: None,
    };
    let o = gemmlab::report::generate(&opts).unwrap();
    let md = fs::read_to_string(o.markdown).unwrap();
    let at = |h: &str| md.find(h).unwrap_or_else(|| panic!("no {h}"));
    assert!(at("## Speed: kernels") < at("## The SIMT family against cuBLAS"));
    assert!(md.contains("](charts/simt-vs-cublas.svg)"));
    assert!(out.join("charts/simt-vs-cublas.svg").is_file());
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn without_ncu_files_no_profile_and_without_the_family_no_section() {
    let root = tmp("none");
    results(&root.join("in"));
    let from = vec![root.join("in")];
    let d = data::load(&from).unwrap();
    let a = analyse(&d, &from, false);
    assert!(a.profile.files.is_empty() && a.profile.rows.is_empty());
    assert!(!kinds(&a)
        .iter()
        .any(|k| matches!(k, Kind::NcuShares { .. })));
    assert_eq!(kinds(&a).len(), 3);

    let _ = fs::remove_dir_all(&root);
    write_run(
        &root.join("in/compare"),
        vec![row(data::VENDOR, Toolchain::Cuda, (64, 64, 64), 1.0, 1.0)],
    );
    let d = data::load(&from).unwrap();
    let a = analyse(&d, &from, false);
    assert!(a.devices.is_empty() && a.findings.is_empty());
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn findings_say_whether_the_family_ran_tuned_or_at_its_published_defaults() {
    use gemmlab::analysis::simt::Configs;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h200");
    let of = |dirs: &[&str]| {
        let from: Vec<_> = dirs.iter().map(|d| root.join(d)).collect();
        let d = data::load(&from).unwrap();
        let a = analyse(&d, &from, false);
        let each = kinds(&a).into_iter().filter_map(|k| match k {
            Kind::SimtVsCublas { configuration, .. } => Some(*configuration),
            _ => None,
        });
        (a.configs, each.collect::<Vec<Configs>>())
    };
    // The clang comparison ran `compare` without --tuned: the family at its published defaults.
    let (all, each) = of(&["clang/compare"]);
    assert_eq!(all, Configs::Published);
    assert!(!each.is_empty() && each.iter().all(|c| *c == Configs::Published));
    // The SIMT family's own runs: `compare --tuned` at the headline sizes, some shapes untuned.
    let (all, each) = of(&["simt"]);
    assert_eq!(all, Configs::Both);
    assert!(!each.is_empty() && each.iter().all(|c| *c == Configs::Tuned));
}

#[test]
fn of_several_family_kernels_the_closest_to_cublas_is_the_headline() {
    use Toolchain::{Cuda, OpenCl};
    let root = tmp("several");
    let size = (4096, 4096, 4096);
    let rows = vec![
        row(data::VENDOR, Cuda, size, 50000.0, 50000.0),
        row("simt", Cuda, size, 32000.0, 50000.0),
        row("simtdirect", Cuda, size, 36000.0, 50000.0),
        row("thin", Cuda, size, 17500.0, 50000.0),
        row("thin", OpenCl, size, 17000.0, 50000.0),
    ];
    write_run(&root.join("in/compare"), rows);
    let from = vec![root.join("in")];
    let d = data::load(&from).unwrap();
    let a = analyse(&d, &from, false);
    let headline: Vec<(String, Toolchain, bool)> = (a.findings.iter())
        .filter_map(|f| match &f.kind {
            AnyKind::Simt(Kind::SimtVsCublas {
                kernel, toolchain, ..
            }) => Some((kernel.clone(), *toolchain, f.headline)),
            _ => None,
        })
        .collect();
    let of = |k: &str, t| headline.iter().find(|h| h.0 == k && h.1 == t).map(|h| h.2);
    // CUDA: simtdirect (0.72x) leads, simt and thin are details; OpenCL has only thin.
    assert_eq!(of("simtdirect", Cuda), Some(true), "{headline:?}");
    assert_eq!(of("simt", Cuda), Some(false), "{headline:?}");
    assert_eq!(of("thin", Cuda), Some(false), "{headline:?}");
    assert_eq!(of("thin", OpenCl), Some(true), "{headline:?}");
    let _ = fs::remove_dir_all(&root);
}
