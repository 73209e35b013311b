//! The tensor-core section's speed findings on the committed H200 results:
//! which of the family's kernels speaks for it in the summary.

use std::path::PathBuf;

use gemmlab::analysis::tc::{analyse, Kind};
use gemmlab::analysis::{data, Kind as AnyKind};
use gemmlab::backend::Toolchain;

/// (toolchain, arithmetic, ratio to cuBLAS, headline) of each speed finding.
fn speeds(dirs: &[&str]) -> Vec<(Toolchain, String, f64, bool)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let from: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    let d = data::load(&from).unwrap();
    let a = analyse(&d).expect("the family's rows");
    (a.findings.iter())
        .filter_map(|f| match &f.kind {
            AnyKind::Tc(Kind::TcSpeed(s)) => {
                Some((s.toolchain, s.arithmetic.clone(), s.ratio, f.headline))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn of_the_accurate_sgemms_a_toolchains_closest_to_cublas_is_the_headline() {
    // compare with every family at its published defaults: tc (mma.sync) and tcwg (wgmma).
    let s = speeds(&["results/h200/compare-all"]);
    for t in [Toolchain::Cuda, Toolchain::OpenCl] {
        let of: Vec<_> = s.iter().filter(|x| x.0 == t).collect();
        assert_eq!(of.len(), 2, "{s:?}");
        let heads: Vec<_> = of.iter().filter(|x| x.3).collect();
        assert_eq!(heads.len(), 1, "one headline on {t}: {s:?}");
        assert!(heads[0].1.contains("wgmma"), "{s:?}");
        assert!(of.iter().all(|x| x.2 <= heads[0].2), "{s:?}");
    }
}

#[test]
fn fp64_and_fp32_speak_apart() {
    // The tuned family: DGEMM and 3xTF32 SGEMM are each a headline of their own.
    let s = speeds(&["results/h200/tc/tuned-f32", "results/h200/tc/tuned-f64"]);
    for t in [Toolchain::Cuda, Toolchain::OpenCl] {
        let heads: Vec<&String> = (s.iter())
            .filter(|x| x.0 == t && x.3)
            .map(|x| &x.1)
            .collect();
        assert!(heads.iter().any(|a| a.starts_with("FP64")), "{s:?}");
        assert!(
            heads.iter().any(|a| a.ends_with("(FP32-accurate)")),
            "{s:?}"
        );
    }
}
