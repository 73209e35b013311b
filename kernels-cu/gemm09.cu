// myGEMM9 -- kernel 7 + prefetching (double-buffered shared tiles), CUDA twin.
//
// Idea: kernel 7 with two shared buffers for each of the A and BT tiles.
// While the block computes on tile t (buffer t%2), it already copies tile
// t+1 from global memory into the other buffer, so the global-memory
// latency of the next tile overlaps with the FMAs of the current one. A
// single __syncthreads per tile is enough: it sits at the top of the loop,
// after which (a) tile t is complete in buffer t%2 and (b) nobody still
// reads the other buffer, which held tile t-1.
// The tile copy is a helper function (called once before the loop and
// once per iteration); it is the load loop of kernel 7 unchanged.
//
// Parameters: TSM, TSN, TSK, WPTM, WPTN, WIDTH (as kernel 7).
// Derived: RTSM, RTSN, LPTA (as kernel 7).
// Launch: block (TSM/WPTM, TSN/WPTN), grid (M/TSM, N/TSN),
//         i.e. NDRange (M/WPTM, N/WPTN).
// Assumes: everything kernel 7 assumes: B TRANSPOSED (BT, N x K
//          column-major); M a multiple of TSM, N of TSN, K of TSK;
//          TSM == TSN; TSM % WPTM == 0; TSN % WPTN == 0; TSM % WIDTH == 0;
//          TSK*TSM a multiple of RTSM*RTSN*WIDTH; buffers aligned to WIDTH
//          floats.
// Shared memory: 2*(TSK*TSM + TSN*(TSK+2)) floats (34 KiB at the
//          defaults; the static limit is 48 KiB).
// Twin differences: as kernel 7 (float2/float4 as in OpenCL; WIDTH=8 uses
//          the plain float-aligned 8-float struct gemmlab_float8 instead of
//          OpenCL's float8). The helper is __forceinline__ here and a plain
//          function in OpenCL (whose NVIDIA compiler inlines it).

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
#error "myGEMM9: WIDTH must be 1, 2, 4 or 8"
#endif

#if TSM != TSN
#error "myGEMM9: TSM must equal TSN (use myGEMM10 for independent tiles)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM9: TSM must be a multiple of WPTM and TSN of WPTN"
#endif
#if (TSM % WIDTH) != 0
#error "myGEMM9: TSM must be a multiple of WIDTH"
#endif
#if ((TSK * TSM) % (RTSM * RTSN * WIDTH)) != 0
#error "myGEMM9: TSK*TSM must be a multiple of RTSM*RTSN*WIDTH"
#endif

// Copies tile t (k in [TSK*t, TSK*t+TSK)) of A and of BT into As and Bs.
__device__ __forceinline__
void gemm9_load_tile(const int M, const int N, const int t, const int tid,
                     const int offsetM, const int offsetN,
                     const floatX* Av, const floatX* Bv,
                     float As[TSK][TSM], float Bs[TSN][TSK + 2]) {
    GEMMLAB_UNROLL
    for (int la = 0; la < LPTA / WIDTH; la++) {
        GEMMLAB_IDX_QUALIFIER int id = la * RTSN * RTSM + tid;
        const int mnv = id % (TSM / WIDTH);          // vector index along M (A) / N (BT)
        const int kk = id / (TSM / WIDTH);           // k within the tile
        const int kg = TSK * t + kk;
        const floatX vecA = Av[kg * (M / WIDTH) + offsetM / WIDTH + mnv];
        const floatX vecB = Bv[kg * (N / WIDTH) + offsetN / WIDTH + mnv];
        float va[WIDTH];
        float vb[WIDTH];
        UNPACK_X(vecA, va);
        UNPACK_X(vecB, vb);
        GEMMLAB_UNROLL
        for (int w = 0; w < WIDTH; w++) {
            As[kk][WIDTH * mnv + w] = va[w];
            Bs[WIDTH * mnv + w][kk] = vb[w];
        }
    }
}

extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM9(const int M, const int N, const int K,
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

    __shared__ float Asub[2][TSK][TSM];              // Asub[buffer][k][m]
    __shared__ float Bsub[2][TSN][TSK + 2];          // Bsub[buffer][n][k], padded

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
    gemm9_load_tile(M, N, 0, tid, offsetM, offsetN, Av, Bv, Asub[0], Bsub[0]);

    for (int t = 0; t < numTiles; t++) {
        __syncthreads();
        const int cur = t % 2;
        if (t + 1 < numTiles) {
            gemm9_load_tile(M, N, t + 1, tid, offsetM, offsetN, Av, Bv,
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
