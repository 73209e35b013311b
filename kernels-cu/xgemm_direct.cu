// xgemm_direct -- CLBlast's direct GEMM kernel (one kernel, any size), CUDA twin.
//
// What it does: C = alpha * op(A) * op(B) + beta * C on COLUMN-MAJOR
// matrices, with op given by the entry point: XgemmDirectNN, NT, TN, TT
// (N: as stored, T: transposed), all four in this one source as CLBlast
// compiles them. A is stored M x K (N) or K x M (T) with leading dimension
// a_ld from element a_offset; B is K x N (N) or N x K (T) with b_ld,
// b_offset; C is M x N with c_ld, c_offset. Any M, N, K >= 1.
// Each block owns a WGD x WGD tile of C; each thread MWID x NWID elements
// of it (strided by 1 inside the thread's block). The loop over K stages
// WGD x WGD tiles of A and B in shared memory (loaded by the block
// re-shaped to MDIMAD x KDIMAD resp. NDIMBD x KDIMBD), then walks the tile
// in steps of KWID with the inner KWID loop unrolled.
// Blocks whose whole tile lies inside C ("full tiles") take the fast path:
// unchecked loads, as vectors of VWMD (A) and VWND (B) reals where a_ld
// and a_offset (b_ld, b_offset) are multiples of the vector width, scalar
// loads otherwise. Blocks on the M or N edge take the checked path
// (bounds-checked scalar loads, zeros outside). The K remainder
// (K % WGD) is done on both paths straight from global memory into
// registers, one k at a time. Where beta == 0, C is not read (CLBlast's
// own IsZero(beta) branch at the store), so NaN in C does not propagate.
//
// Entry names: BLAS op letters, column-major, as gemmlab's driver calls
//   them. CLBlast names its four entries after the transposes RELATIVE TO
//   THE KERNEL'S NATIVE LAYOUT, which is A as M x K and B ROTATED (stored
//   N x K, element (k,n) at k*b_ld + n when b_transpose is 0): its
//   routine picks XgemmDirect<a_do_transpose><b_do_transpose> with
//   b_do_transpose = (B is not rotated), so a column-major BLAS NN call
//   runs CLBlast's XgemmDirectNT. Our entries are those kernels under the
//   BLAS names: NN = CLBlast NT (a_transpose 0, b_transpose 1), NT =
//   CLBlast NN (0, 0), TN = CLBlast TT (1, 1), TT = CLBlast TN (1, 0).
//   The body's a_transpose/b_transpose keep CLBlast's meaning.
//
// Parameters: WGD (tile size in M, N and K), MDIMCD, NDIMCD (block size),
//   MDIMAD, NDIMBD (re-shaped block for loading A, B), KWID (unroll factor
//   of the loop inside a tile), VWMD, VWND (vector width of the A and B
//   loads: 1, 2, 4, 8), PADA, PADB (shared memory padding),
//   PRECISION (32: real is float, 64: double).
// Derived: MWID = WGD/MDIMCD, NWID = WGD/NDIMCD (work per thread),
//   KDIMAD = MDIMCD*NDIMCD/MDIMAD, KDIMBD = MDIMCD*NDIMCD/NDIMBD,
//   MWAD = WGD/MDIMAD, KWAD = WGD/KDIMAD, KWBD = WGD/KDIMBD, NWBD = WGD/NDIMBD.
// Defaults: CLBlast's database "default" entry for single precision
//   (WGD 16, MDIMCD 8, NDIMCD 8, MDIMAD 8, NDIMBD 8, KWID 2, VWMD 1,
//   VWND 1, PADA 1, PADB 1). CLBlast's kernel file itself carries other
//   #ifndef fallbacks (WGD 8, KWID 1); the database entry is what CLBlast
//   runs. Its double-precision "default" entry differs (WGD 32, MDIMCD 16,
//   NDIMCD 8, MDIMAD 16, NDIMBD 8, KWID 2, VWMD 2, VWND 4, PADA 1, PADB 1).
// Requires (checked below and in the registry): WGD a multiple of KWID,
//   MDIMCD*VWMD, NDIMCD*VWND, MDIMAD*VWMD, NDIMBD*VWND, KDIMAD and KDIMBD.
// Launch: block (MDIMCD, NDIMCD), grid (ceil(M/WGD), ceil(N/WGD)), i.e.
//   NDRange (ceil(M/WGD)*MDIMCD, ceil(N/WGD)*NDIMCD).
// Arguments: (kSizeM, kSizeN, kSizeK, alpha, beta, agm, a_offset, a_ld,
//   bgm, b_offset, b_ld, cgm, c_offset, c_ld); agm and bgm are realMD /
//   realND pointers as in CLBlast, so the buffers must be aligned to
//   VWMD / VWND reals (cudaMalloc'd buffers are).
// Shared memory: WGD*(WGD+PADA) + WGD*(WGD+PADB) reals.
// Hints (as published): __launch_bounds__(MDIMCD*NDIMCD) on every entry
//   (the OpenCL twin's reqd_work_group_size(MDIMCD, NDIMCD, 1)),
//   __restrict__ on the A and B pointers, '#pragma unroll' on every loop
//   CLBlast unrolls (not on the loop over K tiles nor on the pwi loop).
//   No switches.
// Deliberate differences from CLBlast: as in the OpenCL twin (arguments
//   c_transpose, a_conjugate, b_conjugate dropped, C column-major; alpha
//   and beta passed as real; '#pragma promote_to_registers' left out;
//   no 'restrict' inside the type of the casts to agms/bgms;
//   no staggered group ids, no mad(), no RELAX_WORKGROUP_SIZE, no width 16).
// Twin differences: the body is the OpenCL twin's text after the mapping
//   CLBlast's own opencl_to_cuda.h applies: __kernel -> extern "C"
//   __global__, __global dropped, __local -> __shared__, restrict ->
//   __restrict__, barrier -> __syncthreads, helper functions __device__
//   (INLINE_FUNC); get_local_id/get_group_id are the prelude's int
//   functions. Vector types: float2, float4 and double2 are CUDA's own;
//   float8, double4 and double8 have no CUDA vector type (double4 is
//   deprecated in CUDA 13 and only 16-byte aligned), so this twin uses
//   PLAIN STRUCTS of 8 or 4 reals (fields s0..s7, resp. x, y, z, w) with
//   the OpenCL vector's alignment (32, 32 and 64 bytes: __align__), named
//   realN_vec here because the prelude's float8 (float-aligned) is
//   another type. How the compiler splits such a struct load (OpenCL
//   float8: one 32-byte vector; CUDA: at most 16-byte loads) is part of
//   what gemmlab measures.

