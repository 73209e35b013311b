//! Sweeps: the same kernels under register caps, register tiles, compiler hints,
//! and with NVIDIA OpenCL's PTX run through the CUDA JIT. Every point is measured
//! on every toolchain with interleaved repetitions (`experiment::measure_lanes`).

use crate::backend::{Backend, Toolchain};
use crate::error::{Error, Result};
use crate::experiment::{
    config_for, measure_items, measure_point, measure_vendor, Lane, Point, Problem,
};
use crate::experiment::{failed_rows, refused_size};
use crate::experiment::{measure_spec_items, references, Item, SpecCompare};
use crate::gemm::driver::{Session, Source, Status};
use crate::kernel::builtin::{self as kernels, Config, Hints, KernelSpec, Precision};
use crate::kernel::user::UserKernel;
use crate::measure::progress::Progress;
use crate::measure::Plan;
use crate::results::{ptx_variant, Measurement, ResultWriter};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepKind {
    Registers,
    Tiling,
    Hints,
    Jit,
}

impl SweepKind {
    pub fn name(self) -> &'static str {
        match self {
            SweepKind::Registers => "registers",
            SweepKind::Tiling => "tiling",
            SweepKind::Hints => "hints",
            SweepKind::Jit => "jit",
        }
    }
}

/// The register caps of `sweep registers` unless given: none, then 255 down to 32.
pub const DEFAULT_CAPS: [Option<u32>; 10] = [
    None,
    Some(255),
    Some(168),
    Some(128),
    Some(96),
    Some(80),
    Some(64),
    Some(48),
    Some(40),
    Some(32),
];

/// The register caps a sweep runs: those given, or [`DEFAULT_CAPS`].
pub fn parse_caps(list: &[String]) -> Result<Vec<Option<u32>>> {
    if list.is_empty() {
        return Ok(DEFAULT_CAPS.to_vec());
    }
    list.iter()
        .map(|c| match c.trim() {
            "none" | "off" | "" => Ok(None),
            v => v
                .parse::<u32>()
                .ok()
                .filter(|r| crate::error::REGISTER_CAP_RANGE.contains(r))
                .map(Some)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "register cap '{v}': use 'none' or a number from 24 to 255 (ptxas raises lower caps to 24)"
                    ))
                }),
        })
        .collect()
}

fn cap_label(cap: Option<u32>) -> String {
    cap.map_or("cap=none".into(), |c| format!("cap={c}"))
}

