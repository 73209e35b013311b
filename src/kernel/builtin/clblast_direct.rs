//! Family 3, direct kernel: CLBlast's `xgemm_direct` (one kernel for any size,
//! offsets and leading dimensions; entries XgemmDirectNN/NT/TN/TT), column-major
//! C = alpha op(A) op(B) + beta C in f32 or f64.
//!
//! Parameters and their allowed values are CLBlast's tuner's (`xgemm_direct.hpp`,
//! its large variant 2), KWID widened to 1 and 4 (CLBlast's kernel file falls back
//! to KWID 1). The constraints are the tuner's, plus the work-group and local
//! memory limits. The defaults are CLBlast's database "default" entry for single
//! precision; its double-precision "default" entry is `F64_DEFAULTS`.

use super::Precision;
use super::{Abi, Config, Constraint, Family, KernelSpec, Launch, Operands, Param, PRECISION};
use crate::backend::Language::{CudaCpp, OpenClC};

const WGD_VALUES: &[i64] = &[8, 16, 32, 64];
const DIM_VALUES: &[i64] = &[8, 16, 32];
const KWID_VALUES: &[i64] = &[1, 2, 4, 8, 16];
const VW_VALUES: &[i64] = &[1, 2, 4, 8];
const PAD_VALUES: &[i64] = &[0, 1];

const PARAMS: &[Param] = &[
    Param {
        name: "WGD",
        default: 16,
        allowed: WGD_VALUES,
        meaning: "tile size in M, N and K: each work-group computes a WGD x WGD tile of C",
    },
    Param {
        name: "MDIMCD",
        default: 8,
        allowed: DIM_VALUES,
        meaning: "work-group size along M (each work-item computes WGD/MDIMCD rows)",
    },
    Param {
        name: "NDIMCD",
        default: 8,
        allowed: DIM_VALUES,
        meaning: "work-group size along N (each work-item computes WGD/NDIMCD columns)",
    },
    Param {
        name: "MDIMAD",
        default: 8,
        allowed: DIM_VALUES,
        meaning: "work-group re-shaped to MDIMAD x (MDIMCD*NDIMCD/MDIMAD) to load the A tile",
    },
    Param {
        name: "NDIMBD",
        default: 8,
        allowed: DIM_VALUES,
        meaning: "work-group re-shaped to NDIMBD x (MDIMCD*NDIMCD/NDIMBD) to load the B tile",
    },
    Param {
        name: "KWID",
        default: 2,
        allowed: KWID_VALUES,
        meaning: "unroll factor of the loop over k inside a tile",
    },
    Param {
        name: "VWMD",
        default: 1,
        allowed: VW_VALUES,
        meaning: "vector width of the A tile loads (full tiles, aligned a_ld and a_offset)",
    },
    Param {
        name: "VWND",
        default: 1,
        allowed: VW_VALUES,
        meaning: "vector width of the B tile loads (full tiles, aligned b_ld and b_offset)",
    },
    Param {
        name: "PADA",
        default: 1,
        allowed: PAD_VALUES,
        meaning: "padding of each row of the A tile in local memory",
    },
    Param {
        name: "PADB",
        default: 1,
        allowed: PAD_VALUES,
        meaning: "padding of each row of the B tile in local memory",
    },
];

/// CLBlast's database "default" entry for double precision (the registry's
/// defaults are the single-precision one): WGD 32, 16 x 8 work-items, A loaded
/// 16 wide, B 8 wide, KWID 2, VWMD 2, VWND 4, both tiles padded.
/// (For the driver or tuner to seed f64 runs; only the tests read it so far.)
#[allow(dead_code)]
pub const F64_DEFAULTS: &[(&str, i64)] = &[
    ("WGD", 32),
    ("MDIMCD", 16),
    ("NDIMCD", 8),
    ("MDIMAD", 16),
    ("NDIMBD", 8),
    ("KWID", 2),
    ("VWMD", 2),
    ("VWND", 4),
    ("PADA", 1),
    ("PADB", 1),
];

const MAX_GROUP: i64 = 1024;
/// Static local (shared) memory per work-group: NVIDIA caps it at 48 KiB in both toolchains.
const LOCAL_LIMIT: i64 = 48 * 1024;

/// Bytes of one `real`: 8 where the configuration's PRECISION is 64, else 4.
fn real_bytes(c: &Config) -> i64 {
    if c.get(PRECISION) == 64 {
        8
    } else {
        4
    }
}

/// The A tile, WGD x (WGD+PADA) reals, and the B tile, WGD x (WGD+PADB) reals.
fn local_bytes(c: &Config) -> i64 {
    let wgd = c.get("WGD");
    (wgd * (wgd + c.get("PADA")) + wgd * (wgd + c.get("PADB"))) * real_bytes(c)
}

/// `a` is a multiple of `b` (false where `b` is not positive).
fn multiple(a: i64, b: i64) -> bool {
    b > 0 && a % b == 0
}

