//! The kernel registry: every kernel is data. The CLI, tests, benches, sweeps
//! and the tuner read it; none of them lists kernels by hand.

mod precision;
pub use precision::Precision;
mod clblast;
mod clblast_direct;
mod lecture;
mod simt;
mod switches;
pub mod tc;
pub mod tcwg;
pub mod thin;
mod tutorial;

pub use simt::{
    along_k_copy_flipped, compiled_for_form, copying_along_k, fixed_form, keeping_b_along_k,
};
pub use switches::{Hints, Switch, SwitchUse, ALL as SWITCHES, USE_BOUNDS};

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::backend::{
    BuildReport, CompileOptions, DeviceInfo, Geometry, KernelResources, Language, Toolchain,
};
use crate::error::{Error, Result};

/// A tunable compile-time parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub default: i64,
    pub allowed: &'static [i64],
    pub meaning: &'static str,
}

/// A relation the parameters must satisfy, with the words a person reads when it fails.
#[derive(Clone, Copy)]
pub struct Constraint {
    pub message: &'static str,
    /// The parameters it involves, shown with their values when it fails.
    pub involves: &'static [&'static str],
    pub holds: fn(&Config) -> bool,
}

impl fmt::Debug for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message)
    }
}

/// Who computes which part of C: work-group size and elements of C per work-item.
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    /// Work-group (CUDA block) size from the parameters.
    pub local: fn(&Config) -> (usize, usize),
    /// Elements of C per work-item along M and N: global = (M / .0, N / .1).
    pub per_item: fn(&Config) -> (usize, usize),
}

/// What a kernel assumes of its operands.
#[derive(Debug, Clone, Copy)]
pub struct Operands {
    /// The B argument holds B^T (N x K), prepared by the transpose kernel.
    pub b_transposed: bool,
    /// M, N, K must be multiples of these; the driver pads otherwise.
    pub tile: fn(&Config) -> (usize, usize, usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Family {
    /// Nugteren's "OpenCL SGEMM tuning for Kepler" kernels 1-11.
    Tutorial,
    /// CLBlast's parameterised xgemm (indirect) and xgemm_direct kernels.
    Clblast,
    /// The OpenCL matrix-multiplication lecture's kernels: row-major with strides, float or double.
    Lecture,
    /// gemmlab's SIMT SGEMM for Hopper-class GPUs: warp tiles, 128-bit accesses,
    /// cp.async pipeline, rasterised block order, split-K.
    Simt,
    /// gemmlab's tensor-core GEMM through inline-PTX mma.sync: FP64 DGEMM and
    /// 3xTF32 (FP32-accurate) SGEMM; NVIDIA GPUs of sm_80 or later only.
    TensorCore,
}

/// How a kernel is called: its arguments and what it assumes of the memory it
/// is given. The driver prepares operands and arguments for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abi {
    /// `(M, N, K, A, B, C)`: column-major C = A * B in f32 on sizes that are
    /// multiples of `operands.tile`; B or B^T as `operands.b_transposed` says.
    Tutorial,
    /// CLBlast's indirect kernel, `(M, N, K, alpha, beta, A, B, C)`: A column-major
    /// M x K, B stored as B^T (column-major N x K), C column-major M x N, all on
    /// sizes that are multiples of `operands.tile`; C = alpha A B + beta C in the
    /// kernel, C not read where beta is 0. Pre/post kernels pad, transpose, copy.
    Indirect,
    /// CLBlast's direct kernel, `(M, N, K, alpha, beta, A, a_offset, a_ld, B,
    /// b_offset, b_ld, C, c_offset, c_ld)`: column-major, any size, offsets and
    /// leading dimensions as given, C not read where beta is 0; one entry point
    /// per transpose case, in the order NN, NT, TN, TT.
    Direct { entries: [&'static str; 4] },
    /// The lecture's kernels, `(Aheight, Awidth, Bheight, Bwidth, Astride, Bstride,
    /// Cstride, A, B, C)`: row-major C = A * B with strides (elements between rows),
    /// heights and widths those of the matrices as stored: A is M x K, or K x M where
    /// `a_transposed`; B is K x N, or N x K where `b_transposed`. C is written, never
    /// read. NDRange x runs along the columns of C, y along its rows (the lecture's
    /// get_global_id(0) = column); `operands.tile` (1, 1, V) asks for strides of A and
    /// B that are multiples of V along K, zero-padded (the float8/double4 variant).
    Lecture {
        a_transposed: bool,
        b_transposed: bool,
    },
    /// gemmlab's SIMT and tensor-core kernels: `Indirect`'s arguments and operand forms (either
    /// operand K-contiguous instead where `KernelSpec::k_major` says), then
    /// `(work, counters)`: room for the split-K partial sums (SPLITK x the padded
    /// M x N) and one int per tile of C, zero before a launch and left zero by it.
    /// The grid's third dimension is SPLITK (the `SPLITK` parameter).
    IndirectSplitK,
    /// gemmlab's SIMT kernel in place: `(M, N, K, alpha, beta, A, a_offset, a_ld,
    /// B, b_offset, b_ld, C, c_offset, c_ld, a_kmajor, b_kmajor, work, counters)`,
    /// column-major, any size, offsets and leading dimensions as given; a_kmajor 1
    /// where A is stored transposed (read K-contiguous), b_kmajor 1 where B is not
    /// (K-contiguous too); one entry point for the four transpose cases. `work`
    /// and `counters` as `IndirectSplitK`'s over the grid's tiles; the grid's third
    /// dimension is SPLITK.
    DirectInPlace,
}

/// A kernel's sources, one per language it is written in.
pub type Sources = &'static [(Language, &'static str)];

/// The prelude every source in `language` is compiled after.
pub fn prelude(language: Language) -> &'static str {
    match language {
        Language::OpenClC => OPENCL_PRELUDE,
        Language::CudaCpp => CUDA_PRELUDE,
    }
}

