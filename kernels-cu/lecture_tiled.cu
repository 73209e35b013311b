// matMulKernel_LM -- the lecture's local-memory kernel (exercise 4), CUDA twin.
//
// What it does: a BLOCK_SIZE x BLOCK_SIZE work-group computes a
// BLOCK_SIZE x BLOCK_SIZE sub-matrix of C. It walks over the mMax
// sub-matrices along the width of A (rounded up); for each, every work-item
// loads one element of Asub and one of Bsub into local memory, the group
// synchronises, every work-item adds eMax products from local memory (eMax
// is the remainder r = Awidth % BLOCK_SIZE on the last sub-matrix, where it
// is incomplete, else BLOCK_SIZE), and the group synchronises again. The loop
// is the lecture's exercise 4 solution line for line (Asub/Bsub base indices,
// loads guarded by 'index < numElems', eMax, barriers); the slide leaves out
// the kernel's head and tail, written here as the lecture's earlier kernels
// and algorithm slide describe them.
//
// Arguments (the lecture's, in this order): Aheight, Awidth, Bheight,
//   Bwidth, Astride, Bstride, Cstride (ints), Aelements, Belements,
//   Celements (real_t buffers). Row-major with strides: element (r, c) of a
//   stored matrix is at r*stride + c. Heights and widths are those of the
//   matrices as stored: A is M x K, B is K x N.
// Launch: local (BLOCK_SIZE, BLOCK_SIZE); NDRange x = columns of C (N), y =
//   rows of C (M), each rounded up to BLOCK_SIZE; get_global_id(0) is the
//   column. Every work-item takes part in the loads and barriers; only those
//   inside C write.
// Assumes: nothing of the sizes (Awidth >= 1); A's buffer holds
//   (Aheight-1)*Astride + Awidth elements, B's likewise, C's
//   (Aheight-1)*Cstride + Bwidth.
// Border handling: a load is guarded by its linear index against A_numElems
//   (resp. B_numElems), the number of elements up to the end of the
//   matrix's last row. A load past the width of A (or of B) inside that
//   range reads a valid element of the buffer (a stride gap or the next
//   row) that the eMax limit (A) or the write check (B) keeps out of C.
// Parameters: BLOCK_SIZE (work-group and tile edge: 8, 16 or 32; the
//   lecture's default 16); PRECISION (32: real_t is float, 64: double).
// Shared memory: 2*BLOCK_SIZE*BLOCK_SIZE reals (2 KiB at the defaults in f32).
// Switches (published state): USE_BOUNDS 1 -- __launch_bounds__(BLOCK_SIZE*
//   BLOCK_SIZE), where the OpenCL twin has reqd_work_group_size(BLOCK_SIZE,
//   BLOCK_SIZE,1), as on the lecture's kernels.
// vec_type_hint: the OpenCL twin carries the lecture's
//   __attribute__((vec_type_hint(real_t))); CUDA has no counterpart and
//   nothing stands in its place.
// Deliberate differences from the lecture: where a guarded load does not
//   happen, the local element is set to 0 ('else ... = 0'), so that no
//   stale value of an earlier sub-matrix (or uninitialised local memory)
//   stays in the tile. The lecture leaves it unwritten; eMax and the write
//   check keep such elements out of C either way, so the results are the
//   same; the extra store is the difference. The slide does not show how
//   A_numElems / B_numElems are defined: here (height-1)*stride + width, the
//   end of the last row, so that no load reaches past a buffer that ends
//   there (gemmlab's driver passes such buffers; height*stride, which
//   the slide's names fit as well, would read up to stride - width
//   elements past their end).
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
#error "lecture_tiled: PRECISION must be 32 or 64"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(BLOCK_SIZE, BLOCK_SIZE)
void matMulKernel_LM(
             int Aheight, int Awidth,
             int Bheight, int Bwidth,
             int Astride, int Bstride, int Cstride,
             real_t* Aelements,
             real_t* Belements,
             real_t* Celements )
{
  // Block row and column of the sub-matrix of C this work-group computes
  int blockRow = get_group_id(1);
  int blockCol = get_group_id(0);

  // Row and column of the work-item within the sub-matrix
  int row = get_local_id(1);
  int col = get_local_id(0);

  // Global indices of the element of C this work-item computes
  int global_row = BLOCK_SIZE * blockRow + row;
  int global_col = BLOCK_SIZE * blockCol + col;

  // Sub-matrices Asub and Bsub in local memory
  __shared__ real_t As[BLOCK_SIZE*BLOCK_SIZE];
  __shared__ real_t Bs[BLOCK_SIZE*BLOCK_SIZE];

  // Number of sub-matrices along the width of A (rounded up), and the
  // width of the last one where it is incomplete (0 where it is complete)
  int mMax = (Awidth - 1) / BLOCK_SIZE + 1;
  int r = Awidth % BLOCK_SIZE;

  // Elements of A and B up to the end of their last rows
  int A_numElems = (Aheight - 1) * Astride + Awidth;
  int B_numElems = (Bheight - 1) * Bstride + Bwidth;

  int Asub_baseIndex, Bsub_baseIndex, Asub_index, Bsub_index;

  real_t Cvalue = 0;

  for (int m = 0; m < mMax; ++m) {
    // Get base indices of sub-matrices Asub of A and Bsub of B
    Asub_baseIndex = Astride * BLOCK_SIZE * blockRow + BLOCK_SIZE * m;
    Bsub_baseIndex = Bstride * BLOCK_SIZE * m + BLOCK_SIZE * blockCol;

    // Load Asub and Bsub from global memory to local memory
    // Each thread loads one element of each sub-matrix
    Asub_index = Asub_baseIndex + row * Astride + col;
    if( Asub_index < A_numElems )
      As[row*BLOCK_SIZE+col] = Aelements[Asub_index];
    else
      As[row*BLOCK_SIZE+col] = 0;
    Bsub_index = Bsub_baseIndex + row * Bstride + col;
    if( Bsub_index < B_numElems )
      Bs[row*BLOCK_SIZE+col] = Belements[Bsub_index];
    else
      Bs[row*BLOCK_SIZE+col] = 0;

    // Synchronize to make sure the sub-matrices are loaded
    // before starting the computation
    __syncthreads();

    // Multiply row of Asub and column of Bsub together
    // (only iterate up to eMax to prevent inclusion of invalid elements from
    // Asub and Bsub)
    int eMax;
    if( (m == (mMax-1)) & (r != 0) )
      eMax = r;
    else
      eMax = BLOCK_SIZE;
    for (int e = 0; e < eMax; ++e)
      Cvalue += As[row*BLOCK_SIZE+e] * Bs[e*BLOCK_SIZE+col];

    // Synchronize to make sure that the preceding
    // computation is done before loading two new
    // sub-matrices of A and B in the next iteration
    __syncthreads();
  }

  // Write result into C matrix (only work-items within C)
  if( global_row < Aheight && global_col < Bwidth )
    Celements[global_row * Cstride + global_col] = Cvalue;
}
