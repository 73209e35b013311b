// gemmlab routine kernels, CUDA twin of kernels-cl/routine.cl: the pre- and
// post-processing of the BLAS-style GEMM routine, in `real` (PRECISION 32:
// float, 64: double). See the OpenCL file for what each kernel does and how
// it is launched; twin differences: none beyond syntax (get_local_id and
// get_group_id come from the prelude; reqd_work_group_size is __launch_bounds__).

#ifndef PRECISION
#define PRECISION 32
#endif
#if PRECISION == 64
typedef double real;
#else
typedef float real;
#endif

#define PACK_TILE 32
#define PACK_ROWS 8

// The work-group of pack_matrix at tile (i0, j0) of dst; `tile` is its local
// tile, PACK_TILE rows of PACK_TILE + 1.
__device__ __forceinline__ void pack_tile(const int rows, const int cols,
                      const real* src, const int src_offset,
                      const int src_ld, const int src_trans,
                      const int dst_rows, const int dst_cols,
                      real* dst, const int i0, const int j0, real* tile) {
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
    __syncthreads();
    for (int c = ty; c < PACK_TILE; c += PACK_ROWS) {
        const int i = i0 + tx;
        const int j = j0 + c;
        if (i < dst_rows && j < dst_cols) {
            dst[j * dst_rows + i] = tile[tx * (PACK_TILE + 1) + c];
        }
    }
}

extern "C" __global__ __launch_bounds__(PACK_TILE * PACK_ROWS)
void pack_matrix(const int rows, const int cols,
                 const real* src, const int src_offset,
                 const int src_ld, const int src_trans,
                 const int dst_rows, const int dst_cols,
                 real* dst) {
    __shared__ real tile[PACK_TILE * (PACK_TILE + 1)];
    GEMMLAB_WAIT_PREVIOUS_GRID();
    pack_tile(rows, cols, src, src_offset, src_ld, src_trans, dst_rows, dst_cols, dst,
              get_group_id(0) * PACK_TILE, get_group_id(1) * PACK_TILE, tile);
}

// Two packs in one launch (an indirect kernel's A and B): work-groups in a row,
// the first's tiles of dst0 (column by column of tiles), then dst1's.
extern "C" __global__ __launch_bounds__(PACK_TILE * PACK_ROWS)
void pack_pair(const int rows0, const int cols0,
               const real* src0, const int src_offset0,
               const int src_ld0, const int src_trans0,
               const int dst_rows0, const int dst_cols0, real* dst0,
               const int rows1, const int cols1,
               const real* src1, const int src_offset1,
               const int src_ld1, const int src_trans1,
               const int dst_rows1, const int dst_cols1, real* dst1) {
    __shared__ real tile[PACK_TILE * (PACK_TILE + 1)];
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

extern "C" __global__ __launch_bounds__(PACK_TILE * PACK_ROWS)
void unpack_matrix(const int rows, const int cols,
                   const real* src, const int src_ld,
                   real* dst, const int dst_offset,
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

extern "C" __global__ __launch_bounds__(PACK_TILE * PACK_ROWS)
void reduce_splits(const int rows, const int cols, const int splits,
                   const real* work, const int ldw, const int slice,
                   real* dst, const int dst_offset, const int dst_ld,
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

extern "C" __global__ void scale_matrix(const int rows, const int cols, real* dst,
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
