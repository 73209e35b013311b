#!/usr/bin/env bash
# Issue 27, 2026-11-30 (fourteenth session), call A: slice-K (SLICEK) in the SIMT kernels.
# The CUDA and NVIDIA OpenCL tests of both SIMT kernels at odd sizes (failing instead of
# skipping); the kernels alone at held-out shapes with 1, 2 and 4 slices; then the routine on
# holdout-5 with this build (new) and the one before slice-K (old, 25361c7), alternated.
set -u
M=/tmp/ma; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-a.tar.xz" -C $M .; }
for b in gemmlab gemmlab-old simt_kernel simt_direct; do xz -dc .gpu/$b.xz > /tmp/$b && chmod +x /tmp/$b; done
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
for t in simt_kernel simt_direct; do
  GEMMLAB_REQUIRE_CUDA=1 timeout 170 /tmp/$t --test-threads=2 > $M/tests-$t.txt 2>&1
  echo "== exit $?" >> $M/tests-$t.txt
done
grep -hE "checked|calls|test result|FAILED|panicked|== exit" $M/tests-*.txt | cut -c1-200; snap
T="--define BM=64 --define BN=64 --define WM=32 --define WN=32 --define TM=4 --define TN=8 --define BK=16 --define STAGES=3"
for s in 1 2 4; do
  timeout 100 /tmp/gemmlab compare --device h200 --backends cuda,opencl --kernels simt,simtdirect \
    --sizes 784x256x2304,196x256x2304,300x300x16384,1024x1024x1024 $T --define SLICEK=$s --reps 20 \
    --out $M/kernel-s$s > $M/kernel-s$s.txt 2>&1
  echo "== exit $?" >> $M/kernel-s$s.txt
done
grep -hE "^[0-9]+x|^ *(simt|simtdirect|cublas) |== exit" $M/kernel-s*.txt | cut -c1-120; snap
for v in old new; do
  b=/tmp/gemmlab; [ $v = old ] && b=/tmp/gemmlab-old
  timeout 170 $b gemm --device h200 --backends cuda,opencl --suite suites/holdout-5.txt --db results/tuned \
    --reps 10 -v --out $M/rows-h5-$v > $M/gemm-h5-$v.txt 2>&1
  echo "== exit $?" >> $M/gemm-h5-$v.txt
  grep -hE "geometric|== exit" $M/gemm-h5-$v.txt; snap
done
