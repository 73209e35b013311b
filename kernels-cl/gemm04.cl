// myGEMM4 -- wide memory accesses, OpenCL twin.
//
// Idea: kernel 2 with vectors of WIDTH floats. A and C are accessed as
// vectors along M, B as vectors along K (both are contiguous in
// column-major storage). A work-group of (TS/WIDTH) x TS work-items covers
// a TS x TS tile of C; each work-item owns one vector of WIDTH rows of C in
// one column. Per tile, each work-item copies one vector of A and one of B
// into local memory (kept as vectors), then accumulates
//   acc += Asub[k][row] * B(k, col)     (vector times scalar)
// over the TS values of k.
//
// Parameters: TS (tile size), WIDTH (vector width: 1, 2, 4 or 8).
// Launch: local (TS/WIDTH, TS), global (M/WIDTH, N).
// Assumes: column-major A (MxK), B (KxN, not transposed), C (MxN);
//          M, N, K multiples of TS; TS a multiple of WIDTH; buffers aligned
//          to WIDTH floats (the kernel takes float pointers and views them
//          as vectors, so the host passes plain float buffers).
// Local memory: 2*TS*TS floats.
// Twin differences: OpenCL uses its native float2/float4/float8 and native
//          vector arithmetic. The CUDA twin uses float2/float4 with small
//          operator helpers (prelude.cu) and, for WIDTH=8, a plain struct
//          of 8 floats (gemmlab_float8) that is only float-aligned, so CUDA
//          moves it as 8 scalars where OpenCL moves a 32-byte vector. This
//          is part of what is measured.

#ifndef TS
#define TS 32
#endif
#ifndef WIDTH
#define WIDTH 4
#endif

#if WIDTH == 1
typedef float floatX;
#define ZERO_X (0.0f)
#define UNPACK_X(v, r) { (r)[0] = (v); }
#elif WIDTH == 2
typedef float2 floatX;
#define ZERO_X ((float2)(0.0f))
#define UNPACK_X(v, r) { (r)[0] = (v).x; (r)[1] = (v).y; }
#elif WIDTH == 4
typedef float4 floatX;
#define ZERO_X ((float4)(0.0f))
#define UNPACK_X(v, r) { (r)[0] = (v).x; (r)[1] = (v).y; (r)[2] = (v).z; (r)[3] = (v).w; }
#elif WIDTH == 8
typedef float8 floatX;
#define ZERO_X ((float8)(0.0f))
#define UNPACK_X(v, r) { (r)[0] = (v).s0; (r)[1] = (v).s1; (r)[2] = (v).s2; (r)[3] = (v).s3; \
                         (r)[4] = (v).s4; (r)[5] = (v).s5; (r)[6] = (v).s6; (r)[7] = (v).s7; }
#else
#error "myGEMM4: WIDTH must be 1, 2, 4 or 8"
#endif

#if (TS % WIDTH) != 0
#error "myGEMM4: TS must be a multiple of WIDTH"
#endif

#define TSV (TS / WIDTH)

__kernel GEMMLAB_BOUNDS(TSV, TS)
void myGEMM4(const int M, const int N, const int K,
             const __global float* restrict A,
             const __global float* restrict B,
             __global float* C) {
    const __global floatX* Av = (const __global floatX*)A;
    const __global floatX* Bv = (const __global floatX*)B;
    __global floatX* Cv = (__global floatX*)C;

    const int row = (int)get_local_id(0);            // 0..TSV-1, vector along M
    const int col = (int)get_local_id(1);            // 0..TS-1, along N
    const int gRow = TSV * (int)get_group_id(0) + row;   // in vectors
    const int gCol = TS * (int)get_group_id(1) + col;

    __local floatX Asub[TS][TSV];                    // Asub[k][m/WIDTH]
    __local floatX Bsub[TS][TSV];                    // Bsub[n][k/WIDTH]

    floatX acc = ZERO_X;
    const int numTiles = K / TS;
    for (int t = 0; t < numTiles; t++) {
        const int kA = TS * t + col;                 // k of the A vector I copy
        const int kB = TSV * t + row;                // k/WIDTH of the B vector I copy
        Asub[col][row] = Av[kA * (M / WIDTH) + gRow];
        Bsub[col][row] = Bv[gCol * (K / WIDTH) + kB];
        barrier(CLK_LOCAL_MEM_FENCE);

        GEMMLAB_UNROLL
        for (int kv = 0; kv < TSV; kv++) {
            const floatX vecB = Bsub[col][kv];
            float bw[WIDTH];
            UNPACK_X(vecB, bw);
            GEMMLAB_UNROLL
            for (int w = 0; w < WIDTH; w++) {
                acc += Asub[WIDTH * kv + w][row] * bw[w];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    Cv[gCol * (M / WIDTH) + gRow] = acc;
}
