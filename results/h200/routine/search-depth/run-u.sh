#!/usr/bin/env bash
# Issue 27, call U: is the routine's weakness on held-out calls the kernels or the search?
# CUDA's tune --suite over four weak calls (.gpu/weak.txt: three of held-out suite 5 and
# 4097x33x2049) with 15 s per family search instead of the usual 2, into a scratch database
# (a copy of results/tuned); then gemm --suite over those calls with the scratch database and
# with the committed one, next to cuBLAS in the same run.
set -u
M=/tmp/mu; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-u
snap() { tar cJf "$OUT/call-u.tar.xz" -C $M .; }
mkdir -p $M/db; cp results/tuned/*.json $M/db/
( while sleep 60; do snap; done ) & SNAP=$!
timeout 420 /tmp/g tune --device h200 --backends cuda --suite .gpu/weak.txt --time-limit 15 --max-configs 100000 \
  --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store --out $M/tune-cuda > $M/tune-suite.txt 2>&1
echo "== exit $?" >> $M/tune-suite.txt
kill $SNAP
grep -E "^== suite|routine on|best while searching|^[a-z]+ on cuda at" $M/tune-suite.txt | sed 's/candidates.*//' | cut -c1-260
for d in committed scratch; do
  db=results/tuned; [ $d = scratch ] && db=$M/db
  timeout 60 /tmp/g gemm --device h200 --backends cuda --suite .gpu/weak.txt --db $db --reps 10 -v > $M/gemm-$d.txt 2>&1
  echo "== $d"; grep -vE "^ +chosen" $M/gemm-$d.txt | tail -8
done
snap
