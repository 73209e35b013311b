//! The complete GEMM routine, as a BLAS library offers it:
//! C = alpha op(A) op(B) + beta C, row- or column-major, either operand
//! transposed, leading dimensions and offsets, f32 and f64, any M, N, K >= 0.
//!
//! Like CLBlast, it runs one of two kernels: the direct kernel (one launch,
//! any shape) for small problems, the indirect kernel (pack, a kernel on tile
//! multiples, unpack) for large ones. Where one ends and the other begins is
//! measured per device, toolchain and precision by `gemmlab crossover` and kept
//! in the database of bests with the tuned configurations of both kernels.
//!
//! Where `gemmlab tune --suite` has tuned calls, the routine chooses per call
//! instead, from every family that can run it (the direct kernel, the indirect
//! one, the SIMT family with its split-K), by the class of the call's shape, its
//! layout and transposes and the nearest tuned shape (`shape::select`).
//!
//! Quick returns are BLAS's: M = 0 or N = 0 does nothing; K = 0 or alpha = 0
//! only scales C by beta (C = 0 where beta is 0, without reading C).

pub mod adapt;
pub mod fit;
pub mod shape;
pub mod suite;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::backend::{
    AnyBackend, Artefact, Backend, Buffer, CompileOptions, Compiler, DeviceInfo, HostData,
    HostDataMut, Program, Toolchain,
};
use crate::error::{Error, Result};
use crate::gemm::check::Real;
use crate::gemm::driver::{upload_real, Session};
use crate::gemm::problem::{Matrix, Precision, Problem, Trans};
use crate::gemm::stage::{self, Staged};
use crate::kernel::builtin::{self as kernels, Arithmetic, Config, Hints, KernelSpec};
use crate::measure::Stats;
use crate::results::bests::{Database, RoutineEntry};

/// The experiment name of the routine's result records (`gemmlab gemm --out`).
pub const ROUTINE: &str = "routine";

/// The two kernels of the routine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    Direct,
    Indirect,
}

impl Path {
    pub const ALL: [Path; 2] = [Path::Direct, Path::Indirect];

    pub fn kernel(self) -> &'static str {
        match self {
            Path::Direct => "xgemmdirect",
            Path::Indirect => "xgemm",
        }
    }

    pub fn spec(self) -> Result<&'static KernelSpec> {
        kernels::find(self.kernel())
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Indirect => "indirect",
        }
    }
}

/// The routine's choices for one toolchain and precision on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    pub direct: Config,
    pub indirect: Config,
    /// Problems with M*N*K at or above `min_indirect^3` take the indirect kernel
    /// (CLBlast's XGEMM_MIN_INDIRECT_SIZE). `None`: not measured, the default applies.
    pub min_indirect: Option<usize>,
    /// Where the configurations and the crossover come from, for reports.
    pub source: String,
}

/// The crossover CLBlast ships for devices it has not measured.
pub const DEFAULT_MIN_INDIRECT: usize = 384;

impl Tuning {
    /// Both kernels at their published defaults, the default crossover.
    pub fn published(precision: Precision) -> Result<Tuning> {
        let cfg = |path: Path| -> Result<Config> {
            let spec = path.spec()?;
            spec.with_precision(&spec.defaults(), precision)
        };
        Ok(Tuning {
            direct: cfg(Path::Direct)?,
            indirect: cfg(Path::Indirect)?,
            min_indirect: None,
            source: "published defaults".into(),
        })
    }

    /// The tuned configurations (nearest tuned size: 1024 cube) and the measured
    /// crossover from the database, falling back to the published ones.
    pub fn from_database(
        db: &Database,
        toolchain: Toolchain,
        precision: Precision,
    ) -> Result<Tuning> {
        let mut t = Tuning::published(precision)?;
        let mut from = Vec::new();
        for path in Path::ALL {
            let spec = path.spec()?;
            let size = match path {
                Path::Direct => (256, 256, 256),
                Path::Indirect => (4096, 4096, 4096),
            };
            let ask = crate::results::bests::Ask {
                kernel: spec.id,
                toolchain,
                precision,
                size,
                source: Some(crate::util::keys::fnv1a(&spec.source(toolchain))),
            };
            let served = db.lookup_ranked(&ask, |b| {
                b.call.is_none() && spec.validate(&b.config).is_ok()
            });
            if let Some(served) = served {
                let best = served.entry;
                let c = spec.with_precision(&best.config, precision)?;
                match path {
                    Path::Direct => t.direct = c,
                    Path::Indirect => t.indirect = c,
                }
                let why = served.why.map(|w| format!(" ({w})")).unwrap_or_default();
                from.push(format!(
                    "{} tuned at {}x{}x{}{why}",
                    spec.id, best.m, best.n, best.k
                ));
            }
        }
        if let Some(x) = db.crossover(toolchain, precision) {
            t.min_indirect = Some(x.min_indirect);
            from.push(format!("crossover {} measured", x.min_indirect));
        }
        if !from.is_empty() {
            t.source = format!("{} ({})", db.device, from.join(", "));
        }
        Ok(t)
    }

    /// Which kernel computes `p`.
    pub fn choose(&self, p: &Problem) -> Path {
        let edge = self.min_indirect.unwrap_or(DEFAULT_MIN_INDIRECT) as u128;
        if (p.m as u128) * (p.n as u128) * (p.k as u128) >= edge * edge * edge {
            Path::Indirect
        } else {
            Path::Direct
        }
    }

    pub fn config(&self, path: Path) -> &Config {
        match path {
            Path::Direct => &self.direct,
            Path::Indirect => &self.indirect,
        }
    }
}

/// What a call needs done, once its arguments are checked.
enum Work {
    /// BLAS's quick return: nothing to compute.
    Nothing,
    /// C = beta C only (K = 0 or alpha = 0).
    Scale(stage::Step),
    /// The product, by the choice made for the call.
    Product(Choice),
}

/// What one call did, with its device time in parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutineRun {
    /// `None` for a quick return (nothing launched, or C only scaled), or a kernel
    /// other than the direct and indirect ones.
    pub path: Option<Path>,
    /// The kernel that ran; `None` for a quick return.
    #[serde(default)]
    pub kernel: Option<String>,
    pub pre_ns: u64,
    pub kernel_ns: u64,
    pub post_ns: u64,
}

impl RoutineRun {
    pub fn total_ns(&self) -> u64 {
        self.pre_ns + self.kernel_ns + self.post_ns
    }
}

/// Host element types the routine takes.
pub trait Element: Real {
    fn data(s: &[Self]) -> HostData<'_>;
    fn data_mut(s: &mut [Self]) -> HostDataMut<'_>;
}

impl Element for f32 {
    fn data(s: &[f32]) -> HostData<'_> {
        HostData::F32(s)
    }
    fn data_mut(s: &mut [f32]) -> HostDataMut<'_> {
        HostDataMut::F32(s)
    }
}

impl Element for f64 {
    fn data(s: &[f64]) -> HostData<'_> {
        HostData::F64(s)
    }
    fn data_mut(s: &mut [f64]) -> HostDataMut<'_> {
        HostDataMut::F64(s)
    }
}

/// The GEMM routine on one session, with its compiled kernels kept between calls.
pub struct Gemm {
    tunings: HashMap<Precision, Tuning>,
    /// The per-call choices of this toolchain (`gemmlab tune --suite`).
    routine: Vec<RoutineEntry>,
    /// Compiled kernels by kernel id, configuration with its hints, and precision.
    programs: HashMap<ProgramKey, Program>,
    /// Force one kernel (tests, crossover measurement); `None`: by the crossover.
    pub force: Option<Path>,
    /// Run this kernel, configuration and hints for every call (`tune --suite`
    /// measures its candidates so).
    pub force_choice: Option<(String, Config, Hints)>,
    /// f32 calls may run a kernel that emulates FP32 from TF32 tensor-core products
    /// (3xTF32; opt-in, as cuBLAS's emulated math modes are). Off: FP32 arithmetic only.
    pub fp32_emulation: bool,
    /// The device the calls run on: with it, a call no entry was tuned for is
    /// given the configuration the cost model ranks fastest (`adapt`). `run`
    /// sets it from its session where it is not set.
    pub device: Option<DeviceInfo>,
    /// How a call no entry was tuned for is given its kernel.
    pub selection: Selection,
    /// Kernels (ids) the routine does not choose: their entries are passed over and
    /// no configuration of theirs is fitted or timed (`gemm --exclude`).
    pub exclude: Vec<String>,
    /// Choices `Selection::Measure` made by timing, by call (`learned_key`).
    learned: HashMap<String, Choice>,
}

