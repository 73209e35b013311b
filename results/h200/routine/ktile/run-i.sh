#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call I: tune --suite over ktile-i.txt (the calls storing
# B along K whose choice had B packed), CUDA then OpenCL (TL=1), from the committed database;
# every candidate is now also timed reading B as stored and keeping it along K in the local tile
# (KTILE_B, padded and not), beside the 4-byte cp.async twins.
set -u
M=/tmp/mi; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-i.tar.xz" -C $M .; }
rm -rf .gpu/db
for tc in cuda opencl; do
  SUITE=results/h200/routine/ktile/ktile-i.txt TL=1 TT=${TT:-240} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/
  rm -rf .gpu/db; cp -r /tmp/gemmlab-routine-suite-$tc/db .gpu/db; cp -r .gpu/db $M/db-$tc
  grep -E 'routine on' $M/tune-suite-$tc.txt | cut -c1-400
  snap
done
