//! The SIMT family's kernel for thin calls (`kernels-*/thin.*`): one side of C
//! short (a few to a few dozen rows or columns), the other long. A square tile
//! wastes most of itself on the short side, and such a call is a stream of its
//! large operand: each work-item reads its own rows or columns of it straight
//! from global memory, once, against the small operand staged in local memory,
//! with split-K for parallelism along K. Called in place as `simtdirect` is.

use super::switches::{SwitchUse, USE_BOUNDS, USE_RESTRICT, VEC_LOADS};
use super::Precision;
use super::{divides, Abi, Config, Constraint, Family, KernelSpec, Launch, Operands, Param};
use crate::backend::DeviceInfo;
use crate::backend::Language::{CudaCpp, OpenClC};

const MAX_ACCUMULATORS: i64 = 128;
const WARP: i64 = 32;

const P_SIDE: Param = Param {
    name: "SIDE",
    default: 0,
    allowed: &[0, 1],
    meaning: "the short side of C: 0 M (B streamed, A staged), 1 N (A streamed, B staged)",
};
/// Every multiple of 4 (a 128-bit local read's four values): a short side of C
/// is covered with at most 3 rows or columns to spare (a fit to 24 rows took 32
/// once, a quarter of each work-item's products wasted; 33 took 40 until 36 was
/// allowed).
const BT_ALLOWED: [i64; 16] = [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64];
const P_BT: Param = Param {
    name: "BT",
    default: 16,
    allowed: &BT_ALLOWED,
    meaning: "short-side rows (SIDE=0) or columns (SIDE=1) of C per work-group",
};
const P_TL: Param = Param {
    name: "TL",
    default: 2,
    allowed: &[1, 2, 4],
    meaning: "consecutive long-side indices of C per work-item",
};
const P_THREADS: Param = Param {
    name: "THREADS",
    default: 128,
    allowed: &[64, 128, 256],
    meaning: "work-items per work-group (the long side of its tile is THREADS/KL*TL)",
};
const P_KC: Param = Param {
    name: "KC",
    default: 32,
    allowed: &[16, 32, 64, 128, 256],
    meaning:
        "depth along K of the small operand's chunk in local memory (one barrier pair per chunk)",
};
const P_KV: Param = Param {
    name: "KV",
    default: 8,
    allowed: &[4, 8, 16],
    meaning: "values along K a work-item loads of the large operand per batch",
};
const P_SPLITK: Param = Param {
    name: "SPLITK",
    default: 1,
    allowed: &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
    meaning:
        "work-groups sharing one tile of C, each over a share of its KC-deep chunks (1: no split-K)",
};

const P_XS: Param = Param {
    name: "XS",
    default: 0,
    allowed: &[0, 1],
    meaning: "1: the large operand's KC-deep chunks staged in local memory too, read by the whole work-group along their contiguous dimension (0: each work-item reads its own rows straight from global memory)",
};

const P_PIPE: Param = Param {
    name: "PIPE",
    default: 0,
    allowed: &[0, 1],
    meaning: "1: each work-item loads its next batch of the large operand while it computes with the current one, the small operand's chunk is loaded in full before it is stored, and split-K shares K by whole KV batches (0: a batch is loaded, then used; shares are whole KC chunks)",
};

const P_KL: Param = Param {
    name: "KL",
    default: 1,
    allowed: &[1, 2, 4, 8],
    meaning: "work-items along K on the same TL long-side indices, each taking every KL-th value of K, their partial sums added at the end (1: off): for a large operand stored K-contiguous, a warp's loads become runs of KL*4 bytes of a few rows instead of 4 or 16 bytes from each of 32",
};

/// Registers a work-item may hold for PIPE=1's two batches of the large
/// operand and its share of the small operand's chunk, beside its accumulators.
const MAX_PIPELINED: i64 = 96;

/// The static local memory of a CUDA block, which both twins keep to.
const LOCAL_LIMIT: i64 = 48 * 1024;

