#!/usr/bin/env bash
# Issue 27, call P: where the in-place kernel's extra short-scoreboard stalls are: Nsight Compute's
# source counters (per SASS instruction) for the packed and in-place SIMT kernels at 1024^3, same
# tiles, and their SASS from the same PTX (NVRTC 13.5's, .version lowered to 9.0 for ptxas 13.0).
set -u
export PATH=$PATH:/usr/local/cuda/bin
M=/tmp/mp; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-p
T="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1 --define USE_BOUNDS=0"
snap() { tar cJf "$OUT/call-p.tar.xz" -C $M .; }
for k in simt direct; do
  timeout 60 ptxas -arch=sm_90 -v .gpu/ptx/$k.ptx -o $M/$k.cubin > $M/ptxas-$k.txt 2>&1
  timeout 60 cuobjdump -sass $M/$k.cubin > $M/$k.sass 2>&1; wc -l $M/$k.sass; grep -E "registers" $M/ptxas-$k.txt
done
snap
for k in simt direct; do
  A="--define KMAJOR_A=0 --define KMAJOR_B=0"; K=simt; [ $k = direct ] && { A="--define ALONG_MN=1"; K=simtdirect; }
  timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:simt_gemm -c 1 -o $M/src-$k \
    /tmp/g compare --device h200 --backends cuda --kernels $K --sizes 1024 $T $A --reps 1 --warmup 0 --batch 1 > $M/ncu-$k.txt 2>&1
  echo "== ncu $k exit $?"
  timeout 60 ncu --import $M/src-$k.ncu-rep --page source --csv --print-source sass > $M/source-$k.csv 2> $M/source-$k.err
  echo "== source $k exit $?"; wc -l $M/source-$k.csv; head -c 600 $M/source-$k.err
  snap
done
