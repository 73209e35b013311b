// gemmlab's tensor-core GEMM (family 5), OpenCL twin.
//
// What it does: C = alpha*A*B + beta*C on tensor cores through mma.sync, in
// the operand forms of CLBlast's indirect kernel (as the SIMT family): A
// column-major M x K (element (m,k) at k*M + m), B stored transposed (element
// (k,n) at k*N + n), C column-major M x N, sizes multiples of the block tile.
//   PRECISION 64: DGEMM on the FP64 tensor cores, mma.sync f64 with FP64
//                 accumulation (MMA selects the shape).
//   PRECISION 32: SGEMM on the TF32 tensor cores (mma.sync m16n8k8 tf32, FP32
//                 accumulation). Each operand element x is split into a TF32
//                 high part h = tf32(x) and a TF32 low part l = tf32(x - h);
//                 C += Al*Bh + Ah*Bl + Ah*Bh ("3xTF32": the three products
//                 that carry FP32's 24 bits; Al*Bl is below FP32's rounding).
//                 TF32_SINGLE=1 keeps Ah*Bh only ("1xTF32"): operands rounded
//                 to TF32's 11 significant bits, a LOWER precision than FP32.
//                 PROMOTE_ACC=1: each k8 step's products are summed by the tensor
//                 core from zero and added to the FP32 accumulators with an IEEE
//                 add; 0: the tensor core accumulates over all of K. Its adds are
//                 not round-to-nearest, and over K=4096 that costs 3xTF32 about 25
//                 times FP32's error (measured on the H200); promoted, it does not.
//                 PROMOTE_STAGE=1 promotes once per local-memory stage instead of
//                 every k8 step: BK/8 times fewer adds, a second set of MT*NT*4
//                 accumulators for the stage's partial sums.
//                 SPLIT=1 splits each element once, where it lands in local
//                 memory (the tile keeps the high parts, one more stage's worth
//                 of local memory the low parts), not in every warp that reads
//                 it: fewer conversions, twice the fragment loads, one more
//                 barrier per stage. The same numbers either way.
//
// Structure:
//   block tile  BM x BN, walked along K in BK-deep tiles held in local memory,
//               copied with 16-byte cp.async through a STAGES-deep pipeline;
//   warp tile   WM x WN: the block's (BM/WM) x (BN/WN) warps tile it; each
//               warp owns (WM/16) x (WN/8) accumulator tiles of 16 x 8;
//   fragments   read from local memory as the mma layout wants them: lane
//               (g, t) = (lane/4, lane%4) holds A rows g and g+8 of a 16-row
//               tile. The kernel stores logical row g at physical row 2g and
//               g+8 at 2g+1, so both come in one 8-byte (f32) or 16-byte (f64)
//               load, and C is written back through the same permutation.
//               Local tile rows are padded (8 floats, 4 doubles) so that the
//               four k-rows a warp reads fall in different banks.
//   order       blocks visit the tiles of C in groups of GROUP tile rows.
//
// Parameters: BM, BN, BK, WM, WN, STAGES (2-6), GROUP, MMA (the f64 shape as
//   its digits: 884 = m8n8k4 (sm_80), 1684, 1688, 16816 = m16n8k4/k8/k16
//   (sm_90); f32 runs m16n8k8 and needs MMA=1688), PROMOTE_STAGE (f32: 0
//   promotes every k8 step, 1 every stage), SPLIT (f32: 0 splits operands in
//   registers as each warp reads them, 1 once per tile in local memory),
//   SPLITK (1 = off; else SPLITK blocks share a tile of C, each over its share
//   of the K/BK tiles, and the last to finish sums their partials in split order),
//   TAILK (1 = off; else each tile of C in the last, partial wave is shared by
//   TAILK blocks along K, summed as split-K's, so that wave spreads over every
//   multiprocessor; the host finds the wave from WAVE blocks per multiprocessor
//   and launches all + tail*(TAILK-1) blocks in one dimension. SPLITK 1 only).
// Switches: USE_BOUNDS, USE_RESTRICT, CP_CA (tile copies through L1), TF32_SINGLE and
//   PROMOTE_ACC (f32 only).
// Local memory: STAGES*BK*(BM+BN+2*pad) elements, declared here (48 KiB on
//   NVIDIA's OpenCL); the CUDA twin takes them at launch, up to the device's
//   opt-in limit (227 KiB on sm_90).
// Launch: local (32*BM/WM, BN/WN), global (M*32/WM, N/WN, SPLITK): threads are
//   numbered get_local_id(0) + get_local_id(1)*32*BM/WM, warp w of the
//   block's column of warps is threads 32w..32w+31. With TAILK: global
//   ((all + tail*(TAILK-1))*32*BM/WM, BN/WN, 1) for `all` tiles of C, `tail` of
//   them in the last partial wave.
// Arguments: (M, N, K, alpha, beta, A, B, C, work, counters); beta == 0: C is
//   not read. `work` holds SPLITK*M*N elements (with TAILK: tail*TAILK tiles of
//   BM*BN) and `counters` one int per tile of C, zero before a launch and left
//   zero by it (both unused without SPLITK or TAILK).
// Needs: NVIDIA tensor cores (mma.sync, cp.async: sm_80 or later; the
//   m16n8 f64 shapes sm_90 or later).

