#!/usr/bin/env bash
# Issue 27, 2026-11-29, call C: the in-place kernel's unaligned copy one element per thread,
# second form (unsigned element indices: registers near the old path's), against the build
# before (prev), alternating, on calls with unaligned operands; then 4097x33x2049 col and row
# re-tuned with it on both toolchains, then the default suite on both next to cuBLAS.
set -u
M=/tmp/mc; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-new && chmod +x /tmp/g-new
xz -dc .gpu/gemmlab-prev.xz > /tmp/g-prev && chmod +x /tmp/g-prev
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-c
for i in 1 2; do for b in new prev; do
  timeout 75 /tmp/g-$b gemm --device h200 --backends cuda,opencl --suite .gpu/odd.txt --db .gpu/db-a --reps 10 -v \
    --out $M/rows-$b-$i > $M/odd-$b-$i.txt 2>&1; echo "== exit $?" >> $M/odd-$b-$i.txt
  echo "== $b $i"; grep -E "geometric" $M/odd-$b-$i.txt
  tar cJf "$OUT/call-c.tar.xz" -C $M .
done; done
printf '4097x33x2049\n4097x33x2049 row NN\n' > $M/thin33.txt
rm -rf .gpu/db; mkdir -p .gpu/db; cp .gpu/db-a/*.json .gpu/db/
for tc in cuda opencl; do
  SUITE=$M/thin33.txt TL=2 TT=60 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/; cp /tmp/gemmlab-routine-suite-$tc/db/*.json .gpu/db/
  grep -E 'routine on' $M/tune-suite-$tc.txt | sed 's/candidates.*//' | cut -c1-300
done
cp -r .gpu/db $M/db-c
tar cJf "$OUT/call-c.tar.xz" -C $M .
timeout 110 /tmp/g-new gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-suite > $M/suite.txt 2>&1; echo "== exit $?" >> $M/suite.txt
grep -E "geometric" $M/suite.txt
tar cJf "$OUT/call-c.tar.xz" -C $M .
