#!/usr/bin/env bash
# Issue 27, 2026-11-29 (eighth session), call D: the routine with the committed database on
# suite-d.txt (held-out thin suites 2 and 3's K-contiguous calls, no entries: thin's fits timed on
# each call's first run), the final build and the one before KL (.gpu/gemmlab-old.xz), next to cuBLAS.
set -u
M=/tmp/kd; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-d.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
xz -dc .gpu/gemmlab-old.xz > /tmp/g-old && chmod +x /tmp/g-old
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-d
grep -v "^#" results/h200/routine/klanes/suite-d.txt | grep -v "^ *$" > $M/suite.txt
for b in new old; do
  g=/tmp/g; [ $b = old ] && g=/tmp/g-old
  mkdir -p $M/db-$b; cp results/tuned/*.json $M/db-$b/
  timeout 150 stdbuf -oL $g gemm --device h200 --backends cuda,opencl --suite $M/suite.txt --db $M/db-$b --reps 10 -v \
    --out $M/rows-$b > $M/gemm-$b.txt 2>&1
  echo "== $b exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-$b.txt | cut -c1-100; snap
done
