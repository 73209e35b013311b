// gemmlab's result check on the device (a tuner's thousands of checks, with no
// download of C): the sums and extremes the host's full check (src/gemm/check.rs)
// computes, per work-group, in double.
//
// check_f32(n, got, want, out) / check_f64(...)
//   got: the n elements of C (float or double), want: the f64 reference.
//   Work-group g (256 work-items, grid-stride over the n elements) writes six
//   doubles at out[6g]: the sum of (got - want)^2 and of want^2 over the finite
//   elements of got, the largest |got - want| and its index (-1 if none), the
//   number of non-finite elements and the smallest index of one (-1 if none).
//   The host adds the groups up and judges as its own check does.
//
// The CUDA twin (kernels-cu/check.cu) is the same text.

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define CHECK_GROUP 256

#define CHECK_KERNEL(NAME, T)                                                   \
__kernel __attribute__((reqd_work_group_size(CHECK_GROUP, 1, 1)))              \
void NAME(const int n, __global const T* got, __global const double* want,     \
          __global double* out) {                                              \
  __local double sd[CHECK_GROUP], sr[CHECK_GROUP], sw[CHECK_GROUP];            \
  __local int swi[CHECK_GROUP], snf[CHECK_GROUP], sfi[CHECK_GROUP];            \
  const int lid = get_local_id(0);                                             \
  double d2 = 0.0, r2 = 0.0, w = 0.0;                                          \
  int wi = -1, nf = 0, fi = -1;                                                \
  const int stride = get_num_groups(0) * CHECK_GROUP;                          \
  for (int i = get_group_id(0) * CHECK_GROUP + lid; i < n; i += stride) {      \
    const double g = (double)got[i];                                           \
    if (!(g - g == 0.0)) { /* NaN or infinity, without math builtins */       \
      if (nf == 0) fi = i;                                                     \
      nf += 1;                                                                 \
      continue;                                                                \
    }                                                                          \
    const double r = want[i];                                                  \
    const double d = g - r;                                                    \
    d2 += d * d;                                                               \
    r2 += r * r;                                                               \
    const double a = d < 0.0 ? -d : d;                                         \
    if (a > w) { w = a; wi = i; }                                              \
  }                                                                            \
  sd[lid] = d2; sr[lid] = r2; sw[lid] = w;                                     \
  swi[lid] = wi; snf[lid] = nf; sfi[lid] = fi;                                 \
  barrier(CLK_LOCAL_MEM_FENCE);                                                \
  for (int s = CHECK_GROUP / 2; s > 0; s >>= 1) {                              \
    if (lid < s) {                                                             \
      sd[lid] += sd[lid + s];                                                  \
      sr[lid] += sr[lid + s];                                                  \
      if (sw[lid + s] > sw[lid]) { sw[lid] = sw[lid + s]; swi[lid] = swi[lid + s]; } \
      snf[lid] += snf[lid + s];                                                \
      if (sfi[lid + s] >= 0 && (sfi[lid] < 0 || sfi[lid + s] < sfi[lid]))      \
        sfi[lid] = sfi[lid + s];                                               \
    }                                                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
  }                                                                            \
  if (lid == 0) {                                                              \
    __global double* o = out + 6 * get_group_id(0);                            \
    o[0] = sd[0]; o[1] = sr[0]; o[2] = sw[0];                                  \
    o[3] = (double)swi[0]; o[4] = (double)snf[0]; o[5] = (double)sfi[0];       \
  }                                                                            \
}

CHECK_KERNEL(check_f32, float)
CHECK_KERNEL(check_f64, double)
