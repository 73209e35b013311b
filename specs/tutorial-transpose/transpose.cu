// The transpose of Nugteren's "OpenCL SGEMM tuning for Kepler" tutorial,
// CUDA twin (spec: transpose.toml). The tutorial's host transposes B with
// it before kernels 5 to 10, which read B transposed.
//
// Matrices are column-major: element (p, q) of a P x Q matrix is at q*P + p.
//
// transpose(P, Q, input, output): input is P x Q, output its Q x P
//   transpose: output[p*Q + q] = input[q*P + p]. The tutorial's argument
//   order and tile parameters. A TRANSPOSEX x TRANSPOSEY block copies its
//   tile into shared memory reading along p (coalesced), then writes it out
//   along q (coalesced too), so the transpose itself happens in shared
//   memory. Each tile row is padded by one float so that the column-wise
//   reads of the write phase do not all hit one bank. This follows
//   gemmlab's rendering (kernels-cu/support.cu): for the write phase the
//   threads are renumbered (linear id -> (q, p), q fastest), which lets
//   TRANSPOSEX and TRANSPOSEY differ. The published kernel
//   (buffer[TRANSPOSEX][TRANSPOSEY], no padding, no renumbering) is right
//   for square tiles only. The bounds checks are the tutorial's (its host
//   rounds the NDRange up); under this spec the sizes are tile multiples
//   and they always pass.
//   Launch: block (TRANSPOSEX, TRANSPOSEY), NDRange (P, Q), i.e. grid
//   (P/TRANSPOSEX, Q/TRANSPOSEY).
// transpose_naive: the reference, one thread per element, guarded.
//
// Parameters: TRANSPOSEX, TRANSPOSEY (tile = block size), passed by gemmlab
// as -D; the #ifndef values are the tutorial's 16 x 16.
// Twin differences: none beyond syntax (__shared__/__syncthreads() here,
// __local/barrier in transpose.cl). extern "C" keeps the names unmangled.

#ifndef TRANSPOSEX
#define TRANSPOSEX 16
#endif
#ifndef TRANSPOSEY
#define TRANSPOSEY 16
#endif

extern "C" __global__ void transpose(const int P, const int Q,
                                     const float* input,
                                     float* output) {
    const int tx = (int)threadIdx.x;
    const int ty = (int)threadIdx.y;
    const int baseP = (int)blockIdx.x * TRANSPOSEX;
    const int baseQ = (int)blockIdx.y * TRANSPOSEY;

    // The tile, buffer[q][p], one float of padding per row
    __shared__ float buffer[TRANSPOSEY][TRANSPOSEX + 1];

    // Read phase: thread (tx, ty) reads input(baseP + tx, baseQ + ty)
    const int p = baseP + tx;
    const int q = baseQ + ty;
    if (p < P && q < Q) {
        buffer[ty][tx] = input[q * P + p];
    }
    __syncthreads();

    // Write phase: consecutive threads take consecutive q
    const int lin = ty * TRANSPOSEX + tx;
    const int wq = lin % TRANSPOSEY;
    const int wp = lin / TRANSPOSEY;
    const int p2 = baseP + wp;
    const int q2 = baseQ + wq;
    if (p2 < P && q2 < Q) {
        output[p2 * Q + q2] = buffer[wq][wp];
    }
}

extern "C" __global__ void transpose_naive(const int P, const int Q,
                                           const float* input,
                                           float* output) {
    const int p = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int q = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (p < P && q < Q) {
        output[p * Q + q] = input[q * P + p];
    }
}
