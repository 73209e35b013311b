//! clang's toolchains for real, without a GPU: every built-in kernel compiled by
//! clang (OpenCL C with libclc, CUDA C++ with the wheels' headers) to PTX through
//! LLVM's NVPTX back end and assembled by the cached ptxas, 11.8 for Kepler sm_35
//! and 13 for Hopper sm_90, with ptxas's reports checked. Needs clang-19 and
//! libclc-19 (apt), and `scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas
//! --with-cuda-headers`. Without them the tests skip visibly; under
//! GEMMLAB_REQUIRE_CLANG=1 (CI) they fail instead.

mod common;

use std::process::Command;

use gemmlab::backend::clang;
use gemmlab::backend::CompileOptions;
use gemmlab::experiment::offline::{compile_kernel, Target};
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::{Error, Toolchain};

const CLANG: [Toolchain; 2] = [Toolchain::ClangOpenCl, Toolchain::ClangCuda];

fn required() -> bool {
    std::env::var("GEMMLAB_REQUIRE_CLANG").is_ok_and(|v| v == "1")
}

/// The offline target of a clang toolchain, or a visible skip (a failure under
/// GEMMLAB_REQUIRE_CLANG=1).
fn target(tc: Toolchain, arch: &str, ptxas: &str, test: &str) -> Option<Target> {
    match Target::for_toolchain(tc, None, Some(ptxas), arch) {
        Ok(t) => Some(t),
        Err(e) if required() => panic!("{test}: GEMMLAB_REQUIRE_CLANG=1 but {e}"),
        Err(e) => {
            common::say(&format!("SKIPPED {test}: {e}"));
            None
        }
    }
}

/// Every kernel at its published defaults: clang's PTX, ptxas's registers,
/// spills and stack, shared memory exactly the registry's, an occupancy, the
/// compiler and the flags recorded.
fn every_kernel_compiles(t: &Target) {
    for spec in kernels::all() {
        let config = spec.defaults();
        if let Some(why) = spec.unavailable_at(&config, t.device(), &Hints::default()) {
            common::say(&format!("{} not for {}: {why}", spec.id, t.arch().name()));
            continue;
        }
        let b = compile_kernel(t, spec, &config, &Hints::default())
            .unwrap_or_else(|e| panic!("{} for {}: {e}", spec.id, t.describe()));
        let what = format!("{} for {}", spec.id, t.describe());
        let ptx = b.ptx().unwrap_or_else(|| panic!("{what}: no PTX"));
        assert!(
            ptx.contains("LLVM NVPTX Back-End"),
            "{what}: PTX not clang's"
        );
        assert!(
            ptx.contains(&format!(".entry {}(", spec.entry)),
            "{what}: no entry {} in the PTX",
            spec.entry
        );
        let r = b
            .resources
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: no ptxas lines in\n{}", b.report.log));
        let regs = r.registers.expect("registers parsed");
        assert!((8..=255).contains(&regs), "{what}: {regs} registers");
        assert!(r.spill_stores_bytes.is_some() && r.spill_loads_bytes.is_some());
        assert!(r.stack_frame_bytes.is_some(), "{what}: {}", b.report.log);
        assert_eq!(
            r.shared_bytes,
            Some((spec.local_bytes)(&config) as u64),
            "{what}: ptxas's shared memory against the registry's"
        );
        let occ = b.occupancy.expect("an occupancy");
        assert!(occ.blocks_per_sm >= 1 && occ.fraction > 0.0 && occ.fraction <= 1.0);
        assert!(b.cubin_bytes > 0, "{what}: no CUBIN");
        let compiler = b.report.compiler.as_deref().unwrap_or_default();
        assert!(
            compiler.starts_with("clang ") && compiler.contains("+ ptxas "),
            "{what}: compiler {compiler}"
        );
        let arch = t.arch().name();
        assert!(
            b.report.flags.iter().any(|f| f.contains(&arch)),
            "{what}: flags {:?}",
            b.report.flags
        );
        // wgmma kernels are assembled for the architecture-specific variant (sm_90a).
        let suffix = if kernels::tcwg::arch_specific(spec.id) {
            "a"
        } else {
            ""
        };
        assert!(
            b.report
                .flags
                .contains(&format!("ptxas:--gpu-name={arch}{suffix}")),
            "{what}: flags {:?}",
            b.report.flags
        );
    }
}

