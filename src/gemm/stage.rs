//! How a BLAS-style GEMM call becomes launches of CLBlast's kernels: the
//! problem is made column-major (row-major swaps A and B), then
//! - the direct kernel takes the arguments as they are: one launch;
//! - the indirect kernel needs A column-major, B transposed (or either
//!   K-contiguous, where the kernel's configuration says so), both padded to its
//!   tile multiples, and C padded: pack kernels before, an unpack after, each
//!   skipped where the caller's matrix already has the shape the kernel needs.
//!
//! Used by the driver (which times the main launch apart from the rest) and by
//! the routine (which times the whole call).

use crate::backend::{AnyBackend, Arg, Backend, Buffer, Geometry, Launch, Program};
use crate::error::{Error, Result};
use crate::kernel::builtin::{Abi, Config, KernelSpec, Support};

use super::data::round_up;
use super::problem::{Matrix, Precision, Problem, Storage};

/// One kernel launch, ready to go.
#[derive(Debug, Clone)]
pub struct Step {
    pub program: Program,
    pub entry: &'static str,
    pub geometry: Geometry,
    pub args: Vec<Arg>,
}

impl Step {
    pub fn run(&self, be: &mut AnyBackend) -> Result<u64> {
        be.launch(&self.program, self.entry, &self.geometry, &self.args)
    }

    pub fn launch(&self) -> Launch<'_> {
        Launch {
            program: &self.program,
            kernel: self.entry,
            geometry: &self.geometry,
            args: &self.args,
        }
    }
}

impl Staged {
    /// Runs the kernel and what finishes its product (`finish`): the product's
    /// device time, without pre- or post-processing.
    pub fn run_product(&self, be: &mut AnyBackend) -> Result<u64> {
        let mut ns = self.main.run(be)?;
        for step in &self.finish {
            ns += step.run(be)?;
        }
        Ok(ns)
    }

    /// Every launch of the call in order: packing, the kernel and what finishes
    /// its product, unpacking.
    pub fn launches(&self) -> Vec<Launch<'_>> {
        let main = std::iter::once(&self.main);
        (self
            .pre
            .iter()
            .chain(main)
            .chain(&self.finish)
            .chain(&self.post))
        .map(Step::launch)
        .collect()
    }
}

/// The launches of one GEMM call: pre-processing, the GEMM kernel, post-processing.
pub struct Staged {
    pub pre: Vec<Step>,
    pub main: Step,
    /// Launches that complete the kernel's product (split-K's reduction with
    /// `REDUCE`): part of the kernel's time, not pre- or post-processing.
    pub finish: Vec<Step>,
    pub post: Vec<Step>,
    /// Temporary buffers made for this call (freed by the caller).
    pub owned: Vec<Buffer>,
    /// Sizes the main kernel runs on (padded for the indirect kernel).
    pub padded: [usize; 3],
    /// The kernel's A, B and C buffers.
    pub operands: [Buffer; 3],
}

/// A real scalar argument in the problem's precision.
pub fn real(p: Precision, v: f64) -> Arg {
    match p {
        Precision::F32 => Arg::F32(v as f32),
        Precision::F64 => Arg::F64(v),
    }
}

fn int(v: usize) -> Result<Arg> {
    i32::try_from(v)
        .map(Arg::I32)
        .map_err(|_| Error::invalid(format!("{v} exceeds the kernels' 32-bit int arguments")))
}

/// The tiles of C in the last, partial wave of a grid of one work-group per
/// tile (all of them where they make less than a wave), where WAVE work-groups
/// per compute unit run at once: those TAILK > 1 shares along K.
pub fn tail_tiles(config: &Config, tiles: usize, units: usize) -> usize {
    let wave = usize::try_from(config.get("WAVE")).unwrap_or(1).max(1) * units.max(1);
    tiles % wave
}

