#!/usr/bin/env python3
"""Checks the OpenCL twins of the lecture's kernels (kernels-cl/lecture_*.cl)
against numpy, on whatever OpenCL device pyopencl finds first (PoCL on the dev box).

The lecture's calling convention (the driver's Abi::Lecture):
  (Aheight, Awidth, Bheight, Bwidth, Astride, Bstride, Cstride, A, B, C),
  row-major with strides, heights/widths as stored (A^T is K x M, B^T N x K),
  NDRange x = columns of C, y = rows of C, rounded up to the work-group
  (BLOCK_SIZE x BLOCK_SIZE); the wide kernel's x is half: roundup(N, 2*BS)/2.

For every kernel, precision (f32, f64), BLOCK_SIZE (8, 16, 32), VW (vector
kernel: 0, 2, 4, 8, 16), size M x N x K and stride layout:
  - every buffer is exactly as long as the driver's minimum,
    (height-1)*stride + width (vector kernel: width rounded up to VW);
  - every element in a stride gap is NaN in A and B (a read that reaches the
    result shows up as NaN), except the vector kernel's zero padding between
    K and the next multiple of VW (the driver guarantees those zeros);
  - C is pre-filled with NaN: every element of C must come out finite and
    every gap element must stay NaN (nothing written outside C).
Layouts: 'tight' (stride = width; vector kernel: width rounded up to VW) and
'gap' (stride = width + 3; vector kernel: the next multiple of VW + VW).
Error: max |C - ref| / max |ref| (ref in float64), must be < 1e-5 (f32) or
1e-12 (f64).

The CUDA twins (kernels-cu/lecture_*.cu) run through the same checks with
--toolchain cuda-host (or both, the default): there is no GPU here, so they are
compiled as host C++ by g++ (prelude.cu included) through a small shim that
maps CUDA onto C++20 -- one std::thread per work-item, a std::barrier for
__syncthreads, __shared__ arrays as function statics (the blocks run one after
the other), __align__ as alignas, threadIdx/blockIdx thread-local -- and
launched over the same grid. It checks the CUDA twins' own code (the realV
structs and their operator*, the prelude's get_*_id), not NVRTC's code
generation.

usage: python3 scripts/dev/check_lecture.py [--quick] [--precision 32|64] [--kernel ID]
                                            [--toolchain opencl|cuda-host|both]
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyopencl as cl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRELUDE = open(os.path.join(ROOT, "kernels-cl", "prelude.cl")).read()
CUDA_PRELUDE = open(os.path.join(ROOT, "kernels-cu", "prelude.cu")).read()

# CUDA on the host: enough of CUDA for the lecture's twins, in C++20.
CUDA_SHIM = r"""
#include <barrier>
#include <thread>
#include <vector>
struct gemmlab_dim3 { unsigned x, y, z; };
thread_local gemmlab_dim3 threadIdx, blockIdx;
gemmlab_dim3 blockDim, gridDim;
static std::barrier<>* gemmlab_bar;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static
#define __syncthreads() gemmlab_bar->arrive_and_wait()
inline float __ldg(const float* p) { return *p; }
"""
CUDA_LAUNCH = r"""
template <class PA, class PB, class PC>
static void gemmlab_run(void (*f)(int, int, int, int, int, int, int, PA, PB, PC),
                        int gx, int gy, int lx, int ly, const int* a, void* A, void* B, void* C) {
  blockDim = {(unsigned)lx, (unsigned)ly, 1};
  gridDim = {(unsigned)(gx / lx), (unsigned)(gy / ly), 1};
  for (int by = 0; by < gy / ly; ++by)
    for (int bx = 0; bx < gx / lx; ++bx) {
      std::barrier<> bar(lx * ly);
      gemmlab_bar = &bar;
      std::vector<std::thread> ts;
      for (int ty = 0; ty < ly; ++ty)
        for (int tx = 0; tx < lx; ++tx)
          ts.emplace_back([=] {
            threadIdx = {(unsigned)tx, (unsigned)ty, 0};
            blockIdx = {(unsigned)bx, (unsigned)by, 0};
            f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], (PA)A, (PB)B, (PC)C);
          });
      for (auto& t : ts) t.join();
    }
}
extern "C" void gemmlab_launch(int gx, int gy, int lx, int ly, const int* a, void* A, void* B, void* C) {
  gemmlab_run(&ENTRY, gx, gy, lx, ly, a, A, B, C);
}
"""

# id: (entry, A transposed, B transposed, vector kernel, C columns per work-item)
KERNELS = {
    "lecture_naive": ("matMulKernel", False, False, False, 1),
    "lecture_at": ("matMulKernel_TRA", True, False, False, 1),
    "lecture_bt": ("matMulKernel_TRB", False, True, False, 1),
    "lecture_bt_vec": ("matMulKernel_TRB_VEC", False, True, True, 1),
    "lecture_tiled": ("matMulKernel_LM", False, False, False, 1),
    "lecture_prefetch": ("matMulKernel_LM_PF", False, False, False, 1),
    "lecture_wide": ("matMulKernel_LM_WIDE", False, False, False, 2),
}
SIZES = [(1, 1, 1), (7, 5, 3), (33, 65, 17), (100, 37, 129), (129, 130, 31),
         (64, 64, 64), (16, 8, 40), (3, 70, 1), (50, 1, 33)]
QUICK_SIZES = [(1, 1, 1), (7, 5, 3), (33, 65, 17), (129, 130, 31)]
BLOCKS = [8, 16, 32]
VWS = [0, 2, 4, 8, 16]
TOL = {32: 1e-5, 64: 1e-12}


def roundup(x, m):
    return (x + m - 1) // m * m


def store(mat, stride, pad_to, dtype):
    """Row-major buffer of mat with stride: NaN gaps, zeros up to pad_to columns."""
    h, w = mat.shape
    width = max(w, pad_to)
    buf = np.full((h - 1) * stride + width, np.nan, dtype=dtype)
    for i in range(h):
        buf[i * stride:i * stride + w] = mat[i]
        buf[i * stride + w:i * stride + width] = 0
    return buf


def aligned(a, align=256):
    """A copy of a whose data starts on an align-byte boundary (the GPU's allocations do)."""
    raw = np.empty(a.nbytes + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    out = raw[off:off + a.nbytes].view(a.dtype)
    out[:] = a
    return out


class OpenCl:
    name = "opencl"

    def __init__(self):
        self.ctx = cl.create_some_context(interactive=False)
        self.queue = cl.CommandQueue(self.ctx)
        self.device = self.ctx.devices[0].name + " / " + self.ctx.devices[0].platform.name

    def build(self, kid, opts):
        src = PRELUDE + "\n" + open(os.path.join(ROOT, "kernels-cl", kid + ".cl")).read()
        prg = cl.Program(self.ctx, src).build(options=opts)
        return cl.Kernel(prg, KERNELS[kid][0])

    def launch(self, kern, glob, local, ints, abuf, bbuf, cbuf):
        mf = cl.mem_flags
        da = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=abuf)
        db = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bbuf)
        dc = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=cbuf)
        kern(self.queue, glob, local, *[np.int32(i) for i in ints], da, db, dc)
        cl.enqueue_copy(self.queue, cbuf, dc)
        self.queue.finish()


