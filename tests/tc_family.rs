//! The tensor-core family ("tc") where no tensor core is: nothing here needs a GPU.
//! - On PoCL `gemmlab compare` gives tc an "n/a" row with the reason, writes the
//!   measurement as unavailable, and exits 0, in f32 and f64.
//! - `unavailable_at` on made-up devices: the compute capability each mma shape
//!   needs (sm_80; sm_90 for the m16n8 f64 shapes), and no device that is not NVIDIA's.
//! - The staging plan (`gemm::stage::plan`) for every BLAS case: padded sizes that
//!   are multiples of the tc tile, A column-major M x K and B as B^T (N x K), packs
//!   skipped only where the caller's matrix already has that form. On small sizes the
//!   plan's pack and unpack kernels run on the OpenCL test device around a host
//!   stand-in for the tc kernel's contract, and C is compared with a host GEMM. The
//!   tc kernel itself is never compiled or launched.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gemmlab::backend::{AnyBackend, Arg, Buffer, DeviceInfo, DeviceKind, HostData, HostDataMut};
use gemmlab::gemm::problem::Matrix;
use gemmlab::gemm::stage::{self, Staged, Step};
use gemmlab::kernel::builtin::{self as kernels, Abi, Config, Family, Hints, KernelSpec, Support};
use gemmlab::{Backend, Layout, Precision, Problem, Program, Toolchain, Trans};

fn tc() -> &'static KernelSpec {
    kernels::find("tc").expect("the tc family is registered")
}

/// tc's defaults in `precision`, with `defines` on top, checked by its constraints.
fn tc_config(precision: Precision, defines: &[(&str, i64)]) -> Config {
    let mut d: Vec<(String, i64)> = vec![("PRECISION".into(), precision.define())];
    d.extend(defines.iter().map(|(n, v)| (n.to_string(), *v)));
    tc().config(&d)
        .unwrap_or_else(|e| panic!("tc {precision} {defines:?} is not a valid configuration: {e}"))
}

// ---------------------------------------------------------------------------
// 0. What the registry says tc is.

#[test]
fn tc_is_an_indirect_tensor_core_kernel_in_f64_and_f32() {
    let k = tc();
    assert_eq!(k.id, "tc");
    assert_eq!(k.entry, "tc_gemm");
    assert_eq!(k.family, Family::TensorCore);
    assert_eq!(k.abi, Abi::IndirectSplitK);
    assert!(k.operands.b_transposed, "tc reads B as B^T");
    assert!(k.precisions.contains(&Precision::F64) && k.precisions.contains(&Precision::F32));
    assert!(k.has_switch("TF32_SINGLE") && k.has_switch("PROMOTE_ACC"));
    for t in Toolchain::ALL {
        assert!(
            k.source(t).contains("tc_gemm"),
            "tc has no {} source with its entry",
            t.language().name()
        );
    }
    for precision in Precision::ALL {
        let c = tc_config(precision, &[]);
        assert_eq!(k.precision_of(&c), precision);
        assert_eq!(k.k_major(&c), (false, false), "tc takes the indirect forms");
        let tile = (
            c.get("BM") as usize,
            c.get("BN") as usize,
            c.get("BK") as usize,
        );
        assert_eq!(k.tile(&c), tile, "tc's tile is (BM, BN, BK)");
        // 1xTF32 (lower precision) only where asked for, and only in f32.
        let single = Hints::default().with_switch("TF32_SINGLE", true);
        assert!(!k.tf32_products(&c, &Hints::default()));
        assert_eq!(k.tf32_products(&c, &single), precision == Precision::F32);
    }
}

// ---------------------------------------------------------------------------
// 1. `gemmlab compare` on PoCL: an "n/a" row with its reason, exit 0.

fn gemmlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gemmlab"))
        .args(args)
        .output()
        .expect("the gemmlab binary runs")
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tc-family-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()))
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: bad line {l}: {e}", path.display()))
        })
        .collect()
}

/// The words a reader needs in the reason: where tc runs and why PoCL is not it.
fn says_why_not_here(reason: &str) -> bool {
    reason.contains("NVIDIA")
        && reason.contains("tensor cores")
        && reason.contains("inline PTX")
        && reason.contains("not an NVIDIA GPU")
}

