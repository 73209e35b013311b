// SAXPY, y = a*x + y, OpenCL twin (spec: saxpy.toml).
//
// saxpy: each work-item updates WPT elements of y. A work-group of TS
//   work-items owns a contiguous chunk of TS*WPT elements; within it the
//   work-item's elements are TS apart, so at every step w the group touches
//   TS consecutive floats (coalesced on a GPU).
//   Launch: local (TS), global (n / WPT); n a multiple of TS*WPT.
// saxpy_naive: the reference, one element per work-item, guarded, so any
//   global size at or above n works.
//
// Parameters: TS (work-group size), WPT (elements per work-item), passed by
// gemmlab as -D TS=... -D WPT=...; the #ifndef values are the spec's defaults
// so the file also compiles by hand.
// Twin differences: none beyond syntax (get_local_id/get_group_id here,
// threadIdx/blockIdx in saxpy.cu).

#ifndef TS
#define TS 256
#endif
#ifndef WPT
#define WPT 4
#endif

__kernel void saxpy(const int n, const float a,
                    const __global float* x,
                    __global float* y) {
    const int lid = (int)get_local_id(0);
    const int base = (int)get_group_id(0) * TS * WPT + lid;
    for (int w = 0; w < WPT; w++) {
        const int i = base + w * TS;
        y[i] = a * x[i] + y[i];
    }
}

__kernel void saxpy_naive(const int n, const float a,
                          const __global float* x,
                          __global float* y) {
    const int i = (int)get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
