#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call J: the routine over the default suite with call
# I's database (carried as .gpu/db), both toolchains next to cuBLAS in one run; then the held-out
# thin-M NN calls (../along-k/thin-m-nn.txt, no entry of their own) with the same database, the
# routine's first-run flips now taken for its re-tilings first.
set -u
M=/tmp/mj; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-j.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-j
( while sleep 30; do snap; done ) & SNAP=$!
timeout 200 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-routine.txt | cut -c1-100
snap
mkdir -p /tmp/db-j; cp .gpu/db/*.json /tmp/db-j/
timeout 110 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite results/h200/routine/along-k/thin-m-nn.txt \
  --db /tmp/db-j --reps 10 -v --out $M/rows-thin > $M/gemm-thin.txt 2>&1
echo "== thin exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-thin.txt | cut -c1-100
kill $SNAP; snap
