//! The CUDA backend. Skips visibly without a GPU; fails instead under GEMMLAB_REQUIRE_CUDA=1.
#![cfg(feature = "cuda")]

mod common;

use gemmlab::{
    Arg, Backend, CompileOptions, Elem, Error, GemmCall, Geometry, HostData, HostDataMut, HostVec,
};

const AXPY: &str = r#"
extern "C" __global__ void axpy(const int n, const float a, const float* x, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x + (blockIdx.y * blockDim.y + threadIdx.y) * gridDim.x * blockDim.x;
    if (i < n) { y[i] = a * x[i] + y[i] + SHIFT; }
}
"#;

/// Many live values and a run-time indexed array: spills under a low register cap.
const PRESSURE: &str = r#"
extern "C" __global__ void pressure(const float* x, float* y, const int n) {
    float acc[48];
    #pragma unroll
    for (int i = 0; i < 48; i++) acc[i] = x[(threadIdx.x + i * 7) % n];
    for (int r = 0; r < 64; r++) {
        #pragma unroll
        for (int i = 0; i < 48; i++) acc[i] = acc[i] * acc[(i + 1) % 48] + x[(r + i) % n];
    }
    float s = 0.0f;
    #pragma unroll
    for (int i = 0; i < 48; i++) s += acc[i];
    y[threadIdx.x] = s;
}
"#;

