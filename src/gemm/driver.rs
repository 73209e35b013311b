//! The GEMM driver: runs one registry kernel on one backend for column-major
//! C = A * B of any M, N, K >= 1. Operands are padded to the kernel's tile
//! multiples (and B transposed where the kernel reads B^T) by the support
//! kernels; that pre/post-processing is timed apart from the kernel. Every
//! prepared kernel is run once on a poisoned C and checked before it is timed.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use super::check::{
    check_against, check_partials, check_widened, CheckReport, Reference, DEVICE_PARTIAL,
};
use super::data::{round_up, Operands, C_GAP};
use super::problem::{Matrix, Precision, Problem};
use super::stage;
use crate::backend::guard::Guarded;
use crate::backend::{
    AnyBackend, Arg, Artefact, Backend, Buffer, BuildReport, Elem, GemmCall, Geometry, HostData,
    HostDataMut, HostF32, HostF64, KernelResources, Launch, Program,
};
use crate::error::{Error, Result};
use crate::kernel::builtin::{Abi, Config, Hints, KernelSpec, Support};
use crate::measure::clocks::ClockReading;
use crate::measure::split::{Laps, Step};
use crate::measure::Timed;

/// Why a cell of the comparison has no speed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Status {
    Ok,
    Unavailable(String),
    InvalidConfig(String),
    CompileError(String),
    LaunchError(String),
    OutOfMemory(String),
    WrongResult(String),
    /// Wrote outside a buffer: a guard zone before or after it changed.
    OutOfBounds(String),
    /// The arguments a user's spec gives do not fit the kernel's signature.
    BadArguments(String),
    /// Ran past its time limit and was stopped (the process measuring it was killed).
    TimedOut(String),
    /// The process measuring it died (a signal, e.g. a segmentation fault on a CPU device).
    Crashed(String),
}

impl Status {
    pub fn is_ok(&self) -> bool {
        matches!(self, Status::Ok)
    }

    /// A short word for tables.
    pub fn label(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unavailable(_) => "n/a",
            Status::InvalidConfig(_) => "invalid",
            Status::CompileError(_) => "compile error",
            Status::LaunchError(_) => "launch error",
            Status::OutOfMemory(_) => "out of memory",
            Status::WrongResult(_) => "WRONG",
            Status::OutOfBounds(_) => "OUT OF BOUNDS",
            Status::BadArguments(_) => "bad arguments",
            Status::TimedOut(_) => "timed out",
            Status::Crashed(_) => "crashed",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Ok => None,
            Status::Unavailable(r)
            | Status::InvalidConfig(r)
            | Status::CompileError(r)
            | Status::LaunchError(r)
            | Status::OutOfMemory(r)
            | Status::WrongResult(r)
            | Status::OutOfBounds(r)
            | Status::BadArguments(r)
            | Status::TimedOut(r)
            | Status::Crashed(r) => Some(r),
        }
    }

    /// The status an error stands for (a compile error, an invalid configuration, ...).
    pub fn from_error(e: &Error) -> Status {
        match e {
            Error::Compile { .. } => Status::CompileError(e.to_string()),
            Error::Constraint { .. } => Status::InvalidConfig(e.to_string()),
            Error::Unavailable { .. } => Status::Unavailable(e.to_string()),
            Error::OutOfMemory { .. } => Status::OutOfMemory(e.to_string()),
            Error::Check { .. } => Status::WrongResult(e.to_string()),
            Error::Arguments(why) => Status::BadArguments(why.clone()),
            Error::OutOfBounds(why) => Status::OutOfBounds(why.clone()),
            _ => Status::LaunchError(e.to_string()),
        }
    }
}

/// A and B of the current problem on one device, at their original sizes.
pub struct DeviceOperands {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub seed: u64,
    pub inputs: crate::gemm::data::Inputs,
    pub problem: Problem,
    /// A and B as the problem stores them (layout, ld, offset), in its precision.
    pub a: Buffer,
    pub b: Buffer,
    /// The f64 reference C on the device, for `Session::device_checks`, with the
    /// fingerprint of the host reference it was made from.
    pub reference: Option<(u64, Buffer)>,
}

/// C before a call, on the device, as the problem stores it (`Operands::stored`):
/// where beta is 0 and C fills its buffer (no gaps, no offset), that is NaN
/// everywhere, set on the device instead of built and uploaded (the tuner's
/// case, once per configuration).
pub(crate) fn upload_c(be: &mut AnyBackend, ops: &Operands) -> Result<Buffer> {
    let buf = be.alloc(ops.problem.precision.elem(), c_len(ops))?;
    match write_c(be, &buf, ops) {
        Ok(()) => Ok(buf),
        Err(e) => {
            be.free(buf);
            Err(e)
        }
    }
}

/// [`upload_c`] inside guard zones: a kernel's write past C's ends is seen.
fn upload_c_guarded(be: &mut AnyBackend, ops: &Operands) -> Result<Guarded> {
    let g = Guarded::new(&mut *be, ops.problem.precision.elem(), c_len(ops))?;
    match write_c(be, &g.view, ops) {
        Ok(()) => Ok(g),
        Err(e) => {
            g.release(be);
            Err(e)
        }
    }
}

/// Whether C before the call is all NaN (beta 0, C filling its buffer).
fn c_is_poison(ops: &Operands) -> bool {
    let p = &ops.problem;
    let s = p.storage(Matrix::C);
    let whole = s.offset == 0 && s.rows > 0 && s.cols > 0 && s.ld == s.rows;
    p.beta == 0.0 && whole
}

fn c_len(ops: &Operands) -> usize {
    match c_is_poison(ops) {
        true => ops.problem.storage(Matrix::C).buffer_len(),
        false => ops.stored(Matrix::C, C_GAP).len().max(1),
    }
}

fn write_c(be: &mut AnyBackend, buf: &Buffer, ops: &Operands) -> Result<()> {
    match c_is_poison(ops) {
        true => be.fill(buf, f64::NAN),
        false => write_real(
            be,
            buf,
            &ops.stored(Matrix::C, C_GAP),
            ops.problem.precision,
        ),
    }
}

/// A device buffer holding `values` in `precision` (widened for f64: the values are exact in both).
pub(crate) fn upload_real(
    be: &mut AnyBackend,
    values: &[f32],
    precision: Precision,
) -> Result<Buffer> {
    let buf = be.alloc(precision.elem(), values.len().max(1))?;
    match write_real(be, &buf, values, precision) {
        Ok(()) => Ok(buf),
        Err(e) => {
            be.free(buf);
            Err(e)
        }
    }
}

fn write_real(
    be: &mut AnyBackend,
    buf: &Buffer,
    values: &[f32],
    precision: Precision,
) -> Result<()> {
    match precision {
        Precision::F32 if values.is_empty() => be.fill(buf, 0.0),
        Precision::F32 => be.upload(buf, HostData::F32(values)),
        Precision::F64 => {
            let mut wide = vec![0.0f64; values.len().max(1)];
            super::parallel::for_chunks(&mut wide[..values.len()], 1 << 20, |lo, part| {
                for (w, &x) in part.iter_mut().zip(&values[lo..]) {
                    *w = f64::from(x);
                }
            });
            be.upload(buf, HostData::F64(&wide))
        }
    }
}

