//! Users' own kernels, described by a spec file (TOML) and run through the same
//! machinery as the built-in GEMMs: the backends, the timing method, the result
//! records, the tuner's strategies and store, the report.
//!
//! A spec names its sources by language (OpenCL C, CUDA C++, or one of them),
//! its compile-time parameters with their allowed values and constraints, its
//! problem dimensions, its arguments (buffers with element type, length, fill and
//! direction; scalars), its launches, its unit of work and its check. Every
//! expression is evaluated by `evalexpr` over the dimensions, parameters and
//! derived values. See the README's "Your own kernels" for the format.
//!
//! ```no_run
//! use gemmlab::spec::{UserKernel, Dims};
//! let k = UserKernel::load(std::path::Path::new("specs/saxpy/saxpy.toml"))?;
//! let dims = k.dims_at(&Dims::from([("n".to_string(), 1 << 20)]))?;
//! let inst = k.instantiate(&k.defaults(), &dims)?;
//! println!("{} launches, {:?} bytes moved", inst.launches.len(), inst.bytes);
//! # Ok::<(), gemmlab::Error>(())
//! ```

pub mod data;
pub mod experiment;
pub mod expr;
mod file;
pub mod model;
pub mod run;

pub use experiment::{
    measure_spec_items, measure_spec_point, references, run_spec_compare, Item, SpecCompare,
};
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
        if crate::kernels::find(&k.id).is_ok() {
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