fn kdimad(c: &Config) -> i64 {
    c.get("MDIMCD") * c.get("NDIMCD") / c.get("MDIMAD").max(1)
}

fn kdimbd(c: &Config) -> i64 {
    c.get("MDIMCD") * c.get("NDIMCD") / c.get("NDIMBD").max(1)
}

const CONSTRAINTS: &[Constraint] = &[
    Constraint {
        message: "WGD must be a multiple of KWID (the loop over a tile is unrolled KWID at a time)",
        involves: &["WGD", "KWID"],
        holds: |c| multiple(c.get("WGD"), c.get("KWID")),
    },
    Constraint {
        message: "WGD must be a multiple of MDIMCD*VWMD (whole rows per work-item)",
        involves: &["WGD", "MDIMCD", "VWMD"],
        holds: |c| multiple(c.get("WGD"), c.get("MDIMCD") * c.get("VWMD")),
    },
    Constraint {
        message: "WGD must be a multiple of NDIMCD*VWND (whole columns per work-item)",
        involves: &["WGD", "NDIMCD", "VWND"],
        holds: |c| multiple(c.get("WGD"), c.get("NDIMCD") * c.get("VWND")),
    },
    Constraint {
        message: "WGD must be a multiple of MDIMAD*VWMD (whole A vectors per loading work-item)",
        involves: &["WGD", "MDIMAD", "VWMD"],
        holds: |c| multiple(c.get("WGD"), c.get("MDIMAD") * c.get("VWMD")),
    },
    Constraint {
        message: "WGD must be a multiple of NDIMBD*VWND (whole B vectors per loading work-item)",
        involves: &["WGD", "NDIMBD", "VWND"],
        holds: |c| multiple(c.get("WGD"), c.get("NDIMBD") * c.get("VWND")),
    },
    Constraint {
        message: "MDIMCD*NDIMCD must be a multiple of MDIMAD and of NDIMBD (the work-group re-shapes exactly for the tile loads)",
        involves: &["MDIMCD", "NDIMCD", "MDIMAD", "NDIMBD"],
        holds: |c| {
            let t = c.get("MDIMCD") * c.get("NDIMCD");
            multiple(t, c.get("MDIMAD")) && multiple(t, c.get("NDIMBD"))
        },
    },
    Constraint {
        message: "WGD must be a multiple of KDIMAD = (MDIMCD*NDIMCD)/MDIMAD (whole A loads along K per work-item)",
        involves: &["WGD", "MDIMCD", "NDIMCD", "MDIMAD"],
        holds: |c| multiple(c.get("WGD"), kdimad(c)),
    },
    Constraint {
        message: "WGD must be a multiple of KDIMBD = (MDIMCD*NDIMCD)/NDIMBD (whole B loads along K per work-item)",
        involves: &["WGD", "MDIMCD", "NDIMCD", "NDIMBD"],
        holds: |c| multiple(c.get("WGD"), kdimbd(c)),
    },
    Constraint {
        message: "the MDIMCD x NDIMCD work-group must not exceed 1024 work-items",
        involves: &["MDIMCD", "NDIMCD"],
        holds: |c| c.get("MDIMCD") * c.get("NDIMCD") <= MAX_GROUP,
    },
    Constraint {
        message: "the local tiles ((WGD*(WGD+PADA) + WGD*(WGD+PADB)) reals, 4 bytes each in f32, 8 in f64) must fit in 48 KiB of local memory",
        involves: &["WGD", "PADA", "PADB", PRECISION],
        holds: |c| local_bytes(c) <= LOCAL_LIMIT,
    },
];

