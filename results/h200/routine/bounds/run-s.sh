#!/usr/bin/env bash
# Issue 27, call S: the default suite and held-out suite 5 on both toolchains next to cuBLAS with
# the committed database (results/tuned: call R's 1000^3 and 1024^3 TT entries, nothing tuned on
# the held-out calls).
set -u
M=/tmp/ms; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-s
snap() { tar cJf "$OUT/call-s.tar.xz" -C $M .; }
for s in routine holdout-5; do
  timeout 200 /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/$s.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$s > $M/gemm-$s.txt 2>&1; echo "== exit $?" >> $M/gemm-$s.txt
  grep -E "geometric|== exit" $M/gemm-$s.txt
  snap
done
