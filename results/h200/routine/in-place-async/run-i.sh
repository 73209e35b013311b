#!/usr/bin/env bash
# Issue 27, 2026-11-29 (second session), call I: simtdirect with ASYNC_COPY (cp.async in place,
# edges zero-filled by the source size): its CUDA tests on the H200 (CUDA and NVIDIA OpenCL), then
# tune --suite over the calls that pack now, CUDA then OpenCL (TL=1), from the committed database.
set -u
M=/tmp/mi; rm -rf $M; mkdir -p $M
xz -dc .gpu/tests-direct/simt_direct.xz > /tmp/sd && chmod +x /tmp/sd
GEMMLAB_REQUIRE_CUDA=1 timeout 200 /tmp/sd --test-threads=2 > $M/test-simt-direct.txt 2>&1
echo "== exit $?" >> $M/test-simt-direct.txt
grep -E "^test |test result|checked|== exit|FAIL|fail" $M/test-simt-direct.txt | head -20
tar cJf "$OUT/call-i.tar.xz" -C $M .
rm -rf .gpu/db
for tc in cuda opencl; do
  SUITE=.gpu/inplace.txt TL=1 TT=${TT:-150} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/
  rm -rf .gpu/db; cp -r /tmp/gemmlab-routine-suite-$tc/db .gpu/db; cp -r .gpu/db $M/db-$tc
  grep -E 'routine on' $M/tune-suite-$tc.txt | cut -c1-900
  tar cJf "$OUT/call-i.tar.xz" -C $M .
done
