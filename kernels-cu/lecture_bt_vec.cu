// matMulKernel_TRB_VEC -- the lecture's kernel with B stored transposed and
// explicit vectors (exercise 3), CUDA twin.
//
// What it does: one work-item per element of C, straight from global memory,
// B read from its transpose; a row of A and a row of B^T are read as vectors
// of VWIDTH reals, multiplied elementwise, and the components of the product
// are added to the sum one by one in the order .s0, .s1, ... (the lecture's
// dot-product form: 'Celems = Aelems * Belems; Cvalue += Celems.s0; ...').
// The lecture wrote it for float8 only (its exercise: 32-byte vectors, the
// stride already a multiple of 8); VW generalises the width, and VW = 0 (the
// default) is the lecture's choice, a 32-byte vector: float8 in f32, double4
// in f64. The loop runs over (Awidth-1)/VWIDTH+1 vectors, as the lecture's.
//
// Arguments (the lecture's, in this order): Aheight, Awidth, Bheight,
//   Bwidth, Astride, Bstride, Cstride (ints), Aelements, Belements (realV
//   buffers: vectors of VWIDTH reals), Celements (real_t buffer). Row-major
//   with strides, counted in reals: element (r, c) of a stored matrix is at
//   r*stride + c. Heights and widths are those of the matrices as stored:
//   A is M x K; B is stored as B^T, N x K (Bheight = N, Bwidth = K).
// Launch: local (BLOCK_SIZE, BLOCK_SIZE); NDRange x = columns of C (N), y =
//   rows of C (M), each rounded up to BLOCK_SIZE; get_global_id(0) is the
//   column. Work-items outside C compute nothing (the lecture's check).
// Assumes: Astride and Bstride are multiples of VWIDTH, and the elements of
//   A and B^T between the width (K) and the next multiple of VWIDTH are ZERO
//   (the lecture's host padded so; gemmlab's driver does); both buffers
//   start on a VWIDTH-real boundary and hold (height-1)*stride +
//   roundup(K, VWIDTH) reals. C's buffer holds (Aheight-1)*Cstride + Bheight.
// Parameters: BLOCK_SIZE (work-group edge: 8, 16 or 32; the lecture's
//   default 16); VW (0: the lecture's 32-byte vector; else 2, 4, 8 or 16
//   reals); PRECISION (32: real_t is float, 64: double).
// Shared memory: none.
// Switches (published state): USE_BOUNDS 1 -- __launch_bounds__(BLOCK_SIZE*
//   BLOCK_SIZE), where the OpenCL twin has reqd_work_group_size(BLOCK_SIZE,
//   BLOCK_SIZE,1), as on the lecture's exercise 1 kernel (its slides for
//   exercises 2 and 3 show the kernels from the 'kernel void' line on).
// vec_type_hint: the OpenCL twin carries the lecture's
//   __attribute__((vec_type_hint(real_t))); CUDA has no counterpart and
//   nothing stands in its place.
// Deliberate differences from the lecture: its C argument is 'float*' and
//   its operands 'float8*' with a real_t accumulator (a float-only
//   exercise); here all three are real_t / realV. Awidth8, Astride8 and
//   Bstride8 are named AwidthV, AstrideV and BstrideV.
// Twin differences: realV. The OpenCL twin uses OpenCL's native vector of
//   VWIDTH reals (float8 at the default: 32-byte aligned, loaded as whole
//   vectors, '*' elementwise). CUDA has no vector type of 8 or 16 floats,
//   nor a usable double4 (deprecated in CUDA 13, 16-byte aligned), and its
//   float2/float4/double2 have no '*'. So realV is here, at EVERY width, a
//   PLAIN STRUCT of VWIDTH reals with fields s0..s9, sa..sf (as far as
//   VWIDTH goes) and the alignment of OpenCL's vector of that width
//   (VWIDTH reals: 8 to 128 bytes, __align__), named realV_vec (the
//   prelude's float8 is another, float-aligned type), with a small
//   elementwise operator* so that the body reads 'Celems = Aelems *
//   Belems' as in OpenCL. How each compiler loads and multiplies these
//   (OpenCL float8: one 32-byte vector; CUDA: at most 16-byte loads of a
//   struct) is part of what gemmlab measures. 'uint' is typedef'd to
//   unsigned int (OpenCL's built-in). Otherwise the mapping OpenCL -> CUDA:
//   __kernel -> extern "C" __global__, __global dropped; get_global_id is
//   the prelude's int function (OpenCL's returns size_t; the lecture stores
//   it in an int either way). extern "C" keeps the unmangled name the host
//   looks up.

