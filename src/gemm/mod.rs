//! Problems, operands, the CPU reference and result checking.

pub mod check;
pub mod data;
pub mod driver;
pub mod reference;

pub use check::{check, CheckReport};
pub use data::{parse_size, random_matrix, round_up, Operands};
pub use reference::reference_gemm;
