// CLBlast xgemm (indirect GEMM kernel, "kernel 0"), OpenCL twin.
//
// What it does: C = alpha*A*B + beta*C on sizes that are multiples of the
// work-group tile. Each work-group computes an MWG x NWG tile of C with
// MDIMC x NDIMC work-items; each work-item owns MWI x NWI = (MWG/MDIMC) x
// (NWG/NDIMC) accumulators, held as vectors of VWM reals along M. The K
// dimension is walked in KWG-deep tiles; inside a tile the loop over k is
// unrolled by KWI. A (SA=1) and/or B (SB=1) tiles are staged in local
// memory, loaded by the work-group re-shaped as MDIMA x KDIMA (resp.
// NDIMB x KDIMB) work-items; without staging, each work-item reads its
// operands from global memory straight into registers. STRM/STRN choose
// whether a work-item's MWI (NWI) elements are contiguous (0) or strided by
// MDIMC (NDIMC) (1). This is CLBlast's xgemm_part1..4.opencl (GEMMK=0)
// written anew: same function and parameter names, loop forms, pragmas,
// qualifiers and index arithmetic.
//
// Parameters (CLBlast's 14): MWG, NWG, KWG (work-group tile in M, N, K),
//   MDIMC, NDIMC (work-group size), MDIMA, NDIMB (re-shaped work-group for
//   the local-memory loads of A and B), KWI (unroll factor of the loop over
//   k in a tile), VWM, VWN (vector widths along M for A and C, along N for
//   B: 1, 2, 4 or 8), STRM, STRN (strided access within a work-item), SA, SB
//   (stage A / B in local memory). PRECISION: 32 (real = float) or 64
//   (real = double).
// Defaults: CLBlast's database entry for any device ("default"/"default",
//   xgemm_32.hpp), single precision: KWG 32, KWI 2, MDIMA 8, MDIMC 8,
//   MWG 32, NDIMB 16, NDIMC 16, NWG 32, SA 1, SB 1, STRM 0, STRN 0, VWM 4,
//   VWN 2. (The double-precision "default" entry differs; the registry
//   records it.)
// Derived: MWI = MWG/MDIMC, NWI = NWG/NDIMC, KDIMA = MDIMC*NDIMC/MDIMA,
//   KDIMB = MDIMC*NDIMC/NDIMB, MWA = MWG/MDIMA, KWA = KWG/KDIMA,
//   KWB = KWG/KDIMB, NWB = NWG/NDIMB.
// Launch: local (MDIMC, NDIMC), global (M*MDIMC/MWG, N*NDIMC/NWG);
//   get_local_id(0) runs along M.
// Arguments: (kSizeM, kSizeN, kSizeK, alpha, beta, agm, bgm, cgm).
// Assumes: A column-major M x K (element (m,k) at k*M + m), B stored
//   transposed (element (k,n) at k*N + n), C column-major M x N (element
//   (m,n) at n*M + m); M, N, K multiples of MWG, NWG, KWG; buffers aligned
//   to the vector widths (A and C are read as realM, B as realN).
// Local memory: (SA*KWG*MWG + SB*KWG*NWG) reals.
// beta == 0: C is not read (CLBlast's StoreResults has this runtime branch
//   itself), so NaN or garbage in C does not propagate.
// Hints, as published: reqd_work_group_size(MDIMC, NDIMC, 1) on the kernel
//   (switch USE_BOUNDS, published 1), restrict on agm/bgm in the kernel and
//   the helper functions (switch USE_RESTRICT, published 1), 'volatile' on
//   the combined thread id used by the local-memory loads, '#pragma unroll'
//   on every loop CLBlast marks (not on the loops over kwg and pwi).
// Switches (published state): USE_BOUNDS 1, USE_RESTRICT 1. USE_BOUNDS=0 is
//   CLBlast's own RELAX_WORKGROUP_SIZE=1 build (used for Qualcomm GPUs).
// Differences from CLBlast's source, all outside the GEMMK=0 computation:
//   - no b_offset/c_offset arguments (CLBlast adds them to share one
//     temporary buffer between B and C; gemmlab passes separate buffers);
//   - no GEMMK=1/KREG kernel, no subgroup-shuffle, staggered-index,
//     GLOBAL_MEM_FENCE, USE_CL_MAD or USE_VECTOR_MAD paths (all off on
//     NVIDIA GPUs by CLBlast's defaults; the multiply-add is the default
//     component-wise 'c += a * b'); no half or complex precisions; no
//     triangular (SYRK/HERK) entry points;
//   - CLBlast's '#pragma promote_to_registers' lines are left out: they are
//     read by CLBlast's own source preprocessor (used for ARM/Qualcomm
//     only) and ignored by NVIDIA's compilers;
//   - INLINE_FUNC is 'inline', as CLBlast defines it on NVIDIA devices.

