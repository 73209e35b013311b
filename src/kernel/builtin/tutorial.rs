//! Family 1: the kernels of Nugteren's "OpenCL SGEMM tuning for Kepler"
//! tutorial, myGEMM1 to myGEMM11, column-major C = A * B.

use super::switches::{
    SwitchUse, UNROLL_K, UNROLL_WPT, USE_BOUNDS, USE_LDG, USE_RESTRICT, USE_SHUFFLE, VOLATILE_IDX,
};
use super::Precision;
use super::Sources;
use super::{Abi, Config, Constraint, Family, KernelSpec, Launch, Operands, Param};
use crate::backend::Language::{CudaCpp, OpenClC};

/// The tutorial's kernels are written for `float` only.
const F32_ONLY: &[Precision] = &[Precision::F32];

const TS_SMALL: &[i64] = &[4, 8, 16, 32];
const TS_ANY: &[i64] = &[8, 16, 32, 64, 128];
const WPT: &[i64] = &[1, 2, 4, 8, 16, 32];
const WIDTH: &[i64] = &[1, 2, 4, 8];
/// Kernels 7-10 store the loaded vectors into local memory under
/// `#if WIDTH == 1 / 2 / 4` only: the published code has no WIDTH 8 branch.
const WIDTH_TILED: &[i64] = &[1, 2, 4];
const TSK: &[i64] = &[4, 8, 16, 32, 64];
const TSMN: &[i64] = &[16, 32, 64, 128, 256];
const WPTMN: &[i64] = &[1, 2, 4, 8, 16];
const VEC: &[i64] = &[2, 4, 8];

const P_TS: Param = Param {
    name: "TS",
    default: 32,
    allowed: TS_SMALL,
    meaning: "tile size along M and N",
};
const P_TS3: Param = Param {
    name: "TS",
    default: 32,
    allowed: TS_ANY,
    meaning: "tile size along M and N",
};
const P_WPT: Param = Param {
    name: "WPT",
    default: 8,
    allowed: WPT,
    meaning: "elements of C per work-item along N",
};
const P_WIDTH: Param = Param {
    name: "WIDTH",
    default: 4,
    allowed: WIDTH,
    meaning: "vector width of the wide loads",
};
const P_WIDTH_TILED: Param = Param {
    name: "WIDTH",
    default: 4,
    allowed: WIDTH_TILED,
    meaning: "vector width of the wide loads (the published local-memory stores handle 1, 2 and 4)",
};
const P_TSDK: Param = Param {
    name: "TSDK",
    default: 16,
    allowed: TSK,
    meaning: "tile depth along K",
};
const P_TSM: Param = Param {
    name: "TSM",
    default: 128,
    allowed: TSMN,
    meaning: "tile size along M",
};
const P_TSN: Param = Param {
    name: "TSN",
    default: 128,
    allowed: TSMN,
    meaning: "tile size along N",
};
const P_TSK: Param = Param {
    name: "TSK",
    default: 16,
    allowed: TSK,
    meaning: "tile size along K",
};
const P_WPTM: Param = Param {
    name: "WPTM",
    default: 8,
    allowed: WPTMN,
    meaning: "elements of C per work-item along M",
};
const P_WPTN: Param = Param {
    name: "WPTN",
    default: 8,
    allowed: WPTMN,
    meaning: "elements of C per work-item along N",
};
const P_RX: Param = Param {
    name: "RX",
    default: 8,
    allowed: VEC,
    meaning: "register tile along M = vector width of A and C",
};
const P_RY: Param = Param {
    name: "RY",
    default: 4,
    allowed: VEC,
    meaning: "register tile along N",
};
const P_RK: Param = Param {
    name: "RK",
    default: 4,
    allowed: VEC,
    meaning: "K per step = vector width of B",
};

const MAX_GROUP: usize = 1024;

fn rtsm(c: &Config) -> i64 {
    c.get("TSM") / c.get("WPTM").max(1)
}
fn rtsn(c: &Config) -> i64 {
    c.get("TSN") / c.get("WPTN").max(1)
}

