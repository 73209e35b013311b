#!/usr/bin/env bash
# Issue 27, 2026-11-29 (eighth session), call B: thin's tests on both toolchains at once
# (PIPE=2 and KL cases added), failing instead of skipping; then the routine on suite-b.txt with
# the committed database less its thin calls' entries (.gpu/db-nothin), so that every call times
# thin's fits on its first run: this build (pipelined fits with PIPE=2) and call A's (PIPE=1,
# .gpu/gemmlab-kl1.xz), same call, next to cuBLAS.
set -u
M=/tmp/kb; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-b.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
xz -dc .gpu/gemmlab-kl1.xz > /tmp/g-kl1 && chmod +x /tmp/g-kl1
xz -dc .gpu/tests/thin.xz > /tmp/t-thin && chmod +x /tmp/t-thin
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-b
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
timeout 230 stdbuf -oL /tmp/t-thin --exact every_blas_case_verifies_on_thin_calls > $M/tests-opencl.txt 2>&1 &
timeout 230 stdbuf -oL /tmp/t-thin --exact cuda_every_blas_case_verifies_on_thin_calls > $M/tests-cuda.txt 2>&1 &
wait
unset GEMMLAB_REQUIRE_CUDA
grep -hE "test result|checked runs|panicked" $M/tests-*.txt; snap
grep -v "^#" results/h200/routine/klanes/suite-b.txt | grep -v "^ *$" > $M/suite.txt
for b in pipe2 pipe1; do
  g=/tmp/g; [ $b = pipe1 ] && g=/tmp/g-kl1
  mkdir -p $M/db-$b; cp .gpu/db-nothin/*.json $M/db-$b/
  timeout 170 stdbuf -oL $g gemm --device h200 --backends cuda,opencl --suite $M/suite.txt --db $M/db-$b --reps 10 -v \
    --out $M/rows-$b > $M/gemm-$b.txt 2>&1
  echo "== $b exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-$b.txt | cut -c1-100; snap
done
