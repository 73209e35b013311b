//! The ptxas-log parser on real build logs captured on the H200 (tests/fixtures/h200,
//! written by `gemmlab build --out`): NVIDIA OpenCL's `-cl-nv-verbose` log and NVRTC's
//! `--ptxas-options=-v` log.

use gemmlab::backend::ptxas::parse_ptxas_log;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/h200/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn nvrtc_log_of_kernel_6() {
    let log = fixture("gemm6-cuda.log");
    assert!(log.contains("for 'sm_90'"));
    let k = parse_ptxas_log(&log);
    assert_eq!(k.len(), 1);
    assert_eq!(k[0].name, "myGEMM6");
    assert_eq!(k[0].registers, Some(188));
    assert_eq!(k[0].barriers, Some(1));
    assert_eq!(k[0].shared_bytes, Some(17408));
    assert_eq!(
        (
            k[0].stack_frame_bytes,
            k[0].spill_stores_bytes,
            k[0].spill_loads_bytes
        ),
        (Some(0), Some(0), Some(0))
    );
}

#[test]
fn nvidia_opencl_log_of_kernel_6() {
    let log = fixture("gemm6-opencl.log");
    // NVIDIA OpenCL compiles for the arch-specific target and prints a driver warning first.
    assert!(log.contains("for 'sm_90a'"));
    let k = parse_ptxas_log(&log);
    assert_eq!(k.len(), 1);
    assert_eq!(k[0].name, "myGEMM6");
    assert_eq!(k[0].registers, Some(128));
    assert_eq!(k[0].shared_bytes, Some(17412));
    assert_eq!(k[0].spill_stores_bytes, Some(0));
}

#[test]
fn clblas_kernel_in_both_logs() {
    let cu = parse_ptxas_log(&fixture("gemm11-cuda.log"));
    let cl = parse_ptxas_log(&fixture("gemm11-opencl.log"));
    assert_eq!(cu[0].registers, Some(78));
    assert_eq!(cl[0].registers, Some(80));
    assert_eq!(cu[0].shared_bytes, Some(0));
    assert_eq!(cl[0].barriers, Some(0));
}

#[test]
fn register_capped_logs() {
    let cu = parse_ptxas_log(&fixture("gemm6-cuda-cap24.log"));
    assert_eq!(cu[0].registers, Some(128));
    let cu11 = parse_ptxas_log(&fixture("gemm11-cuda-cap24.log"));
    assert_eq!(cu11[0].registers, Some(72));
}

#[test]
fn spilling_kernel_under_a_register_cap() {
    // Kernel 6 without launch bounds, capped at 32 registers: both compilers spill.
    let cu = parse_ptxas_log(&fixture("gemm6-nobounds-cuda-cap32.log"));
    assert_eq!(cu[0].registers, Some(32));
    assert_eq!(cu[0].stack_frame_bytes, Some(1176));
    assert_eq!(cu[0].spill_stores_bytes, Some(4424));
    assert_eq!(cu[0].spill_loads_bytes, Some(4420));
    let cl = parse_ptxas_log(&fixture("gemm6-nobounds-opencl-cap32.log"));
    assert_eq!(cl[0].registers, Some(32));
    assert_eq!(cl[0].stack_frame_bytes, Some(1936));
    assert_eq!(
        (cl[0].spill_stores_bytes, cl[0].spill_loads_bytes),
        (Some(5324), Some(5324))
    );
    let cu24 = parse_ptxas_log(&fixture("gemm6-nobounds-cuda-cap24.log"));
    assert_eq!(cu24[0].registers, Some(24));
    assert_eq!(
        (cu24[0].spill_stores_bytes, cu24[0].spill_loads_bytes),
        (Some(6296), Some(6376))
    );
    let cl24 = parse_ptxas_log(&fixture("gemm6-nobounds-opencl-cap24.log"));
    assert_eq!(
        (cl24[0].registers, cl24[0].spill_stores_bytes),
        (Some(24), Some(6340))
    );
}
