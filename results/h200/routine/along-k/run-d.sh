#!/usr/bin/env bash
# Issue 27, 2026-11-29 (sixth session), call D: tune --suite over along-k-d.txt, CUDA then OpenCL
# (TL=1), from the committed database, the ASYNC_ALONG_K twins now with padded local rows (call C:
# the kernel alone at 128x4096x4096 ran at 86.4% of cuBLAS so, against 75.3% in the routine's
# form); then gemm --suite over the default suite with the resulting database, both toolchains next
# to cuBLAS in one run.
set -u
M=/tmp/md; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-d.tar.xz" -C $M .; }
rm -rf .gpu/db
for tc in cuda opencl; do
  SUITE=results/h200/routine/along-k/along-k-d.txt TL=1 TT=${TT:-140} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/
  rm -rf .gpu/db; cp -r /tmp/gemmlab-routine-suite-$tc/db .gpu/db; cp -r .gpu/db $M/db-$tc
  grep -E 'routine on' $M/tune-suite-$tc.txt | cut -c1-330
  snap
done
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-d
( while sleep 30; do snap; done ) & SNAP=$!
timeout 200 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric" $M/gemm-routine.txt
kill $SNAP; snap