const GROUP_TS2: Constraint = Constraint {
    message: "a TS x TS work-group must not exceed 1024 work-items",
    involves: &["TS"],
    holds: |c| (c.get("TS") * c.get("TS")) as usize <= MAX_GROUP,
};
const TS_WPT: Constraint = Constraint {
    message: "TS must be a multiple of WPT (each work-item owns WPT columns strided by TS/WPT)",
    involves: &["TS", "WPT"],
    holds: |c| c.get("TS") % c.get("WPT") == 0,
};
const GROUP_TS_RTS: Constraint = Constraint {
    message: "the TS x TS/WPT work-group must not exceed 1024 work-items",
    involves: &["TS", "WPT"],
    holds: |c| (c.get("TS") * (c.get("TS") / c.get("WPT").max(1))) as usize <= MAX_GROUP,
};
const TS_WIDTH: Constraint = Constraint {
    message: "TS must be a multiple of WIDTH (rows of a tile are loaded as WIDTH-wide vectors)",
    involves: &["TS", "WIDTH"],
    holds: |c| c.get("TS") % c.get("WIDTH") == 0,
};
const TSDK_LOADS: Constraint = Constraint {
    message:
        "TSDK*WPT must be a multiple of TS (each work-item loads TSDK*WPT/TS elements per tile)",
    involves: &["TSDK", "WPT", "TS"],
    holds: |c| (c.get("TSDK") * c.get("WPT")) % c.get("TS") == 0,
};
const SQUARE: Constraint = Constraint {
    message: "TSM must equal TSN in kernels 6-9 (A and B share one loads-per-thread count; kernel 10 lifts this)",
    involves: &["TSM", "TSN"],
    holds: |c| c.get("TSM") == c.get("TSN"),
};
const WPT_DIVIDES: Constraint = Constraint {
    message: "TSM must be a multiple of WPTM and TSN a multiple of WPTN",
    involves: &["TSM", "WPTM", "TSN", "WPTN"],
    holds: |c| c.get("TSM") % c.get("WPTM") == 0 && c.get("TSN") % c.get("WPTN") == 0,
};
const GROUP_RTS: Constraint = Constraint {
    message: "the (TSM/WPTM) x (TSN/WPTN) work-group must hold 1 to 1024 work-items",
    involves: &["TSM", "WPTM", "TSN", "WPTN"],
    holds: |c| {
        let t = rtsm(c) * rtsn(c);
        t >= 1 && t as usize <= MAX_GROUP
    },
};
const LOADS_A: Constraint = Constraint {
    message: "TSK*TSM must be a multiple of (TSM/WPTM)*(TSN/WPTN) (every work-item loads the same number of A elements)",
    involves: &["TSK", "TSM", "WPTM", "TSN", "WPTN"],
    holds: |c| (c.get("TSK") * c.get("TSM")) % (rtsm(c) * rtsn(c)).max(1) == 0,
};
const LOADS_A_WIDE: Constraint = Constraint {
    message: "TSK*TSM must be a multiple of (TSM/WPTM)*(TSN/WPTN)*WIDTH (every work-item loads the same number of A vectors)",
    involves: &["TSK", "TSM", "WPTM", "TSN", "WPTN", "WIDTH"],
    holds: |c| (c.get("TSK") * c.get("TSM")) % (rtsm(c) * rtsn(c) * c.get("WIDTH")).max(1) == 0,
};
const LOADS_B_WIDE: Constraint = Constraint {
    message: "TSK*TSN must be a multiple of (TSM/WPTM)*(TSN/WPTN)*WIDTH (every work-item loads the same number of B vectors)",
    involves: &["TSK", "TSN", "WPTM", "TSM", "WPTN", "WIDTH"],
    holds: |c| (c.get("TSK") * c.get("TSN")) % (rtsm(c) * rtsn(c) * c.get("WIDTH")).max(1) == 0,
};
const TSM_WIDTH: Constraint = Constraint {
    message: "TSM and TSN must be multiples of WIDTH (tiles are loaded as WIDTH-wide vectors)",
    involves: &["TSM", "TSN", "WIDTH"],
    holds: |c| c.get("TSM") % c.get("WIDTH") == 0 && c.get("TSN") % c.get("WIDTH") == 0,
};
/// Static local (shared) memory of each kernel's tiles, in bytes: what the
/// device-limit filter of the tuner compares with the device's local memory.
fn local_none(_: &Config) -> i64 {
    0
}
fn local_ts2(c: &Config) -> i64 {
    8 * c.get("TS") * c.get("TS")
}
fn local_5(c: &Config) -> i64 {
    4 * (c.get("TSDK") * c.get("TS") + c.get("TS") * (c.get("TSDK") + 2))
}
fn local_7(c: &Config) -> i64 {
    4 * c.get("TSK") * (c.get("TSM") + c.get("TSN"))
}
fn local_9(c: &Config) -> i64 {
    8 * c.get("TSK") * (c.get("TSM") + c.get("TSN"))
}
/// Static local (shared) memory per work-group: NVIDIA caps it at 48 KiB in both toolchains.
const LOCAL_LIMIT: i64 = 48 * 1024;
const LOCAL_TS2: Constraint = Constraint {
    message: "the two TS x TS local tiles (8*TS*TS bytes) must fit in 48 KiB of local memory",
    involves: &["TS"],
    holds: |c| local_ts2(c) <= LOCAL_LIMIT,
};
const LOCAL_5: Constraint = Constraint {
    message: "the local tiles (4*(TSDK*TS + TS*(TSDK+2)) bytes) must fit in 48 KiB of local memory",
    involves: &["TS", "TSDK"],
    holds: |c| local_5(c) <= LOCAL_LIMIT,
};
fn tiles_bytes(c: &Config) -> i64 {
    4 * (c.get("TSK") * c.get("TSM") + c.get("TSN") * (c.get("TSK") + 2))
}
const LOCAL_6: Constraint = Constraint {
    message: "the local tiles (4*(TSK*TSM + TSN*(TSK+2)) bytes) must fit in 48 KiB of local memory",
    involves: &["TSK", "TSM", "TSN"],
    holds: |c| tiles_bytes(c) <= LOCAL_LIMIT,
};
const LOCAL_7: Constraint = Constraint {
    message: "the local tiles (4*TSK*(TSM + TSN) bytes) must fit in 48 KiB of local memory",
    involves: &["TSK", "TSM", "TSN"],
    holds: |c| local_7(c) <= LOCAL_LIMIT,
};
const LOCAL_9: Constraint = Constraint {
    message: "the double-buffered local tiles (8*TSK*(TSM + TSN) bytes) must fit in 48 KiB of local memory",
    involves: &["TSK", "TSM", "TSN"],
    holds: |c| local_9(c) <= LOCAL_LIMIT,
};
const RK_IS_RY: Constraint = Constraint {
    message: "RK must equal RY (clBlas reads B in vectors as wide as the register tile's N side)",
    involves: &["RK", "RY"],
    holds: |c| c.get("RK") == c.get("RY"),
};

