#!/usr/bin/env bash
# Issue 27, call Q: the in-place kernel's K loop compiled twice, whole tiles without bounds
# (k_loop guarded 0) and edge tiles with them: tests on CUDA, the kernel alone beside the packed
# one at 1024^3 and 1000^3 (same tiles), then CUDA's tune --suite over .gpu/inplace-q.txt.
set -u
M=/tmp/mq; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-q
snap() { tar cJf "$OUT/call-q.tar.xz" -C $M .; }
for t in simt_direct simt_kernel; do
  xz -dc .gpu/tests-direct/$t.xz > /tmp/$t && chmod +x /tmp/$t
  GEMMLAB_REQUIRE_CUDA=1 timeout 150 /tmp/$t --test-threads=1 > $M/test-$t.txt 2>&1; echo "== exit $?" >> $M/test-$t.txt
  grep -E "checked|test result|FAIL|panicked|== exit" $M/test-$t.txt | head -6
done
snap
T="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1 --define USE_BOUNDS=0"
for s in 1024 1000; do
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes $s $T --define KMAJOR_A=0 --define KMAJOR_B=0 --reps 20 --out $M/simt-$s > $M/simt-$s.txt 2>&1
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simtdirect --sizes $s $T --define ALONG_MN=1 --reps 20 --out $M/direct-$s > $M/direct-$s.txt 2>&1
  grep -E "^simt" $M/simt-$s.txt $M/direct-$s.txt | cut -c1-150
done
timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simtdirect --sizes 1000 --define BK=16 --define BM=128 --define BN=64 --define GROUP=16 --define SPLITK=3 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1 --define KMAJOR_RUNS=1 --define USE_RESTRICT=0 --reps 20 --out $M/direct-1000-db > $M/direct-1000-db.txt 2>&1
timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simtdirect --sizes 4097x33x2049 --define BK=32 --define BM=64 --define BN=48 --define GROUP=2 --define STAGES=1 --define STREAMK=2 --define TM=4 --define TN=4 --define WM=32 --define WN=16 --define KMAJOR_RUNS=1 --define RASTER=0 --define SMEM_PAD=1 --reps 20 --out $M/direct-thin > $M/direct-thin.txt 2>&1
grep -E "^simt" $M/direct-1000-db.txt $M/direct-thin.txt | cut -c1-150
snap
rm -rf .gpu/db
SUITE=.gpu/inplace-q.txt TL=2 TT=${TTC:-220} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
cp -r /tmp/gemmlab-routine-suite-cuda/db $M/db-cuda; cp /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt $M/
grep -E 'routine on' $M/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-330
snap
