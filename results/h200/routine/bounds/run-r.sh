#!/usr/bin/env bash
# Issue 27, call R: the in-place kernel with launch bounds (USE_BOUNDS=1), where ptxas pipelines its
# fragment loads: kernel alone beside the packed one at 1024^3 and 1000^3; CUDA's tune --suite
# over .gpu/bounds.txt with the in-place twins timed with USE_BOUNDS turned; then the default suite
# on both toolchains next to cuBLAS with that database.
set -u
M=/tmp/mr; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-r
snap() { tar cJf "$OUT/call-r.tar.xz" -C $M .; }
T="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1"
for s in 1024 1000; do
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes $s $T --define USE_BOUNDS=0 --define KMAJOR_A=0 --define KMAJOR_B=0 --reps 20 --out $M/simt-$s > $M/simt-$s.txt 2>&1
  for ub in 0 1; do
    timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simtdirect --sizes $s $T --define USE_BOUNDS=$ub --define ALONG_MN=1 --reps 20 --out $M/direct-$s-ub$ub > $M/direct-$s-ub$ub.txt 2>&1
  done
  grep -E "^simt" $M/simt-$s.txt $M/direct-$s-ub*.txt | cut -c1-150
done
snap
rm -rf .gpu/db
SUITE=.gpu/bounds.txt TL=2 TT=${TTC:-230} bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
cp -r /tmp/gemmlab-routine-suite-cuda/db $M/db-cuda; cp /tmp/gemmlab-routine-suite-cuda/*.txt $M/
grep -E 'routine on' $M/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-330
grep -E "geometric|x blas" $M/gemm-suite.txt
snap
