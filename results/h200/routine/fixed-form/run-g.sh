#!/usr/bin/env bash
# Issue 27, 2026-11-30 (tenth session), call G: `tune --suite` with whole-call candidates built
# ahead in parallel, over the default suite's calls furthest from cuBLAS (1000^3 col NN, 1024^3 col
# TT, 768x768x8192 col NN, 128x4096x4096 col NT), families simtdirect and simt, into a copy of the
# committed database (call F's OpenCL entry at 1000^3 included); then the default suite on both
# toolchains with that database, and the four calls with the committed one, same call.
set -u
M=/tmp/ug; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-g.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-g
printf '1000x1000x1000 col NN\n1024x1024x1024 col TT\n768x768x8192 col NN\n128x4096x4096 col NT\n' > $M/suite.txt
mkdir -p $M/db-new $M/db-old; cp .gpu/db-f/*.json $M/db-new/; cp results/tuned/*.json $M/db-old/
for tc in cuda opencl; do
  timeout 195 stdbuf -oL /tmp/g tune --device h200 --backends $tc --suite $M/suite.txt --kernels simtdirect,simt \
    --time-limit 8 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db-new --store $M/store \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried|built on" $M/tune-suite-$tc.txt | cut -c1-330; snap
done
timeout 95 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db-new \
  --reps 10 -v --out $M/rows-new > $M/gemm-new.txt 2>&1
echo "== new exit $?" >> $M/gemm-new.txt; grep -E "^== |geometric|^ +[0-9]+x" $M/gemm-new.txt | cut -c1-100; snap
timeout 40 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite $M/suite.txt --db $M/db-old \
  --reps 10 -v --out $M/rows-old > $M/gemm-old.txt 2>&1
echo "== old exit $?" >> $M/gemm-old.txt; grep -E "^== |geometric|^ +[0-9]+x" $M/gemm-old.txt | cut -c1-100; snap