// =================================================================================================
// Parameters (defaults: CLBlast database, "default" entry, single precision)

#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef MWG
#define MWG 32
#endif
#ifndef NWG
#define NWG 32
#endif
#ifndef KWG
#define KWG 32
#endif
#ifndef MDIMC
#define MDIMC 8
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef MDIMA
#define MDIMA 8
#endif
#ifndef NDIMB
#define NDIMB 16
#endif
#ifndef KWI
#define KWI 2
#endif
#ifndef VWM
#define VWM 4
#endif
#ifndef VWN
#define VWN 2
#endif
#ifndef STRM
#define STRM 0
#endif
#ifndef STRN
#define STRN 0
#endif
#ifndef SA
#define SA 1
#endif
#ifndef SB
#define SB 1
#endif

// Switches, at their published state (CLBlast has both hints): USE_BOUNDS
// (reqd_work_group_size / __launch_bounds__ on the kernel; 0 is CLBlast's
// RELAX_WORKGROUP_SIZE build), USE_RESTRICT (restrict on agm and bgm).
#ifndef USE_BOUNDS
#define USE_BOUNDS 1
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 1
#endif

// Derived sizes
#define MWI (MWG/MDIMC)               // work per work-item along M
#define NWI (NWG/NDIMC)               // work per work-item along N
#define KDIMA ((MDIMC*NDIMC)/(MDIMA)) // re-shaped work-group for loading A: MDIMA x KDIMA
#define KDIMB ((MDIMC*NDIMC)/(NDIMB)) // re-shaped work-group for loading B: NDIMB x KDIMB
#define MWA (MWG/MDIMA)               // loads of A per work-item along M
#define KWA (KWG/KDIMA)               // loads of A per work-item along K
#define KWB (KWG/KDIMB)               // loads of B per work-item along K
#define NWB (NWG/NDIMB)               // loads of B per work-item along N

#if PRECISION != 32 && PRECISION != 64
#error "xgemm: PRECISION must be 32 or 64"
#endif
#if (VWM != 1 && VWM != 2 && VWM != 4 && VWM != 8) || (VWN != 1 && VWN != 2 && VWN != 4 && VWN != 8)
#error "xgemm: VWM and VWN must be 1, 2, 4 or 8"
#endif
#if (MWG % (MDIMC*VWM)) != 0 || (NWG % (NDIMC*VWN)) != 0
#error "xgemm: MWG must be a multiple of MDIMC*VWM and NWG of NDIMC*VWN"
#endif
#if (MWG % (MDIMA*VWM)) != 0 || (NWG % (NDIMB*VWN)) != 0
#error "xgemm: MWG must be a multiple of MDIMA*VWM and NWG of NDIMB*VWN"
#endif
#if (KWG % KWI) != 0
#error "xgemm: KWG must be a multiple of KWI"
#endif
#if ((MDIMC*NDIMC) % MDIMA) != 0 || ((MDIMC*NDIMC) % NDIMB) != 0 || (KWG % KDIMA) != 0 || (KWG % KDIMB) != 0
#error "xgemm: KWG must be a multiple of KDIMA = MDIMC*NDIMC/MDIMA and of KDIMB = MDIMC*NDIMC/NDIMB"
#endif

// =================================================================================================
// The 'real' type and the scalar operations (CLBlast's common.opencl, real precisions only)

#if PRECISION == 64
  #pragma OPENCL EXTENSION cl_khr_fp64: enable
#endif

#if PRECISION == 32
  typedef float real;
  typedef float2 real2;
  typedef float4 real4;
  typedef float8 real8;
  #define ZERO 0.0f
#elif PRECISION == 64
  typedef double real;
  typedef double2 real2;
  typedef double4 real4;
  typedef double8 real8;
  #define ZERO 0.0
#endif

#define SetToZero(a) a = ZERO
#define IsZero(a) (a == ZERO)
#define Multiply(c,a,b) c = a * b
#define MultiplyAdd(c,a,b) c += a * b
#define AXPBY(e,a,b,c,d) e = a*b + c*d

#define INLINE_FUNC inline
#define LOCAL_PTR __local

