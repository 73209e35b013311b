#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call K: the CUDA tests of the SIMT kernels with REDUCE
# (failing instead of skipping), then `tune --suite` of the default suite's long-K calls on CUDA
# with REDUCE in the space, into a copy of the database (`db/`), the earlier choice kept unless
# beaten (as `tune --suite` does).
set -u
M=/tmp/mk; rm -rf $M; mkdir -p $M/db
snap() { tar cJf "$OUT/call-k.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-k
cp results/tuned/nvidia-h200.json $M/db/
( export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
  for t in simt_direct simt_kernel; do xz -dc .gpu/tests/$t.xz > /tmp/t-$t && chmod +x /tmp/t-$t; done
  timeout 100 stdbuf -oL /tmp/t-simt_direct --exact cuda_every_blas_case_verifies_in_place_at_odd_sizes --nocapture > $M/t-simt_direct.txt 2>&1; echo "== exit $?" >> $M/t-simt_direct.txt
  timeout 100 stdbuf -oL /tmp/t-simt_kernel --exact cuda_stages_split_k_and_switches_verify_at_odd_sizes --nocapture > $M/t-simt_kernel.txt 2>&1; echo "== exit $?" >> $M/t-simt_kernel.txt
  grep -hE "test result|checked|panicked|== exit" $M/t-*.txt | cut -c1-200 )
snap
timeout 330 stdbuf -oL /tmp/g tune --device h200 --backends cuda --kernels xgemmdirect,xgemm,simt,simtdirect \
  --suite results/h200/routine/reduce/lows-cuda.txt --time-limit 4 --max-configs 100000 --top 1 --warmup 1 --reps 5 \
  --search-reps 2 --db $M/db --out $M/tune > $M/tune-cuda.txt 2>&1
echo "== tune exit $?" >> $M/tune-cuda.txt
grep -hE "^== |routine on" $M/tune-cuda.txt | cut -c1-330; snap
