// How much of a back-to-back launch does Programmatic Dependent Launch hide on this GPU?
// A kernel of adjustable length (FMA chains per thread, 4 blocks of 128 per SM, as a mid-size
// GEMM's grid) launched `n` times back to back on one stream, timed by events: plain launches
// against launches with the programmatic-stream-serialization attribute, where each block
// releases its dependants at its start and then waits for its predecessor to finish before
// any work (as a GEMM that reads what the previous call may have written must).
#include <cstdio>
#include <cuda_runtime.h>

template <bool PDL>
__global__ void work(float* out, int iters) {
    if (PDL) {
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
        asm volatile("griddepcontrol.wait;" ::: "memory");
    }
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.5f, d = blockIdx.x * 1e-3f;
    for (int i = 0; i < iters; i++) {
        a = fmaf(a, b, c);
        d = fmaf(d, b, c);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + d;
}

template <bool PDL>
float per_launch(float* out, int blocks, int iters, int n) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(128);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = PDL ? 1 : 0;
    for (int i = 0; i < 20; i++) cudaLaunchKernelEx(&cfg, work<PDL>, out, iters);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    for (int i = 0; i < n; i++) cudaLaunchKernelEx(&cfg, work<PDL>, out, iters);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms * 1000.0f / n;
}

int main() {
    float* out;
    cudaMalloc(&out, 132 * 16 * 128 * sizeof(float));
    printf("blocks iters  plain_us  pdl_us  saved_us\n");
    const int blocks_list[] = {132, 528};
    const int iters_list[] = {0, 256, 1024, 4096, 16384, 65536};
    for (int round = 0; round < 2; round++)
        for (int blocks : blocks_list)
            for (int iters : iters_list) {
                float p = per_launch<false>(out, blocks, iters, 2000);
                float q = per_launch<true>(out, blocks, iters, 2000);
                printf("%6d %6d %9.2f %7.2f %8.2f\n", blocks, iters, p, q, p - q);
            }
    cudaError_t e = cudaGetLastError();
    printf("status %s\n", cudaGetErrorString(e));
    return 0;
}
