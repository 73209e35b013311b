// gemmlab routine kernels, OpenCL side: the pre- and post-processing of the
// BLAS-style GEMM routine, in `real` (PRECISION 32: float, 64: double).
//
// pack_matrix(rows, cols, src, src_offset, src_ld, src_trans,
//             dst_rows, dst_cols, dst)
//   dst is dst_rows x dst_cols, column-major and tight (dst_rows >= rows,
//   dst_cols >= cols): X in its top-left corner, zeros elsewhere, where X is
//   the rows x cols matrix X(i, j) = src[src_offset + j*src_ld + i], or
//   src[src_offset + i*src_ld + j] where src_trans is set. One kernel pads,
//   transposes, applies offsets and leading dimensions: what an indirect
//   kernel needs from any BLAS argument list.
//   Launch: 16 x 16 work-groups over (roundup(dst_rows), roundup(dst_cols)).
// unpack_matrix(rows, cols, src, src_ld, dst, dst_offset, dst_ld, alpha, beta)
//   C(i, j) = alpha * T(i, j) + beta * C(i, j) for the rows x cols matrix C at
//   dst_offset with dst_ld, T column-major with src_ld. Where beta is 0, C is
//   not read (BLAS: NaN in C must not survive). Elements of dst outside C
//   are never written.
//   Launch: 16 x 16 work-groups over (roundup(rows), roundup(cols)).
//
// scale_matrix: see below.
//
// The CUDA twin (kernels-cu/routine.cu) is the same text; twin differences:
// none beyond syntax.

#ifndef PRECISION
#define PRECISION 32
#endif
#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

__kernel void pack_matrix(const int rows, const int cols,
                          const __global real* src, const int src_offset,
                          const int src_ld, const int src_trans,
                          const int dst_rows, const int dst_cols,
                          __global real* dst) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < dst_rows && j < dst_cols) {
        real v = (real)0;
        if (i < rows && j < cols) {
            const int at = src_trans ? i * src_ld + j : j * src_ld + i;
            v = src[src_offset + at];
        }
        dst[j * dst_rows + i] = v;
    }
}

__kernel void unpack_matrix(const int rows, const int cols,
                            const __global real* src, const int src_ld,
                            __global real* dst, const int dst_offset,
                            const int dst_ld, const real alpha,
                            const real beta) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < rows && j < cols) {
        const real t = alpha * src[j * src_ld + i];
        const int at = dst_offset + j * dst_ld + i;
        dst[at] = (beta == (real)0) ? t : t + beta * dst[at];
    }
}

// scale_matrix(rows, cols, dst, dst_offset, dst_ld, beta)
//   C = beta * C, and C = 0 where beta is 0 without reading C: what BLAS does
//   when there is no product to add (K = 0 or alpha = 0).
//   Launch: 16 x 16 work-groups over (roundup(rows), roundup(cols)).
__kernel void scale_matrix(const int rows, const int cols, __global real* dst,
                           const int dst_offset, const int dst_ld,
                           const real beta) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < rows && j < cols) {
        const int at = dst_offset + j * dst_ld + i;
        dst[at] = (beta == (real)0) ? (real)0 : beta * dst[at];
    }
}
