#!/usr/bin/env bash
# Issue 27, call V: entries re-tiled for calls not tuned (src/routine/adapt.rs, retiled_for).
# Held-out suites 5 and 4 with the committed database, on both toolchains next to cuBLAS,
# the build before the change (.gpu/gemmlab-before.xz) and after (.gpu/gemmlab.xz) in the
# same device call, in the order before, after, after, before.
set -u
M=/tmp/mv; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-v
snap() { tar cJf "$OUT/call-v.tar.xz" -C $M .; }
for step in "holdout-5 before" "holdout-5 after" "holdout-4 after" "holdout-4 before"; do
  set -- $step
  timeout 170 /tmp/g-$2 gemm --device h200 --backends cuda,opencl --suite suites/$1.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$1-$2 > $M/gemm-$1-$2.txt 2>&1
  echo "== $1 $2 exit $?"; grep -E "geometric" $M/gemm-$1-$2.txt
  snap
done
