// gemmlab prelude, CUDA C++ side (compiled at run time by NVRTC, no headers).
//
// The host compiles  prelude.cu + <kernel file>  as one source string and
// passes every switch below (and every kernel parameter) as -D NAME=VALUE.
// The #ifndef defaults only matter when a file is compiled by hand.
//
// Switches and the macros they control (the OpenCL twin, prelude.cl, maps
// the same switches onto the closest OpenCL construct):
//   USE_BOUNDS   (1) GEMMLAB_BOUNDS(X,Y)   -> __launch_bounds__(X*Y)
//                                             (OpenCL: reqd_work_group_size)
//   USE_UNROLL   (1) GEMMLAB_UNROLL        -> #pragma unroll on the loops a
//                                             kernel marks with it
//   VOLATILE_IDX (0) GEMMLAB_IDX_QUALIFIER -> 'volatile' on the tile-load
//                                             index (kernels 6-10)
//
// Vector types. CUDA has float2/float4 (built in, 8- and 16-byte aligned)
// but no float8 and no arithmetic on vector types. To let the kernel bodies
// read like their OpenCL twins ("acc += vec * scalar"), this prelude adds:
//   - gemmlab_float8: a PLAIN struct of 8 floats (fields s0..s7, named like
//     OpenCL's float8 components). It has the alignment of a float, so the
//     compiler reads and writes it as 8 scalar accesses, whereas OpenCL's
//     float8 is 32-byte aligned. This difference is deliberate: it is what
//     the tutorial's CUDA port did, and it is part of what gemmlab measures.
//   - operator* (vector, scalar) and operator+= (vector, vector) for float2,
//     float4 and gemmlab_float8, component by component.

#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif
#ifndef USE_UNROLL
#define USE_UNROLL 1
#endif
#ifndef VOLATILE_IDX
#define VOLATILE_IDX 0
#endif

#if USE_BOUNDS != 0
#define GEMMLAB_BOUNDS(X, Y) __launch_bounds__((X) * (Y))
#else
#define GEMMLAB_BOUNDS(X, Y)
#endif

#if USE_UNROLL != 0
#define GEMMLAB_UNROLL _Pragma("unroll")
#else
#define GEMMLAB_UNROLL
#endif

#if VOLATILE_IDX != 0
#define GEMMLAB_IDX_QUALIFIER volatile
#else
#define GEMMLAB_IDX_QUALIFIER
#endif

struct gemmlab_float8 {
    float s0, s1, s2, s3, s4, s5, s6, s7;
};

__device__ __forceinline__ float2 operator*(const float2 v, const float s) {
    return make_float2(v.x * s, v.y * s);
}
__device__ __forceinline__ float4 operator*(const float4 v, const float s) {
    return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}
__device__ __forceinline__ gemmlab_float8 operator*(const gemmlab_float8 v, const float s) {
    gemmlab_float8 r;
    r.s0 = v.s0 * s; r.s1 = v.s1 * s; r.s2 = v.s2 * s; r.s3 = v.s3 * s;
    r.s4 = v.s4 * s; r.s5 = v.s5 * s; r.s6 = v.s6 * s; r.s7 = v.s7 * s;
    return r;
}

__device__ __forceinline__ void operator+=(float2& a, const float2 b) {
    a.x += b.x; a.y += b.y;
}
__device__ __forceinline__ void operator+=(float4& a, const float4 b) {
    a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
}
__device__ __forceinline__ void operator+=(gemmlab_float8& a, const gemmlab_float8 b) {
    a.s0 += b.s0; a.s1 += b.s1; a.s2 += b.s2; a.s3 += b.s3;
    a.s4 += b.s4; a.s5 += b.s5; a.s6 += b.s6; a.s7 += b.s7;
}

__device__ __forceinline__ gemmlab_float8 gemmlab_make_float8(const float s) {
    gemmlab_float8 r;
    r.s0 = s; r.s1 = s; r.s2 = s; r.s3 = s; r.s4 = s; r.s5 = s; r.s6 = s; r.s7 = s;
    return r;
}
