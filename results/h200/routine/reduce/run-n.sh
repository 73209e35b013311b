#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call N: call J on NVIDIA OpenCL. Held-out suites 4 and 5,
# this build (REDUCE, `20d606e`) and `7536bb7`'s (`.gpu/gemmlab-old.xz`), alternated.
set -u
M=/tmp/mn; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-n.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g-new && chmod +x /tmp/g-new
xz -dc .gpu/gemmlab-old.xz > /tmp/g-old && chmod +x /tmp/g-old
for s in holdout-4 holdout-5; do
  for b in new old; do
    timeout 105 stdbuf -oL /tmp/g-$b gemm --device h200 --backends opencl --suite suites/$s.txt \
      --reps 10 -v --out $M/rows-$s-$b > $M/$s-$b.txt 2>&1
    echo "== $s $b exit $?" >> $M/$s-$b.txt; grep -hE "^== |geometric" $M/$s-$b.txt; snap
  done
done
