#!/usr/bin/env bash
# Issue 27, 2026-11-30 (tenth session), call H: `tune --suite` (whole-call candidates built ahead,
# NVIDIA OpenCL's in helper processes now) over the calls call G's runs did not reach: OpenCL
# 1024^3 col TT, 768x768x8192 col NN and 128x4096x4096 col NT, CUDA 128x4096x4096 col NT; into
# call G's database; then the default suite on both toolchains with it.
set -u
M=/tmp/uh; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-h.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-h
mkdir -p $M/db; cp .gpu/db-g/*.json $M/db/
printf '1024x1024x1024 col TT\n768x768x8192 col NN\n128x4096x4096 col NT\n' > $M/suite-opencl.txt
printf '128x4096x4096 col NT\n' > $M/suite-cuda.txt
for tc in opencl cuda; do
  if [ $tc = opencl ]; then t=200; else t=60; fi
  timeout $t stdbuf -oL /tmp/g tune --device h200 --backends $tc --suite $M/suite-$tc.txt --kernels simtdirect,simt \
    --time-limit 8 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried|built on" $M/tune-suite-$tc.txt | cut -c1-330; snap
done
timeout 100 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db \
  --reps 10 -v --out $M/rows > $M/gemm.txt 2>&1
echo "== gemm exit $?" >> $M/gemm.txt; grep -E "^== |geometric|^ +[0-9]+x" $M/gemm.txt | cut -c1-100; snap