#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef MMA
#define MMA 1688
#endif
#ifndef PROMOTE_STAGE
#define PROMOTE_STAGE 0
#endif
#ifndef SPLIT
#define SPLIT 0
#endif
#ifndef SPLITK
#define SPLITK 1
#endif
#ifndef TAILK
#define TAILK 1
#endif
#ifndef WAVE
#define WAVE 2  // read by the host only: the blocks per multiprocessor of a wave, for TAILK
#endif

#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 1
#endif
#ifndef TF32_SINGLE
#define TF32_SINGLE 0
#endif
#ifndef PROMOTE_ACC
#define PROMOTE_ACC 1
#endif
#ifndef CP_CA
#define CP_CA 0
#endif

#ifndef GEMMLAB_NVIDIA_PTX
#error "tc: needs NVIDIA inline PTX (mma.sync, cp.async): OpenCL C has no tensor-core operations"
#endif

#if PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef double2 real2;
typedef double2 chunk;               // one 16-byte copy
#define PAD 4                        // doubles of padding per local row
#define VW 2                         // doubles per 16-byte copy
#define MMA_K (MMA == 16816 ? 16 : (MMA == 1688 ? 8 : 4))
#else
typedef float real;
typedef float2 real2;
typedef float4 chunk;
#define PAD 8
#define VW 4
#define MMA_K 8
#endif

#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define THREADS (32 * WARPS_M * WARPS_N)
#define MT (WM / 16)                 // 16-row accumulator tiles of a warp
#define NT (WN / 8)                  // 8-column accumulator tiles of a warp
#define AROW (BM + PAD)              // elements per local row of the A tile
#define BROW (BN + PAD)
#define A_LOADS (BK * BM / (VW * THREADS))
#define B_LOADS (BK * BN / (VW * THREADS))
#define SPLIT_LO (PRECISION == 32 && SPLIT)  // a stage of low parts in local memory
#define SHARES_K (SPLITK > 1 || TAILK > 1)  // blocks add their shares of a tile's K
#if TAILK > 1 && SPLITK > 1
#error "tc: TAILK and SPLITK > 1 are two ways of sharing K among blocks; use one (SPLITK=1 with TAILK)"
#endif