/// How the routine chooses for a call no database entry was tuned for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selection {
    /// The entry of the nearest tuned shape, as tuned.
    Nearest,
    /// The cost model's pick where it predicts a clear gain over the nearest
    /// entry (`adapt::better_than_nearest`), else the nearest entry.
    Model,
    /// On the call's first run, time the nearest entry and the cost model's
    /// best-ranked configurations of other entries (`MEASURED` in all) on a
    /// scratch C, and keep the fastest for the call, as cuDNN's benchmark mode
    /// and Triton's autotuner do; a learned choice lasts as long as the `Gemm`.
    /// (`choose` alone, which runs nothing, gives the nearest entry.)
    #[default]
    Measure,
}

/// How many of a call's choices reading an operand along K `Selection::Measure` also
/// times with it copied the other way (each is one more build on the call's first run).
const ALONG_K_FLIPS: usize = 3;

/// How many of a call's choices that have B packed, where the call stores it along K,
/// `Selection::Measure` also times reading it as stored and keeping it so in the local
/// tile (`KTILE_B`): up to 1.07x on held-out calls near 1024^3 on the H200, and
/// slower than the pack at 2048^3, so it is timed, not assumed.
const KTILE_TWINS: usize = 2;

/// How many of a call's in-place choices that read their operands' forms at run time
/// `Selection::Measure` also times compiled for the call's own form (`FIXED_FORM`, or
/// `ALONG_MN` for a call stored along M and N): no code for the other forms (167
/// registers against 213 at 64 x 64 for column-major NN with NVRTC 13), nothing
/// transposed where the call is aligned.
const FORM_TWINS: usize = 2;

/// How many choices `Selection::Measure` times for a call: the nearest entry,
/// the next nearest, and the model's best-ranked configurations of others (and
/// besides, each SIMT kernel's nearest entry re-tiled for the call where the model
/// predicts a clear gain, and for a thin call the `thin` kernel fitted to its shape).
pub const MEASURED: usize = 5;
/// Timed batches of each choice `Selection::Measure` times in a round (after one warm-up call).
const MEASURE_RUNS: usize = 3;
/// Rounds over all the choices; each choice's fastest round counts.
const MEASURE_ROUNDS: usize = 2;

/// Choices whose first-run time is within this share of the fastest's are timed
/// again before one is kept: two rounds ordered such near-ties either way on the
/// H200 (`thin` 134.1 us against `simtdirect` 134.9 us at 4096x36x8192 on OpenCL,
/// where that `simtdirect` then ran 122 us: results/h200/routine/thin-pipe/).
const NEAR_TIE: f64 = 0.10;

/// The choices (indices) whose best time so far is within `NEAR_TIE` of the
/// fastest; none where fewer than two were timed.
fn near_ties(best: &[Option<f64>]) -> Vec<usize> {
    let Some(fastest) = best.iter().flatten().copied().reduce(f64::min) else {
        return Vec::new();
    };
    let near: Vec<usize> = (best.iter().enumerate())
        .filter(|(_, t)| t.is_some_and(|t| t <= fastest * (1.0 + NEAR_TIE)))
        .map(|(i, _)| i)
        .collect();
    match near.len() {
        0 | 1 => Vec::new(),
        _ => near,
    }
}

/// The key of a call's learned choice: everything that makes two calls differ.
fn learned_key(p: &Problem) -> String {
    format!("{p:?}")
}

/// What the routine runs for a call, and why.
#[derive(Debug, Clone)]
pub struct Choice {
    pub kernel: &'static KernelSpec,
    pub config: Config,
    /// Switches and register cap it is compiled with (published: none).
    pub hints: Hints,
    pub why: String,
}

/// `thin`'s configurations fitted to call `p`'s shape (every form, at the call's
/// precision) that `device` takes, with the hints each is compiled with: none
/// where no side of C is short. The pipelined form comes twice where the device
/// says its register file: as it compiles, and capped at the registers that keep
/// its work-groups as many a unit as the fit split K for (without the launch
/// bounds a compiler would drop the cap for), so timing decides what a compiler's
/// extra registers cost.
pub fn thin_fits(p: &Problem, device: &DeviceInfo) -> Vec<(Config, Hints)> {
    let spec = &kernels::thin::THIN;
    let c = p.column_major();
    let units = device.compute_units.unwrap_or(1) as usize;
    let registers = device.registers_per_sm.or(device.registers_per_block);
    let capped = |config: &Config| {
        let cap = kernels::thin::register_budget(config, registers?)?;
        let hints = Hints {
            max_registers: Some(cap),
            ..Hints::default()
        };
        Some(match device.ignores_caps_with_bounds() {
            true => hints.with_switch("USE_BOUNDS", false),
            false => hints,
        })
    };
    // The large operand: B where M is short (K-contiguous stored as is), else
    // A (K-contiguous stored transposed).
    let large_along_k = match c.m <= c.n {
        true => c.trans_b == Trans::N,
        false => c.trans_a == Trans::T,
    };
    (kernels::thin::fits(c.m, c.n, c.k, units, large_along_k).into_iter())
        .filter_map(|config| spec.with_precision(&config, p.precision).ok())
        .flat_map(|config| {
            let cap = capped(&config).map(|h| (config.clone(), h));
            [Some((config, Hints::default())), cap]
                .into_iter()
                .flatten()
        })
        .filter(|(config, hints)| spec.unavailable_at(config, device, hints).is_none())
        .collect()
}

/// A call's runnable tuned entries as its choices are made from them.
struct Entries<'a> {
    p: &'a Problem,
    own: &'a [(RoutineEntry, &'static KernelSpec, Config)],
    entries: &'a [RoutineEntry],
    candidates: Vec<adapt::Candidate<'a>>,
    /// The nearest tuned shape's entry.
    at: usize,
    class: shape::ShapeClass,
}

impl<'a> Entries<'a> {
    fn new(
        p: &'a Problem,
        own: &'a [(RoutineEntry, &'static KernelSpec, Config)],
        entries: &'a [RoutineEntry],
        at: usize,
    ) -> Entries<'a> {
        let candidates = own
            .iter()
            .map(|(e, spec, config)| adapt::Candidate {
                entry: e,
                spec,
                config: config.clone(),
            })
            .collect();
        Entries {
            p,
            own,
            entries,
            candidates,
            at,
            class: shape::ShapeClass::of(p.m, p.n, p.k),
        }
    }

    /// The choice of the model's ranked configuration `r`, with its entry's hints.
    fn pick(&self, r: &adapt::Ranked, why: String) -> Choice {
        let (e, spec, _) = &self.own[r.index];
        Choice {
            kernel: spec,
            config: r.config.clone(),
            hints: e.hints.clone(),
            why,
        }
    }

    /// Whether choice `c` is the ranked configuration `r` with its entry's hints.
    fn same(&self, c: &Choice, r: &adapt::Ranked) -> bool {
        c.kernel.id == self.own[r.index].1.id
            && c.config == r.config
            && c.hints == self.own[r.index].0.hints
    }

    /// "MxNxK call" of the entry at `i`.
    fn tuned_at(&self, i: usize) -> String {
        let e = &self.entries[i];
        format!("{}x{}x{} {}", e.m, e.n, e.k, e.call)
    }
}

/// The ways of sharing K a configuration has, as "SPLITK 1 STREAMK 0".
fn k_sharing(c: &Config) -> String {
    let named = ["SPLITK", "STREAMK", "TAILK", "WAVE"].into_iter();
    let had: Vec<String> = named
        .filter(|n| c.0.contains_key(*n))
        .map(|n| format!("{n} {}", c.get(n)))
        .collect();
    had.join(" ")
}

impl Gemm {
    /// Published configurations in both precisions.
    pub fn published() -> Result<Gemm> {
        let mut tunings = HashMap::new();
        for p in Precision::ALL {
            tunings.insert(p, Tuning::published(p)?);
        }
        Ok(Gemm {
            tunings,
            routine: Vec::new(),
            programs: HashMap::new(),
            force: None,
            force_choice: None,
            fp32_emulation: false,
            device: None,
            selection: Selection::default(),
            exclude: Vec::new(),
            learned: HashMap::new(),
        })
    }

    /// The configurations and crossover tuned for this device and toolchain.
    pub fn tuned(db: &Database, toolchain: Toolchain) -> Result<Gemm> {
        let mut g = Gemm::published()?;
        for p in Precision::ALL {
            g.tunings
                .insert(p, Tuning::from_database(db, toolchain, p)?);
            g.routine.extend(db.routine_for(toolchain, p));
        }
        Ok(g)
    }

