// gemmlab's SIMT SGEMM for Hopper-class GPUs, OpenCL twin.
//
// What it does: C = alpha*A*B + beta*C in f32 (no tensor cores) on sizes that
// are multiples of the block tile, as CLBlast's indirect kernel does: A
// column-major M x K (element (m,k) at k*M + m), B stored transposed (element
// (k,n) at k*N + n), C column-major M x N (element (m,n) at n*M + m). Both
// operands are contiguous along the dimension a tile row spans, so every copy
// to local memory is a straight 16-byte copy (no transposition), which is what
// lets cp.async move them.
//
// Structure (the design of CUTLASS's SIMT GEMMs and of the published
// hand-written CUDA SGEMMs since Ampere):
//   block tile  BM x BN, walked along K in BK-deep tiles held in local memory;
//   warp tile   WM x WN: the block's warps tile the block tile;
//   thread tile TM x TN accumulators per thread, as TM/4 x TN/4 chunks of
//               4 x 1 (m) / 1 x 4 (n): a warp's 32 lanes are LM x LN =
//               (WM/TM) x (WN/TN), chunk c of a lane starts at c*LM*4 +
//               lane_m*4, so the lanes of a warp read one contiguous run of a
//               local tile row per chunk (no bank conflicts by construction).
//   pipeline    STAGES local-memory buffers: tile t+STAGES-1 is in flight
//               while tile t is computed (STAGES 1: load, wait, compute).
//   split-K     SPLITK blocks share a tile of C, each over a share of its
//               K/BK tiles along K (K/BK/SPLITK, give or take one); each
//               writes its partial sums to `work`, the last to finish (a
//               counter per tile) adds them in split order and writes C, so
//               the result does not depend on which block finished last.
//   stream-K    STREAMK > 0: a persistent grid of STREAMK blocks per
//               multiprocessor shares every (tile of C, BK-deep slice of K)
//               iteration evenly: each block takes one contiguous run of them,
//               tile after tile, so no multiprocessor idles in a last partial
//               wave. A tile whose K is shared by several blocks is summed by
//               the last of them to finish, in K order, as split-K's is.
//   slice-K     SLICEK > 1: SLICEK groups of warps share the block tile, each
//               computing the BK/SLICEK-deep slice of every BK-deep tile it is
//               given into accumulators of its own (all of them copy the tiles);
//               at the end the groups add theirs through local memory in slice
//               order, and the first group carries on (split-K, stream-K,
//               REDUCE and the store as without). More warps on a tile of C
//               without more tiles or shares of K: for calls with few tiles.
//
// Parameters: BM, BN, BK (block tile), WM, WN (warp tile), TM, TN (thread
//   tile), STAGES (1, 2, 3 or 4), SPLITK (1 = off), STREAMK (0 = off; with
//   SPLITK 1 only), SLICEK (1 = off; 2 or 4, see slice-K above), REDUCE (with
//   SPLITK > 1: 0, the last block of a tile adds the splits' partial sums; 1,
//   each split writes its sums, unscaled, to its own slice of `work` in C's
//   layout and a second kernel, the routine's reduce_splits, adds them in split
//   order: no block waits for another, and the sum is spread over the whole GPU
//   instead of one block), GROUP (tile rows per group of the rasterised block
//   order), KMAJOR_A and KMAJOR_B (1: that
//   operand is read K-contiguous instead: A as A^T, element (m,k) at m*K + k,
//   B as column-major K x N, element (k,n) at n*K + k. These are the forms a
//   column-major TN (A) or NN (B) call already has, so the routine passes
//   them without a transposing pack; 128-bit loads run along K and each
//   chunk is stored down a column of the local tile, through registers even
//   with ASYNC_COPY, which then copies only the other operand, unless
//   ASYNC_ALONG_K; KTILE_B keeps B read along K as it is, untransposed).
// Switches: every feature can be turned off, so that each can be measured:
//   VEC_LOADS    1: 128-bit (float4) global loads, local loads and C stores;
//                0: the same accesses one float at a time
//   ASYNC_COPY   1: global-to-local copies with cp.async (inline PTX; NVIDIA
//                only in OpenCL) of each operand read along M or N (one
//                read along K goes through registers unless ASYNC_ALONG_K); 0: through
//                registers, stored after the compute of the current tile
//   CP_CA        1: cp.async's 16-byte copies through L1 (.ca); 0: L2 only (.cg)
//   SMEM_PAD     1: local tile rows padded by 4 floats
//   ASYNC_ALONG_K 1 (with ASYNC_COPY): an operand read along K is copied by
//                cp.async too, 4 bytes at a time into its transposed place in
//                the local tile (a warp's lanes take 8 K of 4 columns: four
//                32-byte runs read, 32 banks written with SMEM_PAD); 0: it
//                goes through registers
//   KTILE_B      1 (packed kernel, with KMAJOR_B and VEC_LOADS): B read along K
//                keeps K contiguous in its local tile (one row of BK floats,
//                padded by SMEM_PAD, per column): copied 16 bytes at a time, by
//                cp.async with ASYNC_COPY, and read by the compute 4 K of a
//                column at a time, so nothing is transposed and B needs no
//                pack; 0: B's tile is stored N-contiguous (transposed on the way).
//                In place (with VEC_LOADS, not ALONG_MN) the tile is kept so
//                whatever the call's B: stored along K it is copied as it is (by
//                cp.async where aligned), stored along N it goes through
//                registers and is transposed on the way
//   KMAJOR_RUNS  1: an operand read along K gives each column's (row's) K run
//                to consecutive work-items, so a warp's loads cover whole
//                runs (coalesced) and its transposed stores share banks;
//                0: consecutive work-items take consecutive columns (rows),
//                one chunk of each (stores conflict-free, loads 16 bytes
//                from each of 32 lines)
//   RASTER       1: blocks visit the tiles of C in groups of GROUP tile rows
//                (swizzled block order, for L2 reuse); 0: row by row
//   USE_BOUNDS   reqd_work_group_size / __launch_bounds__ on the kernel
//   USE_RESTRICT restrict on A and B
// Launch: local (BM/TM, BN/TN*SLICEK), global (M/TM, N/TN*SLICEK, SPLITK); with
//   STREAMK, global (G*BM/TM, BN/TN*SLICEK, 1) for G = STREAMK blocks per
//   multiprocessor, at most the number of iterations (tiles times K/BK). Threads are numbered
//   get_local_id(0) + get_local_id(1)*BM/TM and grouped into warps; with
//   SLICEK, each run of (BM/TM)*(BN/TN) of them is one slice.
// Arguments: (M, N, K, alpha, beta, A, B, C, work, counters): `work` holds
//   SPLITK*M*N floats (with STREAMK: 2*G tiles of BM*BN floats, a block's
//   first and last share) and `counters` (M/BM)*(N/BN) ints that are zero
//   before the launch and zero after it (unused without SPLITK or STREAMK).
// beta == 0: C is not read.
//
// SIMT_DIRECT=1 (the `simtdirect` kernel: this source after `#define SIMT_DIRECT 1`)
//   reads the caller's matrices in place, as CLBlast's direct kernel does, with
//   the same tiles, pipeline and split-K: arguments (M, N, K, alpha, beta,
//   A, a_offset, a_ld, B, b_offset, b_ld, C, c_offset, c_ld, a_kmajor,
//   b_kmajor, work, counters), column-major, any M, N, K. a_kmajor 1: A is
//   stored transposed (element (m,k) at m*a_ld + k), else at k*a_ld + m;
//   b_kmajor 1: B is stored as it is (element (k,n) at n*b_ld + k), else
//   transposed (at k*b_ld + n). The copy goes through registers; a chunk past
//   an edge of A or B is read element by element and zero-filled, one whose
//   address is not 16-byte aligned likewise (128-bit accesses need offset and
//   ld multiples of 4), and C is written element by element at its edges.
//   ASYNC_COPY=1 copies an operand read along M (N) whose offset and ld are
//   multiples of 4 with cp.async, the part of a chunk past an edge zero-filled by
//   the copy's source size; the other operand still goes through registers.
//   ALONG_MN=1: the caller promises a_kmajor = b_kmajor = 0 and offsets and lds
//   that are multiples of 4 (the routine transposes or copies an operand first
//   where the call's is not so), so that the kernel is compiled for that form
//   alone (with ASYNC_COPY, no copy through registers at all).
//   FIXED_FORM=1: the same promise for the form KMAJOR_A and KMAJOR_B name (at
//   least one of them 1: both 0 is ALONG_MN's): a_kmajor = KMAJOR_A, b_kmajor =
//   KMAJOR_B, offsets and lds multiples of 4, so the kernel holds no code for the
//   other forms (a call stored so, aligned, needs no launch before it).
//   KMAJOR_A and KMAJOR_B apply with FIXED_FORM only; `work` holds SPLITK
//   tiles of BM*BN floats per tile of C (tiles counted as ceil(M/BM) by
//   ceil(N/BN)). SPLITK > 1 is refused off NVIDIA (see src/kernels/simt.rs).

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef SPLITK
#define SPLITK 1
#endif
#ifndef STREAMK
#define STREAMK 0
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef KMAJOR_A
#define KMAJOR_A 0
#endif
#ifndef KMAJOR_B
#define KMAJOR_B 0
#endif

