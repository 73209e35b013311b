// Naive reference GEMM for the tutorial GEMM specs, OpenCL twin
// (specs: gemm-reference.toml, gemm-reference-bt.toml).
//
// C = A * B in single precision, column-major: A is M x K (A(m,k) at
// k*M + m), C is M x N (C(m,n) at n*M + m). One work-item per element of C,
// a plain loop over k accumulating in one float, no local memory, no
// parameters, bounds-checked, so any M, N, K and any NDRange covering
// M x N work.
//
// gemm_reference:    B is K x N      (B(k,n) at n*K + k), as myGEMM1 reads it.
// gemm_reference_bt: B is stored transposed, N x K (B(k,n) at k*N + n), as
//                    myGEMM5 to myGEMM10 read it.
//   Launch: global (M, N) rounded up to the work-group, any work-group.
//
// Twin differences: none beyond syntax (get_global_id here,
// blockIdx*blockDim + threadIdx in gemm-reference.cu).

__kernel void gemm_reference(const int M, const int N, const int K,
                             const __global float* A,
                             const __global float* B,
                             __global float* C) {
    const int m = (int)get_global_id(0);
    const int n = (int)get_global_id(1);
    if (m >= M || n >= N) {
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[n * K + k];
    }
    C[n * M + m] = acc;
}

__kernel void gemm_reference_bt(const int M, const int N, const int K,
                                const __global float* A,
                                const __global float* B,
                                __global float* C) {
    const int m = (int)get_global_id(0);
    const int n = (int)get_global_id(1);
    if (m >= M || n >= N) {
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        acc += A[k * M + m] * B[k * N + n];
    }
    C[n * M + m] = acc;
}
