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

/// The ways of sharing a tile's K (split-K, stream-K, the last wave's split)
/// for an mp x np grid of tm x tn tiles whose K is `k_tiles` tiles deep: sets
/// the launch's grid (SPLITK splits along its third dimension; stream-K's
/// persistent grid of STREAMK work-groups per compute unit, at most one per
/// iteration, along its first; TAILK's one work-group per tile and TAILK per
/// tile of the last partial wave, along its first) and makes the partial
/// sums' workspace and a zeroed counter per tile of C (the kernel leaves it
/// zero, so repeated launches share it); the buffers go to `owned`.
fn share_k(
    be: &mut AnyBackend,
    config: &Config,
    precision: Precision,
    [mp, np, tm, tn]: [usize; 4],
    k_tiles: usize,
    geometry: &mut Geometry,
    owned: &mut Vec<Buffer>,
) -> Result<(Arg, Arg)> {
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
    owned.push(work);
    let counters = be.alloc(Precision::F32.elem(), tiles.max(1))?;
    owned.push(counters);
    be.fill(&counters, 0.0)?;
    Ok((Arg::Buf(work), Arg::Buf(counters)))
}

/// With `REDUCE` (split-K summed by a kernel of its own), the step that adds the
/// SPLITK slices the kernel wrote to `work` (each mp x np, leading dimension mp)
/// into the rows x cols matrix `c` at `offset` with `ld`, scaled by alpha and beta.
/// None without it.
fn reduce_step(
    support: Program,
    config: &Config,
    p: &Problem,
    work: Arg,
    [rows, cols, mp, np]: [usize; 4],
    (c, offset, ld): (Buffer, usize, usize),
) -> Result<Option<Step>> {
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
        program: support,
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
    if let Abi::Lecture {
        a_transposed,
        b_transposed,
    } = spec.abi
    {
        // The lecture's kernels take the row-major normal form instead.
        return plan_lecture(
            be,
            spec,
            config,
            program,
            support,
            problem,
            [a, b, c],
            (a_transposed, b_transposed),
        );
    }
    let p = problem.column_major();
    let (a, b) = if problem.swaps_operands() {
        (b, a)
    } else {
        (a, b)
    };
    let (m, n, k) = (p.m, p.n, p.k);
    let (alpha, beta) = (real(p.precision, p.alpha), real(p.precision, p.beta));
    let (sa, sb, sc) = (
        p.storage(Matrix::A),
        p.storage(Matrix::B),
        p.storage(Matrix::C),
    );
    // The direct kernels' arguments: sizes, scalars, each matrix with its offset and ld
    // (A and B as given: the caller's, or copies made for the kernel).
    let direct_args = |[a, b]: [(Buffer, usize, usize); 2]| -> Result<Vec<Arg>> {
        Ok(vec![
            int(m)?,
            int(n)?,
            int(k)?,
            alpha,
            beta,
            Arg::Buf(a.0),
            int(a.1)?,
            int(a.2)?,
            Arg::Buf(b.0),
            int(b.1)?,
            int(b.2)?,
            Arg::Buf(c),
            int(sc.offset)?,
            int(sc.ld)?,
        ])
    };
    let as_stored = [(a, sa.offset, sa.ld), (b, sb.offset, sb.ld)];
    match spec.abi {
        Abi::Direct { entries } => {
            let entry = entries[usize::from(p.trans_a.is_t()) * 2 + usize::from(p.trans_b.is_t())];
            let (tm, tn, _) = spec.tile(config);
            Ok(Staged {
                pre: Vec::new(),
                main: Step {
                    program,
                    entry,
                    geometry: spec.geometry(config, round_up(m, tm), round_up(n, tn)),
                    args: direct_args(as_stored)?,
                },
                finish: Vec::new(),
                post: Vec::new(),
                owned: Vec::new(),
                padded: [m, n, k],
                operands: [a, b, c],
            })
        }
        Abi::DirectInPlace => {
            let (tm, tn, _) = spec.tile(config);
            let (mp, np) = (round_up(m, tm), round_up(n, tn));
            let mut owned = Vec::new();
            // ALONG_MN and FIXED_FORM: each operand reaches the kernel in the form it
            // was compiled for (`fixed_form`), 16-byte aligned: one the call stores the
            // other way is transposed first, an unaligned one copied (ld a multiple of
            // 4), both in one launch where both need it.
            let form = crate::kernel::builtin::fixed_form(config);
            let mut pre = Vec::new();
            let mut operand = |be: &mut AnyBackend,
                               x: Buffer,
                               s: &Storage,
                               kmajor: bool,
                               want: Option<bool>,
                               rows: usize| {
                let aligned = s.offset % 4 == 0 && s.ld % 4 == 0;
                let Some(want) = want.filter(|w| !aligned || *w != kmajor) else {
                    return Ok::<_, Error>(((x, s.offset, s.ld), kmajor));
                };
                // rows x k read along `rows`, or k x rows read along K.
                let (r, c) = if want { (k, rows) } else { (rows, k) };
                let ld = round_up(r, 4);
                let t = be.alloc(p.precision.elem(), ld * c)?;
                owned.push(t);
                pre.push(pack(support, r, c, x, s, kmajor != want, t, ld, c)?);
                Ok(((t, 0, ld), want))
            };
            // A K-contiguous where stored transposed; B where not.
            let (ar, a_k) = operand(be, a, &sa, sa.transposed, form.map(|f| f.0), m)?;
            let (br, b_k) = operand(be, b, &sb, !sb.transposed, form.map(|f| f.1), n)?;
            let pre = paired(pre);
            let mut geometry = spec.geometry(config, mp, np);
            let k_tiles = k.div_ceil(spec.tile(config).2.max(1));
            let (work, counters) = share_k(
                be,
                config,
                spec.precision_of(config),
                [mp, np, tm, tn],
                k_tiles,
                &mut geometry,
                &mut owned,
            )?;
            let reduce = reduce_step(
                support,
                config,
                &p,
                work,
                [m, n, mp, np],
                (c, sc.offset, sc.ld),
            )?;
            Ok(Staged {
                pre,
                main: Step {
                    program,
                    entry: spec.entry,
                    geometry,
                    args: [
                        direct_args([ar, br])?,
                        vec![
                            Arg::I32(i32::from(a_k)),
                            Arg::I32(i32::from(b_k)),
                            work,
                            counters,
                        ],
                    ]
                    .concat(),
                },
                finish: reduce.into_iter().collect(),
                post: Vec::new(),
                owned,
                padded: [m, n, k],
                operands: [ar.0, br.0, c],
            })
        }
        Abi::Indirect | Abi::IndirectSplitK => {
            let (tm, tn, tk) = spec.tile(config);
            let (mp, np, kp) = (round_up(m, tm), round_up(n, tn), round_up(k, tk));
            let elem = p.precision.elem();
            let mut owned = Vec::new();
            let mut pre = Vec::new();
            let mut post = Vec::new();
            let mut temp = |be: &mut AnyBackend, len: usize| -> Result<Buffer> {
                let t = be.alloc(elem, len)?;
                owned.push(t);
                Ok(t)
            };
            let (a_k, b_k) = spec.k_major(config);
            // A: column-major mp x kp, or op(A)^T (kp x mp) where the kernel reads it
            // K-contiguous. Stored so already (and tight), A goes as it is.
            let (ar, ac) = if a_k { (kp, mp) } else { (mp, kp) };
            let ap = if sa.transposed == a_k && sa.offset == 0 && sa.ld == ar && (m, k) == (mp, kp)
            {
                a
            } else {
                let t = temp(be, mp * kp)?;
                let step = if a_k {
                    pack(support, k, m, a, &sa, !sa.transposed, t, ar, ac)?
                } else {
                    pack(support, m, k, a, &sa, sa.transposed, t, ar, ac)?
                };
                pre.push(step);
                t
            };
            // B as op(B)^T: column-major np x kp, or op(B) (kp x np) where the kernel
            // reads it K-contiguous.
            let (br, bc) = if b_k { (kp, np) } else { (np, kp) };
            let bp = if sb.transposed != b_k && sb.offset == 0 && sb.ld == br && (n, k) == (np, kp)
            {
                b
            } else {
                let t = temp(be, np * kp)?;
                let step = if b_k {
                    pack(support, k, n, b, &sb, sb.transposed, t, br, bc)?
                } else {
                    pack(support, n, k, b, &sb, !sb.transposed, t, br, bc)?
                };
                pre.push(step);
                t
            };
            // C: column-major mp x np; copied in only where the kernel will read it.
            let cp = if sc.offset == 0 && sc.ld == mp && (m, n) == (mp, np) {
                c
            } else {
                let t = temp(be, mp * np)?;
                if p.beta != 0.0 {
                    pre.push(pack(support, m, n, c, &sc, false, t, mp, np)?);
                }
                post.push(Step {
                    program: support,
                    entry: "unpack_matrix",
                    geometry: Support::pack_geometry(m, n),
                    args: vec![
                        int(m)?,
                        int(n)?,
                        Arg::Buf(t),
                        int(mp)?,
                        Arg::Buf(c),
                        int(sc.offset)?,
                        int(sc.ld)?,
                        real(p.precision, 1.0),
                        real(p.precision, 0.0),
                    ],
                });
                t
            };
            let mut geometry = spec.geometry(config, mp, np);
            let mut args = vec![
                int(mp)?,
                int(np)?,
                int(kp)?,
                alpha,
                beta,
                Arg::Buf(ap),
                Arg::Buf(bp),
                Arg::Buf(cp),
            ];
            let mut finish = Vec::new();
            if spec.abi == Abi::IndirectSplitK {
                let (work, counters) = share_k(
                    be,
                    config,
                    spec.precision_of(config),
                    [mp, np, tm, tn],
                    kp / spec.tile(config).2.max(1),
                    &mut geometry,
                    &mut owned,
                )?;
                // Summed into C as the kernel would have written it, before any unpack.
                finish.extend(reduce_step(
                    support,
                    config,
                    &p,
                    work,
                    [mp, np, mp, np],
                    (cp, 0, mp),
                )?);
                args.extend([work, counters]);
            }
            Ok(Staged {
                pre: paired(pre),
                main: Step {
                    program,
                    entry: spec.entry,
                    geometry,
                    args,
                },
                finish,
                post,
                owned,
                padded: [mp, np, kp],
                operands: [ap, bp, cp],
            })
        }
        Abi::Tutorial | Abi::Lecture { .. } => Err(Error::invalid(format!(
            "internal: {} is not planned here",
            spec.id
        ))),
    }
}