#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef WGD
#define WGD 16
#endif
#ifndef MDIMCD
#define MDIMCD 8
#endif
#ifndef NDIMCD
#define NDIMCD 8
#endif
#ifndef MDIMAD
#define MDIMAD 8
#endif
#ifndef NDIMBD
#define NDIMBD 8
#endif
#ifndef KWID
#define KWID 2
#endif
#ifndef VWMD
#define VWMD 1
#endif
#ifndef VWND
#define VWND 1
#endif
#ifndef PADA
#define PADA 1
#endif
#ifndef PADB
#define PADB 1
#endif

// Helper parameters (CLBlast's names)
#define MWID (WGD/MDIMCD)                 // work per work-item, M
#define NWID (WGD/NDIMCD)                 // work per work-item, N
#define KDIMAD ((MDIMCD*NDIMCD)/(MDIMAD)) // re-shaped A-loading work-group: MDIMAD x KDIMAD
#define KDIMBD ((MDIMCD*NDIMCD)/(NDIMBD)) // re-shaped B-loading work-group: NDIMBD x KDIMBD
#define MWAD (WGD/MDIMAD)                 // A loads per work-item, M
#define KWAD (WGD/KDIMAD)                 // A loads per work-item, K
#define KWBD (WGD/KDIMBD)                 // B loads per work-item, K
#define NWBD (WGD/NDIMBD)                 // B loads per work-item, N

#if PRECISION != 32 && PRECISION != 64
#error "xgemm_direct: PRECISION must be 32 or 64"
#endif
#if (VWMD != 1 && VWMD != 2 && VWMD != 4 && VWMD != 8) || (VWND != 1 && VWND != 2 && VWND != 4 && VWND != 8)
#error "xgemm_direct: VWMD and VWND must be 1, 2, 4 or 8"
#endif
#if (WGD % KWID) != 0
#error "xgemm_direct: WGD must be a multiple of KWID"
#endif
#if (WGD % (MDIMCD*VWMD)) != 0 || (WGD % (NDIMCD*VWND)) != 0
#error "xgemm_direct: WGD must be a multiple of MDIMCD*VWMD and of NDIMCD*VWND"
#endif
#if (WGD % (MDIMAD*VWMD)) != 0 || (WGD % (NDIMBD*VWND)) != 0
#error "xgemm_direct: WGD must be a multiple of MDIMAD*VWMD and of NDIMBD*VWND"
#endif
#if ((MDIMCD*NDIMCD) % MDIMAD) != 0 || ((MDIMCD*NDIMCD) % NDIMBD) != 0
#error "xgemm_direct: MDIMCD*NDIMCD must be a multiple of MDIMAD and of NDIMBD"
#endif
#if (WGD % KDIMAD) != 0 || (WGD % KDIMBD) != 0
#error "xgemm_direct: WGD must be a multiple of (MDIMCD*NDIMCD)/MDIMAD and of (MDIMCD*NDIMCD)/NDIMBD"
#endif