// The OpenCL spellings of what the CUDA twin writes differently: inline PTX
// as NVIDIA's OpenCL compiler takes it (local pointers are 32-bit addresses in
// PTX's shared window).
#define INLINE_FUNC inline __attribute__((always_inline))
#define LOCAL_PTR __local
#define THREAD_X ((int)get_local_id(0))
#define THREAD_Y ((int)get_local_id(1))
#define BLOCK_X ((int)get_group_id(0))
#define BLOCK_Y ((int)get_group_id(1))
#define BLOCK_Z ((int)get_group_id(2))
#define GLOBAL_PTR __global
#define LOCAL_INT __local int
#define ATOMIC_INC(p) atomic_inc(p)
// A fence that orders global writes for other blocks (the family runs on NVIDIA only).
#define GLOBAL_FENCE() asm volatile("membar.gl;" ::: "memory")
#define GRID_X ((int)get_num_groups(0))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define GRID_Y ((int)get_num_groups(1))
#define AS_FLOAT(u) as_float(u)
#define AS_UINT(x) as_uint(x)
// The pipeline's tiles, declared (the CUDA twin takes them at launch).
#define LOCAL_TILES(name, count) __local chunk name[count]

// Inline PTX: NVIDIA's OpenCL compiler takes GNU's asm keyword; clang's OpenCL
// mode takes only its reserved spelling.
#if defined(__clang__)
#define asm __asm__
#endif
#define SHARED_ADDR(p) ((uint)(size_t)(p))
// CP_CA=1 copies through L1 (cp.async.ca), else L2 only (.cg): NVIDIA's OpenCL
// runtime serves .cg copies at under half the CUDA driver's rate, .ca at the same.
#if CP_CA
#define CP_ASYNC16(dst, src) \
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(SHARED_ADDR(dst)), "l"(src) : "memory")
#else
#define CP_ASYNC16(dst, src) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(SHARED_ADDR(dst)), "l"(src) : "memory")
#endif
#define CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_WAIT(n) asm volatile("cp.async.wait_group %0;" :: "n"(n) : "memory")

// x rounded to TF32 (10 explicit mantissa bits, round to nearest, ties away).
#define TF32(out, x) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(out) : "f"(x))

// c (4 floats) += a (4 tf32) * b (2 tf32): one m16n8k8 product.
#define MMA_TF32(c, a, b)                                                        \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "          \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"     \
                 : "=f"((c)[0]), "=f"((c)[1]), "=f"((c)[2]), "=f"((c)[3])       \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]),          \
                   "r"((b)[0]), "r"((b)[1]),                                     \
                   "f"((c)[0]), "f"((c)[1]), "f"((c)[2]), "f"((c)[3]))

// c (4 doubles) += a * b in the f64 shape MMA; a holds MMA_K/2 doubles, b MMA_K/4.
#if MMA == 16816
#define MMA_F64(c, a, b)                                                         \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "           \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, " \
                 "{%16,%17,%18,%19};"                                            \
                 : "=d"((c)[0]), "=d"((c)[1]), "=d"((c)[2]), "=d"((c)[3])       \
                 : "d"((a)[0]), "d"((a)[1]), "d"((a)[2]), "d"((a)[3]),          \
                   "d"((a)[4]), "d"((a)[5]), "d"((a)[6]), "d"((a)[7]),          \
                   "d"((b)[0]), "d"((b)[1]), "d"((b)[2]), "d"((b)[3]),          \
                   "d"((c)[0]), "d"((c)[1]), "d"((c)[2]), "d"((c)[3]))
#elif MMA == 1688
#define MMA_F64(c, a, b)                                                         \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "            \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"     \
                 : "=d"((c)[0]), "=d"((c)[1]), "=d"((c)[2]), "=d"((c)[3])       \
                 : "d"((a)[0]), "d"((a)[1]), "d"((a)[2]), "d"((a)[3]),          \
                   "d"((b)[0]), "d"((b)[1]),                                     \
                   "d"((c)[0]), "d"((c)[1]), "d"((c)[2]), "d"((c)[3]))
#elif MMA == 1684
#define MMA_F64(c, a, b)                                                         \
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "            \
                 "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"                 \
                 : "=d"((c)[0]), "=d"((c)[1]), "=d"((c)[2]), "=d"((c)[3])       \
                 : "d"((a)[0]), "d"((a)[1]), "d"((b)[0]),                        \
                   "d"((c)[0]), "d"((c)[1]), "d"((c)[2]), "d"((c)[3]))