/// One kernel, both twins.
#[derive(Debug, Clone, Copy)]
pub struct KernelSpec {
    /// Short id used on the command line: "gemm6".
    pub id: &'static str,
    /// Entry point in both sources: "myGEMM6".
    pub entry: &'static str,
    pub family: Family,
    pub title: &'static str,
    pub idea: &'static str,
    /// The source in each language it is written in (a twin per language).
    pub sources: Sources,
    pub params: &'static [Param],
    pub constraints: &'static [Constraint],
    /// Static local (shared) memory per work-group in bytes, from the parameters.
    pub local_bytes: fn(&Config) -> i64,
    pub launch: Launch,
    pub operands: Operands,
    /// The source switches this kernel has, each with its published state.
    pub switches: &'static [SwitchUse],
    /// How it is called.
    pub abi: Abi,
    /// The precisions its source can be compiled for (define `PRECISION` = 32 or 64).
    pub precisions: &'static [Precision],
}

/// How a configuration computes, against the precision of the call (see
/// [`KernelSpec::arithmetic`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arithmetic {
    /// In the call's precision, with its own arithmetic.
    Native,
    /// f32 from three TF32 tensor-core products per step (3xTF32).
    EmulatedFp32,
    /// Below the call's precision, because of the switch named.
    Lower(&'static str),
}

/// Whether kernel `id` at `c` with `hints` computes f32 by emulation (3xTF32):
/// how result rows, database entries and tables label such a choice.
pub fn emulates_fp32(id: &str, c: &Config, hints: &Hints) -> bool {
    find(id).is_ok_and(|k| k.arithmetic(c, hints) == Arithmetic::EmulatedFp32)
}

/// Parameter values of one configuration, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Config(pub BTreeMap<String, i64>);

