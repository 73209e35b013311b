#!/usr/bin/env bash
# Issue 27, 2026-11-29, call H: the build with pack_pair, the committed database: the default suite
# and held-out suite 5 on both toolchains next to cuBLAS.
set -u
M=/tmp/mh; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-h && chmod +x /tmp/g-h
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-h
for s in routine holdout-5; do
  timeout 110 /tmp/g-h gemm --device h200 --backends cuda,opencl --suite suites/$s.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$s > $M/suite-$s.txt 2>&1; echo "== exit $?" >> $M/suite-$s.txt
  grep -E "geometric|== exit" $M/suite-$s.txt
  tar cJf "$OUT/call-h.tar.xz" -C $M .
done
