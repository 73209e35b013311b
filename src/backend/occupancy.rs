//! Theoretical occupancy by the CUDA occupancy rules, as `cuda_occupancy.h`
//! applies them: resident blocks per SM are limited by warps, blocks,
//! registers and shared memory. Registers are allocated per warp in units of
//! 256 and split evenly over the SM's sub-partitions (4; 2 on 6.0), so a warp
//! never straddles two; a block that needs more registers than one block may
//! have does not launch at all. Shared memory is allocated in units (256 bytes
//! up to 7.x, 128 from 8.0) plus a 1 KiB per-block reservation from 8.0 on, and
//! taken at the SM's largest configuration (Kepler's 48 KiB shared / 16 KiB L1
//! split, the largest carve-out later). Occupancy = resident warps / max warps.

use super::{DeviceInfo, KernelResources};

/// Per-SM limits of one compute capability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_warps: u32,
    pub max_blocks: u32,
    /// 32-bit registers per SM.
    pub registers: u32,
    /// 32-bit registers one block may use.
    pub registers_per_block: u32,
    /// Registers are allocated to a warp in multiples of this.
    pub register_unit: u32,
    /// The register file is split evenly over this many sub-partitions.
    pub register_subpartitions: u32,
    pub max_registers_per_thread: u32,
    pub max_threads_per_block: u32,
    /// Shared memory per SM at its largest configuration.
    pub shared_bytes: u32,
    /// Static shared memory one block may use.
    pub shared_per_block: u32,
    pub shared_unit: u32,
    pub shared_reserved_per_block: u32,
}

