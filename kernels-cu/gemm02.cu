// myGEMM2 -- local-memory tiles, CUDA twin.
//
// What it does: a TS x TS work-group computes a TS x TS tile of C. For each
// of the K/TS tiles along K, every work-item copies one element of A and
// one of B into local memory, the group synchronises, and each work-item
// accumulates TS products from local memory: every global element is read
// once per work-group instead of once per work-item.
//
// Parameters: TS (tile size along M, N and K).
// Launch: local (TS, TS), global (M, N).
// Assumes: column-major A (M x K), B (K x N, not transposed), C (M x N);
//          M, N, K multiples of TS.
// Shared memory: 2*TS*TS floats (8 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 0
//          (the published loop over k inside a tile has no pragma).
// Twin differences: the body is the OpenCL twin's text after the
//          published cl_to_cuda.h mapping (__global dropped, __local as
//          __shared__, barrier as __syncthreads); get_*_id are the
//          prelude's int functions. extern "C" keeps the unmangled name
//          the host looks up.

#ifndef TS
#define TS 32
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

// Tiles of A and B staged in shared memory
extern "C" __global__ GEMMLAB_BOUNDS(TS, TS)
void myGEMM2(const int M, const int N, const int K,
             const float* GEMMLAB_RESTRICT A,
             const float* GEMMLAB_RESTRICT B,
             float* C) {

    // Work-item ids
    const int row = get_local_id(0); // local row (0..TS-1)
    const int col = get_local_id(1); // local column (0..TS-1)
    const int globalRow = TS*get_group_id(0) + row; // row of C
    const int globalCol = TS*get_group_id(1) + col; // column of C

    // One TS x TS tile of A and one of B
    __shared__ float Asub[TS][TS];
    __shared__ float Bsub[TS][TS];

    // The accumulator
    float acc = 0.0f;

    // Loop over the tiles
    const int numTiles = K/TS;
    for (int t=0; t<numTiles; t++) {

        // Each work-item loads one element of A and one of B
        const int tiledRow = TS*t + row;
        const int tiledCol = TS*t + col;
        Asub[col][row] = A[tiledCol*M + globalRow];
        Bsub[col][row] = B[globalCol*K + tiledRow];

        // Wait until the tile is in shared memory
        __syncthreads();

        // Compute on the tile
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TS; k++) {
            acc += Asub[k][row] * Bsub[col][k];
        }

        // Wait until everyone is done with the tile
        __syncthreads();
    }

    // Write the result to C
    C[globalCol*M + globalRow] = acc;
}
