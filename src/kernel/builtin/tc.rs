//! Family 5: gemmlab's tensor-core GEMM (`kernels-*/tc.*`) through inline PTX
//! `mma.sync` in both toolchains: DGEMM on the FP64 tensor cores, and SGEMM
//! with FP32 accuracy from three TF32 products per step (3xTF32; one product,
//! 1xTF32, is the `TF32_SINGLE` switch and is labelled lower precision). Called
//! as CLBlast's indirect kernel is (padded operands, B transposed).

use super::switches::{SwitchUse, CP_CA, PROMOTE_ACC, TF32_SINGLE, USE_BOUNDS, USE_RESTRICT};
use super::Precision;
use super::{divides, WARP_TILES_DIVIDE};
use super::{Abi, Config, Constraint, Family, KernelSpec, Launch, Operands, Param, PRECISION};
use crate::backend::Language::{CudaCpp, OpenClC};

const MAX_GROUP: i64 = 1024;
const WARP: i64 = 32;

const P_BM: Param = Param {
    name: "BM",
    default: 128,
    allowed: &[32, 64, 128, 256],
    meaning: "block tile along M (rows of C per work-group)",
};
const P_BN: Param = Param {
    name: "BN",
    default: 128,
    allowed: &[32, 64, 128, 256],
    meaning: "block tile along N (columns of C per work-group)",
};
const P_BK: Param = Param {
    name: "BK",
    default: 8,
    allowed: &[4, 8, 16, 32],
    meaning: "depth along K of one local-memory tile",
};
const P_WM: Param = Param {
    name: "WM",
    default: 64,
    allowed: &[32, 64, 128],
    meaning: "warp tile along M (WM/16 accumulator tiles of 16 rows)",
};
const P_WN: Param = Param {
    name: "WN",
    default: 32,
    allowed: &[8, 16, 32, 64, 128],
    meaning: "warp tile along N (WN/8 accumulator tiles of 8 columns)",
};
const P_STAGES: Param = Param {
    name: "STAGES",
    default: 2,
    allowed: &[2, 3, 4, 5, 6],
    meaning: "local-memory buffers of the cp.async pipeline (STAGES*BK*(BM+BN+2*pad) elements must fit the device's local memory: 48 KiB in OpenCL, what the GPU allows at launch in CUDA)",
};
/// Shared with the family's wgmma kernel (`tcwg`).
pub(super) const P_GROUP: Param = Param {
    name: "GROUP",
    default: 8,
    allowed: &[1, 2, 4, 8, 16],
    meaning: "tile rows per group of the block order (1: row by row)",
};
const P_MMA: Param = Param {
    name: "MMA",
    default: 1688,
    allowed: &[884, 1684, 1688, 16816],
    meaning: "the mma.sync shape as its digits: f64 884 = m8n8k4 (sm_80), 1684/1688/16816 = m16n8k4/k8/k16 (sm_90); f32 (TF32) runs m16n8k8 (1688)",
};

const P_PROMOTE_STAGE: Param = Param {
    name: "PROMOTE_STAGE",
    default: 0,
    allowed: &[0, 1],
    meaning: "f32 with PROMOTE_ACC: 0 adds each k8 step's tensor-core sum to the FP32 accumulators, 1 each stage's (BK/8 times fewer adds, MT*NT*4 more registers); f64 ignores it",
};

const P_SPLIT: Param = Param {
    name: "SPLIT",
    default: 0,
    allowed: &[0, 1],
    meaning: "f32: 0 splits each operand element into TF32 high and low parts in registers, in every warp that reads it; 1 once per tile where it lands in local memory (one more stage of local memory for the low parts, one more barrier per stage); f64 takes 0",
};

const P_SPLITK: Param = Param {
    name: "SPLITK",
    default: 1,
    allowed: &[1, 2, 3, 4, 6, 8],
    meaning: "blocks sharing a tile of C along K (1 = off): each sums its share of the K/BK tiles, the last to finish adds the partial sums in split order (for calls whose tiles of C fill few multiprocessors: thin M or N, long K)",
};

