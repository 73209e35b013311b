// myGEMM11 -- clBlas-style register tiling with vector types, no shared memory, CUDA twin.
//
// What it does: mimics clBlas' sgemm kernel. No shared memory and no
// __syncthreads; each thread computes an RX x RY block of C (RX consecutive
// rows, RY consecutive columns) in registers. Per step of RK along K it
// loads RY vectors of A (one per k, RX rows each, floatA) and RY vectors of
// B (one per column of C, RK consecutive k each, floatB), then does
// RX*RY*RK multiply-adds, and finally stores RY vectors of RX floats
// (floatC). The loads use aReg[y] for k = y, which is why RK must equal RY.
//
// Parameters: RX (rows per thread; width of floatA/floatC: 2, 4 or 8),
//             RY (columns per thread), RK (k per step; width of floatB:
//             2, 4 or 8). RK == RY (settings.h: RK = RY).
//             THREADSX = THREADSY = 8 are fixed (the block size).
// Launch: block (THREADSX, THREADSY) = (8, 8), grid (M/(8*RX), N/(8*RY)),
//         i.e. NDRange (M/RX, N/RY).
// Assumes: column-major A (M x K), B (K x N, NOT transposed) and C
//          (M x N); M a multiple of 8*RX, N of 8*RY, K of RK; buffers
//          aligned to the vector widths (A and C read/written as floatA/
//          floatC, B as floatB).
// Shared memory: none.
// Switches (published state): USE_BOUNDS 0, USE_RESTRICT 1 (the published
//          kernel has 'restrict', i.e. __restrict__, on A and B), UNROLL_K 1
//          (the published '#pragma unroll' on the k loop). The accumulator
//          initialisation has '#pragma unroll' on the y loop only and
//          writes 0.0, as published.
// Twin differences: get_global_id is the prelude's int function here, so
//          the index expressions (RK*t + y)*(M/RX) + get_global_id(0) and
//          (RY*get_global_id(1) + y)*numTiles + t are 32-bit int, as in the
//          published CUDA build; in the OpenCL twin get_global_id returns
//          size_t and they are 64-bit. float8 (RX or RK = 8) is the
//          prelude's plain 8-float struct (float-aligned: 8 scalar loads and
//          stores), OpenCL's native 32-byte-aligned vector in the OpenCL
//          twin. extern "C" keeps the unmangled name the host looks up.

#ifndef RX
#define RX 8
#endif
#ifndef RY
#define RY 4
#endif
#ifndef RK
#define RK (RY)
#endif

#ifndef USE_BOUNDS
#define USE_BOUNDS 0
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 1
#endif
#ifndef UNROLL_K
#define UNROLL_K 1
#endif

// Work-group size (fixed, as published)
#define THREADSX 8
#define THREADSY 8

#if RX != 2 && RX != 4 && RX != 8
#error "myGEMM11: RX must be 2, 4 or 8 (the vector width of A and C)"
#endif
#if RK != 2 && RK != 4 && RK != 8
#error "myGEMM11: RK must be 2, 4 or 8 (the vector width of B)"
#endif
#if RK != RY
#error "myGEMM11: RK must equal RY (the loads fill aReg[y] for k = y)"
#endif

// Vector types of A, B and C
#if RX == 2
    typedef float2 floatA;
    typedef float2 floatC;
#elif RX == 4
    typedef float4 floatA;
    typedef float4 floatC;
#elif RX == 8
    typedef float8 floatA;
    typedef float8 floatC;
#endif
#if RK == 2
    typedef float2 floatB;
#elif RK == 4
    typedef float4 floatB;
#elif RK == 8
    typedef float8 floatB;
#endif

// clBlas-style kernel: RX x RY register tile per work-item, vector loads
extern "C" __global__ GEMMLAB_BOUNDS(THREADSX, THREADSY)
void myGEMM11(const int M, const int N, const int K,
              const floatA* GEMMLAB_RESTRICT A,
              const floatB* GEMMLAB_RESTRICT B,
              floatC* C) {

    // Registers
    float aReg[RK][RX];
    float bReg[RY][RK];
    float acc[RY][RX];

    // Zero the accumulators
    #pragma unroll
    for (int y=0; y<RY; y++) {
        for (int x=0; x<RX; x++) {
            acc[y][x] = 0.0;
        }
    }

    // Loop over K in steps of RK
    const int numTiles = K/RK;
    for (int t=0; t<numTiles; t++) {

        // Load RY vectors of A and of B into registers
        #pragma unroll
        for (int y=0; y<RY; y++) {

            // One vector of A (RX rows at k = RK*t + y), one of B (RK k's of column y)
            floatA aVec = A[(RK*t + y)*(M/RX) + get_global_id(0)];
            floatB bVec = B[(RY*get_global_id(1) + y)*numTiles + t];

            // Unpack the vector of A
            #if RX == 2
                aReg[y][0] = aVec.x;
                aReg[y][1] = aVec.y;
            #elif RX == 4
                aReg[y][0] = aVec.x;
                aReg[y][1] = aVec.y;
                aReg[y][2] = aVec.z;
                aReg[y][3] = aVec.w;
            #elif RX == 8
                aReg[y][0] = aVec.s0;
                aReg[y][1] = aVec.s1;
                aReg[y][2] = aVec.s2;
                aReg[y][3] = aVec.s3;
                aReg[y][4] = aVec.s4;
                aReg[y][5] = aVec.s5;
                aReg[y][6] = aVec.s6;
                aReg[y][7] = aVec.s7;
            #endif

            // Unpack the vector of B
            #if RK == 2
                bReg[y][0] = bVec.x;
                bReg[y][1] = bVec.y;
            #elif RK == 4
                bReg[y][0] = bVec.x;
                bReg[y][1] = bVec.y;
                bReg[y][2] = bVec.z;
                bReg[y][3] = bVec.w;
            #elif RK == 8
                bReg[y][0] = bVec.s0;
                bReg[y][1] = bVec.s1;
                bReg[y][2] = bVec.s2;
                bReg[y][3] = bVec.s3;
                bReg[y][4] = bVec.s4;
                bReg[y][5] = bVec.s5;
                bReg[y][6] = bVec.s6;
                bReg[y][7] = bVec.s7;
            #endif
        }

        // Multiply-accumulate
        GEMMLAB_UNROLL_IF(UNROLL_K)
        for (int k=0; k<RK; k++) {
            #pragma unroll
            for (int y=0; y<RY; y++) {
                #pragma unroll
                for (int x=0; x<RX; x++) {
                    acc[y][x] += aReg[k][x] * bReg[y][k];
                }
            }
        }
    }

    // Write the results to C, one vector per column
    #pragma unroll
    for (int y=0; y<RY; y++) {
        floatC accVec;
        #if RX == 2
            accVec.x = acc[y][0];
            accVec.y = acc[y][1];
        #elif RX == 4
            accVec.x = acc[y][0];
            accVec.y = acc[y][1];
            accVec.z = acc[y][2];
            accVec.w = acc[y][3];
        #elif RX == 8
            accVec.s0 = acc[y][0];
            accVec.s1 = acc[y][1];
            accVec.s2 = acc[y][2];
            accVec.s3 = acc[y][3];
            accVec.s4 = acc[y][4];
            accVec.s5 = acc[y][5];
            accVec.s6 = acc[y][6];
            accVec.s7 = acc[y][7];
        #endif
        C[(y + RY*get_global_id(1)) * (M/RX) + get_global_id(0)] = accVec;
    }
}
