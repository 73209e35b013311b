#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call H: pipeline depth on held-out calls. The routine
# chose these configurations for held-out calls it has no entry for (results/h200/routine/pdl/,
# call F), most with the 2 stages and BK 8 of the 1000^3 entry they were re-tiled from. Each is
# timed here (`compare`, the kernel alone, warm, next to cuBLAS, CUDA) as chosen and with
# STAGES 2-4 and BK 8-32, everything else as chosen.
set -u
M=/tmp/mh; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-h.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-h
SW="--define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define KMAJOR_RUNS=0 --define RASTER=0 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define USE_RESTRICT=0 --max-registers 128"
FF="--define ALONG_MN=0 --define FIXED_FORM=1 --define KMAJOR_A=0 --define KMAJOR_B=1 --define GROUP=8"
declare -A CALL
CALL[a]="784x128x1152|simtdirect|$FF $SW --define BM=128 --define BN=64 --define SPLITK=6 --define STREAMK=0 --define TM=8 --define TN=8 --define WM=32 --define WN=64"
CALL[b]="196x256x2304|simtdirect|$FF $SW --define BM=32 --define BN=32 --define SPLITK=1 --define STREAMK=4 --define TM=4 --define TN=4 --define WM=16 --define WN=32"
CALL[c]="49x512x4608|simt|--define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define BM=32 --define BN=64 --define SPLITK=1 --define STREAMK=1 --define TM=4 --define TN=4 --define WM=16 --define WN=32"
CALL[d]="196x512x4608|simtdirect|$FF $SW --define BM=32 --define BN=64 --define SPLITK=16 --define STREAMK=0 --define TM=4 --define TN=8 --define WM=16 --define WN=64"
CALL[e]="32x50257x768|simtdirect|$FF $SW --define BM=32 --define BN=256 --define SPLITK=1 --define STREAMK=3 --define TM=4 --define TN=16 --define WM=16 --define WN=128"
for c in a b c d e; do
  IFS='|' read -r size kernel defs <<< "${CALL[$c]}"
  for bk in 8 16 32; do
    for st in 2 3 4; do
      name=$c-bk$bk-st$st
      timeout 40 stdbuf -oL /tmp/g compare --device h200 --backends cuda --kernels $kernel --sizes $size --reps 20 \
        $defs --define BK=$bk --define STAGES=$st --out $M/rows-$name > $M/$name.txt 2>&1
      echo "== $name exit $? $(grep -E "^(simt|simtdirect) " $M/$name.txt | tr -s ' ' | cut -c1-90) cublas $(grep -E "^cublas " $M/$name.txt | tr -s ' ' | cut -d' ' -f2)"
    done
  done
  snap
done