#[test]
fn every_kernel_compiles_with_both_clang_toolchains_for_kepler_with_ptxas_11_8() {
    for tc in CLANG {
        if let Some(t) = target(tc, "sm_35", "11.8", "clang sm_35") {
            every_kernel_compiles(&t);
        }
    }
}

#[test]
fn every_kernel_compiles_with_both_clang_toolchains_for_hopper_with_ptxas_13() {
    for tc in CLANG {
        if let Some(t) = target(tc, "sm_90", "13", "clang sm_90") {
            every_kernel_compiles(&t);
        }
    }
}

/// A register cap goes to ptxas as --maxrregcount and is applied.
#[test]
fn a_register_cap_is_handed_to_ptxas_and_applied() {
    for tc in CLANG {
        let Some(t) = target(tc, "sm_90", "13", "clang register cap") else {
            return;
        };
        let spec = kernels::find("gemm6").expect("gemm6");
        let hints = Hints {
            max_registers: Some(64),
            ..Default::default()
        };
        let b = compile_kernel(&t, spec, &spec.defaults(), &hints).expect("compiles");
        assert!(b
            .report
            .flags
            .contains(&"ptxas:--maxrregcount=64".to_string()));
        let regs = b.resources.and_then(|r| r.registers).expect("registers");
        assert!(regs <= 64, "{tc}: {regs} registers under a cap of 64");
    }
}

/// A source clang rejects is a compile error carrying clang's own log.
#[test]
fn a_compile_error_carries_clangs_log() {
    for (tc, src) in [
        (
            Toolchain::ClangOpenCl,
            "__kernel void k(__global float* x) { x[0] = y; }",
        ),
        (
            Toolchain::ClangCuda,
            "extern \"C\" __global__ void k(float* x) { x[0] = y; }",
        ),
    ] {
        let Some(t) = target(tc, "sm_90", "13", "clang compile error") else {
            return;
        };
        match t.compiler().compile("k", src, &CompileOptions::new()) {
            Err(Error::Compile { log, toolchain, .. }) => {
                assert!(log.contains("error:") && log.contains("'y'"), "{log}");
                assert!(toolchain.contains("clang"), "{toolchain}");
            }
            Err(e) => panic!("{tc}: expected a compile error, got {e}"),
            Ok(_) => panic!("{tc}: compiled a source with an undeclared name"),
        }
    }
}

/// An architecture the asked ptxas cannot assemble for (11.8 stops at sm_90) is
/// refused before any compile, naming the ptxas releases that are cached.
#[test]
fn an_architecture_the_cached_ptxas_lacks_is_refused_with_what_is_cached() {
    if clang::unavailable(Toolchain::ClangOpenCl).is_some() && !required() {
        common::say("SKIPPED clang architecture refusal: clang or libclc missing");
        return;
    }
    match Target::for_toolchain(Toolchain::ClangOpenCl, None, Some("11.8"), "sm_100") {
        Err(Error::ToolchainUnavailable { reason, .. }) => {
            assert!(
                reason.contains("sm_100") && reason.contains("ptxas"),
                "{reason}"
            );
        }
        Err(e) => panic!("expected the missing ptxas, got {e}"),
        Ok(_) => panic!("ptxas 11.8 does not assemble for sm_100"),
    }
}

/// The command line: one toolchain per offline run, OpenCL refused offline,
/// a clang that is not there named with what to install (exit 1).
#[test]
fn the_command_line_refuses_what_an_offline_clang_run_cannot_do() {
    let run = |args: &[&str], env: Option<(&str, &str)>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gemmlab"));
        c.args(args);
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let o = c.output().expect("gemmlab runs");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let base = ["build", "--kernel", "gemm6", "--arch", "sm_90"];
    let (code, err) = run(
        &[&base[..], &["--backends", "clang-opencl,clang-cuda"]].concat(),
        None,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("one toolchain per offline run"), "{err}");
    let (code, err) = run(&[&base[..], &["--backends", "opencl"]].concat(), None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("need their device"), "{err}");
    let (code, err) = run(
        &[&base[..], &["--backends", "clang-opencl"]].concat(),
        Some(("GEMMLAB_CLANG", "/nonexistent/clang-19")),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("clang-opencl unavailable") && err.contains("GEMMLAB_CLANG"),
        "{err}"
    );
}

