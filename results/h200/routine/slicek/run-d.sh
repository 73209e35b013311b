#!/usr/bin/env bash
# Issue 27, 2026-11-30 (fourteenth session), call D: the routine on holdout-5 with the final
# build (the sliced re-tilings timed beside the rest, each with its own twin compiled for the
# call's form), against call B's old run.
set -u
M=/tmp/md; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-d.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/gemmlab && chmod +x /tmp/gemmlab
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-d
s=$(date +%s)
timeout 250 /tmp/gemmlab gemm --device h200 --backends cuda,opencl --suite suites/holdout-5.txt --db results/tuned \
  --reps 10 -v --out $M/rows-h5-new > $M/gemm-h5-new.txt 2>&1
echo "== exit $? after $(( $(date +%s) - s )) s" >> $M/gemm-h5-new.txt
grep -hE "geometric|== exit" $M/gemm-h5-new.txt; snap
