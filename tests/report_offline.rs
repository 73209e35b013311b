//! The offline sections' analysis (`gemmlab::analysis::offline`): compilers
//! read from rows, the SM's register limits, and the typed findings of the
//! atlas and the Kepler answers, from the real offline fixture
//! (tests/fixtures/offline: the atlas and the sm_35 sweeps, nothing run).

use std::path::PathBuf;

use gemmlab::analysis::data::{self, Data};
use gemmlab::analysis::offline::{self, atlas, kepler, Compiler, Kind};
use gemmlab::analysis::{self as an, Finding, Topic};
use gemmlab::backend::Toolchain;
use gemmlab::gemm::driver::Status;

const OFFLINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/offline");

fn fixture(dirs: &[&str]) -> Data {
    let from: Vec<PathBuf> = dirs
        .iter()
        .map(|d| PathBuf::from(OFFLINE).join(d))
        .collect();
    data::load(&from).unwrap()
}

fn kind(f: &Finding) -> &Kind {
    match &f.kind {
        an::Kind::Offline(k) => k,
        other => panic!("not an offline finding: {other:?}"),
    }
}

#[test]
fn register_limits_of_compute_capability_3_5() {
    let l = data::limits_of("sm_35").unwrap();
    // The tutorial's numbers: two 256-thread work-groups need at most 128 registers.
    assert_eq!(
        gemmlab::occupancy::registers_for_blocks(&l, 256, 2),
        Some(128)
    );
    assert_eq!(
        gemmlab::occupancy::registers_for_blocks(&l, 256, 1),
        Some(255)
    );
    // 3 x 8 warps x ceil(r * 32 / 256) * 256 <= 65536: r = 80 fits, 88 does not.
    let three = gemmlab::occupancy::registers_for_blocks(&l, 256, 3).unwrap();
    assert!((80..88).contains(&three), "{three}");
    assert_eq!(data::compute_capability("sm_120"), Some((12, 0)));
    assert_eq!(data::compute_capability("sm_90a"), Some((9, 0)));
    assert_eq!(data::compute_capability("gfx90a"), None);
}

#[test]
fn compilers_are_read_from_labels_or_notes() {
    let mut m = gemmlab::experiment::failed_row(
        "atlas",
        "sm_35 (no device)",
        "offline:sm_35",
        Toolchain::OpenCl,
        "gemm6",
        Status::Unavailable(
            "no device: NVIDIA OpenCL's PTX assembled offline for sm_35 by ptxas 11.8; not run"
                .into(),
        ),
        (0, 0, 0),
    );
    m.compiler = Some("NVIDIA OpenCL PTX + ptxas 11.8".into());
    let c = Compiler::of(&m).unwrap();
    assert_eq!(c.name, "OpenCL PTX + ptxas 11.8");
    assert!(c.opencl);
    assert_eq!(c.release(), Some((11, 8)));
    m.compiler = None;
    assert_eq!(Compiler::of(&m).unwrap().name, "OpenCL PTX + ptxas 11.8");
    m.toolchain = Toolchain::Cuda;
    m.status = Status::Unavailable(
        "no device: compiled offline for sm_35 with NVRTC 12.9; not run, checked or timed".into(),
    );
    let c = Compiler::of(&m).unwrap();
    assert_eq!(c.name, "NVRTC 12.9");
    assert!(!c.is_kepler_nvrtc());
    m.compiler = Some("NVRTC 11.8".into());
    assert!(Compiler::of(&m).unwrap().is_kepler_nvrtc());
    m.status = Status::Unavailable("no reason that names one".into());
    m.compiler = None;
    assert!(Compiler::of(&m).is_none());
}

#[test]
fn the_kepler_answers_as_typed_findings() {
    let d = fixture(&[
        "atlas",
        "sweep-registers-sm_35",
        "sweep-hints-sm_35",
        "sweep-tiling-sm_35",
    ]);
    let k = kepler::analyse(&d).unwrap();
    let fs = k.findings();
    assert_eq!(fs.len(), 4);
    assert!(fs.iter().all(|f| f.topic == Topic::Kepler));

    // (i) Kernel 6 from the atlas, against 73 and the two-work-group limit.
    let Kind::Kernel6(k6) = kind(&fs[0]) else {
        panic!("{:?}", fs[0]);
    };
    assert_eq!(
        (k6.registers, k6.lower_bound, k6.source.as_str()),
        (126, 73, "atlas")
    );
    assert_eq!(
        k6.others,
        [(126, "registers".to_string()), (126, "hints".to_string())]
    );
    let fit = k6.fit.as_ref().unwrap();
    assert_eq!(
        (fit.threads, fit.two, fit.three),
        (256, Some(128), Some(80))
    );
    assert!(!fit.third_shared_fits);
    assert_eq!(fit.occupancy.unwrap().0.fraction, 0.25);
    assert!((fs[0].weight - 53.0 / 73.0).abs() < 1e-12 && fs[0].headline);

    // (ii) VOLATILE_IDX=1: 126 -> 115, and the other kernels that have the switch.
    let Kind::Volatile(v) = kind(&fs[1]) else {
        panic!("{:?}", fs[1]);
    };
    assert_eq!((v.before, v.after, v.spills), (126, 115, Some(0)));
    assert!(
        v.others.contains(&("gemm9".to_string(), 128, 94)),
        "{:?}",
        v.others
    );
    let rows = k.volatile_rows.as_ref().unwrap();
    assert!(rows.iter().any(
        |(m, change, _)| m.hints.switches.get("VOLATILE_IDX") == Some(&true)
            && *change == Some(-11)
    ));

    // (iii) A cap of 127, where spills start, caps above the uncapped count.
    let Kind::Caps(caps) = kind(&fs[2]) else {
        panic!("{:?}", fs[2]);
    };
    let at = caps.at.as_ref().unwrap();
    assert_eq!(
        (caps.cap, at.registers, at.uncapped, at.spills),
        (127, Some(124), Some(126), Some(0))
    );
    assert_eq!(caps.first_spill, Some((96, 168, Some(96))));
    assert_eq!(at.moved, [(255, 168), (168, 165), (127, 124)]);
    assert_eq!(k.caps.len(), 11, "every cap of the sweep, uncapped first");
    assert_eq!(k.caps[0].0, None);
    assert_eq!(fs[2].weight, 0.0, "no spills at 127");

    // (iv) Kernel 11's tiles, and OpenCL's 8x4 from the atlas.
    let Kind::Tiles(t) = kind(&fs[3]) else {
        panic!("{:?}", fs[3]);
    };
    assert_eq!((t.wide.registers, t.square.registers), (Some(76), Some(62)));
    assert_eq!(t.wide.occupancy.unwrap().0.fraction, 0.375);
    let (name, o) = t.opencl.as_ref().unwrap();
    assert_eq!(
        (name.as_str(), o.registers),
        ("OpenCL PTX + ptxas 11.8", Some(76))
    );
}

