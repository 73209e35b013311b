// myGEMM11 -- clBlas-style register tiling without shared memory, CUDA twin.
//
// Idea: the structure of clBlas' sgemm block kernel that the tutorial
// re-rolled into loops. No shared memory and no barriers: 8x8 blocks, and
// each thread computes an RX x RY block of C (RX consecutive rows, RY
// consecutive columns) held as RY accumulator vectors c[0..RY-1] of RX
// floats each (clBlas' c0..c3). Per step of RK along K it loads
//   - RY vectors of B, one per output column, each RK consecutive k
//     (B is not transposed, so a column of B is contiguous along K), and
//   - RK vectors of A, one per k, each RX consecutive rows along M,
// and does RX*RY*RK multiply-adds as c[y] += a[k] * b[y][k] (vector times
// scalar). C is written as RY vectors of RX floats. The loops over k and y
// are fully unrolled (GEMMLAB_UNROLL), so c, a and b live in registers:
// RX*RY accumulators plus RX*RK + RY*RK inputs.
//
// Parameters: RX (rows per thread = A/C vector width), RY (columns per
//             thread), RK (k per step = B vector width); each in
//             {2, 4, 8}. clBlas uses RK = RY and so does the host.
// Launch: block (8, 8), grid (M/(8*RX), N/(8*RY)), i.e. NDRange
//         (M/RX, N/RY).
// Assumes: column-major A (MxK), B (KxN, NOT transposed), C (MxN);
//          M a multiple of 8*RX, N of 8*RY, K of RK; buffers aligned to
//          the vector widths (float pointers viewed as vectors).
// Twin differences: CUDA has float2/float4 but no vector arithmetic: the
//          operator helpers of prelude.cu (operator*, operator+=) do it
//          component by component. CUDA has no float8: width 8 uses the
//          plain 8-float struct gemmlab_float8 (float-aligned, so 8 scalar
//          loads/stores where OpenCL's float8 moves as a 32-byte vector).
//          The tutorial saw CUDA handle 8x4 tiles badly (register
//          pressure); this is part of what is measured.

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
#define ZERO_A make_float2(0.0f, 0.0f)
#elif RX == 4
typedef float4 floatA;
#define ZERO_A make_float4(0.0f, 0.0f, 0.0f, 0.0f)
#elif RX == 8
typedef gemmlab_float8 floatA;
#define ZERO_A gemmlab_make_float8(0.0f)
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
typedef gemmlab_float8 floatB;
#define UNPACK_B(v, r) { (r)[0] = (v).s0; (r)[1] = (v).s1; (r)[2] = (v).s2; (r)[3] = (v).s3; \
                         (r)[4] = (v).s4; (r)[5] = (v).s5; (r)[6] = (v).s6; (r)[7] = (v).s7; }
#else
#error "myGEMM11: RK must be 2, 4 or 8"
#endif

#if RY != 2 && RY != 4 && RY != 8
#error "myGEMM11: RY must be 2, 4 or 8"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(WG, WG)
void myGEMM11(const int M, const int N, const int K,
              const float* __restrict__ A,
              const float* __restrict__ B,
              float* C) {
    const floatA* Av = reinterpret_cast<const floatA*>(A);
    const floatB* Bv = reinterpret_cast<const floatB*>(B);
    floatA* Cv = reinterpret_cast<floatA*>(C);

    const int gx = WG * (int)blockIdx.x + (int)threadIdx.x;  // rows RX*gx ..
    const int gy = WG * (int)blockIdx.y + (int)threadIdx.y;  // columns RY*gy ..

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