INLINE_FUNC int GetGroupID1() { return get_group_id(1); }
INLINE_FUNC int GetGroupID0() { return get_group_id(0); }

// Vector widths along M (A and C) and along N (B)
#if VWM == 1
  typedef real realM;
#elif VWM == 2
  typedef real2 realM;
#elif VWM == 4
  typedef real4 realM;
#elif VWM == 8
  typedef real8 realM;
#endif

#if VWN == 1
  typedef real realN;
#elif VWN == 2
  typedef real2 realN;
#elif VWN == 4
  typedef real4 realN;
#elif VWN == 8
  typedef real8 realN;
#endif

// =================================================================================================
// Part 1: accumulator initialisation and the loads (global -> local, global/local -> private)

// One realM of zeros
INLINE_FUNC realM InitAccRegisters() {
  realM result;
  #if VWM == 1
    SetToZero(result);
  #elif VWM == 2
    SetToZero(result.x);
    SetToZero(result.y);
  #elif VWM == 4
    SetToZero(result.x);
    SetToZero(result.y);
    SetToZero(result.z);
    SetToZero(result.w);
  #elif VWM == 8
    SetToZero(result.s0);
    SetToZero(result.s1);
    SetToZero(result.s2);
    SetToZero(result.s3);
    SetToZero(result.s4);
    SetToZero(result.s5);
    SetToZero(result.s6);
    SetToZero(result.s7);
  #endif
  return result;
}

// The work-group copies the KWG x MWG tile of A into local memory, re-shaped as MDIMA x KDIMA
#if SA == 1
INLINE_FUNC void GlobalToLocalA(const __global realM* GEMMLAB_RESTRICT agm, LOCAL_PTR realM* alm,
                                const int kSizeM, const int tid, const int kwg) {
  const int la0 = tid % MDIMA;
  const int la1 = tid / MDIMA;
  #pragma unroll
  for (int _mia = 0; _mia < MWA/VWM; _mia += 1) {
    #pragma unroll
    for (int _kia = 0; _kia < KWA; _kia += 1) {

      // Position in the tile: contiguous or strided along M
      #if STRM == 0
        int mg = _mia + la0*(MWA/VWM);
      #elif STRM == 1
        int mg = la0 + _mia*MDIMA;
      #endif

      // Position in the matrix
      int kg = _kia + la1*KWA;
      int idm = mg + GetGroupID0() * (MWG/VWM);
      int idk = kg + kwg;

      // A is not transposed: k-major rows of M/VWM vectors
      alm[kg*(MWG/VWM) + mg] = agm[idk*(kSizeM/VWM) + idm];
    }
  }
}
#endif

// The same for the KWG x NWG tile of B, re-shaped as NDIMB x KDIMB
#if SB == 1
INLINE_FUNC void GlobalToLocalB(const __global realN* GEMMLAB_RESTRICT bgm, LOCAL_PTR realN* blm,
                                const int kSizeN, const int tid, const int kwg) {
  const int lb0 = tid % NDIMB;
  const int lb1 = tid / NDIMB;
  #pragma unroll
  for (int _kib = 0; _kib < KWB; _kib += 1) {
    #pragma unroll
    for (int _nib = 0; _nib < NWB/VWN; _nib += 1) {

      // Position in the tile: contiguous or strided along N
      #if STRN == 0
        int ng = _nib + lb0*(NWB/VWN);
      #elif STRN == 1
        int ng = lb0 + _nib*NDIMB;
      #endif

      // Position in the matrix
      int kg = _kib + lb1*KWB;
      int idn = ng + GetGroupID1() * (NWG/VWN);
      int idk = kg + kwg;

      // B is stored transposed: k-major rows of N/VWN vectors
      blm[kg*(NWG/VWN) + ng] = bgm[idk*(kSizeN/VWN) + idn];
    }
  }
}
#endif

// One realM of A from global memory straight into a register (no local memory for A)
#if SA == 0
INLINE_FUNC realM GlobalToPrivateA(const __global realM* GEMMLAB_RESTRICT agm, const int _mi,
                                   const int kSizeM, const int idk, const int kwg) {
  // The work-item's _mi-th vector: contiguous or strided along M
  #if STRM == 0
    int mg = _mi + get_local_id(0)*(MWI/VWM);
  #elif STRM == 1
    int mg = get_local_id(0) + _mi*MDIMC;
  #endif

  // Position in the matrix
  int idm = mg + GetGroupID0() * (MWG/VWM);

  // A is not transposed
  return agm[idk*(kSizeM/VWM) + idm];
}
#endif

