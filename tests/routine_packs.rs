//! The routine's pack kernel at the shapes the GEMM plan asks of it: padded,
//! transposed or not, destinations that are and are not multiples of its 32 x 32
//! tile, a source offset and leading dimension, in f32 and f64; every element
//! compared exactly (a pack only moves numbers). A 32-wide tiled pack that
//! branched around its barrier was miscompiled by PoCL 3.1's default
//! work-group method at destinations of 8 or 40 rows; these shapes keep that found.

mod common;

use gemmlab::backend::{AnyBackend, Arg, Elem, HostData, HostDataMut};
use gemmlab::kernels::Support;
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
        let elem = if precision == Precision::F64 {
            Elem::F64
        } else {
            Elem::F32
        };
        for (rows, cols, dst_rows, dst_cols) in SHAPES {
            for trans in [false, true] {
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
                let args = [
                    Arg::I32(rows as i32),
                    Arg::I32(cols as i32),
                    Arg::Buf(s),
                    Arg::I32(offset as i32),
                    Arg::I32(ld as i32),
                    Arg::I32(i32::from(trans)),
                    Arg::I32(dst_rows as i32),
                    Arg::I32(dst_cols as i32),
                    Arg::Buf(d),
                ];
                be.launch(
                    &program,
                    "pack_matrix",
                    &Support::pack_geometry(dst_rows, dst_cols),
                    &args,
                )
                .unwrap();
                let mut out = vec![0f64; dst_rows * dst_cols];
                match precision {
                    Precision::F64 => be.download(&d, HostDataMut::F64(&mut out)).unwrap(),
                    Precision::F32 => {
                        let mut v = vec![0f32; out.len()];
                        be.download(&d, HostDataMut::F32(&mut v)).unwrap();
                        out = v.iter().map(|x| *x as f64).collect();
                    }
                }
                let wrong = (0..dst_cols)
                    .flat_map(|j| (0..dst_rows).map(move |i| (i, j)))
                    .filter(|&(i, j)| {
                        let want = if i < rows && j < cols {
                            src[at(i, j)]
                        } else {
                            0.0
                        };
                        out[j * dst_rows + i] != want
                    })
                    .count();
                if wrong > 0 {
                    failures.push(format!(
                        "{tc} {precision} {rows}x{cols} -> {dst_rows}x{dst_cols} transposed={trans}: {wrong} elements wrong"
                    ));
                }
                be.free(s);
                be.free(d);
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
