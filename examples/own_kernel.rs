//! Your own kernel from Rust (the example in docs/src/specs.md): a spec file loaded, one
//! configuration measured at two sizes on the best OpenCL device, then the same
//! kernel described in code instead of a file.
//!
//! cargo run --example own_kernel

use gemmlab::kernel::user::{Dims, UserKernel};
use gemmlab::{open_spec, Toolchain};

/// A spec written in code: TOML text, sources relative to `dir`.
const SCALE: &str = r#"
id = "scale"
title = "y = 2 x"
[sources]
opencl = "scale.cl"
[dims]
n = 4096
[[args]]
name = "x"
type = "f32"
len = "n"
access = "in"
[[args]]
name = "y"
type = "f32"
len = "n"
access = "out"
[[launches]]
entry = "scale"
global = ["n"]
local = ["64"]
[work]
bytes = "8 * n"
[check]
reference = "launches"
exact = true
[[check.launches]]
entry = "scale_ref"
global = ["n"]
local = ["1"]
"#;

const SCALE_CL: &str = "__kernel void scale(__global const float* x, __global float* y) {
    y[get_global_id(0)] = 2.0f * x[get_global_id(0)];
}
__kernel void scale_ref(__global const float* x, __global float* y) {
    y[get_global_id(0)] = x[get_global_id(0)] + x[get_global_id(0)];
}
";

fn main() -> gemmlab::Result<()> {
    let saxpy = UserKernel::load("specs/saxpy/saxpy.toml".as_ref())?;
    for n in [1 << 16, 1 << 20] {
        let backend = open_spec("opencl", &[Toolchain::OpenCl])?
            .into_iter()
            .next()
            .ok_or_else(|| gemmlab::Error::invalid("no OpenCL device"))?;
        let dims = saxpy.dims_at(&Dims::from([("n".to_string(), n)]))?;
        let row =
            gemmlab::experiment::measure_on(backend, &saxpy, &saxpy.defaults(), &dims, 10, 1)?;
        println!(
            "{} at n={n} on {}: {} {:.1} GB/s",
            saxpy.id,
            row.device,
            row.status.label(),
            row.gbs.unwrap_or(0.0)
        );
    }

    // The same machinery for a kernel described in code.
    let dir = std::env::temp_dir().join("gemmlab-own-kernel");
    std::fs::create_dir_all(&dir).map_err(|e| gemmlab::Error::io(&dir, e))?;
    std::fs::write(dir.join("scale.cl"), SCALE_CL).map_err(|e| gemmlab::Error::io(&dir, e))?;
    let scale = UserKernel::from_toml(&dir.join("scale.toml"), SCALE)?;
    let backend = open_spec("opencl", &[Toolchain::OpenCl])?.remove(0);
    let dims = scale.dims_at(&Dims::new())?;
    let row = gemmlab::experiment::measure_on(backend, &scale, &scale.defaults(), &dims, 10, 1)?;
    println!(
        "{} at n=4096: {} {:.1} GB/s",
        scale.id,
        row.status.label(),
        row.gbs.unwrap_or(0.0)
    );
    Ok(())
}
