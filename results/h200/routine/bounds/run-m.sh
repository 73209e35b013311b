#!/usr/bin/env bash
# Issue 27, 2026-11-29 (third session), call M: 12-wide thread tiles and cp.async element copies
# in place (ASYNC_ELEMENTS): the CUDA test of simtdirect, the kernel alone at thin and 1000^3
# calls next to cuBLAS, then CUDA's tune --suite over .gpu/thin-m.txt.
set -u
M=/tmp/mm; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-m
snap() { tar cJf "$OUT/call-m.tar.xz" -C $M .; }
xz -dc .gpu/tests-direct/simt_direct.xz > /tmp/sd && chmod +x /tmp/sd
GEMMLAB_REQUIRE_CUDA=1 timeout 240 /tmp/sd --test-threads=1 > $M/test-direct.txt 2>&1; echo "== exit $?" >> $M/test-direct.txt
grep -E "checked|test result|FAIL|panicked|== exit" $M/test-direct.txt | head; snap
i=0
while read -r sizes cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simtdirect --sizes $sizes $D --reps 10 \
    --out $M/cmp-$i > $M/cmp-$i.txt 2>&1; echo "== exit $?" >> $M/cmp-$i.txt
  echo "== $i $sizes $cfg"; grep -E "simtdirect|cuBLAS|error|== exit" $M/cmp-$i.txt | grep -v "^ *$" | cut -c1-160 | head -8
done <<'LIST'
4097x33x2049,4097x48x2049 BK=32 BM=64 BN=48 GROUP=2 STAGES=1 STREAMK=2 TM=4 TN=4 WM=32 WN=16 KMAJOR_RUNS=1 RASTER=0 SMEM_PAD=1
4097x33x2049,4097x48x2049 BK=32 BM=64 BN=48 GROUP=2 STAGES=2 STREAMK=2 TM=4 TN=4 WM=32 WN=16 RASTER=0 SMEM_PAD=1 ASYNC_COPY=1 ASYNC_ELEMENTS=1
4097x33x2049,4097x48x2049 BK=16 BM=64 BN=48 GROUP=2 STAGES=3 STREAMK=2 TM=4 TN=4 WM=32 WN=16 RASTER=0 SMEM_PAD=1 ASYNC_COPY=1 ASYNC_ELEMENTS=1
4097x33x2049,4097x48x2049 BK=16 BM=64 BN=48 GROUP=2 STAGES=3 STREAMK=2 TM=8 TN=12 WM=64 WN=48 RASTER=0 SMEM_PAD=1
4097x33x2049,4097x48x2049 BK=16 BM=64 BN=48 GROUP=2 STAGES=3 STREAMK=2 TM=8 TN=12 WM=64 WN=48 RASTER=0 SMEM_PAD=1 ASYNC_COPY=1 ASYNC_ELEMENTS=1
4097x33x2049,4097x48x2049 BK=16 BM=64 BN=48 GROUP=2 STAGES=3 STREAMK=4 TM=8 TN=12 WM=64 WN=48 RASTER=0 SMEM_PAD=1 ASYNC_COPY=1 ASYNC_ELEMENTS=1
4097x33x2049,4097x48x2049 BK=32 BM=64 BN=48 GROUP=2 STAGES=2 STREAMK=2 TM=4 TN=12 WM=32 WN=48 RASTER=0 SMEM_PAD=1 ASYNC_COPY=1 ASYNC_ELEMENTS=1
4097x33x2049,4097x48x2049 BK=16 BM=128 BN=48 GROUP=2 STAGES=3 STREAMK=2 TM=8 TN=12 WM=64 WN=48 RASTER=0 SMEM_PAD=1 ASYNC_COPY=1 ASYNC_ELEMENTS=1
1000 BK=16 BM=128 BN=64 GROUP=16 SPLITK=3 STAGES=3 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 KMAJOR_RUNS=1 USE_RESTRICT=0
1000 BK=16 BM=128 BN=64 GROUP=16 SPLITK=3 STAGES=3 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 ASYNC_ELEMENTS=1 USE_RESTRICT=0
1000 BK=16 BM=128 BN=64 GROUP=16 SPLITK=3 STAGES=3 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 ASYNC_ELEMENTS=1 USE_RESTRICT=0 SMEM_PAD=1
LIST
snap
rm -rf .gpu/db
SUITE=.gpu/thin-m.txt TL=2 TT=${TTC:-200} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
cp -r /tmp/gemmlab-routine-suite-cuda/db $M/db-cuda; cp /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt $M/
grep -E 'routine on' $M/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-400
snap
