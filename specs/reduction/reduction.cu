// Sum of n floats by a shared-memory tree reduction, CUDA twin
// (spec: reduction.toml).
//
// reduce_groups (launch 1): block g owns the WG*ITEMS consecutive elements
//   from g*WG*ITEMS. Each thread first adds its ITEMS elements (WG apart,
//   so every step reads WG consecutive floats), then the block halves its
//   WG partial sums in shared memory until one is left, which goes to
//   partials[g]. WG must be a power of two.
//   Launch: block (WG), NDRange (n / ITEMS), i.e. grid (n / (WG*ITEMS)).
// reduce_partials (launch 2): one block of WG threads. Thread i adds
//   partials i, i+WG, i+2*WG, ... (any number of groups), then the same
//   tree leaves the total in out[0].
//   Launch: block (WG), grid (1).
// sum_naive: the reference. A single thread adds all n elements in order
//   with Kahan's compensated summation, so the reference is accurate to
//   about one rounding even though it adds sequentially.
//   Launch: block (1), grid (1).
//
// Parameters: WG (block size), ITEMS (elements per thread in launch 1),
// passed by gemmlab as -D; the #ifndef values are the spec's defaults.
// Twin differences: none beyond syntax (__shared__/__syncthreads() here,
// __local/barrier in reduction.cl). extern "C" keeps the entry points'
// names unmangled; tree_sum is a __device__ helper.

#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif

// Halves scratch[0..WG) until scratch[0] holds the sum; every thread of the
// block calls it (the barriers are inside).
__device__ void tree_sum(float* scratch, const int lid) {
    __syncthreads();
    for (int s = WG / 2; s > 0; s /= 2) {
        if (lid < s) {
            scratch[lid] += scratch[lid + s];
        }
        __syncthreads();
    }
}

extern "C" __global__ void reduce_groups(const float* x,
                                         float* partials) {
    __shared__ float scratch[WG];
    const int lid = (int)threadIdx.x;
    const int base = (int)blockIdx.x * WG * ITEMS + lid;
    float acc = 0.0f;
    for (int i = 0; i < ITEMS; i++) {
        acc += x[base + i * WG];
    }
    scratch[lid] = acc;
    tree_sum(scratch, lid);
    if (lid == 0) {
        partials[blockIdx.x] = scratch[0];
    }
}

extern "C" __global__ void reduce_partials(const int groups,
                                           const float* partials,
                                           float* out) {
    __shared__ float scratch[WG];
    const int lid = (int)threadIdx.x;
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

extern "C" __global__ void sum_naive(const int n,
                                     const float* x,
                                     float* out) {
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
