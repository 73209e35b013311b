//! Family 2: the kernels of the OpenCL matrix-multiplication lecture (Schenck,
//! "Matrix Multiplication with OpenCL", 2017): row-major C = A * B with strides,
//! in `real_t` (float or double), any size. Seven variants, each the lecture's
//! solution or, where the lecture shows no code (prefetch, wide tiles), written
//! from its slide: naive, A transposed, B transposed, B transposed with explicit
//! vectors, local-memory tiles, tiles with prefetching, wide tiles.
//!
//! All take the lecture's arguments `(Aheight, Awidth, Bheight, Bwidth, Astride,
//! Bstride, Cstride, A, B, C)` (`Abi::Lecture`), NDRange x along the columns of
//! C, y along its rows, BLOCK_SIZE x BLOCK_SIZE work-groups; the global size is
//! rounded up to the work-group and the kernels check the borders themselves.
//! The lecture's kernels carry `reqd_work_group_size(BLOCK_SIZE,BLOCK_SIZE,1)`,
//! so USE_BOUNDS is published ON (CUDA: `__launch_bounds__`).

use super::switches::{SwitchUse, USE_BOUNDS};
use super::Precision;
use super::{Abi, Config, Constraint, Family, KernelSpec, Launch, Operands, Param, PRECISION};
use crate::backend::Language::{CudaCpp, OpenClC};

const BOTH: &[Precision] = &[Precision::F32, Precision::F64];

const P_BLOCK_SIZE: Param = Param {
    name: "BLOCK_SIZE",
    default: 16,
    allowed: &[8, 16, 32],
    meaning: "work-group edge (BLOCK_SIZE x BLOCK_SIZE work-items) and, in the tiled kernels, the edge of the local-memory sub-matrices",
};

const P_VW: Param = Param {
    name: "VW",
    default: 0,
    allowed: &[0, 2, 4, 8, 16],
    meaning: "vector width in reals of the A and B^T loads; 0: the lecture's 32-byte vector (float8 in f32, double4 in f64)",
};

const PARAMS: &[Param] = &[P_BLOCK_SIZE];
const PARAMS_VEC: &[Param] = &[P_BLOCK_SIZE, P_VW];

/// The lecture's kernels carry reqd_work_group_size(BLOCK_SIZE,BLOCK_SIZE,1).
const SWITCHES: &[SwitchUse] = &[SwitchUse::on(USE_BOUNDS)];

const MAX_GROUP: i64 = 1024;
/// Static local (shared) memory per work-group: NVIDIA caps it at 48 KiB in both toolchains.
const LOCAL_LIMIT: i64 = 48 * 1024;

/// Bytes of one `real_t`: 8 where the configuration's PRECISION is 64, else 4.
fn real_bytes(c: &Config) -> i64 {
    if c.get(PRECISION) == 64 {
        8
    } else {
        4
    }
}

/// The vector width of `lecture_bt_vec` in reals: VW, or 32 bytes' worth where VW is 0
/// (float8 in f32, double4 in f64), as the kernel resolves it.
pub fn vector_width(c: &Config) -> usize {
    match c.get("VW") {
        v if v > 0 => v as usize,
        _ => (32 / real_bytes(c)) as usize,
    }
}

fn block(c: &Config) -> i64 {
    c.get("BLOCK_SIZE")
}

fn no_local(_: &Config) -> i64 {
    0
}

/// Asub and Bsub: 2 * BLOCK_SIZE^2 reals (matMulKernel_LM, and _LM_PF whose
/// prefetch buffer is registers).
fn tiles_local(c: &Config) -> i64 {
    2 * block(c) * block(c) * real_bytes(c)
}

/// Asub and two Bsub: 3 * BLOCK_SIZE^2 reals.
fn wide_local(c: &Config) -> i64 {
    3 * block(c) * block(c) * real_bytes(c)
}

const GROUP_LIMIT: Constraint = Constraint {
    message: "the BLOCK_SIZE x BLOCK_SIZE work-group must not exceed 1024 work-items",
    involves: &["BLOCK_SIZE"],
    holds: |c| block(c) * block(c) <= MAX_GROUP,
};

