//! Attribution: where the differences between toolchains come from. Each front
//! end's PTX of a kernel at its published defaults (NVRTC's, clang's for CUDA
//! C++ and for OpenCL C, and NVIDIA OpenCL's, compiled on a device or read from
//! a run kept with `compare --keep-ptx`) is assembled by every assembler there
//! is (each cached ptxas that takes the architecture, and the CUDA driver's JIT
//! where a device is open), and each says what it made: registers, spills,
//! stack. Per kernel that is a front end x assembler matrix: a difference that
//! stays across one assembler's column comes from the front ends (their PTX); a
//! difference down one PTX's row comes from the assemblers. The toolchains' own
//! assemblies (NVRTC's built-in ptxas, NVIDIA OpenCL's driver) are the "own"
//! column. Nothing is timed: the speed of each toolchain is `compare`'s.

use std::path::Path;
use std::sync::Arc;

use crate::backend::clang::ClangCompiler;
use crate::backend::nvrtc::{Arch, Nvrtc, NvrtcCompiler};
use crate::backend::ptxas::{parse_ptxas_log, Ptxas};
use crate::backend::{Backend, BuildReport, Compiler, DeviceInfo, KernelResources, Toolchain};
use crate::experiment::failed_row;
use crate::gemm::driver::Status;
use crate::kernel::builtin::{Hints, KernelSpec};
use crate::measure::progress::Progress;
use crate::results::Measurement;

/// The experiment name of attribution rows.
pub const EXPERIMENT: &str = "attribution";

/// The assembler column of a toolchain's own assembly.
pub const OWN: &str = "own";

/// One kernel's PTX as one front end wrote it.
#[derive(Debug, Clone)]
pub struct Listing {
    pub spec: &'static KernelSpec,
    /// The toolchain whose front end wrote it.
    pub front: Toolchain,
    /// "NVRTC 13.5", "clang 19.1.7", "NVIDIA OpenCL (driver 580.159.04)"
    pub compiler: String,
    pub ptx: String,
    /// What the toolchain's own assembler made of it, where it has one.
    pub own: Option<KernelResources>,
    /// Where it came from.
    pub origin: String,
}

/// A front end that gave no listing of a kernel, and why.
#[derive(Debug, Clone)]
pub struct Missing {
    pub front: Toolchain,
    pub kernel: String,
    pub why: String,
}

fn listing_of(
    spec: &'static KernelSpec,
    front: Toolchain,
    compiler: &dyn Compiler,
    label: String,
    origin: &str,
) -> std::result::Result<Listing, String> {
    let config = spec.defaults();
    let source = spec.source(front);
    let options = spec.compile_options(&config, &Hints::default(), front);
    let artefact = compiler
        .compile(spec.entry, &source, &options)
        .map_err(|e| e.to_string())?;
    let report: BuildReport = artefact.report;
    let ptx = report.ptx.clone().ok_or("the compiler gave no PTX")?;
    // clang's report is its assembler's (a ptxas here), not a toolchain's own.
    let own = (!front.is_clang())
        .then(|| report.kernel(spec.entry).cloned())
        .flatten();
    Ok(Listing {
        spec,
        front,
        compiler: label,
        ptx,
        own,
        origin: origin.to_string(),
    })
}

/// A front end ready to compile, with its label, or why it is not.
type FrontEnd = std::result::Result<(Arc<dyn Compiler>, String), String>;

/// The PTX of every kernel from NVRTC (`nvrtc`, compiled here for `arch`; none
/// when the CUDA listings come from a kept run) and both clang front ends, where
/// each is available; what is not, with why.
pub fn compile_listings(
    arch: &Arch,
    nvrtc: Option<std::result::Result<Arc<Nvrtc>, String>>,
    kernels: &[&'static KernelSpec],
    progress: &Progress,
) -> (Vec<Listing>, Vec<Missing>) {
    let mut fronts: Vec<(Toolchain, FrontEnd)> = Vec::new();
    if let Some(nvrtc) = nvrtc {
        let nv = nvrtc.and_then(|n| {
            let label = n.label();
            NvrtcCompiler::new(n, arch)
                .map(|c| (Arc::new(c) as Arc<dyn Compiler>, label))
                .map_err(|e| e.to_string())
        });
        fronts.push((Toolchain::Cuda, nv));
    }
    for tc in [Toolchain::ClangCuda, Toolchain::ClangOpenCl] {
        // The PTX is all that is used; the assembler here is only clang's default.
        let c = ClangCompiler::for_arch(tc, arch, None)
            .map(|c| {
                let label = c
                    .label()
                    .split(" + ")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                (Arc::new(c) as Arc<dyn Compiler>, label)
            })
            .map_err(|e| e.to_string());
        fronts.push((tc, c));
    }
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (front, compiler) in &fronts {
        for spec in kernels {
            progress.set_message(format!("{} PTX of {}", front, spec.id));
            let got = compiler
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|(c, label)| {
                    listing_of(spec, *front, c.as_ref(), label.clone(), "compiled here")
                });
            match got {
                Ok(l) => out.push(l),
                Err(why) => missing.push(Missing {
                    front: *front,
                    kernel: spec.id.to_string(),
                    why,
                }),
            }
            progress.inc(1);
        }
    }
    (out, missing)
}