/// `pack_matrix`: X (rows x cols, read from `src` as `s` says, transposed where
/// `trans`) into a tight dst_rows x dst_cols column-major buffer, zero-padded.
#[allow(clippy::too_many_arguments)]
fn pack(
    support: Program,
    rows: usize,
    cols: usize,
    src: Buffer,
    s: &Storage,
    trans: bool,
    dst: Buffer,
    dst_rows: usize,
    dst_cols: usize,
) -> Result<Step> {
    Ok(Step {
        program: support,
        entry: "pack_matrix",
        geometry: Support::pack_geometry(dst_rows, dst_cols),
        args: vec![
            int(rows)?,
            int(cols)?,
            Arg::Buf(src),
            int(s.offset)?,
            int(s.ld)?,
            Arg::I32(i32::from(trans)),
            int(dst_rows)?,
            int(dst_cols)?,
            Arg::Buf(dst),
        ],
    })
}

/// The number of `pack_matrix` arguments; `dst_rows` and `dst_cols` are its 7th and 8th.
const PACK_ARGS: usize = 9;

/// The first two steps merged into one `pack_pair` launch where both are packs of
/// the same support program (an indirect kernel's A and B, or whichever two packs
/// come first): a call's launches each cost a few microseconds beyond their work,
/// which counts at mid sizes.
fn paired(mut pre: Vec<Step>) -> Vec<Step> {
    let tiles = |s: &Step| match (s.entry, s.args.get(6), s.args.get(7)) {
        ("pack_matrix", Some(Arg::I32(r)), Some(Arg::I32(c))) if s.args.len() == PACK_ARGS => {
            let up = |x: &i32| {
                usize::try_from(*x)
                    .unwrap_or(0)
                    .div_ceil(Support::PACK_TILE)
            };
            Some(up(r) * up(c))
        }
        _ => None,
    };
    let (Some(first), Some(second)) = (pre.first(), pre.get(1)) else {
        return pre;
    };
    let (Some(t0), Some(t1)) = (tiles(first), tiles(second)) else {
        return pre;
    };
    if first.program != second.program {
        return pre;
    }
    let rest = pre.split_off(2);
    let mut args = pre[0].args.clone();
    args.extend(pre[1].args.iter().cloned());
    let pair = Step {
        program: pre[0].program,
        entry: "pack_pair",
        geometry: Support::pack_pair_geometry(t0 + t1),
        args,
    };
    std::iter::once(pair).chain(rest).collect()
}

/// `scale_matrix`: C = beta C (C = 0 without reading it where beta is 0), the
/// whole call when there is no product (K = 0 or alpha = 0).
pub fn scale(support: Program, p: &Problem, c: Buffer) -> Result<Step> {
    let p = p.column_major();
    let s = p.storage(Matrix::C);
    Ok(Step {
        program: support,
        entry: "scale_matrix",
        geometry: Support::geometry(p.m, p.n),
        args: vec![
            int(p.m)?,
            int(p.n)?,
            Arg::Buf(c),
            int(s.offset)?,
            int(s.ld)?,
            real(p.precision, p.beta),
        ],
    })
}

/// Plans the launches of CLBlast kernel `spec` (compiled as `program`, with the
/// routine kernels as `support`) for `problem` on the caller's buffers a, b, c
/// (laid out as the problem says). The problem must have M, N, K >= 1 and
/// alpha != 0: the caller handles the rest with `scale`.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    be: &mut AnyBackend,
    spec: &KernelSpec,
    config: &Config,
    program: Program,
    support: Program,
    problem: &Problem,
    a: Buffer,
    b: Buffer,
    c: Buffer,
) -> Result<Staged> {
    check_plannable(spec, problem)?;
    let kernel = Kernel {
        spec,
        config,
        program,
        support,
    };
    let buffers = [a, b, c];
    match spec.abi {
        // The lecture's kernels take the row-major normal form instead.
        Abi::Lecture {
            a_transposed,
            b_transposed,
        } => Planner::new(kernel, problem, problem.row_major(), buffers)
            .lecture(be, (a_transposed, b_transposed)),
        Abi::Direct { entries } => {
            Planner::new(kernel, problem, problem.column_major(), buffers).direct(entries)
        }
        Abi::DirectInPlace => {
            Planner::new(kernel, problem, problem.column_major(), buffers).direct_in_place(be)
        }
        Abi::Indirect | Abi::IndirectSplitK => {
            Planner::new(kernel, problem, problem.column_major(), buffers).indirect(be)
        }
        Abi::Tutorial => Err(Error::invalid(format!(
            "internal: {} is not planned here",
            spec.id
        ))),
    }
}