/// The lecture's kernels compute row-major C = A B with strides and no offsets,
/// alpha 1 and beta 0, with A or B stored transposed as the variant reads them.
/// The problem is made row-major (a column-major call swaps A and B); an operand
/// whose storage is already what the kernel reads is passed as it is (the
/// problem's own stride), any other is packed (transposed, offset removed, K
/// zero-padded to the vector width); C goes through a temporary where alpha,
/// beta or an offset need the unpack kernel.
#[allow(clippy::too_many_arguments)]
fn plan_lecture(
    be: &mut AnyBackend,
    spec: &KernelSpec,
    config: &Config,
    program: Program,
    support: Program,
    problem: &Problem,
    [a, b, c]: [Buffer; 3],
    (a_t, b_t): (bool, bool),
) -> Result<Staged> {
    let p = problem.row_major();
    let (a, b) = if problem.layout == super::problem::Layout::ColMajor {
        (b, a)
    } else {
        (a, b)
    };
    let (m, n, k) = (p.m, p.n, p.k);
    // Strides of A and B along K: multiples of v, zero beyond K.
    let v = spec.tile(config).2.max(1);
    let kv = round_up(k, v);
    let (sa, sb, sc) = (
        p.storage(Matrix::A),
        p.storage(Matrix::B),
        p.storage(Matrix::C),
    );
    let elem = p.precision.elem();
    let mut owned = Vec::new();
    let mut pre = Vec::new();
    let mut post = Vec::new();
    let mut temp = |be: &mut AnyBackend, len: usize| -> Result<Buffer> {
        let t = be.alloc(elem, len)?;
        owned.push(t);
        Ok(t)
    };
    // Storage::transposed means element (i, j) at offset + i * ld + j: row-major
    // op(A) as stored. The plain variant reads A so (its rows along K), the
    // A-transposed one reads A^T so.
    let k_ready = |s: &Storage| v == 1 || (k % v == 0 && s.ld % v == 0);
    let (ya, stride_a) = if sa.transposed != a_t && sa.offset == 0 && (a_t || k_ready(&sa)) {
        (a, sa.ld)
    } else if !a_t {
        // Row-major M x kv = column-major kv x M holding op(A)^T.
        let t = temp(be, kv * m)?;
        pre.push(pack(support, k, m, a, &sa, !sa.transposed, t, kv, m)?);
        (t, kv)
    } else {
        // A^T stored row-major (K x M) = column-major M x K holding op(A).
        let t = temp(be, m * k)?;
        pre.push(pack(support, m, k, a, &sa, sa.transposed, t, m, k)?);
        (t, m)
    };
    let (zb, stride_b) = if sb.transposed != b_t && sb.offset == 0 && (!b_t || k_ready(&sb)) {
        (b, sb.ld)
    } else if !b_t {
        // Row-major K x N = column-major N x K holding op(B)^T.
        let t = temp(be, n * k)?;
        pre.push(pack(support, n, k, b, &sb, !sb.transposed, t, n, k)?);
        (t, n)
    } else {
        // B^T stored row-major (N x kv) = column-major kv x N holding op(B).
        let t = temp(be, kv * n)?;
        pre.push(pack(support, k, n, b, &sb, sb.transposed, t, kv, n)?);
        (t, kv)
    };
    let (cx, stride_c) = if sc.offset == 0 && p.alpha == 1.0 && p.beta == 0.0 {
        (c, sc.ld)
    } else {
        let t = temp(be, m * n)?;
        // Row-major M x N = column-major N x M: C = alpha T + beta C there.
        post.push(Step {
            program: support,
            entry: "unpack_matrix",
            geometry: Support::pack_geometry(n, m),
            args: vec![
                int(n)?,
                int(m)?,
                Arg::Buf(t),
                int(n)?,
                Arg::Buf(c),
                int(sc.offset)?,
                int(sc.ld)?,
                real(p.precision, p.alpha),
                real(p.precision, p.beta),
            ],
        });
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
    Ok(Staged {
        pre: paired(pre),
        main: Step {
            program,
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
        },
        finish: Vec::new(),
        post,
        owned,
        padded: [m, n, k],
        operands: [ya, zb, cx],
    })
}
