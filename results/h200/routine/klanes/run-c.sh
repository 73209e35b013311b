#!/usr/bin/env bash
# Issue 27, 2026-11-29 (eighth session), call C: the final build. thin's tests on both
# toolchains at once, failing instead of skipping; then the routine with the committed database
# on suite-c.txt (suites/thin.txt's K-contiguous calls, no entries: thin's fits timed on each
# call's first run), this build and the one before KL (.gpu/gemmlab-old.xz), next to cuBLAS.
set -u
M=/tmp/kc; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-c.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
xz -dc .gpu/gemmlab-old.xz > /tmp/g-old && chmod +x /tmp/g-old
xz -dc .gpu/tests/thin.xz > /tmp/t-thin && chmod +x /tmp/t-thin
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-c
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
timeout 220 stdbuf -oL /tmp/t-thin --exact every_blas_case_verifies_on_thin_calls > $M/tests-opencl.txt 2>&1 &
timeout 220 stdbuf -oL /tmp/t-thin --exact cuda_every_blas_case_verifies_on_thin_calls > $M/tests-cuda.txt 2>&1 &
wait
unset GEMMLAB_REQUIRE_CUDA
grep -hE "test result|checked runs|panicked" $M/tests-*.txt; snap
grep -v "^#" results/h200/routine/klanes/suite-c.txt | grep -v "^ *$" > $M/suite.txt
for b in new old; do
  g=/tmp/g; [ $b = old ] && g=/tmp/g-old
  mkdir -p $M/db-$b; cp results/tuned/*.json $M/db-$b/
  timeout 165 stdbuf -oL $g gemm --device h200 --backends cuda,opencl --suite $M/suite.txt --db $M/db-$b --reps 10 -v \
    --out $M/rows-$b > $M/gemm-$b.txt 2>&1
  echo "== $b exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-$b.txt | cut -c1-100; snap
done
