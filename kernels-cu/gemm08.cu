// myGEMM8 -- kernel 7 + read-only-cache loads + warp shuffles, CUDA twin.
//
// Idea: the tutorial's CUDA-specific kernel. Two changes to kernel 7:
// (1) The global loads that fill the shared tiles go through the read-only
//     (non-coherent) data cache: __ldg.
// (2) Warp shuffles replace most shared-memory reads of B in the inner loop.
//     Design: with the linear id tid = tidn*RTSM + tidm, a warp (32
//     consecutive tids) splits into aligned groups of SHG lanes that share
//     the same tidn, where SHG is the largest power of two dividing RTSM,
//     capped at 32 (SHG lanes from a multiple of SHG never cross a multiple
//     of RTSM). Lanes with the same tidn need the same B values,
//     Bsub[tidn + wn*RTSN][k], for every k. So after the tile is in shared
//     memory, the lane at position g of its group reads only the values at
//     k = g, g+SHG, g+2*SHG, ... into Bshare[wn][k/SHG] (KSH = ceil(TSK/SHG)
//     per wn), and in the k loop everyone takes Bsub[..][k] from lane
//     (group base + k%SHG) with __shfl_sync of Bshare[wn][k/SHG]. At the
//     defaults (SHG=16, TSK=16) a thread reads 8 B values from shared
//     memory per tile instead of 128, and does 128 shuffles. The A values
//     are still read from shared memory, as in kernel 7.
//     Needs full warps: RTSM*RTSN a multiple of 32; every thread runs every
//     shuffle (no divergence), so the full mask 0xffffffff is right.
//
// Parameters: TSM, TSN, TSK, WPTM, WPTN, WIDTH (as kernel 7).
// Derived: RTSM, RTSN, LPTA (as kernel 7); SHG (shuffle group size, see
//          above); KSH = ceil(TSK/SHG) (B values cached per wn per lane).
// Launch: block (TSM/WPTM, TSN/WPTN), grid (M/TSM, N/TSN),
//         i.e. NDRange (M/WPTM, N/WPTN).
// Assumes: everything kernel 7 assumes (B TRANSPOSED, TSM == TSN, tile
//          multiples, TSK*TSM a multiple of RTSM*RTSN*WIDTH), plus
//          RTSM*RTSN a multiple of 32 (lane = linear thread id % 32).
// Shared memory: TSK*TSM + TSN*(TSK+2) floats.
// Twin differences: this twin uses the CUDA intrinsics __ldg and
//          __shfl_sync; the OpenCL twin reaches the same instructions
//          through NVIDIA inline PTX (ld.global.nc, shfl.sync.idx.b32) and
//          exists only on NVIDIA OpenCL platforms. float/float2/float4 use
//          the vector __ldg overloads; CUDA has no float8, so WIDTH=8 reads
//          the plain 8-float struct gemmlab_float8 (float-aligned) with 8
//          scalar __ldg, where OpenCL's 32-byte-aligned float8 is read with
//          two 16-byte ld.global.nc.v4. The inner loops are identical.

#ifndef TSM
#define TSM 128
#endif
#ifndef TSN
#define TSN 128
#endif
#ifndef TSK
#define TSK 16
#endif
#ifndef WPTM
#define WPTM 8
#endif
#ifndef WPTN
#define WPTN 8
#endif
#ifndef WIDTH
#define WIDTH 4
#endif

#define RTSM (TSM / WPTM)
#define RTSN (TSN / WPTN)
#define LPTA ((TSK * TSM) / (RTSM * RTSN))
#define SHG ((RTSM % 32 == 0) ? 32 : (RTSM % 16 == 0) ? 16 : (RTSM % 8 == 0) ? 8 : \
             (RTSM % 4 == 0) ? 4 : (RTSM % 2 == 0) ? 2 : 1)
#define KSH ((TSK + SHG - 1) / SHG)

#if WIDTH == 1
typedef float floatX;
#define UNPACK_X(v, r) { (r)[0] = (v); }
#elif WIDTH == 2
typedef float2 floatX;
#define UNPACK_X(v, r) { (r)[0] = (v).x; (r)[1] = (v).y; }
#elif WIDTH == 4
typedef float4 floatX;
#define UNPACK_X(v, r) { (r)[0] = (v).x; (r)[1] = (v).y; (r)[2] = (v).z; (r)[3] = (v).w; }
#elif WIDTH == 8
typedef gemmlab_float8 floatX;
#define UNPACK_X(v, r) { (r)[0] = (v).s0; (r)[1] = (v).s1; (r)[2] = (v).s2; (r)[3] = (v).s3; \
                         (r)[4] = (v).s4; (r)[5] = (v).s5; (r)[6] = (v).s6; (r)[7] = (v).s7; }
#else
#error "myGEMM8: WIDTH must be 1, 2, 4 or 8"
#endif

#if TSM != TSN
#error "myGEMM8: TSM must equal TSN"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM8: TSM must be a multiple of WPTM and TSN of WPTN"
#endif
#if (TSM % WIDTH) != 0
#error "myGEMM8: TSM must be a multiple of WIDTH"
#endif
#if ((TSK * TSM) % (RTSM * RTSN * WIDTH)) != 0
#error "myGEMM8: TSK*TSM must be a multiple of RTSM*RTSN*WIDTH"
#endif
#if ((RTSM * RTSN) % 32) != 0
#error "myGEMM8: RTSM*RTSN must be a multiple of 32 (whole warps for the shuffles)"
#endif

