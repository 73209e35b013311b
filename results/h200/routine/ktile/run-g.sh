#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call G: KTILE_B (B read along K kept K-contiguous in the
# local tile: 16-byte copies, no transposition, no pack). simt's tests on NVIDIA OpenCL and CUDA,
# failing instead of skipping; then the kernel alone (compare, operands in the form each variant
# reads, cuBLAS in the same run), both toolchains, at the tuned tiles of 1024^3 (also at 1000^3's
# padded size and 2048^3), 2048^3's and 128x4096x4096's: B read along N (what a pack feeds), B read
# along K with 4-byte cp.async (the routine's form before), and KTILE_B through registers and by
# cp.async, unpadded and padded.
set -u
M=/tmp/mg; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-g
snap() { tar cJf "$OUT/call-g.tar.xz" -C $M .; }
xz -dc .gpu/tests/simt_kernel.xz > /tmp/simt_kernel && chmod +x /tmp/simt_kernel
GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1 timeout 200 /tmp/simt_kernel --test-threads=2 > $M/test-simt.txt 2>&1
echo "== exit $?" >> $M/test-simt.txt
grep -E "test result|checked|== exit|FAIL|panicked" $M/test-simt.txt | head -20
snap
T1="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define USE_BOUNDS=0"
T2="--define BK=16 --define BM=128 --define BN=64 --define GROUP=8 --define SPLITK=6 --define STAGES=2 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define USE_BOUNDS=0"
T3="--define BK=16 --define BM=128 --define BN=128 --define GROUP=16 --define SPLITK=1 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define USE_BOUNDS=0"
i=0
for size_tiles in "1024,2048 T1" "2048 T3" "128x4096x4096 T2"; do
  set -- $size_tiles; S=$1; T=${!2}
  for v in "KMAJOR_B=0 ASYNC_COPY=1" "KMAJOR_B=1 ASYNC_COPY=1 ASYNC_ALONG_K=1 SMEM_PAD=1" "KMAJOR_B=1 KTILE_B=1" \
           "KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1" "KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1 SMEM_PAD=1"; do
    i=$((i+1)); D=""; for d in $v; do D="$D --define $d"; done
    timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes $S $T $D --reps 20 \
      --out $M/c-$i > $M/c-$i.txt 2>&1
    echo "== $i $S $2 $v (exit $?)"; grep -E "^[0-9x]+ |^ *(simt|cublas) " $M/c-$i.txt | cut -c1-120
  done
  snap
done