/// The limits of a compute capability, `None` for unknown ones.
///
/// From NVIDIA's CUDA C++ Programming Guide, "Technical Specifications per
/// Compute Capability" (resident warps, blocks, registers per SM and per
/// block, shared memory per SM and per block; the 11.8 guide for 3.5 to 8.9,
/// the 12.x/13.0 guides for 9.0, 10.0 and 12.0) and `cuda_occupancy.h`
/// (allocation units, sub-partitions, the 8.0+ per-block reservation).
pub fn limits(major: u32, minor: u32) -> Option<Limits> {
    // (warps, blocks, registers/SM, registers/block, shared KiB per SM, shared KiB per block)
    let (max_warps, max_blocks, registers, registers_per_block, shared_kib, block_kib) =
        match (major, minor) {
            (3, 5) => (64, 16, 64, 64, 48, 48),
            // Tesla K80: twice the register file and 112 KiB of shared memory per SM.
            (3, 7) => (64, 16, 128, 64, 112, 48),
            (5, 0) => (64, 32, 64, 64, 64, 48),
            (5, 2) => (64, 32, 64, 64, 96, 48),
            (5, 3) => (64, 32, 64, 32, 64, 48),
            (6, 0) => (64, 32, 64, 64, 64, 48),
            (6, 1) => (64, 32, 64, 64, 96, 48),
            (6, 2) => (64, 32, 64, 32, 64, 48),
            (7, 0) | (7, 2) => (64, 32, 64, 64, 96, 96),
            (7, 5) => (32, 16, 64, 64, 64, 64),
            (8, 0) | (8, 7) => (64, 32, 64, 64, 164, 163),
            (8, 6) => (48, 16, 64, 64, 100, 99),
            (8, 9) => (48, 24, 64, 64, 100, 99),
            (9, 0) | (10, 0) => (64, 32, 64, 64, 228, 227),
            (12, 0) => (48, 32, 64, 64, 100, 99),
            _ => return None,
        };
    let ampere_on = major >= 8;
    Some(Limits {
        max_warps,
        max_blocks,
        registers: registers * 1024,
        registers_per_block: registers_per_block * 1024,
        register_unit: 256,
        register_subpartitions: if (major, minor) == (6, 0) { 2 } else { 4 },
        max_registers_per_thread: 255,
        max_threads_per_block: 1024,
        shared_bytes: shared_kib * 1024,
        shared_per_block: block_kib * 1024,
        shared_unit: if ampere_on { 128 } else { 256 },
        shared_reserved_per_block: if ampere_on { 1024 } else { 0 },
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

impl Occupancy {
    /// "25% (2 blocks of 8 warps per SM, limited by registers)"
    pub fn describe(&self) -> String {
        let warps = self
            .warps_per_sm
            .checked_div(self.blocks_per_sm)
            .unwrap_or(0);
        if self.blocks_per_sm == 0 {
            return format!("0% (does not fit on an SM: {})", self.limited_by);
        }
        format!(
            "{:.0}% ({} of {warps} warps per SM, limited by {})",
            self.fraction * 100.0,
            crate::util::words::plural(self.blocks_per_sm as usize, "block"),
            self.limited_by
        )
    }
}

/// Occupancy of a block of `threads` using `registers` per thread and `shared`
/// bytes of static shared memory. `None` for inputs no compiler produces (an
/// empty block, more threads or registers than any block may have); a block
/// that cannot launch on this SM has 0 blocks, limited by what it lacks.
pub fn occupancy(l: &Limits, threads: u32, registers: u32, shared: u32) -> Option<Occupancy> {
    if threads == 0 || threads > l.max_threads_per_block || registers > l.max_registers_per_thread {
        return None;
    }
    let warps_per_block = threads.div_ceil(32);
    let by_warps = l.max_warps / warps_per_block;
    let by_blocks = l.max_blocks;
    let by_regs = if registers == 0 {
        u32::MAX
    } else {
        let per_warp = (registers * 32).div_ceil(l.register_unit) * l.register_unit;
        // The hardware checks a block against the per-block limit as if its warps
        // were spread over every sub-partition.
        let assumed = per_warp * warps_per_block.next_multiple_of(l.register_subpartitions);
        if assumed > l.registers_per_block || per_warp * warps_per_block > l.registers_per_block {
            0
        } else {
            let warps_per_part = l.registers / l.register_subpartitions / per_warp;
            warps_per_part * l.register_subpartitions / warps_per_block
        }
    };
    let by_smem = if shared > l.shared_per_block {
        0
    } else {
        let per_block =
            (shared + l.shared_reserved_per_block).div_ceil(l.shared_unit) * l.shared_unit;
        l.shared_bytes.checked_div(per_block).unwrap_or(u32::MAX)
    };
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

/// The most registers per thread with which `blocks` blocks of `threads` threads
/// fit on an SM as far as registers go (shared memory left aside).
pub fn registers_for_blocks(l: &Limits, threads: u32, blocks: u32) -> Option<u32> {
    (1..=l.max_registers_per_thread)
        .rev()
        .find(|&r| occupancy(l, threads, r, 0).is_some_and(|o| o.blocks_per_sm >= blocks))
}

/// Occupancy of a compiled kernel on a device, where registers and the architecture are known.
pub fn for_kernel_detail(
    device: &DeviceInfo,
    r: &KernelResources,
    threads: usize,
) -> Option<Occupancy> {
    let (major, minor) = device.compute_capability?;
    let l = limits(major, minor)?;
    let regs = r.registers?;
    let shared = u32::try_from(r.shared_bytes.unwrap_or(0)).ok()?;
    occupancy(&l, u32::try_from(threads).ok()?, regs, shared)
}

/// Theoretical occupancy (resident warps / max warps) of a compiled kernel on a device.
pub fn for_kernel(device: &DeviceInfo, r: &KernelResources, threads: usize) -> Option<f64> {
    for_kernel_detail(device, r, threads).map(|o| o.fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cc: (u32, u32), threads: u32, regs: u32, shared: u32) -> Occupancy {
        occupancy(&limits(cc.0, cc.1).unwrap(), threads, regs, shared).unwrap()
    }

    #[test]
    fn every_compute_capability_of_the_atlas_has_its_guide_values() {
        // (cc, warps, blocks, registers/SM, shared/SM KiB) as the Programming Guide's
        // "Technical Specifications per Compute Capability" gives them.
        type Row = ((u32, u32), u32, u32, u32, u32);
        let guide: [Row; 14] = [
            ((3, 5), 64, 16, 65536, 48),
            ((3, 7), 64, 16, 131072, 112),
            ((5, 0), 64, 32, 65536, 64),
            ((5, 2), 64, 32, 65536, 96),
            ((6, 0), 64, 32, 65536, 64),
            ((6, 1), 64, 32, 65536, 96),
            ((7, 0), 64, 32, 65536, 96),
            ((7, 5), 32, 16, 65536, 64),
            ((8, 0), 64, 32, 65536, 164),
            ((8, 6), 48, 16, 65536, 100),
            ((8, 9), 48, 24, 65536, 100),
            ((9, 0), 64, 32, 65536, 228),
            ((10, 0), 64, 32, 65536, 228),
            ((12, 0), 48, 32, 65536, 100),
        ];
        for (cc, warps, blocks, regs, smem) in guide {
            let l = limits(cc.0, cc.1).unwrap_or_else(|| panic!("{cc:?} missing"));
            assert_eq!(
                (l.max_warps, l.max_blocks, l.registers, l.shared_bytes),
                (warps, blocks, regs, smem * 1024),
                "{cc:?}"
            );
            assert_eq!(l.registers_per_block, 65536, "{cc:?}");
            assert_eq!(l.max_registers_per_thread, 255, "{cc:?}");
        }
        assert_eq!(limits(5, 3).unwrap().registers_per_block, 32768);
        assert_eq!(limits(6, 0).unwrap().register_subpartitions, 2);
        assert!(limits(1, 0).is_none() && limits(11, 0).is_none());
    }

    #[test]
    fn kepler_kernel6_at_128_and_127_registers() {
        // Kernel 6 at its defaults: 16x16 = 256 threads (8 warps), shared Asub
        // 16x128 + Bsub 128x(16+2) floats = 8192 + 9216 = 17408 bytes.
        //
        // sm_35, 128 registers: 128*32 = 4096 per warp (a multiple of 256);
        // per sub-partition 65536/4 = 16384 -> 4 warps, x4 = 16 warps = 2 blocks.
        // Shared: 17408 (a multiple of 256) -> 49152/17408 = 2 blocks. Warps allow
        // 64/8 = 8, blocks 16. So 2 blocks, 16 of 64 warps: 25%.
        let o = at((3, 5), 256, 128, 17408);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (2, 16));
        assert_eq!(o.fraction, 0.25);
        assert_eq!(o.limited_by, "registers");
        // 127 registers: 127*32 = 4064 rounds up to 4096 per warp: the same 2
        // blocks. Saving one register buys nothing on Kepler.
        assert_eq!(at((3, 5), 256, 127, 17408), o);
        // 129 registers: 4128 -> 4352 per warp; 16384/4352 = 3 warps per
        // sub-partition, 12 per SM: one block of 8 warps, 12.5%.
        let o = at((3, 5), 256, 129, 17408);
        assert_eq!((o.blocks_per_sm, o.fraction), (1, 0.125));
        // sm_37 (K80): 131072/4 = 32768 per sub-partition -> 8 warps, 32 per SM =
        // 4 blocks; shared 114688/17408 = 6. 32 of 64 warps: 50%.
        let o = at((3, 7), 256, 128, 17408);
        assert_eq!(
            (o.blocks_per_sm, o.fraction, o.limited_by),
            (4, 0.5, "registers")
        );
    }

    #[test]
    fn sub_partitions_round_the_register_limit_down() {
        // sm_50, 96 threads (3 warps) x 40 registers: 1280 per warp. Per
        // sub-partition 16384/1280 = 12 warps, 48 per SM -> 48/3 = 16 blocks, 75%
        // (the whole file would hold 65536/1280 = 51 warps = 17 blocks).
        let o = at((5, 0), 96, 40, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.limited_by),
            (16, 48, "registers")
        );
        assert_eq!(o.fraction, 0.75);
    }

    #[test]
    fn a_block_over_the_per_block_register_limit_does_not_fit() {
        // sm_90, 1024 threads x 128 registers: 4096 x 32 warps = 131072 > 65536.
        let o = at((9, 0), 1024, 128, 0);
        assert_eq!(
            (o.blocks_per_sm, o.fraction, o.limited_by),
            (0, 0.0, "registers")
        );
        assert!(o.describe().contains("does not fit"));
        // sm_53 allows 32768 per block: 1024 x 32 registers = 1024 x 32 warps = 32768 fits,
        // 33 registers (1280 per warp) does not.
        assert_eq!(at((5, 3), 1024, 32, 0).blocks_per_sm, 2);
        assert_eq!(at((5, 3), 1024, 33, 0).blocks_per_sm, 0);
    }

    #[test]
    fn turing_and_ampere_limits() {
        // sm_75, 256 threads x 64 registers: 2048 per warp, 16384/2048 = 8 per
        // sub-partition = 32 warps = 4 blocks; warps allow 32/8 = 4: 100%.
        let o = at((7, 5), 256, 64, 0);
        assert_eq!((o.blocks_per_sm, o.fraction), (4, 1.0));
        // sm_86, kernel 6 at 128 registers: registers give 2 blocks (16 warps);
        // shared (17408 + 1024 reserved) = 18432 -> 102400/18432 = 5. 16/48 = 1/3.
        let o = at((8, 6), 256, 128, 17408);
        assert_eq!((o.blocks_per_sm, o.limited_by), (2, "registers"));
        assert!((o.fraction - 1.0 / 3.0).abs() < 1e-12);
        assert!(
            o.describe().starts_with("33% (2 blocks of 8 warps"),
            "{}",
            o.describe()
        );
    }

    #[test]
    fn hopper_register_limited() {
        // 256 threads x 64 registers: 2048 registers per warp, 32 warps fit, 4 blocks.
        let o = at((9, 0), 256, 64, 0);
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.limited_by),
            (4, 32, "registers")
        );
        assert_eq!(o.fraction, 0.5);
    }

    #[test]
    fn hopper_shared_memory_limited() {
        // 32 KiB + 1 KiB reserved per block: 233472 / 33792 = 6 blocks of 8 warps.
        let o = at((9, 0), 256, 32, 32 * 1024);
        assert_eq!((o.blocks_per_sm, o.limited_by), (6, "shared memory"));
        assert_eq!(o.fraction, 0.75);
    }

    #[test]
    fn hopper_full_occupancy_with_register_rounding() {
        // 30 registers round up to 1024 per warp: 64 warps, 2 blocks of 1024 threads.
        let o = at((9, 0), 1024, 30, 8196);
        assert_eq!(o.blocks_per_sm, 2);
        assert_eq!(o.fraction, 1.0);
    }

    #[test]
    fn kepler_clblas_tile() {
        // K40 (3.5), 8x8 work-groups at 127 registers: 4096 per warp, 16 warps -> 8 blocks, 25 %.
        let o = at((3, 5), 64, 127, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (8, 16));
        assert_eq!(o.fraction, 0.25);
        // Small blocks hit the 16-block limit first.
        let o = at((3, 5), 64, 16, 0);
        assert_eq!((o.blocks_per_sm, o.limited_by), (16, "blocks"));
        assert_eq!(o.fraction, 0.5);
    }

    #[test]
    fn impossible_blocks() {
        assert!(occupancy(&limits(9, 0).unwrap(), 2048, 32, 0).is_none());
        assert!(occupancy(&limits(9, 0).unwrap(), 256, 300, 0).is_none());
        assert!(limits(1, 0).is_none());
        // More static shared memory than a block may have (48 KiB on Kepler).
        assert_eq!(at((3, 5), 64, 32, 49153).blocks_per_sm, 0);
    }
}