class CudaHost:
    name = "cuda-host"
    device = "host C++ (g++, one thread per work-item)"

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="check_lecture_")
        self.count = 0

    def build(self, kid, opts):
        src = (CUDA_SHIM + CUDA_PRELUDE + "\n"
               + open(os.path.join(ROOT, "kernels-cu", kid + ".cu")).read() + CUDA_LAUNCH)
        self.count += 1
        cpp = os.path.join(self.dir, f"k{self.count}.cpp")
        so = os.path.join(self.dir, f"k{self.count}.so")
        open(cpp, "w").write(src)
        subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", "-shared", "-fPIC", "-w", "-Wno-psabi",
                        f"-DENTRY={KERNELS[kid][0]}", *opts, cpp, "-o", so], check=True)
        lib = ctypes.CDLL(so)
        lib.gemmlab_launch.argtypes = [ctypes.c_int] * 4 + [ctypes.c_void_p] * 4
        return lib.gemmlab_launch

    def launch(self, kern, glob, local, ints, abuf, bbuf, cbuf):
        a, b, c = aligned(abuf), aligned(bbuf), aligned(cbuf)
        args = np.array(ints, dtype=np.int32)
        kern(glob[0], glob[1], local[0], local[1], args.ctypes.data,
             a.ctypes.data, b.ctypes.data, c.ctypes.data)
        cbuf[:] = c


