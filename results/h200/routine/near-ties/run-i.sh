#!/usr/bin/env bash
# Issue 27, call I: held-out suite 5 with the OpenCL routine alone in its process, build after
# (the model's bandwidth from NVML) and before (3fc0874), one after the other.
set -u
M=/tmp/mi; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-i
snap() { tar cJf "$OUT/call-i.tar.xz" -C $M .; }
( while sleep 20; do snap; done ) & SNAP=$!
for b in after before; do
  timeout 140 stdbuf -oL /tmp/g-$b gemm --device h200 --backends opencl --suite suites/holdout-5.txt --db results/tuned --reps 10 -v \
    --out $M/rows-holdout-5-$b > $M/gemm-holdout-5-$b.txt 2>&1
  echo "== holdout-5 $b exit $?"
  snap
done
kill $SNAP; snap
