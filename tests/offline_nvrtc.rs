//! Offline compilation for real: every tutorial kernel compiled by NVIDIA's NVRTC
//! wheels, 11.8 for Kepler sm_35 and 13 for Hopper sm_90, with no GPU and no
//! driver, and ptxas's reports checked. The wheels come from gemmlab's cache
//! (`scripts/nvrtc/fetch.sh 11.8 13`; `.ci/run` fetches them). Without them the
//! tests skip visibly; under GEMMLAB_REQUIRE_NVRTC=1 (CI) they fail instead.

mod common;

use std::process::{Command, Output};
use std::sync::Arc;

use gemmlab::backend::nvrtc::{cache, parse_version};
use gemmlab::experiment::offline::{compile_kernel, Target};
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::results::load_dir;
use gemmlab::{Arch, Error, Nvrtc};

fn required() -> bool {
    std::env::var("GEMMLAB_REQUIRE_NVRTC").is_ok_and(|v| v == "1")
}

/// The cached NVRTC of `version`, or a visible skip (a failure under GEMMLAB_REQUIRE_NVRTC=1).
fn nvrtc(version: &str, test: &str) -> Option<Arc<Nvrtc>> {
    let wanted = parse_version(version).expect("a version");
    let why = match cache::find(&wanted) {
        Some(c) => match c.open() {
            Ok(n) => return Some(n),
            Err(e) => format!("NVRTC {version} in {} does not load: {e}", c.dir.display()),
        },
        None => format!(
            "NVRTC {version} is not in {} (scripts/nvrtc/fetch.sh {version})",
            cache::describe_dir()
        ),
    };
    if required() {
        panic!("{test}: GEMMLAB_REQUIRE_NVRTC=1 but {why}");
    }
    common::say(&format!("SKIPPED {test}: {why}"));
    None
}

fn target(version: &str, arch: &str, test: &str) -> Option<Target> {
    let n = nvrtc(version, test)?;
    let arch = Arch::parse(arch).expect("an architecture");
    Some(Target::with(n, &arch).unwrap_or_else(|e| panic!("{test}: {e}")))
}

/// Every kernel at its published defaults: registers within what a thread may
/// have, spills and stack parsed, shared memory exactly the registry's, an
/// occupancy, PTX, a CUBIN, and the compiler recorded.
fn every_kernel_compiles(t: &Target, max_regs_seen: u32) {
    for spec in kernels::all() {
        let config = spec.defaults();
        if let Some(why) = spec.unavailable_at(&config, t.device(), &Hints::default()) {
            common::say(&format!("{} not for {}: {why}", spec.id, t.arch().name()));
            continue;
        }
        let b = compile_kernel(t, spec, &config, &Hints::default())
            .unwrap_or_else(|e| panic!("{} for {}: {e}", spec.id, t.describe()));
        let r = b
            .resources
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no ptxas lines in\n{}", spec.id, b.report.log));
        let regs = r.registers.expect("registers parsed");
        assert!(
            (8..=max_regs_seen).contains(&regs),
            "{} for {}: {regs} registers",
            spec.id,
            t.arch()
        );
        assert!(r.spill_stores_bytes.is_some() && r.spill_loads_bytes.is_some());
        assert!(r.stack_frame_bytes.is_some(), "{}", b.report.log);
        assert_eq!(
            r.shared_bytes,
            Some((spec.local_bytes)(&config) as u64),
            "{}: ptxas's shared memory against the registry's",
            spec.id
        );
        let occ = b.occupancy.expect("an occupancy");
        assert!(
            occ.blocks_per_sm >= 1 && occ.fraction > 0.0 && occ.fraction <= 1.0,
            "{}: {occ:?}",
            spec.id
        );
        assert!(b
            .ptx()
            .is_some_and(|p| p.contains(&format!(".entry {}", spec.entry))));
        assert!(b.cubin_bytes > 0);
        assert_eq!(b.report.compiler, Some(t.compiler_label().to_string()));
        // wgmma kernels compile for the architecture-specific variant (sm_90a).
        let suffix = if kernels::tcwg::arch_specific(spec.id) {
            "a"
        } else {
            ""
        };
        assert!(
            b.report
                .flags
                .contains(&format!("--gpu-architecture={}{suffix}", t.arch())),
            "{}: flags {:?}",
            spec.id,
            b.report.flags
        );
    }
}

