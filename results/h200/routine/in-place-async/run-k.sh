#!/usr/bin/env bash
# Issue 27, 2026-11-29 (second session), call K: simtdirect with ASYNC_COPY (cp.async in place,
# edges zero-filled by the source size): its CUDA tests on the H200 (CUDA and NVIDIA OpenCL), then
# tune --suite over the calls that pack now, CUDA then OpenCL (TL=1), from the committed database; now
# with ALONG_MN (operands transposed or copied first where not along M and N, aligned; then cp.async
# copies both with no register path); then the default suite on both toolchains next to cuBLAS.
set -u
M=/tmp/mk; rm -rf $M; mkdir -p $M
xz -dc .gpu/tests-direct/simt_direct.xz > /tmp/sd && chmod +x /tmp/sd
GEMMLAB_REQUIRE_CUDA=1 timeout 200 /tmp/sd --test-threads=2 > $M/test-simt-direct.txt 2>&1
echo "== exit $?" >> $M/test-simt-direct.txt
grep -E "^test |test result|checked|== exit|FAIL|fail" $M/test-simt-direct.txt | head -20
tar cJf "$OUT/call-k.tar.xz" -C $M .
rm -rf .gpu/db
for tc in cuda opencl; do
  SUITE=.gpu/inplace.txt TL=1 TT=${TT:-130} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/
  rm -rf .gpu/db; cp -r /tmp/gemmlab-routine-suite-$tc/db .gpu/db; cp -r .gpu/db $M/db-$tc
  grep -E 'routine on' $M/tune-suite-$tc.txt | cut -c1-900
  tar cJf "$OUT/call-k.tar.xz" -C $M .
done
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-k
xz -dc .gpu/gemmlab.xz > /tmp/g-k && chmod +x /tmp/g-k
timeout 120 /tmp/g-k gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db .gpu/db --reps 10 -v \
  --out $M/rows-routine > $M/suite-routine.txt 2>&1; echo "== exit $?" >> $M/suite-routine.txt
grep -E "geometric|== exit" $M/suite-routine.txt
tar cJf "$OUT/call-k.tar.xz" -C $M .
