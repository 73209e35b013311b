// myGEMM8 -- kernel 7 + CUDA/Kepler-specific loads and shuffles, CUDA twin.
//
// What it does: kernel 7 with two optional NVIDIA-specific changes, as the
// tutorial published them:
//   USE_LDG     the wide global loads of the tiles go through the read-only
//               (non-coherent) data cache: __ldg(&A[indexA]).
//   USE_SHUFFLE in the k loop each thread reads ONE value of Bsub,
//               Bsub[k][tidn + (tidm % WPTN)*RTSN], and gets its WPTN
//               values Breg[wn] from the WPTN lanes of its warp segment
//               with a shuffle (lane wn of a WPTN-wide segment). Correct
//               only when the WPTN lanes of a segment share one tidn and
//               lane % WPTN == tidm % WPTN: RTSM a multiple of WPTN, WPTN
//               a power of two <= 32, whole warps (RTSM*RTSN a multiple of
//               32); checked below with #error.
// The published file also holds a commented-out shuffle block for Asub
// (dead code); it is left out here.
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
// Shared memory: TSK*(TSM + TSN) floats (16 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 1
//          (the published '#pragma unroll' on the k loop), VOLATILE_IDX 0,
//          USE_LDG 1 here (the published CUDA build defined it; the
//          published OpenCL build did not), USE_SHUFFLE 0 (commented out
//          in the published CUDA build).
// Twin differences: the body is the OpenCL twin's text after the
//          published cl_to_cuda.h mapping; get_local_id/get_group_id are
//          the prelude's int functions. __ldg is CUDA's own (float, float2,
//          float4); the OpenCL twin reaches ld.global.nc through inline
//          PTX. The published shuffle __shfl(val, wn, WPTN) has no mask;
//          the maskless __shfl is gone for sm_70+, so this twin calls
//          __shfl_sync(0xffffffff, val, wn, WPTN) (all lanes take part),
//          where the OpenCL twin calls gemmlab_shfl(val, wn, WPTN).
//          extern "C" keeps the unmangled name the host looks up.

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
#ifndef USE_SHUFFLE
#define USE_SHUFFLE 0
#endif

#define RTSM (TSM/WPTM)
#define RTSN (TSN/WPTN)
#define LPTA ((TSK*WPTM*WPTN)/(TSN))

#if WIDTH != 1 && WIDTH != 2 && WIDTH != 4
#error "myGEMM8: WIDTH must be 1, 2 or 4 (the published local-memory stores have no WIDTH 8 branch)"
#endif
#if TSM != TSN
#error "myGEMM8: TSM must equal TSN (B uses the A-tile load pattern and LPTA)"
#endif
#if (TSM % WPTM) != 0 || (TSN % WPTN) != 0
#error "myGEMM8: TSM must be a multiple of WPTM and TSN a multiple of WPTN"
#endif
#if (TSM % WIDTH) != 0 || (TSN % WIDTH) != 0
#error "myGEMM8: TSM and TSN must be multiples of WIDTH"
#endif
#if ((TSK*WPTM*WPTN) % (TSN*WIDTH)) != 0
#error "myGEMM8: TSK*WPTM*WPTN must be a multiple of TSN*WIDTH (whole vector loads per work-item)"
#endif

#if USE_SHUFFLE
#if WPTN > 32 || (WPTN & (WPTN - 1)) != 0
#error "myGEMM8: USE_SHUFFLE=1 needs WPTN a power of two <= 32 (the shuffle width)"
#endif
#if (RTSM % WPTN) != 0
#error "myGEMM8: USE_SHUFFLE=1 needs RTSM a multiple of WPTN (the WPTN lanes of a shuffle segment must share one tidn)"
#endif
#if ((RTSM*RTSN) % 32) != 0
#error "myGEMM8: USE_SHUFFLE=1 needs RTSM*RTSN a multiple of 32 (whole warps)"
#endif
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

// Kernel 7 with loads through the read-only cache (USE_LDG) and warp
// shuffles for Breg (USE_SHUFFLE): CUDA/Kepler-specific optimisations
extern "C" __global__ GEMMLAB_BOUNDS(RTSM, RTSN)
void myGEMM8(const int M, const int N, const int K,
             const floatX* GEMMLAB_RESTRICT A,
             const floatX* GEMMLAB_RESTRICT B,
             float* C) {

    // Work-item ids
    const int tidm = get_local_id(0); // local row (0..RTSM-1)
    const int tidn = get_local_id(1); // local column (0..RTSN-1)
    const int offsetM = TSM*get_group_id(0); // first row of the work-group's tile
    const int offsetN = TSN*get_group_id(1); // first column of the work-group's tile

    // One tile of A and one of B in local memory
    __shared__ float Asub[TSK][TSM];
    __shared__ float Bsub[TSK][TSN];

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
        __syncthreads();

        // Compute on the tile
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TSK; k++) {

            // Bsub values of this k into registers
            #if USE_SHUFFLE
                int col = tidn + (tidm % WPTN)*RTSN;
                float val = Bsub[k][col];
                #pragma unroll
                for (int wn=0; wn<WPTN; wn++) {
                    Breg[wn] = __shfl_sync(0xffffffff, val, wn, WPTN);
                }
            #else
                #pragma unroll
                for (int wn=0; wn<WPTN; wn++) {
                    int col = tidn + wn*RTSN;
                    Breg[wn] = Bsub[k][col];
                }
            #endif

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