const KV_DIVIDES: Constraint = Constraint {
    message: "KL*KV must divide KC: a chunk is loaded in whole batches of KV values for each of KL work-items",
    involves: &["KL", "KV", "KC"],
    holds: |c| divides(c.get("KL") * c.get("KV"), c.get("KC")),
};
const LANES: Constraint = Constraint {
    message: "KL must divide BT (the launch gives each of a group's KL work-items BT/KL of the short side) and needs XS=0 (it reads the large operand straight from global memory)",
    involves: &["KL", "BT", "XS"],
    holds: |c| divides(c.get("KL"), c.get("BT")) && (c.get("KL") == 1 || c.get("XS") == 0),
};
const ACCUMULATORS: Constraint = Constraint {
    message: "a work-item's BT*TL accumulators must stay at most 128, with room for TL*KV loaded values beside them in its registers",
    involves: &["BT", "TL", "KV"],
    holds: |c| c.get("BT") * c.get("TL") <= MAX_ACCUMULATORS && c.get("TL") * c.get("KV") <= 32,
};
const LOCAL_FITS: Constraint = Constraint {
    message: "the staged chunks (KC*BT floats of the small operand, rows padded with KL > 1; with XS=1 also THREADS*TL rows of KC+4 floats of the large one; with KL > 1 at least BT*TL*(THREADS+1) floats of partial sums) must fit in 48 KiB of local memory",
    involves: &["XS", "KL", "THREADS", "TL", "KC", "BT"],
    holds: |c| local_bytes(c) <= LOCAL_LIMIT,
};
const STAGED_LOADS: Constraint = Constraint {
    message: "with XS=1 a work-item holds its TL*KC loaded values of the large operand in registers before it stores them to local memory: TL*KC must stay at most 64",
    involves: &["XS", "TL", "KC"],
    holds: |c| c.get("XS") == 0 || c.get("TL") * c.get("KC") <= 64,
};
const PIPELINED: Constraint = Constraint {
    message: "PIPE=1 holds two batches of the large operand (2*TL*KV values) and a work-item's share of the small operand's chunk (KC*BT/THREADS values) in registers: together at most 96, and it reads the large operand straight from global memory (XS=0)",
    involves: &["PIPE", "XS", "TL", "KV", "KC", "BT", "THREADS"],
    holds: |c| {
        let share = (c.get("KC") * c.get("BT") + c.get("THREADS") - 1) / c.get("THREADS");
        c.get("PIPE") == 0
            || (c.get("XS") == 0 && 2 * c.get("TL") * c.get("KV") + share <= MAX_PIPELINED)
    },
};
const WHOLE_WARPS: Constraint = Constraint {
    message: "THREADS must be whole warps of 32 work-items",
    involves: &["THREADS"],
    holds: |c| divides(WARP, c.get("THREADS")),
};

/// The small operand's chunk (KC rows of BT floats, padded to an odd number of
/// 128-bit words with KL > 1), which KL > 1's partial sums (BT*TL rows of
/// THREADS+1) reuse; with XS=1 the large operand's (THREADS*TL rows of KC+4
/// floats); and a flag for split-K.
fn local_bytes(c: &Config) -> i64 {
    let (bt, kl) = (c.get("BT"), c.get("KL"));
    let pitch = if kl > 1 && bt % 8 == 0 { bt + 4 } else { bt };
    let sums = if kl > 1 {
        bt * c.get("TL") * (c.get("THREADS") + 1)
    } else {
        0
    };
    let staged = c.get("XS") * c.get("THREADS") * c.get("TL") * (c.get("KC") + 4);
    4 * ((c.get("KC") * pitch).max(sums) + staged) + if c.get("SPLITK") > 1 { 4 } else { 0 }
}

/// The long side of a work-group's tile: THREADS/KL groups of TL indices.
fn long_side(c: &Config) -> usize {
    c.u("THREADS") / c.u("KL").max(1) * c.u("TL")
}

/// The tile of C a work-group owns: (along M, along N, along K).
fn tile(c: &Config) -> (usize, usize, usize) {
    let (short, long) = (c.u("BT"), long_side(c));
    match c.get("SIDE") {
        0 => (short, long, c.u("KC")),
        _ => (long, short, c.u("KC")),
    }
}

/// Published state = the kernel's own defaults (gemmlab's kernel): launch
/// bounds, restrict and wide loads on.
const SWITCHES: &[SwitchUse] = &[
    SwitchUse::on(USE_BOUNDS),
    SwitchUse::on(USE_RESTRICT),
    SwitchUse::on(VEC_LOADS),
];

