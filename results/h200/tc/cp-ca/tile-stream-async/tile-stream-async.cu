// A GEMM's panel loads alone, through a cp.async pipeline as the tc family
// copies its tiles; CUDA twin (spec: tile-stream-async.toml). NVIDIA GPUs
// of sm_80 or later only (inline PTX).
//
// tiles: block (x, y) of PANEL x 2 threads streams panel x of A and panel y of
//   B (n rows of PANEL 8-byte elements, row k at k*n) through a STAGES-deep
//   pipeline of BK-row stages in local memory, each stage copied with 16-byte
//   cp.async.cg (L2 only); it sums each stage from local memory once the stage
//   has landed. For each pair of 32-wide sub-panels (i of A, j of B) it writes
//   the sum of both down all rows to sums[(x*SUB + i) + (y*SUB + j)*(n/32)],
//   SUB = PANEL/32: the same array as tile-stream's, whatever the parameters.
// tiles_ref: the reference, one thread per sub-panel pair, reading in order.
// Twin differences: none beyond syntax.

#ifndef PANEL
#define PANEL 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CACHE
#define CACHE 0
#endif
#define SUB (PANEL / 32)
#define THREADS (2 * PANEL)
// 16-byte chunks (two elements) per operand and stage, and per thread.
#define CHUNKS (BK * PANEL / 2)
#define LOADS (CHUNKS / THREADS)

#define SHARED_ADDR(p) ((unsigned)__cvta_generic_to_shared(p))
// CACHE 0: cp.async.cg (L2 only, as the tc family copies), 1: cp.async.ca (L1 too).
#if CACHE
#define CP_ASYNC16(dst, src) \
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(SHARED_ADDR(dst)), "l"(src) : "memory")
#else
#define CP_ASYNC16(dst, src) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(SHARED_ADDR(dst)), "l"(src) : "memory")
#endif
#define CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_WAIT(n) asm volatile("cp.async.wait_group %0;" :: "n"(n) : "memory")

extern "C" __global__ void tiles(const int n, const uint2* a, const uint2* b,
                                 unsigned int* sums) {
    __shared__ uint4 sa[STAGES * CHUNKS], sb[STAGES * CHUNKS];
    __shared__ unsigned int part_a[THREADS], part_b[THREADS];
    const int tid = (int)threadIdx.x + (int)threadIdx.y * PANEL;
    const uint2* pa = a + (int)blockIdx.x * PANEL;
    const uint2* pb = b + (int)blockIdx.y * PANEL;
    const int stages = n / BK;
    // Chunk f of a stage is row f / (PANEL/2), elements 2 (f % (PANEL/2)) and
    // one more; this thread's chunks are all in one column pair (THREADS is a
    // multiple of PANEL/2), so all in sub-panel ((tid % (PANEL/2)) * 2) / 32.
    #pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < stages) {
            #pragma unroll
            for (int i = 0; i < LOADS; i++) {
                const int f = tid + i * THREADS;
                const size_t at = (size_t)(s * BK + f / (PANEL / 2)) * n + 2 * (f % (PANEL / 2));
                CP_ASYNC16(sa + s * CHUNKS + f, pa + at);
                CP_ASYNC16(sb + s * CHUNKS + f, pb + at);
            }
        }
        CP_COMMIT();
    }
    unsigned int suma = 0, sumb = 0;
    for (int kt = 0; kt < stages; kt++) {
        CP_WAIT(STAGES - 2);
        __syncthreads();
        const int next = kt + STAGES - 1;
        if (next < stages) {
            const int s = next % STAGES;
            #pragma unroll
            for (int i = 0; i < LOADS; i++) {
                const int f = tid + i * THREADS;
                const size_t at = (size_t)(next * BK + f / (PANEL / 2)) * n + 2 * (f % (PANEL / 2));
                CP_ASYNC16(sa + s * CHUNKS + f, pa + at);
                CP_ASYNC16(sb + s * CHUNKS + f, pb + at);
            }
        }
        CP_COMMIT();
        const int s = kt % STAGES;
        #pragma unroll
        for (int i = 0; i < LOADS; i++) {
            const uint4 u = sa[s * CHUNKS + tid + i * THREADS];
            const uint4 v = sb[s * CHUNKS + tid + i * THREADS];
            suma += u.x + u.y + u.z + u.w;
            sumb += v.x + v.y + v.z + v.w;
        }
    }
    CP_WAIT(0);
    part_a[tid] = suma;
    part_b[tid] = sumb;
    __syncthreads();
    if (tid < SUB * SUB) {
        const int i = tid % SUB, j = tid / SUB;
        unsigned int t = 0;
        for (int w = 0; w < THREADS; w++) {
            const int sub = ((w % (PANEL / 2)) * 2) / 32;
            t += (sub == i ? part_a[w] : 0u) + (sub == j ? part_b[w] : 0u);
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
