// myGEMM9 -- kernel 8 (LDG, no shuffles) + prefetching, CUDA twin.
//
// What it does: the 2D register-blocked kernel with wide loads (kernel 7/8)
// with two shared-memory buffers per operand. While the block computes on
// tile t (buffer t%2) it already loads tile t+1 from global memory into the
// other buffer (buffer (t+1)%2), so the loads overlap the FMAs. The first
// tile is loaded before the loop; one __syncthreads per tile, at the end of
// the loop body. The tiles are flat arrays: Asub[b][k*TSM + m],
// Bsub[b][k*TSN + n].
//
// Parameters: TSM, TSN (tile size in M, N), TSK (tile size in K),
//             WPTM, WPTN (work per thread in M, N), WIDTH (1, 2 or 4:
//             floats per global load; the published kernel has no WIDTH 8
//             store branch).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN (block size),
//          LPTA = (TSK*WPTM*WPTN)/TSN (floats each thread loads per tile
//          of A, and of B as TSM == TSN).
// Launch: block (RTSM, RTSN), grid (M/TSM, N/TSN), i.e. NDRange
//         (M/WPTM, N/WPTN).
// Assumes: column-major A (M x K) and C (M x N), B TRANSPOSED (N x K,
//          element (n,k) at k*N + n); M a multiple of TSM, N of TSN, K a
//          multiple of TSK and K >= TSK (do-while loop); TSM == TSN;
//          (TSK*WPTM*WPTN) a multiple of TSN*WIDTH; buffers aligned to
//          WIDTH floats (A and B are read as floatX).
// Shared memory: 2*TSK*(TSM + TSN) floats (32 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 1
//          (the published '#pragma unroll' on the k loop), VOLATILE_IDX 0,
//          USE_LDG 1 here (the published CUDA build defined it; the
//          published OpenCL build did not).
// Twin differences: the body is the OpenCL twin's text after the
//          published cl_to_cuda.h mapping; get_local_id/get_group_id are
//          the prelude's int functions. __ldg is CUDA's own (float, float2,
//          float4); the OpenCL twin reaches ld.global.nc through inline
//          PTX. extern "C" keeps the unmangled name the host looks up.

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
#ifndef USE_LDG
#define USE_LDG 1
#endif

#define RTSM (TSM/WPTM)
#define RTSN (TSN/WPTN)
#define LPTA ((TSK*WPTM*WPTN)/(TSN))

#if WIDTH != 1 && WIDTH != 2 && WIDTH != 4
#error "myGEMM9: WIDTH must be 1, 2 or 4 (the published local-memory stores have no WIDTH 8 branch)"
#endif
#if TSM != TSN
#error "myGEMM9: TSM must equal TSN (B uses the A-tile load pattern and LPTA)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM9: TSM must be a multiple of WPTM and TSN a multiple of WPTN"
#endif
#if (TSM % WIDTH) != 0 || (TSN % WIDTH) != 0
#error "myGEMM9: TSM and TSN must be multiples of WIDTH"
#endif
#if ((TSK*WPTM*WPTN) % (TSN*WIDTH)) != 0
#error "myGEMM9: TSK*WPTM*WPTN must be a multiple of TSN*WIDTH (whole vector loads per work-item)"
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