#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 1
#endif
#ifndef VEC_LOADS
#define VEC_LOADS 1
#endif
#ifndef ASYNC_COPY
#define ASYNC_COPY 0
#endif
#ifndef CP_CA
#define CP_CA 0
#endif
#if CP_CA && !(ASYNC_COPY && VEC_LOADS)
#error "simt: CP_CA=1 changes cp.async's 16-byte copies only: it needs ASYNC_COPY=1 and VEC_LOADS=1"
#endif
#ifndef SMEM_PAD
#define SMEM_PAD 0
#endif
#ifndef KMAJOR_RUNS
#define KMAJOR_RUNS 0
#endif
#if KMAJOR_RUNS && !KMAJOR_A && !KMAJOR_B && !SIMT_DIRECT
#error "simt: KMAJOR_RUNS=1 changes how an operand read along K is loaded: it needs KMAJOR_A=1 or KMAJOR_B=1"
#endif
#ifndef RASTER
#define RASTER 1
#endif
#ifndef ALONG_MN
#define ALONG_MN 0
#endif
#ifndef ASYNC_ALONG_K
#define ASYNC_ALONG_K 0
#endif
#if ASYNC_ALONG_K && !ASYNC_COPY
#error "simt: ASYNC_ALONG_K=1 changes cp.async's copies: it needs ASYNC_COPY=1"
#endif
#if ASYNC_ALONG_K && !SIMT_DIRECT && !KMAJOR_A && !KMAJOR_B
#error "simt: ASYNC_ALONG_K=1 changes how an operand read along K is copied: it needs KMAJOR_A=1 or KMAJOR_B=1"
#endif
#if ASYNC_ALONG_K && SIMT_DIRECT && ALONG_MN
#error "simt: ASYNC_ALONG_K=1 copies operands read along K, and ALONG_MN=1 promises there are none: use one"
#endif
#ifndef FIXED_FORM
#define FIXED_FORM 0
#endif
#if FIXED_FORM && (!SIMT_DIRECT || ALONG_MN || !(KMAJOR_A || KMAJOR_B))
#error "simt: FIXED_FORM=1 compiles the in-place kernel for the form KMAJOR_A and KMAJOR_B name: it needs one of them 1 and ALONG_MN=0 (both 0 is ALONG_MN=1)"
#endif
#if SIMT_DIRECT && !FIXED_FORM && (KMAJOR_A || KMAJOR_B)
#error "simt: in place, KMAJOR_A and KMAJOR_B name the form FIXED_FORM=1 compiles for: without it they must be 0 (the form is read at run time)"
#endif
#ifndef KTILE_B
#define KTILE_B 0
#endif
#if KTILE_B && !SIMT_DIRECT && (!KMAJOR_B || !VEC_LOADS)
#error "simt: KTILE_B=1 keeps B read along K K-contiguous in its local tile: it needs KMAJOR_B=1 and VEC_LOADS=1"
#endif
#if KTILE_B && SIMT_DIRECT && (!VEC_LOADS || ALONG_MN)
#error "simt: KTILE_B=1 in place keeps B K-contiguous in its local tile: it needs VEC_LOADS=1, and ALONG_MN=0 (which transposes B the other way first)"
#endif
#if KTILE_B && ASYNC_ALONG_K
#error "simt: KTILE_B=1 and ASYNC_ALONG_K=1 are two ways of copying B read along K: use one"
#endif
#if KTILE_B && KMAJOR_RUNS && !KMAJOR_A && !SIMT_DIRECT
#error "simt: KMAJOR_RUNS=1 changes how an operand read along K goes through registers: with KTILE_B=1 and KMAJOR_A=0 there is none"
#endif

#ifndef SLICEK
#define SLICEK 1
#endif
#if BK % (SLICEK * (KTILE_B ? 4 : 1)) != 0
#error "simt: SLICEK shares each BK-deep tile among SLICEK groups of warps: BK must be a multiple of SLICEK (of 4*SLICEK with KTILE_B, whose compute reads 4 K at a time)"
#endif
#if SLICEK > 1 && 4 * BM * BN > 48 * 1024
#error "simt: SLICEK > 1 adds the slices' sums through local memory: BM*BN floats must fit in 48 KiB"
#endif
#define TILE_THREADS ((BM / TM) * (BN / TN))  // work-items holding one set of the tile's sums
#define THREADS (TILE_THREADS * SLICEK)        // work-items of a work-group (all copy the tiles)
#define KS (BK / SLICEK)                       // K of a tile each slice computes
#define LM (WM / TM)                 // lanes of a warp along M
#define LN (WN / TN)                 // lanes of a warp along N
#define PAD (SMEM_PAD * 4)
#define AROW (BM + PAD)              // floats per local row of the A tile
#define BROW (BN + PAD)
#define KTROW (BK + PAD)             // floats per local row (a column of B) with KTILE_B
#define A_TILE (BK * AROW)           // floats of one stage's tile of A
#define B_TILE (KTILE_B ? BN * KTROW : BK * BROW)
#define VW (VEC_LOADS ? 4 : 1)       // floats per global/local access
#define A_CHUNKS (BK * BM / VW)        // VW-wide chunks of a tile
#define B_CHUNKS (BK * BN / VW)
#define A_LOADS ((A_CHUNKS + THREADS - 1) / THREADS)  // chunks per thread, the last maybe partial
#define B_LOADS ((B_CHUNKS + THREADS - 1) / THREADS)
// Whether chunk f lies past the tile: where a tile's chunks (48 or 96 wide) are not
// a multiple of the threads, its last round leaves some threads without one.
#define PAST_A(f) (A_CHUNKS % THREADS != 0 && (f) >= A_CHUNKS)
#define PAST_B(f) (B_CHUNKS % THREADS != 0 && (f) >= B_CHUNKS)

