//! Family 4: gemmlab's own SIMT SGEMM for Hopper-class GPUs (`kernels-*/simt.*`):
//! block, warp and thread tiles, 128-bit accesses, a cp.async pipeline, block
//! rasterisation and split-K, every feature a switch or a parameter whose
//! value 1 is "off". Called as CLBlast's indirect kernel is (padded operands,
//! B transposed) plus a split-K workspace.

use super::switches::{
    SwitchUse, ASYNC_ALONG_K, ASYNC_COPY, CP_CA, KMAJOR_RUNS, KTILE_B, RASTER, SMEM_PAD,
    USE_BOUNDS, USE_RESTRICT, VEC_LOADS,
};
use super::Precision;
use super::{divides, WARP_TILES_DIVIDE};
use super::{Abi, Config, Constraint, Family, Hints, KernelSpec, Launch, Operands, Param};
use crate::backend::Language::{CudaCpp, OpenClC};
use crate::backend::{DeviceInfo, Toolchain};

const LOCAL_LIMIT: i64 = 48 * 1024;
const MAX_GROUP: i64 = 1024;
const WARP: i64 = 32;
/// NVIDIA's register file per SM and registers per thread (Kepler to Hopper).
const REGISTER_FILE: i64 = 64 * 1024;
const MAX_REGISTERS: i64 = 255;

// 48 and 96 are for thin calls: 33 columns fill 69% of a 48-wide tile, 52% of a 64-wide one.
const P_BM: Param = Param {
    name: "BM",
    default: 128,
    allowed: &[32, 48, 64, 96, 128, 256],
    meaning: "block tile along M (rows of C per work-group)",
};
const P_BN: Param = Param {
    name: "BN",
    default: 128,
    allowed: &[32, 48, 64, 96, 128, 256],
    meaning: "block tile along N (columns of C per work-group)",
};
const P_BK: Param = Param {
    name: "BK",
    default: 16,
    allowed: &[8, 16, 32],
    meaning: "depth along K of one local-memory tile",
};
const P_WM: Param = Param {
    name: "WM",
    default: 64,
    allowed: &[16, 32, 64, 128],
    meaning: "warp tile along M",
};
const P_WN: Param = Param {
    name: "WN",
    default: 32,
    allowed: &[16, 32, 64, 128],
    meaning: "warp tile along N",
};
const P_TM: Param = Param {
    name: "TM",
    default: 8,
    allowed: &[4, 8, 16],
    meaning: "thread tile along M (accumulators per work-item, in chunks of 4)",
};
const P_TN: Param = Param {
    name: "TN",
    default: 8,
    allowed: &[4, 8, 16],
    meaning: "thread tile along N (in chunks of 4)",
};
const P_STAGES: Param = Param {
    name: "STAGES",
    default: 2,
    allowed: &[1, 2, 3, 4],
    meaning: "local-memory buffers of the copy pipeline (1: no pipelining)",
};
const P_SPLITK: Param = Param {
    name: "SPLITK",
    default: 1,
    allowed: &[1, 2, 3, 4, 6, 8, 16, 32],
    meaning: "work-groups sharing one tile of C, each over a share of its K/BK tiles along K (1: no split-K)",
};
const P_REDUCE: Param = Param {
    name: "REDUCE",
    default: 0,
    allowed: &[0, 1],
    meaning: "with SPLITK > 1: 0, the last work-group of a tile adds the splits' partial sums; 1, each split writes its sums to a slice of its own and a kernel launched after (the routine's reduce_splits) adds them in split order, over the whole device instead of one work-group",
};
const P_STREAMK: Param = Param {
    name: "STREAMK",
    default: 0,
    allowed: &[0, 1, 2, 3, 4],
    meaning: "stream-K: a persistent grid of STREAMK work-groups per compute unit sharing every (tile, K/BK slice) iteration evenly, shared tiles summed in K order by the last to finish (0: off)",
};
// Slice-K: more warps on a tile of C where a call has few tiles (cuBLAS's small
// SGEMMs are "sliced1x4" kernels); 1 keeps the kernel as it was.
const P_SLICEK: Param = Param {
    name: "SLICEK",
    default: 1,
    allowed: &[1, 2, 4],
    meaning: "groups of warps sharing each tile of C, each computing its BK/SLICEK-deep slice of every BK-deep tile, their sums added through local memory at the end (1: off)",
};
const P_GROUP: Param = Param {
    name: "GROUP",
    default: 8,
    allowed: &[2, 4, 8, 16],
    meaning: "tile rows per group of the rasterised block order (with RASTER=1)",
};

const P_KMAJOR_A: Param = Param {
    name: "KMAJOR_A",
    default: 0,
    allowed: &[0, 1],
    meaning: "1: A read K-contiguous (A^T, as a column-major TN call stores it), so the routine need not transpose it; 0: M-contiguous",
};
const P_KMAJOR_B: Param = Param {
    name: "KMAJOR_B",
    default: 0,
    allowed: &[0, 1],
    meaning: "1: B read K-contiguous (as a column-major NN call stores it), so the routine need not transpose it; 0: N-contiguous (B^T)",
};

const P_ALONG_MN: Param = Param {
    name: "ALONG_MN",
    default: 0,
    allowed: &[0, 1],
    meaning: "in place, 1: A and B reach the kernel read along M and N with offsets and leading dimensions multiples of 4 (the routine first transposes an operand the call stores K-contiguous, or copies an unaligned one, in one launch), so the kernel is compiled for that form alone (with ASYNC_COPY, cp.async copies both and nothing goes through registers); 0: every operand read as the call stores it",
};