pub const THIN: KernelSpec = KernelSpec {
    id: "thin",
    entry: "thin_gemm",
    family: Family::Simt,
    title: "gemmlab SIMT SGEMM for thin calls (a short side of C, in place)",
    idea: "C = alpha A B + beta C in f32 where M (SIDE=0) or N (SIDE=1) is short: a work-group owns BT short-side \
           x THREADS*TL long-side elements of C, each work-item all BT of its TL long-side indices; the small \
           operand's KC-deep chunks staged in local memory and read as broadcasts, the large operand read once \
           straight from global memory (128-bit along K where it is K-contiguous, TL-wide along the long side where \
           not, or with KL work-items along K in runs where it is K-contiguous); split-K with a deterministic \
           in-kernel reduction; the caller's matrices in place, any size",
    sources: &[
        (OpenClC, include_str!("../../../kernels-cl/thin.cl")),
        (CudaCpp, include_str!("../../../kernels-cu/thin.cu")),
    ],
    params: &[
        P_SIDE, P_BT, P_TL, P_THREADS, P_KC, P_KV, P_SPLITK, P_XS, P_PIPE, P_KL,
    ],
    constraints: &[
        KV_DIVIDES,
        LANES,
        ACCUMULATORS,
        LOCAL_FITS,
        STAGED_LOADS,
        PIPELINED,
        WHOLE_WARPS,
    ],
    local_bytes,
    // With KL > 1 the short side's dimension of the grid counts KL work-items per
    // tile (BT/KL "per item"), so that the long side's counts THREADS/KL groups.
    launch: Launch {
        local: |c| match c.get("SIDE") {
            0 => (c.u("KL"), c.u("THREADS") / c.u("KL").max(1)),
            _ => (c.u("THREADS") / c.u("KL").max(1), c.u("KL")),
        },
        per_item: |c| match c.get("SIDE") {
            0 => (c.u("BT") / c.u("KL").max(1), c.u("TL")),
            _ => (c.u("TL"), c.u("BT") / c.u("KL").max(1)),
        },
    },
    operands: Operands {
        b_transposed: true,
        tile,
    },
    switches: SWITCHES,
    abi: Abi::DirectInPlace,
    precisions: &[Precision::F32],
};

pub const KERNELS: &[KernelSpec] = &[THIN];

/// Split-K is checked on NVIDIA's OpenCL and CUDA only: on PoCL 3.1 (LLVM 15) the
/// first work-item of a work-group ran the code after split-K's barriers twice
/// (seen with printf: its C elements were written twice, so a call with beta != 0
/// added its share twice), as `simtdirect`'s split-K in place misbehaved there.
pub(crate) fn split_unavailable(c: &Config, device: &DeviceInfo) -> Option<String> {
    (c.get("SPLITK") > 1 && !device.is_nvidia()).then(|| {
        format!(
            "thin with split-K (SPLITK={}) is verified on NVIDIA GPUs only: on PoCL the work-group's code after split-K's barriers ran twice for one work-item; use SPLITK=1",
            c.get("SPLITK")
        )
    })
}

/// A configuration for call `m` x `n` x `k` on `units` compute units, from the
/// shape alone (as cuBLAS's heuristics pick one): the short side staged, a
/// thin tile just covering it, two long-side indices per work-item where the
/// long side is long enough, 16 values of K per batch of loads, and split-K
/// until about two waves of work-groups cover the device. `None` where neither
/// side is short (over 64).
pub fn fitted(m: usize, n: usize, k: usize, units: usize) -> Option<Config> {
    fit(m, n, k, units, false)
}

/// As [`fitted`], with the large operand staged in local memory (XS=1), one
/// long-side index per work-item (TL=1: its local-memory rows conflict-free).
/// The routine times both: which one reads the large operand faster depends on
/// its layout and the call's shape.
pub fn fitted_staged(m: usize, n: usize, k: usize, units: usize) -> Option<Config> {
    fit(m, n, k, units, true)
}

/// As [`fitted`], with the large operand's batches prefetched (PIPE=1): one
/// long-side index per work-item, chunks of K as deep as its registers allow,
/// and split-K until about four work-groups a compute unit keep loads in
/// flight, each split at least two batches deep.
pub fn fitted_pipelined(m: usize, n: usize, k: usize, units: usize) -> Option<Config> {
    fit_pipelined(m, n, k, units)
}