/// NVIDIA OpenCL's PTX of each kernel compiled on an open OpenCL device, with
/// the driver's own registers.
pub fn opencl_listings(
    compiler: &dyn Compiler,
    label: &str,
    kernels: &[&'static KernelSpec],
) -> (Vec<Listing>, Vec<Missing>) {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for spec in kernels {
        match listing_of(
            spec,
            Toolchain::OpenCl,
            compiler,
            label.to_string(),
            "compiled on the device",
        ) {
            Ok(l) => out.push(l),
            Err(why) => missing.push(Missing {
                front: Toolchain::OpenCl,
                kernel: spec.id.to_string(),
                why,
            }),
        }
    }
    (out, missing)
}

/// `toolchain`'s PTX kept by a `compare --keep-ptx` run on an NVIDIA GPU, with
/// the registers its own assembler gave there when that GPU is of `arch`.
pub fn kept_listings(
    run: &Path,
    toolchain: Toolchain,
    kernels: &[&'static KernelSpec],
    arch: &Arch,
) -> crate::error::Result<Vec<Listing>> {
    Ok(
        crate::experiment::atlas::kept_listings(run, toolchain, kernels)?
            .into_iter()
            .map(|l| Listing {
                spec: l.spec,
                front: toolchain,
                compiler: l.compiler.unwrap_or_else(|| toolchain.label().to_string()),
                ptx: l.ptx,
                own: l
                    .resources
                    .filter(|_| l.compute_capability == Some(arch.compute_capability())),
                origin: l.origin,
            })
            .collect(),
    )
}

/// What assembles the listings: cached ptxas releases and, on a device, the
/// CUDA driver's JIT.
pub enum Assembler<'a> {
    Ptxas(Ptxas),
    Jit(&'a mut dyn Backend),
}

impl Assembler<'_> {
    pub fn label(&self) -> String {
        match self {
            Assembler::Ptxas(p) => p.label(),
            Assembler::Jit(_) => "CUDA driver JIT".into(),
        }
    }

    /// Why this assembler cannot take the listing at all (an older ptxas and an
    /// architecture-specific target): the cell is unavailable, not a failure.
    fn refuses(&self, l: &Listing) -> Option<String> {
        let Assembler::Ptxas(p) = self else {
            return None;
        };
        let target = (l.ptx.lines())
            .find_map(|t| t.trim_start().strip_prefix(".target "))?
            .split(',')
            .next()?
            .trim();
        p.refuses_target(target)
    }

    fn assemble(
        &mut self,
        l: &Listing,
        arch: &Arch,
    ) -> std::result::Result<(Option<KernelResources>, Vec<String>), String> {
        match self {
            Assembler::Ptxas(p) => p.assemble(&l.ptx, arch, None).map(|a| {
                let r = parse_ptxas_log(&a.log)
                    .into_iter()
                    .find(|k| k.name == l.spec.entry);
                (r, a.notes)
            }),
            Assembler::Jit(be) => {
                let (program, report) = be
                    .load_ptx(l.spec.entry, &l.ptx, None)
                    .map_err(|e| e.to_string())?;
                be.release_program(program);
                Ok((report.kernel(l.spec.entry).cloned(), Vec::new()))
            }
        }
    }
}

/// One row per listing and assembler (and one for the toolchain's own
/// assembly): the front end is the row's toolchain, the assembler its label.
pub fn rows(
    device: &DeviceInfo,
    arch: &Arch,
    listings: &[Listing],
    assemblers: &mut [Assembler<'_>],
    progress: &Progress,
) -> Vec<Measurement> {
    let mut out = Vec::new();
    let note = format!(
        "front end x assembler for {arch}: registers as each assembler reports them; not run, checked or timed"
    );
    for l in listings {
        let row = |label: String| {
            let mut r = failed_row(
                EXPERIMENT,
                &device.name,
                &device.id,
                l.front,
                l.spec.id,
                Status::Unavailable(note.clone()),
                (0, 0, 0),
            );
            r.label = Some(label);
            r.compiler = Some(l.compiler.clone());
            r.config = l.spec.defaults();
            r.build_notes.push(format!("PTX {}", l.origin));
            r
        };
        if let Some(own) = &l.own {
            let mut r = row(OWN.to_string());
            r.resources = Some(own.clone());
            out.push(r);
        }
        for a in assemblers.iter_mut() {
            progress.set_message(format!("{} PTX of {} by {}", l.front, l.spec.id, a.label()));
            let mut r = row(a.label());
            if let Some(why) = a.refuses(l) {
                r.status = Status::Unavailable(why);
                out.push(r);
                progress.inc(1);
                continue;
            }
            match a.assemble(l, arch) {
                Ok((res, notes)) => {
                    r.resources = res;
                    r.build_notes.extend(notes);
                }
                Err(why) => r.status = Status::CompileError(why),
            }
            out.push(r);
            progress.inc(1);
        }
    }
    out
}

/// The front ends and assemblers as the rows name them, in the order of tables.
pub fn axes(rows: &[Measurement]) -> (Vec<Toolchain>, Vec<String>) {
    let mut fronts: Vec<Toolchain> = Vec::new();
    let mut asm: Vec<String> = vec![OWN.to_string()];
    for r in rows.iter().filter(|r| r.experiment == EXPERIMENT) {
        if !fronts.contains(&r.toolchain) {
            fronts.push(r.toolchain);
        }
        if let Some(l) = &r.label {
            if !asm.contains(l) {
                asm.push(l.clone());
            }
        }
    }
    fronts.sort_by_key(|t| Toolchain::ALL.iter().position(|x| x == t));
    (fronts, asm)
}
