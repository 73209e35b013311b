// myGEMM8 -- kernel 7 + read-only-cache loads + warp shuffles, OpenCL twin.
//
// Idea: the tutorial's CUDA-specific kernel. Two changes to kernel 7:
// (1) The global loads that fill the local tiles go through the read-only
//     (non-coherent) data cache: CUDA's __ldg, PTX ld.global.nc.
// (2) Warp shuffles replace most local-memory reads of B in the inner loop.
//     Design: with the linear id tid = tidn*RTSM + tidm, a warp (32
//     consecutive tids) splits into aligned groups of SHG lanes that share
//     the same tidn, where SHG is the largest power of two dividing RTSM,
//     capped at 32 (SHG lanes from a multiple of SHG never cross a multiple
//     of RTSM). Lanes with the same tidn need the same B values,
//     Bsub[tidn + wn*RTSN][k], for every k. So after the tile is in local
//     memory, the lane at position g of its group reads only the values at
//     k = g, g+SHG, g+2*SHG, ... into Bshare[wn][k/SHG] (KSH = ceil(TSK/SHG)
//     per wn), and in the k loop everyone takes Bsub[..][k] from lane
//     (group base + k%SHG) with a shuffle of Bshare[wn][k/SHG]. At the
//     defaults (SHG=16, TSK=16) a work-item reads 8 B values from local
//     memory per tile instead of 128, and does 128 shuffles. The A values
//     are still read from local memory, as in kernel 7.
//     Needs full warps: RTSM*RTSN a multiple of 32; every work-item runs
//     every shuffle (no divergence), so the full mask 0xffffffff is right.
//
// Parameters: TSM, TSN, TSK, WPTM, WPTN, WIDTH (as kernel 7).
// Derived: RTSM, RTSN, LPTA (as kernel 7); SHG (shuffle group size, see
//          above); KSH = ceil(TSK/SHG) (B values cached per wn per lane).
// Launch: local (TSM/WPTM, TSN/WPTN), global (M/WPTM, N/WPTN).
// Assumes: everything kernel 7 assumes (B TRANSPOSED, TSM == TSN, tile
//          multiples, TSK*TSM a multiple of RTSM*RTSN*WIDTH), plus
//          RTSM*RTSN a multiple of 32, and a warp of 32 lanes in which
//          lane = (local linear id) % 32, as on NVIDIA hardware.
// Local memory: TSK*TSM + TSN*(TSK+2) floats.
// Twin differences: OpenCL C has neither shuffles nor __ldg. This twin
//          uses NVIDIA inline PTX (shfl.sync.idx.b32 and ld.global.nc,
//          64-bit addresses through the "l" constraint), compiled only
//          when the host defines GEMMLAB_NVIDIA_PTX (NVIDIA OpenCL
//          platforms); elsewhere the file stops with #error. Loads: float,
//          float2, float4 map to ld.global.nc.{f32,v2.f32,v4.f32}; float8
//          is 32-byte aligned in OpenCL and is loaded as two v4.f32 loads,
//          whereas the CUDA twin's 8-float struct is only float-aligned and
//          is loaded with 8 scalar __ldg. The inner loops are identical.

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
typedef float8 floatX;
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

// ---- begin NVIDIA PTX helpers ----
#ifndef GEMMLAB_NVIDIA_PTX
#error "myGEMM8 needs NVIDIA inline PTX (warp shuffles and ld.global.nc have no OpenCL C equivalent)"
#else

// One floatX through the read-only data cache (CUDA: __ldg).
floatX gemm8_ldg_x(const __global floatX* p) {
#if WIDTH == 1
    float r0;
    asm("ld.global.nc.f32 %0, [%1];"
        : "=f"(r0) : "l"((ulong)p));
    return r0;
#elif WIDTH == 2
    float r0, r1;
    asm("ld.global.nc.v2.f32 {%0, %1}, [%2];"
        : "=f"(r0), "=f"(r1) : "l"((ulong)p));
    return (float2)(r0, r1);
#elif WIDTH == 4
    float r0, r1, r2, r3;
    asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(r0), "=f"(r1), "=f"(r2), "=f"(r3) : "l"((ulong)p));
    return (float4)(r0, r1, r2, r3);
#else
    float r0, r1, r2, r3, r4, r5, r6, r7;
    asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%8];\n\t"
        "ld.global.nc.v4.f32 {%4, %5, %6, %7}, [%8+16];"
        : "=f"(r0), "=f"(r1), "=f"(r2), "=f"(r3),
          "=f"(r4), "=f"(r5), "=f"(r6), "=f"(r7) : "l"((ulong)p));
    return (float8)(r0, r1, r2, r3, r4, r5, r6, r7);
#endif
}

// Value of v held by lane srcLane of my warp (CUDA: __shfl_sync with the
// full mask). All 32 lanes must execute it.
float gemm8_shfl(const float v, const int srcLane) {
    float r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=f"(r) : "f"(v), "r"(srcLane));
    return r;
}

#endif
// ---- end NVIDIA PTX helpers ----

__kernel GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM8(const int M, const int N, const int K,
             const __global float* restrict A,
             const __global float* restrict B,
             __global float* C) {
    const __global floatX* Av = (const __global floatX*)A;
    const __global floatX* Bv = (const __global floatX*)B;

    const int tidm = (int)get_local_id(0);           // 0..RTSM-1
    const int tidn = (int)get_local_id(1);           // 0..RTSN-1
    const int offsetM = TSM * (int)get_group_id(0);
    const int offsetN = TSN * (int)get_group_id(1);
    const int tid = tidn * RTSM + tidm;              // linear id in the group
    const int lane = tid % 32;                       // lane in the warp
    const int gpos = lane % SHG;                     // position in my shuffle group
    const int gbase = lane - gpos;                   // first lane of my shuffle group

    __local float Asub[TSK][TSM];                    // Asub[k][m]
    __local float Bsub[TSN][TSK + 2];                // Bsub[n][k], padded

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
        barrier(CLK_LOCAL_MEM_FENCE);

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
        barrier(CLK_LOCAL_MEM_FENCE);
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
