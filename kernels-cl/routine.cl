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
//   Launch: 32 x 8 work-groups over (roundup32(dst_rows), roundup32(dst_cols)/4);
//   a work-group moves one 32 x 32 tile of dst through local memory (rows
//   padded by one element against bank conflicts), each work-item 4 of its
//   columns. Consecutive work-items read consecutive source addresses
//   whether the source is transposed or not, and write consecutive rows of dst.
//   A one-element-per-work-item version read transposed sources with a
//   stride of src_ld and moved under half of the memory bandwidth.
// pack_pair(the arguments of two pack_matrix calls, one after the other)
//   Both packs in one launch: an indirect kernel's A and B before its product,
//   one launch fewer (each costs a few microseconds of a call's whole time).
//   Launch: 32 x 8 work-groups in a row, one per 32 x 32 tile of the first dst
//   (tiles down its columns first), then one per tile of the second.
// unpack_matrix(rows, cols, src, src_ld, dst, dst_offset, dst_ld, alpha, beta)
//   C(i, j) = alpha * T(i, j) + beta * C(i, j) for the rows x cols matrix C at
//   dst_offset with dst_ld, T column-major with src_ld. Where beta is 0, C is
//   not read (BLAS: NaN in C must not survive). Elements of dst outside C
//   are never written.
//   Launch: as pack_matrix, over (roundup32(rows), roundup32(cols)/4).
// reduce_splits(rows, cols, splits, work, ldw, slice, dst, dst_offset, dst_ld,
//               alpha, beta)
//   C(i, j) = alpha * (W_0(i, j) + ... + W_{splits-1}(i, j)) + beta * C(i, j), the
//   slices added in split order: split-K's partial sums of the SIMT kernels with
//   REDUCE, slice s column-major at work + s*slice with ldw. As unpack_matrix, C
//   is not read where beta is 0 and nothing outside it is written.
//   Launch: as unpack_matrix.
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

#define PACK_TILE 32
#define PACK_ROWS 8

// The work-group of pack_matrix at tile (i0, j0) of dst; `tile` is its local
// tile, PACK_TILE rows of PACK_TILE + 1.
inline void pack_tile(const int rows, const int cols,
                      const __global real* src, const int src_offset,
                      const int src_ld, const int src_trans,
                      const int dst_rows, const int dst_cols,
                      __global real* dst, const int i0, const int j0, __local real* tile) {
    // tile[a][b] = X(i0 + a, j0 + b), read along the source's contiguous dimension.
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    for (int r = ty; r < PACK_TILE; r += PACK_ROWS) {
        // Transposed: work-items along j; otherwise along i.
        const int a = src_trans ? r : tx;
        const int b = src_trans ? tx : r;
        const int i = i0 + a;
        const int j = j0 + b;
        const int at = src_trans ? i * src_ld + j : j * src_ld + i;
        tile[a * (PACK_TILE + 1) + b] = (i < rows && j < cols) ? src[src_offset + at] : (real)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int c = ty; c < PACK_TILE; c += PACK_ROWS) {
        const int i = i0 + tx;
        const int j = j0 + c;
        if (i < dst_rows && j < dst_cols) {
            dst[j * dst_rows + i] = tile[tx * (PACK_TILE + 1) + c];
        }
    }
}

__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void pack_matrix(const int rows, const int cols,
                 const __global real* src, const int src_offset,
                 const int src_ld, const int src_trans,
                 const int dst_rows, const int dst_cols,
                 __global real* dst) {
    __local real tile[PACK_TILE * (PACK_TILE + 1)];
    GEMMLAB_WAIT_PREVIOUS_GRID();
    pack_tile(rows, cols, src, src_offset, src_ld, src_trans, dst_rows, dst_cols, dst,
              get_group_id(0) * PACK_TILE, get_group_id(1) * PACK_TILE, tile);
}

