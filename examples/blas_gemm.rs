//! The GEMM routine from Rust (the example in docs/src/routine.md): row-major f64,
//! C = 2 A B^T - C on the best OpenCL device.
//!
//! cargo run --example blas_gemm

use gemmlab::gemm::driver::Session;
use gemmlab::routine::Gemm;
use gemmlab::{open_spec, Layout, Precision, Problem, Toolchain, Trans};

fn main() -> gemmlab::Result<()> {
    let backend = open_spec("opencl", &[Toolchain::OpenCl])?
        .into_iter()
        .next()
        .ok_or_else(|| gemmlab::Error::invalid("no OpenCL device"))?;
    let mut session = Session::new(backend);
    let mut gemm = Gemm::published()?; // or Gemm::tuned(&database, toolchain)

    // f32 in FP32 arithmetic, the default (true: 3xTF32 where tuned faster).
    gemm.fp32_emulation = false;
    // Row-major C (3 x 2) = 2 A B^T - C, in f64.
    let p = Problem {
        layout: Layout::RowMajor,
        trans_b: Trans::T,
        alpha: 2.0,
        beta: -1.0,
        precision: Precision::F64,
        ..Problem::plain(3, 2, 4)
    }
    .tight(); // smallest legal leading dimensions
    let a: Vec<f64> = (0..12).map(f64::from).collect(); // A: 3 x 4
    let b = vec![0.5f64; 8]; // B^T stored: 2 x 4
    let mut c = vec![1.0f64; 6];
    let run = gemm.run_host(&mut session, &p, &a, &b, &mut c)?; // or gemm.run on device buffers
    println!("{:?} kernel, {} ns", run.path, run.total_ns());
    println!("C = {c:?}");
    gemm.release(&session);
    Ok(())
}