// Which operands cp.async copies: a K-contiguous one (KMAJOR_A, KMAJOR_B) is
// transposed into its local tile through registers, which a 16-byte cp.async
// cannot do, unless ASYNC_ALONG_K copies it element by element.
#define A_ASYNC (ASYNC_COPY && (!KMAJOR_A || ASYNC_ALONG_K))
#define B_ASYNC (ASYNC_COPY && (!KMAJOR_B || ASYNC_ALONG_K || KTILE_B))
// Whether some operand goes through registers. In place, which operands cp.async
// copies is known at run time only (their forms and alignment are arguments),
// unless ALONG_MN or FIXED_FORM fixes them (aligned): then as in the packed kernel,
// but B kept along K in place is copied by cp.async only where it is read so.
#if SIMT_DIRECT && FIXED_FORM
#define REG_COPY (!A_ASYNC || !(ASYNC_COPY && (KTILE_B ? KMAJOR_B : (!KMAJOR_B || ASYNC_ALONG_K))))
#elif SIMT_DIRECT
#define REG_COPY (!ASYNC_COPY || !ALONG_MN)
#else
#define REG_COPY (!A_ASYNC || !B_ASYNC)
#endif
#if ASYNC_COPY && KMAJOR_A && KMAJOR_B && !ASYNC_ALONG_K && !KTILE_B
#error "simt: KMAJOR_A=1 and KMAJOR_B=1 together need ASYNC_COPY=0 or ASYNC_ALONG_K=1: cp.async's 16-byte copies take only an operand read along M or N, and both are read along K"
#endif
#if STREAMK && SPLITK > 1
#error "simt: STREAMK and SPLITK > 1 are two ways of sharing K among blocks; use one (SPLITK=1 with STREAMK)"
#endif
#ifndef REDUCE
#define REDUCE 0
#endif
#if REDUCE && SPLITK == 1
#error "simt: REDUCE=1 sums split-K's shares in a kernel of their own: it needs SPLITK > 1"
#endif
// Blocks share a tile's K and sum it through `work`: the last of them to finish
// (FIXUP), or, with REDUCE, a kernel launched after this one.
#define SHARES_K (SPLITK > 1 || STREAMK > 0)
#define FIXUP (SHARES_K && !REDUCE)
#if SMEM_PAD && (4 * STAGES * (A_TILE + B_TILE) + 4 * SHARES_K > 48 * 1024)
#error "simt: SMEM_PAD=1 with these tiles needs 4*STAGES*(BK*(BM+4)+BK*(BN+4)) bytes of local memory (BN*(BK+4) for B with KTILE_B; 4 more with split-K or stream-K), more than 48 KiB"
#endif

#if VEC_LOADS
typedef float4 floatV;
#else
typedef float floatV;
#endif

// The OpenCL spellings of what the CUDA twin writes differently.
// __forceinline__ is 'inline' with always_inline: C99's plain 'inline' only
// permits inlining, and clang (which honours that) left compute_tile a call to
// an undefined function, where NVIDIA's OpenCL compiler inlined it anyway.
#define INLINE_FUNC inline __attribute__((always_inline))
#define LOCAL_PTR __local
#define ATOMIC_INC(p) atomic_inc(p)
#define THREAD_X get_local_id(0)
#define THREAD_Y get_local_id(1)
#define BLOCK_X get_group_id(0)
#define BLOCK_Y get_group_id(1)
#define BLOCK_Z get_group_id(2)
#define GRID_X get_num_groups(0)
#define GRID_Y get_num_groups(1)
#define GLOBAL_PTR __global
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define INT64 long
#if defined(GEMMLAB_NVIDIA_PTX)
#define GLOBAL_FENCE() asm volatile("membar.gl;" ::: "memory")
#else
#define GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

#if ASYNC_COPY
#ifndef GEMMLAB_NVIDIA_PTX
#error "simt: ASYNC_COPY=1 needs NVIDIA inline PTX (cp.async); OpenCL C has no asynchronous copy into registers-free local memory"
#else
// The address of a local (shared) variable as PTX's shared window sees it.
#define SHARED_ADDR(p) ((uint)(size_t)(p))
#define CP_ASYNC(dst, src, bytes) \
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(SHARED_ADDR(dst)), "l"(src), "n"(bytes) : "memory")
// CP_CA=1: the 16-byte copies through L1 too (.ca), else L2 only (.cg): NVIDIA's
// OpenCL runtime serves .cg copies at under half the CUDA driver's rate.
#if CP_CA
#define CP_ASYNC_CG16(dst, src) \
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(SHARED_ADDR(dst)), "l"(src) : "memory")
#else
#define CP_ASYNC_CG16(dst, src) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(SHARED_ADDR(dst)), "l"(src) : "memory")
#endif
// In place: a copy of `bytes` (0 to the copy's size) from src, the rest of dst
// zero-filled; at 0, src is not read (an edge's chunk past the matrix).
#if CP_CA
#define CP_ASYNC_ZFILL16(dst, src, bytes) \
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" :: "r"(SHARED_ADDR(dst)), "l"(src), "r"(bytes) : "memory")
#else
#define CP_ASYNC_ZFILL16(dst, src, bytes) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(SHARED_ADDR(dst)), "l"(src), "r"(bytes) : "memory")
#endif
#define CP_ASYNC_ZFILL4(dst, src, bytes) \
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(SHARED_ADDR(dst)), "l"(src), "r"(bytes) : "memory")
#define CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_WAIT(n) asm volatile("cp.async.wait_group %0;" :: "n"(n) : "memory")
#endif
#endif

// Tile number `bid` of the gx x gy tiles of C in the block order: (tm, tn) in
// units of BM x BN.
INLINE_FUNC void block_tile(const int gx, const int gy, const int bid, int* tm, int* tn) {
#if RASTER
    const int per_group = GROUP * gy;
    const int first = (bid / per_group) * GROUP;
    const int rows = min(gx - first, GROUP);
    *tm = first + (bid % per_group) % rows;
    *tn = (bid % per_group) / rows;
#else
    *tm = bid % gx;
    *tn = bid / gx;
#endif
}

#if ASYNC_ALONG_K
// The BK x W tile of X read along K (element (x, k) at X[x*ld + k]) from column
// x0 and depth k0 into dst, transposed (local rows `row` apart), with 4-byte
// cp.async copies. A warp's 32 lanes take 8 consecutive K of 4 consecutive
// columns per copy: four 32-byte runs read and, with SMEM_PAD (rows 4 banks
// apart), 32 banks written. A work-item keeps its columns over the tile's BK/8
// runs, so the copies of one column share an address and differ by constants
// (numbered element by element, ptxas held a 64-bit address per copy: 233
// registers against 109). `edges` (in place): elements past the cols x K
// matrix are zero-filled, not read.
#define KE_WARPS (THREADS / 32)
#define KE_ROUNDS(W) (((W) / 4 + KE_WARPS - 1) / KE_WARPS)
INLINE_FUNC void copy_along_k(LOCAL_PTR float* dst, const int row, const GLOBAL_PTR float* X,
                              const int ld, const int x0, const int k0, const int cols,
                              const int K, const int W, const int edges, const int tid) {
    const int w = tid / 32;
    const int kl = tid % 8;
    const int cl = (tid % 32) / 8;
    #pragma unroll
    for (int r = 0; r < KE_ROUNDS(W); r++) {
        const int xx = (r * KE_WARPS + w) * 4 + cl;
        if ((W / 4) % KE_WARPS != 0 && xx >= W) {
            break;
        }
        const GLOBAL_PTR float* src = X + (x0 + xx) * ld + k0 + kl;
        LOCAL_PTR float* d = dst + kl * row + xx;
        #pragma unroll
        for (int j = 0; j < BK / 8; j++) {
            if (edges) {
                const int bytes = (x0 + xx < cols && k0 + kl + 8 * j < K) ? 4 : 0;
                CP_ASYNC_ZFILL4(d + 8 * j * row, src + 8 * j, bytes);
            } else {
                CP_ASYNC(d + 8 * j * row, src + 8 * j, 4);
            }
        }
    }
}
#endif