/// Kernel 8's B through warp shuffles (a switch: the tuner's space judges it with
/// the point's switch states; both twins refuse the same with #error).
const SHUFFLE_SEGMENTS: Constraint = Constraint {
    message: "USE_SHUFFLE=1 needs WPTN a power of two <= 32 (the shuffle width), RTSM = TSM/WPTM a multiple of WPTN and RTSM*RTSN a multiple of 32 (whole warps)",
    involves: &["USE_SHUFFLE", "TSM", "TSN", "WPTM", "WPTN"],
    holds: |c| {
        let (wptn, rtsm) = (c.get("WPTN"), c.get("TSM") / c.get("WPTM").max(1));
        let rtsn = c.get("TSN") / wptn.max(1);
        c.get("USE_SHUFFLE") == 0
            || (wptn > 0 && wptn <= 32 && wptn & (wptn - 1) == 0 && rtsm % wptn == 0 && (rtsm * rtsn) % 32 == 0)
    },
};

// The switches each kernel has, with the published state: the tutorial's
// kernels.cl has no launch bounds, restrict only on kernel 11, '#pragma unroll'
// on the loop over k from kernel 7 on, and its CUDA build (cuGEMM.cu) defines
// USE_LDG but not USE_SHUFFLE.
const SW_PLAIN: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::off(USE_RESTRICT),
    SwitchUse::off(UNROLL_K),
];
const SW_WPT: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::off(USE_RESTRICT),
    SwitchUse::off(UNROLL_K),
    SwitchUse::off(UNROLL_WPT),
];
const SW_6: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::off(USE_RESTRICT),
    SwitchUse::off(UNROLL_K),
    SwitchUse::off(VOLATILE_IDX),
];
const SW_7: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::off(USE_RESTRICT),
    SwitchUse::on(UNROLL_K),
    SwitchUse::off(VOLATILE_IDX),
];
const SW_8: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::off(USE_RESTRICT),
    SwitchUse::on(UNROLL_K),
    SwitchUse::off(VOLATILE_IDX),
    SwitchUse::cuda_only(USE_LDG),
    SwitchUse::off(USE_SHUFFLE),
];
const SW_9: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::off(USE_RESTRICT),
    SwitchUse::on(UNROLL_K),
    SwitchUse::off(VOLATILE_IDX),
    SwitchUse::cuda_only(USE_LDG),
];
const SW_11: &[SwitchUse] = &[
    SwitchUse::off(USE_BOUNDS),
    SwitchUse::on(USE_RESTRICT),
    SwitchUse::on(UNROLL_K),
];

