// gemmlab's warpgroup tensor-core SGEMM (family 5, wgmma), OpenCL twin.
//
// What it does: C = alpha*A*B + beta*C in f32 on Hopper's TF32 tensor cores
// through wgmma.mma_async (sm_90a), in the operand forms of the tc family
// except that B is K-contiguous: A column-major M x K (element (m,k) at
// k*M + m), B column-major K x N (element (k,n) at n*K + k), C column-major
// M x N, sizes multiples of the block tile. Each operand element x is split
// into a TF32 high part h = tf32(x) and a low part l = tf32(x - h), and each
// k8 step adds Al*Bh + Ah*Bl + Ah*Bh ("3xTF32", as the tc family).
//   TF32_SINGLE=1 keeps Ah*Bh only ("1xTF32"): a LOWER precision than FP32.
//   PROMOTE_ACC=1: the tensor core sums PROMOTE_K values of K from zero and
//   that sum is added to FP32 accumulators with an IEEE add (the tensor core's
//   own adds are not round-to-nearest); 0: it accumulates over all of K.
//
// Structure:
//   block      BM/64 warpgroups of 128 threads; warpgroup w computes rows
//              64w..64w+63 of the block's BM x BN tile with one m64nBNk8 wgmma
//              per product and k8 step.
//   A          copied to local memory with 16-byte cp.async (M-contiguous rows
//              of BM, padded by 8 floats), read into registers in the wgmma
//              A-fragment layout (lane (g, t) = (lane/4, lane%4) of warp v holds
//              rows 16v+g and 16v+g+8, columns t and t+4) and split there.
//   B          copied with 16-byte cp.async straight into the canonical K-major
//              layout without swizzle: 8 x 16-byte "core matrices" (8 columns
//              of B, 4 values of K each), the BN/8 matrices of one 4-deep slice
//              of K contiguous, slices BN*16 bytes and a pad apart (the pad keeps
//              the copies and the split free of bank conflicts). Each thread
//              splits the chunks it copied: high parts in place, low parts into
//              one of two low buffers. The wgmma reads B through a descriptor.
//   pipeline   STAGES-deep cp.async ring; a barrier per stage; each warpgroup
//              waits for its wgmmas before the next stage (fence.proxy.async
//              makes the threads' writes visible to the tensor core's reads).
//   order      blocks visit the tiles of C in groups of GROUP tile rows.
//
// Parameters: BM (64, 128, 256), BN (the wgmma's N: 64, 128, 256), BK (8, 16,
//   32), STAGES (2-6), GROUP, PROMOTE_K (values of K summed by the tensor core
//   between promotions: 8, 16, 32), KMAJOR_B (1: B is read K-contiguous).
// Switches: USE_BOUNDS, USE_RESTRICT, CP_CA (tile copies through L1),
//   TF32_SINGLE, PROMOTE_ACC.
// Local memory: 4*STAGES*BK*(BM+8) + (STAGES + 2*!TF32_SINGLE)*(4*BK*BN + 128) bytes,
//   taken at launch on CUDA, declared in OpenCL (48 KiB on NVIDIA's).
// Launch: local (32, BM/16), global (M*32/BM, N*BM/(16*BN)): thread
//   get_local_id(0) + 32*get_local_id(1); warp get_local_id(1); warpgroup
//   get_local_id(1)/4.
// Arguments: (M, N, K, alpha, beta, A, B, C, work, counters) as the tc family's;
//   beta == 0: C is not read; work and counters are not used (no split-K).
// Needs: sm_90a (wgmma), i.e. compute capability 9.0 exactly. NVRTC compiles
//   this twin for sm_90a; the OpenCL twin writes its wgmma instructions behind
//   a PTX comment marker that gemmlab's OpenCL backend removes (NVIDIA's
//   OpenCL compiler declares .target sm_90 and refuses them otherwise).

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef PROMOTE_K
#define PROMOTE_K 8
#endif
#ifndef KMAJOR_B
#define KMAJOR_B 1
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

