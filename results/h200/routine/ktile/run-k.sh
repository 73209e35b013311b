#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call K: call J's suite found NVIDIA OpenCL running some
# unchanged choices up to a quarter slower (1024^3 NT 57.5 -> 71.8 us): the SIMT source then read
# the fragments through a helper taking private arrays. With the loop restored as it was (the
# source before KTILE_B preprocesses to the same text without it), the routine over the default
# suite again, both toolchains next to cuBLAS in one run, with call I's CUDA database (carried as
# .gpu/db: call I's OpenCL tuning ran on the slower build, so OpenCL keeps the committed entries).
set -u
M=/tmp/mk; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-k.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-k
( while sleep 30; do snap; done ) & SNAP=$!
timeout 200 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-routine.txt | cut -c1-100
kill $SNAP; snap
