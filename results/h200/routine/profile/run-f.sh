#!/usr/bin/env bash
# Issue 27, 2026-11-29, call F: the 1000^3 entry's tiles (simt 64x64, 8x8 a thread, cp.async) at two
# held-out calls below 0.8x, with every split of K, kernel time next to cuBLAS (CUDA); and the
# configuration the routine chose for them (simt 32x32).
set -u
M=/tmp/mf; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-f && chmod +x /tmp/g-f
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-f
T="--define BK=16 --define BM=64 --define BN=64 --define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=0 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1 --define USE_BOUNDS=0"
for v in "SPLITK=1 STREAMK=0" "SPLITK=2 STREAMK=0" "SPLITK=3 STREAMK=0" "SPLITK=4 STREAMK=0" "SPLITK=6 STREAMK=0" "SPLITK=8 STREAMK=0" "SPLITK=1 STREAMK=1" "SPLITK=1 STREAMK=2"; do
  set -- $v; tag=$(echo "$1-$2" | tr '=' '-')
  timeout 40 /tmp/g-f compare --device h200 --backends cuda --kernels simt --sizes 784x256x2304,196x512x4608 $T \
    --define $1 --define $2 --reps 10 --out $M/$tag > $M/$tag.txt 2>&1; echo "== exit $?" >> $M/$tag.txt
  echo "== $v"; grep -E "^ *(simt|cublas) |^[0-9]+x" $M/$tag.txt | cut -c1-120
done
C="--define BK=32 --define BM=32 --define BN=32 --define GROUP=2 --define KMAJOR_A=0 --define KMAJOR_B=0 --define STAGES=3 --define TM=4 --define TN=4 --define WM=16 --define WN=32 --define ASYNC_COPY=1 --define RASTER=0 --define USE_RESTRICT=0"
for v in "SPLITK=1 STREAMK=4" "SPLITK=6 STREAMK=0"; do
  set -- $v; tag=chosen-$(echo "$1-$2" | tr '=' '-')
  timeout 40 /tmp/g-f compare --device h200 --backends cuda --kernels simt --sizes 784x256x2304,196x512x4608 $C \
    --define $1 --define $2 --reps 10 --out $M/$tag > $M/$tag.txt 2>&1; echo "== exit $?" >> $M/$tag.txt
  echo "== chosen $v"; grep -E "^ *(simt|cublas) |^[0-9]+x" $M/$tag.txt | cut -c1-120
done
tar cJf "$OUT/call-f.tar.xz" -C $M .