#[test]
fn cuda_compiles_launches_and_every_value_is_right() {
    let Some(mut b) = common::cuda("cuda_compiles_launches_and_every_value_is_right") else {
        return;
    };
    let info = b.info().clone();
    assert!(info.compute_capability.is_some());
    let (prog, report) = b
        .compile("axpy", AXPY, &CompileOptions::new().define("SHIFT", "0.5f"))
        .unwrap();
    let k = report.kernel("axpy").expect("axpy resources");
    assert!(k.registers.is_some_and(|r| r > 0), "{k:?}");
    assert_eq!(k.spill_stores_bytes, Some(0), "{}", report.log);
    assert!(report
        .ptx
        .as_deref()
        .is_some_and(|p| p.contains(".entry axpy")));
    assert!(
        report.notes.is_empty(),
        "log and cuFuncGetAttribute disagree: {:?}",
        report.notes
    );

    let n = 1000usize;
    let x = common::random(n, 1);
    let y0 = common::random(n, 2);
    let bx = b.alloc(Elem::F32, n).unwrap();
    let by = b.alloc(Elem::F32, n).unwrap();
    b.upload(&bx, HostData::F32(&x)).unwrap();
    b.upload(&by, HostData::F32(&y0)).unwrap();
    let ns = b
        .launch(
            &prog,
            "axpy",
            &Geometry::d2((32, 32), (32, 1)),
            &[
                Arg::I32(n as i32),
                Arg::F32(2.0),
                Arg::Buf(bx),
                Arg::Buf(by),
            ],
        )
        .unwrap();
    assert!(ns > 0);
    let mut y = vec![f32::NAN; n];
    b.download(&by, HostDataMut::F32(&mut y)).unwrap();
    for i in 0..n {
        let want = 2.0 * x[i] + y0[i] + 0.5;
        assert!(
            (y[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
            "y[{i}] = {} want {want}",
            y[i]
        );
    }
}

#[test]
fn cuda_register_cap_causes_spills_and_log_matches_api() {
    let Some(mut b) = common::cuda("cuda_register_cap_causes_spills_and_log_matches_api") else {
        return;
    };
    let free = b
        .compile("pressure", PRESSURE, &CompileOptions::new())
        .unwrap()
        .1;
    let capped = b
        .compile(
            "pressure",
            PRESSURE,
            &CompileOptions {
                max_registers: Some(24),
                ..CompileOptions::new()
            },
        )
        .unwrap()
        .1;
    let f = free.kernel("pressure").unwrap();
    let c = capped.kernel("pressure").unwrap();
    assert!(c.registers.unwrap() <= 24, "cap not applied: {c:?}");
    assert!(
        c.spill_stores_bytes.unwrap() > 0 || c.stack_frame_bytes.unwrap() > 0,
        "no spills at cap 24: {}",
        capped.log
    );
    assert!(f.registers.unwrap() > c.registers.unwrap());
    assert!(capped.notes.is_empty(), "{:?}", capped.notes);
}

#[test]
fn cuda_compile_error_carries_the_log() {
    let Some(mut b) = common::cuda("cuda_compile_error_carries_the_log") else {
        return;
    };
    let bad = "extern \"C\" __global__ void broken(float* y) { y[0] = undeclared_thing; }";
    match b.compile("broken", bad, &CompileOptions::new()) {
        Err(Error::Compile { log, .. }) => assert!(log.contains("undeclared_thing"), "{log}"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

#[test]
fn cublas_sgemm_is_measured_and_right() {
    let Some(mut b) = common::cuda("cublas_sgemm_is_measured_and_right") else {
        return;
    };
    let (m, n, k) = (64, 48, 32);
    let a = common::random(m * k, 3);
    let bb = common::random(k * n, 4);
    let (da, db, dc) = (
        b.alloc(Elem::F32, m * k).unwrap(),
        b.alloc(Elem::F32, k * n).unwrap(),
        b.alloc(Elem::F32, m * n).unwrap(),
    );
    b.upload(&da, HostData::F32(&a)).unwrap();
    b.upload(&db, HostData::F32(&bb)).unwrap();
    b.fill(&dc, f64::NAN).unwrap();
    let t = b
        .vendor_gemm(&GemmCall::plain(m, n, k, da, db, dc), 1)
        .unwrap();
    assert!(t.is_some_and(|t| t > 0));
    assert!(b.vendor_blas().is_some_and(|v| v.starts_with("cuBLAS")));
    let mut c = vec![0.0f32; m * n];
    b.download(&dc, HostDataMut::F32(&mut c)).unwrap();
    for j in 0..n {
        for i in 0..m {
            let want: f64 = (0..k)
                .map(|p| a[p * m + i] as f64 * bb[j * k + p] as f64)
                .sum();
            assert!((c[j * m + i] as f64 - want).abs() < 1e-4, "C({i},{j})");
        }
    }
}

#[test]
fn cublas_dgemm_batches_and_memory_info() {
    let Some(mut b) = common::cuda("cublas_dgemm_batches_and_memory_info") else {
        return;
    };
    let (m, n, k) = (33, 20, 17);
    let a: Vec<f64> = common::random(m * k, 5).iter().map(|&x| x as f64).collect();
    let bb: Vec<f64> = common::random(k * n, 6).iter().map(|&x| x as f64).collect();
    let (da, db, dc) = (
        b.alloc(Elem::F64, m * k).unwrap(),
        b.alloc(Elem::F64, k * n).unwrap(),
        b.alloc(Elem::F64, m * n).unwrap(),
    );
    b.upload(&da, HostData::F64(&a)).unwrap();
    b.upload(&db, HostData::F64(&bb)).unwrap();
    b.fill(&dc, f64::NAN).unwrap();
    let mut poisoned = vec![0.0f64; m * n];
    b.download(&dc, HostDataMut::F64(&mut poisoned)).unwrap();
    assert!(poisoned.iter().all(|v| v.is_nan()), "f64 poison is NaN");
    b.vendor_gemm(&GemmCall::plain(m, n, k, da, db, dc), 1)
        .unwrap()
        .unwrap();
    let mut c = vec![0.0f64; m * n];
    b.download(&dc, HostDataMut::F64(&mut c)).unwrap();
    for j in 0..n {
        for i in 0..m {
            let want: f64 = (0..k).map(|p| a[p * m + i] * bb[j * k + p]).sum();
            assert!((c[j * m + i] - want).abs() < 1e-12, "C({i},{j})");
        }
    }
    // A batch really runs its launches: at 512^3 (about 12 us each on an H200, well
    // past the event overhead that dominates a tiny DGEMM) ten take longer than one.
    let s = 512;
    let big: Vec<f64> = common::random(s * s, 7).iter().map(|&x| x as f64).collect();
    let bufs: Vec<_> = (0..3).map(|_| b.alloc(Elem::F64, s * s).unwrap()).collect();
    b.upload(&bufs[0], HostData::F64(&big)).unwrap();
    b.upload(&bufs[1], HostData::F64(&big)).unwrap();
    let mut time = |n| {
        b.vendor_gemm(&GemmCall::plain(s, s, s, bufs[0], bufs[1], bufs[2]), n)
            .unwrap()
            .unwrap()
    };
    time(1); // warm-up: cuBLAS picks its kernel on the first call
    let one = time(1);
    let ten = time(10);
    // (One call also carries ~10 us of event and launch overhead, ten share it.)
    assert!(ten > 2 * one, "ten DGEMMs {ten} ns, one {one} ns");
    let (free, total) = b.memory_info().expect("CUDA reports free memory");
    assert!(free > 0 && free <= total);
}

#[test]
fn cuda_out_of_memory_is_an_error() {
    let Some(mut b) = common::cuda("cuda_out_of_memory_is_an_error") else {
        return;
    };
    let huge = usize::MAX / 16;
    match b.alloc(Elem::F32, huge) {
        Err(Error::OutOfMemory { .. }) | Err(Error::Api { .. }) => {}
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("allocated {huge} floats"),
    }
}

/// A tuner downloads each result into one page-locked host buffer: every value
/// lands, the buffer is reused, and it outlives the backend that made it.
#[test]
fn cuda_downloads_into_page_locked_host_memory() {
    let Some(mut be) = common::cuda("cuda_downloads_into_page_locked_host_memory") else {
        return;
    };
    let n = 3 << 20;
    let mut host = be.host_f32(n);
    assert!(
        matches!(host, HostVec::Locked(_)),
        "a {n}-element buffer is page-locked"
    );
    assert!(host.as_slice().iter().all(|&v| v == 0.0));
    let buf = be.alloc(Elem::F32, n).unwrap();
    for seed in [1, 2] {
        let x = common::random(n, seed);
        be.upload(&buf, HostData::F32(&x)).unwrap();
        be.download(&buf, HostDataMut::F32(host.as_mut_slice()))
            .unwrap();
        assert_eq!(host.as_slice(), &x[..], "seed {seed}");
    }
    assert!(matches!(be.host_f32(1000), HostVec::Plain(_)));
    be.free(buf);
    // f64 too (a DGEMM search's C): every value lands.
    let mut host64 = be.host_f64(n);
    assert!(matches!(host64, HostVec::Locked(_)));
    let x: Vec<f64> = common::random(n, 3)
        .iter()
        .map(|&v| f64::from(v) / 3.0)
        .collect();
    let buf = be.alloc(Elem::F64, n).unwrap();
    be.upload(&buf, HostData::F64(&x)).unwrap();
    be.download(&buf, HostDataMut::F64(host64.as_mut_slice()))
        .unwrap();
    assert_eq!(host64.as_slice(), &x[..]);
    be.free(buf);
    drop(be);
    // Its context reference keeps the memory valid after the backend is gone.
    assert_eq!(host.len(), n);
    host.as_mut_slice()[n - 1] = 1.0;
    drop(host);
}

/// NVIDIA's OpenCL does not say the memory bandwidth; the routine's cost model
/// takes it from NVML for the same GPU, and it must agree with the CUDA driver's.
#[test]
fn nvidia_opencl_is_modelled_with_the_bandwidth_the_cuda_driver_reports() {
    let test = "nvidia_opencl_is_modelled_with_the_bandwidth_the_cuda_driver_reports";
    let Some(cuda) = common::cuda(test) else {
        return;
    };
    let Some(cuda_gbs) = cuda.info().memory_bandwidth_gbs else {
        panic!(
            "the CUDA driver gave no memory bandwidth: {:?}",
            cuda.info()
        );
    };
    let opencl = match gemmlab::open_spec("nvidia", &[gemmlab::Toolchain::OpenCl]) {
        Ok(mut v) if !v.is_empty() => v.remove(0),
        _ => {
            common::say(&format!("SKIPPED {test}: no NVIDIA OpenCL device"));
            return;
        }
    };
    let session = gemmlab::gemm::driver::Session::new(opencl);
    let info = gemmlab::routine::fit::model_device(&session, &[]);
    let gbs = info
        .memory_bandwidth_gbs
        .unwrap_or_else(|| panic!("no bandwidth for NVIDIA OpenCL through NVML: {info:?}"));
    assert!(
        (gbs / cuda_gbs - 1.0).abs() < 0.02,
        "NVML {gbs} GB/s against the CUDA driver's {cuda_gbs}"
    );
}
