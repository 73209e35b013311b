// One sweep of a 2D 5-point Jacobi stencil, CUDA twin (spec: stencil.toml).
//
// The grid is nx x ny floats, row-major: point (i, j) is at j*nx + i, i runs
// along x. Interior points get the mean of themselves and their four
// neighbours,
//   out(i,j) = 0.2 * (in(i,j) + in(i-1,j) + in(i+1,j) + in(i,j-1) + in(i,j+1)),
// boundary points (first/last row and column) are copied.
//
// jacobi: one thread per point, BX x BY blocks.
//   TILED 0: every thread reads its five values from global memory
//            (neighbours come from the cache).
//   TILED 1: the block first stages its BX x BY block plus a one-point
//            halo, (BX+2) x (BY+2) floats, in shared memory (the threads
//            loop over the tile, so halo loads are spread over all of
//            them; coordinates outside the grid are clamped, those values
//            are never used), then reads the five values from there.
//   Launch: block (BX, BY), NDRange (nx, ny), i.e. grid (nx/BX, ny/BY);
//   nx a multiple of BX, ny of BY.
// jacobi_naive: the reference, the formula above straight from global
//   memory, guarded (any grid covering the points).
//
// Parameters: BX, BY (block size), TILED (0 or 1), passed by gemmlab as -D;
// the #ifndef values are the spec's defaults.
// Twin differences: none beyond syntax (__shared__/__syncthreads() here,
// __local/barrier in stencil.cl). extern "C" keeps the names unmangled.

#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif
#ifndef TILED
#define TILED 1
#endif

extern "C" __global__ void jacobi(const int nx, const int ny,
                                  const float* in,
                                  float* out) {
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int j = (int)(blockIdx.y * blockDim.y + threadIdx.y);

#if TILED
    __shared__ float tile[BY + 2][BX + 2];
    const int lx = (int)threadIdx.x;
    const int ly = (int)threadIdx.y;
    const int i0 = (int)blockIdx.x * BX - 1;   // grid column of tile[.][0]
    const int j0 = (int)blockIdx.y * BY - 1;   // grid row of tile[0][.]
    for (int t = ly * BX + lx; t < (BX + 2) * (BY + 2); t += BX * BY) {
        const int ti = t % (BX + 2);
        const int tj = t / (BX + 2);
        const int gi = min(max(i0 + ti, 0), nx - 1);
        const int gj = min(max(j0 + tj, 0), ny - 1);
        tile[tj][ti] = in[gj * nx + gi];
    }
    __syncthreads();
    // IN(di, dj): the input at (i + di, j + dj)
    #define IN(di, dj) tile[ly + 1 + (dj)][lx + 1 + (di)]
#else
    #define IN(di, dj) in[(j + (dj)) * nx + (i + (di))]
#endif

    float v;
    if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
        v = IN(0, 0);
    } else {
        v = 0.2f * (IN(0, 0) + IN(-1, 0) + IN(1, 0) + IN(0, -1) + IN(0, 1));
    }
    out[j * nx + i] = v;
    #undef IN
}

extern "C" __global__ void jacobi_naive(const int nx, const int ny,
                                        const float* in,
                                        float* out) {
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int j = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (i >= nx || j >= ny) {
        return;
    }
    const int c = j * nx + i;
    if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
        out[c] = in[c];
    } else {
        out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]);
    }
}