    /// Replaces the tuning of one precision.
    pub fn set_tuning(&mut self, precision: Precision, tuning: Tuning) {
        self.tunings.insert(precision, tuning);
        self.programs.retain(|(_, _, p), _| *p != precision);
    }

    /// Calls `tune --suite` chose a kernel for (all precisions).
    pub fn tuned_calls(&self) -> usize {
        self.routine.len()
    }

    pub fn tuning(&self, precision: Precision) -> Option<&Tuning> {
        self.tunings.get(&precision)
    }

    /// Which kernel and configuration compute `p`: a forced one, else one
    /// `Selection::Measure` learned for the call, else the entry of the
    /// routine's database that fits the call best (or the cost model's pick),
    /// else the direct or indirect kernel by the crossover.
    pub fn choose(&self, p: &Problem) -> Result<Choice> {
        if self.force_choice.is_none() && self.force.is_none() {
            if let Some(c) = self.learned.get(&learned_key(p)) {
                return Ok(c.clone());
            }
        }
        Ok(self.choices(p)?.0)
    }

    /// The choice for `p` by the database and the selection, and the others
    /// `Selection::Measure` times beside it (none where the call has an entry
    /// of its own, or another selection).
    pub fn choices(&self, p: &Problem) -> Result<(Choice, Vec<Choice>)> {
        let tuning = self
            .tunings
            .get(&p.precision)
            .ok_or_else(|| Error::invalid(format!("no {} configuration", p.precision)))?;
        if let Some(forced) = self.forced(p, tuning)? {
            return Ok((forced, Vec::new()));
        }
        let own = self.runnable_entries(p);
        let entries: Vec<RoutineEntry> = own.iter().map(|(e, _, _)| e.clone()).collect();
        if let Some((e, fit)) = shape::select(&entries, p) {
            let at = entries.iter().position(|x| std::ptr::eq(x, e)).unwrap_or(0);
            let tuned = Entries::new(p, &own, &entries, at);
            return Ok(self.by_entries(&tuned, fit));
        }
        let path = tuning.choose(p);
        let by_crossover = Choice {
            kernel: path.spec()?,
            config: tuning.config(path).clone(),
            hints: Hints::default(),
            why: format!(
                "no tuned calls: {} by the crossover at {}^3",
                path.as_str(),
                tuning.min_indirect.unwrap_or(DEFAULT_MIN_INDIRECT)
            ),
        };
        Ok((by_crossover, Vec::new()))
    }

    /// The choice forced on every call: `force_choice` (an error where the routine
    /// refuses it), else the `force`d path with its tuned configuration.
    fn forced(&self, p: &Problem, tuning: &Tuning) -> Result<Option<Choice>> {
        if let Some((kernel, config, hints)) = &self.force_choice {
            let spec = kernels::find(kernel)?;
            let config = spec.with_precision(config, p.precision)?;
            if let Some(why) = self.refuses(spec, &config, hints) {
                return Err(Error::Constraint {
                    kernel: spec.id.into(),
                    message: why,
                    values: format!("{} {}", config.describe(), hints.describe(true)),
                });
            }
            return Ok(Some(Choice {
                kernel: spec,
                config,
                hints: hints.clone(),
                why: "forced".into(),
            }));
        }
        let Some(path) = self.force else {
            return Ok(None);
        };
        Ok(Some(Choice {
            kernel: path.spec()?,
            config: tuning.config(path).clone(),
            hints: Hints::default(),
            why: format!("forced {}", path.as_str()),
        }))
    }

    /// The database entries at `p`'s precision this build can run: a kernel that
    /// changed since (a parameter added or dropped) no longer validates, and the
    /// nearest valid entry is taken instead.
    fn runnable_entries(&self, p: &Problem) -> Vec<(RoutineEntry, &'static KernelSpec, Config)> {
        self.routine
            .iter()
            .filter(|e| e.precision == p.precision)
            .filter_map(|e| {
                let spec = kernels::find(&e.kernel).ok()?;
                if self.exclude.iter().any(|x| x == spec.id) {
                    return None;
                }
                let config = spec.with_precision(&e.config, p.precision).ok()?;
                spec.validate(&config).ok()?;
                if self.refuses(spec, &config, &e.hints).is_some() {
                    return None;
                }
                Some((e.clone(), spec, config))
            })
            .collect()
    }

    /// The choice for a call from the tuned entries, `fit` saying how the nearest
    /// fits it, and the others `Selection::Measure` times beside it.
    fn by_entries(&self, t: &Entries, fit: shape::Fit) -> (Choice, Vec<Choice>) {
        let untuned = fit != shape::Fit::Exact;
        if let Some(modelled) = self.modelled(t, untuned) {
            return (modelled, Vec::new());
        }
        let (_, spec, config) = t.own[t.at].clone();
        let nearest = Choice {
            kernel: spec,
            config,
            hints: t.own[t.at].0.hints.clone(),
            why: format!(
                "{} class, {}: {}",
                t.class,
                fit.describe(),
                t.tuned_at(t.at)
            ),
        };
        match (&self.device, untuned, self.selection) {
            (Some(device), true, Selection::Measure) => {
                let others = self.to_measure(t, device, &nearest);
                (nearest, others)
            }
            _ => (nearest, Vec::new()),
        }
    }

    /// `Selection::Model`'s pick for a call not tuned, where the cost model predicts
    /// a clear gain over the nearest tuned shape.
    fn modelled(&self, t: &Entries, untuned: bool) -> Option<Choice> {
        let device = match &self.device {
            // Small calls are launches and packing more than work: the model
            // does not rank them (they run ahead of cuBLAS as tuned).
            Some(device)
                if untuned
                    && self.selection == Selection::Model
                    && t.class != shape::ShapeClass::Small =>
            {
                device
            }
            _ => return None,
        };
        let r = adapt::better_than_nearest(&t.candidates, t.at, t.p, device)?;
        let tuned = &t.own[r.index].2;
        let (from, to) = (k_sharing(tuned), k_sharing(&r.config));
        let split = if from == to {
            String::new()
        } else {
            format!(", {from} -> {to}")
        };
        let why = format!(
            "{} class, the cost model's pick for a call not tuned ({:.0} us predicted{split}; the nearest tuned shape {} predicted slower): tuned at {}",
            t.class,
            r.seconds * 1e6,
            t.tuned_at(t.at),
            t.tuned_at(r.index),
        );
        Some(t.pick(&r, why))
    }

    /// What `Selection::Measure` times beside the `nearest` entry's choice for a call
    /// not tuned: the cost model's best-ranked entries, the nearest entries re-tiled
    /// for the call, their twins (operands along K copied the other way, B kept along
    /// K, compiled for the call's form), and for a thin call `thin` fitted to it.
    fn to_measure(&self, t: &Entries, device: &DeviceInfo, nearest: &Choice) -> Vec<Choice> {
        let class = t.class;
        let mut others: Vec<Choice> =
            adapt::to_time(&t.candidates, t.at, t.p, device, MEASURED - 1)
                .iter()
                .map(|r| {
                    let why = format!(
                        "{class} class, ranked by the cost model ({:.0} us predicted): tuned at {}",
                        r.seconds * 1e6,
                        t.tuned_at(r.index)
                    );
                    t.pick(r, why)
                })
                .collect();
        let ranked = others.len();
        let mut sliced: Vec<Choice> = Vec::new();
        for r in adapt::retiled_for(&t.candidates, t.at, t.p, device) {
            if others.iter().chain([nearest]).any(|c| t.same(c, &r)) {
                continue;
            }
            let why = format!(
                "{class} class, re-tiled for the call by the cost model ({:.0} us predicted): tuned at {}",
                r.seconds * 1e6,
                t.tuned_at(r.index)
            );
            match r.config.get("SLICEK") > t.own[r.index].2.get("SLICEK").max(1) {
                true => sliced.push(t.pick(&r, why)),
                false => others.push(t.pick(&r, why)),
            }
        }
        // The re-tilings first: the cost model fitted their tiles to this call,
        // while their switches come from another shape (33x8192x4096 NN's
        // re-tiled choice, 120 us copying B by cp.async, ran 107 us through
        // registers, behind three flips of slower choices). Those given slices
        // of K are timed beside the rest, not in their place: with their own
        // twins compiled for the call's form (32x50257x768 NN's fastest).
        let p = t.p;
        let order = (others[ranked..].iter())
            .chain(std::iter::once(nearest))
            .chain(&others[..ranked]);
        let flipped = self.along_k_flips(p, order.clone());
        let kept = self.b_kept_along_k(p, order.clone());
        let formed = self.in_call_form(p, order);
        let sliced_formed = self.in_call_form(p, sliced.iter());
        others.extend(sliced);
        others.extend(sliced_formed);
        others.extend(flipped);
        others.extend(kept);
        others.extend(formed);
        others.extend(self.thin_fitted(p));
        others
    }

