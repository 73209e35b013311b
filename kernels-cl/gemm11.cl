// myGEMM11 -- clBlas-style register tiling without local memory, OpenCL twin.
//
// Idea: the structure of clBlas' sgemm block kernel that the tutorial
// re-rolled into loops. No local memory and no barriers: 8x8 work-groups,
// and each work-item computes an RX x RY block of C (RX consecutive rows,
// RY consecutive columns) held as RY accumulator vectors c[0..RY-1] of RX
// floats each (clBlas' c0..c3). Per step of RK along K it loads
//   - RY vectors of B, one per output column, each RK consecutive k
//     (B is not transposed, so a column of B is contiguous along K), and
//   - RK vectors of A, one per k, each RX consecutive rows along M,
// and does RX*RY*RK multiply-adds as c[y] += a[k] * b[y][k] (vector times
// scalar). C is written as RY vectors of RX floats. Accesses are not
// coalesced across work-items in the way local-memory kernels arrange
// them; the wide vectors are what keep the memory traffic efficient.
// The loops over k and y are fully unrolled (GEMMLAB_UNROLL), so c, a and
// b live in registers: RX*RY accumulators plus RX*RK + RY*RK inputs.
//
// Parameters: RX (rows per work-item = A/C vector width), RY (columns per
//             work-item), RK (k per step = B vector width); each in
//             {2, 4, 8}. clBlas uses RK = RY and so does the host.
// Launch: local (8, 8), global (M/RX, N/RY).
// Assumes: column-major A (MxK), B (KxN, NOT transposed), C (MxN);
//          M a multiple of 8*RX, N of 8*RY, K of RK; buffers aligned to
//          the vector widths (float pointers viewed as vectors, so the host
//          passes plain float buffers).
// Twin differences: OpenCL uses native float2/float4/float8 and vector
//          arithmetic. The CUDA twin uses float2/float4 plus the operator
//          helpers of prelude.cu, and for width 8 the plain 8-float struct
//          gemmlab_float8 (float-aligned: 8 scalar loads/stores, and 8
//          separate scalar values per vector operation). The tutorial saw
//          CUDA handle 8x4 tiles badly (register pressure); this is
//          part of what is measured.

#ifndef RX
#define RX 8
#endif
#ifndef RY
#define RY 4
#endif
#ifndef RK
#define RK 4
#endif

#define WG 8

#if RX == 2
typedef float2 floatA;
#define ZERO_A ((float2)(0.0f))
#elif RX == 4
typedef float4 floatA;
#define ZERO_A ((float4)(0.0f))
#elif RX == 8
typedef float8 floatA;
#define ZERO_A ((float8)(0.0f))
#else
#error "myGEMM11: RX must be 2, 4 or 8"
#endif

#if RK == 2
typedef float2 floatB;
#define UNPACK_B(v, r) { (r)[0] = (v).x; (r)[1] = (v).y; }
#elif RK == 4
typedef float4 floatB;
#define UNPACK_B(v, r) { (r)[0] = (v).x; (r)[1] = (v).y; (r)[2] = (v).z; (r)[3] = (v).w; }
#elif RK == 8
typedef float8 floatB;
#define UNPACK_B(v, r) { (r)[0] = (v).s0; (r)[1] = (v).s1; (r)[2] = (v).s2; (r)[3] = (v).s3; \
                         (r)[4] = (v).s4; (r)[5] = (v).s5; (r)[6] = (v).s6; (r)[7] = (v).s7; }
#else
#error "myGEMM11: RK must be 2, 4 or 8"
#endif

#if RY != 2 && RY != 4 && RY != 8
#error "myGEMM11: RY must be 2, 4 or 8"
#endif

__kernel GEMMLAB_BOUNDS(WG, WG)
void myGEMM11(const int M, const int N, const int K,
              const __global float* restrict A,
              const __global float* restrict B,
              __global float* C) {
    const __global floatA* Av = (const __global floatA*)A;
    const __global floatB* Bv = (const __global floatB*)B;
    __global floatA* Cv = (__global floatA*)C;

    const int gx = WG * (int)get_group_id(0) + (int)get_local_id(0);  // rows RX*gx ..
    const int gy = WG * (int)get_group_id(1) + (int)get_local_id(1);  // columns RY*gy ..

    floatA c[RY];                                    // c[y]: rows RX*gx.., column RY*gy+y
    floatA a[RK];                                    // a[k]: rows RX*gx.., one k
    float b[RY][RK];                                 // b[y][k]: B(k, RY*gy+y)

    GEMMLAB_UNROLL
    for (int y = 0; y < RY; y++) {
        c[y] = ZERO_A;
    }

    const int numSteps = K / RK;
    for (int kt = 0; kt < numSteps; kt++) {
        GEMMLAB_UNROLL
        for (int y = 0; y < RY; y++) {
            const floatB bv = Bv[(RY * gy + y) * numSteps + kt];
            UNPACK_B(bv, b[y]);
        }
        GEMMLAB_UNROLL
        for (int k = 0; k < RK; k++) {
            a[k] = Av[(RK * kt + k) * (M / RX) + gx];
        }
        GEMMLAB_UNROLL
        for (int k = 0; k < RK; k++) {
            GEMMLAB_UNROLL
            for (int y = 0; y < RY; y++) {
                c[y] += a[k] * b[y][k];
            }
        }
    }

    GEMMLAB_UNROLL
    for (int y = 0; y < RY; y++) {
        Cv[(RY * gy + y) * (M / RX) + gx] = c[y];
    }
}