#if KMAJOR_B != 1
#error "tcwg: B is read K-contiguous (KMAJOR_B=1): wgmma's TF32 operands in local memory must be K-major"
#endif
#if (BM != 64 && BM != 128 && BM != 256) || (BN != 64 && BN != 128 && BN != 256) || BK % 8 != 0
#error "tcwg: BM must be 64, 128 or 256, BN 64, 128 or 256, BK a multiple of 8"
#endif

#define PROMOTED (PROMOTE_ACC && !TF32_SINGLE)
#define WGS (BM / 64)                 // warpgroups
#define THREADS (128 * WGS)
#define STEPS (BK / 8)                // k8 steps per stage
#define AROW (BM + 8)                 // floats per local row of the A tile
#define A_CHUNKS (BK * BM / 4)        // 16-byte copies per A tile
#define B_CHUNKS (BK * BN / 4)
#define LO_BUFS (TF32_SINGLE ? 0 : 2)
#define STEPS_PER_PROMOTION (PROMOTE_K / 8)
// Floats from one 4-deep slice of K of a B tile to the next: BN core-matrix rows
// and a pad that puts the 16-byte chunks one write phase of copy_tiles and
// split_b covers (8 threads: 32/BK columns times BK/4 slices) in 8 different
// bank groups: (512/BK bytes mod 128 per slice).
#define BSLICE (BN * 4 + 128 / BK)
#define BTILE (BK / 4 * BSLICE)       // floats per stage of B

// The OpenCL spellings of what the CUDA twin writes differently: inline PTX as
// NVIDIA's OpenCL compiler takes it (local pointers are 32-bit addresses in
// PTX's shared window).
#define INLINE_FUNC inline __attribute__((always_inline))
#define LOCAL_PTR __local
#define GLOBAL_PTR __global
#define THREAD_X ((int)get_local_id(0))
#define THREAD_Y ((int)get_local_id(1))
#define BLOCK_X ((int)get_group_id(0))
#define BLOCK_Y ((int)get_group_id(1))
#define GRID_X ((int)get_num_groups(0))
#define GRID_Y ((int)get_num_groups(1))
#define AS_FLOAT(u) as_float(u)
#define AS_UINT(x) as_uint(x)
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
typedef ulong desc_t;
// The tiles, declared (the CUDA twin takes them at launch).
#define LOCAL_TILES(name, count) __local float4 name[count]
#if defined(__clang__)
#define asm __asm__
#endif
#define SHARED_ADDR(p) ((uint)(size_t)(p))
// NVIDIA's OpenCL compiler declares .target sm_90 and refuses sm_90a's wgmma, so
// each wgmma instruction is written behind this PTX comment marker: the front end
// puts it into the PTX with its operands, and gemmlab's OpenCL backend removes the
// marker and builds the PTX for sm_90a (CompileOptions::arch_specific).
#define WG_ARCH "//sm_90a "

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
// The threads' writes to local memory (cp.async, the split) ordered before the
// tensor core's reads of it, which go through the async proxy.
#define PROXY_FENCE() asm volatile("fence.proxy.async.shared::cta;" ::: "memory")
#define WG_FENCE() asm volatile(WG_ARCH "wgmma.fence.sync.aligned;" ::: "memory")
#define WG_COMMIT() asm volatile(WG_ARCH "wgmma.commit_group.sync.aligned;" ::: "memory")
#define WG_WAIT_ALL() asm volatile(WG_ARCH "wgmma.wait_group.sync.aligned 0;" ::: "memory")
// Keeps the compiler from moving a read of an accumulator above the wait.
#define PIN(x) asm volatile("" : "+f"(x) :: "memory")

