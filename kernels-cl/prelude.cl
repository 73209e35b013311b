// gemmlab prelude, OpenCL C 1.2 side.
//
// The host compiles  prelude.cl + <kernel file>  as one source string and
// passes every kernel parameter and every switch the kernel declares as
// -D NAME=VALUE. Each kernel file declares its switches with the PUBLISHED
// state as the #ifndef default (so a file compiled by hand is the published
// kernel); the registry holds the same defaults and a test checks both.
//
// Switches (0 or 1) and the macros that read them. The macros expand lazily,
// at the place of use, so the kernel file may declare the switch after this
// prelude:
//   USE_BOUNDS   GEMMLAB_BOUNDS(X,Y)      reqd_work_group_size(X,Y,1)
//                                          (CUDA: __launch_bounds__(X*Y))
//   USE_RESTRICT GEMMLAB_RESTRICT         'restrict' on the A and B operands
//   UNROLL_*     GEMMLAB_UNROLL_IF(S)     '#pragma unroll' on the one loop a
//                                          switch is named after
//   VOLATILE_IDX GEMMLAB_VOLATILE_IDX     'volatile' on the tile-load index
//                                          (the tutorial's kernel 6 trick)
//
// MOD2 and DIV2 are the published settings.h helpers the kernels use.

#define GEMMLAB_CAT(a, b) a##b
#define GEMMLAB_XCAT(a, b) GEMMLAB_CAT(a, b)

#define GEMMLAB_BOUNDS_0(X, Y)
#define GEMMLAB_BOUNDS_1(X, Y) __attribute__((reqd_work_group_size((X), (Y), 1)))
#define GEMMLAB_BOUNDS(X, Y) GEMMLAB_XCAT(GEMMLAB_BOUNDS_, USE_BOUNDS)(X, Y)

#define GEMMLAB_RESTRICT_0
#define GEMMLAB_RESTRICT_1 restrict
#define GEMMLAB_RESTRICT GEMMLAB_XCAT(GEMMLAB_RESTRICT_, USE_RESTRICT)

#define GEMMLAB_UNROLL_0
#define GEMMLAB_UNROLL_1 _Pragma("unroll")
#define GEMMLAB_UNROLL_IF(S) GEMMLAB_XCAT(GEMMLAB_UNROLL_, S)

#define GEMMLAB_VOLATILE_0
#define GEMMLAB_VOLATILE_1 volatile
#define GEMMLAB_VOLATILE_IDX GEMMLAB_XCAT(GEMMLAB_VOLATILE_, VOLATILE_IDX)

// GEMMLAB_WAIT_PREVIOUS_GRID(), GEMMLAB_LAUNCH_NEXT_GRID(): the CUDA prelude's
// programmatic dependent launch; OpenCL has none, and the kernels' text stays
// the same in both twins.
#define GEMMLAB_WAIT_PREVIOUS_GRID()
#define GEMMLAB_LAUNCH_NEXT_GRID()

#define MOD2(x, y) ((x) % (y))
#define DIV2(x, y) ((x) / (y))
