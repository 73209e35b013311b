// The transpose of Nugteren's "OpenCL SGEMM tuning for Kepler" tutorial,
// OpenCL twin (spec: transpose.toml). The tutorial's host transposes B with
// it before kernels 5 to 10, which read B transposed.
//
// Matrices are column-major: element (p, q) of a P x Q matrix is at q*P + p.
//
// transpose(P, Q, input, output): input is P x Q, output its Q x P
//   transpose: output[p*Q + q] = input[q*P + p]. The tutorial's argument
//   order and tile parameters. A TRANSPOSEX x TRANSPOSEY work-group copies
//   its block into local memory reading along p (coalesced), then writes it
//   out along q (coalesced too), so the transpose itself happens in local
//   memory. Each tile row is padded by one float so that the column-wise
//   reads of the write phase do not all hit one memory bank. This follows
//   gemmlab's rendering (kernels-cl/support.cl): for the write phase the
//   work-items are renumbered (linear id -> (q, p), q fastest), which lets
//   TRANSPOSEX and TRANSPOSEY differ. The published kernel
//   (buffer[TRANSPOSEX][TRANSPOSEY], no padding, no renumbering) is right
//   for square tiles only. The bounds checks are the tutorial's (its host
//   rounds the NDRange up); under this spec the sizes are tile multiples
//   and they always pass.
//   Launch: local (TRANSPOSEX, TRANSPOSEY), global (P, Q).
// transpose_naive: the reference, one work-item per element, guarded.
//
// Parameters: TRANSPOSEX, TRANSPOSEY (tile = work-group size), passed by
// gemmlab as -D; the #ifndef values are the tutorial's 16 x 16.
// Twin differences: none beyond syntax (__local/barrier here,
// __shared__/__syncthreads() in transpose.cu).

#ifndef TRANSPOSEX
#define TRANSPOSEX 16
#endif
#ifndef TRANSPOSEY
#define TRANSPOSEY 16
#endif

__kernel void transpose(const int P, const int Q,
                        const __global float* input,
                        __global float* output) {
    const int tx = (int)get_local_id(0);
    const int ty = (int)get_local_id(1);
    const int baseP = (int)get_group_id(0) * TRANSPOSEX;
    const int baseQ = (int)get_group_id(1) * TRANSPOSEY;

    // The block, buffer[q][p], one float of padding per row
    __local float buffer[TRANSPOSEY][TRANSPOSEX + 1];

    // Read phase: work-item (tx, ty) reads input(baseP + tx, baseQ + ty)
    const int p = baseP + tx;
    const int q = baseQ + ty;
    if (p < P && q < Q) {
        buffer[ty][tx] = input[q * P + p];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Write phase: consecutive work-items take consecutive q
    const int lin = ty * TRANSPOSEX + tx;
    const int wq = lin % TRANSPOSEY;
    const int wp = lin / TRANSPOSEY;
    const int p2 = baseP + wp;
    const int q2 = baseQ + wq;
    if (p2 < P && q2 < Q) {
        output[p2 * Q + q2] = buffer[wq][wp];
    }
}

__kernel void transpose_naive(const int P, const int Q,
                              const __global float* input,
                              __global float* output) {
    const int p = (int)get_global_id(0);
    const int q = (int)get_global_id(1);
    if (p < P && q < Q) {
        output[p * Q + q] = input[q * P + p];
    }
}
