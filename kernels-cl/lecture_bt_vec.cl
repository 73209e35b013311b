// matMulKernel_TRB_VEC -- the lecture's kernel with B stored transposed and
// explicit vectors (exercise 3), OpenCL twin.
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
// Local memory: none.
// Switches (published state): USE_BOUNDS 1 -- reqd_work_group_size(BLOCK_SIZE,
//   BLOCK_SIZE,1), as on the lecture's exercise 1 kernel (its slides for
//   exercises 2 and 3 show the kernels from the 'kernel void' line on).
// Also OpenCL only: __attribute__((vec_type_hint(real_t))), as on the
//   lecture's kernels. It has no CUDA counterpart; the CUDA twin has nothing
//   in its place. It stays on in every configuration (it is not a switch).
// Deliberate differences from the lecture: its C argument is 'float*' and
//   its operands 'float8*' with a real_t accumulator (a float-only
//   exercise); here all three are real_t / realV. Awidth8, Astride8 and
//   Bstride8 are named AwidthV, AstrideV and BstrideV.
// Twin differences: realV is OpenCL's native vector here (float8 at the
//   default: 32-byte aligned, loaded as whole vectors); CUDA has no vector
//   type of 8 floats (nor a usable double4), so its twin uses a struct of
//   VWIDTH reals with the OpenCL vector's alignment and an elementwise
//   operator*. Otherwise the OpenCL -> CUDA spelling and vec_type_hint.

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
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real_t;
#define REALV_NAME double
#elif PRECISION == 32
typedef float real_t;
#define REALV_NAME float
#else
#error "lecture_bt_vec: PRECISION must be 32 or 64"
#endif

// realV: OpenCL's vector of VWIDTH reals (float8 / double4 at the default)
typedef GEMMLAB_XCAT(REALV_NAME, VWIDTH) realV;

__kernel GEMMLAB_BOUNDS(BLOCK_SIZE, BLOCK_SIZE)
__attribute__((vec_type_hint(real_t)))
void matMulKernel_TRB_VEC(
             int Aheight, int Awidth,
             int Bheight, int Bwidth,
             int Astride, int Bstride, int Cstride,
             __global realV* Aelements,
             __global realV* Belements,
             __global real_t* Celements )
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