// One realN of B from global memory straight into a register (no local memory for B)
#if SB == 0
INLINE_FUNC realN GlobalToPrivateB(const __global realN* GEMMLAB_RESTRICT bgm, const int _ni,
                                   const int kSizeN, const int idk) {
  // The work-item's _ni-th vector: contiguous or strided along N
  #if STRN == 0
    int ng = _ni + get_local_id(1)*(NWI/VWN);
  #elif STRN == 1
    int ng = get_local_id(1) + _ni*NDIMC;
  #endif

  // Position in the matrix
  int idn = ng + GetGroupID1() * (NWG/VWN);

  // B is stored transposed
  return bgm[idk*(kSizeN/VWN) + idn];
}
#endif

// One realM of A from the local tile into a register
#if SA == 1
INLINE_FUNC realM LocalToPrivateA(LOCAL_PTR realM* alm, const int _mi, const int kg) {
  #if STRM == 0
    int mg = _mi + get_local_id(0)*(MWI/VWM);
  #elif STRM == 1
    int mg = get_local_id(0) + _mi*MDIMC;
  #endif
  return alm[kg*(MWG/VWM) + mg];
}
#endif

// One realN of B from the local tile into a register
#if SB == 1
INLINE_FUNC realN LocalToPrivateB(LOCAL_PTR realN* blm, const int _ni, const int kg) {
  #if STRN == 0
    int ng = _ni + get_local_id(1)*(NWI/VWN);
  #elif STRN == 1
    int ng = get_local_id(1) + _ni*NDIMC;
  #endif
  return blm[kg*(NWG/VWN) + ng];
}
#endif

// =================================================================================================
// Part 2: the vector multiply-add and the store of the results

// cvec += avec * bval, component by component
INLINE_FUNC realM MultiplyAddVector(realM cvec, const realM avec, const real bval) {
  #if VWM == 1
    MultiplyAdd(cvec,    avec,    bval);
  #elif VWM == 2
    MultiplyAdd(cvec.x , avec.x,  bval);
    MultiplyAdd(cvec.y , avec.y,  bval);
  #elif VWM == 4
    MultiplyAdd(cvec.x , avec.x,  bval);
    MultiplyAdd(cvec.y , avec.y,  bval);
    MultiplyAdd(cvec.z , avec.z,  bval);
    MultiplyAdd(cvec.w , avec.w,  bval);
  #elif VWM == 8
    MultiplyAdd(cvec.s0, avec.s0, bval);
    MultiplyAdd(cvec.s1, avec.s1, bval);
    MultiplyAdd(cvec.s2, avec.s2, bval);
    MultiplyAdd(cvec.s3, avec.s3, bval);
    MultiplyAdd(cvec.s4, avec.s4, bval);
    MultiplyAdd(cvec.s5, avec.s5, bval);
    MultiplyAdd(cvec.s6, avec.s6, bval);
    MultiplyAdd(cvec.s7, avec.s7, bval);
  #endif
  return cvec;
}