#[test]
fn compare_on_pocl_gives_tc_an_na_row_with_its_reason_and_exits_0() {
    let cases: [(&str, &str, &[&str]); 3] = [
        ("f32", "f32", &[]),
        ("f64", "f64", &[]),
        // The family's switches change nothing about where it runs.
        (
            "f32-switches",
            "f32",
            &["--define", "TF32_SINGLE=1", "--define", "PROMOTE_ACC=0"],
        ),
    ];
    for (name, precision, extra) in cases {
        let out = out_dir(name);
        let out_s = out.to_str().expect("a UTF-8 temporary path");
        let mut args = vec![
            "compare",
            "--device",
            "pocl",
            "--backends",
            "opencl",
            "--kernels",
            "tc",
            "--sizes",
            "64",
            "--precision",
            precision,
            "--reps",
            "2",
            "--out",
            out_s,
        ];
        args.extend_from_slice(extra);
        let o = gemmlab(&args);
        let text = common::output_text(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: n/a is not a failure:\n{text}"
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some("tc"))
            .unwrap_or_else(|| panic!("{name}: no tc row in the table:\n{text}"));
        assert!(
            row.contains("n/a"),
            "{name}: the tc row is not n/a: {row}\n{text}"
        );
        assert!(
            says_why_not_here(&stdout),
            "{name}: the reason is not printed:\n{text}"
        );

        let rows = read_jsonl(&out.join("measurements.jsonl"));
        assert_eq!(rows.len(), 1, "{name}: one measurement: {rows:?}");
        let r = &rows[0];
        assert_eq!(r["experiment"], "compare", "{r}");
        assert_eq!(r["kernel"], "tc", "{r}");
        assert_eq!(r["toolchain"], "opencl", "{r}");
        assert_eq!(r["status"], "unavailable", "{r}");
        let reason = r["reason"].as_str().unwrap_or_default();
        assert!(says_why_not_here(reason), "{name}: reason {reason:?}");
        assert!(
            reason.contains("tc"),
            "{name}: the reason names the kernel: {reason:?}"
        );
        assert_eq!(
            (r["m"].as_u64(), r["n"].as_u64(), r["k"].as_u64()),
            (Some(64), Some(64), Some(64))
        );
        assert_eq!(r["problem"]["precision"], precision, "{r}");
        let define = if precision == "f64" { 64 } else { 32 };
        assert_eq!(r["config"]["PRECISION"], define, "{r}");
        for absent in ["time", "gflops", "check", "padded", "resources"] {
            assert!(
                r[absent].is_null(),
                "{name}: an unavailable row has no {absent}: {r}"
            );
        }
        if !extra.is_empty() {
            assert_eq!(r["hints"]["switches"]["TF32_SINGLE"], true, "{r}");
            assert_eq!(r["hints"]["switches"]["PROMOTE_ACC"], false, "{r}");
        }

        // results.json repeats the measurement after the environment.
        let all: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("results.json")).expect("results.json is written"),
        )
        .expect("results.json is JSON");
        let ms = all["measurements"]
            .as_array()
            .expect("results.json has measurements");
        assert_eq!(ms.len(), 1, "{all}");
        assert_eq!(ms[0]["status"], "unavailable");
        assert_eq!(ms[0]["reason"], r["reason"]);
        let _ = std::fs::remove_dir_all(&out);
    }
}

// ---------------------------------------------------------------------------
// 2. `unavailable_at` on made-up devices.

fn nvidia(toolchain: Toolchain, cc: (u32, u32)) -> DeviceInfo {
    DeviceInfo {
        compute_capability: Some(cc),
        compute_units: Some(100),
        ..DeviceInfo::new(
            toolchain,
            "x:0",
            format!("Made-up sm_{}{}", cc.0, cc.1),
            "NVIDIA Corporation",
            "made-up platform",
            DeviceKind::Gpu,
        )
    }
}

/// Every mma shape tc has, with a configuration that is valid for it.
fn shapes() -> Vec<(&'static str, Config)> {
    vec![
        ("f32 m16n8k8 (3xTF32)", tc_config(Precision::F32, &[])),
        (
            "f64 m8n8k4 (884)",
            tc_config(Precision::F64, &[("MMA", 884)]),
        ),
        (
            "f64 m8n8k4 (884), BK=4",
            tc_config(Precision::F64, &[("MMA", 884), ("BK", 4)]),
        ),
        (
            "f64 m16n8k4 (1684)",
            tc_config(Precision::F64, &[("MMA", 1684)]),
        ),
        (
            "f64 m16n8k8 (1688, default)",
            tc_config(Precision::F64, &[]),
        ),
        (
            "f64 m16n8k16 (16816)",
            tc_config(
                Precision::F64,
                &[("MMA", 16816), ("BK", 16), ("BM", 64), ("BN", 64)],
            ),
        ),
    ]
}

fn needs_sm90(c: &Config) -> bool {
    c.get("PRECISION") == 64 && c.get("MMA") != 884
}

#[test]
fn unavailable_at_asks_sm80_and_sm90_for_the_m16n8_f64_shapes() {
    let k = tc();
    let none = Hints::default();
    let tf32 = Hints::default()
        .with_switch("TF32_SINGLE", true)
        .with_switch("PROMOTE_ACC", false);
    let shapes = shapes();
    assert_eq!(
        tc_config(Precision::F64, &[]).get("MMA"),
        1688,
        "f64's default shape"
    );
    for toolchain in [
        Toolchain::Cuda,
        Toolchain::ClangCuda,
        Toolchain::OpenCl,
        Toolchain::ClangOpenCl,
    ] {
        for hints in [&none, &tf32] {
            // Volta and Turing: no f64/tf32 mma, no cp.async: refused whatever the shape.
            for cc in [(7, 0), (7, 5)] {
                let dev = nvidia(toolchain, cc);
                let why = k.unavailable(&dev, hints);
                let why =
                    why.unwrap_or_else(|| panic!("{toolchain} sm_{}{}: tc accepted", cc.0, cc.1));
                assert!(
                    why.contains("sm_80") && why.contains(&format!("sm_{}{}", cc.0, cc.1)),
                    "{why}"
                );
                for (what, c) in &shapes {
                    let why = k.unavailable_at(c, &dev, hints);
                    assert!(
                        why.is_some(),
                        "{toolchain} sm_{}{} accepted {what}",
                        cc.0,
                        cc.1
                    );
                }
            }
            // Ampere and Ada: sm_80's shapes run, the m16n8 f64 shapes need sm_90.
            for cc in [(8, 0), (8, 6), (8, 9)] {
                let dev = nvidia(toolchain, cc);
                assert_eq!(
                    k.unavailable(&dev, hints),
                    None,
                    "{toolchain} sm_{}{}",
                    cc.0,
                    cc.1
                );
                for (what, c) in &shapes {
                    let why = k.unavailable_at(c, &dev, hints);
                    if needs_sm90(c) {
                        let why = why.unwrap_or_else(|| {
                            panic!(
                                "{toolchain} sm_{}{} accepted {what}, an sm_90 shape",
                                cc.0, cc.1
                            )
                        });
                        assert!(
                            why.contains("sm_90")
                                && why.contains(&format!("MMA={}", c.get("MMA")))
                                && why.contains("f64")
                                && why.contains(&format!("sm_{}{}", cc.0, cc.1)),
                            "{what} on sm_{}{}: {why}",
                            cc.0,
                            cc.1
                        );
                    } else {
                        assert_eq!(why, None, "{toolchain} sm_{}{} refused {what}", cc.0, cc.1);
                    }
                }
            }
            // Hopper and later: everything.
            for cc in [(9, 0), (10, 0), (12, 0)] {
                let dev = nvidia(toolchain, cc);
                for (what, c) in &shapes {
                    assert_eq!(
                        k.unavailable_at(c, &dev, hints),
                        None,
                        "{toolchain} sm_{}{} refused {what}",
                        cc.0,
                        cc.1
                    );
                }
            }
        }
    }
}

