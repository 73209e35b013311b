//! The twins are the same experiment and their defaults are the published kernels:
//! each source declares exactly the registry's parameters and switches with the
//! registry's defaults, the two bodies are the same text once OpenCL's spelling is
//! mapped onto CUDA's (as the tutorial's cl_to_cuda.h did), and no switch of ours
//! is on by default.

use std::collections::BTreeMap;

use gemmlab::backend::Language;
use gemmlab::kernel::builtin::{self as kernels, KernelSpec};
use gemmlab::Toolchain;

/// `#ifndef NAME` / `#define NAME VALUE` pairs at the top level of a source.
fn declared(src: &str) -> BTreeMap<String, i64> {
    let lines: Vec<&str> = src.lines().map(str::trim).collect();
    let mut out = BTreeMap::new();
    for w in lines.windows(2) {
        if let Some(name) = w[0].strip_prefix("#ifndef ") {
            let name = name.trim();
            if let Some(rest) = w[1].strip_prefix("#define ") {
                let mut parts = rest.split_whitespace();
                if parts.next() == Some(name) {
                    // A number, or `(OTHER)` naming an earlier declaration
                    // (settings.h: `#define RK (RY)`).
                    let value = parts.next().and_then(|v| {
                        v.parse::<i64>().ok().or_else(|| {
                            let other = v.strip_prefix('(')?.strip_suffix(')')?;
                            out.get(other).copied()
                        })
                    });
                    if let Some(v) = value {
                        out.insert(name.to_string(), v);
                    }
                }
            }
        }
    }
    out
}

/// What the registry says a source must declare.
fn expected(spec: &KernelSpec, tc: Toolchain) -> BTreeMap<String, i64> {
    // The defaults, PRECISION included where the kernel is written for `real`.
    let mut m: BTreeMap<String, i64> = spec.defaults().0;
    for s in spec.switches {
        m.insert(s.name().to_string(), i64::from(s.published(tc)));
    }
    m
}

