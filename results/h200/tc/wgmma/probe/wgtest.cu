// Standalone check of kernels-cu/tcwg.cu (built with nvcc -arch=sm_90a and -D config flags).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>
#include KERNEL_FILE
#ifndef LO_BUFS_HOST
#define LO_BUFS_HOST (TF32_SINGLE ? 0 : 2)
#endif
int main(int argc, char** argv) {
  int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]); int reps = argc > 4 ? atoi(argv[4]) : 0;
  std::vector<float> A((size_t)M*K), B((size_t)K*N), C((size_t)M*N);
  srand(1); for (auto& x : A) x = (rand() % 2001 - 1000) / 1000.0f * (1.0f + (rand()%1000)*1e-7f);
  for (auto& x : B) x = (rand() % 2001 - 1000) / 1000.0f * (1.0f + (rand()%1000)*1e-7f);
  float *dA, *dB, *dC; cudaMalloc(&dA, A.size()*4); cudaMalloc(&dB, B.size()*4); cudaMalloc(&dC, C.size()*4);
  cudaMemcpy(dA, A.data(), A.size()*4, cudaMemcpyHostToDevice); cudaMemcpy(dB, B.data(), B.size()*4, cudaMemcpyHostToDevice);
  cudaMemset(dC, 0xff, C.size()*4);
  size_t smem = 4 * ((size_t)STAGES*BK*(BM+8) + (size_t)(STAGES + LO_BUFS_HOST)*BTILE);
  cudaError_t e = cudaFuncSetAttribute(tcwg_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e) { printf("attr %s\n", cudaGetErrorString(e)); }
  dim3 grid(M/BM, N/BN), block(32, BM/16);
  tcwg_gemm<<<grid, block, smem>>>(M, N, K, 1.0f, 0.0f, dA, dB, dC, nullptr, nullptr);
  e = cudaDeviceSynchronize(); if (e) { printf("launch %s\n", cudaGetErrorString(e)); return 1; }
  cudaMemcpy(C.data(), dC, C.size()*4, cudaMemcpyDeviceToHost);
  double maxerr = 0, maxref = 0; int bad = 0;
  int step = (M*(size_t)N > 1<<20) ? 37 : 1;
  for (size_t idx = 0; idx < (size_t)M*N; idx += step) { int m = idx % M, n = idx / M;
    double r = 0, ab = 0; for (int k = 0; k < K; k++) { r += (double)A[(size_t)k*M+m] * B[(size_t)n*K+k]; ab += fabs((double)A[(size_t)k*M+m] * B[(size_t)n*K+k]); }
    double err = fabs(C[idx] - r); if (!(err <= maxerr)) maxerr = err; if (ab > maxref) maxref = ab;
    if (!(err <= 1e-5 * ab + 1e-6) && bad++ < 6) printf("  bad m=%d n=%d got %g want %g\n", m, n, C[idx], r); }
  printf("M=%d N=%d K=%d smem=%zu maxerr=%.3e (max |A||B| %.3e) bad=%d\n", M, N, K, smem, maxerr, maxref, bad);
  if (reps) { cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) tcwg_gemm<<<grid, block, smem>>>(M, N, K, 1.0f, 0.0f, dA, dB, dC, nullptr, nullptr);
    cudaEventRecord(a); for (int i = 0; i < reps; i++) tcwg_gemm<<<grid, block, smem>>>(M, N, K, 1.0f, 0.0f, dA, dB, dC, nullptr, nullptr);
    cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ms /= reps;
    printf("  time %.3f ms  %.1f TFLOP/s\n", ms, 2.0*M*N*K/ms/1e9); }
  return 0; }
