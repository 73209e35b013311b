//! Family 3: CLBlast's parameterised GEMM kernels. `XGEMM` is the indirect kernel
//! (CLBlast's xgemm_part1..4.opencl, GEMMK=0): C = alpha A B + beta C on padded
//! operands with B transposed, prepared by the pad/transpose/copy kernels.

use super::switches::{SwitchUse, USE_BOUNDS, USE_RESTRICT};
use super::Precision;
use super::{Abi, Config, Constraint, Family, KernelSpec, Launch, Operands, Param, PRECISION};
use crate::backend::Language::{CudaCpp, OpenClC};

const TILE_MN: &[i64] = &[8, 16, 32, 64, 128, 256];
const TILE_K: &[i64] = &[8, 16, 32, 64];
const DIM: &[i64] = &[8, 16, 32];
const KWI_VALUES: &[i64] = &[1, 2, 4, 8];
const VW: &[i64] = &[1, 2, 4, 8];
const BOOL: &[i64] = &[0, 1];

// Allowed values: CLBlast's tuner (src/tuning/kernels/xgemm.hpp, variation 2, the
// randomly sampled one) searches MWG/NWG {16,32,64,128}, KWG {16,32}, MDIMC/NDIMC/
// MDIMA/NDIMB {8,16,32}, KWI {2}, VWM/VWN {1,2,4,8} and 0/1 for STRM, STRN, SA, SB.
// Widened where the kernel is equally correct: MWG/NWG 8 and 256 (its earlier
// tuner's range), KWG 8 and 64, KWI 1, 4 and 8 (its database holds KWI=8).
//
// Defaults: CLBlast's database entry for any device (src/database/kernels/xgemm/
// xgemm_32.hpp, vendor "default", device "default"), single precision:
//   KWG 32, KWI 2, MDIMA 8, MDIMC 8, MWG 32, NDIMB 16, NDIMC 16, NWG 32,
//   SA 1, SB 1, STRM 0, STRN 0, VWM 4, VWN 2.
// The double-precision entry (xgemm_64.hpp) differs: see `XGEMM_F64_DEFAULTS`.
// (CLBlast's NVIDIA "default" f32 entry, used for NVIDIA GPUs it has no entry for,
// is KWG 32, KWI 2, MDIMA 8, MDIMC 8, MWG 32, NDIMB 32, NDIMC 32, NWG 64, SA 1,
// SB 1, STRM 0, STRN 0, VWM 4, VWN 2.)
const P_MWG: Param = Param {
    name: "MWG",
    default: 32,
    allowed: TILE_MN,
    meaning: "work-group tile size along M",
};
const P_NWG: Param = Param {
    name: "NWG",
    default: 32,
    allowed: TILE_MN,
    meaning: "work-group tile size along N",
};
const P_KWG: Param = Param {
    name: "KWG",
    default: 32,
    allowed: TILE_K,
    meaning: "work-group tile depth along K (one local-memory tile)",
};
const P_MDIMC: Param = Param {
    name: "MDIMC",
    default: 8,
    allowed: DIM,
    meaning: "work-items per work-group along M",
};
const P_NDIMC: Param = Param {
    name: "NDIMC",
    default: 16,
    allowed: DIM,
    meaning: "work-items per work-group along N",
};
const P_MDIMA: Param = Param {
    name: "MDIMA",
    default: 8,
    allowed: DIM,
    meaning: "work-group re-shaped as MDIMA x KDIMA to load the A tile into local memory (SA=1)",
};
const P_NDIMB: Param = Param {
    name: "NDIMB",
    default: 16,
    allowed: DIM,
    meaning: "work-group re-shaped as NDIMB x KDIMB to load the B tile into local memory (SB=1)",
};
const P_KWI: Param = Param {
    name: "KWI",
    default: 2,
    allowed: KWI_VALUES,
    meaning: "unroll factor of the loop over k inside a tile",
};
const P_VWM: Param = Param {
    name: "VWM",
    default: 4,
    allowed: VW,
    meaning: "vector width along M: A and C are read and written as VWM-wide vectors",
};
const P_VWN: Param = Param {
    name: "VWN",
    default: 2,
    allowed: VW,
    meaning: "vector width along N: B is read as VWN-wide vectors",
};
const P_STRM: Param = Param {
    name: "STRM",
    default: 0,
    allowed: BOOL,
    meaning: "1: a work-item's elements along M are strided by MDIMC; 0: contiguous",
};
const P_STRN: Param = Param {
    name: "STRN",
    default: 0,
    allowed: BOOL,
    meaning: "1: a work-item's elements along N are strided by NDIMC; 0: contiguous",
};
const P_SA: Param = Param {
    name: "SA",
    default: 1,
    allowed: BOOL,
    meaning: "1: stage the KWG x MWG tile of A in local memory; 0: read A straight into registers",
};
const P_SB: Param = Param {
    name: "SB",
    default: 1,
    allowed: BOOL,
    meaning: "1: stage the KWG x NWG tile of B in local memory; 0: read B straight into registers",
};