/// Work-groups a compute unit the pipelined fit splits K for: enough loads in
/// flight to cover the large operand's latency.
const PIPELINED_GROUPS: usize = 4;

/// The register cap that keeps a pipelined configuration's work-groups
/// `PIPELINED_GROUPS` a compute unit on a unit with `registers` (its register
/// file), in the allocation's steps of 8; `None` for other configurations. A
/// compiler may spend more than that on the same source: at 4097x33x2049 NVIDIA's
/// OpenCL took 159 where NVRTC took 128 (results/h200/routine/thin-pipe/).
pub fn register_budget(c: &Config, registers: u32) -> Option<u32> {
    if c.get("PIPE") == 0 {
        return None;
    }
    let groups = PIPELINED_GROUPS * c.u("THREADS");
    let cap = (registers as usize / groups / 8 * 8).min(255);
    // Below 64 the accumulators alone would spill.
    (cap >= 64).then_some(cap as u32)
}

/// As [`fitted_pipelined`], with `LANES_KL` work-items along K on each pair of
/// long-side indices (KL): for a large operand stored K-contiguous, whose rows
/// (columns) the other forms read 4 or 16 bytes from each of a warp's 32 at once.
/// Split-K fills the device as the pipelined fit's does, over the work-group's
/// narrower long side. On the H200 the routine took it for 4x32000x4096 (1.07 ->
/// 1.35 of cuBLAS) and 12x30000x1000 row-major NT, among others; not for
/// 4097x33x2049 row-major NN, where `simtdirect` stayed 2% faster
/// (results/h200/routine/klanes/).
pub fn fitted_lanes(m: usize, n: usize, k: usize, units: usize) -> Option<Config> {
    let (bt, long, side) = short_side(m, n)?;
    let (threads, kv, kl) = (128usize, 8usize, LANES_KL);
    let batches = k.div_ceil(kl * kv);
    let config = |tl: usize, kc: usize, split: usize| -> Option<Config> {
        let defines: Vec<(String, i64)> = [
            ("SIDE", side),
            ("BT", bt),
            ("TL", tl),
            ("THREADS", threads),
            ("KV", kv),
            ("KC", kc),
            ("SPLITK", split),
            ("PIPE", 1),
            ("KL", kl),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), *v as i64))
        .collect();
        let c = THIN.config(&defines).ok()?;
        THIN.validate(&c).is_ok().then_some(c)
    };
    // Two long-side indices a group where their partial sums fit in local
    // memory: each read of the small operand's chunk then feeds 2*BT products
    // (at one, 128-bit local reads and products run 1:4, the rate the two units
    // have); else one.
    [2, 1].into_iter().find_map(|tl| {
        let tiles = long.div_ceil(threads / kl * tl);
        let split = pipelined_split(tiles, batches, units);
        let share = k.div_ceil(split).max(1);
        chunk_depths(kl * kv, bt, threads, share).find_map(|kc| config(tl, kc, split))
    })
}

/// Work-items along K in [`fitted_lanes`]: runs of 16 bytes of a row (half a
/// sector, the other half the next load's), and every short-side tile (a
/// multiple of 4) divides among them.
pub const LANES_KL: usize = 4;

/// Every configuration fitted to a call's shape: read straight from global
/// memory, staged in local memory, and prefetched, and where the large operand
/// is stored K-contiguous (`large_along_k`) also with work-items along K (none
/// where no side is short).
pub fn fits(m: usize, n: usize, k: usize, units: usize, large_along_k: bool) -> Vec<Config> {
    let lanes = large_along_k.then(|| fitted_lanes(m, n, k, units));
    [fitted, fitted_staged, fitted_pipelined]
        .iter()
        .map(|fit| fit(m, n, k, units))
        .chain(lanes)
        .flatten()
        .collect()
}

/// The fewest splits of K that give `PIPELINED_GROUPS` work-groups a unit over
/// `tiles` tiles of C, each split at least two of `batches` deep.
fn pipelined_split(tiles: usize, batches: usize, units: usize) -> usize {
    let want = PIPELINED_GROUPS * units.max(1);
    let splits: Vec<usize> = (P_SPLITK.allowed.iter().map(|&s| s as usize))
        .filter(|&s| s == 1 || 2 * s <= batches)
        .collect();
    (splits.iter().copied())
        .find(|&s| tiles * s >= want)
        .or(splits.last().copied())
        .unwrap_or(1)
}

