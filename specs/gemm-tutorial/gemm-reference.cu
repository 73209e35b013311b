// Naive reference GEMM for the tutorial GEMM specs, CUDA twin
// (specs: gemm-reference.toml, gemm-reference-bt.toml).
//
// C = A * B in single precision, column-major: A is M x K (A(m,k) at
// k*M + m), C is M x N (C(m,n) at n*M + m). One thread per element of C, a
// plain loop over k accumulating in one float, no shared memory, no
// parameters, bounds-checked, so any M, N, K and any grid covering M x N
// work.
//
// gemm_reference:    B is K x N      (B(k,n) at n*K + k), as myGEMM1 reads it.
// gemm_reference_bt: B is stored transposed, N x K (B(k,n) at k*N + n), as
//                    myGEMM5 to myGEMM10 read it.
//   Launch: NDRange (M, N) rounded up to the block, any block.
//
// Twin differences: none beyond syntax (blockIdx*blockDim + threadIdx here,
// get_global_id in gemm-reference.cl). extern "C" keeps the names
// unmangled.

extern "C" __global__ void gemm_reference(const int M, const int N, const int K,
                                          const float* A,
                                          const float* B,
                                          float* C) {
    const int m = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int n = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (m >= M || n >= N) {
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[n * K + k];
    }
    C[n * M + m] = acc;
}

extern "C" __global__ void gemm_reference_bt(const int M, const int N, const int K,
                                             const float* A,
                                             const float* B,
                                             float* C) {
    const int m = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int n = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (m >= M || n >= N) {
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[k * N + n];
    }
    C[n * M + m] = acc;
}
