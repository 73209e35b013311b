//! `gemmlab tune`: each toolchain at its own best. The space comes from the
//! kernel registry (parameters, hint switches, register caps) filtered before
//! anything is compiled; a strategy picks points; compilation runs on every CPU
//! core while the device measures; every result goes to a per-device store.

pub mod crossover;
pub mod fleet;
pub mod grid;
pub mod replay;
pub mod run;
pub mod search;
pub mod space;
pub mod store;
pub mod strategy;
pub mod watch;
