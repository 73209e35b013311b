#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call L: the default suite on both toolchains with this
# build (REDUCE) and the committed database, next to cuBLAS in one run.
set -u
M=/tmp/ml; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-l.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-l
timeout 250 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt \
  --reps 10 -v --out $M/rows > $M/suite-both.txt 2>&1
echo "== suite both exit $?" >> $M/suite-both.txt; grep -hE "^== |geometric" $M/suite-both.txt; snap
