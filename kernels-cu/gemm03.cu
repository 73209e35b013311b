// myGEMM3 -- more work per work-item, CUDA twin.
//
// What it does: kernel 2 with each work-item computing WPT elements of C in
// one row, at columns col, col+RTS, col+2*RTS, ... (RTS = TS/WPT). The
// work-group is TS x RTS, the tile of C still TS x TS. Each work-item copies
// WPT elements of A and of B per tile, and a value read from Asub is used
// for WPT multiply-adds.
//
// Parameters: TS (tile size), WPT (elements of C per work-item along N).
// Derived: RTS = TS/WPT (work-group size along N).
// Launch: local (TS, RTS), global (M, N/WPT).
// Assumes: column-major A (M x K), B (K x N, not transposed), C (M x N);
//          M, N, K multiples of TS; TS a multiple of WPT.
// Shared memory: 2*TS*TS floats (8 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 0
//          (no pragma on the loop over k inside a tile), UNROLL_WPT 0 (no
//          pragma on the four loops over w).
// Twin differences: the body is the OpenCL twin's text after the
//          published cl_to_cuda.h mapping (__global dropped, __local as
//          __shared__, barrier as __syncthreads); get_*_id are the
//          prelude's int functions. extern "C" keeps the unmangled name
//          the host looks up.

#ifndef TS
#define TS 32
#endif
#ifndef WPT
#define WPT 8
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

#if (TS % WPT) != 0
#error "myGEMM3: TS must be a multiple of WPT"
#endif

// WPT elements of C per work-item
extern "C" __global__ GEMMLAB_BOUNDS(TS, RTS)
void myGEMM3(const int M, const int N, const int K,
             const float* GEMMLAB_RESTRICT A,
             const float* GEMMLAB_RESTRICT B,
             float* C) {

    // Work-item ids
    const int row = get_local_id(0); // local row (0..TS-1)
    const int col = get_local_id(1); // local column (0..RTS-1)
    const int globalRow = TS*get_group_id(0) + row; // row of C
    const int globalCol = TS*get_group_id(1) + col; // first column of C

    // One TS x TS tile of A and one of B
    __shared__ float Asub[TS][TS];
    __shared__ float Bsub[TS][TS];

    // The accumulators
    float acc[WPT];
    GEMMLAB_UNROLL_IF(UNROLL_WPT)
    for (int w=0; w<WPT; w++) {
        acc[w] = 0.0f;
    }

    // Loop over the tiles
    const int numTiles = K/TS;
    for (int t=0; t<numTiles; t++) {

        // Each work-item loads WPT elements of A and of B
        GEMMLAB_UNROLL_IF(UNROLL_WPT)
        for (int w=0; w<WPT; w++) {
            const int tiledRow = TS*t + row;
            const int tiledCol = TS*t + col;
            Asub[col + w*RTS][row] = A[(tiledCol + w*RTS)*M + globalRow];
            Bsub[col + w*RTS][row] = B[(globalCol + w*RTS)*K + tiledRow];
        }

        // Wait until the tile is in shared memory
        __syncthreads();

        // Compute on the tile
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TS; k++) {
            GEMMLAB_UNROLL_IF(UNROLL_WPT)
            for (int w=0; w<WPT; w++) {
                acc[w] += Asub[k][row] * Bsub[col + w*RTS][k];
            }
        }

        // Wait until everyone is done with the tile
        __syncthreads();
    }

    // Write the results to C
    GEMMLAB_UNROLL_IF(UNROLL_WPT)
    for (int w=0; w<WPT; w++) {
        C[(globalCol + w*RTS)*M + globalRow] = acc[w];
    }
}