fn fit(m: usize, n: usize, k: usize, units: usize, staged: bool) -> Option<Config> {
    let (bt, long, side) = short_side(m, n)?;
    // Two long-side indices per work-item on long sides. Measured on the H200
    // and kept out (results/h200/routine/thin-tiles/): one index for GEMV-like
    // calls (8192x1x8192 from 73 to 117 us), and one for short sides past 32,
    // which halves the registers (BT 48: 197 to 100) but not the time
    // (30000x40x1024 from 1.00 to 0.75 of cuBLAS).
    let tl = if long >= 4096 && !staged { 2 } else { 1 };
    let threads = 128;
    let tiles = long.div_ceil(threads * tl);
    let chunks = k.div_ceil(32).max(1);
    let want = 2 * units.max(1);
    let split = P_SPLITK
        .allowed
        .iter()
        .map(|&s| s as usize)
        .filter(|&s| s <= chunks)
        .find(|&s| tiles * s >= want)
        .unwrap_or_else(|| chunks.clamp(1, 32));
    let split = P_SPLITK
        .allowed
        .iter()
        .map(|&s| s as usize)
        .rfind(|&s| s <= split)
        .unwrap_or(1);
    // KV 16: the loads of a work-item's batch in flight at once (the H200's tuned
    // best at 16x14336x4096 had it; results/h200/routine/thin/).
    let values = [
        ("KV", 16),
        ("SIDE", side as i64),
        ("BT", bt as i64),
        ("TL", tl as i64),
        ("THREADS", threads as i64),
        ("SPLITK", split as i64),
        ("XS", staged as i64),
    ];
    let defines: Vec<(String, i64)> = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    THIN.config(&defines).ok()
}

/// The short side, its tile and `SIDE` of a call; `None` where neither side is
/// short (over 64).
fn short_side(m: usize, n: usize) -> Option<(usize, usize, usize)> {
    let (short, long, side) = if m <= n { (m, n, 0) } else { (n, m, 1) };
    let bt = (BT_ALLOWED.into_iter().map(|b| b as usize)).find(|&b| b >= short)?;
    Some((bt, long, side))
}

fn fit_pipelined(m: usize, n: usize, k: usize, units: usize) -> Option<Config> {
    let (bt, long, side) = short_side(m, n)?;
    let (threads, kv) = (128usize, 16usize);
    let tiles = long.div_ceil(threads);
    let split = pipelined_split(tiles, k.div_ceil(kv), units);
    let defines = |kc: usize| -> Vec<(String, i64)> {
        [
            ("SIDE", side),
            ("BT", bt),
            ("TL", 1),
            ("THREADS", threads),
            ("KV", kv),
            ("KC", kc),
            ("SPLITK", split),
            ("PIPE", 1),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), *v as i64))
        .collect()
    };
    let share = k.div_ceil(split).max(1);
    chunk_depths(kv, bt, threads, share)
        .filter_map(|kc| THIN.config(&defines(kc)).ok())
        .find(|c| THIN.validate(c).is_ok())
}

