#!/usr/bin/env bash
# Issue 27, call F: the routine's first-run timing with near-ties timed again (choices within 10%
# of the fastest get two more rounds). Held-out thin suite 3 on OpenCL (where a near-tie was
# decided by first-run noise before), build before (3fc0874) and after, alternating; then the
# default suite with the committed database on both toolchains, build after.
set -u
M=/tmp/mf; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-f
snap() { tar cJf "$OUT/call-f.tar.xz" -C $M .; }
( while sleep 30; do snap; done ) & SNAP=$!
for step in "thin-3 after" "thin-3 before"; do
  set -- $step
  timeout 120 stdbuf -oL /tmp/g-$2 gemm --device h200 --backends opencl --suite suites/$1.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$1-$2 > $M/gemm-$1-$2.txt 2>&1
  echo "== $1 $2 exit $?"; grep -E "geometric" $M/gemm-$1-$2.txt
  snap
done
timeout 200 /tmp/g-after gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db results/tuned --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric" $M/gemm-routine.txt
kill $SNAP; snap