const CONSTRAINTS_PLAIN: &[Constraint] = &[GROUP_LIMIT];

const CONSTRAINTS_TILES: &[Constraint] = &[
    GROUP_LIMIT,
    Constraint {
        message: "the local sub-matrices Asub and Bsub (2*BLOCK_SIZE*BLOCK_SIZE reals, 4 bytes each in f32, 8 in f64) must fit in 48 KiB of local memory",
        involves: &["BLOCK_SIZE", PRECISION],
        holds: |c| tiles_local(c) <= LOCAL_LIMIT,
    },
];

const CONSTRAINTS_WIDE: &[Constraint] = &[
    GROUP_LIMIT,
    Constraint {
        message: "the local sub-matrices Asub, Bsub0 and Bsub1 (3*BLOCK_SIZE*BLOCK_SIZE reals, 4 bytes each in f32, 8 in f64) must fit in 48 KiB of local memory",
        involves: &["BLOCK_SIZE", PRECISION],
        holds: |c| wide_local(c) <= LOCAL_LIMIT,
    },
];

/// Work-group BLOCK_SIZE x BLOCK_SIZE; x runs along the columns of C.
const SQUARE: fn(&Config) -> (usize, usize) = |c| (c.u("BLOCK_SIZE"), c.u("BLOCK_SIZE"));
const ONE: fn(&Config) -> (usize, usize) = |_| (1, 1);
const NO_TILE: fn(&Config) -> (usize, usize, usize) = |_| (1, 1, 1);

/// What the lecture's kernels share: each entry below gives its own names,
/// sources and what differs (the names here are never used).
const LECTURE: KernelSpec = KernelSpec {
    id: "",
    entry: "",
    family: Family::Lecture,
    title: "",
    idea: "",
    sources: &[],
    params: PARAMS,
    constraints: CONSTRAINTS_PLAIN,
    local_bytes: no_local,
    launch: Launch {
        local: SQUARE,
        per_item: ONE,
    },
    operands: Operands {
        b_transposed: false,
        tile: NO_TILE,
    },
    switches: SWITCHES,
    abi: Abi::Lecture {
        a_transposed: false,
        b_transposed: false,
    },
    precisions: BOTH,
};

