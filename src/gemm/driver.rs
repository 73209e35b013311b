//! The GEMM driver: runs one registry kernel on one backend for column-major
//! C = A * B of any M, N, K >= 1. Operands are padded to the kernel's tile
//! multiples (and B transposed where the kernel reads B^T) by the support
//! kernels; that pre/post-processing is timed apart from the kernel. Every
//! prepared kernel is run once on a poisoned C and checked before it is timed.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use super::check::{check_against, CheckReport, Reference};
use super::data::{round_up, Operands};
use crate::backend::{
    AnyBackend, Arg, Artefact, Backend, Buffer, BuildReport, Elem, Geometry, HostData, HostDataMut,
    KernelResources, Program,
};
use crate::error::{Error, Result};
use crate::kernels::{Config, Hints, KernelSpec, Support};
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
            | Status::WrongResult(r) => Some(r),
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
    pub a: Buffer,
    pub b: Buffer,
}

/// One backend and what it keeps between kernels: the support program,
/// the uploaded operands, a scratch buffer for cold-cache flushes.
pub struct Session {
    pub backend: RefCell<AnyBackend>,
    /// Where experiments keep the PTX of every build they measure (`--keep-ptx`).
    pub keep_ptx: Option<std::path::PathBuf>,
    /// NVML clock readings of this session's GPU, where it has one.
    pub monitor: Option<crate::clocks::Monitor>,
    /// Why there is no monitor (no NVML, not an NVIDIA GPU, ...), for the run's notes.
    pub monitor_note: Option<String>,
    support: Option<Program>,
    operands: Option<DeviceOperands>,
    flush: Option<Buffer>,
    /// Host copy of the last checked result, kept so that the next checked run
    /// of the same size (a tuner's thousands) downloads into memory already mapped.
    host_c: Vec<f32>,
}

