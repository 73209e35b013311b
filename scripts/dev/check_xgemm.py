#!/usr/bin/env python3
"""Checks the OpenCL twin of CLBlast's indirect kernel (kernels-cl/xgemm.cl) against numpy.

Runs on any OpenCL device pyopencl sees (PoCL on a CPU is enough). For each
configuration and precision it compiles prelude.cl + xgemm.cl with the
parameters as -D defines, runs C = alpha*A*B + beta*C on padded sizes with
the kernel's memory convention (A column-major M x K, B stored as B^T i.e.
element (k,n) at k*N + n, C column-major M x N), once with beta != 0 and once
with beta == 0 and C pre-filled with NaN (must come out finite: the kernel
must not read C), and prints the relative error.

usage: scripts/dev/check_xgemm.py [--quick] [--config 'MWG=64 NWG=64 ...'] [--sizes M,N,K]
exit status 0 when every case is within tolerance (f32 1e-5, f64 1e-12).
"""
import argparse
import os
import sys

import numpy as np
import pyopencl as cl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULTS = dict(MWG=32, NWG=32, KWG=32, MDIMC=8, NDIMC=16, MDIMA=8, NDIMB=16, KWI=2,
                VWM=4, VWN=2, STRM=0, STRN=0, SA=1, SB=1)

# Configurations beyond the default: every SA/SB, STRM/STRN combination, all
# vector widths, KWI 1/2/8, MDIMA != MDIMC and NDIMB != NDIMC, and the
# double-precision default entry of CLBlast's database.
CONFIGS = [
    {},  # the default (CLBlast database "default" entry, single precision)
    dict(KWG=32, KWI=2, MDIMA=16, MDIMC=16, MWG=32, NDIMB=8, NDIMC=8, NWG=32,
         SA=1, SB=1, STRM=0, STRN=0, VWM=2, VWN=4),  # f64 "default" entry
    dict(MWG=64, NWG=64, KWG=16, MDIMC=16, NDIMC=16, MDIMA=16, NDIMB=16, KWI=1,
         VWM=1, VWN=1, STRM=0, STRN=0, SA=0, SB=0),
    dict(MWG=64, NWG=64, KWG=32, MDIMC=8, NDIMC=8, MDIMA=8, NDIMB=8, KWI=8,
         VWM=8, VWN=8, STRM=1, STRN=1, SA=0, SB=0),
    dict(MWG=64, NWG=128, KWG=16, MDIMC=16, NDIMC=8, MDIMA=32, NDIMB=16, KWI=2,
         VWM=2, VWN=4, STRM=1, STRN=0, SA=1, SB=0),
    dict(MWG=128, NWG=64, KWG=32, MDIMC=16, NDIMC=16, MDIMA=8, NDIMB=32, KWI=8,
         VWM=4, VWN=2, STRM=0, STRN=1, SA=0, SB=1),
    dict(MWG=128, NWG=128, KWG=16, MDIMC=16, NDIMC=16, MDIMA=16, NDIMB=16, KWI=2,
         VWM=8, VWN=8, STRM=1, STRN=1, SA=1, SB=1),
    dict(MWG=64, NWG=64, KWG=32, MDIMC=8, NDIMC=32, MDIMA=32, NDIMB=8, KWI=1,
         VWM=2, VWN=2, STRM=0, STRN=1, SA=1, SB=1),
    dict(MWG=32, NWG=64, KWG=32, MDIMC=32, NDIMC=8, MDIMA=16, NDIMB=32, KWI=8,
         VWM=1, VWN=2, STRM=1, STRN=0, SA=1, SB=1),
    dict(MWG=16, NWG=16, KWG=16, MDIMC=8, NDIMC=8, MDIMA=8, NDIMB=8, KWI=2,
         VWM=2, VWN=1, STRM=0, STRN=0, SA=0, SB=1),
    dict(MWG=128, NWG=64, KWG=32, MDIMC=16, NDIMC=8, MDIMA=8, NDIMB=16, KWI=2,
         VWM=8, VWN=4, STRM=0, STRN=1, SA=1, SB=0),
]