/// One backend and what it keeps between kernels: the support program,
/// the uploaded operands, a scratch buffer for cold-cache flushes.
pub struct Session {
    pub backend: RefCell<AnyBackend>,
    /// Where experiments keep the PTX of every build they measure (`--keep-ptx`).
    pub keep_ptx: Option<std::path::PathBuf>,
    /// NVML clock readings of this session's GPU, where it has one.
    pub monitor: Option<crate::measure::clocks::Monitor>,
    /// Why there is no monitor (no NVML, not an NVIDIA GPU, ...), for the run's notes.
    pub monitor_note: Option<String>,
    support: Option<Program>,
    /// The routine's pack/unpack/scale kernels, per precision (f32, f64).
    routine_support: [Option<Program>; 2],
    operands: Option<DeviceOperands>,
    /// The operands loaded before the current ones, where `keep_previous` asks.
    previous: Option<DeviceOperands>,
    /// Keep one earlier problem's operands on the device: a tuner's screen and its
    /// full-size problem take turns, and each would otherwise upload again.
    pub keep_previous: bool,
    flush: Option<Buffer>,
    /// Host copy of the last checked result, kept so that the next checked run
    /// of the same size (a tuner's thousands) downloads into memory already
    /// mapped, page-locked where the backend has it.
    host_c: HostF32,
    /// The same for an f64 C (checked where it lands, never deferred).
    host_c64: HostF64,
    /// Leave the check of a plain f32 C to the caller (`take_unchecked`): a tuner
    /// checks one configuration on another thread while it times it.
    pub defer_checks: bool,
    /// (M, N) of the C in `host_c` that a prepare downloaded and did not check.
    unchecked: Option<(usize, usize)>,
    /// Check a gap-free C against a full reference on the device (`check.cl`), not
    /// downloaded: a tuner's way, where the host's cores compile.
    pub device_checks: bool,
    /// The device check's program, or why it would not build (then the host checks).
    check_program: Option<std::result::Result<Program, String>>,
    /// Where the measuring thread's time goes (a tuner restarts it per configuration).
    pub laps: RefCell<Laps>,
}

impl Session {
    pub fn new(backend: AnyBackend) -> Self {
        Session {
            backend: RefCell::new(backend),
            keep_ptx: None,
            monitor: None,
            monitor_note: None,
            support: None,
            routine_support: [None, None],
            operands: None,
            previous: None,
            keep_previous: false,
            flush: None,
            host_c: HostF32::default(),
            host_c64: HostF64::default(),
            defer_checks: false,
            unchecked: None,
            device_checks: false,
            check_program: None,
            laps: Default::default(),
        }
    }

    /// The C the last prepare downloaded but left unchecked (`defer_checks`): its
    /// rows and the column-major values (the buffer holds exactly M x N); give the
    /// buffer back with `return_host`.
    pub fn take_unchecked(&mut self) -> Option<(usize, HostF32)> {
        let (m, _) = self.unchecked.take()?;
        Some((m, std::mem::take(&mut self.host_c)))
    }

    /// Gives back the host buffer `take_unchecked` lent, to be reused.
    pub fn return_host(&mut self, host: HostF32) {
        self.host_c = host;
    }

    /// Ends a step of measuring (see `split::Laps`).
    pub fn lap(&self, step: Step) {
        self.laps.borrow_mut().lap(step);
    }

    /// Whether the device still answers after a kernel failed on it: a small
    /// buffer filled and read back. A context a kernel's fault poisoned fails this.
    pub fn healthy(&self) -> Result<()> {
        let mut be = self.backend.borrow_mut();
        let buf = be.alloc(Elem::F32, 4)?;
        let mut back = [0.0f32; 4];
        let r = be
            .fill(&buf, 2.5)
            .and_then(|_| be.download(&buf, HostDataMut::F32(&mut back)));
        be.free(buf);
        r?;
        if back.iter().all(|&v| v == 2.5) {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "the device read back {back:?} from a buffer filled with 2.5"
            )))
        }
    }

    fn support(&mut self) -> Result<Program> {
        if let Some(p) = self.support {
            return Ok(p);
        }
        let mut b = self.backend.borrow_mut();
        let tc = b.info().toolchain;
        let (p, _) = b.compile("support kernels", &Support::source(tc), &Support::options())?;
        self.support = Some(p);
        Ok(p)
    }

    /// The routine kernels (pack, unpack, scale) compiled for `precision`.
    pub(crate) fn routine_support(&mut self, precision: Precision) -> Result<Program> {
        let slot = usize::from(precision == Precision::F64);
        if let Some(p) = self.routine_support[slot] {
            return Ok(p);
        }
        let mut b = self.backend.borrow_mut();
        let tc = b.info().toolchain;
        let (p, _) = b.compile(
            "routine kernels",
            &Support::routine_source(tc),
            &Support::routine_options(precision),
        )?;
        self.routine_support[slot] = Some(p);
        Ok(p)
    }

    /// Uploads A and B as the problem stores them, in its precision (once per problem).
    pub fn load(&mut self, ops: &Operands) -> Result<()> {
        let holds = |d: &Option<DeviceOperands>| {
            d.as_ref().is_some_and(|d| {
                (d.problem, d.seed, d.inputs) == (ops.problem, ops.seed, ops.inputs)
            })
        };
        if holds(&self.operands) {
            return Ok(());
        }
        if self.keep_previous {
            std::mem::swap(&mut self.operands, &mut self.previous);
            if holds(&self.operands) {
                return Ok(());
            }
        }
        let current = self.operands.take();
        self.free_operands(current);
        let mut be = self.backend.borrow_mut();
        let precision = ops.problem.precision;
        let mut upload = |which: Matrix, logical: &[f32]| -> Result<Buffer> {
            if ops.stored_as_is(which) {
                upload_real(&mut be, logical, precision)
            } else {
                upload_real(&mut be, &ops.stored(which, f32::NAN), precision)
            }
        };
        let a = upload(Matrix::A, &ops.a)?;
        let bb = upload(Matrix::B, &ops.b);
        let bb = match bb {
            Ok(x) => x,
            Err(e) => {
                be.free(a);
                return Err(e);
            }
        };
        self.operands = Some(DeviceOperands {
            m: ops.m,
            n: ops.n,
            k: ops.k,
            seed: ops.seed,
            inputs: ops.inputs,
            problem: ops.problem,
            a,
            b: bb,
            reference: None,
        });
        Ok(())
    }

    pub fn unload(&mut self) {
        let (current, previous) = (self.operands.take(), self.previous.take());
        self.free_operands(current);
        self.free_operands(previous);
    }

    fn free_operands(&self, d: Option<DeviceOperands>) {
        if let Some(d) = d {
            let mut b = self.backend.borrow_mut();
            b.free(d.a);
            b.free(d.b);
            if let Some((_, r)) = d.reference {
                b.free(r);
            }
        }
    }

    /// The check program and the loaded problem's f64 reference on the device,
    /// where `device_checks` asks and the device can: a full reference of at most
    /// `i32::MAX` elements, doubles in the device's language, memory for it. Else
    /// None, and results are downloaded and checked on the host.
    fn device_check_for(&mut self, reference: &Reference) -> Option<(Program, Buffer)> {
        let Reference::Full { c, .. } = reference else {
            return None;
        };
        if !self.device_checks || c.len() > i32::MAX as usize {
            return None;
        }
        let mut be = self.backend.borrow_mut();
        if self.check_program.is_none() {
            let tc = be.info().toolchain;
            let built = be.compile(
                "check kernels",
                Support::check_source(tc),
                &Default::default(),
            );
            self.check_program = Some(built.map(|(p, _)| p).map_err(|e| e.to_string()));
        }
        let Some(Ok(program)) = self.check_program else {
            return None;
        };
        let d = self.operands.as_mut()?;
        let print = fingerprint(c);
        match d.reference {
            Some((p, buf)) if p == print => return Some((program, buf)),
            Some((_, buf)) => be.free(buf),
            None => {}
        }
        d.reference = None;
        // Leave the kernels room: a reference that would take over a quarter of the
        // free memory stays on the host.
        let bytes = 8 * c.len() as u64;
        if be.memory_info().is_some_and(|(free, _)| free < 4 * bytes) {
            return None;
        }
        let buf = be.alloc(Elem::F64, c.len().max(1)).ok()?;
        if be.upload(&buf, HostData::F64(c)).is_err() {
            be.free(buf);
            return None;
        }
        d.reference = Some((print, buf));
        Some((program, buf))
    }

    fn operands(&self) -> Result<&DeviceOperands> {
        self.operands
            .as_ref()
            .ok_or_else(|| Error::invalid("internal: operands not loaded"))
    }

    /// Overwrites the scratch buffer (when timing cold) so operands leave the L2.
    pub(crate) fn flush_l2(&self, scratch: Option<Buffer>) -> Result<()> {
        match scratch {
            Some(f) => self.backend.borrow_mut().fill(&f, 1.0),
            None => Ok(()),
        }
    }

    /// A scratch buffer of twice the L2, at least 256 MiB: NVIDIA's OpenCL reports a
    /// 4 MiB global cache for the H200, whose L2 is 60 MiB.
    pub(crate) fn flush_buffer(&mut self) -> Result<Buffer> {
        if let Some(f) = self.flush {
            return Ok(f);
        }
        let mut b = self.backend.borrow_mut();
        let l2 = b
            .info()
            .l2_cache_bytes
            .unwrap_or(0)
            .clamp(128 << 20, 1 << 30);
        let f = b.alloc(Elem::F32, (2 * l2 as usize) / 4)?;
        self.flush = Some(f);
        Ok(f)
    }
}

