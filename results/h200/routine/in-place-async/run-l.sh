#!/usr/bin/env bash
# Issue 27, 2026-11-29 (second session), call L: the in-place kernel's cp.async addresses formed
# without a select (one add per K tile): tune --suite over three calls, CUDA then OpenCL (TL=1),
# from call K's database; then the default suite on both toolchains next to cuBLAS.
set -u
M=/tmp/ml; rm -rf $M; mkdir -p $M
rm -rf .gpu/db; mkdir -p .gpu/db; cp .gpu/db-k/*.json .gpu/db/
for tc in cuda opencl; do
  SUITE=.gpu/ab.txt TL=1 TT=${TT:-100} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/
  rm -rf .gpu/db; cp -r /tmp/gemmlab-routine-suite-$tc/db .gpu/db; cp -r .gpu/db $M/db-$tc
  grep -E 'routine on' $M/tune-suite-$tc.txt | cut -c1-700
  tar cJf "$OUT/call-l.tar.xz" -C $M .
done
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-l
xz -dc .gpu/gemmlab.xz > /tmp/g-l && chmod +x /tmp/g-l
timeout 115 /tmp/g-l gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-routine > $M/suite-routine.txt 2>&1; echo "== exit $?" >> $M/suite-routine.txt
grep -E "geometric|== exit" $M/suite-routine.txt
tar cJf "$OUT/call-l.tar.xz" -C $M .