/// `gemmlab attribute` offline: the four front ends' PTX of kernels 3 and 7 (NVIDIA's
/// two kept from the committed H200 run) through the cached ptxas releases, and the
/// report's attribution section and findings made from those rows.
#[test]
fn attribute_offline_matrices_and_the_reports_findings() {
    if let Some(why) = clang::unavailable(Toolchain::ClangOpenCl) {
        assert!(!required(), "GEMMLAB_REQUIRE_CLANG=1 but {why}");
        common::say(&format!("SKIPPED attribute offline: {why}"));
        return;
    }
    let dir = std::env::temp_dir().join(format!("gemmlab-attribute-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (out, report) = (dir.join("rows"), dir.join("report"));
    let root = env!("CARGO_MANIFEST_DIR");
    let o = Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(["attribute", "--arch", "sm_90", "--kernels", "3,7", "--ptx"])
        .arg(format!("{root}/results/h200/compare"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("gemmlab runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for want in [
        "own",
        "ptxas 13",
        "clang OpenCL",
        "clang CUDA",
        "OpenCL",
        "gemm3",
        "gemm7",
    ] {
        assert!(text.contains(want), "{want} missing in\n{text}");
    }
    let (_, rows) = gemmlab::results::load_dir(&out).expect("rows written");
    // 2 kernels x 4 front ends x every assembler, plus NVIDIA's own builds.
    assert!(rows.len() >= 2 * 4 + 4, "{} rows", rows.len());
    let own: Vec<_> = rows
        .iter()
        .filter(|r| r.label.as_deref() == Some("own"))
        .collect();
    assert!(
        own.iter().all(|r| !r.toolchain.is_clang()),
        "clang has no own assembler"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(["report", "--no-png", "--from"])
        .arg(&out)
        .arg("--out")
        .arg(&report)
        .output()
        .expect("gemmlab runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(md.contains("## Front end, assembler or runtime"), "{md}");
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("findings.json")).expect("json"))
            .expect("findings.json parses");
    let causes: Vec<&serde_json::Value> = findings
        .as_array()
        .expect("a list")
        .iter()
        .filter(|f| f["kind"] == "cause")
        .collect();
    // gemm3: NVRTC 40 and NVIDIA OpenCL 32 registers on the H200: a difference to attribute.
    let g3 = causes
        .iter()
        .find(|f| f["kernel"] == "gemm3" && f["a"] == "cuda" && f["b"] == "opencl")
        .unwrap_or_else(|| panic!("no gemm3 CUDA/OpenCL cause in {findings}"));
    assert_eq!(g3["own"], serde_json::json!([40, 32]), "{g3}");
    assert!(["front_end", "assembler", "both"].contains(&g3["cause"].as_str().unwrap_or("")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tune --arch` compiles the points a random search would try, and keeps clang's
/// PTX of exactly those: a machine without clang (GEMMLAB_CLANG=none) then builds
/// the searched points from it, and refuses a point the search never reached.
/// Among them, xgemm at tiles where clang declines to inline CLBlast's plain
/// `inline` XgemmBody, which compiles only with GNU89's inline rules.
#[test]
fn tune_offline_keeps_clangs_ptx_of_the_searched_points_for_a_machine_without_clang() {
    let test = "tune_offline_keeps_clangs_ptx";
    if target(Toolchain::ClangOpenCl, "sm_90", "13", test).is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("gemmlab-tune-offline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ptx = dir.join("ptx");
    let gemmlab = |args: &[&str], replay: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gemmlab"));
        c.args(args)
            .env("GEMMLAB_CLANG_PTX", &ptx)
            .env("GEMMLAB_ASSEMBLER", "13");
        if replay {
            c.env("GEMMLAB_CLANG", "none");
        }
        let o = c.output().expect("gemmlab runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), text)
    };
    let out = dir.join("out");
    let tune = [
        "tune",
        "--arch",
        "sm_90",
        "--backends",
        "clang-opencl",
        "--kernels",
        "xgemm",
    ];
    let (code, text) = gemmlab(
        &[
            &tune[..],
            &[
                "--strategy",
                "random",
                "--search-seed",
                "5",
                "--max-configs",
                "24",
                "--switches",
                "none",
                "--caps",
                "none",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
        false,
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("xgemm: 24 compiled"), "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let rows = doc["measurements"].as_array().unwrap();
    assert_eq!(rows.len(), 24);
    for r in rows {
        let regs = r["resources"]["registers"].as_u64();
        assert!(regs.is_some_and(|n| (8..=255).contains(&n)), "{r}");
    }
    // Every searched point builds from the kept PTX alone.
    let defines = |r: &serde_json::Value| -> Vec<String> {
        let config = r["config"].as_object().unwrap();
        config
            .iter()
            .flat_map(|(k, v)| ["--define".to_string(), format!("{k}={v}")])
            .collect()
    };
    // `build` of xgemm with these defines where no clang runs.
    let replayed = |d: &[String]| {
        let mut args = vec!["build", "--arch", "sm_90", "--backends", "clang-opencl"];
        args.extend(["--kernel", "xgemm"]);
        args.extend(d.iter().map(String::as_str));
        gemmlab(&args, true)
    };
    for r in rows.iter().take(4) {
        let (code, text) = replayed(&defines(r));
        assert_eq!(code, Some(0), "{text}");
        let regs = r["resources"]["registers"].as_u64().unwrap();
        assert!(
            text.contains(&format!("registers {regs},")),
            "{regs}: {text}"
        );
    }
    // A point outside the search: no PTX, and the error says how to make it.
    let mut d = defines(&rows[0]);
    let kwi = d.iter().position(|a| a.starts_with("KWI=")).unwrap();
    let other = if d[kwi] == "KWI=1" { "KWI=2" } else { "KWI=1" };
    d[kwi] = other.to_string();
    let (code, text) = replayed(&d);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("holds no PTX"), "{text}");
    let (code, text) = gemmlab(&tune, false);
    assert_eq!(code, Some(2), "the default anneal needs a device: {text}");
    assert!(text.contains("use random or exhaustive"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIMT's mixed copy (cp.async for the operand read along M or N, registers for
/// the one read along K) through both clang front ends, the OpenCL twin included.
#[test]
fn simt_mixed_copy_compiles_with_both_clang_toolchains() {
    let simt = kernels::find("simt").unwrap();
    let hints = Hints::default().with_switch("ASYNC_COPY", true);
    for tc in CLANG {
        let Some(t) = target(tc, "sm_90", "13", "clang sm_90 simt mixed copy") else {
            continue;
        };
        for (a, b) in [(0, 1), (1, 0)] {
            let mut config = simt.defaults();
            config.0.insert("KMAJOR_A".into(), a);
            config.0.insert("KMAJOR_B".into(), b);
            let what = format!("KMAJOR_A={a} KMAJOR_B={b} for {}", t.describe());
            let built =
                compile_kernel(&t, simt, &config, &hints).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(built.ptx().expect("PTX").contains("cp.async"), "{what}");
        }
        // Both read along K, both copied by 4-byte cp.async (ASYNC_ALONG_K).
        let mut both = simt.defaults();
        both.0.insert("KMAJOR_A".into(), 1);
        both.0.insert("KMAJOR_B".into(), 1);
        let along = hints.clone().with_switch("ASYNC_ALONG_K", true);
        let what = format!("ASYNC_ALONG_K for {}", t.describe());
        let built =
            compile_kernel(&t, simt, &both, &along).unwrap_or_else(|e| panic!("{what}: {e}"));
        let ptx = built.ptx().expect("PTX");
        assert!(
            ptx.lines()
                .any(|l| l.contains("cp.async.ca") && l.trim_end().ends_with(", 4;")),
            "{what}"
        );
    }
}
