#!/usr/bin/env bash
# Issue 27, call C: where the OpenCL builds lose, front end or assembler (`sweep jit`: NVIDIA
# OpenCL's PTX through the CUDA driver's JIT next to both native builds), for the 1000^3 in-place
# kernel at OpenCL's entry and for thin's pipelined fit at 4097x33x2049; then thin at a thin-M
# call whose large operand is read along K (60x4096x8192 col NN), its fits and variants, kernel
# alone next to cuBLAS.
set -u
M=/tmp/mc; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
snap() { tar cJf "$OUT/call-c.tar.xz" -C $M .; }
i=0
while read -r what kern sizes cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  case $what in
    jit) timeout 60 /tmp/g sweep jit --device h200 --kernels $kern --sizes $sizes $D --reps 10 --out $M/run-$i > $M/run-$i.txt 2>&1 ;;
    cmp) timeout 45 /tmp/g compare --device h200 --backends cuda,opencl --kernels $kern --sizes $sizes $D --reps 10 --out $M/run-$i > $M/run-$i.txt 2>&1 ;;
  esac
  echo "== exit $?" >> $M/run-$i.txt
  echo "== $i $what $kern $sizes $cfg"; grep -E "^ *($kern|cublas)|jit|JIT|rror|== exit" $M/run-$i.txt | cut -c1-170 | head -8
  snap
done <<'LIST'
jit simtdirect 1000x1000x1000 ALONG_MN=0 BK=16 BM=128 BN=64 GROUP=8 SPLITK=3 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 SMEM_PAD=1
jit thin 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1
cmp thin 60x4096x8192 SIDE=0 BT=60 TL=1 THREADS=128 KV=16 KC=16 SPLITK=24 PIPE=1
cmp thin 60x4096x8192 SIDE=0 BT=60 TL=2 THREADS=128 KV=16 KC=32 SPLITK=24 PIPE=0
cmp thin 60x4096x8192 SIDE=0 BT=60 TL=1 THREADS=128 KV=16 KC=32 SPLITK=12 XS=1
cmp thin 60x4096x8192 SIDE=0 BT=60 TL=2 THREADS=128 KV=8 KC=16 SPLITK=24 PIPE=1
cmp thin 60x4096x8192 SIDE=0 BT=60 TL=1 THREADS=64 KV=16 KC=16 SPLITK=24 PIPE=1
cmp thin 60x4096x8192 SIDE=0 BT=32 TL=1 THREADS=128 KV=16 KC=32 SPLITK=24 PIPE=1
LIST
