// myGEMM7 -- 2D register blocking + wide loads, OpenCL twin.
//
// What it does: kernel 6, but the tiles of A and of the transposed B are
// read from global memory as vectors of WIDTH floats (floatX), so each
// work-item issues LPTA/WIDTH wide loads per operand and tile instead of
// LPTA scalar ones. The vectors are split into floats when stored to local
// memory. Both tiles are now stored k-major without padding (Asub[k][m],
// Bsub[k][n]), so the B tile is no longer transposed on the way in.
//
// Parameters: TSM, TSN (tile size in M, N), TSK (tile size in K),
//             WPTM, WPTN (work per work-item in M, N), WIDTH (1, 2 or 4:
//             floats per global load; the published kernel has no WIDTH 8
//             store branch).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN (work-group size),
//          LPTA = (TSK*WPTM*WPTN)/TSN (floats each work-item loads per
//          tile of A, and of B as TSM == TSN).
// Launch: local (RTSM, RTSN), global (M/WPTM, N/WPTN).
// Assumes: column-major A (M x K) and C (M x N), B TRANSPOSED (N x K,
//          element (n,k) at k*N + n); M a multiple of TSM, N of TSN, K a
//          multiple of TSK and K >= TSK (do-while loop); TSM == TSN;
//          (TSK*WPTM*WPTN) a multiple of TSN*WIDTH; buffers aligned to
//          WIDTH floats (A and B are read as floatX).
// Local memory: TSK*(TSM + TSN) floats (16 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 1
//          (the published '#pragma unroll' on the k loop), VOLATILE_IDX 0.
// Twin differences: none beyond the cl_to_cuda.h mapping.

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

#ifndef USE_BOUNDS
#define USE_BOUNDS 0
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 0
#endif
#ifndef UNROLL_K
#define UNROLL_K 1
#endif
#ifndef VOLATILE_IDX
#define VOLATILE_IDX 0
#endif

#define RTSM (TSM/WPTM)
#define RTSN (TSN/WPTN)
#define LPTA ((TSK*WPTM*WPTN)/(TSN))

#if WIDTH != 1 && WIDTH != 2 && WIDTH != 4
#error "myGEMM7: WIDTH must be 1, 2 or 4 (the published local-memory stores have no WIDTH 8 branch)"
#endif
#if TSM != TSN
#error "myGEMM7: TSM must equal TSN (B uses the A-tile load pattern and LPTA)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM7: TSM must be a multiple of WPTM and TSN a multiple of WPTN"
#endif
#if (TSM % WIDTH) != 0 || (TSN % WIDTH) != 0
#error "myGEMM7: TSM and TSN must be multiples of WIDTH"
#endif
#if ((TSK*WPTM*WPTN) % (TSN*WIDTH)) != 0
#error "myGEMM7: TSK*WPTM*WPTN must be a multiple of TSN*WIDTH (whole vector loads per work-item)"
#endif

// Data width of the global loads
#if WIDTH == 1
    typedef float floatX;
#elif WIDTH == 2
    typedef float2 floatX;
#elif WIDTH == 4
    typedef float4 floatX;
#elif WIDTH == 8
    typedef float8 floatX;
#endif

// Wide (floatX) global loads combined with 2D register blocking
__kernel GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM7(const int M, const int N, const int K,
             const __global floatX* GEMMLAB_RESTRICT A,
             const __global floatX* GEMMLAB_RESTRICT B,
             __global float* C) {

    // Work-item ids
    const int tidm = get_local_id(0); // local row (0..RTSM-1)
    const int tidn = get_local_id(1); // local column (0..RTSN-1)
    const int offsetM = TSM*get_group_id(0); // first row of the work-group's tile
    const int offsetN = TSN*get_group_id(1); // first column of the work-group's tile

    // One tile of A and one of B in local memory
    __local float Asub[TSK][TSM];
    __local float Bsub[TSK][TSN];

    // Registers
    float Areg;
    float Breg[WPTN];
    float acc[WPTM][WPTN];

    // Zero the accumulators
    #pragma unroll
    for (int wm=0; wm<WPTM; wm++) {
        #pragma unroll
        for (int wn=0; wn<WPTN; wn++) {
            acc[wm][wn] = 0.0f;
        }
    }

    // Loop over the tiles
    const int numTiles = K/TSK;
    int t=0;
    do {

        // Load tile t of A and B into local memory
        #pragma unroll
        for (int la=0; la<LPTA/WIDTH; la++) {
            int tid = tidn*RTSM + tidm;
            GEMMLAB_VOLATILE_IDX int id = la*RTSN*RTSM + tid;
            int row = MOD2(id,TSM/WIDTH);
            int col = DIV2(id,TSM/WIDTH);

            // One vector load each from A and B
            int tiledIndex = TSK*t + col;
            floatX vecA = A[tiledIndex*(M/WIDTH) + offsetM/WIDTH + row];
            floatX vecB = B[tiledIndex*(N/WIDTH) + offsetN/WIDTH + row];

            // Scatter the vectors into local memory
            #if WIDTH == 1
                Asub[col][row] = vecA;
            #elif WIDTH == 2
                Asub[col][WIDTH*row + 0] = vecA.x;
                Asub[col][WIDTH*row + 1] = vecA.y;
            #elif WIDTH == 4
                Asub[col][WIDTH*row + 0] = vecA.x;
                Asub[col][WIDTH*row + 1] = vecA.y;
                Asub[col][WIDTH*row + 2] = vecA.z;
                Asub[col][WIDTH*row + 3] = vecA.w;
            #endif
            #if WIDTH == 1
                Bsub[col][row] = vecB;
            #elif WIDTH == 2
                Bsub[col][WIDTH*row + 0] = vecB.x;
                Bsub[col][WIDTH*row + 1] = vecB.y;
            #elif WIDTH == 4
                Bsub[col][WIDTH*row + 0] = vecB.x;
                Bsub[col][WIDTH*row + 1] = vecB.y;
                Bsub[col][WIDTH*row + 2] = vecB.z;
                Bsub[col][WIDTH*row + 3] = vecB.w;
            #endif
        }

        // Wait until the tile is in local memory
        barrier(CLK_LOCAL_MEM_FENCE);

        // Compute on the tile
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TSK; k++) {

            // Bsub values of this k into registers
            #pragma unroll
            for (int wn=0; wn<WPTN; wn++) {
                int col = tidn + wn*RTSN;
                Breg[wn] = Bsub[k][col];
            }

            // Multiply-accumulate
            #pragma unroll
            for (int wm=0; wm<WPTM; wm++) {
                int row = tidm + wm*RTSM;
                Areg = Asub[k][row];
                #pragma unroll
                for (int wn=0; wn<WPTN; wn++) {
                    acc[wm][wn] += Areg * Breg[wn];
                }
            }
        }

        // Wait until everyone is done with the tile
        barrier(CLK_LOCAL_MEM_FENCE);

        // Next tile
        t++;
    } while (t<numTiles);

    // Write the results to C
    #pragma unroll
    for (int wm=0; wm<WPTM; wm++) {
        int globalRow = offsetM + tidm + wm*RTSM;
        #pragma unroll
        for (int wn=0; wn<WPTN; wn++) {
            int globalCol = offsetN + tidn + wn*RTSN;
            C[globalCol*M + globalRow] = acc[wm][wn];
        }
    }
}