/// A kernel compiled, its operands prepared, its result checked: ready to time.
pub struct Prepared {
    pub program: Program,
    pub entry: &'static str,
    pub geometry: Geometry,
    pub padded: [usize; 3],
    /// The kernel's own A, B and C (padded or packed where it needs that).
    pub a: Buffer,
    pub b: Buffer,
    pub c: Buffer,
    /// The timed launch's arguments.
    pub args: Vec<Arg>,
    /// Launches timed with the kernel's, after it: what completes its product
    /// (split-K's reduction with `REDUCE`).
    pub finish: Vec<stage::Step>,
    /// The buffer holding the checked result: the padded C of a tutorial kernel
    /// (leading dimension = padded M), C as the problem stores it otherwise.
    result: Buffer,
    /// Buffers made for this kernel only (freed afterwards).
    owned: Vec<Buffer>,
    pub build: BuildReport,
    pub resources: Option<KernelResources>,
    pub pre_ns: u64,
    pub post_ns: u64,
    /// Device time of the checked run: one cold-ish launch, what a tuner prunes by.
    pub check_ns: u64,
    pub check: CheckReport,
    flush: Option<Buffer>,
}

/// The outcome of preparing: a ready kernel, or why not (with what was learnt).
/// One shape for every kind of kernel: a GEMM's `Prepared` by default, a user
/// kernel's `experiment::user::run::Prepared`.
pub struct Attempt<P = Prepared> {
    pub prepared: Option<P>,
    pub status: Status,
    pub build: Option<BuildReport>,
    pub check: Option<CheckReport>,
}

/// Where the kernel's code comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The kernel's own source, compiled by the session's toolchain.
    Native,
    /// PTX made by another toolchain, loaded through this session's JIT.
    Ptx(String),
}

/// Compiles, pads, runs once on poisoned C and checks. Never returns an error for
/// a kernel-level failure: that is the Attempt's status, so a comparison goes on.
pub fn prepare(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
    cold: bool,
) -> Attempt {
    let job = Job::new(spec, (config, hints), (ops, reference), cold);
    prepare_job(session, &job, Code::Native)
}

impl Source {
    /// The code a prepare loads for this source.
    pub fn code(&self) -> Code<'_> {
        match self {
            Source::Native => Code::Native,
            Source::Ptx(ptx) => Code::Ptx(ptx),
        }
    }
}

/// Where a prepare takes the kernel's code from ([`prepare_job`]).
pub enum Code<'a> {
    /// Compile the kernel's own source with the session's toolchain.
    Native,
    /// Load PTX made by another toolchain through this session's JIT.
    Ptx(&'a str),
    /// Load what the session's compiler already made.
    Built(Artefact),
    /// Already loaded on this session's device (by an earlier prepare).
    Loaded(Program, BuildReport),
}

/// What one prepare is about: the kernel at a configuration, the problem's
/// operands and reference, and whether it is timed cold.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    pub spec: &'a KernelSpec,
    pub config: &'a Config,
    pub hints: &'a Hints,
    pub ops: &'a Operands,
    pub reference: &'a Reference,
    pub cold: bool,
}

impl<'a> Job<'a> {
    pub fn new(
        spec: &'a KernelSpec,
        (config, hints): (&'a Config, &'a Hints),
        (ops, reference): (&'a Operands, &'a Reference),
        cold: bool,
    ) -> Job<'a> {
        Job {
            spec,
            config,
            hints,
            ops,
            reference,
            cold,
        }
    }
}