#[test]
fn every_kernel_for_kepler_sm35_with_nvrtc_11_8() {
    let Some(t) = target(
        "11.8",
        "sm_35",
        "every_kernel_for_kepler_sm35_with_nvrtc_11_8",
    ) else {
        return;
    };
    assert_eq!(t.nvrtc().expect("an NVRTC target").version(), (11, 8));
    assert_eq!(t.device().compute_capability, Some((3, 5)));
    assert_eq!(t.device().compiler_version.as_deref(), Some("NVRTC 11.8"));
    every_kernel_compiles(&t, 255);
}

#[test]
fn every_kernel_for_hopper_sm90_with_nvrtc_13() {
    let Some(t) = target("13", "sm_90", "every_kernel_for_hopper_sm90_with_nvrtc_13") else {
        return;
    };
    assert_eq!(t.nvrtc().expect("an NVRTC target").version().0, 13);
    every_kernel_compiles(&t, 255);
}

/// The routine's pack, unpack and scale kernels (the CUDA twin; PoCL runs the
/// OpenCL one in tests/routine_client.rs) compile in both precisions, with the
/// transposing pack's tile in shared memory and no spills.
#[test]
fn the_routine_kernels_compile_for_hopper_in_both_precisions() {
    let Some(t) = target(
        "13",
        "sm_90",
        "the_routine_kernels_compile_for_hopper_in_both_precisions",
    ) else {
        return;
    };
    let source = kernels::Support::routine_source(gemmlab::Toolchain::Cuda);
    for precision in gemmlab::Precision::ALL {
        let options = kernels::Support::routine_options(precision);
        let a = t
            .compiler()
            .compile("routine", &source, &options)
            .unwrap_or_else(|e| panic!("{precision}: {e}"));
        for entry in ["pack_matrix", "unpack_matrix", "scale_matrix"] {
            let r = a
                .report
                .kernel(entry)
                .unwrap_or_else(|| panic!("{precision} {entry}: no report in\n{}", a.report.log));
            assert_eq!(r.spill_stores_bytes, Some(0), "{precision} {entry}");
        }
        let elem = if precision == gemmlab::Precision::F64 {
            8
        } else {
            4
        };
        assert_eq!(
            a.report.kernel("pack_matrix").and_then(|r| r.shared_bytes),
            Some(32 * 33 * elem),
            "{precision}: the pack's 32 x 33 tile"
        );
    }
}