#[test]
fn the_atlas_as_typed_findings() {
    let d = fixture(&["atlas"]);
    let a = atlas::analyse(&d).unwrap();
    assert_eq!(
        (a.rows, a.lost, a.archs.len(), a.compilers.len()),
        (150, 0, 14, 5)
    );
    assert_eq!(a.kernels, ["gemm6", "gemm9", "gemm11"]);
    let kinds: Vec<&Kind> = a.findings.iter().map(kind).collect();
    // One per kernel (details with their chart), then the roll-ups.
    assert_eq!(kinds.len(), 3 + 4);
    assert!(a.findings[..3].iter().all(|f| !f.headline));
    assert_eq!(a.findings[0].chart.as_deref(), Some("offline-gemm6"));
    let Kind::KernelAcross {
        kernel,
        compilers,
        spills,
    } = kinds[0]
    else {
        panic!("{:?}", kinds[0]);
    };
    assert_eq!((kernel.as_str(), compilers.len()), ("gemm6", 5));
    assert_eq!(compilers[0].first, ("sm_35".to_string(), 126));
    assert!(spills.is_empty());
    let Kind::Generations {
        largest: Some(c), ..
    } = kinds[3]
    else {
        panic!("{:?}", kinds[3]);
    };
    assert_eq!(
        (
            c.kernel.as_str(),
            c.arch.as_str(),
            c.from_registers,
            c.to_registers
        ),
        ("gemm6", "sm_100", 128, 96)
    );
    assert_eq!(
        (c.from.as_str(), c.to.as_str()),
        ("NVRTC 12.9", "NVRTC 13.5")
    );
    assert_eq!(a.findings[3].weight, 0.25);
    assert!(matches!(kinds[4], Kind::ArchSpread { .. }));
    assert!(matches!(kinds[5], Kind::FrontEnd { .. }));
    let Kind::Spills {
        with_report,
        spilling,
        worst,
        ..
    } = kinds[6]
    else {
        panic!("{:?}", kinds[6]);
    };
    assert_eq!((*with_report, spilling.len(), *worst), (150, 0, None));
    assert_eq!(a.findings[6].chart.as_deref(), Some("offline-overview"));
}

#[test]
fn a_refused_row_is_a_finding_and_missing_sweeps_are_none() {
    let mut d = fixture(&["atlas", "sweep-tiling-sm_35"]);
    let mut refused = 0;
    for m in d
        .runs
        .iter_mut()
        .flat_map(|r| r.measurements.iter_mut())
        .filter(|m| {
            m.kernel == "gemm9"
                && data::arch_of(m).as_deref() == Some("sm_50")
                && m.compiler.as_deref() == Some("NVIDIA OpenCL PTX + ptxas 11.8")
        })
    {
        m.status = Status::CompileError("ptxas fatal: made up\nmore".into());
        m.resources = None;
        refused += 1;
    }
    assert_eq!(refused, 1);
    let a = atlas::analyse(&d).unwrap();
    let Some(Kind::Refused { refused, of, by }) = a.findings.last().map(kind) else {
        panic!("{:?}", a.findings.last());
    };
    assert_eq!((*refused, *of), (1, 150));
    assert_eq!((by[0].built, by[0].total), (35, 36));
    assert_eq!(
        (by[0].arch.as_str(), by[0].archs.clone()),
        ("sm_50", vec!["sm_50".to_string()])
    );
    assert_eq!(by[0].reason.as_deref(), Some("ptxas fatal: made up\nmore"));

    // Only the tiling sweep besides the atlas: no hints or caps, the tiles still answer.
    let k = kepler::analyse(&d).unwrap();
    assert!(k.volatile_rows.is_none() && !k.hints_swept && k.volatile.is_none());
    assert!(k.caps.is_empty() && k.caps_finding.is_none());
    assert!(k.kernel6.is_some() && k.tiles_finding.is_some());
    assert!(offline::sweeps(&d).unwrap().groups.len() == 1);

    // Without offline rows, no section at all.
    let device = data::load(&[PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/report/compare"
    ))])
    .unwrap();
    assert!(atlas::analyse(&device).is_none() && kepler::analyse(&device).is_none());
    assert!(offline::sweeps(&device).is_none());
}