    /// For a thin call (a side of C at most 64), the `thin` kernel in the
    /// configurations fitted to its shape (the large operand read straight from
    /// global memory, staged in local memory, and prefetched), where this device takes
    /// them: no database entry needs to hold them for them to be timed.
    fn thin_fitted(&self, p: &Problem) -> Vec<Choice> {
        let spec = &kernels::thin::THIN;
        let Some(device) = self.device.as_ref() else {
            return Vec::new();
        };
        if self.exclude.iter().any(|x| x == spec.id) {
            return Vec::new();
        }
        (thin_fits(p, device).into_iter())
            .filter(|(config, hints)| self.refuses(spec, config, hints).is_none())
            .map(|(config, hints)| Choice {
                kernel: spec,
                why: format!(
                    "a thin call: thin fitted to its shape ({}{})",
                    config.describe(),
                    match hints == Hints::default() {
                        true => String::new(),
                        false => format!("; {}", hints.describe(true)),
                    }
                ),
                config,
                hints,
            })
            .collect()
    }

    /// The first `ALONG_K_FLIPS` of `choices` (the caller puts the re-tilings first)
    /// that read an operand along K for `p`, each
    /// with that operand copied the other way (by cp.async or through registers,
    /// `kernels::along_k_copy_flipped`), where not among `choices` already: which way
    /// is faster depends on the tiles, and a re-tiled entry's switches were chosen at
    /// another shape.
    fn along_k_flips<'c>(
        &self,
        p: &Problem,
        choices: impl Iterator<Item = &'c Choice> + Clone,
    ) -> Vec<Choice> {
        let Some(device) = &self.device else {
            return Vec::new();
        };
        let flipped = |c: &Choice| {
            let along_k = fit::reads_along_k(c.kernel, &c.config, p);
            let hints = kernels::along_k_copy_flipped(
                c.kernel,
                &c.config,
                &c.hints,
                along_k,
                device.toolchain,
            )?;
            // Taken where a choice builds the same (a switch set to its published
            // state and one left unset are the same kernel).
            let tc = device.toolchain;
            let build = c.kernel.compile_options(&c.config, &hints, tc);
            let taken = (choices.clone()).any(|o| {
                o.kernel.id == c.kernel.id
                    && o.config == c.config
                    && o.kernel.compile_options(&o.config, &o.hints, tc) == build
            });
            let way = match hints.switch("ASYNC_ALONG_K") {
                Some(true) => "by cp.async",
                _ => "through registers",
            };
            (!taken && self.runs_here(device, c.kernel, &c.config, &hints)).then(|| Choice {
                kernel: c.kernel,
                config: c.config.clone(),
                hints,
                why: format!("{}; its operands along K copied {way}", c.why),
            })
        };
        (choices.clone())
            .filter_map(flipped)
            .take(ALONG_K_FLIPS)
            .collect()
    }

    /// The first `KTILE_TWINS` of `choices` that have B packed (read along N) where `p`
    /// stores it along K, each reading B as stored and keeping it along K in the local
    /// tile (`kernels::keeping_b_along_k`, padded where the tiles fit): the pack and the
    /// kernel's slower reads trade places with the size.
    fn b_kept_along_k<'c>(
        &self,
        p: &Problem,
        choices: impl Iterator<Item = &'c Choice>,
    ) -> Vec<Choice> {
        let Some(device) = &self.device else {
            return Vec::new();
        };
        let (a_along_k, true) = p.k_contiguous() else {
            return Vec::new();
        };
        let twin = |c: &Choice| {
            // Already reading B along K (in place, or packed K-major): nothing packed.
            if fit::reads_along_k(c.kernel, &c.config, p).1 {
                return None;
            }
            let tc = device.toolchain;
            let kept = kernels::keeping_b_along_k(c.kernel, &c.config, &c.hints, a_along_k, tc);
            kept.into_iter().find_map(|(config, hints)| {
                self.runs_here(device, c.kernel, &config, &hints)
                    .then(|| Choice {
                        kernel: c.kernel,
                        config,
                        hints,
                        why: format!("{}; B read as stored and kept along K (KTILE_B)", c.why),
                    })
            })
        };
        choices.filter_map(twin).take(KTILE_TWINS).collect()
    }

    /// The first `FORM_TWINS` of `choices` that run the in-place kernel reading the
    /// operands' forms at run time, each compiled for `p`'s own form
    /// (`kernels::compiled_for_form`).
    fn in_call_form<'c>(
        &self,
        p: &Problem,
        choices: impl Iterator<Item = &'c Choice>,
    ) -> Vec<Choice> {
        let Some(device) = &self.device else {
            return Vec::new();
        };
        let form = p.k_contiguous();
        let twin = |c: &Choice| {
            if kernels::fixed_form(&c.config).is_some() {
                return None;
            }
            let config = kernels::compiled_for_form(c.kernel, &c.config, form)?;
            let tc = device.toolchain;
            c.kernel
                .validate_with_switches(&config, &c.hints, tc)
                .ok()?;
            self.runs_here(device, c.kernel, &config, &c.hints)
                .then(|| Choice {
                    kernel: c.kernel,
                    why: format!(
                        "{}; compiled for the call's form (A along {}, B along {})",
                        c.why,
                        if form.0 { "K" } else { "M" },
                        if form.1 { "K" } else { "N" },
                    ),
                    config,
                    hints: c.hints.clone(),
                })
        };
        choices.filter_map(twin).take(FORM_TWINS).collect()
    }

    /// Whether a twin of a choice at `config` with `hints` can run on `device` and the
    /// routine would take it (`refuses`): cp.async is NVIDIA's, so elsewhere a twin using
    /// it would only fail to build.
    fn runs_here(
        &self,
        device: &DeviceInfo,
        spec: &KernelSpec,
        config: &Config,
        hints: &Hints,
    ) -> bool {
        spec.unavailable_at(config, device, hints).is_none()
            && self.refuses(spec, config, hints).is_none()
    }

    /// Why the routine does not run `spec` at `config` with `hints`: never below
    /// the call's precision, and FP32 emulation only where it is allowed.
    pub fn refuses(&self, spec: &KernelSpec, config: &Config, hints: &Hints) -> Option<String> {
        match spec.arithmetic(config, hints) {
            Arithmetic::Native => None,
            Arithmetic::EmulatedFp32 if self.fp32_emulation => None,
            Arithmetic::EmulatedFp32 => Some(format!(
                "{} computes f32 from TF32 tensor-core products (3xTF32), not in FP32 arithmetic: \
                 the routine takes it only with FP32 emulation allowed (--fp32-emulation)",
                spec.id
            )),
            Arithmetic::Lower(switch) => Some(format!(
                "{switch} as asked lowers the result below the call's precision: the routine computes at the call's precision"
            )),
        }
    }

    fn program(
        &mut self,
        session: &Session,
        choice: &Choice,
        precision: Precision,
    ) -> Result<Program> {
        let key = program_key(choice, precision)?;
        if let Some(p) = self.programs.get(&key) {
            return Ok(*p);
        }
        let mut be = session.backend.borrow_mut();
        let options = build_options(choice, precision, be.info())?;
        let tc = be.info().toolchain;
        let (program, _) = be.compile(choice.kernel.entry, &choice.kernel.source(tc), &options)?;
        self.programs.insert(key, program);
        Ok(program)
    }

    /// Loads `artefact`, built by `prebuild` for `choice` at `precision`, as the program a
    /// run with that choice takes (instead of compiling it then).
    pub fn adopt(
        &mut self,
        session: &Session,
        choice: &Choice,
        precision: Precision,
        artefact: Artefact,
    ) -> Result<()> {
        let key = program_key(choice, precision)?;
        if let std::collections::hash_map::Entry::Vacant(slot) = self.programs.entry(key) {
            let mut be = session.backend.borrow_mut();
            slot.insert(be.load(choice.kernel.entry, artefact)?.0);
        }
        Ok(())
    }

    /// C = alpha op(A) op(B) + beta C on device buffers laid out as `p` says.
    /// Arguments are checked as BLAS checks them, and against the buffers.
    pub fn run(
        &mut self,
        session: &mut Session,
        p: &Problem,
        a: Buffer,
        b: Buffer,
        c: Buffer,
    ) -> Result<RoutineRun> {
        let quick = RoutineRun {
            path: None,
            kernel: None,
            pre_ns: 0,
            kernel_ns: 0,
            post_ns: 0,
        };
        match self.resolve(session, p, a, b, c)? {
            Work::Nothing => Ok(quick),
            Work::Scale(step) => Ok(RoutineRun {
                post_ns: step.run(&mut session.backend.borrow_mut())?,
                ..quick
            }),
            Work::Product(choice) => {
                let (pre_ns, kernel_ns, post_ns) =
                    self.run_choice(session, &choice, p, [a, b, c])?;
                Ok(RoutineRun {
                    path: Path::ALL
                        .into_iter()
                        .find(|x| x.kernel() == choice.kernel.id),
                    kernel: Some(choice.kernel.id.to_string()),
                    pre_ns,
                    kernel_ns,
                    post_ns,
                })
            }
        }
    }

    /// `count` calls as `run` makes them, back to back (at least one), timed as one
    /// span of device time: the nanoseconds of all of them (0 for a quick return).
    /// How the routine is timed: host work between launches counts only where the
    /// device waits for it, on every toolchain alike.
    pub fn time_calls(
        &mut self,
        session: &mut Session,
        p: &Problem,
        [a, b, c]: [Buffer; 3],
        count: usize,
    ) -> Result<u64> {
        match self.resolve(session, p, a, b, c)? {
            Work::Nothing => Ok(0),
            Work::Scale(step) => session
                .backend
                .borrow_mut()
                .launch_sequence(&[step.launch()], count),
            Work::Product(choice) => self.time_choice(session, &choice, p, [a, b, c], count),
        }
    }

    /// The call's arguments checked as BLAS checks them, and what it needs done.
    fn resolve(
        &mut self,
        session: &mut Session,
        p: &Problem,
        a: Buffer,
        b: Buffer,
        c: Buffer,
    ) -> Result<Work> {
        p.validate()?;
        let name = format!("{}GEMM", p.precision.blas_letter());
        if let Some((which, len)) = p.beyond_int_indices() {
            return Err(Error::invalid(format!(
                "{name}: matrix {which:?} spans {len} elements (offset + ld x columns), more than the {} the kernels' 32-bit indices address",
                i32::MAX
            )));
        }
        for (which, buf, pos) in [(Matrix::A, a, 8), (Matrix::B, b, 10), (Matrix::C, c, 13)] {
            if buf.elem != p.precision.elem() {
                return Err(Error::invalid(format!(
                    "{name}: argument {pos} ({which:?}) is a {:?} buffer, the call computes in {}",
                    buf.elem, p.precision
                )));
            }
            let need = p.buffer_len(which);
            if buf.len < need {
                return Err(Error::invalid(format!(
                    "{name}: argument {pos} ({which:?}) holds {} elements, the call reaches element {} (offset + ld x (columns - 1) + rows)",
                    buf.len,
                    need - 1
                )));
            }
        }
        if p.is_noop() || ((p.k == 0 || p.alpha == 0.0) && p.beta == 1.0) {
            return Ok(Work::Nothing);
        }
        if p.k == 0 || p.alpha == 0.0 {
            let support = session.routine_support(p.precision)?;
            return Ok(Work::Scale(stage::scale(support, p, c)?));
        }
        if self.device.is_none() {
            self.device = Some(fit::model_device(session, &[]));
        }
        self.learn(session, p, a, b)?;
        Ok(Work::Product(self.choose(p)?))
    }

    /// `choice` on `p`, planned: its launches and temporaries. `use_staged` runs
    /// with them; the temporaries are freed whatever it returns.
    fn with_staged<T>(
        &mut self,
        session: &mut Session,
        choice: &Choice,
        p: &Problem,
        [a, b, c]: [Buffer; 3],
        use_staged: impl FnOnce(&mut AnyBackend, &Staged) -> Result<T>,
    ) -> Result<T> {
        let spec = choice.kernel;
        let config = spec.with_precision(&choice.config, p.precision)?;
        let program = self.program(session, choice, p.precision)?;
        let support = session.routine_support(p.precision)?;
        let mut be = session.backend.borrow_mut();
        let staged: Staged = stage::plan(&mut be, spec, &config, program, support, p, a, b, c)?;
        let out = use_staged(&mut be, &staged);
        for t in staged.owned {
            be.free(t);
        }
        out
    }

    /// One run of `choice` on `p`: the device times of its packing, its kernel
    /// and its unpacking.
    fn run_choice(
        &mut self,
        session: &mut Session,
        choice: &Choice,
        p: &Problem,
        bufs: [Buffer; 3],
    ) -> Result<(u64, u64, u64)> {
        self.with_staged(session, choice, p, bufs, |be, staged| {
            let mut pre = 0;
            for s in &staged.pre {
                pre += s.run(be)?;
            }
            let main = staged.run_product(be)?;
            let mut post = 0;
            for s in &staged.post {
                post += s.run(be)?;
            }
            Ok((pre, main, post))
        })
    }

    /// `count` runs of `choice` on `p` back to back, as one span of device time.
    fn time_choice(
        &mut self,
        session: &mut Session,
        choice: &Choice,
        p: &Problem,
        bufs: [Buffer; 3],
        count: usize,
    ) -> Result<u64> {
        self.with_staged(session, choice, p, bufs, |be, staged| {
            be.launch_sequence(&staged.launches(), count)
        })
    }

    /// `Selection::Measure` on a call's first run: times the choices of
    /// `choices` in `MEASURE_ROUNDS` rounds on a scratch C (every choice reads the
    /// same A and B; what C holds does not change the time), the near-ties of the
    /// fastest in as many rounds again, and keeps the fastest for the call. A choice that cannot be compiled or run here is passed over;
    /// with no scratch C (out of memory) the nearest entry is kept untimed.
    fn learn(&mut self, session: &mut Session, p: &Problem, a: Buffer, b: Buffer) -> Result<()> {
        let key = learned_key(p);
        if self.selection != Selection::Measure || self.learned.contains_key(&key) {
            return Ok(());
        }
        let (nearest, others) = self.choices(p)?;
        if others.is_empty() {
            return Ok(());
        }
        let scratch = session
            .backend
            .borrow_mut()
            .alloc(p.precision.elem(), p.buffer_len(Matrix::C).max(1));
        let Ok(scratch) = scratch else {
            self.learned.insert(key, nearest);
            return Ok(());
        };
        let plan = crate::measure::Plan::default();
        let bufs = [a, b, scratch];
        let choices: Vec<Choice> = std::iter::once(nearest.clone()).chain(others).collect();
        self.build_ahead(session, &choices, p.precision);
        // A first call warms each up and sizes its batches, timed as `time_calls` times;
        // one that cannot be compiled or run here has none.
        let batches: Vec<Option<usize>> = (choices.iter())
            .map(|c| self.time_choice(session, c, p, bufs, 1).ok())
            .map(|one| one.map(|one| plan.batch_to_fill(one as f64)))
            .collect();
        // Rounds over every choice, each choice's best round kept: timed once, the
        // first choice after a pause is judged on a GPU that may still be clocking up
        // (the first call of a held-out suite timed the same first choice at 9 us in
        // two runs and at 6 us in two others on the H200, and chose by it).
        let mut best: Vec<Option<f64>> = vec![None; choices.len()];
        let every: Vec<usize> = (0..choices.len()).collect();
        // Then the choices within `NEAR_TIE` of the fastest, once more as many rounds.
        for round in 0..2 * MEASURE_ROUNDS {
            let timed = match round < MEASURE_ROUNDS {
                true => every.clone(),
                false => near_ties(&best),
            };
            if timed.len() < 2 && round >= MEASURE_ROUNDS {
                break;
            }
            for i in timed {
                let Some(n) = batches[i] else {
                    continue;
                };
                let choice = &choices[i];
                let ns: Vec<f64> = (0..MEASURE_RUNS)
                    .map_while(|_| self.time_choice(session, choice, p, bufs, n).ok())
                    .map(|t| t as f64 / n as f64)
                    .collect();
                if let Some(st) = Stats::from_sample_ns(&ns).filter(|_| ns.len() == MEASURE_RUNS) {
                    best[i] = Some(best[i].map_or(st.median_ns, |b: f64| b.min(st.median_ns)));
                }
            }
        }
        let timed: Vec<(f64, Choice)> = (best.into_iter().zip(choices))
            .filter_map(|(ns, c)| Some((ns?, c)))
            .collect();
        session.backend.borrow_mut().free(scratch);
        let list: Vec<String> = timed
            .iter()
            .map(|(ns, c)| format!("{} {:.1} us", c.kernel.id, ns * 1e-3))
            .collect();
        let learned = match timed.into_iter().min_by(|x, y| x.0.total_cmp(&y.0)) {
            Some((_, mut best)) => {
                let first = match best.why == nearest.why {
                    true => String::new(),
                    false => format!("; the first: {}", nearest.why),
                };
                best.why = format!(
                    "{}; the fastest of {} timed on the call's first run ({}{first})",
                    best.why,
                    list.len(),
                    list.join(", ")
                );
                best
            }
            None => nearest,
        };
        self.learned.insert(key, learned);
        Ok(())
    }

    /// Builds the programs of `choices` not loaded yet on every core where the device's
    /// compiler builds in parallel (NVRTC), so that a call's first run does not wait on
    /// one build after another. Elsewhere each is built when first run, as before.
    fn build_ahead(&mut self, session: &Session, choices: &[Choice], precision: Precision) {
        let (compiler, device) = {
            let be = session.backend.borrow();
            (be.compiler(), be.info().clone())
        };
        let loaded = |c: &Choice| {
            program_key(c, precision).map_or(true, |key| self.programs.contains_key(&key))
        };
        let todo: Vec<&Choice> = choices.iter().filter(|c| !loaded(c)).collect();
        if !compiler.parallel_builds() || todo.len() < 2 {
            return;
        }
        let built = prebuild_all(compiler.as_ref(), &device, &todo, precision);
        for (choice, artefact) in todo.into_iter().zip(built) {
            if let Some(artefact) = artefact {
                // A program that fails to load here is built again when run.
                let _ = self.adopt(session, choice, precision, artefact);
            }
        }
    }

    /// The routine on host matrices: uploads A, B and C as they are laid out,
    /// runs, and downloads C. `T` must be the problem's precision.
    pub fn run_host<T: Element>(
        &mut self,
        session: &mut Session,
        p: &Problem,
        a: &[T],
        b: &[T],
        c: &mut [T],
    ) -> Result<RoutineRun> {
        if T::PRECISION != p.precision {
            return Err(Error::invalid(format!(
                "host data is {} but the call computes in {}",
                T::PRECISION,
                p.precision
            )));
        }
        let elem = p.precision.elem();
        let mut owned = Vec::new();
        let result = (|| -> Result<RoutineRun> {
            let mut up = |data: &[T]| -> Result<Buffer> {
                let mut be = session.backend.borrow_mut();
                let buf = be.alloc(elem, data.len().max(1))?;
                owned.push(buf);
                if !data.is_empty() {
                    be.upload(&buf, T::data(data))?;
                }
                Ok(buf)
            };
            let (da, db, dc) = (up(a)?, up(b)?, up(c)?);
            let run = self.run(session, p, da, db, dc)?;
            if !c.is_empty() {
                session.backend.borrow_mut().download(&dc, T::data_mut(c))?;
            }
            Ok(run)
        })();
        let mut be = session.backend.borrow_mut();
        for b in owned {
            be.free(b);
        }
        result
    }

    /// Releases the compiled kernels.
    pub fn release(self, session: &Session) {
        let mut be = session.backend.borrow_mut();
        for (_, p) in self.programs {
            be.release_program(p);
        }
    }
}