const P_FIXED_FORM: Param = Param {
    name: "FIXED_FORM",
    default: 0,
    allowed: &[0, 1],
    meaning: "in place, 1: A and B reach the kernel in the form KMAJOR_A and KMAJOR_B name (one of them K-contiguous: both along M and N is ALONG_MN=1) with offsets and leading dimensions multiples of 4 (the routine first transposes or copies an operand the call stores otherwise), so the kernel holds no code for the other forms: a call stored so, aligned, runs with no launch before it; 0: each operand's form read at run time",
};
const P_DIRECT_KMAJOR_A: Param = Param {
    name: "KMAJOR_A",
    default: 0,
    allowed: &[0, 1],
    meaning: "in place, with FIXED_FORM=1: 1 compiles for A read K-contiguous (as a column-major TN call stores it), 0 for A read along M; 0 without FIXED_FORM",
};
const P_DIRECT_KMAJOR_B: Param = Param {
    name: "KMAJOR_B",
    default: 0,
    allowed: &[0, 1],
    meaning: "in place, with FIXED_FORM=1: 1 compiles for B read K-contiguous (as a column-major NN call stores it), 0 for B read along N; 0 without FIXED_FORM",
};

/// Work-items of a work-group: a tile's thread tiles, once per slice of K.
fn threads(c: &Config) -> i64 {
    let (tm, tn) = (c.get("TM"), c.get("TN"));
    if tm <= 0 || tn <= 0 {
        return 0;
    }
    (c.get("BM") / tm) * (c.get("BN") / tn) * slices(c)
}

/// Groups of warps sharing a tile (`SLICEK`; 1 where a record predates it).
fn slices(c: &Config) -> i64 {
    c.get("SLICEK").max(1)
}

/// Whether work-groups share a tile's K (split-K or stream-K) and sum it
/// through the workspace.
pub fn shares_k(c: &Config) -> bool {
    c.get("SPLITK") > 1 || c.get("STREAMK") > 0
}

/// Local memory without padding (SMEM_PAD=1 adds 4 floats per row; the kernel
/// refuses to compile where that no longer fits).
/// With slice-K, the buffer also holds a slice's sums (BM*BN floats) at the end.
fn local_bytes(c: &Config) -> i64 {
    let split_flag = if shares_k(c) { 4 } else { 0 };
    let tiles = c.get("STAGES") * c.get("BK") * (c.get("BM") + c.get("BN"));
    4 * tiles.max(slice_sums(c)) + split_flag
}

/// Floats of local memory the slices' sums pass through (0 without slice-K).
fn slice_sums(c: &Config) -> i64 {
    match slices(c) {
        1 => 0,
        _ => c.get("BM") * c.get("BN"),
    }
}

