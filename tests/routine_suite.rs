//! The GEMM routine across shapes (PoCL here and in CI): `tune --suite` writes a
//! choice per call; `gemm --suite` runs every call with the kernel its class,
//! layout and transposes select, checked; a call outside the suite takes the
//! nearest entry and says so; a database of another device is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use gemmlab::gemm::check::check_widened;
use gemmlab::gemm::data::C_GAP;
use gemmlab::gemm::driver::{read_c, Session};
use gemmlab::gemm::problem::{Matrix, Problem};
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin as kernels;
use gemmlab::results::bests::{Database, RoutineEntry};
use gemmlab::routine::shape::ShapeClass;
use gemmlab::routine::{upload_operand, Gemm};
use gemmlab::Backend;
use gemmlab::{Precision, Toolchain};

fn gemmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `gemmlab gemm -v` on the OpenCL test device at `sizes` with the database `db`.
fn gemm_verbose(sizes: &str, db: &str, reps: &str, extra: &[&str]) -> Output {
    let dev = device();
    let mut args = vec![
        "gemm",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--sizes",
        sizes,
        "--db",
        db,
        "--reps",
        reps,
        "-vv",
    ];
    args.extend_from_slice(extra);
    gemmlab(&args)
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemmlab-routine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn device() -> String {
    std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into())
}

/// The OpenCL test device's name as gemmlab names it, from a child process (a
/// process that opened OpenCL passes a rewritten OCL_ICD_FILENAMES to its children).
fn device_name() -> String {
    let o = gemmlab(&[
        "gemm",
        "--device",
        &device(),
        "--backends",
        "opencl",
        "--sizes",
        "8",
        "--reps",
        "1",
    ]);
    let t = text(&o);
    t.lines()
        .find_map(|l| {
            l.split_once(" via opencl (")
                .map(|(name, _)| name.to_string())
        })
        .unwrap_or_else(|| panic!("no device line: {t}"))
}