#else
// m8n8k4 (sm_80): the 16-row tile as two 8-row products, rows g (a[0], c[0..1])
// and g+8 (a[1], c[2..3]).
#define MMA_F64(c, a, b)                                                         \
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "             \
                 "{%0,%1}, {%4}, {%6}, {%7,%8};\n\t"                             \
                 "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "             \
                 "{%2,%3}, {%5}, {%6}, {%9,%10};"                                \
                 : "=d"((c)[0]), "=d"((c)[1]), "=d"((c)[2]), "=d"((c)[3])       \
                 : "d"((a)[0]), "d"((a)[1]), "d"((b)[0]),                        \
                   "d"((c)[0]), "d"((c)[1]), "d"((c)[2]), "d"((c)[3]))
#endif


// Tile `bid` of the tiles_m x tiles_n tiles of C as (tm, tn) in units of BM x BN,
// in groups of GROUP tile rows (blocks that run together share rows of A and
// columns of B).
INLINE_FUNC void block_tile(const int tiles_m, const int tiles_n, const int bid,
                            int* tm, int* tn) {
    const int per_group = GROUP * tiles_n;
    const int first = (bid / per_group) * GROUP;
    const int rows = min(tiles_m - first, GROUP);
    *tm = first + (bid % per_group) % rows;
    *tn = (bid % per_group) / rows;
}

// Starts the copy of the BK-deep tiles of A and B at row k0 into buffer `stage`.
INLINE_FUNC void copy_tiles(const __global real* GEMMLAB_RESTRICT A, const __global real* GEMMLAB_RESTRICT B,
                            LOCAL_PTR real* As, LOCAL_PTR real* Bs,
                            const int M, const int N, const int m0, const int n0,
                            const int k0, const int stage, const int tid) {
    #pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int f = tid + i * THREADS;
        const int kk = f / (BM / VW);
        const int mm = (f % (BM / VW)) * VW;
        CP_ASYNC16(As + (stage * BK + kk) * AROW + mm, A + (k0 + kk) * M + m0 + mm);
    }
    #pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int f = tid + i * THREADS;
        const int kk = f / (BN / VW);
        const int nn = (f % (BN / VW)) * VW;
        CP_ASYNC16(Bs + (stage * BK + kk) * BROW + nn, B + (k0 + kk) * N + n0 + nn);
    }
}

#if PRECISION == 32
// x as a TF32 high part and the TF32 rounding of what it leaves.
INLINE_FUNC void split_tf32(const float x, uint* hi, uint* lo) {
    uint h;
    TF32(h, x);
    *hi = h;
#if TF32_SINGLE
    *lo = 0u;
#else
    uint l;
    TF32(l, x - AS_FLOAT(h));
    *lo = l;
#endif
}

#if SPLIT
// Splits the 16-byte chunk at x in place: x keeps the high parts, lo gets the low.
INLINE_FUNC void split_chunk(LOCAL_PTR real* x, LOCAL_PTR real* lo) {
    const chunk v = *((LOCAL_PTR const chunk*)x);
    uint h0, h1, h2, h3, l0, l1, l2, l3;
    split_tf32(v.x, &h0, &l0);
    split_tf32(v.y, &h1, &l1);
    split_tf32(v.z, &h2, &l2);
    split_tf32(v.w, &h3, &l3);
    chunk hv, lv;
    hv.x = AS_FLOAT(h0);
    hv.y = AS_FLOAT(h1);
    hv.z = AS_FLOAT(h2);
    hv.w = AS_FLOAT(h3);
    lv.x = AS_FLOAT(l0);
    lv.y = AS_FLOAT(l1);
    lv.z = AS_FLOAT(l2);
    lv.w = AS_FLOAT(l3);
    *((LOCAL_PTR chunk*)x) = hv;
    *((LOCAL_PTR chunk*)lo) = lv;
}