/// Refuses a problem no kernel launch computes: one beyond the kernels' 32-bit
/// indices, or one with M, N or K of 0.
fn check_plannable(spec: &KernelSpec, problem: &Problem) -> Result<()> {
    if let Some((which, len)) = problem.beyond_int_indices() {
        return Err(Error::Constraint {
            kernel: spec.id.into(),
            message: format!(
                "matrix {which:?} spans {len} elements, more than the {} its 32-bit int indices address",
                i32::MAX
            ),
            values: problem.describe(),
        });
    }
    if problem.m == 0 || problem.n == 0 || problem.k == 0 {
        return Err(Error::invalid(format!(
            "{}: nothing to launch for M={}, N={}, K={} (the routine scales C instead)",
            spec.id, problem.m, problem.n, problem.k
        )));
    }
    Ok(())
}

/// The kernel a plan launches: its spec and configuration, its program and the
/// routine kernels' (`support`).
struct Kernel<'a> {
    spec: &'a KernelSpec,
    config: &'a Config,
    program: Program,
    support: Program,
}

/// A matrix as a kernel reads it: its buffer, offset and leading dimension.
type Placed = (Buffer, usize, usize);

/// A or B as the call stores it, in the kernel's view of the problem.
struct Operand {
    buf: Buffer,
    storage: Storage,
    /// Stored with K contiguous (A transposed, B not).
    kmajor: bool,
    /// Its dimension other than K: M for A, N for B.
    rows: usize,
}

/// One plan in the making: the problem in the kernel's layout, the caller's
/// buffers (A and B swapped where that layout is not the caller's), and the
/// launches and temporary buffers gathered around the main kernel.
struct Planner<'a> {
    kernel: Kernel<'a>,
    p: Problem,
    a: Buffer,
    b: Buffer,
    c: Buffer,
    pre: Vec<Step>,
    post: Vec<Step>,
    owned: Vec<Buffer>,
}

impl<'a> Planner<'a> {
    fn new(kernel: Kernel<'a>, problem: &Problem, view: Problem, [a, b, c]: [Buffer; 3]) -> Self {
        let (a, b) = if problem.layout != view.layout {
            (b, a)
        } else {
            (a, b)
        };
        Planner {
            kernel,
            p: view,
            a,
            b,
            c,
            pre: Vec::new(),
            post: Vec::new(),
            owned: Vec::new(),
        }
    }

    /// The plan around `main`, its pre-processing paired where it can be.
    fn staged(
        self,
        main: Step,
        finish: Vec<Step>,
        padded: [usize; 3],
        operands: [Buffer; 3],
    ) -> Staged {
        Staged {
            pre: paired(self.pre),
            main,
            finish,
            post: self.post,
            owned: self.owned,
            padded,
            operands,
        }
    }

    /// A as the call stores it, or B where `which` is B.
    fn operand(&self, which: Matrix) -> Operand {
        let storage = self.p.storage(which);
        match which {
            Matrix::B => Operand {
                buf: self.b,
                kmajor: !storage.transposed,
                rows: self.p.n,
                storage,
            },
            _ => Operand {
                buf: self.a,
                kmajor: storage.transposed,
                rows: self.p.m,
                storage,
            },
        }
    }

    /// A temporary buffer of `len` elements in the problem's precision, freed with the call.
    fn temp(&mut self, be: &mut AnyBackend, len: usize) -> Result<Buffer> {
        let t = be.alloc(self.p.precision.elem(), len)?;
        self.owned.push(t);
        Ok(t)
    }

