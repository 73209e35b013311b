// gemmlab support kernels, CUDA twin: transpose, pad, unpad.
//
// The GEMM kernels assume tile multiples and (kernels 5-10) a transposed B;
// the host prepares operands with these kernels and times them separately.
// All three are bounds-checked and take any sizes; the host rounds the
// grid up so that it covers the matrix. Matrices are column-major: X(p,q)
// of a P x Q matrix is X[q*P + p].
//
// transpose(P, Q, input, output): input is P x Q, output is its transpose
//   (Q x P), output[p*Q + q] = input[q*P + p]. A TRANSPOSEX x TRANSPOSEY
//   block stages its tile in shared memory (rows padded by one float
//   against bank conflicts), reading along p and writing along q, so both
//   the global reads and the global writes are coalesced. The write phase
//   renumbers the threads (linear id -> (q, p) with q fastest), so the two
//   block dimensions need not be equal.
//   Launch: block (TRANSPOSEX, TRANSPOSEY), NDRange
//           (roundup(P, TRANSPOSEX), roundup(Q, TRANSPOSEY)).
// pad_matrix(P, Q, input, PP, QQ, output): output is PP x QQ (PP >= P,
//   QQ >= Q): the input in the top-left corner, zeros elsewhere.
//   Launch: block (PADX, PADY), NDRange (roundup(PP, PADX), roundup(QQ, PADY)).
// unpad_matrix(PP, QQ, input, P, Q, output): output is the top-left P x Q
//   block of the PP x QQ input.
//   Launch: block (PADX, PADY), NDRange (roundup(P, PADX), roundup(Q, PADY)).
//
// Parameters: TRANSPOSEX, TRANSPOSEY, PADX, PADY (block sizes).
// Twin differences: none beyond syntax.

#ifndef TRANSPOSEX
#define TRANSPOSEX 16
#endif
#ifndef TRANSPOSEY
#define TRANSPOSEY 16
#endif
#ifndef PADX
#define PADX 16
#endif
#ifndef PADY
#define PADY 16
#endif

extern "C" __global__ GEMMLAB_BOUNDS(TRANSPOSEX, TRANSPOSEY)
void transpose(const int P, const int Q,
               const float* __restrict__ input,
               float* output) {
    const int tx = (int)threadIdx.x;
    const int ty = (int)threadIdx.y;
    const int baseP = TRANSPOSEX * (int)blockIdx.x;
    const int baseQ = TRANSPOSEY * (int)blockIdx.y;

    __shared__ float buffer[TRANSPOSEY][TRANSPOSEX + 1]; // buffer[q][p], padded

    // Read phase: thread (tx, ty) reads input(baseP + tx, baseQ + ty).
    const int p = baseP + tx;
    const int q = baseQ + ty;
    if (p < P && q < Q) {
        buffer[ty][tx] = input[q * P + p];
    }
    __syncthreads();

    // Write phase: renumber so that consecutive threads walk along q.
    const int lin = ty * TRANSPOSEX + tx;
    const int wq = lin % TRANSPOSEY;
    const int wp = lin / TRANSPOSEY;
    const int p2 = baseP + wp;
    const int q2 = baseQ + wq;
    if (p2 < P && q2 < Q) {
        output[p2 * Q + q2] = buffer[wq][wp];
    }
}

extern "C" __global__ GEMMLAB_BOUNDS(PADX, PADY)
void pad_matrix(const int P, const int Q,
                const float* __restrict__ input,
                const int PP, const int QQ,
                float* output) {
    const int p = PADX * (int)blockIdx.x + (int)threadIdx.x;
    const int q = PADY * (int)blockIdx.y + (int)threadIdx.y;
    if (p < PP && q < QQ) {
        float value = 0.0f;
        if (p < P && q < Q) {
            value = input[q * P + p];
        }
        output[q * PP + p] = value;
    }
}

extern "C" __global__ GEMMLAB_BOUNDS(PADX, PADY)
void unpad_matrix(const int PP, const int QQ,
                  const float* __restrict__ input,
                  const int P, const int Q,
                  float* output) {
    const int p = PADX * (int)blockIdx.x + (int)threadIdx.x;
    const int q = PADY * (int)blockIdx.y + (int)threadIdx.y;
    if (p < P && q < Q) {
        output[q * P + p] = input[q * PP + p];
    }
}
