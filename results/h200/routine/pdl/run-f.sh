#!/usr/bin/env bash
# Issue 27, 2026-11-30 (eleventh session), call F: dependent launches on calls outside the default
# suite. Held-out suites 5 and 4 on CUDA (no database entry of their own: the routine takes the
# nearest class's), with dependent launches (default) and without (GEMMLAB_PDL=0), alternated.
set -u
M=/tmp/mf; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-f.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-f
for s in holdout-5 holdout-4; do
  for pdl in 1 0; do
    GEMMLAB_PDL=$pdl timeout 80 stdbuf -oL /tmp/g gemm --device h200 --backends cuda --suite suites/$s.txt \
      --reps 10 -v --out $M/rows-$s-pdl$pdl > $M/$s-pdl$pdl.txt 2>&1
    echo "== $s pdl=$pdl exit $?" >> $M/$s-pdl$pdl.txt; grep -hE "^== |geometric" $M/$s-pdl$pdl.txt; snap
  done
done