// Copies the BK x BM tile of A starting at row k0 (and the BK x BN tile of B)
// into local buffer `stage`: asynchronously, or through the registers `ra`, `rb`.
#if ASYNC_COPY && !SIMT_DIRECT
INLINE_FUNC void copy_async(const __global float* GEMMLAB_RESTRICT A,
                            const __global float* GEMMLAB_RESTRICT B,
                            LOCAL_PTR float* As, LOCAL_PTR float* Bs,
                            const int M, const int N, const int K, const int m0,
                            const int n0, const int k0, const int stage, const int tid) {
#if A_ASYNC && KMAJOR_A
    copy_along_k(As + stage * BK * AROW, AROW, A, K, m0, k0, M, K, BM, 0, tid);
#elif A_ASYNC
    #pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_A(f)) {
            break;
        }
        const int kk = f / (BM / VW);
        const int mm = (f % (BM / VW)) * VW;
        const __global float* src = A + (k0 + kk) * M + m0 + mm;
        LOCAL_PTR float* dst = As + (stage * BK + kk) * AROW + mm;
#if VEC_LOADS
        CP_ASYNC_CG16(dst, src);
#else
        CP_ASYNC(dst, src, 4);
#endif
    }
#endif
#if KTILE_B
    // B's columns as stored, 16 bytes of a column's K run per copy (KMAJOR_RUNS' order).
    #pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
        const int kk = (f % (BK / 4)) * 4;
        const int nn = f / (BK / 4);
        CP_ASYNC_CG16(Bs + stage * B_TILE + nn * KTROW + kk, B + (n0 + nn) * K + k0 + kk);
    }
#elif B_ASYNC && KMAJOR_B
    copy_along_k(Bs + stage * BK * BROW, BROW, B, K, n0, k0, N, K, BN, 0, tid);
#elif B_ASYNC
    #pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
        const int kk = f / (BN / VW);
        const int nn = (f % (BN / VW)) * VW;
        const __global float* src = B + (k0 + kk) * N + n0 + nn;
        LOCAL_PTR float* dst = Bs + (stage * BK + kk) * BROW + nn;
#if VEC_LOADS
        CP_ASYNC_CG16(dst, src);
#else
        CP_ASYNC(dst, src, 4);
#endif
    }
#endif
}
#define ASYNC_TILE(k0, s) copy_async(A, B, As, Bs, M, N, K, m0, n0, (k0), (s), tid)
#endif
#if ASYNC_COPY && SIMT_DIRECT
// One VW-wide chunk of X along its contiguous dimension i, elements (i.., j) at
// X[j*ld + i], into dst with cp.async: X's offset and ld are multiples of 4, so
// the chunk is one aligned copy, and its part past the rows x cols matrix is
// zero-filled by the copy's source size (0: nothing read).
// The address is formed even where nothing is read, so that it stays one add per
// tile along K (a select there cost the loop a tenth more instructions).
INLINE_FUNC void copy_zfill(LOCAL_PTR float* dst, const GLOBAL_PTR float* X, const int ld,
                            const int i, const int j, const int rows, const int cols) {
    const int bytes = j < cols ? 4 * max(0, min(VW, rows - i)) : 0;
    const GLOBAL_PTR float* src = X + j * ld + i;
#if VEC_LOADS
    CP_ASYNC_ZFILL16(dst, src, bytes);
#else
    CP_ASYNC_ZFILL4(dst, src, bytes);
#endif
}

// copy_async in place: A's tile where `a_async` (read along M and aligned, or along
// K with ASYNC_ALONG_K), B's where `b_async`, chunks numbered as copy_async's; the
// other goes through registers.
INLINE_FUNC void copy_async_direct(const GLOBAL_PTR float* GEMMLAB_RESTRICT A, const int a_ld,
                                   const int a_async,
                                   const GLOBAL_PTR float* GEMMLAB_RESTRICT B, const int b_ld,
                                   const int b_async,
                                   LOCAL_PTR float* As, LOCAL_PTR float* Bs,
                                   const int M, const int N, const int K, const int m0,
                                   const int n0, const int k0, const int stage, const int tid,
                                   const int a_k, const int b_k) {
#if ASYNC_ALONG_K
    if (a_async && a_k) {
        copy_along_k(As + stage * BK * AROW, AROW, A, a_ld, m0, k0, M, K, BM, 1, tid);
    }
    if (b_async && b_k) {
        copy_along_k(Bs + stage * BK * BROW, BROW, B, b_ld, n0, k0, N, K, BN, 1, tid);
    }
#endif
    #pragma unroll
    for (int i = 0; i < A_LOADS && a_async && !a_k; i++) {
        const int f = tid + i * THREADS;
        if (PAST_A(f)) {
            break;
        }
        const int kk = f / (BM / VW);
        const int mm = (f % (BM / VW)) * VW;
        copy_zfill(As + (stage * BK + kk) * AROW + mm, A, a_ld, m0 + mm, k0 + kk, M, K);
    }
#if KTILE_B
    // B stored along K (and aligned: `b_async`), kept so: 16 bytes of a column's K run a copy.
    #pragma unroll
    for (int i = 0; i < B_LOADS && b_async; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
        const int kk = (f % (BK / VW)) * VW;
        const int nn = f / (BK / VW);
        copy_zfill(Bs + stage * B_TILE + nn * KTROW + kk, B, b_ld, k0 + kk, n0 + nn, K, N);
    }
#else
    #pragma unroll
    for (int i = 0; i < B_LOADS && b_async && !b_k; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
        const int kk = f / (BN / VW);
        const int nn = (f % (BN / VW)) * VW;
        copy_zfill(Bs + (stage * BK + kk) * BROW + nn, B, b_ld, n0 + nn, k0 + kk, N, K);
    }
#endif
}
#define ASYNC_TILE(k0, s) \
    copy_async_direct(A, a_ld, a_async, B, b_ld, b_async, As, Bs, M, N, K, m0, n0, (k0), (s), tid, \
                      a_km, b_km)
#endif
#if REG_COPY
// Where load i of this thread goes: tiles are copied in VW-wide chunks along
// the operand's contiguous dimension, M (N for B), or K where KMAJOR_A
// (KMAJOR_B): then consecutive threads take consecutive rows (columns) of the
// tile, so their scalar stores into the local tile hit consecutive banks.
// With KMAJOR_RUNS, consecutive threads take consecutive chunks of one row's
// (column's) K run instead.
#define K_RUN_KK(f, W) (KMAJOR_RUNS ? ((f) % (BK / VW)) * VW : ((f) / (W)) * VW)
#define K_RUN_XX(f, W) (KMAJOR_RUNS ? (f) / (BK / VW) : (f) % (W))
#define A_CHUNK_KK(f) (KMAJOR_A ? K_RUN_KK(f, BM) : (f) / (BM / VW))
#define A_CHUNK_MM(f) (KMAJOR_A ? K_RUN_XX(f, BM) : ((f) % (BM / VW)) * VW)
#define B_CHUNK_KK(f) (KTILE_B ? ((f) % (BK / VW)) * VW : KMAJOR_B ? K_RUN_KK(f, BN) : (f) / (BN / VW))
#define B_CHUNK_NN(f) (KTILE_B ? (f) / (BK / VW) : KMAJOR_B ? K_RUN_XX(f, BN) : ((f) % (BN / VW)) * VW)

