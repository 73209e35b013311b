#!/usr/bin/env bash
# Issue 27, call W: entries re-tiled for calls not tuned (src/routine/adapt.rs, retiled_for).
# Held-out suites 5 and 4 with the committed database, on both toolchains next to cuBLAS,
# the build before the change (.gpu/gemmlab-before.xz) and after (.gpu/gemmlab.xz) in the
# same device call, in the order after, before, before, after; the re-tiling now also varies the operand forms (ALONG_MN, KMAJOR_A, KMAJOR_B).
set -u
M=/tmp/mw; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-w
snap() { tar cJf "$OUT/call-w.tar.xz" -C $M .; }
for step in "holdout-5 after" "holdout-5 before" "holdout-4 before" "holdout-4 after"; do
  set -- $step
  timeout 170 /tmp/g-$2 gemm --device h200 --backends cuda,opencl --suite suites/$1.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$1-$2 > $M/gemm-$1-$2.txt 2>&1
  echo "== $1 $2 exit $?"; grep -E "geometric" $M/gemm-$1-$2.txt
  snap
done