    /// The ways of sharing a tile's K (split-K, stream-K, the last wave's split)
    /// for an mp x np grid of tm x tn tiles whose K is `k_tiles` tiles deep: sets
    /// the launch's grid (SPLITK splits along its third dimension; stream-K's
    /// persistent grid of STREAMK work-groups per compute unit, at most one per
    /// iteration, along its first; TAILK's one work-group per tile and TAILK per
    /// tile of the last partial wave, along its first) and makes the partial
    /// sums' workspace and a zeroed counter per tile of C (the kernel leaves it
    /// zero, so repeated launches share it); the buffers go with the plan's.
    fn share_k(
        &mut self,
        be: &mut AnyBackend,
        [mp, np, tm, tn]: [usize; 4],
        k_tiles: usize,
        geometry: &mut Geometry,
    ) -> Result<(Arg, Arg)> {
        let config = self.kernel.config;
        let precision = self.kernel.spec.precision_of(config);
        let split = usize::try_from(config.get("SPLITK")).unwrap_or(1).max(1);
        let per_unit = usize::try_from(config.get("STREAMK")).unwrap_or(0);
        let tail_k = usize::try_from(config.get("TAILK")).unwrap_or(1).max(1);
        let tiles = (mp / tm.max(1)) * (np / tn.max(1));
        let units = be.info().compute_units.unwrap_or(1).max(1) as usize;
        let partial_tiles = if tail_k > 1 {
            // One work-group per tile, and TAILK per tile of the last, partial wave.
            let tail = tail_tiles(config, tiles, units);
            geometry.global[0] = (tiles + tail * (tail_k - 1)) * geometry.local[0];
            geometry.global[1] = geometry.local[1];
            tail * tail_k
        } else if per_unit > 0 {
            if k_tiles == 0 {
                // No iteration to share, and so none that writes C (the routine
                // scales C without a kernel when K is 0).
                return Err(Error::invalid(
                    "stream-K (STREAMK > 0) needs K >= 1: with K = 0 no work-group has an iteration that writes C",
                ));
            }
            let groups = (per_unit * units).min(tiles * k_tiles).max(1);
            geometry.global[0] = groups * geometry.local[0];
            geometry.global[1] = geometry.local[1];
            // A work-group's first and last share of a tile.
            2 * groups
        } else {
            geometry.global[2] = split;
            if split > 1 {
                split * tiles
            } else {
                0
            }
        };
        // Partial sums in the kernel's precision; 32-bit int counters.
        let work = be.alloc(precision.elem(), (partial_tiles * tm * tn).max(1))?;
        self.owned.push(work);
        let counters = be.alloc(Precision::F32.elem(), tiles.max(1))?;
        self.owned.push(counters);
        be.fill(&counters, 0.0)?;
        Ok((Arg::Buf(work), Arg::Buf(counters)))
    }

    /// With `REDUCE` (split-K summed by a kernel of its own), the step that adds the
    /// SPLITK slices the kernel wrote to `work` (each mp x np, leading dimension mp)
    /// into the rows x cols matrix `c` at `offset` with `ld`, scaled by alpha and beta.
    /// None without it.
    fn reduce_step(
        &self,
        work: Arg,
        [rows, cols, mp, np]: [usize; 4],
        (c, offset, ld): Placed,
    ) -> Result<Option<Step>> {
        let (config, p) = (self.kernel.config, &self.p);
        let splits = usize::try_from(config.get("SPLITK")).unwrap_or(1);
        if config.get("REDUCE") != 1 || splits < 2 {
            return Ok(None);
        }
        let slice = mp * np;
        if slice
            .checked_mul(splits)
            .is_none_or(|n| n > i32::MAX as usize)
        {
            return Err(Error::invalid(format!(
                "split-K's {splits} slices of {mp}x{np} span more than the {} elements its 32-bit indices address",
                i32::MAX
            )));
        }
        Ok(Some(Step {
            program: self.kernel.support,
            entry: "reduce_splits",
            geometry: Support::pack_geometry(rows, cols),
            args: vec![
                int(rows)?,
                int(cols)?,
                int(splits)?,
                work,
                int(mp)?,
                int(slice)?,
                Arg::Buf(c),
                int(offset)?,
                int(ld)?,
                real(p.precision, p.alpha),
                real(p.precision, p.beta),
            ],
        }))
    }

    /// Packs `x` into a new column-major dst_rows x dst_cols buffer: as op(X)
    /// (rows x K), or K-contiguous (K x rows) where `want`.
    fn pack_operand(
        &mut self,
        be: &mut AnyBackend,
        x: &Operand,
        want: bool,
        (dst_rows, dst_cols): (usize, usize),
    ) -> Result<Buffer> {
        let k = self.p.k;
        let (r, c) = if want { (k, x.rows) } else { (x.rows, k) };
        let t = self.temp(be, dst_rows * dst_cols)?;
        let step = pack(
            self.kernel.support,
            r,
            c,
            x.buf,
            &x.storage,
            x.kmajor != want,
            t,
            dst_rows,
            dst_cols,
        )?;
        self.pre.push(step);
        Ok(t)
    }