// A chunk read along K, stored down a column of the local tile (rows `row` apart).
#if VEC_LOADS
#define STORE_ALONG_K(p, row, v) \
    do { (p)[0] = (v).x; (p)[row] = (v).y; (p)[2 * (row)] = (v).z; (p)[3 * (row)] = (v).w; } while (0)
#else
#define STORE_ALONG_K(p, row, v) do { (p)[0] = (v); } while (0)
#endif

INLINE_FUNC void load_regs(const __global float* GEMMLAB_RESTRICT A,
                           const __global float* GEMMLAB_RESTRICT B,
                           floatV* ra, floatV* rb, const int M, const int N, const int K,
                           const int m0, const int n0, const int k0, const int tid) {
#if !A_ASYNC
    #pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_A(f)) {
            break;
        }
        const int kk = A_CHUNK_KK(f);
        const int mm = A_CHUNK_MM(f);
#if KMAJOR_A
        ra[i] = ((const __global floatV*)(A + (m0 + mm) * K + k0 + kk))[0];
#else
        ra[i] = ((const __global floatV*)(A + (k0 + kk) * M + m0 + mm))[0];
#endif
    }
#endif
#if !B_ASYNC
    #pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
        const int kk = B_CHUNK_KK(f);
        const int nn = B_CHUNK_NN(f);
#if KMAJOR_B
        rb[i] = ((const __global floatV*)(B + (n0 + nn) * K + k0 + kk))[0];
#else
        rb[i] = ((const __global floatV*)(B + (k0 + kk) * N + n0 + nn))[0];
#endif
    }
#endif
}

INLINE_FUNC void store_regs(const floatV* ra, const floatV* rb,
                            LOCAL_PTR float* As, LOCAL_PTR float* Bs,
                            const int stage, const int tid) {
#if !A_ASYNC
    #pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_A(f)) {
            break;
        }
        LOCAL_PTR float* dst = As + (stage * BK + A_CHUNK_KK(f)) * AROW + A_CHUNK_MM(f);
#if KMAJOR_A
        STORE_ALONG_K(dst, AROW, ra[i]);
#else
        ((LOCAL_PTR floatV*)dst)[0] = ra[i];
#endif
    }
#endif
#if !B_ASYNC
    #pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
#if KTILE_B
        ((LOCAL_PTR floatV*)(Bs + stage * B_TILE + B_CHUNK_NN(f) * KTROW + B_CHUNK_KK(f)))[0] = rb[i];
#elif KMAJOR_B
        LOCAL_PTR float* dst = Bs + (stage * BK + B_CHUNK_KK(f)) * BROW + B_CHUNK_NN(f);
        STORE_ALONG_K(dst, BROW, rb[i]);
#else
        LOCAL_PTR float* dst = Bs + (stage * BK + B_CHUNK_KK(f)) * BROW + B_CHUNK_NN(f);
        ((LOCAL_PTR floatV*)dst)[0] = rb[i];
#endif
    }
#endif
}

#if SIMT_DIRECT
// One VW-wide chunk of X along its contiguous dimension i: elements (i..i+VW-1, j)
// at X[j*ld + i], zero outside rows x cols. `vec`: X's offset and ld are
// multiples of 4, so a whole chunk (i is a multiple of 4) is one aligned access.
INLINE_FUNC floatV load_chunk(const GLOBAL_PTR float* X, const int ld, const int i,
                              const int j, const int rows, const int cols, const int vec) {
    const int in = j < cols;
    const GLOBAL_PTR float* p = X + (in ? j : 0) * ld + i;
#if VEC_LOADS
    if (vec && in && i + 3 < rows) {
        return ((const GLOBAL_PTR floatV*)p)[0];
    }
    floatV r;
    r.x = (in && i < rows) ? p[0] : 0.0f;
    r.y = (in && i + 1 < rows) ? p[1] : 0.0f;
    r.z = (in && i + 2 < rows) ? p[2] : 0.0f;
    r.w = (in && i + 3 < rows) ? p[3] : 0.0f;
    return r;
#else
    return (in && i < rows) ? p[0] : 0.0f;
#endif
}


// Where load i of this thread goes, as A_CHUNK_* and B_CHUNK_* say, with the
// operand's form known at run time.
#define D_CHUNK_KK(f, kmajor, W) ((kmajor) ? K_RUN_KK(f, W) : (f) / ((W) / VW))
#define D_CHUNK_XX(f, kmajor, W) ((kmajor) ? K_RUN_XX(f, W) : ((f) % ((W) / VW)) * VW)
// B's, which KTILE_B copies along K in whole K runs of a column (as KMAJOR_RUNS does).
#if KTILE_B
#define DB_CHUNK_KK(f, kmajor) ((kmajor) ? ((f) % (BK / VW)) * VW : (f) / (BN / VW))
#define DB_CHUNK_NN(f, kmajor) ((kmajor) ? (f) / (BK / VW) : ((f) % (BN / VW)) * VW)
#else
#define DB_CHUNK_KK(f, kmajor) D_CHUNK_KK(f, kmajor, BN)
#define DB_CHUNK_NN(f, kmajor) D_CHUNK_XX(f, kmajor, BN)
#endif

// The BK x BM tile of A from depth k0 and the BK x BN tile of B into registers,
// each where cp.async does not copy it (`a_reg`, `b_reg`).
INLINE_FUNC void load_direct(const GLOBAL_PTR float* GEMMLAB_RESTRICT A, const int a_ld,
                             const int a_k, const int a_vec, const int a_reg,
                             const GLOBAL_PTR float* GEMMLAB_RESTRICT B, const int b_ld,
                             const int b_k, const int b_vec, const int b_reg,
                             floatV* ra, floatV* rb, const int M, const int N, const int K,
                             const int m0, const int n0, const int k0, const int tid) {
    #pragma unroll
    for (int i = 0; i < A_LOADS && a_reg; i++) {
        const int f = tid + i * THREADS;
        if (PAST_A(f)) {
            break;
        }
        const int k = k0 + D_CHUNK_KK(f, a_k, BM);
        const int m = m0 + D_CHUNK_XX(f, a_k, BM);
        ra[i] = a_k ? load_chunk(A, a_ld, k, m, K, M, a_vec) : load_chunk(A, a_ld, m, k, M, K, a_vec);
    }
    #pragma unroll
    for (int i = 0; i < B_LOADS && b_reg; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
        const int k = k0 + DB_CHUNK_KK(f, b_k);
        const int n = n0 + DB_CHUNK_NN(f, b_k);
        rb[i] = b_k ? load_chunk(B, b_ld, k, n, K, N, b_vec) : load_chunk(B, b_ld, n, k, N, K, b_vec);
    }
}

