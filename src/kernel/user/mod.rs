//! Users' own kernels, described by a spec file (TOML) and run through the same
//! machinery as the built-in GEMMs: the backends, the timing method, the result
//! records, the tuner's strategies and store, the report.
//!
//! A spec names its sources by language (OpenCL C, CUDA C++, or one of them),
//! its compile-time parameters with their allowed values and constraints, its
//! problem dimensions, its arguments (buffers with element type, length, fill and
//! direction; scalars), its launches, its unit of work and its check. Every
//! expression is evaluated by `evalexpr` over the dimensions, parameters and
//! derived values. See docs/src/specs.md ("Your own kernels") for the format.
//!
//! From Rust: load a spec (or build one with `UserKernel::from_toml`), pick a
//! configuration and a size, and measure it on any backend with
//! `experiment::measure_on`. The call below compiles the kernel, computes its
//! reference, runs it once on poisoned outputs, checks every output and times
//! it: a row as `compare` writes it.
//!
//! ```
//! use gemmlab::experiment;
//! use gemmlab::kernel::user::{Dims, UserKernel};
//! use gemmlab::{open_spec, Toolchain};
//!
//! let kernel = UserKernel::load("specs/saxpy/saxpy.toml".as_ref())?;
//! let Ok(mut devices) = open_spec("opencl", &[Toolchain::OpenCl]) else {
//!     eprintln!("skipped: no OpenCL device (install PoCL: pocl-opencl-icd)");
//!     return Ok(());
//! };
//! let dims = kernel.dims_at(&Dims::from([("n".to_string(), 1 << 16)]))?;
//! let config = kernel.config(&[("WPT".to_string(), 2)])?;
//! let row = experiment::measure_on(devices.remove(0), &kernel, &config, &dims, 5, 1)?;
//! assert!(row.status.is_ok(), "{:?}", row.status);
//! println!("saxpy: {:.1} GB/s, checked: {:?}", row.gbs.unwrap_or(0.0), row.check);
//! # Ok::<(), gemmlab::Error>(())
//! ```

pub mod expr;
mod file;
pub mod model;

pub use model::{parse_dim_points, Dims, Instance, Tolerance, UserKernel};

/// Loads every spec file given and keeps it for the rest of the process (the
/// kernel model's references are `'static`, as the registry's are).
pub fn load_static(paths: &[std::path::PathBuf]) -> crate::Result<Vec<&'static UserKernel>> {
    Ok(load_all(paths)?
        .into_iter()
        .map(|k| &*Box::leak(Box::new(k)))
        .collect())
}

/// Loads every spec file given (`--spec FILE`, repeatable); two specs with one id are an error.
pub fn load_all(paths: &[std::path::PathBuf]) -> crate::Result<Vec<UserKernel>> {
    let mut out: Vec<UserKernel> = Vec::new();
    for p in paths {
        let k = UserKernel::load(p)?;
        if let Some(prev) = out.iter().find(|o| o.id == k.id) {
            return Err(crate::Error::Spec {
                path: p.clone(),
                line: None,
                message: format!("id '{}' is also the id of {}", k.id, prev.path.display()),
            });
        }
        if crate::kernel::builtin::find(&k.id).is_ok() {
            return Err(crate::Error::Spec {
                path: p.clone(),
                line: None,
                message: format!("id '{}' is a built-in kernel's: choose another", k.id),
            });
        }
        out.push(k);
    }
    Ok(out)
}

/// Compile options for a configuration: every parameter as a define, the hints'
/// register cap and fast math (user kernels have no source switches).
pub fn compile_options(
    config: &crate::kernel::builtin::Config,
    hints: &crate::kernel::builtin::Hints,
) -> crate::backend::CompileOptions {
    let mut o = crate::backend::CompileOptions::new();
    for (k, v) in &config.0 {
        o.defines.push((k.clone(), v.to_string()));
    }
    o.max_registers = hints.max_registers;
    o.fast_math = hints.fast_math;
    o.arg_info = true;
    o
}
