#!/usr/bin/env bash
# Issue 27, call T: 128x4096x4096 col NN, whose CUDA entry (simt, B read along K, split-K 6, no
# launch bounds) ptxas leaves unpipelined offline (fragment loads 3 instructions ahead of use):
# the kernel alone with USE_BOUNDS 0 and 1, then the routine's whole call with the committed
# database and with the entry's bounds turned on (.gpu/db-t), alternating.
set -u
M=/tmp/mt; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-t
snap() { tar cJf "$OUT/call-t.tar.xz" -C $M .; }
C="--define BK=16 --define BM=128 --define BN=64 --define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=1 --define SPLITK=6 --define STAGES=2 --define STREAMK=0 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=0 --define KMAJOR_RUNS=1 --define SMEM_PAD=1"
for ub in 0 1; do
  timeout 45 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes 128x4096x4096 $C --define USE_BOUNDS=$ub --reps 20 --out $M/k-ub$ub > $M/k-ub$ub.txt 2>&1
  grep -E "^simt" $M/k-ub$ub.txt | cut -c1-160
done
snap
for i in 1 2; do for db in results/tuned .gpu/db-t; do
  n=$(basename $db)
  timeout 40 /tmp/g gemm --device h200 --backends cuda --sizes 128x4096x4096 --db $db --reps 20 -v --out $M/g-$n-$i > $M/g-$n-$i.txt 2>&1
  echo "$n $i: $(grep -E '128x4096x4096' $M/g-$n-$i.txt | grep -v chosen | head -1 | cut -c1-100)"
done; done
snap