fn strip_comments(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The entry function's text, comments gone, OpenCL spelled as CUDA, one
/// whitespace-normalised line per source line, blank lines dropped.
fn body(src: &str, entry: &str, opencl: bool) -> Vec<String> {
    let code = strip_comments(src);
    let entry_at = code
        .find(&format!("void {entry}("))
        .unwrap_or_else(|| panic!("no entry {entry}"));
    // CLBlast's kernels: from their first helper function on (the device code
    // the entries call), not only the entries.
    let start = code
        .find("\nINLINE_FUNC ")
        .map_or(entry_at, |i| (i + 1).min(entry_at));
    code[start..]
        .lines()
        .map(|l| {
            let mut l = l.split_whitespace().collect::<Vec<_>>().join(" ");
            if opencl {
                l = l
                    .replace("__global ", "")
                    .replace("__local ", "__shared__ ")
                    .replace("barrier(CLK_LOCAL_MEM_FENCE)", "__syncthreads()")
                    .replace(" restrict ", " __restrict__ ");

                // CLBlast's literal bounds: reqd_work_group_size(X, Y, 1) is __launch_bounds__(X*Y).
                if let Some(dims) = l
                    .strip_prefix("__kernel __attribute__((reqd_work_group_size(")
                    .and_then(|r| r.strip_suffix(", 1)))"))
                {
                    if let Some((x, y)) = dims.split_once(", ") {
                        l = format!("extern \"C\" __global__ __launch_bounds__({x}*{y})");
                    }
                }
                if let Some(rest) = l.strip_prefix("__kernel ") {
                    l = format!("extern \"C\" __global__ {rest}");
                }
            }
            l
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Lines that may differ between the twins: the toolchain's own spelling of the
/// read-only-cache load and the warp shuffle.
fn toolchain_specific(line: &str) -> bool {
    ["gemmlab_shfl", "__shfl_sync"]
        .iter()
        .any(|t| line.contains(t))
}

fn bounds(src: &str) -> Vec<String> {
    strip_comments(src)
        .lines()
        .filter(|l| !l.contains("#define"))
        .filter_map(|l| {
            l.find("GEMMLAB_BOUNDS(")
                .map(|i| l[i..].split(')').next().unwrap_or("").to_string())
        })
        .collect()
}

/// A variant of another kernel's source (simtdirect: SIMT with `SIMT_DIRECT=1`)
/// opens with the `#define`s that select it: those lines, and the rest.
fn variant(src: &str) -> (Vec<&str>, &str) {
    let mut rest = src;
    let mut defines = Vec::new();
    while let Some(r) = rest.strip_prefix("#define ") {
        let end = r.find('\n').map_or(r.len(), |i| i + 1);
        defines.push(r[..end].trim());
        rest = &r[end..];
    }
    (defines, rest)
}

#[test]
fn sources_declare_the_registry_parameters_switches_and_defaults() {
    for spec in kernels::all() {
        for (language, tc) in [
            (Language::OpenClC, Toolchain::OpenCl),
            (Language::CudaCpp, Toolchain::Cuda),
        ] {
            let (defines, src) = variant(spec.source_in(language).unwrap());
            let mut have = declared(src);
            let want = expected(spec, tc);
            if defines.is_empty() {
                // The source also declares its variants' own parameters (simtdirect's
                // ALONG_MN in simt's source), each with the variant's default.
                for v in kernels::all() {
                    let (v_defines, v_src) = variant(v.source_in(language).unwrap());
                    if v_defines.is_empty() || v_src != src {
                        continue;
                    }
                    for (name, value) in expected(v, tc) {
                        if !want.contains_key(&name) && have.get(&name) == Some(&value) {
                            have.remove(&name);
                        }
                    }
                }
                assert_eq!(have, want, "{}: {tc} source vs registry", spec.id);
            } else {
                // A variant uses some of its source's parameters: each it has is
                // declared there with the registry's default.
                for (name, v) in &want {
                    assert_eq!(have.get(name), Some(v), "{}: {tc} {name}", spec.id);
                }
            }
        }
    }
}

#[test]
fn twin_bodies_are_the_same_text() {
    for spec in kernels::all() {
        let cl = body(spec.source_in(Language::OpenClC).unwrap(), spec.entry, true);
        let cu = body(
            spec.source_in(Language::CudaCpp).unwrap(),
            spec.entry,
            false,
        );
        assert_eq!(cl.len(), cu.len(), "{}: bodies differ in length", spec.id);
        for (a, b) in cl.iter().zip(&cu) {
            if a != b {
                assert!(
                    toolchain_specific(a) && toolchain_specific(b),
                    "{}: twins differ:\n  OpenCL: {a}\n  CUDA:   {b}",
                    spec.id
                );
            }
        }
    }
}

#[test]
fn twins_share_launch_bounds_and_entry() {
    for spec in kernels::all() {
        let (cl, cu) = (
            spec.source_in(Language::OpenClC).unwrap(),
            spec.source_in(Language::CudaCpp).unwrap(),
        );
        assert_eq!(bounds(cl), bounds(cu), "{}: launch bounds differ", spec.id);
        match spec.abi {
            // Four entries, each with CLBlast's literal bounds on both sides.
            gemmlab::kernel::builtin::Abi::Direct { entries } => {
                let count = |s: &str, pat: &str| strip_comments(s).matches(pat).count();
                assert_eq!(
                    count(cl, "reqd_work_group_size("),
                    entries.len(),
                    "{}",
                    spec.id
                );
                assert_eq!(
                    count(cu, "__launch_bounds__("),
                    entries.len(),
                    "{}",
                    spec.id
                );
            }
            _ => assert_eq!(bounds(cl).len(), 1, "{}: one bounded entry", spec.id),
        }
        assert!(
            variant(cl).1.starts_with("//") && variant(cu).1.starts_with("//"),
            "{}: each source opens with its header comment",
            spec.id
        );
    }
}

/// The published state, written out by hand from the tutorial's kernels.cl and
/// cuGEMM.cu: which switches are on by default. None of ours is.
#[test]
fn published_defaults_are_pinned() {
    // (kernel, on in the OpenCL default, on in the CUDA default)
    let pinned: &[(&str, &[&str], &[&str])] = &[
        ("gemm1", &[], &[]),
        ("gemm2", &[], &[]),
        ("gemm3", &[], &[]),
        ("gemm4", &[], &[]),
        ("gemm5", &[], &[]),
        ("gemm6", &[], &[]),
        ("gemm7", &["UNROLL_K"], &["UNROLL_K"]),
        ("gemm8", &["UNROLL_K"], &["UNROLL_K", "USE_LDG"]),
        ("gemm9", &["UNROLL_K"], &["UNROLL_K", "USE_LDG"]),
        ("gemm10", &["UNROLL_K"], &["UNROLL_K", "USE_LDG"]),
        (
            "gemm11",
            &["USE_RESTRICT", "UNROLL_K"],
            &["USE_RESTRICT", "UNROLL_K"],
        ),
        // CLBlast's kernels carry reqd_work_group_size and restrict as published.
        (
            "xgemm",
            &["USE_BOUNDS", "USE_RESTRICT"],
            &["USE_BOUNDS", "USE_RESTRICT"],
        ),
        ("xgemmdirect", &[], &[]),
        // The lecture's kernels carry reqd_work_group_size(BLOCK_SIZE, BLOCK_SIZE, 1).
        ("lecture_naive", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        ("lecture_at", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        ("lecture_bt", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        ("lecture_bt_vec", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        ("lecture_tiled", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        ("lecture_prefetch", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        ("lecture_wide", &["USE_BOUNDS"], &["USE_BOUNDS"]),
        // gemmlab's own kernel: its defaults are its design (cp.async and padding off).
        (
            "simt",
            &["USE_BOUNDS", "USE_RESTRICT", "VEC_LOADS", "RASTER"],
            &["USE_BOUNDS", "USE_RESTRICT", "VEC_LOADS", "RASTER"],
        ),
        (
            "simtdirect",
            &["USE_BOUNDS", "USE_RESTRICT", "VEC_LOADS", "RASTER"],
            &["USE_BOUNDS", "USE_RESTRICT", "VEC_LOADS", "RASTER"],
        ),
        // The kernel for thin calls: bounds, restrict and wide loads by design.
        (
            "thin",
            &["USE_BOUNDS", "USE_RESTRICT", "VEC_LOADS"],
            &["USE_BOUNDS", "USE_RESTRICT", "VEC_LOADS"],
        ),
        // The tensor-core kernel: 3xTF32 promoted into FP32 accumulators (FP32 accuracy)
        // unless TF32_SINGLE or PROMOTE_ACC=0 is asked for.
        (
            "tc",
            &["USE_BOUNDS", "USE_RESTRICT", "PROMOTE_ACC"],
            &["USE_BOUNDS", "USE_RESTRICT", "PROMOTE_ACC"],
        ),
        // Its wgmma kernel: the same published state.
        (
            "tcwg",
            &["USE_BOUNDS", "USE_RESTRICT", "PROMOTE_ACC"],
            &["USE_BOUNDS", "USE_RESTRICT", "PROMOTE_ACC"],
        ),
    ];
    assert_eq!(pinned.len(), kernels::all().len());
    for (id, cl_on, cu_on) in pinned {
        let spec = kernels::find(id).unwrap();
        for (tc, want) in [(Toolchain::OpenCl, cl_on), (Toolchain::Cuda, cu_on)] {
            let on: Vec<&str> = spec
                .switches
                .iter()
                .filter(|s| s.published(tc))
                .map(|s| s.name())
                .collect();
            assert_eq!(&on, want, "{id} on {tc}");
        }
        // Our additions: never on by default (CLBlast's and the lecture's kernels declare bounds).
        for s in spec.switches {
            let ours: &[&str] = if spec.family != gemmlab::kernel::builtin::Family::Tutorial {
                &["VOLATILE_IDX", "USE_SHUFFLE", "UNROLL_WPT"]
            } else {
                &["USE_BOUNDS", "VOLATILE_IDX", "USE_SHUFFLE", "UNROLL_WPT"]
            };
            if ours.contains(&s.name()) {
                assert!(
                    !s.published_opencl && !s.published_cuda,
                    "{id} {}",
                    s.name()
                );
            }
        }
        // Defaults compile to the published kernel: every switch at its published value.
        let o = spec.compile_options(&spec.defaults(), &Default::default(), Toolchain::Cuda);
        for s in spec.switches {
            let want = u8::from(s.published(Toolchain::Cuda)).to_string();
            assert!(
                o.defines.contains(&(s.name().to_string(), want)),
                "{id}: {} not passed at its published value",
                s.name()
            );
        }
    }
}

#[test]
fn the_geometry_matches_the_tutorial_table() {
    // (kernel, local, elements per work-item) at the defaults.
    type Expected = (&'static str, (usize, usize), (usize, usize));
    let expect: &[Expected] = &[
        ("gemm1", (32, 32), (32 * 4, 32 * 4)),
        ("gemm3", (32, 4), (32 * 4, 32 * 4 / 8)),
        ("gemm4", (8, 32), (32 * 4 / 4, 32 * 4)),
        ("gemm6", (16, 16), (128 * 4 / 8, 128 * 4 / 8)),
        ("gemm11", (8, 8), (64 * 4 / 8, 32 * 4 / 4)),
    ];
    for (id, local, global) in expect {
        let spec = kernels::find(id).unwrap();
        let c = spec.defaults();
        let (tm, tn, _) = spec.tile(&c);
        let g = spec.geometry(&c, tm * 4, tn * 4);
        assert_eq!((g.local[0], g.local[1]), *local, "{id} local");
        assert_eq!((g.global[0], g.global[1]), *global, "{id} global");
    }
}
