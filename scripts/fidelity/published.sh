#!/usr/bin/env bash
# Builds and runs the tutorial's published code (CNugteren/myGEMM, 2014-11) as published, one
# build per kernel, on the GPU machine. See scripts/fidelity/README.md for how the tree is
# obtained and what is changed (four things, each required to build or to time it on an H200).
#
# usage: published.sh PUBLISHED_TREE OUT
#   PUBLISHED_TREE  the repository's Makefile and src/ (kernels.cl, settings.h, cl_to_cuda.h,
#                   cuGEMM.cu, clGEMM.cpp, libcublas.cu, main.cpp, common.h)
#   OUT             gets published/gemmN/{build.txt, cuda-ptxas.txt, cuda.ptx, run.txt,
#                   opencl.ptx, opencl-ptxas.txt, ncu.csv} and the tool versions
set -u
SRC=$(cd "$1" && pwd)
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
B=/tmp/myGEMM-builds
rm -rf "$B"; mkdir -p "$B" "$OUT/published"

{ echo "published tree: $SRC"; (cd "$SRC" && sha256sum Makefile src/*); echo
  nvcc --version; echo; g++ --version | head -1; echo; ncu --version 2>&1 | tail -1
  nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$OUT/published/versions.txt" 2>&1

build() { # n: one build directory per kernel, as the Makefile builds it
  local n=$1
  local d="$B/gemm$n"
  cp -r "$SRC" "$d"
  cp "$HERE/no_clblas.cpp" "$d/src/"
  # (1) the kernel is selected in settings.h, as published
  sed -i "s/^#define KERNEL .*/#define KERNEL $n/" "$d/src/settings.h"
  # (2) 4096 only: main.cpp's timers accumulate over the sizes it runs, so its 4096 line
  #     would otherwise average 1024, 2048 and 4096
  sed -i "s/^#define MINSIZE .*/#define MINSIZE (4*1024)/" "$d/src/common.h"
  mkdir -p "$d/obj" "$d/bin"
  # (3) sm_90 instead of sm_35; (4) no clBLAS: the stand-in replaces libclblas.cpp
  (cd "$d" && make build CUDA_HOME="$CUDA_HOME" \
      NVFLAGS="-O3 -arch=sm_90 -Xcompiler -Wall" \
      CPPSOURCES="main.cpp clGEMM.cpp no_clblas.cpp" \
      LDFLAGS="-lOpenCL -L$CUDA_HOME/lib64 -lcudart -lcublas") > "$d/build.txt" 2>&1
  echo "== make exit $?" >> "$d/build.txt"
  # The Makefile's 'inspect' step: ptxas statistics of the CUDA kernels (cubin, -Xptxas -v)
  (cd "$d" && nvcc -cubin -O3 -arch=sm_90 -Xptxas -v -I"$CUDA_HOME/include" src/cuGEMM.cu \
      -o bin/myGEMM.cu.cubin) > "$d/cuda-ptxas.txt" 2>&1
  (cd "$d" && nvcc -ptx -O3 -arch=sm_90 -I"$CUDA_HOME/include" src/cuGEMM.cu \
      -o bin/myGEMM.cu.ptx) >> "$d/build.txt" 2>&1
}
for n in ${ONLY:-$(seq 1 11)}; do build "$n" & done
wait

for n in ${ONLY:-$(seq 1 11)}; do
  d="$B/gemm$n"; p="$OUT/published/gemm$n"
  mkdir -p "$p"
  cp "$d/build.txt" "$d/cuda-ptxas.txt" "$p/"
  cp "$d/bin/myGEMM.cu.ptx" "$p/cuda.ptx" 2>/dev/null
  # The published program takes OpenCL platform 0: make it NVIDIA's. Modules load eagerly,
  # as they did in 2014, so the first timed launch does not include loading the kernel.
  (cd "$d" && OCL_ICD_FILENAMES=libnvidia-opencl.so.1 CUDA_MODULE_LOADING=EAGER \
      timeout 90 ./bin/myGEMM) > "$p/run.txt" 2>&1
  echo "== exit $?" >> "$p/run.txt"
  # The program writes the binary with its terminating NULs; ptxas stops at them
  tr -d '\000' < "$d/bin/myGEMM.cl.ptx" > "$p/opencl.ptx" 2>/dev/null
  arch=$(grep -m1 '^\.target' "$p/opencl.ptx" 2>/dev/null | awk '{print $2}' | tr -d ',')
  ptxas -arch="${arch:-sm_90}" -v "$p/opencl.ptx" -o /dev/null > "$p/opencl-ptxas.txt" 2>&1
  # The kernel alone: Nsight Compute's duration of every myGEMM launch of a second run
  (cd "$d" && OCL_ICD_FILENAMES=libnvidia-opencl.so.1 CUDA_MODULE_LOADING=EAGER \
      timeout 120 ncu --clock-control none --csv \
      --metrics gpu__time_duration.sum,launch__registers_per_thread \
      -k regex:myGEMM ./bin/myGEMM) > "$p/ncu.csv" 2>&1
  echo "gemm$n: $(grep -h 'GFLOPS' "$p/run.txt" | tr -s ' ' | paste -sd'|')"
done
