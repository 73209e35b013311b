#!/usr/bin/env python3
"""Checks the OpenCL twin of CLBlast's direct GEMM kernel (kernels-cl/xgemm_direct.cl)
against numpy, on whatever OpenCL device pyopencl finds first (PoCL on the dev box).

For every configuration (default and variants), precision (f32, f64), entry point
(XgemmDirectNN/NT/TN/TT), size and memory layout it computes
C = alpha * op(A) * op(B) + beta * C, column-major, with:
  - layouts: 'tight' (ld = rows, offset 0), 'aligned' (ld and offset multiples
    of 8 with padding: the vector-load path), 'odd' (ld = rows + 3, odd
    offsets: the scalar path);
  - every element of the A, B and C buffers outside the matrices (before the
    offset, gaps between columns, after the end) set to NaN in A and B (a read
    that reaches the result shows up as NaN) and to a sentinel (beta != 0) or
    NaN (beta == 0) in C, checked unchanged afterwards;
  - alpha = 1.5, beta = 0.5 with random C, and beta = 0 with C full of NaN
    (the result must be finite: C is not read).
Error: max |C - ref| / max |ref| (ref in float64), must be < 1e-5 (f32) or
1e-12 (f64); also printed: max over elements of |C - ref| divided by
|alpha| |op(A)| |op(B)| + |beta| |C| (the rounding-error scale). Configurations whose local memory exceeds 48 KiB in a precision
are skipped there (the registry rejects them), unless --all.

usage: python3 scripts/dev/check_xgemm_direct.py [--quick] [--all] [--precision 32|64]
"""
import os
import sys
import time

import numpy as np
import pyopencl as cl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = (open(os.path.join(ROOT, "kernels-cl", "prelude.cl")).read() + "\n"
       + open(os.path.join(ROOT, "kernels-cl", "xgemm_direct.cl")).read())

NAMES = ["WGD", "MDIMCD", "NDIMCD", "MDIMAD", "NDIMBD", "KWID", "VWMD", "VWND", "PADA", "PADB"]
CONFIGS = [
    # CLBlast database default, single precision (= registry default)
    dict(WGD=16, MDIMCD=8, NDIMCD=8, MDIMAD=8, NDIMBD=8, KWID=2, VWMD=1, VWND=1, PADA=1, PADB=1),
    # CLBlast database default, double precision
    dict(WGD=32, MDIMCD=16, NDIMCD=8, MDIMAD=16, NDIMBD=8, KWID=2, VWMD=2, VWND=4, PADA=1, PADB=1),
    # smallest tile, one element per work-item, no padding, KWID 1
    dict(WGD=8, MDIMCD=8, NDIMCD=8, MDIMAD=8, NDIMBD=8, KWID=1, VWMD=1, VWND=1, PADA=0, PADB=0),
    # re-shaped loads (MDIMAD != MDIMCD, NDIMBD != NDIMCD), KWID 8
    dict(WGD=32, MDIMCD=8, NDIMCD=8, MDIMAD=16, NDIMBD=32, KWID=8, VWMD=2, VWND=1, PADA=0, PADB=1),
    # 16x16 work-group, KWID 16, VWND 2
    dict(WGD=32, MDIMCD=16, NDIMCD=16, MDIMAD=32, NDIMBD=8, KWID=16, VWMD=1, VWND=2, PADA=1, PADB=1),
    # 32x8 work-group, VWND 2, no padding
    dict(WGD=32, MDIMCD=32, NDIMCD=8, MDIMAD=8, NDIMBD=16, KWID=2, VWMD=1, VWND=2, PADA=0, PADB=0),
    # WGD 64, vectors of 8 on both operands (f32 only: 66 KiB of local memory in f64)
    dict(WGD=64, MDIMCD=8, NDIMCD=8, MDIMAD=8, NDIMBD=8, KWID=16, VWMD=8, VWND=8, PADA=1, PADB=0),
    # WGD 64, VWMD 4, VWND 8 (f32 only)
    dict(WGD=64, MDIMCD=16, NDIMCD=8, MDIMAD=16, NDIMBD=8, KWID=4, VWMD=4, VWND=8, PADA=0, PADB=1),
    # VWMD 4 / VWND 4 at WGD 32: real4 on both (double4 in f64)
    dict(WGD=32, MDIMCD=8, NDIMCD=8, MDIMAD=8, NDIMBD=8, KWID=8, VWMD=4, VWND=4, PADA=1, PADB=1),
]
SIZES = [(1, 1, 1), (7, 5, 3), (33, 65, 17), (100, 37, 129), (128, 128, 128), (64, 64, 64), (16, 48, 40)]
VARIANTS = ["NN", "NT", "TN", "TT"]
TOL = {32: 1e-5, 64: 1e-12}


