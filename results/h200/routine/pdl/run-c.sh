#!/usr/bin/env bash
# Issue 27, 2026-11-30 (eleventh session), call C (and D, with the next grid released after the main loop): programmatic dependent launch in the CUDA
# routine. The same binary and committed database, the default suite on CUDA with dependent
# launches (default) and without (GEMMLAB_PDL=0), alternated, two rounds; then the CUDA tests
# that run the routine's launch sequences and its kernels (failing instead of skipping).
set -u
M=/tmp/m${CALL:-c}; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-${CALL:-c}.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-c
for round in 1 2; do
  for pdl in ${PDLS:-1 0}; do
    GEMMLAB_PDL=$pdl timeout 100 stdbuf -oL /tmp/g gemm --device h200 --backends ${BACKENDS:-cuda} --suite suites/routine.txt \
      --reps 10 -v --out $M/rows-pdl$pdl-$round > $M/suite-pdl$pdl-$round.txt 2>&1
    echo "== suite pdl=$pdl round $round exit $?" >> $M/suite-pdl$pdl-$round.txt
    grep -hE "^== |geometric" $M/suite-pdl$pdl-$round.txt; snap
  done
done
grep -h dependent_launch $M/rows-pdl*-1/environment.json
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
for t in cuda_backend routine_client routine_packs thin simt_kernel simt_direct; do
  xz -dc .gpu/tests/$t.xz > /tmp/t-$t && chmod +x /tmp/t-$t
done
timeout 150 stdbuf -oL /tmp/t-cuda_backend --test-threads=1 > $M/t-cuda_backend.txt 2>&1; echo "== exit $?" >> $M/t-cuda_backend.txt
timeout 150 stdbuf -oL /tmp/t-routine_client --exact every_blas_case_on_cuda --nocapture > $M/t-routine_client.txt 2>&1; echo "== exit $?" >> $M/t-routine_client.txt
timeout 100 stdbuf -oL /tmp/t-routine_packs --exact packs_are_exact_at_edge_shapes_on_cuda --nocapture > $M/t-routine_packs.txt 2>&1; echo "== exit $?" >> $M/t-routine_packs.txt
timeout 100 stdbuf -oL /tmp/t-thin --exact cuda_every_blas_case_verifies_on_thin_calls --nocapture > $M/t-thin.txt 2>&1; echo "== exit $?" >> $M/t-thin.txt
snap
timeout 120 stdbuf -oL /tmp/t-simt_kernel --exact cuda_stages_split_k_and_switches_verify_at_odd_sizes --nocapture > $M/t-simt_kernel.txt 2>&1; echo "== exit $?" >> $M/t-simt_kernel.txt
timeout 120 stdbuf -oL /tmp/t-simt_direct --exact cuda_every_blas_case_verifies_in_place_at_odd_sizes --nocapture > $M/t-simt_direct.txt 2>&1; echo "== exit $?" >> $M/t-simt_direct.txt
grep -hE "test result|checked|failed|panicked|== exit" $M/t-*.txt | cut -c1-200; snap