// Precision (CLBlast's common.opencl; vector types as described above)
#if PRECISION == 64
typedef double real;
typedef double2 real2;
typedef struct __align__(32) { double x; double y; double z; double w; } real4_vec;
typedef real4_vec real4;
typedef struct __align__(64) { double s0; double s1; double s2; double s3;
                               double s4; double s5; double s6; double s7; } real8_vec;
typedef real8_vec real8;
#define ZERO 0.0
#else
typedef float real;
typedef float2 real2;
typedef float4 real4;
typedef struct __align__(32) { float s0; float s1; float s2; float s3;
                               float s4; float s5; float s6; float s7; } real8_vec;
typedef real8_vec real8;
#define ZERO 0.0f
#endif

#define SetToZero(a) a = ZERO
#define IsZero(a) (a == ZERO)
#define Multiply(c, a, b) c = a * b
#define MultiplyAdd(c, a, b) c += a * b
#define AXPBY(e, a, b, c, d) e = a*b + c*d

#define INLINE_FUNC __device__
#define LOCAL_PTR

INLINE_FUNC int GetGroupID0() { return get_group_id(0); }
INLINE_FUNC int GetGroupID1() { return get_group_id(1); }

// Vector widths of the A loads (and of C in CLBlast's naming) and of the B loads
#if VWMD == 1
typedef real realMD;
#elif VWMD == 2
typedef real2 realMD;
#elif VWMD == 4
typedef real4 realMD;
#elif VWMD == 8
typedef real8 realMD;
#endif
#if VWND == 1
typedef real realND;
#elif VWND == 2
typedef real2 realND;
#elif VWND == 4
typedef real4 realND;
#elif VWND == 8
typedef real8 realND;
#endif

// ---- global -> private (the K remainder) ----------------------------------

// One element of A for the work-item's row _mi at column idk, unchecked
INLINE_FUNC real GlobalToPrivateDirectA(const real* __restrict__ agms, const int _mi,
                                        const int a_ld, const int a_offset, const int idm,
                                        const int idk, const int a_transpose) {
  const int a_index = (a_transpose) ? (idm + _mi)*a_ld + idk : idk*a_ld + (idm + _mi);
  real result = agms[a_index + a_offset];
  return result;
}

// One element of B for the work-item's column _ni at row idk, unchecked
INLINE_FUNC real GlobalToPrivateDirectB(const real* __restrict__ bgms, const int _ni,
                                        const int b_ld, const int b_offset, const int idn,
                                        const int idk, const int b_transpose) {
  const int b_index = (b_transpose) ? (idn + _ni)*b_ld + idk : idk*b_ld + (idn + _ni);
  real result = bgms[b_index + b_offset];
  return result;
}

// As GlobalToPrivateDirectA, zero outside M
INLINE_FUNC real GlobalToPrivateCheckedA(const real* __restrict__ agms, const int _mi,
                                         const int a_ld, const int a_offset, const int idm,
                                         const int idk, const int a_transpose,
                                         const int kSizeM) {
  real result;
  if (idm + _mi < kSizeM) {
    const int a_index = (a_transpose) ? (idm + _mi)*a_ld + idk : idk*a_ld + (idm + _mi);
    result = agms[a_index + a_offset];
  }
  else {
    SetToZero(result);
  }
  return result;
}

// As GlobalToPrivateDirectB, zero outside N
INLINE_FUNC real GlobalToPrivateCheckedB(const real* __restrict__ bgms, const int _ni,
                                         const int b_ld, const int b_offset, const int idn,
                                         const int idk, const int b_transpose,
                                         const int kSizeN) {
  real result;
  if (idn + _ni < kSizeN) {
    const int b_index = (b_transpose) ? (idn + _ni)*b_ld + idk : idk*b_ld + (idn + _ni);
    result = bgms[b_index + b_offset];
  }
  else {
    SetToZero(result);
  }
  return result;
}

// ---- local -> private -----------------------------------------------------

// Element (row _mi of this work-item, k = kg) of the A tile
INLINE_FUNC real LocalToPrivateDirectA(LOCAL_PTR real* alm, const int _mi, const int kg,
                                       const int a_transpose) {
  const int mg = _mi + get_local_id(0)*MWID;
  const int index = (a_transpose) ? mg*(WGD + PADA) + kg : kg*(WGD + PADA) + mg;
  return alm[index];
}

// Element (k = kg, column _ni of this work-item) of the B tile
INLINE_FUNC real LocalToPrivateDirectB(LOCAL_PTR real* blm, const int _ni, const int kg,
                                       const int b_transpose) {
  const int ng = _ni + get_local_id(1)*NWID;
  const int index = (b_transpose) ? ng*(WGD + PADB) + kg : kg*(WGD + PADB) + ng;
  return blm[index];
}