const LANES: Constraint = Constraint {
    message: "a warp's 32 lanes must each own one TM x TN thread tile: (WM/TM)*(WN/TN) = 32, WM a multiple of TM, WN of TN",
    involves: &["WM", "TM", "WN", "TN"],
    holds: |c| {
        divides(c.get("TM"), c.get("WM"))
            && divides(c.get("TN"), c.get("WN"))
            && (c.get("WM") / c.get("TM")) * (c.get("WN") / c.get("TN")) == WARP
    },
};
// A thread tile is held in registers across the K loop: with no register left
// beside its accumulators, every one of them spills (measured on the H200: 177
// of 2819 random SIMT points, all spilling or failing to launch, best 6.8
// TFLOP/s, and a sixth of the search's compile time).
const ACCUMULATORS: Constraint = Constraint {
    message: "a work-item's TM*TN accumulators must leave room in its registers: TM*TN < min(255, 65536/((BM/TM)*(BN/TN)*SLICEK)), NVIDIA's 255-register limit and its 64K-register file shared by the work-group",
    involves: &["TM", "TN", "BM", "BN", "SLICEK"],
    holds: |c| {
        let t = threads(c);
        t > 0 && c.get("TM") * c.get("TN") < MAX_REGISTERS.min(REGISTER_FILE / t)
    },
};
const GROUP_SIZE: Constraint = Constraint {
    message: "the work-group ((BM/TM)*(BN/TN)*SLICEK work-items) must not exceed 1024 work-items",
    involves: &["BM", "TM", "BN", "TN", "SLICEK"],
    holds: |c| threads(c) <= MAX_GROUP,
};
const REDUCE_NEEDS_SPLIT: Constraint = Constraint {
    message: "REDUCE=1 sums split-K's shares in a kernel of their own: it needs SPLITK > 1",
    involves: &["REDUCE", "SPLITK"],
    holds: |c| c.get("REDUCE") == 0 || c.get("SPLITK") > 1,
};
const ONE_SHARING: Constraint = Constraint {
    message: "STREAMK and SPLITK > 1 are two ways of sharing K among work-groups: use one (SPLITK=1 with STREAMK)",
    involves: &["STREAMK", "SPLITK"],
    holds: |c| c.get("STREAMK") == 0 || c.get("SPLITK") == 1,
};
const LOCAL_FITS: Constraint = Constraint {
    message: "the pipeline's tiles (STAGES*BK*(BM+BN) floats), and with SLICEK > 1 the slices' sums (BM*BN floats), must fit in 48 KiB of local memory",
    involves: &["STAGES", "BK", "BM", "BN", "SLICEK"],
    holds: |c| local_bytes(c) <= LOCAL_LIMIT,
};
// The ones below involve switches: the tuner's space judges each point with its
// switch states; the sources refuse the same with #error.
// A K-contiguous operand goes through registers with cp.async's 16-byte copies
// (which cannot transpose it into its tile), unless ASYNC_ALONG_K copies it
// element by element or KTILE_B keeps B untransposed; with both K-contiguous and
// neither, cp.async would copy nothing.
const KMAJOR_COPY: Constraint = Constraint {
    message: "KMAJOR_A=1 and KMAJOR_B=1 together need ASYNC_COPY off, ASYNC_ALONG_K on or KTILE_B on: cp.async's 16-byte copies take only an operand read along M or N (or B kept along K), and both are read along K",
    involves: &["KMAJOR_A", "KMAJOR_B", "ASYNC_COPY", "ASYNC_ALONG_K", "KTILE_B"],
    holds: |c| {
        c.get("ASYNC_COPY") == 0
            || c.get("ASYNC_ALONG_K") == 1
            || c.get("KTILE_B") == 1
            || c.get("KMAJOR_A") == 0
            || c.get("KMAJOR_B") == 0
    },
};
const KTILE_NEEDS_KMAJOR_B: Constraint = Constraint {
    message: "KTILE_B=1 keeps B read along K K-contiguous in its local tile: it needs KMAJOR_B=1 and VEC_LOADS=1 (the compute reads 4 K at a time)",
    involves: &["KTILE_B", "KMAJOR_B", "VEC_LOADS"],
    holds: |c| c.get("KTILE_B") == 0 || (c.get("KMAJOR_B") == 1 && c.get("VEC_LOADS") == 1),
};
const KTILE_OR_ALONG_K: Constraint = Constraint {
    message: "KTILE_B=1 and ASYNC_ALONG_K=1 are two ways of copying B read along K: use one",
    involves: &["KTILE_B", "ASYNC_ALONG_K"],
    holds: |c| c.get("KTILE_B") == 0 || c.get("ASYNC_ALONG_K") == 0,
};
const KTILE_IN_PLACE: Constraint = Constraint {
    message: "KTILE_B=1 in place keeps B K-contiguous in its local tile: it needs VEC_LOADS=1 (the compute reads 4 K at a time) and ALONG_MN=0 (which transposes B the other way first)",
    involves: &["KTILE_B", "VEC_LOADS", "ALONG_MN"],
    holds: |c| c.get("KTILE_B") == 0 || (c.get("VEC_LOADS") == 1 && c.get("ALONG_MN") == 0),
};
const FIXED_FORM_NAMED: Constraint = Constraint {
    message: "FIXED_FORM=1 compiles the in-place kernel for the form KMAJOR_A and KMAJOR_B name: it needs one of them 1 and ALONG_MN=0 (both along M and N is ALONG_MN=1); without FIXED_FORM both are 0 (the form is read at run time)",
    involves: &["FIXED_FORM", "KMAJOR_A", "KMAJOR_B", "ALONG_MN"],
    holds: |c| match c.get("FIXED_FORM") {
        0 => c.get("KMAJOR_A") == 0 && c.get("KMAJOR_B") == 0,
        _ => c.get("ALONG_MN") == 0 && (c.get("KMAJOR_A") == 1 || c.get("KMAJOR_B") == 1),
    },
};
const ALONG_K_NEEDS_ASYNC: Constraint = Constraint {
    message: "ASYNC_ALONG_K=1 changes cp.async's copies: it needs ASYNC_COPY=1",
    involves: &["ASYNC_ALONG_K", "ASYNC_COPY"],
    holds: |c| c.get("ASYNC_ALONG_K") == 0 || c.get("ASYNC_COPY") == 1,
};
const ALONG_K_NEEDS_KMAJOR: Constraint = Constraint {
    message: "ASYNC_ALONG_K=1 changes how an operand read along K is copied: it needs KMAJOR_A=1 or KMAJOR_B=1",
    involves: &["ASYNC_ALONG_K", "KMAJOR_A", "KMAJOR_B"],
    holds: |c| c.get("ASYNC_ALONG_K") == 0 || c.get("KMAJOR_A") == 1 || c.get("KMAJOR_B") == 1,
};
const ALONG_K_NOT_ALONG_MN: Constraint = Constraint {
    message: "ASYNC_ALONG_K=1 copies operands read along K, and ALONG_MN=1 promises there are none: use one",
    involves: &["ASYNC_ALONG_K", "ALONG_MN"],
    holds: |c| c.get("ASYNC_ALONG_K") == 0 || c.get("ALONG_MN") == 0,
};
const CA_NEEDS_ASYNC: Constraint = Constraint {
    message:
        "CP_CA=1 changes cp.async's 16-byte copies only: it needs ASYNC_COPY=1 and VEC_LOADS=1",
    involves: &["CP_CA", "ASYNC_COPY", "VEC_LOADS"],
    holds: |c| c.get("CP_CA") == 0 || (c.get("ASYNC_COPY") == 1 && c.get("VEC_LOADS") == 1),
};
const RUNS_NEED_KMAJOR: Constraint = Constraint {
    message: "KMAJOR_RUNS=1 changes how an operand read along K and transposed is loaded: it needs KMAJOR_A=1, or KMAJOR_B=1 without KTILE_B",
    involves: &["KMAJOR_RUNS", "KMAJOR_A", "KMAJOR_B", "KTILE_B"],
    holds: |c| {
        c.get("KMAJOR_RUNS") == 0
            || c.get("KMAJOR_A") == 1
            || (c.get("KMAJOR_B") == 1 && c.get("KTILE_B") == 0)
    },
};
const PAD_FITS: Constraint = Constraint {
    message: "SMEM_PAD=1 pads each tile row by 4 floats: 4*STAGES*BK*(BM+BN+8) bytes (4*STAGES*(BK*(BM+4)+BN*(BK+4)) with KTILE_B; 4 more where work-groups share K) must fit in 48 KiB",
    involves: &["SMEM_PAD", "STAGES", "BK", "BM", "BN", "KTILE_B", "SPLITK", "STREAMK", "SLICEK"],
    holds: |c| {
        let (bk, bm, bn) = (c.get("BK"), c.get("BM"), c.get("BN"));
        let b_rows = match c.get("KTILE_B") {
            1 => bn * (bk + 4),
            _ => bk * (bn + 4),
        };
        // split-K's and stream-K's flag of the last work-group is local too (4 bytes
        // past 48 KiB failed to build: 128 x 48 tiles, BK 16, 4 stages, KTILE_B).
        let flag = if shares_k(c) { 4 } else { 0 };
        let tiles = c.get("STAGES") * (bk * (bm + 4) + b_rows);
        c.get("SMEM_PAD") == 0 || 4 * tiles.max(slice_sums(c)) + flag <= LOCAL_LIMIT
    },
};
// Involves a switch: KTILE_B's compute reads 4 K at a time.
const SLICE_DEPTH: Constraint = Constraint {
    message: "SLICEK shares each BK-deep tile among SLICEK groups of warps: BK must be a multiple of SLICEK, of 4*SLICEK with KTILE_B=1 (whose compute reads 4 K at a time)",
    involves: &["BK", "SLICEK", "KTILE_B"],
    holds: |c| {
        let per = if c.get("KTILE_B") == 1 { 4 } else { 1 };
        divides(slices(c) * per, c.get("BK"))
    },
};