type ProgramKey = (String, String, Precision);

/// Where a routine keeps `choice`'s program at `precision`.
fn program_key(choice: &Choice, precision: Precision) -> Result<ProgramKey> {
    let config = choice.kernel.with_precision(&choice.config, precision)?;
    Ok((
        choice.kernel.id.to_string(),
        format!("{} {}", config.describe(), choice.hints.describe(true)),
        precision,
    ))
}

/// The options `choice`'s program at `precision` is compiled with on `device`:
/// refused where the kernel cannot take the configuration or the device cannot run it.
fn build_options(
    choice: &Choice,
    precision: Precision,
    device: &DeviceInfo,
) -> Result<CompileOptions> {
    let spec = choice.kernel;
    let config = spec.with_precision(&choice.config, precision)?;
    let tc = device.toolchain;
    spec.validate_with_switches(&config, &choice.hints, tc)?;
    if let Some(why) = spec.unavailable_at(&config, device, &choice.hints) {
        return Err(Error::Unavailable {
            kernel: spec.id.to_string(),
            toolchain: tc.to_string(),
            reason: why,
        });
    }
    Ok(spec.compile_options(&config, &choice.hints, tc))
}

/// `choice`'s program at `precision` built by `compiler` for `device`, on any thread,
/// for a routine to `adopt`.
pub fn prebuild(
    compiler: &dyn Compiler,
    device: &DeviceInfo,
    choice: &Choice,
    precision: Precision,
) -> Result<Artefact> {
    let options = build_options(choice, precision, device)?;
    let tc = device.toolchain;
    compiler.compile(choice.kernel.entry, &choice.kernel.source(tc), &options)
}