// ---- private -> global: C = alpha*acc + beta*C ----------------------------

// Full tiles: no bounds check. C is not read where beta is zero.
INLINE_FUNC void StoreResultsDirect(real* cgm, const real c_value,
                                    const int _mi, const int _ni, const int idm, const int idn,
                                    const real alpha, const real beta,
                                    const int c_ld, const int c_offset) {
  int c_index = (idn + _ni)*c_ld + (idm + _mi);
  real result;
  if (IsZero(beta)) {
    Multiply(result, alpha, c_value);
  }
  else {
    AXPBY(result, alpha, c_value, beta, cgm[c_index + c_offset]);
  }
  cgm[c_index + c_offset] = result;
}

// Edge tiles: only elements inside M x N are read and written
INLINE_FUNC void StoreResultsChecked(real* cgm, const real c_value,
                                     const int _mi, const int _ni, const int idm, const int idn,
                                     const int kSizeM, const int kSizeN,
                                     const real alpha, const real beta,
                                     const int c_ld, const int c_offset) {
  if ((idm + _mi) < kSizeM && (idn + _ni) < kSizeN) {
    int c_index = (idn + _ni)*c_ld + (idm + _mi);
    real result;
    if (IsZero(beta)) {
      Multiply(result, alpha, c_value);
    }
    else {
      AXPBY(result, alpha, c_value, beta, cgm[c_index + c_offset]);
    }
    cgm[c_index + c_offset] = result;
  }
}

// ---- global -> local (tiles of A and B) -----------------------------------

// Vector loads of a WGD x WGD tile of A (full tiles, aligned a_ld and a_offset)
INLINE_FUNC void GlobalToLocalDirectA(const realMD* __restrict__ agm, LOCAL_PTR real* alm,
                                      const int a_ld, const int a_offset, const int kwg,
                                      const int a_transpose) {
  #if MDIMCD == MDIMAD
    const int la0 = get_local_id(0);
    const int la1 = get_local_id(1);
  #else
    const int tid = get_local_id(0) + MDIMCD*get_local_id(1);
    const int la0 = tid % MDIMAD;
    const int la1 = tid / MDIMAD;
  #endif
  #pragma unroll
  for (int mia = 0; mia < MWAD/VWMD; ++mia) {
    #pragma unroll
    for (int kia = 0; kia < KWAD; ++kia) {
      int mg = mia + la0*(MWAD/VWMD);
      int kg = kia + la1*KWAD;
      int idm = (a_transpose) ? mg + kwg/VWMD : mg + GetGroupID0()*(WGD/VWMD);
      int idk = (a_transpose) ? kg + GetGroupID0()*WGD : kg + kwg;
      const realMD avec = agm[idk*(a_ld/VWMD) + idm + (a_offset/VWMD)];
      #if VWMD == 1
        alm[kg*(WGD + PADA) + mg] = avec;
      #elif VWMD == 2
        alm[kg*(WGD + PADA) + mg*VWMD + 0] = avec.x;
        alm[kg*(WGD + PADA) + mg*VWMD + 1] = avec.y;
      #elif VWMD == 4
        alm[kg*(WGD + PADA) + mg*VWMD + 0] = avec.x;
        alm[kg*(WGD + PADA) + mg*VWMD + 1] = avec.y;
        alm[kg*(WGD + PADA) + mg*VWMD + 2] = avec.z;
        alm[kg*(WGD + PADA) + mg*VWMD + 3] = avec.w;
      #elif VWMD == 8
        alm[kg*(WGD + PADA) + mg*VWMD + 0] = avec.s0;
        alm[kg*(WGD + PADA) + mg*VWMD + 1] = avec.s1;
        alm[kg*(WGD + PADA) + mg*VWMD + 2] = avec.s2;
        alm[kg*(WGD + PADA) + mg*VWMD + 3] = avec.s3;
        alm[kg*(WGD + PADA) + mg*VWMD + 4] = avec.s4;
        alm[kg*(WGD + PADA) + mg*VWMD + 5] = avec.s5;
        alm[kg*(WGD + PADA) + mg*VWMD + 6] = avec.s6;
        alm[kg*(WGD + PADA) + mg*VWMD + 7] = avec.s7;
      #endif
    }
  }
}

