//! The "Your kernels" findings on the committed H200 spec runs: typed findings,
//! no words. A configuration names what its hints change of the kernel's
//! defaults, since a search's or a sweep's points may differ in those alone.

use std::path::PathBuf;

use gemmlab::analysis::user::{analyse, Kind};
use gemmlab::analysis::{data, Kind as AnyKind};
use gemmlab::backend::Toolchain;

fn specs() -> data::Data {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    data::load(&[root.join("results/h200/specs")]).unwrap()
}

#[test]
fn a_fastest_configuration_names_its_register_cap() {
    let d = specs();
    let a = analyse(&d);
    let kinds: Vec<&Kind> = (a.findings.iter())
        .filter_map(|f| match &f.kind {
            AnyKind::User(k) => Some(k),
            _ => None,
        })
        .collect();
    // The reduction's fastest rows (tune's final round) ran under a cap of 32 on both toolchains.
    for t in [Toolchain::Cuda, Toolchain::OpenCl] {
        let fastest = kinds.iter().find_map(|k| match k {
            Kind::UserFastest(f) if f.kernel == "reduction" && f.toolchain == t => Some(f),
            _ => None,
        });
        let f = fastest.unwrap_or_else(|| panic!("no fastest reduction on {t}"));
        assert_eq!(
            f.config, "ITEMS=16 WG=1024 defaults + maxrregcount=32",
            "{t}"
        );
        let row = (d.all().map(|r| r.m))
            .filter(|m| m.kernel == "reduction" && m.toolchain == t && m.status.is_ok())
            .find(|m| {
                m.config.describe() == "ITEMS=16 WG=1024" && m.hints.max_registers == Some(32)
            });
        assert!(row.is_some(), "{t}: the row the finding names");
    }
    // Tuning's best against compare's: the tuned side carries its cap, compare's has none.
    let tuning = kinds.iter().find_map(|k| match k {
        Kind::UserTuning(u) if u.kernel == "stencil" && u.toolchain == Toolchain::Cuda => Some(u),
        _ => None,
    });
    let u = tuning.expect("the stencil's tuning finding on CUDA");
    assert_eq!(
        u.tuned_config,
        "BX=32 BY=8 TILED=0 defaults + maxrregcount=168"
    );
    assert_eq!(u.plain_config, "BX=16 BY=16 TILED=1");
}
