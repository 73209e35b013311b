#!/usr/bin/env bash
# Issue 27, 2026-11-29 (sixth session), call A: simt and simtdirect with ASYNC_ALONG_K (cp.async
# copying the operands read along K, 4 bytes at a time): their CUDA tests on the H200 (CUDA and
# NVIDIA OpenCL, failing instead of skipping), then CUDA's tune --suite over the calls that read
# an operand along K (along-k.txt), from the committed database.
set -u
M=/tmp/ma; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-a.tar.xz" -C $M .; }
for t in simt_kernel simt_direct; do
  xz -dc .gpu/tests/$t.xz > /tmp/$t && chmod +x /tmp/$t
  GEMMLAB_REQUIRE_CUDA=1 timeout 140 /tmp/$t --test-threads=2 > $M/test-$t.txt 2>&1
  echo "== exit $?" >> $M/test-$t.txt
  grep -E "test result|checked|== exit|FAIL|panicked" $M/test-$t.txt | head -20
  snap
done
rm -rf .gpu/db
SUITE=results/h200/routine/along-k/along-k.txt TL=1 TT=290 SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
cp /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt $M/; cp -r /tmp/gemmlab-routine-suite-cuda/db $M/db-cuda
grep -E 'routine on' $M/tune-suite-cuda.txt | cut -c1-700
snap