// Vector loads of a WGD x WGD tile of B (full tiles, aligned b_ld and b_offset)
INLINE_FUNC void GlobalToLocalDirectB(const realND* __restrict__ bgm, LOCAL_PTR real* blm,
                                      const int b_ld, const int b_offset, const int kwg,
                                      const int b_transpose) {
  #if MDIMCD == NDIMBD
    const int lb0 = get_local_id(0);
    const int lb1 = get_local_id(1);
  #else
    const int tid = get_local_id(0) + MDIMCD*get_local_id(1);
    const int lb0 = tid % NDIMBD;
    const int lb1 = tid / NDIMBD;
  #endif
  #pragma unroll
  for (int kib = 0; kib < KWBD; ++kib) {
    #pragma unroll
    for (int nib = 0; nib < NWBD/VWND; ++nib) {
      int ng = nib + lb0*(NWBD/VWND);
      int kg = kib + lb1*KWBD;
      int idn = (b_transpose) ? ng + kwg/VWND : ng + GetGroupID1()*(WGD/VWND);
      int idk = (b_transpose) ? kg + GetGroupID1()*WGD : kg + kwg;
      const realND bvec = bgm[idk*(b_ld/VWND) + idn + (b_offset/VWND)];
      #if VWND == 1
        blm[kg*(WGD + PADB) + ng] = bvec;
      #elif VWND == 2
        blm[kg*(WGD + PADB) + ng*VWND + 0] = bvec.x;
        blm[kg*(WGD + PADB) + ng*VWND + 1] = bvec.y;
      #elif VWND == 4
        blm[kg*(WGD + PADB) + ng*VWND + 0] = bvec.x;
        blm[kg*(WGD + PADB) + ng*VWND + 1] = bvec.y;
        blm[kg*(WGD + PADB) + ng*VWND + 2] = bvec.z;
        blm[kg*(WGD + PADB) + ng*VWND + 3] = bvec.w;
      #elif VWND == 8
        blm[kg*(WGD + PADB) + ng*VWND + 0] = bvec.s0;
        blm[kg*(WGD + PADB) + ng*VWND + 1] = bvec.s1;
        blm[kg*(WGD + PADB) + ng*VWND + 2] = bvec.s2;
        blm[kg*(WGD + PADB) + ng*VWND + 3] = bvec.s3;
        blm[kg*(WGD + PADB) + ng*VWND + 4] = bvec.s4;
        blm[kg*(WGD + PADB) + ng*VWND + 5] = bvec.s5;
        blm[kg*(WGD + PADB) + ng*VWND + 6] = bvec.s6;
        blm[kg*(WGD + PADB) + ng*VWND + 7] = bvec.s7;
      #endif
    }
  }
}

// Scalar loads of a tile of A (full tiles, a_ld or a_offset not vector-aligned)
INLINE_FUNC void GlobalToLocalScalarA(const real* __restrict__ agms, LOCAL_PTR real* alm,
                                      const int a_ld, const int a_offset, const int kwg,
                                      const int a_transpose) {
  #if MDIMCD == MDIMAD
    const int la0 = get_local_id(0);
    const int la1 = get_local_id(1);
  #else
    const int tid = get_local_id(0) + MDIMCD*get_local_id(1);
    const int la0 = tid % MDIMAD;
    const int la1 = tid / MDIMAD;
  #endif
  #pragma unroll
  for (int mia = 0; mia < MWAD; ++mia) {
    #pragma unroll
    for (int kia = 0; kia < KWAD; ++kia) {
      int mg = mia + la0*MWAD;
      int kg = kia + la1*KWAD;
      int idm = (a_transpose) ? mg + kwg : mg + GetGroupID0()*WGD;
      int idk = (a_transpose) ? kg + GetGroupID0()*WGD : kg + kwg;
      real result = agms[idk*a_ld + idm + a_offset];
      alm[kg*(WGD + PADA) + mg] = result;
    }
  }
}

// Scalar loads of a tile of B (full tiles, b_ld or b_offset not vector-aligned)
INLINE_FUNC void GlobalToLocalScalarB(const real* __restrict__ bgms, LOCAL_PTR real* blm,
                                      const int b_ld, const int b_offset, const int kwg,
                                      const int b_transpose) {
  #if MDIMCD == NDIMBD
    const int lb0 = get_local_id(0);
    const int lb1 = get_local_id(1);
  #else
    const int tid = get_local_id(0) + MDIMCD*get_local_id(1);
    const int lb0 = tid % NDIMBD;
    const int lb1 = tid / NDIMBD;
  #endif
  #pragma unroll
  for (int kib = 0; kib < KWBD; ++kib) {
    #pragma unroll
    for (int nib = 0; nib < NWBD; ++nib) {
      int ng = nib + lb0*NWBD;
      int kg = kib + lb1*KWBD;
      int idn = (b_transpose) ? ng + kwg : ng + GetGroupID1()*WGD;
      int idk = (b_transpose) ? kg + GetGroupID1()*WGD : kg + kwg;
      real result = bgms[idk*b_ld + idn + b_offset];
      blm[kg*(WGD + PADB) + ng] = result;
    }
  }
}

