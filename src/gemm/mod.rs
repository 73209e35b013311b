//! Problems, operands, the CPU reference and result checking.

pub mod accuracy;

pub mod check;
pub mod data;
pub mod driver;
pub mod memory;
pub mod parallel;
pub mod problem;
pub mod reference;
pub mod shape;
pub mod stage;

pub use check::{check, check_against, CheckReport, Reference, Samples};
pub use data::{parse_size, random_matrix, round_up, Operands};
pub use reference::{reference_gemm, sampled_reference};
