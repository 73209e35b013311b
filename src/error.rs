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

    /// A toolchain whose compiler or libraries are missing here (clang, libclc,
    /// the CUDA headers): what is missing and what to install.
    #[error("{toolchain} unavailable: {reason}")]
    ToolchainUnavailable { toolchain: String, reason: String },

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

    /// The device's context cannot be used any more (a kernel faulted: illegal
    /// address, misaligned access, trap): what failed and the driver's words.
    #[error("the device session was lost after {what}: {reason}")]
    DeviceLost { what: String, reason: String },

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

    /// A kernel spec file that cannot be used: where (file, and line where known) and why.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Spec {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },

    /// A user's launch whose arguments do not fit the kernel's own signature
    /// (found once the kernel is compiled): the spec's file and line in the words.
    #[error("{0}")]
    Arguments(String),

    /// A kernel wrote outside a buffer (a guard zone changed): which, and where.
    #[error("OUT OF BOUNDS: {0}")]
    OutOfBounds(String),
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

    /// The process exit status for this error: 2 when the request itself can never
    /// work (a usage error: unknown kernel or device, a bad option or parameter),
    /// 1 when something failed while doing it.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NoSuchDevice { .. }
            | Error::BadDeviceSpec { .. }
            | Error::UnknownKernel { .. }
            | Error::Constraint { .. }
            | Error::Spec { .. }
            | Error::Arguments(_)
            | Error::InvalidArgument(_) => 2,
            _ => 1,
        }
    }
}

/// The register caps ptxas honours for the architectures gemmlab targets: below 24 it
/// raises the cap to 24 (sm_90: "adjusting per thread register count of 3 to lower
/// bound of 24"), above 255 there are no registers to give.
pub const REGISTER_CAP_RANGE: std::ops::RangeInclusive<u32> = 24..=255;

/// Checks a register cap from the command line (clap value parser).
pub fn parse_register_cap(s: &str) -> std::result::Result<u32, String> {
    let v: u32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of registers"))?;
    if REGISTER_CAP_RANGE.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{v} is outside {}..={}: ptxas raises a lower cap to {} and a thread cannot have more than {} registers",
            REGISTER_CAP_RANGE.start(),
            REGISTER_CAP_RANGE.end(),
            REGISTER_CAP_RANGE.start(),
            REGISTER_CAP_RANGE.end()
        ))
    }
}

/// Checks a count of timed repetitions from the command line (clap value parser).
pub fn parse_reps(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 timed repetitions measure nothing: give 1 or more".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a count")),
    }
}

/// `--budget`: seconds of device time per point (positive), or `none`.
pub fn parse_budget(s: &str) -> std::result::Result<Option<f64>, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
        Ok(_) => Err(format!("{s}: give a positive number of seconds, or none")),
        Err(_) => Err(format!("'{s}' is neither none nor a number of seconds")),
    }
}

/// Refuses an output path that exists and is not a directory (checked before any work).
pub fn check_out_dir(path: &std::path::Path, option: &str) -> Result<()> {
    if path.exists() && !path.is_dir() {
        return Err(Error::invalid(format!(
            "{option} {}: an existing file, not a directory; give a directory (created if missing)",
            path.display()
        )));
    }
    Ok(())
}
