// myGEMM10 -- kernel 9 with separate A and B tile loads (TSM != TSN allowed), CUDA twin.
//
// What it does: kernel 9's prefetching (two shared-memory buffers per
// operand: compute on tile t in buffer t%2 while loading tile t+1 into the
// other), with the A and B tile loads in separate loops, LPTA and LPTB
// vector loads per thread, so the tile sizes in M and N may differ. The
// block id is used directly (gidm, gidn) and the linear thread id tid is
// computed once at the top. The __syncthreads sits at the start of each
// loop iteration. The published comment says "with support for incomplete
// tiles and arbitrary matrix sizes": the kernel itself does no bounds
// checks; that support is the host padding the operands to tile multiples.
//
// Parameters: TSM, TSN (tile size in M, N), TSK (tile size in K),
//             WPTM, WPTN (work per thread in M, N), WIDTH (1, 2 or 4:
//             floats per global load; the published kernel has no WIDTH 8
//             store branch).
// Derived: RTSM = TSM/WPTM, RTSN = TSN/WPTN (block size),
//          LPTA = (TSK*WPTM*WPTN)/TSN, LPTB = (TSK*WPTM*WPTN)/TSM (floats
//          each thread loads per tile of A, of B). The published aliases
//          BK, BN, BM, TX, TY, RX, RY are defined as well (unused).
// Launch: block (RTSM, RTSN), grid (M/TSM, N/TSN), i.e. NDRange
//         (M/WPTM, N/WPTN).
// Assumes: column-major A (M x K) and C (M x N), B TRANSPOSED (N x K,
//          element (n,k) at k*N + n); M a multiple of TSM, N of TSN, K a
//          multiple of TSK and K >= TSK (do-while loop); TSK*WPTM*WPTN a
//          multiple of TSN*WIDTH and of TSM*WIDTH; buffers aligned to WIDTH
//          floats (A and B are read as floatX).
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
#define LPTB ((TSK*WPTM*WPTN)/(TSM))

#if WIDTH != 1 && WIDTH != 2 && WIDTH != 4
#error "myGEMM10: WIDTH must be 1, 2 or 4 (the published local-memory stores have no WIDTH 8 branch)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM10: TSM must be a multiple of WPTM and TSN a multiple of WPTN"
#endif
#if (TSM % WIDTH) != 0 || (TSN % WIDTH) != 0
#error "myGEMM10: TSM and TSN must be multiples of WIDTH"
#endif
#if ((TSK*WPTM*WPTN) % (TSN*WIDTH)) != 0
#error "myGEMM10: TSK*WPTM*WPTN must be a multiple of TSN*WIDTH (whole vector loads of A per work-item)"
#endif
#if ((TSK*WPTM*WPTN) % (TSM*WIDTH)) != 0
#error "myGEMM10: TSK*WPTM*WPTN must be a multiple of TSM*WIDTH (whole vector loads of B per work-item)"
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

// Published aliases of the kernel-10 parameters (unused by the kernel)
#define BK TSK
#define BN TSN
#define BM TSM
#define TX RTSM
#define TY RTSN
#define RX WPTM
#define RY WPTN

// Prefetching with separate A and B tile loads
extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM10(const int M, const int N, const int K,
              const floatX* GEMMLAB_RESTRICT A,
              const floatX* GEMMLAB_RESTRICT B,
              float* C) {

    // Work-item and work-group ids
    const int tidm = get_local_id(0); // local row (0..RTSM-1)
    const int tidn = get_local_id(1); // local column (0..RTSN-1)
    const int gidm = get_group_id(0); // work-group id in M
    const int gidn = get_group_id(1); // work-group id in N
    const int tid = tidn*RTSM + tidm; // linear id in the work-group (0..RTSM*RTSN-1)

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

    // Tile 0 of A into buffer 0
    #pragma unroll
    for (int la=0; la<LPTA/WIDTH; la++) {
        GEMMLAB_VOLATILE_IDX int id = la*RTSN*RTSM + tid;
        int row = MOD2(id,TSM/WIDTH);
        int col = DIV2(id,TSM/WIDTH);

        // One vector load
        int tiledIndex = TSK*0 + col;
        int indexA = tiledIndex*(M/WIDTH) + gidm*(TSM/WIDTH) + row;
        #if USE_LDG
            floatX vecA = __ldg(&A[indexA]);
        #else
            floatX vecA = A[indexA];
        #endif

        // Scatter the vector into local memory
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
    }

    // Tile 0 of B into buffer 0
    #pragma unroll
    for (int lb=0; lb<LPTB/WIDTH; lb++) {
        GEMMLAB_VOLATILE_IDX int id = lb*RTSN*RTSM + tid;
        int row = MOD2(id,TSN/WIDTH);
        int col = DIV2(id,TSN/WIDTH);

        // One vector load
        int tiledIndex = TSK*0 + col;
        int indexB = tiledIndex*(N/WIDTH) + gidn*(TSN/WIDTH) + row;
        #if USE_LDG
            floatX vecB = __ldg(&B[indexB]);
        #else
            floatX vecB = B[indexB];
        #endif

        // Scatter the vector into local memory
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

    // Loop over the tiles
    const int numTiles = K/TSK;
    int t=0;
    do {

        // Tile t is loaded, and nobody reads the buffer of tile t-1 any more
        __syncthreads();

        // Prefetch tile t+1 into the other buffer
        int tt = t + 1;
        if (tt < numTiles) {

            // Tile of A
            #pragma unroll
            for (int la=0; la<LPTA/WIDTH; la++) {
                GEMMLAB_VOLATILE_IDX int id = la*RTSN*RTSM + tid;
                int row = MOD2(id,TSM/WIDTH);
                int col = DIV2(id,TSM/WIDTH);

                // One vector load
                int tiledIndex = TSK*tt + col;
                int indexA = tiledIndex*(M/WIDTH) + gidm*(TSM/WIDTH) + row;
                #if USE_LDG
                    floatX vecA = __ldg(&A[indexA]);
                #else
                    floatX vecA = A[indexA];
                #endif

                // Scatter the vector into local memory
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
            }

            // Tile of B
            #pragma unroll
            for (int lb=0; lb<LPTB/WIDTH; lb++) {
                GEMMLAB_VOLATILE_IDX int id = lb*RTSN*RTSM + tid;
                int row = MOD2(id,TSN/WIDTH);
                int col = DIV2(id,TSN/WIDTH);

                // One vector load
                int tiledIndex = TSK*tt + col;
                int indexB = tiledIndex*(N/WIDTH) + gidn*(TSN/WIDTH) + row;
                #if USE_LDG
                    floatX vecB = __ldg(&B[indexB]);
                #else
                    floatX vecB = B[indexB];
                #endif

                // Scatter the vector into local memory
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

        // Next tile
        t++;
    } while (t<numTiles);

    // Write the results to C
    #pragma unroll
    for (int wm=0; wm<WPTM; wm++) {
        int globalRow = gidm*TSM + tidm + wm*RTSM;
        #pragma unroll
        for (int wn=0; wn<WPTN; wn++) {
            int globalCol = gidn*TSN + tidn + wn*RTSN;
            C[globalCol*M + globalRow] = acc[wm][wn];
        }
    }
}