// d (BN/2 floats per thread) = (scale ? d : 0) + a (4 tf32) * B (descriptor): one
// m64nBNk8 product of the warpgroup.
#if BN == 64
#define WGMMA_TF32(d, a, desc, scale)                                            \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t" WG_ARCH             \
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"                \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n\t}"                  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]) \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(desc), "r"(scale))
#elif BN == 128
#define WGMMA_TF32(d, a, desc, scale)                                            \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %69, 0;\n\t" WG_ARCH             \
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"                \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n\t}"                  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]), \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63]) \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(desc), "r"(scale))
#elif BN == 256
#define WGMMA_TF32(d, a, desc, scale)                                            \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %133, 0;\n\t" WG_ARCH             \
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"                \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
                 "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n\t}"                  \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
                   "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
                   "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
                   "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]), \
                   "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
                   "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
                   "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
                   "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63]), \
                   "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]), \
                   "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]), \
                   "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]), \
                   "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95]), \
                   "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]), \
                   "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111]), \
                   "+f"((d)[112]), "+f"((d)[113]), "+f"((d)[114]), "+f"((d)[115]), "+f"((d)[116]), "+f"((d)[117]), "+f"((d)[118]), "+f"((d)[119]), \
                   "+f"((d)[120]), "+f"((d)[121]), "+f"((d)[122]), "+f"((d)[123]), "+f"((d)[124]), "+f"((d)[125]), "+f"((d)[126]), "+f"((d)[127]) \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(desc), "r"(scale))
#endif

// The tile of C this block computes: (tm, tn) in units of BM x BN, in groups
// of GROUP tile rows (blocks that run together share rows of A and columns of B).
INLINE_FUNC void block_tile(const int gx, const int gy, const int bx, const int by,
                            int* tm, int* tn) {
    const int bid = by * gx + bx;
    const int per_group = GROUP * gy;
    const int first = (bid / per_group) * GROUP;
    const int rows = min(gx - first, GROUP);
    *tm = first + (bid % per_group) % rows;
    *tn = (bid % per_group) / rows;
}

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

// The descriptor of a K-major B operand without swizzle starting at local address
// `addr`: core matrices adjacent in K are a slice apart (leading byte offset),
// adjacent in N 128 bytes (stride byte offset).
INLINE_FUNC desc_t b_desc(const uint addr) {
    return (desc_t)((addr & 0x3FFFF) >> 4) | ((desc_t)((BSLICE * 4) >> 4) << 16) |
           ((desc_t)(128 >> 4) << 32);
}

// Starts the copy of the BK-deep tiles of A and B at row k0 into buffer `stage`.
// B's 16-byte chunk (n, kc), four values of K, is row n%8 of core matrix
// (n/8, kc): local float offset kc*BSLICE + n*4.
INLINE_FUNC void copy_tiles(const GLOBAL_PTR float* GEMMLAB_RESTRICT A,
                            const GLOBAL_PTR float* GEMMLAB_RESTRICT B,
                            LOCAL_PTR float* As, LOCAL_PTR float* Bs,
                            const int M, const int K, const int m0, const int n0,
                            const int k0, const int stage, const int tid) {
    #pragma unroll
    for (int i = 0; i < A_CHUNKS / THREADS; i++) {
        const int f = tid + i * THREADS;
        const int kk = f / (BM / 4);
        const int mm = (f % (BM / 4)) * 4;
        CP_ASYNC16(As + (stage * BK + kk) * AROW + mm, A + (k0 + kk) * M + m0 + mm);
    }
    #pragma unroll
    for (int i = 0; i < (B_CHUNKS + THREADS - 1) / THREADS; i++) {
        const int f = tid + i * THREADS;
        if (B_CHUNKS % THREADS == 0 || f < B_CHUNKS) {
            const int n = f / (BK / 4);
            const int kc = f % (BK / 4);
            CP_ASYNC16(Bs + stage * BTILE + kc * BSLICE + n * 4, B + (n0 + n) * K + k0 + kc * 4);
        }
    }
}