impl Config {
    /// The value of a parameter; 0 if absent (constraints only ask for declared ones).
    pub fn get(&self, name: &str) -> i64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    fn u(&self, name: &str) -> usize {
        self.get(name).max(0) as usize
    }

    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `describe` without the `PRECISION` entry: the tunable parameters only
    /// (tables that show the precision in a column of their own).
    pub fn describe_params(&self) -> String {
        self.0
            .iter()
            .filter(|(k, _)| k.as_str() != PRECISION)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The configuration entry (and define) holding a `real` kernel's precision.
pub const PRECISION: &str = "PRECISION";

pub const OPENCL_PRELUDE: &str = include_str!("../../../kernels-cl/prelude.cl");
pub const CUDA_PRELUDE: &str = include_str!("../../../kernels-cu/prelude.cu");

impl KernelSpec {
    pub fn defaults(&self) -> Config {
        let mut c = Config(
            self.params
                .iter()
                .map(|p| (p.name.to_string(), p.default))
                .collect(),
        );
        if self.multi_precision() {
            c.0.insert(PRECISION.into(), self.precisions[0].define());
        }
        c
    }

    /// Kernels written for `real` carry the precision in their configuration, as the
    /// `PRECISION` define (32 or 64): it is set by the problem, never tuned, and the
    /// constraints on local memory read it. Single-precision kernels have none.
    pub fn multi_precision(&self) -> bool {
        self.precisions.len() > 1
    }

    /// The precision a configuration compiles for.
    pub fn precision_of(&self, c: &Config) -> Precision {
        if c.get(PRECISION) == 64 {
            Precision::F64
        } else {
            Precision::F32
        }
    }

    /// `c` set to compute in `precision`; an error naming the precisions the kernel has otherwise.
    /// Whether `c` is the published configuration, a parameter it lacks (a record
    /// made before the parameter existed) read as its default.
    pub fn is_published(&self, c: &Config) -> bool {
        let defaults = self.defaults();
        c.0.iter().all(|(k, v)| defaults.0.get(k) == Some(v))
            && defaults
                .0
                .iter()
                .all(|(k, v)| c.0.get(k).is_none_or(|x| x == v))
    }

    pub fn with_precision(&self, c: &Config, precision: Precision) -> Result<Config> {
        if !self.precisions.contains(&precision) {
            return Err(Error::Unavailable {
                kernel: self.id.into(),
                toolchain: "any toolchain".into(),
                reason: format!(
                    "it is written for {} only, not {precision}",
                    self.precisions
                        .iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            });
        }
        let mut c = c.clone();
        if self.multi_precision() {
            c.0.insert(PRECISION.into(), precision.define());
        }
        Ok(c)
    }

    /// Defaults overridden by `defines` (NAME=VALUE). Hint switches pass through.
    /// Unknown names and disallowed values are errors that say what is allowed.
    pub fn config(&self, defines: &[(String, i64)]) -> Result<Config> {
        let mut c = self.defaults();
        for (name, value) in defines {
            if switches::find(name).is_some() {
                continue;
            }
            if name == PRECISION && self.multi_precision() {
                c.0.insert(PRECISION.into(), *value);
                continue;
            }
            let Some(p) = self.params.iter().find(|p| p.name == name) else {
                let names: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(Error::Constraint {
                    kernel: self.id.into(),
                    message: format!(
                        "unknown parameter {name}; {} takes {}",
                        self.id,
                        if names.is_empty() {
                            "none".into()
                        } else {
                            names.join(", ")
                        }
                    ),
                    values: format!("{name}={value}"),
                });
            };
            c.0.insert(p.name.to_string(), *value);
        }
        self.validate(&c)?;
        Ok(c)
    }

    /// `validate` with each switch in the state it is compiled in on `toolchain`
    /// (asked in `hints`, else published): constraints that involve a switch
    /// (SMEM_PAD's larger tiles) are judged before anything is compiled.
    pub fn validate_with_switches(
        &self,
        c: &Config,
        hints: &Hints,
        toolchain: crate::backend::Toolchain,
    ) -> Result<()> {
        let mut c = c.clone();
        for (s, on) in self.switch_values(toolchain, hints) {
            c.0.insert(s.name().to_string(), i64::from(on));
        }
        self.validate(&c)
    }

    /// Checks allowed values and every constraint; the first violation is the error.
    pub fn validate(&self, c: &Config) -> Result<()> {
        if self.multi_precision()
            && !self
                .precisions
                .iter()
                .any(|p| p.define() == c.get(PRECISION))
        {
            return Err(Error::Constraint {
                kernel: self.id.into(),
                message: "PRECISION must be 32 (f32) or 64 (f64)".into(),
                values: format!("PRECISION={}", c.get(PRECISION)),
            });
        }
        for p in self.params {
            let v = c.get(p.name);
            if !p.allowed.is_empty() && !p.allowed.contains(&v) {
                return Err(Error::Constraint {
                    kernel: self.id.into(),
                    message: format!("{} must be one of {:?} ({})", p.name, p.allowed, p.meaning),
                    values: format!("{}={v}", p.name),
                });
            }
        }
        for k in self.constraints {
            if !(k.holds)(c) {
                return Err(Error::Constraint {
                    kernel: self.id.into(),
                    message: k.message.into(),
                    values: k
                        .involves
                        .iter()
                        .map(|n| format!("{n}={}", c.get(n)))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        Ok(())
    }

    /// Why this kernel, with these switches, cannot run on that device, if it cannot.
    pub fn unavailable(&self, device: &DeviceInfo, hints: &Hints) -> Option<String> {
        if self.family == Family::TensorCore {
            if let Some(why) = tc_unavailable(device, tcwg::arch_specific(self.id)) {
                return Some(why);
            }
        }
        // Only OpenCL C on another vendor's compiler lacks NVIDIA's inline PTX.
        if device.toolchain.language() != Language::OpenClC || device.is_nvidia() {
            return None;
        }
        let needs: Vec<&str> = self
            .switch_values(device.toolchain, hints)
            .into_iter()
            .filter(|(s, on)| *on && s.switch.opencl_needs_nvidia)
            .map(|(s, _)| s.name())
            .collect();
        (!needs.is_empty()).then(|| {
            format!(
                "{} on: OpenCL C has no such operation; the OpenCL twin writes it in NVIDIA inline PTX, which only NVIDIA's OpenCL compiler accepts",
                needs.join(" and ")
            )
        })
    }

    /// Why this kernel cannot run at configuration `c` on that device, if it cannot:
    /// `unavailable`, and for the tensor-core family the architecture its mma shape needs.
    pub fn unavailable_at(&self, c: &Config, device: &DeviceInfo, hints: &Hints) -> Option<String> {
        if let Some(why) = self.unavailable(device, hints) {
            return Some(why);
        }
        if self.id == simt::SIMT_DIRECT.id {
            return simt::in_place_split_unavailable(c, device);
        }
        if self.id == thin::THIN.id {
            return thin::split_unavailable(c, device);
        }
        let (major, minor) = device.compute_capability?;
        // tcwg's architecture (exactly 9.0) is `unavailable`'s to judge; it has no MMA shape.
        if tcwg::arch_specific(self.id) {
            return None;
        }
        let need = (self.family == Family::TensorCore).then(|| tc::needs_sm(c))?;
        ((major, minor) < need).then(|| {
            format!(
                "its mma.sync shape (MMA={} in {}) needs sm_{}{} or later; this device is sm_{major}{minor}",
                c.get("MMA"),
                self.precision_of(c),
                need.0,
                need.1
            )
        })
    }

    /// The source in `language`, if the kernel is written in it.
    pub fn source_in(&self, language: Language) -> Option<&'static str> {
        self.sources
            .iter()
            .find(|(l, _)| *l == language)
            .map(|(_, s)| *s)
    }

    /// The prelude and the source `toolchain` compiles: found by the language
    /// it takes. Every built-in kernel has a twin in each language (a test checks).
    pub fn source(&self, toolchain: Toolchain) -> String {
        let language = toolchain.language();
        format!(
            "{}\n{}",
            prelude(language),
            self.source_in(language).unwrap_or_default()
        )
    }

    /// Every switch of this kernel with the state it has under `hints` on `toolchain`:
    /// the user's value where set, else the published one.
    pub fn switch_values(&self, toolchain: Toolchain, hints: &Hints) -> Vec<(SwitchUse, bool)> {
        self.switches
            .iter()
            .map(|s| {
                (
                    *s,
                    hints
                        .switch(s.name())
                        .unwrap_or_else(|| s.published(toolchain)),
                )
            })
            .collect()
    }

    /// Whether this kernel, at `c` with `hints`, forms its products from TF32
    /// operands (the tensor-core kernel's 1xTF32 switch in f32): a lower precision
    /// than FP32, checked against TF32's limits and labelled so.
    pub fn tf32_products(&self, c: &Config, hints: &Hints) -> bool {
        // TF32_SINGLE is off in the published state on every toolchain: on only where asked.
        self.has_switch(switches::TF32_SINGLE.name)
            && self.precision_of(c) == Precision::F32
            && hints.switch(switches::TF32_SINGLE.name) == Some(true)
    }

    /// How this kernel computes at `c` with `hints`: in the call's own arithmetic,
    /// f32 emulated from TF32 tensor-core products (3xTF32: FP32-accurate as the
    /// accuracy gate measures it, not FP32 arithmetic), or below the call's
    /// precision (a switch that lowers it turned away from its published state).
    pub fn arithmetic(&self, c: &Config, hints: &Hints) -> Arithmetic {
        let lowered = self.switches.iter().find(|s| {
            s.switch.lowers_precision
                && hints
                    .switch(s.name())
                    .is_some_and(|on| on != s.published_cuda || on != s.published_opencl)
        });
        match lowered {
            Some(s) => Arithmetic::Lower(s.name()),
            None if self.family == Family::TensorCore && self.precision_of(c) == Precision::F32 => {
                Arithmetic::EmulatedFp32
            }
            None => Arithmetic::Native,
        }
    }

    pub fn has_switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s.name() == name)
    }

    /// The hints as they apply to this kernel: switches it does not have are
    /// dropped, and so are settings equal to the published state on both
    /// toolchains, so that "published" is recorded as published.
    pub fn own_hints(&self, hints: &Hints) -> Hints {
        let mut h = hints.clone();
        h.switches.retain(|name, on| {
            self.switches.iter().any(|s| {
                s.name() == name && !(s.published_opencl == *on && s.published_cuda == *on)
            })
        });
        h
    }

    /// Compile options: every parameter and every switch of the kernel as a define.
    pub fn compile_options(
        &self,
        c: &Config,
        hints: &Hints,
        toolchain: Toolchain,
    ) -> CompileOptions {
        let mut o = CompileOptions::new();
        for (k, v) in &c.0 {
            o.defines.push((k.clone(), v.to_string()));
        }
        for (s, on) in self.switch_values(toolchain, hints) {
            o.defines
                .push((s.name().to_string(), u8::from(on).to_string()));
        }
        o.max_registers = hints.max_registers;
        o.fast_math = hints.fast_math;
        o.arch_specific = tcwg::arch_specific(self.id);
        o
    }

    pub fn tile(&self, c: &Config) -> (usize, usize, usize) {
        (self.operands.tile)(c)
    }

    /// Whether an indirect kernel reads A and B K-contiguous at `c`: A as A^T
    /// (column-major K x M) where its `KMAJOR_A` is 1, B as column-major K x N
    /// (not B^T) where its `KMAJOR_B` is 1. Kernels without these parameters
    /// take the indirect forms (A column-major M x K, B^T).
    pub fn k_major(&self, c: &Config) -> (bool, bool) {
        (c.get("KMAJOR_A") == 1, c.get("KMAJOR_B") == 1)
    }

    /// Launch geometry on (padded) sizes that are tile multiples.
    pub fn geometry(&self, c: &Config, m: usize, n: usize) -> Geometry {
        let (lx, ly) = (self.launch.local)(c);
        let (px, py) = (self.launch.per_item)(c);
        let mut g = Geometry::d2((m / px.max(1), n / py.max(1)), (lx, ly));
        if self.takes_local_at_launch(Language::CudaCpp) {
            g.launch_local = (self.local_bytes)(c).max(0) as usize;
        }
        g
    }

    /// What the compiler says of its entry in `build`, its shared memory counting
    /// what the `language` twin takes at launch at `c` (the compiler sees only
    /// the static part).
    pub fn resources(
        &self,
        build: &BuildReport,
        c: &Config,
        language: Language,
    ) -> Option<KernelResources> {
        let mut r = build.kernel(self.entry).cloned()?;
        self.add_launch_local(&mut r, c, language);
        Some(r)
    }

    /// `build` with its entry's shared memory counting what is taken at launch,
    /// for the callers that print or keep the whole report.
    pub fn count_launch_local(&self, build: &mut BuildReport, c: &Config, language: Language) {
        for r in build.kernels.iter_mut().filter(|r| r.name == self.entry) {
            self.add_launch_local(r, c, language);
        }
    }

    fn add_launch_local(&self, r: &mut KernelResources, c: &Config, language: Language) {
        if self.takes_local_at_launch(language) {
            let at_launch = (self.local_bytes)(c).max(0) as u64;
            r.shared_bytes = Some(r.shared_bytes.unwrap_or(0) + at_launch);
        }
    }

    /// Whether its twin in `language` takes its local memory at launch (so may
    /// use what the device allows past the static 48 KiB).
    pub fn takes_local_at_launch(&self, language: Language) -> bool {
        self.source_in(language)
            .is_some_and(|s| language.takes_local_at_launch(s))
    }

    pub fn threads_per_group(&self, c: &Config) -> usize {
        let (x, y) = (self.launch.local)(c);
        x * y
    }
}

/// Why a tensor-core kernel cannot run on `device`: it is written in NVIDIA inline
/// PTX (mma.sync, cp.async), which needs an NVIDIA GPU of sm_80 or later; wgmma
/// (`arch_specific`) needs sm_90a.
fn tc_unavailable(device: &DeviceInfo, arch_specific: bool) -> Option<String> {
    if !device.is_nvidia() {
        let needs = if arch_specific {
            "wgmma, cp.async: sm_90a, compute capability 9.0 only"
        } else {
            "mma.sync, cp.async: sm_80 or later"
        };
        return Some(format!(
            "it runs on NVIDIA tensor cores through inline PTX ({needs}); {} is not an NVIDIA GPU",
            device.name
        ));
    }
    match device.compute_capability {
        Some((major, minor)) if arch_specific && (major, minor) != (9, 0) => Some(format!(
            "it runs wgmma, an instruction of sm_90a's architecture-specific features (compute capability 9.0 only); this device is sm_{major}{minor}"
        )),
        Some((major, minor)) if major < 8 => Some(format!(
            "it needs tensor cores with mma.sync on f64 or tf32 and cp.async (sm_80 or later); this device is sm_{major}{minor}"
        )),
        _ => None,
    }
}

/// Every GEMM kernel, in order: the tutorial's, CLBlast's, the lecture's, gemmlab's SIMT (with
/// its kernel for thin calls) and tensor-core kernels.
pub fn all() -> &'static [KernelSpec] {
    static ALL: std::sync::LazyLock<Vec<KernelSpec>> = std::sync::LazyLock::new(|| {
        let mut v = tutorial::KERNELS.to_vec();
        v.extend(clblast::KERNELS.iter().copied());
        v.extend(lecture::KERNELS.iter().copied());
        v.extend(simt::KERNELS.iter().copied());
        v.extend(thin::KERNELS.iter().copied());
        v.extend(tc::KERNELS.iter().copied());
        v.extend(tcwg::KERNELS.iter().copied());
        v
    });
    &ALL
}

/// Looks a kernel up by id ("gemm6"), number ("6") or entry ("myGEMM6").
pub fn find(name: &str) -> Result<&'static KernelSpec> {
    let n = name.trim();
    all()
        .iter()
        .find(|k| {
            k.id.eq_ignore_ascii_case(n)
                || k.entry.eq_ignore_ascii_case(n)
                || k.id.trim_start_matches("gemm") == n.trim_start_matches('0')
        })
        .ok_or_else(|| Error::UnknownKernel {
            name: name.to_string(),
            known: all().iter().map(|k| k.id).collect::<Vec<_>>().join(", "),
        })
}

/// `--kernels 1,6,gemm11` or "all".
pub fn select(list: Option<&str>) -> Result<Vec<&'static KernelSpec>> {
    match list.map(str::trim) {
        None | Some("") | Some("all") => Ok(all().iter().collect()),
        Some(l) => l
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(find)
            .collect(),
    }
}

/// Parses NAME=VALUE with an integer value.
pub fn parse_define(s: &str) -> Result<(String, i64)> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| Error::invalid(format!("--define expects NAME=VALUE, got '{s}'")))?;
    let v = value
        .trim()
        .parse::<i64>()
        .map_err(|_| Error::invalid(format!("--define {name}: '{value}' is not an integer")))?;
    Ok((name.trim().to_string(), v))
}

