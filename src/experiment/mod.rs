//! Experiments: kernels measured at problem points on every session, through one
//! measuring core ([`measuring::measure`]) for built-in GEMMs and users' spec kernels
//! alike; the vendor BLAS beside GEMMs; and `compare`, which walks the points.

pub mod atlas;
pub mod attribution;
pub mod db_check;
pub mod isolate;
pub mod offline;
pub mod sweep;

mod compare;
mod gemm;
pub mod measuring;
mod run;
pub mod user;

pub(crate) use self::measuring::keep_ptx;
pub use self::measuring::{Rates, Workload};
pub use crate::results::failed_row;
pub use compare::{check_defines_of, run_compare, toolchains, CompareOptions};
pub use gemm::*;
pub use run::{print_clocks, say_devices, Recording};
pub use user::{
    measure_on, measure_spec_items, measure_spec_point, points_for, references, refuse_plain_sizes,
    run_spec_compare, tuned_items, Item, SpecCompare, UserPoint,
};