// Bounds-checked scalar loads of a tile of A (edge tiles), zeros outside M x K
INLINE_FUNC void GlobalToLocalCheckedA(const real* __restrict__ agms, LOCAL_PTR real* alm,
                                       const int a_ld, const int a_offset, const int kwg,
                                       const int a_transpose,
                                       const int kSizeM, const int kSizeK) {
  #if MDIMCD == MDIMAD
    const int la0 = get_local_id(0);
    const int la1 = get_local_id(1);
  #else
    const int tid = get_local_id(0) + MDIMCD*get_local_id(1);
    const int la0 = tid % MDIMAD;
    const int la1 = tid / MDIMAD;
  #endif
  #pragma unroll
  for (int mia = 0; mia < MWAD; ++mia) {
    #pragma unroll
    for (int kia = 0; kia < KWAD; ++kia) {
      int mg = mia + la0*MWAD;
      int kg = kia + la1*KWAD;
      int idm = (a_transpose) ? mg + kwg : mg + GetGroupID0()*WGD;
      int idk = (a_transpose) ? kg + GetGroupID0()*WGD : kg + kwg;
      int condition = (a_transpose) ? (idm < kSizeK) && (idk < kSizeM) :
                                      (idm < kSizeM) && (idk < kSizeK);
      if (condition) {
        real result = agms[idk*a_ld + idm + a_offset];
        alm[kg*(WGD + PADA) + mg] = result;
      }
      else {
        SetToZero(alm[kg*(WGD + PADA) + mg]);
      }
    }
  }
}

// Bounds-checked scalar loads of a tile of B (edge tiles), zeros outside K x N
INLINE_FUNC void GlobalToLocalCheckedB(const real* __restrict__ bgms, LOCAL_PTR real* blm,
                                       const int b_ld, const int b_offset, const int kwg,
                                       const int b_transpose,
                                       const int kSizeN, const int kSizeK) {
  #if MDIMCD == NDIMBD
    const int lb0 = get_local_id(0);
    const int lb1 = get_local_id(1);
  #else
    const int tid = get_local_id(0) + MDIMCD*get_local_id(1);
    const int lb0 = tid % NDIMBD;
    const int lb1 = tid / NDIMBD;
  #endif
  #pragma unroll
  for (int kib = 0; kib < KWBD; ++kib) {
    #pragma unroll
    for (int nib = 0; nib < NWBD; ++nib) {
      int ng = nib + lb0*NWBD;
      int kg = kib + lb1*KWBD;
      int idn = (b_transpose) ? ng + kwg : ng + GetGroupID1()*WGD;
      int idk = (b_transpose) ? kg + GetGroupID1()*WGD : kg + kwg;
      int condition = (b_transpose) ? (idn < kSizeK) && (idk < kSizeN) :
                                      (idn < kSizeN) && (idk < kSizeK);
      if (condition) {
        real result = bgms[idk*b_ld + idn + b_offset];
        blm[kg*(WGD + PADB) + ng] = result;
      }
      else {
        SetToZero(blm[kg*(WGD + PADB) + ng]);
      }
    }
  }
}

// ---- the kernel body --------------------------------------------------------

