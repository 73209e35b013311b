#!/usr/bin/env bash
# Issue 27, 2026-11-30 (tenth session), call F: the in-place kernel compiled for one operand form
# (FIXED_FORM). (1) simt_direct's tests on both toolchains at once, failing instead of skipping
# (fixed-form cases added); (2) `tune --suite` at 1000^3 col NN, families simtdirect and simt, CUDA
# then OpenCL, into a copy of the committed database: its whole-call timing now includes each
# in-place candidate compiled for the call's form; (3) the routine on four calls with that database
# and with the committed one, same call.
set -u
M=/tmp/uf; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-f.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
xz -dc .gpu/tests/simt_direct.xz > /tmp/t-sd && chmod +x /tmp/t-sd
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-f
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
timeout 110 stdbuf -oL /tmp/t-sd --exact every_blas_case_verifies_in_place_at_odd_sizes > $M/tests-opencl.txt 2>&1 &
timeout 110 stdbuf -oL /tmp/t-sd --exact cuda_every_blas_case_verifies_in_place_at_odd_sizes > $M/tests-cuda.txt 2>&1 &
timeout 110 stdbuf -oL /tmp/t-sd --exact the_plan_is_one_launch_on_the_callers_buffers > $M/tests-plan.txt 2>&1 &
wait
unset GEMMLAB_REQUIRE_CUDA GEMMLAB_TEST_DEVICE
grep -hE "test result|checked runs|panicked|FAILED" $M/tests-*.txt; snap
printf '1000x1000x1000 col NN\n' > $M/suite.txt
mkdir -p $M/db-new $M/db-old; cp results/tuned/*.json $M/db-new/; cp results/tuned/*.json $M/db-old/
for tc in cuda opencl; do
  timeout 150 stdbuf -oL /tmp/g tune --device h200 --backends $tc --suite $M/suite.txt --kernels simtdirect,simt \
    --time-limit 10 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db-new --store $M/store \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried" $M/tune-suite-$tc.txt | cut -c1-400; snap
done
printf '1000x1000x1000 col NN\n1024x1024x1024 col NN\n1024x1024x1024 col TN\n1000x1000x1000 row NN\n' > $M/calls.txt
for db in new old; do
  timeout 45 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite $M/calls.txt --db $M/db-$db --reps 10 -v \
    --out $M/rows-$db > $M/gemm-$db.txt 2>&1
  echo "== $db exit $?" >> $M/gemm-$db.txt; grep -E "^== |geometric|^ +[0-9]+x|chosen" $M/gemm-$db.txt | cut -c1-200; snap
done