/// CLBlast's database entry for any device, double precision (xgemm_64.hpp,
/// vendor "default", device "default"). The registry's defaults are the
/// single-precision entry; this one is for a caller that wants CLBlast's own
/// double-precision starting point.
#[allow(dead_code)] // data for the driver/tuner; the tests check it validates
pub const XGEMM_F64_DEFAULTS: &[(&str, i64)] = &[
    ("KWG", 32),
    ("KWI", 2),
    ("MDIMA", 16),
    ("MDIMC", 16),
    ("MWG", 32),
    ("NDIMB", 8),
    ("NDIMC", 8),
    ("NWG", 32),
    ("SA", 1),
    ("SB", 1),
    ("STRM", 0),
    ("STRN", 0),
    ("VWM", 2),
    ("VWN", 4),
];

/// Static local (shared) memory per work-group: NVIDIA caps it at 48 KiB in both toolchains.
const LOCAL_LIMIT: i64 = 48 * 1024;
const MAX_GROUP: i64 = 1024;

/// Bytes of one `real`: the configuration's PRECISION (64: double), float otherwise.
fn real_bytes(c: &Config) -> i64 {
    if c.get(PRECISION) == 64 {
        8
    } else {
        4
    }
}

fn xgemm_local(c: &Config) -> i64 {
    real_bytes(c)
        * (c.get("SA") * c.get("KWG") * c.get("MWG") + c.get("SB") * c.get("KWG") * c.get("NWG"))
}

/// KWG is a whole number of KDIM-deep rows of the re-shaped work-group
/// (MDIMC*NDIMC work-items as DIM x KDIM): CLBlast's tuner checks
/// KWG % ((MDIMC*NDIMC)/DIM); with integer division that needs DIM to divide
/// MDIMC*NDIMC, which CLBlast's value sets guarantee and this checks.
fn k_rows_fit(c: &Config, dim: &str) -> bool {
    let threads = c.get("MDIMC") * c.get("NDIMC");
    let d = c.get(dim);
    d > 0 && threads % d == 0 && threads / d > 0 && c.get("KWG") % (threads / d) == 0
}

fn multiple(c: &Config, of: &str, a: &str, b: &str) -> bool {
    let m = c.get(a) * c.get(b);
    m > 0 && c.get(of) % m == 0
}

