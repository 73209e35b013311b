// gemmlab routine kernels, CUDA twin of kernels-cl/routine.cl: the pre- and
// post-processing of the BLAS-style GEMM routine, in `real` (PRECISION 32:
// float, 64: double). See the OpenCL file for what each kernel does and how
// it is launched; twin differences: none beyond syntax (get_global_id comes
// from the prelude).

#ifndef PRECISION
#define PRECISION 32
#endif
#if PRECISION == 64
typedef double real;
#else
typedef float real;
#endif

extern "C" __global__ void pack_matrix(const int rows, const int cols,
                                       const real* src, const int src_offset,
                                       const int src_ld, const int src_trans,
                                       const int dst_rows, const int dst_cols,
                                       real* dst) {
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

extern "C" __global__ void unpack_matrix(const int rows, const int cols,
                                         const real* src, const int src_ld,
                                         real* dst, const int dst_offset,
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

extern "C" __global__ void scale_matrix(const int rows, const int cols, real* dst,
                                        const int dst_offset, const int dst_ld,
                                        const real beta) {
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < rows && j < cols) {
        const int at = dst_offset + j * dst_ld + i;
        dst[at] = (beta == (real)0) ? (real)0 : beta * dst[at];
    }
}
