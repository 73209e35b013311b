// myGEMM1 -- naive GEMM, CUDA twin.
//
// Idea: one thread per element of C. Thread (m,n) walks the whole K
// dimension, reading A(m,k) and B(k,n) straight from global memory and
// accumulating in one register. Neighbouring threads along x own
// neighbouring rows of C, so the reads of A and the write of C are
// coalesced; the reads of B are not.
//
// Parameters: TS (block is TS x TS).
// Launch: block (TS,TS), grid (M/TS, N/TS), i.e. NDRange (M,N).
// Assumes: column-major A (MxK), B (KxN, not transposed), C (MxN);
//          M and N multiples of TS (the host pads). C = A*B, C overwritten.
// Twin differences: none beyond syntax (threadIdx/blockIdx vs get_*_id,
//          __launch_bounds__ vs reqd_work_group_size through GEMMLAB_BOUNDS).

#ifndef TS
#define TS 32
#endif

extern "C" __global__ GEMMLAB_BOUNDS(TS, TS)
void myGEMM1(const int M, const int N, const int K,
             const float* __restrict__ A,
             const float* __restrict__ B,
             float* C) {
    const int m = TS * (int)blockIdx.x + (int)threadIdx.x;
    const int n = TS * (int)blockIdx.y + (int)threadIdx.y;

    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[n * K + k];
    }
    C[n * M + m] = acc;
}
