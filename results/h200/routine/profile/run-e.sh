#!/usr/bin/env bash
# Issue 27, 2026-11-29, call E: the committed database (call D's) and kernels, the default suite
# again and holdout-5, both toolchains next to cuBLAS.
set -u
M=/tmp/me; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-e && chmod +x /tmp/g-e
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-e
for s in routine holdout-5; do
  timeout 140 /tmp/g-e gemm --device h200 --backends cuda,opencl --suite suites/$s.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$s > $M/suite-$s.txt 2>&1; echo "== exit $?" >> $M/suite-$s.txt
  grep -E "geometric|== exit" $M/suite-$s.txt
  tar cJf "$OUT/call-e.tar.xz" -C $M .
done
