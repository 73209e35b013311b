#!/usr/bin/env bash
# Issue 27, 2026-11-30 (tenth session), call I: FIXED_FORM alone. The routine at 1000^3 col NN on
# both toolchains with the committed database (.gpu/db-fixed: the entries compiled for the call's
# form) and with the same database but those two entries reading the form at run time
# (.gpu/db-runtime: FIXED_FORM=0 KMAJOR_A=0 KMAJOR_B=0, nothing else changed); alternated, 3 rounds.
set -u
M=/tmp/ui; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-i.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-i
for round in 1 2 3; do
  for db in fixed runtime; do
    timeout 40 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --sizes 1000 --db .gpu/db-$db --reps 20 -v \
      --out $M/rows-$db-$round > $M/gemm-$db-$round.txt 2>&1
    echo "== $db $round exit $?" >> $M/gemm-$db-$round.txt
    grep -E "^== |^ +1000x" $M/gemm-$db-$round.txt | cut -c1-100; snap
  done
done
