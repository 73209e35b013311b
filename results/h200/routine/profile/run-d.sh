#!/usr/bin/env bash
# Issue 27, 2026-11-29, call D (the committed kernels, build 8976b9f): OpenCL's tune --suite over
# the calls that read an operand along K (KMAJOR_RUNS twins), from call A's database (CUDA
# re-tuned over the same calls); then the default suite on both toolchains next to cuBLAS.
set -u
M=/tmp/md; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-d && chmod +x /tmp/g-d
rm -rf .gpu/db; mkdir -p .gpu/db; cp .gpu/db-a/*.json .gpu/db/
cp .gpu/kmajor-ocl.txt $M/kmajor-ocl.txt
SUITE=$M/kmajor-ocl.txt TL=2 TT=230 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-opencl > $M/part-opencl.txt 2>&1
cp /tmp/gemmlab-routine-suite-opencl/tune-suite-opencl.txt $M/; cp /tmp/gemmlab-routine-suite-opencl/db/*.json .gpu/db/
grep -E 'routine on' $M/tune-suite-opencl.txt | sed 's/candidates.*//' | cut -c1-300
cp -r .gpu/db $M/db-d
tar cJf "$OUT/call-d.tar.xz" -C $M .
timeout 110 /tmp/g-d gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-suite > $M/suite.txt 2>&1; echo "== exit $?" >> $M/suite.txt
grep -E "geometric" $M/suite.txt
tar cJf "$OUT/call-d.tar.xz" -C $M .
