//! The PTX instruction counter on PTX captured on the H200 from both toolchains
//! (NVRTC 13.0 and NVIDIA OpenCL, driver 580.159.04). Expected counts were
//! taken with grep from the same files.

use gemmlab::backend::ptx::{diff, instruction_mix};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/h200/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn kernel_6_has_the_same_mix_in_both_toolchains() {
    for f in ["gemm6-cuda.ptx", "gemm6-opencl.ptx"] {
        let m = instruction_mix(&fixture(f));
        // 16x16 work-items, 8x8 accumulators each, TSK=16: 8*8*16 = 1024 FMAs per tile.
        assert_eq!(m.fma, 1024, "{f}");
        assert_eq!(m.ld_global_total(), 16, "{f}");
        assert_eq!(m.ld_shared, 256, "{f}");
        assert_eq!(m.st_shared, 16, "{f}");
        assert_eq!(m.barriers, 2, "{f}");
        assert_eq!(m.st_global, 64, "{f}");
        assert_eq!(m.ld_local + m.st_local, 0, "{f}");
    }
}

#[test]
fn kernel_11_loads_float8_as_vectors_in_opencl_and_as_scalars_in_cuda() {
    let cl = instruction_mix(&fixture("gemm11-opencl.ptx"));
    let cu = instruction_mix(&fixture("gemm11-cuda.ptx"));
    assert_eq!((cl.fma, cu.fma), (128, 128));
    // OpenCL's float8 becomes two 128-bit loads; the CUDA twin's 8-float struct, 8 scalar loads.
    assert_eq!(cl.ld_global.get(&128), Some(&12));
    assert_eq!(cl.ld_global_total(), 12);
    assert_eq!(cu.ld_global.get(&128), Some(&4));
    assert_eq!(cu.ld_global.get(&32), Some(&32));
    assert_eq!((cl.st_global, cu.st_global), (8, 32));
}

#[test]
fn the_diff_of_the_twins_is_small_for_kernel_6_and_not_for_kernel_11() {
    let d6 = diff(
        "cuda",
        &fixture("gemm6-cuda.ptx"),
        "opencl",
        &fixture("gemm6-opencl.ptx"),
        0,
    );
    let d11 = diff(
        "cuda",
        &fixture("gemm11-cuda.ptx"),
        "opencl",
        &fixture("gemm11-opencl.ptx"),
        0,
    );
    let changed = |d: &str| {
        d.lines()
            .filter(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("+++")
                    && !l.starts_with("---")
            })
            .count()
    };
    assert!(changed(&d11) > 0);
    assert!(d11.contains("ld.global.nc.v4.f32"));
    assert!(
        changed(&d6) < changed(&d11) * 20,
        "kernel 6 diff unexpectedly large"
    );
}