def violations(c, precision):
    """The registry's constraints, restated: a list of the ones that fail."""
    out = []
    if c["MWG"] % (c["MDIMC"] * c["VWM"]):
        out.append("MWG % (MDIMC*VWM)")
    if c["NWG"] % (c["NDIMC"] * c["VWN"]):
        out.append("NWG % (NDIMC*VWN)")
    if c["MWG"] % (c["MDIMA"] * c["VWM"]):
        out.append("MWG % (MDIMA*VWM)")
    if c["NWG"] % (c["NDIMB"] * c["VWN"]):
        out.append("NWG % (NDIMB*VWN)")
    if c["KWG"] % c["KWI"]:
        out.append("KWG % KWI")
    threads = c["MDIMC"] * c["NDIMC"]
    if threads % c["MDIMA"] or c["KWG"] % (threads // c["MDIMA"]):
        out.append("KWG % KDIMA")
    if threads % c["NDIMB"] or c["KWG"] % (threads // c["NDIMB"]):
        out.append("KWG % KDIMB")
    if threads > 1024:
        out.append("work-group > 1024")
    local = (c["SA"] * c["KWG"] * c["MWG"] + c["SB"] * c["KWG"] * c["NWG"]) * (precision // 8)
    if local > 48 * 1024:
        out.append(f"local memory {local} B > 48 KiB")
    return out


def run(ctx, queue, c, precision, m, n, k, alpha, beta, nan_c, rng):
    dt = np.float32 if precision == 32 else np.float64
    src = open(os.path.join(ROOT, "kernels-cl/prelude.cl")).read() + "\n" + \
        open(os.path.join(ROOT, "kernels-cl/xgemm.cl")).read()
    opts = [f"-D{key}={val}" for key, val in c.items()] + [f"-DPRECISION={precision}"]
    prog = cl.Program(ctx, src).build(options=opts)
    kern = prog.Xgemm
    # Column-major A (M x K): a 2-D numpy array a[k, m] in C order has a[k, m] at k*M + m.
    a_cm = rng.standard_normal((k, m)).astype(dt)     # a_cm[k, m] = A(m, k)
    bt = rng.standard_normal((k, n)).astype(dt)       # bt[k, n] = B(k, n), at k*N + n
    if nan_c:
        c0 = np.full((n, m), np.nan, dtype=dt)        # c0[n, m] = C(m, n), at n*M + m
    else:
        c0 = rng.standard_normal((n, m)).astype(dt)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_cm)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bt)
    dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=c0)
    local = (c["MDIMC"], c["NDIMC"])
    glob = (m * c["MDIMC"] // c["MWG"], n * c["NDIMC"] // c["NWG"])
    kern(queue, glob, local, np.int32(m), np.int32(n), np.int32(k), dt(alpha), dt(beta),
         da, db, dc)
    out = np.empty_like(c0)
    cl.enqueue_copy(queue, out, dc)
    queue.finish()
    a = a_cm.T.astype(np.float64)                     # A(m, k)
    b = bt.astype(np.float64)                         # B(k, n)
    ref = alpha * (a @ b)                             # (M x N)
    if not nan_c:
        ref = ref + beta * c0.T.astype(np.float64)
    got = out.T.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="default configuration only")
    ap.add_argument("--config", help="NAME=VALUE ... over the defaults (one configuration)")
    ap.add_argument("--sizes", action="append", help="M,N,K (repeatable)")
    args = ap.parse_args()

    if args.config:
        configs = [dict(kv.split("=") for kv in args.config.split())]
        configs = [{key: int(v) for key, v in configs[0].items()}]
    elif args.quick:
        configs = [{}]
    else:
        configs = CONFIGS
    sizes = [tuple(int(x) for x in s.split(",")) for s in args.sizes] if args.sizes else \
        [(128, 192, 64), (256, 128, 96)]

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    dev = ctx.devices[0]
    print(f"device: {dev.name} ({dev.platform.name})")
    rng = np.random.default_rng(7)
    tol = {32: 1e-5, 64: 1e-12}
    failures = 0
    for over in configs:
        c = dict(DEFAULTS, **over)
        desc = " ".join(f"{key}={c[key]}" for key in DEFAULTS)
        for precision in (32, 64):
            bad = violations(c, precision)
            if bad:
                print(f"SKIP f{precision} {desc}: violates {', '.join(bad)}")
                continue
            for (m0, n0, k0) in sizes:
                # pad to the tile, as the host does
                m = -(-m0 // c["MWG"]) * c["MWG"]
                n = -(-n0 // c["NWG"]) * c["NWG"]
                k = -(-k0 // c["KWG"]) * c["KWG"]
                for beta, nan_c in ((0.5, False), (0.0, True)):
                    err = run(ctx, queue, c, precision, m, n, k, 1.5, beta, nan_c, rng)
                    ok = err < tol[precision]
                    failures += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} f{precision} {m}x{n}x{k} "
                          f"beta={beta}{' C=NaN' if nan_c else ''} rel.err={err:.2e}  {desc}")
    print("all within tolerance" if failures == 0 else f"{failures} FAILED")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