/// The support kernels (transpose, pad, unpad), shared by every GEMM kernel.
pub struct Support;

impl Support {
    pub const OPENCL: &'static str = include_str!("../../../kernels-cl/support.cl");
    pub const CUDA: &'static str = include_str!("../../../kernels-cu/support.cu");
    pub const GROUP: usize = 16;

    pub fn source(toolchain: Toolchain) -> String {
        let body = match toolchain.language() {
            Language::OpenClC => Self::OPENCL,
            Language::CudaCpp => Self::CUDA,
        };
        format!("{}\n{body}", prelude(toolchain.language()))
    }

    /// The BLAS routine's pack, unpack and scale kernels (`real`).
    pub const ROUTINE_OPENCL: &'static str = include_str!("../../../kernels-cl/routine.cl");
    pub const ROUTINE_CUDA: &'static str = include_str!("../../../kernels-cu/routine.cu");

    pub fn routine_source(toolchain: Toolchain) -> String {
        let body = match toolchain.language() {
            Language::OpenClC => Self::ROUTINE_OPENCL,
            Language::CudaCpp => Self::ROUTINE_CUDA,
        };
        format!("{}\n{body}", prelude(toolchain.language()))
    }

    /// The device check of a result against its f64 reference (no prelude: it
    /// needs no switch, and doubles where the device has them).
    pub const CHECK_OPENCL: &'static str = include_str!("../../../kernels-cl/check.cl");
    pub const CHECK_CUDA: &'static str = include_str!("../../../kernels-cu/check.cu");
    /// Work-items per work-group of the check kernels (`CHECK_GROUP` in their source).
    pub const CHECK_GROUP: usize = 256;

