//! The element type a kernel computes in.

use serde::{Deserialize, Serialize};

use crate::backend::Elem;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    #[default]
    F32,
    F64,
}

impl Precision {
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    pub fn elem(self) -> Elem {
        match self {
            Precision::F32 => Elem::F32,
            Precision::F64 => Elem::F64,
        }
    }

    /// The value of the `PRECISION` define the kernels read (CLBlast's convention).
    pub fn define(self) -> i64 {
        match self {
            Precision::F32 => 32,
            Precision::F64 => 64,
        }
    }

    /// BLAS's letter: SGEMM, DGEMM.
    pub fn blas_letter(self) -> char {
        match self {
            Precision::F32 => 'S',
            Precision::F64 => 'D',
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    pub fn parse(s: &str) -> Result<Precision> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "32" | "s" | "single" | "float" | "sp" => Ok(Precision::F32),
            "f64" | "64" | "d" | "double" | "dp" => Ok(Precision::F64),
            _ => Err(Error::invalid(format!(
                "precision '{s}': expected f32 (single) or f64 (double)"
            ))),
        }
    }
}