// Two packs in one launch (an indirect kernel's A and B): work-groups in a row,
// the first's tiles of dst0 (column by column of tiles), then dst1's.
__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void pack_pair(const int rows0, const int cols0,
               const __global real* src0, const int src_offset0,
               const int src_ld0, const int src_trans0,
               const int dst_rows0, const int dst_cols0, __global real* dst0,
               const int rows1, const int cols1,
               const __global real* src1, const int src_offset1,
               const int src_ld1, const int src_trans1,
               const int dst_rows1, const int dst_cols1, __global real* dst1) {
    __local real tile[PACK_TILE * (PACK_TILE + 1)];
    GEMMLAB_WAIT_PREVIOUS_GRID();
    const int across0 = (dst_rows0 + PACK_TILE - 1) / PACK_TILE;
    const int tiles0 = across0 * ((dst_cols0 + PACK_TILE - 1) / PACK_TILE);
    const int g = get_group_id(0);
    if (g < tiles0) {
        pack_tile(rows0, cols0, src0, src_offset0, src_ld0, src_trans0, dst_rows0, dst_cols0,
                  dst0, (g % across0) * PACK_TILE, (g / across0) * PACK_TILE, tile);
    } else {
        const int across1 = (dst_rows1 + PACK_TILE - 1) / PACK_TILE;
        const int h = g - tiles0;
        pack_tile(rows1, cols1, src1, src_offset1, src_ld1, src_trans1, dst_rows1, dst_cols1,
                  dst1, (h % across1) * PACK_TILE, (h / across1) * PACK_TILE, tile);
    }
}

__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void unpack_matrix(const int rows, const int cols,
                   const __global real* src, const int src_ld,
                   __global real* dst, const int dst_offset,
                   const int dst_ld, const real alpha,
                   const real beta) {
    GEMMLAB_WAIT_PREVIOUS_GRID();
    const int i = get_group_id(0) * PACK_TILE + get_local_id(0);
    const int j0 = get_group_id(1) * PACK_TILE;
    for (int c = get_local_id(1); c < PACK_TILE; c += PACK_ROWS) {
        const int j = j0 + c;
        if (i < rows && j < cols) {
            const real t = alpha * src[j * src_ld + i];
            const int at = dst_offset + j * dst_ld + i;
            dst[at] = (beta == (real)0) ? t : t + beta * dst[at];
        }
    }
}

__kernel __attribute__((reqd_work_group_size(PACK_TILE, PACK_ROWS, 1)))
void reduce_splits(const int rows, const int cols, const int splits,
                   const __global real* work, const int ldw, const int slice,
                   __global real* dst, const int dst_offset, const int dst_ld,
                   const real alpha, const real beta) {
    GEMMLAB_WAIT_PREVIOUS_GRID();
    const int i = get_group_id(0) * PACK_TILE + get_local_id(0);
    const int j0 = get_group_id(1) * PACK_TILE;
    for (int c = get_local_id(1); c < PACK_TILE; c += PACK_ROWS) {
        const int j = j0 + c;
        if (i < rows && j < cols) {
            real sum = (real)0;
            for (int s = 0; s < splits; s++) {
                sum += work[s * slice + j * ldw + i];
            }
            const real t = alpha * sum;
            const int at = dst_offset + j * dst_ld + i;
            dst[at] = (beta == (real)0) ? t : t + beta * dst[at];
        }
    }
}

// scale_matrix(rows, cols, dst, dst_offset, dst_ld, beta)
//   C = beta * C, and C = 0 where beta is 0 without reading C: what BLAS does
//   when there is no product to add (K = 0 or alpha = 0).
//   Launch: 16 x 16 work-groups over (roundup(rows), roundup(cols)).
__kernel void scale_matrix(const int rows, const int cols, __global real* dst,
                           const int dst_offset, const int dst_ld,
                           const real beta) {
    GEMMLAB_WAIT_PREVIOUS_GRID();
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < rows && j < cols) {
        const int at = dst_offset + j * dst_ld + i;
        dst[at] = (beta == (real)0) ? (real)0 : beta * dst[at];
    }
}
