// The zero-padding kernel of Nugteren's "OpenCL SGEMM tuning for Kepler"
// tutorial, CUDA twin (spec: padding.toml). For kernel 10 the tutorial's
// host pads A and the transposed B with it up to tile multiples (the
// GEMM kernel has no bounds checks) and cuts C back with its sibling
// paddingRemoveZeroes.
//
// Matrices are column-major: element (p, q) of a P x Q matrix is at q*P + p.
//
// paddingAddZeroes(P, Q, input, P_XL, Q_XL, output): output is P_XL x Q_XL
//   (P_XL >= P, Q_XL >= Q), the P x Q input in its top-left corner and
//   zeros everywhere else. One thread per output element, blocks of
//   PADDINGX x PADDINGY; threads past P_XL or Q_XL (the grid is rounded up
//   to whole blocks) do nothing. The tutorial's argument order, parameters
//   and body.
//   Launch: block (PADDINGX, PADDINGY), NDRange (P_XL and Q_XL rounded up
//           to PADDINGX and PADDINGY).
// padding_naive: the reference, the same result written the plain way
//   (select the value, then store), one thread per output element.
//
// Parameters: PADDINGX, PADDINGY (block size), passed by gemmlab as -D; the
// #ifndef values are the tutorial's 16 x 16.
// Twin differences: none beyond syntax (blockIdx/threadIdx here,
// get_group_id/get_local_id in padding.cl). extern "C" keeps the names
// unmangled.

#ifndef PADDINGX
#define PADDINGX 16
#endif
#ifndef PADDINGY
#define PADDINGY 16
#endif

extern "C" __global__ void paddingAddZeroes(const int P, const int Q,
                                            const float* input,
                                            const int P_XL, const int Q_XL,
                                            float* output) {
    const int tx = (int)blockIdx.x * PADDINGX + (int)threadIdx.x; // 0..P_XL
    const int ty = (int)blockIdx.y * PADDINGY + (int)threadIdx.y; // 0..Q_XL

    // Inside the padded matrix: copy the input or write a zero
    if (tx < P_XL && ty < Q_XL) {
        float value;
        if (tx < P && ty < Q) {
            value = input[ty * P + tx];
        } else {
            value = 0.0f;
        }
        output[ty * P_XL + tx] = value;
    }
}

extern "C" __global__ void padding_naive(const int P, const int Q,
                                         const float* input,
                                         const int P_XL, const int Q_XL,
                                         float* output) {
    const int p = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int q = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (p < P_XL && q < Q_XL) {
        output[q * P_XL + p] = (p < P && q < Q) ? input[q * P + p] : 0.0f;
    }
}
