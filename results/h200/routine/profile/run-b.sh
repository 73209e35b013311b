#!/usr/bin/env bash
# Issue 27, 2026-11-29, call B: the in-place kernel's unaligned copy one element per thread
# (new) against the build before (prev), alternating, on calls with unaligned operands; then
# tune --suite with the new build: OpenCL over the K-major calls, CUDA over 4097x33x2049 again.
set -u
M=/tmp/mb; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-new && chmod +x /tmp/g-new
xz -dc .gpu/gemmlab-prev.xz > /tmp/g-prev && chmod +x /tmp/g-prev
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-b
for i in 1 2; do for b in new prev; do
  timeout 75 /tmp/g-$b gemm --device h200 --backends cuda,opencl --suite .gpu/odd.txt --db .gpu/db-a --reps 10 -v \
    --out $M/rows-$b-$i > $M/odd-$b-$i.txt 2>&1; echo "== exit $?" >> $M/odd-$b-$i.txt
  echo "== $b $i"; grep -E "geometric|x blas|col NN|row NN|col TN|== exit" $M/odd-$b-$i.txt | grep -v chosen | cut -c1-110
  tar cJf "$OUT/call-b.tar.xz" -C $M .
done; done
rm -rf .gpu/db; mkdir -p .gpu/db; cp .gpu/db-a/*.json .gpu/db/
SUITE=.gpu/kmajor.txt TL=2 TT=170 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-opencl > $M/part-opencl.txt 2>&1
cp /tmp/gemmlab-routine-suite-opencl/tune-suite-opencl.txt $M/; cp /tmp/gemmlab-routine-suite-opencl/db/*.json .gpu/db/
grep -E 'routine on' $M/tune-suite-opencl.txt | sed 's/candidates.*//' | cut -c1-300
tar cJf "$OUT/call-b.tar.xz" -C $M .
printf '4097x33x2049\n4097x33x2049 row NN\n' > $M/thin33.txt
SUITE=$M/thin33.txt TL=2 TT=70 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
cp /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt $M/; cp -r /tmp/gemmlab-routine-suite-cuda/db $M/db-b
grep -E 'routine on' $M/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-300
tar cJf "$OUT/call-b.tar.xz" -C $M .
