// myGEMM7 -- 2D register blocking + wide loads into shared memory, CUDA twin.
//
// Idea: kernel 6, but the tiles of A and BT are copied from global memory
// as vectors of WIDTH floats (along M for A, along N for BT), so each
// thread issues LPTA/WIDTH wide loads per tile instead of LPTA scalar ones.
// The vectors are split into scalars when written to shared memory, which
// keeps the layout (and the compute loop) of kernel 6.
//
// Parameters: TSM, TSN, TSK, WPTM, WPTN (as kernel 6), WIDTH (1, 2, 4, 8).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN, LPTA = TSK*TSM/(RTSM*RTSN).
// Launch: block (TSM/WPTM, TSN/WPTN), grid (M/TSM, N/TSN),
//         i.e. NDRange (M/WPTM, N/WPTN).
// Assumes: column-major A (MxK) and C (MxN); B TRANSPOSED (BT, N x K
//          column-major); M a multiple of TSM, N of TSN, K of TSK;
//          TSM == TSN; TSM % WPTM == 0; TSN % WPTN == 0; TSM % WIDTH == 0;
//          TSK*TSM a multiple of RTSM*RTSN*WIDTH (whole vector loads per
//          thread); buffers aligned to WIDTH floats (float pointers are
//          viewed as vectors).
// Shared memory: TSK*TSM + TSN*(TSK+2) floats.
// Twin differences: float2/float4 loads as in OpenCL; CUDA has no float8,
//          so WIDTH=8 loads gemmlab_float8, a plain 8-float struct that is
//          only float-aligned (8 scalar loads where OpenCL's float8 is one
//          32-byte vector load). Part of what is measured.

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
#error "myGEMM7: WIDTH must be 1, 2, 4 or 8"
#endif

#if TSM != TSN
#error "myGEMM7: TSM must equal TSN (use myGEMM10 for independent tiles)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM7: TSM must be a multiple of WPTM and TSN of WPTN"
#endif
#if (TSM % WIDTH) != 0
#error "myGEMM7: TSM must be a multiple of WIDTH"
#endif
#if ((TSK * TSM) % (RTSM * RTSN * WIDTH)) != 0
#error "myGEMM7: TSK*TSM must be a multiple of RTSM*RTSN*WIDTH"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM7(const int M, const int N, const int K,
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

    __shared__ float Asub[TSK][TSM];                 // Asub[k][m]
    __shared__ float Bsub[TSN][TSK + 2];             // Bsub[n][k], padded

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
        for (int la = 0; la < LPTA / WIDTH; la++) {
            GEMMLAB_IDX_QUALIFIER int id = la * RTSN * RTSM + tid;
            const int mnv = id % (TSM / WIDTH);      // vector index along M (A) / N (BT)
            const int kk = id / (TSM / WIDTH);       // k within the tile
            const int kg = TSK * t + kk;
            const floatX vecA = Av[kg * (M / WIDTH) + offsetM / WIDTH + mnv];
            const floatX vecB = Bv[kg * (N / WIDTH) + offsetN / WIDTH + mnv];
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