pub const XGEMM_DIRECT: KernelSpec = KernelSpec {
    id: "xgemmdirect",
    entry: "XgemmDirectNN",
    family: Family::Clblast,
    title: "CLBlast direct GEMM",
    idea: "one kernel for any size: WGD x WGD tiles of A and B staged in local memory (vector loads on full, aligned tiles; bounds-checked scalar loads on edge tiles), K remainder from global memory, alpha/beta applied in the kernel",
    sources: &[(OpenClC, include_str!("../../../kernels-cl/xgemm_direct.cl")), (CudaCpp, include_str!("../../../kernels-cu/xgemm_direct.cu"))],
    params: PARAMS,
    constraints: CONSTRAINTS,
    local_bytes,
    launch: Launch {
        local: |c| (c.u("MDIMCD"), c.u("NDIMCD")),
        per_item: |c| {
            (
                c.u("WGD") / c.u("MDIMCD").max(1),
                c.u("WGD") / c.u("NDIMCD").max(1),
            )
        },
    },
    // The grid is rounded up to WGD in M and N; the kernel handles incomplete
    // tiles itself, so sizes need not be multiples of anything.
    operands: Operands {
        b_transposed: false,
        tile: |c| (c.u("WGD"), c.u("WGD"), 1),
    },
    switches: &[],
    abi: Abi::Direct {
        entries: ["XgemmDirectNN", "XgemmDirectNT", "XgemmDirectTN", "XgemmDirectTT"],
    },
    precisions: &[Precision::F32, Precision::F64],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn with(defines: &[(&str, i64)]) -> Config {
        let mut c = XGEMM_DIRECT.defaults();
        for (k, v) in defines {
            c.0.insert((*k).to_string(), *v);
        }
        c
    }

    #[test]
    fn defaults_are_clblast_and_valid() {
        let c = XGEMM_DIRECT.defaults();
        XGEMM_DIRECT.validate(&c).unwrap();
        assert_eq!(c.get(PRECISION), 32);
        assert_eq!(c.get("WGD"), 16);
        assert_eq!(c.get("KWID"), 2);
        assert_eq!((XGEMM_DIRECT.launch.local)(&c), (8, 8));
        assert_eq!((XGEMM_DIRECT.launch.per_item)(&c), (2, 2));
        assert_eq!(XGEMM_DIRECT.tile(&c), (16, 16, 1));
        // 33 x 17 rounds up to 48 x 32: 3 x 2 work-groups of 8 x 8
        let g = XGEMM_DIRECT.geometry(&c, 48, 32);
        g.validate().unwrap();
        let f64_defaults = with(F64_DEFAULTS);
        let f64_defaults = XGEMM_DIRECT
            .with_precision(&f64_defaults, Precision::F64)
            .unwrap();
        XGEMM_DIRECT.validate(&f64_defaults).unwrap();
    }

    #[test]
    fn entries_are_the_four_transpose_cases() {
        match XGEMM_DIRECT.abi {
            Abi::Direct { entries } => {
                assert_eq!(entries[0], XGEMM_DIRECT.entry);
                for e in entries {
                    assert!(
                        XGEMM_DIRECT
                            .source_in(OpenClC)
                            .unwrap_or_default()
                            .contains(&format!("void {e}(")),
                        "{e}"
                    );
                    assert!(
                        XGEMM_DIRECT
                            .source_in(CudaCpp)
                            .unwrap_or_default()
                            .contains(&format!("void {e}(")),
                        "{e}"
                    );
                }
            }
            _ => panic!("xgemmdirect must have the Direct ABI"),
        }
    }

    #[test]
    fn source_defaults_match_the_registry() {
        for p in PARAMS {
            let line = format!("#define {} {}\n", p.name, p.default);
            assert!(
                XGEMM_DIRECT
                    .source_in(OpenClC)
                    .unwrap_or_default()
                    .contains(&line),
                "OpenCL: {line}"
            );
            assert!(
                XGEMM_DIRECT
                    .source_in(CudaCpp)
                    .unwrap_or_default()
                    .contains(&line),
                "CUDA: {line}"
            );
        }
    }

    #[test]
    fn violated_constraints_name_their_parameters() {
        let e = XGEMM_DIRECT
            .config(&[("WGD".into(), 8), ("KWID".into(), 16)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("KWID") && e.contains("WGD=8") && e.contains("KWID=16"),
            "{e}"
        );
        let e = XGEMM_DIRECT
            .config(&[("VWMD".into(), 4)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("MDIMCD*VWMD") && e.contains("WGD=16") && e.contains("VWMD=4"),
            "{e}"
        );
        let e = XGEMM_DIRECT
            .config(&[("WGD".into(), 8), ("MDIMCD".into(), 16)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("MDIMCD=16"), "{e}");
        // KDIMAD = 16*16/8 = 32 does not divide WGD = 16
        let e = XGEMM_DIRECT
            .config(&[
                ("WGD".into(), 16),
                ("MDIMCD".into(), 16),
                ("NDIMCD".into(), 16),
            ])
            .unwrap_err()
            .to_string();
        assert!(e.contains("KDIMAD") && e.contains("MDIMAD=8"), "{e}");
        let e = XGEMM_DIRECT
            .config(&[("VWND".into(), 3)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("VWND") && e.contains("VWND=3"), "{e}");
    }

    #[test]
    fn local_memory_doubles_with_precision_64() {
        let c = with(&[("WGD", 64), ("PADA", 0), ("PADB", 0)]);
        assert_eq!(local_bytes(&c), 2 * 64 * 64 * 4);
        XGEMM_DIRECT.validate(&c).unwrap();
        let c64 = XGEMM_DIRECT.with_precision(&c, Precision::F64).unwrap();
        assert_eq!((XGEMM_DIRECT.local_bytes)(&c64), 2 * 64 * 64 * 8);
        let e = XGEMM_DIRECT.validate(&c64).unwrap_err().to_string();
        assert!(
            e.contains("48 KiB") && e.contains("PRECISION=64") && e.contains("WGD=64"),
            "{e}"
        );
        let d = XGEMM_DIRECT.defaults();
        assert_eq!(local_bytes(&d), (16 * 17 * 2) * 4);
        let d64 = XGEMM_DIRECT.with_precision(&d, Precision::F64).unwrap();
        assert_eq!(local_bytes(&d64), 2 * local_bytes(&d));
    }
}