def constraints_ok(c, precision):
    wgd = c["WGD"]
    kdimad = c["MDIMCD"] * c["NDIMCD"] // c["MDIMAD"]
    kdimbd = c["MDIMCD"] * c["NDIMCD"] // c["NDIMBD"]
    ok = (wgd % c["KWID"] == 0 and wgd % (c["MDIMCD"] * c["VWMD"]) == 0
          and wgd % (c["NDIMCD"] * c["VWND"]) == 0 and wgd % (c["MDIMAD"] * c["VWMD"]) == 0
          and wgd % (c["NDIMBD"] * c["VWND"]) == 0 and wgd % kdimad == 0 and wgd % kdimbd == 0
          and c["MDIMCD"] * c["NDIMCD"] <= 1024)
    local = (wgd * (wgd + c["PADA"]) + wgd * (wgd + c["PADB"])) * (precision // 8)
    return ok, local


def layout(kind, rows, cols, which):
    """(offset, ld, buffer length) of a column-major rows x cols matrix."""
    if kind == "tight":
        off, ld = 0, rows
    elif kind == "aligned":
        off, ld = 16, ((rows + 7) // 8) * 8 + 8
    else:  # odd
        off, ld = {"A": 5, "B": 7, "C": 3}[which], rows + 3
    return off, ld, off + ld * (cols - 1) + rows + 5


def embed(mat, off, ld, length, fill, dtype):
    buf = np.full(length, fill, dtype=dtype)
    rows, cols = mat.shape
    for j in range(cols):
        buf[off + j * ld: off + j * ld + rows] = mat[:, j]
    return buf


def inside_mask(rows, cols, off, ld, length):
    m = np.zeros(length, dtype=bool)
    for j in range(cols):
        m[off + j * ld: off + j * ld + rows] = True
    return m


def extract(buf, rows, cols, off, ld):
    return np.stack([buf[off + j * ld: off + j * ld + rows] for j in range(cols)], axis=1)


def main():
    args = sys.argv[1:]
    quick = "--quick" in args
    run_all = "--all" in args
    precisions = [32, 64]
    if "--precision" in args:
        precisions = [int(args[args.index("--precision") + 1])]
    ctx = cl.create_some_context(interactive=False)
    dev = ctx.devices[0]
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    print(f"device: {dev.name} ({dev.platform.name}), local memory {dev.local_mem_size} B")
    rng = np.random.default_rng(1234)
    sizes = SIZES[:4] if quick else SIZES
    worst = {32: 0.0, 64: 0.0}
    worst_scaled = {32: 0.0, 64: 0.0}
    runs, failures, skipped = 0, [], []
    t0 = time.time()
    for precision in precisions:
        dtype = np.float32 if precision == 32 else np.float64
        for cfg in CONFIGS:
            ok, local = constraints_ok(cfg, precision)
            assert ok, cfg
            desc = " ".join(f"{n}={cfg[n]}" for n in NAMES)
            if local > 48 * 1024 and not run_all:
                skipped.append(f"f{precision} {desc} (local {local} B > 48 KiB)")
                continue
            opts = [f"-DPRECISION={precision}"] + [f"-D{n}={cfg[n]}" for n in NAMES]
            prg = cl.Program(ctx, SRC).build(options=opts)
            kernels = {v: getattr(prg, "XgemmDirect" + v) for v in VARIANTS}
            cfg_worst = 0.0
            cfg_worst_scaled = 0.0
            for variant in VARIANTS:
                ta, tb = variant[0] == "T", variant[1] == "T"
                for (m, n, k) in sizes:
                    for kind in ["tight", "aligned", "odd"]:
                        for beta in [0.5, 0.0]:
                            alpha = 1.5
                            a_rows, a_cols = (k, m) if ta else (m, k)
                            b_rows, b_cols = (n, k) if tb else (k, n)
                            A = rng.uniform(-1, 1, (a_rows, a_cols)).astype(dtype)
                            B = rng.uniform(-1, 1, (b_rows, b_cols)).astype(dtype)
                            C0 = rng.uniform(-1, 1, (m, n)).astype(dtype)
                            a_off, a_ld, a_len = layout(kind, a_rows, a_cols, "A")
                            b_off, b_ld, b_len = layout(kind, b_rows, b_cols, "B")
                            c_off, c_ld, c_len = layout(kind, m, n, "C")
                            a_buf = embed(A, a_off, a_ld, a_len, np.nan, dtype)
                            b_buf = embed(B, b_off, b_ld, b_len, np.nan, dtype)
                            if beta == 0.0:
                                c_buf = np.full(c_len, np.nan, dtype=dtype)
                            else:
                                c_buf = embed(C0, c_off, c_ld, c_len, 777.0, dtype)
                            c_before = c_buf.copy()
                            da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_buf)
                            db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_buf)
                            dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=c_buf)
                            wgd = cfg["WGD"]
                            gsz = (-(-m // wgd) * cfg["MDIMCD"], -(-n // wgd) * cfg["NDIMCD"])
                            lsz = (cfg["MDIMCD"], cfg["NDIMCD"])
                            kernels[variant](queue, gsz, lsz,
                                             np.int32(m), np.int32(n), np.int32(k),
                                             dtype(alpha), dtype(beta),
                                             da, np.int32(a_off), np.int32(a_ld),
                                             db, np.int32(b_off), np.int32(b_ld),
                                             dc, np.int32(c_off), np.int32(c_ld))
                            cl.enqueue_copy(queue, c_buf, dc)
                            queue.finish()
                            runs += 1
                            opA = A.astype(np.float64).T if ta else A.astype(np.float64)
                            opB = B.astype(np.float64).T if tb else B.astype(np.float64)
                            ref = alpha * (opA @ opB)
                            if beta != 0.0:
                                ref = ref + beta * C0.astype(np.float64)
                            got = extract(c_buf, m, n, c_off, c_ld).astype(np.float64)
                            where = f"f{precision} {variant} {m}x{n}x{k} {kind} beta={beta} [{desc}]"
                            if not np.all(np.isfinite(got)):
                                failures.append(f"{where}: non-finite result")
                                continue
                            # error relative to the largest |ref| (and, reported too, relative to
                            # the rounding-error scale |alpha| |op(A)| |op(B)| + |beta| |C|)
                            err = np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300)
                            scale = abs(alpha) * (np.abs(opA) @ np.abs(opB))
                            if beta != 0.0:
                                scale = scale + abs(beta) * np.abs(C0.astype(np.float64))
                            serr = np.max(np.abs(got - ref) / scale)
                            cfg_worst = max(cfg_worst, err)
                            cfg_worst_scaled = max(cfg_worst_scaled, serr)
                            if err >= TOL[precision]:
                                failures.append(f"{where}: relative error {err:.3e}")
                            outside = ~inside_mask(m, n, c_off, c_ld, c_len)
                            same = (c_buf[outside] == c_before[outside]) | (
                                np.isnan(c_buf[outside]) & np.isnan(c_before[outside]))
                            if not np.all(same):
                                failures.append(f"{where}: {np.sum(~same)} elements outside C changed")
            worst[precision] = max(worst[precision], cfg_worst)
            worst_scaled[precision] = max(worst_scaled[precision], cfg_worst_scaled)
            print(f"f{precision} {desc}: local {local} B, worst relative error {cfg_worst:.2e}"
                  f" (elementwise vs rounding scale {cfg_worst_scaled:.2e})", flush=True)
    print(f"{runs} runs in {time.time() - t0:.0f} s; worst relative error: "
          + ", ".join(f"f{p} {worst[p]:.2e} (scaled {worst_scaled[p]:.2e})" for p in precisions))
    for s in skipped:
        print("skipped:", s)
    if failures:
        print(f"{len(failures)} FAILURES:")
        for f in failures[:50]:
            print("  " + f)
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