INLINE_FUNC void XgemmDirect(const int kSizeM, const int kSizeN, const int kSizeK,
                             const real alpha, const real beta,
                             const realMD* __restrict__ agm, const int a_offset, const int a_ld,
                             const realND* __restrict__ bgm, const int b_offset, const int b_ld,
                             real* cgm, const int c_offset, const int c_ld,
                             LOCAL_PTR real* alm, LOCAL_PTR real* blm,
                             const int a_transpose, const int b_transpose) {

  // Scalar views of A and B
  const real* __restrict__ agms = (const real*) agm;
  const real* __restrict__ bgms = (const real*) bgm;

  // Registers
  real apd[MWID];
  real bpd[NWID];
  real cpd[NWID * MWID];

  // Zero the accumulators
  #pragma unroll
  for (int _mi = 0; _mi < MWID; _mi += 1) {
    #pragma unroll
    for (int _ni = 0; _ni < NWID; _ni += 1) {
      SetToZero(cpd[_ni * MWID + _mi]);
    }
  }

  // Full WGD x WGD tiles of C take the fast path, edge tiles the checked one
  const int idm = get_local_id(0) * MWID + GetGroupID0() * WGD;
  const int idn = get_local_id(1) * NWID + GetGroupID1() * WGD;
  if ((idm < (kSizeM/WGD)*WGD) && (idn < (kSizeN/WGD)*WGD)) {

    // Complete tiles along K
    int kwg = 0;
    for (; kwg < (kSizeK/WGD) * WGD; kwg += WGD) {

      // Global -> local, as vectors where ld and offset allow
      if (a_ld % VWMD == 0 && a_offset % VWMD == 0) {
        GlobalToLocalDirectA(agm, alm, a_ld, a_offset, kwg, a_transpose);
      }
      else {
        GlobalToLocalScalarA(agms, alm, a_ld, a_offset, kwg, a_transpose);
      }
      if (b_ld % VWND == 0 && b_offset % VWND == 0) {
        GlobalToLocalDirectB(bgm, blm, b_ld, b_offset, kwg, b_transpose);
      }
      else {
        GlobalToLocalScalarB(bgms, blm, b_ld, b_offset, kwg, b_transpose);
      }
      __syncthreads();

      // Over the tile, KWID k at a time
      for (int pwi = 0; pwi < WGD; pwi += KWID) {
        #pragma unroll
        for (int _pit = 0; _pit < KWID; _pit += 1) {
          int kg = pwi + _pit;

          // Local -> private
          #pragma unroll
          for (int _mi = 0; _mi < MWID; _mi += 1) {
            apd[_mi] = LocalToPrivateDirectA(alm, _mi, kg, a_transpose);
          }
          #pragma unroll
          for (int _ni = 0; _ni < NWID; _ni += 1) {
            bpd[_ni] = LocalToPrivateDirectB(blm, _ni, kg, b_transpose);
          }

          // Accumulate
          #pragma unroll
          for (int _ni = 0; _ni < NWID; _ni += 1) {
            #pragma unroll
            for (int _mi = 0; _mi < MWID; _mi += 1) {
              MultiplyAdd(cpd[_ni * MWID + _mi], apd[_mi], bpd[_ni]);
            }
          }
        }
      }
      __syncthreads();
    }

    // The K remainder, straight from global memory
    for (; kwg < kSizeK; ++kwg) {
      #pragma unroll
      for (int _mi = 0; _mi < MWID; _mi += 1) {
        apd[_mi] = GlobalToPrivateDirectA(agms, _mi, a_ld, a_offset, idm, kwg, a_transpose);
      }
      #pragma unroll
      for (int _ni = 0; _ni < NWID; _ni += 1) {
        bpd[_ni] = GlobalToPrivateDirectB(bgms, _ni, b_ld, b_offset, idn, kwg, b_transpose);
      }
      #pragma unroll
      for (int _ni = 0; _ni < NWID; _ni += 1) {
        #pragma unroll
        for (int _mi = 0; _mi < MWID; _mi += 1) {
          MultiplyAdd(cpd[_ni * MWID + _mi], apd[_mi], bpd[_ni]);
        }
      }
    }

    // Store with alpha and beta
    #pragma unroll
    for (int _ni = 0; _ni < NWID; _ni += 1) {
      #pragma unroll
      for (int _mi = 0; _mi < MWID; _mi += 1) {
        StoreResultsDirect(cgm, cpd[_ni * MWID + _mi], _mi, _ni, idm, idn,
                           alpha, beta, c_ld, c_offset);
      }
    }
  }

  // Edge tiles (incomplete in M or N): checked loads and stores
  else {

    // Complete tiles along K
    int kwg = 0;
    for (; kwg < (kSizeK/WGD) * WGD; kwg += WGD) {

      // Global -> local, checked
      GlobalToLocalCheckedA(agms, alm, a_ld, a_offset, kwg, a_transpose, kSizeM, kSizeK);
      GlobalToLocalCheckedB(bgms, blm, b_ld, b_offset, kwg, b_transpose, kSizeN, kSizeK);
      __syncthreads();

      // Over the tile, KWID k at a time
      for (int pwi = 0; pwi < WGD; pwi += KWID) {
        #pragma unroll
        for (int _pit = 0; _pit < KWID; _pit += 1) {
          int kg = pwi + _pit;

          // Local -> private
          #pragma unroll
          for (int _mi = 0; _mi < MWID; _mi += 1) {
            apd[_mi] = LocalToPrivateDirectA(alm, _mi, kg, a_transpose);
          }
          #pragma unroll
          for (int _ni = 0; _ni < NWID; _ni += 1) {
            bpd[_ni] = LocalToPrivateDirectB(blm, _ni, kg, b_transpose);
          }

          // Accumulate
          #pragma unroll
          for (int _ni = 0; _ni < NWID; _ni += 1) {
            #pragma unroll
            for (int _mi = 0; _mi < MWID; _mi += 1) {
              MultiplyAdd(cpd[_ni * MWID + _mi], apd[_mi], bpd[_ni]);
            }
          }
        }
      }
      __syncthreads();
    }

    // The K remainder, straight from global memory, checked
    for (; kwg < kSizeK; ++kwg) {
      #pragma unroll
      for (int _mi = 0; _mi < MWID; _mi += 1) {
        apd[_mi] = GlobalToPrivateCheckedA(agms, _mi, a_ld, a_offset, idm, kwg, a_transpose, kSizeM);
      }
      #pragma unroll
      for (int _ni = 0; _ni < NWID; _ni += 1) {
        bpd[_ni] = GlobalToPrivateCheckedB(bgms, _ni, b_ld, b_offset, idn, kwg, b_transpose, kSizeN);
      }
      #pragma unroll
      for (int _ni = 0; _ni < NWID; _ni += 1) {
        #pragma unroll
        for (int _mi = 0; _mi < MWID; _mi += 1) {
          MultiplyAdd(cpd[_ni * MWID + _mi], apd[_mi], bpd[_ni]);
        }
      }
    }

    // Store with alpha and beta, checked
    #pragma unroll
    for (int _ni = 0; _ni < NWID; _ni += 1) {
      #pragma unroll
      for (int _mi = 0; _mi < MWID; _mi += 1) {
        StoreResultsChecked(cgm, cpd[_ni * MWID + _mi], _mi, _ni, idm, idn, kSizeM, kSizeN,
                            alpha, beta, c_ld, c_offset);
      }
    }
  }
}