/// Each of `choices`' programs at `precision` built by `compiler` for `device`, on every
/// core (`None` where one fails to build: built again when run, it reports why).
pub fn prebuild_all(
    compiler: &dyn Compiler,
    device: &DeviceInfo,
    choices: &[&Choice],
    precision: Precision,
) -> Vec<Option<Artefact>> {
    let mut built: Vec<Option<Artefact>> = choices.iter().map(|_| None).collect();
    crate::gemm::parallel::for_chunks(&mut built, 1, |i, slot| {
        slot[0] = prebuild(compiler, device, choices[i], precision).ok();
    });
    built
}

/// The device buffer of one operand of `ops` as its problem stores it (tests, benchmarks).
pub fn upload_operand(
    session: &Session,
    ops: &crate::gemm::Operands,
    which: Matrix,
    gap: f32,
) -> Result<Buffer> {
    let mut be = session.backend.borrow_mut();
    upload_real(&mut be, &ops.stored(which, gap), ops.problem.precision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Toolchain;
    use crate::gemm::shape::ShapeClass;

    /// An f32 entry of `kernel` at its defaults for the column-major NN call m^3.
    fn entry(m: usize, kernel: &str, hints: Hints, routine_ns: f64) -> RoutineEntry {
        let spec = kernels::find(kernel).unwrap();
        let config = spec.defaults();
        RoutineEntry {
            toolchain: Toolchain::Cuda,
            precision: Precision::F32,
            call: "col NN".into(),
            class: ShapeClass::of(m, m, m),
            m,
            n: m,
            k: m,
            emulated: spec.arithmetic(&config, &hints) == Arithmetic::EmulatedFp32,
            kernel: kernel.into(),
            config,
            hints,
            routine_ns,
            vendor_ns: None,
            candidates: vec![],
            compiler: None,
            gemmlab: "test".into(),
            tuned_utc: "now".into(),
        }
    }

    #[test]
    fn fp32_emulation_is_chosen_only_where_allowed_and_lower_precision_never() {
        let mut single = Hints::default();
        single.switches.insert("TF32_SINGLE".into(), true);
        let mut g = Gemm::published().unwrap();
        g.routine = vec![
            entry(4096, "simt", Hints::default(), 3.0e6),
            entry(4096, "tc", Hints::default(), 2.5e6),
            // 1xTF32, the fastest and nearest of all: never the routine's.
            entry(4096, "tc", single.clone(), 1.0e6),
        ];
        let p = Problem::plain(4096, 4096, 4096);
        assert_eq!(g.choose(&p).unwrap().kernel.id, "simt");
        g.fp32_emulation = true;
        assert_eq!(g.choose(&p).unwrap().kernel.id, "tc");
        assert!(g.choose(&p).unwrap().hints.switch("TF32_SINGLE").is_none());
        // f64 runs the tensor cores in FP64 arithmetic: no emulation in it.
        let spec = kernels::find("tc").unwrap();
        let f64c = spec
            .with_precision(&spec.defaults(), Precision::F64)
            .unwrap();
        assert_eq!(
            spec.arithmetic(&f64c, &Hints::default()),
            Arithmetic::Native
        );
        // A forced choice is held to the same rules, with the reason.
        g.force_choice = Some(("tc".into(), spec.defaults(), single));
        let e = g.choose(&p).unwrap_err().to_string();
        assert!(e.contains("TF32_SINGLE") && e.contains("precision"), "{e}");
        g.fp32_emulation = false;
        g.force_choice = Some(("tc".into(), spec.defaults(), Hints::default()));
        let e = g.choose(&p).unwrap_err().to_string();
        assert!(
            e.contains("3xTF32") && e.contains("--fp32-emulation"),
            "{e}"
        );
    }

    #[test]
    fn a_call_keeps_its_fp32_choice_beside_its_emulated_one() {
        let mut db = Database::load(std::path::Path::new("/nonexistent"), "test device").unwrap();
        db.set_routine(entry(4096, "simt", Hints::default(), 3.0e6));
        db.set_routine(entry(4096, "tc", Hints::default(), 2.5e6));
        db.set_routine(entry(4096, "simt", Hints::default(), 2.9e6));
        let kept = db.routine_for(Toolchain::Cuda, Precision::F32);
        assert_eq!(kept.len(), 2);
        // Written before tc had SPLITK, read back with it at its default.
        let dir = std::env::temp_dir().join(format!("gemmlab-db-{}", std::process::id()));
        let mut old = db.clone();
        for e in &mut old.routine {
            e.config.0.remove("SPLITK");
        }
        old.save(&dir).unwrap();
        let back = Database::load(&dir, "test device").unwrap();
        assert_eq!(back.routine, db.routine);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(kept
            .iter()
            .any(|e| e.kernel == "simt" && e.routine_ns == 2.9e6));
        assert!(kept.iter().any(|e| e.kernel == "tc" && e.emulated));
    }

    #[test]
    fn a_call_not_tuned_takes_the_models_pick_and_a_tuned_one_its_own_entry() {
        let device = fit::tests::h200_device();
        let machine = fit::Machine::of(&device);
        let simt = kernels::find("simt").unwrap();
        // Each entry measured as the model predicts it at its own call.
        let at = |m: usize, narrow: bool| {
            let mut e = entry(m, "simt", Hints::default(), 0.0);
            if narrow {
                let d: Vec<(String, i64)> = adapt::tests::NARROW
                    .iter()
                    .map(|(n, v)| (n.to_string(), *v))
                    .collect();
                e.config = simt.config(&d).unwrap();
            }
            let p = Problem::plain(m, m, m);
            e.routine_ns = fit::predicted_s(simt, &e.config, &p, &machine).unwrap() * 1e9;
            e
        };
        let mut g = Gemm::published().unwrap();
        g.routine = vec![at(2048, false), at(3000, true)];
        g.device = Some(device);
        g.selection = Selection::Model;
        let p = Problem::plain(1536, 1536, 1536);
        let chosen = g.choose(&p).unwrap();
        assert!(chosen.why.contains("cost model"), "{}", chosen.why);
        g.selection = Selection::Nearest;
        let nearest = g.choose(&p).unwrap();
        assert!(
            nearest.why.contains("nearest tuned shape"),
            "{}",
            nearest.why
        );
        assert_eq!(nearest.config, g.routine[0].config);
        // A call tuned for itself keeps its entry, whatever the model says.
        g.selection = Selection::Model;
        let own = g.choose(&Problem::plain(2048, 2048, 2048)).unwrap();
        assert!(own.why.contains("tuned for this call"), "{}", own.why);
    }

    #[test]
    fn near_ties_are_the_choices_within_a_tenth_of_the_fastest() {
        let t = |v: &[Option<f64>]| near_ties(v);
        assert_eq!(t(&[Some(134.1), Some(134.9), Some(170.0), None]), [0, 1]);
        assert_eq!(t(&[Some(200.0), Some(110.0), Some(100.0)]), [1, 2]);
        // One within reach, or nothing timed: nothing to time again.
        assert!(t(&[Some(100.0), Some(111.0)]).is_empty());
        assert!(t(&[None, None]).is_empty());
        assert!(t(&[]).is_empty());
    }

    #[test]
    fn the_pipelined_thin_fit_comes_capped_too_where_the_device_says_its_registers() {
        let p = Problem::plain(4097, 33, 2049);
        let hints = |device: &DeviceInfo| -> Vec<Hints> {
            thin_fits(&p, device).into_iter().map(|(_, h)| h).collect()
        };
        // Without a register file to share out, each form once, as it compiles.
        let mut device = fit::tests::h200_device();
        assert_eq!(hints(&device), vec![Hints::default(); 3]);
        // With one, the pipelined form also capped at four work-groups of 128 a
        // unit; NVRTC keeps a cap beside launch bounds, NVIDIA's OpenCL does not.
        device.registers_per_sm = Some(65536);
        let cuda = hints(&device);
        assert_eq!(cuda.len(), 4);
        assert_eq!(cuda[3].max_registers, Some(128));
        assert!(cuda[3].switches.is_empty());
        let fits = thin_fits(&p, &device);
        assert_eq!((fits[2].0.get("PIPE"), fits[3].0.get("PIPE")), (1, 1));
        assert_eq!(fits[2].0, fits[3].0);
        device.toolchain = Toolchain::OpenCl;
        device.registers_per_sm = None;
        device.registers_per_block = Some(65536);
        let opencl = hints(&device);
        assert_eq!(opencl[3].max_registers, Some(128));
        assert_eq!(opencl[3].switches.get("USE_BOUNDS"), Some(&false));
    }

    #[test]
    fn a_choice_reading_along_k_is_also_timed_with_its_operand_copied_the_other_way() {
        let mut g = Gemm::published().unwrap();
        g.device = Some(fit::tests::h200_device());
        let along = Hints::default()
            .with_switch("ASYNC_COPY", true)
            .with_switch("ASYNC_ALONG_K", true)
            .with_switch("SMEM_PAD", true);
        let k_major_b = |hints: Hints| {
            let mut e = entry(1024, "simt", hints, 60e3);
            e.config.0.insert("KMAJOR_B".into(), 1);
            e
        };
        let key = |c: &Choice| {
            let build = c
                .kernel
                .compile_options(&c.config, &c.hints, Toolchain::Cuda);
            format!("{} {} {:?}", c.kernel.id, c.config.describe(), build)
        };
        // An entry copying B along K by cp.async, one through registers.
        let mut flipped_retilings = 0;
        for (hints, way, flipped) in [
            (along.clone(), "copied through registers", Some(false)),
            (Hints::default(), "copied by cp.async", Some(true)),
        ] {
            g.routine = vec![
                k_major_b(hints),
                entry(4096, "xgemm", Hints::default(), 3e6),
            ];
            let (nearest, others) = g.choices(&Problem::plain(1500, 1500, 1500)).unwrap();
            let all: Vec<&Choice> = std::iter::once(&nearest).chain(&others).collect();
            let flips: Vec<&&Choice> = all.iter().filter(|c| c.why.contains(way)).collect();
            assert!(!flips.is_empty() && flips.len() <= ALONG_K_FLIPS, "{way}");
            for f in &flips {
                assert_eq!(f.hints.switch("ASYNC_ALONG_K"), flipped, "{}", f.why);
                assert_eq!(f.config.get("KMAJOR_B"), 1);
                // Its source: the same kernel and tiles the other way.
                assert!(all.iter().any(|c| c.kernel.id == f.kernel.id
                    && c.config == f.config
                    && c.hints.switch("ASYNC_ALONG_K") != flipped));
            }
            // A re-tiling reading along K is flipped whatever comes before it (those
            // given slices of K are timed beside the rest, without flips).
            let retiled = (others.iter())
                .filter(|c| c.why.contains("re-tiled") && !c.why.contains(way))
                .filter(|c| !c.why.contains("kept along K"))
                .filter(|c| c.config.get("KMAJOR_B") == 1 && c.config.get("SLICEK") <= 1);
            let mut seen = 0;
            for r in retiled {
                seen += 1;
                assert!(
                    flips
                        .iter()
                        .any(|f| f.config == r.config && f.why.starts_with(&r.why)),
                    "{}",
                    r.why
                );
            }
            flipped_retilings += seen;
            let mut keys: Vec<String> = all.iter().map(|c| key(c)).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), all.len(), "each build once");
        }
        assert!(flipped_retilings > 0, "no re-tiling reading B along K");
        // Off NVIDIA there is no cp.async to flip to.
        g.routine = vec![
            k_major_b(Hints::default()),
            entry(4096, "xgemm", Hints::default(), 3e6),
        ];
        let pocl = DeviceInfo {
            toolchain: Toolchain::OpenCl,
            vendor: "The pocl project".into(),
            name: "cpu".into(),
            ..fit::tests::h200_device()
        };
        let h200 = g.device.replace(pocl);
        let (nearest, others) = g.choices(&Problem::plain(1500, 1500, 1500)).unwrap();
        let all: Vec<&Choice> = std::iter::once(&nearest).chain(&others).collect();
        assert!(all
            .iter()
            .any(|c| c.kernel.id == "simt" && c.config.get("KMAJOR_B") == 1));
        assert!(all
            .iter()
            .all(|c| !c.why.contains("its operands along K copied")));
        g.device = h200;
        // A call storing nothing along K has nothing to flip.
        g.routine = vec![
            entry(1024, "simt", Hints::default(), 60e3),
            entry(4096, "xgemm", Hints::default(), 3e6),
        ];
        let nt = Problem {
            trans_b: crate::gemm::problem::Trans::T,
            ..Problem::plain(1500, 1500, 1500)
        }
        .tight();
        let (nearest, others) = g.choices(&nt).unwrap();
        assert!(std::iter::once(&nearest)
            .chain(&others)
            .all(|c| !c.why.contains("its operands along K copied")));
    }

    #[test]
    fn a_choice_packing_b_stored_along_k_is_also_timed_keeping_b_along_k() {
        let mut g = Gemm::published().unwrap();
        g.device = Some(fit::tests::h200_device());
        let copies = Hints::default().with_switch("ASYNC_COPY", true);
        g.routine = vec![
            entry(1024, "simt", copies.clone(), 60e3),
            entry(4096, "xgemm", Hints::default(), 3e6),
        ];
        let kept = |p: &Problem, g: &Gemm| {
            let (nearest, others) = g.choices(p).unwrap();
            let all: Vec<Choice> = std::iter::once(nearest).chain(others).collect();
            let twins: Vec<Choice> = (all.iter())
                .filter(|c| c.why.contains("kept along K (KTILE_B)"))
                .cloned()
                .collect();
            (all, twins)
        };
        // NN stores B along K: B packed by the entry, kept along K by its twin.
        let (all, twins) = kept(&Problem::plain(1500, 1500, 1500), &g);
        assert!(!twins.is_empty() && twins.len() <= KTILE_TWINS);
        for t in &twins {
            assert_eq!(t.kernel.id, "simt");
            assert_eq!(t.config.get("KMAJOR_B"), 1, "{}", t.why);
            assert_eq!(t.hints.switch("KTILE_B"), Some(true));
            assert_eq!(t.hints.switch("ASYNC_COPY"), Some(true));
            let source = |c: &&Choice| c.kernel.id == "simt" && c.config.get("KMAJOR_B") == 0;
            assert!(all.iter().filter(source).any(|c| t.why.starts_with(&c.why)));
            assert!(t
                .kernel
                .validate_with_switches(&t.config, &t.hints, Toolchain::Cuda)
                .is_ok());
        }
        // NT stores B along N: nothing packed along K, no twin.
        let nt = Problem {
            trans_b: crate::gemm::problem::Trans::T,
            ..Problem::plain(1500, 1500, 1500)
        }
        .tight();
        assert!(kept(&nt, &g).1.is_empty());
        // An entry already reading B as stored has nothing to keep.
        g.routine[0].config.0.insert("KMAJOR_B".into(), 1);
        let (_, twins) = kept(&Problem::plain(1500, 1500, 1500), &g);
        assert!(twins.iter().all(|t| !t.why.contains("nearest tuned shape")));
    }

    #[test]
    fn a_call_not_tuned_is_given_choices_to_time_and_a_tuned_one_none() {
        let mut g = Gemm::published().unwrap();
        g.routine = vec![
            entry(1024, "simt", Hints::default(), 80e3),
            entry(2048, "xgemm", Hints::default(), 400e3),
            entry(3000, "simtdirect", Hints::default(), 1.3e6),
            entry(4096, "xgemmdirect", Hints::default(), 4e6),
        ];
        g.device = Some(fit::tests::h200_device());
        assert_eq!(g.selection, Selection::Measure);
        let (nearest, others) = g.choices(&Problem::plain(1500, 1500, 1500)).unwrap();
        assert!(
            nearest.why.contains("nearest tuned shape"),
            "{}",
            nearest.why
        );
        // At most MEASURED in all from the ranking, besides at most three re-tilings
        // of each SIMT kernel's nearest entry (the ways of summing K, and two slices
        // of K), a few of those reading B along K
        // with it copied the other way, a few packing B with it kept along K, and a
        // few in place compiled for the call's form.
        let flips = (others.iter())
            .filter(|c| c.why.contains("its operands along K copied"))
            .count();
        assert!(flips <= ALONG_K_FLIPS, "{flips}");
        let kept = (others.iter())
            .filter(|c| c.why.contains("kept along K (KTILE_B)"))
            .count();
        assert!(kept <= KTILE_TWINS, "{kept}");
        // And a few in place compiled for the call's own form.
        let formed = (others.iter())
            .filter(|c| c.why.contains("compiled for the call's form"))
            .count();
        assert!(formed <= FORM_TWINS, "{formed}");
        let retiled = (others.iter())
            .filter(|c| {
                c.why.contains("re-tiled")
                    && !c.why.contains("along K")
                    && !c.why.contains("call's form")
            })
            .count();
        assert!(retiled <= 6, "{retiled}");
        let ranked = others.len() - retiled - flips - kept - formed;
        assert!(ranked > 0 && ranked < MEASURED, "{}", others.len());
        // The next nearest entry (1024^3; the nearest is 2048^3) comes first.
        assert!(nearest.why.contains("2048x2048x2048"), "{}", nearest.why);
        assert!(
            others[0].why.contains("1024x1024x1024"),
            "{}",
            others[0].why
        );
        // Each configuration once, none the nearest entry's.
        let key = |c: &Choice| (c.kernel.id, c.config.clone(), c.hints.describe(true));
        let mut keys = vec![key(&nearest)];
        for o in &others {
            assert!(!keys.contains(&key(o)), "{} twice", o.why);
            keys.push(key(o));
        }
        // Without a run nothing is learned: `choose` gives the nearest entry.
        assert_eq!(
            g.choose(&Problem::plain(1500, 1500, 1500)).unwrap().why,
            nearest.why
        );
        // No thin choice for a square call; one for thin M and for thin N, each
        // side its own (row-major: the column-major call's sides swap).
        assert!(!others.iter().any(|o| o.kernel.id == "thin"));
        let side = |p: Problem, lanes: bool| {
            let (_, others) = g.choices(&p).unwrap();
            let thin: Vec<&Choice> = others.iter().filter(|o| o.kernel.id == "thin").collect();
            // Read straight from global memory, staged in local memory, and
            // straight with its batches prefetched; where the large operand is
            // K-contiguous, also with work-items along K.
            let forms: Vec<(i64, i64, i64)> = (thin.iter())
                .map(|o| (o.config.get("XS"), o.config.get("PIPE"), o.config.get("KL")))
                .collect();
            let mut want = vec![(0, 0, 1), (1, 0, 1), (0, 1, 1)];
            if lanes {
                want.push((0, 1, 4));
            }
            assert_eq!(forms, want, "{p:?}");
            assert!(thin
                .iter()
                .all(|o| o.config.get("SIDE") == thin[0].config.get("SIDE")));
            thin[0].config.get("SIDE")
        };
        // Column-major NN: B, streamed where M is short, is K-contiguous; A,
        // streamed where N is, is not (nor row-major's, the same memory).
        assert_eq!(side(Problem::plain(16, 14336, 4096), true), 0);
        assert_eq!(side(Problem::plain(100_000, 24, 64), false), 1);
        let row = Problem {
            layout: crate::gemm::problem::Layout::RowMajor,
            ..Problem::plain(16, 14336, 4096)
        };
        assert_eq!(side(row, false), 1);
        // Not in f64, which thin does not compute.
        let f64_call = Problem {
            precision: Precision::F64,
            ..Problem::plain(16, 14336, 4096)
        };
        assert!(g.thin_fitted(&f64_call).is_empty());
        assert_eq!(g.thin_fitted(&Problem::plain(16, 14336, 4096)).len(), 4);
        // Excluded kernels are neither fitted nor taken from their entries.
        g.exclude = vec!["thin".into(), "simtdirect".into()];
        assert!(g.thin_fitted(&Problem::plain(16, 14336, 4096)).is_empty());
        let (first, rest) = g.choices(&Problem::plain(2900, 2900, 2900)).unwrap();
        assert!(std::iter::once(&first)
            .chain(&rest)
            .all(|c| c.kernel.id != "thin" && c.kernel.id != "simtdirect"));
        g.exclude.clear();
        let (own, none) = g.choices(&Problem::plain(2048, 2048, 2048)).unwrap();
        assert!(own.why.contains("tuned for this call") && none.is_empty());
        g.selection = Selection::Model;
        assert!(g
            .choices(&Problem::plain(1500, 1500, 1500))
            .unwrap()
            .1
            .is_empty());
    }
}
