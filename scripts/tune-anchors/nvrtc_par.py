#!/usr/bin/env python3
"""NVRTC builds of a search's points: K threads in one process against K processes.

Issue 26: gemmlab's CUDA searches compile on 16 threads of one process and record
0.9-1.3 s of NVRTC per build, while 16 separate processes built one SIMT point in
0.39-0.67 s each. This takes the points a search would try (`gemmlab tune
--export-space FILE`), builds the first N with NVRTC exactly as gemmlab does
(prelude + source, -D per parameter, --maxrregcount, --ptxas-options=-v, to a
CUBIN for ARCH) from K threads, then from K processes, and prints the rate and the
time of a build for each, so the two can be told apart on the same host.

usage: nvrtc_par.py SPACE.json N K[,K...]   (NVRTC=path to libnvrtc.so, ARCH=sm_90)
"""
import ctypes
import json
import multiprocessing as mp
import os
import sys
import threading
import time

LIB = os.environ.get("NVRTC", "/usr/local/cuda/lib64/libnvrtc.so.13")
ARCH = os.environ.get("ARCH", "sm_90")
_lib = None


def build(source, point):
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(LIB)
    prog = ctypes.c_void_p()
    if _lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"kernel.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    opts = [f"--gpu-architecture={ARCH}", "--ptxas-options=-v"]
    opts += [f"-D{k}={v}" for k, v in point["defines"].items()]
    if point.get("max_registers"):
        opts.append(f"--maxrregcount={point['max_registers']}")
    enc = [o.encode() for o in opts]
    arr = (ctypes.c_char_p * len(enc))(*enc)
    t = time.time()
    status = _lib.nvrtcCompileProgram(prog, len(enc), arr)
    took = time.time() - t
    size = ctypes.c_size_t()
    _lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    _lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return took, status


def serve(source, points, out):
    for p in points:
        out.append(build(source, p))


def serve_process(source, points, queue):
    out = []
    serve(source, points, out)
    queue.put(out)


def run(source, points, k, mode):
    shares = [points[j::k] for j in range(k)]
    t = time.time()
    if mode == "threads":
        outs = [[] for _ in range(k)]
        ts = [threading.Thread(target=serve, args=(source, shares[j], outs[j])) for j in range(k)]
        for x in ts:
            x.start()
        for x in ts:
            x.join()
        res = [r for o in outs for r in o]
    else:
        q = mp.Queue()
        ps = [mp.Process(target=serve_process, args=(source, shares[j], q)) for j in range(k)]
        for p in ps:
            p.start()
        res = []
        for _ in ps:
            res += q.get()
        for p in ps:
            p.join()
    wall = time.time() - t
    took = sorted(r[0] for r in res)
    failed = sum(1 for r in res if r[1])
    print(
        f"{mode:9s} x{k:2d}: {len(res)} builds in {wall:6.2f} s = {len(res) / wall:5.1f}/s; "
        f"a build {1000 * sum(took) / len(took):5.0f} ms mean, {1000 * took[len(took) // 2]:5.0f} median, "
        f"{1000 * took[-1]:5.0f} max; {failed} failed",
        flush=True,
    )


def main():
    space = json.load(open(sys.argv[1]))
    n = int(sys.argv[2])
    ks = [int(x) for x in sys.argv[3].split(",")]
    source = space["source"].encode()
    points = space["points"][:n]
    print(f"{space['kernel']}: {len(points)} points of a {space['strategy']} search, NVRTC {LIB}, {ARCH}, {os.cpu_count()} CPUs", flush=True)
    build(source, points[0])  # load the library once before timing
    for k in ks:
        for mode in ("threads", "processes"):
            run(source, points, k, mode)


if __name__ == "__main__":
    mp.set_start_method("fork")
    main()
