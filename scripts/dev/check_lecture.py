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

usage: python3 scripts/dev/check_lecture.py [--quick] [--precision 32|64] [--kernel ID]
"""
import os
import sys
import time

import numpy as np
import pyopencl as cl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRELUDE = open(os.path.join(ROOT, "kernels-cl", "prelude.cl")).read()

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


def run_one(ctx, queue, kern, kid, precision, bs, vw, size, lay, rng):
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
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=abuf)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bbuf)
    dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=cbuf)
    ah, aw = sa_mat.shape
    bh, bw = sb_mat.shape
    gx = roundup(n, per * bs) // per
    gy = roundup(m, bs)
    i32 = np.int32
    kern(queue, (gx, gy), (bs, bs), i32(ah), i32(aw), i32(bh), i32(bw),
                        i32(sa), i32(sb), i32(sc), da, db, dc)
    cl.enqueue_copy(queue, cbuf, dc)
    queue.finish()
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
    if "--precision" in args:
        precisions = [int(args[args.index("--precision") + 1])]
    if "--kernel" in args:
        kernels = [args[args.index("--kernel") + 1]]
    sizes = QUICK_SIZES if quick else SIZES
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    print("device:", ctx.devices[0].name, "/", ctx.devices[0].platform.name)
    rng = np.random.default_rng(12345)
    failures = 0
    runs = 0
    t0 = time.time()
    for kid in kernels:
        src = PRELUDE + "\n" + open(os.path.join(ROOT, "kernels-cl", kid + ".cl")).read()
        vec = KERNELS[kid][3]
        for precision in precisions:
            worst = 0.0
            for bs in BLOCKS:
                for vw in (VWS if vec else [None]):
                    opts = [f"-DPRECISION={precision}", f"-DBLOCK_SIZE={bs}"]
                    if vw is not None:
                        opts.append(f"-DVW={vw}")
                    prg = cl.Program(ctx, src).build(options=opts)
                    kern = cl.Kernel(prg, KERNELS[kid][0])
                    for size in sizes:
                        for lay in ("tight", "gap"):
                            err, problems = run_one(ctx, queue, kern, kid, precision, bs, vw or 0, size, lay, rng)
                            runs += 1
                            worst = max(worst, err)
                            if problems:
                                failures += 1
                                print(f"FAIL {kid} f{precision} BLOCK_SIZE={bs}"
                                      + (f" VW={vw}" if vw is not None else "")
                                      + f" {size[0]}x{size[1]}x{size[2]} {lay}: " + "; ".join(problems))
            print(f"{kid:17s} f{precision}: max relative error {worst:.3g} (tolerance {TOL[precision]:g})")
    print(f"{runs} runs, {failures} failures, {time.time() - t0:.0f} s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
