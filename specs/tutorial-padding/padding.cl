// The zero-padding kernel of Nugteren's "OpenCL SGEMM tuning for Kepler"
// tutorial, OpenCL twin (spec: padding.toml). For kernel 10 the tutorial's
// host pads A and the transposed B with it up to tile multiples (the
// GEMM kernel has no bounds checks) and cuts C back with its sibling
// paddingRemoveZeroes.
//
// Matrices are column-major: element (p, q) of a P x Q matrix is at q*P + p.
//
// paddingAddZeroes(P, Q, input, P_XL, Q_XL, output): output is P_XL x Q_XL
//   (P_XL >= P, Q_XL >= Q), the P x Q input in its top-left corner and
//   zeros everywhere else. One work-item per output element, work-groups of
//   PADDINGX x PADDINGY; work-items past P_XL or Q_XL (the NDRange is
//   rounded up to whole work-groups) do nothing. The tutorial's argument
//   order, parameters and body.
//   Launch: local (PADDINGX, PADDINGY),
//           global (P_XL and Q_XL rounded up to PADDINGX and PADDINGY).
// padding_naive: the reference, the same result written the plain way
//   (select the value, then store), one work-item per output element.
//
// Parameters: PADDINGX, PADDINGY (work-group size), passed by gemmlab as -D;
// the #ifndef values are the tutorial's 16 x 16.
// Twin differences: none beyond syntax (get_group_id/get_local_id here,
// blockIdx/threadIdx in padding.cu).

#ifndef PADDINGX
#define PADDINGX 16
#endif
#ifndef PADDINGY
#define PADDINGY 16
#endif

__kernel void paddingAddZeroes(const int P, const int Q,
                               const __global float* input,
                               const int P_XL, const int Q_XL,
                               __global float* output) {
    const int tx = (int)get_group_id(0) * PADDINGX + (int)get_local_id(0); // 0..P_XL
    const int ty = (int)get_group_id(1) * PADDINGY + (int)get_local_id(1); // 0..Q_XL

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

__kernel void padding_naive(const int P, const int Q,
                            const __global float* input,
                            const int P_XL, const int Q_XL,
                            __global float* output) {
    const int p = (int)get_global_id(0);
    const int q = (int)get_global_id(1);
    if (p < P_XL && q < Q_XL) {
        output[q * P_XL + p] = (p < P && q < Q) ? input[q * P + p] : 0.0f;
    }
}