// CLBlast's tuner constraints (xgemm.hpp, XgemmSetConstraints, kernel 0) and its
// local-memory limit (XgemmComputeLocalMemSize), plus the work-group size limit.
// Not included: the variation-1 restrictions MDIMA == MDIMC, NDIMB == NDIMC and
// SA == SB, which only shrink that exhaustive search (variation 2 and CLBlast's
// database have configurations without them, e.g. SA=0 with MDIMA != MDIMC; with
// SA=0 MDIMA changes nothing in the kernel, with SB=0 NDIMB nothing).
const XGEMM_CONSTRAINTS: &[Constraint] = &[
    Constraint {
        message: "KWG must be a multiple of KWI (the loop over k in a tile is unrolled by KWI)",
        involves: &["KWG", "KWI"],
        holds: |c| c.get("KWI") > 0 && c.get("KWG") % c.get("KWI") == 0,
    },
    Constraint {
        message: "MWG must be a multiple of MDIMC*VWM (each work-item owns MWI = MWG/MDIMC elements along M, in VWM-wide vectors)",
        involves: &["MWG", "MDIMC", "VWM"],
        holds: |c| multiple(c, "MWG", "MDIMC", "VWM"),
    },
    Constraint {
        message: "NWG must be a multiple of NDIMC*VWN (each work-item owns NWI = NWG/NDIMC elements along N, in VWN-wide vectors)",
        involves: &["NWG", "NDIMC", "VWN"],
        holds: |c| multiple(c, "NWG", "NDIMC", "VWN"),
    },
    Constraint {
        message: "MWG must be a multiple of MDIMA*VWM (each work-item loads MWG/MDIMA elements of the A tile along M, in VWM-wide vectors)",
        involves: &["MWG", "MDIMA", "VWM"],
        holds: |c| multiple(c, "MWG", "MDIMA", "VWM"),
    },
    Constraint {
        message: "NWG must be a multiple of NDIMB*VWN (each work-item loads NWG/NDIMB elements of the B tile along N, in VWN-wide vectors)",
        involves: &["NWG", "NDIMB", "VWN"],
        holds: |c| multiple(c, "NWG", "NDIMB", "VWN"),
    },
    Constraint {
        message: "KWG must be a multiple of KDIMA = (MDIMC*NDIMC)/MDIMA (the work-group loads the A tile as MDIMA x KDIMA work-items)",
        involves: &["KWG", "MDIMC", "NDIMC", "MDIMA"],
        holds: |c| k_rows_fit(c, "MDIMA"),
    },
    Constraint {
        message: "KWG must be a multiple of KDIMB = (MDIMC*NDIMC)/NDIMB (the work-group loads the B tile as NDIMB x KDIMB work-items)",
        involves: &["KWG", "MDIMC", "NDIMC", "NDIMB"],
        holds: |c| k_rows_fit(c, "NDIMB"),
    },
    Constraint {
        message: "the MDIMC x NDIMC work-group must not exceed 1024 work-items",
        involves: &["MDIMC", "NDIMC"],
        holds: |c| c.get("MDIMC") * c.get("NDIMC") <= MAX_GROUP,
    },
    Constraint {
        message: "the local tiles ((SA*KWG*MWG + SB*KWG*NWG) reals of 4 bytes, 8 with PRECISION=64) must fit in 48 KiB of local memory",
        involves: &["SA", "SB", "KWG", "MWG", "NWG", "PRECISION"],
        holds: |c| xgemm_local(c) <= LOCAL_LIMIT,
    },
];

/// CLBlast puts reqd_work_group_size(MDIMC, NDIMC, 1) on the kernel (off only in
/// its RELAX_WORKGROUP_SIZE build) and restrict on A and B: both on as published.
const SW_XGEMM: &[SwitchUse] = &[SwitchUse::on(USE_BOUNDS), SwitchUse::on(USE_RESTRICT)];

/// CLBlast's kernels in the registry, in order.
pub const KERNELS: &[KernelSpec] = &[XGEMM, super::clblast_direct::XGEMM_DIRECT];