// Writes one accumulator vector to C: alpha*c_value, plus beta*C where beta is not zero
// (C is not read at all where beta is zero)
INLINE_FUNC void StoreResults(__global realM* cgm, realM c_value, const int _mi, const int _ni,
                              const int kSizeM, const real alpha, const real beta) {
  #if STRM == 0
    int mg = _mi + get_local_id(0)*(MWI/VWM);
  #elif STRM == 1
    int mg = get_local_id(0) + _mi*MDIMC;
  #endif
  #if STRN == 0
    int ng = _ni + get_local_id(1)*NWI;
  #elif STRN == 1
    int ng = _ni%VWN + get_local_id(1)*VWN + (_ni/VWN)*VWN*NDIMC;
  #endif
  int idm = mg + GetGroupID0() * (MWG/VWM);
  int idn = ng + GetGroupID1() * NWG;
  int index = idn*(kSizeM/VWM) + idm;

  realM result;
  realM xval = c_value;

  // beta == 0: alpha times the accumulator only
  if (IsZero(beta)) {
    #if VWM == 1
      Multiply(result, alpha, xval);
    #elif VWM == 2
      Multiply(result.x, alpha, xval.x);
      Multiply(result.y, alpha, xval.y);
    #elif VWM == 4
      Multiply(result.x, alpha, xval.x);
      Multiply(result.y, alpha, xval.y);
      Multiply(result.z, alpha, xval.z);
      Multiply(result.w, alpha, xval.w);
    #elif VWM == 8
      Multiply(result.s0, alpha, xval.s0);
      Multiply(result.s1, alpha, xval.s1);
      Multiply(result.s2, alpha, xval.s2);
      Multiply(result.s3, alpha, xval.s3);
      Multiply(result.s4, alpha, xval.s4);
      Multiply(result.s5, alpha, xval.s5);
      Multiply(result.s6, alpha, xval.s6);
      Multiply(result.s7, alpha, xval.s7);
    #endif
  }

  // otherwise alpha times the accumulator plus beta times C
  else {
    realM yval = cgm[index];
    #if VWM == 1
      AXPBY(result, alpha, xval, beta, yval);
    #elif VWM == 2
      AXPBY(result.x, alpha, xval.x, beta, yval.x);
      AXPBY(result.y, alpha, xval.y, beta, yval.y);
    #elif VWM == 4
      AXPBY(result.x, alpha, xval.x, beta, yval.x);
      AXPBY(result.y, alpha, xval.y, beta, yval.y);
      AXPBY(result.z, alpha, xval.z, beta, yval.z);
      AXPBY(result.w, alpha, xval.w, beta, yval.w);
    #elif VWM == 8
      AXPBY(result.s0, alpha, xval.s0, beta, yval.s0);
      AXPBY(result.s1, alpha, xval.s1, beta, yval.s1);
      AXPBY(result.s2, alpha, xval.s2, beta, yval.s2);
      AXPBY(result.s3, alpha, xval.s3, beta, yval.s3);
      AXPBY(result.s4, alpha, xval.s4, beta, yval.s4);
      AXPBY(result.s5, alpha, xval.s5, beta, yval.s5);
      AXPBY(result.s6, alpha, xval.s6, beta, yval.s6);
      AXPBY(result.s7, alpha, xval.s7, beta, yval.s7);
    #endif
  }
  cgm[index] = result;
}

// =================================================================================================
// Part 3: the body of the matrix multiplication

