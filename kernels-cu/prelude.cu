// gemmlab prelude, CUDA C++ side (compiled at run time by NVRTC, no headers).
//
// The host compiles  prelude.cu + <kernel file>  as one source string and
// passes every kernel parameter and every switch the kernel declares as
// -D NAME=VALUE. Each kernel file declares its switches with the PUBLISHED
// state as the #ifndef default; the registry holds the same defaults.
//
// The tutorial built its CUDA kernels by compiling kernels.cl through a
// small header (cl_to_cuda.h) that maps OpenCL onto CUDA. The CUDA twins
// are that text after the mapping, and this prelude supplies the parts of
// the mapping that stay visible in it, written the same way:
//   - get_local_id, get_group_id, get_global_id as __device__ functions
//     returning int, selecting x for 0 and y otherwise (get_global_id is
//     blockIdx*blockDim + threadIdx, so it reads blockDim at run time);
//   - float8 as a PLAIN struct of 8 floats (fields s0..s7). It has the
//     alignment of a float, so it is read and written as 8 scalar accesses,
//     whereas OpenCL's float8 is 32-byte aligned and loads as two 16-byte
//     vectors. That difference is part of what gemmlab measures.
//   - __ldg for float8 (8 scalar __ldg): the published kernels 8-10 call
//     __ldg on floatX, which the published build never compiled with
//     WIDTH=8; this overload lets that configuration compile.
//
// Switches (0 or 1) and the macros that read them, expanded at the place of
// use (the OpenCL prelude maps the same switches):
//   USE_BOUNDS   GEMMLAB_BOUNDS(X,Y)      __launch_bounds__(X*Y)
//                                          (OpenCL: reqd_work_group_size)
//   USE_RESTRICT GEMMLAB_RESTRICT         __restrict__ on the A and B operands
//   UNROLL_*     GEMMLAB_UNROLL_IF(S)     '#pragma unroll' on the one loop a
//                                          switch is named after
//   VOLATILE_IDX GEMMLAB_VOLATILE_IDX     'volatile' on the tile-load index

#define GEMMLAB_CAT(a, b) a##b
#define GEMMLAB_XCAT(a, b) GEMMLAB_CAT(a, b)

#define GEMMLAB_BOUNDS_0(X, Y)
#define GEMMLAB_BOUNDS_1(X, Y) __launch_bounds__((X) * (Y))
#define GEMMLAB_BOUNDS(X, Y) GEMMLAB_XCAT(GEMMLAB_BOUNDS_, USE_BOUNDS)(X, Y)

#define GEMMLAB_RESTRICT_0
#define GEMMLAB_RESTRICT_1 __restrict__
#define GEMMLAB_RESTRICT GEMMLAB_XCAT(GEMMLAB_RESTRICT_, USE_RESTRICT)

#define GEMMLAB_UNROLL_0
#define GEMMLAB_UNROLL_1 _Pragma("unroll")
#define GEMMLAB_UNROLL_IF(S) GEMMLAB_XCAT(GEMMLAB_UNROLL_, S)

#define GEMMLAB_VOLATILE_0
#define GEMMLAB_VOLATILE_1 volatile
#define GEMMLAB_VOLATILE_IDX GEMMLAB_XCAT(GEMMLAB_VOLATILE_, VOLATILE_IDX)

// Programmatic dependent launch, sm_90 and later. GEMMLAB_WAIT_PREVIOUS_GRID():
// before its first access to global memory, a kernel waits until the previous
// grid of the stream has finished and its writes are visible. The backend
// launches a kernel whose PTX has the wait with programmatic stream
// serialization, so that its launch overlaps the end of the kernel before it.
// GEMMLAB_LAUNCH_NEXT_GRID(): the next grid may be scheduled once every block
// of this one has passed here (else as they finish); a GEMM says so after its
// main loop, not before: released at their start, the routine's launches piled
// up waiting and its 1024^3 call ran 2.2 times slower. simt does neither with
// split-K or stream-K (see there). Without the launch
// attribute both do nothing; the OpenCL prelude defines them empty.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GEMMLAB_WAIT_PREVIOUS_GRID() asm volatile("griddepcontrol.wait;" ::: "memory")
#define GEMMLAB_LAUNCH_NEXT_GRID() asm volatile("griddepcontrol.launch_dependents;" ::: "memory")
#else
#define GEMMLAB_WAIT_PREVIOUS_GRID()
#define GEMMLAB_LAUNCH_NEXT_GRID()
#endif

#define MOD2(x, y) ((x) % (y))
#define DIV2(x, y) ((x) / (y))

__device__ int get_local_id(int x) {
    return (x == 0) ? threadIdx.x : threadIdx.y;
}
__device__ int get_group_id(int x) {
    return (x == 0) ? blockIdx.x : blockIdx.y;
}
__device__ int get_global_id(int x) {
    return (x == 0) ? blockIdx.x * blockDim.x + threadIdx.x
                    : blockIdx.y * blockDim.y + threadIdx.y;
}

typedef struct {
    float s0; float s1; float s2; float s3;
    float s4; float s5; float s6; float s7;
} float8;

__device__ __forceinline__ float8 __ldg(const float8* p) {
    const float* f = (const float*)p;
    float8 r;
    r.s0 = __ldg(f + 0); r.s1 = __ldg(f + 1); r.s2 = __ldg(f + 2); r.s3 = __ldg(f + 3);
    r.s4 = __ldg(f + 4); r.s5 = __ldg(f + 5); r.s6 = __ldg(f + 6); r.s7 = __ldg(f + 7);
    return r;
}
