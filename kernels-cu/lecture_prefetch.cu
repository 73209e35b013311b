// matMulKernel_LM_PF -- the lecture's local-memory kernel with data
// prefetching ("tiled, Prefetch"), CUDA twin.
//
// What it does: matMulKernel_LM (exercise 4) with the next sub-matrices of
// A and B fetched from global memory while the current ones are used, as
// the lecture's slide "Data Prefetching / Double Buffering" lays it out:
//   - blue tile: register file -> local memory
//   - synchronize work-items
//   - orange tile: global memory -> register file
//   - compute blue tile
//   - synchronize work-items
//   - move on: orange tile becomes blue tile, new orange tile.
// So each work-item holds the next element of Asub and of Bsub in a register
// (Areg, Breg), the group has ONE Asub and ONE Bsub in local memory, and the
// global loads of sub-matrix m+1 are issued before the products of
// sub-matrix m. The lecture shows no code for this variant; the code is
// ours, written from that slide with exercise 4's index arithmetic, guarded
// loads and eMax. (The other common form, two local buffers per operand
// with one barrier per step, is not what the slide describes.)
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
// Border handling: as matMulKernel_LM: loads guarded by their linear index
//   against A_numElems / B_numElems, (height-1)*stride + width; a register
//   whose load does not happen is set to 0; eMax = Awidth % BLOCK_SIZE on
//   the last, incomplete sub-matrix.
// Parameters: BLOCK_SIZE (work-group and tile edge: 8, 16 or 32; the
//   lecture's default 16); PRECISION (32: real_t is float, 64: double).
// Shared memory: 2*BLOCK_SIZE*BLOCK_SIZE reals (as matMulKernel_LM: the
//   prefetch buffer is the registers Areg and Breg).
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
#error "lecture_prefetch: PRECISION must be 32 or 64"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(BLOCK_SIZE, BLOCK_SIZE)
void matMulKernel_LM_PF(
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

  // The prefetched elements of the next Asub and Bsub ("orange tile")
  real_t Areg, Breg;

  // Fetch the first sub-matrices into registers
  Asub_baseIndex = Astride * BLOCK_SIZE * blockRow;
  Bsub_baseIndex = BLOCK_SIZE * blockCol;
  Asub_index = Asub_baseIndex + row * Astride + col;
  if( Asub_index < A_numElems )
    Areg = Aelements[Asub_index];
  else
    Areg = 0;
  Bsub_index = Bsub_baseIndex + row * Bstride + col;
  if( Bsub_index < B_numElems )
    Breg = Belements[Bsub_index];
  else
    Breg = 0;

  real_t Cvalue = 0;

  for (int m = 0; m < mMax; ++m) {
    // Registers to local memory: the prefetched elements become
    // the current sub-matrices Asub and Bsub ("blue tile")
    As[row*BLOCK_SIZE+col] = Areg;
    Bs[row*BLOCK_SIZE+col] = Breg;

    // Synchronize to make sure the sub-matrices are stored
    // before starting the computation
    __syncthreads();

    // Fetch the next sub-matrices from global memory into registers
    // while the current ones are used
    if( m + 1 < mMax ) {
      Asub_baseIndex = Astride * BLOCK_SIZE * blockRow + BLOCK_SIZE * (m + 1);
      Bsub_baseIndex = Bstride * BLOCK_SIZE * (m + 1) + BLOCK_SIZE * blockCol;
      Asub_index = Asub_baseIndex + row * Astride + col;
      if( Asub_index < A_numElems )
        Areg = Aelements[Asub_index];
      else
        Areg = 0;
      Bsub_index = Bsub_baseIndex + row * Bstride + col;
      if( Bsub_index < B_numElems )
        Breg = Belements[Bsub_index];
      else
        Breg = 0;
    }

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
    // computation is done before storing the next
    // sub-matrices of A and B in the next iteration
    __syncthreads();
  }

  // Write result into C matrix (only work-items within C)
  if( global_row < Aheight && global_col < Bwidth )
    Celements[global_row * Cstride + global_col] = Cvalue;
}
