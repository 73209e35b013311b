//! The twins are the same experiment: each source declares exactly the registry's
//! parameters with the registry's defaults, in both toolchains, with the same
//! launch-bound geometry and the same unroll hints.

use std::collections::BTreeMap;

use gemmlab::kernels;

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
                    if let Some(Ok(v)) = parts.next().map(str::parse::<i64>) {
                        out.insert(name.to_string(), v);
                    }
                }
            }
        }
    }
    out
}

fn bounds(src: &str) -> Vec<String> {
    src.lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.contains("#define"))
        .filter_map(|l| {
            l.find("GEMMLAB_BOUNDS(")
                .map(|i| l[i..].split(')').next().unwrap_or("").to_string())
        })
        .collect()
}

fn count(src: &str, what: &str) -> usize {
    src.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.matches(what).count())
        .sum()
}

#[test]
fn twins_declare_the_registry_parameters_and_defaults() {
    for spec in kernels::all() {
        let registry: BTreeMap<String, i64> = spec
            .params
            .iter()
            .map(|p| (p.name.to_string(), p.default))
            .collect();
        let cl = declared(spec.opencl_source);
        let cu = declared(spec.cuda_source);
        assert_eq!(cl, registry, "{}: OpenCL source vs registry", spec.id);
        assert_eq!(cu, registry, "{}: CUDA source vs registry", spec.id);
    }
}

#[test]
fn twins_share_geometry_hints_and_entry() {
    for spec in kernels::all() {
        let (cl, cu) = (spec.opencl_source, spec.cuda_source);
        assert_eq!(bounds(cl), bounds(cu), "{}: launch bounds differ", spec.id);
        assert_eq!(
            bounds(cl).len(),
            1,
            "{}: exactly one bounded entry",
            spec.id
        );
        assert_eq!(
            count(cl, "GEMMLAB_UNROLL"),
            count(cu, "GEMMLAB_UNROLL"),
            "{}: unroll hints differ",
            spec.id
        );
        assert_eq!(
            count(cl, "GEMMLAB_IDX_QUALIFIER"),
            count(cu, "GEMMLAB_IDX_QUALIFIER"),
            "{}: volatile index differs",
            spec.id
        );
        assert!(
            cl.contains(&format!("void {}(", spec.entry)),
            "{}: OpenCL entry",
            spec.id
        );
        assert!(
            cu.contains(&format!("void {}(", spec.entry))
                || cu.contains(&format!("{}(", spec.entry)),
            "{}: CUDA entry",
            spec.id
        );
        assert!(
            cl.starts_with("//") && cu.starts_with("//"),
            "{}: each source opens with its header comment",
            spec.id
        );
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