// Prefetching: compute on one pair of local tiles while loading the next
extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM9(const int M, const int N, const int K,
             const floatX* GEMMLAB_RESTRICT A,
             const floatX* GEMMLAB_RESTRICT B,
             float* C) {

    // Work-item ids
    const int tidm = get_local_id(0); // local row (0..RTSM-1)
    const int tidn = get_local_id(1); // local column (0..RTSN-1)
    const int offsetM = TSM*get_group_id(0); // first row of the work-group's tile
    const int offsetN = TSN*get_group_id(1); // first column of the work-group's tile

    // Two tiles of A and two of B in local memory
    __shared__ float Asub[2][TSK*TSM];
    __shared__ float Bsub[2][TSK*TSN];

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

    // Load tile 0 of A and B into buffer 0
    #pragma unroll
    for (int la=0; la<LPTA/WIDTH; la++) {
        int tid = tidn*RTSM + tidm;
        GEMMLAB_VOLATILE_IDX int id = la*RTSN*RTSM + tid;
        int row = MOD2(id,TSM/WIDTH);
        int col = DIV2(id,TSM/WIDTH);

        // One vector load each from A and B
        int tiledIndex = TSK*0 + col;
        int indexA = tiledIndex*(M/WIDTH) + offsetM/WIDTH + row;
        int indexB = tiledIndex*(N/WIDTH) + offsetN/WIDTH + row;
        #if USE_LDG
            floatX vecA = __ldg(&A[indexA]);
            floatX vecB = __ldg(&B[indexB]);
        #else
            floatX vecA = A[indexA];
            floatX vecB = B[indexB];
        #endif

        // Scatter the vectors into local memory
        #if WIDTH == 1
            Asub[0][col*TSM + row] = vecA;
        #elif WIDTH == 2
            Asub[0][col*TSM + WIDTH*row + 0] = vecA.x;
            Asub[0][col*TSM + WIDTH*row + 1] = vecA.y;
        #elif WIDTH == 4
            Asub[0][col*TSM + WIDTH*row + 0] = vecA.x;
            Asub[0][col*TSM + WIDTH*row + 1] = vecA.y;
            Asub[0][col*TSM + WIDTH*row + 2] = vecA.z;
            Asub[0][col*TSM + WIDTH*row + 3] = vecA.w;
        #endif
        #if WIDTH == 1
            Bsub[0][col*TSN + row] = vecB;
        #elif WIDTH == 2
            Bsub[0][col*TSN + WIDTH*row + 0] = vecB.x;
            Bsub[0][col*TSN + WIDTH*row + 1] = vecB.y;
        #elif WIDTH == 4
            Bsub[0][col*TSN + WIDTH*row + 0] = vecB.x;
            Bsub[0][col*TSN + WIDTH*row + 1] = vecB.y;
            Bsub[0][col*TSN + WIDTH*row + 2] = vecB.z;
            Bsub[0][col*TSN + WIDTH*row + 3] = vecB.w;
        #endif
    }

    // Wait until tile 0 is in local memory
    __syncthreads();

    // Loop over the tiles
    const int numTiles = K/TSK;
    int t=0;
    do {

        // Prefetch tile t+1 into the other buffer
        int tt = t + 1;
        if (tt < numTiles) {
            #pragma unroll
            for (int la=0; la<LPTA/WIDTH; la++) {
                int tid = tidn*RTSM + tidm;
                GEMMLAB_VOLATILE_IDX int id = la*RTSN*RTSM + tid;
                int row = MOD2(id,TSM/WIDTH);
                int col = DIV2(id,TSM/WIDTH);

                // One vector load each from A and B
                int tiledIndex = TSK*tt + col;
                int indexA = tiledIndex*(M/WIDTH) + offsetM/WIDTH + row;
                int indexB = tiledIndex*(N/WIDTH) + offsetN/WIDTH + row;
                #if USE_LDG
                    floatX vecA = __ldg(&A[indexA]);
                    floatX vecB = __ldg(&B[indexB]);
                #else
                    floatX vecA = A[indexA];
                    floatX vecB = B[indexB];
                #endif

                // Scatter the vectors into local memory
                #if WIDTH == 1
                    Asub[tt%2][col*TSM + row] = vecA;
                #elif WIDTH == 2
                    Asub[tt%2][col*TSM + WIDTH*row + 0] = vecA.x;
                    Asub[tt%2][col*TSM + WIDTH*row + 1] = vecA.y;
                #elif WIDTH == 4
                    Asub[tt%2][col*TSM + WIDTH*row + 0] = vecA.x;
                    Asub[tt%2][col*TSM + WIDTH*row + 1] = vecA.y;
                    Asub[tt%2][col*TSM + WIDTH*row + 2] = vecA.z;
                    Asub[tt%2][col*TSM + WIDTH*row + 3] = vecA.w;
                #endif
                #if WIDTH == 1
                    Bsub[tt%2][col*TSN + row] = vecB;
                #elif WIDTH == 2
                    Bsub[tt%2][col*TSN + WIDTH*row + 0] = vecB.x;
                    Bsub[tt%2][col*TSN + WIDTH*row + 1] = vecB.y;
                #elif WIDTH == 4
                    Bsub[tt%2][col*TSN + WIDTH*row + 0] = vecB.x;
                    Bsub[tt%2][col*TSN + WIDTH*row + 1] = vecB.y;
                    Bsub[tt%2][col*TSN + WIDTH*row + 2] = vecB.z;
                    Bsub[tt%2][col*TSN + WIDTH*row + 3] = vecB.w;
                #endif
            }
        }

        // Compute on tile t
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TSK; k++) {

            // Bsub values of this k into registers
            #pragma unroll
            for (int wn=0; wn<WPTN; wn++) {
                int col = tidn + wn*RTSN;
                Breg[wn] = Bsub[t%2][k*TSN + col];
            }

            // Multiply-accumulate
            #pragma unroll
            for (int wm=0; wm<WPTM; wm++) {
                int row = tidm + wm*RTSM;
                Areg = Asub[t%2][k*TSM + row];
                #pragma unroll
                for (int wn=0; wn<WPTN; wn++) {
                    acc[wm][wn] += Areg * Breg[wn];
                }
            }
        }

        // Wait until everyone is done with tile t and tile t+1 is loaded
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