#if !TF32_SINGLE
// Splits the B chunks of buffer `stage` this thread copied (copy_tiles' mapping,
// so its own cp.async wait is enough): high parts in place, low parts into Bl.
INLINE_FUNC void split_b(LOCAL_PTR float* Bs, LOCAL_PTR float* Bl, const int tid) {
    #pragma unroll
    for (int i = 0; i < (B_CHUNKS + THREADS - 1) / THREADS; i++) {
        const int f = tid + i * THREADS;
        if (B_CHUNKS % THREADS == 0 || f < B_CHUNKS) {
            const int at = (f % (BK / 4)) * BSLICE + (f / (BK / 4)) * 4;
            const float4 v = *((LOCAL_PTR const float4*)(Bs + at));
            uint h0, h1, h2, h3, l0, l1, l2, l3;
            split_tf32(v.x, &h0, &l0);
            split_tf32(v.y, &h1, &l1);
            split_tf32(v.z, &h2, &l2);
            split_tf32(v.w, &h3, &l3);
            float4 hv, lv;
            hv.x = AS_FLOAT(h0);
            hv.y = AS_FLOAT(h1);
            hv.z = AS_FLOAT(h2);
            hv.w = AS_FLOAT(h3);
            lv.x = AS_FLOAT(l0);
            lv.y = AS_FLOAT(l1);
            lv.z = AS_FLOAT(l2);
            lv.w = AS_FLOAT(l3);
            *((LOCAL_PTR float4*)(Bs + at)) = hv;
            *((LOCAL_PTR float4*)(Bl + at)) = lv;
        }
    }
}
#endif

// One BK-deep stage: the warpgroup's STEPS k8 steps. q0 is the index of the
// stage's first k8 step along K, last_q that of the last step of the block's K.
// Each k8 step's first product starts from zero where a promotion chunk (or,
// unpromoted, K) starts; a chunk's end waits for the tensor core and adds its
// sum to acc. The stage ends with its wgmmas complete: its buffers are reused.
INLINE_FUNC void compute_stage(LOCAL_PTR const float* As, LOCAL_PTR const float* Bs,
                               LOCAL_PTR const float* Bl, float d[BN / 2], float acc[BN / 2],
                               const int row, const int t, const int q0, const int last_q) {
    uint ah[STEPS][4], al[STEPS][4];
    #pragma unroll
    for (int j = 0; j < STEPS; j++) {
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            // a0 (row, t), a1 (row+8, t), a2 (row, t+4), a3 (row+8, t+4)
            const float x = As[(8 * j + t + 4 * (u / 2)) * AROW + row + 8 * (u % 2)];
            split_tf32(x, &ah[j][u], &al[j][u]);
        }
    }
    const uint b_hi = SHARED_ADDR(Bs);
#if !TF32_SINGLE
    const uint b_lo = SHARED_ADDR(Bl);
#endif
    bool waited = false;
    WG_FENCE();
    #pragma unroll
    for (int j = 0; j < STEPS; j++) {
        const int q = q0 + j;
        // Each k8 step reads two slices of K.
        const desc_t hi = b_desc(b_hi + j * 8 * BSLICE);
#if PROMOTED
        const uint scale = (q % STEPS_PER_PROMOTION == 0) ? 0u : 1u;
#else
        const uint scale = (q == 0) ? 0u : 1u;
#endif
#if TF32_SINGLE
        WGMMA_TF32(d, ah[j], hi, scale);
#else
        const desc_t lo = b_desc(b_lo + j * 8 * BSLICE);
        WGMMA_TF32(d, al[j], hi, scale);
        WGMMA_TF32(d, ah[j], lo, 1u);
        WGMMA_TF32(d, ah[j], hi, 1u);
#endif
        waited = false;
#if PROMOTED
        if (q % STEPS_PER_PROMOTION == STEPS_PER_PROMOTION - 1 || q == last_q) {
            WG_COMMIT();
            WG_WAIT_ALL();
            #pragma unroll
            for (int i = 0; i < BN / 2; i++) {
                PIN(d[i]);
                acc[i] += d[i];
            }
            waited = true;
            WG_FENCE();
        }
#endif
    }
    if (!waited) {
        WG_COMMIT();
        WG_WAIT_ALL();
        #pragma unroll
        for (int i = 0; i < BN / 2; i++) {
            PIN(d[i]);
        }
    }
}