// ---- begin CUDA intrinsic helpers (the OpenCL twin has inline PTX here) ----

// One floatX through the read-only data cache.
__device__ __forceinline__ floatX gemm8_ldg_x(const floatX* p) {
#if WIDTH == 8
    const float* f = reinterpret_cast<const float*>(p);
    gemmlab_float8 r;
    r.s0 = __ldg(f + 0); r.s1 = __ldg(f + 1); r.s2 = __ldg(f + 2); r.s3 = __ldg(f + 3);
    r.s4 = __ldg(f + 4); r.s5 = __ldg(f + 5); r.s6 = __ldg(f + 6); r.s7 = __ldg(f + 7);
    return r;
#else
    return __ldg(p);
#endif
}

// Value of v held by lane srcLane of my warp. All 32 lanes must execute it.
__device__ __forceinline__ float gemm8_shfl(const float v, const int srcLane) {
    return __shfl_sync(0xffffffffu, v, srcLane);
}

// ---- end CUDA intrinsic helpers ----

extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM8(const int M, const int N, const int K,
             const float* __restrict__ A,
             const float* __restrict__ B,
             float* C) {
    const floatX* Av = reinterpret_cast<const floatX*>(A);
    const floatX* Bv = reinterpret_cast<const floatX*>(B);

    const int tidm = (int)threadIdx.x;               // 0..RTSM-1
    const int tidn = (int)threadIdx.y;               // 0..RTSN-1
    const int offsetM = TSM * (int)blockIdx.x;
    const int offsetN = TSN * (int)blockIdx.y;
    const int tid = tidn * RTSM + tidm;              // linear id in the block
    const int lane = tid % 32;                       // lane in the warp
    const int gpos = lane % SHG;                     // position in my shuffle group
    const int gbase = lane - gpos;                   // first lane of my shuffle group

    __shared__ float Asub[TSK][TSM];                 // Asub[k][m]
    __shared__ float Bsub[TSN][TSK + 2];             // Bsub[n][k], padded

    float Areg;
    float Breg[WPTN];
    float Bshare[WPTN][KSH];
    float acc[WPTM][WPTN];

    GEMMLAB_UNROLL
    for (int wm = 0; wm < WPTM; wm++) {
        GEMMLAB_UNROLL
        for (int wn = 0; wn < WPTN; wn++) {
            acc[wm][wn] = 0.0f;
        }
    }

    const int numTiles = K / TSK;
    for (int t = 0; t < numTiles; t++) {
        GEMMLAB_UNROLL
        for (int la = 0; la < LPTA / WIDTH; la++) {
            GEMMLAB_IDX_QUALIFIER int id = la * RTSN * RTSM + tid;
            const int mnv = id % (TSM / WIDTH);      // vector index along M (A) / N (BT)
            const int kk = id / (TSM / WIDTH);       // k within the tile
            const int kg = TSK * t + kk;
            const floatX vecA = gemm8_ldg_x(Av + (kg * (M / WIDTH) + offsetM / WIDTH + mnv));
            const floatX vecB = gemm8_ldg_x(Bv + (kg * (N / WIDTH) + offsetN / WIDTH + mnv));
            float va[WIDTH];
            float vb[WIDTH];
            UNPACK_X(vecA, va);
            UNPACK_X(vecB, vb);
            GEMMLAB_UNROLL
            for (int w = 0; w < WIDTH; w++) {
                Asub[kk][WIDTH * mnv + w] = va[w];
                Bsub[WIDTH * mnv + w][kk] = vb[w];
            }
        }
        __syncthreads();

        // My share of the B values my shuffle group needs in this tile.
        GEMMLAB_UNROLL
        for (int wn = 0; wn < WPTN; wn++) {
            GEMMLAB_UNROLL
            for (int s = 0; s < KSH; s++) {
                const int kk = s * SHG + gpos;
#if (TSK % SHG) == 0
                Bshare[wn][s] = Bsub[tidn + wn * RTSN][kk];
#else
                Bshare[wn][s] = Bsub[tidn + wn * RTSN][(kk < TSK) ? kk : (TSK - 1)];
#endif
            }
        }

        GEMMLAB_UNROLL
        for (int k = 0; k < TSK; k++) {
            GEMMLAB_UNROLL
            for (int wn = 0; wn < WPTN; wn++) {
                Breg[wn] = gemm8_shfl(Bshare[wn][k / SHG], gbase + (k % SHG));
            }
            GEMMLAB_UNROLL
            for (int wm = 0; wm < WPTM; wm++) {
                Areg = Asub[k][tidm + wm * RTSM];
                GEMMLAB_UNROLL
                for (int wn = 0; wn < WPTN; wn++) {
                    acc[wm][wn] += Areg * Breg[wn];
                }
            }
        }
        __syncthreads();
    }

    GEMMLAB_UNROLL
    for (int wm = 0; wm < WPTM; wm++) {
        const int gRow = offsetM + tidm + wm * RTSM;
        GEMMLAB_UNROLL
        for (int wn = 0; wn < WPTN; wn++) {
            const int gCol = offsetN + tidn + wn * RTSN;
            C[gCol * M + gRow] = acc[wm][wn];
        }
    }
}