/// `prepare` with the kernel's code from `code`: another toolchain's PTX (`sweep
/// jit`), what the session's compiler already made (the tuner's way, so compiling
/// never waits for the device), or a program an earlier prepare loaded (a tuner's
/// screen and its full-size run load a configuration once).
pub fn prepare_job(session: &mut Session, job: &Job, code: Code<'_>) -> Attempt {
    let mut build = None;
    let mut check_report = None;
    match prepare_inner(session, job, code, &mut build, &mut check_report) {
        Ok(mut p) => {
            // The timed launches' runtime factor; the checked run had the default.
            p.geometry.carveout = job.hints.carveout;
            Attempt {
                status: Status::Ok,
                build: Some(p.build.clone()),
                check: Some(p.check.clone()),
                prepared: Some(p),
            }
        }
        Err(e) => Attempt {
            prepared: None,
            status: Status::from_error(&e),
            build,
            check: check_report,
        },
    }
}

fn prepare_inner(
    session: &mut Session,
    job: &Job,
    code: Code<'_>,
    build_out: &mut Option<BuildReport>,
    check_out: &mut Option<CheckReport>,
) -> Result<Prepared> {
    let info = session.backend.borrow().info().clone();
    let (config, flush) = admit_config(session, job, &code, &info)?;
    // From here on the configuration in the problem's precision.
    let job = &Job {
        config: &config,
        ..*job
    };
    if job.spec.abi != Abi::Tutorial {
        let support = session.routine_support(job.ops.problem.precision)?;
        let loaded = load_code(session, job, code, &info, build_out)?;
        return prepare_routine_kernel(session, job, support, loaded, flush, check_out);
    }
    prepare_tutorial_kernel(session, job, code, &info, flush, (build_out, check_out))
}

/// The job's configuration in the problem's precision, admitted (`admit`), and
/// the L2 flush buffer when timing cold. Where it is not admitted, a program an
/// earlier prepare loaded is released: it is this prepare's to release.
fn admit_config(
    session: &mut Session,
    job: &Job,
    code: &Code<'_>,
    info: &crate::backend::DeviceInfo,
) -> Result<(Config, Option<Buffer>)> {
    let native = !matches!(code, Code::Ptx(_));
    let admitted = (job.spec)
        .with_precision(job.config, job.ops.problem.precision)
        .and_then(|config| {
            let job = Job {
                config: &config,
                ..*job
            };
            let flush = admit(session, &job, native, info)?;
            Ok((config, flush))
        });
    if let (Err(_), Code::Loaded(program, _)) = (&admitted, code) {
        session.backend.borrow_mut().release_program(*program);
    }
    admitted
}

/// Compiles (or loads) the kernel's code, ends the session's Load lap and
/// records the build report in `build_out`.
fn load_code(
    session: &Session,
    job: &Job,
    code: Code<'_>,
    info: &crate::backend::DeviceInfo,
    build_out: &mut Option<BuildReport>,
) -> Result<(Program, BuildReport)> {
    let (program, build) = compile_code(session, job.spec, job.config, job.hints, code, info)?;
    session.lap(Step::Load);
    *build_out = Some(build.clone());
    Ok((program, build))
}

/// A tutorial kernel: compiled, run once on A and B padded to its tiles (B
/// transposed where it reads B^T) with a poisoned, guarded C, and its result
/// un-padded and checked.
fn prepare_tutorial_kernel(
    session: &mut Session,
    job: &Job,
    code: Code<'_>,
    info: &crate::backend::DeviceInfo,
    flush: Option<Buffer>,
    (build_out, check_out): (&mut Option<BuildReport>, &mut Option<CheckReport>),
) -> Result<Prepared> {
    let (spec, config, ops) = (job.spec, job.config, job.ops);
    let support = session.support()?;
    let (tm, tn, tk) = spec.tile(config);
    let padded = [
        round_up(ops.m, tm),
        round_up(ops.n, tn),
        round_up(ops.k, tk),
    ];
    let (program, build) = load_code(session, job, code, info, build_out)?;
    let resources = spec.resources(&build, config, info.toolchain.language());
    let device = session.device_check_for(job.reference);
    let run = tutorial_checked_run(session, job, support, program, padded)?;
    let sizes = (ops.m, ops.n);
    let report = check_tutorial_result(session, device, run.checked, sizes, job.reference)?;
    *check_out = Some(report.clone());
    if !report.passed {
        discard(&mut session.backend.borrow_mut(), run.owned, program);
        return Err(Error::Check {
            what: format!("{} on {}", spec.id, info.label()),
            detail: report.summary(),
        });
    }
    Ok(Prepared {
        program,
        entry: spec.entry,
        geometry: run.geometry,
        padded,
        a: run.a,
        b: run.b,
        c: run.c,
        args: run.args,
        finish: Vec::new(),
        result: run.c,
        owned: run.owned,
        build,
        resources,
        pre_ns: run.pre_ns,
        post_ns: run.post_ns,
        check_ns: run.check_ns,
        check: report,
        flush,
    })
}

/// A tutorial kernel's checked run: its operands and launch, the buffer holding
/// its (un-padded) result, the buffers made for it and the device times.
struct TutorialRun {
    a: Buffer,
    b: Buffer,
    c: Buffer,
    geometry: Geometry,
    args: Vec<Arg>,
    /// C un-padded where it was padded: what is checked.
    checked: Buffer,
    owned: Vec<Buffer>,
    pre_ns: u64,
    post_ns: u64,
    check_ns: u64,
}

/// Pads the operands to `padded` (M, N, K), then the checked run: poison C,
/// launch, see that nothing was written past C's ends, un-pad. A write past
/// C's ends frees what was made and releases the program.
fn tutorial_checked_run(
    session: &Session,
    job: &Job,
    support: Program,
    program: Program,
    [mp, np, kp]: [usize; 3],
) -> Result<TutorialRun> {
    let (spec, ops) = (job.spec, job.ops);
    let (m, n, k) = (ops.m, ops.n, ops.k);
    let d = session.operands()?;
    let (a0, b0) = (d.a, d.b);
    let mut be = session.backend.borrow_mut();
    let mut owned = Vec::new();
    let (a, b, pre_ns) = tutorial_operands(
        &mut be,
        support,
        spec.operands.b_transposed,
        (a0, b0),
        (m, n, k),
        (mp, np, kp),
        &mut owned,
    )?;
    // C inside guard zones: a write past its ends is this row's error.
    let guard = Guarded::new(&mut *be, Elem::F32, mp * np)?;
    let c = guard.view;
    let geometry = spec.geometry(job.config, mp, np);
    let args = gemm_args(mp, np, kp, a, b, c).to_vec();

    session.lap(Step::Setup);
    be.fill(&c, f64::NAN)?;
    session.lap(Step::Poison);
    let launched = be.launch(&program, spec.entry, &geometry, &args);
    let breach = launched.as_ref().ok().map(|_| guard.breach(&mut *be, "C"));
    owned.extend(guard.into_buffers());
    let check_ns = launched?;
    if let Some(why) = breach.transpose()?.flatten() {
        discard(&mut be, owned, program);
        return Err(Error::OutOfBounds(why));
    }
    session.lap(Step::CheckedRun);
    let (checked, post_ns) = if (mp, np) != (m, n) {
        let cu = be.alloc(Elem::F32, m * n)?;
        owned.push(cu);
        be.fill(&cu, f64::NAN)?;
        let t = resize(&mut be, support, "unpad_matrix", (c, mp, np), (cu, m, n))?;
        (cu, t)
    } else {
        (c, 0)
    };
    Ok(TutorialRun {
        a,
        b,
        c,
        geometry,
        args,
        checked,
        owned,
        pre_ns,
        post_ns,
        check_ns,
    })
}