#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#ifndef VW
#define VW 0
#endif

#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif

// The vector width in reals: VW, or 32 bytes' worth where VW is 0
#if VW == 0
#if PRECISION == 64
#define VWIDTH 4
#else
#define VWIDTH 8
#endif
#else
#define VWIDTH VW
#endif
#if VWIDTH != 2 && VWIDTH != 4 && VWIDTH != 8 && VWIDTH != 16
#error "lecture_bt_vec: VW must be 0, 2, 4, 8 or 16"
#endif

#if PRECISION == 64
typedef double real_t;
#elif PRECISION == 32
typedef float real_t;
#else
#error "lecture_bt_vec: PRECISION must be 32 or 64"
#endif

// OpenCL's built-in 'uint'
typedef unsigned int uint;

// realV: a struct of VWIDTH reals with the alignment of OpenCL's vector of
// VWIDTH reals (float8 / double4 at the default: 32 bytes)
typedef struct __align__(VWIDTH * PRECISION / 8) {
    real_t s0; real_t s1;
#if VWIDTH >= 4
    real_t s2; real_t s3;
#endif
#if VWIDTH >= 8
    real_t s4; real_t s5; real_t s6; real_t s7;
#endif
#if VWIDTH >= 16
    real_t s8; real_t s9; real_t sa; real_t sb;
    real_t sc; real_t sd; real_t se; real_t sf;
#endif
} realV_vec;
typedef realV_vec realV;

// Elementwise product, as OpenCL's '*' on vectors
__device__ __forceinline__ realV operator*(const realV a, const realV b) {
    realV c;
    c.s0 = a.s0 * b.s0; c.s1 = a.s1 * b.s1;
#if VWIDTH >= 4
    c.s2 = a.s2 * b.s2; c.s3 = a.s3 * b.s3;
#endif
#if VWIDTH >= 8
    c.s4 = a.s4 * b.s4; c.s5 = a.s5 * b.s5; c.s6 = a.s6 * b.s6; c.s7 = a.s7 * b.s7;
#endif
#if VWIDTH >= 16
    c.s8 = a.s8 * b.s8; c.s9 = a.s9 * b.s9; c.sa = a.sa * b.sa; c.sb = a.sb * b.sb;
    c.sc = a.sc * b.sc; c.sd = a.sd * b.sd; c.se = a.se * b.se; c.sf = a.sf * b.sf;
#endif
    return c;
}

extern "C" __global__ GEMMLAB_BOUNDS(BLOCK_SIZE, BLOCK_SIZE)
void matMulKernel_TRB_VEC(
             int Aheight, int Awidth,
             int Bheight, int Bwidth,
             int Astride, int Bstride, int Cstride,
             realV* Aelements,
             realV* Belements,
             real_t* Celements )
{
  // Get global indices of work-item
  int global_row = get_global_id(1);
  int global_col = get_global_id(0);

  // Account for vector length of VWIDTH in width of A and stride of A and B
  uint AwidthV = (Awidth - 1) / VWIDTH + 1;
  uint AstrideV = Astride / VWIDTH;
  uint BstrideV = Bstride / VWIDTH;

  realV Aelems, Belems, Celems;

  // Check if we are within valid area of matrix C
  if( global_row < Aheight && global_col < Bheight ) {
    // Compute single element of C
    real_t Cvalue = 0;
    for (int e = 0; e < AwidthV; e++) {
      Aelems = Aelements[global_row * AstrideV + e];
      Belems = Belements[global_col * BstrideV + e];
      Celems = Aelems * Belems;
      Cvalue += Celems.s0;
      Cvalue += Celems.s1;
#if VWIDTH >= 4
      Cvalue += Celems.s2;
      Cvalue += Celems.s3;
#endif
#if VWIDTH >= 8
      Cvalue += Celems.s4;
      Cvalue += Celems.s5;
      Cvalue += Celems.s6;
      Cvalue += Celems.s7;
#endif
#if VWIDTH >= 16
      Cvalue += Celems.s8;
      Cvalue += Celems.s9;
      Cvalue += Celems.sa;
      Cvalue += Celems.sb;
      Cvalue += Celems.sc;
      Cvalue += Celems.sd;
      Cvalue += Celems.se;
      Cvalue += Celems.sf;
#endif
    }
    // Write result into C matrix
    Celements[global_row * Cstride + global_col] = Cvalue;
  }
}
