// A kernel that misbehaves on request, CUDA twin (spec: misbehave.toml).
// MODE 0: y = 2 y. MODE 1: also a store through the address bad_address (16):
// an illegal address. MODE 2: a loop on a volatile flag that stays 1, so the
// kernel never finishes. extern "C" keeps the entry point's name unmangled.

#ifndef MODE
#define MODE 0
#endif

extern "C" __global__ void misbehave(const int n, const int bad_address,
                                     float* y,
                                     volatile const int* spin) {
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
#if MODE == 1
    if (i == 0) {
        float* p = (float*)(size_t)bad_address;
        *p = 1.0f;
    }
#elif MODE == 2
    while (spin[0] == 1) {
    }
#endif
    if (i < n) {
        y[i] = 2.0f * y[i];
    }
}
