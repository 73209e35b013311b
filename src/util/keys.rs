//! Stable names and hashes that files and records are keyed by: the slug of a
//! device name (file names of the tuning store and the database of bests) and
//! the FNV-1a hash of a kernel source (a store key, a best's `source`). They sit
//! below the run, tune and report layers, which all use them.

/// A device name as a file name: "NVIDIA H200" -> "nvidia-h200".
pub fn device_slug(name: &str) -> String {
    let lower: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    lower
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike the std hasher.
pub fn fnv1a(text: &str) -> String {
    format!("{:016x}", fnv1a_bytes(text.as_bytes()))
}

/// `fnv1a` of bytes, as a number.
pub fn fnv1a_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