    /// `unpack_matrix`: C = alpha T + beta C, from the rows x cols temporary `t`
    /// (leading dimension `t_ld`) into C as the call stores it.
    fn unpack(
        &self,
        [rows, cols]: [usize; 2],
        (t, t_ld): (Buffer, usize),
        (alpha, beta): (f64, f64),
    ) -> Result<Step> {
        let sc = self.p.storage(Matrix::C);
        let precision = self.p.precision;
        Ok(Step {
            program: self.kernel.support,
            entry: "unpack_matrix",
            geometry: Support::pack_geometry(rows, cols),
            args: vec![
                int(rows)?,
                int(cols)?,
                Arg::Buf(t),
                int(t_ld)?,
                Arg::Buf(self.c),
                int(sc.offset)?,
                int(sc.ld)?,
                real(precision, alpha),
                real(precision, beta),
            ],
        })
    }

    /// The direct kernels' arguments: sizes, scalars, each matrix with its offset and ld
    /// (A and B as given: the caller's, or copies made for the kernel).
    fn direct_args(&self, [a, b]: [Placed; 2]) -> Result<Vec<Arg>> {
        let p = &self.p;
        let sc = p.storage(Matrix::C);
        Ok(vec![
            int(p.m)?,
            int(p.n)?,
            int(p.k)?,
            real(p.precision, p.alpha),
            real(p.precision, p.beta),
            Arg::Buf(a.0),
            int(a.1)?,
            int(a.2)?,
            Arg::Buf(b.0),
            int(b.1)?,
            int(b.2)?,
            Arg::Buf(self.c),
            int(sc.offset)?,
            int(sc.ld)?,
        ])
    }

