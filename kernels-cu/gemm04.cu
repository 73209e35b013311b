// myGEMM4 -- wide loads, CUDA twin.
//
// What it does: kernel 2 with vectors of WIDTH floats. A and C are read and
// written as vectors along M, B as vectors along K (both contiguous in
// column-major storage). A (TS/WIDTH) x TS work-group covers a TS x TS tile
// of C; each work-item owns one vector of WIDTH rows of C in one column.
// Per tile, each work-item copies one vector of A and one of B into local
// memory (kept as vectors); then for each vector of B it picks the w-th
// component with a switch statement and adds vecA * valB component by
// component.
//
// Parameters: TS (tile size), WIDTH (vector width: 1, 2, 4 or 8).
// Launch: local (TS/WIDTH, TS), global (M/WIDTH, N).
// Assumes: column-major A (M x K), B (K x N, not transposed), C (M x N);
//          M, N, K multiples of TS; TS a multiple of WIDTH; buffers aligned
//          to WIDTH floats.
// Shared memory: 2*TS*TS floats (8 KiB at the defaults).
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 0
//          (no pragma on the loop over the vectors of a tile), UNROLL_WPT 0
//          (no pragma on the loop over the WIDTH components, w).
// Twin differences: the body is the OpenCL twin's text after the
//          published cl_to_cuda.h mapping (__global dropped, __local as
//          __shared__, barrier as __syncthreads); get_*_id are the
//          prelude's int functions. extern "C" keeps the unmangled name
//          the host looks up.
//          float8 is the published plain struct of 8 floats (prelude.cu),
//          only float-aligned, so WIDTH=8 moves it as 8 scalars where
//          OpenCL moves a 32-byte vector.

#ifndef TS
#define TS 32
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
#define UNROLL_K 0
#endif
#ifndef UNROLL_WPT
#define UNROLL_WPT 0
#endif

#if WIDTH == 1
    typedef float floatX;
#elif WIDTH == 2
    typedef float2 floatX;
#elif WIDTH == 4
    typedef float4 floatX;
#elif WIDTH == 8
    typedef float8 floatX;
#else
#error "myGEMM4: WIDTH must be 1, 2, 4 or 8"
#endif

#if (TS % WIDTH) != 0
#error "myGEMM4: TS must be a multiple of WIDTH"
#endif

// Operands and result as vectors of WIDTH floats
extern "C" __global__ GEMMLAB_BOUNDS(TS/WIDTH, TS)
void myGEMM4(const int M, const int N, const int K,
             const floatX* GEMMLAB_RESTRICT A,
             const floatX* GEMMLAB_RESTRICT B,
             floatX* C) {

    // Work-item ids
    const int row = get_local_id(0); // local vector row (0..TS/WIDTH-1)
    const int col = get_local_id(1); // local column (0..TS-1)
    const int globalRow = (TS/WIDTH)*get_group_id(0) + row; // vector row of C
    const int globalCol = TS*get_group_id(1) + col; // column of C

    // One tile of A and one of B, as vectors
    __shared__ floatX Asub[TS][TS/WIDTH];
    __shared__ floatX Bsub[TS][TS/WIDTH];

    // The accumulator: one vector
    #if WIDTH == 1
        floatX acc = 0.0f;
    #elif WIDTH == 2
        floatX acc = { 0.0f, 0.0f };
    #elif WIDTH == 4
        floatX acc = { 0.0f, 0.0f, 0.0f, 0.0f };
    #elif WIDTH == 8
        floatX acc = { 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f };
    #endif

    // Loop over the tiles
    const int numTiles = K/TS;
    for (int tile=0; tile<numTiles; tile++) {

        // Each work-item loads one vector of A and one of B
        const int tiledRow = (TS/WIDTH)*tile + row;
        const int tiledCol = TS*tile + col;
        Asub[col][row] = A[tiledCol*(M/WIDTH) + globalRow];
        Bsub[col][row] = B[globalCol*(K/WIDTH) + tiledRow];

        // Wait until the tile is in shared memory
        __syncthreads();

        // Compute on the tile, one vector of B at a time
        floatX vecA, vecB;
        float valB;
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<TS/WIDTH; k++) {
            vecB = Bsub[col][k];
            GEMMLAB_UNROLL_IF(UNROLL_WPT)
            for (int w=0; w<WIDTH; w++) {
                vecA = Asub[WIDTH*k + w][row];
                #if WIDTH == 1
                    valB = vecB;
                    acc += vecA * valB;
                #elif WIDTH == 2
                    switch (w) {
                        case 0: valB = vecB.x; break;
                        case 1: valB = vecB.y; break;
                    }
                    acc.x += vecA.x * valB;
                    acc.y += vecA.y * valB;
                #elif WIDTH == 4
                    switch (w) {
                        case 0: valB = vecB.x; break;
                        case 1: valB = vecB.y; break;
                        case 2: valB = vecB.z; break;
                        case 3: valB = vecB.w; break;
                    }
                    acc.x += vecA.x * valB;
                    acc.y += vecA.y * valB;
                    acc.z += vecA.z * valB;
                    acc.w += vecA.w * valB;
                #elif WIDTH == 8
                    switch (w) {
                        case 0: valB = vecB.s0; break;
                        case 1: valB = vecB.s1; break;
                        case 2: valB = vecB.s2; break;
                        case 3: valB = vecB.s3; break;
                        case 4: valB = vecB.s4; break;
                        case 5: valB = vecB.s5; break;
                        case 6: valB = vecB.s6; break;
                        case 7: valB = vecB.s7; break;
                    }
                    acc.s0 += vecA.s0 * valB;
                    acc.s1 += vecA.s1 * valB;
                    acc.s2 += vecA.s2 * valB;
                    acc.s3 += vecA.s3 * valB;
                    acc.s4 += vecA.s4 * valB;
                    acc.s5 += vecA.s5 * valB;
                    acc.s6 += vecA.s6 * valB;
                    acc.s7 += vecA.s7 * valB;
                #endif
            }
        }

        // Wait until everyone is done with the tile
        __syncthreads();
    }

    // Write the result to C
    C[globalCol*(M/WIDTH) + globalRow] = acc;
}
