// gemmlab's result check on the device (a tuner's thousands of checks, with no
// download of C): the sums and extremes the host's full check (src/gemm/check.rs)
// computes, per block, in double. The OpenCL twin (kernels-cl/check.cl) says
// what each block writes; this is the same text.

#define CHECK_GROUP 256

#define CHECK_KERNEL(NAME, T)                                                   \
extern "C" __global__ void __launch_bounds__(CHECK_GROUP)                      \
NAME(const int n, const T* got, const double* want, double* out) {             \
  __shared__ double sd[CHECK_GROUP], sr[CHECK_GROUP], sw[CHECK_GROUP];         \
  __shared__ int swi[CHECK_GROUP], snf[CHECK_GROUP], sfi[CHECK_GROUP];         \
  const int lid = threadIdx.x;                                                 \
  double d2 = 0.0, r2 = 0.0, w = 0.0;                                          \
  int wi = -1, nf = 0, fi = -1;                                                \
  const int stride = gridDim.x * CHECK_GROUP;                                  \
  for (int i = blockIdx.x * CHECK_GROUP + lid; i < n; i += stride) {           \
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
  __syncthreads();                                                             \
  for (int s = CHECK_GROUP / 2; s > 0; s >>= 1) {                              \
    if (lid < s) {                                                             \
      sd[lid] += sd[lid + s];                                                  \
      sr[lid] += sr[lid + s];                                                  \
      if (sw[lid + s] > sw[lid]) { sw[lid] = sw[lid + s]; swi[lid] = swi[lid + s]; } \
      snf[lid] += snf[lid + s];                                                \
      if (sfi[lid + s] >= 0 && (sfi[lid] < 0 || sfi[lid + s] < sfi[lid]))      \
        sfi[lid] = sfi[lid + s];                                               \
    }                                                                          \
    __syncthreads();                                                           \
  }                                                                            \
  if (lid == 0) {                                                              \
    double* o = out + 6 * blockIdx.x;                                          \
    o[0] = sd[0]; o[1] = sr[0]; o[2] = sw[0];                                  \
    o[3] = (double)swi[0]; o[4] = (double)snf[0]; o[5] = (double)sfi[0];       \
  }                                                                            \
}

CHECK_KERNEL(check_f32, float)
CHECK_KERNEL(check_f64, double)