const CONSTRAINTS: &[Constraint] = &[
    WARP_TILES_DIVIDE,
    LANES,
    ACCUMULATORS,
    GROUP_SIZE,
    ONE_SHARING,
    REDUCE_NEEDS_SPLIT,
    LOCAL_FITS,
    KMAJOR_COPY,
    CA_NEEDS_ASYNC,
    ALONG_K_NEEDS_ASYNC,
    ALONG_K_NEEDS_KMAJOR,
    KTILE_NEEDS_KMAJOR_B,
    KTILE_OR_ALONG_K,
    RUNS_NEED_KMAJOR,
    PAD_FITS,
    SLICE_DEPTH,
];
/// The in-place kernel takes each operand's form from the call, or from KMAJOR_* with
/// FIXED_FORM.
const DIRECT_CONSTRAINTS: &[Constraint] = &[
    WARP_TILES_DIVIDE,
    LANES,
    ACCUMULATORS,
    GROUP_SIZE,
    ONE_SHARING,
    REDUCE_NEEDS_SPLIT,
    LOCAL_FITS,
    FIXED_FORM_NAMED,
    KMAJOR_COPY,
    CA_NEEDS_ASYNC,
    ALONG_K_NEEDS_ASYNC,
    ALONG_K_NOT_ALONG_MN,
    KTILE_IN_PLACE,
    KTILE_OR_ALONG_K,
    PAD_FITS,
    SLICE_DEPTH,
];

/// Published state = the family's defaults: 128-bit accesses, rasterised block
/// order, launch bounds and restrict on; the copy through registers (cp.async
/// needs NVIDIA's inline PTX in OpenCL) and no padding.
const SWITCHES: &[SwitchUse] = &[
    SwitchUse::on(USE_BOUNDS),
    SwitchUse::on(USE_RESTRICT),
    SwitchUse::on(VEC_LOADS),
    SwitchUse::off(ASYNC_COPY),
    SwitchUse::off(CP_CA),
    SwitchUse::off(ASYNC_ALONG_K),
    SwitchUse::off(KTILE_B),
    SwitchUse::off(SMEM_PAD),
    SwitchUse::off(KMAJOR_RUNS),
    SwitchUse::on(RASTER),
];

pub const SIMT: KernelSpec = KernelSpec {
    id: "simt",
    entry: "simt_gemm",
    family: Family::Simt,
    title: "gemmlab SIMT SGEMM (warp-tiled, pipelined)",
    idea: "C = alpha A B + beta C in f32 on CUDA cores: BM x BN block tiles of warps, each warp WM x WN, \
           each lane TM x TN accumulators in 4-wide chunks; A and B^T tiles copied to local memory in \
           128-bit chunks through a STAGES-deep pipeline (cp.async where ASYNC_COPY), blocks in a \
           rasterised order, split-K or stream-K with a deterministic in-kernel reduction; either operand read \
           K-contiguous (KMAJOR_A/KMAJOR_B) so that BLAS calls need no transposing pack",
    sources: &[(OpenClC, include_str!("../../../kernels-cl/simt.cl")), (CudaCpp, include_str!("../../../kernels-cu/simt.cu"))],
    params: &[
        P_BM, P_BN, P_BK, P_WM, P_WN, P_TM, P_TN, P_STAGES, P_SPLITK, P_REDUCE, P_STREAMK, P_SLICEK,
        P_GROUP, P_KMAJOR_A, P_KMAJOR_B,
    ],
    constraints: CONSTRAINTS,
    local_bytes,
    // The slices of K lie along the second dimension: a work-group spans BN/TN
    // work-items per slice there, each TN/SLICEK columns of the launch's grid.
    launch: Launch {
        local: |c| {
            (
                c.u("BM") / c.u("TM").max(1),
                c.u("BN") / c.u("TN").max(1) * slices(c) as usize,
            )
        },
        per_item: |c| (c.u("TM"), c.u("TN") / slices(c) as usize),
    },
    operands: Operands {
        b_transposed: true,
        tile: |c| (c.u("BM"), c.u("BN"), c.u("BK")),
    },
    switches: SWITCHES,
    abi: Abi::IndirectSplitK,
    precisions: &[Precision::F32],
};

