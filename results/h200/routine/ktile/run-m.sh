#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call M: held-out suite 5 on CUDA with results/tuned (call
# L's "after" database) and the routine's first-run KTILE_B twins (a choice that packs B stored
# along K also timed reading it as stored, kept along K), against call L's "after" run.
set -u
M=/tmp/mm; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-m.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-m
mkdir -p /tmp/db-m; cp results/tuned/*.json /tmp/db-m/
timeout 170 stdbuf -oL /tmp/g gemm --device h200 --backends cuda --suite suites/holdout-5.txt \
  --db /tmp/db-m --reps 10 -v --out $M/rows > $M/gemm-holdout-5.txt 2>&1
echo "== exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-holdout-5.txt | cut -c1-100
snap