impl Session {
    pub fn new(backend: AnyBackend) -> Self {
        Session {
            backend: RefCell::new(backend),
            keep_ptx: None,
            monitor: None,
            monitor_note: None,
            support: None,
            operands: None,
            flush: None,
            host_c: Vec::new(),
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

    /// Uploads A and B (once per problem).
    pub fn load(&mut self, ops: &Operands) -> Result<()> {
        if let Some(d) = &self.operands {
            if (d.m, d.n, d.k, d.seed) == (ops.m, ops.n, ops.k, ops.seed) {
                return Ok(());
            }
        }
        self.unload();
        let mut b = self.backend.borrow_mut();
        let a = b.alloc(Elem::F32, ops.m * ops.k)?;
        let bb = b.alloc(Elem::F32, ops.k * ops.n)?;
        b.upload(&a, HostData::F32(&ops.a))?;
        b.upload(&bb, HostData::F32(&ops.b))?;
        self.operands = Some(DeviceOperands {
            m: ops.m,
            n: ops.n,
            k: ops.k,
            seed: ops.seed,
            a,
            b: bb,
        });
        Ok(())
    }

    pub fn unload(&mut self) {
        if let Some(d) = self.operands.take() {
            let mut b = self.backend.borrow_mut();
            b.free(d.a);
            b.free(d.b);
        }
    }

    fn operands(&self) -> Result<&DeviceOperands> {
        self.operands
            .as_ref()
            .ok_or_else(|| Error::invalid("internal: operands not loaded"))
    }

    /// Overwrites the scratch buffer (when timing cold) so operands leave the L2.
    fn flush_l2(&self, scratch: Option<Buffer>) -> Result<()> {
        match scratch {
            Some(f) => self.backend.borrow_mut().fill(&f, 1.0),
            None => Ok(()),
        }
    }

    /// A scratch buffer of twice the L2, at least 256 MiB: NVIDIA's OpenCL reports a
    /// 4 MiB global cache for the H200, whose L2 is 60 MiB.
    fn flush_buffer(&mut self) -> Result<Buffer> {
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
    pub a: Buffer,
    pub b: Buffer,
    pub c: Buffer,
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
pub struct Attempt {
    pub prepared: Option<Prepared>,
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
    prepare_code(
        session,
        spec,
        config,
        hints,
        ops,
        reference,
        cold,
        Code::Native,
    )
}

/// `prepare` with the kernel's code taken from `source`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_from(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
    cold: bool,
    source: &Source,
) -> Attempt {
    let code = match source {
        Source::Native => Code::Native,
        Source::Ptx(ptx) => Code::Ptx(ptx),
    };
    prepare_code(session, spec, config, hints, ops, reference, cold, code)
}

/// `prepare` with the kernel already compiled (by this session's compiler, on
/// another thread): the tuner's way, so compiling never waits for the device.
#[allow(clippy::too_many_arguments)]
pub fn prepare_built(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
    cold: bool,
    artefact: Artefact,
) -> Attempt {
    prepare_code(
        session,
        spec,
        config,
        hints,
        ops,
        reference,
        cold,
        Code::Built(artefact),
    )
}

/// The kernel's code as `prepare_inner` receives it.
enum Code<'a> {
    /// Compile the kernel's own source with the session's toolchain.
    Native,
    /// Load PTX made by another toolchain through this session's JIT.
    Ptx(&'a str),
    /// Load what the session's compiler already made.
    Built(Artefact),
}

#[allow(clippy::too_many_arguments)]
fn prepare_code(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
    cold: bool,
    code: Code<'_>,
) -> Attempt {
    let mut build = None;
    let mut check_report = None;
    let r = prepare_inner(
        session,
        spec,
        config,
        hints,
        ops,
        reference,
        cold,
        code,
        &mut build,
        &mut check_report,
    );
    match r {
        Ok(p) => Attempt {
            status: Status::Ok,
            build: Some(p.build.clone()),
            check: Some(p.check.clone()),
            prepared: Some(p),
        },
        Err(e) => Attempt {
            prepared: None,
            status: Status::from_error(&e),
            build,
            check: check_report,
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn prepare_inner(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
    cold: bool,
    code: Code<'_>,
    build_out: &mut Option<BuildReport>,
    check_out: &mut Option<CheckReport>,
) -> Result<Prepared> {
    let info = session.backend.borrow().info().clone();
    let native = !matches!(code, Code::Ptx(_));
    if let (Some(why), true) = (spec.unavailable(&info, hints), native) {
        return Err(Error::Unavailable {
            kernel: spec.id.into(),
            toolchain: info.toolchain.to_string(),
            reason: why,
        });
    }
    spec.validate(config)?;
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
    let support = session.support()?;
    session.load(ops)?;
    let flush = if cold {
        Some(session.flush_buffer()?)
    } else {
        None
    };
    let (m, n, k) = (ops.m, ops.n, ops.k);
    let (tm, tn, tk) = spec.tile(config);
    let (mp, np, kp) = (round_up(m, tm), round_up(n, tn), round_up(k, tk));
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

    let (program, build) = {
        let mut be = session.backend.borrow_mut();
        match code {
            Code::Native => {
                let source = spec.source(info.toolchain);
                let options = spec.compile_options(config, hints, info.toolchain);
                be.compile(spec.entry, &source, &options)?
            }
            Code::Ptx(ptx) => be.load_ptx(spec.entry, ptx, hints.max_registers)?,
            Code::Built(artefact) => be.load(spec.entry, artefact)?,
        }
    };
    *build_out = Some(build.clone());
    let resources = build.kernel(spec.entry).cloned();

    let d = session.operands()?;
    let (a0, b0) = (d.a, d.b);
    let mut be = session.backend.borrow_mut();
    let mut owned = Vec::new();
    let mut pre_ns = 0u64;
    let a = if (mp, kp) != (m, k) {
        let ap = be.alloc(Elem::F32, mp * kp)?;
        owned.push(ap);
        pre_ns += pad(&mut be, support, a0, m, k, ap, mp, kp)?;
        ap
    } else {
        a0
    };
    let b_padded = if (kp, np) != (k, n) {
        let bp = be.alloc(Elem::F32, kp * np)?;
        owned.push(bp);
        pre_ns += pad(&mut be, support, b0, k, n, bp, kp, np)?;
        bp
    } else {
        b0
    };
    let b = if spec.operands.b_transposed {
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
        bt
    } else {
        b_padded
    };
    let c = be.alloc(Elem::F32, mp * np)?;
    owned.push(c);
    let geometry = spec.geometry(config, mp, np);
    let args = gemm_args(mp, np, kp, a, b, c);

    // The checked run: poison, launch, un-pad, download, compare.
    be.fill(&c, f64::NAN)?;
    let check_ns = be.launch(&program, spec.entry, &geometry, &args)?;
    let (result_buf, post_ns) = if (mp, np) != (m, n) {
        let cu = be.alloc(Elem::F32, m * n)?;
        owned.push(cu);
        be.fill(&cu, f64::NAN)?;
        let t = be.launch(
            &support,
            "unpad_matrix",
            &Support::geometry(m, n),
            &[
                Arg::I32(mp as i32),
                Arg::I32(np as i32),
                Arg::Buf(c),
                Arg::I32(m as i32),
                Arg::I32(n as i32),
                Arg::Buf(cu),
            ],
        )?;
        (cu, t)
    } else {
        (c, 0)
    };
    let mut host = std::mem::take(&mut session.host_c);
    host.resize(m * n, 0.0);
    let downloaded = be.download(&result_buf, HostDataMut::F32(&mut host));
    let report = downloaded.map(|_| check_against(m, &host, reference));
    session.host_c = host;
    let report = report?;
    *check_out = Some(report.clone());
    if !report.passed {
        for b in owned {
            be.free(b);
        }
        be.release_program(program);
        return Err(Error::Check {
            what: format!("{} on {}", spec.id, info.label()),
            detail: report.summary(),
        });
    }
    drop(be);
    Ok(Prepared {
        program,
        entry: spec.entry,
        geometry,
        padded: [mp, np, kp],
        a,
        b,
        c,
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

#[allow(clippy::too_many_arguments)]
fn pad(
    be: &mut AnyBackend,
    support: Program,
    src: Buffer,
    p: usize,
    q: usize,
    dst: Buffer,
    pp: usize,
    qq: usize,
) -> Result<u64> {
    be.launch(
        &support,
        "pad_matrix",
        &Support::geometry(pp, qq),
        &[
            Arg::I32(p as i32),
            Arg::I32(q as i32),
            Arg::Buf(src),
            Arg::I32(pp as i32),
            Arg::I32(qq as i32),
            Arg::Buf(dst),
        ],
    )
}

impl Prepared {
    pub fn release(self, session: &Session) {
        let mut be = session.backend.borrow_mut();
        for b in self.owned {
            be.free(b);
        }
        be.release_program(self.program);
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
        let [m, n, k] = p.padded;
        self.session.backend.borrow_mut().launch_batch(
            &p.program,
            p.entry,
            &p.geometry,
            &gemm_args(m, n, k, p.a, p.b, p.c),
            count,
        )
    }

    fn flush(&mut self) -> Result<()> {
        self.session.flush_l2(self.prepared.flush)
    }
}

/// The vendor BLAS (cuBLAS) on the same operands, checked once before timing.
pub struct VendorRunner<'a> {
    pub session: &'a Session,
    pub c: Buffer,
    flush: Option<Buffer>,
}

impl<'a> VendorRunner<'a> {
    /// `Ok(None)` where the toolchain has no vendor BLAS.
    pub fn prepare(
        session: &'a mut Session,
        ops: &Operands,
        reference: &Reference,
        cold: bool,
    ) -> Result<Option<(VendorRunner<'a>, CheckReport)>> {
        session.load(ops)?;
        let flush = if cold {
            Some(session.flush_buffer()?)
        } else {
            None
        };
        let d = session.operands()?;
        let (a, b) = (d.a, d.b);
        let mut be = session.backend.borrow_mut();
        let c = be.alloc(Elem::F32, ops.m * ops.n)?;
        be.fill(&c, f64::NAN)?;
        if be
            .vendor_gemm(ops.m, ops.n, ops.k, &a, &b, &c, 1)?
            .is_none()
        {
            be.free(c);
            return Ok(None);
        }
        let mut host = vec![0.0f32; ops.m * ops.n];
        be.download(&c, HostDataMut::F32(&mut host))?;
        let report = check_against(ops.m, &host, reference);
        drop(be);
        Ok(Some((VendorRunner { session, c, flush }, report)))
    }

    pub fn release(self) {
        self.session.backend.borrow_mut().free(self.c);
    }
}

impl Timed for VendorRunner<'_> {
    fn run_batch(&mut self, count: usize) -> Result<u64> {
        let mut be = self.session.backend.borrow_mut();
        let d = self
            .session
            .operands
            .as_ref()
            .ok_or_else(|| Error::invalid("internal: operands not loaded"))?;
        let (m, n, k) = (d.m, d.n, d.k);
        be.vendor_gemm(m, n, k, &d.a, &d.b, &self.c, count)?
            .ok_or_else(|| Error::invalid("no vendor BLAS"))
    }

    fn flush(&mut self) -> Result<()> {
        self.session.flush_l2(self.flush)
    }
}

/// C = A * B in f64 on the device through the vendor BLAS (cuBLAS DGEMM): the full
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
        if be.vendor_gemm(m, n, k, &a, &b, &c, 1)?.is_none() {
            return Ok(None);
        }
        let mut host = vec![0.0f64; m * n];
        be.download(&c, HostDataMut::F64(&mut host))?;
        Ok(Some(host))
    })();
    for buf in owned {
        be.free(buf);
    }
    result
}

/// One-shot convenience: run a kernel on given operands and return C (M x N) after
/// checking nothing. For tests that compare twins element by element.
pub fn run_once_result(
    session: &mut Session,
    spec: &KernelSpec,
    config: &Config,
    hints: &Hints,
    ops: &Operands,
    reference: &Reference,
) -> Result<Vec<f32>> {
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
    let [mp, np, _] = p.padded;
    let mut full = vec![0.0f32; mp * np];
    session
        .backend
        .borrow_mut()
        .download(&p.c, HostDataMut::F32(&mut full))?;
    p.release(session);
    let mut c = vec![0.0f32; ops.m * ops.n];
    for j in 0..ops.n {
        c[j * ops.m..(j + 1) * ops.m].copy_from_slice(&full[j * mp..j * mp + ops.m]);
    }
    Ok(c)
}
