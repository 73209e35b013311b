#!/bin/bash
# The standalone check of kernels-cu/tcwg.cu used while the kernel was written (before it was
# in gemmlab's registry): nvcc builds it for sm_90a with the given -D values, and each size
# runs once checked against an f64 host GEMM (at most every 37th element above 1M) and, with
# a 4th number, timed with CUDA events. Run from the repository root on the GPU machine:
#   bash results/h200/tc/wgmma/probe/wgtest.sh "BM=256 BN=64 BK=16 PROMOTE_K=16" 256x256x64 4096x4096x4096x20
D=$1; shift
HERE=$(dirname "$0")
TAG=$(echo "$D" | tr ' =' '_-')
( cat kernels-cu/prelude.cu; sed 's/extern "C" __global__/__global__/' kernels-cu/tcwg.cu ) > /tmp/tcwg_k.cu
DF=""; for d in $D; do DF="$DF -D$d"; done
nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -Xptxas -v -DKERNEL_FILE='"/tmp/tcwg_k.cu"' -DPRECISION=32 $DF \
  "$HERE/wgtest.cu" -o "/tmp/wgtest_$TAG" 2>&1 | grep -E "error|Used|spill|serial" | head -5
for s in "$@"; do IFS=x read -r m n k r <<< "$s"; timeout 60 "/tmp/wgtest_$TAG" "$m" "$n" "$k" "${r:-0}"; done