/// Checks a tutorial kernel's M x N result: on the device where it holds the
/// reference, else downloaded into the session's host buffer and compared
/// there, or left to the caller where the session defers checks.
fn check_tutorial_result(
    session: &mut Session,
    device: Option<(Program, Buffer)>,
    result: Buffer,
    (m, n): (usize, usize),
    reference: &Reference,
) -> Result<CheckReport> {
    let mut be = session.backend.borrow_mut();
    if let Some(on_device) = device {
        let mut laps = session.laps.borrow_mut();
        return check_on_device(&mut be, on_device, result, m, reference, &mut laps);
    }
    let mut host = std::mem::take(&mut session.host_c);
    if host.len() != m * n {
        host = be.host_f32(m * n);
    }
    let downloaded = be.download(&result, HostDataMut::F32(host.as_mut_slice()));
    session.lap(Step::Download);
    let defer = session.defer_checks;
    let report = downloaded.map(|_| {
        if defer {
            CheckReport::deferred()
        } else {
            check_against(m, host.as_slice(), reference)
        }
    });
    if defer && report.is_ok() {
        session.unchecked = Some((m, n));
    }
    session.lap(Step::Check);
    session.host_c = host;
    report
}

/// Frees the buffers made for a kernel that failed, and releases its program.
fn discard(be: &mut AnyBackend, owned: Vec<Buffer>, program: Program) {
    for b in owned {
        be.free(b);
    }
    be.release_program(program);
}

/// What must hold before a configuration's code is loaded: the kernel available
/// and its constraints met on this device and problem, the operands on the
/// device. Returns the L2 flush buffer when timing cold.
fn admit(
    session: &mut Session,
    job: &Job,
    native: bool,
    info: &crate::backend::DeviceInfo,
) -> Result<Option<Buffer>> {
    let Job {
        spec,
        config,
        hints,
        ops,
        cold,
        ..
    } = *job;
    if let (Some(why), true) = (spec.unavailable_at(config, info, hints), native) {
        return Err(Error::Unavailable {
            kernel: spec.id.into(),
            toolchain: info.toolchain.to_string(),
            reason: why,
        });
    }
    spec.validate_with_switches(config, hints, info.toolchain)?;
    if spec.abi == Abi::Tutorial && !ops.problem.is_plain() {
        return Err(Error::Unavailable {
            kernel: spec.id.into(),
            toolchain: info.toolchain.to_string(),
            reason: format!(
                "the tutorial's kernels compute column-major C = A * B in f32 with tight leading dimensions, not {}; the CLBlast kernels (xgemm, xgemmdirect) take any GEMM",
                ops.problem.describe()
            ),
        });
    }
    let threads = spec.threads_per_group(config) as u64;
    if let Some(max) = info.max_work_group_size {
        if threads > max {
            return Err(Error::Constraint {
                kernel: spec.id.into(),
                message: format!(
                    "a work-group of {threads} work-items exceeds the device's maximum of {max}"
                ),
                values: config.describe(),
            });
        }
    }
    session.load(ops)?;
    let flush = if cold {
        Some(session.flush_buffer()?)
    } else {
        None
    };
    if spec.abi != Abi::Tutorial {
        return Ok(flush);
    }
    let (tm, tn, tk) = spec.tile(config);
    let (mp, np, kp) = (
        round_up(ops.m, tm),
        round_up(ops.n, tn),
        round_up(ops.k, tk),
    );
    let largest = (mp * kp).max(kp * np).max(mp * np);
    if largest > i32::MAX as usize {
        return Err(Error::Constraint {
            kernel: spec.id.into(),
            message: format!(
                "a padded operand of {mp}x{np}x{kp} holds {largest} elements, more than the {} its 32-bit int indices can address",
                i32::MAX
            ),
            values: config.describe(),
        });
    }
    Ok(flush)
}

/// Compiles (or loads) the kernel's code on the session's device.
fn compile_code(
    session: &Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    code: Code<'_>,
    info: &crate::backend::DeviceInfo,
) -> Result<(Program, BuildReport)> {
    let mut be = session.backend.borrow_mut();
    match code {
        Code::Native => {
            let source = spec.source(info.toolchain);
            let options = spec.compile_options(config, hints, info.toolchain);
            be.compile(spec.entry, &source, &options)
        }
        Code::Ptx(ptx) => be.load_ptx(spec.entry, ptx, hints.max_registers),
        Code::Built(artefact) => be.load(spec.entry, artefact),
        Code::Loaded(program, build) => Ok((program, build)),
    }
}

/// A CLBlast kernel on any BLAS problem: C is made as the problem stores it
/// (C0 or NaN inside, a sentinel in the gaps), the kernel's launches are planned
/// (`stage`), pre-processing, the kernel and post-processing run once and the
/// result is checked, gaps included. The kernel alone is what gets timed later.
fn prepare_routine_kernel(
    session: &mut Session,
    job: &Job,
    support: Program,
    (program, build): (Program, BuildReport),
    flush: Option<Buffer>,
    check_out: &mut Option<CheckReport>,
) -> Result<Prepared> {
    let (spec, config, ops, reference) = (job.spec, job.config, job.ops, job.reference);
    let tf32 = spec.tf32_products(config, job.hints);
    let language = session.backend.borrow().info().toolchain.language();
    let resources = spec.resources(&build, config, language);
    let problem = ops.problem;
    let device = session.device_check_for(reference);
    let d = session.operands()?;
    let (a0, b0) = (d.a, d.b);
    let mut be = session.backend.borrow_mut();
    // C inside guard zones: a write past its ends is this row's error.
    let guard = match upload_c_guarded(&mut be, ops) {
        Ok(g) => g,
        Err(e) => {
            be.release_program(program);
            return Err(e);
        }
    };
    let c = guard.view;
    session.lap(Step::Poison);
    let staged = match stage::plan(&mut be, spec, config, program, support, &problem, a0, b0, c) {
        Ok(s) => s,
        Err(e) => {
            guard.release(&mut *be);
            be.release_program(program);
            return Err(e);
        }
    };
    let laps = &session.laps;
    let hosts = (&mut session.host_c, &mut session.host_c64);
    let defer = session.defer_checks;
    let mut owned = staged.owned.clone();
    let outcome = (|| -> Result<(u64, u64, u64, CheckReport)> {
        let [pre_ns, check_ns, post_ns] = run_staged_once(&mut be, &staged, &guard, laps)?;
        let report = download_and_check(
            &mut be,
            c,
            (ops, reference, device),
            &mut laps.borrow_mut(),
            hosts,
            defer,
        )?;
        let report = if tf32 {
            report.judged_as_tf32()
        } else {
            report
        };
        Ok((pre_ns, check_ns, post_ns, report))
    })();
    let fail = |be: &mut AnyBackend, owned: Vec<Buffer>, e: Error| {
        discard(be, owned, program);
        Err(e)
    };
    owned.extend(guard.into_buffers());
    let (pre_ns, check_ns, post_ns, report) = match outcome {
        Ok(x) => x,
        Err(e) => return fail(&mut be, owned, e),
    };
    if report.is_deferred() {
        session.unchecked = Some((problem.m, problem.n));
    }
    *check_out = Some(report.clone());
    if !report.passed {
        let e = Error::Check {
            what: format!("{} on {}", spec.id, be.info().label()),
            detail: report.summary(),
        };
        return fail(&mut be, owned, e);
    }
    let [ak, bk, ck] = staged.operands;
    Ok(Prepared {
        program,
        entry: staged.main.entry,
        geometry: staged.main.geometry,
        finish: staged.finish,
        padded: staged.padded,
        a: ak,
        b: bk,
        c: ck,
        args: staged.main.args,
        result: c,
        owned,
        build,
        resources,
        pre_ns,
        post_ns,
        check_ns,
        check: report,
        flush,
    })
}

