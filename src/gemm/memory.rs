//! What a problem size needs, host and device, against what is free: checked
//! before anything is allocated, so a size that cannot fit is refused with the
//! numbers instead of failing half-way (or swapping the host to a halt).

use std::fmt::Write as _;

/// The reference a problem is checked against (see `check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Cpu,
    Dgemm,
    Sampled,
}

/// Bytes a problem needs, by part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Need {
    pub host: Vec<(&'static str, u64)>,
    pub device: Vec<(&'static str, u64)>,
}

impl Need {
    pub fn host_total(&self) -> u64 {
        self.host.iter().map(|(_, b)| b).sum()
    }
    pub fn device_total(&self) -> u64 {
        self.device.iter().map(|(_, b)| b).sum()
    }
}

/// The largest tile any registry kernel pads to: padding is bounded by it.
const MAX_TILE: usize = 128;

/// Estimates the peak memory of one size: `sessions` toolchains on one device
/// (each holds its own A and B and a kernel's working set), `flush` bytes of
/// cold-cache scratch per session.
pub fn estimate(
    (m, n, k): (usize, usize, usize),
    sessions: usize,
    reference: RefKind,
    flush: u64,
    precision: crate::gemm::problem::Precision,
) -> Need {
    let f = precision.elem().size() as u64;
    let (m, n, k) = (m as u64, n as u64, k as u64);
    let up = |v: u64| v.div_ceil(MAX_TILE as u64) * MAX_TILE as u64;
    let (mp, np, kp) = (up(m), up(n), up(k));
    let mut host = vec![("A and B", f * (m * k + n * k))];
    match reference {
        // matrixmultiply's dgemm reads f64 copies of A and B.
        RefKind::Cpu => host.push((
            "f64 reference C and f64 copies of A and B",
            8 * (m * n + m * k + k * n),
        )),
        // A and B are converted to f64 one at a time for the upload.
        RefKind::Dgemm => host.push((
            "f64 reference C and one f64 operand in transit",
            8 * (m * n + (m * k).max(k * n)),
        )),
        RefKind::Sampled => {}
    }
    host.push(("C downloaded for checking", f * m * n));
    let s = sessions as u64;
    let kernels = s
        * (f * (m * k + k * n) // each session's A and B
        + f * (mp * kp + 2 * kp * np + mp * np + m * n) // padded A, B, B^T, C, un-padded C
        + flush);
    let mut device = vec![(
        "A, B and the largest kernel working set, per toolchain",
        kernels,
    )];
    if reference == RefKind::Dgemm {
        // The DGEMM runs (and is freed) before the kernels: only the larger peak counts.
        let dgemm = 8 * (m * k + k * n + m * n);
        if dgemm > kernels {
            device = vec![("cuBLAS DGEMM reference (f64 A, B, C)", dgemm)];
        }
    }
    Need { host, device }
}

/// Bytes of host memory available (Linux: MemAvailable), if known.
pub fn host_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// `Err(message)` when the need exceeds what is free (unknown free memory passes).
pub fn fits(
    need: &Need,
    host_free: Option<u64>,
    device_free: Option<(u64, &str)>,
) -> Result<(), String> {
    let mut why = String::new();
    if let Some(free) = host_free {
        if need.host_total() > free {
            let _ = write!(
                why,
                "needs {} of host memory, {} available (",
                gib(need.host_total()),
                gib(free)
            );
            let parts: Vec<String> = need
                .host
                .iter()
                .map(|(w, b)| format!("{w}: {}", gib(*b)))
                .collect();
            let _ = write!(why, "{})", parts.join(", "));
        }
    }
    if let Some((free, what)) = device_free {
        if need.device_total() > free {
            if !why.is_empty() {
                why.push_str("; ");
            }
            let parts: Vec<String> = need
                .device
                .iter()
                .map(|(w, b)| format!("{w}: {}", gib(*b)))
                .collect();
            let _ = write!(
                why,
                "needs {} of device memory, {} {what} ({})",
                gib(need.device_total()),
                gib(free),
                parts.join(", ")
            );
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_4096_on_two_toolchains_by_hand() {
        let need = estimate((4096, 4096, 4096), 2, RefKind::Cpu, 0, Default::default());
        let mat = 4096u64 * 4096;
        // Host: A, B in f32; C, A, B in f64; C in f32.
        assert_eq!(need.host_total(), 4 * 2 * mat + 8 * 3 * mat + 4 * mat);
        // Device, per toolchain: A, B; padded A, B, B^T, C; un-padded C (no padding at 4096).
        assert_eq!(need.device_total(), 2 * (4 * 2 * mat + 4 * 5 * mat));
        assert!(fits(&need, Some(u64::MAX), Some((u64::MAX, "free"))).is_ok());
        let err = fits(&need, Some(1 << 28), Some((1 << 28, "free"))).unwrap_err();
        assert!(
            err.contains("host memory") && err.contains("device memory"),
            "{err}"
        );
        assert!(err.contains("0.2 GiB available"), "{err}");
        assert!(
            fits(&need, None, None).is_ok(),
            "unknown free memory does not refuse"
        );
    }

    #[test]
    fn dgemm_peak_counts_when_it_is_larger() {
        let need = estimate(
            (32768, 32768, 32768),
            1,
            RefKind::Dgemm,
            0,
            Default::default(),
        );
        let mat = 32768u64 * 32768;
        assert_eq!(
            need.device_total(),
            (4 * 2 * mat + 4 * 5 * mat).max(8 * 3 * mat)
        );
        assert_eq!(
            estimate((100, 100, 100), 1, RefKind::Sampled, 0, Default::default())
                .host
                .len(),
            2
        );
    }

    #[test]
    fn meminfo() {
        let t = "MemTotal:       24000000 kB\nMemAvailable:   2000 kB\n";
        assert_eq!(parse_meminfo(t), Some(2000 * 1024));
        assert_eq!(parse_meminfo("nothing"), None);
    }
}