#[test]
fn kepler_kernel6_registers_bounds_unroll_and_caps() {
    let Some(t) = target(
        "11.8",
        "sm_35",
        "kepler_kernel6_registers_bounds_unroll_and_caps",
    ) else {
        return;
    };
    let k6 = kernels::find("6").unwrap();
    let config = k6.defaults();
    let build = |hints: Hints| {
        let b = compile_kernel(&t, k6, &config, &hints).unwrap();
        let r = b.resources.clone().unwrap();
        (r, b.occupancy.unwrap(), b.report)
    };
    // With launch bounds (256 threads) the published kernel fits 128 registers: two
    // work-groups per SM on Kepler, the tutorial's target.
    let (r, occ, _) = build(Hints::default().with_switch("USE_BOUNDS", true));
    let regs = r.registers.unwrap();
    assert!(regs <= 128, "{regs} registers with launch bounds");
    assert!(regs >= 73, "{regs}: below the tutorial's lower bound of 73");
    assert_eq!((occ.blocks_per_sm, occ.fraction), (2, 0.25));
    // The unroll pragma (not in the published kernel 6) costs the second work-group.
    let (r, occ, _) = build(Hints::default().with_switch("UNROLL_K", true));
    assert!(r.registers.unwrap() > 128, "{r:?}");
    assert_eq!(occ.blocks_per_sm, 1);
    // A cap of 64 is applied and spills, and the spills are parsed as such.
    let (r, _, report) = build(Hints {
        max_registers: Some(64),
        ..Hints::default()
    });
    assert!(r.registers.unwrap() <= 64, "{r:?}");
    assert!(
        r.spill_stores_bytes.unwrap() > 0 && r.spill_loads_bytes.unwrap() > 0,
        "{}",
        report.log
    );
    assert!(report.flags.contains(&"--maxrregcount=64".to_string()));
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[test]
fn an_nvrtc_without_the_architecture_lists_those_it_has() {
    let Some(n) = nvrtc("13", "an_nvrtc_without_the_architecture_lists_those_it_has") else {
        return;
    };
    let e = Target::with(n, &Arch::parse("sm_35").unwrap())
        .err()
        .expect("NVRTC 13 cannot compile for Kepler");
    let text = e.to_string();
    assert!(
        text.contains("cannot compile for sm_35")
            && text.contains("sm_75")
            && text.contains("sm_90")
            && text.contains("--nvrtc 11.8"),
        "{text}"
    );
    assert_eq!(e.exit_code(), 2);
}

/// Without `--nvrtc`, `--arch sm_35` takes the newest cached NVRTC that targets
/// Kepler (11.8 where 13 is the default) and says which.
#[test]
fn without_nvrtc_an_arch_takes_the_newest_cached_nvrtc_that_targets_it() {
    if nvrtc(
        "11.8",
        "without_nvrtc_an_arch_takes_the_newest_cached_nvrtc",
    )
    .is_none()
    {
        return;
    }
    let (n, note) = Nvrtc::choose_for(None, &Arch::parse("sm_35").unwrap()).unwrap();
    assert_eq!(n.version(), (11, 8));
    // The note names the choice, unless the default already was an 11.x.
    if let Some(note) = note {
        assert!(
            note.contains("newest cached NVRTC that targets it"),
            "{note}"
        );
    }
    // A named NVRTC is taken as named, even where it cannot compile for the architecture.
    if nvrtc("13", "without_nvrtc_an_arch_takes_the_newest_cached_nvrtc").is_some() {
        let (n, note) = Nvrtc::choose_for(Some("13"), &Arch::parse("sm_35").unwrap()).unwrap();
        assert!(n.version().0 == 13 && note.is_none());
    }
}

#[test]
fn a_compile_error_carries_nvrtcs_log() {
    let Some(t) = target("13", "sm_90", "a_compile_error_carries_nvrtcs_log") else {
        return;
    };
    let bad = "extern \"C\" __global__ void broken(float* y) { y[0] = undeclared_thing; }";
    match t
        .compiler()
        .compile("broken", bad, &gemmlab::CompileOptions::new())
    {
        Err(Error::Compile { log, toolchain, .. }) => {
            assert!(log.contains("undeclared_thing"), "{log}");
            assert!(toolchain.starts_with("NVRTC 13"), "{toolchain}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

fn gemmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_readme_example_builds_kernel6_for_kepler() {
    if nvrtc("11.8", "the_readme_example_builds_kernel6_for_kepler").is_none() {
        return;
    }
    let out = std::env::temp_dir().join(format!("gemmlab-offline-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = gemmlab(&[
        "build",
        "--kernel",
        "6",
        "--arch",
        "sm_35",
        "--nvrtc",
        "11.8",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("sm_35 with NVRTC 11.8"), "{t}");
    assert!(t.contains("myGEMM6: registers "), "{t}");
    assert!(
        t.contains("occupancy 25% (2 blocks of 8 warps per SM"),
        "{t}"
    );
    assert!(t.contains("not run, checked or timed"), "{t}");
    let json = std::fs::read_to_string(out.join("gemm6-cuda-sm_35.json")).unwrap();
    let report: gemmlab::BuildReport = serde_json::from_str(&json).unwrap();
    assert_eq!(report.compiler.as_deref(), Some("NVRTC 11.8"));
    assert!(out.join("gemm6-cuda-sm_35.ptx").exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_nvrtc_given_by_path_is_the_one_used() {
    let Some(n) = nvrtc("11.8", "an_nvrtc_given_by_path_is_the_one_used") else {
        return;
    };
    let path = n.path().to_str().unwrap().to_string();
    let o = gemmlab(&[
        "build", "--kernel", "1", "--arch", "sm_37", "--nvrtc", &path,
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("sm_37 with NVRTC 11.8") && t.contains(&path),
        "{t}"
    );
    // Usage errors, before any work: an unknown version, a missing file, a bad arch.
    for (args, says) in [
        (vec!["--arch", "sm_35", "--nvrtc", "9.1"], "no NVRTC 9.1"),
        (
            vec!["--arch", "sm_35", "--nvrtc", "/no/libnvrtc.so"],
            "no such file",
        ),
        (
            vec!["--arch", "kepler", "--nvrtc", "11.8"],
            "give a real architecture",
        ),
        (
            vec!["--arch", "sm_35", "--device", "cuda"],
            "without a device",
        ),
    ] {
        let mut a = vec!["build", "--kernel", "6"];
        a.extend(args);
        let o = gemmlab(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{a:?}: {}", text(&o));
    }
}

#[test]
fn an_offline_register_sweep_writes_the_usual_results_without_timing() {
    if nvrtc(
        "11.8",
        "an_offline_register_sweep_writes_the_usual_results_without_timing",
    )
    .is_none()
    {
        return;
    }
    let out = std::env::temp_dir().join(format!("gemmlab-offline-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = gemmlab(&[
        "sweep",
        "registers",
        "--arch",
        "sm_35",
        "--nvrtc",
        "11.8",
        "--kernels",
        "6,11",
        "--caps",
        "none,127,64",
        "--keep-ptx",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("limited by registers"), "{t}");
    assert!(!t.contains("GFLOP/s"), "{t}");
    let (env, rows) = load_dir(&out).unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(env.devices.len(), 1);
    assert_eq!(
        env.devices[0].compiler_version.as_deref(),
        Some("NVRTC 11.8")
    );
    assert!(env
        .notes
        .iter()
        .any(|n| n.contains("not run, checked or timed")));
    for r in &rows {
        assert!(r.time.is_none() && r.gflops.is_none(), "{r:?}");
        assert_eq!(r.compiler.as_deref(), Some("NVRTC 11.8"));
        assert!(r.status.reason().is_some_and(|w| w.contains("no device")));
        assert!(r.resources.as_ref().and_then(|x| x.registers).is_some());
        assert!(r.occupancy.is_some() && r.ptx_file.is_some());
    }
    let capped = rows
        .iter()
        .find(|r| r.kernel == "gemm6" && r.label.as_deref() == Some("cap=64"))
        .unwrap();
    assert!(capped.resources.as_ref().unwrap().registers.unwrap() <= 64);
    assert!(out.join("results.csv").exists() && out.join("ptx.tar.gz").exists());
    // A sweep that needs the GPU says so.
    let o = gemmlab(&["sweep", "jit", "--arch", "sm_35", "--nvrtc", "11.8"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ptx_offline_shows_the_instruction_mix() {
    if nvrtc("13", "ptx_offline_shows_the_instruction_mix").is_none() {
        return;
    }
    let o = gemmlab(&["ptx", "--kernel", "11", "--arch", "sm_90", "--nvrtc", "13"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("gemm11-cuda-sm_90") && t.contains("fma"), "{t}");
}

#[test]
fn the_nvrtc_command_lists_the_cache() {
    if nvrtc("11.8", "the_nvrtc_command_lists_the_cache").is_none() {
        return;
    }
    let o = gemmlab(&["nvrtc"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("--nvrtc 11.8") && t.contains("sm_35 sm_37"),
        "{t}"
    );
    let o = gemmlab(&["nvrtc", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let list = doc["nvrtc"].as_array().unwrap();
    assert!(list.iter().any(|n| n["version"] == "NVRTC 11.8"
        && n["supported_archs"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "sm_35"))));
}

#[test]
fn the_atlas_compiles_per_architecture_and_assembles_opencl_ptx() {
    let test = "the_atlas_compiles_per_architecture_and_assembles_opencl_ptx";
    if nvrtc("11.8", test).is_none() {
        return;
    }
    let ptxases = gemmlab::experiment::atlas::Ptxas::cached();
    if ptxases.iter().all(|p| p.release != "11.8") {
        let why = "no ptxas 11.8 in the cache (scripts/nvrtc/fetch.sh 11.8 --with-ptxas)";
        if required() {
            panic!("{test}: GEMMLAB_REQUIRE_NVRTC=1 but {why}");
        }
        common::say(&format!("SKIPPED {test}: {why}"));
        return;
    }
    // The OpenCL PTX that NVIDIA's compiler wrote on the H200, committed with its run.
    let run = concat!(env!("CARGO_MANIFEST_DIR"), "/results/h200/compare");
    let out = std::env::temp_dir().join(format!("gemmlab-atlas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = gemmlab(&[
        "atlas",
        "--kernels",
        "6,11",
        "--archs",
        "sm_35,sm_90",
        "--nvrtc",
        "11.8",
        "--opencl-ptx",
        run,
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let (_, rows) = load_dir(&out).unwrap();
    let cuda: Vec<_> = rows
        .iter()
        .filter(|m| m.compiler.as_deref() == Some("NVRTC 11.8"))
        .collect();
    assert_eq!(cuda.len(), 4, "{t}");
    for m in &cuda {
        let regs = m.resources.as_ref().and_then(|r| r.registers).unwrap();
        assert!(
            (16..=255).contains(&regs),
            "{} on {}: {regs}",
            m.kernel,
            m.device
        );
        assert!(m.occupancy.is_some_and(|o| o > 0.0 && o <= 1.0));
        assert!(m
            .status
            .reason()
            .is_some_and(|r| r.starts_with("no device")));
    }
    let k6 = cuda
        .iter()
        .find(|m| m.kernel == "gemm6" && m.device.starts_with("sm_35"))
        .unwrap();
    let regs = k6.resources.as_ref().and_then(|r| r.registers).unwrap();
    assert!(regs <= 128, "kernel 6 on Kepler: {regs} registers");
    // OpenCL's PTX (.version 9.0, .target sm_90) assembled by ptxas 11.8 for Kepler.
    let ocl: Vec<_> = rows
        .iter()
        .filter(|m| m.compiler.as_deref() == Some("NVIDIA OpenCL PTX + ptxas 11.8"))
        .collect();
    assert_eq!(ocl.len(), 4, "{t}");
    let kepler = ocl
        .iter()
        .find(|m| m.kernel == "gemm6" && m.device.starts_with("sm_35"))
        .unwrap();
    assert!(
        kepler
            .build_notes
            .iter()
            .any(|n| n == ".target sm_90 -> sm_35"),
        "{:?}",
        kepler.build_notes
    );
    assert!(kepler
        .resources
        .as_ref()
        .and_then(|r| r.registers)
        .is_some());
    let _ = std::fs::remove_dir_all(&out);

    // Bad input: an unknown architecture, a run without OpenCL PTX.
    let bad = gemmlab(&["atlas", "--archs", "sm_999", "--out", out.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let none = gemmlab(&[
        "atlas",
        "--kernels",
        "6",
        "--archs",
        "sm_35",
        "--opencl-ptx",
        concat!(env!("CARGO_MANIFEST_DIR"), "/results/h200/sweeps/registers"),
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&none);
    assert_eq!(none.status.code(), Some(2), "{t}");
    assert!(t.contains("no OpenCL PTX"), "{t}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A spec over the built-in sources compiles offline exactly as the registry's
/// kernel does: the same registers, spills and shared memory for Kepler and Hopper,
/// and its PTX comes out through `ptx --spec --arch`.
#[test]
fn a_spec_compiles_offline_like_its_builtin_twin() {
    use gemmlab::kernel::Kernel;
    let user = gemmlab::kernel::user::load_static(&["specs/gemm-tutorial/myGEMM6.toml".into()])
        .expect("the shipped spec loads")
        .remove(0);
    let builtin = kernels::find("gemm6").unwrap();
    for (version, arch) in [("11.8", "sm_35"), ("13", "sm_90")] {
        let Some(t) = target(
            version,
            arch,
            "a_spec_compiles_offline_like_its_builtin_twin",
        ) else {
            return;
        };
        let spec = compile_kernel(&t, Kernel::User(user), &user.defaults(), &Hints::default())
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let reg = compile_kernel(&t, builtin, &builtin.defaults(), &Hints::default())
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let (a, b) = (spec.resources.unwrap(), reg.resources.unwrap());
        assert_eq!(
            (a.registers, a.spill_stores_bytes, a.shared_bytes),
            (b.registers, b.spill_stores_bytes, b.shared_bytes),
            "{arch}"
        );
    }
    let o = gemmlab(&[
        "ptx",
        "--spec",
        "specs/saxpy/saxpy.toml",
        "--arch",
        "sm_90",
        "--nvrtc",
        "13",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("saxpy-cuda-sm_90"), "{}", text(&o));
    // A spec with only an OpenCL source has nothing to compile offline: said, exit 1.
    let dir = std::env::temp_dir().join(format!("gemmlab-offline-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy("specs/saxpy/saxpy.cl", dir.join("saxpy.cl")).unwrap();
    let toml = std::fs::read_to_string("specs/saxpy/saxpy.toml")
        .unwrap()
        .replace("cuda = \"saxpy.cu\"", "");
    std::fs::write(dir.join("saxpy.toml"), toml).unwrap();
    let o = gemmlab(&[
        "build",
        "--spec",
        dir.join("saxpy.toml").to_str().unwrap(),
        "--arch",
        "sm_90",
        "--nvrtc",
        "13",
    ]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("no CUDA C++ source"), "{}", text(&o));
}

/// SIMT with cp.async and one operand read along K: the other operand is still
/// copied asynchronously (cp.async in the PTX), the K-major one through registers,
/// without spills; both operands along K with cp.async is refused in words.
#[test]
fn simt_copies_one_operand_async_while_the_other_is_read_along_k() {
    let Some(t) = target(
        "13",
        "sm_90",
        "simt_copies_one_operand_async_while_the_other_is_read_along_k",
    ) else {
        return;
    };
    let simt = kernels::find("simt").unwrap();
    let hints = Hints::default().with_switch("ASYNC_COPY", true);
    for (a, b) in [(0, 1), (1, 0)] {
        let mut config = simt.defaults();
        config.0.insert("KMAJOR_A".into(), a);
        config.0.insert("KMAJOR_B".into(), b);
        let built = compile_kernel(&t, simt, &config, &hints)
            .unwrap_or_else(|e| panic!("KMAJOR_A={a} KMAJOR_B={b}: {e}"));
        let ptx = built.ptx().expect("PTX");
        assert!(
            ptx.contains("cp.async"),
            "KMAJOR_A={a} KMAJOR_B={b}: no cp.async"
        );
        let r = built.resources.clone().expect("resources");
        assert_eq!(r.spill_stores_bytes, Some(0), "KMAJOR_A={a} KMAJOR_B={b}");
    }
    let mut both = simt.defaults();
    both.0.insert("KMAJOR_A".into(), 1);
    both.0.insert("KMAJOR_B".into(), 1);
    let e = simt
        .validate_with_switches(&both, &hints, gemmlab::Toolchain::Cuda)
        .unwrap_err()
        .to_string();
    assert!(e.contains("together need ASYNC_COPY off"), "{e}");
}

/// simt built offline at the default configuration with `set` on top: its registers
/// and PTX, with no spills.
fn simt_built(t: &Target, set: &[(&str, i64)], hints: &Hints) -> (u32, String) {
    let simt = kernels::find("simt").unwrap();
    let mut config = simt.defaults();
    for (n, v) in set {
        config.0.insert(n.to_string(), *v);
    }
    let built = compile_kernel(t, simt, &config, hints).unwrap_or_else(|e| panic!("{set:?}: {e}"));
    let r = built.resources.clone().expect("resources");
    assert_eq!(r.spill_stores_bytes, Some(0), "{set:?}");
    (
        r.registers.expect("registers"),
        built.ptx().expect("PTX").to_string(),
    )
}

/// The tiles the SIMT offline checks build: the defaults, and 64 x 64 split two ways.
const SIMT_TILES: [&[(&str, i64)]; 2] =
    [&[], &[("BM", 64), ("BN", 64), ("STAGES", 3), ("SPLITK", 2)]];

/// Lines of `ptx` containing `what`.
fn count(ptx: &str, what: &str) -> usize {
    ptx.lines().filter(|l| l.contains(what)).count()
}

/// SIMT with both operands read along K and ASYNC_ALONG_K: both tiles are copied
/// by 4-byte cp.async (none through registers), in no more registers than the
/// 16-byte copies of operands read along M and N take (+4): ptxas held one 64-bit
/// address per copy when the copies were numbered element by element (233 against
/// 127 at 64 x 64 tiles), which this guards.
#[test]
fn simt_copies_operands_read_along_k_with_cp_async_in_the_same_registers() {
    let Some(t) = target(
        "13",
        "sm_90",
        "simt_copies_operands_read_along_k_with_cp_async_in_the_same_registers",
    ) else {
        return;
    };
    let copies = Hints::default().with_switch("ASYNC_COPY", true);
    let along = copies.clone().with_switch("ASYNC_ALONG_K", true);
    for tiles in SIMT_TILES {
        let k = [tiles, &[("KMAJOR_A", 1), ("KMAJOR_B", 1)]].concat();
        let (base, _) = simt_built(&t, tiles, &copies);
        let (r, ptx) = simt_built(&t, &k, &along);
        assert!(r <= base + 4, "{tiles:?}: {r} registers against {base}");
        let four = ptx
            .lines()
            .filter(|l| l.contains("cp.async.ca.shared.global") && l.trim_end().ends_with(", 4;"));
        assert!(four.count() > 0, "{tiles:?}: no 4-byte cp.async");
        // No operand load through registers: the only global loads left are C's (beta).
        let loads = count(&ptx, "ld.global");
        let (_, through_regs) = simt_built(&t, &k, &Hints::default());
        let reg_loads = count(&through_regs, "ld.global");
        assert!(
            loads < reg_loads,
            "{tiles:?}: {loads} global loads against {reg_loads}"
        );
    }
}

/// SIMT with B read along K and KTILE_B: B's tile stays K-contiguous, so cp.async
/// copies both operands 16 bytes at a time (as many copies and global loads as the
/// form reading B along N, none through registers) and the compute reads B 4 K of
/// a column at a time with 128-bit local loads, as many as it reads along N.
#[test]
fn simt_keeps_b_read_along_k_untransposed_with_ktile_b() {
    let Some(t) = target(
        "13",
        "sm_90",
        "simt_keeps_b_read_along_k_untransposed_with_ktile_b",
    ) else {
        return;
    };
    let copies = Hints::default().with_switch("ASYNC_COPY", true);
    let ktile = copies.clone().with_switch("KTILE_B", true);
    for tiles in SIMT_TILES {
        let k = [tiles, &[("KMAJOR_B", 1)]].concat();
        let (base, along_n) = simt_built(&t, tiles, &copies);
        let (r, along_k) = simt_built(&t, &k, &ktile);
        // A's fragments of 4 K are held while B's columns stream past (168 against
        // 127 at the default tiles, 156 at 64 x 64 with NVRTC 13.5).
        assert!(r <= base + 48, "{tiles:?}: {r} registers against {base}");
        for what in ["cp.async.cg.shared.global", "ld.global", "ld.shared.v4.f32"] {
            assert_eq!(
                count(&along_k, what),
                count(&along_n, what),
                "{tiles:?}: {what}"
            );
        }
        // No scalar transposed stores into local memory.
        assert_eq!(
            count(&along_k, "st.shared.f32"),
            count(&along_n, "st.shared.f32")
        );
    }
}

/// Programmatic dependent launch: the CUDA backend launches a kernel dependent on
/// the one before it where the kernel's PTX waits for that grid. SIMT waits, and
/// releases the next grid after its main loop, without split-K or stream-K only
/// (grids sharing K ran slower launched early); thin and the routine's kernels
/// wait; below sm_90 nothing is emitted.
#[test]
fn dependent_launch_instructions_are_emitted_where_they_pay() {
    let test = "dependent_launch_instructions_are_emitted_where_they_pay";
    let (Some(hopper), Some(ampere)) = (target("13", "sm_90", test), target("13", "sm_80", test))
    else {
        return;
    };
    let waits = |ptx: &str| {
        (
            count(ptx, "griddepcontrol.wait"),
            count(ptx, "griddepcontrol.launch_dependents"),
        )
    };
    let none = Hints::default();
    let (_, whole) = simt_built(&hopper, &[("BM", 64), ("BN", 64), ("STAGES", 3)], &none);
    assert_eq!(waits(&whole), (1, 1), "simt without split-K");
    let (_, split) = simt_built(&hopper, SIMT_TILES[1], &none);
    assert_eq!(waits(&split), (0, 0), "simt with split-K");
    let (_, stream) = simt_built(
        &hopper,
        &[("BM", 64), ("BN", 64), ("STAGES", 3), ("STREAMK", 2)],
        &none,
    );
    assert_eq!(waits(&stream), (0, 0), "simt with stream-K");
    let (_, older) = simt_built(&ampere, &[("BM", 64), ("BN", 64), ("STAGES", 3)], &none);
    assert_eq!(waits(&older), (0, 0), "sm_80");
    let thin = kernels::find("thin").expect("thin");
    let b = compile_kernel(&hopper, thin, &thin.defaults(), &none).expect("thin builds");
    assert_eq!(waits(b.ptx().expect("PTX")), (1, 1), "thin");
    let source = kernels::Support::routine_source(gemmlab::Toolchain::Cuda);
    let options = kernels::Support::routine_options(gemmlab::Precision::F32);
    let a = hopper
        .compiler()
        .compile("routine", &source, &options)
        .expect("routine builds");
    let ptx = a.report.ptx.as_deref().expect("PTX");
    assert_eq!(
        count(ptx, "griddepcontrol.wait"),
        count(ptx, ".entry "),
        "every routine kernel waits"
    );
    assert!(
        count(ptx, ".entry ") >= 5,
        "packs, unpack, split-K's reduction, scale"
    );
    assert_eq!(count(ptx, "griddepcontrol.launch_dependents"), 0);
}

/// A build the driver's compute cache served prints no ptxas report, so the CUDA
/// backend compiles once more with an empty extra entry point that makes the PTX
/// new to the cache. That entry must change nothing of the kernels' own report.
#[test]
fn an_extra_empty_entry_leaves_the_kernels_ptxas_report_as_it_was() {
    let test = "an_extra_empty_entry_leaves_the_kernels_ptxas_report_as_it_was";
    let Some(n) = nvrtc("13", test) else {
        return;
    };
    use gemmlab::backend::ptxas::parse_ptxas_log;
    for id in ["6", "11", "simt"] {
        let spec = kernels::find(id).unwrap();
        let (config, hints) = (spec.defaults(), Hints::default());
        let options = spec.compile_options(&config, &hints, gemmlab::Toolchain::Cuda);
        let source = spec.source(gemmlab::Toolchain::Cuda);
        let stamped = format!("{source}\nextern \"C\" __global__ void gemmlab_test_entry() {{}}\n");
        let plain = n.compile(id, &source, "sm_90", &options).unwrap();
        let again = n.compile(id, &stamped, "sm_90", &options).unwrap();
        let plain = parse_ptxas_log(&plain.log);
        let mut again = parse_ptxas_log(&again.log);
        assert!(!plain.is_empty(), "{id}: a ptxas report");
        again.retain(|k| k.name != "gemmlab_test_entry");
        assert_eq!(format!("{plain:?}"), format!("{again:?}"), "{id}");
    }
}

/// NVRTC's real PTX of every kernel, made loadable by NVIDIA's OpenCL runtime
/// (`sweep jit`'s NVRTC-PTX-through-OpenCL cell): every 64-bit parameter of a
/// GEMM kernel is a buffer and must be declared one (a plain `.u64` would get a
/// `cl_mem` handle's bits as an address); a PTX that takes shared memory at
/// launch is refused with the reason.
#[test]
fn nvrtc_ptx_of_every_kernel_declares_its_buffers_for_the_opencl_runtime() {
    use gemmlab::backend::ptx_for_opencl::for_opencl_runtime;
    let Some(t) = target("13", "sm_90", "nvrtc_ptx_for_the_opencl_runtime") else {
        return;
    };
    let mut rewritten = 0;
    for spec in kernels::all() {
        let config = spec.defaults();
        if spec
            .unavailable_at(&config, t.device(), &Hints::default())
            .is_some()
        {
            continue;
        }
        let b = compile_kernel(&t, spec, &config, &Hints::default())
            .unwrap_or_else(|e| panic!("{}: {e}", spec.id));
        let ptx = b.ptx().expect("PTX");
        let plain = |l: &&str| l.trim_start().starts_with(".param .u64 ") && !l.contains(".ptr");
        let plain_u64 = ptx.lines().filter(plain).count();
        match for_opencl_runtime(ptx) {
            Ok(r) => {
                assert_eq!(
                    r.buffers, plain_u64,
                    "{}: every 64-bit parameter a buffer",
                    spec.id
                );
                assert_eq!(r.ptx.lines().filter(plain).count(), 0, "{}", spec.id);
                assert!(r.ptx.contains(", texmode_independent"), "{}", spec.id);
                rewritten += 1;
            }
            Err(e) => assert!(
                ptx.contains(".extern .shared") && e.contains("__local"),
                "{}: {e}",
                spec.id
            ),
        }
    }
    assert!(rewritten >= 10, "{rewritten} kernels rewritten");
}
