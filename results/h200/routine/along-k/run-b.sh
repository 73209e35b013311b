#!/usr/bin/env bash
# Issue 27, 2026-11-29 (sixth session), call B: the CUDA tests of simt and simtdirect with
# ASYNC_ALONG_K (call A carried test binaries built without the cuda feature: NVIDIA OpenCL only),
# then tune --suite over along-k-b.txt, CUDA then OpenCL (TL=1), from the committed database; the
# suite now times each candidate also reading the call's operands as stored with cp.async copying
# those along K.
set -u
M=/tmp/mb; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-b.tar.xz" -C $M .; }
for t in simt_kernel simt_direct; do
  xz -dc .gpu/tests/$t.xz > /tmp/$t && chmod +x /tmp/$t
  GEMMLAB_REQUIRE_CUDA=1 timeout 100 /tmp/$t --test-threads=2 cuda_ > $M/test-$t.txt 2>&1
  echo "== exit $?" >> $M/test-$t.txt
  grep -E "test result|checked|== exit|FAIL|panicked" $M/test-$t.txt | head -20
  snap
done
rm -rf .gpu/db
for tc in cuda opencl; do
  SUITE=results/h200/routine/along-k/along-k-b.txt TL=1 TT=${TT:-200} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-$tc > $M/part-$tc.txt 2>&1
  cp /tmp/gemmlab-routine-suite-$tc/tune-suite-$tc.txt $M/
  cp -r /tmp/gemmlab-routine-suite-$tc/tune-$tc $M/
  rm -rf .gpu/db; cp -r /tmp/gemmlab-routine-suite-$tc/db .gpu/db; cp -r .gpu/db $M/db-$tc
  grep -E 'routine on' $M/tune-suite-$tc.txt | cut -c1-330
  snap
done
