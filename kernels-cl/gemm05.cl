// myGEMM5 -- transposed B, rectangular tiles, OpenCL twin.
//
// What it does: kernel 3 with B given transposed (N x K) and tiles that are
// TSDK deep along K instead of TS. A TS x RTS work-group computes a TS x TS
// tile of C, WPT elements per work-item along N. Per tile, each work-item
// copies LPT elements of A and of B^T into local memory; the tile of B is
// stored as Bsub[n][k] with 2 floats of padding per row against bank
// conflicts.
//
// Parameters: TS (tile size along M and N), WPT (elements of C per
//             work-item along N), TSDK (tile depth along K).
// Derived: RTS = TS/WPT (work-group size along N),
//          LPT = (TSDK*WPT)/TS (loads per work-item per tile, of A and B).
// Launch: local (TS, RTS), global (M, N/WPT).
// Assumes: column-major A (M x K) and C (M x N), B TRANSPOSED (N x K,
//          element (n,k) at k*N + n); M, N multiples of TS, K of TSDK;
//          TSDK*WPT a multiple of TS.
// Local memory: TSDK*TS + TS*(TSDK+2) floats (4.25 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 0
//          (no pragma on the loop over k inside a tile), UNROLL_WPT 0 (no
//          pragma on the loops over w and l).
// Twin differences: none beyond the cl_to_cuda.h mapping.

#ifndef TS
#define TS 32
#endif
#ifndef WPT
#define WPT 8
#endif
#ifndef TSDK
#define TSDK 16
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
#ifndef UNROLL_WPT
#define UNROLL_WPT 0
#endif

#define RTS (TS/WPT)
#define LPT ((TSDK*WPT)/(TS))

#if (TS % WPT) != 0
#error "myGEMM5: TS must be a multiple of WPT"
#endif
#if ((TSDK*WPT) % TS) != 0
#error "myGEMM5: TSDK*WPT must be a multiple of TS (whole loads per work-item)"
#endif

// B transposed, tiles TSDK deep along K
__kernel GEMMLAB_BOUNDS(TS, RTS)
void myGEMM5(const int M, const int N, const int K,
             const __global float* GEMMLAB_RESTRICT A,
             const __global float* GEMMLAB_RESTRICT B,
             __global float* C) {

    // Work-item ids
    const int row = get_local_id(0); // local row (0..TS-1)
    const int col = get_local_id(1); // local column (0..RTS-1)
    const int globalRow = TS*get_group_id(0) + row; // row of C
    const int globalCol = TS*get_group_id(1) + col; // first column of C

    // One tile of A and one of B^T (padded)
    __local float Asub[TSDK][TS];
    __local float Bsub[TS][TSDK+2];

    // The accumulators
    float acc[WPT];
    GEMMLAB_UNROLL_IF(UNROLL_WPT)
    for (int w=0; w<WPT; w++) {
        acc[w] = 0.0f;
    }

    // Loop over the tiles
    const int numTiles = K/TSDK;
    for (int t=0; t<numTiles; t++) {

        // Each work-item loads LPT elements of A and of B^T
        GEMMLAB_UNROLL_IF(UNROLL_WPT)
        for (int l=0; l<LPT; l++) {
            const int tiledIndex = TSDK*t + col + l*RTS;
            int indexA = (tiledIndex)*M + TS*get_group_id(0) + row;
            int indexB = (tiledIndex)*N + TS*get_group_id(1) + row;
            Asub[col + l*RTS][row] = A[indexA];
            Bsub[row][col + l*RTS] = B[indexB];
        }

        // Wait until the tile is in local memory
        barrier(CLK_LOCAL_MEM_FENCE);

        // Compute on the tile
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TSDK; k++) {
            GEMMLAB_UNROLL_IF(UNROLL_WPT)
            for (int w=0; w<WPT; w++) {
                acc[w] += Asub[k][row] * Bsub[col + w*RTS][k];
            }
        }

        // Wait until everyone is done with the tile
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    // Write the results to C
    GEMMLAB_UNROLL_IF(UNROLL_WPT)
    for (int w=0; w<WPT; w++) {
        C[(globalCol + w*RTS)*M + globalRow] = acc[w];
    }
}
