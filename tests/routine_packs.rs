//! The routine's pack kernel at the shapes the GEMM plan asks of it: padded,
//! transposed or not, destinations that are and are not multiples of its 32 x 32
//! tile, a source offset and leading dimension, in f32 and f64; every element
//! compared exactly (a pack only moves numbers). A 32-wide tiled pack that
//! branched around its barrier was miscompiled by PoCL 3.1's default
//! work-group method at destinations of 8 or 40 rows; these shapes keep that found.
//! `pack_pair`, two packs in one launch, is checked at the same shapes, each
//! beside the next.

mod common;

use gemmlab::backend::{AnyBackend, Arg, Elem, HostData, HostDataMut};
use gemmlab::kernel::builtin::Support;
use gemmlab::{Backend, Precision};

/// (rows, cols, dst_rows, dst_cols)
const SHAPES: [(usize, usize, usize, usize); 8] = [
    (1, 1, 1, 1),
    (8, 32, 8, 32),
    (32, 8, 32, 8),
    (40, 40, 40, 40),
    (20, 64, 24, 64),
    (45, 70, 64, 96),
    (45, 70, 50, 70),
    (97, 33, 128, 48),
];

/// One pack on the device: its source and poisoned destination, its arguments,
/// and the destination it must produce.
struct Pack {
    what: String,
    src: gemmlab::backend::Buffer,
    dst: gemmlab::backend::Buffer,
    args: Vec<Arg>,
    want: Vec<f64>,
    dst_rows: usize,
    dst_cols: usize,
}

fn prepare(
    be: &mut AnyBackend,
    precision: Precision,
    shape: (usize, usize, usize, usize),
    trans: bool,
) -> Pack {
    let (rows, cols, dst_rows, dst_cols) = shape;
    let elem = if precision == Precision::F64 {
        Elem::F64
    } else {
        Elem::F32
    };
    // X(i, j) = src[offset + j*ld + i], or src[offset + i*ld + j] transposed.
    let (offset, ld) = (3, if trans { cols + 2 } else { rows + 1 });
    let len = offset + ld * if trans { rows } else { cols };
    let src: Vec<f64> = (0..len).map(|x| x as f64 + 0.5).collect();
    let at = |i: usize, j: usize| offset + if trans { i * ld + j } else { j * ld + i };
    let s = be.alloc(elem, len).unwrap();
    let d = be.alloc(elem, dst_rows * dst_cols).unwrap();
    match precision {
        Precision::F64 => be.upload(&s, HostData::F64(&src)).unwrap(),
        Precision::F32 => {
            let v: Vec<f32> = src.iter().map(|x| *x as f32).collect();
            be.upload(&s, HostData::F32(&v)).unwrap()
        }
    }
    be.fill(&d, f64::NAN).unwrap();
    let want = (0..dst_rows * dst_cols)
        .map(|e| {
            let (i, j) = (e % dst_rows, e / dst_rows);
            if i < rows && j < cols {
                src[at(i, j)]
            } else {
                0.0
            }
        })
        .collect();
    Pack {
        what: format!("{precision} {rows}x{cols} -> {dst_rows}x{dst_cols} transposed={trans}"),
        src: s,
        dst: d,
        args: vec![
            Arg::I32(rows as i32),
            Arg::I32(cols as i32),
            Arg::Buf(s),
            Arg::I32(offset as i32),
            Arg::I32(ld as i32),
            Arg::I32(i32::from(trans)),
            Arg::I32(dst_rows as i32),
            Arg::I32(dst_cols as i32),
            Arg::Buf(d),
        ],
        want,
        dst_rows,
        dst_cols,
    }
}

/// The elements of the pack's destination that differ from what it must hold
/// (a failure line where any do); frees its buffers.
fn verify(be: &mut AnyBackend, precision: Precision, pack: Pack, how: &str) -> Option<String> {
    let mut out = vec![0f64; pack.want.len()];
    match precision {
        Precision::F64 => be.download(&pack.dst, HostDataMut::F64(&mut out)).unwrap(),
        Precision::F32 => {
            let mut v = vec![0f32; out.len()];
            be.download(&pack.dst, HostDataMut::F32(&mut v)).unwrap();
            out = v.iter().map(|x| *x as f64).collect();
        }
    }
    // NaN (the poison) never equals what was wanted.
    let wrong = out.iter().zip(&pack.want).filter(|(o, w)| o != w).count();
    be.free(pack.src);
    be.free(pack.dst);
    let tc = be.info().toolchain;
    (wrong > 0).then(|| format!("{tc} {how} {}: {wrong} elements wrong", pack.what))
}

/// Every shape both ways through `pack_matrix`, and through `pack_pair` beside
/// the next shape transposed the other way (A's pack and B's in one launch).
fn packs_match(be: &mut AnyBackend) -> Vec<String> {
    let tc = be.info().toolchain;
    let mut failures = Vec::new();
    for precision in Precision::ALL {
        let (program, _) = be
            .compile(
                "routine kernels",
                &Support::routine_source(tc),
                &Support::routine_options(precision),
            )
            .unwrap();
        for (n, &shape) in SHAPES.iter().enumerate() {
            for trans in [false, true] {
                let pack = prepare(be, precision, shape, trans);
                let g = Support::pack_geometry(pack.dst_rows, pack.dst_cols);
                be.launch(&program, "pack_matrix", &g, &pack.args).unwrap();
                failures.extend(verify(be, precision, pack, "pack_matrix"));

                let first = prepare(be, precision, shape, trans);
                let second = prepare(be, precision, SHAPES[(n + 1) % SHAPES.len()], !trans);
                let tiles = |p: &Pack| {
                    let t = Support::PACK_TILE;
                    p.dst_rows.div_ceil(t) * p.dst_cols.div_ceil(t)
                };
                let g = Support::pack_pair_geometry(tiles(&first) + tiles(&second));
                let args: Vec<Arg> = first.args.iter().chain(&second.args).copied().collect();
                be.launch(&program, "pack_pair", &g, &args).unwrap();
                failures.extend(verify(be, precision, first, "pack_pair, first"));
                failures.extend(verify(be, precision, second, "pack_pair, second"));
            }
        }
        be.release_program(program);
    }
    failures
}

#[test]
fn packs_are_exact_at_edge_shapes_on_opencl() {
    let mut be = common::opencl();
    let failures = packs_match(&mut be);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(feature = "cuda")]
#[test]
fn packs_are_exact_at_edge_shapes_on_cuda() {
    let Some(mut be) = common::cuda("packs_are_exact_at_edge_shapes_on_cuda") else {
        return;
    };
    let failures = packs_match(&mut be);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