// Splits the chunks of buffer `stage` this work-item copied (copy_tiles' mapping,
// so its own cp.async wait is enough): low parts into Al and Bl, one stage deep.
INLINE_FUNC void split_tiles(LOCAL_PTR real* As, LOCAL_PTR real* Bs,
                             LOCAL_PTR real* Al, LOCAL_PTR real* Bl,
                             const int stage, const int tid) {
    #pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int f = tid + i * THREADS;
        const int kk = f / (BM / VW);
        const int mm = (f % (BM / VW)) * VW;
        split_chunk(As + (stage * BK + kk) * AROW + mm, Al + kk * AROW + mm);
    }
    #pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int f = tid + i * THREADS;
        const int kk = f / (BN / VW);
        const int nn = (f % (BN / VW)) * VW;
        split_chunk(Bs + (stage * BK + kk) * BROW + nn, Bl + kk * BROW + nn);
    }
}
#endif

// One BK-deep stage of the warp's accumulators: BK/8 steps of m16n8k8.
INLINE_FUNC void compute_stage(LOCAL_PTR const real* As, LOCAL_PTR const real* Bs,
                               LOCAL_PTR const real* Al, LOCAL_PTR const real* Bl,
                               real acc[MT][NT][4], const int am, const int bn,
                               const int g, const int t) {
#if PROMOTE_ACC && PROMOTE_STAGE
    real part[MT][NT][4];
    #pragma unroll
    for (int i = 0; i < MT; i++) {
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int e = 0; e < 4; e++) {
                part[i][j][e] = 0.0f;
            }
        }
    }
#endif
    #pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
        uint ah[MT][4], al[MT][4], bh[NT][2], bl[NT][2];
        #pragma unroll
        for (int i = 0; i < MT; i++) {
            #pragma unroll
            for (int u = 0; u < 2; u++) {
                const int at = (kk + t + 4 * u) * AROW + am + i * 16 + 2 * g;
                const real2 v = *((LOCAL_PTR const real2*)(As + at));
#if SPLIT
                const real2 w = *((LOCAL_PTR const real2*)(Al + at));
                ah[i][2 * u] = AS_UINT(v.x);
                ah[i][2 * u + 1] = AS_UINT(v.y);
                al[i][2 * u] = AS_UINT(w.x);
                al[i][2 * u + 1] = AS_UINT(w.y);
#else
                split_tf32(v.x, &ah[i][2 * u], &al[i][2 * u]);
                split_tf32(v.y, &ah[i][2 * u + 1], &al[i][2 * u + 1]);
#endif
            }
        }
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int u = 0; u < 2; u++) {
                const int at = (kk + t + 4 * u) * BROW + bn + j * 8 + g;
#if SPLIT
                bh[j][u] = AS_UINT(Bs[at]);
                bl[j][u] = AS_UINT(Bl[at]);
#else
                split_tf32(Bs[at], &bh[j][u], &bl[j][u]);
#endif
            }
        }
        #pragma unroll
        for (int i = 0; i < MT; i++) {
            #pragma unroll
            for (int j = 0; j < NT; j++) {
#if PROMOTE_ACC && PROMOTE_STAGE
                real* p = part[i][j];
#elif PROMOTE_ACC
                real p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#else
                real* p = acc[i][j];
#endif
#if !TF32_SINGLE
                MMA_TF32(p, al[i], bh[j]);
                MMA_TF32(p, ah[i], bl[j]);
#endif
                MMA_TF32(p, ah[i], bh[j]);
#if PROMOTE_ACC && !PROMOTE_STAGE
                #pragma unroll
                for (int e = 0; e < 4; e++) {
                    acc[i][j][e] += p[e];
                }
#endif
            }
        }
    }
#if PROMOTE_ACC && PROMOTE_STAGE
    #pragma unroll
    for (int i = 0; i < MT; i++) {
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int e = 0; e < 4; e++) {
                acc[i][j][e] += part[i][j][e];
            }
        }
    }
