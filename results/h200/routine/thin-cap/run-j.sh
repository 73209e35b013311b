#!/usr/bin/env bash
# Issue 27, call J: call E's first row again (`sweep jit`, four lanes, simt 1024^3 at OpenCL's
# entry) with the warm-up's last round a probe of 4 launches back to back where one launch is
# short, so that the paired cuBLAS is batched by its back-to-back time; then `compare` of the same
# configuration, both toolchains, for its cuBLAS ratio.
set -u
M=/tmp/mj; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-j
snap() { tar cJf "$OUT/call-j.tar.xz" -C $M .; }
D="--define BK=16 --define BM=64 --define BN=64 --define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=0 --define SPLITK=1 --define STAGES=3 --define STREAMK=0 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1"
timeout 60 /tmp/g sweep jit --device h200 --kernels simt --sizes 1024 $D --reps 10 --out $M/run-1 > $M/run-1.txt 2>&1; echo "== exit $?" >> $M/run-1.txt
grep -E "^simt|cuBLAS:|== exit" $M/run-1.txt | cut -c1-420; snap
timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes 1024 $D --reps 10 --out $M/run-2 > $M/run-2.txt 2>&1; echo "== exit $?" >> $M/run-2.txt
grep -E "^ *(simt|cublas)|== exit" $M/run-2.txt | cut -c1-200; snap