const SQUARE_LOCAL: Launch = Launch {
    local: |c| (c.u("TS"), c.u("TS")),
    per_item: |_| (1, 1),
};
const RTS_LOCAL: Launch = Launch {
    local: |c| (c.u("TS"), c.u("TS") / c.u("WPT").max(1)),
    per_item: |c| (1, c.u("WPT")),
};
const BLOCKED: Launch = Launch {
    local: |c| {
        (
            c.u("TSM") / c.u("WPTM").max(1),
            c.u("TSN") / c.u("WPTN").max(1),
        )
    },
    per_item: |c| (c.u("WPTM"), c.u("WPTN")),
};
const BLOCKED_TILE: fn(&Config) -> (usize, usize, usize) = |c| (c.u("TSM"), c.u("TSN"), c.u("TSK"));
const REGISTER_BLOCKED: &[Param] = &[P_TSM, P_TSN, P_TSK, P_WPTM, P_WPTN];
const REGISTER_BLOCKED_WIDE: &[Param] = &[P_TSM, P_TSN, P_TSK, P_WPTM, P_WPTN, P_WIDTH_TILED];

macro_rules! sources {
    ($file:literal) => {
        &[
            (
                OpenClC,
                include_str!(concat!("../../../kernels-cl/", $file, ".cl")),
            ),
            (
                CudaCpp,
                include_str!(concat!("../../../kernels-cu/", $file, ".cu")),
            ),
        ]
    };
}

const S1: Sources = sources!("gemm01");
const S2: Sources = sources!("gemm02");
const S3: Sources = sources!("gemm03");
const S4: Sources = sources!("gemm04");
const S5: Sources = sources!("gemm05");
const S6: Sources = sources!("gemm06");
const S7: Sources = sources!("gemm07");
const S8: Sources = sources!("gemm08");
const S9: Sources = sources!("gemm09");
const S10: Sources = sources!("gemm10");
const S11: Sources = sources!("gemm11");

