// myGEMM6 -- 2D register blocking, CUDA twin.
//
// What it does: each thread computes a WPTM x WPTN block of C, its
// elements strided by RTSM along M and RTSN along N (the block is
// RTSM x RTSN). A TSM x TSN tile of C is built from TSK-deep tiles of A and
// of the transposed B staged in shared memory. For every k of a tile a
// thread caches WPTN values of Bsub in registers (Breg), then for each of
// its WPTM rows one value of Asub (Areg), and does WPTM*WPTN multiply-adds:
// WPTM+WPTN shared reads per WPTM*WPTN FMAs. The tile loop is a do-while.
// The tile of B is stored transposed in shared memory (Bsub[n][k]) with 2
// floats of padding per row against bank conflicts.
//
// Parameters: TSM, TSN (tile size in M, N), TSK (tile size in K),
//             WPTM, WPTN (work per thread in M, N).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN (block size),
//          LPTA = (TSK*WPTM*WPTN)/TSN (floats each thread loads per tile
//          of A, and of B as TSM == TSN).
// Launch: block (RTSM, RTSN), grid (M/TSM, N/TSN), i.e. NDRange
//         (M/WPTM, N/WPTN).
// Assumes: column-major A (M x K) and C (M x N), B TRANSPOSED (N x K,
//          element (n,k) at k*N + n); M a multiple of TSM, N of TSN, K a
//          multiple of TSK and K >= TSK (do-while loop); TSM == TSN (one
//          load loop fills both tiles); TSK*WPTM*WPTN a multiple of TSN.
// Shared memory: TSK*TSM + TSN*(TSK+2) floats (17 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 0
//          (the published k loop has no '#pragma unroll'), VOLATILE_IDX 0
//          (1 makes the tile-load index 'volatile', the tutorial's remedy
//          for a compiler that precomputes all load indices in registers).
// Twin differences: the body is the OpenCL twin's text after the
//          published cl_to_cuda.h mapping; get_local_id/get_group_id are
//          the prelude's int functions. extern "C" keeps the unmangled
//          name the host looks up.

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

#ifndef USE_BOUNDS
#define USE_BOUNDS 0
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 0
#endif
#ifndef UNROLL_K
#define UNROLL_K 0
#endif
#ifndef VOLATILE_IDX
#define VOLATILE_IDX 0
#endif

#define RTSM (TSM/WPTM)
#define RTSN (TSN/WPTN)
#define LPTA ((TSK*WPTM*WPTN)/(TSN))

#if TSM != TSN
#error "myGEMM6: TSM must equal TSN (B uses the A-tile load pattern and LPTA)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM6: TSM must be a multiple of WPTM and TSN a multiple of WPTN"
#endif
#if ((TSK*WPTM*WPTN) % TSN) != 0
#error "myGEMM6: TSK*WPTM*WPTN must be a multiple of TSN (whole loads per work-item)"
#endif

// 2D register blocking: a WPTM x WPTN block of C per work-item
extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM6(const int M, const int N, const int K,
             const float* GEMMLAB_RESTRICT A,
             const float* GEMMLAB_RESTRICT B,
             float* C) {

    // Work-item ids
    const int tidm = get_local_id(0); // local row (0..RTSM-1)
    const int tidn = get_local_id(1); // local column (0..RTSN-1)
    const int offsetM = TSM*get_group_id(0); // first row of the work-group's tile
    const int offsetN = TSN*get_group_id(1); // first column of the work-group's tile

    // One tile of A and one of B in local memory
    __shared__ float Asub[TSK][TSM];
    __shared__ float Bsub[TSN][TSK+2];

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
        for (int la=0; la<LPTA; la++) {
            int tid = tidn*RTSM + tidm;
            GEMMLAB_VOLATILE_IDX int id = la*RTSN*RTSM + tid;
            int row = MOD2(id,TSM);
            int col = DIV2(id,TSM);
            int tiledIndex = TSK*t + col;
            Asub[col][row] = A[tiledIndex*M + offsetM + row];
            Bsub[row][col] = B[tiledIndex*N + offsetN + row];
        }

        // Wait until the tile is in local memory
        __syncthreads();

        // Compute on the tile
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TSK; k++) {

            // Bsub values of this k into registers
            #pragma unroll
            for (int wn=0; wn<WPTN; wn++) {
                int col = tidn + wn*RTSN;
                Breg[wn] = Bsub[col][k];
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
        __syncthreads();

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
