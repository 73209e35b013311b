// myGEMM10 -- kernel 9 with independent TSM and TSN, OpenCL twin.
//
// Idea: kernel 9 (wide loads, double-buffered local tiles, one barrier per
// tile) generalised so that the C tile may be rectangular: the A tile
// (TSK x TSM) and the BT tile (TSK x TSN) are copied by separate loops with
// their own loads-per-thread counts, LPTA and LPTB. In the tutorial this
// is the kernel used for arbitrary sizes: the host zero-pads M, N and K up
// to the tile multiples (and un-pads C) and times that separately; the
// kernel itself sees tile multiples only.
//
// Parameters: TSM, TSN, TSK, WPTM, WPTN, WIDTH (as kernel 7; TSM and TSN
//             independent).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN (work-group size),
//          LPTA = TSK*TSM/(RTSM*RTSN), LPTB = TSK*TSN/(RTSM*RTSN).
// Launch: local (TSM/WPTM, TSN/WPTN), global (M/WPTM, N/WPTN), on the
//         padded sizes.
// Assumes: column-major A (MxK) and C (MxN); B TRANSPOSED (BT, N x K
//          column-major); M a multiple of TSM, N of TSN, K of TSK;
//          TSM % WPTM == 0; TSN % WPTN == 0; TSM and TSN multiples of
//          WIDTH; TSK*TSM and TSK*TSN multiples of RTSM*RTSN*WIDTH;
//          buffers aligned to WIDTH floats.
// Local memory: 2*(TSK*TSM + TSN*(TSK+2)) floats.
// Twin differences: as kernel 9.

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
#define LPTB ((TSK * TSN) / (RTSM * RTSN))

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
#error "myGEMM10: WIDTH must be 1, 2, 4 or 8"
#endif

#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM10: TSM must be a multiple of WPTM and TSN of WPTN"
#endif
#if (TSM % WIDTH) != 0 || (TSN % WIDTH) != 0
#error "myGEMM10: TSM and TSN must be multiples of WIDTH"
#endif
#if ((TSK * TSM) % (RTSM * RTSN * WIDTH)) != 0
#error "myGEMM10: TSK*TSM must be a multiple of RTSM*RTSN*WIDTH"
#endif
#if ((TSK * TSN) % (RTSM * RTSN * WIDTH)) != 0
#error "myGEMM10: TSK*TSN must be a multiple of RTSM*RTSN*WIDTH"
#endif

// Copies tile t (k in [TSK*t, TSK*t+TSK)) of A into As and of BT into Bs.
void gemm10_load_tile(const int M, const int N, const int t, const int tid,
                      const int offsetM, const int offsetN,
                      const __global floatX* Av, const __global floatX* Bv,
                      __local float As[TSK][TSM], __local float Bs[TSN][TSK + 2]) {
    GEMMLAB_UNROLL
    for (int la = 0; la < LPTA / WIDTH; la++) {
        GEMMLAB_IDX_QUALIFIER int id = la * RTSN * RTSM + tid;
        const int mv = id % (TSM / WIDTH);           // vector index along M
        const int kk = id / (TSM / WIDTH);           // k within the tile
        const floatX vecA = Av[(TSK * t + kk) * (M / WIDTH) + offsetM / WIDTH + mv];
        float va[WIDTH];
        UNPACK_X(vecA, va);
        GEMMLAB_UNROLL
        for (int w = 0; w < WIDTH; w++) {
            As[kk][WIDTH * mv + w] = va[w];
        }
    }
    GEMMLAB_UNROLL
    for (int lb = 0; lb < LPTB / WIDTH; lb++) {
        GEMMLAB_IDX_QUALIFIER int id = lb * RTSN * RTSM + tid;
        const int nv = id % (TSN / WIDTH);           // vector index along N
        const int kk = id / (TSN / WIDTH);           // k within the tile
        const floatX vecB = Bv[(TSK * t + kk) * (N / WIDTH) + offsetN / WIDTH + nv];
        float vb[WIDTH];
        UNPACK_X(vecB, vb);
        GEMMLAB_UNROLL
        for (int w = 0; w < WIDTH; w++) {
            Bs[WIDTH * nv + w][kk] = vb[w];
        }
    }
}

__kernel GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM10(const int M, const int N, const int K,
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

    __local float Asub[2][TSK][TSM];                 // Asub[buffer][k][m]
    __local float Bsub[2][TSN][TSK + 2];             // Bsub[buffer][n][k], padded

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
    gemm10_load_tile(M, N, 0, tid, offsetM, offsetN, Av, Bv, Asub[0], Bsub[0]);

    for (int t = 0; t < numTiles; t++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int cur = t % 2;
        if (t + 1 < numTiles) {
            gemm10_load_tile(M, N, t + 1, tid, offsetM, offsetN, Av, Bv,
                             Asub[1 - cur], Bsub[1 - cur]);
        }

        GEMMLAB_UNROLL
        for (int k = 0; k < TSK; k++) {
            GEMMLAB_UNROLL
            for (int wn = 0; wn < WPTN; wn++) {
                Breg[wn] = Bsub[cur][tidn + wn * RTSN][k];
            }
            GEMMLAB_UNROLL
            for (int wm = 0; wm < WPTM; wm++) {
                Areg = Asub[cur][k][tidm + wm * RTSM];
                GEMMLAB_UNROLL
                for (int wn = 0; wn < WPTN; wn++) {
                    acc[wm][wn] += Areg * Breg[wn];
                }
            }
        }
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