/// Runs a planned call once: pre-processing, the product, post-processing (the
/// laps end at Setup and CheckedRun); a write past C's guard zones is an error.
/// Returns the device time of each of the three.
fn run_staged_once(
    be: &mut AnyBackend,
    staged: &stage::Staged,
    zones: &Guarded,
    laps: &RefCell<Laps>,
) -> Result<[u64; 3]> {
    let mut pre_ns = 0;
    for step in &staged.pre {
        pre_ns += step.run(be)?;
    }
    laps.borrow_mut().lap(Step::Setup);
    let check_ns = staged.run_product(be)?;
    laps.borrow_mut().lap(Step::CheckedRun);
    let mut post_ns = 0;
    for step in &staged.post {
        post_ns += step.run(be)?;
    }
    if let Some(why) = zones.breach(&mut *be, "C")? {
        return Err(Error::OutOfBounds(why));
    }
    Ok([pre_ns, check_ns, post_ns])
}

/// Downloads C as the problem stores it, checks that nothing outside the matrix
/// changed, and checks the matrix against the reference in the problem's precision.
/// With `defer`, a plain f32 C is only downloaded (into `host`) and the report says
/// the check is deferred.
fn download_and_check(
    be: &mut AnyBackend,
    c: Buffer,
    (ops, reference, device): (&Operands, &Reference, Option<(Program, Buffer)>),
    laps: &mut Laps,
    (host, host64): (&mut HostF32, &mut HostF64),
    defer: bool,
) -> Result<CheckReport> {
    let p = &ops.problem;
    let s = p.storage(Matrix::C);
    let whole = !s.transposed && s.offset == 0 && s.ld == p.m && c.len == p.m * p.n;
    if let (true, Some(on_device)) = (whole, device) {
        return check_on_device(be, on_device, c, p.m, reference, laps);
    }
    if p.precision == Precision::F64 && whole {
        // As below for f32: into one reused buffer, checked where it lands.
        if host64.len() != c.len {
            *host64 = be.host_f64(c.len);
        }
        be.download(&c, HostDataMut::F64(host64.as_mut_slice()))?;
        laps.lap(Step::Download);
        let report = check_against(p.m, host64.as_slice(), reference);
        laps.lap(Step::Check);
        return Ok(report);
    }
    if p.precision == Precision::F32 && whole {
        // C's buffer is the column-major matrix itself, with no gaps: check it where
        // it lands (a tuner's thousands of checks reuse one host buffer, no copies).
        if host.len() != c.len {
            *host = be.host_f32(c.len);
        }
        be.download(&c, HostDataMut::F32(host.as_mut_slice()))?;
        laps.lap(Step::Download);
        if defer {
            return Ok(CheckReport::deferred());
        }
        let report = check_against(p.m, host.as_slice(), reference);
        laps.lap(Step::Check);
        return Ok(report);
    }
    let (logical, changed_gap) = read_c_with(be, c, p)?;
    laps.lap(Step::Download);
    let mut report = check_widened(p.m, &logical, reference, p.precision);
    laps.lap(Step::Check);
    if let Some(at) = changed_gap {
        let s = p.storage(Matrix::C);
        report.passed = false;
        report.method = Some(format!(
            "{}; element {at} of C's buffer, outside the matrix (offset {}, ld {}), was overwritten",
            report.method.unwrap_or_default(),
            s.offset,
            s.ld
        ));
    }
    Ok(report)
}

/// Checks `c` (M x N, column-major, gap-free; f32 or f64 as its buffer says)
/// against the reference already on the device: one launch of the check kernel,
/// and only its partial sums come back.
fn check_on_device(
    be: &mut AnyBackend,
    (program, want): (Program, Buffer),
    c: Buffer,
    m: usize,
    reference: &Reference,
    laps: &mut Laps,
) -> Result<CheckReport> {
    if want.len != c.len {
        return Err(Error::invalid(format!(
            "internal: a device check of {} elements against a reference of {}",
            c.len, want.len
        )));
    }
    let group = Support::CHECK_GROUP;
    let groups = c.len.div_ceil(group).clamp(1, 1024);
    let (entry, precision) = match c.elem {
        Elem::F64 => ("check_f64", Precision::F64),
        _ => ("check_f32", Precision::F32),
    };
    let out = be.alloc(Elem::F64, groups * DEVICE_PARTIAL)?;
    let geometry = Geometry {
        global: [groups * group, 1, 1],
        local: [group, 1, 1],
        launch_local: 0,
        carveout: None,
    };
    let args = [
        Arg::I32(c.len as i32),
        Arg::Buf(c),
        Arg::Buf(want),
        Arg::Buf(out),
    ];
    let mut parts = vec![0.0f64; groups * DEVICE_PARTIAL];
    let done = be
        .launch(&program, entry, &geometry, &args)
        .and_then(|_| be.download(&out, HostDataMut::F64(&mut parts)));
    be.free(out);
    done?;
    laps.lap(Step::Check);
    let mut report = check_partials(m, c.len, &parts, precision);
    report.method = Some(format!("{} (compared on the device)", reference.method()));
    Ok(report)
}

