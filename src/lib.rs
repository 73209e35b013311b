//! gemmlab: the same GEMM kernels through OpenCL and CUDA (NVRTC) on one
//! device, and what each compiler does with them.

pub mod accuracy;
pub mod analysis;
pub mod atlas;
pub mod attribution;
pub mod backend;
pub mod bests;
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
pub mod clocks;
pub mod experiment;
pub mod gemm;
pub mod kernel;
pub mod kernels;
pub mod keys;
pub mod measure;
pub use backend::occupancy;
pub mod offline;
pub mod plot;
pub mod progress;
pub mod ptx;
pub mod ptx_archive;
pub mod report;
pub mod results;
pub mod routine;
pub mod sched;
pub mod spec;
pub mod split;
pub mod sweep;
pub mod table;
pub mod tune;
pub mod words;
