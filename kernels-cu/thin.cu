// gemmlab's SGEMM for thin calls, CUDA twin (the `thin` kernel).
//
// What it does: C = alpha*A*B + beta*C in f32 where one side of C is short
// (M, or N with SIDE=1: a few to a few dozen) and the other long, on the
// caller's matrices in place, as `simtdirect` takes them. Such a call is a
// stream of its large operand (B for a thin M: K x N) against a small one
// (A: M x K): a square tile wastes most of itself on the short side, and
// reading the large operand once, at full bandwidth, is what counts.
//
// Structure: a work-group owns BT rows of the short side (the "thin" tile)
// and BL = THREADS*TL of the long side; each work-item owns TL consecutive
// long-side indices and all BT short-side ones (BT x TL accumulators). K is
// walked in KC-deep chunks: the small operand's BT x KC chunk is staged in
// local memory (k-major, so that one 128-bit local read is four short-side
// values every work-item of the warp reads at once, a broadcast), and each
// work-item reads its own TL rows/columns of the large operand straight from
// global memory, KV values of K at a time, 128-bit where the operand is
// K-contiguous (each work-item then reads whole 32-byte sectors) or TL-wide
// along the long side where it is not (the work-items of a warp then read one
// contiguous run). Split-K: SPLITK work-groups share a tile, each over a share
// of its KC-deep chunks; partial sums go to `work`, and the last to finish
// (a counter per tile) adds them in split order and writes C, so the result
// does not depend on which finished last.
//
// XS=1 stages the large operand's KC-deep chunk in local memory as well, read
// from global memory by the whole work-group along whichever dimension it is
// contiguous in (128-bit along K where it is K-contiguous): KC/4 consecutive
// work-items then read one KC-float run of a row or column, where with XS=0 each
// work-item reads its own row or column and a warp's 128-bit loads touch 32 of
// them at once. Each work-item then reads its TL rows from local memory (rows
// KC+4 floats apart, so 128-bit reads of a quarter-warp fall in different banks
// at TL=1).
//
// PIPE=1 (with XS=0) keeps the large operand's loads in flight: each
// work-item loads its next batch of KV values of K while it computes with the
// current one, the small operand's chunk is loaded into registers in full
// before any of it is stored (its loads in flight together, the large
// operand's next batch beside them), and a split's share of K is whole KV
// batches rather than whole KC chunks, so that splits differ by at most one
// batch (at SPLITK 16, 2049 values of K are 8-9 batches of 16 each, where
// chunks of 32 give 4-5).
//
// KL > 1 (with XS=0) puts KL consecutive work-items along K on the same TL
// long-side indices: each takes every KL-th value of K of a batch of KL*KV,
// so that where the large operand is K-contiguous a warp's loads are runs of
// KL*4 bytes of a few rows or columns (a whole 32-byte sector at KL 8) instead
// of 4 or 16 bytes from each of 32, and no alignment is needed. The KL work-items
// read KL different rows of the small operand's chunk at once (its rows padded
// to an odd number of 128-bit words, so they fall in different banks), and at
// the end they add their partial sums through local memory: each then owns
// BT*TL/KL elements of C. A work-group spans THREADS/KL*TL long-side indices.
//
// Parameters: SIDE (0: M is the short side, 1: N is), BT (short-side tile),
//   TL (long-side indices per work-item), THREADS (work-items per work-group),
//   KC (K per local-memory chunk), KV (K per batch of global loads),
//   SPLITK (1 = off), XS (1: the large operand's chunks staged in local
//   memory too, see below), PIPE (1: batches prefetched, see below),
//   KL (work-items along K per long-side index, see above; 1 = off).
// Switches: VEC_LOADS (1: 128-bit and TL-wide global loads where aligned;
//   0: one float at a time), USE_BOUNDS (reqd_work_group_size /
//   __launch_bounds__), USE_RESTRICT (restrict on A and B).
// Launch: SIDE 0: local (KL, THREADS/KL), global (M*KL/BT, N/TL, SPLITK) on M
//   and N rounded up to the tile; SIDE 1: local (THREADS/KL, KL), global (M/TL,
//   N*KL/BT, SPLITK). Work-items are numbered x + y*local_x either way.
// Arguments: (M, N, K, alpha, beta, A, a_offset, a_ld, B, b_offset, b_ld, C,
//   c_offset, c_ld, a_kmajor, b_kmajor, work, counters), column-major, any M,
//   N, K, as `simtdirect`'s: a_kmajor 1 where A is stored transposed (element
//   (m,k) at m*a_ld + k, else k*a_ld + m), b_kmajor 1 where B is not (element
//   (k,n) at n*b_ld + k, else k*b_ld + n). `work` holds SPLITK tiles of BT*BL
//   floats per tile of C and `counters` one int per tile, zero before the
//   launch and zero after it. beta == 0: C is not read. SPLITK > 1 is refused
//   off NVIDIA: PoCL 3.1 ran the first work-item's code after the split-K
//   barriers twice, so that it wrote its elements of C twice (see
//   src/kernels/thin.rs).