pub const KERNELS: &[KernelSpec] = &[
    KernelSpec {
        id: "lecture_naive",
        entry: "matMulKernel",
        title: "lecture: naive",
        idea: "one work-item per element of C, straight from global memory (exercise 1)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_naive.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_naive.cu"))],
        ..LECTURE
    },
    KernelSpec {
        id: "lecture_at",
        entry: "matMulKernel_TRA",
        title: "lecture: A transposed",
        idea: "as naive, A stored transposed (K x M): work-items along a row of C read the same element of A (exercise 2)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_at.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_at.cu"))],
        abi: Abi::Lecture { a_transposed: true, b_transposed: false },
        ..LECTURE
    },
    KernelSpec {
        id: "lecture_bt",
        entry: "matMulKernel_TRB",
        title: "lecture: B transposed",
        idea: "as naive, B stored transposed (N x K): every work-item reads rows of A and B^T, the CPU's favourite pattern (exercise 2)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_bt.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_bt.cu"))],
        operands: Operands { b_transposed: true, tile: NO_TILE },
        abi: Abi::Lecture { a_transposed: false, b_transposed: true },
        ..LECTURE
    },
    KernelSpec {
        id: "lecture_bt_vec",
        entry: "matMulKernel_TRB_VEC",
        title: "lecture: B transposed, explicit vectors",
        idea: "as B transposed, rows of A and B^T read as vectors of VW reals (float8 / double4), multiplied elementwise and summed component by component (exercise 3)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_bt_vec.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_bt_vec.cu"))],
        params: PARAMS_VEC,
        // Strides of A and B^T multiples of the vector width, zero-padded beyond K.
        operands: Operands { b_transposed: true, tile: |c| (1, 1, vector_width(c)) },
        abi: Abi::Lecture { a_transposed: false, b_transposed: true },
        ..LECTURE
    },
    KernelSpec {
        id: "lecture_tiled",
        entry: "matMulKernel_LM",
        title: "lecture: local-memory tiles",
        idea: "BLOCK_SIZE x BLOCK_SIZE sub-matrices of A and B staged in local memory between barriers, border sub-matrices guarded (exercise 4)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_tiled.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_tiled.cu"))],
        constraints: CONSTRAINTS_TILES,
        local_bytes: tiles_local,
        ..LECTURE
    },
    KernelSpec {
        id: "lecture_prefetch",
        entry: "matMulKernel_LM_PF",
        title: "lecture: local-memory tiles with prefetching",
        idea: "as local-memory tiles, the next sub-matrices fetched from global memory into registers while the current ones are used (the lecture's prefetch slide)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_prefetch.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_prefetch.cu"))],
        constraints: CONSTRAINTS_TILES,
        local_bytes: tiles_local,
        ..LECTURE
    },
    KernelSpec {
        id: "lecture_wide",
        entry: "matMulKernel_LM_WIDE",
        title: "lecture: wide tiles",
        idea: "as local-memory tiles, each work-item computes two elements of C, BLOCK_SIZE columns apart, sharing one sub-matrix of A (the lecture's wide-tiles slide)",
        sources: &[(OpenClC, include_str!("../../../kernels-cl/lecture_wide.cl")), (CudaCpp, include_str!("../../../kernels-cu/lecture_wide.cu"))],
        constraints: CONSTRAINTS_WIDE,
        local_bytes: wide_local,
        // Two columns of C per work-item: x (columns) is half as large.
        launch: Launch { local: SQUARE, per_item: |_| (2, 1) },
        ..LECTURE
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn find(id: &str) -> &'static KernelSpec {
        KERNELS.iter().find(|k| k.id == id).unwrap()
    }

    #[test]
    fn defaults_validate_in_both_precisions() {
        for k in KERNELS {
            assert_eq!(k.family, Family::Lecture);
            assert!(k.multi_precision(), "{}", k.id);
            let c = k.defaults();
            assert_eq!(c.get(PRECISION), 32, "{}", k.id);
            assert_eq!(c.get("BLOCK_SIZE"), 16, "{}", k.id);
            k.validate(&c)
                .unwrap_or_else(|e| panic!("{} f32: {e}", k.id));
            let d = k.with_precision(&c, Precision::F64).unwrap();
            assert_eq!(d.get(PRECISION), 64);
            k.validate(&d)
                .unwrap_or_else(|e| panic!("{} f64: {e}", k.id));
            assert_eq!((k.launch.local)(&c), (16, 16), "{}", k.id);
            for bs in [8, 32] {
                k.config(&[("BLOCK_SIZE".into(), bs), (PRECISION.into(), 64)])
                    .unwrap_or_else(|e| panic!("{} BLOCK_SIZE={bs} f64: {e}", k.id));
            }
            // One GEMMLAB_BOUNDS per source, USE_BOUNDS published on, entry in both.
            assert!(
                k.has_switch("USE_BOUNDS") && k.switches.len() == 1,
                "{}",
                k.id
            );
            assert!(k.switches[0].published_opencl && k.switches[0].published_cuda);
            for (_, src) in k.sources {
                assert!(src.contains(&format!("void {}(", k.entry)), "{}", k.id);
                assert!(
                    src.contains("#ifndef USE_BOUNDS\n#define USE_BOUNDS 1\n"),
                    "{}",
                    k.id
                );
                assert!(
                    src.contains("#ifndef BLOCK_SIZE\n#define BLOCK_SIZE 16\n"),
                    "{}",
                    k.id
                );
                assert!(
                    src.contains("#ifndef PRECISION\n#define PRECISION 32\n"),
                    "{}",
                    k.id
                );
            }
        }
    }

    #[test]
    fn abi_and_operands_say_how_each_reads_a_and_b() {
        let want = [
            ("lecture_naive", false, false),
            ("lecture_at", true, false),
            ("lecture_bt", false, true),
            ("lecture_bt_vec", false, true),
            ("lecture_tiled", false, false),
            ("lecture_prefetch", false, false),
            ("lecture_wide", false, false),
        ];
        assert_eq!(KERNELS.len(), want.len());
        for (id, a_t, b_t) in want {
            let k = find(id);
            assert_eq!(
                k.abi,
                Abi::Lecture {
                    a_transposed: a_t,
                    b_transposed: b_t
                },
                "{id}"
            );
            assert_eq!(k.operands.b_transposed, b_t, "{id}");
            let c = k.defaults();
            let per = if id == "lecture_wide" { (2, 1) } else { (1, 1) };
            assert_eq!((k.launch.per_item)(&c), per, "{id}");
        }
    }

    #[test]
    fn vw_zero_resolves_to_32_bytes() {
        let k = find("lecture_bt_vec");
        let c = k.defaults();
        assert_eq!(c.get("VW"), 0);
        assert_eq!(vector_width(&c), 8);
        assert_eq!(k.tile(&c), (1, 1, 8));
        let d = k.with_precision(&c, Precision::F64).unwrap();
        assert_eq!(vector_width(&d), 4);
        assert_eq!(k.tile(&d), (1, 1, 4));
        for vw in [2, 4, 8, 16] {
            for p in [32, 64] {
                let c = k
                    .config(&[("VW".into(), vw), (PRECISION.into(), p)])
                    .unwrap();
                assert_eq!(k.tile(&c), (1, 1, vw as usize));
            }
        }
        for id in ["lecture_naive", "lecture_tiled", "lecture_wide"] {
            assert_eq!(find(id).tile(&find(id).defaults()), (1, 1, 1), "{id}");
        }
    }

    #[test]
    fn local_memory_doubles_with_precision_64() {
        let expect = [
            ("lecture_naive", 0),
            ("lecture_bt_vec", 0),
            ("lecture_tiled", 2 * 16 * 16 * 4),
            ("lecture_prefetch", 2 * 16 * 16 * 4),
            ("lecture_wide", 3 * 16 * 16 * 4),
        ];
        for (id, f32_bytes) in expect {
            let k = find(id);
            let c = k.defaults();
            assert_eq!((k.local_bytes)(&c), f32_bytes, "{id}");
            let d = k.with_precision(&c, Precision::F64).unwrap();
            assert_eq!((k.local_bytes)(&d), 2 * f32_bytes, "{id}");
        }
        // The largest: wide tiles at BLOCK_SIZE 32 in f64, 24 KiB.
        let k = find("lecture_wide");
        let c = k
            .config(&[("BLOCK_SIZE".into(), 32), (PRECISION.into(), 64)])
            .unwrap();
        assert_eq!((k.local_bytes)(&c), 24 * 1024);
    }

    #[test]
    fn violations_name_their_parameters() {
        let k = find("lecture_tiled");
        let e = k
            .config(&[("BLOCK_SIZE".into(), 12)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("BLOCK_SIZE") && e.contains("BLOCK_SIZE=12"),
            "{e}"
        );
        let e = k.config(&[(PRECISION.into(), 16)]).unwrap_err().to_string();
        assert!(e.contains("PRECISION") && e.contains("PRECISION=16"), "{e}");
        let e = find("lecture_bt_vec")
            .config(&[("VW".into(), 3)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("VW") && e.contains("VW=3"), "{e}");
        let e = k.config(&[("TS".into(), 16)]).unwrap_err().to_string();
        assert!(
            e.contains("unknown parameter TS") && e.contains("BLOCK_SIZE"),
            "{e}"
        );
        // The constraints themselves, on values outside the allowed list.
        let mut big = k.defaults();
        big.0.insert("BLOCK_SIZE".into(), 64);
        big.0.insert(PRECISION.into(), 64);
        for (spec, c) in [
            (k, &big),
            (find("lecture_wide"), &big),
            (find("lecture_naive"), &big),
        ] {
            let failing: Vec<&Constraint> =
                spec.constraints.iter().filter(|x| !(x.holds)(c)).collect();
            assert!(!failing.is_empty(), "{}", spec.id);
            for x in failing {
                assert!(x.message.contains("BLOCK_SIZE"), "{}", x.message);
                assert!(x.involves.contains(&"BLOCK_SIZE"), "{}", x.message);
            }
        }
        let local = CONSTRAINTS_TILES[1];
        assert!(local.involves.contains(&PRECISION) && local.message.contains("48 KiB"));
    }
}
