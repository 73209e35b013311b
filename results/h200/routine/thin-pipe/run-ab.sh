#!/usr/bin/env bash
# Issue 27, call AB: the OpenCL half of thin's tests on the H200 (every BLAS case, split-K, the
# PIPE=1 cases; call Y's 150 s were not enough for it), failing instead of skipping; then
# held-out suite 5 with the committed database, the build after and before in the same call.
set -u
M=/tmp/mab; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-ab
snap() { tar cJf "$OUT/call-ab.tar.xz" -C $M .; }
xz -dc .gpu/tests-thin.xz > /tmp/tt && chmod +x /tmp/tt
GEMMLAB_REQUIRE_CUDA=1 timeout 300 /tmp/tt --test-threads=1 --exact every_blas_case_verifies_on_thin_calls \
  > $M/tests-thin-opencl.txt 2>&1; echo "== exit $?" >> $M/tests-thin-opencl.txt
grep -h -E "test result|checked runs|panicked|== exit" $M/tests-thin-opencl.txt; snap
for b in after before; do
  timeout 110 /tmp/g-$b gemm --device h200 --backends cuda,opencl --suite suites/holdout-5.txt --db results/tuned --reps 10 -v \
    --out $M/rows-holdout-5-$b > $M/gemm-holdout-5-$b.txt 2>&1
  echo "== holdout-5 $b exit $?"; grep -E "geometric" $M/gemm-holdout-5-$b.txt
  snap
done
