// gemmlab support kernels, OpenCL twin: transpose, pad, unpad.
//
// The GEMM kernels assume tile multiples and (kernels 5-10) a transposed B;
// the host prepares operands with these kernels and times them separately.
// All three are bounds-checked and take any sizes; the host rounds the
// global size up to a multiple of the work-group. Matrices are column-major:
// X(p,q) of a P x Q matrix is X[q*P + p].
//
// transpose(P, Q, input, output): input is P x Q, output is its transpose
//   (Q x P), output[p*Q + q] = input[q*P + p]. A TRANSPOSEX x TRANSPOSEY
//   work-group stages its block in local memory (rows padded by one float
//   against bank conflicts), reading along p and writing along q, so both
//   the global reads and the global writes are coalesced. The write phase
//   renumbers the work-items (linear id -> (q, p) with q fastest), so the
//   two block dimensions need not be equal.
//   Launch: local (TRANSPOSEX, TRANSPOSEY),
//           global (roundup(P, TRANSPOSEX), roundup(Q, TRANSPOSEY)).
// pad_matrix(P, Q, input, PP, QQ, output): output is PP x QQ (PP >= P,
//   QQ >= Q): the input in the top-left corner, zeros elsewhere.
//   Launch: local (PADX, PADY), global (roundup(PP, PADX), roundup(QQ, PADY)).
// unpad_matrix(PP, QQ, input, P, Q, output): output is the top-left P x Q
//   block of the PP x QQ input.
//   Launch: local (PADX, PADY), global (roundup(P, PADX), roundup(Q, PADY)).
//
// Parameters: TRANSPOSEX, TRANSPOSEY, PADX, PADY (work-group sizes).
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

__kernel GEMMLAB_BOUNDS(TRANSPOSEX, TRANSPOSEY)
void transpose(const int P, const int Q,
               const __global float* restrict input,
               __global float* output) {
    const int tx = (int)get_local_id(0);
    const int ty = (int)get_local_id(1);
    const int baseP = TRANSPOSEX * (int)get_group_id(0);
    const int baseQ = TRANSPOSEY * (int)get_group_id(1);

    __local float buffer[TRANSPOSEY][TRANSPOSEX + 1];   // buffer[q][p], padded

    // Read phase: work-item (tx, ty) reads input(baseP + tx, baseQ + ty).
    const int p = baseP + tx;
    const int q = baseQ + ty;
    if (p < P && q < Q) {
        buffer[ty][tx] = input[q * P + p];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Write phase: renumber so that consecutive work-items walk along q.
    const int lin = ty * TRANSPOSEX + tx;
    const int wq = lin % TRANSPOSEY;
    const int wp = lin / TRANSPOSEY;
    const int p2 = baseP + wp;
    const int q2 = baseQ + wq;
    if (p2 < P && q2 < Q) {
        output[p2 * Q + q2] = buffer[wq][wp];
    }
}

__kernel GEMMLAB_BOUNDS(PADX, PADY)
void pad_matrix(const int P, const int Q,
                const __global float* restrict input,
                const int PP, const int QQ,
                __global float* output) {
    const int p = PADX * (int)get_group_id(0) + (int)get_local_id(0);
    const int q = PADY * (int)get_group_id(1) + (int)get_local_id(1);
    if (p < PP && q < QQ) {
        float value = 0.0f;
        if (p < P && q < Q) {
            value = input[q * P + p];
        }
        output[q * PP + p] = value;
    }
}

__kernel GEMMLAB_BOUNDS(PADX, PADY)
void unpad_matrix(const int PP, const int QQ,
                  const __global float* restrict input,
                  const int P, const int Q,
                  __global float* output) {
    const int p = PADX * (int)get_group_id(0) + (int)get_local_id(0);
    const int q = PADY * (int)get_group_id(1) + (int)get_local_id(1);
    if (p < P && q < Q) {
        output[q * P + p] = input[q * PP + p];
    }
}
