// A GEMM's panel loads alone, CUDA twin (spec: tile-stream.toml).
//
// tiles: block (x, y) of PANEL x 2 threads reads panel x of A and panel y of B,
//   each n rows of PANEL 8-byte elements (row k at k*n): thread (lx, ly) reads
//   element lx of rows ly, ly+2, ..., UNROLL rows in flight. For each pair
//   of 32-wide sub-panels (i of its A panel, j of its B panel) it writes the
//   sum of both down all rows to sums[(x*SUB + i) + (y*SUB + j)*(n/32)],
//   SUB = PANEL/32:
//   the same array whatever PANEL. Sums wrap (unsigned): any order, same result.
// tiles_ref: the reference, one thread per sub-panel pair, reading in order.
// Twin differences: none beyond syntax.

#ifndef PANEL
#define PANEL 64
#endif
#ifndef UNROLL
#define UNROLL 8
#endif
// 32-wide sub-panels per panel.
#define SUB (PANEL / 32)

extern "C" __global__ void tiles(const int n, const uint2* a, const uint2* b,
                                 unsigned int* sums) {
    __shared__ unsigned int part_a[2 * PANEL], part_b[2 * PANEL];
    const int lx = (int)threadIdx.x, ly = (int)threadIdx.y;
    const uint2* pa = a + (int)blockIdx.x * PANEL + lx;
    const uint2* pb = b + (int)blockIdx.y * PANEL + lx;
    unsigned int sa = 0, sb = 0;
    for (int k = ly; k < n; k += 2 * UNROLL) {
        #pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const size_t row = (size_t)(k + 2 * u) * n;
            const uint2 x = pa[row];
            const uint2 y = pb[row];
            sa += x.x + x.y;
            sb += y.x + y.y;
        }
    }
    part_a[lx + ly * PANEL] = sa;
    part_b[lx + ly * PANEL] = sb;
    __syncthreads();
    const int tid = lx + ly * PANEL;
    if (tid < SUB * SUB) {
        const int i = tid % SUB, j = tid / SUB;
        unsigned int t = 0;
        for (int e = 0; e < 32; e++) {
            t += part_a[i * 32 + e] + part_a[PANEL + i * 32 + e];
            t += part_b[j * 32 + e] + part_b[PANEL + j * 32 + e];
        }
        sums[((int)blockIdx.x * SUB + i) + ((int)blockIdx.y * SUB + j) * (n / 32)] = t;
    }
}

extern "C" __global__ void tiles_ref(const int n, const uint2* a, const uint2* b,
                                     unsigned int* sums) {
    const int subs = n / 32;
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= subs * subs) {
        return;
    }
    const int x = i % subs, y = i / subs;
    unsigned int t = 0;
    for (int k = 0; k < n; k++) {
        for (int e = 0; e < 32; e++) {
            const uint2 u = a[(size_t)k * n + x * 32 + e];
            const uint2 v = b[(size_t)k * n + y * 32 + e];
            t += u.x + u.y + v.x + v.y;
        }
    }
    sums[i] = t;
}