INLINE_FUNC void store_direct(const floatV* ra, const floatV* rb,
                              LOCAL_PTR float* As, LOCAL_PTR float* Bs,
                              const int stage, const int tid, const int a_k, const int b_k,
                              const int a_reg, const int b_reg) {
    #pragma unroll
    for (int i = 0; i < A_LOADS && a_reg; i++) {
        const int f = tid + i * THREADS;
        if (PAST_A(f)) {
            break;
        }
        LOCAL_PTR float* dst =
            As + (stage * BK + D_CHUNK_KK(f, a_k, BM)) * AROW + D_CHUNK_XX(f, a_k, BM);
        if (a_k) {
            STORE_ALONG_K(dst, AROW, ra[i]);
        } else {
            ((LOCAL_PTR floatV*)dst)[0] = ra[i];
        }
    }
    #pragma unroll
    for (int i = 0; i < B_LOADS && b_reg; i++) {
        const int f = tid + i * THREADS;
        if (PAST_B(f)) {
            break;
        }
#if KTILE_B
        // B's tile keeps K contiguous: a chunk read along K is one 16-byte store, one
        // read along N four stores a tile row apart.
        LOCAL_PTR float* dst = Bs + stage * B_TILE + DB_CHUNK_NN(f, b_k) * KTROW + DB_CHUNK_KK(f, b_k);
        if (b_k) {
            ((LOCAL_PTR floatV*)dst)[0] = rb[i];
        } else {
            STORE_ALONG_K(dst, KTROW, rb[i]);
        }
#else
        LOCAL_PTR float* dst =
            Bs + (stage * BK + D_CHUNK_KK(f, b_k, BN)) * BROW + D_CHUNK_XX(f, b_k, BN);
        if (b_k) {
            STORE_ALONG_K(dst, BROW, rb[i]);
        } else {
            ((LOCAL_PTR floatV*)dst)[0] = rb[i];
        }
#endif
    }
}
#define LOAD_TILE(k0) \
    load_direct(A, a_ld, a_km, a_vec, !a_async, B, b_ld, b_km, b_vec, !b_async, ra, rb, \
                M, N, K, m0, n0, (k0), tid)
#define STORE_TILE(s) store_direct(ra, rb, As, Bs, (s), tid, a_km, b_km, !a_async, !b_async)
#else
#define LOAD_TILE(k0) load_regs(A, B, ra, rb, M, N, K, m0, n0, (k0), tid)
#define STORE_TILE(s) store_regs(ra, rb, As, Bs, (s), tid)
#endif
#endif

// acc += the BK-deep product of local buffer `stage`, from this lane's fragments.
// With KTILE_B, 4 K at a time: A's fragments of the 4 rows are held, and each of
// B's columns is read as one 128-bit run of 4 K and used at once (the 8 lanes of
// an access phase share their columns where LM is 8: a broadcast). Every
// accumulator still sums along K in order. Without it, the loop is as it was
// before KTILE_B: NVIDIA's OpenCL compiler ran the same tiles up to a quarter
// slower when the fragments were read by a helper taking the private arrays.
INLINE_FUNC void compute_tile(LOCAL_PTR const float* As, LOCAL_PTR const float* Bs,
                              float* acc, const int stage, const int am, const int bn,
                              const int k_off) {
#if KTILE_B
    #pragma unroll
    for (int j4 = 0; j4 < KS; j4 += 4) {
        const int k4 = k_off + j4;
        float a[4 * TM];
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            LOCAL_PTR const float* arow = As + stage * A_TILE + (k4 + u) * AROW + am;
            #pragma unroll
            for (int c = 0; c < TM / 4; c++) {
                const float4 x = ((LOCAL_PTR const float4*)(arow + c * LM * 4))[0];
                a[u * TM + c * 4 + 0] = x.x;
                a[u * TM + c * 4 + 1] = x.y;
                a[u * TM + c * 4 + 2] = x.z;
                a[u * TM + c * 4 + 3] = x.w;
            }
        }
        #pragma unroll
        for (int j = 0; j < TN; j++) {
            const int n = bn + (j / 4) * LN * 4 + j % 4;
            const float4 y = ((LOCAL_PTR const float4*)(Bs + stage * B_TILE + n * KTROW + k4))[0];
            const float b[4] = {y.x, y.y, y.z, y.w};
            #pragma unroll
            for (int u = 0; u < 4; u++) {
                #pragma unroll
                for (int i = 0; i < TM; i++) {
                    acc[i * TN + j] = fma(a[u * TM + i], b[u], acc[i * TN + j]);
                }
            }
        }
    }
#else
    #pragma unroll
    for (int j = 0; j < KS; j++) {
        const int kk = k_off + j;
        float a[TM];
        float b[TN];
        LOCAL_PTR const float* arow = As + (stage * BK + kk) * AROW + am;
        LOCAL_PTR const float* brow = Bs + (stage * BK + kk) * BROW + bn;
        #pragma unroll
        for (int c = 0; c < TM / 4; c++) {
            #pragma unroll
            for (int v = 0; v < 4; v += VW) {
                const floatV x = ((LOCAL_PTR const floatV*)(arow + c * LM * 4 + v))[0];
#if VEC_LOADS
                a[c * 4 + 0] = x.x; a[c * 4 + 1] = x.y; a[c * 4 + 2] = x.z; a[c * 4 + 3] = x.w;
#else
                a[c * 4 + v] = x;
#endif
            }
        }
        #pragma unroll
        for (int c = 0; c < TN / 4; c++) {
            #pragma unroll
            for (int v = 0; v < 4; v += VW) {
                const floatV x = ((LOCAL_PTR const floatV*)(brow + c * LN * 4 + v))[0];
#if VEC_LOADS
                b[c * 4 + 0] = x.x; b[c * 4 + 1] = x.y; b[c * 4 + 2] = x.z; b[c * 4 + 3] = x.w;
#else
                b[c * 4 + v] = x;
#endif
            }
        }
        #pragma unroll
        for (int i = 0; i < TM; i++) {
            #pragma unroll
            for (int j = 0; j < TN; j++) {
                acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
            }
        }
    }
#endif
}

// C = alpha*sum + beta*C for this lane's elements; `acc` holds the sums.
INLINE_FUNC void store_c(__global float* C, const float* acc, const int M,
                         const int cm, const int cn, const float alpha, const float beta) {
    #pragma unroll
    for (int j = 0; j < TN; j++) {
        const int n = cn + (j / 4) * LN * 4 + (j % 4);
        #pragma unroll
        for (int c = 0; c < TM / 4; c++) {
            #pragma unroll
            for (int v = 0; v < 4; v += VW) {
                __global floatV* p = (__global floatV*)(C + n * M + cm + c * LM * 4 + v);
#if VEC_LOADS
                float4 r;
                r.x = alpha * acc[(c * 4 + 0) * TN + j];
                r.y = alpha * acc[(c * 4 + 1) * TN + j];
                r.z = alpha * acc[(c * 4 + 2) * TN + j];
                r.w = alpha * acc[(c * 4 + 3) * TN + j];
                if (beta != 0.0f) {
                    const float4 old = p[0];
                    r.x = fma(beta, old.x, r.x);
                    r.y = fma(beta, old.y, r.y);
                    r.z = fma(beta, old.z, r.z);
                    r.w = fma(beta, old.w, r.w);
                }
                p[0] = r;
#else
                float r = alpha * acc[(c * 4 + v) * TN + j];
                if (beta != 0.0f) {
                    r = fma(beta, p[0], r);
                }
                p[0] = r;
#endif
            }
        }
    }
}