__kernel GEMMLAB_BOUNDS(32, BM / 16)
void tcwg_gemm(const int M, const int N, const int K, const float alpha, const float beta,
               const __global float* GEMMLAB_RESTRICT A, const __global float* GEMMLAB_RESTRICT B,
               __global float* C, __global float* work, __global int* counters) {
    // 16-byte chunks: cp.async's targets and wgmma's core matrices are 16-byte
    // aligned (AROW is a multiple of 8 floats, so B's tiles start aligned too).
    LOCAL_TILES(tiles16, (STAGES * BK * AROW + (STAGES + LO_BUFS) * BTILE) / 4);
    LOCAL_PTR float* As = (LOCAL_PTR float*)tiles16;
    LOCAL_PTR float* Bs = As + STAGES * BK * AROW;
    LOCAL_PTR float* Bl = Bs + STAGES * BTILE;  // two buffers of low parts

    const int tid = THREAD_X + 32 * THREAD_Y;
    const int g = THREAD_X / 4;
    const int t = THREAD_X % 4;
    // Warp THREAD_Y is warp THREAD_Y%4 of warpgroup THREAD_Y/4: rows 16*THREAD_Y + g (+8).
    const int row = 16 * THREAD_Y + g;
    int tm, tn;
    block_tile(GRID_X, GRID_Y, BLOCK_X, BLOCK_Y, &tm, &tn);
    const int m0 = tm * BM;
    const int n0 = tn * BN;

    float d[BN / 2], acc[BN / 2];
    #pragma unroll
    for (int i = 0; i < BN / 2; i++) {
        d[i] = 0.0f;
        acc[i] = 0.0f;
    }

    const int k_tiles = K / BK;
    const int last_q = k_tiles * STEPS - 1;
    #pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < k_tiles) {
            copy_tiles(A, B, As, Bs, M, K, m0, n0, s * BK, s, tid);
        }
        CP_COMMIT();
    }
    for (int kt = 0; kt < k_tiles; kt++) {
        CP_WAIT(STAGES - 2);
        const int stage = kt % STAGES;
#if !TF32_SINGLE
        split_b(Bs + stage * BTILE, Bl + (kt % 2) * BTILE, tid);
#endif
        PROXY_FENCE();
        BARRIER();
        const int next = kt + STAGES - 1;
        if (next < k_tiles) {
            copy_tiles(A, B, As, Bs, M, K, m0, n0, next * BK, next % STAGES, tid);
        }
        CP_COMMIT();
        compute_stage(As + stage * BK * AROW, Bs + stage * BTILE, Bl + (kt % 2) * BTILE,
                      d, acc, row, t, kt * STEPS, last_q);
    }
    CP_WAIT(0);

    // Thread (g, t) holds, for each 8 columns j of the tile, columns 8j+2t and
    // 8j+2t+1 of rows `row` (elements 4j, 4j+1) and `row`+8 (4j+2, 4j+3).
#if PROMOTED
    float* r = acc;
#else
    float* r = d;
#endif
    #pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        #pragma unroll
        for (int e = 0; e < 2; e++) {
            const int n = n0 + 8 * j + 2 * t + e;
            GLOBAL_PTR float* dst = C + n * M + m0 + row;
            float v0 = alpha * r[4 * j + e];
            float v1 = alpha * r[4 * j + 2 + e];
            if (beta != 0.0f) {
                v0 += beta * dst[0];
                v1 += beta * dst[8];
            }
            dst[0] = v0;
            dst[8] = v1;
        }
    }
}