#endif
}
#else
// One BK-deep stage of the warp's accumulators: BK/MMA_K steps of the f64 shape.
INLINE_FUNC void compute_stage(LOCAL_PTR const real* As, LOCAL_PTR const real* Bs,
                               LOCAL_PTR const real* Al, LOCAL_PTR const real* Bl,
                               real acc[MT][NT][4], const int am, const int bn,
                               const int g, const int t) {
    #pragma unroll
    for (int kk = 0; kk < BK; kk += MMA_K) {
        real a[MT][MMA_K / 2], b[NT][MMA_K / 4];
        #pragma unroll
        for (int i = 0; i < MT; i++) {
            #pragma unroll
            for (int u = 0; u < MMA_K / 4; u++) {
                const real2 v = *((LOCAL_PTR const real2*)(As + (kk + t + 4 * u) * AROW + am + i * 16 + 2 * g));
                a[i][2 * u] = v.x;
                a[i][2 * u + 1] = v.y;
            }
        }
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int u = 0; u < MMA_K / 4; u++) {
                b[j][u] = Bs[(kk + t + 4 * u) * BROW + bn + j * 8 + g];
            }
        }
        #pragma unroll
        for (int i = 0; i < MT; i++) {
            #pragma unroll
            for (int j = 0; j < NT; j++) {
                MMA_F64(acc[i][j], a[i], b[j]);
            }
        }
    }
}
#endif

// The K tiles t_first .. t_first+tiles-1 of the tile of C at (m0, n0) into acc,
// through the STAGES-deep pipeline (acc starts at zero).
INLINE_FUNC void accumulate(const GLOBAL_PTR real* GEMMLAB_RESTRICT A,
                            const GLOBAL_PTR real* GEMMLAB_RESTRICT B,
                            LOCAL_PTR real* As, LOCAL_PTR real* Bs,
                            LOCAL_PTR real* Al, LOCAL_PTR real* Bl, real acc[MT][NT][4],
                            const int M, const int N, const int m0, const int n0,
                            const int t_first, const int tiles, const int tid,
                            const int am, const int bn, const int g, const int t) {
    #pragma unroll
    for (int i = 0; i < MT; i++) {
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int e = 0; e < 4; e++) {
                acc[i][j][e] = (real)0;
            }
        }
    }
    #pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles) {
            copy_tiles(A, B, As, Bs, M, N, m0, n0, (t_first + s) * BK, s, tid);
        }
        CP_COMMIT();
    }
    for (int kt = 0; kt < tiles; kt++) {
        CP_WAIT(STAGES - 2);
        LOCAL_BARRIER();
        const int next = kt + STAGES - 1;
        if (next < tiles) {
            copy_tiles(A, B, As, Bs, M, N, m0, n0, (t_first + next) * BK, next % STAGES, tid);
        }
        CP_COMMIT();
        const int stage = kt % STAGES;
#if SPLIT_LO
        split_tiles(As, Bs, Al, Bl, stage, tid);
        LOCAL_BARRIER();
#endif
        compute_stage(As + stage * BK * AROW, Bs + stage * BK * BROW, Al, Bl, acc, am, bn, g, t);
    }
    CP_WAIT(0);
}

// alpha*row (+ beta*C) into the 16 rows of C at (m0, n0) that one row of
// accumulator tiles covers. Lane (g, t) holds rows 2g, 2g+1 (physical) of
// columns 2t, 2t+1 of each 16 x 8 accumulator tile.
INLINE_FUNC void store_row(GLOBAL_PTR real* C, real row[NT][4], const int M, const int m0,
                           const int n0, const real alpha, const real beta, const int g,
                           const int t) {
    #pragma unroll
    for (int j = 0; j < NT; j++) {
        const int m = m0 + 2 * g;
        #pragma unroll
        for (int e = 0; e < 2; e++) {
            const int n = n0 + j * 8 + 2 * t + e;
            GLOBAL_PTR real2* dst = (GLOBAL_PTR real2*)(C + n * M + m);
            real2 v;
            v.x = alpha * row[j][e];
            v.y = alpha * row[j][2 + e];
            if (beta != (real)0) {
                const real2 old = dst[0];
                v.x += beta * old.x;
                v.y += beta * old.y;
            }
            dst[0] = v;
        }
    }
}