const P_TAILK: Param = Param {
    name: "TAILK",
    default: 1,
    allowed: &[1, 2, 3, 4, 6, 8, 16, 32],
    meaning: "work-groups sharing each tile of C of the last, partial wave along K (1 = off): one work-group per tile for the full waves, TAILK per tile of the last, the last to finish adding the partial sums in K order, so that wave spreads over every compute unit (the wave is WAVE work-groups per compute unit)",
};

const P_WAVE: Param = Param {
    name: "WAVE",
    default: 2,
    allowed: &[1, 2, 3, 4, 6, 8],
    meaning: "work-groups per compute unit that run at once (what the registers and local memory of a work-group allow): with TAILK > 1 it says which tiles make the last, partial wave; the kernel does not read it",
};

fn precision_bytes(c: &Config) -> i64 {
    if c.get(PRECISION) == 32 {
        4
    } else {
        8
    }
}

/// Elements of padding per local row: 8 floats or 4 doubles (32 bytes).
fn pad(c: &Config) -> i64 {
    32 / precision_bytes(c)
}

fn threads(c: &Config) -> i64 {
    let (wm, wn) = (c.get("WM"), c.get("WN"));
    if wm <= 0 || wn <= 0 {
        return 0;
    }
    WARP * (c.get("BM") / wm) * (c.get("BN") / wn)
}

/// The k of one mma step.
fn mma_k(c: &Config) -> i64 {
    match (c.get(PRECISION), c.get("MMA")) {
        (32, _) => 8,
        (_, 16816) => 16,
        (_, 1688) => 8,
        _ => 4,
    }
}

/// The pipeline's stages, and with SPLIT=1 one more for the low parts.
fn local_bytes(c: &Config) -> i64 {
    let stages = c.get("STAGES") + c.get("SPLIT");
    precision_bytes(c) * stages * c.get("BK") * (c.get("BM") + c.get("BN") + 2 * pad(c))
}

const CONSTRAINTS: &[Constraint] = &[
    WARP_TILES_DIVIDE,
    Constraint {
        message: "TAILK and SPLITK > 1 are two ways of sharing K among work-groups: use one (SPLITK=1 with TAILK)",
        involves: &["TAILK", "SPLITK"],
        holds: |c| c.get("TAILK") <= 1 || c.get("SPLITK") == 1,
    },
    Constraint {
        message: "WAVE says where the last wave starts for TAILK > 1 only: with TAILK=1 it stays at 2 (so a search does not try the same kernel under other WAVE values)",
        involves: &["TAILK", "WAVE"],
        holds: |c| c.get("TAILK") > 1 || c.get("WAVE") == 2,
    },
    Constraint {
        message: "the work-group (32*(BM/WM)*(BN/WN) work-items) must not exceed 1024 work-items",
        involves: &["BM", "WM", "BN", "WN"],
        holds: |c| threads(c) <= MAX_GROUP,
    },
    Constraint {
        message: "f32 runs TF32 products of shape m16n8k8: MMA must be 1688 (the other shapes are f64's)",
        involves: &["PRECISION", "MMA"],
        holds: |c| c.get(PRECISION) != 32 || c.get("MMA") == 1688,
    },
    Constraint {
        message: "PROMOTE_STAGE is f32's (the FP64 tensor cores accumulate in IEEE FP64): f64 takes 0",
        involves: &["PRECISION", "PROMOTE_STAGE"],
        holds: |c| c.get(PRECISION) == 32 || c.get("PROMOTE_STAGE") == 0,
    },
    Constraint {
        message: "SPLIT is f32's (it splits operands into TF32 parts): f64 takes 0",
        involves: &["PRECISION", "SPLIT"],
        holds: |c| c.get(PRECISION) == 32 || c.get("SPLIT") == 0,
    },
    Constraint {
        message: "a local-memory tile must hold whole mma steps: BK a multiple of the shape's k (8 for f32 and MMA=1688, 16 for 16816, 4 otherwise)",
        involves: &["BK", "MMA", "PRECISION"],
        holds: |c| divides(mma_k(c), c.get("BK")),
    },
    Constraint {
        message: "every work-item must copy whole 16-byte chunks of both tiles: BK*BM and BK*BN elements a multiple of (16 bytes / element size) * 32*(BM/WM)*(BN/WN)",
        involves: &["BK", "BM", "BN", "WM", "WN", "PRECISION"],
        holds: |c| {
            let per_chunk = 16 / precision_bytes(c);
            let t = per_chunk * threads(c);
            divides(t, c.get("BK") * c.get("BM")) && divides(t, c.get("BK") * c.get("BN"))
        },
    },
];