#if SIMT_DIRECT
// store_c at any M x N with leading dimension ldc: 128-bit where a chunk is inside
// C and aligned (`vec`), element by element at the edges.
INLINE_FUNC void store_c_direct(GLOBAL_PTR float* C, const int ldc, const int vec,
                                const float* acc, const int M, const int N,
                                const int cm, const int cn, const float alpha, const float beta) {
    #pragma unroll
    for (int j = 0; j < TN; j++) {
        const int n = cn + (j / 4) * LN * 4 + (j % 4);
        #pragma unroll
        for (int c = 0; c < TM / 4; c++) {
            const int m = cm + c * LM * 4;
            if (n < N && m < M) {
                GLOBAL_PTR float* p = C + n * ldc + m;
#if VEC_LOADS
                if (vec && m + 3 < M) {
                    float4 r;
                    r.x = alpha * acc[(c * 4 + 0) * TN + j];
                    r.y = alpha * acc[(c * 4 + 1) * TN + j];
                    r.z = alpha * acc[(c * 4 + 2) * TN + j];
                    r.w = alpha * acc[(c * 4 + 3) * TN + j];
                    if (beta != 0.0f) {
                        const float4 old = ((GLOBAL_PTR float4*)p)[0];
                        r.x = fma(beta, old.x, r.x);
                        r.y = fma(beta, old.y, r.y);
                        r.z = fma(beta, old.z, r.z);
                        r.w = fma(beta, old.w, r.w);
                    }
                    ((GLOBAL_PTR float4*)p)[0] = r;
                    continue;
                }
#endif
                #pragma unroll
                for (int v = 0; v < 4; v++) {
                    if (m + v < M) {
                        const float r = alpha * acc[(c * 4 + v) * TN + j];
                        p[v] = beta != 0.0f ? fma(beta, p[v], r) : r;
                    }
                }
            }
        }
    }
}
#endif