#ifndef SIDE
#define SIDE 0
#endif
#ifndef BT
#define BT 16
#endif
#ifndef TL
#define TL 2
#endif
#ifndef THREADS
#define THREADS 128
#endif
#ifndef KC
#define KC 32
#endif
#ifndef KV
#define KV 8
#endif
#ifndef SPLITK
#define SPLITK 1
#endif
#ifndef XS
#define XS 0
#endif
#ifndef PIPE
#define PIPE 0
#endif
#ifndef KL
#define KL 1
#endif
#ifndef VEC_LOADS
#define VEC_LOADS 1
#endif
#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 1
#endif

#if BT % 4 != 0 || KV % 4 != 0
#error "thin: BT and KV must be multiples of 4"
#endif
#if BT % KL != 0 || THREADS % KL != 0 || KC % (KL * KV) != 0 || (KL > 1 && XS)
#error "thin: KL must divide BT and THREADS, KL*KV must divide KC, and KL > 1 needs XS=0"
#endif

// Long-side groups of a work-group (KL work-items each), its long side, and
// the values of K one batch of the work-group's loads covers.
#define NQ (THREADS / KL)
#define BL (NQ * TL)
#define KB (KL * KV)
// The small operand's chunk rows, in floats: with KL > 1 a warp reads KL rows
// at once, so a row is an odd number of 128-bit words (distinct banks).
#if KL > 1 && BT % 8 == 0
#define SP (BT + 4)
#else
#define SP BT
#endif
// Elements of C a work-item owns after KL > 1's sum, and the pitch of the
// partial sums in local memory (one more than THREADS: a warp's reads of one
// element's KL partial sums fall in distinct banks).
#define NE (BT * TL / KL)
#define RP (THREADS + 1)
#if KL > 1 && BT * TL * RP > KC * SP
#define SM (BT * TL * RP)
#else
#define SM (KC * SP)
#endif
// The small operand's chunk: values a work-item loads (PIPE=1).
#define SR ((KC * BT + THREADS - 1) / THREADS)
#if PIPE && XS
#error "thin: PIPE=1 prefetches the large operand into registers: it needs XS=0"
#endif
// The row pitch of the staged large operand (XS=1), in floats.
#define XP (KC + 4)
#if SIDE == 0
#define LOCAL_X KL
#define LOCAL_Y (THREADS / KL)
#else
#define LOCAL_X (THREADS / KL)
#define LOCAL_Y KL
#endif