/// A cheap fingerprint of a reference: its length and 64 values spread over it
/// (two references of one problem differ everywhere, not in one element).
fn fingerprint(c: &[f64]) -> u64 {
    let step = (c.len() / 64).max(1);
    let mut bytes = (c.len() as u64).to_le_bytes().to_vec();
    for v in c.iter().step_by(step) {
        bytes.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    crate::util::keys::fnv1a_bytes(&bytes)
}

/// C after a call on a buffer laid out as `problem` says (its elements outside
/// the matrix set to `C_GAP` before the call): the matrix as column-major M x N,
/// widened to f64, and the first element outside it that no longer holds `C_GAP`.
pub fn read_c(
    session: &Session,
    c: Buffer,
    problem: &Problem,
) -> Result<(Vec<f64>, Option<usize>)> {
    read_c_with(&mut session.backend.borrow_mut(), c, problem)
}

fn read_c_with(
    be: &mut AnyBackend,
    c: Buffer,
    problem: &Problem,
) -> Result<(Vec<f64>, Option<usize>)> {
    let all: Vec<f64> = match problem.precision {
        Precision::F32 => {
            let mut v = vec![0.0f32; c.len];
            be.download(&c, HostDataMut::F32(&mut v))?;
            v.into_iter().map(f64::from).collect()
        }
        Precision::F64 => {
            let mut v = vec![0.0f64; c.len];
            be.download(&c, HostDataMut::F64(&mut v))?;
            v
        }
    };
    let s = problem.storage(Matrix::C);
    let mut inside = vec![false; all.len()];
    let mut logical = Vec::with_capacity(problem.m * problem.n);
    for j in 0..problem.n {
        for i in 0..problem.m {
            let at = s.index(i, j);
            inside[at] = true;
            logical.push(all[at]);
        }
    }
    let gap = (0..all.len()).find(|&i| !inside[i] && all[i] != f64::from(C_GAP));
    Ok((logical, gap))
}

fn gemm_args(m: usize, n: usize, k: usize, a: Buffer, b: Buffer, c: Buffer) -> [Arg; 6] {
    [
        Arg::I32(m as i32),
        Arg::I32(n as i32),
        Arg::I32(k as i32),
        Arg::Buf(a),
        Arg::Buf(b),
        Arg::Buf(c),
    ]
}

/// A and B as a tutorial kernel reads them: padded to its tiles where the size is
/// not a multiple, B transposed where the kernel reads B^T. The buffers made go to
/// `owned`; returns A, B and the device time of making them.
fn tutorial_operands(
    be: &mut AnyBackend,
    support: Program,
    b_transposed: bool,
    (a0, b0): (Buffer, Buffer),
    (m, n, k): (usize, usize, usize),
    (mp, np, kp): (usize, usize, usize),
    owned: &mut Vec<Buffer>,
) -> Result<(Buffer, Buffer, u64)> {
    let mut pre_ns = 0u64;
    let mut padded =
        |be: &mut AnyBackend, src: Buffer, (r, c): (usize, usize), (rp, cp): (usize, usize)| {
            if (rp, cp) == (r, c) {
                return Ok(src);
            }
            let dst = be.alloc(Elem::F32, rp * cp)?;
            owned.push(dst);
            pre_ns += resize(be, support, "pad_matrix", (src, r, c), (dst, rp, cp))?;
            Ok::<Buffer, Error>(dst)
        };
    let a = padded(be, a0, (m, k), (mp, kp))?;
    let b_padded = padded(be, b0, (k, n), (kp, np))?;
    if !b_transposed {
        return Ok((a, b_padded, pre_ns));
    }
    let bt = be.alloc(Elem::F32, np * kp)?;
    owned.push(bt);
    pre_ns += be.launch(
        &support,
        "transpose",
        &Support::geometry(kp, np),
        &[
            Arg::I32(kp as i32),
            Arg::I32(np as i32),
            Arg::Buf(b_padded),
            Arg::Buf(bt),
        ],
    )?;
    Ok((a, bt, pre_ns))
}

/// A support kernel that copies the rows x cols `src` into the dst_rows x
/// dst_cols `dst` (`pad_matrix`, `unpad_matrix`), over the destination.
fn resize(
    be: &mut AnyBackend,
    support: Program,
    entry: &str,
    (src, rows, cols): (Buffer, usize, usize),
    (dst, dst_rows, dst_cols): (Buffer, usize, usize),
) -> Result<u64> {
    be.launch(
        &support,
        entry,
        &Support::geometry(dst_rows, dst_cols),
        &[
            Arg::I32(rows as i32),
            Arg::I32(cols as i32),
            Arg::Buf(src),
            Arg::I32(dst_rows as i32),
            Arg::I32(dst_cols as i32),
            Arg::Buf(dst),
        ],
    )
}

impl Prepared {
    pub fn release(self, session: &Session) {
        let program = self.into_program(session).0;
        session.backend.borrow_mut().release_program(program);
    }

    /// Frees this preparation's buffers and keeps its loaded program, for
    /// `prepare_loaded` on another problem.
    pub fn into_program(self, session: &Session) -> (Program, BuildReport) {
        let mut be = session.backend.borrow_mut();
        for b in self.owned {
            be.free(b);
        }
        (self.program, self.build)
    }
}

/// Times a prepared kernel: kernel launches only, on the padded operands.
pub struct KernelRunner<'a> {
    pub session: &'a Session,
    pub prepared: &'a Prepared,
}

impl Timed for KernelRunner<'_> {
    fn run_batch(&mut self, count: usize) -> Result<u64> {
        let p = self.prepared;
        let mut be = self.session.backend.borrow_mut();
        if p.finish.is_empty() {
            return be.launch_batch(&p.program, p.entry, &p.geometry, &p.args, count);
        }
        let main = Launch {
            program: &p.program,
            kernel: p.entry,
            geometry: &p.geometry,
            args: &p.args,
        };
        let launches: Vec<Launch> = std::iter::once(main)
            .chain(p.finish.iter().map(stage::Step::launch))
            .collect();
        be.launch_sequence(&launches, count)
    }

    fn flush(&mut self) -> Result<()> {
        self.session.flush_l2(self.prepared.flush)
    }
}

/// The vendor BLAS (cuBLAS) on the same operands, checked once before timing.
pub struct VendorRunner<'a> {
    pub session: &'a Session,
    pub call: VendorCall,
}

/// A checked vendor BLAS call ready to time: its output buffer and arguments.
/// Owned apart from the session, so kernels of the same session can be timed
/// interleaved with it.
pub struct VendorCall {
    pub c: Buffer,
    call: GemmCall,
    flush: Option<Buffer>,
}

/// The vendor BLAS call computing `problem` on buffers laid out as it says.
pub fn vendor_call(problem: &Problem, a: Buffer, b: Buffer, c: Buffer) -> GemmCall {
    let p = problem.column_major();
    let (a, b) = if problem.swaps_operands() {
        (b, a)
    } else {
        (a, b)
    };
    GemmCall {
        trans_a: p.trans_a.is_t(),
        trans_b: p.trans_b.is_t(),
        m: p.m,
        n: p.n,
        k: p.k,
        alpha: p.alpha,
        beta: p.beta,
        a,
        a_offset: p.a_offset,
        lda: p.lda,
        b,
        b_offset: p.b_offset,
        ldb: p.ldb,
        c,
        c_offset: p.c_offset,
        ldc: p.ldc,
        tf32: false,
    }
}