/// gemmlab's own kernel: its defaults are its published state. 3xTF32 with each
/// k8 step promoted into FP32 accumulators (FP32 accuracy) unless TF32_SINGLE or
/// PROMOTE_ACC=0 is asked for.
const SWITCHES: &[SwitchUse] = &[
    SwitchUse::on(USE_BOUNDS),
    SwitchUse::on(USE_RESTRICT),
    SwitchUse::off(CP_CA),
    SwitchUse::off(TF32_SINGLE),
    SwitchUse::on(PROMOTE_ACC),
];

pub const TC: KernelSpec = KernelSpec {
    id: "tc",
    entry: "tc_gemm",
    family: Family::TensorCore,
    title: "gemmlab tensor-core GEMM (mma.sync: FP64 DGEMM, 3xTF32 SGEMM)",
    idea: "C = alpha A B + beta C on tensor cores through inline-PTX mma.sync: BM x BN block tiles of \
           warps, each warp WM x WN in 16 x 8 accumulator tiles; A and B^T tiles copied to local memory \
           with cp.async through a STAGES-deep pipeline and read as mma fragments (rows permuted so each \
           lane's pair is one load). f64: FP64 mma of shape MMA. f32: each operand split into TF32 high \
           and low parts, three m16n8k8 products per step (3xTF32, FP32 accuracy); TF32_SINGLE keeps one \
           (1xTF32, lower precision)",
    sources: &[(OpenClC, include_str!("../../../kernels-cl/tc.cl")), (CudaCpp, include_str!("../../../kernels-cu/tc.cu"))],
    params: &[P_BM, P_BN, P_BK, P_WM, P_WN, P_STAGES, P_GROUP, P_MMA, P_PROMOTE_STAGE, P_SPLIT, P_SPLITK, P_TAILK, P_WAVE],
    constraints: CONSTRAINTS,
    local_bytes,
    launch: Launch {
        local: |c| {
            (
                32 * c.u("BM") / c.u("WM").max(1),
                c.u("BN") / c.u("WN").max(1),
            )
        },
        per_item: |c| (c.u("WM") / 32, c.u("WN")),
    },
    operands: Operands {
        b_transposed: true,
        tile: |c| (c.u("BM"), c.u("BN"), c.u("BK")),
    },
    switches: SWITCHES,
    abi: Abi::IndirectSplitK,
    precisions: &[Precision::F32, Precision::F64],
};

pub const KERNELS: &[KernelSpec] = &[TC];

