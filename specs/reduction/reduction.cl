// Sum of n floats by a local-memory tree reduction, OpenCL twin
// (spec: reduction.toml).
//
// reduce_groups (launch 1): work-group g owns the WG*ITEMS consecutive
//   elements from g*WG*ITEMS. Each work-item first adds its ITEMS elements
//   (WG apart, so every step reads WG consecutive floats), then the group
//   halves its WG partial sums in local memory until one is left, which
//   goes to partials[g]. WG must be a power of two.
//   Launch: local (WG), global (n / ITEMS); n a multiple of WG*ITEMS.
// reduce_partials (launch 2): one work-group of WG work-items. Work-item i
//   adds partials i, i+WG, i+2*WG, ... (any number of groups), then the
//   same tree leaves the total in out[0].
//   Launch: local (WG), global (WG).
// sum_naive: the reference. A single work-item adds all n elements in
//   order with Kahan's compensated summation, so the reference is accurate
//   to about one rounding even though it adds sequentially.
//   Launch: local (1), global (1).
//
// Parameters: WG (work-group size), ITEMS (elements per work-item in
// launch 1), passed by gemmlab as -D; the #ifndef values are the spec's
// defaults.
// Twin differences: none beyond syntax (__local/barrier here,
// __shared__/__syncthreads() in reduction.cu).

#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif

// Halves scratch[0..WG) until scratch[0] holds the sum; every work-item of
// the group calls it (the barriers are inside).
void tree_sum(__local float* scratch, const int lid) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s /= 2) {
        if (lid < s) {
            scratch[lid] += scratch[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void reduce_groups(const __global float* x,
                            __global float* partials) {
    __local float scratch[WG];
    const int lid = (int)get_local_id(0);
    const int base = (int)get_group_id(0) * WG * ITEMS + lid;
    float acc = 0.0f;
    for (int i = 0; i < ITEMS; i++) {
        acc += x[base + i * WG];
    }
    scratch[lid] = acc;
    tree_sum(scratch, lid);
    if (lid == 0) {
        partials[get_group_id(0)] = scratch[0];
    }
}

__kernel void reduce_partials(const int groups,
                              const __global float* partials,
                              __global float* out) {
    __local float scratch[WG];
    const int lid = (int)get_local_id(0);
    float acc = 0.0f;
    for (int i = lid; i < groups; i += WG) {
        acc += partials[i];
    }
    scratch[lid] = acc;
    tree_sum(scratch, lid);
    if (lid == 0) {
        out[0] = scratch[0];
    }
}

__kernel void sum_naive(const int n,
                        const __global float* x,
                        __global float* out) {
    float sum = 0.0f;
    float c = 0.0f;   // the low-order bits lost so far
    for (int i = 0; i < n; i++) {
        const float y = x[i] - c;
        const float t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    out[0] = sum;
}
