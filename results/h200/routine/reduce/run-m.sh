#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call M: two held-out calls still below 0.85 (300x300x100000 as 300x300x65536: `compare` takes dimensions up to 65536), the kernel
# alone (`compare --reps 20`, CUDA): the routine's choice against the same tiles with split-K
# summed by REDUCE.
set -u
M=/tmp/mm; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-m2.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-m
A="--define BK=8 --define BM=64 --define BN=64 --define GROUP=2 --define KMAJOR_A=0 --define KMAJOR_B=0 --define STAGES=3 --define TM=4 --define TN=8 --define WM=16 --define WN=64 --define ASYNC_COPY=1 --define RASTER=0 --define USE_BOUNDS=0"
B="--define ALONG_MN=0 --define BK=8 --define BM=64 --define BN=64 --define FIXED_FORM=1 --define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=1 --define STAGES=2 --define TM=4 --define TN=8 --define WM=16 --define WN=64 --define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define KMAJOR_RUNS=0 --define RASTER=0 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define USE_RESTRICT=0 --max-registers 128"
run() { local name=$1 k=$2 s=$3; shift 3
  timeout 40 stdbuf -oL /tmp/g compare --device h200 --backends cuda --kernels $k --sizes $s --reps 20 "$@" --out $M/rows-$name > $M/$name.txt 2>&1
  echo "== $name exit $? $(grep -E "^(simt|simtdirect|cublas) " $M/$name.txt | tr -s ' ' | cut -c1-60 | tr '\n' ';')"; snap; }
run a-chosen simt 300x300x65536 $A --define STREAMK=3
for s in 8 16 32; do run a-reduce$s simt 300x300x65536 $A --define SPLITK=$s --define REDUCE=1; done
#run b-chosen simtdirect 784x256x2304 $B --define STREAMK=3
#for s in 4 8 16; do run b-reduce$s simtdirect 784x256x2304 $B --define SPLITK=$s --define REDUCE=1; done
