// myGEMM1 -- naive GEMM, OpenCL twin.
//
// What it does: one work-item per element of C. Work-item (row, col) walks
// the whole K dimension, reading A(row,k) and B(k,col) straight from global
// memory and summing in one register. Neighbouring work-items along
// dimension 0 own neighbouring rows of C, so the reads of A and the write
// of C are coalesced; the reads of B are not.
//
// Parameters: TS (the work-group is TS x TS; the body does not use it).
// Launch: local (TS, TS), global (M, N).
// Assumes: column-major A (M x K), B (K x N, not transposed), C (M x N);
//          M and N multiples of TS. C = A*B, C overwritten.
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 0, UNROLL_K 0
//          (1 puts '#pragma unroll' on the loop over all of K, whose trip
//          count is only known at run time).
// Twin differences: none beyond the cl_to_cuda.h mapping.

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

// One work-item per element of C
__kernel GEMMLAB_BOUNDS(TS, TS)
void myGEMM1(const int M, const int N, const int K,
             const __global float* GEMMLAB_RESTRICT A,
             const __global float* GEMMLAB_RESTRICT B,
             __global float* C) {

    // Work-item ids
    const int globalRow = get_global_id(0); // row of C (0..M-1)
    const int globalCol = get_global_id(1); // column of C (0..N-1)

    // One element of C: a dot product over all of K
    float acc = 0.0f;
    GEMMLAB_UNROLL_IF(UNROLL_K)
    for (int k=0; k<K; k++) {
        acc += A[k*M + globalRow] * B[globalCol*K + k];
    }

    // Write the result to C
    C[globalCol*M + globalRow] = acc;
}