/// Every point of a sweep over built-in kernels, at `precision` (offline builds
/// compile what it asks; runs set it from the problem too). A configuration the
/// defines make invalid is a row that says why.
pub fn points(
    kind: SweepKind,
    kernels: &[&'static KernelSpec],
    defines: &[(String, i64)],
    precision: Precision,
    base: &Hints,
    caps: &[Option<u32>],
    carveouts: &[u32],
) -> Result<Vec<std::result::Result<Point, (String, Status)>>> {
    let points = match kind {
        SweepKind::Registers => register_points(kernels, defines, precision, base, caps),
        SweepKind::Tiling => tiling_points(base)?,
        SweepKind::Hints => hint_points(kernels, defines, precision, base),
        SweepKind::Jit => jit_points(kernels, defines, precision, base, carveouts),
    };
    Ok(points
        .into_iter()
        .map(|p| {
            p.map(|mut p| {
                if let Ok(c) = p.spec.with_precision(&p.config, precision) {
                    p.config = c;
                }
                p
            })
        })
        .collect())
}

/// Each kernel once with every lane, then once per carveout preference with the
/// CUDA driver's lanes only (the runtime factor on the same binaries; NVIDIA's
/// OpenCL has no such control).
fn jit_points(
    kernels: &[&'static KernelSpec],
    defines: &[(String, i64)],
    precision: Precision,
    base: &Hints,
    carveouts: &[u32],
) -> Vec<std::result::Result<Point, (String, Status)>> {
    let factors = std::iter::once(None).chain(carveouts.iter().map(|&c| Some(c)));
    let variants: Vec<(String, Hints)> = factors
        .map(|carveout| {
            let label = carveout.map_or("native vs opencl-ptx".into(), carveout_label);
            let hints = Hints {
                carveout,
                ..base.clone()
            };
            (label, hints)
        })
        .collect();
    labelled_points(kernels, defines, precision, |_| variants.clone())
}

/// A built-in kernel's JIT items: its base point (`points[0]`) along every lane,
/// then the carveout points that follow it along the CUDA driver's lanes, all
/// measured interleaved.
fn jit_items_of<'p>(
    sessions: &[Session],
    points: &'p [std::result::Result<Point, (String, Status)>],
    lanes: Vec<Lane>,
) -> Vec<(&'p Point, Lane)> {
    let Some(Ok(base)) = points.first() else {
        return Vec::new();
    };
    let factors = (points[1..].iter().map_while(|p| p.as_ref().ok()))
        .take_while(|p| p.spec.id == base.spec.id && p.hints.carveout.is_some());
    factor_lanes(sessions, &lanes, std::iter::once(base).chain(factors))
}

/// A user kernel's JIT items: every lane under the first variant (the base
/// hints), the CUDA driver's lanes under each further one (a carveout preference).
fn jit_items(
    sessions: &[Session],
    lanes: Vec<Lane>,
    config: &Config,
    variants: &[(String, Hints)],
) -> Vec<Item> {
    (factor_lanes(sessions, &lanes, variants.iter()).into_iter())
        .map(|((label, hints), lane)| Item {
            config: config.clone(),
            hints: hints.clone(),
            label: (!label.is_empty()).then(|| label.clone()),
            lane,
        })
        .collect()
}

/// The first of `each` (the base point) along every lane, each further one (a
/// runtime factor) along the CUDA driver's lanes only: NVIDIA's OpenCL has no
/// such control.
fn factor_lanes<T: Copy>(
    sessions: &[Session],
    lanes: &[Lane],
    each: impl Iterator<Item = T>,
) -> Vec<(T, Lane)> {
    let on_cuda =
        |l: &&Lane| sessions[l.session].backend.borrow().info().toolchain == Toolchain::Cuda;
    let mut items = Vec::new();
    for (i, t) in each.enumerate() {
        let along = lanes.iter().filter(|l| i == 0 || on_cuda(l));
        items.extend(along.map(|l| (t, l.clone())));
    }
    items
}

/// A carveout point's label: "carveout 100%".
pub fn carveout_label(pct: u32) -> String {
    format!("carveout {pct}%")
}

/// `--carveout`'s percentages, each 0-100.
pub fn parse_carveouts(list: &[u32]) -> Result<Vec<u32>> {
    match list.iter().find(|&&p| p > 100) {
        Some(p) => Err(Error::invalid(format!(
            "--carveout {p}: a percentage of the unified L1/shared memory, 0 to 100"
        ))),
        None => Ok(list.to_vec()),
    }
}

/// The variants of the hints a sweep over users' kernels runs: each register
/// cap, or the defaults and fast math. Tiling and jit vary the configuration
/// and the lane instead (see [`run_user_sweep`]).
pub fn user_variants(
    kind: SweepKind,
    base: &Hints,
    caps: &[Option<u32>],
    carveouts: &[u32],
) -> Vec<(String, Hints)> {
    match kind {
        SweepKind::Registers => caps
            .iter()
            .map(|&c| {
                let hints = Hints {
                    max_registers: c,
                    ..base.clone()
                };
                (cap_label(c), hints)
            })
            .collect(),
        SweepKind::Hints => vec![
            (crate::kernel::unchanged_name(true).into(), base.clone()),
            (
                "fast-math".into(),
                Hints {
                    fast_math: true,
                    ..base.clone()
                },
            ),
        ],
        SweepKind::Jit => std::iter::once((String::new(), base.clone()))
            .chain(carveouts.iter().map(|&c| {
                let hints = Hints {
                    carveout: Some(c),
                    ..base.clone()
                };
                (carveout_label(c), hints)
            }))
            .collect(),
        SweepKind::Tiling => vec![(String::new(), base.clone())],
    }
}

/// Kernel configurations valid under the user's defines; the others become rows that say why.
fn configured(
    kernels: &[&'static KernelSpec],
    defines: &[(String, i64)],
    precision: Precision,
) -> Vec<(
    &'static KernelSpec,
    std::result::Result<kernels::Config, Status>,
)> {
    kernels
        .iter()
        .map(|k| (*k, config_for(k, defines, precision)))
        .collect()
}

pub fn register_points(
    kernels: &[&'static KernelSpec],
    defines: &[(String, i64)],
    precision: Precision,
    base: &Hints,
    caps: &[Option<u32>],
) -> Vec<std::result::Result<Point, (String, Status)>> {
    labelled_points(kernels, defines, precision, |spec| {
        (caps.iter())
            .map(|&cap| {
                let hints = Hints {
                    max_registers: cap,
                    ..spec.own_hints(base)
                };
                (cap_label(cap), hints)
            })
            .collect()
    })
}

/// Each kernel's configuration under the defines at each of its `variants`
/// (label, hints); a configuration the defines make invalid is one row that says why.
fn labelled_points(
    kernels: &[&'static KernelSpec],
    defines: &[(String, i64)],
    precision: Precision,
    variants: impl Fn(&'static KernelSpec) -> Vec<(String, Hints)>,
) -> Vec<std::result::Result<Point, (String, Status)>> {
    let mut out = Vec::new();
    for (spec, config) in configured(kernels, defines, precision) {
        match config {
            Ok(config) => out.extend(variants(spec).into_iter().map(|(label, hints)| {
                Ok(Point {
                    spec,
                    config: config.clone(),
                    hints,
                    label: Some(label),
                })
            })),
            Err(s) => out.push(Err((spec.id.to_string(), s))),
        }
    }
    out
}

/// Kernel 11's register tile: RX, RY in {2, 4, 8}, RK = RY.
pub fn tiling_points(base: &Hints) -> Result<Vec<std::result::Result<Point, (String, Status)>>> {
    let spec = kernels::find("gemm11")?;
    let mut out = Vec::new();
    for rx in [2i64, 4, 8] {
        for ry in [2i64, 4, 8] {
            let d = [
                ("RX".to_string(), rx),
                ("RY".to_string(), ry),
                ("RK".to_string(), ry),
            ];
            out.push(match spec.config(&d) {
                Ok(config) => Ok(Point {
                    spec,
                    config,
                    hints: spec.own_hints(base),
                    label: Some(format!("RX={rx} RY={ry}")),
                }),
                Err(e) => Err((spec.id.to_string(), Status::InvalidConfig(e.to_string()))),
            });
        }
    }
    Ok(out)
}

/// One factor at a time from the baseline (the published kernel unless the user
/// set switches), applied to both twins alike: every switch of the kernel moved
/// away from its state, then fast math. A switch whose published state differs
/// between the toolchains (USE_LDG) is measured at both values, so that each
/// toolchain is seen once with and once without it.
pub fn hint_points(
    kernels: &[&'static KernelSpec],
    defines: &[(String, i64)],
    precision: Precision,
    base: &Hints,
) -> Vec<std::result::Result<Point, (String, Status)>> {
    labelled_points(kernels, defines, precision, |spec| {
        let baseline = spec.own_hints(base);
        let mut variants = vec![("baseline".to_string(), baseline.clone())];
        for s in spec.switches {
            let values: Vec<bool> = match baseline.switch(s.name()) {
                Some(v) => vec![!v],
                None if s.published_opencl == s.published_cuda => vec![!s.published_opencl],
                None => vec![false, true],
            };
            for v in values {
                variants.push((
                    format!("{}={}", s.name(), u8::from(v)),
                    spec.own_hints(&baseline.with_switch(s.name(), v)),
                ));
            }
        }
        let fast = Hints {
            fast_math: !baseline.fast_math,
            ..baseline.clone()
        };
        variants.push(("fast math".to_string(), fast));
        variants
    })
}

/// The PTX `session`'s toolchain makes of `point` (compiled, then released);
/// `None` where it gives none or the build fails (the native lane reports that).
fn ptx_of(session: &Session, point: &Point) -> Option<String> {
    let mut be = session.backend.borrow_mut();
    let tc = be.toolchain();
    let options = point.spec.compile_options(&point.config, &point.hints, tc);
    let (program, report) =
        (be.compile(point.spec.entry, &point.spec.source(tc), &options)).ok()?;
    be.release_program(program);
    report.ptx
}

/// The PTX `session`'s toolchain makes of a user's kernel at `config`.
fn user_ptx_of(
    session: &Session,
    kernel: &UserKernel,
    config: &Config,
    hints: &Hints,
) -> Option<String> {
    let mut be = session.backend.borrow_mut();
    let (program, report) =
        crate::experiment::user::run::build(&mut be, kernel, config, hints).ok()?;
    be.release_program(program);
    report.ptx
}

/// The lanes of a JIT point: CUDA native, OpenCL native, then each front end's PTX
/// loaded as PTX through each runtime: NVIDIA OpenCL's and NVRTC's through the CUDA
/// driver's JIT and through NVIDIA's OpenCL runtime as a program binary (the 2 x 2
/// that tells the PTX's share of a CUDA-OpenCL gap from the runtime's), and clang's
/// through the OpenCL runtime where a clang toolchain is in the run (its own rows are
/// its PTX through the CUDA driver).
fn jit_lanes(
    sessions: &[Session],
    ptx_of: impl Fn(&Session) -> Option<String>,
) -> Result<Vec<Lane>> {
    let toolchain = |s: &Session| s.backend.borrow().info().toolchain;
    let find = |tc: Toolchain| sessions.iter().position(|s| toolchain(s) == tc);
    let (Some(cu), Some(cl)) = (find(Toolchain::Cuda), find(Toolchain::OpenCl)) else {
        return Err(Error::invalid(
            "the jit sweep needs CUDA and NVIDIA OpenCL on the same GPU",
        ));
    };
    let opencl = sessions[cl].backend.borrow().info().clone();
    if !opencl.is_nvidia() {
        return Err(Error::invalid(format!(
            "the jit sweep needs NVIDIA OpenCL (its PTX); the OpenCL device is {}",
            opencl.name
        )));
    }
    let native = |session| Lane {
        session,
        source: Source::Native,
        variant: None,
    };
    let mut lanes = vec![native(cu), native(cl)];
    let clang = (0..sessions.len()).filter(|&i| {
        matches!(
            toolchain(&sessions[i]),
            Toolchain::ClangCuda | Toolchain::ClangOpenCl
        )
    });
    for from in [cl, cu].into_iter().chain(clang) {
        let Some(ptx) = ptx_of(&sessions[from]) else {
            continue;
        };
        let front = toolchain(&sessions[from]);
        let runtimes: &[usize] = match front {
            Toolchain::Cuda | Toolchain::OpenCl => &[cu, cl],
            _ => &[cl],
        };
        for &session in runtimes {
            lanes.push(Lane {
                session,
                source: Source::Ptx(ptx.clone()),
                variant: Some(ptx_variant(front).into()),
            });
        }
    }
    Ok(lanes)
}

/// Runs a sweep over sizes; cuBLAS is measured at each size so every row has a ratio.
#[allow(clippy::too_many_arguments)]
pub fn run_sweep(
    sessions: &mut [Session],
    kind: SweepKind,
    points: &[std::result::Result<Point, (String, Status)>],
    sizes: &[(usize, usize, usize)],
    precision: crate::kernel::builtin::Precision,
    plan: &Plan,
    seed: u64,
    writer: &mut ResultWriter,
    progress: &crate::measure::progress::Progress,
    mut on_size_done: impl FnMut(&[Measurement]),
) -> Result<()> {
    let experiment = kind.name();
    for &(m, n, k) in sizes {
        let mut call = crate::gemm::problem::Problem::plain(m, n, k);
        call.precision = precision;
        let problem = match Problem::prepare(sessions, &call, seed, plan, progress) {
            Ok(p) => p,
            Err(status) => {
                let ids = points.iter().map(|p| match p {
                    Ok(point) => point.spec.id.to_string(),
                    Err((kernel, _)) => kernel.clone(),
                });
                let rows = refused_size(sessions, ids, &status, (m, n, k), experiment, writer)?;
                progress.inc(points.len() as u64);
                on_size_done(&rows);
                continue;
            }
        };
        if sessions
            .iter()
            .any(|s| s.backend.borrow().vendor_blas().is_some())
        {
            progress.set_message(format!("{m}x{n}x{k}: cuBLAS"));
        }
        let vendor = measure_vendor(sessions, &problem, plan, experiment);
        if let Some(v) = sessions
            .iter()
            .find_map(|s| s.backend.borrow().vendor_blas())
        {
            writer.env_mut().vendor_blas = Some(v);
        }
        let mut rows_of_size: Vec<Measurement> = vendor.clone();
        for row in &vendor {
            writer.push(row.clone())?;
        }
        for (i, p) in points.iter().enumerate() {
            let rows = match p {
                // Measured with its kernel's base point, interleaved (`jit_items_of`).
                Ok(point) if kind == SweepKind::Jit && point.hints.carveout.is_some() => {
                    progress.inc(1);
                    continue;
                }
                Ok(point) => {
                    progress.set_message(format!(
                        "{m}x{n}x{k}: {} {}",
                        point.spec.id,
                        point.label.as_deref().unwrap_or("")
                    ));
                    if kind == SweepKind::Jit {
                        let lanes = jit_lanes(sessions, |s| ptx_of(s, point))?;
                        let items = jit_items_of(sessions, &points[i..], lanes);
                        measure_items(sessions, &items, &problem, plan, experiment, &vendor)
                    } else {
                        measure_point(sessions, point, &problem, plan, experiment, &vendor)
                    }
                }
                Err((kernel, status)) => {
                    failed_rows(sessions, kernel, status, (m, n, k), experiment)
                }
            };
            for row in rows {
                writer.push(row.clone())?;
                rows_of_size.push(row);
            }
            progress.inc(1);
        }
        for s in sessions.iter_mut() {
            s.unload();
        }
        on_size_done(&rows_of_size);
    }
    Ok(())
}

/// A sweep over users' kernels: every kernel at every size, each variant of the
/// hints (register caps, fast math) on every session, or, for `jit`, each
/// toolchain's PTX through the CUDA driver beside the native builds; all
/// interleaved, one row per variant and lane.
#[allow(clippy::too_many_arguments)]
pub fn run_user_sweep(
    sessions: &mut [Session],
    opts: &SpecCompare,
    kind: SweepKind,
    variants: &[(String, Hints)],
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_point_done: impl FnMut(&[Measurement]),
) -> Result<()> {
    let planned = opts.plan_points()?;
    for (k, points) in planned {
        let config = crate::experiment::user::config_for(k, &opts.defines)?;
        let items = match kind {
            SweepKind::Jit => {
                let lanes = jit_lanes(sessions, |s| user_ptx_of(s, k, &config, &opts.hints))?;
                jit_items(sessions, lanes, &config, variants)
            }
            SweepKind::Tiling => tile_items(k, sessions.len(), &opts.hints)?,
            _ => variant_items(sessions.len(), &config, variants),
        };
        for dims in points {
            let size = UserKernel::describe_dims(&dims);
            progress.set_message(format!("{}: {size}: reference", k.id));
            let refs = references(sessions, k, &dims, opts.seed);
            progress.set_message(format!("{}: {size}: {} lanes", k.id, items.len()));
            let rows = measure_spec_items(
                sessions,
                k,
                &items,
                &dims,
                &refs,
                &opts.plan,
                opts.seed,
                kind.name(),
            );
            for r in &rows {
                writer.push(r.clone())?;
            }
            progress.inc(1);
            on_point_done(&rows);
        }
    }
    Ok(())
}

/// The most configurations `sweep tiling` runs of a user's kernel; a larger
/// space is for `tune`, which searches it.
pub const MAX_TILE_POINTS: usize = 64;

/// `sweep tiling` of a user's kernel: every combination of its parameters that
/// its parameter constraints allow, on every session, labelled by the values.
fn tile_items(k: &UserKernel, sessions: usize, hints: &Hints) -> Result<Vec<Item>> {
    if k.params.is_empty() {
        return Err(Error::invalid(format!(
            "sweep tiling of {}: it has no parameters to vary (a spec's [[params]] are its tiles)",
            k.id
        )));
    }
    let configs: Vec<Config> = (k.configs().into_iter())
        .filter(|c| k.param_violation(c).is_none())
        .collect();
    if configs.len() > MAX_TILE_POINTS {
        return Err(Error::invalid(format!(
            "sweep tiling of {}: {} configurations satisfy its constraints, more than {MAX_TILE_POINTS}: search them with gemmlab tune --spec {} --strategy exhaustive",
            k.id,
            configs.len(),
            k.path.display()
        )));
    }
    Ok(configs
        .iter()
        .flat_map(|c| {
            (0..sessions).map(move |session| Item {
                config: c.clone(),
                hints: hints.clone(),
                label: Some(c.describe()),
                lane: Lane::native(session),
            })
        })
        .collect())
}

/// Each variant of the hints on every session, labelled with the variant.
fn variant_items(sessions: usize, config: &Config, variants: &[(String, Hints)]) -> Vec<Item> {
    variants
        .iter()
        .flat_map(|(label, hints)| {
            (0..sessions).map(move |session| Item {
                config: config.clone(),
                hints: hints.clone(),
                label: Some(label.clone()),
                lane: Lane::native(session),
            })
        })
        .collect()
}
