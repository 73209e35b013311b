#!/usr/bin/env bash
# Issue 27, 2026-11-30 (eleventh session), call E: programmatic dependent launch as committed
# (simt without split-K, thin, the routine's packs; released after the main loop). The default
# suite on both toolchains with it (the rows committed here), then CUDA alone without it, with
# it, without it; then the CUDA tests of the routine's sequences and kernels (failing instead
# of skipping).
set -u
M=/tmp/me; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-e.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-e
timeout 170 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt \
  --reps 10 -v --out $M/rows > $M/suite-both.txt 2>&1
echo "== suite both exit $?" >> $M/suite-both.txt; grep -hE "^== |geometric" $M/suite-both.txt; snap
for run in 0a 1b 0c; do
  GEMMLAB_PDL=${run:0:1} timeout 100 stdbuf -oL /tmp/g gemm --device h200 --backends cuda --suite suites/routine.txt \
    --reps 10 -v --out $M/rows-pdl$run > $M/suite-pdl$run.txt 2>&1
  echo "== suite pdl=$run exit $?" >> $M/suite-pdl$run.txt; grep -hE "^== |geometric" $M/suite-pdl$run.txt; snap
done
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
for t in routine_client thin simt_kernel simt_direct; do
  xz -dc .gpu/tests/$t.xz > /tmp/t-$t && chmod +x /tmp/t-$t
done
timeout 100 stdbuf -oL /tmp/t-routine_client --exact every_blas_case_on_cuda --nocapture > $M/t-routine_client.txt 2>&1; echo "== exit $?" >> $M/t-routine_client.txt
timeout 100 stdbuf -oL /tmp/t-thin --exact cuda_every_blas_case_verifies_on_thin_calls --nocapture > $M/t-thin.txt 2>&1; echo "== exit $?" >> $M/t-thin.txt
timeout 100 stdbuf -oL /tmp/t-simt_kernel --exact cuda_stages_split_k_and_switches_verify_at_odd_sizes --nocapture > $M/t-simt_kernel.txt 2>&1; echo "== exit $?" >> $M/t-simt_kernel.txt
timeout 100 stdbuf -oL /tmp/t-simt_direct --exact cuda_every_blas_case_verifies_in_place_at_odd_sizes --nocapture > $M/t-simt_direct.txt 2>&1; echo "== exit $?" >> $M/t-simt_direct.txt
grep -hE "test result|checked|calls|panicked|== exit" $M/t-*.txt | cut -c1-200; snap
