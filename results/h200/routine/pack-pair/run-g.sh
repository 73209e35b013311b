#!/usr/bin/env bash
# Issue 27, 2026-11-29, call G: A's and B's packs in one launch (pack_pair, new) against one launch
# each (prev, 8976b9f), alternating, twice each, on calls that pack both (and controls), next to cuBLAS.
set -u
M=/tmp/mg; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-new && chmod +x /tmp/g-new
xz -dc .gpu/gemmlab-prev.xz > /tmp/g-prev && chmod +x /tmp/g-prev
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-g
for i in 1 2; do for b in new prev; do
  timeout 70 /tmp/g-$b gemm --device h200 --backends cuda,opencl --suite .gpu/packed.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$b-$i > $M/packed-$b-$i.txt 2>&1; echo "== exit $?" >> $M/packed-$b-$i.txt
  echo "== $b $i"; grep -E "geometric|== exit" $M/packed-$b-$i.txt
  tar cJf "$OUT/call-g.tar.xz" -C $M .
done; done
