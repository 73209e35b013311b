//! A user's kernel on a device: compile, bind its arguments, compute the
//! reference, run once on poisoned outputs, check, and time with the same
//! `measure::interleaved` every built-in kernel uses.

use crate::measure::split::Step;
use std::collections::BTreeMap;

use crate::backend::guard::Guarded;
use crate::backend::{AnyBackend, Arg, Backend, Buffer, BuildReport, Elem, Program};
use crate::error::{Error, Result};
use crate::gemm::check::CheckReport;
use crate::gemm::driver::{Session, Status};
use crate::kernel::builtin::{Config, Hints};

use super::data::{compare, poison_value, HostBuf, Poison, POISON_F32_BITS};
use crate::kernel::user::model::{
    Access, ArgKind, Dims, Instance, Reference, UserKernel, UserLaunch,
};

/// Outputs by argument name.
pub type Outputs = BTreeMap<String, HostBuf>;

pub use crate::kernel::user::compile_options;

/// A name's share of the seed: the same name gets the same data in every spec.
fn seed_for(seed: u64, name: &str) -> u64 {
    name.bytes().fold(seed ^ 0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

/// The initial contents of every in and inout buffer at this instance (None for
/// outputs and scalars), generated from the seed and the spec's fills.
pub fn inputs(kernel: &UserKernel, inst: &Instance, seed: u64) -> Vec<Option<HostBuf>> {
    kernel
        .args
        .iter()
        .zip(&inst.lens)
        .map(|(a, n)| match (&a.kind, n) {
            (ArgKind::Buffer { access, fill, .. }, Some(n))
                if !matches!(access, Access::Out | Access::Local) =>
            {
                Some(HostBuf::generate(
                    a.elem,
                    *n,
                    *fill,
                    seed_for(seed, &a.name),
                ))
            }
            _ => None,
        })
        .collect()
}

/// A program with its buffers allocated and its launches' arguments bound.
/// Every buffer is a view into an allocation with guard zones before and after
/// it ([`Guarded`]); the launches take the views.
pub struct Bound {
    pub program: Program,
    /// How the outputs' poison is recognised on this device.
    pub poison: Poison,
    buffers: Vec<Option<Buffer>>,
    guards: Vec<Option<Guarded>>,
    launches: Vec<(String, crate::backend::Geometry, Vec<Arg>)>,
}

impl Bound {
    /// Every launch with the runtime factor `sweep jit --carveout` sets (CUDA only).
    fn with_carveout(mut self, carveout: Option<u32>) -> Bound {
        for (_, g, _) in &mut self.launches {
            g.carveout = carveout;
        }
        self
    }

    /// Allocates every buffer, uploads the inputs, poisons the outputs.
    pub fn new(
        be: &mut AnyBackend,
        program: Program,
        kernel: &UserKernel,
        inst: &Instance,
        inputs: &[Option<HostBuf>],
    ) -> Result<Bound> {
        let mut guards: Vec<Option<Guarded>> = Vec::new();
        let fail = |be: &mut AnyBackend, guards: &mut Vec<Option<Guarded>>, e: Error| {
            for g in guards.drain(..).flatten() {
                g.release(be);
            }
            e
        };
        for (i, a) in kernel.args.iter().enumerate() {
            let Some(n) = inst.lens[i].filter(|_| !a.is_local()) else {
                guards.push(None);
                continue;
            };
            let g = match Guarded::new(be, a.elem, n) {
                Ok(g) => g,
                Err(e) => return Err(fail(be, &mut guards, e)),
            };
            let b = g.view;
            guards.push(Some(g));
            let r = match &inputs[i] {
                Some(data) => data.upload(be, &b),
                None => be.fill(&b, poison_value(a.elem)),
            };
            if let Err(e) = r {
                return Err(fail(be, &mut guards, e));
            }
        }
        let buffers: Vec<Option<Buffer>> =
            guards.iter().map(|g| g.as_ref().map(|g| g.view)).collect();
        let poison = poison_kept(be, kernel, &guards);
        // Local memory: an OpenCL __local argument of its bytes; on CUDA the
        // launch's dynamic shared memory, and no argument.
        let cuda = be.info().toolchain.language() == crate::backend::Language::CudaCpp;
        let local_bytes = |i: usize| inst.lens[i].unwrap_or(0) * kernel.args[i].elem.size();
        let launches = inst
            .launches
            .iter()
            .map(|(entry, g, idx)| {
                let mut geometry = *g;
                let mut args = Vec::new();
                for &i in idx {
                    if kernel.args[i].is_local() {
                        match cuda {
                            true => geometry.launch_local += local_bytes(i),
                            false => args.push(Arg::Local(local_bytes(i))),
                        }
                        continue;
                    }
                    args.push(match (buffers[i], inst.scalars[i]) {
                        (Some(b), _) => Arg::Buf(b),
                        (None, Some(v)) => match kernel.args[i].elem {
                            Elem::F32 => Arg::F32(v as f32),
                            Elem::F64 => Arg::F64(v),
                            Elem::I32 => Arg::I32(v as i32),
                            Elem::U32 => Arg::U32(v as u32),
                        },
                        (None, None) => Arg::I32(0),
                    });
                }
                (entry.clone(), geometry, args)
            })
            .collect();
        Ok(Bound {
            program,
            poison,
            buffers,
            guards,
            launches,
        })
    }

    /// Every launch in order, each `count` times back to back; the summed device time.
    pub fn run(&self, be: &mut AnyBackend, count: usize) -> Result<u64> {
        let mut total = 0;
        for (entry, g, args) in &self.launches {
            total += be
                .launch_batch(&self.program, entry, g, args, count)
                .map_err(|e| explain_missing_entry(e, entry))?;
        }
        Ok(total)
    }

    /// The out and inout buffers' contents, by name.
    pub fn outputs(&self, be: &mut AnyBackend, kernel: &UserKernel) -> Result<Outputs> {
        let mut out = Outputs::new();
        for (a, b) in kernel.args.iter().zip(&self.buffers) {
            if let (true, Some(b)) = (a.is_output(), b) {
                out.insert(a.name.clone(), HostBuf::download(be, b)?);
            }
        }
        Ok(out)
    }

    /// Every write outside a buffer since the buffers were made, buffer by
    /// buffer, in words; None where every guard zone is intact.
    pub fn out_of_bounds(
        &self,
        be: &mut AnyBackend,
        kernel: &UserKernel,
    ) -> Result<Option<String>> {
        let mut said = Vec::new();
        for (a, g) in kernel.args.iter().zip(&self.guards) {
            if let Some(g) = g {
                said.extend(g.breach(be, &a.name)?);
            }
        }
        Ok((!said.is_empty()).then(|| said.join("; ")))
    }

    pub fn release(self, be: &mut AnyBackend) {
        for g in self.guards.into_iter().flatten() {
            g.release(be);
        }
    }
}

/// Whether the device kept the float poison's payload where it filled an out
/// buffer (its first element read back): then a NaN the kernel writes is told
/// from an element it never wrote; else any NaN there counts as unwritten.
fn poison_kept(be: &mut AnyBackend, kernel: &UserKernel, guards: &[Option<Guarded>]) -> Poison {
    let out = kernel.args.iter().zip(guards).find(|(a, g)| {
        g.is_some()
            && a.elem.is_float()
            && matches!(
                a.kind,
                ArgKind::Buffer {
                    access: Access::Out,
                    ..
                }
            )
    });
    let Some((_, Some(g))) = out else {
        return Poison::Exact;
    };
    let first = g.head(be).and_then(|v| {
        let got = HostBuf::download(be, &v);
        be.free(v);
        got
    });
    match first {
        Ok(HostBuf::F32(v)) if v.first().is_some_and(|x| x.to_bits() == POISON_F32_BITS) => {
            Poison::Exact
        }
        Ok(HostBuf::F64(v))
            if v.first()
                .is_some_and(|x| x.to_bits() == poison_value(Elem::F64).to_bits()) =>
        {
            Poison::Exact
        }
        _ => Poison::AnyNan,
    }
}

/// CUDA kernels are found by their unmangled names: say so when one is missing.
fn explain_missing_entry(e: Error, entry: &str) -> Error {
    let text = e.to_string();
    if text.contains("has no kernel") || text.contains("no function") || text.contains("not found")
    {
        Error::invalid(format!(
            "entry point {entry} is not in the compiled program ({text}); in CUDA declare it extern \"C\" __global__ so its name is not mangled"
        ))
    } else {
        e
    }
}

/// Compiles `kernel` at `config` on a session's backend, naming it by the spec.
pub fn build(
    be: &mut AnyBackend,
    kernel: &UserKernel,
    config: &Config,
    hints: &Hints,
) -> Result<(Program, BuildReport)> {
    let tc = be.info().toolchain;
    let src = kernel.source(tc).ok_or_else(|| Error::Unavailable {
        kernel: kernel.id.clone(),
        toolchain: tc.to_string(),
        reason: kernel.not_applicable(tc).unwrap_or_default(),
    })?;
    be.compile(&kernel.id, &src.text, &compile_options(config, hints))
}

/// Runs `launches` of `kernel` at its defaults on fresh buffers and returns the outputs.
fn run_defaults(
    be: &mut AnyBackend,
    kernel: &UserKernel,
    dims: &Dims,
    launches: &[UserLaunch],
    own: bool,
    seed: u64,
    given: Option<(&UserKernel, &[Option<HostBuf>])>,
) -> Result<Outputs> {
    let config = kernel.defaults();
    let inst = kernel.instantiate_launches(&config, dims, launches, own)?;
    let mut data = inputs(kernel, &inst, seed);
    // A reference spec reads the measured kernel's inputs where names and shapes agree.
    if let Some((owner, owner_inputs)) = given {
        for (i, a) in kernel.args.iter().enumerate() {
            if let Some(j) = owner.args.iter().position(|o| o.name == a.name) {
                if let (Some(mine), Some(theirs)) = (&data[i], &owner_inputs[j]) {
                    if mine.len() == theirs.len()
                        && std::mem::discriminant(mine) == std::mem::discriminant(theirs)
                    {
                        data[i] = Some(theirs.clone());
                    }
                }
            }
        }
    }
    let (program, report) = build(be, kernel, &config, &Hints::default())?;
    let why = super::signature::mismatch(kernel, launches, |entry| {
        be.kernel_params(&program, entry).or_else(|| {
            (report.ptx.as_deref()).and_then(|p| crate::backend::ptx::entry_params(p, entry))
        })
    });
    if let Some(why) = why {
        be.release_program(program);
        return Err(Error::Arguments(format!("the reference: {why}")));
    }
    let bound = Bound::new(be, program, kernel, &inst, &data);
    let result = match bound {
        Ok(b) => {
            let r = b.run(be, 1).and_then(|_| b.outputs(be, kernel));
            let outside = b.out_of_bounds(be, kernel);
            b.release(be);
            match outside {
                Ok(Some(why)) => Err(Error::invalid(format!(
                    "the reference run of {} at its defaults wrote out of bounds: {why}",
                    kernel.id
                ))),
                Ok(None) => r,
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    be.release_program(program);
    result
}

/// The reference outputs at `dims` on this backend, as the spec's check says.
/// `Reference::Toolchains` is computed like `Defaults`; the caller runs it on the
/// first toolchain and hands the result to the others.
pub fn reference(
    be: &mut AnyBackend,
    kernel: &UserKernel,
    dims: &Dims,
    seed: u64,
) -> Result<Outputs> {
    let what = |e: Error| match e {
        // A spec that does not fit its kernel, or a source that does not compile,
        // says so in its own words.
        Error::Arguments(_) | Error::Compile { .. } => e,
        e => Error::Check {
            what: format!(
                "{}'s reference ({})",
                kernel.id,
                kernel.check.reference.describe()
            ),
            detail: e.to_string(),
        },
    };
    match &kernel.check.reference {
        Reference::Defaults | Reference::Toolchains => {
            run_defaults(be, kernel, dims, &kernel.launches, true, seed, None).map_err(what)
        }
        Reference::Launches(l) => {
            run_defaults(be, kernel, dims, l, false, seed, None).map_err(what)
        }
        Reference::Spec(other) => {
            let other_dims = other.dims_shared_with(dims)?;
            // The inputs as the measured kernel sees them (their lengths come from
            // the size; the per-size constraints are the measured launches' business).
            let inst = kernel.instantiate_launches(&kernel.defaults(), dims, &[], false)?;
            let mine = inputs(kernel, &inst, seed);
            let out = run_defaults(
                be,
                other,
                &other_dims,
                &other.launches,
                true,
                seed,
                Some((kernel, &mine)),
            )
            .map_err(what)?;
            Ok(out)
        }
    }
}

/// Where a configuration's code comes from.
pub enum Code<'a> {
    /// The spec's source in the session's language, compiled now.
    Source,
    /// What the session's compiler already made (the tuner's compile pool).
    Built(crate::backend::Artefact),
    /// PTX another toolchain made, loaded through this session's JIT (`sweep jit`).
    Ptx(&'a str),
}

/// A configuration compiled, bound, run once on poisoned outputs and checked.
pub struct Prepared {
    pub bound: Bound,
    pub build: BuildReport,
    /// Device time of the checked run.
    pub check_ns: u64,
}

/// The check of a kernel at its defaults when its reference is itself.
pub const POISON_ONLY: &str =
    "poison only: at its defaults the kernel is its own reference, so only unwritten elements are caught";

/// What preparing gave: a kernel ready to time, or why not.
pub type Attempt = crate::gemm::driver::Attempt<Prepared>;

/// Loads a compiled (or compiles) configuration, runs it once and checks every
/// output against `reference`. Kernel-level failures are the attempt's status.
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    session: &Session,
    kernel: &UserKernel,
    config: &Config,
    hints: &Hints,
    inst: &Instance,
    data: &[Option<HostBuf>],
    reference: &Outputs,
    code: Code<'_>,
) -> Attempt {
    let mut be = session.backend.borrow_mut();
    let tc = be.info().toolchain;
    let mut attempt = Attempt {
        prepared: None,
        status: Status::Ok,
        build: None,
        check: None,
    };
    // Another toolchain's PTX needs no source of this session's language.
    let own = !matches!(code, Code::Ptx(_));
    let unmet = kernel.requires.unmet(be.info());
    if let Some(why) = (kernel.not_applicable(tc).filter(|_| own)).or(unmet) {
        attempt.status = Status::Unavailable(why);
        return attempt;
    }
    let built = match code {
        Code::Source => build(&mut be, kernel, config, hints),
        Code::Built(a) => be.load(&kernel.id, a),
        Code::Ptx(ptx) => be.load_ptx(&kernel.id, ptx, hints.max_registers),
    };
    let (program, report) = match built {
        Ok(x) => x,
        Err(e) => {
            attempt.status = Status::from_error(&e);
            return attempt;
        }
    };
    session.lap(Step::Load);
    attempt.build = Some(report.clone());
    // Every entry point a launch names must be in the program: said with the spec's line.
    if let Some(why) = missing_entry(kernel, &report, tc) {
        be.release_program(program);
        attempt.status = Status::CompileError(why);
        return attempt;
    }
    // The spec's arguments against the kernel's own signature, before any launch.
    let ptx = report.ptx.clone();
    let why = super::signature::mismatch(kernel, &kernel.launches, |entry| {
        be.kernel_params(&program, entry).or_else(|| {
            ptx.as_deref()
                .and_then(|p| crate::backend::ptx::entry_params(p, entry))
        })
    });
    if let Some(why) = why {
        be.release_program(program);
        attempt.status = Status::BadArguments(why);
        return attempt;
    }
    let bound = match Bound::new(&mut be, program, kernel, inst, data) {
        Ok(b) => b.with_carveout(hints.carveout),
        Err(e) => {
            be.release_program(program);
            attempt.status = Status::from_error(&e);
            return attempt;
        }
    };
    session.lap(Step::Setup);
    let ran = bound.run(&mut be, 1).and_then(|ns| {
        session.lap(Step::CheckedRun);
        let o = bound.outputs(&mut be, kernel);
        session.lap(Step::Download);
        o.map(|o| (ns, o))
    });
    let (check_ns, outputs) = match ran {
        Ok(x) => x,
        Err(e) => {
            bound.release(&mut be);
            be.release_program(program);
            attempt.status = Status::LaunchError(e.to_string());
            return attempt;
        }
    };
    // A write outside any buffer is the row's error, whatever the outputs hold.
    let outside = match bound.out_of_bounds(&mut be, kernel) {
        Ok(why) => why.map(Status::OutOfBounds),
        Err(e) => Some(Status::LaunchError(format!("reading the guard zones: {e}"))),
    };
    if let Some(status) = outside {
        bound.release(&mut be);
        be.release_program(program);
        attempt.status = status;
        return attempt;
    }
    let (mut merged, failure) = check_outputs(kernel, &outputs, reference, bound.poison);
    // At its defaults a kernel whose reference is itself is checked for the
    // poison alone (every out element written): the row says so.
    if matches!(kernel.check.reference, Reference::Defaults) && *config == kernel.defaults() {
        if let Some(m) = merged.as_mut() {
            m.method = Some(POISON_ONLY.to_string());
        }
    }
    attempt.check = merged;
    session.lap(Step::Check);
    if let Some(why) = failure {
        bound.release(&mut be);
        be.release_program(program);
        attempt.status = Status::WrongResult(why);
        return attempt;
    }
    attempt.prepared = Some(Prepared {
        bound,
        build: report,
        check_ns,
    });
    attempt
}

/// Why a launch's entry point is not in the built program, said with the
/// spec's line; None where every entry is there (or the build names none).
fn missing_entry(
    kernel: &UserKernel,
    report: &BuildReport,
    tc: crate::backend::Toolchain,
) -> Option<String> {
    if report.kernels.is_empty() {
        return None;
    }
    let l = kernel
        .launches
        .iter()
        .find(|l| report.kernel(&l.entry).is_none())?;
    let mut have: Vec<&str> = report.kernels.iter().map(|k| k.name.as_str()).collect();
    have.sort_unstable();
    Some(format!(
        "{}:{}: entry point {} is not in the {} program (it has {}){}",
        kernel.path.display(),
        l.line,
        l.entry,
        tc,
        have.join(", "),
        if tc.language() == crate::backend::Language::CudaCpp {
            "; declare CUDA entry points extern \"C\" so their names are not mangled"
        } else {
            ""
        }
    ))
}

/// Every output against the reference: one report (the worst of each
/// measure) and the first failure's words.
fn check_outputs(
    kernel: &UserKernel,
    outputs: &Outputs,
    reference: &Outputs,
    poison: Poison,
) -> (Option<CheckReport>, Option<String>) {
    let method = format!("against {}", kernel.check.reference.describe());
    let mut merged: Option<CheckReport> = None;
    let mut failure: Option<String> = None;
    for a in kernel.args.iter().filter(|a| a.is_output()) {
        let (Some(got), Some(want)) = (outputs.get(&a.name), reference.get(&a.name)) else {
            continue;
        };
        let out_only = matches!(
            a.kind,
            ArgKind::Buffer {
                access: Access::Out,
                ..
            }
        );
        let (r, why) = compare(
            &a.name,
            got,
            want,
            kernel.check.tolerance,
            if out_only { poison } else { Poison::None },
            &method,
        );
        // Every failing buffer is named, not only the first.
        failure = match (failure, why) {
            (Some(f), Some(w)) => Some(format!("{f}; {w}")),
            (f, w) => f.or(w),
        };
        merged = Some(match merged {
            None => r,
            Some(m) => merge(m, r),
        });
    }
    (merged, failure)
}

/// One report over several output buffers: the worst of each measure.
fn merge(a: CheckReport, b: CheckReport) -> CheckReport {
    CheckReport {
        rel_frobenius: a.rel_frobenius.max(b.rel_frobenius),
        max_err_over_rms: a.max_err_over_rms.max(b.max_err_over_rms),
        non_finite: a.non_finite + b.non_finite,
        worst_index: if b.max_err_over_rms > a.max_err_over_rms {
            b.worst_index
        } else {
            a.worst_index
        },
        passed: a.passed && b.passed,
        compared: Some(a.compared.unwrap_or(0) + b.compared.unwrap_or(0)),
        ..a
    }
}

impl Prepared {
    pub fn release(self, session: &Session) {
        let mut be = session.backend.borrow_mut();
        let program = self.bound.program;
        self.bound.release(&mut be);
        be.release_program(program);
    }
}

/// Times a prepared kernel through the shared measurement method (the tuner's
/// screens; experiments go through `experiment::measuring`).
pub struct Runner<'a> {
    pub session: &'a Session,
    pub prepared: &'a Prepared,
    /// A scratch buffer overwritten before each cold repetition.
    pub flush: Option<Buffer>,
}

impl crate::measure::Timed for Runner<'_> {
    fn run_batch(&mut self, count: usize) -> Result<u64> {
        let mut be = self.session.backend.borrow_mut();
        self.prepared.bound.run(&mut be, count)
    }

    fn flush(&mut self) -> Result<()> {
        self.session.flush_l2(self.flush)
    }
}
