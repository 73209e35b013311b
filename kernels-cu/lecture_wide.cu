// matMulKernel_LM_WIDE -- the lecture's local-memory kernel with "wide
// tiles" (decreased work-item granularity), CUDA twin.
//
// What it does: matMulKernel_LM (exercise 4) where every work-item computes
// TWO elements of C, in the same row and BLOCK_SIZE columns apart, as the
// lecture's slide "Decreasing Work-Item Granularity" describes it: the
// BLOCK_SIZE x BLOCK_SIZE work-group covers BLOCK_SIZE rows x 2*BLOCK_SIZE
// columns of C; per step along the width of A it loads one sub-matrix of A
// (used for both elements: "number of loads from global memory further
// reduced (from matrix A)") and two neighbouring sub-matrices of B (Bs0,
// Bs1), then adds eMax products to each of the two sums. The lecture shows
// no code for this variant; the code is ours, written from that slide with
// exercise 4's index arithmetic, guarded loads, eMax and barriers.
//
// Arguments (the lecture's, in this order): Aheight, Awidth, Bheight,
//   Bwidth, Astride, Bstride, Cstride (ints), Aelements, Belements,
//   Celements (real_t buffers). Row-major with strides: element (r, c) of a
//   stored matrix is at r*stride + c. Heights and widths are those of the
//   matrices as stored: A is M x K, B is K x N.
// Launch: local (BLOCK_SIZE, BLOCK_SIZE); NDRange x = HALF the columns of C:
//   (columns of C rounded up to 2*BLOCK_SIZE) / 2; y = rows of C (M) rounded
//   up to BLOCK_SIZE. Work-group (bx, by) computes rows by*BLOCK_SIZE + 0..
//   BLOCK_SIZE-1 and columns 2*BLOCK_SIZE*bx + 0..2*BLOCK_SIZE-1 of C; the
//   work-item with local id (x, y) the columns 2*BLOCK_SIZE*bx + x and
//   2*BLOCK_SIZE*bx + x + BLOCK_SIZE. Every work-item takes part in the
//   loads and barriers; each element is written only where it lies in C.
// Assumes: nothing of the sizes (Awidth >= 1); A's buffer holds
//   (Aheight-1)*Astride + Awidth elements, B's likewise, C's
//   (Aheight-1)*Cstride + Bwidth.
// Border handling: as matMulKernel_LM: loads guarded by their linear index
//   against A_numElems / B_numElems, (height-1)*stride + width, and the
//   local element set to 0 where the load does not happen; eMax =
//   Awidth % BLOCK_SIZE on the last, incomplete sub-matrix.
// Parameters: BLOCK_SIZE (work-group and tile edge: 8, 16 or 32; the
//   lecture's default 16); PRECISION (32: real_t is float, 64: double).
// Shared memory: 3*BLOCK_SIZE*BLOCK_SIZE reals (As, Bs0, Bs1).
// Switches (published state): USE_BOUNDS 1 -- __launch_bounds__(BLOCK_SIZE*
//   BLOCK_SIZE), where the OpenCL twin has reqd_work_group_size(BLOCK_SIZE,
//   BLOCK_SIZE,1), as on the lecture's kernels.
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
#error "lecture_wide: PRECISION must be 32 or 64"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(BLOCK_SIZE, BLOCK_SIZE)
void matMulKernel_LM_WIDE(
             int Aheight, int Awidth,
             int Bheight, int Bwidth,
             int Astride, int Bstride, int Cstride,
             real_t* Aelements,
             real_t* Belements,
             real_t* Celements )
{
  // Block row and column of the BLOCK_SIZE x 2*BLOCK_SIZE part of C
  // this work-group computes
  int blockRow = get_group_id(1);
  int blockCol = get_group_id(0);

  // Row and column of the work-item within the block
  int row = get_local_id(1);
  int col = get_local_id(0);

  // Global indices of the two elements of C this work-item computes:
  // one row, two columns BLOCK_SIZE apart
  int global_row = BLOCK_SIZE * blockRow + row;
  int global_col0 = 2 * BLOCK_SIZE * blockCol + col;
  int global_col1 = global_col0 + BLOCK_SIZE;

  // Sub-matrix Asub and the two neighbouring sub-matrices Bsub in local memory
  __shared__ real_t As[BLOCK_SIZE*BLOCK_SIZE];
  __shared__ real_t Bs0[BLOCK_SIZE*BLOCK_SIZE];
  __shared__ real_t Bs1[BLOCK_SIZE*BLOCK_SIZE];

  // Number of sub-matrices along the width of A (rounded up), and the
  // width of the last one where it is incomplete (0 where it is complete)
  int mMax = (Awidth - 1) / BLOCK_SIZE + 1;
  int r = Awidth % BLOCK_SIZE;

  // Elements of A and B up to the end of their last rows
  int A_numElems = (Aheight - 1) * Astride + Awidth;
  int B_numElems = (Bheight - 1) * Bstride + Bwidth;

  int Asub_baseIndex, Bsub_baseIndex, Asub_index, Bsub_index;

  real_t Cvalue0 = 0;
  real_t Cvalue1 = 0;

  for (int m = 0; m < mMax; ++m) {
    // Get base indices of sub-matrix Asub of A and of the first of
    // the two sub-matrices Bsub of B
    Asub_baseIndex = Astride * BLOCK_SIZE * blockRow + BLOCK_SIZE * m;
    Bsub_baseIndex = Bstride * BLOCK_SIZE * m + 2 * BLOCK_SIZE * blockCol;

    // Load Asub and both Bsub from global memory to local memory
    // Each thread loads one element of each sub-matrix
    Asub_index = Asub_baseIndex + row * Astride + col;
    if( Asub_index < A_numElems )
      As[row*BLOCK_SIZE+col] = Aelements[Asub_index];
    else
      As[row*BLOCK_SIZE+col] = 0;
    Bsub_index = Bsub_baseIndex + row * Bstride + col;
    if( Bsub_index < B_numElems )
      Bs0[row*BLOCK_SIZE+col] = Belements[Bsub_index];
    else
      Bs0[row*BLOCK_SIZE+col] = 0;
    if( Bsub_index + BLOCK_SIZE < B_numElems )
      Bs1[row*BLOCK_SIZE+col] = Belements[Bsub_index + BLOCK_SIZE];
    else
      Bs1[row*BLOCK_SIZE+col] = 0;

    // Synchronize to make sure the sub-matrices are loaded
    // before starting the computation
    __syncthreads();

    // Multiply row of Asub with the columns of both Bsub
    // (only iterate up to eMax to prevent inclusion of invalid elements from
    // Asub and Bsub)
    int eMax;
    if( (m == (mMax-1)) & (r != 0) )
      eMax = r;
    else
      eMax = BLOCK_SIZE;
    for (int e = 0; e < eMax; ++e) {
      Cvalue0 += As[row*BLOCK_SIZE+e] * Bs0[e*BLOCK_SIZE+col];
      Cvalue1 += As[row*BLOCK_SIZE+e] * Bs1[e*BLOCK_SIZE+col];
    }

    // Synchronize to make sure that the preceding
    // computation is done before loading new
    // sub-matrices of A and B in the next iteration
    __syncthreads();
  }

  // Write results into C matrix (only elements within C)
  if( global_row < Aheight && global_col0 < Bwidth )
    Celements[global_row * Cstride + global_col0] = Cvalue0;
  if( global_row < Aheight && global_col1 < Bwidth )
    Celements[global_row * Cstride + global_col1] = Cvalue1;
}