// The CUDA spellings of what the OpenCL twin writes differently.
#define INLINE_FUNC __device__ __forceinline__
#define LOCAL_PTR
#define GLOBAL_PTR
#define ATOMIC_INC(p) atomicAdd(p, 1)
#define THREAD_X ((int)threadIdx.x)
#define THREAD_Y ((int)threadIdx.y)
#define BLOCK_X ((int)blockIdx.x)
#define BLOCK_Y ((int)blockIdx.y)
#define BLOCK_Z ((int)blockIdx.z)
#define GRID_X ((int)gridDim.x)
#define LOCAL_BARRIER() __syncthreads()
#define GLOBAL_FENCE() __threadfence()

// Element (k, x) of an operand stored K-contiguous (kmajor) or x-contiguous.
INLINE_FUNC float at(const GLOBAL_PTR float* p, const int ld, const int kmajor, const int k,
                     const int x) {
    return kmajor ? p[k + x * ld] : p[x + k * ld];
}

// The large operand's KV values of K from k, KL apart, for this work-item's TL
// long-side indices from l; zero past K or L.
INLINE_FUNC void load_x(const GLOBAL_PTR float* X, const int ld, const int kmajor, const int k,
                        const int l, const int K, const int L, const int inside,
                        const int vec, float xv[TL][KV]) {
#if VEC_LOADS && KL == 1
    if (inside && vec && kmajor) {
        #pragma unroll
        for (int t = 0; t < TL; t++) {
            #pragma unroll
            for (int j = 0; j < KV; j += 4) {
                const float4 v = *(const GLOBAL_PTR float4*)(X + (l + t) * ld + k + j);
                xv[t][j] = v.x;
                xv[t][j + 1] = v.y;
                xv[t][j + 2] = v.z;
                xv[t][j + 3] = v.w;
            }
        }
        return;
    }
#if TL == 4 || TL == 2
    if (inside && vec && !kmajor) {
        #pragma unroll
        for (int j = 0; j < KV; j++) {
#if TL == 4
            const float4 v = *(const GLOBAL_PTR float4*)(X + (k + j) * ld + l);
            xv[0][j] = v.x;
            xv[1][j] = v.y;
            xv[2][j] = v.z;
            xv[3][j] = v.w;
#else
            const float2 v = *(const GLOBAL_PTR float2*)(X + (k + j) * ld + l);
            xv[0][j] = v.x;
            xv[1][j] = v.y;
#endif
        }
        return;
    }
#endif
#endif
    #pragma unroll
    for (int t = 0; t < TL; t++) {
        #pragma unroll
        for (int j = 0; j < KV; j++) {
            const int kj = k + j * KL;
            xv[t][j] = (inside || (kj < K && l + t < L)) ? at(X, ld, kmajor, kj, l + t) : 0.0f;
        }
    }
}

// acc += the staged chunk's KV values of K from kk, KL apart (broadcast 128-bit
// local reads, four short-side values each) times this work-item's batch xv.
INLINE_FUNC void fma_batch(float acc[BT * TL], const LOCAL_PTR float* Ss, const int kk,
                           float xv[TL][KV]) {
    #pragma unroll
    for (int j = 0; j < KV; j++) {
        #pragma unroll
        for (int i = 0; i < BT; i += 4) {
            const float4 s = *(const LOCAL_PTR float4*)(Ss + (kk + j * KL) * SP + i);
            #pragma unroll
            for (int t = 0; t < TL; t++) {
                acc[(i + 0) * TL + t] = fma(s.x, xv[t][j], acc[(i + 0) * TL + t]);
                acc[(i + 1) * TL + t] = fma(s.y, xv[t][j], acc[(i + 1) * TL + t]);
                acc[(i + 2) * TL + t] = fma(s.z, xv[t][j], acc[(i + 2) * TL + t]);
                acc[(i + 3) * TL + t] = fma(s.w, xv[t][j], acc[(i + 3) * TL + t]);
            }
        }
    }
}