/// The in-place kernel's switches: SIMT's. With ASYNC_COPY, cp.async copies each
/// operand the call has read along M or N and 16-byte aligned (which ones is
/// known at run time), its edges zero-filled by the copy's source size. With
/// KTILE_B, B's tile keeps K contiguous whatever the call's B: one stored along K
/// is copied as it is (by cp.async where aligned), one stored along N goes
/// through registers, transposed on the way.
const DIRECT_SWITCHES: &[SwitchUse] = &[
    SwitchUse::on(USE_BOUNDS),
    SwitchUse::on(USE_RESTRICT),
    SwitchUse::on(VEC_LOADS),
    SwitchUse::off(ASYNC_COPY),
    SwitchUse::off(CP_CA),
    SwitchUse::off(ASYNC_ALONG_K),
    SwitchUse::off(KTILE_B),
    SwitchUse::off(SMEM_PAD),
    SwitchUse::off(KMAJOR_RUNS),
    SwitchUse::on(RASTER),
];

/// The SIMT kernel reading the caller's matrices in place (`SIMT_DIRECT=1`): the
/// routine's kernel for calls whose sizes, offsets or layouts would otherwise be
/// packed first.
pub const SIMT_DIRECT: KernelSpec = KernelSpec {
    id: "simtdirect",
    entry: "simt_gemm",
    family: Family::Simt,
    title: "gemmlab SIMT SGEMM in place (any size, offsets, leading dimensions, transposes)",
    idea: "the SIMT kernel's block, warp and thread tiles, pipeline, split-K and stream-K on the caller's \
           matrices as they are: each operand read along its contiguous dimension (which one is an \
           argument), chunks past an edge or unaligned read element by element and zero-filled (with \
           ASYNC_COPY, aligned operands read along M or N copied by cp.async, zero-filled by its \
           source size), C written element by element at its edges; no packing before or after (with \
           ALONG_MN, one launch first transposes an operand stored along K or copies an unaligned one)",
    sources: &[
        (
            OpenClC,
            concat!(
                "#define SIMT_DIRECT 1\n",
                include_str!("../../../kernels-cl/simt.cl")
            ),
        ),
        (
            CudaCpp,
            concat!(
                "#define SIMT_DIRECT 1\n",
                include_str!("../../../kernels-cu/simt.cu")
            ),
        ),
    ],
    params: &[
        P_BM, P_BN, P_BK, P_WM, P_WN, P_TM, P_TN, P_STAGES, P_SPLITK, P_REDUCE, P_STREAMK, P_SLICEK,
        P_GROUP, P_ALONG_MN, P_FIXED_FORM, P_DIRECT_KMAJOR_A, P_DIRECT_KMAJOR_B,
    ],
    constraints: DIRECT_CONSTRAINTS,
    local_bytes,
    launch: SIMT.launch,
    operands: SIMT.operands,
    switches: DIRECT_SWITCHES,
    abi: Abi::DirectInPlace,
    precisions: &[Precision::F32],
};

pub const KERNELS: &[KernelSpec] = &[SIMT, SIMT_DIRECT];

/// `hints` with cp.async copying the operands `config` reads along K too
/// (`ASYNC_ALONG_K` with `ASYNC_COPY`), local rows padded where the padded tiles fit:
/// the copies' transposed stores are conflict-free so (31.9 against 27.7 TFLOP/s at
/// 1024^3 on the H200, results/h200/routine/along-k/). None where `spec` does not
/// take the switch at `config`.
pub fn copying_along_k(
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    toolchain: Toolchain,
) -> Option<Hints> {
    if !spec.has_switch(ASYNC_ALONG_K.name) {
        return None;
    }
    let on = (hints.with_switch(ASYNC_COPY.name, true)).with_switch(ASYNC_ALONG_K.name, true);
    let padded = on.with_switch(SMEM_PAD.name, true);
    [padded, on]
        .into_iter()
        .find(|h| spec.validate_with_switches(config, h, toolchain).is_ok())
}

/// `config` and `hints` reading B as a call stores it, along K, and keeping it so in the
/// local tile (`KTILE_B`: 16-byte copies, by cp.async where `hints` copy by it, nothing
/// transposed and no pack), A along K as `a_along_k` says: padded and unpadded, each
/// where valid. Empty where `spec` has no such switch, and for the in-place kernel.
pub fn keeping_b_along_k(
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    a_along_k: bool,
    toolchain: Toolchain,
) -> Vec<(Config, Hints)> {
    if !spec.has_switch(KTILE_B.name) {
        return Vec::new();
    }
    // The in-place kernel has the switch too, but at 1000^3 it ran its kernel 3-5%
    // slower with it than without (results/h200/routine/ktile-direct/): its own
    // search may choose it, no twin is made of it.
    if spec.abi == Abi::DirectInPlace {
        return Vec::new();
    }
    let mut config = config.clone();
    config.0.insert("KMAJOR_A".into(), i64::from(a_along_k));
    config.0.insert("KMAJOR_B".into(), 1);
    // Switches published off: absent is off.
    let mut on = hints.with_switch(KTILE_B.name, true);
    on.switches.remove(ASYNC_ALONG_K.name);
    if !a_along_k {
        on.switches.remove(KMAJOR_RUNS.name);
    }
    let padded = on.with_switch(SMEM_PAD.name, true);
    let mut unpadded = on;
    unpadded.switches.remove(SMEM_PAD.name);
    [padded, unpadded]
        .into_iter()
        .filter(|h| spec.validate_with_switches(&config, h, toolchain).is_ok())
        .map(|h| (config.clone(), h))
        .collect()
}

