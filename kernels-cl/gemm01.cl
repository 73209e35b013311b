// myGEMM1 -- naive GEMM, OpenCL twin.
//
// Idea: one work-item per element of C. Work-item (m,n) walks the whole K
// dimension, reading A(m,k) and B(k,n) straight from global memory and
// accumulating in one register. Neighbouring work-items along dimension 0
// own neighbouring rows of C, so the reads of A and the write of C are
// coalesced; the reads of B are not.
//
// Parameters: TS (work-group is TS x TS).
// Launch: local (TS,TS), global (M,N).
// Assumes: column-major A (MxK), B (KxN, not transposed), C (MxN);
//          M and N multiples of TS (the host pads). C = A*B, C overwritten.
// Twin differences: none beyond syntax (get_*_id vs threadIdx/blockIdx,
//          reqd_work_group_size vs __launch_bounds__ through GEMMLAB_BOUNDS).

#ifndef TS
#define TS 32
#endif

__kernel GEMMLAB_BOUNDS(TS, TS)
void myGEMM1(const int M, const int N, const int K,
             const __global float* restrict A,
             const __global float* restrict B,
             __global float* C) {
    const int m = TS * (int)get_group_id(0) + (int)get_local_id(0);
    const int n = TS * (int)get_group_id(1) + (int)get_local_id(1);

    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[n * K + k];
    }
    C[n * M + m] = acc;
}
