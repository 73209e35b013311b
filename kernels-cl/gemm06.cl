// myGEMM6 -- 2D register blocking, OpenCL twin.
//
// Idea: each work-item owns a WPTM x WPTN block of C, its elements strided
// by RTSM along M and RTSN along N (RTSM x RTSN is the work-group). A
// TSM x TSN tile of C is computed from TSK-deep tiles of A and BT staged
// in local memory. For every k of a tile a work-item reads WPTN values of
// Bsub into registers (Breg), then for each of its WPTM rows one value of
// Asub (Areg), and does WPTM*WPTN multiply-adds: (WPTM+WPTN) local reads
// per WPTM*WPTN FMAs instead of 2 per FMA.
// Tile loading: the RTSM*RTSN work-items copy the TSK x TSM tile of A and
// the TSK x TSN tile of BT in LPTA rounds, consecutive work-items reading
// consecutive addresses. The tutorial notes this kernel is fragile: the
// compiler tends to precompute the load indices of all rounds before the
// tile loop and keeps them in registers. VOLATILE_IDX=1 makes the load
// index 'volatile' (GEMMLAB_IDX_QUALIFIER) to forbid that.
//
// Parameters: TSM, TSN (tile of C), TSK (tile depth), WPTM, WPTN (work per
//             thread along M and N).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN (work-group size),
//          LPTA = TSK*TSM/(RTSM*RTSN) (elements of A each work-item loads
//          per tile; the same count for BT because TSN == TSM).
// Launch: local (TSM/WPTM, TSN/WPTN), global (M/WPTM, N/WPTN).
// Assumes: column-major A (MxK) and C (MxN); B TRANSPOSED (BT, N x K
//          column-major); M a multiple of TSM, N of TSN, K of TSK;
//          TSM == TSN (one load loop serves both tiles; kernel 10 lifts
//          this); TSM % WPTM == 0; TSN % WPTN == 0;
//          TSK*TSM a multiple of RTSM*RTSN.
// Local memory: TSK*TSM + TSN*(TSK+2) floats (17 KiB at the defaults).
// Twin differences: none beyond syntax.

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

#define RTSM (TSM / WPTM)
#define RTSN (TSN / WPTN)
#define LPTA ((TSK * TSM) / (RTSM * RTSN))

#if TSM != TSN
#error "myGEMM6: TSM must equal TSN (use myGEMM10 for independent tiles)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM6: TSM must be a multiple of WPTM and TSN of WPTN"
#endif
#if ((TSK * TSM) % (RTSM * RTSN)) != 0
#error "myGEMM6: TSK*TSM must be a multiple of RTSM*RTSN"
#endif

__kernel GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM6(const int M, const int N, const int K,
             const __global float* restrict A,
             const __global float* restrict B,
             __global float* C) {
    const int tidm = (int)get_local_id(0);           // 0..RTSM-1
    const int tidn = (int)get_local_id(1);           // 0..RTSN-1
    const int offsetM = TSM * (int)get_group_id(0);
    const int offsetN = TSN * (int)get_group_id(1);
    const int tid = tidn * RTSM + tidm;              // linear id in the group

    __local float Asub[TSK][TSM];                    // Asub[k][m]
    __local float Bsub[TSN][TSK + 2];                // Bsub[n][k], padded

    float Areg;
    float Breg[WPTN];
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
        for (int la = 0; la < LPTA; la++) {
            GEMMLAB_IDX_QUALIFIER int id = la * RTSN * RTSM + tid;
            const int mn = id % TSM;                 // m for A, n for BT
            const int kk = id / TSM;                 // k within the tile
            const int kg = TSK * t + kk;
            Asub[kk][mn] = A[kg * M + offsetM + mn];
            Bsub[mn][kk] = B[kg * N + offsetN + mn];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        GEMMLAB_UNROLL
        for (int k = 0; k < TSK; k++) {
            GEMMLAB_UNROLL
            for (int wn = 0; wn < WPTN; wn++) {
                Breg[wn] = Bsub[tidn + wn * RTSN][k];
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
