#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call J: split-K summed by a kernel of its own (REDUCE) on
# calls outside the default suite. Held-out suites 4 and 5 on CUDA (no database entry of their
# own: the routine re-tiles the nearest entry and times the model's picks on the call's first
# run, now also its best pick with REDUCE), the build before (`.gpu/gemmlab-old.xz`, 7536bb7)
# and this one, alternated; then the kernel alone at 49x512x4608: the pick against the earlier
# choice, next to cuBLAS.
set -u
M=/tmp/mj; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-j.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g-new && chmod +x /tmp/g-new
xz -dc .gpu/gemmlab-old.xz > /tmp/g-old && chmod +x /tmp/g-old
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-j
for s in holdout-4 holdout-5; do
  for b in new old; do
    timeout 90 stdbuf -oL /tmp/g-$b gemm --device h200 --backends cuda --suite suites/$s.txt \
      --reps 10 -v --out $M/rows-$s-$b > $M/$s-$b.txt 2>&1
    echo "== $s $b exit $?" >> $M/$s-$b.txt; grep -hE "^== |geometric" $M/$s-$b.txt; snap
  done
done
C="--define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define BK=16 --define STAGES=2 --define TM=4 --define TN=4 --define WM=16 --define WN=32"
for v in "--define BM=32 --define BN=64 --define STREAMK=1" "--define BM=64 --define BN=128 --define SPLITK=32 --define REDUCE=1" "--define BM=64 --define BN=128 --define SPLITK=16 --define REDUCE=1" "--define BM=64 --define BN=128 --define SPLITK=16"; do
  timeout 40 stdbuf -oL /tmp/g-new compare --device h200 --backends cuda --kernels simt --sizes 49x512x4608 --reps 20 $C $v > $M/c.txt 2>&1
  echo "== $v: $(grep -E "^(simt|cublas) " $M/c.txt | tr -s ' ' | cut -c1-80 | tr '\n' ';')"
done