def run_one(tc, kern, kid, precision, bs, vw, size, lay, rng):
    entry, a_t, b_t, vec, per = KERNELS[kid]
    dtype = np.float32 if precision == 32 else np.float64
    m, n, k = size
    a = rng.uniform(-1, 1, (m, k))
    b = rng.uniform(-1, 1, (k, n))
    ref = a @ b
    sa_mat = a.T if a_t else a          # as stored
    sb_mat = b.T if b_t else b
    v = (8 if precision == 32 else 4) if vw == 0 else vw
    def stride_of(w):
        if vec:
            return roundup(w, v) if lay == "tight" else roundup(w, v) + v
        return w if lay == "tight" else w + 3
    sa, sb = stride_of(sa_mat.shape[1]), stride_of(sb_mat.shape[1])
    pad = roundup(k, v) if vec else 0
    abuf = store(sa_mat.astype(dtype), sa, pad, dtype)
    bbuf = store(sb_mat.astype(dtype), sb, pad, dtype)
    sc = n if lay == "tight" else n + 3
    cbuf = np.full((m - 1) * sc + n, np.nan, dtype=dtype)
    ah, aw = sa_mat.shape
    bh, bw = sb_mat.shape
    gx = roundup(n, per * bs) // per
    gy = roundup(m, bs)
    tc.launch(kern, (gx, gy), (bs, bs), (ah, aw, bh, bw, sa, sb, sc), abuf, bbuf, cbuf)
    c = np.stack([cbuf[i * sc:i * sc + n] for i in range(m)]).astype(np.float64)
    problems = []
    if not np.all(np.isfinite(c)):
        problems.append(f"{int(np.sum(~np.isfinite(c)))} elements of C not finite")
    gaps = np.concatenate([cbuf[i * sc + n:(i + 1) * sc] for i in range(m - 1)]) if m > 1 else np.array([])
    if gaps.size and not np.all(np.isnan(gaps)):
        problems.append("a stride gap of C was written")
    err = float(np.max(np.abs(c - ref)) / max(np.max(np.abs(ref)), 1e-300)) if np.all(np.isfinite(c)) else float("inf")
    if err >= TOL[precision]:
        problems.append(f"error {err:.3g} >= {TOL[precision]:g}")
    return err, problems


def main():
    args = sys.argv[1:]
    quick = "--quick" in args
    precisions = [32, 64]
    kernels = list(KERNELS)
    toolchain = "both"
    if "--precision" in args:
        precisions = [int(args[args.index("--precision") + 1])]
    if "--kernel" in args:
        kernels = [args[args.index("--kernel") + 1]]
    if "--toolchain" in args:
        toolchain = args[args.index("--toolchain") + 1]
    sizes = QUICK_SIZES if quick else SIZES
    tcs = {"opencl": [OpenCl], "cuda-host": [CudaHost], "both": [OpenCl, CudaHost]}[toolchain]
    failures = 0
    runs = 0
    for make in tcs:
        tc = make()
        print(f"== {tc.name}: {tc.device}")
        rng = np.random.default_rng(12345)
        t0 = time.time()
        for kid in kernels:
            vec = KERNELS[kid][3]
            for precision in precisions:
                worst = 0.0
                for bs in BLOCKS:
                    for vw in (VWS if vec else [None]):
                        opts = [f"-DPRECISION={precision}", f"-DBLOCK_SIZE={bs}"]
                        if vw is not None:
                            opts.append(f"-DVW={vw}")
                        kern = tc.build(kid, opts)
                        for size in sizes:
                            for lay in ("tight", "gap"):
                                err, problems = run_one(tc, kern, kid, precision, bs, vw or 0, size, lay, rng)
                                runs += 1
                                worst = max(worst, err)
                                if problems:
                                    failures += 1
                                    print(f"FAIL {tc.name} {kid} f{precision} BLOCK_SIZE={bs}"
                                          + (f" VW={vw}" if vw is not None else "")
                                          + f" {size[0]}x{size[1]}x{size[2]} {lay}: " + "; ".join(problems))
                print(f"{tc.name:9s} {kid:17s} f{precision}: max relative error {worst:.3g} (tolerance {TOL[precision]:g})")
        print(f"{tc.name}: {time.time() - t0:.0f} s")
    print(f"{runs} runs, {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