#[test]
fn unavailable_at_refuses_every_device_that_is_not_nvidia() {
    let k = tc();
    let others = [
        DeviceInfo::new(
            Toolchain::OpenCl,
            "opencl:0:0",
            "pthread-made-up-cpu",
            "AuthenticAMD",
            "Portable Computing Language",
            DeviceKind::Cpu,
        ),
        DeviceInfo::new(
            Toolchain::OpenCl,
            "opencl:1:0",
            "gfx90a:sramecc+:xnack-",
            "Advanced Micro Devices, Inc.",
            "AMD Accelerated Parallel Processing",
            DeviceKind::Gpu,
        ),
        // A compute capability does not make a device NVIDIA's.
        DeviceInfo {
            compute_capability: Some((9, 0)),
            ..DeviceInfo::new(
                Toolchain::OpenCl,
                "opencl:2:0",
                "Intel(R) Data Center GPU Max 1550",
                "Intel(R) Corporation",
                "Intel(R) OpenCL Graphics",
                DeviceKind::Gpu,
            )
        },
    ];
    for dev in &others {
        for hints in [
            Hints::default(),
            Hints::default().with_switch("TF32_SINGLE", true),
        ] {
            let why = k.unavailable(dev, &hints);
            let why = why.unwrap_or_else(|| panic!("tc accepted {}", dev.name));
            assert!(says_why_not_here(&why) && why.contains(&dev.name), "{why}");
            for (what, c) in shapes() {
                let why = k.unavailable_at(&c, dev, &hints);
                let why = why.unwrap_or_else(|| panic!("{} accepted {what}", dev.name));
                assert!(says_why_not_here(&why), "{what} on {}: {why}", dev.name);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// 3. The staging plan for every BLAS case.

const SMALL: [(usize, usize, usize); 3] = [(17, 33, 9), (130, 70, 21), (128, 128, 16)];
const LARGE: (usize, usize, usize) = (1000, 999, 1001);
const SCALARS: [(f64, f64); 4] = [(1.0, 0.0), (1.5, 0.0), (1.5, 0.5), (-0.75, 1.0)];

/// tc configurations whose tiles differ: the defaults, smaller, deeper tiles, split-K
/// and the last wave's split along K.
fn plan_configs(precision: Precision) -> Vec<Config> {
    match precision {
        Precision::F32 => vec![
            tc_config(precision, &[]),
            tc_config(precision, &[("BM", 64), ("BN", 32), ("BK", 16)]),
            tc_config(
                precision,
                &[("BM", 64), ("BN", 32), ("BK", 16), ("SPLITK", 3)],
            ),
        ],
        Precision::F64 => vec![
            tc_config(precision, &[]),
            tc_config(precision, &[("MMA", 884), ("BK", 4)]),
            tc_config(precision, &[("SPLITK", 2)]),
            tc_config(precision, &[("TAILK", 3), ("WAVE", 1)]),
            tc_config(
                precision,
                &[("MMA", 16816), ("BK", 16), ("BM", 64), ("BN", 64)],
            ),
        ],
    }
}

fn problem(
    layout: Layout,
    (trans_a, trans_b): (Trans, Trans),
    (m, n, k): (usize, usize, usize),
    (alpha, beta): (f64, f64),
    precision: Precision,
    loose: bool,
) -> Problem {
    let mut p = Problem {
        layout,
        trans_a,
        trans_b,
        alpha,
        beta,
        precision,
        ..Problem::plain(m, n, k)
    }
    .tight();
    if loose {
        // Leading dimensions beyond the matrices and offsets: packs must skip the gaps.
        (p.lda, p.ldb, p.ldc) = (p.lda + 3, p.ldb + 5, p.ldc + 2);
        (p.a_offset, p.b_offset, p.c_offset) = (1, 4, 7);
    }
    p.validate()
        .unwrap_or_else(|e| panic!("{}: {e}", p.describe()));
    p
}

fn int_of(a: &Arg) -> Option<usize> {
    match a {
        Arg::I32(v) => usize::try_from(*v).ok(),
        _ => None,
    }
}

fn real_of(a: &Arg, precision: Precision) -> Option<f64> {
    match (a, precision) {
        (Arg::F32(v), Precision::F32) => Some(f64::from(*v)),
        (Arg::F64(v), Precision::F64) => Some(*v),
        _ => None,
    }
}

fn buf_of(a: &Arg) -> Option<Buffer> {
    match a {
        Arg::Buf(b) => Some(*b),
        _ => None,
    }
}

/// What one pack step should read and write.
struct PackWant {
    rows: usize,
    cols: usize,
    src: Buffer,
    offset: usize,
    ld: usize,
    trans: bool,
    dst_rows: usize,
    dst_cols: usize,
    dst: Buffer,
}

fn check_pack(step: &Step, want: &PackWant, support: Program, what: &str) -> Result<(), String> {
    let a = &step.args;
    let got = (
        a.len(),
        a.first().and_then(int_of),
        a.get(1).and_then(int_of),
        a.get(2).and_then(buf_of),
        a.get(3).and_then(int_of),
        a.get(4).and_then(int_of),
        a.get(5).and_then(int_of),
        a.get(6).and_then(int_of),
        a.get(7).and_then(int_of),
        a.get(8).and_then(buf_of),
    );
    let expect = (
        9,
        Some(want.rows),
        Some(want.cols),
        Some(want.src),
        Some(want.offset),
        Some(want.ld),
        Some(usize::from(want.trans)),
        Some(want.dst_rows),
        Some(want.dst_cols),
        Some(want.dst),
    );
    if step.entry != "pack_matrix" || step.program != support || got != expect {
        return Err(format!(
            "{what}: pack step {} {:?}, want pack_matrix (rows, cols, src, offset, ld, trans, dst_rows, dst_cols, dst) = {expect:?}",
            step.entry, step.args
        ));
    }
    if step.geometry != Support::pack_geometry(want.dst_rows, want.dst_cols) {
        return Err(format!("{what}: pack geometry {:?}", step.geometry));
    }
    Ok(())
}

/// `pack_matrix`'s arguments (rows, cols, src, offset, ld, trans, dst_rows, dst_cols, dst).
const PACK_ARGS: usize = 9;

/// The plan's pre steps with a `pack_pair` split into the two `pack_matrix`
/// launches it stands for (to be checked as those), once the pair's own launch is
/// checked: the support program, one work-group per 32 x 32 tile of both
/// destinations. A pair is the first step and stands for A's pack and B's.
fn unpaired(pre: &[Step], support: Program, what: &str) -> Result<Vec<Step>, String> {
    let mut out = Vec::new();
    for (i, step) in pre.iter().enumerate() {
        if step.entry != "pack_pair" {
            out.push(step.clone());
            continue;
        }
        let halves: Vec<Step> = step
            .args
            .chunks(PACK_ARGS)
            .map(|args| {
                let dims = (args.get(6).and_then(int_of), args.get(7).and_then(int_of));
                let (r, c) = (dims.0.unwrap_or(0), dims.1.unwrap_or(0));
                Step {
                    program: step.program,
                    entry: "pack_matrix",
                    geometry: Support::pack_geometry(r, c),
                    args: args.to_vec(),
                }
            })
            .collect();
        let tiles: usize = halves
            .iter()
            .map(|h| {
                let dim = |j| {
                    h.args
                        .get(j)
                        .and_then(int_of)
                        .unwrap_or(0)
                        .div_ceil(Support::PACK_TILE)
                };
                dim(6) * dim(7)
            })
            .sum();
        if i != 0 || step.args.len() != 2 * PACK_ARGS || step.program != support {
            return Err(format!(
                "{what}: pack_pair as step {i}, {} arguments",
                step.args.len()
            ));
        }
        if step.geometry != Support::pack_pair_geometry(tiles) {
            return Err(format!(
                "{what}: pack_pair geometry {:?} for {tiles} tiles",
                step.geometry
            ));
        }
        out.extend(halves);
    }
    Ok(out)
}

/// Checks a plan against what tc needs (`Abi::Indirect`, B transposed) and what the
/// stage module promises (a pack only where the caller's matrix is not in that form).
fn check_plan(
    st: &Staged,
    units: usize,
    p: &Problem,
    config: &Config,
    program: Program,
    support: Program,
    [a, b, c]: [Buffer; 3],
) -> Result<(), String> {
    let k = tc();
    let what = format!("{} at {}", p.describe(), config.describe_params());
    let cm = p.column_major();
    // The column-major problem's A and B are the caller's B and A where it is row-major.
    let (a, b) = if p.layout == Layout::RowMajor {
        (b, a)
    } else {
        (a, b)
    };
    let (m, n, kk) = (cm.m, cm.n, cm.k);
    let (bm, bn, bk) = (
        config.get("BM") as usize,
        config.get("BN") as usize,
        config.get("BK") as usize,
    );
    let [mp, np, kp] = st.padded;
    for (name, v, padded, tile) in [("M", m, mp, bm), ("N", n, np, bn), ("K", kk, kp, bk)] {
        if padded % tile != 0 || padded < v || padded >= v + tile {
            return Err(format!(
                "{what}: padded {name} = {padded} for {v} is not the next multiple of the tile {tile}"
            ));
        }
    }
    let [ap, bp, cp] = st.operands;

    // The main launch: tc_gemm(M, N, K, alpha, beta, A, B, C, work, counters) on
    // the padded sizes; SPLITK work-groups per tile share its K.
    let main = &st.main;
    let args = &main.args;
    let got = (
        main.entry,
        main.program,
        args.len(),
        args.iter().take(3).map(int_of).collect::<Vec<_>>(),
        args.get(3).and_then(|x| real_of(x, p.precision)),
        args.get(4).and_then(|x| real_of(x, p.precision)),
        args.iter().skip(5).take(3).map(buf_of).collect::<Vec<_>>(),
    );
    let want = (
        "tc_gemm",
        program,
        10,
        vec![Some(mp), Some(np), Some(kp)],
        Some(p.alpha),
        Some(p.beta),
        vec![Some(ap), Some(bp), Some(cp)],
    );
    if got != want {
        return Err(format!("{what}: main launch {got:?}, want {want:?}"));
    }
    let split = config.get("SPLITK").max(1) as usize;
    let tail_k = config.get("TAILK").max(1) as usize;
    let tiles = (mp / bm) * (np / bn);
    // TAILK: one work-group per tile, TAILK per tile of the last partial wave of
    // WAVE work-groups per compute unit (every tile where they make less than one).
    let tail = tiles % (config.get("WAVE").max(1) as usize * units);
    let groups = tiles + tail * (tail_k - 1);
    let (work, counters) = (args.get(8).and_then(buf_of), args.get(9).and_then(buf_of));
    let partials = if tail_k > 1 {
        // At least one element, where no tile is shared.
        (tail * tail_k * bm * bn).max(1)
    } else if split > 1 {
        split * tiles * bm * bn
    } else {
        1
    };
    if work.map(|w| (w.len, w.elem)) != Some((partials, p.precision.elem()))
        || counters.map(|c| c.len) != Some(tiles)
    {
        return Err(format!(
            "{what}: work {work:?} and counters {counters:?}, want {partials} {:?} partial sums and {tiles} counters",
            p.precision.elem()
        ));
    }
    let g = main.geometry;
    let mut want = k.geometry(config, mp, np);
    if tail_k > 1 {
        want.global = [groups * want.local[0], want.local[1], 1];
    } else {
        want.global[2] = split;
    }
    let (want_groups, shape) = match tail_k {
        1 => (
            [mp / bm, np / bn, split],
            format!("{split} work-group(s) per {bm} x {bn} tile"),
        ),
        _ => (
            [groups, 1, 1],
            format!("{groups} work-groups, {tail_k} for each of {tail} tiles"),
        ),
    };
    if g != want || g.groups() != want_groups || g.validate().is_err() {
        return Err(format!("{what}: geometry {g:?} is not {shape}"));
    }
    if g.threads_per_group() != k.threads_per_group(config) {
        return Err(format!("{what}: work-group {:?}", g.local));
    }

    let unpaired = unpaired(&st.pre, support, &what)?;
    let mut pre: Vec<&Step> = unpaired.iter().collect();
    let mut take_pre = |dst: Buffer| -> Option<&Step> {
        let i = pre
            .iter()
            .position(|s| s.args.get(8).and_then(buf_of) == Some(dst))?;
        Some(pre.remove(i))
    };
    let mut temps = Vec::new();

    // A: column-major mp x kp holding op(A), the caller's own buffer only when it is so.
    let sa = cm.storage(Matrix::A);
    let a_ready = !sa.transposed && sa.offset == 0 && sa.ld == mp && (m, kk) == (mp, kp);
    if a_ready != (ap == a) {
        return Err(format!(
            "{what}: A {} packed although it is{} already column-major {mp} x {kp}",
            if ap == a { "not" } else { "" },
            if a_ready { "" } else { " not" }
        ));
    }
    if ap != a {
        temps.push((ap, mp * kp, "A"));
        let step = take_pre(ap).ok_or_else(|| format!("{what}: no pack writes A"))?;
        let want = PackWant {
            rows: m,
            cols: kk,
            src: a,
            offset: sa.offset,
            ld: sa.ld,
            trans: sa.transposed,
            dst_rows: mp,
            dst_cols: kp,
            dst: ap,
        };
        check_pack(step, &want, support, &format!("{what}: A"))?;
    }

    // B as B^T: column-major np x kp holding op(B)^T.
    let sb = cm.storage(Matrix::B);
    let b_ready = sb.transposed && sb.offset == 0 && sb.ld == np && (n, kk) == (np, kp);
    if b_ready != (bp == b) {
        return Err(format!(
            "{what}: B {} packed although B^T is{} already column-major {np} x {kp}",
            if bp == b { "not" } else { "" },
            if b_ready { "" } else { " not" }
        ));
    }
    if bp != b {
        temps.push((bp, np * kp, "B^T"));
        let step = take_pre(bp).ok_or_else(|| format!("{what}: no pack writes B^T"))?;
        let want = PackWant {
            rows: n,
            cols: kk,
            src: b,
            offset: sb.offset,
            ld: sb.ld,
            trans: !sb.transposed,
            dst_rows: np,
            dst_cols: kp,
            dst: bp,
        };
        check_pack(step, &want, support, &format!("{what}: B"))?;
    }

    // C: column-major mp x np; copied in where beta reads it, unpacked after.
    let sc = cm.storage(Matrix::C);
    let c_ready = sc.offset == 0 && sc.ld == mp && (m, n) == (mp, np);
    if c_ready != (cp == c) {
        return Err(format!(
            "{what}: C through a temporary: {}, want {}",
            cp != c,
            !c_ready
        ));
    }
    if cp == c {
        if !st.post.is_empty() {
            return Err(format!(
                "{what}: post steps on a C the kernel wrote in place"
            ));
        }
    } else {
        temps.push((cp, mp * np, "C"));
        let copied = take_pre(cp);
        match (copied, p.beta != 0.0) {
            (None, true) => return Err(format!("{what}: beta != 0 but C is not copied in")),
            (Some(_), false) => return Err(format!("{what}: beta = 0 but C is read")),
            (Some(step), true) => {
                let want = PackWant {
                    rows: m,
                    cols: n,
                    src: c,
                    offset: sc.offset,
                    ld: sc.ld,
                    trans: false,
                    dst_rows: mp,
                    dst_cols: np,
                    dst: cp,
                };
                check_pack(step, &want, support, &format!("{what}: C"))?;
            }
            (None, false) => {}
        }
        let [post] = &st.post[..] else {
            return Err(format!(
                "{what}: {} post steps, want one unpack",
                st.post.len()
            ));
        };
        let a = &post.args;
        let got = (
            post.entry,
            post.program,
            a.len(),
            [a.first(), a.get(1)].map(|x| x.and_then(int_of)),
            a.get(2).and_then(buf_of),
            a.get(3).and_then(int_of),
            a.get(4).and_then(buf_of),
            [a.get(5), a.get(6)].map(|x| x.and_then(int_of)),
            [a.get(7), a.get(8)].map(|x| x.and_then(|x| real_of(x, p.precision))),
        );
        let want = (
            "unpack_matrix",
            support,
            9,
            [Some(m), Some(n)],
            Some(cp),
            Some(mp),
            Some(c),
            [Some(sc.offset), Some(sc.ld)],
            [Some(1.0), Some(0.0)],
        );
        if got != want || post.geometry != Support::pack_geometry(m, n) {
            return Err(format!(
                "{what}: unpack {got:?} {:?}, want {want:?}",
                post.geometry
            ));
        }
    }
    if !pre.is_empty() {
        return Err(format!(
            "{what}: unexpected pre steps {:?}",
            pre.iter().map(|s| (s.entry, &s.args)).collect::<Vec<_>>()
        ));
    }
    for (t, len, name) in &temps {
        if t.len != *len || t.elem != p.precision.elem() || !st.owned.contains(t) {
            return Err(format!(
                "{what}: temporary {name} {t:?} (owned {:?}), want {len} elements",
                st.owned
            ));
        }
    }
    // Besides the temporaries, the plan owns split-K's partial sums and counters.
    if st.owned.len() != temps.len() + 2
        || !(work.is_some_and(|w| st.owned.contains(&w))
            && counters.is_some_and(|c| st.owned.contains(&c)))
    {
        return Err(format!(
            "{what}: owns {:?}, made {} temporaries",
            st.owned,
            temps.len()
        ));
    }
    Ok(())
}

/// `data` (f64 on the host) into `buf`, in the problem's precision.
fn upload_into(
    be: &mut AnyBackend,
    precision: Precision,
    buf: &Buffer,
    data: &[f64],
) -> gemmlab::Result<()> {
    match precision {
        Precision::F64 => be.upload(buf, HostData::F64(data)),
        Precision::F32 => {
            let v: Vec<f32> = data.iter().map(|x| *x as f32).collect();
            be.upload(buf, HostData::F32(&v))
        }
    }
}

/// A caller's buffer holding `data`.
fn upload(be: &mut AnyBackend, precision: Precision, data: &[f64]) -> Buffer {
    let buf = be.alloc(precision.elem(), data.len()).expect("alloc");
    upload_into(be, precision, &buf, data).expect("upload");
    buf
}

fn download(be: &mut AnyBackend, precision: Precision, buf: &Buffer) -> Vec<f64> {
    match precision {
        Precision::F64 => {
            let mut v = vec![0f64; buf.len];
            be.download(buf, HostDataMut::F64(&mut v))
                .expect("download");
            v
        }
        Precision::F32 => {
            let mut v = vec![0f32; buf.len];
            be.download(buf, HostDataMut::F32(&mut v))
                .expect("download");
            v.iter().map(|x| f64::from(*x)).collect()
        }
    }
}

/// Host matrices for `p`: values (exact in f32) where the matrix lies, NaN in the
/// gaps that leading dimensions and offsets leave (and all of C where beta is 0:
/// C must not be read then), so a read outside the matrix shows in C.
fn host_matrix(p: &Problem, which: Matrix, seed: u64) -> Vec<f64> {
    let s = p.storage(which);
    let mut v = vec![f64::NAN; s.buffer_len()];
    if which == Matrix::C && p.beta == 0.0 {
        return v;
    }
    let r = common::random(s.rows * s.cols, seed);
    for j in 0..s.cols {
        for i in 0..s.rows {
            v[s.offset + j * s.ld + i] = f64::from(r[j * s.rows + i]);
        }
    }
    v
}

/// Runs the plan's pre steps, checks the operands tc would read, does the tc
/// kernel's part on the host as `Abi::Indirect` states it, runs the post steps and
/// compares the caller's C with a host GEMM of the problem as the caller stated it.
fn run_around_the_kernel(
    be: &mut AnyBackend,
    st: &Staged,
    p: &Problem,
    hosts: [&[f64]; 3],
    caller_c: Buffer,
) -> Result<(), String> {
    let what = p.describe();
    let prec = p.precision;
    // Temporaries start as NaN: a part of them a pack leaves unwritten shows.
    for t in &st.owned {
        be.fill(t, f64::NAN)
            .map_err(|e| format!("{what}: fill: {e}"))?;
    }
    for s in &st.pre {
        s.run(be)
            .map_err(|e| format!("{what}: {} failed: {e}", s.entry))?;
    }
    let cm = p.column_major();
    let (m, n, k) = (cm.m, cm.n, cm.k);
    let [mp, np, kp] = st.padded;
    let (ha, hb) = if p.layout == Layout::RowMajor {
        (hosts[1], hosts[0])
    } else {
        (hosts[0], hosts[1])
    };
    let (sa, sb) = (cm.storage(Matrix::A), cm.storage(Matrix::B));
    let ap = download(be, prec, &st.operands[0]);
    let bp = download(be, prec, &st.operands[1]);
    let mut cp = download(be, prec, &st.operands[2]);
    // A column-major mp x kp: op(A)(i, l) at i + l * mp, zero beyond M and K.
    for l in 0..kp {
        for i in 0..mp {
            let want = if i < m && l < k {
                ha[sa.index(i, l)]
            } else {
                0.0
            };
            let got = ap[i + l * mp];
            if got.to_bits() != want.to_bits() {
                return Err(format!("{what}: packed A({i}, {l}) = {got}, want {want}"));
            }
        }
    }
    // B^T column-major np x kp: op(B)(l, j) at j + l * np, zero beyond N and K.
    for l in 0..kp {
        for j in 0..np {
            let want = if j < n && l < k {
                hb[sb.index(l, j)]
            } else {
                0.0
            };
            let got = bp[j + l * np];
            if got.to_bits() != want.to_bits() {
                return Err(format!("{what}: packed B^T({j}, {l}) = {got}, want {want}"));
            }
        }
    }
    // The kernel: C = alpha A (B^T)^T + beta C over the padded sizes, C unread where beta is 0.
    let (alpha, beta) = (cm.alpha, cm.beta);
    for j in 0..np {
        for i in 0..mp {
            let dot: f64 = (0..kp).map(|l| ap[i + l * mp] * bp[j + l * np]).sum();
            let old = if beta == 0.0 {
                0.0
            } else {
                beta * cp[i + j * mp]
            };
            cp[i + j * mp] = alpha * dot + old;
        }
    }
    upload_into(be, prec, &st.operands[2], &cp).map_err(|e| format!("{what}: upload C: {e}"))?;
    for s in &st.post {
        s.run(be)
            .map_err(|e| format!("{what}: {} failed: {e}", s.entry))?;
    }
    let got = download(be, prec, &caller_c);

    // The reference, in the caller's own terms.
    let (sa, sb, sc) = (
        p.storage(Matrix::A),
        p.storage(Matrix::B),
        p.storage(Matrix::C),
    );
    let [ha, hb, hc] = hosts;
    let tol = if prec == Precision::F32 { 1e-6 } else { 1e-13 };
    let mut inside = vec![false; got.len()];
    for j in 0..p.n {
        for i in 0..p.m {
            let (mut dot, mut mag) = (0.0, 0.0);
            for l in 0..p.k {
                let t = ha[sa.index(i, l)] * hb[sb.index(l, j)];
                dot += t;
                mag += t.abs();
            }
            let at = sc.index(i, j);
            inside[at] = true;
            let old = if p.beta == 0.0 { 0.0 } else { p.beta * hc[at] };
            let want = p.alpha * dot + old;
            let scale = p.alpha.abs() * mag + old.abs() + 1.0;
            let err = (got[at] - want).abs();
            if err.is_nan() || err > tol * scale {
                return Err(format!("{what}: C({i}, {j}) = {}, want {want}", got[at]));
            }
        }
    }
    // Outside the matrix C's buffer is untouched (NaN stays NaN).
    if let Some(at) = (0..got.len()).find(|&x| !inside[x] && got[x].to_bits() != hc[x].to_bits()) {
        return Err(format!(
            "{what}: C's buffer changed at {at}, outside the matrix: {}",
            got[at]
        ));
    }
    Ok(())
}

/// Plans every case on the OpenCL test device with the routine kernels as the
/// support program (and as a stand-in for tc's program, never launched); runs the
/// packs around a host stand-in for tc where `execute`.
fn plan_every_case(
    sizes: &[(usize, usize, usize)],
    loose: &[bool],
    execute: bool,
) -> (usize, Vec<String>) {
    let mut be = common::opencl();
    let toolchain = be.info().toolchain;
    let units = be.info().compute_units.unwrap_or(1).max(1) as usize;
    let layouts = [Layout::ColMajor, Layout::RowMajor];
    let trans = [
        (Trans::N, Trans::N),
        (Trans::N, Trans::T),
        (Trans::T, Trans::N),
        (Trans::T, Trans::T),
    ];
    let (mut planned, mut failures) = (0, Vec::new());
    for precision in Precision::ALL {
        let (support, _) = be
            .compile(
                "routine kernels",
                &Support::routine_source(toolchain),
                &Support::routine_options(precision),
            )
            .expect("the routine kernels compile on the OpenCL test device");
        let configs = plan_configs(precision);
        for &size in sizes {
            for &loose in loose {
                for layout in layouts {
                    for ts in trans {
                        for scalars in SCALARS {
                            let p = problem(layout, ts, size, scalars, precision, loose);
                            let hosts = [Matrix::A, Matrix::B, Matrix::C].map(|w| {
                                if execute {
                                    host_matrix(&p, w, size.0 as u64 * 31 + w as u64)
                                } else {
                                    Vec::new()
                                }
                            });
                            let bufs = [Matrix::A, Matrix::B, Matrix::C].map(|w| {
                                if execute {
                                    upload(&mut be, precision, &hosts[w as usize])
                                } else {
                                    be.alloc(precision.elem(), p.buffer_len(w)).expect("alloc")
                                }
                            });
                            for config in &configs {
                                let planned_with = stage::plan(
                                    &mut be,
                                    tc(),
                                    config,
                                    support,
                                    support,
                                    &p,
                                    bufs[0],
                                    bufs[1],
                                    bufs[2],
                                );
                                let st = match planned_with {
                                    Ok(st) => st,
                                    Err(e) => {
                                        failures.push(format!(
                                            "{} at {}: {e}",
                                            p.describe(),
                                            config.describe_params()
                                        ));
                                        continue;
                                    }
                                };
                                planned += 1;
                                let mut r =
                                    check_plan(&st, units, &p, config, support, support, bufs);
                                if r.is_ok() && execute {
                                    let hs = [&hosts[0][..], &hosts[1][..], &hosts[2][..]];
                                    r = run_around_the_kernel(&mut be, &st, &p, hs, bufs[2])
                                        .map_err(|e| {
                                            format!("{e} (at {})", config.describe_params())
                                        });
                                    // C is the caller's: restore it for the next configuration.
                                    if let Err(e) =
                                        upload_into(&mut be, precision, &bufs[2], &hosts[2])
                                    {
                                        failures.push(format!("restoring C: {e}"));
                                    }
                                }
                                if let Err(e) = r {
                                    failures.push(e);
                                }
                                for t in st.owned {
                                    be.free(t);
                                }
                            }
                            for b in bufs {
                                be.free(b);
                            }
                        }
                    }
                }
            }
        }
        be.release_program(support);
    }
    (planned, failures)
}

#[test]
fn stage_plan_pads_to_the_tc_tile_and_gives_tc_its_operand_forms_for_every_blas_case() {
    // Planning only (nothing launched): odd, tile-crossing, tile-exact and large sizes.
    let mut sizes = SMALL.to_vec();
    sizes.push(LARGE);
    let (planned, failures) = plan_every_case(&sizes, &[false, true], false);
    assert!(
        failures.is_empty(),
        "{} of {planned} plans wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 4 sizes x 2 storages x 2 layouts x 4 transposes x 4 alpha/beta x (3 f32 + 5 f64 configurations).
    assert_eq!(planned, 4 * 2 * 2 * 4 * 4 * 8);
}

#[test]
fn stage_plan_skips_every_pack_where_the_caller_already_has_tcs_forms() {
    // Column-major C = A B^T on tile multiples, tight: A is M x K, B^T is stored as N x K, C fits.
    let mut be = common::opencl();
    let toolchain = be.info().toolchain;
    let units = be.info().compute_units.unwrap_or(1).max(1) as usize;
    for precision in Precision::ALL {
        let (support, _) = be
            .compile(
                "routine kernels",
                &Support::routine_source(toolchain),
                &Support::routine_options(precision),
            )
            .expect("the routine kernels compile");
        for config in plan_configs(precision) {
            for (layout, ts) in [
                (Layout::ColMajor, (Trans::N, Trans::T)),
                (Layout::RowMajor, (Trans::T, Trans::N)),
            ] {
                let p = problem(layout, ts, (256, 128, 32), (1.5, 0.5), precision, false);
                let bufs = [Matrix::A, Matrix::B, Matrix::C]
                    .map(|w| be.alloc(precision.elem(), p.buffer_len(w)).expect("alloc"));
                let st = stage::plan(
                    &mut be,
                    tc(),
                    &config,
                    support,
                    support,
                    &p,
                    bufs[0],
                    bufs[1],
                    bufs[2],
                )
                .unwrap_or_else(|e| panic!("{}: {e}", p.describe()));
                let what = format!("{} at {}", p.describe(), config.describe_params());
                check_plan(&st, units, &p, &config, support, support, bufs)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert!(st.pre.is_empty() && st.post.is_empty(), "{what}");
                let want = if layout == Layout::RowMajor {
                    [bufs[1], bufs[0], bufs[2]]
                } else {
                    bufs
                };
                assert_eq!(st.operands, want, "{what}");
                assert_eq!(
                    st.padded,
                    [p.column_major().m, p.column_major().n, 32],
                    "{what}"
                );
                for b in bufs {
                    be.free(b);
                }
            }
        }
        be.release_program(support);
    }
}

#[test]
fn stage_plan_packs_and_unpacks_exactly_around_the_tc_contract_on_opencl() {
    // The plan's own pack/unpack kernels run; the tc kernel's part is done on the host.
    let (planned, failures) = plan_every_case(&SMALL, &[false, true], true);
    assert!(
        failures.is_empty(),
        "{} of {planned} runs wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(planned, 3 * 2 * 2 * 4 * 4 * 8);
}

/// The wgmma kernel (tcwg) on PoCL: an n/a row that says it needs NVIDIA's tensor
/// cores and sm_90a, exit 0, one "unavailable" measurement.
#[test]
fn compare_on_pocl_gives_tcwg_an_na_row_that_names_sm_90a() {
    let out = out_dir("tcwg");
    let out_s = out.to_str().expect("a UTF-8 temporary path");
    let o = gemmlab(&[
        "compare",
        "--device",
        "pocl",
        "--backends",
        "opencl",
        "--kernels",
        "tcwg",
        "--sizes",
        "64",
        "--reps",
        "2",
        "--out",
        out_s,
    ]);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "n/a is not a failure:\n{text}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some("tcwg"))
        .unwrap_or_else(|| panic!("no tcwg row in the table:\n{text}"));
    assert!(
        row.contains("n/a"),
        "the tcwg row is not n/a: {row}\n{text}"
    );
    let rows = read_jsonl(&out.join("measurements.jsonl"));
    assert_eq!(rows.len(), 1, "one measurement: {rows:?}");
    assert_eq!(rows[0]["status"], "unavailable", "{}", rows[0]);
    let reason = rows[0]["reason"].as_str().unwrap_or_default();
    assert!(
        says_why_not_here(reason) && reason.contains("sm_90a") && reason.contains("wgmma"),
        "{reason:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