    pub fn check_source(toolchain: Toolchain) -> &'static str {
        match toolchain.language() {
            Language::OpenClC => Self::CHECK_OPENCL,
            Language::CudaCpp => Self::CHECK_CUDA,
        }
    }

    pub fn routine_options(precision: Precision) -> CompileOptions {
        CompileOptions::new().define(PRECISION, precision.define())
    }

    /// The support kernels are ours, not the tutorial's: they keep their launch bounds.
    pub fn options() -> CompileOptions {
        CompileOptions::new()
            .define("USE_BOUNDS", 1)
            .define("TRANSPOSEX", Self::GROUP)
            .define("TRANSPOSEY", Self::GROUP)
            .define("PADX", Self::GROUP)
            .define("PADY", Self::GROUP)
    }

    /// Geometry covering an x by y index space with 16x16 groups.
    pub fn geometry(x: usize, y: usize) -> Geometry {
        let g = Self::GROUP;
        Geometry::d2((round_up(x.max(1), g), round_up(y.max(1), g)), (g, g))
    }

    /// The side of the tile a work-group of the routine's `pack_matrix`,
    /// `pack_pair` and `unpack_matrix` moves (`PACK_TILE` in their source) ...
    pub const PACK_TILE: usize = 32;
    /// ... with this many rows of work-items, each taking every
    /// PACK_TILE/PACK_ROWS-th column (`PACK_ROWS`).
    pub const PACK_ROWS: usize = 8;

    /// The routine's `pack_matrix` and `unpack_matrix` over an x by y matrix:
    /// 32 x 8 work-groups, each moving a 32 x 32 tile (4 columns a work-item).
    pub fn pack_geometry(x: usize, y: usize) -> Geometry {
        let (tile, rows) = (Self::PACK_TILE, Self::PACK_ROWS);
        Geometry::d2(
            (
                round_up(x.max(1), tile),
                round_up(y.max(1), tile) / (tile / rows),
            ),
            (tile, rows),
        )
    }

    /// `pack_pair` over two packs of `tiles` 32 x 32 tiles of dst in all: its
    /// work-groups in a row.
    pub fn pack_pair_geometry(tiles: usize) -> Geometry {
        let (tile, rows) = (Self::PACK_TILE, Self::PACK_ROWS);
        Geometry::d2((tiles.max(1) * tile, rows), (tile, rows))
    }
}

