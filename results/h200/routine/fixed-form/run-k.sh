#!/usr/bin/env bash
# Issue 27, 2026-11-30 (tenth session), call K: simt_direct's odd-size matrix on NVIDIA's OpenCL
# alone (call F ran both toolchains at once and OpenCL's half ran out of its 110 s), failing
# instead of skipping. The test binary is call F's.
set -u
M=/tmp/uk; rm -rf $M; mkdir -p $M
xz -dc .gpu/tests/simt_direct.xz > /tmp/t-sd && chmod +x /tmp/t-sd
export CUDA_CACHE_DISABLE=0 GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
timeout 175 stdbuf -oL /tmp/t-sd --exact every_blas_case_verifies_in_place_at_odd_sizes --nocapture > $M/tests-opencl.txt 2>&1
echo "== exit $?" >> $M/tests-opencl.txt
grep -hE "test result|checked runs|panicked|FAILED|== " $M/tests-opencl.txt; cp $M/tests-opencl.txt "$OUT/call-k-tests-opencl.txt"
