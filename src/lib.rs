//! gemmlab: the same GEMM kernels through OpenCL and CUDA (NVRTC) on one
//! device, and what each compiler does with them.

pub mod analysis;
pub mod backend;
pub mod error;

pub use backend::nvrtc::{Arch, Nvrtc};
pub use backend::select::{open, open_spec, open_with, resolve, DeviceSpec, Inventory};
pub use backend::{
    AnyBackend, Arg, Backend, Buffer, BuildReport, CompileOptions, Compiler, DeviceInfo,
    DeviceKind, Elem, GemmCall, Geometry, HostData, HostDataMut, HostF32, HostF64, HostVec,
    KernelResources, Language, Program, Toolchain,
};
pub use error::{Error, Result};
pub use gemm::problem::{Layout, Precision, Problem, Trans};
pub mod experiment;
pub mod gemm;
pub mod kernel;
pub mod measure;
pub use backend::occupancy;
pub mod plot;
pub mod report;
pub mod results;
pub mod routine;
pub mod tune;
pub mod util;
