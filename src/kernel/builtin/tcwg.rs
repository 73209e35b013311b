//! Family 5, second kernel: gemmlab's warpgroup tensor-core SGEMM
//! (`kernels-*/tcwg.*`), 3xTF32 on Hopper's `wgmma.mma_async` in both toolchains.
//! `wgmma` belongs to the architecture-specific feature set of sm_90a: NVRTC
//! compiles the CUDA twin for it, and NVIDIA's OpenCL, which declares
//! `.target sm_90`, gets its PTX re-targeted by the backend
//! (`CompileOptions::arch_specific`). Called as the tc kernel is, with B read
//! K-contiguous (wgmma's TF32 operands in local memory must be K-major).

use super::switches::{SwitchUse, CP_CA, PROMOTE_ACC, TF32_SINGLE, USE_BOUNDS, USE_RESTRICT};
use super::tc::P_GROUP;
use super::{Abi, Config, Family, KernelSpec, Launch, Operands, Param, Precision};
use crate::backend::Language::{CudaCpp, OpenClC};

const P_BM: Param = Param {
    name: "BM",
    default: 128,
    allowed: &[64, 128, 256],
    meaning: "block tile along M: BM/64 warpgroups of 128 work-items, each 64 rows",
};
const P_BN: Param = Param {
    name: "BN",
    default: 128,
    allowed: &[64, 128, 256],
    meaning: "block tile along N: the N of each warpgroup's m64nNk8 wgmma (BN/2 accumulators per work-item, twice that promoted)",
};
const P_BK: Param = Param {
    name: "BK",
    default: 8,
    allowed: &[8, 16, 32],
    meaning: "depth along K of one local-memory tile (BK/8 k8 steps)",
};
const P_STAGES: Param = Param {
    name: "STAGES",
    default: 4,
    allowed: &[2, 3, 4, 5, 6],
    meaning: "local-memory buffers of the cp.async pipeline (4*STAGES*BK*(BM+8) + (STAGES+2)*(4*BK*BN+128) bytes must fit the device's local memory: 48 KiB in OpenCL, what the GPU allows at launch in CUDA)",
};
const P_PROMOTE_K: Param = Param {
    name: "PROMOTE_K",
    default: 8,
    allowed: &[8, 16, 32],
    meaning: "with PROMOTE_ACC: values of K the tensor core sums from zero before the sum is added to the FP32 accumulators (8: every k8 step, as the tc kernel)",
};
const P_KMAJOR_B: Param = Param {
    name: "KMAJOR_B",
    default: 1,
    allowed: &[1],
    meaning: "B read K-contiguous (column-major K x N, not B^T): wgmma's TF32 operands in local memory are K-major",
};

/// Bytes of local memory: the pipeline's A tiles (rows of BM + 8 floats), its B
/// tiles and two buffers of B's low parts (none with TF32_SINGLE, a switch this
/// count cannot see: counted here, as the larger). A B tile is BK/4 slices of
/// BN 16-byte chunks and a 512/BK-byte pad.
fn local_bytes(c: &Config) -> i64 {
    let (bm, bn, bk, stages) = (c.get("BM"), c.get("BN"), c.get("BK"), c.get("STAGES"));
    4 * stages * bk * (bm + 8) + (stages + 2) * (4 * bk * bn + 128)
}

/// gemmlab's own kernel: its defaults are its published state, 3xTF32 promoted
/// every k8 step (FP32 accuracy), as the tc kernel's.
const SWITCHES: &[SwitchUse] = &[
    SwitchUse::on(USE_BOUNDS),
    SwitchUse::on(USE_RESTRICT),
    SwitchUse::off(CP_CA),
    SwitchUse::off(TF32_SINGLE),
    SwitchUse::on(PROMOTE_ACC),
];

