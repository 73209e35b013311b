//! Theoretical occupancy by the CUDA occupancy rules: resident blocks per SM
//! are limited by warps, blocks, registers (allocated per warp in units of
//! 256) and shared memory (allocated in units, plus a per-block reservation
//! on compute capability 8.0 and later). Occupancy = resident warps / max warps.

use crate::backend::{DeviceInfo, KernelResources};

/// Per-SM limits of one compute capability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_warps: u32,
    pub max_blocks: u32,
    pub registers: u32,
    pub register_unit: u32,
    pub max_registers_per_thread: u32,
    pub shared_bytes: u32,
    pub shared_unit: u32,
    pub shared_reserved_per_block: u32,
}

/// The limits of a compute capability, `None` for unknown ones.
pub fn limits(major: u32, minor: u32) -> Option<Limits> {
    let l = |max_warps, max_blocks, shared_kib: u32, shared_unit, reserved| Limits {
        max_warps,
        max_blocks,
        registers: 65536,
        register_unit: 256,
        max_registers_per_thread: 255,
        shared_bytes: shared_kib * 1024,
        shared_unit,
        shared_reserved_per_block: reserved,
    };
    Some(match (major, minor) {
        (3, 5) | (3, 7) => l(64, 16, 48, 256, 0),
        (5, _) => l(64, 32, 64, 256, 0),
        (6, 0) => l(64, 32, 64, 256, 0),
        (6, _) => l(64, 32, 96, 256, 0),
        (7, 0) | (7, 2) => l(64, 32, 96, 256, 0),
        (7, 5) => l(32, 16, 64, 256, 0),
        (8, 0) => l(64, 32, 164, 128, 1024),
        (8, 6) => l(48, 16, 100, 128, 1024),
        (8, 7) => l(48, 16, 164, 128, 1024),
        (8, 9) => l(48, 24, 100, 128, 1024),
        (9, 0) => l(64, 32, 228, 128, 1024),
        (10, 0) => l(64, 32, 228, 128, 1024),
        (12, 0) => l(48, 32, 100, 128, 1024),
        _ => return None,
    })
}

/// What limits a kernel's residency, and the result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub fraction: f64,
    pub limited_by: &'static str,
}

/// Occupancy of a block of `threads` using `registers` per thread and `shared` bytes of static shared memory.
pub fn occupancy(l: &Limits, threads: u32, registers: u32, shared: u32) -> Option<Occupancy> {
    if threads == 0 || threads > 1024 || registers > l.max_registers_per_thread {
        return None;
    }
    let warps_per_block = threads.div_ceil(32);
    let by_warps = l.max_warps / warps_per_block;
    let by_blocks = l.max_blocks;
    let by_regs = if registers == 0 {
        u32::MAX
    } else {
        let per_warp = (registers * 32).div_ceil(l.register_unit) * l.register_unit;
        (l.registers / per_warp) / warps_per_block
    };
    let per_block_smem =
        (shared + l.shared_reserved_per_block).div_ceil(l.shared_unit) * l.shared_unit;
    let by_smem = l
        .shared_bytes
        .checked_div(per_block_smem)
        .unwrap_or(u32::MAX);
    let candidates = [
        (by_warps, "warps"),
        (by_blocks, "blocks"),
        (by_regs, "registers"),
        (by_smem, "shared memory"),
    ];
    let (blocks, limited_by) = candidates.iter().copied().min_by_key(|(b, _)| *b)?;
    let warps = blocks * warps_per_block;
    Some(Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm: warps,
        fraction: f64::from(warps) / f64::from(l.max_warps),
        limited_by,
    })
}

/// Theoretical occupancy of a compiled kernel on a device, where registers and the architecture are known.
pub fn for_kernel(device: &DeviceInfo, r: &KernelResources, threads: usize) -> Option<f64> {
    let (major, minor) = device.compute_capability?;
    let l = limits(major, minor)?;
    let regs = r.registers?;
    let shared = r.shared_bytes.unwrap_or(0) as u32;
    occupancy(&l, threads as u32, regs, shared).map(|o| o.fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_register_limited() {
        // 256 threads x 64 registers: 2048 registers per warp, 32 warps fit, 4 blocks.
        let o = occupancy(&limits(9, 0).unwrap(), 256, 64, 0).unwrap();
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.limited_by),
            (4, 32, "registers")
        );
        assert_eq!(o.fraction, 0.5);
    }

    #[test]
    fn hopper_shared_memory_limited() {
        // 32 KiB + 1 KiB reserved per block: 233472 / 33792 = 6 blocks of 8 warps.
        let o = occupancy(&limits(9, 0).unwrap(), 256, 32, 32 * 1024).unwrap();
        assert_eq!((o.blocks_per_sm, o.limited_by), (6, "shared memory"));
        assert_eq!(o.fraction, 0.75);
    }

    #[test]
    fn hopper_full_occupancy_with_register_rounding() {
        // 30 registers round up to 1024 per warp: 64 warps, 2 blocks of 1024 threads.
        let o = occupancy(&limits(9, 0).unwrap(), 1024, 30, 8196).unwrap();
        assert_eq!(o.blocks_per_sm, 2);
        assert_eq!(o.fraction, 1.0);
    }

    #[test]
    fn kepler_clblas_tile() {
        // K40 (3.5), 8x8 work-groups at 127 registers: 4096 per warp, 16 warps -> 8 blocks, 25 %.
        let o = occupancy(&limits(3, 5).unwrap(), 64, 127, 0).unwrap();
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (8, 16));
        assert_eq!(o.fraction, 0.25);
        // Small blocks hit the 16-block limit first.
        let o = occupancy(&limits(3, 5).unwrap(), 64, 16, 0).unwrap();
        assert_eq!((o.blocks_per_sm, o.limited_by), (16, "blocks"));
        assert_eq!(o.fraction, 0.5);
    }

    #[test]
    fn impossible_blocks() {
        assert!(occupancy(&limits(9, 0).unwrap(), 2048, 32, 0).is_none());
        assert!(occupancy(&limits(9, 0).unwrap(), 256, 300, 0).is_none());
        assert!(limits(1, 0).is_none());
    }
}