#[test]
fn a_tuned_suite_is_what_the_routine_runs() {
    let d = dir("tuned");
    let suite = d.join("suite.txt");
    std::fs::write(&suite, "# two small calls\n80x72x64\n40x96x50 row TN\n").unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let (store, db, out) = (s(&d.join("store")), s(&d.join("db")), s(&d.join("out")));
    let dev = device();
    let o = gemmlab(&[
        "tune",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--suite",
        &s(&suite),
        "--max-configs",
        "2",
        "--top",
        "1",
        "--reps",
        "3",
        "--warmup",
        "1",
        "--store",
        &store,
        "--db",
        &db,
        "--out",
        &out,
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("== suite call 2/2 (line 3): 40x96x50 row TN [small], seeded from"),
        "{t}"
    );
    assert_eq!(t.matches("routine on opencl:").count(), 2, "{t}");
    // Each call's searches start from the model's picks for its shape, every family's.
    let seeds: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("  model seeds (tile MxNxK): "))
        .collect();
    assert_eq!(seeds.len(), 2, "{t}");
    for family in ["xgemmdirect ", "xgemm ", "simt "] {
        assert!(
            seeds.iter().all(|l| l.contains(family)),
            "{family}: {seeds:?}"
        );
    }
    let database = Database::load(Path::new(&db), &device_name()).unwrap();
    assert_eq!(database.routine.len(), 2, "{:?}", database.routine);
    let row_tn = database
        .routine
        .iter()
        .find(|e| e.call == "row TN")
        .expect("the row TN call");
    assert_eq!((row_tn.m, row_tn.n, row_tn.k), (40, 96, 50));
    assert!(row_tn.candidates.len() >= 3, "{:?}", row_tn.candidates);

    // gemm --suite runs each call with its own choice, checked, and writes its rows.
    let rows_dir = s(&d.join("rows"));
    let o = gemmlab(&[
        "gemm",
        "--device",
        &dev,
        "--backends",
        "opencl",
        "--suite",
        &s(&suite),
        "--db",
        &db,
        "--reps",
        "2",
        "-vv",
        "--out",
        &rows_dir,
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert_eq!(t.matches("tuned for this call").count(), 2, "{t}");
    let row = t
        .lines()
        .find(|l| l.trim_start().starts_with("40x96x50 row TN"))
        .unwrap_or_default();
    assert!(row.contains("small") && row.contains(&row_tn.kernel), "{t}");
    assert!(t.contains("2 tuned calls"), "{t}");
    let (_, records) = gemmlab::results::load_dir(Path::new(&rows_dir)).unwrap();
    assert_eq!(records.len(), 2, "{records:#?}");
    let tn = records
        .iter()
        .find(|r| r.problem.is_some_and(|p| p.trans_a.is_t()))
        .expect("the TN call's row");
    assert_eq!(
        (tn.experiment.as_str(), tn.kernel.as_str()),
        ("routine", row_tn.kernel.as_str())
    );
    assert_eq!(tn.config, row_tn.config);
    assert!(
        tn.status.is_ok()
            && tn.time.is_some()
            && tn
                .label
                .as_deref()
                .is_some_and(|l| l.contains("tuned for this call"))
    );

    // The report's section on the routine: each call with its choice; no cuBLAS on PoCL.
    let rep = s(&d.join("report"));
    let o = gemmlab(&["report", "--from", &rows_dir, "--out", &rep, "--no-png"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = std::fs::read_to_string(Path::new(&rep).join("report.md")).unwrap();
    assert!(
        md.contains("## The routine against cuBLAS across shapes"),
        "{md}"
    );
    assert!(
        md.contains(&format!("| 40x96x50 row TN | small | {} |", row_tn.kernel)),
        "{md}"
    );
    assert!(md.contains("No cuBLAS times in these runs"), "{md}");
    // A small call is timed in batches of calls back to back (one device span a
    // sample, filling about 2 ms), and the section says so; --batch 1: one call a sample.
    let batch = |r: &gemmlab::results::Measurement| r.time.as_ref().map(|t| t.batch);
    assert!(batch(tn).is_some_and(|b| b > 1), "{tn:#?}");
    assert!(
        md.contains("a sample is a batch of calls back to back"),
        "{md}"
    );
    let single = s(&d.join("rows-single"));
    let o = gemm_verbose("40x96x50", &db, "2", &["--batch", "1", "--out", &single]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (_, records) = gemmlab::results::load_dir(Path::new(&single)).unwrap();
    assert!(records.iter().all(|r| batch(r) == Some(1)), "{records:#?}");

    // A call outside the suite takes the nearest entry of its class, and says so.
    let o = gemm_verbose("60x60x60", &db, "2", &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("nearest tuned shape of its class"), "{t}");

    // The same database as another device's file is refused.
    let mut other = database.clone();
    other.device = "Some Other GPU".into();
    let path = d.join("other.json");
    std::fs::write(&path, serde_json::to_string(&other).unwrap()).unwrap();
    let o = gemmlab(&["gemm", "--device", &dev, "--sizes", "64", "--db", &s(&path)]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("is the database of Some Other GPU, not of"),
        "{t}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// One call of every shape class (small enough for a CPU), each in every
/// transpose case and row-major.
fn class_calls() -> Vec<(ShapeClass, usize, usize, usize)> {
    vec![
        (ShapeClass::Small, 64, 64, 64),
        (ShapeClass::ThinM, 32, 2048, 2100),
        (ShapeClass::ThinN, 2048, 32, 2100),
        (ShapeClass::SmallK, 1100, 1100, 120),
        (ShapeClass::LongK, 200, 200, 4000),
        (ShapeClass::Square, 520, 520, 520),
    ]
}

/// The routine's choice of `kernel` at `config` for the OpenCL f32 column-major NN call m x n x k.
fn col_nn_entry(
    (m, n, k): (usize, usize, usize),
    kernel: &str,
    config: gemmlab::kernel::builtin::Config,
) -> RoutineEntry {
    RoutineEntry {
        toolchain: Toolchain::OpenCl,
        precision: Precision::F32,
        call: "col NN".into(),
        class: ShapeClass::of(m, n, k),
        m,
        n,
        k,
        emulated: false,
        kernel: kernel.into(),
        config,
        hints: Default::default(),
        routine_ns: 1.0,
        vendor_ns: None,
        candidates: vec![],
        compiler: None,
        gemmlab: "test".into(),
        tuned_utc: "now".into(),
    }
}

#[test]
fn every_class_and_blas_case_selects_a_kernel_that_runs() {
    let d = dir("classes");
    let name = device_name();
    // A database whose entries give each class another family, at its published
    // configuration (split-K for long K).
    let families = ["xgemmdirect", "xgemm", "simt", "simtdirect"];
    let mut db = Database::load(&d, &name).unwrap();
    let mut suite = String::new();
    for (i, (class, m, n, k)) in class_calls().into_iter().enumerate() {
        assert_eq!(ShapeClass::of(m, n, k), class);
        let kernel = families[i % families.len()];
        let spec = kernels::find(kernel).unwrap();
        let mut config = spec.defaults();
        if class == ShapeClass::LongK {
            config.0.insert("SPLITK".into(), 4);
        }
        db.set_routine(col_nn_entry((m, n, k), kernel, config));
        for case in ["col NN", "col NT", "col TN", "col TT", "row NN"] {
            suite.push_str(&format!("{m}x{n}x{k} {case}\n"));
        }
    }
    db.save(&d).unwrap();
    let path = d.join("suite.txt");
    std::fs::write(&path, suite).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let o = gemmlab(&[
        "gemm",
        "--device",
        &device(),
        "--backends",
        "opencl",
        "--suite",
        &s(&path),
        "--db",
        &s(&d),
        "--reps",
        "1",
        "-vv",
        // The rule of selection by class, layout and nearest shape, untimed.
        "--selection",
        "model",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for (i, (class, m, n, k)) in class_calls().into_iter().enumerate() {
        let want = format!("{m}x{n}x{k} col NN");
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with(&want))
            .unwrap_or_default();
        assert!(
            row.contains(class.as_str()) && row.contains(families[i % families.len()]),
            "{want}: {t}"
        );
    }
    assert_eq!(t.matches("tuned for this call").count(), 6, "{t}");
    assert_eq!(
        t.matches("nearest tuned shape of its class, another layout")
            .count(),
        24,
        "{t}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// An entry this build cannot run (its kernel changed: a parameter missing) is
/// passed over for the nearest one it can, not for the crossover's fallback.
#[test]
fn an_entry_that_no_longer_validates_gives_way_to_the_nearest_valid_one() {
    let d = dir("stale");
    let name = device_name();
    let mut db = Database::load(&d, &name).unwrap();
    let entry = |m: usize, kernel: &str, config| col_nn_entry((m, m, m), kernel, config);
    // A value the kernel no longer takes (a parameter missing from an entry takes
    // its default instead: the kernel the entry was measured with).
    let mut stale = kernels::find("simtdirect").unwrap().defaults();
    stale.0.insert("BM".into(), 7);
    db.set_routine(entry(600, "simtdirect", stale));
    db.set_routine(entry(
        520,
        "xgemm",
        kernels::find("xgemm").unwrap().defaults(),
    ));
    db.save(&d).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let o = gemm_verbose("600", &s(&d), "1", &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("xgemm") && t.contains("520x520x520"), "{t}");
    assert!(!t.contains("crossover at"), "{t}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_entry_compiles_its_kernel_with_its_switches() {
    let d = dir("hints");
    let name = device_name();
    let mut db = Database::load(&d, &name).unwrap();
    let simt = kernels::find("simt").unwrap();
    let mut e = col_nn_entry((200, 200, 200), "simt", simt.defaults());
    e.hints = gemmlab::kernel::builtin::Hints::default()
        .with_switch("VEC_LOADS", false)
        .with_switch("SMEM_PAD", false);
    db.set_routine(e.clone());
    db.save(&d).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let rows = s(&d.join("rows"));
    let o = gemm_verbose("200", &s(&d), "1", &["--out", &rows]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("published + SMEM_PAD=0, VEC_LOADS=0"), "{t}");
    let (_, records) = gemmlab::results::load_dir(Path::new(&rows)).unwrap();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert!(records[0].status.is_ok());
    assert_eq!(records[0].hints, e.hints);

    // A switch this compiler lacks is refused with the reason, not dropped.
    if !name.contains("NVIDIA") {
        e.hints = gemmlab::kernel::builtin::Hints::default().with_switch("ASYNC_COPY", true);
        db.set_routine(e);
        db.save(&d).unwrap();
        let o = gemm_verbose("200", &s(&d), "1", &[]);
        let t = text(&o);
        assert_ne!(o.status.code(), Some(0), "{t}");
        assert!(t.contains("ASYNC_COPY on"), "{t}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_routine_is_tuned_at_the_calls_precision_and_emulates_fp32_only_where_asked() {
    let suite = format!("{}/suites/routine.txt", env!("CARGO_MANIFEST_DIR"));
    let o = gemmlab(&[
        "tune",
        "--suite",
        &suite,
        "--kernels",
        "tc",
        "--precision",
        "f32",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--fp32-emulation"), "{}", text(&o));
    let args = [
        "tune",
        "--suite",
        &suite,
        "--kernels",
        "tc",
        "--precision",
        "f64",
    ];
    let o = gemmlab(&[&args[..], &["--switches", "PROMOTE_ACC"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("below the call's precision"),
        "{}",
        text(&o)
    );
}

/// A call no entry was tuned for (by default, `--selection measure`): its first
/// run times the nearest entry and the others the model ranks, keeps the fastest
/// for the call, and the result is checked like every call; `--selection nearest`
/// times nothing.
#[test]
fn a_call_no_entry_was_tuned_for_is_timed_on_its_first_run() {
    let d = dir("measure");
    let name = device_name();
    let mut db = Database::load(&d, &name).unwrap();
    for (shape, kernel) in [
        ((128, 128, 128), "xgemmdirect"),
        ((256, 256, 256), "simt"),
        ((160, 160, 160), "simtdirect"),
    ] {
        let spec = kernels::find(kernel).unwrap();
        db.set_routine(col_nn_entry(shape, kernel, spec.defaults()));
    }
    db.save(&d).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let rows = s(&d.join("rows"));
    let o = gemm_verbose("200x96x700", &s(&d), "2", &["--out", &rows]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("timed on the call's first run"), "{t}");
    let (_, records) = gemmlab::results::load_dir(Path::new(&rows)).unwrap();
    let routine: Vec<_> = records
        .iter()
        .filter(|r| r.experiment == "routine")
        .collect();
    assert_eq!(routine.len(), 1, "{records:#?}");
    assert!(routine[0].status.is_ok());
    let why = routine[0].label.clone().unwrap_or_default();
    assert!(why.contains("fastest of"), "{why}");
    let o = gemm_verbose("200x96x700", &s(&d), "1", &["--selection", "nearest"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(!t.contains("timed on the call's first run"), "{t}");
    assert!(t.contains("nearest tuned shape"), "{t}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A thin call no entry was tuned for: the choices its first run times include
/// the entries' kernels re-tiled for it by the cost model (a 24-row call in 128 x
/// 128 tiles leaves four fifths of each empty), and each of them computes the call
/// right (in process, each forced in turn, against the f64 reference).
#[test]
fn a_thin_call_not_tuned_also_times_its_entries_re_tiled() {
    let backend = common::opencl();
    let device = backend.info().clone();
    let d = dir("retiled");
    let mut db = Database::load(&d, &device.name).unwrap();
    for (shape, kernel) in [((256, 256, 256), "simt"), ((192, 192, 192), "simtdirect")] {
        let spec = kernels::find(kernel).unwrap();
        db.set_routine(col_nn_entry(shape, kernel, spec.defaults()));
    }
    let mut g = Gemm::tuned(&db, Toolchain::OpenCl).unwrap();
    g.device = Some(device);
    let p = Problem::plain(24, 600, 300);
    let (_, others) = g.choices(&p).unwrap();
    let retiled: Vec<_> = (others.iter())
        .filter(|c| c.why.contains("re-tiled for the call by the cost model"))
        .collect();
    assert!(!retiled.is_empty(), "{others:#?}");
    let mut session = Session::new(backend);
    for (i, c) in retiled.iter().enumerate() {
        let (bm, _, _) = c.kernel.tile(&c.config);
        assert!(bm < 128, "{}", c.config.describe());
        g.force_choice = Some((c.kernel.id.into(), c.config.clone(), c.hints.clone()));
        let ops = Operands::for_problem(p, 7 + i as u64);
        let reference = Reference::cpu(&ops);
        let [a, b, cm] = [
            (Matrix::A, f32::NAN),
            (Matrix::B, f32::NAN),
            (Matrix::C, C_GAP),
        ]
        .map(|(m, fill)| upload_operand(&session, &ops, m, fill).unwrap());
        g.run(&mut session, &p, a, b, cm).unwrap();
        let (logical, gap) = read_c(&session, cm, &p).unwrap();
        assert!(gap.is_none(), "C's buffer changed outside the matrix");
        let report = check_widened(p.m, &logical, &reference, p.precision);
        assert!(
            report.passed,
            "{}: {}",
            c.config.describe(),
            report.summary()
        );
        let mut be = session.backend.borrow_mut();
        for x in [a, b, cm] {
            be.free(x);
        }
    }
    g.release(&session);
    let _ = std::fs::remove_dir_all(&d);
}
