//! Small helpers every layer uses: content hashes for cache and store keys,
//! counts in words, the priority of helper threads, and supervised processes.

pub mod keys;
pub mod process;
pub mod sched;
pub mod words;