// alpha*acc (+ beta*C) into the tile of C at (m0, n0).
INLINE_FUNC void store_tile(GLOBAL_PTR real* C, real acc[MT][NT][4], const int M,
                            const int m0, const int n0, const real alpha, const real beta,
                            const int g, const int t) {
    #pragma unroll
    for (int i = 0; i < MT; i++) {
        store_row(C, acc[i], M, m0 + i * 16, n0, alpha, beta, g, t);
    }
}

#if SHARES_K
// This block's share of a tile's K, added to the other blocks' shares: its
// partial sums go to `work` slot `own` (thread-major, BM*BN elements a slot) and
// it counts itself in on `counter`. Returns 1 in the block that arrives last, of
// `parts`, which then writes the tile with `store_shares` and resets the counter;
// the others return 0.
INLINE_FUNC int add_shares(GLOBAL_PTR real* work, GLOBAL_PTR int* counter, real acc[MT][NT][4],
                           const int own, const int parts, LOCAL_PTR int* last, const int tid) {
    GLOBAL_PTR real* mine = work + own * (BM * BN);
    #pragma unroll
    for (int i = 0; i < MT; i++) {
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int e = 0; e < 4; e++) {
                mine[((i * NT + j) * 4 + e) * THREADS + tid] = acc[i][j][e];
            }
        }
    }
    GLOBAL_FENCE();
    LOCAL_BARRIER();
    if (tid == 0) {
        *last = (ATOMIC_INC(counter) == parts - 1) ? 1 : 0;
    }
    LOCAL_BARRIER();
    if (!*last) {
        return 0;
    }
    GLOBAL_FENCE();
    if (tid == 0) {
        *counter = 0;
    }
    return 1;
}

// The sum of a tile's `parts` shares, from slots first, first+1, ... in K order
// (the last block's own read back too, so the result does not depend on which
// block is last), into the tile of C at (m0, n0): one row of accumulator tiles at
// a time, from the slots, not from the accumulators, and one share at a time
// (unroll 1). Summed into the accumulators, or unrolled, several shares' loads
// are in flight beside them, and the compiler sizes the whole kernel for that
// peak: 254 registers instead of 221 for the f64 128x64 tile, and a main loop
// 3-4% slower on the H200.
INLINE_FUNC void store_shares(GLOBAL_PTR real* C, const GLOBAL_PTR real* work, const int first,
                              const int parts, const int M, const int m0, const int n0,
                              const real alpha, const real beta, const int g, const int t,
                              const int tid) {
    #pragma unroll
    for (int i = 0; i < MT; i++) {
        real row[NT][4];
        #pragma unroll
        for (int j = 0; j < NT; j++) {
            #pragma unroll
            for (int e = 0; e < 4; e++) {
                row[j][e] = (real)0;
            }
        }
        #pragma unroll 1
        for (int s = 0; s < parts; s++) {
            const volatile GLOBAL_PTR real* part = work + (first + s) * (BM * BN);
            #pragma unroll
            for (int j = 0; j < NT; j++) {
                #pragma unroll
                for (int e = 0; e < 4; e++) {
                    row[j][e] += part[((i * NT + j) * 4 + e) * THREADS + tid];
                }
            }
        }
        store_row(C, row, M, m0 + i * 16, n0, alpha, beta, g, t);
    }
}
#endif

