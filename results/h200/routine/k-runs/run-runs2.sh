#!/usr/bin/env bash
# Issue 27: tune --suite with KMAJOR_RUNS twins on two K-major calls per toolchain, then the default suite.
set -u
M=/tmp/m2; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
rm -rf .gpu/db
SUITE=.gpu/runs-suite.txt TL=2 TT=45 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
mkdir -p .gpu/db; cp /tmp/gemmlab-routine-suite-cuda/db/*.json .gpu/db/
grep -E 'routine on' /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-260
SUITE=.gpu/runs-suite.txt TL=2 TT=45 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-opencl > $M/part-opencl.txt 2>&1
grep -E 'routine on' /tmp/gemmlab-routine-suite-opencl/tune-suite-opencl.txt | sed 's/candidates.*//' | cut -c1-260
cp -r /tmp/gemmlab-routine-suite-opencl/db $M/db
tar cJf "$OUT/runs2.tar.xz" -C $M .
timeout 95 /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db --reps 10 -v \
  --out $M/rows > $M/suite.txt 2>&1; echo "== exit $?" >> $M/suite.txt
grep -E 'geometric' $M/suite.txt
tar cJf "$OUT/runs2.tar.xz" -C $M .