extern "C" __global__ GEMMLAB_BOUNDS(LOCAL_X, LOCAL_Y)
void thin_gemm(const int M, const int N, const int K, const float alpha, const float beta,
               const GLOBAL_PTR float* GEMMLAB_RESTRICT A, const int a_offset, const int a_ld,
               const GLOBAL_PTR float* GEMMLAB_RESTRICT B, const int b_offset, const int b_ld,
               GLOBAL_PTR float* C, const int c_offset, const int c_ld,
               const int a_kmajor, const int b_kmajor,
               GLOBAL_PTR float* work, GLOBAL_PTR int* counters) {
    __shared__ float4 Ss4[SM / 4];
    LOCAL_PTR float* Ss = (LOCAL_PTR float*)Ss4;
#if XS
    __shared__ float4 Xs4[BL * XP / 4];
    LOCAL_PTR float* Xs = (LOCAL_PTR float*)Xs4;
#endif
#if SPLITK > 1
    __shared__ int last;
#endif
    GEMMLAB_WAIT_PREVIOUS_GRID();
    // S: the small operand (short side x K), X: the large one (K x long side).
#if SIDE == 0
    const int T = M;
    const int L = N;
    const GLOBAL_PTR float* S = A + a_offset;
    const GLOBAL_PTR float* X = B + b_offset;
    const int s_ld = a_ld, s_kmajor = a_kmajor, x_ld = b_ld, x_kmajor = b_kmajor, x_offset = b_offset;
    const int t0 = BLOCK_X * BT;
    const int l0 = BLOCK_Y * BL;
#else
    const int T = N;
    const int L = M;
    const GLOBAL_PTR float* S = B + b_offset;
    const GLOBAL_PTR float* X = A + a_offset;
    const int s_ld = b_ld, s_kmajor = b_kmajor, x_ld = a_ld, x_kmajor = a_kmajor, x_offset = a_offset;
    const int t0 = BLOCK_Y * BT;
    const int l0 = BLOCK_X * BL;
#endif
    C += c_offset;
    const int tid = THREAD_X + THREAD_Y * LOCAL_X;
    // This work-item's place along K among its group's KL, and its group.
    const int kl = tid % KL;
    const int q = tid / KL;
    const int l = l0 + q * TL;
    // 128-bit loads along K, or TL-wide along the long side, need aligned addresses.
    const int vec = x_kmajor ? (x_offset % 4 == 0 && x_ld % 4 == 0)
                             : (x_offset % TL == 0 && x_ld % TL == 0);
    const int split = BLOCK_Z;
#if PIPE
    // This split's share of K, [ks, ke): whole batches of KB (shares differ by
    // at most one), the last ending at K.
    const int batches = (K + KB - 1) / KB;
    const int ks = ((split * batches) / SPLITK) * KB;
    const int ke = min((((split + 1) * batches) / SPLITK) * KB, K);
#else
    // This split's share of the KC-deep chunks (shares differ by at most one).
    const int chunks = (K + KC - 1) / KC;
    const int c_first = (split * chunks) / SPLITK;
    const int c_end = ((split + 1) * chunks) / SPLITK;
#endif

    float acc[BT * TL];
    #pragma unroll
    for (int i = 0; i < BT * TL; i++) {
        acc[i] = 0.0f;
    }
#if PIPE
    // The next batch of the large operand, zero past this split's share or L.
    float xn[TL][KV];
    if (ks < ke) {
        load_x(X, x_ld, x_kmajor, ks + kl, l, ke, L, (ks + KB <= ke) && (l + TL <= L), vec, xn);
    }
    for (int k0 = ks; k0 < ke; k0 += KC) {
        // The small operand's chunk, Ss[k][t], zero past the share and T: every
        // load issued before the barrier, then stored.
        float sr[SR];
        #pragma unroll
        for (int i = 0; i < SR; i++) {
            const int e = tid + i * THREADS;
            const int t = s_kmajor ? e / KC : e % BT;
            const int k = s_kmajor ? e % KC : e / BT;
            const int gt = t0 + t;
            const int gk = k0 + k;
            sr[i] = (e < KC * BT && gt < T && gk < ke) ? at(S, s_ld, s_kmajor, gk, gt) : 0.0f;
        }
        LOCAL_BARRIER();
        #pragma unroll
        for (int i = 0; i < SR; i++) {
            const int e = tid + i * THREADS;
            if (e < KC * BT) {
                const int t = s_kmajor ? e / KC : e % BT;
                const int k = s_kmajor ? e % KC : e / BT;
                Ss[k * SP + t] = sr[i];
            }
        }
        LOCAL_BARRIER();
        // Not unrolled: unrolled, the compiler hoisted every batch's loads of
        // the chunk ahead of the first product (255 registers at KC 128 on sm_90).
        #pragma unroll 1
        for (int kk = 0; kk < KC && k0 + kk < ke; kk += KB) {
            {
                float xv[TL][KV];
                #pragma unroll
                for (int t = 0; t < TL; t++) {
                    #pragma unroll
                    for (int j = 0; j < KV; j++) {
                        xv[t][j] = xn[t][j];
                    }
                }
                const int kn = k0 + kk + KB;
                if (kn < ke) {
                    load_x(X, x_ld, x_kmajor, kn + kl, l, ke, L, (kn + KB <= ke) && (l + TL <= L),
                           vec, xn);
                }
                fma_batch(acc, Ss, kk + kl, xv);
            }
        }
    }
#else
    for (int ch = c_first; ch < c_end; ch++) {
        const int k0 = ch * KC;
        // The small operand's chunk, Ss[k][t], zero past its edges; read along
        // whichever dimension it is contiguous in.
        LOCAL_BARRIER();
        for (int e = tid; e < KC * BT; e += THREADS) {
            const int t = s_kmajor ? e / KC : e % BT;
            const int k = s_kmajor ? e % KC : e / BT;
            const int gt = t0 + t;
            const int gk = k0 + k;
            Ss[k * SP + t] = (gt < T && gk < K) ? at(S, s_ld, s_kmajor, gk, gt) : 0.0f;
        }
#if XS
        // The large operand's chunk, Xs[q][k] for the work-group's BL long-side
        // indices, zero past its edges: a fixed number of loads per work-item
        // (TL*KC of them, four at a time along K), all issued before the first
        // store to local memory so that they are in flight together.
        if (x_kmajor) {
            float4 xr[TL * KC / 4];
            #pragma unroll
            for (int i = 0; i < TL * KC / 4; i++) {
                const int e = tid + i * THREADS;
                const int gl = l0 + e / (KC / 4);
                const int gk = k0 + (e % (KC / 4)) * 4;
                const GLOBAL_PTR float* p = X + gl * x_ld + gk;
                if (VEC_LOADS && vec && gl < L && gk + 4 <= K) {
                    xr[i] = *(const GLOBAL_PTR float4*)p;
                } else {
                    xr[i].x = (gl < L && gk < K) ? p[0] : 0.0f;
                    xr[i].y = (gl < L && gk + 1 < K) ? p[1] : 0.0f;
                    xr[i].z = (gl < L && gk + 2 < K) ? p[2] : 0.0f;
                    xr[i].w = (gl < L && gk + 3 < K) ? p[3] : 0.0f;
                }
            }
            #pragma unroll
            for (int i = 0; i < TL * KC / 4; i++) {
                const int e = tid + i * THREADS;
                *(LOCAL_PTR float4*)(Xs + (e / (KC / 4)) * XP + (e % (KC / 4)) * 4) = xr[i];
            }
        } else {
            float xr[TL * KC];
            #pragma unroll
            for (int i = 0; i < TL * KC; i++) {
                const int e = tid + i * THREADS;
                const int gl = l0 + e % BL;
                const int gk = k0 + e / BL;
                xr[i] = (gl < L && gk < K) ? X[gl + gk * x_ld] : 0.0f;
            }
            #pragma unroll
            for (int i = 0; i < TL * KC; i++) {
                const int e = tid + i * THREADS;
                Xs[(e % BL) * XP + e / BL] = xr[i];
            }
        }
#endif
        LOCAL_BARRIER();
#if !XS
        const int inside = (k0 + KC <= K) && (l + TL <= L);
#endif
        #pragma unroll
        for (int kk = 0; kk < KC; kk += KB) {
            float xv[TL][KV];
#if XS
            #pragma unroll
            for (int t = 0; t < TL; t++) {
                #pragma unroll
                for (int j = 0; j < KV; j += 4) {
                    const float4 v = *(LOCAL_PTR float4*)(Xs + (tid * TL + t) * XP + kk + j);
                    xv[t][j] = v.x;
                    xv[t][j + 1] = v.y;
                    xv[t][j + 2] = v.z;
                    xv[t][j + 3] = v.w;
                }
            }
#else
            load_x(X, x_ld, x_kmajor, k0 + kk + kl, l, K, L, inside, vec, xv);
#endif
            fma_batch(acc, Ss, kk + kl, xv);
        }
    }
#endif

#if KL > 1
    // The KL work-items of a group add their partial sums: all through local
    // memory (the chunk's space, free now), then each work-item sums the KL
    // shares of its NE elements e = kl + r*KL, in lane order.
    LOCAL_BARRIER();
    #pragma unroll
    for (int e = 0; e < BT * TL; e++) {
        Ss[e * RP + tid] = acc[e];
    }
    LOCAL_BARRIER();
    float red[NE];
    #pragma unroll
    for (int r = 0; r < NE; r++) {
        const int e = kl + r * KL;
        float v = 0.0f;
        #pragma unroll
        for (int j = 0; j < KL; j++) {
            v += Ss[e * RP + q * KL + j];
        }
        red[r] = v;
    }
#define RES red
#else
#define RES acc
#endif
    GEMMLAB_LAUNCH_NEXT_GRID();

#if SPLITK > 1
    // A share of the tile's K: partial sums to `work` (private to the share,
    // coalesced), then count the share in; the last to arrive adds them all in
    // split order (its own read back too) and writes C.
    const int tile = BLOCK_Y * GRID_X + BLOCK_X;
    {
        GLOBAL_PTR float* mine = work + (tile * SPLITK + split) * (BT * BL);
        #pragma unroll
        for (int r = 0; r < NE; r++) {
            mine[(kl + r * KL) * NQ + q] = RES[r];
        }
        GLOBAL_FENCE();
        LOCAL_BARRIER();
        if (tid == 0) {
            last = (ATOMIC_INC(counters + tile) == SPLITK - 1) ? 1 : 0;
        }
        LOCAL_BARRIER();
        GLOBAL_FENCE();
        if (last) {
            #pragma unroll
            for (int r = 0; r < NE; r++) {
                RES[r] = 0.0f;
            }
            // Share by share, each share's NE loads independent of one another.
            for (int s = 0; s < SPLITK; s++) {
                const volatile GLOBAL_PTR float* part = work + (tile * SPLITK + s) * (BT * BL);
                #pragma unroll
                for (int r = 0; r < NE; r++) {
                    RES[r] += part[(kl + r * KL) * NQ + q];
                }
            }
            if (tid == 0) {
                counters[tile] = 0;
            }
        }
    }
#endif

#if SPLITK > 1
    if (!last) {
        return;
    }
#endif
    #pragma unroll
    for (int r = 0; r < NE; r++) {
        const int i = (kl + r * KL) / TL;
        const int t = (kl + r * KL) % TL;
        if (t0 + i < T && l + t < L) {
#if SIDE == 0
            GLOBAL_PTR float* p = C + (l + t) * c_ld + t0 + i;
#else
            GLOBAL_PTR float* p = C + (t0 + i) * c_ld + l + t;
#endif
            const float v = alpha * RES[r];
            *p = beta != 0.0f ? fma(beta, *p, v) : v;
        }
    }
}
