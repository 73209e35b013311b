// SAXPY, y = a*x + y, CUDA twin (spec: saxpy.toml).
//
// saxpy: each thread updates WPT elements of y. A block of TS threads owns
//   a contiguous chunk of TS*WPT elements; within it the thread's elements
//   are TS apart, so at every step w the block touches TS consecutive
//   floats (coalesced).
//   Launch: block (TS), NDRange (n / WPT), i.e. grid (n / (TS*WPT));
//   n a multiple of TS*WPT.
// saxpy_naive: the reference, one element per thread, guarded, so any
//   grid covering n works.
//
// Parameters: TS (block size), WPT (elements per thread), passed by gemmlab
// as -D TS=... -D WPT=...; the #ifndef values are the spec's defaults.
// Twin differences: none beyond syntax (threadIdx/blockIdx here,
// get_local_id/get_group_id in saxpy.cl). extern "C" keeps the names
// unmangled: gemmlab looks the entry points up by name.

#ifndef TS
#define TS 256
#endif
#ifndef WPT
#define WPT 4
#endif

extern "C" __global__ void saxpy(const int n, const float a,
                                 const float* x,
                                 float* y) {
    const int lid = (int)threadIdx.x;
    const int base = (int)blockIdx.x * TS * WPT + lid;
    for (int w = 0; w < WPT; w++) {
        const int i = base + w * TS;
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void saxpy_naive(const int n, const float a,
                                       const float* x,
                                       float* y) {
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
