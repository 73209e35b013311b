// A kernel that misbehaves on request, OpenCL twin (spec: misbehave.toml).
// MODE 0: y = 2 y. MODE 1: also a store through the address bad_address (16):
// an illegal address on a GPU, a segmentation fault on a CPU device. MODE 2: a
// loop on a volatile flag that stays 1, so the kernel never finishes.

#ifndef MODE
#define MODE 0
#endif

__kernel void misbehave(const int n, const int bad_address,
                        __global float* y,
                        volatile __global const int* spin) {
    const int i = (int)get_global_id(0);
#if MODE == 1
    if (i == 0) {
        __global float* p = (__global float*)(size_t)bad_address;
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
