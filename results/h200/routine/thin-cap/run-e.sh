#!/usr/bin/env bash
# Issue 27, call E: `sweep jit` with its new lane, NVRTC's own PTX through the CUDA driver's JIT
# (the same assembler as OpenCL's PTX lane), at the database's entries where call D saw OpenCL's
# PTX run faster through the JIT (simt 1024^3) and at other routine choices.
set -u
M=/tmp/me; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-e
snap() { tar cJf "$OUT/call-e.tar.xz" -C $M .; }
i=0
while read -r kern sizes cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  timeout 60 /tmp/g sweep jit --device h200 --kernels $kern --sizes $sizes $D --reps 10 --out $M/run-$i > $M/run-$i.txt 2>&1
  echo "== exit $?" >> $M/run-$i.txt
  echo "== $i $kern $sizes $cfg"; grep -E "^$kern|cuBLAS:|rror|== exit" $M/run-$i.txt | cut -c1-420 | head -4
  snap
done <<'LIST'
simt 1024x1024x1024 BK=16 BM=64 BN=64 GROUP=8 KMAJOR_A=0 KMAJOR_B=0 SPLITK=1 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1
simt 1024x1024x1024 BK=16 BM=64 BN=64 GROUP=16 KMAJOR_A=0 KMAJOR_B=0 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 USE_BOUNDS=0
simt 4096x4096x4096 BK=8 BM=128 BN=128 GROUP=16 KMAJOR_A=0 KMAJOR_B=0 SPLITK=1 STAGES=4 STREAMK=0 TM=8 TN=8 WM=64 WN=32
simt 1024x1024x32768 BK=8 BM=128 BN=128 GROUP=2 KMAJOR_A=0 KMAJOR_B=0 SPLITK=1 STAGES=3 STREAMK=2 TM=16 TN=8 WM=64 WN=64 ASYNC_COPY=1 USE_BOUNDS=0
simtdirect 1000x1000x1000 ALONG_MN=1 BK=16 BM=64 BN=64 GROUP=8 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 USE_BOUNDS=1
xgemm 4096x4096x4096 KWG=32 KWI=8 MDIMA=16 MDIMC=16 MWG=128 NDIMB=16 NDIMC=8 NWG=128 SA=1 SB=1 STRM=1 STRN=1 VWM=4 VWN=2
thin 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1
LIST