// ---- the four entry points ----------------------------------------------------

// BLAS NN: C = A * B (CLBlast's XgemmDirectNT: B 'transposed' from its native B^T)
extern "C" __global__ __launch_bounds__(MDIMCD*NDIMCD)
void XgemmDirectNN(const int kSizeM, const int kSizeN, const int kSizeK,
                   const real alpha, const real beta,
                   const realMD* __restrict__ agm, const int a_offset, const int a_ld,
                   const realND* __restrict__ bgm, const int b_offset, const int b_ld,
                   real* cgm, const int c_offset, const int c_ld) {
  __shared__ real alm[WGD * (WGD + PADA)];
  __shared__ real blm[WGD * (WGD + PADB)];
  XgemmDirect(kSizeM, kSizeN, kSizeK, alpha, beta,
              agm, a_offset, a_ld, bgm, b_offset, b_ld, cgm, c_offset, c_ld,
              alm, blm, 0, 1);
}

// BLAS NT: C = A * B^T (CLBlast's XgemmDirectNN: B^T is its native layout)
extern "C" __global__ __launch_bounds__(MDIMCD*NDIMCD)
void XgemmDirectNT(const int kSizeM, const int kSizeN, const int kSizeK,
                   const real alpha, const real beta,
                   const realMD* __restrict__ agm, const int a_offset, const int a_ld,
                   const realND* __restrict__ bgm, const int b_offset, const int b_ld,
                   real* cgm, const int c_offset, const int c_ld) {
  __shared__ real alm[WGD * (WGD + PADA)];
  __shared__ real blm[WGD * (WGD + PADB)];
  XgemmDirect(kSizeM, kSizeN, kSizeK, alpha, beta,
              agm, a_offset, a_ld, bgm, b_offset, b_ld, cgm, c_offset, c_ld,
              alm, blm, 0, 0);
}

// BLAS TN: C = A^T * B (CLBlast's XgemmDirectTT)
extern "C" __global__ __launch_bounds__(MDIMCD*NDIMCD)
void XgemmDirectTN(const int kSizeM, const int kSizeN, const int kSizeK,
                   const real alpha, const real beta,
                   const realMD* __restrict__ agm, const int a_offset, const int a_ld,
                   const realND* __restrict__ bgm, const int b_offset, const int b_ld,
                   real* cgm, const int c_offset, const int c_ld) {
  __shared__ real alm[WGD * (WGD + PADA)];
  __shared__ real blm[WGD * (WGD + PADB)];
  XgemmDirect(kSizeM, kSizeN, kSizeK, alpha, beta,
              agm, a_offset, a_ld, bgm, b_offset, b_ld, cgm, c_offset, c_ld,
              alm, blm, 1, 1);
}

// BLAS TT: C = A^T * B^T (CLBlast's XgemmDirectTN)
extern "C" __global__ __launch_bounds__(MDIMCD*NDIMCD)
void XgemmDirectTT(const int kSizeM, const int kSizeN, const int kSizeK,
                   const real alpha, const real beta,
                   const realMD* __restrict__ agm, const int a_offset, const int a_ld,
                   const realND* __restrict__ bgm, const int b_offset, const int b_ld,
                   real* cgm, const int c_offset, const int c_ld) {
  __shared__ real alm[WGD * (WGD + PADA)];
  __shared__ real blm[WGD * (WGD + PADB)];
  XgemmDirect(kSizeM, kSizeN, kSizeK, alpha, beta,
              agm, a_offset, a_ld, bgm, b_offset, b_ld, cgm, c_offset, c_ld,
              alm, blm, 1, 0);
}
