#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call N: the routine over the default suite with the
# committed database (results/tuned after call L) and the final binary (first-run KTILE_B twins),
# both toolchains next to cuBLAS in one run.
set -u
M=/tmp/mn; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-n.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-n
mkdir -p /tmp/db-n; cp results/tuned/*.json /tmp/db-n/
timeout 200 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db /tmp/db-n --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-routine.txt | cut -c1-100
snap
