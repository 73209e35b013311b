//! The one error type of gemmlab. Every message is written for the person
//! at the terminal: it says what went wrong and, where possible, what to do.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("CUDA unavailable: {0}")]
    CudaUnavailable(String),

    #[error("OpenCL unavailable: {0}")]
    OpenClUnavailable(String),

    #[error("no device matches '{spec}'. Devices found:\n{available}")]
    NoSuchDevice { spec: String, available: String },

    #[error("invalid device spec '{spec}': {reason}")]
    BadDeviceSpec { spec: String, reason: String },

    #[error("{toolchain} compiler rejected {what}:\n{log}")]
    Compile {
        toolchain: String,
        what: String,
        log: String,
    },

    #[error("{toolchain} call {call} failed: {message}")]
    Api {
        toolchain: String,
        call: String,
        message: String,
    },

    #[error("out of device memory on {device}: {what}")]
    OutOfMemory { device: String, what: String },

    #[error("unknown kernel '{name}'. Known kernels: {known}")]
    UnknownKernel { name: String, known: String },

    #[error("kernel {kernel}: constraint violated: {message} (with {values})")]
    Constraint {
        kernel: String,
        message: String,
        values: String,
    },

    #[error("kernel {kernel} cannot run on {toolchain}: {reason}")]
    Unavailable {
        kernel: String,
        toolchain: String,
        reason: String,
    },

    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("result check failed for {what}: {detail}")]
    Check { what: String, detail: String },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: {message}")]
    Data { path: PathBuf, message: String },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
}