/// The chunk depths a pipelined fit may take, deepest first: whole batches of
/// `batch` values of K, staged in at most 12 loads a work-item (each held with
/// its address until the barrier: on sm_90, BT 36 with KC 32, 64 and 128 took
/// 127, 177 and 255 registers) and no deeper than a split's `share`; one batch
/// always qualifies.
fn chunk_depths(
    batch: usize,
    bt: usize,
    threads: usize,
    share: usize,
) -> impl Iterator<Item = usize> {
    (P_KC.allowed.iter().rev().map(|&c| c as usize))
        .filter(move |&kc| kc % batch == 0)
        .filter(move |&kc| {
            kc == batch || (kc <= share.next_power_of_two() && (kc * bt).div_ceil(threads) <= 12)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_tile_each_side() {
        let c = THIN.defaults();
        THIN.validate(&c).unwrap();
        assert_eq!(THIN.tile(&c), (16, 256, 32));
        assert_eq!(THIN.threads_per_group(&c), 128);
        let d: Vec<(String, i64)> = vec![("SIDE".into(), 1)];
        let c1 = THIN.config(&d).unwrap();
        assert_eq!(THIN.tile(&c1), (256, 16, 32));
        assert_eq!((THIN.launch.local)(&c1), (128, 1));
    }

    #[test]
    fn constraints_name_what_fails() {
        let d: Vec<(String, i64)> = vec![("KV".into(), 16), ("KC".into(), 16), ("TL".into(), 4)];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("TL*KV"), "{e}");
        let d: Vec<(String, i64)> = vec![("BT".into(), 32), ("TL".into(), 4), ("KV".into(), 4)];
        assert!(THIN.config(&d).and_then(|c| THIN.validate(&c)).is_ok());
    }

    #[test]
    fn fitted_covers_the_short_side_and_fills_the_device() {
        // Decoding: 16 rows of C against a 4096 x 14336 B, 132 units.
        let c = fitted(16, 14336, 4096, 132).unwrap();
        assert_eq!((c.get("SIDE"), c.get("BT"), c.get("TL")), (0, 16, 2));
        let tiles = 14336usize.div_ceil(256);
        assert!(tiles * c.u("SPLITK") >= 264, "{}", c.describe());
        // N short: the other side; 48 columns in one tile.
        let c = fitted(100_000, 24, 64, 132).unwrap();
        assert_eq!((c.get("SIDE"), c.get("BT")), (1, 24));
        // The tile covers the short side with less than 4 to spare.
        for short in 1..=64 {
            let c = fitted(short, 11008, 4096, 132).unwrap();
            let bt = c.u("BT");
            assert!(bt >= short && bt - short < 4, "{short}: {}", c.describe());
            THIN.validate(&c).unwrap();
        }
        let c = fitted(30_000, 48, 1024, 132).unwrap();
        assert_eq!((c.get("SIDE"), c.get("BT"), c.get("TL")), (1, 48, 2));
        THIN.validate(&c).unwrap();
        // Short K leaves nothing to split.
        assert_eq!(fitted(8, 1000, 16, 132).unwrap().get("SPLITK"), 1);
        assert!(fitted(200, 300, 4096, 132).is_none());
    }

    #[test]
    fn pipelined_fills_the_device_in_whole_batches_and_says_why_not() {
        // 4097x33x2049: 33 work-groups of 128 rows cover M; 16 splits of 8-9
        // batches give four work-groups a unit on 132.
        let c = fitted_pipelined(4097, 33, 2049, 132).unwrap();
        let got = ["SIDE", "BT", "TL", "KV", "SPLITK", "PIPE", "XS"].map(|n| c.get(n));
        assert_eq!(got, [1, 36, 1, 16, 16, 1, 0], "{}", c.describe());
        assert_eq!(c.get("KC"), 32, "{}", c.describe());
        // Short K: no split shallower than two batches, chunks no deeper than K needs.
        let c = fitted_pipelined(8, 5000, 40, 132).unwrap();
        assert_eq!((c.get("SPLITK"), c.get("KC")), (1, 64), "{}", c.describe());
        for (m, n, k) in [
            (1, 8192, 8192),
            (64, 30_000, 4096),
            (50_000, 64, 64),
            (7, 7, 7),
        ] {
            let c = fitted_pipelined(m, n, k, 132).unwrap();
            THIN.validate(&c).unwrap();
        }
        assert!(fitted_pipelined(65, 1000, 1000, 132).is_none());
        // Four work-groups of 128 on a register file of 64K: 128 a work-item;
        // none for an unpipelined configuration or a file too small to hold them.
        let c = fitted_pipelined(4097, 33, 2049, 132).unwrap();
        assert_eq!(register_budget(&c, 65536), Some(128));
        assert_eq!(register_budget(&c, 65536 + 1000), Some(128));
        assert_eq!(register_budget(&c, 300_000), Some(255));
        assert_eq!(register_budget(&c, 16384), None);
        let plain = fitted(4097, 33, 2049, 132).unwrap();
        assert_eq!(register_budget(&plain, 65536), None);
        // Two batches of TL*KV and the chunk's share must fit beside the accumulators.
        let d: Vec<(String, i64)> = vec![
            ("PIPE".into(), 1),
            ("TL".into(), 2),
            ("KV".into(), 16),
            ("BT".into(), 40),
            ("KC".into(), 128),
        ];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("PIPE=1"), "{e}");
        let d: Vec<(String, i64)> = vec![("PIPE".into(), 1), ("XS".into(), 1), ("TL".into(), 1)];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("XS=0"), "{e}");
    }

    #[test]
    fn lanes_along_k_narrow_the_tile_and_say_why_not() {
        // 4097x33x2049 row-major NN as column-major: 33 rows of C, B K-contiguous.
        let c = fitted_lanes(33, 4097, 2049, 132).unwrap();
        let got = ["SIDE", "BT", "TL", "KL", "KV", "PIPE", "XS"].map(|n| c.get(n));
        assert_eq!(got, [0, 36, 2, 4, 8, 1, 0], "{}", c.describe());
        // 32 groups of 2 long-side indices a work-group of 128; split-K to four
        // work-groups a unit, each split at least two batches of 32 deep.
        assert_eq!(THIN.tile(&c), (36, 64, c.u("KC")));
        assert_eq!((THIN.launch.local)(&c), (4, 32));
        assert_eq!((THIN.launch.per_item)(&c), (9, 2));
        let g = THIN.geometry(&c, 36, 64 * 65);
        assert_eq!((g.global[0], g.global[1]), (4, 32 * 65), "{g:?}");
        assert!(65 * c.u("SPLITK") >= 4 * 132 && 2 * c.u("SPLITK") <= 65);
        assert_eq!(c.u("KC") % 32, 0);
        // The other side: a group's KL work-items along y.
        let c = fitted_lanes(4097, 33, 2049, 132).unwrap();
        assert_eq!((c.get("SIDE"), (THIN.launch.local)(&c)), (1, (32, 4)));
        // Two long-side indices a group up to a short side of 44; past it their
        // partial sums would not fit in local memory.
        for (m, n, k, tl) in [
            (1, 8192, 8192, 2),
            (7, 7, 7, 2),
            (44, 100, 31, 2),
            (48, 100, 31, 1),
            (64, 30_000, 4096, 1),
        ] {
            let c = fitted_lanes(m, n, k, 132).unwrap();
            assert_eq!(c.get("TL"), tl, "{}", c.describe());
        }
        // Only for a large operand stored K-contiguous.
        assert_eq!(fits(33, 4097, 2049, 132, false).len(), 3);
        let all = fits(33, 4097, 2049, 132, true);
        assert_eq!((all.len(), all[3].get("KL")), (4, 4));
        // The constraints say which and why.
        let d: Vec<(String, i64)> = vec![("KL".into(), 8), ("BT".into(), 36), ("KC".into(), 64)];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("KL must divide BT"), "{e}");
        let d: Vec<(String, i64)> = vec![("KL".into(), 4), ("KV".into(), 16)];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("KL*KV must divide KC"), "{e}");
        let d: Vec<(String, i64)> = vec![("KL".into(), 2), ("XS".into(), 1), ("TL".into(), 1)];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("XS=0"), "{e}");
        // The partial sums reuse the chunk's local memory: the larger of the two.
        let d: Vec<(String, i64)> = vec![
            ("KL".into(), 4),
            ("BT".into(), 64),
            ("TL".into(), 2),
            ("THREADS".into(), 256),
        ];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("48 KiB"), "{e}");
    }

    #[test]
    fn staged_fits_in_local_memory_and_says_why_not() {
        for (m, n, k) in [
            (1, 4096, 4096),
            (64, 30_000, 4096),
            (8192, 1, 8192),
            (48, 11008, 4096),
        ] {
            let c = fitted_staged(m, n, k, 132).unwrap();
            assert_eq!((c.get("XS"), c.get("TL")), (1, 1), "{}", c.describe());
            THIN.validate(&c).unwrap();
        }
        let d: Vec<(String, i64)> = vec![
            ("XS".into(), 1),
            ("THREADS".into(), 256),
            ("TL".into(), 2),
            ("KC".into(), 64),
        ];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("48 KiB"), "{e}");
        let d: Vec<(String, i64)> = vec![
            ("XS".into(), 1),
            ("TL".into(), 2),
            ("KC".into(), 64),
            ("THREADS".into(), 64),
        ];
        let e = THIN.config(&d).and_then(|c| THIN.validate(&c)).unwrap_err();
        assert!(e.to_string().contains("TL*KC"), "{e}");
    }
}