pub const TCWG: KernelSpec = KernelSpec {
    id: "tcwg",
    entry: "tcwg_gemm",
    family: Family::TensorCore,
    title: "gemmlab warpgroup tensor-core SGEMM (wgmma, sm_90a: 3xTF32)",
    idea: "C = alpha A B + beta C on Hopper's tensor cores through inline-PTX wgmma.mma_async: BM/64 \
           warpgroups per block, each computing 64 x BN with one m64nBNk8 product per TF32 part and k8 \
           step. A tiles (cp.async) are read into registers and split into TF32 high and low parts \
           there; B tiles land by cp.async in wgmma's K-major core-matrix layout, are split in place \
           (low parts in two more buffers) and read through matrix descriptors. 3xTF32 with the tensor \
           core's sums promoted into FP32 accumulators every PROMOTE_K values of K; TF32_SINGLE keeps \
           one product (1xTF32, lower precision)",
    sources: &[(OpenClC, include_str!("../../../kernels-cl/tcwg.cl")), (CudaCpp, include_str!("../../../kernels-cu/tcwg.cu"))],
    params: &[P_BM, P_BN, P_BK, P_STAGES, P_GROUP, P_PROMOTE_K, P_KMAJOR_B],
    constraints: &[],
    local_bytes,
    launch: Launch {
        local: |c| (32, c.u("BM") / 16),
        per_item: |c| {
            let bm = c.u("BM").max(1);
            (bm / 32, c.u("BN") * 16 / bm)
        },
    },
    operands: Operands {
        b_transposed: false,
        tile: |c| (c.u("BM"), c.u("BN"), c.u("BK")),
    },
    switches: SWITCHES,
    abi: Abi::IndirectSplitK,
    precisions: &[Precision::F32],
};

pub const KERNELS: &[KernelSpec] = &[TCWG];

/// Whether kernel `id` uses the architecture-specific features of sm_90a (wgmma):
/// it runs on compute capability 9.0 only, and is compiled for `sm_90a`.
pub fn arch_specific(id: &str) -> bool {
    id == TCWG.id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Language;

    #[test]
    fn defaults_tile_c_with_warpgroups() {
        let c = TCWG.defaults();
        TCWG.validate(&c).unwrap();
        assert_eq!(TCWG.threads_per_group(&c), 256);
        // 4 stages of 8 x 136 floats of A, 6 buffers of 8 x 128 floats of B and a pad.
        assert_eq!(local_bytes(&c), 4 * 4 * 8 * 136 + 6 * (4 * 8 * 128 + 128));
        let g = TCWG.geometry(&c, 4096, 2048);
        assert_eq!(g.groups(), [32, 16, 1]);
        assert_eq!(TCWG.k_major(&c), (false, true));
        assert!(TCWG.takes_local_at_launch(Language::CudaCpp));
        assert!(!TCWG.takes_local_at_launch(Language::OpenClC));
        assert!(arch_specific("tcwg") && !arch_specific("tc"));
        // Every allowed BM and BN gives whole work-items per block.
        for bm in [64, 128, 256] {
            for bn in [64, 128, 256] {
                let c = TCWG
                    .config(&[("BM".to_string(), bm), ("BN".to_string(), bn)])
                    .unwrap();
                let g = TCWG.geometry(&c, 1024, 1024);
                assert_eq!(
                    g.groups(),
                    [1024 / bm as usize, 1024 / bn as usize, 1],
                    "{bm}x{bn}"
                );
            }
        }
    }

    #[test]
    fn runs_on_compute_capability_9_0_only_and_says_why_elsewhere() {
        use crate::backend::{DeviceInfo, DeviceKind, Toolchain};
        use crate::kernel::builtin::Hints;
        let device = |toolchain, cc: Option<(u32, u32)>, nvidia: bool| {
            let (name, vendor) = if nvidia {
                ("NVIDIA H200", "NVIDIA Corporation")
            } else {
                ("cpu-pthread", "GenuineIntel")
            };
            DeviceInfo {
                compute_capability: cc,
                ..DeviceInfo::new(toolchain, "x:0", name, vendor, "p", DeviceKind::Gpu)
            }
        };
        let c = TCWG.defaults();
        let h = Hints::default();
        for toolchain in [Toolchain::Cuda, Toolchain::OpenCl] {
            assert_eq!(
                TCWG.unavailable_at(&c, &device(toolchain, Some((9, 0)), true), &h),
                None
            );
            for (major, minor) in [(8, 0), (8, 9), (10, 0), (12, 0)] {
                let why = TCWG
                    .unavailable_at(&c, &device(toolchain, Some((major, minor)), true), &h)
                    .unwrap_or_default();
                assert!(
                    why.contains("sm_90a") && why.contains(&format!("sm_{major}{minor}")),
                    "{why}"
                );
            }
        }
        let why = TCWG
            .unavailable_at(&c, &device(Toolchain::OpenCl, None, false), &h)
            .unwrap_or_default();
        assert!(
            why.contains("wgmma") && why.contains("not an NVIDIA GPU"),
            "{why}"
        );
    }

    #[test]
    fn f64_and_bad_values_are_refused_with_the_reason() {
        let e = TCWG
            .config(&[("KMAJOR_B".to_string(), 0)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("KMAJOR_B"), "{e}");
        assert!(TCWG
            .with_precision(&TCWG.defaults(), Precision::F64)
            .is_err());
    }
}