/// The form the in-place kernel at `config` is compiled for, (A, B) read along K:
/// along M and N with `ALONG_MN`, `KMAJOR_A`/`KMAJOR_B`'s with `FIXED_FORM`; `None`
/// where it reads each operand's form from the call at run time.
pub fn fixed_form(config: &Config) -> Option<(bool, bool)> {
    if config.get("ALONG_MN") == 1 {
        Some((false, false))
    } else if config.get("FIXED_FORM") == 1 {
        Some((config.get("KMAJOR_A") == 1, config.get("KMAJOR_B") == 1))
    } else {
        None
    }
}

/// The in-place kernel's `config` compiled for operands in `form` ((A, B) read along
/// K; `fixed_form`'s): `ALONG_MN` for along M and N, `FIXED_FORM` with `KMAJOR_A` and
/// `KMAJOR_B` otherwise. None where `spec` has no such parameters.
pub fn compiled_for_form(spec: &KernelSpec, config: &Config, form: (bool, bool)) -> Option<Config> {
    let takes = |name: &str| spec.params.iter().any(|q| q.name == name);
    if spec.abi != Abi::DirectInPlace || !takes(P_ALONG_MN.name) || !takes(P_FIXED_FORM.name) {
        return None;
    }
    let mut c = config.clone();
    let along_mn = form == (false, false);
    c.0.insert(P_ALONG_MN.name.into(), i64::from(along_mn));
    c.0.insert(P_FIXED_FORM.name.into(), i64::from(!along_mn));
    c.0.insert("KMAJOR_A".into(), i64::from(form.0));
    c.0.insert("KMAJOR_B".into(), i64::from(form.1));
    Some(c)
}

/// `hints` with the operands read along K (`along_k`, A's and B's) copied the other
/// way: by cp.async where they go through registers (`copying_along_k`), through
/// registers where cp.async copies them (without cp.async at all where both are read
/// along K, which its 16-byte copies cannot take). Which way is faster depends on
/// the tiles: at 33x8192x4096 NN, 48 x 128 tiles ran 106.5 us through registers and
/// 118.7 us copied by cp.async, at 128x4096x4096 NN 128 x 64 tiles 0.81 and 0.91 of
/// cuBLAS. None where nothing is read along K or `spec` has no such choice.
pub fn along_k_copy_flipped(
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    along_k: (bool, bool),
    toolchain: Toolchain,
) -> Option<Hints> {
    if !(along_k.0 || along_k.1) {
        return None;
    }
    if hints.switch(ASYNC_ALONG_K.name) != Some(true) {
        return copying_along_k(spec, config, hints, toolchain);
    }
    let off = hints.with_switch(ASYNC_ALONG_K.name, false);
    let off = match along_k {
        (true, true) => off.with_switch(ASYNC_COPY.name, false),
        _ => off,
    };
    spec.validate_with_switches(config, &off, toolchain)
        .ok()
        .map(|_| off)
}

