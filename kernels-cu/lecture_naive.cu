// matMulKernel -- the lecture's naive kernel (exercise 1), CUDA twin.
//
// What it does: one work-item per element of C, straight from global memory:
// C[row][col] = sum over e of A[row][e] * B[e][col], the lecture's exercise 1
// solution line for line.
//
// Arguments (the lecture's, in this order): Aheight, Awidth, Bheight,
//   Bwidth, Astride, Bstride, Cstride (ints), Aelements, Belements,
//   Celements (real_t buffers). Row-major with strides: element (r, c) of a
//   stored matrix is at r*stride + c. Heights and widths are those of the
//   matrices as stored: A is M x K (Aheight = M, Awidth = K), B is K x N.
// Launch: local (BLOCK_SIZE, BLOCK_SIZE); NDRange x = columns of C (N), y =
//   rows of C (M), each rounded up to BLOCK_SIZE; get_global_id(0) is the
//   column. Work-items outside C compute nothing (the lecture's check).
// Assumes: nothing of the sizes; A's buffer holds (Aheight-1)*Astride +
//   Awidth elements, B's likewise, C's (Aheight-1)*Cstride + Bwidth.
// Parameters: BLOCK_SIZE (work-group edge: 8, 16 or 32; the lecture's
//   default 16); PRECISION (32: real_t is float, 64: double).
// Shared memory: none.
// Switches (published state): USE_BOUNDS 1 -- __launch_bounds__(BLOCK_SIZE*
//   BLOCK_SIZE), where the OpenCL twin has reqd_work_group_size(BLOCK_SIZE,
//   BLOCK_SIZE,1), as on the lecture's kernel.
// vec_type_hint: the OpenCL twin carries the lecture's
//   __attribute__((vec_type_hint(real_t))); CUDA has no counterpart and
//   nothing stands in its place.
// Twin differences: the body is the OpenCL twin's text after the mapping
//   OpenCL -> CUDA: __kernel -> extern "C" __global__, __global dropped,
//   __local -> __shared__, barrier(CLK_LOCAL_MEM_FENCE) -> __syncthreads();
//   get_global_id, get_group_id and get_local_id are the prelude's int
//   functions (OpenCL's return size_t; the lecture stores them in ints
//   either way). extern "C" keeps the unmangled name the host looks up.

#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif

#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif

#if PRECISION == 64
typedef double real_t;
#elif PRECISION == 32
typedef float real_t;
#else
#error "lecture_naive: PRECISION must be 32 or 64"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(BLOCK_SIZE, BLOCK_SIZE)
void matMulKernel(
             int Aheight, int Awidth,
             int Bheight, int Bwidth,
             int Astride, int Bstride, int Cstride,
             real_t* Aelements,
             real_t* Belements,
             real_t* Celements )
{
  // Get global indices of work-item
  int global_row = get_global_id(1);
  int global_col = get_global_id(0);

  // Check if we are within valid area of matrix C
  if( global_row < Aheight && global_col < Bwidth ) {
    // Compute single element of C
    real_t Cvalue = 0;
    for (int e = 0; e < Awidth; ++e)
      Cvalue += Aelements[global_row * Astride + e]
              * Belements[e * Bstride + global_col];
    // Write result into C matrix
    Celements[global_row * Cstride + global_col] = Cvalue;
  }
}
