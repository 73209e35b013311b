#!/usr/bin/env bash
# Issue 27, 2026-11-29 (sixth session), call E: gemm --suite over the default suite with the
# committed database (call D's), both toolchains next to cuBLAS in one run: a second sample of
# call D's table.
set -u
M=/tmp/me; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-e.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-e
( while sleep 30; do snap; done ) & SNAP=$!
timeout 220 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db results/tuned --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric" $M/gemm-routine.txt
kill $SNAP; snap