    /// The direct kernel takes the arguments as they are: one launch.
    fn direct(self, entries: [&'static str; 4]) -> Result<Staged> {
        let (spec, config) = (self.kernel.spec, self.kernel.config);
        let p = self.p;
        let entry = entries[usize::from(p.trans_a.is_t()) * 2 + usize::from(p.trans_b.is_t())];
        let (tm, tn, _) = spec.tile(config);
        let (sa, sb) = (p.storage(Matrix::A), p.storage(Matrix::B));
        let as_stored = [(self.a, sa.offset, sa.ld), (self.b, sb.offset, sb.ld)];
        let main = Step {
            program: self.kernel.program,
            entry,
            geometry: spec.geometry(config, round_up(p.m, tm), round_up(p.n, tn)),
            args: self.direct_args(as_stored)?,
        };
        let operands = [self.a, self.b, self.c];
        Ok(self.staged(main, Vec::new(), [p.m, p.n, p.k], operands))
    }

    /// The in-place direct kernel: A and B as they are or in the form it was
    /// compiled for, and K shared between work-groups as its configuration says.
    fn direct_in_place(mut self, be: &mut AnyBackend) -> Result<Staged> {
        let (spec, config) = (self.kernel.spec, self.kernel.config);
        let p = self.p;
        let (m, n, k) = (p.m, p.n, p.k);
        let (tm, tn, tk) = spec.tile(config);
        let (mp, np) = (round_up(m, tm), round_up(n, tn));
        let form = crate::kernel::builtin::fixed_form(config);
        let (ar, a_k) = self.in_place_operand(be, self.operand(Matrix::A), form.map(|f| f.0))?;
        let (br, b_k) = self.in_place_operand(be, self.operand(Matrix::B), form.map(|f| f.1))?;
        let mut geometry = spec.geometry(config, mp, np);
        let k_tiles = k.div_ceil(tk.max(1));
        let (work, counters) = self.share_k(be, [mp, np, tm, tn], k_tiles, &mut geometry)?;
        let sc = p.storage(Matrix::C);
        let reduce = self.reduce_step(work, [m, n, mp, np], (self.c, sc.offset, sc.ld))?;
        let args = [
            self.direct_args([ar, br])?,
            vec![
                Arg::I32(i32::from(a_k)),
                Arg::I32(i32::from(b_k)),
                work,
                counters,
            ],
        ]
        .concat();
        let main = Step {
            program: self.kernel.program,
            entry: spec.entry,
            geometry,
            args,
        };
        let operands = [ar.0, br.0, self.c];
        Ok(self.staged(main, reduce.into_iter().collect(), [m, n, k], operands))
    }

    /// ALONG_MN and FIXED_FORM: each operand reaches the in-place kernel in the
    /// form it was compiled for (`want`, from `fixed_form`), 16-byte aligned: one
    /// the call stores the other way is transposed first, an unaligned one copied
    /// (ld a multiple of 4). Returns the operand as the kernel reads it and
    /// whether it is K-contiguous.
    fn in_place_operand(
        &mut self,
        be: &mut AnyBackend,
        x: Operand,
        want: Option<bool>,
    ) -> Result<(Placed, bool)> {
        let s = &x.storage;
        let aligned = s.offset % 4 == 0 && s.ld % 4 == 0;
        let Some(want) = want.filter(|w| !aligned || *w != x.kmajor) else {
            return Ok(((x.buf, s.offset, s.ld), x.kmajor));
        };
        // rows x k read along `rows`, or k x rows read along K.
        let (r, c) = if want {
            (self.p.k, x.rows)
        } else {
            (x.rows, self.p.k)
        };
        let ld = round_up(r, 4);
        let t = self.pack_operand(be, &x, want, (ld, c))?;
        Ok(((t, 0, ld), want))
    }

    /// The indirect kernel: A, B and C packed to its tile multiples where the
    /// call's are not already so, C unpacked after, and split-K's shares and
    /// reduction where the kernel has them.
    fn indirect(mut self, be: &mut AnyBackend) -> Result<Staged> {
        let (spec, config) = (self.kernel.spec, self.kernel.config);
        let p = self.p;
        let (tm, tn, tk) = spec.tile(config);
        let (mp, np, kp) = (round_up(p.m, tm), round_up(p.n, tn), round_up(p.k, tk));
        let (a_k, b_k) = spec.k_major(config);
        // A: column-major mp x kp, or op(A)^T (kp x mp) where the kernel reads it
        // K-contiguous. B as op(B)^T: column-major np x kp, or op(B) (kp x np)
        // where the kernel reads it K-contiguous.
        let ap = self.indirect_operand(be, self.operand(Matrix::A), a_k, [mp, kp])?;
        let bp = self.indirect_operand(be, self.operand(Matrix::B), b_k, [np, kp])?;
        let cp = self.indirect_c(be, mp, np)?;
        let mut geometry = spec.geometry(config, mp, np);
        let mut args = vec![
            int(mp)?,
            int(np)?,
            int(kp)?,
            real(p.precision, p.alpha),
            real(p.precision, p.beta),
            Arg::Buf(ap),
            Arg::Buf(bp),
            Arg::Buf(cp),
        ];
        let mut finish = Vec::new();
        if spec.abi == Abi::IndirectSplitK {
            let k_tiles = kp / tk.max(1);
            let (work, counters) = self.share_k(be, [mp, np, tm, tn], k_tiles, &mut geometry)?;
            // Summed into C as the kernel would have written it, before any unpack.
            finish.extend(self.reduce_step(work, [mp, np, mp, np], (cp, 0, mp))?);
            args.extend([work, counters]);
        }
        let main = Step {
            program: self.kernel.program,
            entry: spec.entry,
            geometry,
            args,
        };
        Ok(self.staged(main, finish, [mp, np, kp], [ap, bp, cp]))
    }

    /// A or B as the indirect kernel reads it: column-major rows x kp, or kp x
    /// rows where `want` (K-contiguous). Stored so already (and tight), it goes as
    /// it is.
    fn indirect_operand(
        &mut self,
        be: &mut AnyBackend,
        x: Operand,
        want: bool,
        [rows_p, kp]: [usize; 2],
    ) -> Result<Buffer> {
        let (r, c) = if want { (kp, rows_p) } else { (rows_p, kp) };
        let s = &x.storage;
        if x.kmajor == want && s.offset == 0 && s.ld == r && (x.rows, self.p.k) == (rows_p, kp) {
            return Ok(x.buf);
        }
        self.pack_operand(be, &x, want, (r, c))
    }

    /// C: column-major mp x np; copied in only where the kernel will read it.
    fn indirect_c(&mut self, be: &mut AnyBackend, mp: usize, np: usize) -> Result<Buffer> {
        let (m, n) = (self.p.m, self.p.n);
        let sc = self.p.storage(Matrix::C);
        if sc.offset == 0 && sc.ld == mp && (m, n) == (mp, np) {
            return Ok(self.c);
        }
        let t = self.temp(be, mp * np)?;
        if self.p.beta != 0.0 {
            let step = pack(self.kernel.support, m, n, self.c, &sc, false, t, mp, np)?;
            self.pre.push(step);
        }
        let step = self.unpack([m, n], (t, mp), (1.0, 0.0))?;
        self.post.push(step);
        Ok(t)
    }

    /// The lecture's kernels compute row-major C = A B with strides and no offsets,
    /// alpha 1 and beta 0, with A or B stored transposed as the variant reads them.
    /// The problem is made row-major (a column-major call swaps A and B); an operand
    /// whose storage is already what the kernel reads is passed as it is (the
    /// problem's own stride), any other is packed (transposed, offset removed, K
    /// zero-padded to the vector width); C goes through a temporary where alpha,
    /// beta or an offset need the unpack kernel.
    fn lecture(mut self, be: &mut AnyBackend, (a_t, b_t): (bool, bool)) -> Result<Staged> {
        let (spec, config) = (self.kernel.spec, self.kernel.config);
        let p = self.p;
        let (m, n, k) = (p.m, p.n, p.k);
        // Strides of A and B along K: multiples of v, zero beyond K.
        let v = spec.tile(config).2.max(1);
        // The plain variant reads A with its rows along K, the A-transposed one
        // reads A^T so; B the other way round.
        let (ya, stride_a) = self.lecture_operand(be, self.operand(Matrix::A), !a_t, v)?;
        let (zb, stride_b) = self.lecture_operand(be, self.operand(Matrix::B), b_t, v)?;
        let sc = p.storage(Matrix::C);
        let (cx, stride_c) = if sc.offset == 0 && p.alpha == 1.0 && p.beta == 0.0 {
            (self.c, sc.ld)
        } else {
            let t = self.temp(be, m * n)?;
            // Row-major M x N = column-major N x M: C = alpha T + beta C there.
            let step = self.unpack([n, m], (t, n), (p.alpha, p.beta))?;
            self.post.push(step);
            (t, n)
        };
        let (a_h, a_w) = if a_t { (k, m) } else { (m, k) };
        let (b_h, b_w) = if b_t { (n, k) } else { (k, n) };
        let (lx, ly) = (spec.launch.local)(config);
        let (px, py) = (spec.launch.per_item)(config);
        let (px, py) = (px.max(1), py.max(1));
        let geometry = Geometry::d2(
            (round_up(n, px * lx) / px, round_up(m, py * ly) / py),
            (lx, ly),
        );
        let main = Step {
            program: self.kernel.program,
            entry: spec.entry,
            geometry,
            args: vec![
                int(a_h)?,
                int(a_w)?,
                int(b_h)?,
                int(b_w)?,
                int(stride_a)?,
                int(stride_b)?,
                int(stride_c)?,
                Arg::Buf(ya),
                Arg::Buf(zb),
                Arg::Buf(cx),
            ],
        };
        Ok(self.staged(main, Vec::new(), [m, n, k], [ya, zb, cx]))
    }

    /// A or B for the lecture's kernels, with its stride: as stored where that is
    /// what the kernel reads (K-contiguous rows where `want`, K and the stride then
    /// multiples of the vector width `v`), packed otherwise: column-major kv x rows
    /// (K zero-padded to a multiple of v) where `want`, rows x K where not.
    /// Storage::transposed means element (i, j) at offset + i * ld + j: row-major
    /// op(X) as stored.
    fn lecture_operand(
        &mut self,
        be: &mut AnyBackend,
        x: Operand,
        want: bool,
        v: usize,
    ) -> Result<(Buffer, usize)> {
        let k = self.p.k;
        let s = &x.storage;
        let k_ready = v == 1 || (k % v == 0 && s.ld % v == 0);
        if x.kmajor == want && s.offset == 0 && (!want || k_ready) {
            return Ok((x.buf, s.ld));
        }
        let dst = if want {
            (round_up(k, v), x.rows)
        } else {
            (x.rows, k)
        };
        Ok((self.pack_operand(be, &x, want, dst)?, dst.0))
    }
}
