#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call L: held-out suite 5 (suites/holdout-5.txt, calls no
# entry was tuned for) on CUDA with the database before this round (6010627's results/tuned, carried
# as .gpu/db-before) and after it (results/tuned: 1024^3 col NN's KTILE_B entry among those its
# calls re-tile), same binary; then 1024^3 col NN tuned again on OpenCL with the fixed build (call
# I's OpenCL tuning ran on the slower one).
set -u
M=/tmp/ml; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-l.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-l
mkdir -p /tmp/db-before /tmp/db-after; cp .gpu/db-before/*.json /tmp/db-before/; cp results/tuned/*.json /tmp/db-after/
for db in before after; do
  timeout 150 stdbuf -oL /tmp/g gemm --device h200 --backends cuda --suite suites/holdout-5.txt \
    --db /tmp/db-$db --reps 10 -v --out $M/rows-$db > $M/gemm-$db.txt 2>&1
  echo "== $db exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-$db.txt | cut -c1-100
  snap
done
unset CUDA_CACHE_PATH
SUITE=results/h200/routine/ktile/ktile-l.txt TL=1 TT=120 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-opencl > $M/part-opencl.txt 2>&1
cp /tmp/gemmlab-routine-suite-opencl/tune-suite-opencl.txt $M/; cp -r /tmp/gemmlab-routine-suite-opencl/db $M/db-opencl
grep -E 'routine on' $M/tune-suite-opencl.txt | cut -c1-400
snap
