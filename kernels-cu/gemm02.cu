// myGEMM2 -- tiling in shared (local) memory, CUDA twin.
//
// Idea: a TS x TS block computes a TS x TS tile of C. The K dimension is
// walked in steps of TS: per step every thread copies one element of A and
// one of B into shared memory, the block synchronises, and then each thread
// runs a TS-long dot product out of shared memory. Each global value is now
// read by one thread instead of TS.
//
// Parameters: TS (block is TS x TS, tiles are TS x TS).
// Launch: block (TS,TS), grid (M/TS, N/TS), i.e. NDRange (M,N).
// Assumes: column-major A (MxK), B (KxN, not transposed), C (MxN);
//          M, N, K multiples of TS. C = A*B, C overwritten.
// Shared memory: 2*TS*TS floats (8 KiB for TS=32).
// Twin differences: none beyond syntax (__shared__/__syncthreads vs
//          __local/barrier).

#ifndef TS
#define TS 32
#endif

extern "C" __global__ GEMMLAB_BOUNDS(TS, TS)
void myGEMM2(const int M, const int N, const int K,
             const float* __restrict__ A,
             const float* __restrict__ B,
             float* C) {
    const int row = (int)threadIdx.x;                // 0..TS-1, along M
    const int col = (int)threadIdx.y;                // 0..TS-1, along N
    const int gRow = TS * (int)blockIdx.x + row;
    const int gCol = TS * (int)blockIdx.y + col;

    __shared__ float Asub[TS][TS];                   // Asub[k][m]
    __shared__ float Bsub[TS][TS];                   // Bsub[n][k]

    float acc = 0.0f;
    const int numTiles = K / TS;
    for (int t = 0; t < numTiles; t++) {
        const int kA = TS * t + col;                 // k of the A element I copy
        const int kB = TS * t + row;                 // k of the B element I copy
        Asub[col][row] = A[kA * M + gRow];
        Bsub[col][row] = B[gCol * K + kB];
        __syncthreads();

        GEMMLAB_UNROLL
        for (int k = 0; k < TS; k++) {
            acc += Asub[k][row] * Bsub[col][k];
        }
        __syncthreads();
    }
    C[gCol * M + gRow] = acc;
}
