#!/usr/bin/env bash
# Issue 27, 2026-11-29 (seventh session), call H: KTILE_B under a register cap (call G: 168
# registers at 64 x 64 tiles, 6 work-groups per SM against 8), at 1024^3's tuned tiles, B alone
# along K (col NN) and both along K (col TT: A through registers, KMAJOR_RUNS), next to the forms
# the routine ran before (B, or both, read along M and N after a pack; 4-byte cp.async copies);
# then the along-K flips of the routine's first run (since 6010627) on the held-out thin-M calls:
# ../along-k/run-f.sh.
set -u
M=/tmp/mh; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-h
snap() { tar cJf "$OUT/call-h.tar.xz" -C $M .; }
T1="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define USE_BOUNDS=0"
i=0
for v in "KMAJOR_B=0 ASYNC_COPY=1" "KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1 cap=128" "KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1 SMEM_PAD=1 cap=128" \
         "KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1 cap=144" \
         "KMAJOR_A=1 KMAJOR_B=1 ASYNC_COPY=1 ASYNC_ALONG_K=1 SMEM_PAD=1" "KMAJOR_A=1 KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1 KMAJOR_RUNS=1 cap=128" \
         "KMAJOR_A=1 KMAJOR_B=1 ASYNC_COPY=1 KTILE_B=1 KMAJOR_RUNS=1 SMEM_PAD=1 cap=128"; do
  i=$((i+1)); D=""
  for d in $v; do case $d in cap=*) D="$D --max-registers ${d#cap=}";; *) D="$D --define $d";; esac; done
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes 1024 $T1 $D --reps 20 \
    --out $M/c-$i > $M/c-$i.txt 2>&1
  echo "== $i 1024 T1 $v (exit $?)"; grep -E "^ *(simt|cublas) " $M/c-$i.txt | cut -c1-120
done
snap
export OUT_F=$M/f
mkdir -p $M/f
OUT=$M/f bash results/h200/routine/along-k/run-f.sh
snap
