//! Small helpers every layer uses: content hashes for cache and store keys,
//! counts in words, and the priority of helper threads.

pub mod keys;
pub mod sched;
pub mod words;