INLINE_FUNC void XgemmBody(const int kSizeM, const int kSizeN, const int kSizeK,
                           const __global realM* GEMMLAB_RESTRICT agm, const __global realN* GEMMLAB_RESTRICT bgm,
                           __global realM* cgm, const real alpha, const real beta
                           #if SA == 1 && SB == 1
                             , LOCAL_PTR realM* alm, LOCAL_PTR realN* blm
                           #elif SA == 1
                             , LOCAL_PTR realM* alm
                           #elif SB == 1
                             , LOCAL_PTR realN* blm
                           #endif
                           ) {

  // Registers: one k-slice of the work-item's A and B, and its MWI x NWI accumulators
  realM apm[MWI/VWM];
  realN bpm[NWI/VWN];
  realM cpm[NWI*(MWI/VWM)];

  // Combined work-item id for the local-memory loads (volatile, as published)
  #if SA == 1 || SB == 1
    volatile int tid = get_local_id(0) + MDIMC*get_local_id(1);
  #endif

  // Zero the accumulators
  #pragma unroll
  for (int _mi = 0; _mi < MWI/VWM; _mi += 1) {
    #pragma unroll
    for (int _ni = 0; _ni < NWI; _ni += 1) {
      cpm[_ni * (MWI/VWM) + _mi] = InitAccRegisters();
    }
  }

  // Loop over the KWG-deep tiles of K
  for (int kwg = 0; kwg < kSizeK; kwg += KWG) {

    // Stage the tiles of A and/or B in local memory
    #if SA == 1
      GlobalToLocalA(agm, alm, kSizeM, tid, kwg);
    #endif
    #if SB == 1
      GlobalToLocalB(bgm, blm, kSizeN, tid, kwg);
    #endif
    #if SA == 1 || SB == 1
      barrier(CLK_LOCAL_MEM_FENCE);
    #endif

    // Loop over k inside the tile, unrolled by KWI
    for (int pwi = 0; pwi < KWG; pwi += KWI) {
      #pragma unroll
      for (int _pit = 0; _pit < KWI; _pit += 1) {
        #if SA == 0 || SB == 0
          int idk = kwg + pwi + _pit;
        #endif
        #if SA == 1 || SB == 1
          int kg = pwi + _pit;
        #endif

        // This k's vectors of A: from the local tile or from global memory
        #pragma unroll
        for (int _mi = 0; _mi < MWI/VWM; _mi += 1) {
          #if SA == 1
            apm[_mi] = LocalToPrivateA(alm, _mi, kg);
          #else
            apm[_mi] = GlobalToPrivateA(agm, _mi, kSizeM, idk, kwg);
          #endif
        }

        // This k's vectors of B: from the local tile or from global memory
        #pragma unroll
        for (int _ni = 0; _ni < NWI/VWN; _ni += 1) {
          #if SB == 1
            bpm[_ni] = LocalToPrivateB(blm, _ni, kg);
          #else
            bpm[_ni] = GlobalToPrivateB(bgm, _ni, kSizeN, idk);
          #endif
        }

        // Multiply-accumulate: cpm += apm * bpm
        #pragma unroll
        for (int _ni = 0; _ni < NWI/VWN; _ni += 1) {
          #pragma unroll
          for (int _mi = 0; _mi < MWI/VWM; _mi += 1) {
            const realM aval = apm[_mi];
            #if VWN == 1
              cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi], aval, bpm[_ni]);
            #elif VWN == 2
              cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi], aval, bpm[_ni].x);
              cpm[(_ni*VWN + 1)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 1)*(MWI/VWM) + _mi], aval, bpm[_ni].y);
            #elif VWN == 4
              cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi], aval, bpm[_ni].x);
              cpm[(_ni*VWN + 1)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 1)*(MWI/VWM) + _mi], aval, bpm[_ni].y);
              cpm[(_ni*VWN + 2)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 2)*(MWI/VWM) + _mi], aval, bpm[_ni].z);
              cpm[(_ni*VWN + 3)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 3)*(MWI/VWM) + _mi], aval, bpm[_ni].w);
            #elif VWN == 8
              cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 0)*(MWI/VWM) + _mi], aval, bpm[_ni].s0);
              cpm[(_ni*VWN + 1)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 1)*(MWI/VWM) + _mi], aval, bpm[_ni].s1);
              cpm[(_ni*VWN + 2)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 2)*(MWI/VWM) + _mi], aval, bpm[_ni].s2);
              cpm[(_ni*VWN + 3)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 3)*(MWI/VWM) + _mi], aval, bpm[_ni].s3);
              cpm[(_ni*VWN + 4)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 4)*(MWI/VWM) + _mi], aval, bpm[_ni].s4);
              cpm[(_ni*VWN + 5)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 5)*(MWI/VWM) + _mi], aval, bpm[_ni].s5);
              cpm[(_ni*VWN + 6)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 6)*(MWI/VWM) + _mi], aval, bpm[_ni].s6);
              cpm[(_ni*VWN + 7)*(MWI/VWM) + _mi] = MultiplyAddVector(cpm[(_ni*VWN + 7)*(MWI/VWM) + _mi], aval, bpm[_ni].s7);
            #endif
          }
        }
      }
    }
    #if SA == 1 || SB == 1
      barrier(CLK_LOCAL_MEM_FENCE);
    #endif
  }

  // Write the MWG x NWG tile of C, with alpha and beta
  #pragma unroll
  for (int _ni = 0; _ni < NWI; _ni += 1) {
    #pragma unroll
    for (int _mi = 0; _mi < MWI/VWM; _mi += 1) {
      StoreResults(cgm, cpm[_ni * (MWI/VWM) + _mi], _mi, _ni, kSizeM, alpha, beta);
    }
  }
}

// =================================================================================================
// Part 4: the entry point

__kernel GEMMLAB_BOUNDS(MDIMC, NDIMC)
void Xgemm(const int kSizeM, const int kSizeN, const int kSizeK,
           const real alpha, const real beta,
           const __global realM* GEMMLAB_RESTRICT agm,
           const __global realN* GEMMLAB_RESTRICT bgm,
           __global realM* cgm) {

  // The work-group's tiles in local memory
  #if SA == 1
    __local realM alm[KWG * MWG/VWM];
  #endif
  #if SB == 1
    __local realN blm[KWG * NWG/VWN];
  #endif

  // Compute the tile and store it to C
  #if SA == 1 && SB == 1
    XgemmBody(kSizeM, kSizeN, kSizeK, agm, bgm, cgm, alpha, beta, alm, blm);
  #elif SA == 1
    XgemmBody(kSizeM, kSizeN, kSizeK, agm, bgm, cgm, alpha, beta, alm);
  #elif SB == 1
    XgemmBody(kSizeM, kSizeN, kSizeK, agm, bgm, cgm, alpha, beta, blm);
  #else
    XgemmBody(kSizeM, kSizeN, kSizeK, agm, bgm, cgm, alpha, beta);
  #endif
}