/// Split-K in place is checked on NVIDIA's OpenCL and CUDA only: on PoCL 3.1
/// (LLVM 15) a work-item stored a row of C past M, inside the very guard that
/// excludes it, after split-K's barriers (200x128x64, SPLITK=2: zeros in C and a
/// corrupted heap), while the packed kernel's identical split-K path, the
/// in-place kernel without it and stream-K in place (the same partial sums over
/// a one-dimensional grid) verify there. With REDUCE no work-group waits for
/// another, and split-K in place verifies there too.
pub(crate) fn in_place_split_unavailable(c: &Config, device: &DeviceInfo) -> Option<String> {
    (c.get("SPLITK") > 1 && c.get("REDUCE") == 0 && !device.is_nvidia()).then(|| {
        format!(
            "split-K in place (SPLITK={}) is verified on NVIDIA GPUs only: on PoCL it wrote past C's edge; use REDUCE=1 (a kernel of its own sums the splits), SPLITK=1 (stream-K in place, STREAMK > 0, verifies there) or the packed simt kernel",
            c.get("SPLITK")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(defines: &[(&str, i64)]) -> crate::error::Result<Config> {
        let d: Vec<(String, i64)> = defines.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        SIMT.config(&d)
    }

    #[test]
    fn defaults_geometry_and_local_memory() {
        let c = SIMT.defaults();
        SIMT.validate(&c).unwrap();
        assert_eq!(SIMT.threads_per_group(&c), 256);
        assert_eq!(SIMT.tile(&c), (128, 128, 16));
        // Two stages of 16 x (128 + 128) floats.
        assert_eq!((SIMT.local_bytes)(&c), 2 * 16 * 256 * 4);
        let g = SIMT.geometry(&c, 4096, 2048);
        assert_eq!(g.groups(), [32, 16, 1]);
        // Split-K shares K's tiles out: K is padded to BK only.
        let c = with(&[("SPLITK", 4)]).unwrap();
        assert_eq!(SIMT.tile(&c).2, 16);
    }

    #[test]
    fn slices_of_k_keep_the_grid_of_tiles_and_pass_their_sums_through_local_memory() {
        let tiles = [
            ("BM", 64),
            ("BN", 64),
            ("WM", 32),
            ("WN", 32),
            ("TM", 4),
            ("TN", 8),
            ("BK", 16),
        ];
        let c = with(&[&tiles[..], &[("SLICEK", 2)]].concat()).unwrap();
        // Two slices of 128 work-items; the same 16 x 8 tiles of C.
        assert_eq!(SIMT.threads_per_group(&c), 256);
        assert_eq!(SIMT.geometry(&c, 1024, 512).groups(), [16, 8, 1]);
        let one = |s: i64| with(&[&tiles[..], &[("STAGES", 1), ("SLICEK", s)]].concat()).unwrap();
        assert_eq!(SIMT.geometry(&one(1), 1024, 512).groups(), [16, 8, 1]);
        // One stage of 16 x 128 floats (8 KiB), and with slices the 64 x 64 sums (16 KiB).
        assert_eq!((SIMT.local_bytes)(&one(1)), 16 * 128 * 4);
        assert_eq!((SIMT.local_bytes)(&one(4)), 64 * 64 * 4);
        // 128 x 128 sums are 64 KiB: more than local memory holds.
        let e = with(&[("SLICEK", 2)]).unwrap_err().to_string();
        assert!(e.contains("slices' sums") && e.contains("SLICEK=2"), "{e}");
        let e = with(&[("SLICEK", 3)]).unwrap_err().to_string();
        assert!(e.contains("SLICEK must be one of"), "{e}");
        // A record made before slice-K is the kernel without it.
        let mut old = SIMT.defaults();
        old.0.remove("SLICEK");
        assert!(SIMT.is_published(&old));
    }

    #[test]
    fn a_record_made_before_stream_k_is_still_the_published_configuration() {
        let mut old = SIMT.defaults();
        old.0.remove("STREAMK");
        assert!(SIMT.is_published(&old) && SIMT.is_published(&SIMT.defaults()));
        assert!(!SIMT.is_published(&with(&[("STREAMK", 1)]).unwrap()));
        old.0.insert("NOT_A_PARAM".into(), 0);
        assert!(!SIMT.is_published(&old));
    }

    #[test]
    fn violated_constraints_say_which_and_why() {
        // 64x32 warp tile with 4x4 thread tiles: 16*8 = 128 lanes, not 32.
        let e = with(&[("TM", 4), ("TN", 4)]).unwrap_err().to_string();
        assert!(e.contains("32 lanes") && e.contains("TM=4"), "{e}");
        // 3 stages of 32 x 256 floats: 96 KiB.
        let e = with(&[("STAGES", 3), ("BK", 32)]).unwrap_err().to_string();
        assert!(e.contains("48 KiB") && e.contains("STAGES=3"), "{e}");
        // BK=8 with a 64x64 block of 4x8 thread tiles (128 work-items): 8*64 = 512 = 4*128 fits.
        assert!(with(&[
            ("BM", 64),
            ("BN", 64),
            ("WM", 32),
            ("WN", 32),
            ("TM", 4),
            ("BK", 8)
        ])
        .is_ok());
        // Warp tile larger than the block tile.
        let e = with(&[("BM", 32)]).unwrap_err().to_string();
        assert!(
            e.contains("warp tile must divide") && e.contains("BM=32"),
            "{e}"
        );
        let e = with(&[("STAGES", 5)]).unwrap_err().to_string();
        assert!(e.contains("STAGES must be one of"), "{e}");
    }

    #[test]
    fn cp_ca_goes_with_the_cp_async_copies_only() {
        use crate::backend::Toolchain::Cuda;
        use crate::kernel::builtin::Hints;
        let c = SIMT.defaults();
        let hints = |on: &[&str], off: &[&str]| {
            let mut h = Hints::default();
            for s in on {
                h = h.with_switch(s, true);
            }
            for s in off {
                h = h.with_switch(s, false);
            }
            h
        };
        // Copies through registers have no .cg/.ca to choose: CP_CA alone is refused.
        let e = SIMT
            .validate_with_switches(&c, &hints(&["CP_CA"], &[]), Cuda)
            .unwrap_err()
            .to_string();
        assert!(e.contains("CP_CA=1") && e.contains("ASYNC_COPY=1"), "{e}");
        let e = SIMT
            .validate_with_switches(&c, &hints(&["CP_CA", "ASYNC_COPY"], &["VEC_LOADS"]), Cuda)
            .unwrap_err()
            .to_string();
        assert!(e.contains("VEC_LOADS=1"), "{e}");
        let h = hints(&["CP_CA", "ASYNC_COPY"], &[]);
        assert!(SIMT.validate_with_switches(&c, &h, Cuda).is_ok());
        // tc always copies with cp.async: CP_CA is free there.
        let tc = &crate::kernel::builtin::tc::TC;
        let h = hints(&["CP_CA"], &[]);
        assert!(tc.validate_with_switches(&tc.defaults(), &h, Cuda).is_ok());
    }

    #[test]
    fn cp_async_along_k_needs_cp_async_and_an_operand_read_along_k() {
        use crate::backend::Toolchain::Cuda;
        use crate::kernel::builtin::Hints;
        let on = Hints::default().with_switch("ASYNC_ALONG_K", true);
        let both = on.clone().with_switch("ASYNC_COPY", true);
        let refused = |spec: &KernelSpec, c: &Config, h: &Hints| {
            (spec.validate_with_switches(c, h, Cuda))
                .unwrap_err()
                .to_string()
        };
        let kb = with(&[("KMAJOR_B", 1)]).unwrap();
        assert!(refused(&SIMT, &kb, &on).contains("needs ASYNC_COPY=1"));
        assert!(SIMT.validate_with_switches(&kb, &both, Cuda).is_ok());
        // Nothing read along K: the switch would change nothing.
        let e = refused(&SIMT, &SIMT.defaults(), &both);
        assert!(e.contains("KMAJOR_A=1 or KMAJOR_B=1"), "{e}");
        // Both along K: cp.async copies both, where 16-byte copies alone copy neither.
        let ab = with(&[("KMAJOR_A", 1), ("KMAJOR_B", 1)]).unwrap();
        let cp = Hints::default().with_switch("ASYNC_COPY", true);
        assert!(refused(&SIMT, &ab, &cp).contains("ASYNC_ALONG_K on or KTILE_B on"));
        assert!(SIMT.validate_with_switches(&ab, &both, Cuda).is_ok());
        // In place, the call's forms decide; ALONG_MN promises none along K.
        let d = SIMT_DIRECT.defaults();
        assert!(SIMT_DIRECT.validate_with_switches(&d, &both, Cuda).is_ok());
        let mn = SIMT_DIRECT.config(&[("ALONG_MN".into(), 1)]).unwrap();
        assert!(refused(&SIMT_DIRECT, &mn, &both).contains("ALONG_MN=1 promises"));
    }

    #[test]
    fn the_in_place_kernel_compiles_for_one_named_form_or_reads_it_at_run_time() {
        use crate::backend::Toolchain::Cuda;
        use crate::kernel::builtin::Hints;
        let d = SIMT_DIRECT.defaults();
        assert_eq!(fixed_form(&d), None);
        let with = |defines: &[(&str, i64)]| {
            let mut c = d.clone();
            for (name, v) in defines {
                c.0.insert(name.to_string(), *v);
            }
            c
        };
        let refused = |c: &Config| SIMT_DIRECT.validate(c).unwrap_err().to_string();
        // Every form but along M and N (ALONG_MN's), each compiled as it is named.
        for form in [(true, false), (false, true), (true, true)] {
            let c = compiled_for_form(&SIMT_DIRECT, &d, form).unwrap();
            assert_eq!(c.get("FIXED_FORM"), 1);
            assert_eq!(fixed_form(&c), Some(form));
            assert!(SIMT_DIRECT.validate(&c).is_ok(), "{}", c.describe());
        }
        let mn = compiled_for_form(&SIMT_DIRECT, &d, (false, false)).unwrap();
        assert_eq!((mn.get("ALONG_MN"), mn.get("FIXED_FORM")), (1, 0));
        assert_eq!(fixed_form(&mn), Some((false, false)));
        // A form named without FIXED_FORM, FIXED_FORM naming none, or with ALONG_MN: refused.
        assert!(refused(&with(&[("KMAJOR_B", 1)])).contains("without FIXED_FORM"));
        assert!(refused(&with(&[("FIXED_FORM", 1)])).contains("one of them 1"));
        let both = with(&[("FIXED_FORM", 1), ("KMAJOR_A", 1), ("ALONG_MN", 1)]);
        assert!(refused(&both).contains("ALONG_MN=0"));
        // Both along K and copied by cp.async's 16-byte copies: nothing would be.
        let tn = compiled_for_form(&SIMT_DIRECT, &d, (true, true)).unwrap();
        let cp = Hints::default().with_switch("ASYNC_COPY", true);
        let e = SIMT_DIRECT
            .validate_with_switches(&tn, &cp, Cuda)
            .unwrap_err();
        assert!(e.to_string().contains("both are read along K"), "{e}");
        // The packed kernel has no such choice: its forms are its own.
        assert_eq!(
            compiled_for_form(&SIMT, &SIMT.defaults(), (false, true)),
            None
        );
    }

    #[test]
    fn padded_tiles_count_the_local_flag_of_work_groups_sharing_k() {
        use crate::backend::Toolchain::Cuda;
        use crate::kernel::builtin::Hints;
        // 4 stages of 128 x 48 tiles, BK 16, B kept along K and padded: exactly 48 KiB.
        let d: Vec<(String, i64)> = [
            ("BM", 128),
            ("BN", 48),
            ("BK", 16),
            ("STAGES", 4),
            ("WM", 64),
            ("WN", 16),
            ("TM", 8),
            ("TN", 4),
            ("KMAJOR_B", 1),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), *v))
        .collect();
        let hints = (Hints::default().with_switch("KTILE_B", true)).with_switch("SMEM_PAD", true);
        let alone = SIMT.config(&d).unwrap();
        assert!(SIMT.validate_with_switches(&alone, &hints, Cuda).is_ok());
        let mut split = alone.clone();
        split.0.insert("SPLITK".into(), 2);
        let e = SIMT
            .validate_with_switches(&split, &hints, Cuda)
            .unwrap_err();
        assert!(e.to_string().contains("share K"), "{e}");
    }

    #[test]
    fn in_place_b_kept_along_k_needs_wide_loads_and_no_transposing_launch() {
        use crate::backend::Toolchain::Cuda;
        use crate::kernel::builtin::Hints;
        let (d, kept) = (
            SIMT_DIRECT.defaults(),
            Hints::default().with_switch("KTILE_B", true),
        );
        let refused = |c: &Config, h: &Hints| {
            SIMT_DIRECT
                .validate_with_switches(c, h, Cuda)
                .unwrap_err()
                .to_string()
        };
        // Through registers (PoCL) or by cp.async, whatever the call stores.
        assert!(SIMT_DIRECT.validate_with_switches(&d, &kept, Cuda).is_ok());
        let cp = kept.clone().with_switch("ASYNC_COPY", true);
        assert!(SIMT_DIRECT.validate_with_switches(&d, &cp, Cuda).is_ok());
        let narrow = kept.clone().with_switch("VEC_LOADS", false);
        assert!(refused(&d, &narrow).contains("needs VEC_LOADS=1"));
        let mn = SIMT_DIRECT.config(&[("ALONG_MN".into(), 1)]).unwrap();
        assert!(refused(&mn, &kept).contains("ALONG_MN=0"));
        let four = cp.with_switch("ASYNC_ALONG_K", true);
        assert!(refused(&d, &four).contains("two ways of copying B"));
        // The routine makes no twin of it (slower at 1000^3 on the H200).
        let tc = Cuda;
        assert!(keeping_b_along_k(&SIMT_DIRECT, &d, &Hints::default(), false, tc).is_empty());
        assert!(
            !keeping_b_along_k(&SIMT, &SIMT.defaults(), &Hints::default(), false, tc).is_empty()
        );
    }
}
