#!/usr/bin/env bash
# Issue 27, call X: entries re-tiled for calls not tuned (src/routine/adapt.rs, retiled_for).
# Held-out suites 5 and 4 with the committed database, on both toolchains next to cuBLAS,
# the build before the change (.gpu/gemmlab-before.xz) and after (.gpu/gemmlab.xz) in the
# same device call: holdout-5 after, then before, then holdout-4 after (its before is call
# W's). `learn` now times its choices in two rounds, each choice's faster round counting.
set -u
M=/tmp/mx; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-x
snap() { tar cJf "$OUT/call-x.tar.xz" -C $M .; }
for step in "holdout-5 after" "holdout-5 before" "holdout-4 after"; do
  set -- $step
  timeout 150 /tmp/g-$2 gemm --device h200 --backends cuda,opencl --suite suites/$1.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$1-$2 > $M/gemm-$1-$2.txt 2>&1
  echo "== $1 $2 exit $?"; grep -E "geometric" $M/gemm-$1-$2.txt
  snap
done
