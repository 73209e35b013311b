#!/usr/bin/env bash
# Issue 27: KMAJOR_RUNS off and on in the K-major kernels the routine uses, kernel time next to cuBLAS.
set -u
R=/tmp/r; rm -rf $R; mkdir -p $R
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-runs
C128="--define BK=16 --define BM=128 --define BN=64 --define GROUP=8 --define SPLITK=6 --define STAGES=2 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ASYNC_COPY=0 --define SMEM_PAD=1 --define USE_BOUNDS=0"
C1024="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ASYNC_COPY=1 --define USE_BOUNDS=0"
CD="--define BK=16 --define BM=128 --define BN=64 --define GROUP=8 --define SPLITK=3 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define SMEM_PAD=1"
i=0
for spec in "simt 128x4096x4096 $C128" "simt 1024 $C1024" "simtdirect 1000 $CD"; do
  set -- $spec; k=$1; s=$2; shift 2
  for r in 0 1 0 1; do
    i=$((i+1))
    timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels $k --sizes $s "$@" --define KMAJOR_RUNS=$r \
      --reps 10 --out $R/rows-$i > $R/c-$i.txt 2>&1; echo "== exit $?" >> $R/c-$i.txt
    echo "== $k $s KMAJOR_RUNS=$r"; grep -E "^$k |^cublas|WRONG|error" $R/c-$i.txt | head -3
  done
  tar cJf "$OUT/runs.tar.xz" -C $R .
done