pub const KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "gemm1",
        entry: "myGEMM1",
        family: Family::Tutorial,
        title: "naive",
        idea: "one work-item per element of C, operands straight from global memory",
        sources: S1,
        params: &[P_TS],
        constraints: &[GROUP_TS2],
        local_bytes: local_none,
        launch: SQUARE_LOCAL,
        operands: Operands { b_transposed: false, tile: |c| (c.u("TS"), c.u("TS"), 1) },
        switches: SW_PLAIN,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm2",
        entry: "myGEMM2",
        family: Family::Tutorial,
        title: "local-memory tiles",
        idea: "TS x TS tiles of A and B staged in local memory, barriers around the inner loop",
        sources: S2,
        params: &[P_TS],
        constraints: &[GROUP_TS2, LOCAL_TS2],
        local_bytes: local_ts2,
        launch: SQUARE_LOCAL,
        operands: Operands { b_transposed: false, tile: |c| (c.u("TS"), c.u("TS"), c.u("TS")) },
        switches: SW_PLAIN,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm3",
        entry: "myGEMM3",
        family: Family::Tutorial,
        title: "more work per thread",
        idea: "each work-item computes WPT elements of C along N, strided by TS/WPT",
        sources: S3,
        params: &[P_TS3, P_WPT],
        constraints: &[TS_WPT, GROUP_TS_RTS, LOCAL_TS2],
        local_bytes: local_ts2,
        launch: RTS_LOCAL,
        operands: Operands { b_transposed: false, tile: |c| (c.u("TS"), c.u("TS"), c.u("TS")) },
        switches: SW_WPT,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm4",
        entry: "myGEMM4",
        family: Family::Tutorial,
        title: "wide loads",
        idea: "A and C accessed as vectors of WIDTH floats along M",
        sources: S4,
        params: &[P_TS, P_WIDTH],
        constraints: &[TS_WIDTH, LOCAL_TS2, Constraint {
            message: "the TS/WIDTH x TS work-group must not exceed 1024 work-items",
            involves: &["TS", "WIDTH"],
            holds: |c| (c.get("TS") / c.get("WIDTH").max(1) * c.get("TS")) as usize <= MAX_GROUP,
        }],
        local_bytes: local_ts2,
        launch: Launch {
            local: |c| (c.u("TS") / c.u("WIDTH").max(1), c.u("TS")),
            per_item: |c| (c.u("WIDTH"), 1),
        },
        operands: Operands { b_transposed: false, tile: |c| (c.u("TS"), c.u("TS"), c.u("TS")) },
        switches: SW_WPT,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm5",
        entry: "myGEMM5",
        family: Family::Tutorial,
        title: "transposed B, rectangular tiles",
        idea: "B pre-transposed; tiles TSDK deep along K; local B tile padded by 2 against bank conflicts",
        sources: S5,
        params: &[P_TS3, P_WPT, P_TSDK],
        constraints: &[TS_WPT, GROUP_TS_RTS, TSDK_LOADS, LOCAL_5],
        local_bytes: local_5,
        launch: RTS_LOCAL,
        operands: Operands { b_transposed: true, tile: |c| (c.u("TS"), c.u("TS"), c.u("TSDK")) },
        switches: SW_WPT,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm6",
        entry: "myGEMM6",
        family: Family::Tutorial,
        title: "2D register blocking",
        idea: "TSM x TSN x TSK tiles; each work-item owns WPTM x WPTN accumulators in registers",
        sources: S6,
        params: REGISTER_BLOCKED,
        constraints: &[SQUARE, WPT_DIVIDES, GROUP_RTS, LOADS_A, LOCAL_6],
        local_bytes: tiles_bytes,
        launch: BLOCKED,
        operands: Operands { b_transposed: true, tile: BLOCKED_TILE },
        switches: SW_6,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm7",
        entry: "myGEMM7",
        family: Family::Tutorial,
        title: "2D register blocking + wide loads",
        idea: "kernel 6 with A and B tiles loaded from global memory as WIDTH-wide vectors",
        sources: S7,
        params: REGISTER_BLOCKED_WIDE,
        constraints: &[SQUARE, WPT_DIVIDES, GROUP_RTS, TSM_WIDTH, LOADS_A_WIDE, LOCAL_7],
        local_bytes: local_7,
        launch: BLOCKED,
        operands: Operands { b_transposed: true, tile: BLOCKED_TILE },
        switches: SW_7,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm8",
        entry: "myGEMM8",
        family: Family::Tutorial,
        title: "read-only cache + warp shuffles",
        idea: "kernel 7 with the CUDA-specific options USE_LDG (read-only-cache loads; on in the published CUDA build) and USE_SHUFFLE (B through warp shuffles; off in the published build)",
        sources: S8,
        params: REGISTER_BLOCKED_WIDE,
        constraints: &[SQUARE, WPT_DIVIDES, GROUP_RTS, TSM_WIDTH, LOADS_A_WIDE, LOCAL_7, SHUFFLE_SEGMENTS],
        local_bytes: local_7,
        launch: BLOCKED,
        operands: Operands { b_transposed: true, tile: BLOCKED_TILE },
        switches: SW_8,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm9",
        entry: "myGEMM9",
        family: Family::Tutorial,
        title: "prefetching",
        idea: "kernel 7 with double-buffered local tiles: the next tile loads while the current one is used",
        sources: S9,
        params: REGISTER_BLOCKED_WIDE,
        constraints: &[SQUARE, WPT_DIVIDES, GROUP_RTS, TSM_WIDTH, LOADS_A_WIDE, LOCAL_9],
        local_bytes: local_9,
        launch: BLOCKED,
        operands: Operands { b_transposed: true, tile: BLOCKED_TILE },
        switches: SW_9,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm10",
        entry: "myGEMM10",
        family: Family::Tutorial,
        title: "incomplete tiles, independent TSM/TSN",
        idea: "kernel 9 generalised: TSM and TSN independent; any M, N, K through zero padding",
        sources: S10,
        params: REGISTER_BLOCKED_WIDE,
        constraints: &[WPT_DIVIDES, GROUP_RTS, TSM_WIDTH, LOADS_A_WIDE, LOADS_B_WIDE, LOCAL_9],
        local_bytes: local_9,
        launch: BLOCKED,
        operands: Operands { b_transposed: true, tile: BLOCKED_TILE },
        switches: SW_9,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
    KernelSpec {
        id: "gemm11",
        entry: "myGEMM11",
        family: Family::Tutorial,
        title: "clBlas-style register tiling",
        idea: "no local memory; A read as RX-wide vectors, B as RK-wide vectors, RX x RY accumulators per work-item, 8x8 work-groups",
        sources: S11,
        params: &[P_RX, P_RY, P_RK],
        constraints: &[RK_IS_RY],
        local_bytes: local_none,
        launch: Launch {
            local: |_| (8, 8),
            per_item: |c| (c.u("RX"), c.u("RY")),
        },
        operands: Operands { b_transposed: false, tile: |c| (8 * c.u("RX"), 8 * c.u("RY"), c.u("RK")) },
        switches: SW_11,
        abi: Abi::Tutorial,
        precisions: F32_ONLY,
    },
];
