#!/usr/bin/env bash
# Issue 27, 2026-11-30 (thirteenth session), call R: with the database after call Q (committed),
# the default suite in f64 on both toolchains (rows for the routine's report, whose f64 rows
# were the second round's), then f32 again (a second sample of call Q's means).
set -u
M=/tmp/mr; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-r.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-r
timeout 220 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --precision f64 \
  --reps 10 -v --out $M/rows-f64 > $M/suite-f64.txt 2>&1
echo "== suite f64 exit $?" >> $M/suite-f64.txt; grep -hE "^== |geometric" $M/suite-f64.txt; snap
timeout 220 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt \
  --reps 10 -v --out $M/rows-f32 > $M/suite-f32.txt 2>&1
echo "== suite f32 exit $?" >> $M/suite-f32.txt; grep -hE "^== |geometric" $M/suite-f32.txt; snap
