#!/usr/bin/env python3
"""Offline cross-check, no GPU: is gemmlab's CUDA twin the published kernel text?

For each kernel it compiles, with ONE CUDA version:
  published  the published cuGEMM.cu (cl_to_cuda.h + kernels.cl, KERNEL=n) with nvcc -ptx
  twin/nvcc  kernels-cu/prelude.cu + kernels-cu/gemmNN.cu with nvcc -ptx
  twin/nvrtc the same twin with NVRTC (what gemmlab does), default switches
and compares the entry's PTX (names, comments and debug lines normalised, as table.py does).
published == twin/nvcc shows the source is the same; twin/nvcc vs twin/nvrtc is the compiler.

usage: offline_ptx.py PUBLISHED_TREE CUDA_ROOT [NVRTC_LIB]
  CUDA_ROOT has bin/nvcc (and nvvm/) and include/ (cuda_runtime.h); NVRTC_LIB defaults to
  CUDA_ROOT/lib/libnvrtc.so.13. With pip wheels (see README.md in this folder):
  pip install --target W nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 \
      nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-runtime nvidia-cuda-crt
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import table  # noqa: E402


def nvrtc_ptx(lib, source):
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"twin.cu", 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    opts = [b"--gpu-architecture=sm_90"]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    if rc:
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.value.decode())
    n = ctypes.c_size_t()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetPTX(prog, buf)
    return buf.value.decode()


def nvcc_ptx(nvcc, include, src, cwd, out):
    subprocess.run([nvcc, f"-I{include}", "-ptx", "-O3", "-arch=sm_90", src, "-o", out],
                   cwd=cwd, check=True, capture_output=True)
    return open(os.path.join(cwd, out)).read()


def main():
    tree, cuda = sys.argv[1], sys.argv[2]
    nvrtc_lib = sys.argv[3] if len(sys.argv) > 3 else os.path.join(cuda, "lib", "libnvrtc.so.13")
    nvcc, include = os.path.join(cuda, "bin", "nvcc"), os.path.join(cuda, "include")
    lib = ctypes.CDLL(nvrtc_lib)
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    print("nvcc:", version.strip().splitlines()[-1])
    print("nvrtc:", nvrtc_lib)
    print("| kernel | published (nvcc) vs twin (nvcc) | twin (nvcc) vs twin (NVRTC) |")
    print("|---|---|---|")
    prelude = open(os.path.join(ROOT, "kernels-cu", "prelude.cu")).read()
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(1, 12):
            d = os.path.join(tmp, f"gemm{n}")
            shutil.copytree(tree, d)
            settings = os.path.join(d, "src", "settings.h")
            text = open(settings).read().replace("#define KERNEL 8", f"#define KERNEL {n}")
            open(settings, "w").write(text)
            twin = prelude + open(os.path.join(ROOT, "kernels-cu", f"gemm{n:02d}.cu")).read()
            open(os.path.join(d, "twin.cu"), "w").write(twin)
            entry = f"myGEMM{n}"
            pub = table.entry_body(nvcc_ptx(nvcc, include, "src/cuGEMM.cu", d, "pub.ptx"), entry)
            tn = table.entry_body(nvcc_ptx(nvcc, include, "twin.cu", d, "twin.ptx"), entry)
            tr = table.entry_body(nvrtc_ptx(lib, twin), entry)
            print(f"| gemm{n} | {table.ptx_compare(pub, tn)[0]} | {table.ptx_compare(tn, tr)[0]} |")


if __name__ == "__main__":
    main()