__kernel GEMMLAB_BOUNDS(BM / TM, BN / TN * SLICEK)
#if SIMT_DIRECT
void simt_gemm(const int M, const int N, const int K, const float alpha, const float beta,
               const GLOBAL_PTR float* GEMMLAB_RESTRICT A, const int a_offset, const int a_ld,
               const GLOBAL_PTR float* GEMMLAB_RESTRICT B, const int b_offset, const int b_ld,
               GLOBAL_PTR float* C, const int c_offset, const int c_ld,
               const int a_kmajor, const int b_kmajor,
               GLOBAL_PTR float* work, GLOBAL_PTR int* counters) {
#else
void simt_gemm(const int M, const int N, const int K, const float alpha, const float beta,
               const __global float* GEMMLAB_RESTRICT A, const __global float* GEMMLAB_RESTRICT B,
               __global float* C, __global float* work, __global int* counters) {
#endif
#if SLICEK > 1
    // One buffer: the pipeline's tiles, then the slices' sums (BM*BN floats).
#define TILES_FLOATS (STAGES * (A_TILE + B_TILE))
    __local float4 S4[(TILES_FLOATS > BM * BN ? TILES_FLOATS : BM * BN) / 4];
    LOCAL_PTR float* As = (LOCAL_PTR float*)S4;
    LOCAL_PTR float* Bs = As + STAGES * A_TILE;
#else
    __local float4 As4[STAGES * A_TILE / 4];
    __local float4 Bs4[STAGES * B_TILE / 4];
    LOCAL_PTR float* As = (LOCAL_PTR float*)As4;
    LOCAL_PTR float* Bs = (LOCAL_PTR float*)Bs4;
#endif
#if FIXUP
    __local int last;
#endif
    // Programmatic dependent launch (CUDA, sm_90+) with one block per tile of C only:
    // launched early behind a kernel of the same shape, a grid sharing K waited
    // where the GPU had room, unevenly, and ran slower (1000^3, 64 x 64, split 2:
    // 78 us against 62; 32x50257x768, stream-K: 127 against 104), where calls
    // without split-K or stream-K gained up to 15%.
#if SPLITK == 1 && STREAMK == 0
    GEMMLAB_WAIT_PREVIOUS_GRID();
#endif
#if SIMT_DIRECT
    A += a_offset;
    B += b_offset;
    C += c_offset;
#if ALONG_MN
    // The routine passes both operands read along M and N, offsets and lds multiples of 4.
    const int a_km = 0;
    const int b_km = 0;
    const int a_vec = 1;
    const int b_vec = 1;
#elif FIXED_FORM
    // The routine passes the form KMAJOR_A and KMAJOR_B name, offsets and lds multiples of 4.
    const int a_km = KMAJOR_A;
    const int b_km = KMAJOR_B;
    const int a_vec = 1;
    const int b_vec = 1;
#else
    const int a_km = a_kmajor;
    const int b_km = b_kmajor;
    const int a_vec = (a_offset % 4 == 0) && (a_ld % 4 == 0);
    const int b_vec = (b_offset % 4 == 0) && (b_ld % 4 == 0);
#endif
    // cp.async copies an operand read along M (N) whose chunks are aligned, and
    // with ASYNC_ALONG_K one read along K (4 bytes at a time: any alignment).
#if ASYNC_COPY && VEC_LOADS
    const int a_async = a_km ? ASYNC_ALONG_K : a_vec;
#if KTILE_B
    // cp.async's 16-byte copies keep B along K where it is stored so, aligned.
    const int b_async = b_km && b_vec;
#else
    const int b_async = b_km ? ASYNC_ALONG_K : b_vec;
#endif
#elif ASYNC_COPY
    const int a_async = !a_km || ASYNC_ALONG_K;
    const int b_async = !b_km || ASYNC_ALONG_K;
#else
    const int a_async = 0;
    const int b_async = 0;
#endif
#endif

    const int tid = THREAD_X + THREAD_Y * (BM / TM);
#if SLICEK > 1
    // Work-items TILE_THREADS apart hold the same elements' sums, each over its slice.
    const int kslice = tid / TILE_THREADS;
    const int ttid = tid % TILE_THREADS;
#else
    const int kslice = 0;
    const int ttid = tid;
#endif
    const int warp = ttid / 32;
    const int lane = tid % 32;
    // This lane's first element within the block tile.
    const int am = (warp % (BM / WM)) * WM + (lane % LM) * 4;
    const int bn = (warp / (BM / WM)) * WN + (lane / LM) * 4;

    // K in BK-deep tiles. In place, the last tile may be partial: its loads are
    // zero beyond K.
#if SIMT_DIRECT
    const int k_tiles = (K + BK - 1) / BK;
    const int tiles_m = (M + BM - 1) / BM;
    const int tiles_n = (N + BN - 1) / BN;
#else
    const int k_tiles = K / BK;
    const int tiles_m = M / BM;
    const int tiles_n = N / BN;
#endif
#if STREAMK
    // This block's run of the tiles_m*tiles_n*k_tiles iterations (tile-major).
    const INT64 total = (INT64)tiles_m * tiles_n * k_tiles;
    const INT64 run_end = ((INT64)(BLOCK_X + 1) * total) / GRID_X;
    INT64 it = ((INT64)BLOCK_X * total) / GRID_X;
#else
    INT64 it = 0;
    const INT64 run_end = 1;
#endif
    // One segment (a tile of C and a share of its K tiles) per pass: the
    // block's own tile and split without stream-K.
    while (it < run_end) {
#if STREAMK
        const int tile = (int)(it / k_tiles);
        const int t_first = (int)(it % k_tiles);
        const int tiles = (int)min((INT64)(k_tiles - t_first), run_end - it);
        it += tiles;
#else
        const int tile = BLOCK_Y * GRID_X + BLOCK_X;
        // This split's share of the k_tiles (shares differ by at most one tile,
        // so K need only be a multiple of BK; a split may have none).
        const int split = BLOCK_Z;
        const int t_first = (split * k_tiles) / SPLITK;
        const int tiles = ((split + 1) * k_tiles) / SPLITK - t_first;
        it = run_end;
#endif
        int tm;
        int tn;
        block_tile(tiles_m, tiles_n, tile, &tm, &tn);
        const int m0 = tm * BM;
        const int n0 = tn * BN;
        const int k_first = t_first * BK;

        float acc[TM * TN];
        #pragma unroll
        for (int i = 0; i < TM * TN; i++) {
            acc[i] = 0.0f;
        }

#if ASYNC_COPY
#if REG_COPY
        floatV ra[A_LOADS];
        floatV rb[B_LOADS];
#endif
#if STAGES == 1
        for (int t = 0; t < tiles; t++) {
            ASYNC_TILE(k_first + t * BK, 0);
#if REG_COPY
            LOAD_TILE(k_first + t * BK);
            STORE_TILE(0);
#endif
            CP_COMMIT();
            CP_WAIT(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            compute_tile(As, Bs, acc, 0, am, bn, kslice * KS);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#else
        #pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < tiles) {
                ASYNC_TILE(k_first + s * BK, s);
#if REG_COPY
                LOAD_TILE(k_first + s * BK);
                STORE_TILE(s);
#endif
            }
            CP_COMMIT();
        }
        for (int t = 0; t < tiles; t++) {
            // Tile t has landed once at most STAGES-2 later copies are pending; the
            // barrier also tells every thread that tile t-1's buffer is free again.
            CP_WAIT(STAGES - 2);
            barrier(CLK_LOCAL_MEM_FENCE);
            const int next = t + STAGES - 1;
            if (next < tiles) {
                ASYNC_TILE(k_first + next * BK, next % STAGES);
#if REG_COPY
                LOAD_TILE(k_first + next * BK);
#endif
            }
            CP_COMMIT();
            compute_tile(As, Bs, acc, t % STAGES, am, bn, kslice * KS);
#if REG_COPY
            // The register-copied operand's tile goes to the buffer tile t-1 used,
            // free since the barrier above; the next barrier publishes it.
            if (next < tiles) {
                STORE_TILE(next % STAGES);
            }
#endif
        }
#endif
#else
        floatV ra[A_LOADS];
        floatV rb[B_LOADS];
#if STAGES == 1
        for (int t = 0; t < tiles; t++) {
            LOAD_TILE(k_first + t * BK);
            STORE_TILE(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            compute_tile(As, Bs, acc, 0, am, bn, kslice * KS);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#else
        #pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < tiles) {
                LOAD_TILE(k_first + s * BK);
                STORE_TILE(s);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = 0; t < tiles; t++) {
            // The loads of tile t+STAGES-1 are in flight while tile t is computed;
            // they go to the buffer tile t-1 used, which every thread has left.
            const int next = t + STAGES - 1;
            if (next < tiles) {
                LOAD_TILE(k_first + next * BK);
            }
            compute_tile(As, Bs, acc, t % STAGES, am, bn, kslice * KS);
            if (next < tiles) {
                STORE_TILE(next % STAGES);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#endif
#endif
#if SPLITK == 1 && STREAMK == 0
        GEMMLAB_LAUNCH_NEXT_GRID();
#endif
#if SLICEK > 1
        // Each slice's sums added to the first's through local memory, in slice
        // order (the result does not depend on timing); the tiles' buffers are
        // free once every work-item is past its last compute.
#if ASYNC_COPY
        CP_WAIT(0);
#endif
        LOCAL_BARRIER();
        for (int s = 1; s < SLICEK; s++) {
            if (kslice == s) {
                #pragma unroll
                for (int i = 0; i < TM * TN; i++) {
                    As[i * TILE_THREADS + ttid] = acc[i];
                }
            }
            LOCAL_BARRIER();
            if (kslice == 0) {
                #pragma unroll
                for (int i = 0; i < TM * TN; i++) {
                    acc[i] += As[i * TILE_THREADS + ttid];
                }
            }
            LOCAL_BARRIER();
        }
#endif

#if REDUCE
        // A split's share of the tile's K: its sums, unscaled, to its own slice of `work`
        // in C's layout (leading dimension the tiles' M, tiles_m*BM by tiles_n*BN a
        // slice); the routine's reduce_splits adds the slices in split order and
        // scales them into C. No block waits for another.
        if (kslice == 0) {
            GLOBAL_PTR float* slice = work + (INT64)split * (tiles_m * BM) * (tiles_n * BN);
#if SIMT_DIRECT
            store_c_direct(slice, tiles_m * BM, 1, acc, M, N, m0 + am, n0 + bn, 1.0f, 0.0f);
#else
            store_c(slice, acc, M, m0 + am, n0 + bn, 1.0f, 0.0f);
#endif
        }
#elif SHARES_K
        // A share of the tile's K: partial sums to `work` (private to the share,
        // coalesced), then count the share in; the last to arrive adds them all
        // in K order (its own read back too, so that the order, and the result,
        // is the same whichever block is last) and writes C.
#if STREAMK
        // A block's partial shares are its first segment (slot 0) and its last
        // (slot 1); the blocks sharing this tile are consecutive.
        const INT64 tile_start = (INT64)tile * k_tiles;
        const int partial = tiles < k_tiles;
        int b_first = BLOCK_X;
        while (((INT64)b_first * total) / GRID_X > tile_start) {
            b_first--;
        }
        int b_last = BLOCK_X;
        while (b_last + 1 < GRID_X && ((INT64)(b_last + 1) * total) / GRID_X < tile_start + k_tiles) {
            b_last++;
        }
        const int parts = b_last - b_first + 1;
#define PART_SLOT(b) ((b) * 2 + ((((INT64)(b) * total) / GRID_X >= tile_start) ? 0 : 1))
        const int own = PART_SLOT(BLOCK_X);
#else
        const int partial = 1;
        const int parts = SPLITK;
        const int own = tile * SPLITK + split;
#endif
        const int counter = tn * tiles_m + tm;
        int finish = 1;
        if (partial) {
            GLOBAL_PTR float* mine = work + own * (BM * BN);
            if (kslice == 0) {
                #pragma unroll
                for (int e = 0; e < TM * TN / 4; e++) {
                    #pragma unroll
                    for (int v = 0; v < 4; v++) {
                        mine[(e * TILE_THREADS + ttid) * 4 + v] = acc[((e % (TM / 4)) * 4 + v) * TN + e / (TM / 4)];
                    }
                }
            }
            GLOBAL_FENCE();
            LOCAL_BARRIER();
            if (tid == 0) {
                last = (ATOMIC_INC(counters + counter) == parts - 1) ? 1 : 0;
            }
            LOCAL_BARRIER();
            finish = last;
            if (finish) {
                GLOBAL_FENCE();
                #pragma unroll
                for (int i = 0; i < TM * TN; i++) {
                    acc[i] = 0.0f;
                }
                for (int s = 0; s < parts && kslice == 0; s++) {
#if STREAMK
                    const int slot = PART_SLOT(b_first + s);
#else
                    const int slot = tile * SPLITK + s;
#endif
                    const volatile GLOBAL_PTR float* part = work + slot * (BM * BN);
                    #pragma unroll
                    for (int e = 0; e < TM * TN / 4; e++) {
                        #pragma unroll
                        for (int v = 0; v < 4; v++) {
                            acc[((e % (TM / 4)) * 4 + v) * TN + e / (TM / 4)] += part[(e * TILE_THREADS + ttid) * 4 + v];
                        }
                    }
                }
                if (tid == 0) {
                    counters[counter] = 0;
                }
            }
        }
#undef PART_SLOT
        if (finish) {
#endif
#if REDUCE
#elif SIMT_DIRECT
            if (kslice == 0) {
                store_c_direct(C, c_ld, (c_offset % 4 == 0) && (c_ld % 4 == 0), acc, M, N,
                               m0 + am, n0 + bn, alpha, beta);
            }
#else
            if (kslice == 0) {
                store_c(C, acc, M, m0 + am, n0 + bn, alpha, beta);
            }
#endif
#if FIXUP
        }
#endif
#if STREAMK
        // The next segment's copies reuse the local buffers this one read.
        LOCAL_BARRIER();
#endif
    }
}
