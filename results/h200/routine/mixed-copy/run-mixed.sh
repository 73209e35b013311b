#!/usr/bin/env bash
# Issue 27: simt's mixed copy (cp.async for one operand, registers for the K-major one).
set -u
M=/tmp/m; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
snap() { tar cJf "$OUT/mixed.tar.xz" -C $M .; }
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-mixed
for km in KMAJOR_B KMAJOR_A; do
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes 1024,2048x512x768,512x1024x4096 \
    --define $km=1 --define ASYNC_COPY=1 --reps 3 --out $M/check-$km > $M/check-$km.txt 2>&1; echo "== exit $?" >> $M/check-$km.txt
  echo "== check $km"; grep -E '^simt|exit|WRONG|error' $M/check-$km.txt | head -8
done
snap
SUITE=.gpu/mixed.txt TL=2 TT=${TT:-130} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
mkdir -p .gpu/db; cp /tmp/gemmlab-routine-suite-cuda/db/*.json .gpu/db/
grep -E 'routine on' /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-220
snap
SUITE=.gpu/mixed.txt TL=2 TT=${TT:-130} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-opencl > $M/part-opencl.txt 2>&1
grep -E 'routine on' /tmp/gemmlab-routine-suite-opencl/tune-suite-opencl.txt | sed 's/candidates.*//' | cut -c1-220
cp -r /tmp/gemmlab-routine-suite-opencl/db $M/db
snap
for w in after before; do
  [ $w = after ] && DB=$M/db || DB=results/tuned
  timeout 95 /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $DB --reps 10 -v \
    --out $M/rows-$w > $M/suite-$w.txt 2>&1; echo "== exit $?" >> $M/suite-$w.txt
  echo "== $w"; grep -E 'geometric' $M/suite-$w.txt
  snap
done