pub const XGEMM: KernelSpec = KernelSpec {
    id: "xgemm",
    entry: "Xgemm",
    family: Family::Clblast,
    title: "CLBlast xgemm (indirect)",
    idea: "CLBlast's tunable GEMM on padded operands with B transposed: MWG x NWG x KWG work-group tiles, \
           MWI x NWI register tiles of VWM-wide vectors, A and/or B staged in local memory (SA, SB), \
           contiguous or strided per-work-item access (STRM, STRN), the k loop unrolled by KWI",
    sources: &[(OpenClC, include_str!("../../../kernels-cl/xgemm.cl")), (CudaCpp, include_str!("../../../kernels-cu/xgemm.cu"))],
    params: &[
        P_MWG, P_NWG, P_KWG, P_MDIMC, P_NDIMC, P_MDIMA, P_NDIMB, P_KWI, P_VWM, P_VWN, P_STRM,
        P_STRN, P_SA, P_SB,
    ],
    constraints: XGEMM_CONSTRAINTS,
    local_bytes: xgemm_local,
    launch: Launch {
        local: |c| (c.u("MDIMC"), c.u("NDIMC")),
        per_item: |c| {
            (
                c.u("MWG") / c.u("MDIMC").max(1),
                c.u("NWG") / c.u("NDIMC").max(1),
            )
        },
    },
    operands: Operands {
        b_transposed: true,
        tile: |c| (c.u("MWG"), c.u("NWG"), c.u("KWG")),
    },
    switches: SW_XGEMM,
    abi: Abi::Indirect,
    precisions: &[Precision::F32, Precision::F64],
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn with(k: &KernelSpec, defines: &[(&str, i64)]) -> crate::error::Result<Config> {
        let d: Vec<(String, i64)> = defines.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        k.config(&d)
    }

    #[test]
    fn defaults_validate_in_both_precisions() {
        let k = &XGEMM;
        let c = k.defaults();
        assert_eq!(c.get(PRECISION), 32);
        k.validate(&c).unwrap();
        let c64 = k.with_precision(&c, Precision::F64).unwrap();
        k.validate(&c64).unwrap();
        // CLBlast's double-precision default entry is valid too.
        let mut f64_defaults: Vec<(&str, i64)> = XGEMM_F64_DEFAULTS.to_vec();
        f64_defaults.push((PRECISION, 64));
        let c = with(k, &f64_defaults).unwrap();
        assert_eq!(k.precision_of(&c), Precision::F64);
        assert_eq!(XGEMM_F64_DEFAULTS.len(), k.params.len());
    }

    #[test]
    fn geometry_tile_and_local_memory_at_the_defaults() {
        let k = &XGEMM;
        let c = k.defaults();
        assert_eq!(k.tile(&c), (32, 32, 32));
        assert_eq!(k.threads_per_group(&c), 8 * 16);
        // global = (M*MDIMC/MWG, N*NDIMC/NWG)
        let g = k.geometry(&c, 128, 192);
        assert_eq!((g.local[0], g.local[1]), (8, 16));
        assert_eq!((g.global[0], g.global[1]), (128 * 8 / 32, 192 * 16 / 32));
        // 32*32 + 32*32 floats
        assert_eq!((k.local_bytes)(&c), 8192);
    }

    #[test]
    fn local_memory_doubles_with_precision_64() {
        let k = &XGEMM;
        let c32 = k.defaults();
        let c64 = k.with_precision(&c32, Precision::F64).unwrap();
        assert_eq!((k.local_bytes)(&c64), 2 * (k.local_bytes)(&c32));
        // Two 32 x 128 tiles: 32 KiB in f32 (fits), 64 KiB in f64 (does not).
        let big = [
            ("MWG", 128),
            ("NWG", 128),
            ("KWG", 32),
            ("MDIMC", 16),
            ("NDIMC", 16),
            ("MDIMA", 16),
            ("NDIMB", 16),
            ("VWM", 4),
            ("VWN", 4),
        ];
        assert!(with(k, &big).is_ok());
        let mut big64 = big.to_vec();
        big64.push((PRECISION, 64));
        let e = with(k, &big64).unwrap_err().to_string();
        assert!(
            e.contains("48 KiB") && e.contains("PRECISION=64") && e.contains("KWG=32"),
            "{e}"
        );
        // Without local memory the same tiles are fine in f64.
        big64.extend([("SA", 0), ("SB", 0)]);
        assert!(with(k, &big64).is_ok());
    }

    #[test]
    fn violated_constraints_name_their_parameters() {
        let k = &XGEMM;
        // MWG=32 with MDIMC=16 and VWM=4: MWI = 2 is not a whole number of vectors.
        let e = with(k, &[("MDIMC", 16), ("MDIMA", 16)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("MDIMC*VWM")
                && e.contains("MWG=32")
                && e.contains("MDIMC=16")
                && e.contains("VWM=4"),
            "{e}"
        );
        // The B-tile load shape along K: KWG % KDIMB, KDIMB = 8*16/8 = 16 > KWG = 8
        // (while KDIMA = 8*16/16 = 8 divides it).
        let e = with(k, &[("MWG", 64), ("MDIMA", 16), ("NDIMB", 8), ("KWG", 8)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("KDIMB") && e.contains("NDIMB=8") && e.contains("KWG=8"),
            "{e}"
        );
        // The A-tile load shape: MWG % (MDIMA*VWM).
        let e = with(k, &[("MDIMA", 16)]).unwrap_err().to_string();
        assert!(e.contains("MDIMA*VWM") && e.contains("MDIMA=16"), "{e}");
        // The B side: NWG % (NDIMC*VWN).
        let e = with(k, &[("VWN", 4)]).unwrap_err().to_string();
        assert!(e.contains("NDIMC*VWN") && e.contains("VWN=4"), "{e}");
        // KWG % KWI and the 1024-item work-group cannot fail within the allowed
        // values (powers of two, MDIMC, NDIMC <= 32): check them directly.
        let holds = |needle: &str, defines: &[(&str, i64)]| {
            let mut c = k.defaults();
            for (n, v) in defines {
                c.0.insert(n.to_string(), *v);
            }
            let rule = k
                .constraints
                .iter()
                .find(|r| r.message.contains(needle))
                .unwrap();
            (rule.holds)(&c)
        };
        assert!(!holds("multiple of KWI", &[("KWG", 32), ("KWI", 3)]));
        assert!(holds("multiple of KWI", &[("KWG", 32), ("KWI", 8)]));
        assert!(!holds("1024", &[("MDIMC", 64), ("NDIMC", 32)]));
        assert!(holds("1024", &[("MDIMC", 32), ("NDIMC", 32)]));
        // Disallowed values say what is allowed.
        let e = with(k, &[("VWM", 3)]).unwrap_err().to_string();
        assert!(e.contains("VWM") && e.contains("[1, 2, 4, 8]"), "{e}");
        // MDIMA != MDIMC is allowed (CLBlast's tuner variation 2 and database have it).
        assert!(with(k, &[("MWG", 64), ("MDIMA", 16)]).is_ok());
    }

    /// `#ifndef NAME` / `#define NAME VALUE` pairs of a source.
    fn declared(src: &str) -> BTreeMap<String, i64> {
        let lines: Vec<&str> = src.lines().map(str::trim).collect();
        lines
            .windows(2)
            .filter_map(|w| {
                let name = w[0].strip_prefix("#ifndef ")?.trim();
                let mut rest = w[1].strip_prefix("#define ")?.split_whitespace();
                (rest.next()? == name).then_some(())?;
                Some((name.to_string(), rest.next()?.parse().ok()?))
            })
            .collect()
    }

    #[test]
    fn both_sources_declare_the_registry_defaults() {
        let k = &XGEMM;
        let mut want: BTreeMap<String, i64> = k.defaults().0.into_iter().collect();
        for s in k.switches {
            want.insert(s.name().to_string(), 1);
        }
        assert_eq!(
            declared(k.source_in(OpenClC).unwrap_or_default()),
            want,
            "OpenCL"
        );
        assert_eq!(
            declared(k.source_in(CudaCpp).unwrap_or_default()),
            want,
            "CUDA"
        );
        for (_, src) in k.sources {
            assert!(
                src.contains("void Xgemm(const int kSizeM, const int kSizeN, const int kSizeK,")
            );
            assert!(src.contains("GEMMLAB_BOUNDS(MDIMC, NDIMC)"));
        }
    }
}
