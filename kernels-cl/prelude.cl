// gemmlab prelude, OpenCL C 1.2 side.
//
// The host compiles  prelude.cl + <kernel file>  as one source string and
// passes every switch below (and every kernel parameter) as -D NAME=VALUE.
// The #ifndef defaults only matter when a file is compiled by hand.
//
// Switches and the macros they control (the CUDA twin, prelude.cu, maps the
// same switches onto the closest CUDA construct):
//   USE_BOUNDS   (1) GEMMLAB_BOUNDS(X,Y)   -> reqd_work_group_size(X,Y,1)
//                                             (CUDA: __launch_bounds__(X*Y))
//   USE_UNROLL   (1) GEMMLAB_UNROLL        -> #pragma unroll on the loops a
//                                             kernel marks with it
//   VOLATILE_IDX (0) GEMMLAB_IDX_QUALIFIER -> 'volatile' on the tile-load
//                                             index (kernels 6-10), the
//                                             tutorial's trick against
//                                             hoisted index arithmetic
//
// OpenCL C has native float2/float4/float8 types and vector arithmetic, so
// unlike prelude.cu nothing vector-related is defined here.

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
#define GEMMLAB_BOUNDS(X, Y) __attribute__((reqd_work_group_size((X), (Y), 1)))
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
