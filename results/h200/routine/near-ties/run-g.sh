#!/usr/bin/env bash
# Issue 27, call G: call F's OpenCL routine, alone in its process, ran held-out thin suite 3 up to
# 35% slower than call B's OpenCL routine beside CUDA. Three of those calls, the OpenCL routine
# alone, then beside CUDA (one process, both toolchains), then alone again.
set -u
M=/tmp/mg; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-g
snap() { tar cJf "$OUT/call-g.tar.xz" -C $M .; }
i=0
for b in opencl cuda,opencl opencl; do
  i=$((i+1))
  timeout 90 /tmp/g gemm --device h200 --backends $b --suite results/h200/routine/near-ties/alone.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$i > $M/gemm-$i.txt 2>&1
  echo "== $i $b exit $?"; grep -E "^  [0-9]|geometric" $M/gemm-$i.txt | cut -c1-90
  snap
done