/// The compute capability the kernel needs at `c`: the m16n8 f64 shapes are sm_90's,
/// everything else (m8n8k4 f64, m16n8k8 tf32, cp.async) sm_80's.
pub fn needs_sm(c: &Config) -> (u32, u32) {
    if c.get(PRECISION) != 32 && c.get("MMA") != 884 {
        (9, 0)
    } else {
        (8, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Language;

    fn with(defines: &[(&str, i64)]) -> crate::error::Result<Config> {
        let d: Vec<(String, i64)> = defines.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        TC.config(&d)
    }

    #[test]
    fn arithmetic_says_emulated_fp32_and_lowered_precision() {
        use crate::kernel::builtin::{Arithmetic, Hints};
        let f32c = TC.defaults();
        let f64c = TC.with_precision(&f32c, Precision::F64).unwrap();
        let on = |name: &str, v: bool| {
            let mut h = Hints::default();
            h.switches.insert(name.into(), v);
            h
        };
        let plain = Hints::default();
        assert_eq!(TC.arithmetic(&f32c, &plain), Arithmetic::EmulatedFp32);
        assert_eq!(TC.arithmetic(&f64c, &plain), Arithmetic::Native);
        // The published states, asked for explicitly, lower nothing.
        let published = on("PROMOTE_ACC", true);
        assert_eq!(TC.arithmetic(&f32c, &published), Arithmetic::EmulatedFp32);
        let single = on("TF32_SINGLE", true);
        assert_eq!(
            TC.arithmetic(&f32c, &single),
            Arithmetic::Lower("TF32_SINGLE")
        );
        let unpromoted = on("PROMOTE_ACC", false);
        assert_eq!(
            TC.arithmetic(&f32c, &unpromoted),
            Arithmetic::Lower("PROMOTE_ACC")
        );
        let simt = crate::kernel::builtin::find("simt").unwrap();
        assert_eq!(
            simt.arithmetic(&simt.defaults(), &plain),
            Arithmetic::Native
        );
    }

    #[test]
    fn defaults_fit_both_precisions() {
        let f = TC.defaults();
        assert_eq!(f.get(PRECISION), 32);
        TC.validate(&f).unwrap();
        assert_eq!(TC.threads_per_group(&f), 256);
        assert_eq!(local_bytes(&f), 4 * 2 * 8 * 272);
        // Two stages of 8 x (128 + 128 + 8) doubles.
        let c = TC.with_precision(&f, Precision::F64).unwrap();
        TC.validate(&c).unwrap();
        assert_eq!(local_bytes(&c), 8 * 2 * 8 * 264);
        // 4096 x 2048 in 128 x 128 tiles: 32 x 16 work-groups of (32*2) x 4, the
        // CUDA twin taking its tiles at launch (the OpenCL twin declares them).
        let g = TC.geometry(&c, 4096, 2048);
        assert_eq!(g.groups(), [32, 16, 1]);
        assert_eq!(g.launch_local, 8 * 2 * 8 * 264);
        assert!(TC.takes_local_at_launch(Language::CudaCpp));
        assert!(!TC.takes_local_at_launch(Language::OpenClC));
        assert_eq!(needs_sm(&c), (9, 0));
        assert_eq!(needs_sm(&f), (8, 0));
    }

    #[test]
    fn violated_constraints_say_which_and_why() {
        let e = with(&[("PRECISION", 32), ("MMA", 16816)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("m16n8k8") && e.contains("MMA=16816"), "{e}");
        let e = with(&[("PRECISION", 64), ("MMA", 16816)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("whole mma steps") && e.contains("BK=8"), "{e}");
        // SPLIT keeps one more stage for the low parts; f64 has none to keep.
        let split = with(&[("PRECISION", 32), ("SPLIT", 1)]).unwrap();
        assert_eq!(local_bytes(&split), 4 * 3 * 8 * 272);
        let e = with(&[("PRECISION", 64), ("SPLIT", 1)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("SPLIT is f32's"), "{e}");
        // Local memory is the device's to judge (the space's rule): 3 stages of
        // 16 x 264 doubles (99 KiB) are a valid configuration.
        assert!(with(&[("PRECISION", 64), ("STAGES", 3), ("BK", 16)]).is_ok());
        // The last wave's split and split-K are two ways of sharing K: one at a time.
        assert!(with(&[("PRECISION", 64), ("TAILK", 4), ("WAVE", 4)]).is_ok());
        let e = with(&[("WAVE", 4)]).unwrap_err().to_string();
        assert!(e.contains("TAILK > 1 only"), "{e}");
        let e = with(&[("TAILK", 2), ("SPLITK", 2)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("use one") && e.contains("TAILK=2"), "{e}");
        let e = with(&[("BM", 32)]).unwrap_err().to_string();
        assert!(e.contains("warp tile must divide"), "{e}");
        // 64 x 64 of 32 x 8 warps: 16 warps = 512 work-items; BK=4 f64: 256 elements per tile,
        // 128 chunks for 512 work-items.
        let e = with(&[
            ("PRECISION", 64),
            ("BM", 64),
            ("BN", 64),
            ("WM", 32),
            ("WN", 8),
            ("BK", 4),
            ("MMA", 1684),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("16-byte chunks"), "{e}");
    }
}