__kernel GEMMLAB_BOUNDS(32 * WARPS_M, WARPS_N)
void tc_gemm(const int M, const int N, const int K, const real alpha, const real beta,
             const __global real* GEMMLAB_RESTRICT A, const __global real* GEMMLAB_RESTRICT B,
             __global real* C, __global real* work, __global int* counters) {
    // 16-byte chunks: cp.async's 16-byte copies need 16-byte aligned targets (AROW
    // is a multiple of 32 bytes, so the B tiles start aligned too).
    LOCAL_TILES(tiles16, (STAGES + SPLIT_LO) * BK * (AROW + BROW) / VW);
    LOCAL_PTR real* As = (LOCAL_PTR real*)tiles16;
    LOCAL_PTR real* Bs = As + STAGES * BK * AROW;
    LOCAL_PTR real* Al = Bs + STAGES * BK * BROW;  // SPLIT: the low parts of one stage
    LOCAL_PTR real* Bl = Al + BK * AROW;
#if SHARES_K
    LOCAL_INT last;
#endif
    const int tid = THREAD_X + THREAD_Y * (32 * WARPS_M);
    const int lane = tid % 32;
    const int g = lane / 4;
    const int t = lane % 4;
    const int am = (THREAD_X / 32) * WM;
    const int bn = THREAD_Y * WN;
    const int k_tiles = K / BK;
    real acc[MT][NT][4];
    int tm, tn;

#if TAILK > 1
    // One block per tile for the full waves, hardware-scheduled as without TAILK;
    // each tile of the last, partial wave in TAILK blocks along K (the host sizes
    // the grid: all + tail*(TAILK-1) blocks), so the wave's work spreads over
    // every multiprocessor instead of leaving a part of them idle.
    const int tiles_m = M / BM;
    const int tiles_n = N / BN;
    const int all = tiles_m * tiles_n;
    const int whole = all - (GRID_X - all) / (TAILK - 1);
    if (BLOCK_X < whole) {
        // Its own call of the main loop, whose K range the compiler knows: one
        // call for both paths ran 5% slower on the H200 (f64, 128x64 tiles),
        // its addresses recomputed in every iteration instead of kept.
        block_tile(tiles_m, tiles_n, BLOCK_X, &tm, &tn);
        accumulate(A, B, As, Bs, Al, Bl, acc, M, N, tm * BM, tn * BN, 0, k_tiles, tid, am, bn, g, t);
        store_tile(C, acc, M, tm * BM + am, tn * BN + bn, alpha, beta, g, t);
        return;
    }
    const int tile = whole + (BLOCK_X - whole) / TAILK;
    const int piece = (BLOCK_X - whole) % TAILK;
    const int t_first = (piece * k_tiles) / TAILK;
    const int tiles = ((piece + 1) * k_tiles) / TAILK - t_first;
    block_tile(tiles_m, tiles_n, tile, &tm, &tn);
    accumulate(A, B, As, Bs, Al, Bl, acc, M, N, tm * BM, tn * BN, t_first, tiles, tid, am, bn, g, t);
    const int first = (tile - whole) * TAILK;
    if (add_shares(work, counters + tile, acc, first + piece, TAILK, &last, tid)) {
        store_shares(C, work, first, TAILK, M, tm * BM + am, tn * BN + bn, alpha, beta, g, t, tid);
    }
#else
    block_tile(GRID_X, GRID_Y, BLOCK_Y * GRID_X + BLOCK_X, &tm, &tn);
    // Split-K: block z of SPLITK takes its share of the K/BK tiles (give or take one).
    const int t_first = (BLOCK_Z * k_tiles) / SPLITK;
    const int tiles = ((BLOCK_Z + 1) * k_tiles) / SPLITK - t_first;
    accumulate(A, B, As, Bs, Al, Bl, acc, M, N, tm * BM, tn * BN, t_first, tiles, tid, am, bn, g, t);
#if SPLITK > 1
    {
        const int tile = tn * GRID_X + tm;
        if (add_shares(work, counters + tile, acc, tile * SPLITK + BLOCK_Z, SPLITK, &last, tid)) {
            store_shares(C, work, tile * SPLITK, SPLITK, M, tm * BM + am, tn * BN + bn, alpha, beta, g,
                         t, tid);
        }
        return;
    }
#endif
    store_tile(C, acc, M, tm * BM + am, tn * BN + bn, alpha, beta, g, t);
#endif
}