impl<'a> VendorRunner<'a> {
    /// `Ok(None)` where the toolchain has no vendor BLAS.
    pub fn prepare(
        session: &'a mut Session,
        ops: &Operands,
        reference: &Reference,
        cold: bool,
    ) -> Result<Option<(VendorRunner<'a>, CheckReport)>> {
        Self::prepare_in(session, ops, reference, cold, false)
    }

    /// `prepare` in the vendor's TF32 tensor-core mode where `tf32` (f32 only),
    /// checked against TF32's limits.
    pub fn prepare_in(
        session: &'a mut Session,
        ops: &Operands,
        reference: &Reference,
        cold: bool,
        tf32: bool,
    ) -> Result<Option<(VendorRunner<'a>, CheckReport)>> {
        let prepared = VendorCall::prepare(session, ops, reference, cold, tf32)?;
        Ok(prepared.map(|(call, report)| (VendorRunner { session, call }, report)))
    }

    pub fn release(self) {
        self.call.release(self.session);
    }
}

impl VendorCall {
    /// Uploads the operands, runs the call once and checks it. `Ok(None)` where
    /// the toolchain has no vendor BLAS.
    pub fn prepare(
        session: &mut Session,
        ops: &Operands,
        reference: &Reference,
        cold: bool,
        tf32: bool,
    ) -> Result<Option<(VendorCall, CheckReport)>> {
        session.load(ops)?;
        let flush = if cold {
            Some(session.flush_buffer()?)
        } else {
            None
        };
        let d = session.operands()?;
        let (a, b) = (d.a, d.b);
        let mut be = session.backend.borrow_mut();
        let c = upload_c(&mut be, ops)?;
        let call = GemmCall {
            tf32,
            ..vendor_call(&ops.problem, a, b, c)
        };
        let outcome = match be.vendor_gemm(&call, 1) {
            Ok(None) => Ok(None),
            Ok(Some(_)) => {
                let mut laps = session.laps.borrow_mut();
                download_and_check(
                    &mut be,
                    c,
                    (ops, reference, None),
                    &mut laps,
                    (&mut session.host_c, &mut session.host_c64),
                    false,
                )
                .map(|r| Some(if tf32 { r.judged_as_tf32() } else { r }))
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok(Some(report)) => Ok(Some((VendorCall { c, call, flush }, report))),
            Ok(None) => {
                be.free(c);
                Ok(None)
            }
            Err(e) => {
                be.free(c);
                Err(e)
            }
        }
    }

    pub fn release(self, session: &Session) {
        session.backend.borrow_mut().free(self.c);
    }
}

impl Timed for VendorRunner<'_> {
    fn run_batch(&mut self, count: usize) -> Result<u64> {
        self.session
            .backend
            .borrow_mut()
            .vendor_gemm(&self.call.call, count)?
            .ok_or_else(|| Error::invalid("no vendor BLAS"))
    }

    fn flush(&mut self) -> Result<()> {
        self.session.flush_l2(self.call.flush)
    }
}

/// alpha A B + beta C0 in f64 on the device through the vendor BLAS (cuBLAS DGEMM): the full
/// reference for sizes whose CPU reference would take hours. `Ok(None)` where the
/// toolchain has no vendor BLAS. Device buffers are freed before returning.
pub fn device_reference(session: &Session, ops: &Operands) -> Result<Option<Vec<f64>>> {
    let mut be = session.backend.borrow_mut();
    let (m, n, k) = (ops.m, ops.n, ops.k);
    let mut owned = Vec::new();
    let result = (|| {
        let mut upload = |src: &[f32]| -> Result<Buffer> {
            let buf = be.alloc(Elem::F64, src.len())?;
            owned.push(buf);
            let mut wide = vec![0.0f64; src.len()];
            super::parallel::for_chunks(&mut wide, 1 << 20, |lo, part| {
                for (w, &x) in part.iter_mut().zip(&src[lo..]) {
                    *w = f64::from(x);
                }
            });
            be.upload(&buf, HostData::F64(&wide))?;
            Ok(buf)
        };
        let a = upload(&ops.a)?;
        let b = upload(&ops.b)?;
        let c = be.alloc(Elem::F64, m * n)?;
        owned.push(c);
        be.fill(&c, f64::NAN)?;
        if be
            .vendor_gemm(&GemmCall::plain(m, n, k, a, b, c), 1)?
            .is_none()
        {
            return Ok(None);
        }
        let mut host = vec![0.0f64; m * n];
        be.download(&c, HostDataMut::F64(&mut host))?;
        let (alpha, beta) = (ops.problem.alpha, ops.problem.beta);
        if alpha != 1.0 || beta != 0.0 {
            for (i, v) in host.iter_mut().enumerate() {
                let c0 = ops.c0.get(i).map_or(0.0, |&x| f64::from(x));
                *v = alpha * *v + if beta != 0.0 { beta * c0 } else { 0.0 };
            }
        }
        Ok(Some(host))
    })();
    for buf in owned {
        be.free(buf);
    }
    result
}

/// One-shot convenience: run a kernel on given operands and return C (column-major
/// M x N, widened to f64) after its checked run. For tests that compare twins element by element.
pub fn run_once_result(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
) -> Result<Vec<f64>> {
    let attempt = prepare(session, spec, config, hints, ops, reference, false);
    let p = match attempt.prepared {
        Some(p) => p,
        None => {
            return Err(Error::Check {
                what: spec.id.into(),
                detail: attempt.status.reason().unwrap_or("failed").to_string(),
            })
        }
    };
    let result = if spec.abi == Abi::Tutorial {
        let [mp, np, _] = p.padded;
        let mut full = vec![0.0f32; mp * np];
        session
            .backend
            .borrow_mut()
            .download(&p.result, HostDataMut::F32(&mut full))
            .map(|()| {
                let mut c = vec![0.0f64; ops.m * ops.n];
                for j in 0..ops.n {
                    for i in 0..ops.m {
                        c[j * ops.m + i] = f64::from(full[j * mp + i]);
                    }
                }
                c
            })
    } else {
        read_c_with(&mut session.backend.borrow_mut(), p.result, &ops.problem).map(|(c, _)| c)
    };
    p.release(session);
    result
}

/// One reading per session (`None` without a monitor); sessions on the same GPU
/// share one reading, so the readings sit as close to the timed launches as they can.
pub fn read_clocks(sessions: &[Session]) -> Vec<Option<ClockReading>> {
    let mut done: Vec<(&crate::measure::clocks::Monitor, ClockReading)> = Vec::new();
    sessions
        .iter()
        .map(|s| {
            let m = s.monitor.as_ref()?;
            if let Some((_, r)) = done.iter().find(|(d, _)| d.same_gpu(m)) {
                return Some(r.clone());
            }
            let r = m.read();
            done.push((m, r.clone()));
            Some(r)
        })
        .collect()
}