/// The warp-tiled families' first rule (simt, tc): their warps tile the block tile.
pub(crate) const WARP_TILES_DIVIDE: Constraint = Constraint {
    message: "the warp tile must divide the block tile (BM a multiple of WM, BN of WN): the work-group's warps tile it",
    involves: &["BM", "WM", "BN", "WN"],
    holds: |c| divides(c.get("WM"), c.get("BM")) && divides(c.get("WN"), c.get("BN")),
};

/// Whether `a` is positive and divides `b`: the constraints' "a multiple of".
pub(crate) fn divides(a: i64, b: i64) -> bool {
    a > 0 && b % a == 0
}

/// `v` rounded up to a multiple of `multiple` (unchanged for 0 or 1).
pub fn round_up(v: usize, multiple: usize) -> usize {
    if multiple <= 1 {
        v
    } else {
        v.div_ceil(multiple) * multiple
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_kernel_has_a_source_in_the_language_of_every_toolchain() {
        for k in all() {
            for t in Toolchain::ALL {
                let src = k.source_in(t.language()).unwrap_or_default();
                assert!(
                    src.contains(k.entry),
                    "{} has no {} source",
                    k.id,
                    t.language().name()
                );
            }
        }
    }

    #[test]
    fn finds_kernels_by_any_name() {
        assert_eq!(find("gemm6").unwrap().entry, "myGEMM6");
        assert_eq!(find("6").unwrap().id, "gemm6");
        assert_eq!(find("myGEMM11").unwrap().id, "gemm11");
        let e = find("gemm99").unwrap_err().to_string();
        assert!(e.contains("gemm99") && e.contains("gemm1,"), "{e}");
        assert_eq!(select(Some("1,gemm2, 11")).unwrap().len(), 3);
        assert_eq!(select(None).unwrap().len(), all().len());
    }

    #[test]
    fn defines_parse() {
        assert_eq!(parse_define("TS=16").unwrap(), ("TS".into(), 16));
        assert!(parse_define("TS").is_err());
        assert!(parse_define("TS=x").is_err());
    }

    #[test]
    fn violated_constraint_names_it_and_the_values() {
        let k = find("gemm4").unwrap();
        let e = k.config(&[("TS".into(), 32), ("WIDTH".into(), 8)]);
        assert!(e.is_ok());
        let k3 = find("gemm7").unwrap();
        let e = k3
            .config(&[
                ("TSM".into(), 64),
                ("TSN".into(), 64),
                ("WPTM".into(), 4),
                ("WPTN".into(), 4),
                ("TSK".into(), 4),
                ("WIDTH".into(), 4),
            ])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("TSK*TSM") && e.contains("TSK=4") && e.contains("WIDTH=4"),
            "{e}"
        );
        let e = find("gemm3")
            .unwrap()
            .config(&[("WPT".into(), 3)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("WPT") && e.contains("WPT=3"), "{e}");
        let e = find("gemm2")
            .unwrap()
            .config(&[("BOGUS".into(), 1)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown parameter BOGUS") && e.contains("TS"),
            "{e}"
        );
    }

    #[test]
    fn every_default_config_is_valid_and_tiles_divide() {
        for k in all() {
            let c = k.defaults();
            k.validate(&c).unwrap_or_else(|e| panic!("{}: {e}", k.id));
            // The lecture's geometry is the driver's (rounded to its blocks), not per tile.
            if !matches!(k.abi, Abi::Lecture { .. }) {
                let (tm, tn, _) = k.tile(&c);
                let g = k.geometry(&c, tm * 4, tn * 4);
                g.validate().unwrap_or_else(|e| panic!("{}: {e}", k.id));
            }
            assert!(k.threads_per_group(&c) <= 1024, "{}", k.id);
        }
    }
}
