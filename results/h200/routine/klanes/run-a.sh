#!/usr/bin/env bash
# Issue 27, 2026-11-29 (eighth session), call A: thin's work-items along K (KL). Its tests on
# CUDA and NVIDIA OpenCL, failing instead of skipping; then the routine on two suites of thin
# calls without database entries (the thin fits timed on each call's first run), the new
# binary and the one before KL (.gpu/gemmlab-old.xz) in the same call, next to cuBLAS.
set -u
M=/tmp/ka; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-a.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
xz -dc .gpu/gemmlab-old.xz > /tmp/g-old && chmod +x /tmp/g-old
xz -dc .gpu/tests/thin.xz > /tmp/t-thin && chmod +x /tmp/t-thin
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1 timeout 150 stdbuf -oL /tmp/t-thin --test-threads=1 > $M/tests-thin.txt 2>&1
echo "== tests exit $?"; grep -hE "test result|checked runs|panicked" $M/tests-thin.txt; snap
grep -hv "^#" suites/thin-k.txt suites/thin.txt | grep -v "^ *$" > $M/suite.txt
for b in new old; do
  g=/tmp/g; [ $b = old ] && g=/tmp/g-old
  timeout 200 stdbuf -oL $g gemm --device h200 --backends cuda,opencl --suite $M/suite.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$b > $M/gemm-$b.txt 2>&1
  echo "== $b exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-$b.txt | cut -c1-100; snap
done
