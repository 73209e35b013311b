// myGEMM2 -- tiling in local memory, OpenCL twin.
//
// Idea: a TS x TS work-group computes a TS x TS tile of C. The K dimension
// is walked in steps of TS: per step every work-item copies one element of
// A and one of B into local memory, the group synchronises, and then each
// work-item runs a TS-long dot product out of local memory. Each global
// value is now read by one work-item instead of TS.
//
// Parameters: TS (work-group is TS x TS, tiles are TS x TS).
// Launch: local (TS,TS), global (M,N).
// Assumes: column-major A (MxK), B (KxN, not transposed), C (MxN);
//          M, N, K multiples of TS. C = A*B, C overwritten.
// Local memory: 2*TS*TS floats (8 KiB for TS=32).
// Twin differences: none beyond syntax (__local/barrier vs
//          __shared__/__syncthreads).

#ifndef TS
#define TS 32
#endif

__kernel GEMMLAB_BOUNDS(TS, TS)
void myGEMM2(const int M, const int N, const int K,
             const __global float* restrict A,
             const __global float* restrict B,
             __global float* C) {
    const int row = (int)get_local_id(0);            // 0..TS-1, along M
    const int col = (int)get_local_id(1);            // 0..TS-1, along N
    const int gRow = TS * (int)get_group_id(0) + row;
    const int gCol = TS * (int)get_group_id(1) + col;

    __local float Asub[TS][TS];                      // Asub[k][m]
    __local float Bsub[TS][TS];                      // Bsub[n][k]

    float acc = 0.0f;
    const int numTiles = K / TS;
    for (int t = 0; t < numTiles; t++) {
        const int kA = TS * t + col;                 // k of the A element I copy
        const int kB = TS * t + row;                 // k of the B element I copy
        Asub[col][row] = A[kA * M + gRow];
        Bsub[col][row] = B[gCol * K + kB];
        barrier(CLK_LOCAL_MEM_FENCE);

        GEMMLAB_UNROLL
        for (int k = 0; k < TS; k++) {
            acc += Asub[k][row] * Bsub[col][k];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[gCol * M + gRow] = acc;
}
